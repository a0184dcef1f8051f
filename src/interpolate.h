// interpolate.h -- interpolation of corrections; Transfer<T>
#pragma once
#include "odi.h"

namespace pgpu {

// Fine column (i, j)'s x / y taps: coarse storage offsets and weights.
template <class T, int NW> struct IpColumn {
    int ox[NW];
    int64_t oy[NW];
    T wx[NW], wy[NW];
};
template <class T, int NW>
__device__ __forceinline__ IpColumn<T, NW> ip_column(const Taps<T> &tp, int64_t csy, int i, int j)
{
    IpColumn<T, NW> c;
#pragma unroll
    for (int a = 0; a < NW; ++a) {
        c.ox[a] = __ldg(tp.ix + NW * i + a);
        c.wx[a] = __ldg(tp.wx + NW * i + a);
        c.oy[a] = (int64_t)__ldg(tp.iy + NW * j + a) * csy;
        c.wy[a] = __ldg(tp.wy + NW * j + a);
    }
    return c;
}
// (P e) at fine plane k of the column: e read with its ghosts (the wall
// values; zero for corrections).  Every z tap is read whatever its weight
// (unused taps point at a valid plane with weight 0): no load waits on a
// branch.
template <class T, int NW>
__device__ __forceinline__ T ip_point(const IpColumn<T, NW> &c, const Taps<T> &tp, const Grid<T> &coarse, const T *e,
                                      int k)
{
    const int64_t corigin = ghost_origin(coarse);
    auto plane = [&](int64_t o) {
        T v = T(0);
#pragma unroll
        for (int b = 0; b < NW; ++b) {
            const T *row = e + o + c.oy[b];
            T vx = T(0);
#pragma unroll
            for (int a = 0; a < NW; ++a) vx += c.wx[a] * row[c.ox[a]];
            v += c.wy[b] * vx;
        }
        return v;
    };
    if (!coarse.is3d) return plane(corigin);
    T v = T(0);
#pragma unroll
    for (int q = 0; q < NW; ++q)
        v += __ldg(tp.wz + NW * k + q) * plane(corigin + (int64_t)__ldg(tp.iz + NW * k + q) * coarse.sz);
    return v;
}
// (P e) at fine point (i, j, k), a fluid point of the general form with
// faces that couple nothing (shut: bit f, GenPoint's order; not 0): along
// each axis a parent behind a closed face (tap 0 lies below the point, tap
// 1 above) loses its weight and the other parent takes it all, so a
// correction does not cross a wall: the simplest operator-dependent
// interpolation.  A one-cell fluid film on a Dirichlet face behind a solid
// layer so takes the wall's 0, not the correction of the fluid beyond the
// layer (whose coarse node it shares; V-cycles diverged there), and fluid
// between the last coarse node and a closed coarse wall face the
// correction of its fluid neighbour, not the wall's 0.  A point on a parent
// (weights 1, 0) or closed on both sides keeps its weights.
// corigin: the coarse grid's ghost_origin; csz 0 in 2D.
template <class T>
__device__ __forceinline__ T ip_point_shut(const int *ix, const int *iy, const int *iz, const T *wx, const T *wy,
                                           const T *wz, int64_t csy, int64_t csz, int64_t corigin, const T *e, int i,
                                           int j, int k, unsigned shut)
{
    const Taps<T> tp{ix, iy, iz, wx, wy, wz};
    const IpColumn<T, 2> c = ip_column<T, 2>(tp, csy, i, j);
    T w[3][2] = {{c.wx[0], c.wx[1]}, {c.wy[0], c.wy[1]}, {T(1), T(0)}};
    int64_t oz[2] = {0, 0};
    if (csz)
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            w[2][q] = __ldg(tp.wz + 2 * k + q);
            oz[q] = (int64_t)__ldg(tp.iz + 2 * k + q) * csz;
        }
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        const T lo = (shut >> (2 * d)) & 1u ? T(0) : w[d][0], hi = (shut >> (2 * d + 1)) & 1u ? T(0) : w[d][1];
        if (lo + hi > T(0)) {
            w[d][0] = lo / (lo + hi);
            w[d][1] = hi / (lo + hi);
        }
    }
    T v = T(0);
#pragma unroll
    for (int q = 0; q < 2; ++q)
#pragma unroll
        for (int b = 0; b < 2; ++b)
