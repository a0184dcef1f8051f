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

#ifdef PGPU_WITH_NCCL
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
    // NCCL connects two ranks on their first exchange, which cannot happen
    // inside a graph capture: a word each way between every pair, now.
    const ncclDataType_t ty = sizeof(T) == 8 ? ncclDouble : ncclFloat;
    ncclResult_t r = ncclGroupStart();
    for (int q = 0; q < R && r == ncclSuccess; ++q) {
        if (q == me) continue;
        r = ncclSend(D.S, 1, ty, q, d.comm, env->st);
        if (r == ncclSuccess) r = ncclRecv((T *)D.C + q, 1, ty, q, d.comm, env->st);
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    PGPU_CUDA(cudaStreamSynchronize(env->st));
    return PGPU_SUCCESS;
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
template <class T> pgpu_status FftSolver<T>::dist_move(int, int)
{
    return record(env->err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
}
#endif

} // namespace pgpu
