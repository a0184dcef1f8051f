// smooth_tile.h -- red-black Gauss-Seidel tiled in shared memory on uniform 3D levels
#pragma once
#include "operator.h"

namespace pgpu {

// The thread setup of rbgs_tile_kernel: thread (tx, ty) of a tile of TX
// pairs by BY rows holds the points x0, x0 + 1 (x0 even) of row y; the outer
// RING points on each side of the tile are loaded, not owned.  Per element:
// act, an interior point; ld, its u is loaded (interior, or an x or y ghost);
// own, it is stored; fl, its f is needed (the outermost ring computes
// nothing); cc, its x/y couplings.
template <class T, int TX, int BY, int RING>
__device__ __forceinline__ void rb_points(const Grid<T> &g, int x0, int y, int tx, int ty, bool (&act)[2],
                                          bool (&ld)[2], bool (&own)[2], bool (&fl)[2], ColXY<T> (&cc)[2])
{
    const bool yin = y >= 0 && y < g.ny, ygh = y == -1 || y == g.ny;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
        const int x = x0 + e, ex = 2 * tx + e;
        const bool xin = x >= 0 && x < g.nx, xgh = x == -1 || x == g.nx;
        act[e] = xin && yin;
        ld[e] = act[e] || (xgh && yin) || (xin && ygh);
        own[e] = act[e] && ex >= RING && ex <= 2 * TX - 1 - RING && ty >= RING && ty <= BY - 1 - RING;
        fl[e] = act[e] && ex >= 1 && ex <= 2 * TX - 2 && ty >= 1 && ty <= BY - 2;
        if (act[e]) cc[e] = col_xy(g, x, y);
        else cc[e] = ColXY<T>{T(0), T(0), T(0), T(0), T(1), 0, 0, 0, 0};
    }
}

// ... and per plane parity ph, for the element of the first colour on plane
// ph (er0: that element on even planes): whether it is updated (ghosts are
// not), its couplings to the pair's other element (own) and to the side
// neighbour, its x/y diagonal, omega / diag on planes coupled by cz, and the
// side neighbour's thread column in shared memory (one padding column on the
// left).
template <class T>
__device__ __forceinline__ void rb_parity(const bool (&act)[2], const ColXY<T> (&cc)[2], int er0, int tx, T omega,
                                          T cz, bool (&upd)[2], T (&cown)[2], T (&cside)[2], T (&dxyp)[2],
                                          T (&scp)[2], int (&side)[2])
{
#pragma unroll
    for (int ph = 0; ph < 2; ++ph) {
        const int er = er0 ^ ph;
        upd[ph] = er ? act[1] : act[0];
        cown[ph] = er ? cc[1].vxl : cc[0].vxh;
        cside[ph] = er ? cc[1].vxh : cc[0].vxl;
        dxyp[ph] = er ? cc[1].dxy : cc[0].dxy;
        scp[ph] = omega / (dxyp[ph] + (cz + cz));
        side[ph] = tx + 1 + (er ? 1 : -1);
    }
}

