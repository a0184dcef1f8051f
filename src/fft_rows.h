// fft_rows.h -- the FFT solver's row-FFT core and the all-periodic rows
#pragma once
#include "operator.h"

namespace pgpu {

// The direct solver.  Each axis is diagonalised by its own transform
// (Dirichlet-Dirichlet: DST-I, Neumann-Neumann: DCT-II, periodic: DFT), the
// eigenvalues divide the spectrum, and the inverse transforms give u; at most
// one axis (a mixed Dirichlet/Neumann one, or else the slowest non-periodic
// one) is solved by tridiagonal systems instead.  Three routes:
//  - all-periodic, nx a power of two: our row kernels take x (and z when nz
//    is one), straight from f and into u; cuFFT takes y (lf_* kernels);
//  - 3D all-Dirichlet, every n+1 a product of primes up to 19: five or six
//    passes of our DST-I row kernels, no cuFFT (dr_kernel);
//  - otherwise the cuFFT route: per axis a pre-processing pass, a cuFFT real
//    transform and a post-processing pass, on a packed copy.
// The two row engines share one Stockham pass (row_pass) and the in-register
// DFTs.

template <class T> struct Cplx;
template <> struct Cplx<float> { typedef float2 type; };
template <> struct Cplx<double> { typedef double2 type; };

// ---- the row-FFT core ----
// Rows live in shared memory with one spare slot per 16 values (lf_pad), so
// that the strided stores of a pass spread over the banks.

__device__ __forceinline__ int lf_pad(int i) { return i + (i >> 4); }

template <class C> __device__ __forceinline__ C c_add(C a, C b)
{
    a.x += b.x;
    a.y += b.y;
    return a;
}
template <class C> __device__ __forceinline__ C c_sub(C a, C b)
{
    a.x -= b.x;
    a.y -= b.y;
    return a;
}
template <class C> __device__ __forceinline__ C c_mul(C a, C b)
{
    C r;
    r.x = a.x * b.x - a.y * b.y;
    r.y = a.x * b.y + a.y * b.x;
    return r;
}
template <class C> __device__ __forceinline__ C c_conj(C a)
{
    a.y = -a.y;
    return a;
}
template <class C> __device__ __forceinline__ C c_half(C a)
{
    a.x *= 0.5f;
    a.y *= 0.5f;
    return a;
}
// i a
template <class C> __device__ __forceinline__ C c_muli(C a)
{
    C r;
    r.x = -a.y;
    r.y = a.x;
    return r;
}

// cos(2 pi q/16), 0 <= q < 24 (sin(2 pi q/16) = cos(2 pi (q+12)/16)).
__host__ __device__ constexpr double lf_cos16(int q)
{
    return (q & 15) == 0 ? 1.0
           : (q & 15) == 1 || (q & 15) == 15 ? 0.92387953251128674
           : (q & 15) == 2 || (q & 15) == 14 ? 0.70710678118654752
           : (q & 15) == 3 || (q & 15) == 13 ? 0.38268343236508977
           : (q & 15) == 4 || (q & 15) == 12 ? 0.0
           : (q & 15) == 5 || (q & 15) == 11 ? -0.38268343236508977
           : (q & 15) == 6 || (q & 15) == 10 ? -0.70710678118654752
           : (q & 15) == 7 || (q & 15) == 9 ? -0.92387953251128674
                                             : -1.0;
}

// v e^{-2 pi i q/16}; q is a constant once the callers' loops are unrolled.
template <class C> __device__ __forceinline__ C c_rot16(C v, int q)
{
    typedef decltype(v.x) R;
    if (q == 0) return v;
    if (q == 4) { // -i v
        C r;
        r.x = v.y;
        r.y = -v.x;
        return r;
    }
    const R c = (R)lf_cos16(q), s = (R)lf_cos16(q + 12);
    C r;
    r.x = v.x * c + v.y * s;
    r.y = v.y * c - v.x * s;
    return r;
}

// In-register DFT of R = 2, 4, 8 or 16 values, natural order in and out.
template <int R, class C> __device__ __forceinline__ void lf_dft(C *v)
{
    constexpr int B = R == 2 ? 1 : R == 4 ? 2 : R == 8 ? 3 : 4;
#pragma unroll
    for (int i = 0; i < R; ++i) {
        int j = 0; // i with its B bits reversed
#pragma unroll
        for (int b = 0; b < B; ++b) j |= ((i >> b) & 1) << (B - 1 - b);
        if (j > i) {
            const C t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
    }
#pragma unroll
    for (int st = 0; st < B; ++st) { // butterflies of span h = 2^st
        const int h = 1 << st;
#pragma unroll
        for (int p = 0; p < R / 2; ++p) {
            const int k = p & (h - 1), i = (p - k) * 2 + k;
            const C a = v[i], b = c_rot16(v[i + h], k * (8 >> st));
            v[i] = c_add(a, b);
            v[i + h] = c_sub(a, b);
        }
    }
}



// sin (s = 1) or cos (s = 0) of 2 pi m/R, R an odd prime <= 19, 9 or 27, 1 <= m <= (R-1)/2.
__host__ __device__ constexpr double dr_trig_table(int key, int s)
{
    switch (key) {
    case 97: return s ? 0.86602540378443864676 : -0.50000000000000000000;
    case 161: return s ? 0.95105651629515357212 : 0.30901699437494742410;
    case 162: return s ? 0.58778525229247312917 : -0.80901699437494742410;
    case 225: return s ? 0.78183148246802980871 : 0.62348980185873353053;
    case 226: return s ? 0.97492791218182360702 : -0.22252093395631440429;
    case 227: return s ? 0.43388373911755812048 : -0.90096886790241912624;
    case 289: return s ? 0.64278760968653932632 : 0.76604444311897803520;
    case 290: return s ? 0.98480775301220805937 : 0.17364817766693034885;
    case 291: return s ? 0.86602540378443864676 : -0.50000000000000000000;
    case 292: return s ? 0.34202014332566873304 : -0.93969262078590838405;
    case 353: return s ? 0.54064081745559758211 : 0.84125353283118116886;
    case 354: return s ? 0.90963199535451837141 : 0.41541501300188642553;
    case 355: return s ? 0.98982144188093273238 : -0.14231483827328514044;
    case 356: return s ? 0.75574957435425828377 : -0.65486073394528506406;
    case 357: return s ? 0.28173255684142969771 : -0.95949297361449738989;
    case 417: return s ? 0.46472317204376854566 : 0.88545602565320989590;
    case 418: return s ? 0.82298386589365639458 : 0.56806474673115580251;
    case 419: return s ? 0.99270887409805399280 : 0.12053668025532305335;
    case 420: return s ? 0.93501624268541482344 : -0.35460488704253562597;
    case 421: return s ? 0.66312265824079520238 : -0.74851074817110109863;
    case 422: return s ? 0.23931566428755776715 : -0.97094181742605202716;
    case 545: return s ? 0.36124166618715294874 : 0.93247222940435580457;
    case 546: return s ? 0.67369564364655721171 : 0.73900891722065911592;
    case 547: return s ? 0.89516329135506232207 : 0.44573835577653826740;
    case 548: return s ? 0.99573417629503452187 : 0.092268359463301995240;
    case 549: return s ? 0.96182564317281907041 : -0.27366299007208286354;
    case 550: return s ? 0.79801722728023950333 : -0.60263463637925638918;
    case 551: return s ? 0.52643216287735580024 : -0.85021713572961415213;
    case 552: return s ? 0.18374951781657033157 : -0.98297309968390177828;
    case 609: return s ? 0.32469946920468348741 : 0.94581724170063467902;
    case 610: return s ? 0.61421271268966781744 : 0.78914050939639359922;
    case 611: return s ? 0.83716647826252857481 : 0.54694815812242687471;
    case 612: return s ? 0.96940026593933041674 : 0.24548548714079914892;
    case 613: return s ? 0.99658449300666984982 : -0.082579345472332324600;
    case 614: return s ? 0.91577332665505743992 : -0.40169542465296945752;
    case 615: return s ? 0.73572391067313162477 : -0.67728157162574107476;
    case 616: return s ? 0.47594739303707354443 : -0.87947375120648907139;
    case 617: return s ? 0.16459459028073389414 : -0.98636130340272237360;
    case 865: return s ? 0.23061587074244017845 : 0.97304487057982383883;
    case 866: return s ? 0.44879918020046217279 : 0.89363264032341224819;
    case 867: return s ? 0.64278760968653932632 : 0.76604444311897803520;
    case 868: return s ? 0.80212319275504378508 : 0.59715859170278616485;
    case 869: return s ? 0.91821610688027401476 : 0.39607976603915682370;
    case 870: return s ? 0.98480775301220805937 : 0.17364817766693034885;
    case 871: return s ? 0.99830815827126820805 : -0.058144828910475828539;
    case 872: return s ? 0.95798951231548887444 : -0.28680323271109025310;
    case 873: return s ? 0.86602540378443864676 : -0.50000000000000000000;
    case 874: return s ? 0.72737364157304869599 : -0.68624163786873358573;
    case 875: return s ? 0.54950897807080603526 : -0.83548781141293641965;
    case 876: return s ? 0.34202014332566873304 : -0.93969262078590838405;
    case 877: return s ? 0.11609291412523022968 : -0.99323835774194298855;
    }
    return 0.0;
}
__host__ __device__ constexpr double dr_cos(int R, int m)
{
    return m % R == 0 ? 1.0 : dr_trig_table(R * 32 + (2 * (m % R) > R ? R - m % R : m % R), 0);
}
__host__ __device__ constexpr double dr_sin(int R, int m)
{
    return m % R == 0 ? 0.0
                      : (2 * (m % R) > R ? -dr_trig_table(R * 32 + R - m % R, 1) : dr_trig_table(R * 32 + m % R, 1));
}

// In-register DFT of R values (R an odd prime), natural order in and out:
// with s_j = v_j + v_{R-j}, d_j = v_j - v_{R-j}, out_k = A_k - i B_k and
// out_{R-k} = A_k + i B_k, A_k = v_0 + sum s_j cos(2 pi jk/R),
// B_k = sum d_j sin(2 pi jk/R); the constants fold once the loops unroll.
template <int R, class C> __device__ __forceinline__ void dr_prime(C *v)
{
    typedef decltype(v[0].x) Re;
    constexpr int H = (R - 1) / 2;
    C s[H], d[H];
    const C v0 = v[0];
    C y0 = v0;
#pragma unroll
    for (int j = 1; j <= H; ++j) {
        s[j - 1] = c_add(v[j], v[R - j]);
        d[j - 1] = c_sub(v[j], v[R - j]);
        y0 = c_add(y0, s[j - 1]);
    }
#pragma unroll
    for (int k = 1; k <= H; ++k) {
        C a = v0, b;
        b.x = b.y = Re(0);
#pragma unroll
        for (int j = 1; j <= H; ++j) {
            const Re c = (Re)dr_cos(R, j * k), sn = (Re)dr_sin(R, j * k);
            a.x += s[j - 1].x * c;
            a.y += s[j - 1].y * c;
            b.x += d[j - 1].x * sn;
            b.y += d[j - 1].y * sn;
        }
        v[k].x = a.x + b.y;
        v[k].y = a.y - b.x;
        v[R - k].x = a.x - b.y;
        v[R - k].y = a.y + b.x;
    }
    v[0] = y0;
}

// v e^{-2 pi i m/R}, m a constant once the callers' loops unroll.
template <int R, class C> __device__ __forceinline__ C dr_rot(C v, int m)
{
    typedef decltype(v.x) Re;
    if (m % R == 0) return v;
    const Re c = (Re)dr_cos(R, m), s = (Re)dr_sin(R, m);
    C r;
    r.x = v.x * c + v.y * s;
    r.y = v.y * c - v.x * s;
    return r;
}

// In-register DFT of R values, natural order in and out: R = 2, 4, 8, 16, an
// odd prime up to 19, or 9 or 27 (Cooley-Tukey in registers: n = n1 + 3 n2,
// k = k2 + Q k1).
template <int R, class C> __device__ __forceinline__ void dr_dft(C *v)
{
    if constexpr ((R & (R - 1)) == 0) {
        lf_dft<R>(v);
    } else if constexpr (R == 9 || R == 27) {
        constexpr int P = 3, Q = R / 3;
        C y[R];
#pragma unroll
        for (int n1 = 0; n1 < P; ++n1) {
            C t[Q];
#pragma unroll
            for (int n2 = 0; n2 < Q; ++n2) t[n2] = v[n1 + P * n2];
            dr_dft<Q>(t);
#pragma unroll
            for (int k2 = 0; k2 < Q; ++k2) y[n1 * Q + k2] = dr_rot<R>(t[k2], n1 * k2);
        }
#pragma unroll
        for (int k2 = 0; k2 < Q; ++k2) {
            C t[P];
#pragma unroll
            for (int n1 = 0; n1 < P; ++n1) t[n1] = y[n1 * Q + k2];
            dr_dft<P>(t);
#pragma unroll
            for (int k1 = 0; k1 < P; ++k1) v[k2 + Q * k1] = t[k1];
        }
    } else {
        dr_prime<R>(v);
    }
}

// Butterflies a thread holds at most per pass: about 24 values.
__host__ __device__ constexpr int dr_g(int R)
{
    return R == 2 ? 12 : R == 3 ? 8 : R == 4 ? 6 : R == 5 ? 4 : R <= 8 ? 3 : R <= 11 ? 2 : 1;
}


// Rows of at most 32 threads lie within a warp: a warp barrier suffices.
template <bool BLOCK> __device__ __forceinline__ void row_sync(int tpr)
{
    if (BLOCK || tpr > 32) __syncthreads();
    else __syncwarp();
}

// One Stockham pass of radix R over the N-point row s (padded indices) whose
// sub-transforms have length ns so far; tw[q] = e^{-i pi q/N}, so that
// e^{-2 pi i q/N} = tw[2q].  Thread t of the row's tpr threads owns the
// butterflies j = t + g tpr < N / R, g < G.  Every thread of the block calls
// it (barriers inside).  Two modes:
//  - POW2 (N a power of two, every thread exactly G butterflies): block
//    barriers;
//  - general (any N divisible by R): a row of at most 32 threads
//    synchronises as a warp.
// The first pass needs no twiddles; later ones take every fourth power of w
// from the table and the others by one to three products (15 loads of a
// radix-16 butterfly's twiddles kept the passes waiting on the cache).
// A pass's values come from the row itself (FromRow), or, in a first pass,
// from load(p), value p of the row wherever its caller keeps it.
struct FromRow {};
template <int R, int G, bool POW2, class C, class Load = FromRow>
__device__ __forceinline__ void row_pass(C *s, int N, int ns, int t, int tpr, const C *tw, Load load = Load())
{
    constexpr bool own = std::is_same<Load, FromRow>::value;
    const int m = N / R;
    C v[G * R];
    // (POW2: where m, or ns, is a multiple of 16 -- or ns is 1, R dividing
    // 16 -- the padded indices step evenly in r: one add an access.)
    const bool lin_in = POW2 && (m & 15) == 0, lin_out = POW2 && (ns == 1 || (ns & 15) == 0);
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const int j = t + g * tpr;
        if constexpr (!own) {
            if (POW2 || j < m)
#pragma unroll
                for (int r = 0; r < R; ++r) v[g * R + r] = load(j + r * m);
        } else if (lin_in) {
            const C *p = s + lf_pad(j);
            const int pm = lf_pad(m);
#pragma unroll
            for (int r = 0; r < R; ++r) v[g * R + r] = p[r * pm];
        } else if (POW2 || j < m) {
#pragma unroll
            for (int r = 0; r < R; ++r) v[g * R + r] = s[lf_pad(j + r * m)];
        }
    }
    row_sync<POW2>(tpr);
    const int step = 2 * (N / (ns * R));
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const int j = t + g * tpr;
        if (POW2 || j < m) {
            const int k = POW2 ? j & (ns - 1) : ns == 1 ? 0 : j % ns;
            if (k != 0) { // w^r: every fourth from the table, the others by one to three products
                const C w = tw[k * step];
                C wr = w;
#pragma unroll
                for (int r = 1; r < R; ++r) {
                    if (r > 1) wr = (r & 3) == 1 ? tw[r * k * step] : c_mul(wr, w);
                    v[g * R + r] = c_mul(v[g * R + r], wr);
                }
            }
            dr_dft<R>(v + g * R);
            const int d = (j - k) * R + k;
            if (lin_out) {
                C *p = s + lf_pad(d);
                const int pn = ns == 1 ? 1 : lf_pad(ns);
#pragma unroll
                for (int r = 0; r < R; ++r) p[r * pn] = v[g * R + r];
            } else {
#pragma unroll
                for (int r = 0; r < R; ++r) s[lf_pad(d + r * ns)] = v[g * R + r];
            }
        }
    }
    row_sync<POW2>(tpr);
}

