// fft_dirichlet.h -- the all-Dirichlet rows: DST-I by our own mixed-radix FFT
#pragma once
#include "fft_rows.h"
#include "reduce.h"

#include <cooperative_groups.h>

namespace pgpu {

// When every face is Dirichlet and each n+1 factors into primes up to 19
// (n <= 4096; dr_plan says which rows fit), the solve is row passes over the
// data, each transforming rows in shared memory.  3D (dr_kernel):
//   x forward  f's rows (plus boundary terms)  -> T1[kx][z][y]  (transposed)
//   y forward  T1's rows                       -> T2[ky][kx][z]
//   z forward  T2's rows, divided by the eigenvalues, in place
//   z inverse  T2's rows, in place (where z's n+1 is a power of two: in the
//              same pass as its forward transform, DR_SOLVE)
//   y inverse  T2 (transposed)                 -> T1's rows
//   x inverse  T1 (transposed)                 -> u's rows
// 2D with n+1 a power of two on both axes: x forward, y forward-divide-
// inverse, x inverse in one cooperative launch (dr2_kernel), which can also
// fold in the default path's checks.  The cuFFT route takes about fourteen
// passes in 3D
// (pre-processing, transform and post-processing per axis, copies).
//
// A row of n values is transformed in shared memory: DST-I of length n is the real FFT of its odd extension of
// length 2N (N = n+1), computed as a complex FFT of length N of the packed
// pairs w_m = z_2m + i z_2m+1 (the extension lives in shared memory only,
// never in global memory) and the usual split; X_k = -Im(Z_k)/2.  The
// complex FFT is a Stockham transform, in place: every thread loads its
// butterflies' values into registers, the row's threads synchronise, and
// the results go back.  N a power of two (dr_plan_pow2): radix-16 passes
// and a smaller last one, inlined (dr_pow2_fft), N/16 threads a row, in 3D
// a kernel per N (dr_kernel's CN: the row shape as constants).  Other
// N (dr_plan): radices 2, 4, 8, 16, 9, 27 and the odd primes to 19
// (513 = 27 x 19: two passes), each pass a function of its own (dr_pass):
// inlined, the kernel held the registers of every radix at once and
// spilled.  The lengths in DR_CONST_N have 3D kernels of their own: the
// plan's passes inlined in sequence with the length as a constant
// (dr_const_fft).  A row of up to 32 threads is one warp and synchronises
// as one.
// DST-I is its own inverse up to 2/N.
//
// The passes are bound by issued instructions (index arithmetic, shared
// memory traffic, twiddles), not by memory: bench/results has the times
// beside the copy bandwidth and the cuFFT pair.

// One row's transform: its length, the radices, threads per row and rows per
// block (powers of two, tpr * rpb = DR_T), the strides of a row in shared
// memory (ls complex values for the FFT, lx reals for the result) and the
// twiddles tw[q] = e^{-i pi q/N}, q < 2N.
template <class T> struct DrAxis {
    int n, N, np, tpr_log, rpb_log, ls, lx;
    int grp_log; // rows a group takes (at most rpb: dr2_kernel spreads few rows over more blocks)
    bool pow2;   // dr_plan_pow2's plan: N a power of two, the transform inlined (dr_pow2_fft)
    unsigned long long rad; // radix of pass p in bits 5p .. 5p+4
    const typename Cplx<T>::type *tw;
};


// The general pass, not inlined: each radix then gets its own registers
// (inlined, the kernel held those of all radices at once: 128 -> 216 in
// float, and spilled).
template <int R, class C>
__device__ __noinline__ void dr_pass(C *s, int N, int ns, int t, int tpr, const C *__restrict__ tw)
{
    row_pass<R, dr_g(R), false>(s, N, ns, t, tpr, tw);
}

// Forward complex FFT of the row s in place; every thread of the block calls
// it.  The passes run in the order dr_plan makes them.
template <int R, class T>
__device__ __forceinline__ void dr_passes(typename Cplx<T>::type *s, const DrAxis<T> &a, int t,
                                          const typename Cplx<T>::type *tw, int &ns, int &p)
{
#pragma unroll 1
    while (p < a.np && ((int)(a.rad >> (5 * p)) & 31) == R) {
        dr_pass<R>(s, a.N, ns, t, 1 << a.tpr_log, tw);
        ns *= R;
        ++p;
    }
}
template <class T>
__device__ __forceinline__ void dr_fft(typename Cplx<T>::type *s, const DrAxis<T> &a, int t,
                                       const typename Cplx<T>::type *tw)
{
    int ns = 1, p = 0;
    dr_passes<16>(s, a, t, tw, ns, p);
    dr_passes<8>(s, a, t, tw, ns, p);
    dr_passes<4>(s, a, t, tw, ns, p);
    dr_passes<2>(s, a, t, tw, ns, p);
    dr_passes<27>(s, a, t, tw, ns, p);
    dr_passes<9>(s, a, t, tw, ns, p);
    dr_passes<3>(s, a, t, tw, ns, p);
    dr_passes<5>(s, a, t, tw, ns, p);
    dr_passes<7>(s, a, t, tw, ns, p);
    dr_passes<11>(s, a, t, tw, ns, p);
    dr_passes<13>(s, a, t, tw, ns, p);
    dr_passes<17>(s, a, t, tw, ns, p);
    dr_passes<19>(s, a, t, tw, ns, p);
}

// The general plan's transform for a length N = CN known when compiling
// (dr_kernel's CN, DR_CONST_N): its passes inlined, each with its radix,
// sub-transform length and threads per row as constants, so that the
// index arithmetic folds.  Inlined in sequence, the passes' registers are
// the largest pass's (held at once, as in a loop over every radix, they
// spilled: dr_pass).
template <class T> __host__ __device__ constexpr bool dr_plan(int n, DrAxis<T> &a);
template <class T> __host__ __device__ constexpr DrAxis<T> dr_const_plan(int N)
{
    DrAxis<T> a{};
    dr_plan(N - 1, a);
    return a;
}
template <class T, int CN, int P = 0, int NS = 1>
__device__ __forceinline__ void dr_const_fft(typename Cplx<T>::type *s, int t, const typename Cplx<T>::type *tw)
{
    constexpr DrAxis<T> pl = dr_const_plan<T>(CN);
    if constexpr (P < pl.np) {
        constexpr int R = (int)(pl.rad >> (5 * P)) & 31;
        row_pass<R, dr_g(R), false>(s, CN, NS, t, 1 << pl.tpr_log, tw);
        dr_const_fft<T, CN, P + 1, NS * R>(s, t, tw);
    }
}

// z_j of the odd extension (length 2N) into the packed row: x_j at z_j and
// -x_j at z_{2N-j} (1 <= j <= n).
template <class T> __device__ __forceinline__ void dr_put(T *sr, int N, int j, T v)
{
    const int p = 2 * N - j;
    sr[2 * lf_pad(j >> 1) + (j & 1)] = v;
    sr[2 * lf_pad(p >> 1) + (p & 1)] = -v;
}
// ... and z_q read from the row x itself (x(i), 0 <= i < n): dr_put's
// values, for a first pass's loads (row_pass's Load).
template <class T, class X> __device__ __forceinline__ T dr_ext(const X &x, int N, int q)
{
    return q == 0 || q == N ? T(0) : q < N ? x(q - 1) : -x(2 * N - q - 1);
}
template <class T, class X> struct DrLoad {
    X x;
    int N;
    __device__ typename Cplx<T>::type operator()(int p) const
    {
        typename Cplx<T>::type c;
        c.x = dr_ext<T>(x, N, 2 * p);
        c.y = dr_ext<T>(x, N, 2 * p + 1);
        return c;
    }
};
template <class T, class X> __device__ __forceinline__ DrLoad<T, X> dr_load_from(const X &x, int N)
{
    return DrLoad<T, X>{x, N};
}
template <class T> __device__ __forceinline__ void dr_zeros(T *sr, int N)
{
    sr[0] = T(0);
    sr[2 * lf_pad(N >> 1) + (N & 1)] = T(0);
}
// X_k = -Im(Z_k)/2 (1 <= k <= n) from the complex FFT W of the packed row:
// Z_k = (W_k + conj W_{N-k})/2 - i e^{-i pi k/N} (W_k - conj W_{N-k})/2.
template <class C> __device__ __forceinline__ auto dr_split(const C *s, int N, int k, const C *__restrict__ tw)
    -> decltype(s[0].x)
{
    typedef decltype(s[0].x) Re;
    const C a = s[lf_pad(k)], b = s[lf_pad(N - k)], w = tw[k];
    return Re(-0.25) * ((a.y - b.y) - w.x * (a.x - b.x) + w.y * (a.y + b.y));
}

enum { DR_USER = 0, DR_ROWS = 1, DR_TRANS = 2 };
// What a pass does between its transforms: scale the spectrum, divide it by
// the eigenvalues, or divide and transform back in the same row (DR_SOLVE:
// the last axis's forward and inverse transforms in one pass).
enum { DR_SCALE = 0, DR_DIVIDE = 1, DR_SOLVE = 2 };

// What one row pass reads and writes.  Rows are numbered in the order of
// the input: for DR_USER row r is (y, z) = (r % ny, r / ny); DR_ROWS arrays
// hold row r at r * n; DR_TRANS arrays hold element i of row r at
// i * nrows + r.
template <class T> struct DrArgs {
    DrAxis<T> ax;
    const T *in;
    T *out;
    int64_t nrows;
    Grid<T> g;          // DR_USER
    const T *f, *u_in;  // DR_USER input: f plus the boundary terms
    T *u_out;           // DR_USER output
    T scale;            // applied to every output value (DR_DIVIDE, DR_SOLVE: in the division)
    const T *evA, *evB, *evK; // DR_DIVIDE, DR_SOLVE: eigenvalue of row r: evA[r % nA] + evB[r / nA] (evB may be
    int64_t nA;               // NULL), plus evK[k] for element k
};

// A value another block of the same launch may have written (the 2D
// kernel's phases, after a grid barrier): a plain load, never through the
// non-coherent cache (no __ldg, no const __restrict__ on these arrays).
template <class T> __device__ __forceinline__ T dr_load(const T *p) { return *p; }

// A group of rpb rows from row0, every thread of the block taking part, in
// three steps: dr_rows_in (the odd extensions; SCAN: the right-hand side's
// sums into acc; a DR_USER row's f loaded before its boundary terms are
// added), dr_rows_transform (the transform and what `mode` does)
// and dr_rows_out (DR_USER output only where `write`); the caller
// synchronises the block before the next group reuses smem.  A kernel calls
// dr_fft (the general plan's) from one place and outside any loop of its
// own: the passes are functions (dr_pass), and a second call site made
// ptxas compile the whole kernel to the calling convention's 32 registers
// with kilobytes of spills.  dr_pow2_fft, inlined, may be called twice.
template <class T> struct DrRow {
    typename Cplx<T>::type *rows, *s; // the group's rows; this thread's row
    T *xs, *x;                        // the results: the group's, this row's
    int q, t, here;                   // row in the group, thread in the row, rows present
    int64_t r;                        // this thread's row
};
template <class T> __device__ __forceinline__ DrRow<T> dr_row(const DrArgs<T> &A, int64_t row0, unsigned char *smem)
{
    const DrAxis<T> &ax = A.ax;
    DrRow<T> w;
    w.rows = (typename Cplx<T>::type *)smem;
    w.xs = (T *)(w.rows + (ax.ls << ax.rpb_log));
    w.q = threadIdx.x >> ax.tpr_log;
    w.t = threadIdx.x & ((1 << ax.tpr_log) - 1);
    w.r = row0 + w.q;
    w.here = (int)min((int64_t)1 << ax.grp_log, A.nrows - row0);
    w.s = w.rows + w.q * ax.ls;
    w.x = w.xs + w.q * ax.lx;
    return w;
}

// fn(qq, i) for element i of every row qq of the group: by the row's own
// threads, or (SPREAD: dr2_kernel's few rows a group) by all the block's
// threads, consecutive ones on consecutive elements, so that no thread
// waits on a chain of loads alone.
template <bool SPREAD, class T, class F>
__device__ __forceinline__ void dr_each(const DrAxis<T> &ax, const DrRow<T> &w, F fn)
{
    const int n = ax.n;
    if (SPREAD) {
        for (int e = threadIdx.x; e < (n << ax.grp_log); e += DR_T) {
            const int qq = e / n;
            fn(qq, e - qq * n);
        }
    } else {
        for (int i = w.t; i < n; i += 1 << ax.tpr_log) fn(w.q, i);
    }
}
// dr_zeros on every row of the group.
template <bool SPREAD, class T> __device__ __forceinline__ void dr_each_zeros(const DrAxis<T> &ax, const DrRow<T> &w)
{
    if (SPREAD) {
        for (int qq = threadIdx.x; qq < 1 << ax.grp_log; qq += DR_T) dr_zeros((T *)(w.rows + qq * ax.ls), ax.N);
    } else if (w.t == 0) {
        dr_zeros((T *)w.s, ax.N);
    }
}

// Element i of the right-hand side's row at b (y = jy, z = kz): f plus the
// boundary terms, which only the box's faces have (edge: the row lies on a
// y or z face).
template <class T>
__device__ __forceinline__ T dr_rhs(const DrArgs<T> &A, int64_t b, int i, int jy, int kz, bool edge)
{
    const Grid<T> &g = A.g;
    const bool face = edge || i == 0 || i == g.nx - 1;
    return A.f[b + i] + (face ? box_terms(g, A.u_in, b + i, i, jy, kz) : T(0));
}
template <class T> __device__ __forceinline__ bool dr_edge(const Grid<T> &g, int jy, int kz)
{
    return jy == 0 || jy == g.ny - 1 || kz == 0 || kz == g.nz - 1;
}

template <class T, int IN, bool SCAN, bool SPREAD>
__device__ __forceinline__ void dr_rows_in(const DrArgs<T> &A, int64_t row0, const DrRow<T> &w, Red3 &acc)
{
    const DrAxis<T> &ax = A.ax;
    const int n = ax.n, N = ax.N;
    if (IN == DR_TRANS) {
        for (int e = threadIdx.x; e < (n << ax.grp_log); e += DR_T) {
            const int qq = e & ((1 << ax.grp_log) - 1), i = e >> ax.grp_log;
            const T v = qq < w.here ? dr_load(A.in + (int64_t)i * A.nrows + row0 + qq) : T(0);
            dr_put((T *)(w.rows + qq * ax.ls), N, i + 1, v);
        }
    } else if (IN == DR_ROWS && !SPREAD) {
        const T *src = A.in + w.r * n;
        for (int i = w.t; i < n; i += 1 << ax.tpr_log) dr_put((T *)w.s, N, i + 1, w.q < w.here ? dr_load(src + i) : T(0));
    } else if (IN == DR_ROWS) {
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            const T v = qq < w.here ? dr_load(A.in + (row0 + qq) * n + i) : T(0);
            dr_put((T *)(w.rows + qq * ax.ls), N, i + 1, v);
        });
    } else if (!SPREAD) {
        // f first, then f plus the boundary terms where a face has some, by
        // the thread that put the element: a branch per element kept f's
        // loads waiting one at a time.
        const Grid<T> &g = A.g;
        const int jy = (int)(w.r % g.ny), kz = (int)(w.r / g.ny), tpr = 1 << ax.tpr_log;
        const int64_t b = g.base + jy * g.sy + (int64_t)kz * g.sz;
        const bool here = w.q < w.here;
        for (int i = w.t; i < n; i += tpr) dr_put((T *)w.s, N, i + 1, here ? A.f[b + i] : T(0));
        auto face = [&](int i) { dr_put((T *)w.s, N, i + 1, dr_rhs(A, b, i, jy, kz, true)); };
        if (here && dr_edge(g, jy, kz)) {
            for (int i = w.t; i < n; i += tpr) face(i);
        } else if (here) {
            if (w.t == 0) face(0);
            if (((n - 1) & (tpr - 1)) == w.t) face(n - 1);
        }
    } else {
        // (box_terms reads u's ghost layer only, which no phase writes:
        // the x inverse writes the interior; so its non-coherent loads see
        // data no block of this launch changes.)
        const Grid<T> &g = A.g;
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            T v = T(0);
            if (qq < w.here) {
                const int64_t r = row0 + qq;
                const int jy = (int)(r % g.ny), kz = (int)(r / g.ny);
                const int64_t b = g.base + jy * g.sy + (int64_t)kz * g.sz;
                const T fv = A.f[b + i], bt = box_terms(g, A.u_in, b + i, i, jy, kz);
                if (SCAN) { // as scan_rhs_kernel sums it
                    const double c = (double)fv + (double)bt;
                    accumulate(acc, c, c * c, fabs(c));
                }
                v = fv + bt;
            }
            dr_put((T *)(w.rows + qq * ax.ls), N, i + 1, v);
        });
    }
    dr_each_zeros<SPREAD>(ax, w);
    __syncthreads();
}