#pragma unroll
            for (int a = 0; a < 2; ++a) {
                const T wt = w[2][q] * w[1][b] * w[0][a];
                if (wt != T(0)) v += wt * e[corigin + oz[q] + c.oy[b] + c.ox[a]];
            }
    return v;
}

// The same as a call, for kernels that meet these points inside their
// loops: their common path keeps its registers.  Its arguments are values,
// so that no kernel parameter needs an address (a copy to the stack in
// every thread).
template <class T>
__device__ __noinline__ T ip_point_shut_call(const int *ix, const int *iy, const int *iz, const T *wx, const T *wy,
                                             const T *wz, int64_t csy, int64_t csz, int64_t corigin, const T *e,
                                             int i, int j, int k, unsigned shut)
{
    return ip_point_shut(ix, iy, iz, wx, wy, wz, csy, csz, corigin, e, i, j, k, shut);
}

// v, the geometric (P e) at a fluid point (i, j, k) of the fine grid with
// mask byte b, or where it has faces that couple nothing (Grid::shut)
// ip_point_shut's value (CALL: by ip_point_shut_call).
template <bool CALL, class T>
__device__ __forceinline__ T ip_shut_or(const Grid<T> &fine, const Taps<T> &tp, const Grid<T> &coarse, const T *e,
                                        unsigned b, int i, int j, int k, T v)
{
    const unsigned s = gen_shut(fine, b);
    if (!s) return v;
    const int64_t csz = coarse.is3d ? coarse.sz : 0, co = ghost_origin(coarse);
    if (CALL) return ip_point_shut_call(tp.ix, tp.iy, tp.iz, tp.wx, tp.wy, tp.wz, coarse.sy, csz, co, e, i, j, k, s);
    return ip_point_shut(tp.ix, tp.iy, tp.iz, tp.wx, tp.wy, tp.wz, coarse.sy, csz, co, e, i, j, k, s);
}

