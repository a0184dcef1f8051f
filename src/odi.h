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
// (Transfer::odi, Hierarchy::general_apply's rule: beta jumps, no mask, no
// periodic axis, one GPU, every coarsened axis keeping nodes) is a
// Galerkin level: its operator is R A P of the level above, 27 entries a
// node (9 in 2D: GalRows), and
//  - P follows the level above's rows (BoxMG: Dendy; de Zeeuw), in stages
//    by the axes along which a fine node lies between two coarse nodes
//    (odi_stage): a coarse node takes its value; a node of a higher stage
//    collapses its row onto those between-axes (an entry counts towards
//    the node at its offset with the other components set to 0) and takes
//    the collapsed couplings' positive parts, over their sum plus the row's
//    sum, as weights on its lower-stage neighbours (odi_collapse);
//  - R = Wc^-1 P^T W, its adjoint weighted by the cell volumes, so that
//    R A P is symmetric in Wc and the cycle stays a CG preconditioner;
//  - the Galerkin levels are smoothed by Gauss-Seidel in 8 colours (4 in
//    2D: a 27-point row couples no two nodes of one colour) and their
//    residuals formed in differences (GalRows);
//  - pgpu_set_coefficients builds them level by level by probing R A P
//    with 27 classes of coarse nodes and the constant (gal_probe_kernel).
// The finest level keeps its own 7-point form and smoothers; P and R read
// its faces directly.  Convergence no longer depends on the jump's size
// (1e3 to 1e6: the bench's 'ball' rows); what stops V-cycles and CG on
// large jumps is the finest level's residual, whose rounding in double
// grows with the jump (the header's MASKS AND VARIABLE COEFFICIENTS).

// Per axis of a level pair: cn[i] the coarse interior index of fine node i
// where it is a coarse node, else -1; wf / wc the fine and coarse cell
// widths (the restriction's weights).
template <class T> struct OdiAxes {
    const int *cn[3];
    const T *wf[3], *wc[3];
};

