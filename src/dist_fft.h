// dist_fft.h -- several GPUs: the FFT over slabs
#pragma once
#include "fft.h"
#include "dist_plan.h"

namespace pgpu {

// Every axis by a real transform (FFT_RHC for a periodic one: its slots are
// eigenvectors as modes are), so that the data stay real and the
// transforms of one axis are independent of the others'.  The data start in
// the handle's slabs; an axis is transformed in a layout where it is whole;
// once only the split axis is left, a move (an all-to-all of boxes, grouped
// ncclSend / ncclRecv) splits the data along another axis.  The last
// mixed Dirichlet/Neumann axis is solved last by the line solves (tri_kernel),
// in a layout where it is whole; else the spectrum is divided.  The inverse
// runs the steps backwards.  3D: x and y on the slabs, a move to slabs of y
// (or x), z, the solve, back; 2D the same with x and y.

// The grid whose boundary terms the right-hand side takes: the faces
// between ranks hold no boundary data.
template <class T> static Grid<T> rhs_grid(const Env &env, Grid<T> g)
{
    if (!env.dist) return g;
    const Dist &d = *env.dist;
    int &lo = d.axis == 2 ? g.dzl : g.dyl, &hi = d.axis == 2 ? g.dzh : g.dyh;
    if (d.lo_peer >= 0) lo = 0;
    if (d.hi_peer >= 0) hi = 0;
    g.dirichlet &= ~((d.lo_peer >= 0 ? 1 << (2 * d.axis) : 0) | (d.hi_peer >= 0 ? 2 << (2 * d.axis) : 0));
    return g;
}

// A box of a packed array: the array's extents and the box's origin.
struct BoxAt {
    int64_t d0, d1;     // the array's x and y extents
    int64_t o0, o1, o2; // the box's first node
};
// dst's box = src's box, both of extents e0 x e1 x e2: rows (x) by the
// threads of a block, a row per (blockIdx.y, blockIdx.z) and stride.
template <class T>
__global__ void box_copy_kernel(const T *__restrict__ src, BoxAt s, T *__restrict__ dst, BoxAt t, int64_t e0,
                                int64_t e1, int64_t e2)
{
    for (int64_t k = blockIdx.z; k < e2; k += gridDim.z)
        for (int64_t j = blockIdx.y; j < e1; j += gridDim.y) {
            const T *a = src + s.o0 + s.d0 * ((s.o1 + j) + s.d1 * (s.o2 + k));
            T *b = dst + t.o0 + t.d0 * ((t.o1 + j) + t.d1 * (t.o2 + k));
            for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < e0; i += (int64_t)blockDim.x * gridDim.x)
                b[i] = a[i];
        }
}

