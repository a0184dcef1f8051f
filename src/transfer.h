// transfer.h -- coarsening an axis and the transfer tables between two levels
#pragma once
#include "smooth_beta.h"

namespace pgpu {

// Restriction and interpolation between a level and the next coarser one.
// Host: the per-axis tables (coarsening rule, interpolation weights, the
// restriction as their width-weighted adjoint) and the conditions the tiled
// kernels need.  Device, per transfer, a direct kernel that reads each
// point's stencil from memory (any level: periodic rings included) and a
// tiled one that reads each value once through shared memory (where the
// taps of consecutive nodes move forward: every axis but a periodic one):
//   restriction        restrict_kernel / restrict_tile_kernel
//   residual + R       (double) restrict_residual_kernel, the residual formed
//                      in the tiles (uniform 3D levels)
//   prolongation + add interp_kernel<2, ADD> / interp_tile_kernel<2, ADD>
//   FMG interpolation  interp_kernel<4> / interp_tile_kernel<4> (tricubic)
//   FMG boundary data  ghost_restrict_kernel, ghost_edges_kernel
// The single-block coarse cycle (multigrid.h) sums with the direct kernels'
// per-point functions (rs_column / rs_point, ip_column / ip_point).
// Transfer<T> (end of the section) holds one level pair's tables, which
// kernels are eligible, and their launches.

// Fine-to-coarse transfer along one axis.  Prolongation: fine node i takes
// q0[i] * coarse[p0[i]] + q1[i] * coarse[p1[i]], where p are storage indices
// of the coarse axis (0 and nc+1 are its ghosts: the wall values).
// Restriction is the adjoint weighted by cell widths, R = Wc^-1 P^T W, so that
// the coarse right-hand side keeps the integral of the fine one: child
// indices (0-based fine interior) and weights per coarse node.
struct AxisTransfer {
    bool coarsened = false;
    std::vector<int> p0, p1;
    std::vector<double> q0, q1;
    std::vector<int> rcnt, ridx; // rcnt[I], ridx[I * MAX_CHILDREN + m]
    std::vector<double> rw;
    // FMG's restriction of the data (f, boundary values): rw moved to rows
    // without a first moment about their coarse node (see moment_free).
    std::vector<double> fw;
    // FMG interpolation: cubic Lagrange through 4 coarse points per fine
    // node (storage indices c4, weights w4), see cubic_interpolation.
    std::vector<int> c4;
    std::vector<double> w4;
};

// FMG interpolation along one axis: cubic Lagrange interpolation through the
// four points nearest to each fine node, taken from the coarse nodes plus the
// wall itself at a Dirichlet wall (value: the ghost, the boundary data) and
// the wrapped nodes on a periodic axis.  Next to a Neumann wall the stencil
// becomes one-sided (a mirror image would force a zero slope where the flux
// is not zero).  Linear interpolation leaves an error of several times the
// discretisation error for the cycles to remove; cubic leaves far less.
static void cubic_interpolation(const Axis &a, const Axis &c, AxisTransfer &t)
{
    const int nc = c.n;
    std::vector<double> pos;
    std::vector<int> idx; // coarse storage index holding the point's value
    auto push = [&](double p, int i) { pos.push_back(p); idx.push_back(i); };
    if (a.lo == PGPU_BC_DIRICHLET) push(c.xlo, 0);
    else if (a.lo == PGPU_BC_PERIODIC) {
        if (nc > 1) push(c.x[nc - 2] - c.L, nc - 1);
        push(c.x[nc - 1] - c.L, nc);
    }
    for (int I = 0; I < nc; ++I) push(c.x[I], I + 1);
    if (a.hi == PGPU_BC_DIRICHLET) push(c.xhi, nc + 1);
    else if (a.hi == PGPU_BC_PERIODIC) {
        push(c.x[0] + c.L, 1);
        if (nc > 1) push(c.x[1] + c.L, 2);
    }
    const int np = (int)pos.size();
    t.c4.assign((size_t)a.n * 4, 1);
    t.w4.assign((size_t)a.n * 4, 0.0);
    int J = 0; // last point at or left of xi (0 also when all are right of it): the positions rise
    for (int i = 0; i < a.n; ++i) {
        const double xi = a.x[i];
        if (pos[J] > xi) J = 0;
        while (J + 1 < np && pos[J + 1] <= xi) ++J;
        const int m = std::min(4, np);
        const int s0 = std::max(0, std::min(J - 1, np - m));
        for (int k = 0; k < m; ++k) {
            double w = 1;
            for (int q = 0; q < m; ++q)
                if (q != k) w *= (xi - pos[s0 + q]) / (pos[s0 + k] - pos[s0 + q]);
            t.c4[(size_t)i * 4 + k] = idx[s0 + k];
            t.w4[(size_t)i * 4 + k] = w;
        }
    }
}

static AxisTransfer identity_transfer(const Axis &a)
{
    AxisTransfer t;
    t.coarsened = false;
    t.p0.resize(a.n);
    t.p1.resize(a.n);
    t.q0.assign(a.n, 1.0);
    t.q1.assign(a.n, 0.0);
    t.rcnt.assign(a.n, 1);
    t.ridx.assign((size_t)a.n * MAX_CHILDREN, 0);
    t.rw.assign((size_t)a.n * MAX_CHILDREN, 0.0);
    t.c4.assign((size_t)a.n * 4, 1);
    t.w4.assign((size_t)a.n * 4, 0.0);
    for (int i = 0; i < a.n; ++i) {
        t.p0[i] = t.p1[i] = i + 1;
        t.ridx[(size_t)i * MAX_CHILDREN] = i;
        t.rw[(size_t)i * MAX_CHILDREN] = 1.0;
        t.c4[(size_t)i * 4] = i + 1;
        t.w4[(size_t)i * 4] = 1.0;
    }
    t.fw = t.rw;
    return t;
}

// FMG restricts f and the boundary data to define the coarse problems, and
// the coarse solution is only as good as that data: a row of R whose
// children are not centred on its coarse node (the first coarse node of a
// cell-paired Neumann or Dirichlet axis: its fine neighbour on the wall side
// interpolates from it alone, or from the wall; the last one of an even
// Dirichlet axis that keeps nodes, the last fine node) samples f off the node, an
// O(h) error in a layer of cells that left the FMG error next to Neumann
// walls at up to twice the discretisation error after one finest cycle.
// moment_free moves weight between a row's outermost children until the
// row's first moment about its node vanishes (positions wrapped on periodic
// axes); a row that would need a negative weight (below -1e-12: rounding)
// keeps R's.
static void moment_free(const Axis &a, const std::vector<double> &X, AxisTransfer &t)
{
    t.fw = t.rw;
    const int nc = (int)X.size();
    for (int I = 0; I < nc; ++I) {
        const int cnt = t.rcnt[I];
        if (cnt < 2) continue;
        double M = 0, dmin = 0, dmax = 0;
        int mmin = -1, mmax = -1;
        for (int m = 0; m < cnt; ++m) {
            double d = a.x[t.ridx[(size_t)I * MAX_CHILDREN + m]] - X[I];
            if (a.lo == PGPU_BC_PERIODIC) { // the nearest image (+-L/2 kept as is)
                if (d > 0.5 * a.L) d -= a.L;
                else if (d < -0.5 * a.L) d += a.L;
            }
            M += t.rw[(size_t)I * MAX_CHILDREN + m] * d;
            if (mmin < 0 || d < dmin) { dmin = d; mmin = m; }
            if (mmax < 0 || d > dmax) { dmax = d; mmax = m; }
        }
        if (!(dmax - dmin > 0) || std::fabs(M) <= 1e-12 * (dmax - dmin)) continue;
        const double rlo = t.rw[(size_t)I * MAX_CHILDREN + mmin], rhi = t.rw[(size_t)I * MAX_CHILDREN + mmax];
        const double delta = M / (dmax - dmin);
        double wlo = rlo + delta, whi = rhi - delta;
        // Rounding may leave a weight that should be 0 just below it: such a
        // row still goes moment-free (the other end takes both weights), so
        // that mirror-image rows stay alike.
        if (wlo < -1e-12 || whi < -1e-12) continue;
        if (whi < 0) { wlo = rlo + rhi; whi = 0; }
        else if (wlo < 0) { whi = rlo + rhi; wlo = 0; }
        wlo = std::min(wlo, 1.0); // (a row's weights sum to 1: rounding may add to one)
        whi = std::min(whi, 1.0);
        t.fw[(size_t)I * MAX_CHILDREN + mmin] = wlo;
        t.fw[(size_t)I * MAX_CHILDREN + mmax] = whi;
    }
}

// Coarsening rule, per axis (documented in doc/internals.md):
//  - n even between two Dirichlet walls: vertex coarsening, the coarse nodes
//    are the fine nodes 2, 4, ..., n (1-based), the last one next to the
//    high wall.  Cell pairs there converged worse with masks, the more the
//    more levels (a solid sphere at 512^3: 0.19 per V-cycle, 0.05 at 511^3);
//    kept nodes converge like odd sizes, the box included.
//  - other even axes (a Neumann wall, periodic): cell pairs, a coarse node
//    at the middle of fine nodes 2I-1 and 2I, centred in its coarse cell as
//    the fine nodes are next to a Neumann wall.  Kept nodes there put a
//    coarse cell off its node: FMG's error rose to 1.5x the discretisation
//    error between two Neumann walls, and V-cycles slowed (0.115 per cycle
//    on a 256^3 box open at the top, 0.077 with pairs).
//  - odd Dirichlet/Neumann axes: vertex coarsening, fine nodes 2, ..., n-1.
//  - odd periodic axes: a uniform coarse ring of nc nodes (the even one of
//    (n +- 1)/2) not nested in the fine one.
// Interpolation is linear in position, towards the wall value at Dirichlet
// walls, constant towards Neumann walls, wrapping on periodic axes.
static bool coarsen_axis(const Axis &a, Axis &c, AxisTransfer &t)
{
    const int n = a.n;
    if (n <= 1) return false;
    std::vector<double> X;
    const bool pairs = n % 2 == 0 && !(a.lo == PGPU_BC_DIRICHLET && a.hi == PGPU_BC_DIRICHLET);
    if (pairs) {
        for (int I = 0; I < n / 2; ++I) X.push_back(0.5 * (a.x[2 * I] + a.x[2 * I + 1]));
    } else if (a.lo == PGPU_BC_PERIODIC) {
        int nc = (n + 1) / 2;
        if (nc % 2 == 1) nc = (n - 1) / 2;
        for (int I = 0; I < nc; ++I) X.push_back(a.x[0] + I * (a.L / nc));
    } else {
        for (int I = 0; I < n / 2; ++I) X.push_back(a.x[2 * I + 1]);
    }
    const int nc = (int)X.size();
    t.coarsened = true;
    t.p0.assign(n, 0);
    t.p1.assign(n, 0);
    t.q0.assign(n, 0.0);
    t.q1.assign(n, 0.0);
    const bool per = a.lo == PGPU_BC_PERIODIC;
    int J = -1; // last coarse node with X[J] <= x
    for (int i = 0; i < n; ++i) {
        const double xi = a.x[i];
        while (J + 1 < nc && X[J + 1] <= xi * (1 + 1e-14) + 1e-300) ++J;
        int pa, pb;
        double ta; // weight of pa; pb gets 1 - ta
        if (J >= 0 && J < nc - 1) {
            pa = J + 1;
            pb = J + 2;
            ta = (X[J + 1] - xi) / (X[J + 1] - X[J]);
        } else if (J == nc - 1) { // beyond the last coarse node
            pa = nc;
            if (per) {
                pb = 1;
                ta = (X[0] + a.L - xi) / (X[0] + a.L - X[nc - 1]);
            } else if (a.hi == PGPU_BC_DIRICHLET) {
                pb = nc + 1;
                ta = (a.xhi - xi) / (a.xhi - X[nc - 1]);
            } else {
                pb = nc;
                ta = 1.0;
            }
        } else { // before the first coarse node
            pb = 1;
            if (per) {
                pa = nc;
                ta = (X[0] - xi) / (X[0] - (X[nc - 1] - a.L));
            } else if (a.lo == PGPU_BC_DIRICHLET) {
                pa = 0;
                ta = (X[0] - xi) / (X[0] - a.xlo);
            } else {
                pa = 1;
                ta = 1.0;
            }
        }
        t.p0[i] = pa;
        t.q0[i] = ta;
        t.p1[i] = pb;
        t.q1[i] = 1.0 - ta;
    }
    // Coarse cell widths Wc = P^T w and the restriction R = Wc^-1 P^T W.
    std::vector<double> W(nc, 0.0);
    t.rcnt.assign(nc, 0);
    t.ridx.assign((size_t)nc * MAX_CHILDREN, 0);
    t.rw.assign((size_t)nc * MAX_CHILDREN, 0.0);
    auto add = [&](int p, double q, int i) {
        if (p < 1 || p > nc || q == 0.0) return true;
        const int I = p - 1;
        for (int m = 0; m < t.rcnt[I]; ++m)
            if (t.ridx[(size_t)I * MAX_CHILDREN + m] == i) {
                t.rw[(size_t)I * MAX_CHILDREN + m] += q * a.w[i];
                W[I] += q * a.w[i];
                return true;
            }
        if (t.rcnt[I] == MAX_CHILDREN) return false;
        const int m = t.rcnt[I]++;
        t.ridx[(size_t)I * MAX_CHILDREN + m] = i;
        t.rw[(size_t)I * MAX_CHILDREN + m] = q * a.w[i];
        W[I] += q * a.w[i];
        return true;
    };
    for (int i = 0; i < n; ++i)
        if (!add(t.p0[i], t.q0[i], i) || !add(t.p1[i], t.q1[i], i)) return false;
    for (int I = 0; I < nc; ++I) {
        if (!(W[I] > 0)) return false;
        for (int m = 0; m < t.rcnt[I]; ++m) t.rw[(size_t)I * MAX_CHILDREN + m] /= W[I];
    }
    moment_free(a, X, t);
    c = a;
    c.n = nc;
    c.x = X;
    c.w = W;
    c.h = a.h * n / nc;
    cubic_interpolation(a, c, t);
    return true;
}

// interp_tile_kernel's taps along one axis: fine node i's interpolation
// (coarse storage indices idx, weights wt; NW per node) fitted into a window
// of NT consecutive storage indices from s[i], inside the coarse interior or
// on a Dirichlet ghost (the wall value; no weight falls on other ghosts,
// though the kernel's tile may load them).  The windows must never move
// back, and (tile > 0) those of a tile of `tile` fine nodes must lie within
// `span` indices from the first one's start.
static bool window_taps(int n, int nc, int lo_bc, int hi_bc, const std::vector<int> &idx,
                        const std::vector<double> &wt, int NW, int NT, int tile, int span, std::vector<int> &s,
                        std::vector<double> &w)
{
    const int lo = lo_bc == PGPU_BC_DIRICHLET ? 0 : 1, hi = hi_bc == PGPU_BC_DIRICHLET ? nc + 1 : nc;
    s.assign(n, lo);
    w.assign((size_t)n * NT, 0.0);
    bool ok = hi - lo + 1 >= NT;
    for (int i = 0; i < n && ok; ++i) {
        int mn = INT32_MAX, mx = -1;
        for (int m = 0; m < NW; ++m)
            if (wt[(size_t)i * NW + m] != 0.0) {
                mn = std::min(mn, idx[(size_t)i * NW + m]);
                mx = std::max(mx, idx[(size_t)i * NW + m]);
            }
        if (mx < 0) mn = mx = lo; // no weight at all: any window
        // The lowest start that covers the taps and does not move back.
        const int st = std::max({lo, i > 0 ? s[i - 1] : lo, mx - NT + 1});
        if (st > mn || st > hi - NT + 1) { ok = false; break; }
        s[i] = st;
        for (int m = 0; m < NW; ++m)
            if (wt[(size_t)i * NW + m] != 0.0) w[(size_t)i * NT + idx[(size_t)i * NW + m] - st] += wt[(size_t)i * NW + m];
        if (tile > 0 && st - s[i - i % tile] + NT > span) ok = false;
    }
    if (!ok) {
        std::fill(s.begin(), s.end(), lo);
        std::fill(w.begin(), w.end(), 0.0);
    }
    return ok;
}

// beta_tile_kernel's PRO on windows s of n fine nodes (two taps each)
// along x (d 0), y (1) or z (2): along x and y each tile's taps inside its
// coarse tile (tiles of `width` nodes from -2 on, `step` apart; span coarse
// indices), along z windows that move by at most one a plane.
static bool bt_fold_fits(const std::vector<int> &s, int n, int d)
{
    typedef BetaTile<double> BT; // (the tiles' shapes do not depend on the precision)
    static_assert(BT::OX == BetaTile<float>::OX && BT::OY == BetaTile<float>::OY && BT::PCX == BetaTile<float>::PCX &&
                      BT::PCY == BetaTile<float>::PCY,
                  "one fit for both precisions");
    if (d == 2) {
        for (int i = 1; i < n; ++i)
            if (s[i] - s[i - 1] > 1) return false;
        return true;
    }
    const int step = d == 0 ? BT::OX : BT::OY, width = d == 0 ? 2 * BT_TX : BT::BY, span = d == 0 ? BT::PCX : BT::PCY;
    for (int b0 = -2; b0 < n; b0 += step) {
        const int lo = std::max(b0, 0), hi = std::min(b0 + width - 1, n - 1);
        if (s[hi] + 2 - s[lo] > span) return false;
    }
    return true;
}

// restrict_tile_kernel's conditions on an x or y transfer: at most 4 children
// per coarse node, each a contiguous run of fine nodes whose ends never move
// back, and the 4 fine nodes from each run's start inside the shared-memory
// tile (`span` fine nodes from the first child of the tile's first coarse
// node; tiles of `tile` coarse nodes).
static bool runs_forward(const AxisTransfer &t, int tile, int span)
{
    const int nc = (int)t.rcnt.size();
    auto first = [&](int I) { return t.ridx[(size_t)I * MAX_CHILDREN]; };
    auto last = [&](int I) { return t.ridx[(size_t)I * MAX_CHILDREN + t.rcnt[I] - 1]; };
    for (int I = 0; I < nc; ++I) {
        if (t.rcnt[I] < 1 || t.rcnt[I] > 4) return false;
        for (int m = 1; m < t.rcnt[I]; ++m)
            if (t.ridx[(size_t)I * MAX_CHILDREN + m] != first(I) + m) return false;
        if (I > 0 && (first(I) < first(I - 1) || last(I) < last(I - 1))) return false;
    }
    for (int I = 0; I < nc; ++I) // all 4 read slots of every coarse node inside its tile
        if (first(I) - first(I - I % tile) + 4 > span) return false;
    return true;
}

// The z side: per fine plane, the coarse planes whose children include it --
// at most two, consecutive, never moving back (t0: the first, w0 / w1 the
// weights there and in t0 + 1).  False where that does not hold.
static bool plane_owners(const AxisTransfer &t, const std::vector<double> &rw, int nf, std::vector<int> &t0,
                         std::vector<double> &w0, std::vector<double> &w1)
{
    // Entry kf + 1 for fine plane kf = -1 .. nf: a slab's children include
    // the ghost planes across its faces (dist.h); elsewhere 0 and nf + 1
    // stay unused.
    const int nc = (int)t.rcnt.size();
    t0.assign(nf + 2, -1);
    w0.assign(nf + 2, 0.0);
    w1.assign(nf + 2, 0.0);
    bool ok = true;
    for (int K = 0; K < nc && ok; ++K) {
        ok = t.rcnt[K] > 0; // (a row of another rank's node, dist.h: the tiles need every row)
        for (int m = 0; m < t.rcnt[K] && ok; ++m) {
            const int kf = t.ridx[(size_t)K * MAX_CHILDREN + m], e = kf + 1;
            if (kf < -1 || kf > nf) { ok = false; break; }
            if (m > 0 && kf != t.ridx[(size_t)K * MAX_CHILDREN] + m) ok = false;
            const double w = rw[(size_t)K * MAX_CHILDREN + m];
            if (t0[e] < 0) { t0[e] = K; w0[e] = w; }
            else if (K == t0[e] + 1 && w1[e] == 0.0) w1[e] = w;
            else ok = false;
        }
    }
    for (int e = 0, last = -1; e < nf + 2 && ok; ++e) {
        if (t0[e] < 0) { // only a ghost plane may have no parent
            ok = e == 0 || e == nf + 1;
            continue;
        }
        ok = t0[e] >= last;
        last = t0[e];
    }
    if (!ok) std::fill(t0.begin(), t0.end(), 0);
    return ok;
}


// ---- device tables ----
// Restriction rows per axis (see AxisTransfer): rcnt[I], ridx / rw[I *
// MAX_CHILDREN + m]; tz0 / wz0 / wz1: per fine plane, the first coarse plane
// it restricts to and its weights there and in the next one (tiles only).
template <class T> struct Xfer {
    const int *cntx, *cnty, *cntz, *idxx, *idxy, *idxz;
    const T *rwx, *rwy, *rwz;
    const int *tz0;
    const T *wz0, *wz1;
};
// Interpolation taps per axis: tap a of fine node i is coarse storage index
// i?[i * NW + a] with weight w?[i * NW + a] (NW = 2: trilinear, 4: tricubic).
template <class T> struct Taps {
    const int *ix, *iy, *iz;
    const T *wx, *wy, *wz;
};
// The same fitted into windows for the tiles: tap a of fine node i is coarse
// storage index s?[i] + a with weight w?[i * NT + a] (window_taps).
template <class T> struct Windows {
    const int *sx, *sy, *sz;
    const T *wx, *wy, *wz;
};

template <class T> __host__ __device__ __forceinline__ int64_t ghost_origin(const Grid<T> &g)
{
    return g.base - 1 - g.sy - (g.is3d ? g.sz : 0); // storage of (-1, -1, -1)
}

} // namespace pgpu
