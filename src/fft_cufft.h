// fft_cufft.h -- the cuFFT route: per-axis DST / DCT / DFT pre- and post-processing
#pragma once
#include "fft_rows.h"

namespace pgpu {

// The solver works on a packed copy W (nx*ny*nz, no ghosts).  Each axis is
// diagonalised by its own transform (Dirichlet-Dirichlet: DST-I, Neumann-
// Neumann: DCT-II, Dirichlet-Neumann: a sine transform of odd length 2n+1,
// periodic: DFT), built on cuFFT real transforms of about the same length
// (except the all-Dirichlet 3D row kernels, fft_dirichlet.h); one axis (a
// mixed Dirichlet/Neumann one, else the slowest non-periodic one) is solved
// by tridiagonal systems instead.
// A transform along axis a reads W by lines along a and writes a scratch
// array in which lines along a are cuFFT batches: for a = 0 the lines are
// contiguous (c + len*b), otherwise line b's element c sits at b + B*c, so
// consecutive threads always touch consecutive addresses.

// A pass takes the lines b0 .. b0 + B - 1 of W (a chunk, FFT_CHUNK); the
// scratch holds those lines alone, line b of the chunk at its own place.
struct Lines {
    int a;              // the axis
    int n;              // its length in W
    int64_t nx, ny, nz; // W's extents
    int64_t P;          // W's plane stride (nx*ny, padded to even where cuFFT reads planes)
    int64_t B;          // number of lines (of this chunk)
    int64_t b0;         // the chunk's first line
    int small;          // every index of W and the scratch below 2^32: 32-bit divisions
};

__device__ __forceinline__ int64_t w_at(const Lines &L, int64_t b, int64_t c)
{
    b += L.b0;
    if (L.a == 2) return b + L.P * c;
    if (L.small) {
        const uint32_t u = (uint32_t)b, m = (uint32_t)(L.a == 0 ? L.ny : L.nx);
        const int64_t lo = u % m, hi = u / m;
        return L.a == 0 ? c + L.nx * lo + L.P * hi : lo + L.nx * c + L.P * hi;
    }
    if (L.a == 0) return c + L.nx * (b % L.ny) + L.P * (b / L.ny);
    return (b % L.nx) + L.nx * c + L.P * (b / L.nx);
}
__device__ __forceinline__ int64_t s_at(const Lines &L, int64_t b, int64_t c, int64_t len)
{
    return L.a == 0 ? c + len * b : b + L.B * c;
}
// Element t of a (B lines x len) scratch array -> (b, c), in memory order.
__device__ __forceinline__ void line_coords(const Lines &L, int64_t t, int64_t len, int64_t &b, int64_t &c)
{
    if (L.small) {
        const uint32_t u = (uint32_t)t, m = (uint32_t)(L.a == 0 ? len : L.B);
        const uint32_t q = u / m, r = u - q * m;
        if (L.a == 0) { c = r; b = q; }
        else { b = r; c = q; }
        return;
    }
    if (L.a == 0) { c = t % len; b = t / len; }
    else { b = t % L.B; c = t / L.B; }
}

// The first forward pass reads the right-hand side straight from the user's
// arrays (f plus boundary terms minus the mean), and the last inverse pass
// writes the solution straight into u: no separate copy passes.
template <class T> struct UserIO {
    Grid<T> g;
    const T *u_in, *f, *shift; // read == 1: the right-hand side comes from here
    T *u_out;                  // write == 1: the result goes here
    int read, write;
};

__device__ __forceinline__ void line_ijk(const Lines &L, int64_t b, int64_t c, int &i, int &j, int &k)
{
    b += L.b0;
    if (L.a == 0) { i = (int)c; j = (int)(b % L.ny); k = (int)(b / L.ny); }
    else if (L.a == 1) { i = (int)(b % L.nx); j = (int)c; k = (int)(b / L.nx); }
    else { i = (int)(b % L.nx); j = (int)(b / L.nx); k = (int)c; }
}

template <class T>
__device__ __forceinline__ T load_w(const Lines &L, const UserIO<T> &io, const T *__restrict__ W, int64_t b, int64_t c)
{
    if (!io.read) return W[w_at(L, b, c)];
    int i, j, k;
    line_ijk(L, b, c, i, j, k);
    const int64_t p = io.g.base + i + (int64_t)j * io.g.sy + (int64_t)k * io.g.sz;
    return io.f[p] + box_terms(io.g, io.u_in, p, i, j, k) - *io.shift;
}

template <class T>
__device__ __forceinline__ void store_w(const Lines &L, const UserIO<T> &io, T *__restrict__ W, int64_t b, int64_t c, T v)
{
    if (!io.write) { W[w_at(L, b, c)] = v; return; }
    int i, j, k;
    line_ijk(L, b, c, i, j, k);
    io.u_out[io.g.base + i + (int64_t)j * io.g.sy + (int64_t)k * io.g.sz] = v;
}


// W = f - shift + boundary terms over the interior (packed, x fastest; the
// shift first, so that a large mean does not round the boundary terms).
template <class T>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    fft_load_kernel(const Grid<T> g, const T *__restrict__ u, const T *__restrict__ f, const T *__restrict__ shiftp,
                    T *__restrict__ W, int64_t wp, int kchunk, int nyb, int nchunks)
{
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return;
    const int i = blockIdx.x * COL_BX + threadIdx.x, j = yb * COL_BY + threadIdx.y;
    if (i >= g.nx || j >= g.ny) return;
    const Shift<T> shift = load_shift(shiftp);
    const int k0 = zc * kchunk, k1 = min(k0 + kchunk, g.nz);
    for (int k = k0; k < k1; ++k) {
        const int64_t p = g.base + i + j * g.sy + (int64_t)k * g.sz;
        W[i + (int64_t)g.nx * j + wp * k] = shift.of(f[p]) + box_terms(g, u, p, i, j, k);
    }
}

// u interior = W.
template <class T>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    fft_store_kernel(const Grid<T> g, const T *__restrict__ W, int64_t wp, T *__restrict__ u, int kchunk, int nyb,
                     int nchunks)
{
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return;
    const int i = blockIdx.x * COL_BX + threadIdx.x, j = yb * COL_BY + threadIdx.y;
    if (i >= g.nx || j >= g.ny) return;
    const int k0 = zc * kchunk, k1 = min(k0 + kchunk, g.nz);
    for (int k = k0; k < k1; ++k)
        u[g.base + i + j * g.sy + (int64_t)k * g.sz] = W[i + (int64_t)g.nx * j + wp * k];
}

// 16 bytes of T, the shared-memory reads of dense_axis_kernel (N values
// from p, 16-byte aligned where N is a multiple of a vector).
template <class T> struct Vec16;
template <> struct Vec16<float> { typedef float4 type; };
template <> struct Vec16<double> { typedef double2 type; };
template <class T, int N> __device__ __forceinline__ void lds16(const T *p, T *r)
{
    typedef typename Vec16<T>::type V;
    constexpr int E = (int)(sizeof(V) / sizeof(T)), NV = N % E ? 0 : N; // (else a run shorter than a vector)
#pragma unroll
    for (int i = 0; i < NV; i += E) {
        const V v = *reinterpret_cast<const V *>(p + i);
        memcpy(r + i, &v, sizeof(V));
    }
#pragma unroll
    for (int i = NV; i < N; ++i) r[i] = p[i];
}

// The dense transform of an axis (one whose cuFFT length has a large prime
// factor: DENSE_NMAX), out[k] = sum_c M[k][c] in[c] along every line, with
// M = Q^T forward and Q inverse (fdm_basis's orthonormal Q: no scale).  On
// a Dirichlet-Dirichlet or Neumann-Neumann axis Q's column k is even (k
// even) or odd (k odd) about the middle, so each direction takes half the
// products: forward (DENSE_FOLD) the terms x[c] +- x[n-1-c] feed the even
// and the odd modes; inverse (DENSE_PAIR) E[i] from the even modes and O[i]
// from the odd ones give x[i] = E + O and x[n-1-i] = E - O.
enum { DENSE_PLAIN = 0, DENSE_FOLD = 1, DENSE_PAIR = 2 };
// The matrices as the kernel reads them, row c of terms at m + c ld:
//  PLAIN  m: M^T, n x n.
//  FOLD   m: n x ld, ld = nep + no: terms c < ne are x[c] + x[n-1-c] (the
//         middle alone where n is odd), the rest x[c-ne] - x[n-1-(c-ne)];
//         rows r < ne are mode 2r, rows nep + r mode 2r + 1 (nep: ne
//         rounded up to a tile, so that a tile lies in one half).
//  PAIR   m: Q[i][2c] (c < ne), m2: Q[i][2c+1] (c < no), ld = ne.
// ne = (n + 1) / 2 even modes, no = n / 2 odd ones.
template <class T> struct DenseMat {
    const T *m, *m2;
    int ld, ne, nep;
};

// A thread's line: element c at p + c s, in W (packed) or, where the pass
// writes the solution (user), in u.
struct DenseLine {
    int64_t p, s;
};
template <class T>
__device__ __forceinline__ DenseLine dense_line(const Lines &L, const UserIO<T> &io, int64_t b, bool user)
{
    if (!user) return DenseLine{w_at(L, b, 0), L.a == 0 ? 1 : L.a == 1 ? L.nx : L.P};
    int i, j, k;
    line_ijk(L, b, 0, i, j, k);
    return DenseLine{io.g.base + i + (int64_t)j * io.g.sy + (int64_t)k * io.g.sz,
                     L.a == 0 ? 1 : L.a == 1 ? io.g.sy : io.g.sz};
}

// Block (x, y) forms lines x BN .. and a tile of rows y as a
// register-tiled product, DENSE_KC terms staged at a time, the next ones
// loaded into registers while the current are multiplied.  Thread (tx, ty)
// holds TM x TN sums -- rows rt TM/2 .. and BM/2 + rt TM/2 .. of the tile
// (PAIR: E and O of the same rows), lines lt TN/2 .. likewise, (rt, lt) =
// (ty, tx), or (tx, ty) on x lines, whose rows are contiguous in memory, so
// that a warp's stores fall close together -- and reads the staged tiles
// in 16-byte vectors.  It loads terms of one line (for x
// lines, contiguous, a run of them; else every (256/BN)-th term,
// consecutive threads on consecutive lines) and of one column of the
// matrix.  Reads W, writes Y (or u: io.write): never in place.
template <class T, int TM, int TN, int MODE>
__global__ void __launch_bounds__(DENSE_T, Tune<T>::F32 && MODE != DENSE_PAIR ? 2 : 1)
    dense_axis_kernel(const Lines L, const UserIO<T> io, const DenseMat<T> M, const T *__restrict__ W,
                      T *__restrict__ Y)
{
    constexpr int BM = 16 * TM, BN = 16 * TN, PAD = 16 / (int)sizeof(T), H = TM / 2;
    constexpr int KC = DENSE_KC, NA = KC * BM / DENSE_T, NB = KC * BN / DENSE_T;
    constexpr bool PAIR = MODE == DENSE_PAIR;
    static_assert(DENSE_T == 256 && NA * DENSE_T == KC * BM && NB * DENSE_T == KC * BN, "dense_axis_kernel: tiles");
    __shared__ __align__(16) T As[KC][BM + PAD];
    __shared__ __align__(16) T Bs[PAIR ? 2 : 1][KC][BN + PAD];
    const int n = L.n, ne = M.ne, no = n / 2, t = threadIdx.x, tx = t % 16, ty = t / 16;
    const int64_t b0 = (int64_t)blockIdx.x * BN;
    // The tile's rows and terms.
    const int r0 = blockIdx.y * (PAIR ? BM / 2 : BM);
    const bool odd = MODE == DENSE_FOLD && r0 >= M.nep;
    const int c_lo = odd ? ne : 0, c_hi = MODE == DENSE_PLAIN || odd ? n : ne;
    // This thread's loads: matrix column ka at terms ca + j 256/BM; line lb
    // at terms cb + j cs.
    const int ka = t % BM, ca = t / BM;
    const int lb = L.a == 0 ? t / (DENSE_T / BN) : t % BN;
    const int cb = L.a == 0 ? (t % (DENSE_T / BN)) * NB : t / BN, cs = L.a == 0 ? 1 : DENSE_T / BN;
    const T *mp;
    int a_rows, a_terms; // the column's valid rows (ka's bound) and terms
    if (PAIR) {
        const bool e = ka < BM / 2;
        mp = (e ? M.m : M.m2) + r0 + (e ? ka : ka - BM / 2);
        a_rows = r0 + (e ? ka : ka - BM / 2) < ne;
        a_terms = e ? ne : no;
    } else {
        mp = M.m + r0 + ka;
        a_rows = r0 + ka < M.ld;
        a_terms = n;
    }
    const bool b_ok = b0 + lb < L.B;
    const DenseLine dl = dense_line(L, io, b_ok ? b0 + lb : 0, false);
    const T *const wl = W + dl.p;
    // The sums' rows along the lanes on x lines (whose rows are contiguous
    // in memory), else their lines: the lanes' stores fall close together.
    const int rt = L.a == 0 ? tx : ty, lt = L.a == 0 ? ty : tx;
    T ra[NA], rb[PAIR ? 2 : 1][NB];
    auto fetch = [&](int c0) {
#pragma unroll
        for (int j = 0; j < NA; ++j) {
            const int c = c0 + ca + j * (DENSE_T / BM);
            ra[j] = a_rows && c < c_hi && c < a_terms ? __ldg(mp + (int64_t)c * M.ld) : T(0);
        }
#pragma unroll
        for (int j = 0; j < NB; ++j) {
            const int c = c0 + cb + j * cs;
            const bool in = b_ok && c < c_hi;
            if (MODE == DENSE_PLAIN) {
                rb[0][j] = in ? wl[(int64_t)c * dl.s] : T(0);
            } else if (MODE == DENSE_FOLD) {
                const int d = c < ne ? c : c - ne;
                T v = T(0);
                if (in) {
                    v = wl[(int64_t)d * dl.s];
                    if (d < no) {
                        const T w = wl[(int64_t)(n - 1 - d) * dl.s];
                        v = c < ne ? v + w : v - w;
                    }
                }
                rb[0][j] = v;
            } else {
                rb[0][j] = in ? wl[(int64_t)(2 * c) * dl.s] : T(0);
                rb[PAIR ? 1 : 0][j] = in && c < no ? wl[(int64_t)(2 * c + 1) * dl.s] : T(0);
            }
        }
    };
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
    fetch(c_lo);
    for (int c0 = c_lo; c0 < c_hi; c0 += KC) {
#pragma unroll
        for (int j = 0; j < NA; ++j) As[ca + j * (DENSE_T / BM)][ka] = ra[j];
#pragma unroll
        for (int h = 0; h < (PAIR ? 2 : 1); ++h)
#pragma unroll
            for (int j = 0; j < NB; ++j) Bs[h][cb + j * cs][lb] = rb[h][j];
        __syncthreads();
        if (c0 + KC < c_hi) fetch(c0 + KC);
#pragma unroll
        for (int c = 0; c < KC; ++c) {
            T a[TM], v[PAIR ? 2 : 1][TN];
            lds16<T, H>(&As[c][rt * H], a);
            lds16<T, H>(&As[c][BM / 2 + rt * H], a + H);
#pragma unroll
            for (int h = 0; h < (PAIR ? 2 : 1); ++h) {
                lds16<T, TN / 2>(&Bs[h][c][lt * (TN / 2)], v[h]);
                lds16<T, TN / 2>(&Bs[h][c][BN / 2 + lt * (TN / 2)], v[h] + TN / 2);
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], v[PAIR && i >= H ? 1 : 0][j], acc[i][j]);
        }
        __syncthreads();
    }
    // Out: each of the thread's lines, its rows.
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int64_t b = b0 + (j < TN / 2 ? lt * (TN / 2) + j : BN / 2 + lt * (TN / 2) + j - TN / 2);
        if (b >= L.B) continue;
        const DenseLine d = dense_line(L, io, b, io.write != 0);
        T *const y = io.write ? io.u_out : Y;
#pragma unroll
        for (int i = 0; i < (PAIR ? H : TM); ++i) {
            const int r = r0 + (i < H ? rt * H + i : BM / 2 + rt * H + i - H);
            if (PAIR) {
                const T e = acc[i][j], o = acc[H + i][j];
                if (r < no) {
                    y[d.p + (int64_t)r * d.s] = e + o;
                    y[d.p + (int64_t)(n - 1 - r) * d.s] = e - o;
                } else if (r < ne) {
                    y[d.p + (int64_t)r * d.s] = e;
                }
            } else {
                int k = r;
                if (MODE == DENSE_FOLD) k = r < M.nep ? (r < ne ? 2 * r : n) : (r - M.nep < no ? 2 * (r - M.nep) + 1 : n);
                if (k < n) y[d.p + (int64_t)k * d.s] = acc[i][j];
            }
        }
    }
}

