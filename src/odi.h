// odi.h -- operator-dependent coarsening where beta jumps: Galerkin coarse levels and their transfers
#pragma once
#include "restrict.h"

namespace pgpu {

// Where beta jumps, the geometric transfers treat an inclusion and its
// surroundings as one medium: the linear prolongation puts half of an
// outside coarse value onto an inside fine point that the operator couples
// a thousand times more strongly to the inside, and no 7-point coarse
// coefficient (face means, or faces in series along the path) then prices
// the inclusion's near-constant mode right: V-cycles stalled at 0.95-0.99 a
// cycle on a ball of 1e3 or 1e6.  So each level the transfers reach here
// (Transfer::odi, Hierarchy::general_apply's rule: beta jumps, no
// periodic axis, one GPU, every coarsened axis keeping nodes) is a
// Galerkin level: its operator is R A P of the level above, 27 entries a
// node (9 in 2D: GalRows; with a mask, of the level's operator on its
// fluid points: odi_held), and
//  - P follows the level above's rows (BoxMG: Dendy; de Zeeuw), in stages
//    by the axes along which a fine node lies between two coarse nodes
//    (odi_stage): a coarse node takes its value; a node of a higher stage
//    collapses its row onto those between-axes (an entry counts towards
//    the node at its offset with the other components set to 0) and takes
//    the collapsed couplings' positive parts, over their sum plus the row's
//    sum, as weights on its lower-stage neighbours (odi_collapse);
//  - R = Wc^-1 P^T W, its adjoint weighted by the cell volumes, so that
//    R A P is symmetric in Wc and the cycle stays a CG preconditioner;
//  - from level 0 P and R run those stages on its 7-point rows, one pass
//    each (odi_p_kernel, odi_r_kernel); from a Galerkin level they read
//    P's weights, which the build stores (odi_pw_kernel, odi_rw_kernel: not
//    a row of 27 entries read and collapsed per node and stage);
//  - the Galerkin levels are smoothed by Gauss-Seidel in 8 colours (4 in
//    2D: a 27-point row couples no two nodes of one colour) and their
//    residuals formed in differences (GalRows);
//  - pgpu_set_coefficients builds them level by level: P's weights, once
//    a node (gal_weights_kernel), the entries off the centre from them
//    (gal_rap_kernel), the rows' sums as R A P 1 formed in differences
//    from P 1 = 1 - delta (gal_sums_kernel: 0 exactly where no wall
//    reaches).
// The finest level keeps its own 7-point form and smoothers; P and R read
// its faces directly.  Convergence no longer depends on the jump's size
// (1e3 to 1e6: the bench's 'ball' rows); what stops V-cycles and CG on
// large jumps is the residual u's own rounding leaves, which grows with the
// jump (doc/model/floor.py; the header's MASKS AND VARIABLE COEFFICIENTS).

// Per axis of a level pair: cn[i] the coarse interior index of fine node i
// where it is a coarse node, else -1 (cf: the inverse); wf / wc the fine and coarse cell
// widths (the restriction's weights).
template <class T> struct OdiAxes {
    const int *cn[3];
    const int *cf[3]; // coarse node I's fine index
    const T *wf[3], *wc[3];
};

// One axis of a level pair (fine a, coarse c; coarsened or kept whole):
// cn[i] as OdiAxes::cn, and whether the pair keeps nodes along it -- every
// coarse node on a fine one, every other fine node between two of them or
// a wall, no periodic wrap (an axis kept whole keeps them all), on an
// axis whose places for P's weights (odi_pw_at: up to 2 n) fit an int.
static bool odi_node_map(const Axis &a, const Axis &c, bool coarsened, std::vector<int> &cn)
{
    const int n = a.n;
    cn.assign((size_t)n, -1);
    if (!coarsened || !a.active) {
        for (int i = 0; i < n && i < c.n; ++i) cn[(size_t)i] = i;
        return c.n == n && n <= INT32_MAX / 2;
    }
    if (a.lo == PGPU_BC_PERIODIC || n > INT32_MAX / 2) return false;
    const double tol = 1e-9 * a.h;
    for (int i = 0, I = 0; i < n; ++i) {
        while (I < c.n && c.x[(size_t)I] < a.x[(size_t)i] - tol) ++I;
        if (I < c.n && std::fabs(c.x[(size_t)I] - a.x[(size_t)i]) <= tol) cn[(size_t)i] = I;
    }
    int seen = 0;
    for (int i = 0; i < n; ++i) {
        seen += cn[(size_t)i] >= 0;
        if (cn[(size_t)i] < 0 && !((i == 0 || cn[(size_t)i - 1] >= 0) && (i == n - 1 || cn[(size_t)i + 1] >= 0)))
            return false;
    }
    return seen == c.n;
}

// The highest stage: the axes a node may lie between coarse nodes along.
template <class T> __host__ __device__ __forceinline__ int odi_top(const Grid<T> &g) { return g.is3d ? 3 : 2; }

// Node (i, j, k)'s coarse indices c (where it is a coarse node along an
// axis) and its stage: the axes along which it lies between coarse nodes.
template <class T>
__device__ __forceinline__ int odi_stage(const OdiAxes<T> &a, bool is3d, int i, int j, int k, int (&c)[3])
{
    c[0] = __ldg(a.cn[0] + i);
    c[1] = __ldg(a.cn[1] + j);
    c[2] = is3d ? __ldg(a.cn[2] + k) : 0;
    return (c[0] < 0) + (c[1] < 0) + (c[2] < 0);
}

// Coarse node I's block along axis d: its fine nodes x[m] and their offsets
// o[m] from its own (-1, 0, 1), m < the count returned.
template <class T>
__device__ __forceinline__ int odi_block_axis(const OdiAxes<T> &a, int d, int n, int I, int (&x)[3], int (&o)[3])
{
    const int f = __ldg(a.cf[d] + I);
    int m = 0;
#pragma unroll
    for (int s = -1; s <= 1; ++s) {
        const int y = f + s;
        if (s == 0 || (y >= 0 && y < n && __ldg(a.cn[d] + y) < 0)) {
            x[m] = y;
            o[m] = s;
            ++m;
        }
    }
    return m;
}

// A level's operator as the transfers and the Galerkin build read it: the
// 27 slot arrays of a Galerkin level (st, slot s at st + s n, node (i, j,
// k) at gal_index: the entry towards the node at offset gal_offset(s), 0
// where that lies outside the box), or, where st is NULL, the level's
// 7-point general form (gen_couplings), its couplings to nodes inside the
// box as the entries.
// The centre slot holds the row's sum, not the diagonal: A u at p is
//   rsum u_p + sum_{s != centre} a_s (u_{p+s} - u_p),
// whose terms stay small where u is nearly constant across strong
// couplings (inside an inclusion of beta 1e6 a diagonal and its
// neighbours' sum cancel to a few digits); P, R and the build take the
// same differences.  Ghost values never enter (corrections are 0 there).
constexpr int GAL_SLOTS = 27, GAL_CENTRE = 13;
// Where a node's entry lies in a slot array: the nodes by colour (their
// index parities, gal_colour_kernel's), each colour's x fastest, so that a
// colour pass reads its rows contiguously.
struct GalPack {
    int64_t off[8]; // each colour's first index
    int hx[8], hy[8]; // its extents along x and y
};
__host__ __device__ __forceinline__ int64_t gal_index(const GalPack &q, int i, int j, int k)
{
    const int c = (i & 1) | (j & 1) << 1 | (k & 1) << 2;
    return q.off[c] + ((int64_t)(k >> 1) * q.hy[c] + (j >> 1)) * q.hx[c] + (i >> 1);
}
// A colour's extents: its nodes along each axis (nz 1 in 2D: colours with
// the z bit are empty there).
__host__ __device__ __forceinline__ void gal_colour_extent(int nx, int ny, int nz, int colour, int (&h)[3])
{
    h[0] = (nx - (colour & 1) + 1) / 2;
    h[1] = (ny - (colour >> 1 & 1) + 1) / 2;
    h[2] = (nz - (colour >> 2 & 1) + 1) / 2;
}
static GalPack gal_pack(int nx, int ny, int nz)
{
    GalPack q{};
    int64_t at = 0;
    for (int c = 0; c < 8; ++c) {
        int h[3];
        gal_colour_extent(nx, ny, nz, c, h);
        q.hx[c] = h[0];
        q.hy[c] = h[1];
        q.off[c] = at;
        at += (int64_t)h[0] * h[1] * h[2];
    }
    return q;
}
template <class T> struct GalRows {
    const T *st = nullptr;
    int64_t n = 0; // a slot's length: the level's interior points
    int lo = 0;    // the first slot stored: 0, or in 2D 9 (the nine slots of offset 0 along z)
    GalPack pk{};
    __device__ __forceinline__ T at(int s, int i, int j, int k) const
    {
        return st[(s - lo) * n + gal_index(pk, i, j, k)];
    }
};
// The slots a Galerkin level stores (2D: the nine of offset 0 along z).
__host__ __device__ __forceinline__ int gal_stored(bool is3d) { return is3d ? 27 : 9; }
__host__ __device__ __forceinline__ int gal_slot(int dx, int dy, int dz) { return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1); }
__host__ __device__ __forceinline__ void gal_offset(int s, int (&o)[3])
{
    o[0] = s % 3 - 1;
    o[1] = s / 3 % 3 - 1;
    o[2] = s / 9 - 1;
}

// A 7-point level with a mask as its transfers and the Galerkin build see
// it: the operator on the fluid points alone.  A point that is not fluid
// has no row, and P is 0 there (its correction is 0: a Dirichlet point's
// value is held, a solid point is no part of the domain); a face towards
// one is a wall, its coupling in the row's sum (a Dirichlet point's; a
// face towards a solid point is closed: 0).  Bit f (GenPoint's order) of
// odi_held: the neighbour across face f lies inside the box and is not
// fluid, looked for along the axes of `axes` (bit d).
template <class T>
__device__ __forceinline__ unsigned odi_held(const Grid<T> &g, int64_t p, int i, int j, int k, unsigned axes)
{
    if (!g.mk) return 0u;
    const int at[3] = {i, j, k}, n[3] = {g.nx, g.ny, g.nz};
    const int64_t st[3] = {1, g.sy, g.sz};
    unsigned h = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        if (!(axes >> d & 1u) || (d == 2 && !g.is3d)) continue;
        if (at[d] > 0 && !gen_fluid(g, p - st[d])) h |= 1u << 2 * d;
        if (at[d] < n[d] - 1 && !gen_fluid(g, p + st[d])) h |= 2u << 2 * d;
    }
    return h;
}

