// fft.h -- the FFT direct solver: its plans, routes and FftSolver<T>
#pragma once
#include "hierarchy.h"
#include "coarse_solve.h"
#include "fft_dirichlet.h"
#include "fft_fdm.h"
#include "fft_cufft.h"
#include "fft_lines.h"

namespace pgpu {

// The one cooperative launch of a 2D route (dr2_kernel, fdm2_kernel) with
// `blocks` blocks; done where it ran.  Where the device refuses it for its
// size (fewer multiprocessors than it has, under MPS limits, say), blocks
// becomes 0: from now on the route runs its phases as launches of their
// own, and the default path its checks as steps of their own
// (folds_checks() turns false; a checked launch -- `checked` -- leaves the
// phases to that path).
static pgpu_status coop_launch(Env &env, const void *kern, int &blocks, int threads, void **args, size_t smem,
                               bool checked, bool &done)
{
    char *err = env.err;
    done = false;
    if (blocks > 0) {
        const cudaError_t e = cudaLaunchCooperativeKernel(kern, blocks, threads, args, smem, env.st);
        if (e == cudaSuccess) {
            PGPU_LAUNCHED();
            done = true;
            return PGPU_SUCCESS;
        }
        if (e != cudaErrorCooperativeLaunchTooLarge && e != cudaErrorNotSupported)
            return cuda_status(err, e, "cudaLaunchCooperativeKernel", PGPU_AT);
        (void)cudaGetLastError();
        blocks = 0;
        if (checked) {
            done = true; // nothing launched: the caller sees folds_checks() false
            return PGPU_SUCCESS;
        }
    }
    PGPU_RETURN_IF(checked, PGPU_ERROR_CUDA, "internal: the folded checks need the cooperative launch");
    return PGPU_SUCCESS;
}

// The transform of a non-periodic axis with faces lo and hi.
template <class T> static int fft_axis_kind(int lo, int hi)
{
    if (lo != hi) return lo == PGPU_BC_DIRICHLET ? FFT_DN : FFT_ND;
    if (lo == PGPU_BC_NEUMANN) return FFT_DCT2;
    return Tune<T>::dst_extension ? FFT_DST1X : FFT_DST1;
}
// The real transform's length for an axis of n nodes.
static int64_t fft_axis_len(int kind, int64_t n)
{
    return kind == FFT_DST1 ? n + 1 : kind == FFT_DST1X ? 2 * (n + 1) : fft_dn(kind) ? 2 * n + 1 : n;
}

template <class T> struct FftTypes;
template <> struct FftTypes<float> {
    static const cufftType R2C = CUFFT_R2C, C2R = CUFFT_C2R;
    static cufftResult r2c(cufftHandle p, float *i, float2 *o) { return cufftExecR2C(p, i, (cufftComplex *)o); }
    static cufftResult c2r(cufftHandle p, float2 *i, float *o) { return cufftExecC2R(p, (cufftComplex *)i, o); }
    static const cufftType C2C = CUFFT_C2C;
    static cufftResult c2c(cufftHandle p, float2 *d, int dir)
    {
        return cufftExecC2C(p, (cufftComplex *)d, (cufftComplex *)d, dir);
    }
};
template <> struct FftTypes<double> {
    static const cufftType R2C = CUFFT_D2Z, C2R = CUFFT_Z2D;
    static cufftResult r2c(cufftHandle p, double *i, double2 *o) { return cufftExecD2Z(p, i, (cufftDoubleComplex *)o); }
    static cufftResult c2r(cufftHandle p, double2 *i, double *o) { return cufftExecZ2D(p, (cufftDoubleComplex *)i, o); }
    static const cufftType C2C = CUFFT_Z2Z;
    static cufftResult c2c(cufftHandle p, double2 *d, int dir)
    {
        return cufftExecZ2Z(p, (cufftDoubleComplex *)d, (cufftDoubleComplex *)d, dir);
    }
};

// A cuFFT plan with the caller-owned work area (set later), bound to the
// stream; work grows to what the plan needs.  The work area is sized by
// cuFFT's size query (cufftGetSizeMany64 on a fresh handle: it plans and
// allocates nothing), which is all pgpu_workspace_size asks (env.mem.counting:
// no plan is made), so that the query and pgpu_create agree to the byte; the
// made plan's own figure counts too, should it ever be larger.
static pgpu_status make_plan(Env &env, std::vector<cufftHandle> &plans, cufftHandle &plan, size_t &work, int rank,
                             long long *n, long long *inembed, long long istride, long long idist, long long *onembed,
                             long long ostride, long long odist, cufftType type, long long batch)
{
    char *err = env.err;
    {
        cufftHandle q = 0;
        PGPU_CUFFT(cufftCreate(&q));
        size_t est = 0;
        const cufftResult r =
            cufftGetSizeMany64(q, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, &est);
        cufftDestroy(q);
        if (r != CUFFT_SUCCESS)
            return record(err, r == CUFFT_ALLOC_FAILED ? PGPU_ERROR_OUT_OF_MEMORY : PGPU_ERROR_CUDA,
                          "cufftGetSizeMany64 failed: %s [%s:%d]", cufft_name(r), PGPU_AT);
        work = std::max(work, est);
    }
    if (env.mem.counting) return PGPU_SUCCESS;
    const cudaStream_t st = env.st;
    PGPU_CUFFT(cufftCreate(&plan));
    plans.push_back(plan);
    PGPU_CUFFT(cufftSetAutoAllocation(plan, 0));
    size_t ws = 0;
    PGPU_CUFFT(cufftMakePlanMany64(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, &ws));
    PGPU_CUFFT(cufftSetStream(plan, st));
    work = std::max(work, ws);
    return PGPU_SUCCESS;
}

// A real-to-real transform along one axis of a packed real array W: a
// pre-processing pass into the scratch S, a cuFFT real transform into C, a
// post-processing pass back into W (the first and last of a solve may read
// f and write u instead: UserIO).
struct FftAxis {
    int kind; // FFT_DST1, FFT_DST1X, FFT_DCT2, FFT_RHC, FFT_DN or FFT_ND
    Lines L;  // (L.B: the lines of a chunk)
    int64_t lines = 0;            // all lines, taken in chunks of L.B (FFT_CHUNK)
    cufftHandle r2c = 0, c2r = 0; // the plans of a chunk
    cufftHandle r2c_rest = 0, c2r_rest = 0; // ... and of the last one, where it is shorter
    // A dense axis (no plans): its matrices forward and inverse (DenseMat
    // of T), its modes (DENSE_PLAIN, or FOLD forward and PAIR inverse) and
    // its tile's rows (dense_axis_kernel's TM).
    const void *dm[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};
    int dld[2] = {0, 0}, dne = 0, dnep = 0, dsym = 0, dtm = 0;
};

// Axis a of a packed array of extents d (plane stride P), transform kind:
// all its lines (their chunk size L.B is the plan's).
static void fft_axis_lines(FftAxis &fa, int a, int kind, const int64_t d[3], int64_t P)
{
    fa.kind = kind;
    fa.L.a = a;
    fa.L.n = (int)d[a];
    fa.L.nx = d[0];
    fa.L.ny = d[1];
    fa.L.nz = d[2];
    fa.L.P = P;
    fa.L.b0 = 0;
    fa.lines = d[0] * d[1] * d[2] / d[a];
}

// Lines per chunk when each takes `elems` elements of scratch (the
// test hook fft_chunk_elems lowers the bound to exercise chunks on small grids).
static int64_t fft_chunk_elems = FFT_CHUNK;
static int64_t fft_chunk_lines(int64_t lines, int64_t elems)
{
    return lines * elems <= fft_chunk_elems ? lines : std::max<int64_t>(1, fft_chunk_elems / elems);
}
// The plans of axis a of a packed array of extents d (plane stride P);
// s_elems / c_elems grow to the real / complex scratch it needs, scale is
// multiplied by its inverse's normalisation.
template <class T>
static pgpu_status fft_axis_plan(Env &env, std::vector<cufftHandle> &plans, FftAxis &fa, int a, int kind,
                                 const int64_t d[3], int64_t P, size_t &work, int64_t &s_elems, int64_t &c_elems,
                                 double &scale)
{
    const int64_t n = d[a];
    fft_axis_lines(fa, a, kind, d, P);
    const long long len = fft_axis_len(kind, n);
    const long long half = len / 2 + 1;
    fa.L.B = fft_chunk_lines(fa.lines, len);
    fa.L.small = std::max<int64_t>(P * d[2], fa.L.B * len) < ((int64_t)1 << 32);
    // A chunk of B lines: contiguous along x, else line b at b, stride B.
    auto chunk_plans = [&](long long B, cufftHandle &r2c, cufftHandle &c2r) -> pgpu_status {
        long long nn[1] = {len}, ie[1] = {len}, oe[1] = {half};
        const long long is = a == 0 ? 1 : B, id = a == 0 ? len : 1;
        const long long os = a == 0 ? 1 : B, od = a == 0 ? half : 1;
        PGPU_FORWARD(make_plan(env, plans, r2c, work, 1, nn, ie, is, id, oe, os, od, FftTypes<T>::R2C, B));
        if (kind == FFT_DCT2 || kind == FFT_RHC || fft_dn(kind))
            PGPU_FORWARD(make_plan(env, plans, c2r, work, 1, nn, oe, os, od, ie, is, id, FftTypes<T>::C2R, B));
        return PGPU_SUCCESS;
    };
    PGPU_FORWARD(chunk_plans(fa.L.B, fa.r2c, fa.c2r));
    if (fa.lines % fa.L.B) PGPU_FORWARD(chunk_plans(fa.lines % fa.L.B, fa.r2c_rest, fa.c2r_rest));
    const int64_t B = fa.L.B;
    s_elems = std::max<int64_t>(s_elems, B * len);
    c_elems = std::max<int64_t>(c_elems, B * half);
    scale *= kind == FFT_DCT2 || kind == FFT_RHC ? 1.0 / (double)n
             : fft_dn(kind)                      ? 1.0 / (double)(2 * n + 1)
                                                 : 2.0 / (double)(n + 1);
    return PGPU_SUCCESS;
}

// Where W's lines lie as the plans read the scratch S -- x lines of a
// packed W, or z lines (line b at b, stride the plane) -- a transform in
// natural order (FFT_RHC) reads and writes W itself.
template <class T> static bool fft_in_place(const Lines &L, const UserIO<T> &io)
{
    return !io.read && !io.write && L.P == L.nx * L.ny && (L.a == 0 || L.a == 2);
}

// One chunk of lines L of the axis fa, by the plans r2c / c2r.
template <class T>
static pgpu_status fft_chunk_run(Env &env, const FftAxis &fa, const Lines &L, cufftHandle r2c, cufftHandle c2r,
                                 bool inverse, const UserIO<T> &io, T *W, T *S, typename Cplx<T>::type *C)
{
    char *err = env.err;
    const cudaStream_t st = env.st;
    const int sms = env.sms;
    const int64_t len = fft_axis_len(fa.kind, L.n);
    const bool whole = L.B == fa.lines; // in place needs the plans' layout of W: one chunk
    if (fft_dn(fa.kind)) {
        const bool rev = fa.kind == FFT_ND;
        if (!inverse) {
            if (rev) dn_pre_kernel<T, true><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
            else dn_pre_kernel<T, false><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
            PGPU_LAUNCHED();
            PGPU_CUFFT(FftTypes<T>::r2c(r2c, S, C));
            dn_post_kernel<T><<<grid_for(L.B * L.n, sms), 256, 0, st>>>(L, C, W);
            PGPU_LAUNCHED();
        } else {
            dn_inverse_pre_kernel<T><<<grid_for(L.B * (L.n + 1), sms), 256, 0, st>>>(L, W, C);
            PGPU_LAUNCHED();
            PGPU_CUFFT(FftTypes<T>::c2r(c2r, C, S));
            if (rev) dn_inverse_post_kernel<T, true><<<grid_for(L.B * L.n, sms), 256, 0, st>>>(L, io, S, W);
            else dn_inverse_post_kernel<T, false><<<grid_for(L.B * L.n, sms), 256, 0, st>>>(L, io, S, W);
            PGPU_LAUNCHED();
        }
    } else if (fa.kind == FFT_DST1X) {
        dst1x_pre_kernel<T><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
        PGPU_LAUNCHED();
        PGPU_CUFFT(FftTypes<T>::r2c(r2c, S, C));
        dst1x_post_kernel<T><<<grid_for(L.B * L.n, sms), 256, 0, st>>>(L, io, C, W);
        PGPU_LAUNCHED();
    } else if (fa.kind == FFT_DST1) {
        dst1_pre_kernel<T><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
        PGPU_LAUNCHED();
        PGPU_CUFFT(FftTypes<T>::r2c(r2c, S, C));
        if (L.a == 0) dst1_post_x_kernel<T><<<grid_for(L.B * 32, sms), 256, 0, st>>>(L, io, C, W);
        else dst1_post_kernel<T><<<grid_for(L.B, sms), 256, 0, st>>>(L, io, C, W);
        PGPU_LAUNCHED();
    } else if (!inverse) {
        const bool hc = fa.kind == FFT_RHC;
        if (hc && whole && fft_in_place(L, io)) {
            PGPU_CUFFT(FftTypes<T>::r2c(r2c, W, C));
        } else {
            if (hc) dct2_pre_kernel<T, false><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
            else dct2_pre_kernel<T, true><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
            PGPU_LAUNCHED();
            PGPU_CUFFT(FftTypes<T>::r2c(r2c, S, C));
        }
        if (hc) rhc_post_kernel<T><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, C, W);
        else dct2_post_kernel<T><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, C, W);
        PGPU_LAUNCHED();
    } else {
        const bool hc = fa.kind == FFT_RHC;
        if (hc) hcr_pre_kernel<T><<<grid_for(L.B * (len / 2 + 1), sms), 256, 0, st>>>(L, W, C);
        else dct3_pre_kernel<T><<<grid_for(L.B * (len / 2 + 1), sms), 256, 0, st>>>(L, W, C);
        PGPU_LAUNCHED();
        if (hc && whole && fft_in_place(L, io)) {
            PGPU_CUFFT(FftTypes<T>::c2r(c2r, C, W));
        } else {
            PGPU_CUFFT(FftTypes<T>::c2r(c2r, C, S));
            if (hc) dct3_post_kernel<T, false><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, S, W);
            else dct3_post_kernel<T, true><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, S, W);
            PGPU_LAUNCHED();
        }
    }
    return PGPU_SUCCESS;
}

