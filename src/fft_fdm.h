// fft_fdm.h -- small 2D grids by fast diagonalisation: dense transforms in one launch
#pragma once
#include "fft_dirichlet.h"

namespace pgpu {

// A 2D grid of at most FDM_NMAX nodes a side, any faces: the operator is
// Ax (x) I + I (x) Ay, and each 1D operator is Q diag(lam) Q^T with Q
// orthonormal (sines, cosines or the real Fourier basis: fdm_basis), so the
// solution of A u = b, with u and b as ny x nx arrays U and B, is
//   U = Qy [ (Qy^T B Qx) / (lam_y[j] + lam_x[k]) ] Qx^T
// (the fast diagonalisation method of Lynch, Rice and Thomas, 1964) -- four
// dense products, as two phases of one cooperative launch (fdm2_kernel),
// each block taking rows j (strips of one row):
//   0  T1[j, :] = (Qy^T[j, :] B) Qx, divided by lam_y[j] + lam_x
//   1  u[j, :]  = (Qy[j, :] T1) Qx^T
// A row needs all of B (of T1): one grid barrier between the phases and none
// inside them.  At these sizes a solve is a handful of memory latencies, not
// arithmetic (2 (nx + ny) multiply-adds a point): every thread loads its
// FDM_KB values of both products of a row at once, and where the columns are
// fewer than the threads the sum over k is split into slices (fdm_mm).  A zero
// eigenvalue (both axes Neumann or periodic) drops its mode: u of mean zero,
// as the other routes leave it.  Sums run in double, in a fixed order.

template <class T> struct FdmArgs {
    Grid<T> g;          // the caller's layout of u and f
    const T *f, *u_in;  // b = f + the boundary terms (u's ghosts)
    T *u_out;           // written in phase 1 (with CHECK: only if the data pass)
    T *T1;              // ny x nx: the divided spectrum
    const T *P[2][2];   // phase ph: left factor (ny x ny) and right factor (nx x nx), row-major
    const T *lx, *ly;   // eigenvalues per axis
    int nx, ny;
    double *part, *res; // CHECK: fold_verdict's and fold_residual's
};

// A thread's part of a product out(c) = sum_k a(k) b(k, c), c < nc <= FDM_T:
// column c = t % nc, slice s = t / nc of the S slices of k, its range
// kb .. ke; its first FDM_KB values of a and b are loaded ahead (fdm_load),
// so that a row's loads from global memory all wait together.
struct FdmPart {
    int c, s, S, kb, ke;
};
__device__ __forceinline__ FdmPart fdm_part(int K, int nc)
{
    FdmPart p;
    p.S = max(1, min(FDM_T / nc, K));
    p.c = threadIdx.x % nc;
    p.s = threadIdx.x / nc;
    const int KS = (K + p.S - 1) / p.S;
    p.kb = p.s * KS;
    p.ke = p.s < p.S ? min(K, p.kb + KS) : p.kb;
    return p;
}
template <class GA, class GB>
__device__ __forceinline__ void fdm_load(const FdmPart &p, int k0, GA ga, GB gb, double (&a)[FDM_KB],
                                         double (&b)[FDM_KB])
{
#pragma unroll
    for (int i = 0; i < FDM_KB; ++i) {
        const bool in = k0 + i < p.ke;
        b[i] = in ? gb(k0 + i, p.c) : 0.0;
        a[i] = in ? ga(k0 + i) : 0.0;
    }
}
// out(c, the sum) for every column, a and b holding the first batch; the
// slices' sums added through sred (FDM_T doubles) in slice order.
template <class GA, class GB, class O>
__device__ __forceinline__ void fdm_mm(const FdmPart &p, int nc, double *sred, double (&a)[FDM_KB],
                                       double (&b)[FDM_KB], GA ga, GB gb, O out)
{
    double acc = 0;
    for (int k0 = p.kb; k0 < p.ke; k0 += FDM_KB) {
        if (k0 != p.kb) fdm_load(p, k0, ga, gb, a, b);
#pragma unroll
        for (int i = 0; i < FDM_KB; ++i) acc = fma(a[i], b[i], acc);
    }
    if (p.S == 1) {
        if (p.s == 0) out(p.c, acc);
        __syncthreads();
        return;
    }
    if (p.s < p.S) sred[p.s * nc + p.c] = acc;
    __syncthreads();
    if (threadIdx.x < nc) {
        double v = 0;
        for (int q = 0; q < p.S; ++q) v += sred[q * nc + threadIdx.x];
        out(threadIdx.x, v);
    }
    __syncthreads();
}

// Row j of phase ph: (P[ph][0] row j times X) times P[ph][1], X = b or T1.
// CHECK, phase 0: the scan's sums of b over row j (each block reads all of
// b; it sums its own rows).
template <class T, bool CHECK>
__device__ __forceinline__ void fdm_row(const FdmArgs<T> &A, int ph, int j, double *sC, double *sR, Red3 &acc,
                                        bool write)
{
    const int nx = A.nx, ny = A.ny;
    const Grid<T> &g = A.g;
    const T *Py = A.P[ph][0] + (int64_t)j * ny, *Px = A.P[ph][1];
    auto ga1 = [&](int k) { return (double)Py[k]; };
    auto gb1 = [&](int y, int x) -> double {
        if (ph) return (double)dr_load(A.T1 + (int64_t)y * nx + x);
        const int64_t p = g.base + (int64_t)y * g.sy + x;
        const T fv = A.f[p], bt = box_terms(g, A.u_in, p, x, y, 0);
        if (CHECK && y == j) { // as scan_rhs_kernel sums it
            const double c = (double)fv + (double)bt;
            accumulate(acc, c, c * c, fabs(c));
        }
        return (double)(fv + bt);
    };
    auto ga2 = [&](int k) { return sC[k]; };
    auto gb2 = [&](int x, int c) { return (double)Px[(int64_t)x * nx + c]; };
    const FdmPart p1 = fdm_part(ny, nx), p2 = fdm_part(nx, nx);
    double a1[FDM_KB], b1[FDM_KB], a2[FDM_KB], b2[FDM_KB];
    fdm_load(p1, p1.kb, ga1, gb1, a1, b1);
    fdm_load(p2, p2.kb, [](int) { return 0.0; }, gb2, a2, b2); // (a2: sC, once the first product is there)
    fdm_mm(p1, nx, sR, a1, b1, ga1, gb1, [&](int c, double v) { sC[c] = v; });
#pragma unroll
    for (int i = 0; i < FDM_KB; ++i) a2[i] = p2.kb + i < p2.ke ? sC[p2.kb + i] : 0.0;
    fdm_mm(p2, nx, sR, a2, b2, ga2, gb2, [&](int c, double v) {
        if (ph == 0) {
            const double d = (double)A.ly[j] + (double)A.lx[c];
            A.T1[(int64_t)j * nx + c] = d != 0 ? (T)(v / d) : T(0);
        } else if (write) {
            A.u_out[g.base + (int64_t)j * g.sy + c] = (T)v;
        }
    });
}

// Phase ph over every row, the grid's G blocks striding them.
template <class T, bool CHECK>
__device__ __forceinline__ void fdm_phase(const FdmArgs<T> &A, int ph, Red3 &acc, bool write)
{
    __shared__ double sC[FDM_NMAX], sR[FDM_T];
    for (int j = blockIdx.x; j < A.ny; j += gridDim.x) fdm_row<T, CHECK>(A, ph, j, sC, sR, acc, write);
}

// The solve in one cooperative launch; CHECK: the default path's checks
// folded in, as in dr2_kernel (fold_verdict, fold_residual).
template <class T, bool CHECK> __global__ void __launch_bounds__(FDM_T) fdm2_kernel(const FdmArgs<T> A)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const int64_t G = gridDim.x;
    Red3 acc{0, 0, 0};
    fdm_phase<T, CHECK>(A, 0, acc, true);
    if (CHECK) write_partial(A.part, acc);
    grid.sync();
    const bool ok = CHECK ? fold_verdict<FDM_T>(A.part, G, A.res) : true;
    fdm_phase<T, CHECK>(A, 1, acc, ok);
    if (CHECK && ok) fold_residual<T, FDM_T>(grid, A.g, A.u_out, A.f, A.part, G, A.res);
}