// Node p's row (i, j, k its indices): a[s] the entry towards slot s, the
// row's sum in the centre (the 7-point form's: its walls' couplings, the
// box's and, with a mask, odi_held's; none on a point that is not fluid).
template <class T>
__device__ __forceinline__ void gal_row(const Grid<T> &g, const GalRows<T> &r, int64_t p, int i, int j, int k,
                                        double (&a)[GAL_SLOTS])
{
    if (r.st) {
#pragma unroll
        for (int s = 0; s < GAL_SLOTS; ++s) a[s] = r.lo == 0 || (s >= 9 && s < 18) ? (double)r.at(s, i, j, k) : 0.0;
        return;
    }
#pragma unroll
    for (int s = 0; s < GAL_SLOTS; ++s) a[s] = 0;
    if (!gen_fluid(g, p)) return;
    const GenPoint<T> q = gen_couplings(g, p, i, j, k);
    const unsigned held = odi_held(g, p, i, j, k, 7u);
    const int at[3] = {i, j, k}, n[3] = {g.nx, g.ny, g.nz};
    double wall = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d)
#pragma unroll
        for (int side = 0; side < 2; ++side) {
            if (d == 2 && !g.is3d) continue;
            const int f = 2 * d + side;
            if ((side ? at[d] < n[d] - 1 : at[d] > 0) && !(held >> f & 1u))
                a[gal_slot(d == 0 ? 2 * side - 1 : 0, d == 1 ? 2 * side - 1 : 0, d == 2 ? 2 * side - 1 : 0)] =
                    -(double)q.v[f];
            else wall += (double)q.d[f];
        }
    a[GAL_CENTRE] = wall;
}

// A row's diagonal from its sum and off-diagonal entries.
__device__ __forceinline__ double gal_diag(const double (&a)[GAL_SLOTS])
{
    double d = a[GAL_CENTRE];
#pragma unroll
    for (int s = 0; s < GAL_SLOTS; ++s)
        if (s != GAL_CENTRE) d -= a[s];
    return d;
}

// The element offset of slot s on grid g.
template <class T> __device__ __forceinline__ int64_t gal_step(const Grid<T> &g, int s)
{
    int o[3];
    gal_offset(s, o);
    return o[0] + (int64_t)o[1] * g.sy + (int64_t)o[2] * g.sz;
}

// A node's collapsed couplings (odi_collapse; c: its coarse indices,
// odi_stage's): w[t] for each slot t with t's components on the node's
// coarse axes 0, the sum of -a over the entries whose offsets agree with t
// on its between-axes (odi_group, for one set CM of coarse axes).  P and R
// take the positive ones alone (a Galerkin row's positive entries would
// otherwise make weights of either sign and divisors near 0); the divisor
// is the row's sum (where positive) plus those.
template <int CM> __device__ __forceinline__ void odi_group(const double (&a)[GAL_SLOTS], double (&w)[GAL_SLOTS])
{
#pragma unroll
    for (int t = 0; t < GAL_SLOTS; ++t) w[t] = 0;
#pragma unroll
    for (int q = 0; q < GAL_SLOTS; ++q) {
        int o[3];
        gal_offset(q, o);
        const int to = gal_slot(CM & 1 ? 0 : o[0], CM & 2 ? 0 : o[1], CM & 4 ? 0 : o[2]);
        if (q != GAL_CENTRE && to != GAL_CENTRE) w[to] -= a[q];
    }
}
__device__ __forceinline__ double odi_collapse(const double (&a)[GAL_SLOTS], const int (&c)[3],
                                               double (&w)[GAL_SLOTS])
{
    // (by the node's coarse axes, known at compile time in each case: w
    // stays in registers)
    switch ((c[0] >= 0 ? 1 : 0) | (c[1] >= 0 ? 2 : 0) | (c[2] >= 0 ? 4 : 0)) {
    case 0: odi_group<0>(a, w); break;
    case 1: odi_group<1>(a, w); break;
    case 2: odi_group<2>(a, w); break;
    case 3: odi_group<3>(a, w); break;
    case 4: odi_group<4>(a, w); break;
    case 5: odi_group<5>(a, w); break;
    case 6: odi_group<6>(a, w); break;
    default: odi_group<7>(a, w); break;
    }
    double den = a[GAL_CENTRE] > 0 ? a[GAL_CENTRE] : 0.0;
#pragma unroll
    for (int t = 0; t < GAL_SLOTS; ++t) den += w[t] > 0 ? w[t] : 0.0;
    return den;
}

// The prolongation P, in stages (odi_stage): a node of stage 0 takes its
// coarse node's value; a node of a higher stage, whose between-axes are B,
// collapses its row onto B (BoxMG's rule): each entry counts towards the
// node at its offset with the components off B set to 0 -- a neighbour of
// a lower stage, or the node itself --
//   s_p = sum_{d != 0} w_d s_{p+d} / den_p,  w_d the sum of -a over the
//   entries that collapse onto d, where positive; den_p = the row's sum
//   (where positive) + the sum of the w_d (no cancellation),
// a neighbour beyond the box counting 0 (a Dirichlet wall: its coupling
// stays in den; a Neumann wall's is 0).  On a 7-point level this is the
// fine couplings along B over their sum, Dirichlet walls included.
// A 7-point level's divisor for a node of between-axes B (c): its
// couplings along B and its walls' (odi_collapse of gal_row, directly;
// held: odi_held's bits along the other axes).
// walls: the part of it from the walls along the other axes.
template <class T> __device__ __forceinline__ double odi_den7(const GenPoint<T> &q, const int (&c)[3], const int (&at)[3],
                                                               const int (&n)[3], unsigned held, double &walls)
{
    double s = 0;
    walls = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        if (c[d] < 0) {
            s += (double)q.d[2 * d] + (double)q.d[2 * d + 1];
        } else {
            const double w = (at[d] > 0 && !(held >> 2 * d & 1u) ? 0.0 : (double)q.d[2 * d]) +
                             (at[d] < n[d] - 1 && !(held >> (2 * d + 1) & 1u) ? 0.0 : (double)q.d[2 * d + 1]);
            s += w;
            walls += w;
        }
    }
    return s;
}

// A Galerkin level's P as stored weights: node x's weight towards the
// coarse node at its corner q (bit d set: the one above it along axis d,
// clear: below it, or its own index where it is a coarse node there),
// packed: along an axis a node the pair keeps as a coarse node takes one
// place and a node between two takes two (its corners below and above),
// so that the weight lies at e_0 + N_0 (e_1 + N_1 e_2), e_d = x_d's first
// place + q_d = 2 x_d - (the coarse nodes below x_d) + q_d, N_d = 2 n_d -
// (the coarse nodes along d): 3.4 values a point in 3D (2.25 in 2D), each
// point's 2^stage places and no more.  gal_weights_kernel stores them.
__host__ __device__ __forceinline__ int odi_corners(bool is3d) { return is3d ? 8 : 4; }
template <class T> __host__ __device__ __forceinline__ int64_t odi_pw_at(const Grid<T> &f, const Grid<T> &c, const int (&e)[3])
{
    return e[0] + (2 * (int64_t)f.nx - c.nx) * (e[1] + (2 * (int64_t)f.ny - c.ny) * e[2]);
}
template <class T> static int64_t odi_pw_count(const Grid<T> &f, const Grid<T> &c)
{
    return (2 * (int64_t)f.nx - c.nx) * (2 * (int64_t)f.ny - c.ny) * (f.is3d ? 2 * (int64_t)f.nz - c.nz : 1);
}
// Node x's first place along an axis (cx: its coarse index there, or -1;
// below: the coarse index of the node below a node between two, -1 at the
// wall), and along axis d of a pair.
__host__ __device__ __forceinline__ int odi_first_place(int x, int cx, int below)
{
    return 2 * x - (cx >= 0 ? cx : below + 1);
}
template <class T> __device__ __forceinline__ int odi_place(const OdiAxes<T> &a, int d, int x, int cx)
{
    return odi_first_place(x, cx, cx >= 0 || x == 0 ? -1 : __ldg(a.cn[d] + x - 1));
}
// The place of the fine node at offset o (-1, 0, 1) from coarse node J's
// own along an axis, its corner towards J included.
__host__ __device__ __forceinline__ int odi_place_of(int fJ, int J, int o) { return 2 * (fJ + o) - J - (o > 0) + (o < 0); }