// DST-I of length n through a real FFT of length M = n+1 (the same length, no
// odd extension): y_0 = 0, y_j = sin(pi j/M)(x_j + x_{M-j}) + (x_j - x_{M-j})/2
// (1-based x, x_M = 0); then with Y = FFT(y) = A - iB the transform is
// X_{2k} = B_k, X_{2k+1} = X_{2k-1} + A_k, X_1 = A_0/2.  DST-I is its own
// inverse up to 2/(n+1), so the same three passes serve both directions.
template <class T>
__global__ void dst1_pre_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ W, T *__restrict__ S)
{
    const int64_t M = L.n + 1;
    PGPU_GRID_STRIDE(t, L.B * M)
    {
        int64_t b, c;
        line_coords(L, t, M, b, c);
        T y = T(0);
        if (c > 0) {
            const T xj = load_w(L, io, W, b, c - 1);
            const T xm = load_w(L, io, W, b, M - c - 1);
            y = (T)sinpi((double)c / (double)M) * (xj + xm) + T(0.5) * (xj - xm);
        }
        S[s_at(L, b, c, M)] = y;
    }
}

// Lines along y or z: one thread per line walks the half spectrum carrying
// the running sum (consecutive threads read consecutive addresses).
template <class T>
__global__ void dst1_post_kernel(const Lines L, const UserIO<T> io, const typename Cplx<T>::type *__restrict__ C,
                                 T *__restrict__ W)
{
    const int64_t M = L.n + 1, H = M / 2 + 1;
    PGPU_GRID_STRIDE(b, L.B)
    {
        T odd = T(0);
#pragma unroll 8
        for (int64_t k = 0; k < H; ++k) {
            const typename Cplx<T>::type y = C[s_at(L, b, k, H)];
            if (k == 0) odd = T(0.5) * y.x;
            else odd += y.x;
            if (k > 0 && 2 * k <= L.n) store_w(L, io, W, b, 2 * k - 1, -y.y);
            if (2 * k + 1 <= L.n) store_w(L, io, W, b, 2 * k, odd);
        }
    }
}

