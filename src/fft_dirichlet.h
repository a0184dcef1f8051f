// fft_dirichlet.h -- the all-Dirichlet rows: DST-I by our own mixed-radix FFT
#pragma once
#include "fft_rows.h"

namespace pgpu {

//
// When every face is Dirichlet (3D) and each n+1 factors into primes up to
// 19 (n <= 4096; dr_plan says which rows fit), the solve is six passes over the data, each a row kernel (dr_kernel):
//   x forward  f's rows (plus boundary terms)  -> T1[kx][z][y]  (transposed)
//   y forward  T1's rows                       -> T2[ky][kx][z]
//   z forward  T2's rows, divided by the eigenvalues, in place
//   z inverse  T2's rows, in place
//   y inverse  T2 (transposed)                 -> T1's rows
//   x inverse  T1 (transposed)                 -> u's rows
// against about fourteen for the cuFFT route (pre-processing, transform and
// post-processing per axis, copies).  A row of n values is transformed in
// shared memory: DST-I of length n is the real FFT of its odd extension of
// length 2N (N = n+1), computed as a complex FFT of length N of the packed
// pairs w_m = z_2m + i z_2m+1 (the extension lives in shared memory only,
// never in global memory) and the usual split; X_k = -Im(Z_k)/2.  The
// complex FFT is a Stockham transform of radices 2, 4, 8, 16, 9, 27 and the
// odd primes to 19 (513 = 27 x 19: two passes), in place: every thread loads
// its butterflies' values into registers, the row's threads synchronise, and
// the results go back.  A row of up to 32 threads is one warp and
// synchronises as one.  DST-I is its own inverse up to 2/N.
//
// Measured at 512^3 on an H100 (ncu, per kernel): 1.5-1.7 ms per pass in
// float and 3.0-3.5 ms in double, the first pass 2.5 / 5.1 ms.  Each pass
// is far from the copy bandwidth (0.36 / 0.72 ms): at 128 registers per
// thread (float) two blocks of 256 threads fit an SM, at ~240 (double) one,
// too few warps to hide the passes' shared memory latency.  Capping the registers
// (launch bounds for 3 or 4 blocks) made them spill and ran 1.4-3x slower;
// the passes inlined rather than called ran 1.3-1.8x slower.

// One row's transform: its length, the radices, threads per row and rows per
// block (powers of two, tpr * rpb = DR_T), the strides of a row in shared
// memory (ls complex values for the FFT, lx reals for the result) and the
// twiddles tw[q] = e^{-i pi q/N}, q < 2N.
template <class T> struct DrAxis {
    int n, N, np, tpr_log, rpb_log, ls, lx;
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

// z_j of the odd extension (length 2N) into the packed row: x_j at z_j and
// -x_j at z_{2N-j} (1 <= j <= n).
template <class T> __device__ __forceinline__ void dr_put(T *sr, int N, int j, T v)
{
    const int p = 2 * N - j;
    sr[2 * lf_pad(j >> 1) + (j & 1)] = v;
    sr[2 * lf_pad(p >> 1) + (p & 1)] = -v;
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
    T scale;            // applied to every output value
    const T *evA, *evB, *evK; // solve: eigenvalue of row r: evA[r % nA] + evB[r / nA] (evB may be NULL),
    int64_t nA;               // plus evK[k] for element k
};

template <class T, int IN, int OUT, bool DIVIDE>
__global__ void __launch_bounds__(DR_T) dr_kernel(const DrArgs<T> A)
{
    typedef typename Cplx<T>::type C2;
    extern __shared__ __align__(16) unsigned char dr_smem[];
    const DrAxis<T> &ax = A.ax;
    const int n = ax.n, N = ax.N, tpr = 1 << ax.tpr_log, rpb = 1 << ax.rpb_log;
    C2 *rows = (C2 *)dr_smem;
    T *xs = (T *)(rows + rpb * ax.ls);
    const int q = threadIdx.x >> ax.tpr_log, t = threadIdx.x & (tpr - 1);
    const int64_t row0 = (int64_t)blockIdx.x * rpb, r = row0 + q;
    const int here = (int)min((int64_t)rpb, A.nrows - row0);
    C2 *s = rows + q * ax.ls;
    T *sr = (T *)s, *x = xs + q * ax.lx;
    const C2 *tw = ax.tw;
    // The odd extension of each row.
    if (IN == DR_TRANS) {
        for (int e = threadIdx.x; e < rpb * n; e += DR_T) {
            const int qq = e & (rpb - 1), i = e >> ax.rpb_log;
            const T v = qq < here ? A.in[(int64_t)i * A.nrows + row0 + qq] : T(0);
            dr_put((T *)(rows + qq * ax.ls), N, i + 1, v);
        }
    } else if (IN == DR_ROWS) {
        const T *src = A.in + r * n;
        for (int i = t; i < n; i += tpr) dr_put(sr, N, i + 1, q < here ? src[i] : T(0));
    } else {
        const Grid<T> &g = A.g;
        const int jy = (int)(r % g.ny), kz = (int)(r / g.ny);
        const int64_t b = g.base + jy * g.sy + (int64_t)kz * g.sz;
        for (int i = t; i < n; i += tpr)
            dr_put(sr, N, i + 1, q < here ? A.f[b + i] + boundary_terms(g, A.u_in, b + i, i, jy, kz) : T(0));
    }
    // The transform, scaled, or divided by the eigenvalues (DIVIDE).
    if (t == 0) dr_zeros(sr, N);
    __syncthreads();
    dr_fft<T>(s, ax, t, tw);
    if (DIVIDE) {
        // rows are (kx, ky) or kx: fewer than 2^24 (axes of at most DR_NMAX)
        const unsigned rr = (unsigned)min(r, A.nrows - 1), na = (unsigned)A.nA;
        const T lrow = A.evA[rr % na] + (A.evB ? A.evB[rr / na] : T(0));
        for (int k = t + 1; k <= n; k += tpr) x[k - 1] = dr_split(s, N, k, tw) * (A.scale / (lrow + A.evK[k - 1]));
    } else {
        for (int k = t + 1; k <= n; k += tpr) x[k - 1] = dr_split(s, N, k, tw) * A.scale;
    }
    __syncthreads();
    if (OUT == DR_TRANS) {
        for (int e = threadIdx.x; e < rpb * n; e += DR_T) {
            const int qq = e & (rpb - 1), i = e >> ax.rpb_log;
            if (qq < here) A.out[(int64_t)i * A.nrows + row0 + qq] = xs[qq * ax.lx + i];
        }
    } else if (q < here) {
        if (OUT == DR_ROWS) {
            T *dst = A.out + r * n;
            for (int i = t; i < n; i += tpr) dst[i] = x[i];
        } else {
            const Grid<T> &g = A.g;
            const int64_t b = g.base + (r % g.ny) * g.sy + (r / g.ny) * g.sz;
            for (int i = t; i < n; i += tpr) A.u_out[b + i] = x[i];
        }
    }
}

// The row plan for length n (N = n+1): radices (16s first, then 27, 9, 3 and
// the other odd primes, the order dr_fft runs them in), threads per row so
// that no thread holds more than dr_g(R) butterflies in a pass (at most 256
// threads), and the shared memory strides.  False where N has a prime factor
// above 19, exceeds DR_NMAX or would need more threads per row (20 such N up
// to 4097, e.g. 4095: radix 13 leaves 315 butterflies).
template <class T> bool dr_plan(int n, DrAxis<T> &a)
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
    static const int primes[] = {27, 9, 3, 5, 7, 11, 13, 17, 19};
    for (int p : primes)
        while (rest % p == 0 && np < DR_MAXP) {
            a.rad |= (unsigned long long)p << (5 * np++);
            rest /= p;
        }
    if (rest != 1) return false;
    a.np = np;
    { // dr_fft runs the radices in this order and skips none
        static const int order[] = {16, 8, 4, 2, 27, 9, 3, 5, 7, 11, 13, 17, 19};
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
    const int rpb = 1 << a.rpb_log;
    // Row strides that put the rows of a warp's transposed accesses on
    // different banks: B elements of T per 128 bytes, W = B / rpb each.
    const int B = 128 / (int)sizeof(T), W = B >> a.rpb_log;
    a.ls = a.N + (a.N >> 4) + 1;
    while (W >= 2 && a.ls % W != W / 2) ++a.ls; // 2 ls = W times an odd number
    a.lx = n;
    while (a.lx % (2 * W) != W) ++a.lx;         // lx = W times an odd number
    return true;
}
template <class T> size_t dr_smem_bytes(const DrAxis<T> &a)
{
    return ((size_t)a.ls * sizeof(typename Cplx<T>::type) + (size_t)a.lx * sizeof(T)) << a.rpb_log;
}

} // namespace pgpu