// Red-black on a uniform 3D level with no periodic axis (SmoothPlan::tile),
// ITERS (1 or 2) iterations per pass.  Nothing is selected per point at run
// time:
//  - A thread keeps its pair in colour order and its own column in
//    registers: the z neighbours of a point are the other-colour values of
//    the same element in the planes above and below, and the other element of
//    the pair is one of its x neighbours.  Shared memory holds only what the
//    neighbouring threads need, one word per thread, stage and plane parity,
//    read without bank conflicts.
//  - The x side neighbour is thread tx-1 or tx+1, which alternates with the
//    plane's parity; the loop runs in blocks of four planes, so the parity,
//    the buffer slots and omega / diag are compile-time choices.
//  - Step m runs S = 2 ITERS stages on the element A of the first colour at
//    plane m, stage s at plane m - s + 1: first colour of iteration 1 at m
//    (from the old values), second colour of iteration 1 at m - 1, (ITERS 2:)
//    first colour of iteration 2 at m - 2, second at m - 3; the last stage's
//    plane is stored with the other element's value of the stage before.
//    Every stage reads its neighbours' values of the previous step and its
//    own column from registers: one barrier per step.  Each stage loses one
//    point of the tile on every side, so a block of TX pairs by BY rows owns
//    (2 TX - 2 S) x (BY - 2 S) points, and a chunk starts S - 1 planes early.
//  - Planes 1..nz-2 couple with cz (Grid::fast); the first and last steps
//    of a chunk take the table form.
// Two iterations per pass read u and f once and write u once, where two
// passes move each word twice: 1.10 ms per pass at 512^3 in float, 2.08 in
// double, against 2 x 0.77 and 2 x 1.48 ms (ncu), and the same arithmetic
// and results bit for bit.
// MASKED (a uniform level with a mask and no face fractions): the mask
// bytes travel with f; a point with a nonzero byte is left as it is where
// it is no unknown and otherwise drops its closed faces, as drop_closed does.
// FRAC (a level whose table is uniform but whose faces carry fractions --
// beta's, or a coarse level's): every unknown takes the general form's
// couplings (gen_faces, gen_sum), its six fractions those stored at the
// point and its high neighbours (from the ring below in double, through L1
// in float: Tune::frac_ring); with MASKED the level's mask as for MASKED,
// without (a level of beta alone) no mask bytes, no closed face and no
// coupling that is 0, so the neighbour sum takes no selects.
// FRAC's fractions: a ring of FR_RING planes in shared memory (per plane
// the three arrays, per array BY + 1 rows by the two elements' columns,
// TX + 1 each: the high x and y faces of the tile's last column and row
// are read as 0, which reaches only its ring), filled by cp.async
// FR_AHEAD planes ahead of the step that first reads them.
constexpr int FR_AHEAD = 4, FR_RING = FR_AHEAD + 2;
template <class T, int ITERS> struct RbTile {
    static constexpr int S = 2 * ITERS;
    static constexpr int TX = Tune<T>::rbt_tx;
    static constexpr int BY = ITERS == 1 ? Tune<T>::rbt_by : Tune<T>::rbt2_by;
    static constexpr int OX = 2 * TX - 2 * S, OY = BY - 2 * S; // owned points per block
    static constexpr int BLOCKS = ITERS == 1 ? Tune<T>::rbt_blocks : 1;
    static constexpr int PER_SM = ITERS == 1 ? Tune<T>::rbt_per_sm : Tune<T>::rbt2_per_sm;
    static constexpr int FW = TX + 1, FPLANE = 3 * (BY + 1) * 2 * FW; // FRAC's ring: a row's elements, a plane
};
template <class T> constexpr size_t frac_smem_bytes()
{
    return Tune<T>::frac_ring ? (size_t)FR_RING * RbTile<T, 1>::FPLANE * sizeof(T) : 0;
}