// out = (ADD: in +) P e with NW taps per axis (2: the trilinear
// prolongation, 4: FMG's tricubic interpolation); in == out is allowed.  A
// walk launch on the fine grid: a thread loads everything its short column
// piece needs before it stores.
template <class T, int NW, bool ADD, bool REDUCE = false>
__global__ void __launch_bounds__(WALK_THREADS)
    interp_kernel(const Grid<T> fine, const Grid<T> coarse, const Taps<T> tp, const T *__restrict__ e, const T *in,
                  T *out, double *partials, int kchunk, int nyb, int nchunks)
{
    // Planes interpolated together: the trilinear taps load a piece (at most
    // walk_group + 1 planes, the first chunk's) at once; the tricubic ones
    // issue 64 loads per point already.
    constexpr int G = NW == 2 ? Tune<T>::walk_group + 1 : 1;
    Red3 acc{0, 0, 0};
    int i, j, k0, k1;
    if (walk_thread(fine.nx, fine.ny, fine.nz, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const IpColumn<T, NW> c = ip_column<T, NW>(tp, coarse.sy, i, j);
        const int64_t p0 = fine.base + i + (int64_t)j * fine.sy;
        for (int kb = k0; kb < k1; kb += G) {
            T v[G], old[G];
            unsigned mb[G]; // the mask bytes, loaded with the old values (stores to out come between)
#pragma unroll
            for (int q = 0; q < G; ++q) {
                const int k = kb + q;
                v[q] = old[q] = T(0);
                mb[q] = 0;
                if (k >= k1) continue;
                if (ADD) old[q] = in[p0 + (int64_t)k * fine.sz];
                mb[q] = gen_byte(fine, p0 + (int64_t)k * fine.sz);
                v[q] = ip_point(c, tp, coarse, e, k);
            }
#pragma unroll
            for (int q = 0; q < G; ++q)
                if (kb + q < k1) {
                    const int64_t p = p0 + (int64_t)(kb + q) * fine.sz;
                    if ((mb[q] & CELL_BITS) != PGPU_CELL_FLUID) { // (the general form) not an unknown: keeps its value
                        if (ADD && in != out) out[p] = old[q];
                        continue;
                    }
                    if constexpr (NW == 2 && ADD) v[q] = ip_shut_or<true>(fine, tp, coarse, e, mb[q], i, j, kb + q, v[q]);
                    out[p] = old[q] + v[q];
                    if (REDUCE) note_correction(acc, v[q], old[q] + v[q]);
                }
        }
    }
    if (REDUCE) write_partial(partials, acc);
}

// ---- interpolation through shared memory ----
// The prolongation with the correction add (NT = 2 taps per axis) and the
// FMG interpolation (NT = 4), where every fine node's taps along each axis
// are NT consecutive coarse storage indices from s[i] on (window_taps; no
// periodic wrap).  A block owns an IT_FX x IT_FY patch of fine columns and a
// chunk of fine planes.  Each coarse plane it needs is read once, as an
// IT_CX x IT_CY tile, interpolated along x (one value per tile row and fine
// column) and then along y; the last NT such planes stay in registers, and
// each fine plane is their z combination.  The direct kernel reads 8 (64)
// coarse values per fine point; this one about 1/8 of one.  in == out is
// allowed (ADD reads each fine value in the thread that writes it).  The next
// coarse tile's loads are in flight while one is interpolated, and the old
// fine values are loaded IT_OLD planes at a time.
template <class T, int NT, bool ADD, bool REDUCE = false, bool MASK = false>
__global__ void __launch_bounds__(IT_FX *IT_FY, 4)
    interp_tile_kernel(const Grid<T> fine, const Grid<T> coarse, const Windows<T> tp, const Taps<T> taps,
                       const T *__restrict__ e, const T *in, T *out, double *partials, int kchunk, int nyb,
                       int nchunks)
{
    constexpr int NTH = IT_FX * IT_FY, CT = IT_CX * IT_CY, SL = (CT + NTH - 1) / NTH;
    __shared__ T ct[CT];           // the coarse tile
    __shared__ T xr[IT_CY * IT_FX]; // interpolated along x
    Red3 acc{0, 0, 0};
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) { // uniform per block
        if (REDUCE) write_partial(partials, acc);
        return;
    }
    const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + IT_FX * ty;
    const int i0 = blockIdx.x * IT_FX, j0 = yb * IT_FY, i = i0 + tx, j = j0 + ty;
    const int k0 = zc * kchunk, k1 = min(k0 + kchunk, fine.nz);
    const bool own = i < fine.nx && j < fine.ny;
    const int ic = min(i, fine.nx - 1), jc = min(j, fine.ny - 1);
    const int cx0 = __ldg(tp.sx + i0), cy0 = __ldg(tp.sy + j0); // the tile's first coarse column / row
    const int px = __ldg(tp.sx + ic) - cx0, py = __ldg(tp.sy + jc) - cy0;
    T wx[NT], wy[NT];
#pragma unroll
    for (int a = 0; a < NT; ++a) {
        wx[a] = __ldg(tp.wx + ic * NT + a);
        wy[a] = __ldg(tp.wy + jc * NT + a);
    }
    // Coarse storage (p, q, s) is at corigin + p + q sy + s sz; tile element
    // t = tid + NTH m is row t / IT_CX, column t % IT_CX (0 outside storage).
    const int64_t corigin = coarse.base - 1 - coarse.sy - (coarse.is3d ? coarse.sz : 0);
    int coff[SL];
    unsigned cin = 0;
#pragma unroll
    for (int m = 0; m < SL; ++m) {
        const int t = tid + NTH * m, rr = t / IT_CX, cc = t - rr * IT_CX;
        coff[m] = min(cy0 + rr, coarse.ny + 1) * (int)coarse.sy + min(cx0 + cc, coarse.nx + 1); // in the plane
        if (t < CT && cy0 + rr <= coarse.ny + 1 && cx0 + cc <= coarse.nx + 1) cin |= 1u << m;
    }
    // The coarse tile of storage plane s, into registers (clamped to the
    // storage planes: the prefetch past the last one is never used).
    T nxt[SL];
    auto fetch = [&](int s) {
        const T *P = e + corigin + (coarse.is3d ? (int64_t)min(s, coarse.nz + 1) * coarse.sz : 0);
#pragma unroll
        for (int m = 0; m < SL; ++m) nxt[m] = (cin >> m) & 1 ? P[coff[m]] : T(0);
    };
    // The plane held in nxt, interpolated to this thread's (i, j); nxt then
    // takes plane s_next, whose loads are in flight while this one is summed.
    auto plane = [&](int s_next) {
#pragma unroll
        for (int m = 0; m < SL; ++m)
            if (tid + NTH * m < CT) ct[tid + NTH * m] = nxt[m];
        __syncthreads(); // the tile is complete; every thread is done with xr of the last plane
        if (fine.is3d) fetch(s_next);
#pragma unroll
        for (int b = ty; b < IT_CY; b += IT_FY) {
            const T *row = ct + b * IT_CX + px;
            T v = T(0);
#pragma unroll
            for (int a = 0; a < NT; ++a) v += wx[a] * row[a];
            xr[b * IT_FX + tx] = v;
        }
        __syncthreads(); // xr is complete; every thread is done with the tile
        T v = T(0);
#pragma unroll
        for (int b = 0; b < NT; ++b) v += wy[b] * xr[(py + b) * IT_FX + tx];
        return v;
    };
    const int64_t p0 = fine.base + i + (int64_t)j * fine.sy;
    if (!fine.is3d) {
        const T old = ADD && own ? in[p0] : T(0);
        fetch(0);
        T v = plane(0);
        const unsigned mb = MASK && own ? gen_byte(fine, p0) : 0u;
        if (own && (mb & CELL_BITS) == PGPU_CELL_FLUID) {
            if constexpr (NT == 2 && ADD) v = ip_shut_or<false>(fine, taps, coarse, e, mb, i, j, 0, v);
            out[p0] = old + v;
            if (REDUCE) note_correction(acc, v, old + v);
        } else if (own && ADD && in != out) {
            out[p0] = old;
        }
        if (REDUCE) write_partial(partials, acc);
        return;
    }
    T Pz[NT]; // the planes cur .. cur + NT - 1
    int cur = __ldg(tp.sz + k0);
    fetch(cur);
#pragma unroll
    for (int c = 0; c < NT; ++c) Pz[c] = plane(cur + c + 1);
    // fine planes whose old values are loaded together (the double mask
    // path, which also holds the mask bytes, half as many: no spills)
    constexpr int G = MASK && sizeof(T) == 8 ? IT_OLD / 2 : IT_OLD;
    bool deferred = false;    // a point of this thread's with faces that couple nothing
    for (int kb = k0; kb < k1; kb += G) {
        T old[G];
        unsigned mb[G]; // MASK: the mask bytes, loaded with the old values (stores to out come between)
#pragma unroll
        for (int q = 0; q < G; ++q) {
            old[q] = ADD && own && kb + q < k1 ? in[p0 + (int64_t)(kb + q) * fine.sz] : T(0);
            mb[q] = MASK && own && kb + q < k1 ? gen_byte(fine, p0 + (int64_t)(kb + q) * fine.sz) : 0u;
        }
#pragma unroll
        for (int q = 0; q < G; ++q) {
            const int k = kb + q;
            if (k >= k1) break;              // uniform per block
            const int zs = __ldg(tp.sz + k); // never moves back (host check)
            while (cur < zs) {
#pragma unroll
                for (int c = 0; c + 1 < NT; ++c) Pz[c] = Pz[c + 1];
                Pz[NT - 1] = plane(cur + NT + 1);
                ++cur;
            }
            T v = T(0);
#pragma unroll
            for (int c = 0; c < NT; ++c) v += __ldg(tp.wz + k * NT + c) * Pz[c];
            const int64_t p = p0 + (int64_t)k * fine.sz;
            const bool fluid = own && (mb[q] & CELL_BITS) == PGPU_CELL_FLUID;
            const bool shut = MASK && NT == 2 && ADD && fluid && gen_shut(fine, mb[q]);
            if (fluid && !shut) {
                out[p] = old[q] + v;
                if (REDUCE) note_correction(acc, v, old[q] + v);
            } else if (own && ADD && in != out) { // (the general form) not an unknown, or shut: keeps its value
                out[p] = old[q];
            }
            deferred |= shut;
        }
    }
    // The points with faces that couple nothing, after the others: their
    // rule's registers are not live in the loop above.
    if constexpr (MASK && NT == 2 && ADD)
        if (deferred)
            for (int k = k0; k < k1; ++k) {
                const int64_t p = p0 + (int64_t)k * fine.sz;
                const unsigned mb = gen_byte(fine, p);
                if ((mb & CELL_BITS) != PGPU_CELL_FLUID || !gen_shut(fine, mb)) continue;
                const T v = ip_shut_or<false>(fine, taps, coarse, e, mb, i, j, k, T(0)), o = out[p];
                out[p] = o + v;
                if (REDUCE) note_correction(acc, v, o + v);
            }
    if (REDUCE) write_partial(partials, acc);
}