// out = in + P e (in NULL: out = P e) from the stored weights, a node's
// corners summed in double in corner order; REDUCE measures the correction
// as interp_kernel's does.  A walk launch over the fine level.
template <class T, bool REDUCE>
__global__ void __launch_bounds__(WALK_THREADS)
    odi_pw_kernel(const Grid<T> fine, const Grid<T> coarse, const OdiAxes<T> a, const T *__restrict__ pw,
                  const T *__restrict__ e, const T *in, T *out, double *partials, int kchunk, int nyb, int nchunks)
{
    Red3 acc{0, 0, 0};
    int i, j, k0, k1;
    if (walk_thread(fine.nx, fine.ny, fine.nz, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const int n[3] = {fine.nx, fine.ny, fine.nz};
        for (int k = k0; k < k1; ++k) {
            int c[3];
            odi_stage(a, fine.is3d, i, j, k, c);
            const int at[3] = {i, j, k};
            int pl[3]; // its places (odi_pw_at)
#pragma unroll
            for (int d = 0; d < 3; ++d) pl[d] = odi_place(a, d, at[d], c[d]);
            double s = 0;
            for (int q = 0; q < odi_corners(fine.is3d != 0); ++q) {
                int J[3];
                bool ok = true;
#pragma unroll
                for (int d = 0; d < 3; ++d) {
                    const int up = q >> d & 1;
                    if (c[d] >= 0) {
                        J[d] = c[d];
                        ok = ok && !up;
                    } else {
                        const int x = at[d] + (up ? 1 : -1);
                        ok = ok && x >= 0 && x < n[d];
                        J[d] = ok ? __ldg(a.cn[d] + x) : 0;
                    }
                }
                if (!ok) continue;
                const int eq[3] = {pl[0] + (q & 1), pl[1] + (q >> 1 & 1), pl[2] + (q >> 2 & 1)};
                s += (double)pw[odi_pw_at(fine, coarse, eq)] *
                     (double)e[coarse.base + J[0] + (int64_t)J[1] * coarse.sy + (int64_t)J[2] * coarse.sz];
            }
            const int64_t p = fine.base + i + (int64_t)j * fine.sy + (int64_t)k * fine.sz;
            const T v = T(s);
            if (!in) {
                out[p] = v;
                continue;
            }
            const T old = in[p];
            out[p] = old + v;
            if (REDUCE) note_correction(acc, v, old + v);
        }
    }
    if (REDUCE) write_partial(partials, acc);
}

// fc = R r = Wc^-1 P^T W r from the stored weights: each coarse node sums
// W r P over its block (odi_block_axis), in double.  A walk launch over the
// coarse level.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    odi_rw_kernel(const Grid<T> fine, const Grid<T> coarse, const OdiAxes<T> a, const T *__restrict__ pw,
                  const T *__restrict__ r, T *fc, int kchunk, int nyb, int nchunks)
{
    int I, J, k0, k1;
    if (!walk_thread(coarse.nx, coarse.ny, coarse.nz, kchunk, nyb, nchunks, I, J, k0, k1)) return;
    const bool is3d = fine.is3d != 0;
    const int nf[3] = {fine.nx, fine.ny, is3d ? fine.nz : 1};
    for (int K = k0; K < k1; ++K) {
        const int C[3] = {I, J, K};
        int x[3][3], o[3][3], m[3];
        for (int d = 0; d < 3; ++d) {
            if (d == 2 && !is3d) {
                x[2][0] = o[2][0] = 0;
                m[2] = 1;
                continue;
            }
            m[d] = odi_block_axis(a, d, nf[d], C[d], x[d], o[d]);
        }
        double sum = 0;
        for (int cz = 0; cz < m[2]; ++cz)
            for (int cy = 0; cy < m[1]; ++cy)
                for (int cx = 0; cx < m[0]; ++cx) {
                    const int i = x[0][cx], j = x[1][cy], k = x[2][cz];
                    // the fine node's place, its corner towards C
                    const int eq[3] = {odi_place_of(i - o[0][cx], I, o[0][cx]), odi_place_of(j - o[1][cy], J, o[1][cy]),
                                       odi_place_of(k - o[2][cz], K, o[2][cz])};
                    double w = (double)__ldg(a.wf[0] + i) * (double)__ldg(a.wf[1] + j);
                    if (is3d) w *= (double)__ldg(a.wf[2] + k);
                    sum += w * (double)pw[odi_pw_at(fine, coarse, eq)] *
                           (double)r[fine.base + i + (int64_t)j * fine.sy + (int64_t)k * fine.sz];
                }
        double wc = (double)__ldg(a.wc[0] + I) * (double)__ldg(a.wc[1] + J);
        if (is3d) wc *= (double)__ldg(a.wc[2] + K);
        fc[coarse.base + I + (int64_t)J * coarse.sy + (int64_t)K * coarse.sz] = T(sum / wc);
    }
}

// The coupling of a node across one face of axis d, as gen_couplings forms
// it inside the box: the table's (low or high, at node index at) times the
// face's fraction (element e: the face's high node; odi_face_fr: the
// fraction given).
template <class T> __device__ __forceinline__ double odi_face(const Grid<T> &g, int d, int64_t e, int at, bool high)
{
    const T *tab = d == 0 ? (high ? g.cxh : g.cxl) : d == 1 ? (high ? g.cyh : g.cyl) : (high ? g.czh : g.czl);
    const T *fr = d == 0 ? g.fx : d == 1 ? g.fy : g.fz;
    return (double)(T)(tab[at] * (fr ? fr[e] : T(1)));
}
template <class T> __device__ __forceinline__ double odi_face_fr(const Grid<T> &g, int d, int at, bool high, T fr)
{
    const T *tab = d == 0 ? (high ? g.cxh : g.cxl) : d == 1 ? (high ? g.cyh : g.cyl) : (high ? g.czh : g.czl);
    return (double)(T)(tab[at] * fr);
}

// Level 0's transfers, one pass each (odi_p_kernel, odi_r_kernel), with
// the stages' values in the stages' order:
//  - a block of ODI_TX x ODI_TY threads takes a column each and walks a
//    chunk of planes; its outer ring of columns only supplies the inner
//    ones' neighbours (what an inner column needs never reads past the
//    ring: a neighbour P reads along a node's between-axis is a coarse
//    node there, which reads none along it; R the other way round);
//  - in a plane the nodes run in phases by how many of x and y they lie
//    between coarse nodes along (P: none, one, both; R the other way),
//    passing values through shared memory;
//  - along z a column's values on the planes either side wait in
//    registers: P takes a plane between coarse planes after both, R a
//    coarse plane after the between planes either side.  The block's
//    order of planes (odi_order) is a list in shared memory, so that each
//    plane's loads issue while the plane before runs its phases (behind a
//    barrier each, a phase's own loads would wait a memory latency
//    apiece).
// (A launch per stage would walk the whole level once a stage.)
constexpr int ODI_TX = 32, ODI_TY = 16; // (odi_col's order of threads needs these)
constexpr int ODI_KMAX = 64; // the most planes a block's chunk takes (its list: two more)
constexpr int ODI_PER_SM = 4; // (col_launch's per_sm: blocks of 512 threads)
// A plane's place in the order: how its z neighbours' values come from
// the registers lo and hi (the last two results of the other kind of
// plane: P coarse planes, R between planes), and whether it is written.
enum OdiStep {
    ODI_OTHER = 0, // P: a coarse plane, R: a between plane (lo = hi, hi = its result)
    ODI_PAIR = 1,  // below lo, above hi
    ODI_ONE = 2,   // below hi, nothing above
    ODI_WRITE = 4
};
static ColLaunch odi_launch(int nx, int ny, int nz, bool is3d, int sms)
{
    ColLaunch L = col_launch(nx, ny, nz, is3d, ODI_TX - 2, ODI_TY - 2, ODI_TX, ODI_TY, sms, ODI_PER_SM);
    if (L.kchunk > ODI_KMAX) {
        L.kchunk = ODI_KMAX;
        L.nchunks = (nz + ODI_KMAX - 1) / ODI_KMAX;
        set_grid(L, L.grid.x);
    }
    return L;
}

// A thread's column: its indices, its coarse indices along x and y (-1:
// between coarse nodes), inside the box, owned (inner: written), and
// whether its neighbours along x and y (below, above) lie inside and
// between coarse nodes along that axis.
struct OdiCol {
    int i, j, c0, c1, tx, ty;
    bool in, own, xl, xh, yl, yh;
};
template <class T> __device__ __forceinline__ OdiCol odi_col(const Grid<T> &f, const OdiAxes<T> &a, int yb)
{
    OdiCol c;
    // A warp takes the columns of one parity along x on two rows two apart
    // (rows 0 and 2, 1 and 3, 4 and 6, ...): where the nodes alternate
    // between coarse nodes and not, its lanes then run the same phase.
    const int t = threadIdx.x + threadIdx.y * ODI_TX, w = t >> 5, l = t & 31, q = w >> 1;
    c.ty = (q >> 1) * 4 + (q & 1) + (l < 16 ? 0 : 2);
    c.tx = 2 * (l & 15) + (w & 1);
    c.i = blockIdx.x * (ODI_TX - 2) + c.tx - 1;
    c.j = yb * (ODI_TY - 2) + c.ty - 1;
    c.in = c.i >= 0 && c.i < f.nx && c.j >= 0 && c.j < f.ny;
    c.own = c.in && c.tx > 0 && c.tx < ODI_TX - 1 && c.ty > 0 && c.ty < ODI_TY - 1;
    c.c0 = c.in ? __ldg(a.cn[0] + c.i) : 0;
    c.c1 = c.in ? __ldg(a.cn[1] + c.j) : 0;
    c.xl = c.in && c.i > 0 && __ldg(a.cn[0] + c.i - 1) < 0;
    c.xh = c.in && c.i < f.nx - 1 && __ldg(a.cn[0] + c.i + 1) < 0;
    c.yl = c.in && c.j > 0 && __ldg(a.cn[1] + c.j - 1) < 0;
    c.yh = c.in && c.j < f.ny - 1 && __ldg(a.cn[1] + c.j + 1) < 0;
    return c;
}
// A plane's values by thread (x, y) at [y + 1][x + 1]: the frame around is
// 0, read only by ring nodes no inner one needs.
template <class T> using OdiPlane = T[ODI_TY + 2][ODI_TX + 2];
template <class T> __device__ __forceinline__ T odi_nb(const OdiPlane<T> &sv, int x, int y) { return sv[y + 1][x + 1]; }
template <class T> __device__ __forceinline__ void odi_frame(OdiPlane<T> &sv)
{
    T *v = &sv[0][0];
    for (int t = threadIdx.x + threadIdx.y * ODI_TX; t < (ODI_TY + 2) * (ODI_TX + 2); t += ODI_TX * ODI_TY) v[t] = T(0);
}
template <class T> __device__ __forceinline__ int odi_cz(const Grid<T> &f, const OdiAxes<T> &a, int k)
{
    return f.is3d ? __ldg(a.cn[2] + k) : 0;
}

