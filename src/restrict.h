// restrict.h -- restriction of residuals (direct and through shared memory)
#pragma once
#include "reduce.h"
#include "transfer.h"

namespace pgpu {

// The x/y children of coarse column (I, J): indices, row offsets, weights
// (unused slots weight 0), in registers for the column's planes.
template <class T> struct RsColumn {
    int cx, cy;
    int ix[MAX_CHILDREN];
    int64_t oy[MAX_CHILDREN];
    T wx[MAX_CHILDREN], wy[MAX_CHILDREN];
};
template <class T> __device__ __forceinline__ RsColumn<T> rs_column(const Xfer<T> &x, int64_t fsy, int I, int J)
{
    RsColumn<T> c;
    c.cx = __ldg(x.cntx + I);
    c.cy = __ldg(x.cnty + J);
#pragma unroll
    for (int a = 0; a < MAX_CHILDREN; ++a) {
        c.ix[a] = a < c.cx ? __ldg(x.idxx + I * MAX_CHILDREN + a) : 0;
        c.wx[a] = a < c.cx ? __ldg(x.rwx + I * MAX_CHILDREN + a) : T(0);
        c.oy[a] = a < c.cy ? (int64_t)__ldg(x.idxy + J * MAX_CHILDREN + a) * fsy : 0;
        c.wy[a] = a < c.cy ? __ldg(x.rwy + J * MAX_CHILDREN + a) : T(0);
    }
    return c;
}
// (R (r - shift)) at coarse plane K of the column.
template <class T>
__device__ __forceinline__ T rs_point(const RsColumn<T> &c, const Grid<T> &fine, const Xfer<T> &x, const T *r, int K,
                                      Shift<T> shift)
{
    const int cz = fine.is3d ? __ldg(x.cntz + K) : 1;
    T acc = T(0);
    for (int q = 0; q < cz; ++q) {
        const int kf = fine.is3d ? __ldg(x.idxz + K * MAX_CHILDREN + q) : 0;
        const T wz = fine.is3d ? __ldg(x.rwz + K * MAX_CHILDREN + q) : T(1);
        const T *plane = r + fine.base + (int64_t)kf * fine.sz;
        T accy = T(0);
#pragma unroll
        for (int b = 0; b < MAX_CHILDREN; ++b) {
            if (b >= c.cy) break;
            const T *row = plane + c.oy[b];
            T accx = T(0);
#pragma unroll
            for (int a = 0; a < MAX_CHILDREN; ++a)
                if (a < c.cx) accx = rs_add(accx, c.wx[a], shift.of(row[c.ix[a]]));
            accy = rs_add(accy, c.wy[b], accx);
        }
        acc = rs_add(acc, wz, accy);
    }
    return acc;
}

// fc = R (r - shift) on the coarse interior, r in the fine layout (shiftp
// may be NULL; FMG restricts f minus the mean of a singular problem).  A walk
// launch on the coarse grid: every load of r is independent of the others.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    restrict_kernel(const Grid<T> fine, const Grid<T> coarse, const Xfer<T> x, const T *__restrict__ r,
                    const T *__restrict__ shiftp, T *__restrict__ fc, int kchunk, int nyb, int nchunks)
{
    int I, J, k0, k1;
    if (!walk_thread(coarse.nx, coarse.ny, coarse.nz, kchunk, nyb, nchunks, I, J, k0, k1)) return;
    const Shift<T> shift = load_shift(shiftp);
    const RsColumn<T> c = rs_column(x, fine.sy, I, J);
    for (int K = k0; K < k1; ++K) fc[at_point(coarse, I, J, K)] = rs_point(c, fine, x, r, K, shift);
}

// ---- restriction through shared memory ----
// Where the children of each coarse node are a contiguous run of fine nodes
// that moves forward with the node (vertex and cell-pair coarsening, identity
// axes; not periodic rings whose ends wrap, except tiny ones where the runs
// still move forward).  A block owns a RS_TX x RS_TY patch of coarse columns
// and a chunk of coarse planes; it walks the fine planes under the chunk, and
// each fine plane is read from memory once, as a tile of RS_SX x RS_SY values
// in a ring of RS_STAGES shared-memory tiles filled by cp.async, so the next
// RS_STAGES - 1 planes are in flight while one is summed.  Each thread sums
// its x-y children from the tile and adds the result to the (at most two)
// coarse planes the fine plane belongs to (x.tz0/wz0/wz1), storing a coarse
// plane once no later fine plane reaches it.  The direct kernel reads every
// fine value once per coarse parent: 64 loads per coarse point on even axes
// against about 9 here.
static_assert(RS_STAGES >= 2, "restrict_tile_kernel waits for all but RS_STAGES - 2 copy groups");
static_assert(RS_STAGES * RS_SX * RS_SY * sizeof(double) <= 48 * 1024, "restriction ring over 48 KB in double");