// One thread's walk through its column of a tile (the kernel's state, as
// described above): set up once per block (the constructor), the window
// filled for the chunk's first step (start), then one step per plane (run).
template <class T, int ITERS, bool MASKED, bool FRAC> struct RbWalk {
    typedef RbTile<T, ITERS> Tl;
    static constexpr bool RING = FRAC && Tune<T>::frac_ring; // FRAC's fractions from the shared ring, else through L1
    static constexpr int S = Tl::S, TX = Tl::TX, BY = Tl::BY;
    static constexpr int W = TX + 2, H = BY + 2; // one padding word around the thread grid
    static constexpr int FP = Tl::FPLANE, FA = (BY + 1) * 2 * Tl::FW; // FRAC's ring: a plane, an array of it
    static constexpr int PF = 3; // without the ring: planes of fractions prefetched into L1 ahead
    static constexpr int LA = (MASKED || FRAC) ? Tune<T>::rbt_ahead_mk : Tune<T>::rbt_ahead; // planes loaded ahead
    typedef T Buf[S][2][H][W];

    const Grid<T> &g;
    // sb[0]: old values of the second colour (for stage 1); sb[s]: the values
    // of stage s (for stage s + 1 of the next step); per plane parity.
    Buf &sb;
    T *const fs; // FRAC's ring (frac_smem_bytes)
    const int tx, ty, x0, y; // x0 is even
    bool ld[2], act[2], own[2], fl[2];
    ColXY<T> cc[2];
    const int64_t sz, col; // element 0; only dereferenced where ld / fl
    const T *su, *sf;
    T *du;
    // The shift's first part only (Shift), for one subtraction per update
    // less: the box's float cycle took 4.14 against 4.08 ms with both, the
    // masked sphere 77.4 against 76.9 (H200).  The second part is a
    // constant A's range lacks; red-black smoothing of it leaves a residual
    // of about +-lo on the two colours (a checkerboard, not only a mean), so
    // on a singular problem whose mean is large against b the residual of
    // RBGS and of V-cycles stays near |lo| / rms(b) (as with one number
    // everywhere); the residual and the other methods take both parts.
    const T omega;
    T shift;
    const T keep, cz;
    // The element of the first colour on even planes ((x + y + m + flip) odd),
    // its couplings per plane parity.  The y couplings are the same for both
    // elements of an active pair.
    const int er0;
    bool upd[2];
    T cown[2], cside[2], dxyp[2], scp[2];
    int side[2];
    T cyl, cyh;
    bool inner[2]; // FRAC: the first-colour element per plane parity has no box face in x or y
    int k0, k1, mstart;
    // FRAC: plane p's fractions into its ring slot, one copy group per plane
    // (empty outside the planes the chunk's updates read, 0 .. nz for the
    // high z faces).  Per element the faces an interior point reads: fx up
    // to the x ghost, fy up to the y ghost, fz up to the z ghost plane.
    unsigned fin = 0; // bit 3 e + a: element e loads array a
    int fo, fp_lo, fp_hi; // element 0 of this thread in an array's rows; the planes read
    // issue_fr is called for planes mstart - 1, mstart, ... in turn: the
    // plane's offset and slot run along.
    int64_t fq;
    int fsl, fpl;
    // Window at step m (A: the first-colour element at m, B: its partner):
    // ubk = old A at m-1; (rm, bm) old (A, B) at m; (rp, bp) old (B, A) at
    // m+1; raw u of planes m+2 .. in flight (uq).  f less the shift in
    // colour order, fr[d] / fk[d] of the first / second colour at plane
    // m - d; raw f in flight (fw).
    // Stage values: prev[s] of the step before (element B), prev2[s] of two
    // steps before (element A).
    // Mask bytes (MASKED): cr / ck hold those of fr / fk, byte d for plane m - d;
    // cq the raw pairs in flight with fw.
    T ubk, rm, bm, rp, bp, fr[S], fk[S], prev[S], prev2[S];
    T uq[LA][2], fw[LA][2];
    unsigned cr = 0, ck = 0, cq[LA];
    // Running pointers of step m: the u and f planes it loads, the plane it
    // stores (no 64-bit multiplications in the loop).
    const T *pu, *pf;
    T *pd;

    __device__ __forceinline__ RbWalk(const Grid<T> &g_, Buf &sb_, T *fs_, const T *src, T *dst, const T *f,
                                      const T *shiftp, T omega_, int flip, int kchunk, int yb, int zc)
        : g(g_), sb(sb_), fs(fs_), tx(threadIdx.x), ty(threadIdx.y), x0(blockIdx.x * Tl::OX - S + 2 * tx),
          y(yb * Tl::OY - S + ty), sz(g_.sz), col(g_.base + x0 + (int64_t)y * g_.sy), omega(omega_),
          keep(T(1) - omega_), cz(g_.cz), er0(((y & 1) ? 0 : 1) ^ (flip & 1))
    {
        rb_points<T, TX, BY, S>(g, x0, y, tx, ty, act, ld, own, fl, cc);
        su = src + col;
        sf = f + col;
        du = dst + col;
        shift = load_shift(shiftp).hi;
        rb_parity(act, cc, er0, tx, omega, cz, upd, cown, cside, dxyp, scp, side);
        cyl = act[0] ? cc[0].vyl : cc[1].vyl;
        cyh = act[0] ? cc[0].vyh : cc[1].vyh;
#pragma unroll
        for (int ph = 0; ph < 2; ++ph) {
            const int x = x0 + (er0 ^ ph);
            inner[ph] = x >= 1 && x <= g.nx - 2 && y >= 1 && y <= g.ny - 2;
        }
        chunk_planes(zc, kchunk, g.nz, k0, k1);
        mstart = k0 - (S - 1);
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int x = x0 + e;
            const bool xi = x >= 0 && x < g.nx, yi = y >= 0 && y < g.ny;
            fin |= ((x >= 0 && x <= g.nx && yi) | (xi && y >= 0 && y <= g.ny) << 1 | (xi && yi) << 2) << (3 * e);
        }
        fo = ty * 2 * Tl::FW + tx;
        fp_lo = max(0, mstart - 1);
        fp_hi = min(g.nz, k1 + S - 1);
        fq = col + (int64_t)(mstart - 1) * sz;
        fsl = slot(mstart - 1);
        fpl = mstart - 1;
    }

    // Raw pairs (x order) of plane p at s, as loaded; steps at the chunk ends
    // check the plane.
    __device__ __forceinline__ void load_u(const T *s, int p, bool edge, T &v0, T &v1) const
    {
        v0 = v1 = T(0);
        if (edge && (p < -1 || p > g.nz)) return;
        if (ld[0]) v0 = s[0];
        if (ld[1]) v1 = s[1];
    }
    __device__ __forceinline__ void load_f(const T *s, int p, bool edge, T &v0, T &v1) const
    {
        v0 = v1 = T(0);
        if (edge && (p < 0 || p >= g.nz)) return;
        if (fl[0]) v0 = s[0];
        if (fl[1]) v1 = s[1];
    }
    // The pair's mask bytes of plane p (element e in byte e), where f is loaded.
    __device__ __forceinline__ unsigned load_c(int p, bool edge) const
    {
        unsigned c = 0;
        if (!MASKED || (edge && (p < 0 || p >= g.nz))) return c;
        const uint8_t *mp = g.mk + col + (int64_t)p * sz;
        if (fl[0]) c = mp[0];
        if (fl[1]) c |= (unsigned)mp[1] << 8;
        return c;
    }
    static __device__ __forceinline__ int slot(int p) { return (p + 8 * FR_RING) % FR_RING; } // p >= -2
    __device__ __forceinline__ void issue_fr()
    {
        if constexpr (RING) {
            if (fpl >= fp_lo && fpl <= fp_hi && fin) {
                T *d = fs + fsl * FP + fo;
                const T *a3[3] = {g.fx + fq, g.fy + fq, g.fz + fq};
#pragma unroll
                for (int a = 0; a < 3; ++a)
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        if ((fin >> (3 * e + a)) & 1u) __pipeline_memcpy_async(d + a * FA + e * Tl::FW, a3[a] + e, sizeof(T));
            }
            __pipeline_commit();
            fq += sz;
            fsl = fsl == FR_RING - 1 ? 0 : fsl + 1;
            ++fpl;
        }
    }
    // Without the ring: plane p's fractions into L1, PF planes ahead of the
    // update that reads them.
    __device__ __forceinline__ void prefetch_fr(int p, bool edge) const
    {
        if constexpr (FRAC && !RING) {
            if (!(fl[0] || fl[1]) || (edge && (p < 0 || p >= g.nz))) return;
            const int64_t q = col + (int64_t)p * sz;
            asm volatile("prefetch.global.L1 [%0];" ::"l"(g.fx + q));
            asm volatile("prefetch.global.L1 [%0];" ::"l"(g.fy + q));
            asm volatile("prefetch.global.L1 [%0];" ::"l"(g.fz + q));
        }
    }
    // The byte of the first / second colour of a raw pair whose first-colour element is er.
    static __device__ __forceinline__ unsigned first_c(int er, unsigned c) { return (c >> (er ? 8 : 0)) & 0xffu; }
    static __device__ __forceinline__ unsigned second_c(int er, unsigned c) { return (c >> (er ? 0 : 8)) & 0xffu; }
    __device__ __forceinline__ const T *at(const T *base, int p) const { return base + (int64_t)p * sz; }
    // Colour order of a raw pair whose first-colour element is er.
    static __device__ __forceinline__ void colour(int er, T v0, T v1, T &r, T &b)
    {
        r = er ? v1 : v0;
        b = er ? v0 : v1;
    }

    // The window for the chunk's first step; the caller synchronises.
    __device__ __forceinline__ void start()
    {
#pragma unroll
        for (int s = 0; s < S; ++s) fr[s] = fk[s] = prev[s] = prev2[s] = T(0);
        T v0, v1, dummy;
        const int e_m = er0 ^ (mstart & 1);
        load_u(at(su, mstart - 1), mstart - 1, true, v0, v1);
        colour(e_m ^ 1, v0, v1, dummy, ubk);
        load_u(at(su, mstart), mstart, true, v0, v1);
        colour(e_m, v0, v1, rm, bm);
        load_u(at(su, mstart + 1), mstart + 1, true, v0, v1);
        colour(e_m ^ 1, v0, v1, rp, bp);
#pragma unroll
        for (int a = 0; a + 1 < LA; ++a) load_u(at(su, mstart + 2 + a), mstart + 2 + a, true, uq[a][0], uq[a][1]);
        load_f(at(sf, mstart), mstart, true, v0, v1);
        colour(e_m, v0, v1, fr[0], fk[0]);
        fr[0] -= shift; // (f less the shift, once a plane: each value serves S / 2 updates)
        fk[0] -= shift;
        const unsigned c0 = load_c(mstart, true);
        cr = first_c(e_m, c0);
        ck = second_c(e_m, c0);
#pragma unroll
        for (int a = 0; a + 1 < LA; ++a) {
            load_f(at(sf, mstart + 1 + a), mstart + 1 + a, true, fw[a][0], fw[a][1]);
            cq[a] = load_c(mstart + 1 + a, true);
        }
        if constexpr (RING) { // planes mstart - 1 .. mstart + 1 in place for the first step
#pragma unroll
            for (int a = -1; a < FR_AHEAD; ++a) issue_fr(); // planes mstart - 1 .. mstart + FR_AHEAD - 1
            __pipeline_wait_prior(FR_AHEAD - 2);
        }
#pragma unroll
        for (int a = 0; a < PF; ++a) prefetch_fr(mstart + a, true);
        sb[0][mstart & 1][ty + 1][tx + 1] = bm;
        pu = at(su, mstart + 1 + LA);
        pf = at(sf, mstart + LA);
        pd = du + (int64_t)(mstart - (S - 1)) * sz;
    }

    // Element A's update at plane p: x side and y neighbours from buffer b,
    // the partner (element B), the z neighbours zl / zh.  cd: its mask byte
    // (MASKED).
    template <int PH, bool FAST>
    __device__ __forceinline__ T update(T (*b)[W], T centre, T partner, T zl, T zh, T fv, unsigned cd, int p) const
    {
        const int er = er0 ^ PH;
        if (!FAST && (p < 0 || p >= g.nz)) return centre;
        T sd = b[ty + 1][side[PH]], lo = b[ty][tx + 1], hi = b[ty + 2][tx + 1];
        T off, s = scp[PH];
        if constexpr (!MASKED && !FRAC) {
            if (FAST) {
                off = neighbours_cz<T>(cown[PH], partner, cside[PH], sd, cyl, lo, cyh, hi, cz, zl, zh);
            } else {
                const ColZ<T> z = col_z(g, p);
                off = neighbours<T>(cown[PH], partner, cside[PH], sd, cyl, lo, cyh, hi, z.vzl, zl, z.vzh, zh);
                s = omega / (dxyp[PH] + z.dz);
            }
        } else {
            T vzl = cz, vzh = cz, dzl = cz, dzh = cz;
            if (!FAST) {
                const ColZ<T> z = col_z(g, p);
                vzl = z.vzl;
                vzh = z.vzh;
                dzl = g.czl[p];
                dzh = g.czh[p];
                s = omega / (dxyp[PH] + z.dz);
            }
            if constexpr (FRAC) {
                if (!upd[PH] || (MASKED && (cd & CELL_BITS) != PGPU_CELL_FLUID)) return centre;
                // element 0's partner is its x+ neighbour, element 1's its x-
                const int xa = x0 + er;
                GenPoint<T> gp;
                gp.v[0] = er ? cown[PH] : cside[PH];
                gp.v[1] = er ? cside[PH] : cown[PH];
                gp.v[2] = cyl; gp.v[3] = cyh; gp.v[4] = vzl; gp.v[5] = vzh;
                const bool lean = Tune<T>::rbt_frac_lean && FAST && inner[PH];
                T fr6[6];
                if constexpr (!RING) {
                    stored_faces(g, col + er + (int64_t)p * sz, fr6);
                } else { // element er's faces from the ring: the high x face is element 1's, or the next thread's 0
                    const T *r = fs + slot(p) * FP + fo + er * Tl::FW;
                    fr6[0] = r[0];
                    fr6[1] = r[er ? 1 - Tl::FW : Tl::FW];
                    fr6[2] = r[FA];
                    fr6[3] = r[FA + 2 * Tl::FW];
                    fr6[4] = r[2 * FA];
                    fr6[5] = fs[slot(p + 1) * FP + fo + er * Tl::FW + 2 * FA];
                }
                const unsigned closed = MASKED ? cd >> CLOSED_SHIFT : 0u;
                T nb6[6] = {er ? partner : sd, er ? sd : partner, lo, hi, zl, zh};
                T dg;
                if (lean) {
                    // No box face: each face's diagonal part is its
                    // coupling; gen_faces and gen_sum's arithmetic without
                    // the table's diagonal parts, and without selects where
                    // no face is closed.
                    T c[6];
#pragma unroll
                    for (int fc = 0; fc < 6; ++fc) c[fc] = mul_rn(gp.v[fc], fr6[fc]);
                    if (closed) {
#pragma unroll
                        for (int fc = 0; fc < 6; ++fc)
                            if ((closed >> fc) & 1u) c[fc] = nb6[fc] = T(0);
                    }
                    off = plain_sum(c, c, nb6, dg);
                } else {
                    gp.d[0] = g.cxl[xa]; gp.d[1] = g.cxh[xa]; gp.d[2] = g.cyl[y]; gp.d[3] = g.cyh[y];
                    gp.d[4] = dzl; gp.d[5] = dzh;
                    gen_faces(gp, fr6, closed);
                    if constexpr (!MASKED) off = plain_sum(gp.v, gp.d, nb6, dg); // every coupling is nonzero
                    else off = gen_sum<T>(gp, [&](int f) { return nb6[f]; }, dg);
                }
                if (!(dg > T(0))) return centre; // only Neumann faces open: left as it is
                return relax_scaled(centre, fv + off, keep, smooth_scale(omega, dg));
            } else if (cd != 0u) {
                if ((cd & CELL_BITS) != PGPU_CELL_FLUID) return centre;
                // element 0's partner is its x+ neighbour, element 1's its x-
                const int xa = x0 + er;
                const T d6[6] = {g.cxl[xa], g.cxh[xa], g.cyl[y], g.cyh[y], dzl, dzh};
                T nb6[6] = {er ? partner : sd, er ? sd : partner, lo, hi, zl, zh};
                const T dg = drop_closed<T>(cd >> CLOSED_SHIFT, d6, nb6);
                if (!(dg > T(0))) return centre; // only Neumann faces open: left as it is
                s = omega / dg;
                partner = er ? nb6[0] : nb6[1];
                sd = er ? nb6[1] : nb6[0];
                lo = nb6[2];
                hi = nb6[3];
                zl = nb6[4];
                zh = nb6[5];
            }
            off = neighbours<T>(cown[PH], partner, cside[PH], sd, cyl, lo, cyh, hi, vzl, zl, vzh, zh);
        }
        const T v = relax_scaled(centre, fv + off, keep, s);
        return upd[PH] ? v : centre;
    }

    // The step for plane m; PH = m & 1.  Fast steps lie inside the chunk.
    template <int PH, bool FAST> __device__ __forceinline__ void step(int m)
    {
        const bool edge = !FAST;
        const int er = er0 ^ PH;
        load_u(pu, m + 1 + LA, edge, uq[LA - 1][0], uq[LA - 1][1]); // in flight until the end of step m+LA-1
        load_f(pf, m + LA, edge, fw[LA - 1][0], fw[LA - 1][1]);
        cq[LA - 1] = load_c(m + LA, edge);
        issue_fr(); // plane m + FR_AHEAD
        prefetch_fr(m + PF, edge);
        pu += sz;
        pf += sz;
        T v[S + 1]; // v[s]: stage s's value of element A
        v[1] = update<PH, FAST>(sb[0][PH], rm, bm, ubk, bp, fr[0], cr & 0xffu, m);
        v[2] = update<PH, FAST>(sb[1][PH ^ 1], ubk, prev[1], prev2[1], v[1], fk[1], (ck >> 8) & 0xffu, m - 1);
        if constexpr (S == 4) {
            v[3] = update<PH, FAST>(sb[2][PH ^ 1], prev2[1], prev[2], prev2[2], v[2], fr[2], (cr >> 16) & 0xffu, m - 2);
            v[4] = update<PH, FAST>(sb[3][PH ^ 1], prev2[2], prev[3], prev2[3], v[3], fk[3], (ck >> 24) & 0xffu, m - 3);
        }
        const int q = m - (S - 1);
        if (FAST || (q >= k0 && q < k1)) {
            if (own[0]) pd[0] = er ? prev[S - 1] : v[S];
            if (own[1]) pd[1] = er ? v[S] : prev[S - 1];
        }
        pd += sz;
#pragma unroll
        for (int s = 1; s < S; ++s) sb[s][PH][ty + 1][tx + 1] = v[s];
        sb[0][PH ^ 1][ty + 1][tx + 1] = bp;
        if constexpr (RING) __pipeline_wait_prior(FR_AHEAD - 2); // plane m + 2 in place for the next step
        __syncthreads();
        // Advance the window by one plane.
#pragma unroll
        for (int s = 1; s < S; ++s) {
            prev2[s] = prev[s];
            prev[s] = v[s];
        }
        ubk = bm;
        rm = rp;
        bm = bp;
        colour(er, uq[0][0], uq[0][1], rp, bp); // plane m+2 has the parity of m
#pragma unroll
        for (int a = 0; a + 1 < LA; ++a) {
            uq[a][0] = uq[a + 1][0];
            uq[a][1] = uq[a + 1][1];
        }
#pragma unroll
        for (int d = S - 1; d > 0; --d) {
            fr[d] = fr[d - 1];
            fk[d] = fk[d - 1];
        }
        colour(er ^ 1, fw[0][0], fw[0][1], fr[0], fk[0]); // plane m+1
        fr[0] -= shift;
        fk[0] -= shift;
        cr = cr << 8 | first_c(er ^ 1, cq[0]);
        ck = ck << 8 | second_c(er ^ 1, cq[0]);
#pragma unroll
        for (int a = 0; a + 1 < LA; ++a) {
            fw[a][0] = fw[a + 1][0];
            fw[a][1] = fw[a + 1][1];
            cq[a] = cq[a + 1];
        }
    }

    // The chunk's steps: fast blocks of U planes (planes m-S+1 .. m take cz,
    // their loads stay inside, they store), single steps at the ends.
    __device__ __forceinline__ void run()
    {
        constexpr int U = 4; // planes per fast block (even)
        const int fast_lo = max(S, k0 + S - 1), fast_end = min(k1 + S - 2, g.nz - 2 - LA);
        int m = mstart;
        while (m <= k1 + S - 2) {
            if (m >= fast_lo && !(m & 1) && m + U - 1 <= fast_end) {
#pragma unroll
                for (int s = 0; s < U; s += 2) {
                    step<0, true>(m + s);
                    step<1, true>(m + s + 1);
                }
                m += U;
            } else {
                if (m & 1) step<1, false>(m);
                else step<0, false>(m);
                ++m;
            }
        }
    }
};