// The block's order of planes for its chunk [k0, k1) (thread 0 writes it;
// the count returned after a barrier, which also orders odi_frame's
// writes before the first plane's reads): P (R = false) takes a coarse plane
// as it comes and a plane between coarse planes after the coarse one above
// it; R takes a between plane as it comes and a coarse plane after the
// between planes either side.  A chunk that starts on a plane of the
// waiting kind takes the plane below it first, one that ends on one the
// plane above it last (neither written).
template <class T>
__device__ __forceinline__ int odi_order(const Grid<T> &f, const OdiAxes<T> &a, bool R, int k0, int k1, int *seq)
{
    __shared__ int count;
    __shared__ bool bz[ODI_KMAX + 3]; // planes k0 - 1 .. k1 + 1: between coarse planes
    const int t = threadIdx.x + threadIdx.y * blockDim.x;
    if (t < k1 - k0 + 3 && k0 - 1 + t >= 0 && k0 - 1 + t < f.nz) bz[t] = odi_cz(f, a, k0 - 1 + t) < 0;
    __syncthreads();
    if (t == 0) {
        int n = 0, pend = -1;
        auto between = [&](int k) { return bz[k - k0 + 1]; };
        if (k0 > 0 && (R ? !between(k0) && between(k0 - 1) : between(k0))) seq[n++] = ((k0 - 1) << 3) | ODI_OTHER;
        for (int k = k0; k < k1; ++k) {
            if (between(k) != R) { // P: a between plane, R: a coarse one
                if (R ? k + 1 < f.nz && between(k + 1) : k < f.nz - 1) pend = k;
                else seq[n++] = (k << 3) | ODI_ONE | ODI_WRITE;
                continue;
            }
            seq[n++] = (k << 3) | ODI_OTHER | (R ? 0 : ODI_WRITE);
            if (pend >= 0) seq[n++] = (pend << 3) | ODI_PAIR | ODI_WRITE;
            pend = -1;
        }
        if (pend >= 0) {
            seq[n++] = (k1 << 3) | ODI_OTHER;
            seq[n++] = (pend << 3) | ODI_PAIR | ODI_WRITE;
        }
        count = n;
    }
    __syncthreads();
    return count;
}

// What a node of a plane loads, issued a plane ahead of its use: its faces'
// fractions, and P: e at its coarse node, in; R: r; with a mask (odi_held),
// whether it is fluid and, where it lies between coarse nodes, its closed
// faces and odi_held's faces along its other axes.
template <class T> struct OdiLoad {
    T fr[6], a, b;
    bool live;
    unsigned shut, held;
};
// A node's mask data for OdiLoad (c: its coarse indices; MK: the level
// has a mask).
template <bool MK, class T>
__device__ __forceinline__ void odi_mask_load(const Grid<T> &f, int64_t p, int i, int j, int k, const int (&c)[3],
                                              OdiLoad<T> &L)
{
    L.live = true;
    L.shut = L.held = 0;
    if (!MK) return;
    const unsigned b = f.mk[p];
    L.live = (b & CELL_BITS) == PGPU_CELL_FLUID;
    if (!L.live || (c[0] >= 0 && c[1] >= 0 && c[2] >= 0)) return;
    L.shut = b >> CLOSED_SHIFT & 63u;
    L.held = odi_held(f, p, i, j, k, (c[0] >= 0 ? 1u : 0u) | (c[1] >= 0 ? 2u : 0u) | (c[2] >= 0 ? 4u : 0u));
}
// Node p's faces' fractions (GenPoint's order; 1 where the level stores
// none, 0 along z in 2D): gen_couplings' loads, issued ahead.
template <class T> __device__ __forceinline__ void odi_fractions(const Grid<T> &f, int64_t p, T (&fr)[6])
{
    fr[0] = f.fx ? f.fx[p] : T(1);
    fr[1] = f.fx ? f.fx[p + 1] : T(1);
    fr[2] = f.fy ? f.fy[p] : T(1);
    fr[3] = f.fy ? f.fy[p + f.sy] : T(1);
    fr[4] = f.is3d ? (f.fz ? f.fz[p] : T(1)) : T(0);
    fr[5] = f.is3d ? (f.fz ? f.fz[p + f.sz] : T(1)) : T(0);
}
// Node (i, j, k)'s couplings inside the box from its fractions, as
// gen_couplings forms them (its couplings and their diagonal parts agree
// there), before a mask's closed faces (odi_between).
template <class T>
__device__ __forceinline__ void odi_couplings(const Grid<T> &f, int i, int j, int k, const T (&fr)[6], T (&q)[6])
{
    q[0] = mul_rn(f.cxl[i], fr[0]);
    q[1] = mul_rn(f.cxh[i], fr[1]);
    q[2] = mul_rn(f.cyl[j], fr[2]);
    q[3] = mul_rn(f.cyh[j], fr[3]);
    q[4] = f.is3d ? mul_rn(f.czl[k], fr[4]) : T(0);
    q[5] = f.is3d ? mul_rn(f.czh[k], fr[5]) : T(0);
}
// odi_couplings of a node between coarse nodes, its closed faces 0 (shut:
// OdiLoad's), and its divisor (odi_den7; walls: its walls' part along the
// node's coarse axes).
template <class T>
__device__ __forceinline__ double odi_between(const Grid<T> &f, const OdiCol &c, int k, int cz, const OdiLoad<T> &L,
                                              GenPoint<T> &q, double &walls)
{
    odi_couplings(f, c.i, c.j, k, L.fr, q.d);
#pragma unroll
    for (int s = 0; s < 6; ++s)
        if (L.shut >> s & 1u) q.d[s] = T(0);
    const int cc[3] = {c.c0, c.c1, cz}, at[3] = {c.i, c.j, k}, n[3] = {f.nx, f.ny, f.nz};
    return odi_den7(q, cc, at, n, L.held, walls);
}
template <class T> __device__ __forceinline__ int64_t odi_at(const Grid<T> &f, const OdiCol &c, int k)
{
    return f.base + c.i + (int64_t)c.j * f.sy + (int64_t)k * f.sz;
}

// What odi_p_step does: out = in + P e, the same measuring the correction
// (interp_kernel's REDUCE), or out = delta (gal_sums_kernel's, from the
// 7-point rows: e = 0, no in).
enum OdiP { ODI_ADD = 0, ODI_MEASURE = 1, ODI_DELTA = 2 };

template <int MODE, bool MK, class T>
__device__ __forceinline__ OdiLoad<T> odi_p_load(const Grid<T> &f, const Grid<T> &cg, const OdiAxes<T> &a,
                                                 const T *__restrict__ e, const T *in, const OdiCol &c, int step)
{
    OdiLoad<T> L{};
    if (!c.in) return L;
    const int k = step >> 3, cz = odi_cz(f, a, k);
    const int64_t p = odi_at(f, c, k);
    const int cc[3] = {c.c0, c.c1, cz};
    odi_mask_load<MK>(f, p, c.i, c.j, k, cc, L);
    if (c.c0 >= 0 && c.c1 >= 0 && cz >= 0) {
        if (MODE != ODI_DELTA)
            L.a = e[cg.base + c.c0 + (int64_t)c.c1 * cg.sy + (f.is3d ? (int64_t)cz * cg.sz : 0)];
    } else {
        odi_fractions(f, p, L.fr);
    }
    if ((step & ODI_WRITE) && c.own && in) L.b = in[p];
    return L;
}

// One plane of out = in + P e (every thread of the block: it
// synchronises); the column's value of P e.  A node takes its coarse
// node's value, or its couplings along its between-axes times its
// neighbours' values (in the plane: sv; below and above: the column's)
// over its divisor, in that order; 0 where it is not fluid (odi_held),
// whose value in `in` out keeps, as interp_kernel's.  ODI_DELTA: 1 - P 1
// by P's formula written for it (gal_sums_kernel): 0 on a coarse node, 1
// on a point that is not fluid and beyond the box, the walls along the
// node's coarse axes in the sum.
template <int MODE, bool MK, class T>
__device__ __forceinline__ T odi_p_step(const Grid<T> &f, const OdiAxes<T> &a, const T *in, T *out, Red3 &acc,
                                        OdiPlane<T> &sv, const OdiCol &c, int step, const OdiLoad<T> &L, T below,
                                        T above)
{
    constexpr bool DL = MODE == ODI_DELTA;
    const int k = step >> 3, cz = odi_cz(f, a, k), ph = (c.c0 < 0) + (c.c1 < 0);
    const bool coarse = c.c0 >= 0 && c.c1 >= 0 && cz >= 0;
    GenPoint<T> q; // (its couplings inside the box: d = v)
    double den = 0, walls = 0;
    if (c.in && !coarse && L.live) den = odi_between(f, c, k, cz, L, q, walls);
    T v = L.live ? L.a : T(DL ? 1 : 0);
    __syncthreads(); // (the plane before is read)
    for (int s = 0; s < 3; ++s) {
        if (c.in && ph == s) {
            if (!coarse && L.live) {
                // (a neighbour beyond the box: 0, or 1 for delta)
                const double out_box = DL ? 1.0 : 0.0;
                double num = DL ? walls : 0.0;
                if (c.c0 < 0) {
                    num += (double)q.d[0] * (c.i > 0 ? (double)odi_nb(sv, c.tx - 1, c.ty) : out_box);
                    num += (double)q.d[1] * (c.i < f.nx - 1 ? (double)odi_nb(sv, c.tx + 1, c.ty) : out_box);
                }
                if (c.c1 < 0) {
                    num += (double)q.d[2] * (c.j > 0 ? (double)odi_nb(sv, c.tx, c.ty - 1) : out_box);
                    num += (double)q.d[3] * (c.j < f.ny - 1 ? (double)odi_nb(sv, c.tx, c.ty + 1) : out_box);
                }
                if (cz < 0) {
                    num += (double)q.d[4] * (k > 0 ? (double)below : out_box);
                    num += (double)q.d[5] * (k < f.nz - 1 ? (double)above : out_box);
                }
                v = den > 0 ? T(num / den) : T(DL ? 1 : 0);
            }
            sv[c.ty + 1][c.tx + 1] = v;
        }
        if (s < 2) __syncthreads();
    }
    if ((step & ODI_WRITE) && c.own) {
        const int64_t p = odi_at(f, c, k);
        if (!in) {
            out[p] = v;
        } else if (L.live) {
            out[p] = L.b + v;
            if (MODE == ODI_MEASURE) note_correction(acc, v, L.b + v);
        } else if (in != out) { // (not an unknown: keeps its value, bit for bit)
            out[p] = L.b;
        }
    }
    return v;
}

// The walk both kernels take (after block_yz): the block's order of
// planes for its chunk, each plane's loads (load(step): an OdiLoad) issued
// while the plane before runs its step (step(step, its loads, below,
// above): the column's result), the last two results of the other kind of
// plane in lo and hi.
template <class T, class Load, class Step>
__device__ __forceinline__ void odi_walk(const Grid<T> &f, const OdiAxes<T> &a, bool R, int zc, int kchunk,
                                         OdiPlane<T> &sv, int *seq, Load load, Step step)
{
    int k0, k1;
    chunk_planes(zc, kchunk, f.nz, k0, k1);
    odi_frame(sv);
    const int n = odi_order(f, a, R, k0, k1, seq);
    T lo = T(0), hi = T(0);
    OdiLoad<T> next = load(seq[0]);
    for (int s = 0; s < n; ++s) {
        const int st = seq[s], how = st & 3;
        const OdiLoad<T> cur = next;
        if (s + 1 < n) next = load(seq[s + 1]);
        const T below = how == ODI_PAIR ? lo : how == ODI_ONE ? hi : T(0), above = how == ODI_PAIR ? hi : T(0);
        const T v = step(st, cur, below, above);
        if (how == ODI_OTHER) {
            lo = hi;
            hi = v;
        }
    }
}