// Axis fa of W, every chunk of its lines.
template <class T>
static pgpu_status fft_axis_run(Env &env, const FftAxis &fa, bool inverse, const UserIO<T> &io, T *W, T *S,
                                typename Cplx<T>::type *C)
{
    for (int64_t b0 = 0; b0 < fa.lines; b0 += fa.L.B) {
        Lines L = fa.L;
        L.b0 = b0;
        L.B = std::min(fa.L.B, fa.lines - b0);
        const bool rest = L.B < fa.L.B;
        PGPU_FORWARD(fft_chunk_run<T>(env, fa, L, rest ? fa.r2c_rest : fa.r2c, rest ? fa.c2r_rest : fa.c2r, inverse,
                                      io, W, S, C));
    }
    return PGPU_SUCCESS;
}

// The largest prime factor of m (m >= 1).
static int64_t fft_prime_max(int64_t m)
{
    int64_t p = 1;
    for (int64_t d = 2; d * d <= m; ++d)
        while (m % d == 0) {
            p = d;
            m /= d;
        }
    return m > 1 ? m : p;
}

// Whether an axis of n nodes and transform `kind` of a grid of N points is
// transformed by a dense product (config.h: DENSE_NMAX, DENSE_GRID_MAX).
static bool fft_dense_axis(int kind, int64_t n, int64_t N)
{
    return n <= DENSE_NMAX && N <= DENSE_GRID_MAX && fft_prime_max(fft_axis_len(kind, n)) > 7;
}