// The all-periodic route's plan (init_dist_rows below) for rank me of R,
// host only (a CPU test checks it for every rank of many grids): the slabs'
// planes (zlo, zn), the chunks, the x modes' split (kxlo, kxn), the blocks'
// offsets (roff), the plane table (ztab: plane z's block at ztab[2 z], its
// mode stride at ztab[2 z + 1]) and C's length in complex elements (of
// complex_bytes each).  Every rank plans the same chunks.
inline pgpu_status plan_dist_rows(const pgpu_config &gc, int R, int me, int axis, size_t complex_bytes, DistRows &P,
                                  char *err)
{
    const int64_t ny = gc.ny, nz = gc.nz, kx = gc.nx / 2 + 1;
    {
        std::vector<int64_t> A, B;
        PGPU_FORWARD(dist_ranges(gc, R, axis, A, B, err));
        P.zlo = A;
        P.zn.resize(R);
        for (int r = 0; r < R; ++r) P.zn[r] = B[r] - A[r];
    }
    int64_t fewest = P.zn[0];
    for (int r = 0; r < R; ++r) fewest = std::min(fewest, P.zn[r]);
    const int64_t slab_bytes = kx * ny * (nz / R) * (int64_t)complex_bytes;
    const int K = P.chunks = (int)std::max<int64_t>(
        1, std::min<int64_t>(std::min<int64_t>(FFT_DIST_CHUNKS, fewest), slab_bytes / FFT_DIST_CHUNK_MIN));
    P.zc0.resize((size_t)R * (K + 1));
    for (int r = 0; r < R; ++r)
        for (int c = 0; c <= K; ++c) P.zc0[(size_t)r * (K + 1) + c] = c * P.zn[r] / K;
    P.kxlo.resize(R);
    P.kxn.resize(R);
    for (int r = 0; r < R; ++r) {
        P.kxlo[r] = r * kx / R;
        P.kxn[r] = (r + 1) * kx / R - P.kxlo[r];
    }
    // The blocks of this rank's x modes: its own planes' in C_c, the
    // others' after the spectrum in [q][c][kx][planes][y].
    const int64_t spectrum = kx * ny * P.zn[me];
    P.roff.assign((size_t)R * (K + 1), 0);
    P.ztab.assign((size_t)(2 * nz), 0);
    for (int q = 0; q < R; ++q)
        for (int c = 0; c < K; ++c) {
            const int64_t a = P.zc0[(size_t)q * (K + 1) + c], b = P.zc0[(size_t)q * (K + 1) + c + 1];
            const int64_t before = P.zlo[q] - (q > me ? P.zn[me] : 0); // the other ranks' planes before q's
            const int64_t off = q == me ? kx * ny * a + P.kxlo[me] * (b - a) * ny
                                        : spectrum + P.kxn[me] * ny * (before + a);
            P.roff[(size_t)q * (K + 1) + c] = off;
            for (int64_t z = a; z < b; ++z) {
                const int64_t g = P.zlo[q] + z;
                P.ztab[(size_t)(2 * g)] = off + (z - a) * ny;
                P.ztab[(size_t)(2 * g + 1)] = (b - a) * ny;
            }
        }
    P.elems = std::max<int64_t>(spectrum + P.kxn[me] * ny * (nz - P.zn[me]), 2 * R);
    return PGPU_SUCCESS;
}