// Lines along x (contiguous): one warp per line, 32 modes at a time, the
// running sum as a warp scan carried from chunk to chunk.
template <class T>
__global__ void dst1_post_x_kernel(const Lines L, const UserIO<T> io, const typename Cplx<T>::type *__restrict__ C,
                                   T *__restrict__ W)
{
    const int64_t M = L.n + 1, H = M / 2 + 1;
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t b = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; b < L.B; b += warps) {
        const typename Cplx<T>::type *line = C + b * H;
        T carry = T(0);
        for (int64_t base = 0; base < H; base += 32) {
            const int64_t k = base + lane;
            typename Cplx<T>::type y;
            y.x = y.y = T(0);
            if (k < H) y = line[k];
            T s = k == 0 ? T(0.5) * y.x : y.x; // inclusive scan of A'_k
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const T t = __shfl_up_sync(0xffffffffu, s, o);
                if (lane >= o) s += t;
            }
            s += carry;
            if (k > 0 && 2 * k <= L.n) store_w(L, io, W, b, 2 * k - 1, -y.y);
            if (k < H && 2 * k + 1 <= L.n) store_w(L, io, W, b, 2 * k, s);
            carry = __shfl_sync(0xffffffffu, s, 31);
        }
    }
}

// DST-I of length n from the real FFT of the odd extension of length 2M
// (z_j = x_j, z_{2M-j} = -x_j for 1 <= j <= n, z_0 = z_M = 0): X_k =
// -Im(Z_k) / 2, the same transform as above.  Twice the transform length,
// but every output comes straight from the FFT.  The running sum above adds
// up the FFT's rounding of every A_k into the odd outputs: in float the high
// modes of a smooth row, which a solve's residual weighs by k^2, came out
// many times their size (at n = 1300, 26 times), so float takes this form
// (Tune::dst_extension); in double the sum costs digits nobody sees.
template <class T>
__global__ void dst1x_pre_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ W, T *__restrict__ S)
{
    const int64_t M = L.n + 1, M2 = 2 * M;
    PGPU_GRID_STRIDE(t, L.B * M2)
    {
        int64_t b, c;
        line_coords(L, t, M2, b, c);
        T z = T(0);
        if (c > 0 && c < M) z = load_w(L, io, W, b, c - 1);
        else if (c > M) z = -load_w(L, io, W, b, M2 - c - 1);
        S[s_at(L, b, c, M2)] = z;
    }
}

