"""A 3D CPU model of a single Dirichlet point in an all-Neumann box: why V-cycles
crawl there (README: "a single Dirichlet cell standing apart in the fluid", 0.94-0.99
per V(2,1) cycle in 3D on the GPU) and what the candidate repairs do.

What it follows, simplified from poisson_gpu's hierarchy (src/general.h): vertex-centred
nodes i h (i = 0 .. n-1, n = 2^k + 1), half cells at the walls, the 7-point
finite-volume operator per unit volume, homogeneous Neumann walls; coarsening keeps the
even nodes, P trilinear, R = Wc^-1 P^T W; a coarse point is Dirichlet where its
coinciding fine node is, and the iso rule makes the heaviest parent of a fine Dirichlet
node without a Dirichlet parent Dirichlet (the lowest index on ties); the face between a
coarse fluid node and a coarse Dirichlet node couples H / d, d the distance to the first
fine Dirichlet node on its straight path (H if none); red-black Gauss-Seidel, omega
1.15, the coarsest level (3^3) solved exactly.  Not modelled: solids, face fractions,
beta, cell pairs on even axes, float.

Variants (keyword arguments of MG):
  leak    Galerkin on the constant for coarse Dirichlet points: a fine Dirichlet node's
          leak (the flux coefficients from its fluid neighbours, volume-weighted) goes to
          its coarse Dirichlet parents by restriction weight; a coarse Dirichlet node whose
          own leak is larger has its faces scaled down to match
  isoall  every parent of a fine Dirichlet node without a Dirichlet parent is Dirichlet
  pdrop   the prolongation drops coarse Dirichlet parents and renormalises the rest
  psm     damped-Jacobi steps (2/3) on the prolongation's rows within `rad` nodes of a
          fine Dirichlet node: P <- (I - 2/3 D^-1 A) P, the Dirichlet columns of A dropped

    python3 point3d.py factors 17,33        V(2,1) factors (cycles 5-15, random error, f = 0)
    python3 point3d.py eig 33               the smallest eigenvalue of each level's operator
    python3 point3d.py twogrid 33           factors with level 1, 2, ... solved exactly
    python3 point3d.py pcg 17,33,65         CG iterations to 1e-10 with a symmetric V(1,1)

Cases: 'odd' (the point at odd indices on every axis: a coarse cell's centre), 'even'
(on a coarse node), 'oddx' (odd on one axis), 'two' (two odd points).  Needs numpy
and scipy.  Its numbers are the model's; a rule it favours has to be measured on the GPU.
"""
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

VARIANTS = {'base': {}, 'leak': {'leak': True}, 'isoall+leak': {'isoall': True, 'leak': True},
            'pdrop+leak': {'pdrop': True, 'leak': True}, 'psm+leak': {'psm': 1, 'rad': 2, 'leak': True}}


def level_op(n, h, mult):
    """The operator per unit volume of an n^3 level at spacing h, and the volumes.  mult:
    {(p, q): m} scales the coupling of fluid node p to Dirichlet node q."""
    N = n ** 3
    w1 = np.full(n, h)
    w1[0] = w1[-1] = h / 2
    vol = (w1[:, None, None] * w1[None, :, None] * w1[None, None, :]).ravel()
    idx = np.arange(N).reshape(n, n, n)
    rows, cols, vals = [], [], []
    diag = np.zeros(N)
    for ax in range(3):
        a = [slice(None)] * 3
        b = [slice(None)] * 3
        a[ax], b[ax] = slice(0, n - 1), slice(1, n)
        area = np.ones((n, n, n))
        for k in range(3):
            if k != ax:
                shape = [1, 1, 1]
                shape[k] = n
                area = area * w1.reshape(shape)
        c = area[tuple(a)].ravel() / h
        p, q = idx[tuple(a)].ravel(), idx[tuple(b)].ravel()
        for (x, y) in ((p, q), (q, p)):
            cc = c * np.array([mult.get((s, t), 1.0) for s, t in zip(x, y)]) if mult else c
            np.add.at(diag, x, cc)
            rows.append(x)
            cols.append(y)
            vals.append(-cc)
    A = sp.csr_matrix((np.concatenate(vals + [diag]), (np.concatenate(rows + [np.arange(N)]),
                                                       np.concatenate(cols + [np.arange(N)]))), shape=(N, N))
    return (sp.diags(1 / vol) @ A).tocsr(), vol


