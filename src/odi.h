// odi.h -- operator-dependent transfers: the prolongation that follows beta's jumps, and its adjoint
#pragma once
#include "restrict.h"

namespace pgpu {

// Where beta jumps, the geometric prolongation (linear in position) puts a
// coarse correction across the jump as if the two sides were one medium:
// a fine point inside a ball of beta 1e3 whose coarse neighbour along an
// axis lies outside takes half of that neighbour's value, where the
// operator, which couples it a thousand times more strongly to the inside,
// wants nearly none.  The ball's near-constant mode then comes back from
// the coarse levels with a dent at its rim that costs 1e3 times its
// energy, and the face-averaged coarse coefficients (mean along a coarse
// face's path) price that mode so high that the cycles barely move it:
// V-cycles stalled near 0.99 a cycle on such a ball.  Coarse coefficients
// in series along the path (gen_coarse_kernel with GenCoarse::series) price
// it right, but with the linear prolongation the coarse correction then
// overshoots and the cycles diverge.  So on a level pair whose coarse build
// takes the series, the prolongation takes the fine operator's weights
// (Alcouffe, Brandt, Dendy and Painter; de Zeeuw; BoxMG, for a 7-point
// operator), in stages by the number of axes along which a fine node lies
// between two coarse nodes:
//   0: the node is a coarse node: its value;
//   1..3: sum over those axes d of (c_lo,d v(p - e_d) + c_hi,d v(p + e_d)),
//         over the sum of those couplings, v the values of the stage before
//         (0 across a Dirichlet wall; a Neumann wall's c is 0: odi_den).
// In 1D this is exact for the operator's own null space and the series
// coefficient is the Galerkin one.  The restriction is the adjoint weighted
// by cell volumes, R = Wc^-1 P^T W, as the geometric one is, so the cycle
// stays symmetric for CG.  It needs vertex coarsening on every coarsened
// axis (each fine node on a coarse node, or between two of them or a wall:
// OdiAxes::cn), no mask, and one GPU (Transfer::odi_ok, Hierarchy's rule).

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

// A node's couplings across its faces are GenPoint's diagonal parts d:
// inside the box the couplings v themselves, at a Dirichlet wall the wall's
// coupling (towards a correction of 0), at a Neumann wall 0 (v there
// weighs the ghost's flux data, no value).  Their sum over the faces of
// the between-axes of a node (c) is the stage's divisor.
template <class T> __device__ __forceinline__ double odi_den(const GenPoint<T> &q, const int (&c)[3])
{
    double s = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d)
        if (c[d] < 0) s += (double)q.d[2 * d] + (double)q.d[2 * d + 1];
    return s;
}

// s = P e on the nodes of one stage (s of the stages before read).  A walk
// launch over the fine level.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    odi_prolong_kernel(const Grid<T> fine, const Grid<T> coarse, const OdiAxes<T> a, const T *__restrict__ e, T *s,
                       int stage, int kchunk, int nyb, int nchunks)
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
        const GenPoint<T> q = gen_couplings(fine, p, i, j, k);
        const int at[3] = {i, j, k};
        double num = 0;
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            if (c[d] >= 0) continue;
            if (q.d[2 * d] != T(0) && at[d] > 0) num += (double)q.d[2 * d] * (double)s[p - st[d]];
            if (q.d[2 * d + 1] != T(0) && at[d] < n[d] - 1) num += (double)q.d[2 * d + 1] * (double)s[p + st[d]];
        }
        const double den = odi_den(q, c);
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
// its diagonal part inside the box: the table's (low or high, at node
// index at) times the face's fraction (element e: the face's high node).
template <class T> __device__ __forceinline__ double odi_face(const Grid<T> &g, int d, int64_t e, int at, bool high)
{
    const T *tab = d == 0 ? (high ? g.cxh : g.cxl) : d == 1 ? (high ? g.cyh : g.cyl) : (high ? g.czh : g.czl);
    const T *fr = d == 0 ? g.fx : d == 1 ? g.fy : g.fz;
    return (double)(T)(tab[at] * (fr ? fr[e] : T(1)));
}

// One stage of R r = Wc^-1 P^T W r, from the highest stage down.  A node of
// `stage` sums W r of its own and, from each neighbour q of the stage above
// along its coarse-node axes, q's coupling towards it times t_q, q's sum
// over its stage divisor (odi_den), stored over r by q's launch; it stores
// its own t the same way, or at stage 0 writes the coarse right-hand side.
// (The gather reads q's coupling across the face it shares with this node,
// not q's six.)
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    odi_restrict_kernel(const Grid<T> fine, const Grid<T> coarse, const OdiAxes<T> a, T *r, T *fc, int stage,
                        int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(fine.nx, fine.ny, fine.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    const int n[3] = {fine.nx, fine.ny, fine.nz};
    const int64_t st[3] = {1, fine.sy, fine.sz};
    const int nd = fine.is3d ? 3 : 2;
    for (int k = k0; k < k1; ++k) {
        int c[3];
        if (odi_stage(a, fine.is3d, i, j, k, c) != stage) continue;
        const int at[3] = {i, j, k};
        const int64_t p = fine.base + i + (int64_t)j * fine.sy + (int64_t)k * fine.sz;
        double w = (double)__ldg(a.wf[0] + i) * (double)__ldg(a.wf[1] + j);
        if (fine.is3d) w *= (double)__ldg(a.wf[2] + k);
        double sum = w * (double)r[p];
        for (int d = 0; d < nd; ++d) {
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
        if (stage > 0) {
            const double den = odi_den(gen_couplings(fine, p, i, j, k), c);
            r[p] = den > 0 ? T(sum / den) : T(0);
        } else {
            double wc = (double)__ldg(a.wc[0] + c[0]) * (double)__ldg(a.wc[1] + c[1]);
            if (fine.is3d) wc *= (double)__ldg(a.wc[2] + c[2]);
            fc[coarse.base + c[0] + (int64_t)c[1] * coarse.sy + (fine.is3d ? (int64_t)c[2] * coarse.sz : 0)] =
                T(sum / wc);
        }
    }
}

} // namespace pgpu