template <class T>
__global__ void dst1x_post_kernel(const Lines L, const UserIO<T> io, const typename Cplx<T>::type *__restrict__ C,
                                  T *__restrict__ W)
{
    const int64_t H = L.n + 2; // the half spectrum of length 2M
    PGPU_GRID_STRIDE(t, L.B * L.n)
    {
        int64_t b, k;
        line_coords(L, t, L.n, b, k);
        store_w(L, io, W, b, k, T(-0.5) * C[s_at(L, b, k + 1, H)].y);
    }
}

// An axis with a Dirichlet face at one end and a Neumann face at the other
// (FFT_DN: Dirichlet low; FFT_ND, REV: Dirichlet high).  Counting the nodes
// j = 1..n from the Dirichlet face, its modes are sin(pi (2k+1) j / M),
// M = 2n + 1 (the Neumann face, half a spacing past node n, mirrors them).
// Forward: X_k = 2 sum_j x_j sin(pi (2k+1) j / M) = Im(Z_{n-k}), Z the real
// FFT of length M of z_0 = 0, z_j = (-1)^j x_j, z_{M-j} = -z_j (j <= n).
// Inverse: x_j = 2 sum_k X_k sin(pi (2k+1) j / M) = (-1)^j y_j, y the
// inverse real FFT of Y_0 = 0, Y_m = i X_{n-m}.  The two give M x.
template <class T, bool REV>
__global__ void dn_pre_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ W, T *__restrict__ S)
{
    const int64_t n = L.n, M = 2 * n + 1;
    PGPU_GRID_STRIDE(t, L.B * M)
    {
        int64_t b, c;
        line_coords(L, t, M, b, c);
        T z = T(0);
        if (c > 0) {
            const int64_t j = c <= n ? c : M - c;
            const T x = load_w(L, io, W, b, REV ? n - j : j - 1);
            z = ((j & 1) != 0) != (c > n) ? -x : x;
        }
        S[s_at(L, b, c, M)] = z;
    }
}