// One axis of a level pair (fine a, coarse c; coarsened or kept whole):
// cn[i] as OdiAxes::cn, and whether the pair keeps nodes along it -- every
// coarse node on a fine one, every other fine node between two of them or
// a wall, no periodic wrap (an axis kept whole keeps them all).
static bool odi_node_map(const Axis &a, const Axis &c, bool coarsened, std::vector<int> &cn)
{
    const int n = a.n;
    cn.assign((size_t)n, -1);
    if (!coarsened || !a.active) {
        for (int i = 0; i < n && i < c.n; ++i) cn[(size_t)i] = i;
        return c.n == n;
    }
    if (a.lo == PGPU_BC_PERIODIC) return false;
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
// same differences.  Ghosts are never read: corrections are 0 there.
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
static GalPack gal_pack(int nx, int ny, int nz)
{
    GalPack q{};
    int64_t at = 0;
    for (int c = 0; c < 8; ++c) {
        const int cx = c & 1, cy = c >> 1 & 1, cz = c >> 2 & 1;
        q.hx[c] = (nx - cx + 1) / 2;
        q.hy[c] = (ny - cy + 1) / 2;
        q.off[c] = at;
        at += (int64_t)q.hx[c] * q.hy[c] * ((nz - cz + 1) / 2);
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

// Node p's row (i, j, k its indices): a[s] the entry towards slot s, the
// row's sum in the centre (the 7-point form's: its Dirichlet walls'
// couplings).
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
    const GenPoint<T> q = gen_couplings(g, p, i, j, k);
    const int at[3] = {i, j, k}, n[3] = {g.nx, g.ny, g.nz};
    double wall = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d)
#pragma unroll
        for (int side = 0; side < 2; ++side) {
            if (d == 2 && !g.is3d) continue;
            const int f = 2 * d + side;
            if (side ? at[d] < n[d] - 1 : at[d] > 0)
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
// s = P e on the nodes of one stage (s of the stages before read).  A walk
// launch over the fine level.
// A 7-point level's divisor for a node of between-axes B (c): its
// couplings along B and its walls' (odi_collapse of gal_row, directly).
template <class T> __device__ __forceinline__ double odi_den7(const GenPoint<T> &q, const int (&c)[3], const int (&at)[3],
                                                               const int (&n)[3])
{
    double s = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        if (c[d] < 0) s += (double)q.d[2 * d] + (double)q.d[2 * d + 1];
        else s += (at[d] > 0 ? 0.0 : (double)q.d[2 * d]) + (at[d] < n[d] - 1 ? 0.0 : (double)q.d[2 * d + 1]);
    }
    return s;
}

// S27: the fine level is a Galerkin level (fr.st), else its 7-point form.
template <class T, bool S27>
__global__ void __launch_bounds__(WALK_THREADS)
    odi_prolong_kernel(const Grid<T> fine, const GalRows<T> fr, const Grid<T> coarse, const OdiAxes<T> a,
                       const T *__restrict__ e, T *s, int stage, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(fine.nx, fine.ny, fine.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    const int n[3] = {fine.nx, fine.ny, fine.nz};
    const int64_t st[3] = {1, fine.sy, fine.sz};
    for (int k = k0; k < k1; ++k) {
        int c[3];
        if (odi_stage(a, fine.is3d, i, j, k, c) != stage) continue;
        const int64_t p = fine.base + i + (int64_t)j * fine.sy + (int64_t)k * fine.sz;
        if (stage == 0) {
            s[p] = e[coarse.base + c[0] + (int64_t)c[1] * coarse.sy + (fine.is3d ? (int64_t)c[2] * coarse.sz : 0)];
            continue;
        }
        double num = 0, den;
        if constexpr (S27) {
            double row[GAL_SLOTS], w[GAL_SLOTS];
            gal_row(fine, fr, p, i, j, k, row);
            den = odi_collapse(row, c, w);
#pragma unroll
            for (int q = 0; q < GAL_SLOTS; ++q)
                if (w[q] > 0) num += w[q] * (double)s[p + gal_step(fine, q)];
        } else {
            const GenPoint<T> q = gen_couplings(fine, p, i, j, k);
            const int at[3] = {i, j, k};
#pragma unroll
            for (int d = 0; d < 3; ++d) {
                if (c[d] >= 0) continue;
                if (at[d] > 0) num += (double)q.v[2 * d] * (double)s[p - st[d]];
                if (at[d] < n[d] - 1) num += (double)q.v[2 * d + 1] * (double)s[p + st[d]];
            }
            den = odi_den7(q, c, at, n);
        }
        s[p] = den > 0 ? T(num / den) : T(0);
    }
}

// out = in + s on every interior point (no mask: the pair takes these
// transfers only without one; in == out, s == out allowed); REDUCE
// measures the correction as interp_kernel's does.
template <class T, bool REDUCE>
__global__ void __launch_bounds__(WALK_THREADS)
    odi_add_kernel(const Grid<T> fine, const T *s, const T *in, T *out, double *partials, int kchunk, int nyb,
                   int nchunks)
{
    Red3 acc{0, 0, 0};
    int i, j, k0, k1;
    if (walk_thread(fine.nx, fine.ny, fine.nz, kchunk, nyb, nchunks, i, j, k0, k1)) {
        for (int k = k0; k < k1; ++k) {
            const int64_t p = fine.base + i + (int64_t)j * fine.sy + (int64_t)k * fine.sz;
            const T old = in[p], v = s[p];
            out[p] = old + v;
            if (REDUCE) note_correction(acc, v, old + v);
        }
    }
    if (REDUCE) write_partial(partials, acc);
}

// The coupling of a node across one face of axis d, as gen_couplings forms
// it inside the box: the table's (low or high, at node index at) times the
// face's fraction (element e: the face's high node).
template <class T> __device__ __forceinline__ double odi_face(const Grid<T> &g, int d, int64_t e, int at, bool high)
{
    const T *tab = d == 0 ? (high ? g.cxh : g.cxl) : d == 1 ? (high ? g.cyh : g.cyl) : (high ? g.czh : g.czl);
    const T *fr = d == 0 ? g.fx : d == 1 ? g.fy : g.fz;
    return (double)(T)(tab[at] * (fr ? fr[e] : T(1)));
}

// One stage of R r = Wc^-1 P^T W r, from the highest stage down.  A node p
// of `stage` sums W r of its own and, from each neighbour q of a higher
// stage whose between-axes hold p's offset, q's collapsed entry towards p
// (odi_prolong_kernel's weight numerator) times t_q / den_q, stored over r
// by q's launch; it stores its own t / den the same way, or at stage 0
// writes the coarse right-hand side.
template <class T, bool S27>
__global__ void __launch_bounds__(WALK_THREADS)
    odi_restrict_kernel(const Grid<T> fine, const GalRows<T> fr, const Grid<T> coarse, const OdiAxes<T> a, T *r,
                        T *fc, int stage, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(fine.nx, fine.ny, fine.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    const int n[3] = {fine.nx, fine.ny, fine.nz};
    const int top = odi_top(fine);
    for (int k = k0; k < k1; ++k) {
        int c[3];
        if (odi_stage(a, fine.is3d, i, j, k, c) != stage) continue;
        const int at[3] = {i, j, k};
        const int64_t p = fine.base + i + (int64_t)j * fine.sy + (int64_t)k * fine.sz;
        double w = (double)__ldg(a.wf[0] + i) * (double)__ldg(a.wf[1] + j);
        if (fine.is3d) w *= (double)__ldg(a.wf[2] + k);
        double sum = w * (double)r[p];
        if (S27 && stage < top) {
            for (int q = 0; q < GAL_SLOTS; ++q) {
                int o[3];
                gal_offset(q, o);
                if (q == GAL_CENTRE || (!fine.is3d && o[2])) continue;
                int x[3], cq[3];
                bool in = true;
#pragma unroll
                for (int d = 0; d < 3; ++d) {
                    x[d] = at[d] + o[d];
                    in = in && x[d] >= 0 && x[d] < n[d];
                }
                if (!in || odi_stage(a, fine.is3d, x[0], x[1], x[2], cq) <= stage) continue;
                bool held = true; // p lies in q's between-axes
#pragma unroll
                for (int d = 0; d < 3; ++d) held = held && (!o[d] || cq[d] < 0);
                if (!held) continue;
                const int64_t pq = p + o[0] + (int64_t)o[1] * fine.sy + (int64_t)o[2] * fine.sz;
                // q's entries that collapse onto p: -o on q's between-axes, anything on its others
                int lo[3], hi[3];
#pragma unroll
                for (int d = 0; d < 3; ++d) {
                    lo[d] = cq[d] >= 0 && (d < 2 || fine.is3d) ? -1 : -o[d];
                    hi[d] = cq[d] >= 0 && (d < 2 || fine.is3d) ? 1 : -o[d];
                }
                double cpl = 0;
                for (int mz = lo[2]; mz <= hi[2]; ++mz)
                    for (int my = lo[1]; my <= hi[1]; ++my)
                        for (int mx = lo[0]; mx <= hi[0]; ++mx)
                            cpl -= (double)fr.at(gal_slot(mx, my, mz), x[0], x[1], x[2]);
                if (cpl > 0) sum += cpl * (double)r[pq]; // (odi_collapse's positive part)
            }
        } else if (!S27 && stage < top) {
            // 7-point: the neighbours along p's coarse-node axes that lie
            // between coarse nodes there, by their face towards p
            const int64_t st[3] = {1, fine.sy, fine.sz};
            for (int d = 0; d < (fine.is3d ? 3 : 2); ++d) {
                if (c[d] < 0) continue;
#pragma unroll
                for (int side = 0; side < 2; ++side) {
                    const int x = at[d] + (side ? 1 : -1);
                    if (x < 0 || x >= n[d] || __ldg(a.cn[d] + x) >= 0) continue; // a wall, or d not coarsened
                    // q above: its low face (element q); below: its high face (element p)
                    const double cq = odi_face(fine, d, side ? p + st[d] : p, x, !side);
                    sum += cq * (double)r[side ? p + st[d] : p - st[d]];
                }
            }
        }
        if (stage > 0) {
            double den; // as odi_prolong_kernel's
            if constexpr (S27) {
                double row[GAL_SLOTS], wq[GAL_SLOTS];
                gal_row(fine, fr, p, i, j, k, row);
                den = odi_collapse(row, c, wq);
            } else {
                den = odi_den7(gen_couplings(fine, p, i, j, k), c, at, n);
            }
            r[p] = den > 0 ? T(sum / den) : T(0);
        } else {
            double wc = (double)__ldg(a.wc[0] + c[0]) * (double)__ldg(a.wc[1] + c[1]);
            if (fine.is3d) wc *= (double)__ldg(a.wc[2] + c[2]);
            fc[coarse.base + c[0] + (int64_t)c[1] * coarse.sy + (fine.is3d ? (int64_t)c[2] * coarse.sz : 0)] =
                T(sum / wc);
        }
    }
}

// r = f - A u on a level (f NULL: r = -A u), A by rows (gal_row) in
// differences, summed in double in slot order, entries of 0 skipped (their
// neighbour is not read).  A walk launch over the level.
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
        const double up = (double)u[p];
        double s = f ? (double)f[p] : 0.0;
        s -= row[GAL_CENTRE] * up;
#pragma unroll
        for (int q = 0; q < GAL_SLOTS; ++q)
            if (q != GAL_CENTRE && row[q] != 0) s -= row[q] * ((double)u[p + gal_step(g, q)] - up);
        r[p] = T(s);
    }
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
    const int cx = colour & 1, cy = (colour >> 1) & 1, cz = (colour >> 2) & 1;
    const int hx = (g.nx - cx + 1) / 2, hy = (g.ny - cy + 1) / 2, hz = g.is3d ? (g.nz - cz + 1) / 2 : 1;
    int i, j, k0, k1;
    if (!walk_thread(hx, hy, hz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    i = 2 * i + cx;
    j = 2 * j + cy;
    for (int kk = k0; kk < k1; ++kk) {
        const int k = g.is3d ? 2 * kk + cz : 0;
        const int64_t p = g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
        const double up = (double)u[p];
        double row[GAL_SLOTS];
        gal_row(g, gr, p, i, j, k, row);
        double s = (double)f[p] - row[GAL_CENTRE] * up;
#pragma unroll
        for (int q = 0; q < GAL_SLOTS; ++q)
            if (q != GAL_CENTRE && row[q] != 0) s -= row[q] * ((double)u[p + gal_step(g, q)] - up);
        const double d = gal_diag(row);
        if (d > 0) u[p] = T(up + s / d);
    }
}

// The walk launch of gal_colour_kernel for a colour of g.
template <class T> static ColLaunch gal_colour_launch(const Grid<T> &g, int colour)
{
    const int cx = colour & 1, cy = (colour >> 1) & 1, cz = (colour >> 2) & 1;
    return walk_launch((g.nx - cx + 1) / 2, (g.ny - cy + 1) / 2, g.is3d ? (g.nz - cz + 1) / 2 : 1, g.is3d != 0,
                       Tune<T>::walk_group);
}

// The Galerkin build probes R A P with the 27 classes of coarse nodes by
// their indices mod 3 (x, y, z: a class's digits): e = 1 on the class, 0
// elsewhere; R A P e then holds at each coarse node its entry towards the
// one node of the class within its 27 neighbours (no two of a class are
// that close, and R A P couples no farther).  Class GAL_SLOTS is every
// node: R A P 1 is the rows' sums, P 1 close to 1 and A of it formed in
// differences.  A walk launch over the coarse level.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    gal_probe_kernel(const Grid<T> g, T *e, int cls, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    for (int k = k0; k < k1; ++k)
        e[g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz] =
            cls == GAL_SLOTS || (i % 3 == cls % 3 && j % 3 == cls / 3 % 3 && k % 3 == cls / 9) ? T(1) : T(0);
}

// y = R (-A P e) of class cls into the coarse level's slots (gr): the
// off-diagonal entries, or the sums (cls GAL_SLOTS).
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    gal_scatter_kernel(const Grid<T> g, const T *__restrict__ y, const GalRows<T> gr, int cls, int kchunk, int nyb,
                       int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    const int ci[3] = {cls % 3, cls / 3 % 3, cls / 9};
    for (int k = k0; k < k1; ++k) {
        const int at[3] = {i, j, k};
        int o[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            const int m = ((ci[d] - at[d]) % 3 + 3) % 3; // the class' node at +m (mod 3)
            o[d] = m == 2 ? -1 : m;
        }
        const int64_t p = g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
        const int slot = cls == GAL_SLOTS ? GAL_CENTRE : gal_slot(o[0], o[1], o[2]);
        if (slot != GAL_CENTRE || cls == GAL_SLOTS)
            const_cast<T *>(gr.st)[(slot - gr.lo) * gr.n + gal_index(gr.pk, i, j, k)] = -y[p];
    }
}

} // namespace pgpu