// A dense axis: its lines (all in one launch) and its matrices from
// fdm_basis for faces lo, hi and spacing h (DenseMat).
template <class T>
static pgpu_status fft_dense_plan(Env &env, FftAxis &fa, int a, int kind, int lo, int hi, double h, const int64_t d[3],
                                  int64_t P)
{
    const int64_t n = d[a];
    fft_axis_lines(fa, a, kind, d, P);
    fa.L.B = fa.lines;
    fa.L.small = P * d[2] < ((int64_t)1 << 32);
    std::vector<double> q, lam;
    fdm_basis(lo, hi, n, h, q, lam);
    const int64_t ne = (n + 1) / 2, no = n / 2;
    fa.dsym = lo == hi && lo != PGPU_BC_PERIODIC; // Q's columns even or odd about the middle
    fa.dtm = (fa.dsym ? ne : n) <= 16 * DENSE_TM_SMALL ? DENSE_TM_SMALL : DENSE_TM;
    const int64_t bm = 16 * fa.dtm;
    fa.dne = (int)ne;
    fa.dnep = (int)((ne + bm - 1) / bm * bm);
    auto Q = [&](int64_t i, int64_t k) { return q[(size_t)(i * n + k)]; };
    std::vector<T> m;
    size_t off[2][2] = {{0, 0}, {0, 0}};
    if (!fa.dsym) {
        fa.dld[0] = fa.dld[1] = (int)n;
        m.resize((size_t)(2 * n * n));
        off[1][0] = (size_t)(n * n);
        for (int64_t c = 0; c < n; ++c)
            for (int64_t k = 0; k < n; ++k) {
                m[(size_t)(c * n + k)] = (T)Q(c, k);         // forward: Q^T
                m[(size_t)(n * n + c * n + k)] = (T)Q(k, c); // inverse: Q
            }
    } else {
        const int64_t ld = fa.dnep + no;
        fa.dld[0] = (int)ld;
        fa.dld[1] = (int)ne;
        m.assign((size_t)(n * ld + ne * ne + no * ne), T(0));
        for (int64_t c = 0; c < ne; ++c) // forward, the even modes from x[c] + x[n-1-c]
            for (int64_t r = 0; r < ne; ++r) m[(size_t)(c * ld + r)] = (T)Q(c, 2 * r);
        for (int64_t c = 0; c < no; ++c) // ... the odd ones from x[c] - x[n-1-c]
            for (int64_t r = 0; r < no; ++r) m[(size_t)((ne + c) * ld + fa.dnep + r)] = (T)Q(c, 2 * r + 1);
        off[1][0] = (size_t)(n * ld);
        off[1][1] = off[1][0] + (size_t)(ne * ne);
        for (int64_t c = 0; c < ne; ++c) // inverse: E from the even modes,
            for (int64_t i = 0; i < ne; ++i) m[off[1][0] + (size_t)(c * ne + i)] = (T)Q(i, 2 * c);
        for (int64_t c = 0; c < no; ++c) // O from the odd ones
            for (int64_t i = 0; i < no; ++i) m[off[1][1] + (size_t)(c * ne + i)] = (T)Q(i, 2 * c + 1);
    }
    T *dm = nullptr;
    PGPU_FORWARD(env.upload(m, &dm, "FFT dense transforms"));
    for (int v = 0; v < 2; ++v)
        for (int w = 0; w < 2; ++w) fa.dm[v][w] = dm + off[v][w];
    return PGPU_SUCCESS;
}

template <class T, int TM, int MODE>
static void fft_dense_launch(Env &env, const FftAxis &fa, bool inverse, const UserIO<T> &io, const T *W, T *Y)
{
    constexpr int TN = Tune<T>::dense_tn, BM = 16 * TM, BN = 16 * TN;
    const int v = inverse ? 1 : 0;
    const DenseMat<T> M{(const T *)fa.dm[v][0], (const T *)fa.dm[v][1], fa.dld[v], fa.dne, fa.dnep};
    const int64_t rows = MODE == DENSE_PAIR ? (fa.dne + BM / 2 - 1) / (BM / 2) : (M.ld + BM - 1) / BM;
    const dim3 grid((unsigned)((fa.lines + BN - 1) / BN), (unsigned)rows);
    dense_axis_kernel<T, TM, TN, MODE><<<grid, DENSE_T, 0, env.st>>>(fa.L, io, M, W, Y);
}