template <class T>
__global__ void dn_post_kernel(const Lines L, const typename Cplx<T>::type *__restrict__ C, T *__restrict__ W)
{
    const int64_t n = L.n, H = n + 1;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, k;
        line_coords(L, t, n, b, k);
        W[w_at(L, b, k)] = C[s_at(L, b, n - k, H)].y;
    }
}

template <class T>
__global__ void dn_inverse_pre_kernel(const Lines L, const T *__restrict__ W, typename Cplx<T>::type *__restrict__ C)
{
    const int64_t n = L.n, H = n + 1;
    PGPU_GRID_STRIDE(t, L.B * H)
    {
        int64_t b, m;
        line_coords(L, t, H, b, m);
        typename Cplx<T>::type y;
        y.x = T(0);
        y.y = m > 0 ? W[w_at(L, b, n - m)] : T(0);
        C[s_at(L, b, m, H)] = y;
    }
}

template <class T, bool REV>
__global__ void dn_inverse_post_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ S, T *__restrict__ W)
{
    const int64_t n = L.n, M = 2 * n + 1;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, c;
        line_coords(L, t, n, b, c);
        const int64_t j = REV ? n - c : c + 1;
        const T y = S[s_at(L, b, j, M)];
        store_w(L, io, W, b, c, (j & 1) ? -y : y);
    }
}