// A thread of a restriction block (restrict_tile_kernel,
// restrict_residual_kernel): its coarse column (I, J), the chunk's coarse
// planes [k0, k1), the block tile's first fine column and row, and its x-y
// children, a run of up to 4 from tile position (ix, iy); unused slots have
// weight 0 (the host checked that all 4 lie in the tile).
template <class T> struct RsThread {
    int I, J, k0, k1, fx0, fy0, ix, iy;
    bool own;
    T wx[4], wy[4];
    // The children's weighted sum of (v - shift) from a fine tile plane
    // (a uniform branch: the cycle's restrictions have no shift).
    __device__ __forceinline__ T sum(const T *tile, Shift<T> shift) const
    {
        T s = T(0);
        if (shift.hi == T(0) && shift.lo == T(0)) {
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const T *row = tile + (iy + b) * RS_SX + ix;
                T sx = T(0);
#pragma unroll
                for (int a = 0; a < 4; ++a) sx = rs_add(sx, wx[a], row[a]);
                s = rs_add(s, wy[b], sx);
            }
            return s;
        }
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            const T *row = tile + (iy + b) * RS_SX + ix;
            T sx = T(0);
#pragma unroll
            for (int a = 0; a < 4; ++a) sx = rs_add(sx, wx[a], shift.of(row[a]));
            s = rs_add(s, wy[b], sx);
        }
        return s;
    }
};

template <class T>
__device__ __forceinline__ RsThread<T> rs_thread(const Grid<T> &coarse, const Xfer<T> &x, int yb, int zc, int kchunk)
{
    RsThread<T> t;
    t.I = blockIdx.x * RS_TX + threadIdx.x;
    t.J = yb * RS_TY + threadIdx.y;
    t.k0 = zc * kchunk;
    t.k1 = min(t.k0 + kchunk, coarse.nz);
    t.fx0 = __ldg(x.idxx + blockIdx.x * RS_TX * MAX_CHILDREN);
    t.fy0 = __ldg(x.idxy + yb * RS_TY * MAX_CHILDREN);
    t.own = t.I < coarse.nx && t.J < coarse.ny;
    const int Ic = min(t.I, coarse.nx - 1), Jc = min(t.J, coarse.ny - 1);
    const int cx = __ldg(x.cntx + Ic), cy = __ldg(x.cnty + Jc);
    t.ix = __ldg(x.idxx + Ic * MAX_CHILDREN) - t.fx0;
    t.iy = __ldg(x.idxy + Jc * MAX_CHILDREN) - t.fy0;
#pragma unroll
    for (int a = 0; a < 4; ++a) {
        t.wx[a] = t.own && a < cx ? __ldg(x.rwx + Ic * MAX_CHILDREN + a) : T(0);
        t.wy[a] = t.own && a < cy ? __ldg(x.rwy + Jc * MAX_CHILDREN + a) : T(0);
    }
    return t;
}

// The coarse planes Kc and Kc + 1 a restriction thread is summing: fine
// plane kf's x-y sum s goes to the (at most two) coarse planes it belongs to
// (x.tz0/wz0/wz1), and a coarse plane goes to flush(K, value) once no later
// fine plane reaches it.
template <class T> struct RsPlanes {
    int Kc;
    T a0 = T(0), a1 = T(0);
    template <class F> __device__ __forceinline__ void add(const Xfer<T> &x, int kf, T s, F &&flush)
    {
        const int t = __ldg(x.tz0 + kf + 1); // (entry kf + 1: see plane_owners)
        const T w0 = __ldg(x.wz0 + kf + 1), w1 = __ldg(x.wz1 + kf + 1);
        while (Kc < t) { // plane Kc has all its children
            flush(Kc, a0);
            a0 = a1;
            a1 = T(0);
            ++Kc;
        }
        if (t == Kc) {
            a0 = rs_add(a0, w0, s);
            a1 = rs_add(a1, w1, s);
        } else { // t == Kc - 1: the first planes, shared with the chunk below
            a0 = rs_add(a0, w1, s);
        }
    }
    template <class F> __device__ __forceinline__ void finish(F &&flush)
    {
        flush(Kc, a0);
        flush(Kc + 1, a1);
    }
};