// out = in + P e (in NULL: out = P e; in == out allowed) on level 0, one
// pass, as odi_p_step's MODE says (MK: the level has a mask).
template <class T, int MODE, bool MK>
__global__ void __launch_bounds__(ODI_TX *ODI_TY, 2)
    odi_p_kernel(const Grid<T> f, const Grid<T> cg, const OdiAxes<T> a, const T *__restrict__ e, const T *in, T *out,
                 double *partials, int kchunk, int nyb, int nchunks)
{
    __shared__ OdiPlane<T> sv;
    __shared__ int seq[ODI_KMAX + 2];
    Red3 acc{0, 0, 0};
    int yb, zc;
    if (block_yz(nyb, nchunks, yb, zc)) {
        const OdiCol c = odi_col(f, a, yb);
        odi_walk(
            f, a, false, zc, kchunk, sv, seq, [&](int st) { return odi_p_load<MODE, MK>(f, cg, a, e, in, c, st); },
            [&](int st, const OdiLoad<T> &L, T below, T above) {
                return odi_p_step<MODE, MK>(f, a, in, out, acc, sv, c, st, L, below, above);
            });
    }
    if (MODE == ODI_MEASURE) write_partial(partials, acc);
}

template <bool MK, class T>
__device__ __forceinline__ OdiLoad<T> odi_r_load(const Grid<T> &f, const OdiAxes<T> &a, const T *__restrict__ r,
                                                 const OdiCol &c, int step)
{
    OdiLoad<T> L{};
    if (!c.in) return L;
    const int k = step >> 3;
    const int64_t p = odi_at(f, c, k);
    const int cc[3] = {c.c0, c.c1, odi_cz(f, a, k)};
    odi_mask_load<MK>(f, p, c.i, c.j, k, cc, L);
    odi_fractions(f, p, L.fr);
    L.a = r[p];
    return L;
}

// One plane of fc = R r = Wc^-1 P^T W r on level 0, the stages' adjoint
// (every thread of the block: it synchronises); the column's t.  A node
// sums W r of its own and, from each neighbour q along its coarse-node
// axes that lies between coarse nodes there, q's coupling towards it times
// t_q (in the plane: sv; below and above: the column's), in that order; t
// = that sum over the node's divisor (P's), or on a coarse node the coarse
// right-hand side; 0 where the node is not fluid (P's column is 0 there).
template <class T>
__device__ __forceinline__ T odi_r_step(const Grid<T> &f, const Grid<T> &cg, const OdiAxes<T> &a, T *fc,
                                        OdiPlane<T> &sv, const OdiCol &c, int step, const OdiLoad<T> &L, T below,
                                        T above)
{
    const int k = step >> 3, cz = odi_cz(f, a, k), ph = (c.c0 < 0) + (c.c1 < 0);
    const bool coarse = c.c0 >= 0 && c.c1 >= 0 && cz >= 0;
    const bool zl = f.is3d && cz >= 0 && k > 0 && __ldg(a.cn[2] + k - 1) < 0;
    const bool zh = f.is3d && cz >= 0 && k < f.nz - 1 && __ldg(a.cn[2] + k + 1) < 0;
    // q's coupling towards the node: q below along an axis (its high face)
    // and above (its low face)
    double cq[6] = {0, 0, 0, 0, 0, 0}, sum = 0, den = 0;
    if (c.in && L.live) {
        double w = (double)__ldg(a.wf[0] + c.i) * (double)__ldg(a.wf[1] + c.j);
        if (f.is3d) w *= (double)__ldg(a.wf[2] + k);
        sum = w * (double)L.a;
        if (c.c0 >= 0 && c.xl) cq[0] = odi_face_fr(f, 0, c.i - 1, true, L.fr[0]);
        if (c.c0 >= 0 && c.xh) cq[1] = odi_face_fr(f, 0, c.i + 1, false, L.fr[1]);
        if (c.c1 >= 0 && c.yl) cq[2] = odi_face_fr(f, 1, c.j - 1, true, L.fr[2]);
        if (c.c1 >= 0 && c.yh) cq[3] = odi_face_fr(f, 1, c.j + 1, false, L.fr[3]);
        if (zl) cq[4] = odi_face_fr(f, 2, k - 1, true, L.fr[4]);
        if (zh) cq[5] = odi_face_fr(f, 2, k + 1, false, L.fr[5]);
        if (!coarse) {
            GenPoint<T> q;
            double walls;
            den = odi_between(f, c, k, cz, L, q, walls); // as odi_p_step's
        }
    }
    T t = T(0);
    __syncthreads(); // (the plane before is read)
    for (int s = 2; s >= 0; --s) {
        if (c.in && ph == s) {
            if (c.c0 >= 0 && c.xl) sum += cq[0] * (double)odi_nb(sv, c.tx - 1, c.ty);
            if (c.c0 >= 0 && c.xh) sum += cq[1] * (double)odi_nb(sv, c.tx + 1, c.ty);
            if (c.c1 >= 0 && c.yl) sum += cq[2] * (double)odi_nb(sv, c.tx, c.ty - 1);
            if (c.c1 >= 0 && c.yh) sum += cq[3] * (double)odi_nb(sv, c.tx, c.ty + 1);
            if (zl) sum += cq[4] * (double)below;
            if (zh) sum += cq[5] * (double)above;
            if (!coarse) {
                t = den > 0 ? T(sum / den) : T(0);
            } else if ((step & ODI_WRITE) && c.own) {
                double wc = (double)__ldg(a.wc[0] + c.c0) * (double)__ldg(a.wc[1] + c.c1);
                if (f.is3d) wc *= (double)__ldg(a.wc[2] + cz);
                fc[cg.base + c.c0 + (int64_t)c.c1 * cg.sy + (f.is3d ? (int64_t)cz * cg.sz : 0)] = T(sum / wc);
            }
            sv[c.ty + 1][c.tx + 1] = t;
        }
        if (s > 0) __syncthreads();
    }
    return t;
}

// fc = R r on level 0, one pass (MK: the level has a mask).
template <class T, bool MK>
__global__ void __launch_bounds__(ODI_TX *ODI_TY, 2)
    odi_r_kernel(const Grid<T> f, const Grid<T> cg, const OdiAxes<T> a, const T *__restrict__ r, T *fc, int kchunk,
                 int nyb, int nchunks)
{
    __shared__ OdiPlane<T> sv;
    __shared__ int seq[ODI_KMAX + 2];
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return;
    const OdiCol c = odi_col(f, a, yb);
    odi_walk(
        f, a, true, zc, kchunk, sv, seq, [&](int st) { return odi_r_load<MK>(f, a, r, c, st); },
        [&](int st, const OdiLoad<T> &L, T below, T above) {
            return odi_r_step(f, cg, a, fc, sv, c, st, L, below, above);
        });
}


// f - (A u)_p for row `row` of node p (u_p = up), in differences, summed in
// double in slot order, entries of 0 skipped.  dense (a Galerkin level,
// whose arrays have the whole ghost frame): every neighbour in the plane
// (3D: in the box) is read, whatever its entry, so that the reads issue
// together; a read that waits on its entry costs a memory latency per slot
// (a colour pass on a level of 15^3 took 13 us).  Otherwise (the 7-point
// form on the caller's arrays) an entry of 0 leaves its neighbour unread.
template <class T>
__device__ __forceinline__ double gal_resid(const Grid<T> &g, const double (&row)[GAL_SLOTS], const T *u, int64_t p,
                                            double up, double f, bool dense)
{
    double s = f - row[GAL_CENTRE] * up;
    if (dense) {
#pragma unroll
        for (int q = 0; q < GAL_SLOTS; ++q) {
            if (q == GAL_CENTRE) continue;
            const double v = g.is3d || (q >= 9 && q < 18) ? (double)u[p + gal_step(g, q)] : up;
            s -= row[q] * (row[q] != 0 ? v - up : 0.0); // (a ghost's value, maybe not a number, never enters)
        }
        return s;
    }
#pragma unroll
    for (int q = 0; q < GAL_SLOTS; ++q)
        if (q != GAL_CENTRE && row[q] != 0) s -= row[q] * ((double)u[p + gal_step(g, q)] - up);
    return s;
}

// r = f - A u on a level, A by rows (gal_row) in differences (gal_resid);
// f NULL: each row's sum, r = A (1 - u) (the build's, from u = delta:
// gal_sums_kernel).  A walk launch over the level.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    gal_residual_kernel(const Grid<T> g, const GalRows<T> gr, const T *__restrict__ u, const T *__restrict__ f,
                        T *__restrict__ r, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    for (int k = k0; k < k1; ++k) {
        const int64_t p = g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
        double row[GAL_SLOTS];
        gal_row(g, gr, p, i, j, k, row);
        r[p] = T(gal_resid(g, row, u, p, (double)u[p], f ? (double)f[p] : row[GAL_CENTRE], gr.st != nullptr));
    }
}

// Gauss-Seidel at node (i, j, k) of a Galerkin level, in place.
template <class T>
__device__ __forceinline__ void gal_gs_node(const Grid<T> &g, const GalRows<T> &gr, T *u, const T *__restrict__ f,
                                            int i, int j, int k)
{
    const int64_t p = g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
    const double up = (double)u[p];
    double row[GAL_SLOTS];
    gal_row(g, gr, p, i, j, k, row);
    const double s = gal_resid(g, row, u, p, up, (double)f[p], true);
    const double d = gal_diag(row);
    if (d > 0) u[p] = T(up + s / d);
}