// A dense axis fa from W into Y (or u: io.write).
template <class T>
static pgpu_status fft_dense_run(Env &env, const FftAxis &fa, bool inverse, const UserIO<T> &io, const T *W, T *Y)
{
    char *err = env.err;
    const int mode = !fa.dsym ? DENSE_PLAIN : inverse ? DENSE_PAIR : DENSE_FOLD;
    auto go = [&](auto tm) {
        constexpr int TM = decltype(tm)::value;
        if (mode == DENSE_PLAIN) fft_dense_launch<T, TM, DENSE_PLAIN>(env, fa, inverse, io, W, Y);
        else if (mode == DENSE_FOLD) fft_dense_launch<T, TM, DENSE_FOLD>(env, fa, inverse, io, W, Y);
        else fft_dense_launch<T, TM, DENSE_PAIR>(env, fa, inverse, io, W, Y);
    };
    if (fa.dtm == DENSE_TM) go(std::integral_constant<int, DENSE_TM>());
    else go(std::integral_constant<int, DENSE_TM_SMALL>());
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// The distributed solve's plan (dist.h builds and runs it): the layouts the
// data passes through -- each split along one axis over the ranks, every
// rank's range on it -- and the steps, in forward order: axis transforms
// in the layout where the axis is whole, moves between layouts, and the
// solve last.
// The all-periodic distributed route's plan (plan_dist_rows): the row
// kernels on each slab's planes in `chunks` chunks, chunk c of every rank's
// planes at zc0[r * (chunks + 1) + c]; the x modes split over the ranks
// (kxlo, kxn).  C holds this rank's spectrum, then its x modes on the other
// ranks' planes: block (rank q, chunk c) at C + roff[q * (chunks + 1) + c]
// (for this rank, its block of C's chunk), plane z's at ztab[2 z], C's
// length elems.
struct DistRows {
    int chunks = 0;
    std::vector<int64_t> zlo, zn, zc0, kxlo, kxn, roff, ztab;
    int64_t elems = 0;
};

template <class T> struct FftDist : DistRows {
    struct Layout {
        int s = 0;                  // the split axis
        std::vector<int64_t> lo, n; // every rank's first node and count on it
        int64_t d[3] = {1, 1, 1};   // this rank's extents (packed, x fastest)
        int64_t vol = 0;
    };
    enum { STEP_AXIS, STEP_MOVE, STEP_SOLVE };
    struct Step {
        int what = STEP_AXIS;
        int lay = 0, to = 0; // the layout it runs in (STEP_MOVE: from lay to `to`)
        FftAxis ax{};
    };
    std::vector<Layout> lay;
    std::vector<Step> steps;
    Spectrum<T> spec{};
    int tri = -1;                        // the axis solved by line solves (a mixed one), or -1
    const T *cl = nullptr, *ch = nullptr; // its global coefficients
    double *piv = nullptr;
    T *W = nullptr, *S = nullptr; // the data; scratch and send buffer
    typename Cplx<T>::type *C = nullptr; // complex scratch and receive buffer
    int64_t wp = 0;               // W's plane stride in layout 0
    // The all-periodic 3D route (init_dist_rows; its plan the base
    // DistRows): zt the plane table on the device; the moves go on the
    // stream cs, ordered against the solve's by the events ev.
    bool rows = false;
    int64_t *zt = nullptr;
    std::vector<std::pair<int64_t, cufftHandle>> yplans; // (planes, the y transforms of a chunk of that many)
    cudaStream_t cs = nullptr;
    std::vector<cudaEvent_t> ev;
    ~FftDist()
    {
        for (cudaEvent_t e : ev) cudaEventDestroy(e);
        if (cs) cudaStreamDestroy(cs);
    }
};

template <class T> class FftSolver {
  public:
    ~FftSolver()
    {
        for (cufftHandle p : plans) cufftDestroy(p);
    }
    pgpu_status init(Env &env, const pgpu_config &cfg, const Level<T> &L0);
    // u = the solution for f + boundary terms - *shift (a device pointer);
    // every launch on env.st, none waited for.
    pgpu_status run(T *u, const T *f, const T *shift);
    // A tridiagonal axis with Neumann faces at both ends leaves the constant
    // undetermined: the caller removes u's mean; and the shift must be the
    // mean of a singular right-hand side (the other routes drop the zero mode).
    bool line_solve() const { return tri >= 0; }
    // A solve whose default-path checks fold into its one launch (2D: the
    // dense transforms, fdm2_kernel, where the problem is not singular; the
    // all-Dirichlet rows, dr2_kernel): run_checked leaves the scan's and the
    // residual's totals in res[RES_SCAN ..] and res[RES_NORM ..] and u
    // untouched unless the data pass dr_data_ok.
    // (A device that refuses the launch turns folds_checks() false and
    // run_checked launches nothing.)
    bool folds_checks() const
    {
        return !dist && (rows_f ? (fdmc.C > 0 || fdm_blocks > 0) && !fdm_singular
                                : rows_d && cfg.nz == 1 && dr_blocks > 0);
    }
    pgpu_status run_checked(T *u, const T *f, double *res) { return rows_f ? run_fdm(u, f, res) : run_dr(u, f, res); }
    // The plans' stream (pgpu_set_stream).
    pgpu_status set_stream(char *err, cudaStream_t st)
    {
        for (cufftHandle p : plans) PGPU_CUFFT(cufftSetStream(p, st));
        return PGPU_SUCCESS;
    }

  private:
    typedef typename Cplx<T>::type C2;
    Env *env = nullptr;
    pgpu_config cfg{};
    const Level<T> *lv0 = nullptr; // the level-0 grid and launches
    std::vector<FftAxis> fax; // real-to-real axes, in forward order
    std::vector<cufftHandle> plans;
    int tri = -1;             // axis solved by tridiagonal systems
    bool tri_nn = false;      // ... with Neumann at both ends
    int pmask = 0;            // periodic axes
    cufftHandle p_r2c = 0, p_c2r = 0;
    int p_loops = 1;          // executions of the periodic plans (one per z plane in one case)
    int64_t wp = 0;           // W's plane stride
    int64_t p_in_step = 0, p_out_step = 0;
    bool rows_x = false;      // x by our row kernels, y and z by p_c2c (see lf_forward_kernel)
    bool rows_z = false;      // ... and z by lf_zsolve_kernel, y alone by p_c2c
    cufftHandle p_c2c = 0;
    C2 *lf_tw = nullptr, *lf_twz = nullptr; // e^{-i pi q/N}, q < 2N = nx (for z: 2 nz)
    size_t lf_smem = 0, lf_zsmem = 0;
    void lf_fits(int64_t nx, int64_t nz, bool &x, bool &z) const;
    pgpu_status lf_prepare(int64_t nx, int64_t nz);
    T *W = nullptr, *S = nullptr;
    double *piv = nullptr; // the tridiagonal lines' pivots, for a chunk of tri_chunk lines
    int64_t tri_chunk = 0;
    C2 *C = nullptr, *Z = nullptr;
    Spectrum<T> spec{};
    bool rows_d = false;            // all Dirichlet by dr_kernel (see there)
    DrAxis<T> dra[3] = {};          // the row plans of x, y, z
    T *T1 = nullptr, *T2 = nullptr; // its transposed spectra (2D: T1 alone)
    const T *dr_ev[3] = {};         // eigenvalues per axis
    T dr_scale = 1;
    int dr_blocks = 0;              // 2D: dr2_kernel's blocks (0: the device cannot launch it)
    size_t dr_smem = 0;             // ... and its shared memory
    double *dr_part = nullptr;      // ... and its partials
    pgpu_status init_dr();
    pgpu_status row_twiddles(int64_t m, C2 **d);
    pgpu_status run_dr(T *u, const T *f, double *res = nullptr);
    bool rows_f = false;      // 2D by dense transforms, fdm2_kernel (see there)
    bool fdm_singular = false; // ... with a zero eigenvalue (no Dirichlet face)
    FdmArgs<T> fdm{};         // ... its data
    int fdm_blocks = 0;       // ... and its blocks (0: the device cannot launch it)
    FdmcTables fdmc{};        // ... or its cluster (fdmc_kernel; C 0: none)
    pgpu_status init_fdm();
    pgpu_status init_fdmc(const std::vector<double> (&q)[2], const std::vector<double> (&lam)[2]);
    pgpu_status run_fdm(T *u, const T *f, double *res = nullptr);
    // The distributed mode (dist.h): transforms on slabs and pencils of
    // the global grid, transposed between them.
    std::unique_ptr<FftDist<T>> dist;
    pgpu_status init_dist();
    pgpu_status run_dist(T *u, const T *f, const T *shift);
    pgpu_status dist_move(int from, int to);
    pgpu_status init_dist_rows();
    pgpu_status run_dist_rows(T *u, const T *f, const T *shift);
    pgpu_status dist_swap(int c, bool back);
};

template <class T> pgpu_status FftSolver<T>::init(Env &en, const pgpu_config &c, const Level<T> &l0)
{
    env = &en;
    cfg = c;
    lv0 = &l0;
    if (en.dist && en.dist->ranks > 1) return init_dist(); // (one rank: the slab is the grid)
    char *err = en.err;
    const bool is3d = cfg.nz > 1;
    const int dims = is3d ? 3 : 2;
    const int64_t n[3] = {cfg.nx, cfg.ny, is3d ? cfg.nz : 1};
    const double h[3] = {cfg.hx, cfg.hy, cfg.hz};
    const int64_t N = n[0] * n[1] * n[2];
    int mixed = -1; // the last axis with a Dirichlet and a Neumann face (the others: FFT_DN / FFT_ND)
    for (int a = 0; a < dims; ++a) {
        const int lo = cfg.bc[2 * a], hi = cfg.bc[2 * a + 1];
        if (lo == PGPU_BC_PERIODIC) pmask |= 1 << a;
        else if (lo != hi) mixed = a;
    }
    const int all = is3d ? 7 : 3;
    // The all-Dirichlet row kernels, where the size fits them and their
    // shared memory the device, on 2D grids only past FDM_ROWS_MIN a side;
    // else on a 2D grid of at most FDM_NMAX a side the dense transforms
    // (before the all-periodic rows and cuFFT too: see config.h).
    if (is3d || std::max(cfg.nx, cfg.ny) > FDM_ROWS_MIN) PGPU_FORWARD(init_dr());
    if (!rows_d) PGPU_FORWARD(init_fdm());
    if (rows_d || rows_f) return PGPU_SUCCESS;
    if (pmask == all) lf_fits(cfg.nx, is3d ? cfg.nz : 0, rows_x, rows_z);
    if (pmask != all) {
        tri = mixed;
        for (int a = dims - 1; tri < 0 && a >= 0; --a)
            if (!((pmask >> a) & 1)) tri = a;
        tri_nn = cfg.bc[2 * tri] == PGPU_BC_NEUMANN && cfg.bc[2 * tri + 1] == PGPU_BC_NEUMANN;
    }
    // cuFFT reads W plane by plane when y is the only periodic axis of a 3D
    // problem: keep every plane aligned to the complex type.
    wp = n[0] * n[1];
    if (is3d && pmask == 2 && (wp & 1)) ++wp;
    const int64_t wsize = wp * n[2];
    size_t work = 0;
    int64_t s_elems = 0, c_elems = 1;
    double scale = 1;
    bool dense = false; // an axis by dense products
    const cufftType R2C = FftTypes<T>::R2C, C2R = FftTypes<T>::C2R;
    // Real-to-real axes.
    for (int a = 0; a < dims; ++a) {
        if (a == tri || ((pmask >> a) & 1)) continue;
        FftAxis fa;
        const int kind = fft_axis_kind<T>(cfg.bc[2 * a], cfg.bc[2 * a + 1]);
        if (fft_dense_axis(kind, n[a], N)) {
            PGPU_FORWARD(fft_dense_plan<T>(en, fa, a, kind, cfg.bc[2 * a], cfg.bc[2 * a + 1], h[a], n, wp));
            dense = true;
        } else {
            PGPU_FORWARD(fft_axis_plan<T>(en, plans, fa, a, kind, n, wp, work, s_elems, c_elems, scale));
        }
        fax.push_back(fa);
    }
    // Periodic axes: one real-to-complex transform over all of them; the
    // fastest of them is halved.
    int64_t e[3] = {n[0], n[1], n[2]};
    if (pmask) {
        int hx = 0;
        while (!((pmask >> hx) & 1)) ++hx;
        e[hx] = n[hx] / 2 + 1;
        for (int a = 0; a < dims; ++a)
            if ((pmask >> a) & 1) scale /= (double)n[a];
        const int64_t E = e[0] * e[1] * e[2];
        c_elems = std::max<int64_t>(c_elems, E);
        long long pn[3], ie[3], oe[3], is = 1, id = 1, os = 1, od = 1, batch = 1;
        int rank = 0;
        {
            switch (pmask) {
            case 1: // x
                rank = 1; pn[0] = n[0]; ie[0] = n[0]; oe[0] = e[0]; id = n[0]; od = e[0]; batch = n[1] * n[2]; break;
            case 2: // y: batches over x (stride 1); in 3D one execution per z plane
                rank = 1; pn[0] = n[1]; ie[0] = n[1]; oe[0] = e[1]; is = n[0]; os = n[0]; batch = n[0];
                p_loops = (int)n[2]; p_in_step = wp; p_out_step = n[0] * e[1]; break;
            case 4: // z
                rank = 1; pn[0] = n[2]; ie[0] = n[2]; oe[0] = e[2]; is = n[0] * n[1]; os = n[0] * e[1]; batch = n[0] * n[1]; break;
            case 3: // x, y (batched over z)
                rank = 2; pn[0] = n[1]; pn[1] = n[0]; ie[0] = n[1]; ie[1] = n[0]; oe[0] = n[1]; oe[1] = e[0];
                id = n[0] * n[1]; od = e[0] * n[1]; batch = n[2]; break;
            case 5: // x, z (batched over y)
                rank = 2; pn[0] = n[2]; pn[1] = n[0]; ie[0] = n[2]; ie[1] = n[0] * n[1]; oe[0] = n[2]; oe[1] = e[0] * n[1];
                id = n[0]; od = e[0]; batch = n[1]; break;
            case 6: // y, z (batched over x)
                rank = 2; pn[0] = n[2]; pn[1] = n[1]; ie[0] = n[2]; ie[1] = n[1]; oe[0] = n[2]; oe[1] = e[1];
                is = n[0]; os = n[0]; id = 1; od = 1; batch = n[0]; break;
            default: // all three, through W (strides cuFFT cannot express)
                rank = 3; pn[0] = n[2]; pn[1] = n[1]; pn[2] = n[0]; ie[0] = n[2]; ie[1] = n[1]; ie[2] = n[0];
                oe[0] = n[2]; oe[1] = n[1]; oe[2] = e[0]; id = N; od = E; batch = 1;
            }
        }
        if (rows_z) { // y alone: contiguous lines of C[kx][z][y]
            long long ny1[1] = {n[1]};
            PGPU_FORWARD(make_plan(en, plans, p_c2c, work, 1, ny1, ny1, 1, n[1], ny1, 1, n[1], FftTypes<T>::C2C,
                                   e[0] * n[2]));
        } else if (rows_x) { // y (and z) complex, C[kx][z][y]: one contiguous transform per x mode
            rank = is3d ? 2 : 1;
            pn[0] = is3d ? n[2] : n[1];
            pn[1] = n[1];
            const long long d = n[1] * n[2];
            PGPU_FORWARD(make_plan(en, plans, p_c2c, work, rank, pn, pn, 1, d, pn, 1, d, FftTypes<T>::C2C, e[0]));
        } else {
            PGPU_FORWARD(make_plan(en, plans, p_r2c, work, rank, pn, ie, is, id, oe, os, od, R2C, batch));
            PGPU_FORWARD(make_plan(en, plans, p_c2r, work, rank, pn, oe, os, od, ie, is, id, C2R, batch));
        }
    }
    // Eigenvalues per transformed axis (in the mode order of the spectral array).
    std::vector<T> ev;
    size_t eoff[3] = {0, 0, 0};
    for (int a = 0; a < dims; ++a) {
        eoff[a] = ev.size();
        if (a == tri) continue;
        const int kind = ((pmask >> a) & 1) ? FFT_DFT : fft_axis_kind<T>(cfg.bc[2 * a], cfg.bc[2 * a + 1]);
        for (int64_t k = 0; k < e[a]; ++k) ev.push_back((T)fft_eigen(kind, n[a], h[a], k));
    }
    T *d_ev = nullptr;
    PGPU_FORWARD(env->upload(ev, &d_ev, "FFT eigenvalues"));
    spec.e0 = e[0];
    spec.e1 = e[1];
    spec.e2 = e[2];
    spec.ev0 = tri == 0 ? nullptr : d_ev + eoff[0];
    spec.ev1 = tri == 1 ? nullptr : d_ev + eoff[1];
    spec.ev2 = (!is3d || tri == 2) ? nullptr : d_ev + eoff[2];
    spec.scale = (T)scale;
    if (rows_x) { // C[kx][z][y]: y fastest, then z, then the x modes
        spec.e0 = e[1];
        spec.ev0 = d_ev + eoff[1];
        spec.e1 = is3d ? e[2] : e[0];
        spec.ev1 = d_ev + eoff[is3d ? 2 : 0];
        spec.e2 = is3d ? e[0] : 1;
        spec.ev2 = is3d ? d_ev + eoff[0] : nullptr;
    }
    // Buffers: W (real data), S (real scratch; in double also the tridiagonal pivots),
    // C / Z (complex scratch and spectrum; one array serves both).
    if (tri >= 0) tri_chunk = fft_chunk_lines(e[0] * e[1] * e[2] / e[tri], e[tri]);
    const int64_t piv_elems = tri >= 0 ? tri_chunk * e[tri] : 0;
    // A dense axis writes the other of W and S (fft_dense_run): both hold the
    // packed grid, and the pivots have their own array.
    const int64_t w_size = dense ? std::max<int64_t>(wsize, std::max<int64_t>(s_elems, c_elems)) : wsize;
    if (!rows_x) PGPU_FORWARD(env->mem.alloc(err, (void **)&W, (size_t)w_size * sizeof(T), "FFT data"));
    if (!fax.empty() || tri >= 0) {
        int64_t s_size = dense ? w_size : std::max<int64_t>(s_elems, c_elems);
        if (sizeof(T) == sizeof(double) && !dense) s_size = std::max(s_size, piv_elems);
        PGPU_FORWARD(env->mem.alloc(err, (void **)&S, (size_t)s_size * sizeof(T), "FFT scratch"));
    }
    // The line solves' pivots, in double (see tri_kernel): S itself in double.
    if (tri >= 0) {
        if (sizeof(T) == sizeof(double) && !dense) piv = (double *)S;
        else PGPU_FORWARD(env->mem.alloc(err, (void **)&piv, (size_t)piv_elems * sizeof(double), "FFT line pivots"));
    }
    if (!fax.empty() || pmask)
        PGPU_FORWARD(env->mem.alloc(err, (void **)&C, (size_t)c_elems * sizeof(C2), "FFT spectrum"));
    Z = C;
    if (rows_x) PGPU_FORWARD(lf_prepare(n[0], rows_z ? n[2] : 0));
    void *wa = nullptr;
    if (work) {
        PGPU_FORWARD(env->mem.alloc(err, &wa, work, "cuFFT work area"));
        for (cufftHandle p : plans) PGPU_CUFFT(cufftSetWorkArea(p, wa)); // (no plans while counting)
    }
    return PGPU_SUCCESS;
}

// Whether the all-periodic row kernels take x rows of nx reals (x) and z
// lines of nz complex values (z; nz = 0: none) within the device's shared memory.
template <class T> void FftSolver<T>::lf_fits(int64_t nx, int64_t nz, bool &x, bool &z) const
{
    const size_t x_room = (size_t)env->optin - sizeof(int64_t) * LF_T; // less the static row starts
    x = nx >= LF_MIN && nx <= LF_MAX && (nx & (nx - 1)) == 0 && lf_smem_bytes<T>((int)nx, true) <= x_room;
    z = x && nz >= LF_ZMIN && nz <= LF_ZMAX && (nz & (nz - 1)) == 0 &&
        lf_smem_bytes<T>(2 * (int)nz, false) <= (size_t)env->optin;
}

// The row kernels' twiddles (row_twiddles: m = nx for x; 2 nz for z) and
// shared memory, for x rows of nx reals and (nz > 0) z lines of nz.
template <class T> pgpu_status FftSolver<T>::lf_prepare(int64_t nx, int64_t nz)
{
    Env &en = *env;
    char *err = en.err;
    const size_t x_room = (size_t)en.optin - sizeof(int64_t) * LF_T;
    PGPU_FORWARD(row_twiddles(nx, &lf_tw));
    lf_smem = lf_smem_bytes<T>((int)nx, true);
    const int most = (int)std::min(lf_smem_most<T>(true), x_room);
    PGPU_CUDA_SETUP(en, cudaFuncSetAttribute(lf_forward_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
    PGPU_CUDA_SETUP(en, cudaFuncSetAttribute(lf_inverse_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
    if (nz > 0) {
        PGPU_FORWARD(row_twiddles(2 * nz, &lf_twz));
        lf_zsmem = lf_smem_bytes<T>(2 * (int)nz, false);
        const int zmost = (int)std::min(lf_smem_most<T>(false), (size_t)en.optin);
        PGPU_CUDA_SETUP(en, cudaFuncSetAttribute(lf_zsolve_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, zmost));
    }
    return PGPU_SUCCESS;
}

// Twiddles of the row kernels: e^{-2 pi i q/m}, q < m (for a row FFT of
// length N, m = 2N: tw[q] = e^{-i pi q/N}).
template <class T> pgpu_status FftSolver<T>::row_twiddles(int64_t m, C2 **d)
{
    std::vector<C2> tw((size_t)m);
    for (int64_t q = 0; q < m; ++q) {
        const double a = -2.0 * M_PI * (double)q / (double)m;
        tw[(size_t)q].x = (T)std::cos(a);
        tw[(size_t)q].y = (T)std::sin(a);
    }
    return env->upload(tw, d, "FFT row twiddles");
}

// A 2D grid of at most FDM_NMAX nodes a side, any faces: fdm2_kernel.  Its
// data: the four factors (fdm_basis's Q and Q^T per axis, rounded to T),
// the eigenvalues, the spectrum T1 (N words) and the partials of one
// block per row.
template <class T> pgpu_status FftSolver<T>::init_fdm()
{
    char *err = env->err;
    if (cfg.nz != 1 || cfg.nx > FDM_NMAX || cfg.ny > FDM_NMAX) return PGPU_SUCCESS;
    const int64_t nx = cfg.nx, ny = cfg.ny;
    std::vector<double> q[2], lam[2];
    fdm_basis(cfg.bc[0], cfg.bc[1], nx, cfg.hx, q[0], lam[0]);
    fdm_basis(cfg.bc[2], cfg.bc[3], ny, cfg.hy, q[1], lam[1]);
    std::vector<T> d;
    size_t off[6];
    auto put = [&](int k, const std::vector<double> &m, int64_t n, bool tr) {
        off[k] = d.size();
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) d.push_back((T)(tr ? m[(size_t)(j * n + i)] : m[(size_t)(i * n + j)]));
    };
    put(0, q[1], ny, true);  // phase 0: Qy^T on the left,
    put(1, q[0], nx, false); // Qx on the right;
    put(2, q[1], ny, false); // phase 1: Qy on the left,
    put(3, q[0], nx, true);  // Qx^T on the right
    for (int a = 0; a < 2; ++a) {
        off[4 + a] = d.size();
        for (double v : lam[a]) d.push_back((T)v);
    }
    T *dd = nullptr;
    PGPU_FORWARD(env->upload(d, &dd, "FFT dense transforms"));
    rows_f = true;
    fdm_singular = lam[0][0] + lam[1][0] == 0;
    FdmArgs<T> &A = fdm;
    A.g = lv0->g;
    A.P[0][0] = dd + off[0];
    A.P[0][1] = dd + off[1];
    A.P[1][0] = dd + off[2];
    A.P[1][1] = dd + off[3];
    A.lx = dd + off[4];
    A.ly = dd + off[5];
    A.nx = (int)nx;
    A.ny = (int)ny;
    PGPU_FORWARD(env->mem.alloc(err, (void **)&A.T1, (size_t)(nx * ny) * sizeof(T), "FFT spectrum"));
    PGPU_FORWARD(env->mem.alloc(err, (void **)&A.part, (size_t)ny * 6 * sizeof(double), "FFT partials"));
    PGPU_FORWARD(init_fdmc(q, lam));
    if (env->mem.counting) return PGPU_SUCCESS;
    int coop = 0, per_sm = 0;
    PGPU_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, env->device));
    if (!coop) return PGPU_SUCCESS;
    const void *k2[2] = {(const void *)fdm2_kernel<T, true>, (const void *)fdm2_kernel<T, false>};
    for (int v = 0; v < 2; ++v) {
        int b = 0;
        PGPU_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k2[v], FDM_T, 0));
        per_sm = v ? std::min(per_sm, b) : b;
    }
    fdm_blocks = (int)std::min<int64_t>(ny, (int64_t)per_sm * env->sms);
    return PGPU_SUCCESS;
}