// FMG: the coarse problem's boundary data, restricted across each data face
// (of those in `faces`) from the next finer level's ghosts with the lateral
// restriction weights.  blockIdx.z = face; threads cover the coarse face
// (interior lateral extent).
template <class T>
__global__ void ghost_restrict_kernel(const Grid<T> fine, const Grid<T> coarse, const Xfer<T> x,
                                      const T *__restrict__ uf, T *__restrict__ uc0, T *__restrict__ uc1, int faces)
{
    const int face = blockIdx.z;
    const int axis = face >> 1, hi = face & 1;
    const int dmask[6] = {coarse.dxl, coarse.dxh, coarse.dyl, coarse.dyh, coarse.dzl, coarse.dzh};
    if (!dmask[face] || !((faces >> face) & 1)) return;
    const int nfine[3] = {fine.nx, fine.ny, fine.nz}, ncoarse[3] = {coarse.nx, coarse.ny, coarse.nz};
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int n1 = ncoarse[a1], n2 = coarse.is3d ? ncoarse[a2] : 1;
    const int *cnt[3] = {x.cntx, x.cnty, x.cntz};
    const int *idx[3] = {x.idxx, x.idxy, x.idxz};
    const T *rw[3] = {x.rwx, x.rwy, x.rwz};
    const int64_t fstr[3] = {1, fine.sy, fine.sz}, cstr[3] = {1, coarse.sy, coarse.sz};
    // Ghost position along the face's own axis, relative to base (interior 0).
    const int64_t fg = (hi ? nfine[axis] : -1) * fstr[axis];
    const int64_t cg = (hi ? ncoarse[axis] : -1) * cstr[axis];
    const int64_t total = (int64_t)n1 * n2;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        const int I1 = (int)(t % n1), I2 = (int)(t / n1);
        const bool use2 = coarse.is3d || a2 != 2;
        const int c2n = use2 ? cnt[a2][I2] : 1;
        T acc = T(0);
        for (int b = 0; b < c2n; ++b) {
            const int f2 = use2 ? idx[a2][I2 * MAX_CHILDREN + b] : 0;
            const T w2 = use2 ? rw[a2][I2 * MAX_CHILDREN + b] : T(1);
            T acc1 = T(0);
            for (int a = 0; a < cnt[a1][I1]; ++a) {
                const int f1 = idx[a1][I1 * MAX_CHILDREN + a];
                acc1 += rw[a1][I1 * MAX_CHILDREN + a] * uf[fine.base + fg + f1 * fstr[a1] + (use2 ? f2 * fstr[a2] : 0)];
            }
            acc += w2 * acc1;
        }
        const int64_t pc = coarse.base + cg + I1 * cstr[a1] + (use2 ? I2 * cstr[a2] : 0);
        uc0[pc] = acc;
        uc1[pc] = acc;
    }
}