// The transform of a power-of-two plan (dr_plan_pow2): Stockham passes of
// radix 16 and a smaller last one, every one inlined (no calls: see DrRow);
// the first reads the row from load where one is given (not from s).
template <class T, class Load = FromRow>
__device__ __forceinline__ void dr_pow2_fft(typename Cplx<T>::type *s, const DrAxis<T> &a, int t, Load load = Load())
{
    const int N = a.N, tpr = 1 << a.tpr_log;
    row_pass<16, 1, true>(s, N, 1, t, tpr, a.tw, load); // (N >= 16: a first pass of radix 16)
    // (no loop: where N is a constant, dr_kernel's CN, each pass's ns is one too)
    if (N >= 256) row_pass<16, 1, true>(s, N, 16, t, tpr, a.tw);
    if (N >= 4096) row_pass<16, 1, true>(s, N, 256, t, tpr, a.tw);
    const int ns = N >= 4096 ? 4096 : N >= 256 ? 256 : 16, rest = N / ns;
    if (rest == 8) row_pass<8, 2, true>(s, N, ns, t, tpr, a.tw);
    else if (rest == 4) row_pass<4, 4, true>(s, N, ns, t, tpr, a.tw);
    else if (rest == 2) row_pass<2, 8, true>(s, N, ns, t, tpr, a.tw);
}