// The cluster route (fdmc_kernel) for grids of at most FDMC_NMAX a side:
// its tables (uploaded wherever the grid allows the route, so that the
// workspace does not depend on the device), then the route itself where
// the code runs as built for sm_90 on and one cluster of C blocks fits.
template <class T> pgpu_status FftSolver<T>::init_fdmc(const std::vector<double> (&q)[2], const std::vector<double> (&lam)[2])
{
    char *err = env->err;
    const int64_t nx = cfg.nx, ny = cfg.ny;
    if (nx > FDMC_NMAX || ny > FDMC_NMAX) return PGPU_SUCCESS;
    const int C = ny > 8 ? FDMC_C : 8;
    int use = 0;
    const void *kc[2] = {(const void *)fdmc_kernel<T, true>, (const void *)fdmc_kernel<T, false>};
    if (!env->mem.counting) {
        cudaFuncAttributes fa;
        PGPU_CUDA(cudaFuncGetAttributes(&fa, kc[0]));
        int major = 0, cluster = 0;
        PGPU_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, env->device));
        PGPU_CUDA(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, env->device));
        use = fa.ptxVersion >= 90 && major >= 9 && cluster && FDMC_SMEM <= (size_t)env->optin;
        for (int v = 0; v < 2 && use; ++v) {
            PGPU_CUDA(cudaFuncSetAttribute(kc[v], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)FDMC_SMEM));
            if (C > 8) PGPU_CUDA(cudaFuncSetAttribute(kc[v], cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
            cudaLaunchConfig_t lc = {};
            cudaLaunchAttribute at[1];
            fdmc_config(C, lc, at, env->st);
            int fits = 0;
            if (cudaOccupancyMaxActiveClusters(&fits, kc[v], &lc) != cudaSuccess) {
                (void)cudaGetLastError();
                fits = 0;
            }
            use = fits > 0;
        }
    }
    std::vector<double> la, lb, rx, rxt;
    fdmc_tables(q, nx, ny, C, la, lb, rx, rxt);
    double *d[6] = {};
    const std::vector<double> *h[6] = {&la, &lb, &rx, &rxt, &lam[0], &lam[1]};
    for (int k = 0; k < 6; ++k) PGPU_FORWARD(env->upload(*h[k], &d[k], "FFT cluster tables"));
    fdmc = FdmcTables{d[0], d[1], d[2], d[3], d[4], d[5], use ? C : 0, (int)((ny + C - 1) / C)};
    return PGPU_SUCCESS;
}

