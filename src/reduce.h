// reduce.h -- reductions and vector operations over a level; the stop test (Convergence)
#pragma once
#include "operator.h"

namespace pgpu {

// Reductions: three numbers per point (two sums and a maximum), reduced warp
// (shuffle) -> block (shared memory) -> one partial per block; a single
// block then adds the partials in a fixed order.  No atomics: results are
// bit-identical from run to run.  The vector operations over a level's
// interior (dot, axpby) are the building blocks of the solvers' bookkeeping.
// In the distributed mode each rank's totals are all-reduced before the
// last step that uses them (dist_allreduce, dist.h).

// (dist.h) fill the ghost planes of level-0 array u at the box's faces
// between ranks; all-reduce d[0 .. nsum) by sums and d[nsum .. nsum + nmax)
// by maxima on stream st.  Both do nothing on a single-GPU handle.
template <class T> static pgpu_status dist_halo(Env &env, const Grid<T> &g, T *u, bool lines = false);
static pgpu_status dist_allreduce(Env &env, double *d, int nsum, int nmax, cudaStream_t st);

__device__ __forceinline__ Red3 red_combine(Red3 a, Red3 b)
{
    // NaN must survive the maximum (fmax would drop it).
    return Red3{a.s0 + b.s0, a.s1 + b.s1, (a.m >= b.m || a.m != a.m) ? a.m : b.m};
}
__device__ __forceinline__ Red3 shfl_down(Red3 x, int o)
{
    return Red3{__shfl_down_sync(0xffffffffu, x.s0, o), __shfl_down_sync(0xffffffffu, x.s1, o),
                __shfl_down_sync(0xffffffffu, x.m, o)};
}

// Four sums (the Krylov methods' fused dot products, krylov.h).
struct Sum4 {
    double v[4];
};
__device__ __forceinline__ Sum4 red_combine(Sum4 a, Sum4 b)
{
#pragma unroll
    for (int q = 0; q < 4; ++q) a.v[q] += b.v[q];
    return a;
}
__device__ __forceinline__ Sum4 shfl_down(Sum4 x, int o)
{
#pragma unroll
    for (int q = 0; q < 4; ++q) x.v[q] = __shfl_down_sync(0xffffffffu, x.v[q], o);
    return x;
}

// Warp (shuffle) then block (shared memory); V is Red3 or Sum4.  Valid in
// thread 0 only.
template <class V> __device__ V block_reduce(V v)
{
    __shared__ V warp_part[32];
    const int lane = (threadIdx.x + threadIdx.y * blockDim.x) & 31;
    const int warp = (threadIdx.x + threadIdx.y * blockDim.x) >> 5;
    const int nwarps = (blockDim.x * blockDim.y + 31) >> 5;
    auto warp_sum = [](V &x) {
        for (int o = 16; o > 0; o >>= 1) x = red_combine(x, shfl_down(x, o));
    };
    warp_sum(v);
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < nwarps ? warp_part[lane] : V{};
        warp_sum(v);
    }
    return v;
}

// What the prolongation can measure on its way (REDUCE): the size of the
// correction it adds, sum (P e)^2, of the corrected values, sum out^2, and
// max |P e|, per block; a float V-cycle's convergence test.
__device__ __forceinline__ void note_correction(Red3 &acc, double v, double out)
{
    acc.s0 += v * v;
    acc.s1 += out * out;
    const double a = fabs(v);
    acc.m = (a >= acc.m || a != a) ? a : acc.m;
}

__device__ __forceinline__ void write_partial(double *partials, Red3 v)
{
    v = block_reduce(v);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        const size_t b = blockIdx.x + (size_t)gridDim.x * (blockIdx.y + (size_t)gridDim.y * blockIdx.z);
        partials[3 * b + 0] = v.s0;
        partials[3 * b + 1] = v.s1;
        partials[3 * b + 2] = v.m;
    }
}