// The transform (POW2: dr_pow2_fft; CN: dr_const_fft; else dr_fft; SPREAD:
// the element loops spread over the block, dr_each); then the spectrum scaled by sc
// (DR_SCALE) or divided by the eigenvalues, A.scale in the division
// (DR_DIVIDE), each value to put(qq, i, v).  DR_SOLVE is dr_rows_solve's.
template <class T, bool POW2, bool SPREAD, int CN = 0, class Put, class Load = FromRow>
__device__ __forceinline__ void dr_rows_transform(const DrArgs<T> &A, int64_t row0, const DrRow<T> &w, int mode,
                                                  T sc, Put put, Load load = Load())
{
    const DrAxis<T> &ax = A.ax;
    const int N = ax.N;
    static_assert(POW2 || std::is_same<Load, FromRow>::value, "dr_rows_transform: dr_fft reads the row");
    if constexpr (POW2) dr_pow2_fft<T>(w.s, ax, w.t, load);
    else if constexpr (CN > 0) dr_const_fft<T, CN>(w.s, w.t, ax.tw);
    else dr_fft<T>(w.s, ax, w.t, ax.tw);
    if (mode == DR_SCALE) {
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            put(qq, i, dr_split(w.rows + qq * ax.ls, N, i + 1, ax.tw) * sc);
        });
    } else {
        // rows are (kx, ky) or kx: fewer than 2^24 (axes of at most DR_NMAX)
        const unsigned na = (unsigned)A.nA;
        auto lrow = [&](int qq) {
            const unsigned rr = (unsigned)min(row0 + qq, A.nrows - 1);
            return A.evA[rr % na] + (A.evB ? A.evB[rr / na] : T(0));
        };
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            const T l = lrow(qq);
            put(qq, i, dr_split(w.rows + qq * ax.ls, N, i + 1, ax.tw) * (A.scale / (l + A.evK[i])));
        });
    }
    __syncthreads();
}
// The transform's results as the next transform's input, in the same rows:
// their odd extension.
template <bool SPREAD, class T> __device__ __forceinline__ void dr_rows_again(const DrAxis<T> &ax, const DrRow<T> &w)
{
    dr_each<SPREAD>(ax, w, [&](int qq, int i) { dr_put((T *)(w.rows + qq * ax.ls), ax.N, i + 1, w.xs[qq * ax.lx + i]); });
    dr_each_zeros<SPREAD>(ax, w);
    __syncthreads();
}
// The pass's transforms by mode, DR_SOLVE as two; put(qq, i, v) takes the
// last one's results (DrKeep: into xs).  FromRow: the first transform's
// input is the row in shared memory (dr_rows_in); else load(p) reads it,
// and a second transform reads its input from xs the same way, with no
// dr_rows_again (a row's threads alone: not SPREAD).
template <class T> struct DrKeep {
    const DrAxis<T> &ax;
    const DrRow<T> &w;
    __device__ void operator()(int qq, int i, T v) const { w.xs[qq * ax.lx + i] = v; }
};
// DR_SOLVE (POW2 only: DST-I is its own inverse, its 2/N in the scale;
// the general plan's kernels refuse it, dr_kernel's static_assert: a
// second dr_fft call site would break the runtime plan's, and the constant
// plan's, holding both transforms' registers, ran slower than two passes):
// DR_DIVIDE, the results as input again, DR_SCALE by 1 -- two calls, not
// a loop of two rounds, which held twice the registers.
template <class T, bool POW2, bool SPREAD, int CN = 0, class Put, class Load = FromRow>
__device__ __forceinline__ void dr_rows_solve(const DrArgs<T> &A, int64_t row0, const DrRow<T> &w, int mode, Put put,
                                              Load load = Load())
{
    constexpr bool own = std::is_same<Load, FromRow>::value;
    static_assert(own || !SPREAD, "dr_rows_solve: loads are a row's threads'");
    const DrKeep<T> keep{A.ax, w};
    if constexpr (POW2 && own) { // (one call site for the first transform of every mode)
        const bool solve = mode == DR_SOLVE;
        dr_rows_transform<T, POW2, SPREAD, CN>(A, row0, w, solve ? DR_DIVIDE : mode, A.scale,
                                               [&](int qq, int i, T v) {
                                                   if (solve) keep(qq, i, v);
                                                   else put(qq, i, v);
                                               });
        if (solve) {
            dr_rows_again<SPREAD>(A.ax, w);
            dr_rows_transform<T, POW2, SPREAD, CN>(A, row0, w, DR_SCALE, T(1), put);
        }
    } else if constexpr (POW2) { // the first transform reads through load
        if (mode == DR_SOLVE) {
            dr_rows_transform<T, POW2, SPREAD>(A, row0, w, DR_DIVIDE, A.scale, keep, load);
            const T *x = w.x;
            auto xi = [x](int i) { return x[i]; };
            dr_rows_transform<T, POW2, SPREAD>(A, row0, w, DR_SCALE, T(1), put, dr_load_from<T>(xi, A.ax.N));
        } else {
            dr_rows_transform<T, POW2, SPREAD>(A, row0, w, mode, A.scale, put, load);
        }
    } else { // the general plan: one transform, no DR_SOLVE (dr_kernel's static_assert)
        dr_rows_transform<T, POW2, SPREAD, CN>(A, row0, w, mode, A.scale, put, load);
    }
}