// ---- all-periodic rows ----
// cuFFT reads and writes only arrays aligned to its complex type, which the
// ghosted layout is not (rows start at odd offsets), so with cuFFT alone an
// all-periodic solve pays a copy in and a copy out.  When every axis is
// periodic and nx = 2N is a power of two (LF_MIN ... LF_MAX), two kernels of
// ours take the x axis instead: the forward one reads f's rows straight from
// the user's layout and writes their half spectra (N+1 modes each) to C,
// transposed: C[kx][z][y], so that a block's rows (consecutive y) store each
// mode as one contiguous run; the inverse one reads them back and writes u's
// rows.  In between, cuFFT transforms y and z as contiguous batched 2D
// transforms, one per x mode (the same over x-strided data, one execution,
// ran 8x slower), and the division by the eigenvalues is one pass over C.
//
// A row of 2N reals is N complex numbers z_j = x_{2j} + i x_{2j+1}.  Their
// FFT Z runs in shared memory in Stockham passes of radix 16 (the last one
// smaller), each thread holding 16 values in registers; then
// X_k = (Z_k + conj Z_{N-k})/2 - i e^{-i pi k/N} (Z_k - conj Z_{N-k})/2, k = 0..N.
// The inverse rebuilds 2Z from X, transforms it (conjugated) and unpacks.
// Shared indices carry one spare slot per 16 (lf_pad) so that the strided
// stores of a pass spread over the banks.