#ifdef PGPU_WITH_NCCL
// NCCL connects two ranks on their first exchange, which cannot happen
// inside a graph capture: a word each way between every pair, now (S and
// R: device buffers of a word or more).
template <class T> static pgpu_status nccl_connect(Env &env, void *S, void *R)
{
    char *err = env.err;
    const Dist &d = *env.dist;
    const ncclDataType_t ty = sizeof(T) == 8 ? ncclDouble : ncclFloat;
    ncclResult_t r = ncclGroupStart();
    for (int q = 0; q < d.ranks && r == ncclSuccess; ++q) {
        if (q == d.rank) continue;
        r = ncclSend(S, 1, ty, q, d.comm, env.st);
        if (r == ncclSuccess) r = ncclRecv((T *)R + q, 1, ty, q, d.comm, env.st);
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    PGPU_CUDA(cudaStreamSynchronize(env.st));
    return PGPU_SUCCESS;
}

// All axes periodic in 3D with x and the global z within the row kernels
// (lf_fits): the single GPU's kernels on each slab, with one move each way
// (x split, z whole) in the middle.  Forward, per chunk of the slab's planes
// (chunk-major: chunk c's spectrum is C_c[kx][plane][y] at C + kx ny z0):
//   lf_forward_kernel  f's x rows        -> C_c
//   cuFFT              y lines of C_c, in place
//   move (stream cs)   C_c's block of each other rank's x modes -> that
//                      rank's C, beyond its spectrum
// then lf_zsolve_kernel on this rank's x modes, all planes (z forward,
// divide, z inverse; the table zt says where each plane's block lies: its
// own planes' stay in C_c), and backwards per chunk: the move back into
// C_c, the y lines, lf_inverse_kernel into u.  A chunk's move overlaps the
// next chunk's transforms (the moves' stream has the higher priority); the
// data move once each way.
template <class T> pgpu_status FftSolver<T>::init_dist_rows()
{
    char *err = env->err;
    const Dist &d = *env->dist;
    const pgpu_config &gc = d.global;
    const int R = d.ranks, me = d.rank;
    const int64_t nx = gc.nx, ny = gc.ny, nz = gc.nz, kx = nx / 2 + 1;
    dist.reset(new FftDist<T>());
    FftDist<T> &D = *dist;
    D.rows = true;
    PGPU_FORWARD(plan_dist_rows(gc, R, me, d.axis, sizeof(C2), D, err));
    const int K = D.chunks;
    PGPU_FORWARD(env->upload(D.ztab, &D.zt, "FFT plane table"));
    PGPU_FORWARD(lf_prepare(nx, nz));
    // The y transforms of a chunk: contiguous lines, kx x planes of them.
    size_t work = 0;
    for (int c = 0; c < K; ++c) {
        const int64_t p = D.zc0[(size_t)me * (K + 1) + c + 1] - D.zc0[(size_t)me * (K + 1) + c];
        bool have = false;
        for (auto &yp : D.yplans) have = have || yp.first == p;
        if (have) continue;
        long long n1[1] = {ny};
        cufftHandle h = 0;
        PGPU_FORWARD(make_plan(*env, plans, h, work, 1, n1, n1, 1, ny, n1, 1, ny, FftTypes<T>::C2C, kx * p));
        D.yplans.push_back(std::make_pair(p, h));
    }
    // Eigenvalues: y, z (all modes), x (this rank's).
    std::vector<T> ev;
    for (int64_t k = 0; k < ny; ++k) ev.push_back((T)fft_eigen(FFT_DFT, ny, gc.hy, k));
    for (int64_t k = 0; k < nz; ++k) ev.push_back((T)fft_eigen(FFT_DFT, nz, gc.hz, k));
    for (int64_t k = 0; k < kx; ++k) ev.push_back((T)fft_eigen(FFT_DFT, nx, gc.hx, k));
    T *d_ev = nullptr;
    PGPU_FORWARD(env->upload(ev, &d_ev, "FFT eigenvalues"));
    D.spec.e0 = ny;
    D.spec.ev0 = d_ev;
    D.spec.e1 = nz;
    D.spec.ev1 = d_ev + ny;
    D.spec.e2 = D.kxn[me];
    D.spec.ev2 = d_ev + ny + nz + D.kxlo[me];
    D.spec.scale = (T)(1.0 / ((double)nx * (double)ny * (double)nz));
    PGPU_FORWARD(env->mem.alloc(err, (void **)&D.C, (size_t)D.elems * sizeof(C2),
                                "FFT spectrum and z lines"));
    void *wa = nullptr;
    if (work) PGPU_FORWARD(env->mem.alloc(err, &wa, work, "cuFFT work area"));
    if (env->mem.counting) return PGPU_SUCCESS; // (no plans made)
    if (work)
        for (auto &yp : D.yplans) PGPU_CUFFT(cufftSetWorkArea(yp.second, wa));
    // The moves' stream at the highest priority: their kernels are scheduled
    // ahead of the next chunk's transforms, which they overlap.
    int least = 0, most = 0;
    PGPU_CUDA(cudaDeviceGetStreamPriorityRange(&least, &most));
    PGPU_CUDA(cudaStreamCreateWithPriority(&D.cs, cudaStreamNonBlocking, most));
    D.ev.resize((size_t)(2 * K + 2));
    for (cudaEvent_t &e : D.ev) PGPU_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return nccl_connect<T>(*env, D.C, D.C + R);
}

// Chunk c's move (on the stream cs): forward, C_c's block of rank q's x
// modes to q's block of this rank's chunk c; back, the reverse.  (This
// rank's own block stays where it is.)
template <class T> pgpu_status FftSolver<T>::dist_swap(int c, bool back)
{
    char *err = env->err;
    const Dist &d = *env->dist;
    FftDist<T> &D = *dist;
    const int R = d.ranks, me = d.rank, K = D.chunks;
    const int64_t ny = d.global.ny, kx = d.global.nx / 2 + 1;
    const int64_t z0 = D.zc0[(size_t)me * (K + 1) + c], zc = D.zc0[(size_t)me * (K + 1) + c + 1] - z0;
    C2 *Cc = D.C + kx * ny * z0;
    const ncclDataType_t ty = sizeof(T) == 8 ? ncclDouble : ncclFloat;
    ncclResult_t r = ncclGroupStart();
    for (int q = 0; q < R && r == ncclSuccess; ++q) {
        const int64_t qa = D.zc0[(size_t)q * (K + 1) + c], qc = D.zc0[(size_t)q * (K + 1) + c + 1] - qa;
        if (q == me) continue;
        C2 *mine = Cc + D.kxlo[q] * zc * ny;                    // C_c's block of q's modes
        C2 *theirs = D.C + D.roff[(size_t)q * (K + 1) + c];     // q's chunk c of this rank's modes
        const size_t nm = (size_t)(D.kxn[q] * zc * ny), nt = (size_t)(D.kxn[me] * qc * ny);
        if (back) {
            if (nt) r = ncclSend(theirs, 2 * nt, ty, q, d.comm, D.cs);
            if (r == ncclSuccess && nm) r = ncclRecv(mine, 2 * nm, ty, q, d.comm, D.cs);
        } else {
            if (nm) r = ncclSend(mine, 2 * nm, ty, q, d.comm, D.cs);
            if (r == ncclSuccess && nt) r = ncclRecv(theirs, 2 * nt, ty, q, d.comm, D.cs);
        }
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    return PGPU_SUCCESS;
}

template <class T> pgpu_status FftSolver<T>::run_dist_rows(T *u, const T *f, const T *d_shift)
{
    char *err = env->err;
    FftDist<T> &D = *dist;
    const Dist &d = *env->dist;
    const cudaStream_t st = env->st;
    const int K = D.chunks, me = d.rank;
    const int64_t ny = d.global.ny, kx = d.global.nx / 2 + 1;
    const Level<T> &L0 = *lv0;
    const LfShape sh = lf_shape(L0.g.nx, LF_T, Tune<T>::lf_vals);
    // Chunk c (a plane or more: chunks <= every slab's planes): its planes'
    // grid, its spectrum, its y transforms.
    auto chunk = [&](int c, Grid<T> &g, C2 *&Cc, cufftHandle &yp) {
        const int64_t z0 = D.zc0[(size_t)me * (K + 1) + c], zc = D.zc0[(size_t)me * (K + 1) + c + 1] - z0;
        g = L0.g;
        g.nz = (int)zc;
        g.base += z0 * g.sz;
        Cc = D.C + kx * ny * z0;
        for (auto &p : D.yplans)
            if (p.first == zc) yp = p.second;
    };
    for (int c = 0; c < K; ++c) {
        Grid<T> g;
        C2 *Cc;
        cufftHandle yp = 0;
        chunk(c, g, Cc, yp);
        const unsigned blocks = (unsigned)(((int64_t)g.ny * g.nz + sh.lpb - 1) / sh.lpb);
        lf_forward_kernel<T><<<blocks, LF_T, lf_smem, st>>>(g, f, d_shift, lf_tw, Cc);
        PGPU_LAUNCHED();
        PGPU_CUFFT(FftTypes<T>::c2c(yp, Cc, CUFFT_FORWARD));
        PGPU_CUDA(cudaEventRecord(D.ev[c], st));
        PGPU_CUDA(cudaStreamWaitEvent(D.cs, D.ev[c], 0));
        PGPU_FORWARD(dist_swap(c, false));
    }
    PGPU_CUDA(cudaEventRecord(D.ev[K], D.cs));
    PGPU_CUDA(cudaStreamWaitEvent(st, D.ev[K], 0));
    {
        const LfShape zs = lf_shape(2 * (int)D.spec.e1, LF_T, Tune<T>::lf_vals);
        const dim3 zg((unsigned)((D.spec.e0 + zs.lpb - 1) / zs.lpb), (unsigned)D.spec.e2);
        if (D.spec.e2 > 0) {
            lf_zsolve_kernel<T><<<zg, LF_T, lf_zsmem, st>>>(D.spec, lf_twz, D.C, D.zt);
            PGPU_LAUNCHED();
        }
    }
    PGPU_CUDA(cudaEventRecord(D.ev[K + 1], st));
    PGPU_CUDA(cudaStreamWaitEvent(D.cs, D.ev[K + 1], 0));
    for (int c = 0; c < K; ++c) {
        PGPU_FORWARD(dist_swap(c, true));
        PGPU_CUDA(cudaEventRecord(D.ev[K + 2 + c], D.cs));
        PGPU_CUDA(cudaStreamWaitEvent(st, D.ev[K + 2 + c], 0));
        Grid<T> g;
        C2 *Cc;
        cufftHandle yp = 0;
        chunk(c, g, Cc, yp);
        PGPU_CUFFT(FftTypes<T>::c2c(yp, Cc, CUFFT_INVERSE));
        const unsigned blocks = (unsigned)(((int64_t)g.ny * g.nz + sh.lpb - 1) / sh.lpb);
        lf_inverse_kernel<T><<<blocks, LF_T, lf_smem, st>>>(g, Cc, lf_tw, u);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

static dim3 box_grid(const int64_t e[3])
{
    return dim3((unsigned)std::min<int64_t>((e[0] + 255) / 256, 64), (unsigned)std::min<int64_t>(e[1], 65535),
                (unsigned)std::min<int64_t>(e[2], 65535));
}
template <class T> pgpu_status FftSolver<T>::init_dist()
{
    char *err = env->err;
    const Dist &d = *env->dist;
    const pgpu_config &gc = d.global;
    const int R = d.ranks, me = d.rank;
    const bool is3d = gc.nz > 1;
    const int dims = is3d ? 3 : 2;
    const int64_t N[3] = {gc.nx, gc.ny, is3d ? gc.nz : 1};
    const double hh[3] = {gc.hx, gc.hy, gc.hz};
    {
        bool all_p = is3d && d.axis == 2, x = false, z = false;
        for (int f = 0; f < 6; ++f) all_p = all_p && gc.bc[f] == PGPU_BC_PERIODIC;
        if (all_p) lf_fits(gc.nx, gc.nz, x, z);
        // The kernels' fit depends on each device's shared memory: the
        // ranks agree (the largest verdict), so that they take one route.
        double no = z && gc.nx / 2 + 1 >= R ? 0 : 1;
        if (all_p && !env->mem.counting) {
            PGPU_CUDA(cudaMemcpyAsync(d.d_red, &no, sizeof no, cudaMemcpyHostToDevice, env->st));
            PGPU_FORWARD(dist_allreduce(*env, d.d_red, 0, 1, env->st));
            PGPU_CUDA(cudaMemcpyAsync(&no, d.d_red, sizeof no, cudaMemcpyDeviceToHost, env->st));
            PGPU_CUDA(cudaStreamSynchronize(env->st));
        }
        if (no == 0) return init_dist_rows();
    }
    // The last axis with a Dirichlet and a Neumann face by line solves, the others by transforms.
    int kind[3] = {-1, -1, -1}, tri_ax = -1;
    for (int a = 0; a < dims; ++a)
        if (gc.bc[2 * a] != gc.bc[2 * a + 1]) tri_ax = a;
    for (int a = 0; a < dims; ++a) {
        const int lo = gc.bc[2 * a], hi = gc.bc[2 * a + 1];
        if (lo == PGPU_BC_PERIODIC) kind[a] = FFT_RHC;
        else if (a != tri_ax) kind[a] = fft_axis_kind<T>(lo, hi);
    }
    dist.reset(new FftDist<T>());
    FftDist<T> &D = *dist;
    typedef typename FftDist<T>::Layout Layout;
    typedef typename FftDist<T>::Step Step;
    D.tri = tri_ax;
    auto add_layout = [&](int s, const std::vector<int64_t> &lo, const std::vector<int64_t> &n) {
        Layout l;
        l.s = s;
        l.lo = lo;
        l.n = n;
        for (int a = 0; a < 3; ++a) l.d[a] = a == s ? n[me] : N[a];
        l.vol = l.d[0] * l.d[1] * l.d[2];
        D.lay.push_back(l);
        return (int)D.lay.size() - 1;
    };
    int cur;
    {
        std::vector<int64_t> A, B;
        PGPU_FORWARD(dist_ranges(gc, R, d.axis, A, B, err));
        for (int r = 0; r < R; ++r) B[r] -= A[r];
        cur = add_layout(d.axis, A, B);
    }
    // The axis to split along next: not `avoid`, not the line solves' where
    // another serves, at least a node per rank; the longest.
    auto split_for = [&](int avoid) {
        int best = -1;
        for (int a = 0; a < dims; ++a) {
            if (a == avoid || N[a] < R) continue;
            const bool ok = a != tri_ax, best_ok = best >= 0 && best != tri_ax;
            if (best < 0 || (ok && !best_ok) || (ok == best_ok && N[a] > N[best])) best = a;
        }
        return best;
    };
    auto move_to = [&](int s) -> pgpu_status {
        PGPU_RETURN_IF(s < 0, PGPU_ERROR_UNSUPPORTED,
                       "distributed FFT: no axis to transpose the data to (each needs at least %d nodes, one per "
                       "rank); use PGPU_FMG or PGPU_VCYCLE", R);
        std::vector<int64_t> lo(R), n(R);
        for (int r = 0; r < R; ++r) {
            lo[r] = r * N[s] / R;
            n[r] = (r + 1) * N[s] / R - lo[r];
        }
        Step st;
        st.what = FftDist<T>::STEP_MOVE;
        st.lay = cur;
        st.to = cur = add_layout(s, lo, n);
        D.steps.push_back(st);
        return PGPU_SUCCESS;
    };
    size_t work = 0;
    int64_t s_elems = 1, c_elems = 1;
    double scale = 1;
    bool done[3] = {false, false, false};
    for (;;) {
        for (int a = 0; a < dims; ++a) {
            if (kind[a] < 0 || done[a] || a == D.lay[cur].s) continue;
            Step st;
            st.what = FftDist<T>::STEP_AXIS;
            st.lay = cur;
            const Layout &l = D.lay[cur];
            PGPU_FORWARD(fft_axis_plan<T>(*env, plans, st.ax, a, kind[a], l.d, l.d[0] * l.d[1], work, s_elems, c_elems,
                                          scale));
            D.steps.push_back(st);
            done[a] = true;
        }
        int left = -1;
        for (int a = 0; a < dims; ++a)
            if (kind[a] >= 0 && !done[a]) left = a;
        if (left < 0) break;
        PGPU_FORWARD(move_to(split_for(left)));
    }
    if (tri_ax >= 0 && D.lay[cur].s == tri_ax) PGPU_FORWARD(move_to(split_for(tri_ax)));
    {
        Step st;
        st.what = FftDist<T>::STEP_SOLVE;
        st.lay = cur;
        D.steps.push_back(st);
    }
    // The eigenvalues (this rank's part of the split axis), the line solves' coefficients.
    const Layout &F = D.lay[cur];
    std::vector<T> ev;
    size_t eoff[3] = {0, 0, 0};
    for (int a = 0; a < dims; ++a) {
        eoff[a] = ev.size();
        if (a == tri_ax) continue;
        for (int64_t k = 0; k < N[a]; ++k) ev.push_back((T)fft_eigen(kind[a], N[a], hh[a], k));
    }
    T *d_ev = nullptr;
    PGPU_FORWARD(env->upload(ev, &d_ev, "FFT eigenvalues"));
    const T *evp[3];
    for (int a = 0; a < 3; ++a)
        evp[a] = a >= dims || a == tri_ax ? nullptr : d_ev + eoff[a] + (a == F.s ? F.lo[me] : 0);
    D.spec.e0 = F.d[0];
    D.spec.e1 = F.d[1];
    D.spec.e2 = F.d[2];
    D.spec.ev0 = evp[0];
    D.spec.ev1 = evp[1];
    D.spec.ev2 = evp[2];
    D.spec.scale = (T)scale;
    if (tri_ax >= 0) {
        const AxisCoef ac = axis_coef(fine_axis(N[tri_ax], hh[tri_ax], gc.bc[2 * tri_ax], gc.bc[2 * tri_ax + 1], true));
        const std::vector<T> lo(ac.c_lo.begin(), ac.c_lo.end()), hi(ac.c_hi.begin(), ac.c_hi.end());
        T *p = nullptr;
        PGPU_FORWARD(env->upload(lo, &p, "FFT line coefficients"));
        D.cl = p;
        PGPU_FORWARD(env->upload(hi, &p, "FFT line coefficients"));
        D.ch = p;
        PGPU_FORWARD(env->mem.alloc(err, (void **)&D.piv, (size_t)F.vol * sizeof(double), "FFT line pivots"));
    }
    // W: the data in any layout; S: the transforms' scratch and the moves'
    // send buffer; C: the complex scratch and the receive buffer.
    int64_t vmax = R;
    for (const Layout &l : D.lay) vmax = std::max(vmax, l.vol);
    D.wp = D.lay[0].d[0] * D.lay[0].d[1];
    PGPU_FORWARD(env->mem.alloc(err, (void **)&D.W, (size_t)vmax * sizeof(T), "FFT data"));
    PGPU_FORWARD(env->mem.alloc(err, (void **)&D.S, (size_t)std::max(s_elems, vmax) * sizeof(T), "FFT scratch"));
    PGPU_FORWARD(env->mem.alloc(err, (void **)&D.C, (size_t)std::max(c_elems, vmax / 2 + 1) * sizeof(C2),
                                "FFT spectrum"));
    void *wa = nullptr;
    if (work) {
        PGPU_FORWARD(env->mem.alloc(err, &wa, work, "cuFFT work area"));
        for (cufftHandle p : plans) PGPU_CUFFT(cufftSetWorkArea(p, wa));
    }
    if (env->mem.counting) return PGPU_SUCCESS;
    return nccl_connect<T>(*env, D.S, D.C);
}

// The data from layout `from` to layout `to`: each rank packs, per peer,
// the box of its part that the peer holds in `to` into S, the boxes travel
// (grouped send / receive), and each unpacks what it received into W.
template <class T> pgpu_status FftSolver<T>::dist_move(int from, int to)
{
    char *err = env->err;
    const Dist &d = *env->dist;
    FftDist<T> &D = *dist;
    const typename FftDist<T>::Layout &A = D.lay[from], &B = D.lay[to];
    const int R = d.ranks, me = d.rank, sa = A.s, sb = B.s;
    const cudaStream_t st = env->st;
    // Extents of the box rank `src` sends rank `dst`.
    auto extent = [&](int src, int dst, int64_t e[3]) {
        for (int a = 0; a < 3; ++a) e[a] = A.d[a]; // (the axes split in neither layout are whole)
        e[sa] = A.n[src];
        e[sb] = B.n[dst];
    };
    T *recv = (T *)D.C;
    int64_t soff = 0, roff = 0;
    std::vector<int64_t> so(R), ro(R), sn(R), rn(R);
    for (int q = 0; q < R; ++q) {
        int64_t e[3];
        extent(me, q, e);
        sn[q] = e[0] * e[1] * e[2];
        so[q] = soff;
        soff += sn[q];
        extent(q, me, e);
        rn[q] = e[0] * e[1] * e[2];
        ro[q] = roff;
        roff += rn[q];
    }
    for (int q = 0; q < R; ++q) { // pack
        if (!sn[q]) continue;
        int64_t e[3], o[3] = {0, 0, 0};
        extent(me, q, e);
        o[sb] = B.lo[q];
        box_copy_kernel<T><<<box_grid(e), 256, 0, st>>>(D.W, BoxAt{A.d[0], A.d[1], o[0], o[1], o[2]},
                                                                    D.S + so[q], BoxAt{e[0], e[1], 0, 0, 0}, e[0],
                                                                    e[1], e[2]);
        PGPU_LAUNCHED();
    }
    const ncclDataType_t ty = sizeof(T) == 8 ? ncclDouble : ncclFloat;
    ncclResult_t r = ncclGroupStart();
    for (int q = 0; q < R && r == ncclSuccess; ++q) {
        if (q == me) continue;
        if (sn[q]) r = ncclSend(D.S + so[q], (size_t)sn[q], ty, q, d.comm, st);
        if (r == ncclSuccess && rn[q]) r = ncclRecv(recv + ro[q], (size_t)rn[q], ty, q, d.comm, st);
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    for (int q = 0; q < R; ++q) { // unpack (this rank's own box straight from S)
        if (!rn[q]) continue;
        int64_t e[3], o[3] = {0, 0, 0};
        extent(q, me, e);
        o[sa] = A.lo[q];
        const T *src = q == me ? D.S + so[q] : recv + ro[q];
        box_copy_kernel<T><<<box_grid(e), 256, 0, st>>>(src, BoxAt{e[0], e[1], 0, 0, 0}, D.W,
                                                                    BoxAt{B.d[0], B.d[1], o[0], o[1], o[2]}, e[0],
                                                                    e[1], e[2]);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

template <class T> pgpu_status FftSolver<T>::run_dist(T *u, const T *f, const T *d_shift)
{
    char *err = env->err;
    FftDist<T> &D = *dist;
    if (D.rows) return run_dist_rows(u, f, d_shift);
    const cudaStream_t st = env->st;
    const Level<T> &L0 = *lv0;
    const ColLaunch &c = L0.col;
    const UserIO<T> none{L0.g, nullptr, nullptr, nullptr, nullptr, 0, 0};
    fft_load_kernel<T><<<c.grid, c.block, 0, st>>>(rhs_grid(*env, L0.g), u, f, d_shift, D.W, D.wp, c.kchunk, c.nyb,
                                                   c.nchunks);
    PGPU_LAUNCHED();
    typedef FftDist<T> FD;
    for (const typename FD::Step &s : D.steps) {
        if (s.what == FD::STEP_AXIS) {
            PGPU_FORWARD(fft_axis_run<T>(*env, s.ax, false, none, D.W, D.S, D.C));
        } else if (s.what == FD::STEP_MOVE) {
            PGPU_FORWARD(dist_move(s.lay, s.to));
        } else if (D.tri >= 0) {
            const int64_t e[3] = {D.spec.e0, D.spec.e1, D.spec.e2};
            const int64_t lines = e[0] * e[1] * e[2] / e[D.tri];
            tri_kernel<T, T><<<grid_for(lines, env->sms), 256, 0, st>>>(D.spec, D.tri, D.cl, D.ch, 0, D.W, D.piv, 0,
                                                                         lines);
            PGPU_LAUNCHED();
        } else {
            spectral_divide_kernel<T, T><<<grid_for(D.spec.e0 * D.spec.e1 * D.spec.e2, env->sms), 256, 0, st>>>(
                D.spec, D.W);
            PGPU_LAUNCHED();
        }
    }
    for (size_t k = D.steps.size(); k-- > 0;) {
        const typename FD::Step &s = D.steps[k];
        if (s.what == FD::STEP_AXIS) PGPU_FORWARD(fft_axis_run<T>(*env, s.ax, true, none, D.W, D.S, D.C));
        else if (s.what == FD::STEP_MOVE) PGPU_FORWARD(dist_move(s.to, s.lay));
    }
    fft_store_kernel<T><<<c.grid, c.block, 0, st>>>(L0.g, D.W, D.wp, u, c.kchunk, c.nyb, c.nchunks);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}
#else
template <class T> pgpu_status FftSolver<T>::init_dist()
{
    return record(env->err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
}
template <class T> pgpu_status FftSolver<T>::run_dist(T *, const T *, const T *)
{
    return record(env->err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
}
// (dist_move, init_dist_rows, run_dist_rows and dist_swap are called from
// these two alone: never instantiated without NCCL.)
#endif

} // namespace pgpu
