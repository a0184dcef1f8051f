// fft_fdm.h -- small 2D grids by fast diagonalisation: dense transforms in one launch (a grid barrier or a cluster)
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

// The same solve in one thread-block cluster, where the device has them
// (sm_90 on) and both sides are at most FDMC_NMAX: C blocks, block q owning
// the R rows j0 = q R .. of the products that need all rows, one exchange
// of the spectrum between the blocks through distributed shared memory:
//   0  D = Qy^T[rows, :] b          every block reads all of b
//   1  S = (D Qx) / (lam_y + lam_x)  pushed into every block's copy of S
//      (one cluster barrier)
//   2  W = Qy[rows, :] S
//   3  u[rows, :] = W Qx^T
// Each block holds the right factors and b as matrices (FDMC_NMAX doubles a
// row) and its rows of the left factors as [k][FDMC_RM] tables (FdmcTables,
// built on the host for the cluster's size), all in shared memory by
// asynchronous copies; thread (c, s) of a product sums column c over its
// slice s of k, the slices added in slice order (fdmc_reduce).  No grid
// barrier and no round trip through global memory: what a small solve
// waits on is the launch, one read of the data and the steps' barriers.
// CHECK folds in the default path's checks as fdm2_kernel does: every
// block sums the scan over all of b in one order, so that all reach one
// verdict; the residual's partials go to block 0, which adds them in block
// order.  Sums in double, in a fixed order.
struct FdmcTables {
    const double *LA, *LB; // per block, FDMC_LROWS x FDMC_RM: Qy^T's and Qy's rows j0 .. j0 + R (zero past them)
    const double *RX, *RXT; // Qx and Qx^T, nx rows of FDMC_NMAX (zero past nx)
    const double *lx, *ly;  // the eigenvalues
    int C, R;               // blocks, rows a block
};
constexpr size_t FDMC_SMEM = sizeof(double) * ((size_t)3 * FDMC_LROWS * FDMC_RM + (size_t)FDMC_T * FDMC_RM +
                                               (size_t)5 * FDMC_NMAX * FDMC_NMAX + 3 * FDMC_C);

// The launch of one cluster of C blocks.
static void fdmc_config(int C, cudaLaunchConfig_t &lc, cudaLaunchAttribute (&at)[1], cudaStream_t st)
{
    lc.gridDim = dim3((unsigned)C);
    lc.blockDim = dim3(FDMC_T);
    lc.dynamicSmemBytes = FDMC_SMEM;
    lc.stream = st;
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = (unsigned)C;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    lc.attrs = at;
    lc.numAttrs = 1;
}

__device__ __forceinline__ void fdmc_cluster_arrive_relaxed()
{
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void fdmc_cluster_wait() { asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); }

// The slices' sums of acc (thread (c, s), s < S) through red, added in slice
// order; out(r, c, v) by the threads of slices r, r - S, ... for r < nr.
template <class O>
__device__ __forceinline__ void fdmc_reduce(double *red, const double (&acc)[FDMC_RM], int nr, int nx, int S, int c,
                                            int s, O out)
{
    if (s < S)
#pragma unroll
        for (int r = 0; r < FDMC_RM; ++r)
            if (r < nr) red[(s * FDMC_RM + r) * nx + c] = acc[r];
    __syncthreads();
    if (s < S)
        for (int r = s; r < nr; r += S) {
            double v = red[r * nx + c];
            for (int q = 1; q < S; ++q) v += red[(q * FDMC_RM + r) * nx + c];
            out(r, v);
        }
    __syncthreads();
}