// Forward complex FFT of the N-point row s, in place (N a power of two,
// >= V), in passes of radix V and a smaller last one.
template <int V, class C> __device__ void lf_fft(C *s, int N, int t, int tpl, const C *tw)
{
    int ns = 1;
    for (; ns * V <= N; ns *= V) row_pass<V, 1, true>(s, N, ns, t, tpl, tw);
    const int rest = N / ns;
    if (V > 8 && rest == 8) row_pass<(V > 8 ? 8 : 2), V / (V > 8 ? 8 : 2), true>(s, N, ns, t, tpl, tw);
    else if (V > 4 && rest == 4) row_pass<(V > 4 ? 4 : 2), V / (V > 4 ? 4 : 2), true>(s, N, ns, t, tpl, tw);
    else if (rest == 2) row_pass<2, V / 2, true>(s, N, ns, t, tpl, tw);
}


// Shared memory of the row kernels: lpb rows, then in float the x kernels'
// copy of the twiddles (measured: 0.91 against 1.10 ms for the forward
// kernel at 512^3); elsewhere they are read from global memory through L1
// (the z kernel and double: equal or faster that way).
struct LfShape {
    int n, N, tpl, lpb, ls, ln, lb; // row length, N = n/2, threads per row, rows per block, row stride,
                                    // log2 n, log2 lpb
};
__host__ __device__ inline LfShape lf_shape(int n, int threads, int vals)
{
    LfShape s;
    s.n = n;
    s.N = n / 2;
    s.tpl = s.N / vals;
    s.lpb = threads / s.tpl;
    s.ls = s.N + (s.N >> 4) + 1;
    s.ln = 0;
    while ((1 << s.ln) < n) ++s.ln;
    s.lb = 0;
    while ((1 << s.lb) < s.lpb) ++s.lb;
    return s;
}
template <class T> size_t lf_smem_bytes(int n, bool x_kernel);
// The kernels' dynamic shared memory limit is a property of the kernel, not
// of a solver: every solver sets the same value, the most any eligible size
// needs (within what the device allows), so that none lowers it under another.
template <class T> size_t lf_smem_most(bool x_kernel)
{
    size_t m = 0;
    for (int n = x_kernel ? LF_MIN : 2 * LF_ZMIN; n <= (x_kernel ? LF_MAX : 2 * LF_ZMAX); n *= 2)
        m = std::max(m, lf_smem_bytes<T>(n, x_kernel));
    return m;
}
template <class T> size_t lf_smem_bytes(int n, bool x_kernel)
{
    const LfShape s = lf_shape(n, LF_T, Tune<T>::lf_vals);
    return (size_t)(s.lpb * s.ls + (x_kernel && Tune<T>::lf_shared_tw ? 2 * s.N : 0)) * sizeof(typename Cplx<T>::type);
}

