"""The smallest relative residual a double u can have on a ball of beta JUMP.

The problem of galerkin3d.py (a ball of radius 1/4 at the centre of the unit
cube, Dirichlet box, vertex-centred nodes, faces by harmonic means, f =
sin(3x) cos(2y) + z).  Its exact discrete solution by iterative refinement
(LU in double, residuals in long double), then that solution rounded to
double and its residual in long double: no double u does much better, so no
solver can reach a tolerance below it.  It grows as 1/h^2 and with the
jump; the library's cycles stop a few times above it.

    python3 floor.py N [N ...]      (JUMP 1e6 and 1e3 for each N)

Prints, per N and jump: the refined solution's residual, the rounded one's,
eps |A| |u| (an estimate of it) and a plain double LU solve's.  Needs numpy
(long double of 64 bits' mantissa, x86) and scipy; N up to about 47.
"""
import numpy as np, scipy.sparse as sp, scipy.sparse.linalg as sla, sys


def run(n, jump):
    h = 1.0 / (n + 1)
    x = np.arange(1, n + 1) * h
    X, Y, Z = np.meshgrid(x, x, x, indexing='ij')
    beta = np.where((X - .5)**2 + (Y - .5)**2 + (Z - .5)**2 < 0.0625, jump, 1.0)
    f = (np.sin(3 * X) * np.cos(2 * Y) + Z).ravel()
    N = n**3
    idx = np.arange(N).reshape(n, n, n)
    rows, cols, vals = [], [], []
    diag = np.zeros((n, n, n))
    for d in range(3):
        for s in (-1, 1):
            src = [slice(None)] * 3
            dst = [slice(None)] * 3
            src[d], dst[d] = (slice(0, n - 1), slice(1, n)) if s == 1 else (slice(1, n), slice(0, n - 1))
            b = 2 / (1 / beta[tuple(src)] + 1 / beta[tuple(dst)]) / h**2
            rows.append(idx[tuple(src)].ravel())
            cols.append(idx[tuple(dst)].ravel())
            vals.append(-b.ravel())
            diag[tuple(src)] += b
            w = [slice(None)] * 3  # the wall's face: Dirichlet 0, beta of the point
            w[d] = n - 1 if s == 1 else 0
            diag[tuple(w)] += beta[tuple(w)] / h**2
    rows.append(idx.ravel())
    cols.append(idx.ravel())
    vals.append(diag.ravel())
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(N, N))
    lu = sla.splu(A.tocsc())
    Al, fl = A.astype(np.longdouble), f.astype(np.longdouble)
    u = lu.solve(f).astype(np.longdouble)
    for _ in range(6):
        u = u + lu.solve((fl - Al @ u).astype(np.float64)).astype(np.longdouble)
    res = lambda v: float(np.linalg.norm(fl - Al @ v) / np.linalg.norm(fl))
    ud = u.astype(np.float64).astype(np.longdouble)
    est = float(np.linalg.norm(2.0**-53 * (np.abs(Al) @ np.abs(ud))) / np.linalg.norm(fl))
    plain = lu.solve(f).astype(np.longdouble)
    print(f"n={n} jump={jump:g}: refined {res(u):.2e}; rounded to double {res(ud):.2e}; "
          f"eps|A||u| {est:.2e}; double LU {res(plain):.2e}", flush=True)


for n in map(int, sys.argv[1:]):
    run(n, 1e6)
    run(n, 1e3)
