// smooth_kernels.h -- Jacobi's walk and red-black Gauss-Seidel on any level
#pragma once
#include "operator.h"

namespace pgpu {

// Smoothing passes over one level, src -> dst (never in place, so no block
// depends on another and the result does not depend on scheduling):
//  - jacobi_kernel: weighted Jacobi, the column walk of operator.h;
//  - rbgs_tile_kernel (smooth_tile.h): red-black Gauss-Seidel on uniform 3D
//    levels without a periodic axis (the common case, the one that decides
//    the smoother's speed), one or two iterations per pass;
//  - rbgs_kernel: red-black on any level (periodic axes, odd periodic seams,
//    non-uniform couplings).
// Colours: the first colour of an iteration is red, (i+j+k) odd in 0-based
// indices (even in 1-based ones), unless `flip` is set (black first: the
// post-smoothing of a symmetric cycle).  All first-colour points are updated
// from the old values, then the second colour from the new first-colour ones.
// Each traffic is one read of src and f and one write of dst per pass: the
// cost of a Jacobi sweep, where two colour sweeps would move every word twice.

// Storage offset of plane m of a column (relative to the plane-0 element):
// real planes 0..nz-1; on a periodic z axis every m wraps; otherwise -1 and nz
// are the ghost planes and anything further is not a plane (ok = false).
template <class T> __device__ __forceinline__ int64_t plane_off(const Grid<T> &g, int m, bool &ok)
{
    ok = true;
    if (m >= 0 && m < g.nz) return (int64_t)m * g.sz;
    if (!g.is3d) { ok = false; return 0; }
    if (g.pz) return (int64_t)(((m % g.nz) + g.nz) % g.nz) * g.sz;
    if (m == -1 || m == g.nz) return (int64_t)m * g.sz;
    ok = false;
    return 0;
}

template <class T> struct JacobiEmit {
    static constexpr bool reads_f = true;
    T *dst;
    T omega, keep, scale_interior, scale;
    __device__ void uniform_diag(T diag, bool interior) { scale = interior ? scale_interior : omega / diag; }
    __device__ void skip(int64_t p, T centre) { dst[p] = centre; }
    __device__ void operator()(int64_t p, T centre, T rhs, T diag, bool uniform)
    {
        dst[p] = uniform ? relax_scaled(centre, rhs, keep, scale) : relax(centre, rhs, diag, omega);
    }
};

// Weighted Jacobi sweep, one column piece per thread (column_walk).  On the
// fast range the division by the diagonal is a multiplication by
// omega / diag: scale_interior (interior_scale) for columns off the x/y
// faces, computed once per column on the others.
template <class T, int MK>
__global__ void __launch_bounds__(WALK_THREADS, Tune<T>::sweep_blocks)
    jacobi_kernel(const Grid<T> g, const T *__restrict__ src, T *__restrict__ dst, const T *__restrict__ f,
                  const T *__restrict__ shiftp, T omega, T scale_interior, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    const Shift<T> shift = load_shift(shiftp);
    JacobiEmit<T> emit{dst, omega, T(1) - omega, scale_interior, T(0)};
    column_walk<T, T, Tune<T>::sweep_group, MK>(g, src, f, i, j, k0, k1, shift, emit);
}

template <class T> struct Pair;
template <> struct Pair<float> { typedef float2 type; };
template <> struct Pair<double> { typedef double2 type; };

// Red-black on any level.  Each thread holds two neighbouring points of a row
// -- one red and one black, except across the seam of an odd periodic axis --
// so no lane idles while the other colour is computed.  A block (RB_TX pairs
// x RB_BY rows) owns a RB_OX x RB_OY tile and walks a z chunk; the ring two
// points wide around the tile is loaded too and its inner half recomputes its
// first-colour values, so no block depends on another.  Old values go through
// a register window into shared plane buffers two planes ahead, so no load is
// waited for at a barrier.  Per plane m: first colour at m from the old-value
// buffers, one barrier, then the second colour at m-1 from the half-updated
// buffers.  Blocks without a seam pair, on uniform planes, take branch-free
// updates with omega / diag precomputed.
template <class T> constexpr size_t rbgs_smem_bytes() { return 8 * RB_BY * RB_TX * sizeof(typename Pair<T>::type); }

template <class T>
__global__ void __launch_bounds__(RB_TX *RB_BY, Tune<T>::rbg_blocks)
    rbgs_kernel(const Grid<T> g, const T *__restrict__ src, T *__restrict__ dst, const T *__restrict__ f,
                const T *__restrict__ shiftp, T omega, int flip, int kchunk, int nyb, int nchunks)
{
    typedef typename Pair<T>::type P2;
    constexpr int EX = 2 * RB_TX;
    extern __shared__ __align__(16) unsigned char rb_smem[];
    P2(*ob)[RB_BY][RB_TX] = reinterpret_cast<P2(*)[RB_BY][RB_TX]>(rb_smem); // old values, 4 planes
    P2(*hb)[RB_BY][RB_TX] = ob + 4;                                          // half-updated, 4 planes
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return; // uniform per block
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int gx0 = blockIdx.x * RB_OX - 2 + 2 * tx, gj = yb * RB_OY - 2 + ty;

    // Classify a coordinate: interior (periodic axes wrap), ghost, or out.
    auto classify = [](int gidx, int n, int periodic, int &idx, int &store) {
        if (gidx >= 0 && gidx < n) { idx = gidx; store = gidx; return 0; }
        if (periodic) { idx = ((gidx % n) + n) % n; store = idx; return 0; }
        if (gidx == -1 || gidx == n) { idx = -1; store = gidx; return 1; }
        idx = -1; store = 0; return 2;
    };
    int yj, ys;
    const int ky = classify(gj, g.ny, g.py, yj, ys);
    int xi[2], xs[2];
    bool loads[2], reds[2], owner[2];
    int64_t col[2];
    T vxl[2], vxh[2], vyl[2], vyh[2], dxy[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
        const int kx = classify(gx0 + e, g.nx, g.px, xi[e], xs[e]);
        const bool active = kx == 0 && ky == 0;
        const bool ghost = (kx == 1 && ky == 0) || (kx == 0 && ky == 1);
        const int ex = 2 * tx + e;
        loads[e] = active || ghost;
        reds[e] = active && ex >= 1 && ex <= EX - 2 && ty >= 1 && ty <= RB_BY - 2;
        owner[e] = active && ex >= 2 && ex <= EX - 3 && ty >= 2 && ty <= RB_BY - 3 && gx0 + e < g.nx && gj < g.ny;
        col[e] = g.base + xs[e] + (int64_t)ys * g.sy;
        vxl[e] = vxh[e] = vyl[e] = vyh[e] = dxy[e] = T(0);
        if (reds[e]) {
            const ColXY<T> c = col_xy(g, xi[e], yj);
            vxl[e] = c.vxl; vxh[e] = c.vxh; vyl[e] = c.vyl; vyh[e] = c.vyh; dxy[e] = c.dxy;
        }
    }
    const Shift<T> shift = load_shift(shiftp);
    int k0, k1;
    chunk_planes(zc, kchunk, g.nz, k0, k1);
    const int mstart = g.is3d ? k0 - 1 : k0;
    // Fast planes (g.fast, planes 2..nz-4: every plane touched is real and
    // has the uniform z coefficients): one first-colour and one second-colour
    // value per thread, which needs the two points of a pair to differ in
    // colour; a block with a seam pair keeps the general path.
    const int yf = yj + flip; // (x + y + flip + m) odd: first colour at plane m
    const int par0 = (xi[0] + yf) & 1, par1 = (xi[1] + yf) & 1;
    const bool pair_ok = !(reds[0] && reds[1]) || par0 != par1;
    const bool fast = __syncthreads_and(pair_ok) && g.fast && !g.gen;
    const T keep = T(1) - omega;
    T sc[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) sc[e] = (fast && reds[e]) ? omega / (dxy[e] + (g.cz + g.cz)) : T(0);
    const int txl = max(tx - 1, 0), txh = min(tx + 1, RB_TX - 1);
    const int tyl = max(ty - 1, 0), tyh = min(ty + 1, RB_BY - 1);
    // One point's update from its neighbours in buffer b: plane slot s (x/y
    // neighbours), sm / sp (planes below / above); element e of the pair.
    auto fast_update = [&](P2(*b)[RB_BY][RB_TX], int s, int sm, int sp, int e, T fe) {
        const P2 cc = b[s][ty][tx], lf = b[s][ty][txl], rt = b[s][ty][txh];
        const P2 dn = b[s][tyl][tx], up = b[s][tyh][tx], bl = b[sm][ty][tx], ab = b[sp][ty][tx];
        const T xl = e ? cc.x : lf.y, xh = e ? rt.x : cc.y, c0 = e ? cc.y : cc.x;
        const T off = neighbours_cz<T>(e ? vxl[1] : vxl[0], xl, e ? vxh[1] : vxh[0], xh, e ? vyl[1] : vyl[0],
                                    e ? dn.y : dn.x, e ? vyh[1] : vyh[0], e ? up.y : up.x, g.cz, e ? bl.y : bl.x,
                                    e ? ab.y : ab.x);
        return relax_scaled(c0, shift.of(fe) + off, keep, e ? sc[1] : sc[0]);
    };
    const int mend = g.is3d ? k1 : k0 + 1;
    auto old_at = [&](int m) {
        bool ok = true;
        const int64_t o = (m >= 0 && m < g.nz) ? (int64_t)m * g.sz : plane_off(g, m, ok);
        P2 v;
        v.x = (loads[0] && ok) ? src[col[0] + o] : T(0);
        v.y = (loads[1] && ok) ? src[col[1] + o] : T(0);
        return v;
    };
    auto f_at = [&](int m) {
        bool ok = true;
        const bool inside = m >= 0 && m < g.nz;
        const int64_t o = inside ? (int64_t)m * g.sz : plane_off(g, m, ok);
        const bool real = ok && (inside || g.pz);
        P2 v;
        v.x = (reds[0] && real) ? f[col[0] + o] : T(0);
        v.y = (reds[1] && real) ? f[col[1] + o] : T(0);
        return v;
    };
    auto get = [](const P2 &p, int e) { return e ? p.y : p.x; };
    // The general update of element e from buffer b (plane slot s, planes
    // below / above sm, sp) with the z couplings z.
    auto general_update = [&](P2(*b)[RB_BY][RB_TX], int s, int sm, int sp, int e, const ColZ<T> &z, T centre, T fe,
                              int kk) {
        const T xl = e ? b[s][ty][tx].x : b[s][ty][tx - 1].y;
        const T xh = e ? b[s][ty][tx + 1].x : b[s][ty][tx].y;
        const T yl = get(b[s][ty - 1][tx], e), yh = get(b[s][ty + 1][tx], e);
        if (g.gen) {
            const int64_t p = col[e] + (int64_t)kk * g.sz;
            if (!gen_fluid(g, p)) return centre;
            const GenPoint<T> q = gen_couplings(g, p, xi[e], yj, kk);
            T diag;
            const T off = gen_sum<T>(q, [&](int f) {
                return f == 0 ? xl : f == 1 ? xh : f == 2 ? yl : f == 3 ? yh
                     : f == 4 ? get(b[sm][ty][tx], e) : get(b[sp][ty][tx], e);
            }, diag);
            return relax(centre, shift.of(fe) + off, diag, omega);
        }
        const T off = g.is3d ? neighbours<T>(vxl[e], xl, vxh[e], xh, vyl[e], yl, vyh[e], yh, z.vzl, get(b[sm][ty][tx], e),
                                          z.vzh, get(b[sp][ty][tx], e))
                             : neighbours_xy<T>(vxl[e], xl, vxh[e], xh, vyl[e], yl, vyh[e], yh);
        return relax(centre, shift.of(fe) + off, dxy[e] + z.dz, omega);
    };
    ob[(mstart + 3) & 3][ty][tx] = old_at(mstart - 1);
    ob[mstart & 3][ty][tx] = old_at(mstart);
    ob[(mstart + 1) & 3][ty][tx] = old_at(mstart + 1);
    // Loads run two planes ahead of their use: entering iteration m, ra and
    // rb hold the old values of planes m+2 and m+3 (plane m+4 is loaded
    // there) and fa holds f of plane m+1 (plane m+2 is loaded there).
    P2 ra = old_at(mstart + 2), rb = old_at(mstart + 3);
    P2 fq = f_at(mstart - 1), f0 = f_at(mstart), fa = f_at(mstart + 1);
    __syncthreads();
    for (int m = mstart; m <= mend; ++m) {
        if (fast && m >= 2 && m + 5 <= g.nz) {
            ob[(m + 2) & 3][ty][tx] = ra;
            ra = rb;
            const int64_t o4 = (int64_t)(m + 4) * g.sz, o2 = (int64_t)(m + 2) * g.sz;
            rb.x = loads[0] ? src[col[0] + o4] : T(0);
            rb.y = loads[1] ? src[col[1] + o4] : T(0);
            const P2 fn = fa;
            fa.x = reds[0] ? f[col[0] + o2] : T(0);
            fa.y = reds[1] ? f[col[1] + o2] : T(0);
            const int s0 = m & 3;
            const bool r0 = reds[0] && ((par0 + m) & 1), r1 = reds[1] && ((par1 + m) & 1);
            const T rv = fast_update(ob, s0, (m + 3) & 3, (m + 1) & 3, r1, r1 ? f0.y : f0.x);
            P2 v = ob[s0][ty][tx];
            if (r0) v.x = rv;
            if (r1) v.y = rv;
            hb[s0][ty][tx] = v;
            __syncthreads();
            const int q = m - 1;
            if (q >= k0 && q < k1) {
                const int hq = (m + 3) & 3;
                const bool b0 = owner[0] && !((par0 + q) & 1), b1 = owner[1] && !((par1 + q) & 1);
                const T bv = fast_update(hb, hq, (m + 2) & 3, s0, b1, b1 ? fq.y : fq.x);
                P2 out = hb[hq][ty][tx];
                if (b0) out.x = bv;
                if (b1) out.y = bv;
                const int64_t oq = (int64_t)q * g.sz;
                if (owner[0]) dst[col[0] + oq] = out.x;
                if (owner[1]) dst[col[1] + oq] = out.y;
            }
            fq = f0;
            f0 = fn;
            continue;
        }
        ob[(m + 2) & 3][ty][tx] = ra;
        ra = rb;
        rb = old_at(m + 4);
        const P2 fn = fa;
        fa = f_at(m + 2);
        int km;
        bool real = true;
        if (m >= 0 && m < g.nz) km = m;
        else if (g.is3d && g.pz) km = m < 0 ? g.nz - 1 : 0;
        else { km = m < 0 ? -1 : g.nz; real = false; }
        const int s0 = m & 3, sm = (m + 3) & 3, sp = (m + 1) & 3;
        const P2 cc = ob[s0][ty][tx];
        P2 v = cc; // second colour: old value; ghost column or z ghost plane: boundary data
        if (real) {
            const ColZ<T> z = col_z(g, km);
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                if (!reds[e] || !((xi[e] + yf + km) & 1)) continue; // first colour only
                const T r = general_update(ob, s0, sm, sp, e, z, get(cc, e), get(f0, e), km);
                if (e) v.y = r; else v.x = r;
            }
        }
        hb[s0][ty][tx] = v;
        __syncthreads();
        const int q = m - 1;
        if (q >= k0 && q < k1) {
            const int hq = (m + 3) & 3, hqm = (m + 2) & 3; // slots of planes q and q-1
            const ColZ<T> z = col_z(g, q);
            const P2 hc = hb[hq][ty][tx];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                if (!owner[e]) continue;
                T out = get(hc, e);
                if (((xi[e] + yf + q) & 1) == 0) out = general_update(hb, hq, hqm, s0, e, z, out, get(fq, e), q);
                dst[col[e] + (int64_t)q * g.sz] = out;
            }
        }
        fq = f0;
        f0 = fn;
    }
}

} // namespace pgpu