// The row kernels' common start: the twiddles (in float copied to shared
// memory after the rows), the block's rows and where each starts in the
// user's layout (rb; r < here).
template <class T> struct LfRows {
    const typename Cplx<T>::type *tw;
    int64_t nrows, row0;
    int here;
};
template <class T>
__device__ __forceinline__ LfRows<T> lf_rows_begin(const Grid<T> &g, const LfShape &sh,
                                                   const typename Cplx<T>::type *__restrict__ twg,
                                                   typename Cplx<T>::type *rows, int64_t *rb)
{
    LfRows<T> b;
    b.tw = twg;
    if (Tune<T>::lf_shared_tw) {
        typename Cplx<T>::type *cp = rows + sh.lpb * sh.ls;
        for (int q = threadIdx.x; q < 2 * sh.N; q += LF_T) cp[q] = twg[q];
        b.tw = cp;
    }
    b.nrows = (int64_t)g.ny * g.nz;
    b.row0 = (int64_t)blockIdx.x * sh.lpb;
    b.here = (int)min((int64_t)sh.lpb, b.nrows - b.row0);
    for (int r = threadIdx.x; r < b.here; r += LF_T) {
        const int64_t row = b.row0 + r, j = row % g.ny, k = row / g.ny;
        rb[r] = g.base + j * g.sy + k * g.sz;
    }
    return b;
}