// What the final pass does with the total besides storing it.
enum FinalMode { FINAL_STORE = 0, FINAL_SHIFT = 1 };

// Block b: out[3b .. 3b+2] = the totals of partials [b seg, (b+1) seg) of
// nblocks.  One block is the final pass; many fold a long list first
// (Reducer::total), in a fixed order either way.  FINAL_SHIFT (one block)
// also sets *shift = singular ? s0 / npts : 0 (the mean of the right-hand
// side, removed from singular problems).
template <class T>
__global__ void __launch_bounds__(FINAL_THREADS) final_kernel(const double *__restrict__ partials, size_t nblocks,
                                                              size_t seg, double *out, int mode, double npts,
                                                              int singular, T *shift)
{
    Red3 v{0, 0, 0};
    const size_t end = min(nblocks, seg * (blockIdx.x + 1));
    for (size_t b = seg * blockIdx.x + threadIdx.x; b < end; b += blockDim.x)
        v = red_combine(v, Red3{partials[3 * b], partials[3 * b + 1], partials[3 * b + 2]});
    v = block_reduce(v);
    if (threadIdx.x == 0) {
        out[3 * blockIdx.x + 0] = v.s0;
        out[3 * blockIdx.x + 1] = v.s1;
        out[3 * blockIdx.x + 2] = v.m;
        if (mode == FINAL_SHIFT) store_shift(shift, singular ? v.s0 / npts : 0.0);
    }
}

// The column launch's thread: its column (i, j) and its planes [k0, k1);
// false outside the grid (the block still takes part in its reduction).
template <class T>
__device__ __forceinline__ bool col_thread(const Grid<T> &g, int kchunk, int nyb, int nchunks, int &i, int &j,
                                           int &k0, int &k1)
{
    int yb, zc;
    const bool blk = block_yz(nyb, nchunks, yb, zc);
    i = blockIdx.x * COL_BX + threadIdx.x;
    j = yb * COL_BY + threadIdx.y;
    chunk_planes(zc, kchunk, g.nz, k0, k1);
    return blk && i < g.nx && j < g.ny;
}

template <class T> __device__ __forceinline__ int64_t at_point(const Grid<T> &g, int i, int j, int k)
{
    return g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
}

__device__ __forceinline__ void accumulate(Red3 &acc, double s, double q, double a)
{
    acc.s0 += s;
    acc.s1 += q;
    acc.m = (a >= acc.m || a != a) ? a : acc.m;
}