// One colour of Gauss-Seidel on a Galerkin level, in place: the nodes whose
// index parities (i, j, k) are the colour's bits 0, 1, 2 (27-point rows
// couple no two nodes of one colour).  A walk launch over the level.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    gal_colour_kernel(const Grid<T> g, const GalRows<T> gr, T *u, const T *__restrict__ f, int colour, int kchunk,
                      int nyb, int nchunks)
{
    // a walk launch over the colour's columns and planes: thread (i', j'),
    // planes k' of [k0, k1), at node (2 i' + x bit, 2 j' + y bit, 2 k' + z bit)
    int h[3];
    gal_colour_extent(g.nx, g.ny, g.is3d ? g.nz : 1, colour, h);
    int i, j, k0, k1;
    if (!walk_thread(h[0], h[1], h[2], kchunk, nyb, nchunks, i, j, k0, k1)) return;
    i = 2 * i + (colour & 1);
    j = 2 * j + (colour >> 1 & 1);
    for (int kk = k0; kk < k1; ++kk) gal_gs_node(g, gr, u, f, i, j, g.is3d ? 2 * kk + (colour >> 2 & 1) : 0);
}

// The walk launch of gal_colour_kernel for a colour of g.
template <class T> static ColLaunch gal_colour_launch(const Grid<T> &g, int colour)
{
    int h[3];
    gal_colour_extent(g.nx, g.ny, g.is3d ? g.nz : 1, colour, h);
    return walk_launch(h[0], h[1], h[2], g.is3d != 0, Tune<T>::walk_group);
}

// A small Galerkin level's whole smoothing in one block: `iters` sweeps of
// its colours (in reverse order with flip), each colour's nodes one a
// thread, colours apart by a barrier -- the same updates in the same order
// as a launch per colour, whose latency (about 10 us each, 32 per V(2,2)
// cycle on each of the smallest levels) outweighs their work there.
constexpr int GAL_BLOCK_THREADS = 512, GAL_BLOCK_NODES = 4096;
template <class T>
__global__ void __launch_bounds__(GAL_BLOCK_THREADS)
    gal_colours_block_kernel(const Grid<T> g, const GalRows<T> gr, T *u, const T *__restrict__ f, int iters, int flip)
{
    const int nc = g.is3d ? 8 : 4;
    for (int s = 0; s < iters; ++s)
        for (int c = 0; c < nc; ++c) {
            const int colour = flip ? nc - 1 - c : c;
            int h[3];
            gal_colour_extent(g.nx, g.ny, g.is3d ? g.nz : 1, colour, h);
            const int m = h[0] * h[1] * h[2];
            for (int t = threadIdx.x; t < m; t += GAL_BLOCK_THREADS) {
                const int i = 2 * (t % h[0]) + (colour & 1), j = 2 * (t / h[0] % h[1]) + (colour >> 1 & 1);
                gal_gs_node(g, gr, u, f, i, j, g.is3d ? 2 * (t / (h[0] * h[1])) + (colour >> 2 & 1) : 0);
            }
            __syncthreads();
        }
}

// P's weights (odi_pw_at) for the nodes of one stage (odi_stage), from the
// level's rows and the weights of the stages below: a node of stage 0
// weighs 1 towards itself; a node of a higher stage collapses its row
// (odi_collapse; a 7-point level's couplings along its between-axes over
// odi_den7) and weighs, towards each corner J, its collapsed couplings
// times the weights towards J of the neighbours they reach -- those in J's
// block, a between-axis crossed towards J -- over its divisor, rounded to
// T (the value odi_p_kernel passes on for e = 1 at J).  The build launches
// stages 1 to the top in order, each a walk over the fine level (stage 0's
// weights with stage 1's, which take them as 1).  From a Galerkin level
// (S27) it also writes delta = 1 - P 1 into dl from the same row
// (gal_sums_kernel; stage 0's, 0, with stage 1's, which take them as 0).
template <class T, bool S27>
__global__ void __launch_bounds__(WALK_THREADS)
    gal_weights_kernel(const Grid<T> fine, const GalRows<T> fr, const Grid<T> coarse, const OdiAxes<T> a, T *pw,
                       T *dl, int stage, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(fine.nx, fine.ny, fine.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    const bool is3d = fine.is3d != 0;
    const int nf[3] = {fine.nx, fine.ny, is3d ? fine.nz : 1};
    for (int k = k0; k < k1; ++k) {
        int c[3];
        const int st = odi_stage(a, is3d, i, j, k, c);
        if (st != stage && (st || stage != 1)) continue; // (stage 0 with stage 1)
        const int x[3] = {i, j, k};
        int e[3], lo[3], hi[3]; // its places; its corners' coarse indices below and above (-1: a wall)
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            lo[d] = c[d] >= 0 ? c[d] : x[d] > 0 ? __ldg(a.cn[d] + x[d] - 1) : -1;
            hi[d] = c[d] >= 0 ? c[d] : x[d] < nf[d] - 1 ? __ldg(a.cn[d] + x[d] + 1) : -1;
            e[d] = odi_first_place(x[d], c[d], lo[d]);
        }
        const int64_t p = fine.base + i + (int64_t)j * fine.sy + (int64_t)k * fine.sz;
        const bool live = S27 || gen_fluid(fine, p); // (odi_held)
        if (st == 0) {
            pw[odi_pw_at(fine, coarse, e)] = T(live ? 1 : 0);
            if (S27) dl[p] = T(0);
            continue;
        }
        // the weight towards corner q of the neighbour at offset m (on the
        // between-axes), 0 unless it lies in that corner's block; 1 where it
        // is the corner (m along every between-axis)
        auto towards = [&](int q, int m0, int m1, int m2) -> double {
            const int m[3] = {m0, m1, m2};
            int y[3];
            bool corner = true;
#pragma unroll
            for (int d = 0; d < 3; ++d) {
                const int up = q >> d & 1;
                if (m[d] && (m[d] > 0) != (up != 0)) return 0.0;
                y[d] = m[d] ? 2 * (x[d] + m[d]) - (up ? hi[d] : lo[d]) : e[d] + up;
                corner = corner && (m[d] || c[d] >= 0);
            }
            return corner ? 1.0 : (double)pw[odi_pw_at(fine, coarse, y)];
        };
        double den = 0, w[GAL_SLOTS];
        GenPoint<T> g{};
        if constexpr (S27) {
            double row[GAL_SLOTS];
            gal_row(fine, fr, p, i, j, k, row);
            den = odi_collapse(row, c, w);
            double nd = row[GAL_CENTRE] > 0 ? row[GAL_CENTRE] : 0.0;
            if (stage > 1)
#pragma unroll
                for (int t = 0; t < GAL_SLOTS; ++t)
                    if (w[t] > 0) nd += w[t] * (double)dl[p + gal_step(fine, t)];
            dl[p] = den > 0 ? T(nd / den) : T(1);
        } else if (live) {
            g = gen_couplings(fine, p, i, j, k);
            const unsigned held = odi_held(fine, p, i, j, k, 7u);
#pragma unroll
            for (int f = 0; f < 6; ++f)
                if (held >> f & 1u) g.v[f] = T(0); // (a wall: in den, towards no corner)
            double walls;
            den = odi_den7(g, c, x, nf, held, walls);
        }
        for (int q = 0; q < odi_corners(is3d); ++q) {
            bool ok = true;
#pragma unroll
            for (int d = 0; d < 3; ++d) ok = ok && ((q >> d & 1) ? c[d] < 0 && hi[d] >= 0 : c[d] >= 0 || lo[d] >= 0);
            if (!ok) continue;
            double num = 0;
            if constexpr (S27) {
#pragma unroll
                for (int t = 0; t < GAL_SLOTS; ++t) {
                    int m[3];
                    gal_offset(t, m);
                    if (w[t] > 0) num += w[t] * towards(q, m[0], m[1], m[2]);
                }
            } else {
#pragma unroll
                for (int d = 0; d < 3; ++d) {
                    if (c[d] >= 0) continue;
                    if (x[d] > 0) num += (double)g.v[2 * d] * towards(q, -(d == 0), -(d == 1), -(d == 2));
                    if (x[d] < nf[d] - 1) num += (double)g.v[2 * d + 1] * towards(q, d == 0, d == 1, d == 2);
                }
            }
            const int eq[3] = {e[0] + (q & 1), e[1] + (q >> 1 & 1), e[2] + (q >> 2 & 1)};
            pw[odi_pw_at(fine, coarse, eq)] = den > 0 ? T(num / den) : T(0);
        }
    }
}

// The Galerkin build's off-diagonal entries, R A P directly: for coarse
// nodes I and J = I + o (o != 0),
//   A_c(I, J) = sum_i W_i P(i, I) sum_j A(i, j) P(j, J) / Wc_I,
// i over the fine nodes P's column I reaches, j over column J's (P's
// column of a coarse node lives on its block: the fine nodes within one
// index of it along its coarsened axes that lie between coarse nodes,
// and itself).  W A is symmetric (the couplings of a face are one number
// seen from either side, over the cell volumes W), so Wc A_c is: the sum
// above, e(I, J), is e(J, I), and the build forms it once for each pair of
// neighbours, over the slots o of the upper half (gal_upper: o's last
// nonzero component positive), writing A_c(I, J) = e / Wc_I and
// A_c(J, I) = e / Wc_J.  A block owns a tile of 32 coarse nodes: it first
// reads the columns of the tile and the nodes that upper half reaches
// around it into shared memory from P's weights (gal_weights_kernel), the
// rows of the fine nodes under the tile (a Galerkin level's: their
// diagonals) with their cell volumes, and each axis's pairs; then each
// warp takes a slot o, a lane a tile node, and sums over the pairs (i, j)
// within one index of each other on every axis (on a 7-point level: equal
// on all axes but at most one).  The rows' sums (the centre slots) come
// from R A P 1 formed in differences (Hierarchy::galerkin_build), not from
// these entries.
//
// Shared memory is laid out so that a half-warp's loads meet no bank
// twice: the half-warp's lanes are 8 consecutive tile nodes along x on
// two planes (gal_lane), the fine nodes are stored by parity along each
// axis (gal_fine_at: a lane's nodes, two fine indices apart, fall on
// consecutive words) with plane strides that put the second plane 8 words
// on, and each axis's pairs are packed (gal_pack_pair) so that a term's
// shared-memory places are sums of one word per axis.
constexpr int GAL_TX = 8, GAL_TY = 2, GAL_TZ = 2; // a block's coarse tile in 3D (2D: GAL_T2X x GAL_T2Y)
constexpr int GAL_T2X = 8, GAL_T2Y = 4, GAL_THREADS = 256;
constexpr int GAL_COLS = (GAL_TX + 2) * (GAL_TY + 2) * (GAL_TZ + 1); // (the upper half: z from the tile's first)
constexpr int GAL_FPX = 24, GAL_FPY = 2 * GAL_TY + 1;                          // the fine layout's strides (3D)
constexpr int GAL_FINE = GAL_FPX * GAL_FPY * (2 * GAL_TZ + 1);                 // its places (3D; 2D: fewer)
constexpr int GAL_PAIRS = 7;                                                   // pairs along an axis, at most
static_assert(GAL_TX * GAL_TY * GAL_TZ == 32 && GAL_T2X * GAL_T2Y == 32, "a tile is a warp's lanes");
static_assert(GAL_COLS >= (GAL_T2X + 2) * (GAL_T2Y + 2) && GAL_FINE >= GAL_FPX * (2 * GAL_T2Y + 1),
              "the 2D tile fits the 3D tile's shared arrays");