// f's rows (minus the shift) -> their half spectra, C[kx * ny * nz + row].
template <class T>
__global__ void __launch_bounds__(LF_T)
    lf_forward_kernel(const Grid<T> g, const T *__restrict__ f, const T *__restrict__ shiftp,
                      const typename Cplx<T>::type *__restrict__ twg, typename Cplx<T>::type *__restrict__ C)
{
    typedef typename Cplx<T>::type C2;
    extern __shared__ __align__(16) unsigned char lf_smem[];
    __shared__ int64_t rb[LF_T];
    const LfShape sh = lf_shape(g.nx, LF_T, Tune<T>::lf_vals);
    const int N = sh.N;
    C2 *rows = (C2 *)lf_smem;
    const LfRows<T> blk = lf_rows_begin(g, sh, twg, rows, rb);
    const C2 *tw = blk.tw;
    const int64_t nrows = blk.nrows, row0 = blk.row0;
    const int here = blk.here;
    T *re = (T *)rows;
    const Shift<T> shift = load_shift(shiftp);
    __syncthreads();
    for (int e = threadIdx.x; e < sh.lpb * sh.n; e += LF_T) {
        const int r = e >> sh.ln, i = e & (sh.n - 1);
        re[2 * (r * sh.ls + lf_pad(i >> 1)) + (i & 1)] = r < here ? shift.of(f[rb[r] + i]) : T(0);
    }
    __syncthreads();
    const int r = threadIdx.x / sh.tpl, t = threadIdx.x - r * sh.tpl;
    lf_fft<Tune<T>::lf_vals>(rows + r * sh.ls, N, t, sh.tpl, tw);
    for (int e = threadIdx.x; e < sh.lpb * (N + 1); e += LF_T) {
        const int q = e & (sh.lpb - 1), k = e >> sh.lb;
        if (q >= here) continue;
        const C2 *s = rows + q * sh.ls;
        const C2 a = s[lf_pad(k == N ? 0 : k)], b = c_conj(s[lf_pad(k == 0 ? 0 : N - k)]);
        const C2 ev = c_half(c_add(a, b)), od = c_half(c_sub(a, b)); // od = i O_k
        C[k * nrows + row0 + q] = c_sub(ev, c_muli(c_mul(tw[k], od)));
    }
}