// DCT-II (X_k = sum_j x_j cos(pi k (2j+1) / 2n)) by Makhoul's reordering:
// v = (x_0, x_2, x_4, ..., x_5, x_3, x_1), V = FFT(v), X_k = Re(e^{-i pi k/2n} V_k).
// REORDER false: the lines as they are (FFT_RHC).
template <class T, bool REORDER>
__global__ void dct2_pre_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ W, T *__restrict__ S)
{
    const int64_t n = L.n;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, c;
        line_coords(L, t, n, b, c);
        const int64_t src = !REORDER ? c : c < (n + 1) / 2 ? 2 * c : 2 * n - 1 - 2 * c;
        S[s_at(L, b, c, n)] = load_w(L, io, W, b, src);
    }
}

template <class T>
__global__ void dct2_post_kernel(const Lines L, const typename Cplx<T>::type *__restrict__ C, T *__restrict__ W)
{
    const int64_t n = L.n, H = n / 2 + 1;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, k;
        line_coords(L, t, n, b, k);
        typename Cplx<T>::type v = C[s_at(L, b, k <= n / 2 ? k : n - k, H)];
        if (k > n / 2) v.y = -v.y; // V_k = conj(V_{n-k})
        double s, c;
        sincospi((double)k / (double)(2 * n), &s, &c);
        W[w_at(L, b, k)] = (T)c * v.x + (T)s * v.y; // Re(e^{-i pi k/2n} V_k)
    }
}