// FMG: edge and corner ghosts between two (three) Dirichlet faces, which the
// tricubic interpolation reads next to an edge.  An edge value is the
// bilinear extrapolation from its square's other three corners (two face
// ghosts and the nearest interior point of the solved coarse problem),
// f(0,0) = f(0,1) + f(1,0) - f(1,1), exact for bilinear data and second-order
// accurate otherwise; corners (pass 1) likewise from the other seven corners
// of their cube, edges included.  Pass 0 does edges, pass 1 corners.
// The threads walk only the frame's edges (edge_points of them), not the
// whole array.
__host__ __device__ inline int64_t edge_points(int nx, int ny, int nz, bool is3d)
{
    return is3d ? 4 * ((int64_t)nx + ny + nz) + 8 : 4;
}


template <class T> __global__ void ghost_edges_kernel(const Grid<T> g, T *__restrict__ u, int pass)
{
    const int64_t ex = g.nx + 2, ey = g.ny + 2, ez = g.is3d ? g.nz + 2 : 1;
    const int64_t total = edge_points(g.nx, g.ny, g.nz, g.is3d != 0);
    const int64_t origin = g.base - 1 - g.sy - (g.is3d ? g.sz : 0);
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        // Point t of the frame's edges: 3D, the x, y and z edges without
        // their ends, then the 8 corners; 2D, the 4 corners.
        int64_t I, J, K = 0, r = t;
        if (!g.is3d) {
            I = (r & 1) ? ex - 1 : 0;
            J = (r & 2) ? ey - 1 : 0;
        } else if (r < 4 * (int64_t)g.nx) {
            I = 1 + r % g.nx; J = ((r / g.nx) & 1) ? ey - 1 : 0; K = ((r / g.nx) & 2) ? ez - 1 : 0;
        } else if ((r -= 4 * (int64_t)g.nx) < 4 * (int64_t)g.ny) {
            J = 1 + r % g.ny; I = ((r / g.ny) & 1) ? ex - 1 : 0; K = ((r / g.ny) & 2) ? ez - 1 : 0;
        } else if ((r -= 4 * (int64_t)g.ny) < 4 * (int64_t)g.nz) {
            K = 1 + r % g.nz; I = ((r / g.nz) & 1) ? ex - 1 : 0; J = ((r / g.nz) & 2) ? ey - 1 : 0;
        } else {
            r -= 4 * (int64_t)g.nz;
            I = (r & 1) ? ex - 1 : 0; J = (r & 2) ? ey - 1 : 0; K = (r & 4) ? ez - 1 : 0;
        }
        const int gx = I == 0 ? -1 : (I == ex - 1 ? 1 : 0);
        const int gy = J == 0 ? -1 : (J == ey - 1 ? 1 : 0);
        const int gz = !g.is3d ? 0 : (K == 0 ? -1 : (K == ez - 1 ? 1 : 0));
        const int nghost = (gx != 0) + (gy != 0) + (gz != 0);
        if (nghost != 2 + pass) continue;
        const bool dx = gx == 0 || ((g.dirichlet >> (gx < 0 ? 0 : 1)) & 1);
        const bool dy = gy == 0 || ((g.dirichlet >> (gy < 0 ? 2 : 3)) & 1);
        const bool dz = gz == 0 || ((g.dirichlet >> (gz < 0 ? 4 : 5)) & 1);
        if (!(dx && dy && dz)) continue;
        const int64_t p = origin + I + J * g.sy + K * g.sz;
        // One step inward along each ghost axis.
        const int64_t s[3] = {gx ? -gx : 0, gy ? -gy * g.sy : 0, gz ? -gz * g.sz : 0};
        T v;
        if (nghost == 2) {
            int64_t a = 0, b = 0; // the two ghost axes' steps
            bool first = true;
            for (int d = 0; d < 3; ++d)
                if (s[d]) { if (first) { a = s[d]; first = false; } else b = s[d]; }
            v = u[p + a] + u[p + b] - u[p + a + b];
        } else {
            v = u[p + s[0]] + u[p + s[1]] + u[p + s[2]] - u[p + s[0] + s[1]] - u[p + s[0] + s[2]] -
                u[p + s[1] + s[2]] + u[p + s[0] + s[1] + s[2]];
        }
        u[p] = v;
    }
}