// Half spectra in C -> u's rows (unnormalised, as cuFFT's C2R).
template <class T>
__global__ void __launch_bounds__(LF_T)
    lf_inverse_kernel(const Grid<T> g, const typename Cplx<T>::type *__restrict__ C,
                      const typename Cplx<T>::type *__restrict__ twg, T *__restrict__ u)
{
    typedef typename Cplx<T>::type C2;
    extern __shared__ __align__(16) unsigned char lf_smem[];
    __shared__ int64_t rb[LF_T];
    const LfShape sh = lf_shape(g.nx, LF_T, Tune<T>::lf_vals);
    const int N = sh.N;
    C2 *rows = (C2 *)lf_smem;
    const LfRows<T> blk = lf_rows_begin(g, sh, twg, rows, rb);
    const C2 *tw = blk.tw;
    const int64_t nrows = blk.nrows, row0 = blk.row0;
    const int here = blk.here;
    const T *re = (const T *)rows;
    for (int e = threadIdx.x; e < sh.lpb * (N + 1); e += LF_T) {
        const int q = e & (sh.lpb - 1), k = e >> sh.lb;
        C2 v;
        v.x = v.y = 0;
        if (q < here) v = C[k * nrows + row0 + q];
        rows[q * sh.ls + lf_pad(k)] = v;
    }
    __syncthreads();
    const int r = threadIdx.x / sh.tpl, t = threadIdx.x - r * sh.tpl;
    C2 *s = rows + r * sh.ls;
    // 2 Z_k = (X_k + conj X_{N-k}) + i e^{i pi k/N} (X_k - conj X_{N-k}), k < N,
    // stored conjugated; each thread owns the pairs (k, N-k).
    for (int k = t; k <= N / 2; k += sh.tpl) {
        const C2 a = s[lf_pad(k)], b = s[lf_pad(N - k)];
        const C2 zk = c_add(c_add(a, c_conj(b)), c_muli(c_mul(c_conj(tw[k]), c_sub(a, c_conj(b)))));
        s[lf_pad(k)] = c_conj(zk);
        if (k != 0 && k != N - k) {
            const C2 zm = c_add(c_add(b, c_conj(a)), c_muli(c_mul(c_conj(tw[N - k]), c_sub(b, c_conj(a)))));
            s[lf_pad(N - k)] = c_conj(zm);
        }
    }
    __syncthreads();
    lf_fft<Tune<T>::lf_vals>(s, N, t, sh.tpl, tw);
    for (int e = threadIdx.x; e < here * sh.n; e += LF_T) {
        const int q = e >> sh.ln, i = e & (sh.n - 1);
        const T v = re[2 * (q * sh.ls + lf_pad(i >> 1)) + (i & 1)];
        u[rb[q] + i] = (i & 1) ? -v : v;
    }
}