// One cooperative launch (with res: the default path's checks in it), or
// its two phases as launches of their own where the device cannot.
template <class T> pgpu_status FftSolver<T>::run_fdm(T *u, const T *f, double *res)
{
    char *err = env->err;
    const cudaStream_t st = env->st;
    FdmArgs<T> A = fdm;
    A.f = f;
    A.u_in = A.u_out = u;
    A.res = res;
    void *args[] = {&A};
    if (fdmc.C > 0) {
        cudaLaunchConfig_t lc = {};
        cudaLaunchAttribute at[1];
        fdmc_config(fdmc.C, lc, at, st);
        const cudaError_t e = res ? cudaLaunchKernelEx(&lc, fdmc_kernel<T, true>, A, fdmc)
                                  : cudaLaunchKernelEx(&lc, fdmc_kernel<T, false>, A, fdmc);
        if (e == cudaSuccess) return PGPU_SUCCESS;
        // refused for its size (MPS limits, say): the cooperative route from now on
        if (e != cudaErrorInvalidClusterSize &&
            e != cudaErrorNotSupported && e != cudaErrorLaunchOutOfResources)
            return cuda_status(err, e, "cudaLaunchKernelEx", PGPU_AT);
        (void)cudaGetLastError();
        fdmc.C = 0;
        if (res && fdm_blocks == 0) return PGPU_SUCCESS; // (folds_checks() false: solve()'s steps instead)
    }
    const void *kern = res ? (const void *)fdm2_kernel<T, true> : (const void *)fdm2_kernel<T, false>;
    bool done = false;
    PGPU_FORWARD(coop_launch(*env, kern, fdm_blocks, FDM_T, args, 0, res != nullptr, done));
    if (done) return PGPU_SUCCESS;
    for (int ph = 0; ph < 2; ++ph) {
        fdm2_phase_kernel<T><<<(unsigned)A.ny, FDM_T, 0, st>>>(A, ph);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

// All Dirichlet, every n+1 a product of primes up to 19 and its rows within
// the device's shared memory: the row kernels of dr_kernel take the solve
// (3D: five or six passes; 2D: dr2_kernel, one cooperative launch).
template <class T> pgpu_status FftSolver<T>::init_dr()
{
    char *err = env->err;
    const int optin = env->optin;
    const bool is3d = cfg.nz > 1;
    const int dims = is3d ? 3 : 2;
    for (int f = 0; f < 2 * dims; ++f)
        if (cfg.bc[f] != PGPU_BC_DIRICHLET) return PGPU_SUCCESS;
    const int64_t n[3] = {cfg.nx, cfg.ny, is3d ? cfg.nz : 1};
    const double h[3] = {cfg.hx, cfg.hy, cfg.hz};
    const int64_t N = n[0] * n[1] * n[2];
    // (2D: as separate passes the rows are too few to fill the device, and
    // cuFFT's route is faster; in one launch, dr2_kernel, a power of two's
    // transform runs inlined, dr_pow2_fft.)
    size_t smem = 0;
    for (int a = 0; a < dims; ++a) {
        // (3D: a power of two's transform inlined where its rows fit -- a
        // block holds 256 / (N/16) of them -- else the general one.)
        bool planned = dr_plan_pow2<T>((int)n[a], dra[a]) && dr_smem_bytes(dra[a]) <= (size_t)optin;
        if (!planned && is3d) planned = dr_plan<T>((int)n[a], dra[a]);
        if (n[a] >= DR_NMAX || !planned || dr_smem_bytes(dra[a]) > (size_t)optin) return PGPU_SUCCESS;
        if ((N / n[a] >> dra[a].rpb_log) >= INT_MAX) return PGPU_SUCCESS; // blocks of one launch
        smem = std::max(smem, dr_smem_bytes(dra[a]));
    }
    rows_d = true;
    std::vector<T> ev;
    size_t eoff[3];
    double scale = 1;
    for (int a = 0; a < dims; ++a) {
        eoff[a] = ev.size();
        for (int64_t k = 0; k < n[a]; ++k) ev.push_back((T)fft_eigen(FFT_DST1, n[a], h[a], k));
        C2 *tw = nullptr;
        PGPU_FORWARD(row_twiddles(2 * (int64_t)dra[a].N, &tw));
        dra[a].tw = tw;
        scale *= 2.0 / (double)dra[a].N;
    }
    T *d_ev = nullptr;
    PGPU_FORWARD(env->upload(ev, &d_ev, "FFT eigenvalues"));
    for (int a = 0; a < dims; ++a) dr_ev[a] = d_ev + eoff[a];
    dr_scale = (T)scale;
    PGPU_FORWARD(env->mem.alloc(err, (void **)&T1, (size_t)N * sizeof(T), "FFT spectrum"));
    // The limit is a property of the kernel: every solver sets the same one.
    if (is3d) {
        PGPU_FORWARD(env->mem.alloc(err, (void **)&T2, (size_t)N * sizeof(T), "FFT spectrum (second)"));
        for (auto k : DrPasses<T>(dra).k)
            if (k) PGPU_CUDA_SETUP(*env, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
        return PGPU_SUCCESS;
    }
    // 2D: groups of fewer rows than a block holds where the rows are too few
    // to give a quarter of the multiprocessors some (else one block would
    // take them all in series; more, smaller groups ran slower at 255^2 and
    // 511^2: each phase then waits for more blocks); the blocks of the
    // cooperative launch, at most one per group of its widest phase, and
    // their partials (two reductions).
    int64_t groups = 0;
    for (int a = 0; a < 2; ++a) {
        const int64_t rows = n[1 - a]; // x's rows are y's points and y's x's
        auto count = [&] { return (rows + (1 << dra[a].grp_log) - 1) >> dra[a].grp_log; };
        while (dra[a].grp_log > 0 && count() < std::max(1, env->sms / 4)) --dra[a].grp_log;
        groups = std::max(groups, count());
    }
    PGPU_FORWARD(env->mem.alloc(err, (void **)&dr_part, (size_t)groups * 6 * sizeof(double), "FFT partials"));
    PGPU_CUDA_SETUP(*env, cudaFuncSetAttribute(dr2_phase_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    if (env->mem.counting) return PGPU_SUCCESS;
    // The one launch, where the device offers cooperative launches and its
    // rows fit beside the kernel's static shared memory (the reductions').
    int coop = 0, per_sm = 0;
    PGPU_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, env->device));
    if (!coop) return PGPU_SUCCESS;
    const void *k2[2] = {(const void *)dr2_kernel<T, true>, (const void *)dr2_kernel<T, false>};
    for (int v = 0; v < 2; ++v) {
        cudaFuncAttributes fa;
        PGPU_CUDA(cudaFuncGetAttributes(&fa, k2[v]));
        const int room = optin - (int)fa.sharedSizeBytes;
        if (room < (int)smem) return PGPU_SUCCESS;
        PGPU_CUDA(cudaFuncSetAttribute(k2[v], cudaFuncAttributeMaxDynamicSharedMemorySize, room));
        int b = 0;
        PGPU_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k2[v], DR_T, smem));
        per_sm = v ? std::min(per_sm, b) : b;
    }
    if (per_sm > 0) dr_blocks = (int)std::min<int64_t>(groups, (int64_t)per_sm * env->sms);
    dr_smem = smem;
    return PGPU_SUCCESS;
}

// 3D: five row passes (z a power of two) or six; 2D: one cooperative launch (dr2_kernel), or its
// three phases as separate launches where the device cannot launch it.
// CHECK (2D, cooperative): the default path's scan and residual folded in,
// their totals in res (Reducer's slots RES_SCAN and RES_NORM).
template <class T> pgpu_status FftSolver<T>::run_dr(T *u, const T *f, double *res)
{
    char *err = env->err;
    const cudaStream_t st = env->st;
    const Grid<T> &g = lv0->g;
    const int64_t nx = g.nx, ny = g.ny, nz = g.nz;
    DrArgs<T> A{};
    A.g = g;
    A.f = f;
    A.u_in = u;
    A.u_out = u;
    A.scale = T(1);
    auto pass = [&](void (*kern)(DrArgs<T>), int axis, const T *in, T *out, int64_t nrows) -> pgpu_status {
        A.ax = dra[axis];
        A.in = in;
        A.out = out;
        A.nrows = nrows;
        const unsigned blocks = (unsigned)((nrows + (1 << A.ax.rpb_log) - 1) >> A.ax.rpb_log);
        kern<<<blocks, DR_T, dr_smem_bytes(A.ax), st>>>(A);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    };
    if (nz == 1) {
        Dr2Args<T> D{};
        D.fwd = D.mid = D.inv = A;
        D.fwd.ax = dra[0];
        D.fwd.out = T1;
        D.fwd.nrows = ny;
        D.mid.ax = dra[1];
        D.mid.in = D.mid.out = T1;
        D.mid.nrows = nx;
        D.mid.scale = dr_scale;
        D.mid.evA = dr_ev[0];
        D.mid.nA = nx;
        D.mid.evK = dr_ev[1];
        D.inv.ax = dra[0];
        D.inv.in = T1;
        D.inv.nrows = ny;
        D.part = dr_part;
        D.res = res;
        void *args[] = {&D};
        const void *kern = res ? (const void *)dr2_kernel<T, true> : (const void *)dr2_kernel<T, false>;
        bool done = false;
        PGPU_FORWARD(coop_launch(*env, kern, dr_blocks, DR_T, args, dr_smem, res != nullptr, done));
        if (done) return PGPU_SUCCESS;
        const int64_t rows[3] = {ny, nx, ny};
        for (int ph = 0; ph < 3; ++ph) {
            const int a = ph == 1 ? 1 : 0;
            const unsigned blocks = (unsigned)((rows[ph] + (1 << dra[a].grp_log) - 1) >> dra[a].grp_log);
            dr2_phase_kernel<T><<<blocks, DR_T, dr_smem_bytes(dra[a]), st>>>(D, ph);
            PGPU_LAUNCHED();
        }
        return PGPU_SUCCESS;
    }
    const DrPasses<T> K(dra);
    PGPU_FORWARD(pass(K.k[0], 0, nullptr, T1, ny * nz)); // T1[kx][z][y]
    PGPU_FORWARD(pass(K.k[1], 1, T1, T2, nx * nz));      // T2[ky][kx][z]
    A.scale = dr_scale; // in the division
    A.evA = dr_ev[0];
    A.nA = nx;
    A.evB = dr_ev[1];
    A.evK = dr_ev[2];
    PGPU_FORWARD(pass(K.k[2], 2, T2, T2, nx * ny)); // z: forward and divided (DR_SOLVE: and inverse)
    A.scale = T(1);
    if (K.k[3]) PGPU_FORWARD(pass(K.k[3], 2, T2, T2, nx * ny));
    PGPU_FORWARD(pass(K.k[4], 1, T2, T1, nx * nz));
    return pass(K.k[5], 0, T1, nullptr, ny * nz);
}

// Forward transforms, one solve per mode, inverse transforms: a fixed
// sequence of launches on the stream (capturable in a CUDA graph).  cuFFT
// needs its arrays aligned to the complex type, which the user's ghosted
// layout is not, hence the copies in and out of W.
template <class T> pgpu_status FftSolver<T>::run(T *u, const T *f, const T *d_shift)
{
    char *err = env->err;
    const cudaStream_t st = env->st;
    const int sms = env->sms;
    const Level<T> &L0 = *lv0;
    const int64_t E = spec.e0 * spec.e1 * spec.e2;
    const ColLaunch &c = L0.col;
    if (dist) return run_dist(u, f, d_shift);
    UserIO<T> none{L0.g, nullptr, nullptr, nullptr, nullptr, 0, 0};
    if (rows_f) return run_fdm(u, f);
    if (rows_d) return run_dr(u, f);
    UserIO<T> in = none, out = none;
    in.u_in = u; in.f = f; in.shift = d_shift; in.read = 1;
    out.u_out = u; out.write = 1;
    if (rows_x) {
        const LfShape sh = lf_shape(L0.g.nx, LF_T, Tune<T>::lf_vals);
        const unsigned blocks = (unsigned)((L0.g.ny * (int64_t)L0.g.nz + sh.lpb - 1) / sh.lpb);
        lf_forward_kernel<T><<<blocks, LF_T, lf_smem, st>>>(L0.g, f, d_shift, lf_tw, C);
        PGPU_LAUNCHED();
        PGPU_CUFFT(FftTypes<T>::c2c(p_c2c, C, CUFFT_FORWARD));
        if (rows_z) {
            const LfShape zs = lf_shape(2 * (int)spec.e1, LF_T, Tune<T>::lf_vals);
            const dim3 zg((unsigned)((spec.e0 + zs.lpb - 1) / zs.lpb), (unsigned)spec.e2);
            lf_zsolve_kernel<T><<<zg, LF_T, lf_zsmem, st>>>(spec, lf_twz, C, nullptr);
        } else {
            spectral_divide_kernel<T, C2><<<grid_for(E, sms), 256, 0, st>>>(spec, C);
        }
        PGPU_LAUNCHED();
        PGPU_CUFFT(FftTypes<T>::c2c(p_c2c, C, CUFFT_INVERSE));
        lf_inverse_kernel<T><<<blocks, LF_T, lf_smem, st>>>(L0.g, C, lf_tw, u);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    const bool fused = !fax.empty(); // the outermost transforms read f and write u
    // The data's array: a dense axis writes the other of W and S, which then
    // swap (locally: every solve starts from W).
    T *w = W, *sx = S;
    auto axis = [&](size_t k, bool inverse, const UserIO<T> &io) -> pgpu_status {
        if (!fax[k].dm[0][0]) return fft_axis_run<T>(*env, fax[k], inverse, io, w, sx, C);
        PGPU_FORWARD(fft_dense_run<T>(*env, fax[k], inverse, io, w, sx));
        std::swap(w, sx);
        return PGPU_SUCCESS;
    };
    // (a dense first axis reads the right-hand side from W: its products
    // took 1.7 (float) to 2 (double) times as long reading f and the
    // boundary terms in place)
    const bool fused_in = fused && !fax[0].dm[0][0];
    if (!fused_in) {
        fft_load_kernel<T><<<c.grid, c.block, 0, st>>>(L0.g, u, f, d_shift, W, wp, c.kchunk, c.nyb, c.nchunks);
        PGPU_LAUNCHED();
    }
    for (size_t k = 0; k < fax.size(); ++k) PGPU_FORWARD(axis(k, false, k == 0 && fused_in ? in : none));
    if (pmask)
        for (int k = 0; k < p_loops; ++k) PGPU_CUFFT(FftTypes<T>::r2c(p_r2c, w + k * p_in_step, Z + k * p_out_step));
    if (tri >= 0) {
        const T *cl = tri == 0 ? L0.g.cxl : (tri == 1 ? L0.g.cyl : L0.g.czl);
        const T *ch = tri == 0 ? L0.g.cxh : (tri == 1 ? L0.g.cyh : L0.g.czh);
        const int64_t e[3] = {spec.e0, spec.e1, spec.e2};
        const int64_t lines = E / e[tri];
        if (e[tri] <= PCR_MAX && lines < PCR_MAX_LINES) { // few lines: a block per line
            int P = 32;
            while (P < e[tri]) P <<= 1;
            if (pmask) pcr_kernel<T, C2><<<(unsigned)lines, P, 0, st>>>(spec, tri, cl, ch, tri_nn, Z);
            else pcr_kernel<T, T><<<(unsigned)lines, P, 0, st>>>(spec, tri, cl, ch, tri_nn, w);
        } else {
            for (int64_t b0 = 0; b0 < lines; b0 += tri_chunk) {
                const int64_t nb = std::min(tri_chunk, lines - b0);
                const unsigned tb = (unsigned)std::min<int64_t>((nb + TRI_T - 1) / TRI_T, (int64_t)sms * 64);
                if (pmask) tri_kernel<T, C2><<<tb, TRI_T, 0, st>>>(spec, tri, cl, ch, tri_nn, Z, piv, b0, nb);
                else tri_kernel<T, T><<<tb, TRI_T, 0, st>>>(spec, tri, cl, ch, tri_nn, w, piv, b0, nb);
                if (b0 + nb < lines) PGPU_LAUNCHED();
            }
        }
    } else if (pmask) {
        spectral_divide_kernel<T, C2><<<grid_for(E, sms), 256, 0, st>>>(spec, Z);
    } else {
        spectral_divide_kernel<T, T><<<grid_for(E, sms), 256, 0, st>>>(spec, w);
    }
    PGPU_LAUNCHED();
    if (pmask)
        for (int k = 0; k < p_loops; ++k) PGPU_CUFFT(FftTypes<T>::c2r(p_c2r, Z + k * p_out_step, w + k * p_in_step));
    for (size_t k = fax.size(); k-- > 0;) PGPU_FORWARD(axis(k, true, k == 0 ? out : none));
    if (!fused) {
        fft_store_kernel<T><<<c.grid, c.block, 0, st>>>(L0.g, W, wp, u, c.kchunk, c.nyb, c.nchunks);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

} // namespace pgpu