template <class T, int OUT, bool SPREAD>
__device__ __forceinline__ void dr_rows_out(const DrArgs<T> &A, int64_t row0, const DrRow<T> &w, bool write)
{
    const DrAxis<T> &ax = A.ax;
    const int n = ax.n;
    if (OUT == DR_TRANS) {
        for (int e = threadIdx.x; e < (n << ax.grp_log); e += DR_T) {
            const int qq = e & ((1 << ax.grp_log) - 1), i = e >> ax.grp_log;
            if (qq < w.here) A.out[(int64_t)i * A.nrows + row0 + qq] = w.xs[qq * ax.lx + i];
        }
    } else if (!SPREAD) {
        if (w.q < w.here) {
            const int tpr = 1 << ax.tpr_log;
            if (OUT == DR_ROWS) {
                T *dst = A.out + w.r * n;
                for (int i = w.t; i < n; i += tpr) dst[i] = w.x[i];
            } else if (write) {
                const Grid<T> &g = A.g;
                const int64_t b = g.base + (w.r % g.ny) * g.sy + (w.r / g.ny) * g.sz;
                for (int i = w.t; i < n; i += tpr) A.u_out[b + i] = w.x[i];
            }
        }
    } else if (OUT == DR_ROWS) {
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            if (qq < w.here) A.out[(row0 + qq) * n + i] = w.xs[qq * ax.lx + i];
        });
    } else if (write) {
        const Grid<T> &g = A.g;
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            if (qq < w.here) {
                const int64_t r = row0 + qq;
                A.u_out[g.base + (r % g.ny) * g.sy + (r / g.ny) * g.sz + i] = w.xs[qq * ax.lx + i];
            }
        });
    }
}