// Per-axis transforms: DST-I by the running sum or by the odd extension
// (dst1x_pre_kernel), DCT-II, the periodic DFT; FFT_RHC: the periodic DFT
// as a real transform in halfcomplex order (rhc_post_kernel), for the
// distributed solve, whose transposes move real data only; FFT_DN / FFT_ND:
// a Dirichlet and a Neumann face (dn_pre_kernel).
enum { FFT_DST1 = 0, FFT_DCT2 = 1, FFT_DFT = 2, FFT_DST1X = 3, FFT_RHC = 4, FFT_DN = 5, FFT_ND = 6 };
static bool fft_dn(int kind) { return kind == FFT_DN || kind == FFT_ND; }

// Eigenvalue of mode k of the 1D operator, per transform (FFT_RHC: of
// slot k, which holds a part of mode (k + 1) / 2).
static double fft_eigen(int kind, int64_t n, double h, int64_t k)
{
    double s;
    if (kind == FFT_DST1 || kind == FFT_DST1X) s = std::sin(M_PI * (double)(k + 1) / (2.0 * (double)(n + 1)));
    else if (kind == FFT_DCT2) s = std::sin(M_PI * (double)k / (2.0 * (double)n));
    else if (kind == FFT_RHC) s = std::sin(M_PI * (double)((k + 1) / 2) / (double)n);
    else if (fft_dn(kind)) s = std::sin(M_PI * (double)(2 * k + 1) / (2.0 * (double)(2 * n + 1)));
    else s = std::sin(M_PI * (double)k / (double)n); // FFT_DFT
    return 4.0 * s * s / (h * h);
}

// Eigenvalues of the transformed axes, per mode index (see fft_eigen).
template <class T> struct Spectrum {
    int64_t e0, e1, e2;  // extents of the spectral array (natural layout)
    const T *ev0, *ev1, *ev2; // eigenvalues per axis; NULL for the tridiagonal axis
    T scale;             // normalisation of all inverse transforms
};

__device__ __forceinline__ void scale_by(float &v, float s) { v *= s; }
__device__ __forceinline__ void scale_by(double &v, double s) { v *= s; }
__device__ __forceinline__ void scale_by(float2 &v, float s) { v.x *= s; v.y *= s; }
__device__ __forceinline__ void scale_by(double2 &v, double s) { v.x *= s; v.y *= s; }
__device__ __forceinline__ void zero(float &v) { v = 0; }
__device__ __forceinline__ void zero(double &v) { v = 0; }
__device__ __forceinline__ void zero(float2 &v) { v.x = v.y = 0; }
__device__ __forceinline__ void zero(double2 &v) { v.x = v.y = 0; }
__device__ __forceinline__ void axpy(float &y, float a, float x) { y += a * x; }
__device__ __forceinline__ void axpy(double &y, double a, double x) { y += a * x; }
__device__ __forceinline__ void axpy(float2 &y, float a, float2 x) { y.x += a * x.x; y.y += a * x.y; }
__device__ __forceinline__ void axpy(double2 &y, double a, double2 x) { y.x += a * x.x; y.y += a * x.y; }