template <class T, bool CHECK>
__global__ void __launch_bounds__(FDMC_T, 1) fdmc_kernel(const FdmArgs<T> A, const FdmcTables X)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cl = cg::this_cluster();
    extern __shared__ __align__(16) double fdmc_smem[];
    constexpr int NM = FDMC_NMAX, RM = FDMC_RM, MS = NM * NM;
    double *sLA = fdmc_smem, *sLB = sLA + FDMC_LROWS * RM, *sD = sLB + FDMC_LROWS * RM;
    double *red = sD + FDMC_LROWS * RM, *sM = red + FDMC_T * RM, *sPart = sM + 4 * MS; // sM: b, Qx, S, Qx^T
    T *sF = (T *)(sPart + 3 * FDMC_C);                                                  // f as it comes
    __shared__ int ok_s;
    fdmc_cluster_arrive_relaxed(); // (every block runs before any writes into another's memory)
    const int b = (int)cl.block_rank(), C = X.C, R = X.R;
    const int nx = A.nx, ny = A.ny, t = threadIdx.x;
    const int j0 = b * R, nr = max(0, min(ny - j0, R));
    const int S = FDMC_T / nx, c = t % nx, s = t / nx;
    const int KSy = (ny + S - 1) / S, KSx = (nx + S - 1) / S;
    const int kby = s < S ? min(ny, s * KSy) : ny, cy = s < S ? min(ny, kby + KSy) - kby : 0;
    const int kbx = s < S ? min(nx, s * KSx) : nx, cx = s < S ? min(nx, kbx + KSx) - kbx : 0;
    const Grid<T> &g = A.g;
    constexpr int NW = FDMC_T / 32, NI = (NM + NW - 1) / NW, NJ = (NM + 31) / 32;
    const int w = t >> 5, l = t & 31;
    { // the tables and f, by asynchronous copies
        for (int y = w; y < ny; y += NW)
            for (int x = l; x < nx; x += 32)
                __pipeline_memcpy_async(sF + y * NM + x, A.f + g.base + (int64_t)y * g.sy + x, sizeof(T));
        const int nq = nx * NM / 2, nl = FDMC_LROWS * RM / 2;
        const double *la = X.LA + (size_t)b * FDMC_LROWS * RM, *lb = X.LB + (size_t)b * FDMC_LROWS * RM;
        for (int e = t; e < nq; e += FDMC_T) {
            __pipeline_memcpy_async(sM + MS + 2 * e, X.RX + 2 * e, 16);
            __pipeline_memcpy_async(sM + 3 * MS + 2 * e, X.RXT + 2 * e, 16);
        }
        for (int e = t; e < nl; e += FDMC_T) {
            __pipeline_memcpy_async(sLA + 2 * e, la + 2 * e, 16);
            __pipeline_memcpy_async(sLB + 2 * e, lb + 2 * e, 16);
        }
        __pipeline_commit();
    }
    for (int e = t; e < FDMC_LROWS * RM; e += FDMC_T) sD[e] = 0.0;
    // The boundary terms of the points on the box's edge, a thread each,
    // while the copies fly: rows 0 and ny - 1, then columns 0 and nx - 1.
    const int ne = (ny == 1 ? nx : 2 * nx) + max(0, ny - 2) * (nx == 1 ? 1 : 2);
    int ex[FDMC_EDGE], ey[FDMC_EDGE];
    T ebt[FDMC_EDGE];
#pragma unroll
    for (int q = 0; q < FDMC_EDGE; ++q) {
        const int e = t + q * FDMC_T;
        ex[q] = -1;
        if (e >= ne) continue;
        if (e < nx) ex[q] = e, ey[q] = 0;
        else if (ny > 1 && e < 2 * nx) ex[q] = e - nx, ey[q] = ny - 1;
        else {
            const int k = e - (ny == 1 ? nx : 2 * nx), side = nx == 1 ? 0 : k & 1;
            ex[q] = side ? nx - 1 : 0;
            ey[q] = 1 + (nx == 1 ? k : k >> 1);
        }
        ebt[q] = box_terms(g, A.u_in, g.base + (int64_t)ey[q] * g.sy + ex[q], ex[q], ey[q], 0);
    }
    __pipeline_wait_prior(0);
    __syncthreads();
    // b = f plus the boundary terms (all of b in every block): the inner
    // points a warp a row, then the edge's; the scan as scan_rhs_kernel
    // sums each point
    Red3 acc{0, 0, 0};
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h = 0; h < NJ; ++h) {
            const int y = w + NW * i, x = l + 32 * h;
            if (y > 0 && y < ny - 1 && x > 0 && x < nx - 1) {
                const T fv = sF[y * NM + x];
                if (CHECK) accumulate(acc, (double)fv, (double)fv * (double)fv, fabs((double)fv));
                sM[y * NM + x] = (double)fv;
            }
        }
#pragma unroll
    for (int q = 0; q < FDMC_EDGE; ++q)
        if (ex[q] >= 0) {
            const T fv = sF[ey[q] * NM + ex[q]];
            if (CHECK) {
                const double cc = (double)fv + (double)ebt[q];
                accumulate(acc, cc, cc * cc, fabs(cc));
            }
            sM[ey[q] * NM + ex[q]] = (double)(fv + ebt[q]);
        }
    if (CHECK) { // the verdict, the same in every block
        acc = block_reduce(acc);
        if (t == 0) {
            ok_s = dr_data_ok(acc);
            if (b == 0) put_total(A.res, RES_SCAN, acc);
        }
    }
    __syncthreads();
    const bool ok = CHECK ? ok_s != 0 : true;
    fdmc_cluster_wait();