// One pass of the 3D route: a group of rows per block.  POW2 (the axis's
// plan is dr_plan_pow2's): the inlined transform, and the last axis's
// forward and inverse transforms in one pass (DR_SOLVE); CN: a general
// plan's length as a constant (dr_const_fft).
template <class T, int IN, int OUT, int MODE, bool POW2, int CN>
__device__ __forceinline__ void dr_pass_rows(const DrArgs<T> &A)
{
    extern __shared__ __align__(16) unsigned char dr_smem[];
    Red3 none{0, 0, 0};
    const int64_t row0 = (int64_t)blockIdx.x << A.ax.rpb_log;
    const DrRow<T> w = dr_row(A, row0, dr_smem);
    static_assert(POW2 || MODE != DR_SOLVE, "dr_kernel: DR_SOLVE needs the power-of-two transform");
    const Grid<T> &g = A.g;
    const bool here = w.q < w.here;
    auto run = [&](auto load) {
        if (OUT == DR_TRANS) {
            dr_rows_solve<T, POW2, false, CN>(A, row0, w, MODE, DrKeep<T>{A.ax, w}, load);
            dr_rows_out<T, OUT, false>(A, row0, w, true);
        } else { // a row's results straight from the split to its row in memory
            T *dst = OUT == DR_ROWS ? A.out + w.r * A.ax.n
                                    : A.u_out + g.base + (w.r % g.ny) * g.sy + (w.r / g.ny) * g.sz;
            dr_rows_solve<T, POW2, false, CN>(A, row0, w, MODE, [&](int, int i, T v) {
                if (here) dst[i] = v;
            }, load);
        }
    };
    if constexpr (POW2 && IN == DR_ROWS) { // the first radix pass reads the row from memory itself
        const T *src = A.in + w.r * A.ax.n;
        run(dr_load_from<T>([&](int i) { return here ? dr_load(src + i) : T(0); }, A.ax.N));
    } else {
        dr_rows_in<T, IN, false, false>(A, row0, w, none);
        run(FromRow());
    }
}
// CN > 0: the plan's N as a constant, its row shape (dr_pow2_shape,
// dr_const_plan) in a copy of the arguments, so that the index arithmetic
// folds; the runtime general plan reads the arguments as they are (a copy
// there only costs registers).
constexpr int dr_min_blocks(bool pow2, int cn, size_t word)
{
    return pow2 ? (word == 4 ? DR_POW2_BLOCKS : 0) : cn > 0 ? (word == 4 ? DR_CONST_BLOCKS_F : DR_CONST_BLOCKS_D) : 0;
}
template <class T, int IN, int OUT, int MODE, bool POW2, int CN = 0>
__global__ void __launch_bounds__(DR_T, dr_min_blocks(POW2, CN, sizeof(T))) dr_kernel(const DrArgs<T> A)
{
    if constexpr (CN > 0) {
        DrArgs<T> C = A;
        if constexpr (POW2) {
            dr_pow2_shape(__builtin_ctz(CN), C.ax);
        } else {
            constexpr DrAxis<T> pl = dr_const_plan<T>(CN);
            C.ax = pl;
            C.ax.tw = A.ax.tw;
        }
        dr_pass_rows<T, IN, OUT, MODE, POW2, CN>(C);
    } else {
        dr_pass_rows<T, IN, OUT, MODE, POW2, 0>(A);
    }
}