// Every axis transformed: divide each mode by its eigenvalue (the zero mode
// of a singular problem becomes 0).
template <class T, class V>
__global__ void spectral_divide_kernel(const Spectrum<T> sp, V *__restrict__ Z)
{
    const int64_t E = sp.e0 * sp.e1 * sp.e2;
    const bool small = E < ((int64_t)1 << 32); // 32-bit divisions
    PGPU_GRID_STRIDE(t, E)
    {
        int i0, i1, i2;
        split_index(t, (uint32_t)sp.e0, (uint32_t)sp.e1, small, i0, i1, i2);
        const T lam = sp.ev0[i0] + sp.ev1[i1] + (sp.ev2 ? sp.ev2[i2] : T(0));
        V v = Z[t];
        if (lam > T(0)) scale_by(v, sp.scale / lam);
        else zero(v);
        Z[t] = v;
    }
}

// The z axis too, when nz is a power of two (LF_ZMIN ... LF_ZMAX; 3D): after
// cuFFT's y transforms, one kernel per block of columns (a kx, lpb
// consecutive ky) loads their z lines, transforms them, divides by the
// eigenvalues and transforms back, so that the spectrum makes one round trip
// instead of three (z forward, division, z inverse).  Element (kx, z, y) is
// at C[(kx * nz + z) * ny + y]; or, given the table zt (the distributed
// solve, whose planes arrive in blocks of its own layout), at
// C[zt[2 z] + kx * zt[2 z + 1] + y].

template <class T>
__global__ void __launch_bounds__(LF_T)
    lf_zsolve_kernel(const Spectrum<T> sp, const typename Cplx<T>::type *__restrict__ twg,
                     typename Cplx<T>::type *__restrict__ C, const int64_t *__restrict__ zt)
{
    typedef typename Cplx<T>::type C2;
    extern __shared__ __align__(16) unsigned char lf_smem[];
    const int M = (int)sp.e1, ny = (int)sp.e0;
    const LfShape sh = lf_shape(2 * M, LF_T, Tune<T>::lf_vals); // rows of M complex values
    const C2 *tw = twg;
    C2 *rows = (C2 *)lf_smem;
    const int kx = blockIdx.y, y0 = blockIdx.x * sh.lpb, here = min(sh.lpb, ny - y0);
    C2 *col = C + y0; // element (z, y0 + q) at col[at(z) + q]
    auto at = [&](int z) -> int64_t { return zt ? zt[2 * z] + kx * zt[2 * z + 1] : ((int64_t)kx * M + z) * ny; };
    for (int e = threadIdx.x; e < sh.lpb * M; e += LF_T) {
        const int q = e & (sh.lpb - 1), z = e >> sh.lb;
        C2 v;
        v.x = v.y = 0;
        if (q < here) v = col[at(z) + q];
        rows[q * sh.ls + lf_pad(z)] = v;
    }
    __syncthreads();
    const int r = threadIdx.x / sh.tpl, t = threadIdx.x - r * sh.tpl;
    C2 *s = rows + r * sh.ls;
    lf_fft<Tune<T>::lf_vals>(s, M, t, sh.tpl, tw);
    // Divide, conjugated for the inverse (conj FFT conj).
    const T lxy = sp.ev2[kx] + sp.ev0[min(y0 + r, ny - 1)];
    for (int kz = t; kz < M; kz += sh.tpl) {
        const T lam = lxy + sp.ev1[kz];
        C2 v = s[lf_pad(kz)];
        const T w = lam > T(0) ? sp.scale / lam : T(0);
        v.x *= w;
        v.y *= -w;
        s[lf_pad(kz)] = v;
    }
    __syncthreads();
    lf_fft<Tune<T>::lf_vals>(s, M, t, sh.tpl, tw);
    for (int e = threadIdx.x; e < sh.lpb * M; e += LF_T) {
        const int q = e & (sh.lpb - 1), z = e >> sh.lb;
        if (q < here) col[at(z) + q] = c_conj(rows[q * sh.ls + lf_pad(z)]);
    }
}

} // namespace pgpu
