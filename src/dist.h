// dist.h -- several GPUs: halo exchange, all-reductions, the band kernels
#pragma once
#include "hierarchy.h"

namespace pgpu {

// Several GPUs: the global grid is split along its slowest axis (z in 3D, y
// in 2D) into slabs of whole planes, one per rank, each starting at an even
// plane so that the red-black colours are the global ones.  Each rank's
// handle is a single-GPU handle of its slab whose faces towards other ranks
// are Dirichlet faces of the interior spacing: the operator reads the
// ghost plane there as the neighbour's value with the interior coupling, so
// after a halo exchange (the neighbours' boundary planes into the ghost
// planes, grouped NCCL send/receive on the handle's stream) every stencil
// kernel computes the global operator unchanged.  Reductions all-reduce
// their totals (one ncclAllReduce per reduction) before the step that uses
// them, so every rank takes the same decisions from bit-identical numbers.
// The right-hand side's scan skips the interface faces (their ghosts hold
// no boundary data).  Multigrid (V-cycles, the Krylov methods' cycle) runs
// the global hierarchy: slabs of its fine levels, its coarse levels on every
// rank (dist_plan, below).  Red-black smoothing takes one exchange per pass
// of two iterations (or of the last single one) and redoes the planes next
// to each face and the ghost planes (dist_band_pass) on the levels where
// the split axis is z and every slab has 7 planes or more
// (dist_band_level): the ghost planes then hold the neighbours' new values
// (Multigrid::fresh).  Another level exchanges before each iteration and
// redoes the second colour at the faces after (dist_rb_interfaces).
// Where that plan does not exist (an odd periodic split axis), a Krylov
// method's cycle is the slab's own with zero values across the interfaces:
// block Jacobi over the ranks, still symmetric.

#ifdef PGPU_WITH_NCCL
// A message of a grouped exchange with the neighbours.
struct DistMsg {
    void *p;
    size_t n;
};

// One grouped exchange with the neighbours on the split axis: k messages
// each way per side (send[0] / recv[0]: the low neighbour, [1]: the high
// one), posted in the one order every rank uses -- to the high neighbour,
// from the low one, to the low one, from the high one -- so that a peer's
// sends match its receives (two ranks on a periodic axis are each other's
// low and high neighbour).  A side without a neighbour is skipped.
static pgpu_status dist_exchange(Env &env, ncclDataType_t ty, int k, const DistMsg *const send[2],
                                 const DistMsg *const recv[2])
{
    const Dist *d = env.dist;
    char *err = env.err;
    const int peer[2] = {d->lo_peer, d->hi_peer};
    const int order[4][2] = {{1, 0}, {0, 1}, {0, 0}, {1, 1}}; // (side, receive)
    ncclResult_t r = ncclGroupStart();
    for (int s = 0; s < 4; ++s) {
        const int side = order[s][0], rx = order[s][1];
        if (peer[side] < 0) continue;
        for (int m = 0; m < k && r == ncclSuccess; ++m) {
            const DistMsg &g = (rx ? recv : send)[side][m];
            r = rx ? ncclRecv(g.p, g.n, ty, peer[side], d->comm, env.st)
                   : ncclSend(g.p, g.n, ty, peer[side], d->comm, env.st);
        }
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    return PGPU_SUCCESS;
}

// Pack (unpack == 0) the first and last planes of the split axis into the
// send buffers, or unpack the receive buffers into the two ghost planes;
// lo / hi: which side has a neighbour; lines: the planes' ghost lines too.
// buf: send lo, send hi, receive lo, receive hi, `plane` values each.
template <class T>
__global__ void halo_kernel(const Grid<T> g, int axis, T *__restrict__ u, T *__restrict__ buf, int64_t plane,
                            int unpack, int lo, int hi, int lines)
{
    PGPU_GRID_STRIDE(e, plane)
    {
        const int64_t rx = g.nx + 2 * lines;
        const int64_t i = e % rx - lines, r = e / rx - (axis == 2 ? lines : 0);
        const int64_t first = axis == 2 ? g.base + i + r * g.sy : g.base + i;
        const int64_t step = axis == 2 ? g.sz : g.sy;
        const int64_t last = axis == 2 ? g.nz - 1 : g.ny - 1;
        if (!unpack) {
            if (lo) buf[e] = u[first];
            if (hi) buf[plane + e] = u[first + last * step];
        } else {
            if (lo) u[first - step] = buf[2 * plane + e];
            if (hi) u[first + (last + 1) * step] = buf[3 * plane + e];
        }
    }
}
#endif

template <class T> static pgpu_status dist_halo(Env &env, const Grid<T> &g, T *u, bool lines)
{
    Dist *d = env.dist;
    if (!d || (d->lo_peer < 0 && d->hi_peer < 0)) return PGPU_SUCCESS;
    char *err = env.err;
#ifdef PGPU_WITH_NCCL
    T *buf = (T *)d->halo;
    const int64_t w = lines ? 2 : 0;
    const int64_t n = d->axis == 2 ? (g.nx + w) * (g.ny + w) : g.nx + w; // (<= d->plane: level 0's)
    const int lo = d->lo_peer >= 0, hi = d->hi_peer >= 0;
    const unsigned blocks = grid_for(n, env.sms);
    halo_kernel<T><<<blocks, 256, 0, env.st>>>(g, d->axis, u, buf, n, 0, lo, hi, (int)lines);
    PGPU_LAUNCHED();
    const DistMsg s0{buf, (size_t)n}, s1{buf + n, (size_t)n}, r0{buf + 2 * n, (size_t)n}, r1{buf + 3 * n, (size_t)n};
    const DistMsg *const send[2] = {&s0, &s1}, *const recv[2] = {&r0, &r1};
    PGPU_FORWARD(dist_exchange(env, sizeof(T) == 8 ? ncclDouble : ncclFloat, 1, send, recv));
    halo_kernel<T><<<blocks, 256, 0, env.st>>>(g, d->axis, u, buf, n, 1, lo, hi, (int)lines);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
#else
    (void)g, (void)u, (void)lines;
    return record(err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
#endif
}

#ifdef PGPU_WITH_NCCL
// NCCL connects peers on their first exchange, which cannot happen inside
// a CUDA graph capture: one exchange of each kind the handle will make (a
// word to each neighbour, a broadcast from every rank, an all-reduction),
// at create time, outside any capture.  Synchronises.
static pgpu_status dist_connect(Env &env)
{
    Dist *d = env.dist;
    char *err = env.err;
    double *b = d->d_red;
    const DistMsg s{b, 1}, r0{b + 1, 1}, r1{b + 2, 1};
    const DistMsg *const send[2] = {&s, &s}, *const recv[2] = {&r0, &r1};
    PGPU_FORWARD(dist_exchange(env, ncclDouble, 1, send, recv));
    ncclResult_t r = ncclGroupStart();
    for (int q = 0; q < d->ranks && r == ncclSuccess; ++q) r = ncclBroadcast(b + 3, b + 3, 1, ncclDouble, q, d->comm, env.st);
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    PGPU_NCCL(ncclAllReduce(b, b, 4, ncclDouble, ncclSum, d->comm, env.st));
    PGPU_CUDA(cudaStreamSynchronize(env.st));
    return PGPU_SUCCESS;
}
#endif

static pgpu_status dist_allreduce(Env &env, double *d, int nsum, int nmax, cudaStream_t st)
{
    Dist *ds = env.dist;
    if (!ds) return PGPU_SUCCESS;
    char *err = env.err;
#ifdef PGPU_WITH_NCCL
    ncclResult_t r = ncclGroupStart();
    if (r == ncclSuccess && nsum) r = ncclAllReduce(d, d, (size_t)nsum, ncclDouble, ncclSum, ds->comm, st);
    if (r == ncclSuccess && nmax) r = ncclAllReduce(d + nsum, d + nsum, (size_t)nmax, ncclDouble, ncclMax, ds->comm, st);
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    return PGPU_SUCCESS;
#else
    (void)d, (void)nsum, (void)nmax, (void)st;
    return record(err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
#endif
}

// Red-black across an interface: the pass updated the second colour of the
// planes next to an interface from the first colour's OLD values across it
// (the ghost plane).  With the new ones exchanged into dst's ghosts, those
// points are updated again from their old values in src.  A neighbour of
// the same colour (across an odd periodic axis' seam: also the split axis'
// seam between the last rank and the first) is read as the pass read it,
// old, from src: no point read here is written.  glo / ghi: the index of
// the ghost planes' points in the box's frame, for their colour (-1 and n,
// or across the split axis' periodic seam N - 1 and -lo).
template <class T>
__global__ void rb_interface_kernel(const Grid<T> g, int axis, const T *__restrict__ src, T *__restrict__ dst,
                                    const T *__restrict__ f, const T *__restrict__ shiftp, T omega, int flip, int lo,
                                    int hi, int glo, int ghi)
{
    const int64_t n = axis == 2 ? (int64_t)g.nx * g.ny : (int64_t)g.nx;
    const int last = axis == 2 ? g.nz - 1 : g.ny - 1;
    const Shift<T> shift = load_shift(shiftp);
    PGPU_GRID_STRIDE(t, 2 * n)
    {
        const int side = t >= n;
        if (side ? !hi : !lo) continue;
        const int64_t e = t - side * n;
        const int i = (int)(e % g.nx);
        const int j = axis == 2 ? (int)(e / g.nx) : (side ? last : 0);
        const int k = axis == 2 ? (side ? last : 0) : 0;
        if ((i + j + k + flip) & 1) continue; // the first colour ((i + j + k + flip) odd, smooth.h): final
        const int64_t p = at_point(g, i, j, k);
        const ColXY<T> c = col_xy(g, i, j);
        const ColZ<T> z = col_z(g, k);
        // a neighbour's index along an axis of n points (periodic: wrapped; else the ghost's -1 or n)
        auto at = [](int m, int n, int per, int gl, int gh) {
            return m < 0 ? (per ? n - 1 : gl) : m >= n ? (per ? 0 : gh) : m;
        };
        auto v = [&](int64_t o, int ni, int nj, int nk) { return ((ni + nj + nk + flip) & 1) ? dst[p + o] : src[p + o]; };
        const int yl = axis == 1 ? glo : -1, yh = axis == 1 ? ghi : g.ny;
        const int kl = g.is3d ? at(k - 1, g.nz, g.pz, glo, ghi) : 1, kh = g.is3d ? at(k + 1, g.nz, g.pz, glo, ghi) : 1;
        const T nb = neighbours<T>(c.vxl, v(c.nxl, at(i - 1, g.nx, g.px, -1, g.nx), j, k), c.vxh,
                                   v(c.nxh, at(i + 1, g.nx, g.px, -1, g.nx), j, k), c.vyl,
                                   v(c.nyl, i, at(j - 1, g.ny, g.py, yl, yh), k), c.vyh,
                                   v(c.nyh, i, at(j + 1, g.ny, g.py, yl, yh), k), z.vzl, v(z.nzl, i, j, kl), z.vzh,
                                   v(z.nzh, i, j, kh));
        dst[p] = relax(src[p], shift.of(f[p]) + nb, c.dxy + z.dz, omega);
    }
}

// After one red-black pass of slab level l (src = L.other(), dst = L.iter()).
template <class T> static pgpu_status dist_rb_interfaces(Env &env, Level<T> &L, int l, T omega, int flip)
{
    Dist *d = env.dist;
    if (!d || (d->lo_peer < 0 && d->hi_peer < 0)) return PGPU_SUCCESS;
    char *err = env.err;
    PGPU_FORWARD(dist_halo(env, L.g, L.iter()));
    const int64_t N = d->lvN[l], lo = d->lva[l], n = d->axis == 2 ? L.g.nz : L.g.ny;
    // the ghost planes' nodes in the slab's frame, for their colours (flip
    // holds the slab's own shift; the periodic seam's is here)
    const int glo = lo == 0 && d->lo_peer >= 0 ? (int)(N - 1 - lo) : -1;
    const int ghi = lo + n == N && d->hi_peer >= 0 ? (int)-lo : (int)n;
    const int64_t plane = d->axis == 2 ? (int64_t)L.g.nx * L.g.ny : (int64_t)L.g.nx;
    rb_interface_kernel<T><<<grid_for(2 * plane, env.sms), 256, 0, env.st>>>(
        L.g, d->axis, (const T *)L.other(), L.iter(), (const T *)L.f, L.shift, omega, flip, d->lo_peer >= 0,
        d->hi_peer >= 0, glo, ghi);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// The bands of a slab's two interfaces (side 0: low, 1: high) for a pass of
// S half-steps, each 3 S planes in the level's storage layout: band plane b
// is the slab's plane k0[side] + b (the low band starts S + 1 planes below
// the slab, the high one ends S + 1 planes above it).  u[side][0]:
// the values before the pass (ghosts included), then the second
// iteration's; u[side][1]: the first iteration's (NULL where the side has
// no neighbour); f: the right-hand side; cl / ch: the couplings of the
// band's nodes along the split axis (the global axis' values: the
// neighbour's planes are not the slab's).
template <class T> struct BandArgs {
    T *u[2][2];
    const T *f[2];
    int k0[2];
    int S;
    T cl[2][DIST_BAND_L], ch[2][DIST_BAND_L];
};

// Half-step h (0 .. S - 1) of the band fix-up: the colour of half-step h
// (the first colour of an iteration at even h) on the band planes
// h + 1 .. 3 S - 2 - h (the planes it can get right shrink
// by one on each side per half-step), from iteration h / 2's old values
// into its new ones, read as the pass reads them (rbgs_kernel): the first
// colour's neighbours old, the second colour's first-colour neighbours new
// and same-colour ones (across an odd periodic seam) old; x / y ghosts from
// u[side][0].  out (the last half-step): both colours of the planes
// S .. 2 S - 1, the ones the pass got wrong and the ghost plane, written to
// the level's iterate.
template <class T>
__global__ void rb_band_kernel(const Grid<T> g, const BandArgs<T> a, const T *__restrict__ shiftp, T omega, int flip,
                               int h, T *__restrict__ out)
{
    const int S = a.S;
    const int b0 = h + 1, nb = 3 * S - 2 - 2 * h, it = h >> 1, second = h & 1;
    const int64_t plane = (int64_t)g.nx * g.ny, per_side = nb * plane;
    const int64_t org = ghost_origin(g), in0 = g.base - org - g.sz; // (0, 0) within a storage plane
    const Shift<T> shift = load_shift(shiftp);
    PGPU_GRID_STRIDE(t, 2 * per_side)
    {
        const int side = t >= per_side;
        const T *ghosts = a.u[side][0], *src = a.u[side][it];
        T *dst = a.u[side][it ^ 1];
        if (!dst) continue;
        const int64_t r = t - side * per_side, e = r % plane;
        const int b = b0 + (int)(r / plane), i = (int)(e % g.nx), j = (int)(e / g.nx);
        const int k = a.k0[side] + b, mine = (i + j + k + flip) & 1;
        const int64_t q = (int64_t)b * g.sz + in0 + i + (int64_t)j * g.sy;
        T v;
        if (mine == second) { // not this half-step's colour (the first colour: odd)
            if (!out) continue;
            v = dst[q];
        } else {
            const ColXY<T> c = col_xy(g, i, j);
            // a neighbour at offset o, index m on an axis of n points
            auto nb_at = [&](int64_t o, int m, int n, int per, int ni, int nj) -> T {
                if ((m < 0 || m >= n) && !per) return ghosts[q + o];
                const int other = ((ni + nj + k + flip) & 1) != mine;
                return other && second ? dst[q + o] : src[q + o];
            };
            const int xl = i > 0 ? i - 1 : g.nx - 1, xh = i < g.nx - 1 ? i + 1 : 0;
            const int yl = j > 0 ? j - 1 : g.ny - 1, yh = j < g.ny - 1 ? j + 1 : 0;
            const T cl = a.cl[side][b], ch = a.ch[side][b];
            const T nbs = neighbours<T>(c.vxl, nb_at(c.nxl, i - 1, g.nx, g.px, xl, j), c.vxh,
                                        nb_at(c.nxh, i + 1, g.nx, g.px, xh, j), c.vyl,
                                        nb_at(c.nyl, j - 1, g.ny, g.py, i, yl), c.vyh,
                                        nb_at(c.nyh, j + 1, g.ny, g.py, i, yh), cl,
                                        second ? dst[q - g.sz] : src[q - g.sz], ch,
                                        second ? dst[q + g.sz] : src[q + g.sz]);
            v = relax(src[q], shift.of(a.f[side][q]) + nbs, c.dxy + (cl + ch), omega);
            dst[q] = v;
        }
        if (out && b >= S && b <= 2 * S - 1) out[org + (int64_t)(k + 1) * g.sz + in0 + i + (int64_t)j * g.sy] = v;
    }
}

// S / 2 red-black iterations (S: DIST_BAND_S or half of it) on slab level
// l (d->band[l]) with one exchange: each neighbour's S + 1 planes of u and
// S of f next to the interface (grouped NCCL send/receive, straight from
// and into storage planes) into the band, the nearest into the ghost
// plane; the pass (two iterations: one paired pass where the level pairs,
// else two) with the ghosts held; then the band's half-steps redo the
// planes next to each interface and the ghost planes.
template <class T> static pgpu_status dist_band_pass(Env &env, Level<T> &L, int l, T omega, int flip, int S)
{
    Dist *d = env.dist;
    char *err = env.err;
#ifdef PGPU_WITH_NCCL
    constexpr int LB = DIST_BAND_L, SM = DIST_BAND_S;
    const Grid<T> &g = L.g;
    const int n = g.nz;
    const int64_t sz = g.sz, org = ghost_origin(g);
    const bool lo = d->lo_peer >= 0, hi = d->hi_peer >= 0;
    T *src = L.iter();
    const T *f = L.f;
    auto plane = [&](const T *a, int k) { return const_cast<T *>(a) + org + (int64_t)(k + 1) * sz; };
    T *bb = (T *)d->bandbuf;
    const int64_t bl = (int64_t)LB * d->band_sz; // one band (the largest level's planes)
    T *ub[2] = {bb, bb + bl}, *fb[2] = {bb + 2 * bl, bb + 3 * bl}, *ub1[2] = {bb + 4 * bl, bb + 5 * bl};
    const size_t nu = (size_t)((S + 1) * sz), nf = (size_t)(S * sz);
    const DistMsg s0[2] = {{plane(src, 0), nu}, {plane(f, 0), nf}},
                  s1[2] = {{plane(src, n - S - 1), nu}, {plane(f, n - S), nf}},
                  r0[2] = {{ub[0], nu}, {fb[0] + sz, nf}},
                  r1[2] = {{ub[1] + (2 * S - 1) * sz, nu}, {fb[1] + (2 * S - 1) * sz, nf}};
    const DistMsg *const send[2] = {s0, s1}, *const recv[2] = {r0, r1};
    PGPU_FORWARD(dist_exchange(env, sizeof(T) == 8 ? ncclDouble : ncclFloat, 2, send, recv));
    // The slab's own band planes (old values); the ghost planes' interior
    // points for the pass (their edges are the caller's).
    const size_t own = (size_t)((2 * S - 1) * sz) * sizeof(T), row = (size_t)g.sy * sizeof(T);
    const int64_t in0 = g.base - org - sz; // (0, 0) within a storage plane
    const cudaMemcpyKind dd = cudaMemcpyDeviceToDevice;
    auto ghost = [&](int k, const T *from) {
        return cudaMemcpy2DAsync(plane(src, k) + in0, row, from + in0, row, (size_t)g.nx * sizeof(T), (size_t)g.ny,
                                 dd, env.st);
    };
    if (lo) {
        PGPU_CUDA(cudaMemcpyAsync(ub[0] + (S + 1) * sz, plane(src, 0), own, dd, env.st));
        PGPU_CUDA(cudaMemcpyAsync(fb[0] + (S + 1) * sz, plane(f, 0), own, dd, env.st));
        PGPU_CUDA(ghost(-1, ub[0] + S * sz));
    }
    if (hi) {
        PGPU_CUDA(cudaMemcpyAsync(ub[1], plane(src, n - 2 * S + 1), own, dd, env.st));
        PGPU_CUDA(cudaMemcpyAsync(fb[1], plane(f, n - 2 * S + 1), own, dd, env.st));
        PGPU_CUDA(ghost(n, ub[1] + (2 * S - 1) * sz));
    }
    PGPU_FORWARD(smooth(env, L, false, S / 2, omega, flip)); // two iterations: paired where L.route.paired
    BandArgs<T> a;
    for (int side = 0; side < 2; ++side) {
        const bool has = side ? hi : lo;
        a.u[side][0] = has ? ub[side] : nullptr;
        a.u[side][1] = has ? ub1[side] : nullptr;
    }
    a.f[0] = fb[0];
    a.f[1] = fb[1];
    a.k0[0] = -(S + 1);
    a.k0[1] = n - 2 * S + 1;
    a.S = S;
    // The couplings are kept for the longest band: a shorter one is its
    // middle (SM - S planes in from the low band's start, 2 (SM - S) from
    // the high one's).
    const double *c = &d->bandc[(size_t)l * 4 * LB];
    const int off[2] = {SM - S, 2 * (SM - S)};
    for (int side = 0; side < 2; ++side)
        for (int b = 0; b < 3 * S; ++b) {
            a.cl[side][b] = (T)c[side * LB + off[side] + b];
            a.ch[side][b] = (T)c[(2 + side) * LB + off[side] + b];
        }
    const int64_t most = 2 * (int64_t)(3 * S - 2) * g.nx * g.ny;
    for (int h = 0; h < S; ++h) {
        rb_band_kernel<T><<<grid_for(most, env.sms), 256, 0, env.st>>>(g, a, L.shift, omega, flip, h,
                                                                       h == S - 1 ? L.iter() : nullptr);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
#else
    (void)d, (void)L, (void)l, (void)omega, (void)flip, (void)S;
    return record(err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
#endif
}

template <class T>
static pgpu_status dist_smooth(Env &env, Level<T> &L, int l, bool jacobi, int iters, T omega, int flip, bool *fresh)
{
    Dist *d = env.dist;
    if (fresh) *fresh = false;
    // The global colours: a slab starting at an odd node swaps the local ones.
    const int f = flip ^ (d ? (int)(d->lva[l] & 1) : 0);
    if (!d || (d->lo_peer < 0 && d->hi_peer < 0)) return smooth(env, L, jacobi, iters, omega, f); // one rank
    const bool band = !jacobi && d->bandbuf && l < (int)d->band.size() && d->band[l] && L.g.sz <= d->band_sz;
    for (int s = 0; s < iters;) {
        if (band) { // two iterations per pass, the last one alone
            const int two = iters - s >= 2;
            PGPU_FORWARD(dist_band_pass(env, L, l, omega, f, two ? DIST_BAND_S : DIST_BAND_S / 2));
            s += two ? 2 : 1;
            continue;
        }
        PGPU_FORWARD(dist_halo(env, L.g, L.iter()));
        PGPU_FORWARD(smooth(env, L, jacobi, 1, omega, f));
        if (!jacobi) PGPU_FORWARD(dist_rb_interfaces(env, L, l, omega, f));
        ++s;
    }
    if (fresh) *fresh = band && iters > 0; // the bands leave the neighbours' new values in the ghost planes
    return PGPU_SUCCESS;
}

// Each rank's own planes of a replicated level's f, broadcast to all;
// frame: the ghost planes too (from the owners of the first and last node).
template <class T> static pgpu_status dist_gather(Env &env, const Grid<T> &g, T *f, bool frame)
{
    Dist *d = env.dist;
    char *err = env.err;
#ifdef PGPU_WITH_NCCL
    const int64_t stride = d->axis == 2 ? g.sz : g.sy;
    const ncclDataType_t ty = sizeof(T) == 8 ? ncclDouble : ncclFloat;
    ncclResult_t r = ncclGroupStart();
    const int64_t N = d->axis == 2 ? g.nz : g.ny;
    for (int q = 0; q < d->ranks && r == ncclSuccess; ++q) {
        if (d->own_b[q] <= d->own_a[q]) continue; // (a rank may own no node of the level)
        const int64_t a = d->own_a[q] + 1 - (frame && d->own_a[q] == 0);
        const int64_t b = d->own_b[q] + 1 + (frame && d->own_b[q] == N);
        T *at = f + a * stride; // storage planes a .. b - 1
        const size_t count = (size_t)((b - a) * stride);
        if (count) r = ncclBroadcast(at, at, count, ty, q, d->comm, env.st);
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    return PGPU_SUCCESS;
#else
    (void)d, (void)g, (void)f, (void)frame;
    return record(err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
#endif
}

} // namespace pgpu
