// dist_plan.h -- several GPUs: the slab split of a hierarchy and the local configs
#pragma once
#include "hierarchy.h"

namespace pgpu {

// The global hierarchy (the single-GPU one, host tables only), cut into
// slabs level by level while every rank keeps at least two nodes of the
// split axis, a level has DIST_REPLICATE_AT points or more, and the
// transfers reach at most one node across a slab's face (the halo depth);
// from the next level on every rank holds the whole global level.  A
// coarse node belongs to the rank that holds its heaviest child.  On the
// slab levels the split axis is the global axis restricted to the rank's
// nodes, a face towards another rank a Dirichlet face at the neighbour's
// node: its coupling is the global one.  The transfers are the global
// tables in the slab's indices: a restriction row or an interpolation tap
// one node beyond the slab reads the ghost plane (exchanged before).  The
// first replicated level gets the restriction rows of this rank's own
// coarse nodes only (the others' are broadcast).
constexpr double DIST_REPLICATE_AT = 131072; // points: below, a level's halo latency outweighs its work

static pgpu_status dist_split(const pgpu_config &g, int ranks, int rank, pgpu_box &b, char *err);

// Every rank's first node A[r] and end node B[r] along the split axis (level 0).
static pgpu_status dist_ranges(const pgpu_config &g, int ranks, int axis, std::vector<int64_t> &A,
                               std::vector<int64_t> &B, char *err)
{
    A.assign(ranks, 0);
    B.assign(ranks, 0);
    for (int r = 0; r < ranks; ++r) {
        pgpu_box b;
        PGPU_FORWARD(dist_split(g, ranks, r, b, err));
        A[r] = b.lo[axis];
        B[r] = b.lo[axis] + b.n[axis];
    }
    return PGPU_SUCCESS;
}

// Band passes (dist_band_pass) on level l where the split axis is z,
// every slab holds a band's own planes (2 S - 1) and a periodic seam keeps
// the colours (an even number of nodes): Dist::band[l] and the couplings
// of this rank's band nodes from G, the level's global split axis; A / B:
// every rank's first and end node on it.  (d.band / d.bandc sized.)
static void dist_band_level(Dist &d, int l, const Axis &G, const std::vector<int64_t> &A,
                            const std::vector<int64_t> &B)
{
    const int S = DIST_BAND_S, LB = DIST_BAND_L, R = d.ranks;
    const int64_t N = G.n;
    const bool per = G.lo == PGPU_BC_PERIODIC;
    bool ok = R > 1 && d.axis == 2 && !(per && (N & 1)) && (l > 0 || d.band_strides);
    for (int r = 0; r < R && ok; ++r) ok = B[r] - A[r] >= 2 * S - 1;
    d.band[l] = ok;
    if (!ok) return;
    const AxisCoef gc = axis_coef(G);
    const int64_t a = A[d.rank], n = B[d.rank] - a;
    for (int side = 0; side < 2; ++side)
        for (int b = 0; b < LB; ++b) {
            int64_t J = a + (side ? n - 2 * S + 1 + b : b - S - 1);
            if (per) J = ((J % N) + N) % N;
            if (J < 0 || J >= N) continue; // no neighbour on this side: not used
            d.bandc[((size_t)l * 4 + side) * LB + b] = gc.c_lo[J];
            d.bandc[((size_t)l * 4 + 2 + side) * LB + b] = gc.c_hi[J];
        }
}

static bool dist_plan(Dist &d, std::vector<HostLevel> &out, char *err)
{
    const pgpu_config &c = d.global;
    const int ax = d.axis, R = d.ranks;
    Axis fine[3];
    fine_axes(c, fine);
    std::vector<HostLevel> hg;
    if (!build_hierarchy(fine, hg)) {
        record(err, PGPU_ERROR_UNSUPPORTED, "multigrid: could not build a level hierarchy for this grid");
        return false;
    }
    const int nl = (int)hg.size();
    const bool per = c.bc[2 * ax] == PGPU_BC_PERIODIC && R > 1;
    // Level-0 ranges of every rank.
    std::vector<std::vector<int64_t>> A(1), B(1);
    if (dist_ranges(c, R, ax, A[0], B[0], err) != PGPU_SUCCESS) return false;
    // Index maps with a slab [a, b) of N nodes: a global node to the slab's
    // storage (1..n; 0 and n+1 the ghosts), -1 where it is further away.
    auto to_storage = [&](int64_t J, int64_t a, int64_t b, int64_t N) -> int64_t {
        if (J >= a && J < b) return J - a + 1;
        if (J == a - 1) return 0; // (J == -1: the wall below node 0)
        if (J == b) return b - a + 1;
        if (per && a == 0 && J == N - 1) return 0;
        if (per && b == N && J == 0) return b - a + 1;
        return -1;
    };
    // The owners of level l+1's nodes; false where they are not contiguous.
    auto owners = [&](int l, std::vector<int64_t> &a1, std::vector<int64_t> &b1) {
        const AxisTransfer &t = hg[l].tr[ax];
        const int64_t Nc = hg[l + 1].ax[ax].n;
        a1.assign(R, 0);
        b1.assign(R, 0);
        if (!t.coarsened) {
            a1 = A[l];
            b1 = B[l];
            return true;
        }
        int prev = 0;
        std::vector<bool> seen(R, false);
        for (int64_t J = 0; J < Nc; ++J) {
            int best = -1;
            for (int m = 0; m < t.rcnt[J]; ++m)
                if (best < 0 || t.rw[(size_t)J * MAX_CHILDREN + m] > t.rw[(size_t)J * MAX_CHILDREN + best]) best = m;
            if (best < 0) return false;
            const int64_t ch = t.ridx[(size_t)J * MAX_CHILDREN + best];
            int r = 0;
            while (r < R && !(ch >= A[l][r] && ch < B[l][r])) ++r;
            if (r == R || r < prev) return false;
            if (!seen[r]) { a1[r] = J; seen[r] = true; }
            b1[r] = J + 1;
            prev = r;
        }
        return true;
    };
    // The transfer l -> l+1 reaches at most one node beyond each slab.
    auto reachable = [&](int l, const std::vector<int64_t> &a1, const std::vector<int64_t> &b1, bool coarse_slab) {
        const AxisTransfer &t = hg[l].tr[ax];
        const int64_t N = hg[l].ax[ax].n, Nc = hg[l + 1].ax[ax].n;
        for (int r = 0; r < R; ++r) {
            for (int64_t J = a1[r]; J < b1[r]; ++J)
                for (int m = 0; m < (t.coarsened ? t.rcnt[J] : 0); ++m) {
                    const int64_t ch = t.ridx[(size_t)J * MAX_CHILDREN + m];
                    if (to_storage(ch, A[l][r], B[l][r], N) < 0) return false;
                }
            if (!coarse_slab) continue;
            for (int64_t i = A[l][r]; i < B[l][r]; ++i) {
                const int64_t P[2] = {t.p0[i], t.p1[i]};
                const double Q[2] = {t.q0[i], t.q1[i]};
                for (int q = 0; q < 2; ++q)
                    if (Q[q] != 0.0 && to_storage(P[q] - 1, a1[r], b1[r], Nc) < 0) return false;
            }
        }
        return true;
    };
    // Level l+1 from slab level l: another slab, else the replicated level;
    // where neither is reachable, level l is the replicated one instead.
    int nd = 1;
    std::vector<int64_t> a1, b1;
    for (int l = 0; l + 1 < nl; ++l) {
        if (!owners(l, a1, b1) || !reachable(l, a1, b1, false)) {
            if (l == 0) {
                record(err, PGPU_ERROR_UNSUPPORTED,
                       "distributed multigrid: the first coarsening of the split axis (%s) reaches further than one "
                       "plane across the ranks' faces (an odd periodic axis: make it even, or split fewer ways)",
                       ax == 2 ? "z" : "y");
                return false;
            }
            nd = l;
            A.resize(l + 1);
            B.resize(l + 1);
            break;
        }
        const HostLevel &C = hg[l + 1];
        const double npts = (double)C.ax[0].n * C.ax[1].n * C.ax[2].n;
        bool slab = l + 2 < nl && npts >= DIST_REPLICATE_AT; // the coarsest level is replicated
        // Two nodes per rank; three on an end rank at a wall that is not
        // Dirichlet (FMG's cubic taps there: its nodes and one ghost plane).
        for (int r = 0; r < R && slab; ++r) {
            const bool wall = !per && ((r == 0 && c.bc[2 * ax] != PGPU_BC_DIRICHLET) ||
                                       (r == R - 1 && c.bc[2 * ax + 1] != PGPU_BC_DIRICHLET));
            slab = b1[r] - a1[r] >= (wall ? 3 : 2);
        }
        slab = slab && reachable(l, a1, b1, true);
        A.push_back(a1);
        B.push_back(b1);
        nd = slab ? l + 2 : l + 1;
        if (!slab) break;
    }
    // The levels of this rank.
    const int me = d.rank;
    out = hg;
    d.levels = nd;
    d.lvN.assign(nd, 0);
    d.lva.assign(nd, 0);
    for (int l = 0; l < nd; ++l) {
        const Axis &G = hg[l].ax[ax];
        const int64_t a = A[l][me], b = B[l][me], N = G.n;
        d.lvN[l] = N;
        d.lva[l] = a;
        Axis &S = out[l].ax[ax];
        S.n = (int)(b - a);
        S.x.assign(G.x.begin() + a, G.x.begin() + b);
        S.w.assign(G.w.begin() + a, G.w.begin() + b);
        if (R > 1 && (a > 0 || per)) {
            S.lo = PGPU_BC_DIRICHLET;
            S.xlo = a > 0 ? G.x[a - 1] : G.x[N - 1] - G.L;
        }
        if (R > 1 && (b < N || per)) {
            S.hi = PGPU_BC_DIRICHLET;
            S.xhi = b < N ? G.x[b] : G.x[0] + G.L;
        }
        // The transfer to level l+1 in the slab's indices.
        const AxisTransfer &t = hg[l].tr[ax];
        AxisTransfer &u = out[l].tr[ax];
        const bool slab_c = l + 1 < nd;
        const int64_t Nc = hg[l + 1].ax[ax].n, ca = A[l + 1][me], cb = B[l + 1][me];
        auto tap = [&](int64_t P) { // a coarse storage index of the global tables, in the coarse level's storage
            if (!slab_c) return P;
            return to_storage(P - 1, ca, cb, Nc);
        };
        const int n = S.n;
        u.coarsened = t.coarsened;
        u.p0.assign(n, 0);
        u.p1.assign(n, 0);
        u.q0.assign(n, 0.0);
        u.q1.assign(n, 0.0);
        u.c4.assign((size_t)n * 4, 0);
        u.w4.assign((size_t)n * 4, 0.0);
        for (int i = 0; i < n; ++i) {
            const int64_t ig = a + i;
            int64_t p0 = tap(t.p0[ig]), p1 = tap(t.p1[ig]);
            if (p0 < 0) p0 = p1 >= 0 ? p1 : 0; // (weight 0: read, not used)
            if (p1 < 0) p1 = p0;
            u.p0[i] = (int)p0;
            u.p1[i] = (int)p1;
            u.q0[i] = t.q0[ig];
            u.q1[i] = t.q1[ig];
            for (int q = 0; q < 4; ++q) { // (FMG's taps; between two slab levels, redone below)
                const int64_t P = tap(t.c4[(size_t)ig * 4 + q]);
                u.c4[(size_t)i * 4 + q] = P >= 0 ? (int)P : (int)p0;
                u.w4[(size_t)i * 4 + q] = P >= 0 ? t.w4[(size_t)ig * 4 + q] : 0.0;
            }
        }
        // Restriction rows: this rank's coarse nodes, children in the slab's indices.
        const int64_t rows = slab_c ? cb - ca : Nc, first = slab_c ? ca : 0;
        u.rcnt.assign(rows, 0);
        u.ridx.assign((size_t)rows * MAX_CHILDREN, 0);
        u.rw.assign((size_t)rows * MAX_CHILDREN, 0.0);
        u.fw.assign((size_t)rows * MAX_CHILDREN, 0.0);
        for (int64_t I = 0; I < rows; ++I) {
            const int64_t J = first + I;
            if (J < ca || J >= cb) continue; // another rank's node (replicated level)
            if (!t.coarsened) { // identity: the node itself
                u.rcnt[I] = 1;
                u.ridx[(size_t)I * MAX_CHILDREN] = (int)(J - a);
                u.rw[(size_t)I * MAX_CHILDREN] = u.fw[(size_t)I * MAX_CHILDREN] = 1.0;
                continue;
            }
            u.rcnt[I] = t.rcnt[J];
            for (int m = 0; m < t.rcnt[J]; ++m) {
                const size_t k = (size_t)I * MAX_CHILDREN + m, kg = (size_t)J * MAX_CHILDREN + m;
                u.ridx[k] = (int)(to_storage(t.ridx[kg], a, b, N) - 1);
                u.rw[k] = t.rw[kg];
                u.fw[k] = t.fw[kg];
            }
        }
    }
    // FMG's cubic taps between two slab levels: through the four points
    // nearest each fine node among the coarse slab's nodes and its ghost
    // planes (the neighbours' nodes, or a wall), so that none lies beyond
    // the halo -- off-centre next to an interface, still cubic.
    for (int l = 0; l + 1 < nd; ++l) {
        if (!hg[l].tr[ax].coarsened) continue;
        AxisTransfer cub;
        cubic_interpolation(out[l].ax[ax], out[l + 1].ax[ax], cub);
        out[l].tr[ax].c4 = cub.c4;
        out[l].tr[ax].w4 = cub.w4;
    }
    d.own_a = A[nd];
    d.own_b = B[nd];
    d.band.assign(nd, 0);
    d.bandc.assign((size_t)nd * 4 * DIST_BAND_L, 0.0);
    for (int l = 0; l < nd; ++l) dist_band_level(d, l, hg[l].ax[ax], A[l], B[l]);
    return true;
}

static pgpu_status resolve_config(const pgpu_config *in, pgpu_config *c, char *err, Stop *rule = nullptr); // validate.h
static bool is_krylov(int m);                                                        // handle.h

// The box of `rank` among `ranks` for a resolved global config: pairs of
// planes of the split axis dealt out evenly, the last rank taking an odd
// axis' last plane.
static pgpu_status dist_split(const pgpu_config &g, int ranks, int rank, pgpu_box &b, char *err)
{
    PGPU_RETURN_IF(ranks < 1, PGPU_ERROR_INVALID_ARGUMENT, "ranks = %d: at least one", ranks);
    PGPU_RETURN_IF(rank < 0 || rank >= ranks, PGPU_ERROR_INVALID_ARGUMENT, "rank %d is not one of 0 .. %d", rank,
                   ranks - 1);
    const int axis = g.nz > 1 ? 2 : 1;
    const int64_t n[3] = {g.nx, g.ny, g.nz};
    const int64_t N = n[axis];
    PGPU_RETURN_IF(ranks > 1 && N < 2 * (int64_t)ranks, PGPU_ERROR_INVALID_ARGUMENT,
                   "%s = %lld cannot be split over %d ranks: each rank needs at least two planes (at most %lld "
                   "rank%s for this grid)", axis == 2 ? "nz" : "ny", (long long)N, ranks, (long long)(N / 2),
                   N / 2 == 1 ? "" : "s");
    const int64_t pairs = N / 2, q = pairs / ranks, rem = pairs % ranks;
    memset(&b, 0, sizeof b);
    for (int a = 0; a < 3; ++a) b.n[a] = n[a];
    b.lo[axis] = 2 * (rank * q + std::min<int64_t>(rank, rem));
    b.n[axis] = ranks == 1 ? N : 2 * (q + (rank < rem ? 1 : 0)) + (rank == ranks - 1 ? N % 2 : 0);
    b.rank = rank;
    b.ranks = ranks;
    return PGPU_SUCCESS;
}

// What the distributed mode serves (a resolved config).
static pgpu_status dist_supported(const pgpu_config &c, char *err)
{
    PGPU_RETURN_IF((c.flags & PGPU_PRECISION_MASK) == PGPU_MIXED, PGPU_ERROR_UNSUPPORTED,
                   "distributed: PGPU_MIXED is not served yet on several GPUs (use PGPU_DOUBLE or PGPU_FLOAT)");
    return PGPU_SUCCESS;
}

// The global config (defaults resolved once, from the global grid: every
// rank resolves the same values), the rank's box, its neighbours, and the
// config of its slab: the interface faces Dirichlet, the caller's strides
// for the local arrays; rule (where given): how the solves end, from the
// global config.
static pgpu_status dist_configs(const pgpu_config *user, int ranks, int rank, Dist &d, pgpu_config &local, char *err,
                                Stop *rule = nullptr)
{
    PGPU_FORWARD(resolve_config(user, &d.global, err, rule));
    PGPU_FORWARD(dist_supported(d.global, err));
    PGPU_FORWARD(dist_split(d.global, ranks, rank, d.box, err));
    const pgpu_config &g = d.global;
    d.rank = rank;
    d.ranks = ranks;
    d.axis = g.nz > 1 ? 2 : 1;
    const bool per = g.bc[2 * d.axis] == PGPU_BC_PERIODIC && ranks > 1;
    d.lo_peer = rank > 0 ? rank - 1 : per ? ranks - 1 : -1;
    d.hi_peer = rank < ranks - 1 ? rank + 1 : per ? 0 : -1;
    d.plane = d.axis == 2 ? (g.nx + 2) * (g.ny + 2) : g.nx + 2; // (with the ghost lines)
    d.lvN.assign(1, d.axis == 2 ? g.nz : g.ny);
    d.lva.assign(1, d.box.lo[d.axis]);
    { // level 0's bands (the stationary red-black method; dist_plan redoes them)
        Axis fine[3];
        fine_axes(g, fine);
        std::vector<int64_t> A, B;
        PGPU_FORWARD(dist_ranges(g, ranks, d.axis, A, B, err));
        d.band.assign(1, 0);
        d.bandc.assign(4 * DIST_BAND_L, 0.0);
        dist_band_level(d, 0, fine[d.axis], A, B);
    }
    pgpu_config raw = g;
    raw.nx = d.box.n[0];
    raw.ny = d.box.n[1];
    raw.nz = d.box.n[2];
    raw.stride_y = user->stride_y;
    raw.stride_z = user->stride_z;
    if (d.lo_peer >= 0) raw.bc[2 * d.axis] = PGPU_BC_DIRICHLET;
    if (d.hi_peer >= 0) raw.bc[2 * d.axis + 1] = PGPU_BC_DIRICHLET;
    return resolve_config(&raw, &local, err);
}

} // namespace pgpu