template <class T, int ITERS, bool MASKED, bool FRAC = false>
__global__ void __launch_bounds__(RbTile<T, ITERS>::TX *RbTile<T, ITERS>::BY, RbTile<T, ITERS>::BLOCKS)
    rbgs_tile_kernel(const Grid<T> g, const T *__restrict__ src, T *__restrict__ dst, const T *__restrict__ f,
                     const T *__restrict__ shiftp, T omega, int flip, int kchunk, int nyb, int nchunks)
{
    static_assert(ITERS == 1 || ITERS == 2, "one or two iterations per pass");
    typedef RbWalk<T, ITERS, MASKED, FRAC> Walk;
    static_assert(!Walk::RING || ITERS == 1, "the ring holds the three planes a one-iteration step reads");
    constexpr int S = Walk::S, TX = Walk::TX, BY = Walk::BY;
    __shared__ typename Walk::Buf sb;
    extern __shared__ __align__(16) unsigned char rb_smem[];
    T *const fs = reinterpret_cast<T *>(rb_smem); // FRAC's ring (frac_smem_bytes)
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return; // uniform per block
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int q = ty * TX + tx; q < S * 2 * Walk::H * Walk::W; q += TX * BY) (&sb[0][0][0][0])[q] = T(0);
    if constexpr (Walk::RING)
        for (int q = ty * TX + tx; q < FR_RING * Walk::FP; q += TX * BY) fs[q] = T(0);
    __syncthreads();
    Walk w(g, sb, fs, src, dst, f, shiftp, omega, flip, kchunk, yb, zc);
    w.start();
    __syncthreads();
    w.run();
    if constexpr (Walk::RING) __pipeline_wait_prior(0); // no copy outlives the block
}

} // namespace pgpu