// One level pair's transfers: the tables on the device, which kernels are
// eligible, and their launches.  Built with the hierarchy (hierarchy.h).
template <class T> struct Transfer {
    Grid<T> fg{}, cg{};       // the fine level and the next coarser one
    Xfer<T> rc{}, rf{};       // the cycle's restriction; FMG's data restriction (moment-free rows)
    Taps<T> p2{}, p4{};       // direct interpolation: trilinear, tricubic
    Windows<T> w2{}, w4{};    // the same in windows, for the tiles
    ColLaunch fwalk{}, cwalk{}, rs{}, it{}; // walk launches over the fine / coarse level; the tiles'
    ColLaunch ot{};           // level 0's operator-dependent transfers (odi_p_kernel, odi_r_kernel)
    bool rs_tile = false;     // restriction through restrict_tile_kernel
    bool rr_fused = false;    // ... and the residual's through restrict_residual_kernel
    // ... and through beta_tile_kernel's RR walk where the fine level is
    // beta_tiled for its residual: bt_rr the most children per coarse node
    // on x and y, 3 or 4 (0: the runs do not fit its tiles); brr: its launch
    int bt_rr = 0;
    ColLaunch brr{};
    bool pl_tile = false, fi_tile = false; // prolongation / FMG interpolation through interp_tile_kernel
    // ... and folded into a beta_tile_kernel smoothing pass (PRO): the
    // windows w2 fit its coarse tiles, z's move by at most one plane a plane
    bool bt_pro = false;
    // Operator-dependent transfers (odi.h): odi_ok where every coarsened
    // axis keeps nodes (a single GPU), odi where the hierarchy takes them
    // (beta that jumps, not across a periodic axis: Hierarchy::general_apply).
    // With odi the coarse level is a Galerkin level (Level::gr); fr: the fine
    // level's rows as the transfers read them.
    OdiAxes<T> oa{};
    GalRows<T> fr{};
    T *pw = nullptr; // with fr.st: P's weights (odi_pw_at), stored by the Galerkin build
    bool odi_ok = false, odi = false;

    enum Route { AUTO = 0, DIRECT = 1, TILED = 2 }; // AUTO: the tiles where eligible
    static bool tiled(int route, bool eligible) { return route == AUTO ? eligible : route == TILED; }

    // fc = R (r - shift) on the coarse interior (shift may be NULL); fmg:
    // FMG's data rows.
    pgpu_status restrict_(Env &env, const T *r, const T *shift, T *fc, bool fmg = false, int route = AUTO) const
    {
        char *err = env.err;
        const Xfer<T> &x = fmg ? rf : rc;
        if (tiled(route, rs_tile)) launch(rs, 0, env.st, restrict_tile_kernel<T>, fg, cg, x, r, shift, fc);
        else launch(cwalk, 0, env.st, restrict_kernel<T>, fg, cg, x, r, shift, fc);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // fc = R (f - shift - A u) in one pass (where rr_fused).
    pgpu_status restrict_residual(Env &env, const T *u, const T *f, const T *shift, T *fc) const
    {
        char *err = env.err;
        if constexpr (Tune<T>::rr_fused) {
            launch(rs, rr_smem_bytes<T>(), env.st, restrict_residual_kernel<T>, fg, cg, rc, u, f, shift, fc);
            PGPU_LAUNCHED();
            return PGPU_SUCCESS;
        } else {
            (void)u, (void)f, (void)shift, (void)fc;
            return record(err, PGPU_ERROR_UNSUPPORTED, "the one-pass residual restriction is built for double only");
        }
    }
    // The same by beta_tile_kernel's RR walk (where bt_rr and the fine level
    // is beta_tiled for its residual).
    pgpu_status restrict_beta_residual(Env &env, const T *u, const T *f, const T *shift, T *fc) const
    {
        char *err = env.err;
        if constexpr (Tune<T>::bt_rr) {
            launch(brr, BetaTile<T>::SMEM_RR, env.st,
                   bt_rr == 3 ? beta_tile_kernel<T, true, false, 3> : beta_tile_kernel<T, true, false, 4>, fg, u, fc,
                   f, shift, T(0), 0, cg, rc, (const T *)nullptr, Windows<T>{}, (T *)nullptr);
            PGPU_LAUNCHED();
            return PGPU_SUCCESS;
        } else {
            (void)u, (void)f, (void)shift, (void)fc;
            return record(err, PGPU_ERROR_UNSUPPORTED, "the beta walk's residual restriction is built for float only");
        }
    }
    // out = in + P e, the coarse-grid correction (in == out allowed).  With
    // partials, also the correction's size per block (note_correction);
    // *blocks gets their count.
    pgpu_status prolong(Env &env, const T *e, const T *in, T *out, int route = AUTO, double *partials = nullptr,
                        size_t *blocks = nullptr) const
    {
        char *err = env.err;
        const bool tile = tiled(route, pl_tile);
        if (blocks) *blocks = blocks_of(tile ? it : fwalk);
        const bool mk = fg.mk != nullptr;
        if (tile && partials)
            launch(it, 0, env.st, mk ? interp_tile_kernel<T, 2, true, true, true> : interp_tile_kernel<T, 2, true, true>,
                   fg, cg, w2, p2, e, in, out, partials);
        else if (tile)
            launch(it, 0, env.st, mk ? interp_tile_kernel<T, 2, true, false, true> : interp_tile_kernel<T, 2, true>, fg,
                   cg, w2, p2, e, in, out, (double *)nullptr);
        else if (partials)
            launch(fwalk, 0, env.st, interp_kernel<T, 2, true, true>, fg, cg, p2, e, in, out, partials);
        else
            launch(fwalk, 0, env.st, interp_kernel<T, 2, true>, fg, cg, p2, e, in, out, (double *)nullptr);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // fc = R r by the operator-dependent weights (odi).
    pgpu_status odi_restrict(Env &env, const T *r, T *fc) const
    {
        char *err = env.err;
        if (fr.st) launch(cwalk, 0, env.st, odi_rw_kernel<T>, fg, cg, oa, (const T *)pw, r, fc);
        else launch(ot, 0, env.st, fg.mk ? odi_r_kernel<T, true> : odi_r_kernel<T, false>, fg, cg, oa, r, fc);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // out = in + P e by the operator-dependent weights (in NULL: out = P e;
    // in == out allowed); partials as prolong's.
    pgpu_status odi_prolong(Env &env, const T *e, const T *in, T *out, double *partials = nullptr,
                            size_t *blocks = nullptr) const
    {
        char *err = env.err;
        if (fr.st) {
            if (blocks) *blocks = blocks_of(fwalk);
            if (partials) launch(fwalk, 0, env.st, odi_pw_kernel<T, true>, fg, cg, oa, (const T *)pw, e, in, out, partials);
            else launch(fwalk, 0, env.st, odi_pw_kernel<T, false>, fg, cg, oa, (const T *)pw, e, in, out, (double *)nullptr);
        } else {
            if (blocks) *blocks = blocks_of(ot);
            const bool mk = fg.mk != nullptr;
            if (partials)
                launch(ot, 0, env.st, mk ? odi_p_kernel<T, ODI_MEASURE, true> : odi_p_kernel<T, ODI_MEASURE, false>, fg,
                       cg, oa, e, in, out, partials);
            else
                launch(ot, 0, env.st, mk ? odi_p_kernel<T, ODI_ADD, true> : odi_p_kernel<T, ODI_ADD, false>, fg, cg,
                       oa, e, in, out, (double *)nullptr);
        }
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // dl = 1 - P 1 from a 7-point level (gal_sums_kernel), one pass.
    pgpu_status odi_delta(Env &env, T *dl) const
    {
        char *err = env.err;
        launch(ot, 0, env.st, fg.mk ? odi_p_kernel<T, ODI_DELTA, true> : odi_p_kernel<T, ODI_DELTA, false>, fg, cg, oa,
               (const T *)nullptr, (const T *)nullptr, dl, (double *)nullptr);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // u = the tricubic interpolant of e (FMG).
    pgpu_status interpolate(Env &env, const T *e, T *u, int route = AUTO) const
    {
        char *err = env.err;
        if (tiled(route, fi_tile))
            launch(it, 0, env.st,
                   fg.mk ? interp_tile_kernel<T, 4, false, false, true> : interp_tile_kernel<T, 4, false>, fg, cg, w4,
                   p4, e, (const T *)nullptr, u, (double *)nullptr);
        else launch(fwalk, 0, env.st, interp_kernel<T, 4, false>, fg, cg, p4, e, (const T *)nullptr, u, (double *)nullptr);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // The coarse problem's boundary data (FMG), restricted from the fine
    // ghosts of uf into the coarse ghosts of uc0 and uc1 (the faces in
    // `faces`).
    pgpu_status restrict_ghosts(Env &env, const T *uf, T *uc0, T *uc1, int faces = 63) const
    {
        char *err = env.err;
        const int64_t face = std::max<int64_t>({(int64_t)cg.nx * cg.ny, (int64_t)cg.nx * cg.nz, (int64_t)cg.ny * cg.nz});
        const unsigned blocks = (unsigned)std::min<int64_t>((face + 255) / 256, 4096);
        ghost_restrict_kernel<T><<<dim3(blocks, 1, cg.is3d ? 6 : 4), 256, 0, env.st>>>(fg, cg, rf, uf, uc0, uc1, faces);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
};

// Edge and corner ghosts of u on level g from its face ghosts and interior
// (FMG, before interpolating from g; see ghost_edges_kernel).
template <class T> static pgpu_status edge_ghosts(Env &env, const Grid<T> &g, T *u)
{
    char *err = env.err;
    const int64_t all = edge_points(g.nx, g.ny, g.nz, g.is3d != 0);
    const unsigned blocks = (unsigned)std::min<int64_t>((all + 255) / 256, 4096);
    for (int pass = 0; pass < (g.is3d ? 2 : 1); ++pass) {
        ghost_edges_kernel<T><<<blocks, 256, 0, env.st>>>(g, u, pass);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

// The transfers' shared-memory opt-in (once per handle).
template <class T> static pgpu_status transfer_setup(Env &env)
{
    char *err = env.err;
    if constexpr (Tune<T>::rr_fused)
        if (rr_smem_bytes<T>() <= (size_t)env.optin)
            PGPU_CUDA(cudaFuncSetAttribute(restrict_residual_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)rr_smem_bytes<T>()));
    return PGPU_SUCCESS;
}

} // namespace pgpu