// Where the device refuses the cooperative launch: each phase a launch.
template <class T> __global__ void __launch_bounds__(FDM_T) fdm2_phase_kernel(const FdmArgs<T> A, int ph)
{
    Red3 none{0, 0, 0};
    fdm_phase<T, false>(A, ph, none, true);
}

// The 1D operator of n nodes with faces lo and hi as Q diag(lam) Q^T: Q's
// columns (q[i * n + k], orthonormal) and lam, the eigenvalues of the
// transforms of the same faces (fft_eigen), hence the same discretisation:
//   Dirichlet-Dirichlet  sin(pi (i+1)(k+1) / (n+1))
//   Neumann-Neumann      cos(pi k (i+1/2) / n)
//   Dirichlet-Neumann    sin(pi (2k+1)(i+1) / (2n+1)); Neumann-Dirichlet mirrored
//   periodic             1, then cos and sin of 2 pi m i / n for m = (k+1)/2
// (a node's Dirichlet ghost one spacing away, a Neumann face half a spacing).
static void fdm_basis(int lo, int hi, int64_t n, double h, std::vector<double> &q, std::vector<double> &lam)
{
    const double pi = M_PI;
    q.assign((size_t)(n * n), 0.0);
    lam.assign((size_t)n, 0.0);
    int kind = FFT_RHC;
    if (lo != PGPU_BC_PERIODIC) {
        kind = lo != hi ? (lo == PGPU_BC_DIRICHLET ? FFT_DN : FFT_ND) : lo == PGPU_BC_NEUMANN ? FFT_DCT2 : FFT_DST1;
    }
    for (int64_t k = 0; k < n; ++k) {
        lam[(size_t)k] = fft_eigen(kind, n, h, k);
        double norm = 0;
        for (int64_t i = 0; i < n; ++i) {
            const double di = (double)i, dk = (double)k, dn = (double)n;
            double v;
            if (kind == FFT_DST1) v = std::sin(pi * (di + 1) * (dk + 1) / (dn + 1));
            else if (kind == FFT_DCT2) v = std::cos(pi * dk * (di + 0.5) / dn);
            else if (kind == FFT_DN) v = std::sin(pi * (2 * dk + 1) * (di + 1) / (2 * dn + 1));
            else if (kind == FFT_ND) v = std::sin(pi * (2 * dk + 1) * (dn - di) / (2 * dn + 1));
            else if (k == 0) v = 1;
            else {
                const double m = (double)((k + 1) / 2), x = 2 * pi * std::fmod(m * di, dn) / dn;
                v = k & 1 ? std::cos(x) : std::sin(x);
            }
            q[(size_t)(i * n + k)] = v;
            norm += v * v;
        }
        const double s = 1 / std::sqrt(norm);
        for (int64_t i = 0; i < n; ++i) q[(size_t)(i * n + k)] *= s;
    }
}

} // namespace pgpu
