"""A 2D CPU model of poisson_gpu's geometric multigrid on masked grids (src/general.h).

What it follows (doc/internals.md, "The general form"): per-axis coarsening
between Dirichlet walls (every other node kept), P with two taps per axis,
R = Wc^-1 P^T W; the coarse type rule (Dirichlet where a core child is
Dirichlet, else fluid where any child is fluid, else solid); coarse face
fractions as gen_coarse_kernel forms them (the path mean along the face's
axis, restriction-weighted across; a box-wall face closed when a face on its
path has fraction 0 -- x faces after the y weighting, y faces per fine
column, as the stages order it); the finite-volume coarse operator (closed
faces dropped); the closed-face prolongation (ip_point_shut); red-black
Gauss-Seidel with omega 1.2, V(2,1), the one-node coarsest level solved
exactly.  Not modelled: 3D, Neumann and periodic axes (cell pairs), beta,
float, singular regions, grids that are not square.

Variants (the opts dict of build / factor):
  type_rule  'gpu' (above) | 'conn' (Dirichlet only where a core Dirichlet
             child shares an open face with a fluid child of the same coarse
             point) | 'split' (a fluid coarse point whose core child is solid
             and whose fluid children form two or more face-connected parts
             becomes solid)
  frac       'gpu' | 'anyzero' (the wall rule for every face, stage order) |
             'anyzero_w' (a path face of fraction 0 after the across
             weighting closes the face) | 'az_sel' (anyzero_w only where one
             side is a coarse Dirichlet point or neither side's core child is
             solid) | 'harm_w' (series mean along the path) | 'fluidfaces'
             (means over the fine faces with a fluid side only)
  iso        True: a fine Dirichlet point none of whose coarse parents is
             Dirichlet makes its parent of the largest restriction weight
             Dirichlet (a single Dirichlet cell off the coarse nodes stays)
  ddist      True: a face between a coarse fluid and a coarse Dirichlet point
             takes coarse spacing / (the series distance from the fluid node
             to the first Dirichlet point along the path)
  restr      'geo' | 'tr' (the transpose of the closed-face P, scaled by the
             geometric widths) | 'trn' (rows renormalised)
  shut       False: no closed-face rule in P;  pshut_dir, pp, pnorm: other
             prolongation rules tried (see the code)
Factor (factor()): the geometric mean of the residual ratios over V(2,1)
cycles 5..15 from a random error with f = 0.  Needs numpy and scipy.
"""
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

SOLID, FLUID, DIRI = 0, 1, 2


class Axis:
    def __init__(self, x, w, xlo, xhi):
        self.x = np.asarray(x, float)
        self.w = np.asarray(w, float)
        self.xlo = xlo
        self.xhi = xhi
        self.n = len(self.x)


def fine_axis(n, h=1.0):
    x = (np.arange(n) + 1) * h
    return Axis(x, np.full(n, h), x[0] - h, x[-1] + h)


def axis_coef(a):
    n = a.n
    clo = np.zeros(n)
    chi = np.zeros(n)
    for i in range(n):
        if i > 0:
            clo[i] = 1.0 / (a.w[i] * (a.x[i] - a.x[i - 1]))
        if i < n - 1:
            chi[i] = 1.0 / (a.w[i] * (a.x[i + 1] - a.x[i]))
    clo[0] = 1.0 / (a.w[0] * (a.x[0] - a.xlo))
    chi[n - 1] = 1.0 / (a.w[n - 1] * (a.xhi - a.x[n - 1]))
    return clo, chi


class Transfer:
    pass