def p1(n):
    P = np.zeros((n, (n + 1) // 2))
    for i in range(n):
        if i % 2 == 0:
            P[i, i // 2] = 1
        else:
            P[i, i // 2] = P[i, i // 2 + 1] = 0.5
    return P


def leaks(A, vol, fluid, nodes):
    """Per Dirichlet node: the volume-weighted flux coefficients from its fluid neighbours."""
    out = {}
    for d in nodes:
        col = A[:, d].tocoo()
        out[d] = sum(-v * vol[r] for r, v in zip(col.row, col.data) if r != d and fluid[r])
    return out


class MG:
    def __init__(self, n, dnodes, leak=False, isoall=False, pdrop=False, psm=0, rad=2, omega=1.15):
        self.levels, self.omega = [], omega
        h, D, mult = 1.0, set(dnodes), {}
        while True:
            A, vol = level_op(n, h, mult)
            fl = np.ones(n ** 3, bool)
            fl[list(D)] = False
            par = np.indices((n, n, n)).reshape(3, -1).sum(0) % 2
            L = {'n': n, 'A': A, 'vol': vol, 'fl': fl, 'diag': A.diagonal(),
                 'col': [np.nonzero(fl & (par == c))[0] for c in (0, 1)]}
            self.levels.append(L)
            if n <= 3:
                break
            nc, H = (n + 1) // 2, 2 * h
            P = sp.csr_matrix(p1(n))
            P = P0 = sp.kron(sp.kron(P, P), P).tocsr()
            Wc = P.T @ vol
            L['R'] = (sp.diags(1 / Wc) @ P.T @ sp.diags(vol)).tocsr()
            fine = lambda i, j, k: (i * n + j) * n + k
            coarse = lambda i, j, k: (i * nc + j) * nc + k
            Dc = set()
            for d in D:
                i, j, k = np.unravel_index(d, (n, n, n))
                if i % 2 == 0 and j % 2 == 0 and k % 2 == 0:
                    Dc.add(coarse(i // 2, j // 2, k // 2))
            for d in D:  # the iso rule
                row = P[d].tocoo()
                if any(c in Dc for c in row.col):
                    continue
                if isoall:
                    Dc.update(int(c) for c in row.col)
                else:
                    wmax = row.data.max()
                    Dc.add(min(int(c) for c, w in zip(row.col, row.data) if w >= wmax / (1 + 1e-9)))
            if pdrop:
                cD = np.zeros(P.shape[1], bool)
                cD[list(Dc)] = True
                Pc = P.tocoo()
                keep = ~cD[Pc.col]
                rs = np.bincount(Pc.row, weights=np.where(keep, Pc.data, 0), minlength=P.shape[0])
                data = np.where(keep, Pc.data / np.where(rs[Pc.row] > 0, rs[Pc.row], 1), 0)
                P = sp.csr_matrix((data, (Pc.row, Pc.col)), shape=P.shape)
            if psm:
                ii = np.indices((n, n, n)).reshape(3, -1)
                near = np.zeros(n ** 3, bool)
                for d in D:
                    near |= np.abs(ii - np.array(np.unravel_index(d, (n, n, n)))[:, None]).max(0) <= rad
                near &= fl
                S = sp.identity(n ** 3) - (2.0 / 3.0) * sp.diags(1 / A.diagonal()) @ A @ sp.diags(fl.astype(float))
                for _ in range(psm):
                    P = (sp.diags(near.astype(float)) @ (S @ P) + sp.diags((~near).astype(float)) @ P).tocsr()
            L['P'] = P
            multc = {}
            for J in Dc:  # the distance rule
                J3 = np.unravel_index(J, (nc, nc, nc))
                for ax in range(3):
                    for s in (-1, 1):
                        Q = list(J3)
                        Q[ax] += s
                        if not 0 <= Q[ax] < nc or coarse(*Q) in Dc:
                            continue
                        mid = [2 * x for x in Q]
                        mid[ax] -= s
                        multc[(coarse(*Q), J)] = H / (h if fine(*mid) in D else H)
            if leak:
                target = {}
                for d, lk in leaks(A, vol, fl, D).items():
                    row = P0[d].tocoo()
                    parents = [(int(c), w) for c, w in zip(row.col, row.data) if c in Dc]
                    ws = sum(w for _, w in parents)
                    for c, w in parents:
                        target[c] = target.get(c, 0.0) + lk * w / ws
                Ac, volc = level_op(nc, H, multc)
                flc = np.ones(nc ** 3, bool)
                flc[list(Dc)] = False
                for J, lc in leaks(Ac, volc, flc, Dc).items():
                    t = target.get(J, 0.0)
                    if lc > t > 0:
                        for r in Ac[:, J].tocoo().row:
                            if r != J and flc[r]:
                                multc[(r, J)] = multc.get((r, J), 1.0) * t / lc
            n, h, D, mult = nc, H, Dc, multc
        self.exact_at(len(self.levels) - 1)

    def exact_at(self, l):
        """Solve level l exactly (and stop the cycle there)."""
        self.last = l
        L = self.levels[l]
        self.cfl = np.nonzero(L['fl'])[0]
        self.clu = spla.splu(sp.csc_matrix(L['A'][self.cfl][:, self.cfl]))

    def smooth(self, L, u, f, sweeps, order=(0, 1)):
        for _ in range(sweeps):
            for c in order:
                cc = L['col'][c]
                u[cc] += self.omega * (f[cc] - L['A'][cc] @ u) / L['diag'][cc]

    def cycle(self, l, u, f, pre=2, post=1, post_order=(0, 1)):
        L = self.levels[l]
        if l == self.last:
            u[self.cfl] = self.clu.solve(f[self.cfl])
            return u
        self.smooth(L, u, f, pre)
        fc = L['R'] @ np.where(L['fl'], f - L['A'] @ u, 0)
        ec = self.cycle(l + 1, np.zeros(len(fc)), fc, pre, post, post_order)
        u += L['P'] @ np.where(self.levels[l + 1]['fl'], ec, 0)
        self.smooth(L, u, f, post, post_order)
        return u


def factor(mg, cycles=15, first=5):
    L = mg.levels[0]
    u = np.where(L['fl'], np.random.default_rng(1).uniform(-1, 1, len(L['fl'])), 0.0)
    f = np.zeros_like(u)
    res = [np.linalg.norm(np.where(L['fl'], L['A'] @ u, 0))]
    for _ in range(cycles):
        mg.cycle(0, u, f)
        res.append(np.linalg.norm(np.where(L['fl'], f - L['A'] @ u, 0)))
    rat = np.array(res[1:]) / np.array(res[:-1])
    return float(np.exp(np.mean(np.log(rat[first - 1:]))))


def pcg_iterations(mg, tol=1e-10):
    """CG on the symmetric (volume-weighted) system, preconditioned by V(1,1) whose
    post-smoothing runs the colours in reverse order (a symmetric cycle)."""
    L = mg.levels[0]
    fl = np.nonzero(L['fl'])[0]
    V = L['vol'][fl]
    A = (sp.diags(V) @ L['A'][fl][:, fl]).tocsr()
    b = np.random.default_rng(2).standard_normal(len(fl))

    def prec(r):
        f = np.zeros(len(L['fl']))
        f[fl] = r / V
        return mg.cycle(0, np.zeros(len(L['fl'])), f, 1, 1, (1, 0))[fl]

    its = []
    spla.cg(A, b, rtol=tol, M=spla.LinearOperator(A.shape, prec), maxiter=500, callback=lambda x: its.append(1))
    return len(its)


def cases(n):
    o, e = lambda x: x | 1, lambda x: x & ~1
    return {'odd': [(o(n // 3), o(n // 2), o(n // 4))], 'even': [(e(n // 3), e(n // 2), e(n // 4))],
            'oddx': [(o(n // 3), e(n // 2), e(n // 4))],
            'two': [(o(n // 3), o(n // 2), o(n // 4)), (o(2 * n // 3), o(n // 5), o(n // 2))]}


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    what, sizes = argv[1], [int(s) for s in argv[2].split(',')]
    for n in sizes:
        for name, pts in cases(n).items():
            dn = [int(np.ravel_multi_index(p, (n,) * 3)) for p in pts]
            out = []
            for v, kw in VARIANTS.items():
                if what == 'pcg' and v != 'base':
                    continue
                mg = MG(n, dn, **kw)
                if what == 'factors':
                    out.append('%s %.3f' % (v, factor(mg)))
                elif what == 'eig':
                    lam = []
                    for L in mg.levels[:-1]:
                        fl = np.nonzero(L['fl'])[0]
                        lam.append(spla.eigs(L['A'][fl][:, fl].tocsc(), k=1, sigma=0, which='LM',
                                             return_eigenvectors=False).real[0])
                    out.append('%s %s' % (v, ' '.join('%.2e' % x for x in lam)))
                elif what == 'twogrid':
                    fs = []
                    for l in range(1, len(mg.levels)):
                        mg.exact_at(l)
                        fs.append(factor(mg))
                    out.append('%s %s' % (v, ' '.join('%.3f' % x for x in fs)))
                elif what == 'pcg':
                    out.append('%s %d iterations' % (v, pcg_iterations(mg)))
                else:
                    sys.exit(__doc__)
            print('%3d %-5s %s' % (n, name, ' | '.join(out)), flush=True)


if __name__ == '__main__':
    main(sys.argv)