static_assert(2 * GAL_TX + 1 <= GAL_FPX && 2 * GAL_T2X + 1 <= GAL_FPX && GAL_FPX * GAL_FPY % 16 == 8,
              "the fine layout holds a tile's nodes, a lane's second plane 8 words on");
static_assert(GAL_T2X >= GAL_TX && GAL_T2X >= GAL_TY && GAL_T2X >= GAL_T2Y, "a tile's extents fit the pairs' lists");
// gal_rap_kernel's dynamic shared memory (s27: the level above is a Galerkin one)
static size_t gal_rap_smem(bool s27) { return sizeof(double) * (GAL_COLS * GAL_SLOTS + GAL_FINE * (s27 ? 2 : 8)); }

// Along one axis, the pairs (i of I's block, j of J's) one index apart at
// most: 4 bits a pair (i's block offset + 1, then j's << 2), those at the
// same node (eq, up to 3) and those one apart (ne, up to 4).
struct OdiPairs {
    unsigned eq = 0, ne = 0;
    int neq = 0, nne = 0;
};
// gal_rap_kernel's static shared memory, beside gal_rap_smem's dynamic:
// each axis's pairs by tile node and offset, packed (gal_pack_pair; the
// pairs at one node first), their counts (at one node, one apart), their
// fine indices (the level above a Galerkin one: its rows are read from
// global memory), and the places of P's weights along each axis by column
// (the tile and one node around it) and offset, as odi_pw_at's terms (the
// place times the axis's stride in pw; -1: the column has none there).
typedef unsigned GalPacked[3][GAL_T2X][3][GAL_PAIRS];
typedef unsigned char GalCounts[3][GAL_T2X][3][2];
typedef int GalCoords[3][GAL_T2X][3][GAL_PAIRS];
typedef int64_t GalPlaces[3][GAL_T2X + 2][3];
constexpr size_t GAL_STATIC_SMEM = sizeof(GalPacked) + sizeof(GalCounts) + sizeof(GalCoords) + sizeof(GalPlaces);
template <class T> __device__ __forceinline__ OdiPairs odi_pairs(const OdiAxes<T> &a, int d, int n, int I, int J)
{
    int xi[3], oi[3], xj[3], oj[3];
    const int ni = odi_block_axis(a, d, n, I, xi, oi), nj = odi_block_axis(a, d, n, J, xj, oj);
    OdiPairs r;
#pragma unroll
    for (int u = 0; u < 3; ++u)
#pragma unroll
        for (int v = 0; v < 3; ++v) {
            if (u >= ni || v >= nj) continue;
            const unsigned code = (unsigned)(oi[u] + 1) | (unsigned)(oj[v] + 1) << 2;
            const int gap = xj[v] - xi[u];
            if (gap == 0) r.eq |= code << 4 * r.neq++;
            else if (gap == 1 || gap == -1) r.ne |= code << 4 * r.nne++;
        }
    return r;
}
// A tile node's coordinates in the tile from its lane: in 3D a half-warp
// is 8 nodes along x on two planes along z (the fine layout's and the
// columns' strides put them on distinct banks).
__device__ __forceinline__ void gal_lane(bool is3d, int v, int (&t)[3])
{
    t[0] = v & 7;
    t[1] = is3d ? v >> 4 & 1 : v >> 3;
    t[2] = is3d ? v >> 3 & 1 : 0;
}
// Along axis d, the fine layout's part for the fine node at x (from the
// tile's first, x < 2 t + 1 for a tile extent t): by parity, the even
// nodes first.
__device__ __forceinline__ int gal_fine_at(bool is3d, int d, int x, int t)
{
    const int p = (x >> 1) + (t + 1) * (x & 1);
    return d == 0 ? p : d == 1 ? GAL_FPX * p : GAL_FPX * GAL_FPY * p;
}
// The upper half's slots, q < 13 (2D: 4, the slots of offset 0 along z),
// faces first: warp w takes q = w and w + 8, 70 pairs' terms at most.
__device__ __forceinline__ int gal_upper(bool is3d, int q)
{
    // 3D: 14 16 22 | 15 17 19 21 23 25 | 18 20 24 26; 2D: 14 15 16 17
    constexpr unsigned long long U3 = 14ull | 16ull << 5 | 22ull << 10 | 15ull << 15 | 17ull << 20 | 19ull << 25 |
                                      21ull << 30 | 23ull << 35 | 25ull << 40 | 18ull << 45 | 20ull << 50 |
                                      24ull << 55;
    return is3d ? (q < 12 ? (int)(U3 >> 5 * q & 31u) : 26) : (q & 1 ? 15 : 14) + (q & 2);
}

// A pair along axis d packed as one word, whose sum over the three axes
// gives a term's places: bits 0-4 the slot of P's column I (i's block
// offset + 1 times 1, 3 or 9), 5-9 column J's, 10-20 the fine layout's
// place of i, 21-25 the slot of the entry A(i, j) (gal_slot).
__device__ __forceinline__ unsigned gal_pack_pair(int d, unsigned code, int fine_at, int dir)
{
    const unsigned m = d == 0 ? 1u : d == 1 ? 3u : 9u;
    return (code & 3u) * m | (code >> 2) * m << 5 | (unsigned)fine_at << 10 | (unsigned)(dir + 1) * m << 21;
}

