// coarse_solve.h -- the cycle schedule and its coarse end: dense inverse, single-block executor
#pragma once
#include "interpolate.h"

namespace pgpu {

// A cycle from level s solves A e = f_s approximately from the level's
// current iterate: pre-smooth, restrict the residual to s+1 (whose
// correction starts from zero), gamma cycles of s+1, prolong and add the
// correction, post-smooth; the level where cycles stop (last_level: the dense
// level, else the single node) is solved exactly.  gamma is 2 for W-cycles
// where s+1 is not that level, else 1.  build_schedule lists these steps once
// per start level; that list is the only statement of the cycle.  The host
// runs the steps of the large levels as kernel launches and hands every run
// of steps on the tiny levels (at most TINY_THREADS points) to
// tiny_cycle_kernel, which runs the same steps in one block with barriers
// between them: below that size each launch costs several microseconds
// whatever its grid, about 0.17 ms per 512^3 V-cycle for the levels below
// 32^3 and several times that in an FMG pass.
// Level 0 is whatever the hierarchy has bound (Hierarchy::bind): the user's
// problem (its mean shift passed in), or a correction problem in workspace.
// post_flip reverses the colour order of post-smoothing (a symmetric cycle,
// with pre == post).

enum StepOp { STEP_PRE = 0, STEP_DOWN = 1, STEP_SOLVE = 2, STEP_UP = 3, STEP_POST = 4 };
struct Step {
    int op, level;
};

static void build_schedule(int s, int last, bool wcycle, std::vector<Step> &out)
{
    if (s == last) {
        out.push_back(Step{STEP_SOLVE, s});
        return;
    }
    out.push_back(Step{STEP_PRE, s});
    out.push_back(Step{STEP_DOWN, s});
    const int gamma = wcycle && s + 1 < last ? 2 : 1;
    for (int k = 0; k < gamma; ++k) build_schedule(s + 1, last, wcycle, out);
    out.push_back(Step{STEP_UP, s});
    out.push_back(Step{STEP_POST, s});
}

// ---- the dense coarse solve ----
// The inverse of a small level's operator, transposed (so that the threads'
// loads of a column are contiguous).  A singular level (no Dirichlet face;
// the constants span the null space and the cell volumes w the left one) is
// inverted as A + s e w^T, which solves A u = r with w^T u = 0 for every r
// with w^T r = 0.  Gauss-Jordan elimination with partial pivoting, in
// double; false if a pivot vanishes.
static bool dense_inverse(const Axis ax[3], bool singular, std::vector<double> &mt)
{
    std::vector<double> a, w;
    assemble_dense(ax, a, w);
    const int n = (int)w.size();
    if (singular) {
        double dsum = 0, wsum = 0;
        for (int p = 0; p < n; ++p) {
            dsum += a[(size_t)p * n + p];
            wsum += w[p];
        }
        const double sc = (dsum > 0 ? dsum / n : 1.0) / wsum;
        for (int p = 0; p < n; ++p)
            for (int q = 0; q < n; ++q) a[(size_t)p * n + q] += sc * w[q];
    }
    std::vector<double> inv((size_t)n * n, 0.0);
    for (int p = 0; p < n; ++p) inv[(size_t)p * n + p] = 1.0;
    for (int col = 0; col < n; ++col) {
        int piv = col;
        for (int r = col + 1; r < n; ++r)
            if (std::fabs(a[(size_t)r * n + col]) > std::fabs(a[(size_t)piv * n + col])) piv = r;
        const double pv = a[(size_t)piv * n + col];
        if (!(std::fabs(pv) > 0) || !std::isfinite(pv)) return false;
        if (piv != col)
            for (int q = 0; q < n; ++q) {
                std::swap(a[(size_t)piv * n + q], a[(size_t)col * n + q]);
                std::swap(inv[(size_t)piv * n + q], inv[(size_t)col * n + q]);
            }
        const double rp = 1.0 / pv;
        for (int q = 0; q < n; ++q) {
            a[(size_t)col * n + q] *= rp;
            inv[(size_t)col * n + q] *= rp;
        }
        for (int r = 0; r < n; ++r) {
            const double f = a[(size_t)r * n + col];
            if (r == col || f == 0.0) continue;
            double *ar = &a[(size_t)r * n], *ir = &inv[(size_t)r * n];
            const double *ac = &a[(size_t)col * n], *ic = &inv[(size_t)col * n];
            for (int q = col; q < n; ++q) ar[q] -= f * ac[q];
            for (int q = 0; q < n; ++q) ir[q] -= f * ic[q];
        }
    }
    mt.assign((size_t)n * n, 0.0);
    for (int p = 0; p < n; ++p)
        for (int q = 0; q < n; ++q) mt[(size_t)q * n + p] = inv[(size_t)p * n + q];
    return true;
}


// ---- the single-block executor ----
template <class T> struct TinyLevel {
    Grid<T> g;
    Xfer<T> x;      // restriction to the next level (unused on the last)
    Taps<T> p2;     // its trilinear prolongation
    T *u, *t, *f;   // iterate, residual, right-hand side
    int64_t elems;
    const T *dense; // the level's inverse (the dense level only), or NULL
};

template <class T> __device__ __forceinline__ int64_t tiny_point(const Grid<T> &g, int e, int &i, int &j, int &k)
{
    i = e % g.nx;
    const int r = e / g.nx;
    j = r % g.ny;
    k = r / g.ny;
    return at_point(g, i, j, k);
}

// One colour (parity of i+j+k) of a red-black sweep, in place: all new
// values first, then the stores, so that two points of one colour that are
// neighbours (across the seam of an odd periodic ring) both read the old
// values, as in rbgs_kernel.
template <class T> __device__ void tiny_colour(const Grid<T> &g, T *u, const T *f, int parity, T omega)
{
    const int n = g.nx * g.ny * g.nz;
    const int e = threadIdx.x;
    T nv = T(0);
    int64_t pp = -1;
    if (e < n) {
        int i, j, k;
        const int64_t p = tiny_point(g, e, i, j, k);
        if (((i + j + k) & 1) == parity) {
            T diag;
            const T off = stencil_off<T>(g, u + p, p, i, j, k, diag);
            nv = relax(u[p], f[p] + off, diag, omega);
            pp = p;
        }
    }
    __syncthreads();
    if (pp >= 0) u[pp] = nv;
    __syncthreads();
}

// r = f - A u on the interior, formed in double (see ResidualEmit).
template <class T> __device__ void tiny_residual(const Grid<T> &g, const T *u, const T *f, T *r)
{
    const int n = g.nx * g.ny * g.nz;
    for (int e = threadIdx.x; e < n; e += TINY_THREADS) {
        int i, j, k;
        const int64_t p = tiny_point(g, e, i, j, k);
        if (!gen_fluid(g, p)) { // (the general form) not an unknown
            r[p] = T(0);
            continue;
        }
        r[p] = T(point_residual(g, u, f, p, i, j, k));
    }
}

// u += M r on the interior (M: the dense level's inverse, transposed).
template <class T> __device__ void tiny_dense(const Grid<T> &g, const T *__restrict__ mt, const T *r, T *u)
{
    __shared__ T rs[DENSE_MAX];
    const int n = g.nx * g.ny * g.nz;
    int i, j, k;
    for (int e = threadIdx.x; e < n; e += TINY_THREADS) rs[e] = r[tiny_point(g, e, i, j, k)];
    __syncthreads();
    for (int e = threadIdx.x; e < n; e += TINY_THREADS) {
        T acc = T(0);
#pragma unroll 8
        for (int q = 0; q < n; ++q) acc += mt[(int64_t)q * n + e] * rs[q];
        const int64_t p = tiny_point(g, e, i, j, k);
        u[p] = u[p] + acc;
    }
    __syncthreads();
}

// The steps steps[0 .. n) of a cycle on the tiny levels, level l being
// tab[l - first]; every level's iterate is its u (updated in place).
template <class T>
__global__ void __launch_bounds__(TINY_THREADS, 1)
    tiny_cycle_kernel(const TinyLevel<T> *__restrict__ tab, int first, const Step *__restrict__ steps, int nsteps,
                      T omega, int pre, int post, int post_flip)
{
    for (int q = 0; q < nsteps; ++q) {
        const int l = steps[q].level;
        const TinyLevel<T> &L = tab[l - first];
        switch (steps[q].op) {
        case STEP_PRE:
        case STEP_POST: {
            const int first_parity = steps[q].op == STEP_POST ? 1 ^ post_flip : 1;
            for (int it = 0, n = steps[q].op == STEP_POST ? post : pre; it < n; ++it) {
                tiny_colour(L.g, L.u, L.f, first_parity, omega);
                tiny_colour(L.g, L.u, L.f, first_parity ^ 1, omega);
            }
            break;
        }
        case STEP_DOWN: {
            const TinyLevel<T> &C = tab[l + 1 - first];
            tiny_residual(L.g, L.u, L.f, L.t);
            for (int64_t e = threadIdx.x; e < C.elems; e += TINY_THREADS) C.u[e] = T(0); // ghosts too
            __syncthreads();
            for (int e = threadIdx.x; e < C.g.nx * C.g.ny * C.g.nz; e += TINY_THREADS) {
                int I, J, K;
                const int64_t pc = tiny_point(C.g, e, I, J, K);
                C.f[pc] = rs_point(rs_column(L.x, L.g.sy, I, J), L.g, L.x, L.t, K, Shift<T>{});
            }
            __syncthreads();
            break;
        }
        case STEP_SOLVE:
            if (L.dense) { // the residual, then the inverse's product
                tiny_residual(L.g, L.u, L.f, L.t);
                __syncthreads();
                tiny_dense(L.g, L.dense, L.t, L.u);
            } else { // one node: weight 1 solves it
                tiny_colour(L.g, L.u, L.f, 0, T(1));
                tiny_colour(L.g, L.u, L.f, 1, T(1));
            }
            break;
        case STEP_UP: {
            const TinyLevel<T> &C = tab[l + 1 - first];
            for (int e = threadIdx.x; e < L.g.nx * L.g.ny * L.g.nz; e += TINY_THREADS) {
                int i, j, k;
                const int64_t p = tiny_point(L.g, e, i, j, k);
                if (!gen_fluid(L.g, p)) continue;
                const T *ce = (const T *)C.u;
                L.u[p] = L.u[p] + ip_shut_or<true>(L.g, L.p2, C.g, ce, gen_byte(L.g, p), i, j, k,
                                             ip_point(ip_column<T, 2>(L.p2, C.g.sy, i, j), L.p2, C.g, ce, k));
            }
            __syncthreads();
            break;
        }
        }
    }
}

} // namespace pgpu