// The 3D route's kernels for its axes' plans: with the plan's N as a
// constant where it has kernels of its own (a power of two, dr_pow2_shape,
// or DR_CONST_N; faster than with N read from the plan, the passes being
// bound by issued instructions), the runtime general plan's otherwise.
// k[0] x forward, k[1] y forward, k[2] z (DR_SOLVE, or forward and
// divided), k[3] z inverse (general plans only, else null), k[4] y
// inverse, k[5] x inverse.
template <class T> using DrKernel = void (*)(DrArgs<T>);
template <class T, int IN, int OUT, int MODE, int LN = 4> DrKernel<T> dr_pow2_kernel(int ln)
{
    if constexpr (LN > 12) return nullptr; // (dr_plan_pow2: N <= 4096)
    else return ln == LN ? dr_kernel<T, IN, OUT, MODE, true, 1 << LN> : dr_pow2_kernel<T, IN, OUT, MODE, LN + 1>(ln);
}
template <class T, int IN, int OUT, int MODE, size_t I = 0> DrKernel<T> dr_const_kernel(int N)
{
    if constexpr (I >= sizeof(DR_CONST_N) / sizeof(DR_CONST_N[0])) return nullptr;
    else return N == DR_CONST_N[I] ? dr_kernel<T, IN, OUT, MODE, false, DR_CONST_N[I]>
                                   : dr_const_kernel<T, IN, OUT, MODE, I + 1>(N);
}
// The axis's kernel for a mode (DR_SOLVE: power-of-two plans only): its
// plan's N as a constant where it has kernels of its own, else the runtime
// plan's.
template <class T, int IN, int OUT, int MODE> DrKernel<T> dr_axis_kernel(const DrAxis<T> &a)
{
    if (a.pow2) return dr_pow2_kernel<T, IN, OUT, MODE>(a.tpr_log + 4);
    if constexpr (MODE == DR_SOLVE) {
        return nullptr;
    } else {
        DrKernel<T> k = dr_const_kernel<T, IN, OUT, MODE>(a.N);
        return k ? k : dr_kernel<T, IN, OUT, MODE, false>;
    }
}
template <class T, int IN, int OUT> DrKernel<T> dr_scale_kernel(const DrAxis<T> &a)
{
    return dr_axis_kernel<T, IN, OUT, DR_SCALE>(a);
}
template <class T> struct DrPasses {
    DrKernel<T> k[6];
    explicit DrPasses(const DrAxis<T> (&a)[3])
    {
        k[0] = dr_scale_kernel<T, DR_USER, DR_TRANS>(a[0]);
        k[1] = dr_scale_kernel<T, DR_ROWS, DR_TRANS>(a[1]);
        k[2] = a[2].pow2 ? dr_axis_kernel<T, DR_ROWS, DR_ROWS, DR_SOLVE>(a[2])
                         : dr_axis_kernel<T, DR_ROWS, DR_ROWS, DR_DIVIDE>(a[2]);
        k[3] = a[2].pow2 ? nullptr : dr_scale_kernel<T, DR_ROWS, DR_ROWS>(a[2]);
        k[4] = dr_scale_kernel<T, DR_TRANS, DR_ROWS>(a[1]);
        k[5] = dr_scale_kernel<T, DR_TRANS, DR_USER>(a[0]);
    }
};

// A total into res[at], res[at + 1], res[at + 2] (RES_SCAN, RES_NORM).
__device__ __forceinline__ void put_total(double *res, int at, const Red3 &t)
{
    res[at] = t.s0;
    res[at + 1] = t.s1;
    res[at + 2] = t.m;
}