template <class T>
__global__ void __launch_bounds__(RS_TX *RS_TY, Tune<T>::rs_blocks)
    restrict_tile_kernel(const Grid<T> fine, const Grid<T> coarse, const Xfer<T> x, const T *__restrict__ r,
                         const T *__restrict__ shiftp, T *__restrict__ fc, int kchunk, int nyb, int nchunks)
{
    constexpr int NT = RS_TX * RS_TY, SLOTS = (RS_SX * RS_SY + NT - 1) / NT, ST = RS_STAGES;
    __shared__ __align__(16) T tile[ST][RS_SY * RS_SX]; // a ring of ST fine planes
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return; // uniform per block
    const int tid = threadIdx.x + RS_TX * threadIdx.y;
    const RsThread<T> th = rs_thread(coarse, x, yb, zc, kchunk);
    const int k0 = th.k0, k1 = th.k1, fx0 = th.fx0, fy0 = th.fy0;
    const Shift<T> shift = load_shift(shiftp);
    // Tile element e = tid + NT q sits at row e / RS_SX, column e % RS_SX;
    // its offset fits an int (checked on the host).  Elements outside the
    // plane (their offsets clamped, never used) are zeroed once here in every
    // slot and never copied to.
    int off[SLOTS];
    unsigned in = 0;
#pragma unroll
    for (int q = 0; q < SLOTS; ++q) {
        const int e = tid + NT * q, rr = e / RS_SX, cc = e - rr * RS_SX;
        off[q] = min(fy0 + rr, fine.ny - 1) * (int)fine.sy + min(fx0 + cc, fine.nx - 1); // in the plane
        if (e < RS_SX * RS_SY && fy0 + rr < fine.ny && fx0 + cc < fine.nx) in |= 1u << q;
        if (e < RS_SX * RS_SY && !((in >> q) & 1)) {
#pragma unroll
            for (int b = 0; b < ST; ++b) tile[b][e] = T(0);
        }
    }
    // Fine plane kf into ring slot b, copied asynchronously; every thread
    // commits one group per plane, copies or not.
    auto fetch = [&](int kf, int b) {
        const T *plane = r + fine.base + (int64_t)kf * fine.sz;
#pragma unroll
        for (int q = 0; q < SLOTS; ++q)
            if ((in >> q) & 1) __pipeline_memcpy_async(&tile[b][tid + NT * q], plane + off[q], sizeof(T));
        __pipeline_commit();
    };
    const int fz0 = __ldg(x.idxz + k0 * MAX_CHILDREN);
    const int fz1 = __ldg(x.idxz + (k1 - 1) * MAX_CHILDREN + __ldg(x.cntz + k1 - 1) - 1);
    auto flush = [&](int K, T v) {
        if (th.own && K >= k0 && K < k1) fc[coarse.base + th.I + (int64_t)th.J * coarse.sy + (int64_t)K * coarse.sz] = v;
    };
    RsPlanes<T> acc{k0};
    // Fine plane fz0 + p sits in slot p % ST.  Planes fz0 .. fz0 + ST - 2 are
    // requested here; at plane p the request for plane p + ST - 1 goes out,
    // so planes p + 1 .. p + ST - 1 are in flight while p is summed.
#pragma unroll
    for (int b = 0; b + 1 < ST; ++b) {
        if (fz0 + b <= fz1) fetch(fz0 + b, b);
        else __pipeline_commit();
    }
    int slot = 0;
    for (int kf = fz0; kf <= fz1; ++kf) {
        __pipeline_wait_prior(ST - 2); // this thread's copies of plane kf are done
        __syncthreads();               // everyone's are, and everyone is done with plane kf - 1
        {
            const int nb = slot == 0 ? ST - 1 : slot - 1; // plane kf - 1's slot takes plane kf + ST - 1
            if (kf + ST - 1 <= fz1) fetch(kf + ST - 1, nb);
            else __pipeline_commit();
        }
        const T s = th.sum(tile[slot], shift);
        slot = slot + 1 == ST ? 0 : slot + 1;
        acc.add(x, kf, s, flush);
    }
    __pipeline_wait_prior(0); // no copy outlives the block
    acc.finish(flush);
}

// The residual's restriction in one pass, double only (Tune::rr_fused): fc =
// R (f - shift - A u) without the fine residual in memory (the residual
// kernel and the restriction read u and f, write r and read it back: four
// words per fine point against two here).  Same blocks, children and z
// accumulation as restrict_tile_kernel; per fine plane the block computes the
// residual on its RS_SX x RS_SY tile into shared memory from rings of u
// planes (the tile and a one-point frame, ghosts included: the neighbours
// across a face are the ghosts, so no periodic axis) and of f planes, copied
// asynchronously.  Uniform 3D levels only (Grid::fast: the x / y couplings
// follow from a node's place on its axis).
constexpr int RR_UX = RS_SX + 2, RR_UY = RS_SY + 2, RR_UE = RR_UX * RR_UY, RR_FE = RS_SX * RS_SY;