// Right-hand side scan: c = f + boundary terms; sums c (or c - shift when
// `centred`), c^2 and max |c|.  NaN/Inf anywhere in f or the boundary data
// shows in the sums.
template <class T>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    scan_rhs_kernel(const Grid<T> g, const T *__restrict__ u, const T *__restrict__ f, const T *__restrict__ shiftp,
                    int centred, double *partials, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    Red3 acc{0, 0, 0};
    if (col_thread(g, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const double shift = centred ? (double)shiftp[0] + (double)shiftp[1] : 0.0;
        for (int k = k0; k < k1; ++k) {
            const int64_t p = at_point(g, i, j, k);
            if (!gen_fluid(g, p)) continue; // (the general form) not an unknown: f is not read
            const double c = ((double)f[p] + (double)boundary_terms(g, u, p, i, j, k)) - shift;
            accumulate(acc, c, c * c, fabs(c));
        }
    }
    write_partial(partials, acc);
}

// Over the interior: sum a*b (b == NULL: sum a), sum a^2 and max |a|.
template <class T>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    dot_kernel(const Grid<T> g, const T *__restrict__ a, const T *__restrict__ b, double *partials, int kchunk,
               int nyb, int nchunks)
{
    int i, j, k0, k1;
    Red3 acc{0, 0, 0};
    if (col_thread(g, kchunk, nyb, nchunks, i, j, k0, k1))
        for (int k = k0; k < k1; ++k) {
            const int64_t p = at_point(g, i, j, k);
            if (!gen_fluid(g, p)) continue;
            const double x = (double)a[p];
            accumulate(acc, b ? x * (double)b[p] : x, x * x, fabs(x));
        }
    write_partial(partials, acc);
}

// Over the interior: out = c + a x + b y - mean, where x or y may be NULL
// (0) and mean = mean_of[0] / npts when mean_of is given, else 0; x may be of
// another precision (PGPU_MIXED adds a float correction to a double u).
template <class T, class X = T>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    axpby_kernel(const Grid<T> g, T c, T a, const X *x, T b, const T *y, T *out, const double *__restrict__ mean_of,
                 double npts, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!col_thread(g, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    // the mean in two parts, so that it leaves no rounding of its own size behind
    const Shift<T> sub = mean_of ? shift_of<T>(mean_of[0] / npts) : Shift<T>{};
    for (int k = k0; k < k1; ++k) {
        const int64_t p = at_point(g, i, j, k);
        if (!gen_fluid(g, p)) continue; // (the general form) only unknowns change
        T v = c;
        if (x) v += a * T(x[p]);
        if (y) v += b * y[p];
        out[p] = sub.of(v);
    }
}

// The last pass of a reduction over `blocks` block partials of `width`
// doubles each, at part: where they are many (one block would take tens of
// microseconds) fold(n, seg, from, blocks, to) first adds them into n
// groups of seg at part + width * nparts, then last(from, blocks) adds what
// is left in one block.  Shared by the Reducer (three numbers) and the
// Krylov methods (four sums).
template <class Fold, class Last>
static pgpu_status fold_then_last(char *err, double *part, size_t nparts, int width, size_t blocks, Fold fold,
                                  Last last)
{
    const double *from = part;
    if (blocks > FOLD_AT) {
        const size_t seg = (blocks + FOLD_BLOCKS - 1) / FOLD_BLOCKS, n = (blocks + seg - 1) / seg;
        double *folded = part + (size_t)width * nparts;
        fold((unsigned)n, seg, from, blocks, folded);
        PGPU_LAUNCHED();
        from = folded;
        blocks = n;
    }
    last(from, blocks);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// Slots of the results buffer (three doubles each).
enum { RES_SCAN = 0, RES_CENTRED = 3, RES_NORM = 6, RES_SUM = 9, RES_CORR = 12, RES_COUNT = 15 };

// The reductions' buffers: block partials, the totals, their host copy.
struct Reducer {
    double *d_part = nullptr, *d_res = nullptr, *h_res = nullptr;
    double *h_res_dev = nullptr; // h_res as the device addresses it (pinned memory; NULL: copy through d_res)
    size_t nparts = 0;
    pgpu_status init(Env &env, size_t most_blocks)
    {
        char *err = env.err;
        nparts = most_blocks;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&d_part, (nparts + FOLD_BLOCKS) * 3 * sizeof(double),
                                   "reduction partials"));
        PGPU_FORWARD(env.mem.alloc(err, (void **)&d_res, RES_COUNT * sizeof(double), "reduction results"));
        PGPU_CUDA_SETUP(env, cudaMallocHost((void **)&h_res, RES_COUNT * sizeof(double)));
        if (h_res && cudaHostGetDevicePointer((void **)&h_res_dev, h_res, 0) != cudaSuccess) {
            (void)cudaGetLastError();
            h_res_dev = nullptr;
        }
        return PGPU_SUCCESS;
    }
    ~Reducer()
    {
        if (h_res) cudaFreeHost(h_res);
    }
    // The totals of the partials of `blocks` blocks into slot; FINAL_SHIFT
    // also sets *shift (see final_kernel).
    // Distributed: the rank's totals go to dist->d_red, are all-reduced
    // there, and the final pass runs again over that one partial.
    template <class T>
    pgpu_status total(Env &env, size_t blocks, int slot, int mode = FINAL_STORE, double npts = 0, int singular = 0,
                      T *shift = nullptr)
    {
        const cudaStream_t st = env.st;
        char *err = env.err;
        double *loc = env.dist ? env.dist->d_red : nullptr;
        PGPU_FORWARD(fold_then_last(
            env.err, d_part, nparts, 3, blocks,
            [&](unsigned n, size_t seg, const double *from, size_t b, double *to) {
                final_kernel<T><<<n, FINAL_THREADS, 0, st>>>(from, b, seg, to, FINAL_STORE, 0, 0, nullptr);
            },
            [&](const double *from, size_t b) {
                if (loc) final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(from, b, b, loc, FINAL_STORE, 0, 0, nullptr);
                else final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(from, b, b, d_res + slot, mode, npts, singular, shift);
            }));
        if (!loc) return PGPU_SUCCESS;
        PGPU_FORWARD(dist_allreduce(env, loc, 2, 1, st));
        final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(loc, 1, 1, d_res + slot, mode, npts, singular, shift);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // Copies `count` results from slot on to the host and waits for them.
    pgpu_status fetch(Env &env, int slot, int count)
    {
        char *err = env.err;
        PGPU_CUDA(cudaMemcpyAsync(h_res + slot, d_res + slot, count * sizeof(double), cudaMemcpyDeviceToHost, env.st));
        PGPU_CUDA(cudaStreamSynchronize(env.st));
        return PGPU_SUCCESS;
    }
    // sum a*b (a's sum when b is NULL), sum a^2, max |a| over level g's
    // interior into slot (on the device).
    template <class T>
    pgpu_status dot(Env &env, const Grid<T> &g, const ColLaunch &c, const T *a, const T *b, int slot)
    {
        char *err = env.err;
        launch(c, 0, env.st, dot_kernel<T>, g, a, b, d_part);
        PGPU_LAUNCHED();
        return total<T>(env, blocks_of(c), slot);
    }
};

// out = c + a x + b y (- the mean in mean_of) over g's interior.
template <class T, class X = T>
static pgpu_status axpby(Env &env, const Grid<T> &g, const ColLaunch &cl, T c, T a, const X *x, T b, const T *y,
                         T *out, const double *mean_of = nullptr, double npts = 0)
{
    char *err = env.err;
    launch(cl, 0, env.st, axpby_kernel<T, X>, g, c, a, x, b, y, out, mean_of, npts);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// u -= mean(u) over g's interior of npts points: the constant of a singular
// problem's null space.
template <class T>
static pgpu_status subtract_mean(Env &env, Reducer &red, const Grid<T> &g, const ColLaunch &cl, T *u, double npts)
{
    PGPU_FORWARD(red.dot(env, g, cl, (const T *)u, (const T *)nullptr, RES_SUM));
    return axpby(env, g, cl, T(0), T(1), (const T *)u, T(0), (const T *)nullptr, u, red.d_res + RES_SUM, npts);
}

// ||f - shift - A u||_2 and max |f - shift - A u| over g's interior, into
// the reducer's slot (residual_norm: RES_NORM, and synchronises).
template <class T>
static pgpu_status residual_norm_launch(Env &env, Reducer &red, const Grid<T> &g, const ColLaunch &walk, const T *u,
                                        const T *f, const T *shift, int slot = RES_NORM)
{
    char *err = env.err;
    PGPU_FORWARD(dist_halo(env, g, const_cast<T *>(u)));
    walk_masked(g, [&](auto mk) {
        launch(walk, 0, env.st, residual_kernel<T, false, true, T, decltype(mk)::value>, g, u, f, shift, (T *)nullptr,
               red.d_part);
    });
    PGPU_LAUNCHED();
    return red.total<T>(env, blocks_of(walk), slot);
}
template <class T>
static pgpu_status residual_norm(Env &env, Reducer &red, const Grid<T> &g, const ColLaunch &walk, const T *u,
                                 const T *f, const T *shift, double &rn, double &rmax)
{
    PGPU_FORWARD(residual_norm_launch(env, red, g, walk, u, f, shift));
    PGPU_FORWARD(red.fetch(env, RES_NORM, 3));
    rn = std::sqrt(red.h_res[RES_NORM + 1]);
    rmax = red.h_res[RES_NORM + 2];
    return PGPU_SUCCESS;
}

static double float_residual_floor(const pgpu_config &c); // validate.h
static double float_floor(double lmax, double lmin);       // validate.h
static double rounding_floor(double eps, double lmax, double lmin); // validate.h
constexpr double FLOAT_EPS = 1.1920929e-7, DOUBLE_EPS = 0x1p-52;     // (rounding_floor's eps)
static double lambda_max_bound(const pgpu_config &c);      // validate.h
// The tolerance float takes for a config's 0 (the header's (*)): 1e-5, or
// float's floor on the grid where that is larger.
inline double float_own_tolerance(double floor) { return std::max(1e-5, floor); }

// How an iterative solve ends: decided once, at create, from the method,
// the precision and the tolerance as the caller gave it (resolve_config,
// validate.h); each solve's Convergence carries it.
enum class Stop {
    TOLERANCE, // the relative residual at the tolerance (the caller's, or the method's default)
    FLOAT_OWN, // float with tolerance 0: the method's own rule (the header's (*), (**), (***))
    ONCE,      // nothing to decide: the FFT's one solve, FMG's one pass (tolerance 0 for both)
};

// The convergence test of the iterative methods.  judge() fills the
// report's norms from a residual norm after `it` iterations (`unit`) of
// `what` and sets stop when the tolerance is met, or with result =
// PGPU_ERROR_BREAKDOWN (the residual not finite, or grown 1e8-fold over the
// larger of ||b|| and its first value) or PGPU_ERROR_NOT_CONVERGED
// (max_iterations reached).
struct Convergence {
    Stop rule = Stop::TOLERANCE;
    // tol: the tolerance judge() holds the residual to (FLOAT_OWN: the (*)
    // value, float_own_tolerance); a method may hold a copy to another.
    double rhs_norm = NAN, tol = 0, first = -1;
    double floor = 0; // float_residual_floor of the (global) config: where float's own stops end
    double lmax = 0;  // a bound of the operator's largest eigenvalue (rounding_floor of a u)
    int max_it = 0;
    pgpu_monitor monitor = nullptr; // the user's, called at every check
    void *user = nullptr;
    void tell(int it, double rn, double rel) const
    {
        if (monitor) monitor(user, it, rn, rel);
    }
    bool own() const { return rule == Stop::FLOAT_OWN; }
    void measured(double rn, double rmax, pgpu_report &r) const
    {
        r.residual_norm = rn;
        r.residual_max = rmax;
        r.relative_residual = rhs_norm > 0 ? rn / rhs_norm : rn;
    }
    void judge(char *err, double rn, double rmax, int it, const char *what, const char *unit, pgpu_report &r,
               bool &stop, pgpu_status &result)
    {
        measured(rn, rmax, r);
        tell(it, rn, r.relative_residual);
        if (first < 0) first = rn;
        stop = true;
        if (!std::isfinite(rn) || rn > 1e8 * std::max(rhs_norm, first)) {
            result = record(err, PGPU_ERROR_BREAKDOWN, "%s: the residual became %g after %d %s", what, rn, it, unit);
        } else if (r.relative_residual > tol) {
            if (it >= max_it)
                result = record(err, PGPU_ERROR_NOT_CONVERGED, "%s: relative residual %.3e after %d %s, tolerance %.3e",
                                what, r.relative_residual, it, unit, tol);
            else
                stop = false;
        }
    }
};

} // namespace pgpu