// Whether the right-hand side's sums (s0, s1, max) let a solve write u: all
// finite, max |b| within RHS_MIN .. RHS_MAX (or 0) -- what pgpu_solve checks
// on the host before any other route touches u (Solver::check_range and
// the finite test).
__device__ __forceinline__ bool dr_data_ok(const Red3 &t)
{
    const bool range = !(isfinite(t.m) && t.m > RHS_MAX) && !(t.m > 0 && t.m < RHS_MIN);
    return range && isfinite(t.s0) && isfinite(t.s1);
}

// The 2D all-Dirichlet solve, n+1 a power of two on both axes
// (dr_plan_pow2), as one cooperative launch (every block resident,
// grid-wide barriers between the phases):
//   0 x forward   f's rows plus boundary terms -> T1[kx][y]     (CHECK: the scan's partials)
//   1 y solve     T1's rows: forward, divided, inverse, in place
//   2 x inverse   T1 (transposed) -> u's rows                    (CHECK: only if the data pass)
//   CHECK: the residual's partials, then block 0's totals into Reducer's
//   slots: res[RES_SCAN ..] the scan's (sum b, sum b^2, max |b|; written
//   before the x inverse), res[RES_NORM ..] the residual's.
// So a small grid is one launch, and with CHECK the default path's scan,
// its guard that non-finite data leave u untouched, and the report's
// residual are folded into it.  Where the device cannot launch it, each
// phase is a launch of its own (dr2_phase_kernel, no CHECK).
template <class T> struct Dr2Args {
    DrArgs<T> fwd, mid, inv; // the three phases
    double *part;            // CHECK: 3 doubles per block for the scan, then as many for the residual
    double *res;
};

// Phase ph over every group of rows, the grid's blocks G striding them.
template <class T, bool CHECK>
__device__ __forceinline__ void dr2_phase(const Dr2Args<T> &A, int ph, int64_t G, Red3 &acc, bool ok)
{
    extern __shared__ __align__(16) unsigned char dr_smem[];
    const DrArgs<T> &P = ph == 0 ? A.fwd : ph == 1 ? A.mid : A.inv;
    const int64_t gs = (int64_t)1 << P.ax.grp_log;
    for (int64_t r0 = blockIdx.x * gs; r0 < P.nrows; r0 += G * gs) {
        const DrRow<T> w = dr_row(P, r0, dr_smem);
        if (ph == 0) dr_rows_in<T, DR_USER, CHECK, true>(P, r0, w, acc);
        else if (ph == 1) dr_rows_in<T, DR_ROWS, false, true>(P, r0, w, acc);
        else dr_rows_in<T, DR_TRANS, false, true>(P, r0, w, acc);
        dr_rows_solve<T, true, true>(P, r0, w, ph == 1 ? DR_SOLVE : DR_SCALE, DrKeep<T>{P.ax, w});
        if (ph == 0) dr_rows_out<T, DR_TRANS, true>(P, r0, w, true);
        else if (ph == 1) dr_rows_out<T, DR_ROWS, true>(P, r0, w, true);
        else dr_rows_out<T, DR_USER, true>(P, r0, w, ok);
        __syncthreads();
    }
}

template <class T> __global__ void __launch_bounds__(DR_T) dr2_phase_kernel(const Dr2Args<T> A, int ph)
{
    Red3 none{0, 0, 0};
    dr2_phase<T, false>(A, ph, gridDim.x, none, true);
}

// The default path's checks folded into a one-launch solve (dr2_kernel,
// fdm2_kernel): every block sums the scan's partials (3 doubles per block
// at part) in the same order, so that all reach one verdict, dr_data_ok;
// block 0 puts the totals into res[RES_SCAN ..].
template <int NT> __device__ __forceinline__ bool fold_verdict(const double *part, int64_t G, double *res)
{
    __shared__ int ok_s;
    Red3 t{0, 0, 0};
    for (int64_t b = threadIdx.x; b < G; b += NT)
        t = red_combine(t, Red3{dr_load(part + 3 * b), dr_load(part + 3 * b + 1), dr_load(part + 3 * b + 2)});
    t = block_reduce(t);
    if (threadIdx.x == 0) {
        ok_s = dr_data_ok(t);
        if (blockIdx.x == 0) put_total(res, RES_SCAN, t);
    }
    __syncthreads();
    return ok_s != 0;
}

// ... and, once u is written (every block, after the verdict passed), the
// report's residual b - A u, formed in double (residual_kernel's form): its
// partials after the scan's, block 0's totals into res[RES_NORM ..].
template <class T, int NT>
__device__ __forceinline__ void fold_residual(cooperative_groups::grid_group &grid, const Grid<T> &g, const T *u,
                                              const T *f, double *part, int64_t G, double *res)
{
    grid.sync();
    Red3 racc{0, 0, 0};
    const int64_t npts = (int64_t)g.nx * g.ny;
    for (int64_t e = blockIdx.x * (int64_t)NT + threadIdx.x; e < npts; e += G * NT) {
        const int i = (int)(e % g.nx), j = (int)(e / g.nx);
        const int64_t p = g.base + j * g.sy + i;
        const double res = point_residual(g, u, f, p, i, j, 0);
        accumulate(racc, res, res * res, fabs(res));
    }
    write_partial(part + 3 * G, racc);
    grid.sync();
    if (blockIdx.x != 0) return;
    Red3 t{0, 0, 0};
    for (int64_t b = threadIdx.x; b < G; b += NT)
        t = red_combine(t, Red3{dr_load(part + 3 * (G + b)), dr_load(part + 3 * (G + b) + 1),
                                dr_load(part + 3 * (G + b) + 2)});
    t = block_reduce(t);
    if (threadIdx.x == 0) put_total(res, RES_NORM, t);
}