template <class T, bool S27>
__global__ void __launch_bounds__(GAL_THREADS, 3)
    gal_rap_kernel(const Grid<T> fine, const GalRows<T> fr, const Grid<T> coarse, const OdiAxes<T> a,
                   const GalRows<T> cr, const T *__restrict__ pw)
{
    // P's columns by block offset (gal_slot); the fine rows under the tile
    // (gal_rap_smem: 7-point, the couplings by face, 2 d + high, then the
    // diagonal; a Galerkin level's, the diagonal alone) and their cell
    // volumes, at gal_fine_at's places; each axis's pairs by tile node and
    // offset
    extern __shared__ double gal_sm[];
    double(*const col)[GAL_SLOTS] = reinterpret_cast<double(*)[GAL_SLOTS]>(gal_sm);
    constexpr int AW = S27 ? 1 : 7;
    double *const arow = gal_sm + GAL_COLS * GAL_SLOTS, *const vol = arow + GAL_FINE * AW;
    __shared__ GalPacked pairs;
    __shared__ GalCounts counts;
    __shared__ int coords[S27 ? 3 : 1][GAL_T2X][3][GAL_PAIRS]; // (GalCoords)
    __shared__ GalPlaces place;
    const bool is3d = fine.is3d != 0;
    const int tx = is3d ? GAL_TX : GAL_T2X, ty = is3d ? GAL_TY : GAL_T2Y, tz = is3d ? GAL_TZ : 1;
    const int hx = tx + 2, hy = ty + 2, hz = is3d ? tz + 1 : 1; // the tile and the nodes its upper half reaches
    const int cnz = is3d ? coarse.nz : 1, fnz = is3d ? fine.nz : 1;
    const int bx = (coarse.nx + tx - 1) / tx, by = (coarse.ny + ty - 1) / ty;
    const int b = blockIdx.x;
    const int I0[3] = {b % bx * tx, b / bx % by * ty, b / bx / by * tz};
    const int ext[3] = {tx, ty, tz};
    const int nf[3] = {fine.nx, fine.ny, fnz}, nc[3] = {coarse.nx, coarse.ny, cnz};
    // 1. The columns from P's weights (zero outside their blocks): the
    // places along each axis first, then one independent load an entry,
    // consecutive threads along x's places (a column's places along an
    // axis follow its neighbour's: the loads of a row coalesce).
    for (int t = threadIdx.x; t < 3 * (GAL_T2X + 2) * 3; t += blockDim.x) {
        const int d = t / (3 * (GAL_T2X + 2)), u = t / 3 % (GAL_T2X + 2), o = t % 3 - 1;
        const int J = d < 2 ? I0[d] - 1 + u : is3d ? I0[d] + u : 0; // (z: the upper half)
        int64_t pl = -1;
        if (u < (d == 0 ? hx : d == 1 ? hy : hz) && J >= 0 && J < nc[d]) {
            const int F = d < 2 || is3d ? __ldg(a.cf[d] + J) : 0, x = F + o;
            if (!o || (x >= 0 && x < nf[d] && (d < 2 || is3d) && __ldg(a.cn[d] + x) < 0)) {
                const int e[3] = {d == 0, d == 1, d == 2}; // (the axis's stride in pw)
                pl = odi_place_of(F, J, o) * odi_pw_at(fine, coarse, e);
            }
        }
        place[d][u][o + 1] = pl;
    }
    __syncthreads();
    int F0[3];
    for (int d = 0; d < 3; ++d) F0[d] = d < 2 || is3d ? __ldg(a.cf[d] + I0[d]) - 1 : 0;
    // (the extents known at compile time from here to the pairs: 2D or 3D)
    auto fill = [&](auto d3) {
        constexpr bool D3 = decltype(d3)::value;
        constexpr int TX = D3 ? GAL_TX : GAL_T2X, TY = D3 ? GAL_TY : GAL_T2Y, TZ = D3 ? GAL_TZ : 1;
        constexpr int HX = TX + 2, HY = TY + 2, HZ = D3 ? TZ + 1 : 1, FX = 2 * TX + 1, FY = 2 * TY + 1,
                      FZ = D3 ? 2 * TZ + 1 : 1;
#pragma unroll 4
        for (int t = threadIdx.x; t < HX * HY * HZ * GAL_SLOTS; t += GAL_THREADS) {
            const int ax = t % (3 * HX), ayz = t / (3 * HX), ay = ayz % (3 * HY), az = ayz / (3 * HY);
            const int u[3] = {ax / 3, ay / 3, az / 3}, o[3] = {ax - 3 * u[0], ay - 3 * u[1], az - 3 * u[2]};
            const int64_t e[3] = {place[0][u[0]][o[0]], place[1][u[1]][o[1]], place[2][u[2]][o[2]]};
            col[u[0] + HX * (u[1] + HY * u[2])][o[0] + 3 * o[1] + 9 * o[2]] =
                e[0] >= 0 && e[1] >= 0 && e[2] >= 0 ? (double)pw[e[0] + e[1] + e[2]] : 0.0;
        }
        // 2. The rows and cell volumes of the fine nodes from one before
        // the tile's first coarse node to one past its last (consecutive
        // coarse nodes lie at most two fine nodes apart).
        for (int t = threadIdx.x; t < FX * FY * FZ; t += GAL_THREADS) {
            const int l[3] = {t % FX, t / FX % FY, t / (FX * FY)};
            const int x[3] = {F0[0] + l[0], F0[1] + l[1], F0[2] + l[2]};
            const int at = gal_fine_at(D3, 0, l[0], TX) + gal_fine_at(D3, 1, l[1], TY) + gal_fine_at(D3, 2, l[2], TZ);
            double row[GAL_SLOTS], w = 0;
#pragma unroll
            for (int q = 0; q < GAL_SLOTS; ++q) row[q] = 0;
            if (x[0] >= 0 && x[0] < nf[0] && x[1] >= 0 && x[1] < nf[1] && x[2] >= 0 && x[2] < nf[2]) {
                gal_row(fine, fr, fine.base + x[0] + (int64_t)x[1] * fine.sy + (int64_t)x[2] * fine.sz, x[0], x[1],
                        x[2], row);
                w = (double)__ldg(a.wf[0] + x[0]) * (double)__ldg(a.wf[1] + x[1]);
                if (D3) w *= (double)__ldg(a.wf[2] + x[2]);
            }
            if constexpr (!S27)
#pragma unroll
                for (int f = 0; f < 6; ++f)
                    arow[at * AW + f] = row[gal_slot(f >> 1 == 0 ? 2 * (f & 1) - 1 : 0, f >> 1 == 1 ? 2 * (f & 1) - 1 : 0,
                                                   f >> 1 == 2 ? 2 * (f & 1) - 1 : 0)];
            arow[at * AW + AW - 1] = gal_diag(row);
            vol[at] = w;
        }
    };
    if (is3d) fill(std::true_type());
    else fill(std::false_type());
    // each axis's pairs (odi_pairs) by tile node and offset, packed
    for (int t = threadIdx.x; t < 3 * GAL_T2X * 3; t += blockDim.x) {
        const int d = t / (3 * GAL_T2X), v = t / 3 % GAL_T2X, o = t % 3 - 1;
        const int I = I0[d] + v, J = I + o;
        OdiPairs r;
        if (d == 2 && !is3d) r.eq = 5, r.neq = 1; // (offsets 0 and 0)
        else if (v < ext[d] && I < nc[d] && J >= 0 && J < nc[d]) r = odi_pairs(a, d, nf[d], I, J);
        const int FI = d < 2 || is3d ? __ldg(a.cf[d] + min(I, nc[d] - 1)) : 0;
        const int FJ = d < 2 || is3d ? __ldg(a.cf[d] + max(0, min(J, nc[d] - 1))) : 0;
        const unsigned all = r.eq | r.ne << 4 * r.neq;
        for (int q = 0; q < r.neq + r.nne; ++q) {
            const unsigned code = all >> 4 * q & 15u;
            const int i = FI + (int)(code & 3u) - 1, j = FJ + (int)(code >> 2) - 1;
            pairs[d][v][o + 1][q] = gal_pack_pair(d, code, gal_fine_at(is3d, d, i - F0[d], ext[d]), j - i);
            if constexpr (S27) coords[d][v][o + 1][q] = i;
        }
        counts[d][v][o + 1][0] = (unsigned char)r.neq;
        counts[d][v][o + 1][1] = (unsigned char)r.nne;
    }
    __syncthreads();
    // 3. The entries: warp w the upper half's slots gal_upper(w), (w + 8),
    // lane v tile node gal_lane(v).
    int tv[3];
    gal_lane(is3d, threadIdx.x & 31, tv);
    const int I[3] = {I0[0] + tv[0], I0[1] + tv[1], I0[2] + tv[2]};
    if (I[0] >= nc[0] || I[1] >= nc[1] || I[2] >= nc[2]) return;
    auto inside = [&](const int(&x)[3]) {
        return x[0] >= 0 && x[0] < nc[0] && x[1] >= 0 && x[1] < nc[1] && x[2] >= 0 && x[2] < nc[2];
    };
    auto weight = [&](const int(&x)[3]) {
        const double w = (double)__ldg(a.wc[0] + x[0]) * (double)__ldg(a.wc[1] + x[1]);
        return is3d ? w * (double)__ldg(a.wc[2] + x[2]) : w;
    };
    auto put = [&](int s, const int(&x)[3], double v) {
        const_cast<T *>(cr.st)[(s - cr.lo) * cr.n + gal_index(cr.pk, x[0], x[1], x[2])] = T(v);
    };
    const double *ci = col[(tv[0] + 1) + hx * ((tv[1] + 1) + hy * tv[2])];
    const double wc = weight(I);
    for (int q = threadIdx.x >> 5; q < (is3d ? 13 : 4); q += GAL_THREADS / 32) {
        const int s = gal_upper(is3d, q), sm = 2 * GAL_CENTRE - s; // (sm: the opposite offset's slot)
        int o[3];
        gal_offset(s, o);
        const int J[3] = {I[0] + o[0], I[1] + o[1], I[2] + o[2]}, K[3] = {I[0] - o[0], I[1] - o[1], I[2] - o[2]};
        if (!inside(K)) put(sm, I, 0.0); // (else node K's thread writes it)
        if (!inside(J)) {
            put(s, I, 0.0);
            continue;
        }
        double e = 0;
        const double *cj = col[(tv[0] + o[0] + 1) + hx * ((tv[1] + o[1] + 1) + hy * (tv[2] + o[2]))];
        const unsigned *L[3] = {pairs[0][tv[0]][o[0] + 1], pairs[1][tv[1]][o[1] + 1], pairs[2][tv[2]][o[2] + 1]};
        int neq[3], nne[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            neq[d] = counts[d][tv[d]][o[d] + 1][0];
            nne[d] = counts[d][tv[d]][o[d] + 1][1];
        }
        // the pairs L[d][b[d]] .. + m[d] along each axis; sel: the 7-point
        // row's entry (-1 - d: the pair's A(i, j) lies along axis d, its
        // side from the pair's slot)
        auto sum = [&](int b0, int m0, int b1, int m1, int b2, int m2, int sel) {
            for (int cz = b2; cz < b2 + m2; ++cz) {
                const unsigned pz = L[2][cz];
                for (int cy = b1; cy < b1 + m1; ++cy) {
                    const unsigned pyz = pz + L[1][cy];
                    for (int cx = b0; cx < b0 + m0; ++cx) {
                        const unsigned p = pyz + L[0][cx];
                        const double pi = ci[p & 31u], pj = cj[p >> 5 & 31u];
                        if (pi == 0 || pj == 0) continue;
                        const int li = (int)(p >> 10 & 2047u), slot = (int)(p >> 21 & 31u);
                        double aij;
                        if constexpr (S27) {
                            aij = slot == GAL_CENTRE ? arow[li]
                                                     : (double)fr.at(slot, coords[0][tv[0]][o[0] + 1][cx],
                                                                     coords[1][tv[1]][o[1] + 1][cy],
                                                                     coords[2][tv[2]][o[2] + 1][cz]);
                        } else {
                            aij = arow[li * AW + (sel >= 0 ? sel : 2 * (-sel - 1) + (slot > GAL_CENTRE))];
                        }
                        e += vol[li] * pi * aij * pj;
                    }
                }
            }
        };
        if constexpr (S27) {
            sum(0, neq[0] + nne[0], 0, neq[1] + nne[1], 0, neq[2] + nne[2], 0);
        } else {
            sum(0, neq[0], 0, neq[1], 0, neq[2], AW - 1);
            sum(neq[0], nne[0], 0, neq[1], 0, neq[2], -1);
            sum(0, neq[0], neq[1], nne[1], 0, neq[2], -2);
            sum(0, neq[0], 0, neq[1], neq[2], nne[2], -3);
        }
        put(s, I, e / wc);
        put(sm, J, e / weight(J));
    }
}

// The rows' sums R A P 1 come from P 1 = 1 - delta, delta formed without
// P 1's rounding: 0 on a coarse node, 1 on a point that is not fluid
// (odi_held), and on a node of a higher stage P's formula for 1 - delta
// written for delta,
//   delta_p = (rsum_p+ + sum_t w_t delta_{p+t}) / den_p
// (odi_collapse's w and den; gal_weights_kernel forms it from a Galerkin
// level, odi_p_kernel's ODI_DELTA from a 7-point one, in one pass).
// delta is then 0 exactly wherever no wall's coupling reaches through the
// stages, and so is A (1 - delta) in differences: on a region without a
// Dirichlet wall or point (a Neumann box, a sealed pocket of a mask) every
// coarse row's sum is 0 exactly.  Formed from P 1 they were rounding of
// either sign, a single node's diagonal of 1e-16 times its neighbours',
// whose inverse sent the cycle's correction far along the constants
// (V-cycles diverged, CG broke down on a Neumann box with beta from 0.1 to
// 10 point by point).
//
// The rows' sums: the centre slots = y = R A (1 - delta).  A walk launch
// over the coarse level.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    gal_sums_kernel(const Grid<T> g, const T *__restrict__ y, const GalRows<T> gr, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    for (int k = k0; k < k1; ++k)
        const_cast<T *>(gr.st)[(GAL_CENTRE - gr.lo) * gr.n + gal_index(gr.pk, i, j, k)] =
            y[g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz];
}

} // namespace pgpu