def coarsen_axis(a):
    """Dirichlet-Dirichlet axis: keep fine nodes 2,4,..(1-based). Returns coarse axis, transfer."""
    n = a.n
    X = np.array([a.x[2 * I + 1] for I in range(n // 2)])
    nc = len(X)
    t = Transfer()
    t.n, t.nc = n, nc
    p0 = np.zeros(n, int)
    p1 = np.zeros(n, int)
    q0 = np.zeros(n)
    J = -1
    for i in range(n):
        xi = a.x[i]
        while J + 1 < nc and X[J + 1] <= xi * (1 + 1e-14) + 1e-300:
            J += 1
        if 0 <= J < nc - 1:
            pa, pb, ta = J + 1, J + 2, (X[J + 1] - xi) / (X[J + 1] - X[J])
        elif J == nc - 1:
            pa, pb, ta = nc, nc + 1, (a.xhi - xi) / (a.xhi - X[nc - 1])
        else:
            pa, pb, ta = 0, 1, (X[0] - xi) / (X[0] - a.xlo)
        p0[i], p1[i], q0[i] = pa, pb, ta
    t.p0, t.p1, t.q0, t.q1 = p0, p1, q0, 1.0 - q0
    # dense P with ghost columns (n x nc+2)
    P = np.zeros((n, nc + 2))
    for i in range(n):
        P[i, p0[i]] += q0[i]
        P[i, p1[i]] += 1 - q0[i]
    t.P = P
    Wc = P[:, 1:nc + 1].T @ a.w
    t.Wc = Wc
    t.R = (P[:, 1:nc + 1] * a.w[:, None]).T / Wc[:, None]  # nc x n
    wmax = t.R.max(axis=1)
    t.core = (t.R > 0.5 * wmax[:, None]) & (t.R > 0)
    t.child = t.R != 0
    c = Axis(X, Wc, a.xlo, a.xhi)
    # path table: fine faces 0..n (face i between nodes i-1 and i)
    def pos(ax, i):
        if i < 0:
            return ax.xlo
        if i >= ax.n:
            return ax.xhi
        return ax.x[i]
    paths = []
    for I in range(nc + 1):
        lst = []
        if I == 0 or I == nc:
            lo, hi = pos(c, I - 1), pos(c, I)
            for i in range(n + 1):
                flo, fhi = pos(a, i - 1), pos(a, i)
                tol = 1e-9 * (fhi - flo)
                if fhi <= lo + tol or flo >= hi - tol:
                    continue
                lst.append(i)
        else:
            mid = 0.5 * (pos(c, I - 1) + pos(c, I))
            for i in range(n + 1):
                flo, fhi = pos(a, i - 1), pos(a, i)
                tol = 1e-9 * (fhi - flo)
                if mid < flo - tol or mid > fhi + tol:
                    continue
                lst.append(i)
        assert lst
        paths.append(lst)
    t.paths = paths
    return c, t


class Level:
    pass


def make_level(ax, ay, T, FX, FY):
    # a fluid point all of whose faces couple nothing has no equation: solid
    ns0 = T != SOLID
    gx = FX.copy(); gx[:, 1:] *= ns0; gx[:, :-1] *= ns0
    gy = FY.copy(); gy[1:, :] *= ns0; gy[:-1, :] *= ns0
    iso = (T == FLUID) & (gx[:, :-1] == 0) & (gx[:, 1:] == 0) & (gy[:-1, :] == 0) & (gy[1:, :] == 0)
    if iso.any():
        T = np.where(iso, SOLID, T).astype(np.int8)
    L = Level()
    L.iso = int(iso.sum())
    L.ax, L.ay = ax, ay
    L.nx, L.ny = ax.n, ay.n
    L.T = T  # [ny, nx]
    L.FX = FX  # [ny, nx+1]
    L.FY = FY  # [ny+1, nx]
    # effective conductances: 0 where a side is solid (ghost: not solid)
    ny, nx = T.shape
    ns = T != SOLID
    GX = FX.copy()
    GX[:, 1:] *= ns
    GX[:, :-1] *= ns
    GY = FY.copy()
    GY[1:, :] *= ns
    GY[:-1, :] *= ns
    L.GX, L.GY = GX, GY
    # operator
    cxl, cxh = axis_coef(ax)
    cyl, cyh = axis_coef(ay)
    N = nx * ny
    idx = np.arange(N).reshape(ny, nx)
    fl = T == FLUID
    diag = np.zeros((ny, nx))
    rows, cols, vals = [], [], []
    # x-lo
    for (coef, G, di, dj) in ((cxl[None, :] * GX[:, :-1], None, -1, 0), (cxh[None, :] * GX[:, 1:], None, 1, 0),
                              (cyl[:, None] * GY[:-1, :], None, 0, -1), (cyh[:, None] * GY[1:, :], None, 0, 1)):
        coef = coef * fl
        diag += coef
        jj, ii = np.nonzero(coef)
        qi, qj = ii + di, jj + dj
        inside = (qi >= 0) & (qi < nx) & (qj >= 0) & (qj < ny)
        sel = inside.copy()
        sel[inside] = T[qj[inside], qi[inside]] == FLUID
        rows.append(idx[jj[sel], ii[sel]])
        cols.append(idx[qj[sel], qi[sel]])
        vals.append(-coef[jj[sel], ii[sel]])
    rows = np.concatenate(rows)
    cols = np.concatenate(cols)
    vals = np.concatenate(vals)
    d = diag.ravel()
    A = sp.csr_matrix((np.concatenate([vals, d]), (np.concatenate([rows, idx.ravel()]),
                                                     np.concatenate([cols, idx.ravel()]))), shape=(N, N))
    L.A = A
    L.diag = d
    L.fluid = fl.ravel()
    # closed faces of each point (for the prolongation into this level): bit0 xlo, 1 xhi, 2 ylo, 3 yhi
    L.shut = ((GX[:, :-1] == 0) * 1 | (GX[:, 1:] == 0) * 2 | (GY[:-1, :] == 0) * 4 | (GY[1:, :] == 0) * 8)
    jj, ii = np.meshgrid(np.arange(ny), np.arange(nx), indexing='ij')
    par = ((ii + jj) % 2).ravel()
    L.col = [np.nonzero(L.fluid & (par == 1))[0], np.nonzero(L.fluid & (par == 0))[0]]
    L.vol = np.outer(ay.w, ax.w).ravel()
    return L


def coarse_types(L, tx, ty, rule):
    T = L.T
    D = (T == DIRI).astype(float)
    F = (T == FLUID).astype(float)
    Dc = (ty.core.astype(float) @ D @ tx.core.astype(float).T) > 0
    Fc = (ty.child.astype(float) @ F @ tx.child.astype(float).T) > 0
    Tc = np.where(Dc, DIRI, np.where(Fc, FLUID, SOLID)).astype(np.int8)
    if rule == 'gpu':
        return Tc
    if rule == 'split':
        # a FLUID coarse point whose core child is solid and whose fluid children fall into two or
        # more components (open faces among the children) represents no one fluid: SOLID
        GX, GY = L.GX, L.GY
        for J in range(ty.nc):
            cj = list(np.nonzero(ty.child[J])[0])
            corej = np.nonzero(ty.core[J])[0]
            for I in range(tx.nc):
                if Tc[J, I] != FLUID:
                    continue
                corei = np.nonzero(tx.core[I])[0]
                if any(T[j, i] != SOLID for j in corej for i in corei):
                    continue
                ci = list(np.nonzero(tx.child[I])[0])
                pts = [(j, i) for j in cj for i in ci if T[j, i] == FLUID]
                comp = {}
                def find(p):
                    while comp.get(p, p) != p:
                        p = comp[p]
                    return p
                for (j, i) in pts:
                    for (qj, qi, g) in ((j, i + 1, GX[j, i + 1] if i + 1 <= T.shape[1] else 0),
                                        (j + 1, i, GY[j + 1, i] if j + 1 <= T.shape[0] else 0)):
                        if (qj, qi) in pts and g > 0:
                            a, b = find((j, i)), find((qj, qi))
                            if a != b:
                                comp[a] = b
                if len({find(p) for p in pts}) > 1:
                    Tc[J, I] = SOLID
        return Tc
    if rule in ('conn', 'conn2'):
        ny, nx = T.shape
        GX, GY = L.GX, L.GY
        for J in range(ty.nc):
            cj = np.nonzero(ty.child[J])[0]
            corej = set(np.nonzero(ty.core[J])[0])
            for I in range(tx.nc):
                if not (Dc[J, I] and Fc[J, I]):
                    continue
                ci = np.nonzero(tx.child[I])[0]
                cis = set(ci)
                cjs = set(cj)
                corei = set(np.nonzero(tx.core[I])[0])
                ok = False
                for j in cj:
                    for i in ci:
                        if T[j, i] != DIRI:
                            continue
                        if rule == 'conn' and not (j in corej and i in corei):
                            continue
                        # neighbours within the child set, fluid, across an open face
                        for (qi, qj, g) in ((i - 1, j, GX[j, i]), (i + 1, j, GX[j, i + 1]),
                                            (i, j - 1, GY[j, i]), (i, j + 1, GY[j + 1, i])):
                            if qi in cis and qj in cjs and 0 <= qi < nx and 0 <= qj < ny \
                                    and T[qj, qi] == FLUID and g > 0:
                                ok = True
                if not ok:
                    Tc[J, I] = FLUID
        return Tc
    raise ValueError(rule)


def iso_fix(L, tx, ty, Tc):
    """A fine Dirichlet point none of whose coarse parents is Dirichlet makes its
    parent of the largest restriction weight Dirichlet (ties, to a relative 1e-9
    that the positions' rounding leaves: the lowest index):
    a single Dirichlet cell off the coarse nodes otherwise leaves the coarse
    levels (a reference cell in a sealed pocket: a singular coarse problem).
    Each coarse point decides from its own children and their parents only."""
    T = L.T
    out = Tc.copy()
    for (j, i) in np.argwhere(T == DIRI):
        Js = np.nonzero(ty.R[:, j])[0]
        Is = np.nonzero(tx.R[:, i])[0]
        if any(Tc[J, I] == DIRI for J in Js for I in Is):
            continue
        wmax = max(ty.R[J, j] * tx.R[I, i] for J in Js for I in Is)
        J, I = min((J, I) for J in Js for I in Is if ty.R[J, j] * tx.R[I, i] >= wmax / (1 + 1e-9))
        out[J, I] = DIRI
    return out


def coarse_fracs(L, tx, ty, mode, Tc=None):
    """Coarse face fractions FXc [ncy, ncx+1], FYc [ncy+1, ncx]."""
    GX, GY, T = L.GX, L.GY, L.T
    ncx, ncy = tx.nc, ty.nc
    FXc = np.zeros((ncy, ncx + 1))
    FYc = np.zeros((ncy + 1, ncx))
    if mode == 'gpu':
        # x faces: y-weight first (stage y), then the x path (stage x)
        S = ty.R @ GX  # [ncy, nx+1]
        for I in range(ncx + 1):
            pth = tx.paths[I]
            vals = S[:, pth]
            s = vals.sum(axis=1)
            if I == 0 or I == ncx:
                s = np.where((vals == 0).any(axis=1), 0.0, s)
            FXc[:, I] = s / len(pth)
        # y faces: the y path per fine column (stage y), then x-weights (stage x)
        for J in range(ncy + 1):
            pth = ty.paths[J]
            vals = GY[pth, :]  # [np, nx]
            s = vals.sum(axis=0)
            if J == 0 or J == ncy:
                s = np.where((vals == 0).any(axis=0), 0.0, s)
            FYc[J, :] = tx.R @ s / len(pth)
        return FXc, FYc
    if mode == 'anyzero':
        # the wall rule for every face: a path face of (across-weighted) fraction 0 closes it
        S = ty.R @ GX
        for I in range(ncx + 1):
            pth = tx.paths[I]
            vals = S[:, pth]
            FXc[:, I] = np.where((vals == 0).any(axis=1), 0.0, vals.sum(axis=1)) / len(pth)
        for J in range(ncy + 1):
            pth = ty.paths[J]
            vals = GY[pth, :]
            s = np.where((vals == 0).any(axis=0), 0.0, vals.sum(axis=0))
            FYc[J, :] = tx.R @ s / len(pth)
        return FXc, FYc
    if mode == 'anyzero_w':
        # interior faces closed only where a path face is 0 after the across-weighting (both axes)
        FXg, FYg = coarse_fracs(L, tx, ty, 'gpu')
        S = ty.R @ GX
        for I in range(ncx + 1):
            vals = S[:, tx.paths[I]]
            FXc[:, I] = np.where((vals == 0).any(axis=1), 0.0, FXg[:, I])
        S = GY @ tx.R.T  # [ny+1, ncx]
        for J in range(ncy + 1):
            vals = S[ty.paths[J], :]
            FYc[J, :] = np.where((vals == 0).any(axis=0), 0.0, FYg[J, :])
        return FXc, FYc
    if mode == 'az_sel':
        # anyzero_w only where the closed path face really separates the two coarse nodes:
        # one of them is DIRICHLET, or neither's core child is solid
        FXg, FYg = coarse_fracs(L, tx, ty, 'gpu')
        FXc, FYc = FXg.copy(), FYg.copy()
        cx_ = np.array([np.nonzero(tx.core[I])[0][-1] for I in range(ncx)])
        cy_ = np.array([np.nonzero(ty.core[J])[0][-1] for J in range(ncy)])
        coreT = T[np.ix_(cy_, cx_)]
        sep = lambda a, b: (a == DIRI) | (b == DIRI)
        S = ty.R @ GX
        for I in range(1, ncx):
            z = (S[:, tx.paths[I]] == 0).any(axis=1)
            cond = sep(Tc[:, I - 1], Tc[:, I]) | ((coreT[:, I - 1] != SOLID) & (coreT[:, I] != SOLID))
            FXc[:, I] = np.where(z & cond, 0.0, FXc[:, I])
        S = GY @ tx.R.T
        for J in range(1, ncy):
            z = (S[ty.paths[J], :] == 0).any(axis=0)
            cond = sep(Tc[J - 1, :], Tc[J, :]) | ((coreT[J - 1, :] != SOLID) & (coreT[J, :] != SOLID))
            FYc[J, :] = np.where(z & cond, 0.0, FYc[J, :])
        return FXc, FYc
    if mode == 'harm_w':
        # along the face's axis the series (harmonic) mean of the across-weighted path faces
        FXg, FYg = coarse_fracs(L, tx, ty, 'gpu')
        def hm(v, axis):
            z = (v == 0).any(axis=axis)
            inv = np.where(v == 0, 0.0, 1.0 / np.where(v == 0, 1.0, v))
            return np.where(z, 0.0, v.shape[axis] / np.where(z, 1.0, inv.sum(axis=axis)))
        S = ty.R @ GX
        for I in range(ncx + 1):
            FXc[:, I] = hm(S[:, tx.paths[I]], 1)
        S = GY @ tx.R.T
        for J in range(ncy + 1):
            FYc[J, :] = hm(S[ty.paths[J], :], 0)
        # keep the GPU's wall closure
        FXc[:, 0] = np.where(FXg[:, 0] == 0, 0, FXc[:, 0]); FXc[:, -1] = np.where(FXg[:, -1] == 0, 0, FXc[:, -1])
        FYc[0, :] = np.where(FYg[0, :] == 0, 0, FYc[0, :]); FYc[-1, :] = np.where(FYg[-1, :] == 0, 0, FYc[-1, :])
        return FXc, FYc
    if mode == 'fluidfaces':
        # like gpu, but fine faces none of whose sides is fluid are left out of the means
        fl = (T == FLUID)
        ny, nx = T.shape
        tx_ = np.zeros((ny, nx + 1), bool)
        tx_[:, 1:] |= fl
        tx_[:, :-1] |= fl
        ty_ = np.zeros((ny + 1, nx), bool)
        ty_[1:, :] |= fl
        ty_[:-1, :] |= fl
        FXg, FYg = coarse_fracs(L, tx, ty, 'gpu')
        Sx = ty.R @ (GX * tx_)
        Cx = ty.R @ tx_.astype(float)
        for I in range(ncx + 1):
            pth = tx.paths[I]
            num = Sx[:, pth].sum(axis=1)
            den = Cx[:, pth].sum(axis=1)
            use = den > 0
            FXc[:, I] = np.where(use, num / np.where(use, den, 1), FXg[:, I])
            if I == 0 or I == ncx:
                FXc[:, I] = np.where(FXg[:, I] == 0, 0.0, FXc[:, I])
        for J in range(ncy + 1):
            pth = ty.paths[J]
            num = tx.R @ (GY[pth, :] * ty_[pth, :]).sum(axis=0)
            den = tx.R @ ty_[pth, :].sum(axis=0).astype(float)
            use = den > 0
            FYc[J, :] = np.where(use, num / np.where(use, den, 1), FYg[J, :])
            if J == 0 or J == ncy:
                FYc[J, :] = np.where(FYg[J, :] == 0, 0.0, FYc[J, :])
        return FXc, FYc
    raise ValueError(mode)


def ddist_fix(L, tx, ty, Tc, FXc, FYc, cx, cy):
    """Coarse faces between a FLUID and a DIRICHLET coarse node: fraction = coarse spacing / the
    distance from the fluid node to the first Dirichlet point along the path (the fine faces'
    lengths / fractions in series), per fine row (column) of the across children whose point
    on the fluid side is fluid, then weighted across as the GPU does; other rows keep the mean."""
    T, GX, GY = L.T, L.GX, L.GY
    def one_axis(ncA, tA, tB, axA, cA, G, F, Tcoarse, transpose):
        # along axis A (faces between coarse nodes I-1 and I), across axis B
        x = axA.x
        for I in range(1, ncA):
            kl = 2 * (I - 1) + 1  # level-l index of coarse node I-1 (kept nodes)
            kr = kl + 2
            m = kl + 1
            for J in range(tB.nc):
                tl, tr_ = (Tcoarse[J, I - 1], Tcoarse[J, I])
                if {tl, tr_} != {FLUID, DIRI}:
                    continue
                fl_left = tl == FLUID
                rows = np.nonzero(tB.R[J])[0]
                num = 0.0
                wsum = 0.0
                for c in rows:
                    w = tB.R[J, c]
                    tt = (lambda i: T[i, c]) if transpose else (lambda i: T[c, i])
                    gg = (lambda e: G[e, c]) if transpose else (lambda e: G[c, e])
                    kf = kl if fl_left else kr
                    if tt(kf) == SOLID:
                        wsum += w  # no flux out of a solid point: this row adds 0
                        continue
                    if tt(kf) != FLUID:
                        # the GPU's mean for this row
                        pth = tA.paths[I]
                        num += w * np.mean([gg(e) for e in pth]); wsum += w
                        continue
                    # faces from the fluid node towards the D node
                    seq = [(kl + 1, m), (kl + 2, kr)] if fl_left else [(kr, m), (kr - 1, kl)]
                    eff = 0.0
                    prev = kf
                    for (e, node) in seq:
                        g = gg(e)
                        if g == 0:
                            eff = np.inf
                            break
                        eff += abs(x[node] - x[prev]) / g
                        prev = node
                        if tt(node) == DIRI:
                            break
                        if tt(node) == SOLID:
                            eff = np.inf
                            break
                    fr = 0.0 if not np.isfinite(eff) else (cA.x[I] - cA.x[I - 1]) / eff
                    num += w * fr; wsum += w
                F[J, I] = num / wsum if wsum > 0 else F[J, I]
    one_axis(tx.nc, tx, ty, L.ax, cx, GX, FXc, Tc, False)
    FYt = FYc.T.copy()
    one_axis(ty.nc, ty, tx, L.ay, cy, GY, FYt, Tc.T, True)
    FYc[:, :] = FYt.T


def prolongation(Lf, tx, ty, opts):
    """Sparse P (Nf x Nc) onto fluid fine points, with the closed-face rule."""
    nx, ny = tx.n, ty.n
    ncx, ncy = tx.nc, ty.nc
    shut = Lf.shut
    Tf = Lf.T
    rows, cols, vals = [], [], []
    use_shut = opts.get('shut', True)
    pdir = opts.get('pshut_dir', False)
    for j in range(ny):
        for i in range(nx):
            if Tf[j, i] != FLUID:
                continue
            wx = [tx.q0[i], tx.q1[i]]
            wy = [ty.q0[j], ty.q1[j]]
            px = [tx.p0[i], tx.p1[i]]
            py = [ty.p0[j], ty.p1[j]]
            s = shut[j, i] if use_shut else 0
            sx = [s & 1, s & 2]
            sy = [s & 4, s & 8]
            if pdir:
                # a parent that is a coarse Dirichlet point (or a Dirichlet wall ghost) behind
                # which this point has no open path to Dirichlet along the axis: drop it
                sx = list(sx)
                sy = list(sy)
                for side in (0, 1):
                    # x: parent column px[side]; check coarse type along the point's y parents
                    step = -1 if side == 0 else 1
                    # walk fine points from i towards the parent's fine position
                    target = (px[side] - 1) * 2 + 1 if 1 <= px[side] <= ncx else (-1 if px[side] == 0 else nx)
                    if target != i and wx[side] > 0:
                        if not _path_reaches(Lf, j, i, target, step, axis=0):
                            sx[side] = 1
                    target = (py[side] - 1) * 2 + 1 if 1 <= py[side] <= ncy else (-1 if py[side] == 0 else ny)
                    if target != j and wy[side] > 0:
                        if not _path_reaches(Lf, j, i, target, step, axis=1):
                            sy[side] = 1
            for (w, sh) in ((wx, sx), (wy, sy)):
                lo = 0.0 if sh[0] else w[0]
                hi = 0.0 if sh[1] else w[1]
                if lo + hi > 0:
                    w[0], w[1] = lo / (lo + hi), hi / (lo + hi)
            for b in range(2):
                for a in range(2):
                    wt = wx[a] * wy[b]
                    if wt == 0:
                        continue
                    I, J = px[a], py[b]
                    if I < 1 or I > ncx or J < 1 or J > ncy:
                        continue  # ghost: 0
                    rows.append(j * nx + i)
                    cols.append((J - 1) * ncx + (I - 1))
                    vals.append(wt)
    return sp.csr_matrix((vals, (rows, cols)), shape=(nx * ny, ncx * ncy))


def _path_reaches(L, j, i, target, step, axis):
    """Along the axis from fine point (j,i) to fine index target: are all faces on the way open
    (GX/GY > 0)?  target may be -1 or n (the wall ghost)."""
    k = i if axis == 0 else j
    while k != target:
        f = k if step < 0 else k + 1
        if (L.GX[j, f] if axis == 0 else L.GY[f, i]) == 0:
            return False
        k += step
    return True


def build(mask, opts=None):
    opts = dict(opts or {})
    ny, nx = mask.shape
    ax, ay = fine_axis(nx), fine_axis(ny)
    T = mask.astype(np.int8)
    FX = np.ones((ny, nx + 1))
    FY = np.ones((ny + 1, nx))
    levels = [make_level(ax, ay, T, FX, FY)]
    trans = []
    while True:
        L = levels[-1]
        if L.nx == 1 and L.ny == 1:
            break
        cx, tx = coarsen_axis(L.ax) if L.nx > 1 else (L.ax, identity(L.ax))
        cy, ty = coarsen_axis(L.ay) if L.ny > 1 else (L.ay, identity(L.ay))
        P = prolongation(L, tx, ty, opts)
        Tc = coarse_types(L, tx, ty, opts.get('type_rule', 'gpu'))
        if opts.get('pp', False):
            # fluid only where some fine fluid point takes weight from it (closed-face P)
            par = np.asarray((P != 0).sum(axis=0)).ravel().reshape(Tc.shape) > 0
            Tc = np.where(Tc == FLUID, np.where(par, FLUID, SOLID), Tc).astype(np.int8)
        if opts.get('iso', False):
            Tc = iso_fix(L, tx, ty, Tc)
        FXc, FYc = coarse_fracs(L, tx, ty, opts.get('frac', 'gpu'), Tc)
        if opts.get('ddist', False):
            ddist_fix(L, tx, ty, Tc, FXc, FYc, cx, cy)
        Lc = make_level(cx, cy, Tc, FXc, FYc)
        if opts.get('pnorm', False):
            # weights on coarse SOLID parents dropped, the rest scaled up (row sums incl. ghosts = 1)
            P = P.tocoo()
            solid = (Lc.T.ravel() == SOLID)[P.col]
            ws = np.bincount(P.row, weights=np.where(solid, P.data, 0.0), minlength=P.shape[0])
            keep = ~solid
            scale = 1.0 / np.maximum(1.0 - ws, 1e-300)
            full = ws >= 1 - 1e-12  # only solid parents: leave as is (correction 0)
            data = P.data * np.where(full[P.row], 1.0, scale[P.row])
            sel = keep | full[P.row]
            P = sp.csr_matrix((data[sel], (P.row[sel], P.col[sel])), shape=P.shape)
        rmode = opts.get('restr', 'geo')
        if rmode == 'geo':
            Rd = sp.csr_matrix(np.kron(ty.R, tx.R))
            R = Rd
        else:
            W = L.vol
            Rt = (P.multiply(W[:, None])).T.tocsr()  # Nc x Nf
            if rmode == 'tr':
                Wc = np.outer(ty.Wc, tx.Wc).ravel()
            else:  # 'trn': each row sums to one (over fluid children)
                Wc = np.asarray(Rt.sum(axis=1)).ravel()
                Wc[Wc == 0] = 1
            R = sp.diags(1.0 / Wc) @ Rt
        trans.append((P, sp.csr_matrix(R)))
        levels.append(Lc)
    return levels, trans


def identity(a):
    raise NotImplementedError('square grids only: both axes reach one node together')


class MG:
    def __init__(self, mask, opts=None, omega=1.2, pre=2, post=1):
        self.levels, self.trans = build(mask, opts)
        self.omega, self.pre, self.post = omega, pre, post
        Lc = self.levels[-1]
        fl = np.nonzero(Lc.fluid)[0]
        self.cfl = fl
        if len(fl):
            self.clu = spla.splu(sp.csc_matrix(Lc.A[fl][:, fl]))

    def smooth(self, L, u, f, sweeps):
        for _ in range(sweeps):
            for c in L.col:
                r = f[c] - L.A[c] @ u
                u[c] += self.omega * r / L.diag[c]
        return u

    def exact(self, l, u, f):
        if not hasattr(self, '_lu'):
            self._lu = {}
        L = self.levels[l]
        if l not in self._lu:
            fl = np.nonzero(L.fluid)[0]
            self._lu[l] = (fl, spla.splu(sp.csc_matrix(L.A[fl][:, fl])) if len(fl) else None)
        fl, lu = self._lu[l]
        if len(fl):
            u[fl] = lu.solve(f[fl])
        return u

    def cycle(self, l, u, f):
        L = self.levels[l]
        if getattr(self, 'exact_at', None) == l:
            return self.exact(l, u, f)
        if l == len(self.levels) - 1:
            if len(self.cfl):
                u[self.cfl] = self.clu.solve(f[self.cfl])
            return u
        self.smooth(L, u, f, self.pre)
        r = np.where(L.fluid, f - L.A @ u, 0.0)
        P, R = self.trans[l]
        fc = R @ r
        Lc = self.levels[l + 1]
        ec = self.cycle(l + 1, np.zeros(Lc.nx * Lc.ny), fc)
        ec = np.where(Lc.fluid, ec, 0.0)
        u += P @ ec
        self.smooth(L, u, f, self.post)
        return u

    def resid(self, u, f):
        L = self.levels[0]
        return np.linalg.norm(np.where(L.fluid, f - L.A @ u, 0.0))


def factor(mask, opts=None, cycles=15, first=5, seed=1, verbose=False, exact_at=None, mg=None):
    mg = mg or MG(mask, opts)
    mg.exact_at = exact_at
    L = mg.levels[0]
    rng = np.random.default_rng(seed)
    u = np.where(L.fluid, rng.uniform(-1, 1, L.nx * L.ny), 0.0)
    f = np.zeros_like(u)
    res = [mg.resid(u, f)]
    for k in range(cycles):
        mg.cycle(0, u, f)
        res.append(mg.resid(u, f))
        if res[-1] < 1e-280:
            break
    res = np.array(res)
    rat = res[1:] / res[:-1]
    if verbose:
        print(' '.join('%.3f' % x for x in rat))
    # geometric mean over cycles first..cycles (1-based cycle numbers)
    sel = rat[first - 1:cycles]
    sel = sel[np.isfinite(sel) & (sel > 0)]
    return float(np.exp(np.mean(np.log(sel)))) if len(sel) else float('nan'), rat


# ---- masks ----
def mask_box(n):
    return np.full((n, n), FLUID, np.int8)


def mask_disc(n, r=0.3):
    m = mask_box(n)
    x = (np.arange(n) + 0.5) / n
    X, Y = np.meshgrid(x, x)
    m[(X - .5) ** 2 + (Y - .5) ** 2 < r * r] = SOLID
    return m


def mask_sealed(n, Jfrac=0.7, J=None):
    m = mask_box(n)
    if J is None:
        J = int(round(Jfrac * n))
    m[J:, :] = DIRI
    m[J - 1, :] = SOLID
    return m


def mask_film(n, thick=1):
    m = mask_box(n)
    m[:, n - 1 - thick] = SOLID
    return m


def mask_pool(n):
    m = mask_box(n)
    x = (np.arange(n) + 0.5) / n
    X, Y = np.meshgrid(x, x)  # X varies along i, Y along j
    m[Y > 0.7] = DIRI
    m[(X < 0.2) & (Y < 0.3)] = SOLID
    return m


def mask_walls(n):
    m = mask_box(n)
    x = (np.arange(n) + 0.5) / n
    X, Y = np.meshgrid(x, x)
    I, Jg = np.meshgrid(np.arange(n), np.arange(n))
    m[(I == n // 3 - 1) & (Y < 0.75)] = SOLID
    m[(Jg == n // 2 - 1) & (X > 0.55) & (X < 0.9)] = SOLID
    return m


def mask_stairs(n):
    m = mask_box(n)
    x = (np.arange(n) + 0.5) / n
    X, Y = np.meshgrid(x, x)
    m[Y < 0.12 * (1 + np.floor(5 * X))] = SOLID
    return m


def mask_film_low(n, thick=1):
    m = mask_box(n)
    m[:, thick] = SOLID
    return m


def mask_film_top(n, thick=1):
    m = mask_box(n)
    m[n - 1 - thick, :] = SOLID
    return m


def mask_topd(n, frac=0.5):
    """Dirichlet cells above y = frac: a free surface over the whole width."""
    m = mask_box(n)
    x = (np.arange(n) + 0.5) / n
    _, y = np.meshgrid(x, x)
    m[y > frac] = DIRI
    return m


def mask_pocket_held(n):
    """A square pocket sealed by a one-cell solid shell (0.3-0.7), one Dirichlet
    cell inside it off the coarse nodes (an even 0-based index)."""
    m = mask_box(n)
    a, b = int(0.3 * n), int(0.7 * n)
    m[a:b + 1, a] = m[a:b + 1, b] = SOLID
    m[a, a:b + 1] = m[b, a:b + 1] = SOLID
    c = 2 * ((a + b) // 4)
    m[c, c] = DIRI
    return m


def mask_sealed2(n):
    """The sealed case with a solid layer two cells thick."""
    m = mask_sealed(n)
    m[int(round(0.7 * n)) - 2, :] = SOLID
    return m