// Dynamic shared memory of restrict_residual_kernel: the u and f rings, two
// residual planes, a word per thread.
template <class T> constexpr size_t rr_smem_bytes()
{
    return sizeof(T) * ((size_t)4 * RR_UE + (size_t)2 * RR_FE + 2 * (size_t)RR_FE) + sizeof(unsigned) * RS_TX * RS_TY;
}

template <class T>
__global__ void __launch_bounds__(RS_TX *RS_TY, 2)
    restrict_residual_kernel(const Grid<T> fine, const Grid<T> coarse, const Xfer<T> x, const T *__restrict__ u,
                             const T *__restrict__ f, const T *__restrict__ shiftp, T *__restrict__ fc, int kchunk,
                             int nyb, int nchunks)
{
    constexpr int NT = RS_TX * RS_TY, USL = (RR_UE + NT - 1) / NT, FSL = (RR_FE + NT - 1) / NT;
    constexpr int SU = 4, SF = 2; // ring slots
    extern __shared__ __align__(16) unsigned char rr_smem[];
    T *ut = (T *)rr_smem;        // [SU][RR_UE]: u planes, tile plus frame
    T *ft = ut + SU * RR_UE;     // [SF][RR_FE]: f planes
    T *rt = ft + SF * RR_FE;     // [2][RR_FE]: residual planes
    unsigned *ends_s = (unsigned *)(rt + 2 * RR_FE); // [NT]: see ends below
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return; // uniform per block
    const int tid = threadIdx.x + RS_TX * threadIdx.y;
    const RsThread<T> th = rs_thread(coarse, x, yb, zc, kchunk);
    const int k0 = th.k0, k1 = th.k1, fx0 = th.fx0, fy0 = th.fy0;
    const Shift<T> shift = load_shift(shiftp);
    // u tile element e = tid + NT q: row e / RR_UX, column e % RR_UX, at
    // storage (fx0 - 1 + column, fy0 - 1 + row), ghosts included; past the
    // storage it is zeroed once in every slot and never copied to.  f tile
    // elements as restrict_tile_kernel's, interior only.
    int uoff[USL], foff[FSL];
    unsigned uin = 0, fin = 0;
#pragma unroll
    for (int q = 0; q < USL; ++q) {
        const int e = tid + NT * q, rr = e / RR_UX, cc = e - rr * RR_UX;
        const int yy = fy0 - 1 + rr, xx = fx0 - 1 + cc;
        uoff[q] = min(yy, fine.ny) * (int)fine.sy + min(xx, fine.nx);
        if (e < RR_UE && yy <= fine.ny && xx <= fine.nx) uin |= 1u << q;
        if (e < RR_UE && !((uin >> q) & 1)) {
#pragma unroll
            for (int b = 0; b < SU; ++b) ut[b * RR_UE + e] = T(0);
        }
    }
#pragma unroll
    for (int q = 0; q < FSL; ++q) {
        const int e = tid + NT * q, rr = e / RS_SX, cc = e - rr * RS_SX;
        foff[q] = min(fy0 + rr, fine.ny - 1) * (int)fine.sy + min(fx0 + cc, fine.nx - 1);
        if (e < RR_FE && fy0 + rr < fine.ny && fx0 + cc < fine.nx) fin |= 1u << q;
        if (e < RR_FE && !((fin >> q) & 1)) {
#pragma unroll
            for (int b = 0; b < SF; ++b) ft[b * RR_FE + e] = T(0);
        }
    }
    const int fz0 = __ldg(x.idxz + k0 * MAX_CHILDREN);
    const int fz1 = __ldg(x.idxz + (k1 - 1) * MAX_CHILDREN + __ldg(x.cntz + k1 - 1) - 1);
    // Copy group g: u storage plane fz0 - 1 + g (up to fz1 + 1) into u slot
    // g % SU, and for g >= 2 f plane fz0 + g - 2 (up to fz1) into f slot
    // g % SF.  Every thread commits one group per g, copies or not.
    auto fetch = [&](int g) {
        const int pu = fz0 - 1 + g, pf = fz0 + g - 2;
        if (pu <= fz1 + 1) {
            const T *plane = u + fine.base + (int64_t)pu * fine.sz;
            T *slot = ut + (g % SU) * RR_UE + tid;
#pragma unroll
            for (int q = 0; q < USL; ++q)
                if ((uin >> q) & 1) __pipeline_memcpy_async(slot + NT * q, plane + uoff[q], sizeof(T));
        }
        if (pf >= fz0 && pf <= fz1) {
            const T *plane = f + fine.base + (int64_t)pf * fine.sz;
            T *slot = ft + (g % SF) * RR_FE + tid;
#pragma unroll
            for (int q = 0; q < FSL; ++q)
                if ((fin >> q) & 1) __pipeline_memcpy_async(slot + NT * q, plane + foff[q], sizeof(T));
        }
        __pipeline_commit();
    };
    auto flush = [&](int K, T v) {
        if (th.own && K >= k0 && K < k1) fc[coarse.base + th.I + (int64_t)th.J * coarse.sy + (int64_t)K * coarse.sz] = v;
    };
    RsPlanes<T> acc{k0};
#pragma unroll
    for (int g = 0; g < 3; ++g) fetch(g);
    // This thread's residual elements' u at planes kf - 1 and kf (the centre
    // at kf + 1 is read from the ring each plane).
    T zlo[FSL], zce[FSL];
    {
        unsigned ends = 0; // per element: first / last node along x, along y
#pragma unroll
        for (int q = 0; q < FSL; ++q) {
            const int e = min(tid + NT * q, RR_FE - 1), rr = e / RS_SX, xi = fx0 + e - rr * RS_SX, yi = fy0 + rr;
            ends |= (unsigned)(xi == 0) << (4 * q) | (unsigned)(xi == fine.nx - 1) << (4 * q + 1) |
                    (unsigned)(yi == 0) << (4 * q + 2) | (unsigned)(yi == fine.ny - 1) << (4 * q + 3);
        }
        ends_s[tid] = ends;
    }
    for (int it = 0, kf = fz0; kf <= fz1; ++it, ++kf) {
        __pipeline_wait_prior(0); // this thread's groups up to it + 2 are done
        __syncthreads();          // everyone's are, and everyone is done with plane kf - 1's residual
        fetch(it + 3);            // into the slots of groups it - 1 (u) and it + 1 (f)
        {
            const T *U1 = ut + ((it + 1) % SU) * RR_UE, *U2 = ut + ((it + 2) % SU) * RR_UE,
                    *F = ft + ((it + 2) % SF) * RR_FE;
            T *R = rt + (it & 1) * RR_FE;
            if (it == 0) {
                const T *U0 = ut;
#pragma unroll
                for (int q = 0; q < FSL; ++q) {
                    const int e = min(tid + NT * q, RR_FE - 1), rr = e / RS_SX, c = (rr + 1) * RR_UX + e - rr * RS_SX + 1;
                    zlo[q] = U0[c];
                    zce[q] = U1[c];
                }
            }
            const T vzl = kf > 0 ? __ldg(fine.czl + kf) : fine.gzl;
            const T vzh = kf < fine.nz - 1 ? __ldg(fine.czh + kf) : fine.gzh;
            const T dz = __ldg(fine.czl + kf) + __ldg(fine.czh + kf);
            // Read anew each plane: the couplings below are not kept in
            // registers across the loop (they did not fit).
            const unsigned ends = *(volatile unsigned *)(ends_s + tid);
#pragma unroll
            for (int q = 0; q < FSL; ++q) {
                const int e = min(tid + NT * q, RR_FE - 1);
                const int rr = e / RS_SX, cc = e - rr * RS_SX, c = (rr + 1) * RR_UX + cc + 1;
                // x / y couplings of the uniform form by the node's place
                T vxl, vxh, vyl, vyh, dxy;
                uniform_xy(fine, (ends >> (4 * q)) & 1, (ends >> (4 * q + 1)) & 1, (ends >> (4 * q + 2)) & 1,
                           (ends >> (4 * q + 3)) & 1, vxl, vxh, vyl, vyh, dxy);
                const T zh = U2[c];
                const T off = neighbours<T>(vxl, U1[c - 1], vxh, U1[c + 1], vyl, U1[c - RR_UX], vyh, U1[c + RR_UX], vzl,
                                         zlo[q], vzh, zh);
                const T res = point_res(shift.of(F[e]) + off, dxy + dz, zce[q]);
                if (tid + NT * q < RR_FE) R[e] = (fin >> q) & 1 ? res : T(0);
                zlo[q] = zce[q];
                zce[q] = zh;
            }
        }
        __syncthreads(); // the residual plane is complete
        acc.add(x, kf, th.sum(rt + (it & 1) * RR_FE, Shift<T>{}), flush);
    }
    __pipeline_wait_prior(0); // no copy outlives the block
    acc.finish(flush);
}

} // namespace pgpu