#pragma unroll 1
    for (int ph = 0; ph < 4; ++ph) {
        if (ph == 2) cl.sync(); // S from every block
        const double *L = ph == 0 ? sLA : ph == 2 ? sLB : sD;
        const int kb = ph & 1 ? kbx : kby, cnt = ph & 1 ? cx : cy;
        double sum[RM];
#pragma unroll
        for (int r = 0; r < RM; ++r) sum[r] = 0;
        const double *mp = sM + ph * MS + kb * NM + c, *lp = L + kb * RM;
#pragma unroll
        for (int i = 0; i < FDMC_KB; ++i) {
            const double m = i < cnt ? mp[i * NM] : 0.0;
#pragma unroll
            for (int r = 0; r < RM; ++r) sum[r] = fma(lp[i * RM + r], m, sum[r]);
        }
        fdmc_reduce(red, sum, nr, nx, S, c, s, [&](int r, double v) {
            if (ph == 0 || ph == 2) {
                sD[c * RM + r] = v;
            } else if (ph == 1) {
                const double d = X.ly[j0 + r] + X.lx[c], w = d != 0 ? v / d : 0.0;
                double *dst = sM + 2 * MS + (j0 + r) * NM + c;
                for (int q = 0; q < C; ++q) *cl.map_shared_rank(dst, q) = w;
            } else if (ok) {
                A.u_out[g.base + (int64_t)(j0 + r) * g.sy + c] = (T)v;
            }
        });
    }
    if (!CHECK || !ok) return;
    cl.sync(); // u written by every block
    // the report's residual b - A u on this block's rows (fold_residual's form)
    Red3 racc{0, 0, 0};
    for (int e = t; e < nr * nx; e += FDMC_T) {
        const int r = e / nx, i = e - r * nx, j = j0 + r;
        const int64_t p = g.base + (int64_t)j * g.sy + i;
        const double res = point_residual(g, (const T *)A.u_out, A.f, p, i, j, 0);
        accumulate(racc, res, res * res, fabs(res));
    }
    racc = block_reduce(racc);
    if (t == 0) {
        double *p0 = cl.map_shared_rank(sPart, 0);
        p0[3 * b] = racc.s0;
        p0[3 * b + 1] = racc.s1;
        p0[3 * b + 2] = racc.m;
    }
    cl.sync();
    if (b == 0 && t == 0) {
        Red3 v{0, 0, 0};
        for (int q = 0; q < C; ++q) v = red_combine(v, Red3{sPart[3 * q], sPart[3 * q + 1], sPart[3 * q + 2]});
        put_total(A.res, RES_NORM, v);
    }
#else
    __trap(); // (FftSolver::init_fdm takes this route only in code built for sm_90 on)
#endif
}

// The cluster's tables for faces of the basis q (fdm_basis's, per axis) and
// C blocks; empty where the grid is too large for the route.
static void fdmc_tables(const std::vector<double> (&q)[2], int64_t nx, int64_t ny, int C, std::vector<double> &la,
                        std::vector<double> &lb, std::vector<double> &rx, std::vector<double> &rxt)
{
    const int64_t R = (ny + C - 1) / C, L = FDMC_LROWS * FDMC_RM;
    la.assign((size_t)(FDMC_C * L), 0.0);
    lb.assign((size_t)(FDMC_C * L), 0.0);
    rx.assign((size_t)(nx * FDMC_NMAX), 0.0);
    rxt.assign((size_t)(nx * FDMC_NMAX), 0.0);
    for (int b = 0; b < C; ++b)
        for (int64_t r = 0; r < R && b * R + r < ny; ++r)
            for (int64_t k = 0; k < ny; ++k) {
                const int64_t j = b * R + r;
                la[(size_t)(b * L + k * FDMC_RM + r)] = q[1][(size_t)(k * ny + j)]; // Qy^T[j][k]
                lb[(size_t)(b * L + k * FDMC_RM + r)] = q[1][(size_t)(j * ny + k)]; // Qy[j][k]
            }
    for (int64_t i = 0; i < nx; ++i)
        for (int64_t k = 0; k < nx; ++k) {
            rx[(size_t)(i * FDMC_NMAX + k)] = q[0][(size_t)(i * nx + k)];  // Qx[i][k]
            rxt[(size_t)(i * FDMC_NMAX + k)] = q[0][(size_t)(k * nx + i)]; // Qx^T[i][k]
        }
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