// Inverse DCT-II: V_k = e^{i pi k/2n} (X_k - i X_{n-k}) (X_n = 0) for k <= n/2,
// an inverse real FFT (scaled by 1/n elsewhere), then undo the reordering.
template <class T>
__global__ void dct3_pre_kernel(const Lines L, const T *__restrict__ W, typename Cplx<T>::type *__restrict__ C)
{
    const int64_t n = L.n, H = n / 2 + 1;
    PGPU_GRID_STRIDE(t, L.B * H)
    {
        int64_t b, k;
        line_coords(L, t, H, b, k);
        const T a = W[w_at(L, b, k)];
        const T m = k > 0 ? W[w_at(L, b, n - k)] : T(0);
        double s, c;
        sincospi((double)k / (double)(2 * n), &s, &c);
        typename Cplx<T>::type v;
        v.x = (T)c * a + (T)s * m; // (c + i s)(a - i m)
        v.y = (T)s * a - (T)c * m;
        C[s_at(L, b, k, H)] = v;
    }
}

template <class T, bool REORDER>
__global__ void dct3_post_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ S, T *__restrict__ W)
{
    const int64_t n = L.n;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, c;
        line_coords(L, t, n, b, c); // c: position in W
        const int64_t src = !REORDER ? c : (c % 2 == 0) ? c / 2 : n - 1 - (c - 1) / 2;
        store_w(L, io, W, b, c, S[s_at(L, b, src, n)]);
    }
}

// The periodic DFT as a real transform (FFT_RHC): a line's half spectrum V
// in halfcomplex order, slot 0 = Re V_0, slot 2k - 1 = Re V_k, slot 2k =
// Im V_k (n even: slot n - 1 = Re V_{n/2}).  Each slot's basis function
// (cos or sin of mode k) is an eigenvector of the periodic second
// difference, so the slots of several axes multiply out as modes do.
template <class T>
__global__ void rhc_post_kernel(const Lines L, const typename Cplx<T>::type *__restrict__ C, T *__restrict__ W)
{
    const int64_t n = L.n, H = n / 2 + 1;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, j;
        line_coords(L, t, n, b, j);
        const typename Cplx<T>::type v = C[s_at(L, b, (j + 1) / 2, H)];
        W[w_at(L, b, j)] = (j == 0 || (j & 1)) ? v.x : v.y;
    }
}
// ... and back to the half spectrum (then cuFFT's C2R: n times the line).
template <class T>
__global__ void hcr_pre_kernel(const Lines L, const T *__restrict__ W, typename Cplx<T>::type *__restrict__ C)
{
    const int64_t n = L.n, H = n / 2 + 1;
    PGPU_GRID_STRIDE(t, L.B * H)
    {
        int64_t b, k;
        line_coords(L, t, H, b, k);
        typename Cplx<T>::type v;
        v.x = W[w_at(L, b, k == 0 ? 0 : 2 * k - 1)];
        v.y = k > 0 && 2 * k < n ? W[w_at(L, b, 2 * k)] : T(0);
        C[s_at(L, b, k, H)] = v;
    }
}

} // namespace pgpu