template <class T, bool CHECK>
__global__ void __launch_bounds__(DR_T) dr2_kernel(const Dr2Args<T> A)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const int64_t G = gridDim.x;
    Red3 acc{0, 0, 0};
    bool ok = true;
    // (a loop, so that the phases share one copy of the transform's code:
    // a block runs each phase's once, and it waits on instruction fetch)
#pragma unroll 1
    for (int ph = 0; ph < 3; ++ph) {
        if (CHECK && ph == 2) ok = fold_verdict<DR_T>(A.part, G, A.res);
        dr2_phase<T, CHECK>(A, ph, G, acc, ok);
        if (CHECK && ph == 0) write_partial(A.part, acc);
        if (ph < 2) grid.sync();
    }
    // (the verdict is the grid's: every block or none waits in fold_residual)
    if (CHECK && ok) fold_residual<T, DR_T>(grid, A.inv.g, A.inv.u_out, A.inv.f, A.part, G, A.res);
}

// Row strides in shared memory that put the rows of a warp's transposed
// accesses on different banks: B elements of T per 128 bytes, W = B / rpb
// each.
template <class T> __host__ __device__ constexpr void dr_strides(DrAxis<T> &a)
{
    const int B = 128 / (int)sizeof(T), W = B >> a.rpb_log;
    a.grp_log = a.rpb_log;
    a.ls = a.N + (a.N >> 4) + 1;
    while (W >= 2 && a.ls % W != W / 2) ++a.ls; // 2 ls = W times an odd number
    a.lx = a.n;
    while (W >= 1 && a.lx % (2 * W) != W) ++a.lx; // lx = W times an odd number
}

// The row plan for length n (N = n+1): radices (16s first, then 27, 9, 3 and
// the other odd primes, the order dr_fft runs them in), threads per row so
// that no thread holds more than dr_g(R) butterflies in a pass (at most 256
// threads), and the shared memory strides.  False where N has a prime factor
// above 19, exceeds DR_NMAX or would need more threads per row (20 such N up
// to 4097, e.g. 4095: radix 13 leaves 315 butterflies).
template <class T> __host__ __device__ constexpr bool dr_plan(int n, DrAxis<T> &a)
{
    a = DrAxis<T>{};
    a.n = n;
    a.N = n + 1;
    if (n < 1 || a.N > DR_NMAX) return false;
    int rest = a.N, np = 0;
    while (rest % 2 == 0 && np < DR_MAXP) {
        int R = 1;
        while (rest % 2 == 0 && R < 16) { R *= 2; rest /= 2; }
        a.rad |= (unsigned long long)R << (5 * np++);
    }
    const int primes[] = {27, 9, 3, 5, 7, 11, 13, 17, 19};
    for (int p : primes)
        while (rest % p == 0 && np < DR_MAXP) {
            a.rad |= (unsigned long long)p << (5 * np++);
            rest /= p;
        }
    if (rest != 1) return false;
    a.np = np;
    { // dr_fft runs the radices in this order and skips none
        const int order[] = {16, 8, 4, 2, 27, 9, 3, 5, 7, 11, 13, 17, 19};
        int p = 0;
        for (int R : order)
            while (p < np && (int)((a.rad >> (5 * p)) & 31) == R) ++p;
        if (p != np) return false;
    }
    int tl = 4; // 16 threads per row at least
    for (;; ++tl) {
        if (tl > 8) return false;
        bool ok = true;
        for (int p = 0; p < np; ++p) {
            const int R = (int)(a.rad >> (5 * p)) & 31, m = a.N / R;
            ok = ok && (m + (1 << tl) - 1) >> tl <= dr_g(R);
        }
        if (ok) break;
    }
    a.tpr_log = tl;
    a.rpb_log = 8 - tl;
    dr_strides(a);
    return true;
}
// The plan of the inlined transform (dr_pow2_fft): N a power of two from
// 16 to 4096, N/16 threads per row, each holding one radix-16 butterfly.
// The row shape of that plan for N = 2^ln (its kernels' CN = 2^ln: the same
// values as compile-time constants).
template <class T> __host__ __device__ constexpr void dr_pow2_shape(int ln, DrAxis<T> &a)
{
    a.N = 1 << ln;
    a.n = a.N - 1;
    a.tpr_log = ln - 4;
    a.rpb_log = 8 - a.tpr_log;
    a.pow2 = true;
    dr_strides(a);
}
template <class T> bool dr_plan_pow2(int n, DrAxis<T> &a)
{
    a = DrAxis<T>{};
    const int N = n + 1;
    if (N < 16 || N > 4096 || (N & (N - 1))) return false;
    int ln = 4;
    while ((1 << ln) < N) ++ln;
    dr_pow2_shape(ln, a);
    return true;
}
template <class T> size_t dr_smem_bytes(const DrAxis<T> &a)
{
    return ((size_t)a.ls * sizeof(typename Cplx<T>::type) + (size_t)a.lx * sizeof(T)) << a.rpb_log;
}

} // namespace pgpu
