// fft_lines.h -- line solves of the FFT solver's last axis (Thomas, cyclic reduction)
#pragma once
#include "fft_rows.h"

namespace pgpu {

// One axis left: per line along it, solve (A_axis + lambda I) x = rhs by the
// Thomas algorithm, lambda being the other axes' eigenvalue sum.  cl / ch are
// the axis operator's coefficients (level-0 tables); the pivots go to P.  A
// singular line (Neumann at both ends, lambda = 0) is anchored at its last
// node; the solver removes the mean afterwards.  The elimination runs in
// double and keeps its pivots in double whatever the precision: a line of
// the lowest modes has a condition number of about (n / pi)^2, and in float
// its solution lost that many ulps (1.5e-4 of u at 256^3); the eliminated
// right-hand side goes back to Z in its own precision.
template <class V> struct Wide;
template <> struct Wide<float> { typedef double type; };
template <> struct Wide<double> { typedef double type; };
template <> struct Wide<float2> { typedef double2 type; };
template <> struct Wide<double2> { typedef double2 type; };
__device__ __forceinline__ double widen(float v) { return v; }
__device__ __forceinline__ double widen(double v) { return v; }
__device__ __forceinline__ double2 widen(float2 v) { return make_double2(v.x, v.y); }
__device__ __forceinline__ double2 widen(double2 v) { return v; }
template <class V> __device__ __forceinline__ V narrow(double v) { return V(v); }
template <class V> __device__ __forceinline__ V narrow(double2 v);
template <> __device__ __forceinline__ float2 narrow<float2>(double2 v) { return make_float2((float)v.x, (float)v.y); }
template <> __device__ __forceinline__ double2 narrow<double2>(double2 v) { return v; }

// The lines b0 .. b0 + nb - 1 (a chunk, FFT_CHUNK); the pivot of line
// b0 + t at node i in P[t + nb i].
template <class T, class V>
__global__ void tri_kernel(const Spectrum<T> sp, int axis, const T *__restrict__ cl, const T *__restrict__ ch,
                           int neumann_both, V *__restrict__ Z, double *__restrict__ P, int64_t b0, int64_t nb)
{
    typedef typename Wide<V>::type X;
    const int64_t e[3] = {sp.e0, sp.e1, sp.e2};
    const int64_t n = e[axis];
    const int64_t stride = axis == 0 ? 1 : (axis == 1 ? sp.e0 : sp.e0 * sp.e1);
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const T *ev[3] = {sp.ev0, sp.ev1, sp.ev2};
    PGPU_GRID_STRIDE(t, nb)
    {
        const int64_t b = b0 + t;
        int64_t idx[3];
        idx[a1] = b % e[a1];
        idx[a2] = b / e[a1];
        idx[axis] = 0;
        const double lam = (ev[a1] ? double(ev[a1][idx[a1]]) : 0.0) + (ev[a2] ? double(ev[a2][idx[a2]]) : 0.0);
        const int64_t p0 = idx[0] + sp.e0 * (idx[1] + sp.e1 * idx[2]);
        const bool anchor = neumann_both && !(lam > 0.0);
        // Forward elimination, then back substitution, each reading TRI_AHEAD
        // nodes' values before it uses them (the loads of a line are
        // independent; in order with the stores they were a latency each).
        double cprev = 0.0;
        X dprev;
        zero(dprev);
        for (int64_t i0 = 0; i0 < n; i0 += TRI_AHEAD) {
            V z[TRI_AHEAD];
#pragma unroll
            for (int q = 0; q < TRI_AHEAD; ++q)
                if (i0 + q < n) z[q] = Z[p0 + (i0 + q) * stride];
#pragma unroll
            for (int q = 0; q < TRI_AHEAD; ++q) {
                const int64_t i = i0 + q;
                if (i >= n) break;
                const int64_t p = p0 + i * stride;
                const double sub = i > 0 ? -double(cl[i]) : 0.0;
                const double sup = i < n - 1 ? -double(ch[i]) : 0.0;
                const double diag = (double(cl[i]) + double(ch[i])) + lam;
                X rhs = widen(z[q]);
                scale_by(rhs, double(sp.scale));
                if (anchor && i == n - 1) { // x_{n-1} = 0
                    P[t + nb * i] = 0.0;
                    zero(rhs);
                    Z[p] = narrow<V>(rhs);
                    break;
                }
                const double piv = diag - sub * cprev;
                axpy(rhs, -sub, dprev);
                scale_by(rhs, 1.0 / piv);
                cprev = sup / piv;
                P[t + nb * i] = cprev;
                Z[p] = narrow<V>(rhs);
                dprev = rhs;
            }
        }
        X xnext = widen(Z[p0 + (n - 1) * stride]);
        for (int64_t i0 = n - 2; i0 >= 0; i0 -= TRI_AHEAD) {
            V z[TRI_AHEAD];
            double c[TRI_AHEAD];
#pragma unroll
            for (int q = 0; q < TRI_AHEAD; ++q)
                if (i0 - q >= 0) {
                    z[q] = Z[p0 + (i0 - q) * stride];
                    c[q] = P[t + nb * (i0 - q)];
                }
#pragma unroll
            for (int q = 0; q < TRI_AHEAD; ++q) {
                const int64_t i = i0 - q;
                if (i < 0) break;
                X x = widen(z[q]);
                axpy(x, -c[q], xnext);
                Z[p0 + i * stride] = narrow<V>(x);
                xnext = x;
            }
        }
    }
}

// The same systems by parallel cyclic reduction, one block per line held in
// shared memory (n <= PCR_MAX): log2(n) steps, each eliminating the
// neighbours at distance s = 1, 2, 4, ...  Used when there are too few lines
// for one thread per line to fill the GPU (2D problems).  In double, as the
// Thomas kernel.
template <class T, class V>
__global__ void __launch_bounds__(PCR_MAX) pcr_kernel(const Spectrum<T> sp, int axis, const T *__restrict__ cl,
                                                       const T *__restrict__ ch, int neumann_both, V *__restrict__ Z)
{
    typedef typename Wide<V>::type X;
    __shared__ double sa[2][PCR_MAX], sb[2][PCR_MAX], sc[2][PCR_MAX];
    __shared__ X sd[2][PCR_MAX];
    const int64_t e[3] = {sp.e0, sp.e1, sp.e2};
    const int n = (int)e[axis];
    const int64_t stride = axis == 0 ? 1 : (axis == 1 ? sp.e0 : sp.e0 * sp.e1);
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const T *ev[3] = {sp.ev0, sp.ev1, sp.ev2};
    const int64_t b = blockIdx.x;
    int64_t idx[3];
    idx[a1] = b % e[a1];
    idx[a2] = b / e[a1];
    idx[axis] = 0;
    const double lam = (ev[a1] ? double(ev[a1][idx[a1]]) : 0.0) + (ev[a2] ? double(ev[a2][idx[a2]]) : 0.0);
    const int64_t p0 = idx[0] + sp.e0 * (idx[1] + sp.e1 * idx[2]);
    const bool anchor = neumann_both && !(lam > 0.0);
    const int i = threadIdx.x, P = blockDim.x;
    double a = 0.0, bb = 1.0, c = 0.0;
    X d;
    zero(d);
    if (i < n) {
        a = i > 0 ? -double(cl[i]) : 0.0;
        c = i < n - 1 ? -double(ch[i]) : 0.0;
        bb = (double(cl[i]) + double(ch[i])) + lam;
        d = widen(Z[p0 + i * stride]);
        scale_by(d, double(sp.scale));
        if (anchor && i == n - 1) { a = 0.0; bb = 1.0; c = 0.0; zero(d); }
    }
    int cur = 0;
    sa[0][i] = a; sb[0][i] = bb; sc[0][i] = c; sd[0][i] = d;
    __syncthreads();
    // Nearly singular lines (small lambda, Neumann at both ends) lose digits
    // in cyclic reduction: one thread runs the Thomas algorithm on them.
    const double dmax = double(cl[n / 2]) + double(ch[n / 2]);
    if (neumann_both && !(lam > 0.05 * dmax)) {
        if (i == 0) {
            for (int k = 1; k < n; ++k) { // forward elimination into sb, sd
                const double m = sa[0][k] / sb[0][k - 1];
                sb[0][k] -= m * sc[0][k - 1];
                X dk = sd[0][k];
                axpy(dk, -m, sd[0][k - 1]);
                sd[0][k] = dk;
            }
            X x = sd[0][n - 1];
            scale_by(x, 1.0 / sb[0][n - 1]);
            sd[0][n - 1] = x;
            for (int k = n - 2; k >= 0; --k) {
                X y = sd[0][k];
                axpy(y, -sc[0][k], x);
                scale_by(y, 1.0 / sb[0][k]);
                sd[0][k] = y;
                x = y;
            }
        }
        __syncthreads();
        if (i < n) Z[p0 + i * stride] = narrow<V>(sd[0][i]);
        return;
    }
    for (int s = 1; s < n; s <<= 1) {
        const bool lo = i - s >= 0, hi = i + s < P;
        const double k1 = lo ? a / sb[cur][i - s] : 0.0;
        const double k2 = hi ? c / sb[cur][i + s] : 0.0;
        const double na = lo ? -sa[cur][i - s] * k1 : 0.0;
        const double nc = hi ? -sc[cur][i + s] * k2 : 0.0;
        const double nb = bb - (lo ? sc[cur][i - s] * k1 : 0.0) - (hi ? sa[cur][i + s] * k2 : 0.0);
        X nd = d;
        if (lo) axpy(nd, -k1, sd[cur][i - s]);
        if (hi) axpy(nd, -k2, sd[cur][i + s]);
        a = na; bb = nb; c = nc; d = nd;
        cur ^= 1;
        sa[cur][i] = a; sb[cur][i] = bb; sc[cur][i] = c; sd[cur][i] = d;
        __syncthreads();
    }
    if (i < n) {
        scale_by(d, 1.0 / bb);
        Z[p0 + i * stride] = narrow<V>(d);
    }
}

} // namespace pgpu
