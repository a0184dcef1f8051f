// smooth_beta.h -- red-black Gauss-Seidel of beta alone, faces formed from 1 / beta
#pragma once
#include "operator.h"

namespace pgpu {

// Red-black, one iteration per pass, on uniform levels of coefficients alone
// (no mask; SmoothPlan::tile, beta_tiled).  On level 0 with beta in
// beta_face's range (Grid::bw) the faces are formed once a plane from
// 1 / beta (one array read instead of rbgs_tile_kernel's three fractions)
// and everything a block reads is staged by cp.async into rings in shared
// memory one plane ahead, so that no update waits for global memory:
//  - A block of BT_TX pairs by BY rows (one warp a row) walks its chunk's
//    planes; step m updates the first colour at plane m (from the old
//    values) and the second at m - 1 (from the first colour's new values),
//    and stores plane m - 1.  Each colour loses a point of the tile on
//    every side: a block owns (2 BT_TX - 4) x (BY - 4) points.
//  - Thread (tx, ty) holds the points x0, x0 + 1 of its row; in shared
//    memory an array's plane keeps the two elements' columns apart (BT_RW
//    words each, one padding word each side), so a warp reads one bank row.
//  - The element A updated at step m is the same for both colours (the
//    first at m, the second at m - 1); its own column (old u, the first
//    colour's new values, its z faces, 1 / beta) stays in registers, and
//    the shared rings hold what the neighbours read: u (6 planes, the new
//    first colour written in place), f and 1 / beta (3), the x / y faces (3).
//  - The loop runs in blocks of 6 steps, so every ring slot is a constant.
// Rows whose x or y neighbours at a box face couple as inside (Dirichlet
// faces of a uniform axis), and the points of every row away from the
// faces, take the uniform couplings times the fractions (each face's
// coupling its diagonal part); the rest, and the planes next to a z face,
// the table form's (gen_faces, plain_sum: every coupling of beta alone is
// nonzero).
constexpr int BT_TX = 32, BT_RW = BT_TX + 2;
template <int N> using IntC = std::integral_constant<int, N>;
// fn(IntC<0>{}) .. fn(IntC<N - 1>{}), in order.
template <class F, int... J> __device__ __forceinline__ void each_const(F &&fn, std::integer_sequence<int, J...>)
{
    (fn(IntC<J>{}), ...);
}
template <class T> struct BetaTile {
    static constexpr int BY = Tune<T>::bt_by;
    static constexpr int PL = (BY + 2) * 2 * BT_RW; // a plane of one array
    static constexpr int RU = 6, RF = 3, RB = 3, RC = 3;
    static constexpr size_t SMEM = (size_t)(RU + RF + RB + 2 * RC) * PL * sizeof(T);
    static constexpr int OX = 2 * BT_TX - 4, OY = BY - 4;
    // RR: a block's coarse nodes (RX x RY), and its dynamic shared memory:
    // two residual planes and the restriction's tables after SMEM.
    static constexpr int RX = OX / 2, RY = OY / 2;
    static constexpr size_t SMEM_RR = SMEM + 2 * PL * sizeof(T) + 4 * (RX + RY) * sizeof(T) +
                                      (4 * RX + RY) * sizeof(int) + RX * RY * sizeof(int64_t);
    // The kernel's static tables (cxs, cys) count against a block's opt-in
    // limit too: a block's whole shared memory without and with RR (float
    // RR's 99.3 KB do not fit sm_86 / sm_89 / sm_120's 99 KB).
    static constexpr size_t TABLES = (size_t)4 * (2 * BT_TX + BY) * sizeof(T);
    // PRO: the coarse correction's tiles (PCX x PCY coarse storage points,
    // four planes) after SMEM.
    static constexpr int PCX = 36, PCY = 12, PCPL = PCX * PCY, PRING = 4;
    static constexpr size_t SMEM_PRO = SMEM + (size_t)PRING * PCPL * sizeof(T);
    // RS: a smoothing pass that also forms the residual, the first colour's
    // two planes behind: f and the faces one plane longer in their rings, and
    // a block owns the points three in from the tile's edges.
    static constexpr int RF_RS = 4, RC_RS = 4, OX_RS = 2 * BT_TX - 6, OY_RS = BY - 6;
    static constexpr size_t SMEM_RS = (size_t)(RU + RF_RS + RB + 2 * RC_RS) * PL * sizeof(T);
    static constexpr size_t FIT = SMEM + TABLES, FIT_RR = SMEM_RR + TABLES, FIT_PRO = SMEM_PRO + TABLES,
                            FIT_RS = SMEM_RS + TABLES;
};
template <class T> struct alignas(16) Vec4 { T v[4]; }; // (16: the shared memory's alignment)
template <class T> struct Xfer;     // (transfer.h) the restriction's tables
template <class T> struct RsPlanes; // ... and its sums over z
template <class T> struct Windows;  // ... the prolongation's taps

// FR: the faces are the level's stored fractions (Grid::fx, fy, fz: any
// level of beta alone, 1 / beta or not), staged as they are: x / y one
// plane ahead into their rings, z two planes ahead into 1 / beta's.
// RES: the same walk forms the residual instead (dst = f - shift - A src at
// the interior points, in double as the column walk forms it; omega and flip
// unused): step m's two updates become the residual at the same two points,
// from the old values.
// RR (with RES; 3 or 4: the children per coarse node and axis, at most): the
// residual restricted instead, dst = R (f - shift - A src) on the coarse
// level cg (restriction xr, restrict_tile_kernel's sums in its order), with
// no fine residual in memory.  The launch covers cg: a block owns RX x RY
// coarse columns and a chunk of coarse planes, and walks the fine planes of
// their children, its tile placed so that the children lie in the points
// whose residual it forms (one point in from the tile's edges; the host
// checked the x / y runs, bt_rr).  Step m puts plane m - 1's residual into
// a plane of shared memory (zero outside those points and the interior), and
// step m + 1, past its barrier, sums it over each coarse column's children.
// PRO (a smoothing pass): src is first corrected by the coarse level cg's
// correction ce, src + P ce (interp_tile_kernel's taps tw and order of the
// sums), as its planes arrive: a block stages the PCX x PCY coarse tile of
// each coarse plane its fine planes need (tiles of at most that span, and z
// windows that move by at most one plane a fine plane: the host checked
// them, bt_pro), and step m corrects this thread's elements of plane m + 1
// (read by the others only past step m + 1's barrier) with the planes' x-y
// interpolants held in registers.
// RS (a smoothing pass): the residual of its result, f - shift - A dst, is
// stored into rout as well, at the same points.  A second-colour point's
// neighbours are final when it is updated, so its update forms it (from its
// sums; step m, plane m - 1); a first-colour point's neighbours are final two
// planes later, so step m forms it at plane m - 2 (as RES does; the second
// colour's values go back into the ring), from the faces and f one plane
// longer in their rings (BetaTile::RF_RS, RC_RS).  A block owns the points
// three in from its tile's edges, and its walk takes a plane more below its
// chunk and two steps more above it.
enum { U_RELAX, U_RESID, U_BOTH }; // BetaWalk::update: what it forms
// The walk of one block, its state in members and each of its steps a
// function (every one inlined: the kernel is this object's walk).
template <class T, bool RES, bool FR, int RR, bool PRO, bool RS> struct BetaWalk {
    static_assert(RR == 0 || (RES && (RR == 3 || RR == 4)), "the restricted residual: a residual, 3 or 4 children");
    static_assert(!PRO || !RES, "the correction folds into a smoothing pass");
    static_assert(!RS || (!RES && !PRO && !FR), "RS: a smoothing pass from 1 / beta");
    typedef BetaTile<T> B;
    static_assert(!PRO || B::PCPL <= BT_TX * B::BY, "a thread stages each coarse tile point");
    static constexpr int PL = B::PL, RW = BT_RW, RU = B::RU, RB = B::RB, BY = B::BY;
    static constexpr int RF = RS ? B::RF_RS : B::RF, RC = RS ? B::RC_RS : B::RC;
    static constexpr int S = RS ? 12 : 6; // steps a block of them (each ring slot a constant)
    static_assert(S % RU == 0 && S % RF == 0 && S % RB == 0 && S % RC == 0, "a block of steps turns every ring");
    static constexpr int H = RS ? 3 : 2; // the points a tile's edge lends to its neighbours
    typedef Vec4<T> T4;
    struct ZTap {
        int s;
        T w0, w1;
    };

    // The launch's arguments.
    const Grid<T> &g, &cg;
    const T *__restrict__ src;
    T *__restrict__ dst;
    const T *__restrict__ f;
    const T omega;
    const Xfer<T> &xr;
    const T *__restrict__ ce;
    const Windows<T> &tw;
    T *__restrict__ rout;
    // The static tables (x / y couplings and diagonal parts of the tile's
    // columns and rows) and the rings in shared memory.
    T (*const cxs)[2 * BT_TX];
    T (*const cys)[BY];
    T *su, *sf, *sr, *sx, *sy;
    // The chunk's fine planes [k0, k1) and the tile's first column xb and row
    // yb0 (RR: the chunk's coarse planes [K0, K1) and their children).  RS:
    // [o0, o1) the chunk, k0 a plane below it.  mend: the last step.
    int yb = 0, k0 = 0, k1 = 0, K0 = 0, K1 = 0, xb = 0, yb0 = 0, o0 = 0, o1 = 0, mend = 0;
    int tx = 0, ty = 0, x0 = 0, y = 0, me = 0;
    int64_t col = 0;
    // Per element: ld, its u and 1 / beta are loaded (ghosts too); act, an
    // interior point; own, stored; rv (RR), its residual goes to the
    // residual plane (else zero).
    bool ld[2], act[2], own[2], rv[2];
    // RR: thread t < RX RY sums coarse column (I0 + t % RX, J0 + t / RX)
    // (rown: one of cg's).  Tables, read four at a time: per tile column of
    // coarse nodes the children's x weights rwx and places in a residual
    // plane's row rox (4 from the first child; unused slots weigh 0), per row
    // of them the y weights rwy and the first child row's offset roy; per
    // thread its column's offset in cg, rfb.
    T *sres = nullptr;
    T4 *rwx = nullptr, *rwy = nullptr;
    int4 *rox = nullptr;
    int *roy = nullptr;
    int64_t *rfb = nullptr;
    int rt = 0, ci = 0, cj = 0;
    bool rown = false;
    Shift<T> sh;
    T shift, keep;
    // PRO: the coarse tile's first storage column cx0 and row cy0; thread
    // rt < PCPL stages its point (cstage: inside the storage) from cgo in each
    // plane; cnext: the next coarse plane to stage.  Per element its taps'
    // place in the tile and weights (clamped to the grid: used where act).
    T *cring = nullptr;
    int cnext = 0, pxo[2] = {0, 0}, pyo = 0;
    int64_t cgo = 0;
    bool cstage = false;
    T wxa[2][2], wya[2];
    // issue(): the next plane ip and its offset po.
    int ip = 0;
    int64_t po = 0;
    // The pair's low faces (fractions) per plane slot, and its 1 / beta at
    // the plane formed last.
    T wz[RC][2], wo[2] = {T(0), T(0)};
    // PRO: the x-y interpolants P0 / P1 of coarse planes cs and cs + 1; the
    // z taps za of the plane the next correct() takes, zb of the one after.
    T P0[2] = {T(0), T(0)}, P1[2] = {T(0), T(0)};
    int cs = -4;
    ZTap za{0, T(0), T(0)}, zb{0, T(0), T(0)};
    bool warp_in = false;
    // RR: this thread's coarse column's sums over the z children.
    RsPlanes<T> acc{0};
    // run(): element A's old u one plane above, by step parity (its z low
    // two steps later); the first colour's new values of the last two steps
    // (RES: old); RES: the first update's residual of the last step; RS: the
    // second colour's values of the last two steps; plane m - 1 of step m
    // (RS: rpd, plane m - 2).
    T zo[2], vp = T(0), vp2 = T(0), rp = T(0), w1 = T(0), w2 = T(0);
    T *pd = nullptr, *rpd = nullptr;

    __device__ __forceinline__ BetaWalk(const Grid<T> &g_, const T *src_, T *dst_, const T *f_, T omega_,
                                        const Grid<T> &cg_, const Xfer<T> &xr_, const T *ce_, const Windows<T> &tw_,
                                        T *rout_, T (*cxs_)[2 * BT_TX], T (*cys_)[BY], unsigned char *smem)
        : g(g_), cg(cg_), src(src_), dst(dst_), f(f_), omega(omega_), xr(xr_), ce(ce_), tw(tw_), rout(rout_),
          cxs(cxs_), cys(cys_)
    {
        su = reinterpret_cast<T *>(smem);
        sf = su + RU * PL;
        sr = sf + RF * PL;
        sx = sr + RB * PL; // the low x faces
        sy = sx + RC * PL; // the low y faces
        sres = sy + RC * PL; // RR: the residual planes of odd and even planes
        cring = sy + RC * PL; // PRO: the coarse tiles
    }

    // The block's chunk and tile and this thread's elements; false: no block there.
    __device__ __forceinline__ bool place(int kchunk, int nyb, int nchunks)
    {
        int zc;
        if (!block_yz(nyb, nchunks, yb, zc)) return false; // uniform per block
        if constexpr (RR != 0) {
            chunk_planes(zc, kchunk, cg.nz, K0, K1);
            k0 = __ldg(xr.idxz + K0 * MAX_CHILDREN);
            k1 = __ldg(xr.idxz + (K1 - 1) * MAX_CHILDREN + __ldg(xr.cntz + K1 - 1) - 1) + 1;
            xb = __ldg(xr.idxx + blockIdx.x * B::RX * MAX_CHILDREN) - 1;
            yb0 = __ldg(xr.idxy + yb * B::RY * MAX_CHILDREN) - 1;
        } else {
            chunk_planes(zc, kchunk, g.nz, k0, k1);
            xb = blockIdx.x * (RS ? B::OX_RS : B::OX) - H;
            yb0 = yb * (RS ? B::OY_RS : B::OY) - H;
            if constexpr (RS) {
                o0 = k0;
                o1 = k1;
                k0 = max(k0 - 1, 0);
            }
        }
        mend = RS ? o1 + 1 : k1;
        tx = threadIdx.x;
        ty = threadIdx.y;
        x0 = xb + 2 * tx; // even but for RR and RS
        y = yb0 + ty;
        col = g.base + x0 + (int64_t)y * g.sy; // only dereferenced where loaded
        me = (ty + 1) * 2 * RW + tx + 1;       // element 0 in a plane, element 1 at + RW
        const bool yl = y >= -1 && y <= g.ny, yi = y >= 0 && y < g.ny;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int x = x0 + e;
            const bool xi = x >= 0 && x < g.nx;
            ld[e] = x >= -1 && x <= g.nx && yl;
            act[e] = xi && yi;
            own[e] = act[e] && 2 * tx + e >= H && 2 * tx + e < 2 * BT_TX - H && ty >= H && ty < BY - H;
        }
#pragma unroll
        for (int e = 0; e < 2; ++e)
            rv[e] = act[e] && 2 * tx + e >= 1 && 2 * tx + e < 2 * BT_TX - 1 && ty >= 1 && ty < BY - 1;
        rt = ty * BT_TX + tx;
        ci = rt % B::RX;
        cj = rt / B::RX;
        return true;
    }

    // The table form's couplings of the tile's columns and rows (clamped to
    // the grid), for the points at box faces; RR: the restriction's tables.
    __device__ __forceinline__ void tables()
    {
        const int t = ty * BT_TX + tx;
        if (t < 2 * BT_TX) {
            const int x = min(max(xb + t, 0), g.nx - 1);
            const ColXY<T> c = col_xy(g, x, 0);
            cxs[0][t] = c.vxl;
            cxs[1][t] = c.vxh;
            cxs[2][t] = g.cxl[x];
            cxs[3][t] = g.cxh[x];
        } else if (t < 2 * BT_TX + BY) {
            const int r = t - 2 * BT_TX, yc = min(max(yb0 + r, 0), g.ny - 1);
            const ColXY<T> c = col_xy(g, 0, yc);
            cys[0][r] = c.vyl;
            cys[1][r] = c.vyh;
            cys[2][r] = g.cyl[yc];
            cys[3][r] = g.cyh[yc];
        }
        if constexpr (RR != 0) {
            rwx = reinterpret_cast<T4 *>(sres + 2 * PL);
            rwy = rwx + B::RX;
            rox = reinterpret_cast<int4 *>(rwy + B::RY);
            roy = reinterpret_cast<int *>(rox + B::RX);
            rfb = reinterpret_cast<int64_t *>(roy + B::RY);
            const int u = rt - 2 * BT_TX - BY; // threads past those filling cxs, cys
            if (u >= 0 && u < B::RX) {
                const int I = min(blockIdx.x * B::RX + u, cg.nx - 1), n = __ldg(xr.cntx + I);
                const int p = __ldg(xr.idxx + I * MAX_CHILDREN) - xb; // the first child's place in the tile
                T4 w;
                int o[4];
#pragma unroll
                for (int a = 0; a < 4; ++a) {
                    w.v[a] = a < n ? __ldg(xr.rwx + I * MAX_CHILDREN + a) : T(0);
                    o[a] = ((p + a) >> 1) + 1 + ((p + a) & 1) * RW;
                }
                rwx[u] = w;
                rox[u] = make_int4(o[0], o[1], o[2], o[3]);
            } else if (u >= B::RX && u < B::RX + B::RY) {
                const int r = u - B::RX, J = min(yb * B::RY + r, cg.ny - 1), n = __ldg(xr.cnty + J);
                T4 w;
#pragma unroll
                for (int a = 0; a < 4; ++a) w.v[a] = a < n ? __ldg(xr.rwy + J * MAX_CHILDREN + a) : T(0);
                rwy[r] = w;
                roy[r] = (__ldg(xr.idxy + J * MAX_CHILDREN) - yb0 + 1) * 2 * RW;
            }
            const int I = blockIdx.x * B::RX + ci, J = yb * B::RY + cj;
            rown = rt < B::RX * B::RY && I < cg.nx && J < cg.ny;
            if (rown) rfb[rt] = cg.base + I + (int64_t)J * cg.sy;
        }
    }

    // PRO: the coarse tile's place and this thread's taps.
    __device__ __forceinline__ void pro_taps()
    {
        const int cx0 = __ldg(tw.sx + min(max(xb, 0), g.nx - 1)), cy0 = __ldg(tw.sy + min(max(yb0, 0), g.ny - 1));
        const int r = rt / B::PCX, c = rt - r * B::PCX;
        cstage = rt < B::PCPL && cx0 + c <= cg.nx + 1 && cy0 + r <= cg.ny + 1;
        cgo = ghost_origin(cg) + cx0 + c + (int64_t)(cy0 + r) * cg.sy;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int x = min(max(x0 + e, 0), g.nx - 1);
            pxo[e] = __ldg(tw.sx + x) - cx0;
            wxa[e][0] = __ldg(tw.wx + 2 * x);
            wxa[e][1] = __ldg(tw.wx + 2 * x + 1);
        }
        const int yc = min(max(y, 0), g.ny - 1);
        pyo = (__ldg(tw.sy + yc) - cy0) * B::PCX;
        wya[0] = __ldg(tw.wy + 2 * yc);
        wya[1] = __ldg(tw.wy + 2 * yc + 1);
        cnext = __ldg(tw.sz + max(k0 - 2, 0));
    }

    // Issue: plane ip of u and 1 / beta (FR: the z faces), ip - 1 of f (FR:
    // and the x / y faces, into slot sc_), one commit group; slots counted
    // from plane k0 - 2.  INNER: planes ip - 1, ip inside (no range check).
    // PRO: the coarse planes up to need; one: at most one of them (a step's:
    // the windows move by at most one plane a plane).
    template <bool INNER>
    __device__ __forceinline__ void issue(int su_, int sr_, int sf_, int sc_, int need, bool one = false)
    {
        if (INNER || (ip >= -1 && ip <= g.nz)) {
#pragma unroll
            for (int e = 0; e < 2; ++e)
                if (ld[e]) {
                    __pipeline_memcpy_async(su + su_ * PL + me + e * RW, src + po + e, sizeof(T));
                    __pipeline_memcpy_async(sr + sr_ * PL + me + e * RW, (FR ? g.fz : g.bw) + po + e, sizeof(T));
                }
        }
        if (INNER || (ip - 1 >= 0 && ip - 1 < g.nz)) {
            const int64_t pf = po - g.sz;
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                if (act[e]) __pipeline_memcpy_async(sf + sf_ * PL + me + e * RW, f + pf + e, sizeof(T));
                if (FR && ld[e]) {
                    __pipeline_memcpy_async(sx + sc_ * PL + me + e * RW, g.fx + pf + e, sizeof(T));
                    __pipeline_memcpy_async(sy + sc_ * PL + me + e * RW, g.fy + pf + e, sizeof(T));
                }
            }
        }
        if constexpr (PRO) { // the coarse planes plane ip's correction reads: up to need
            if (one) {
                if (cnext <= need) {
                    stage();
                    ++cnext;
                }
            } else {
                for (; cnext <= need; ++cnext) stage();
            }
        }
        __pipeline_commit();
        ++ip;
        po += g.sz;
    }
    __device__ __forceinline__ void stage()
    {
        if (cstage)
            __pipeline_memcpy_async(cring + (cnext % B::PRING) * B::PCPL + rt, ce + cgo + (int64_t)cnext * cg.sz,
                                    sizeof(T));
    }

    // The faces of plane slot c from 1 / beta in slot rc (FR: its z faces).
    __device__ __forceinline__ void form(int c, int rc)
    {
        if constexpr (FR) {
            wz[c][0] = sr[rc * PL + me];
            wz[c][1] = sr[rc * PL + me + RW];
            return;
        }
        const T *r = sr + rc * PL + me;
        const T r0 = r[0], r1 = r[RW];
        sx[c * PL + me] = beta_face(r[RW - 1], r0);
        sx[c * PL + me + RW] = beta_face(r0, r1);
        sy[c * PL + me] = beta_face(r[-2 * RW], r0);
        sy[c * PL + me + RW] = beta_face(r[-RW], r1);
        wz[c][0] = beta_face(wo[0], r0);
        wz[c][1] = beta_face(wo[1], r1);
        wo[0] = r0;
        wo[1] = r1;
    }

    // RES: the residual of couplings v, diagonal parts d (ResidualEmit's).
    __device__ __forceinline__ T residual(const T (&v)[6], const T (&d)[6], const T (&nb)[6], T centre, T fv) const
    {
        double va[6], da[6], na[6], dg;
#pragma unroll
        for (int fc = 0; fc < 6; ++fc) {
            va[fc] = v[fc];
            da[fc] = d[fc];
            na[fc] = nb[fc];
        }
        const double off = plain_sum(va, da, na, dg);
        return T(point_res(sh.template of_as<double>(fv) + off, dg, (double)centre));
    }

    // PRO: coarse plane s's x-y interpolant at this thread's elements
    // (interp_tile_kernel's order of the sums).
    __device__ __forceinline__ void interp_xy(int s, T (&o)[2]) const
    {
        const T *pl = cring + (s % B::PRING) * B::PCPL + pyo;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            T v = T(0);
#pragma unroll
            for (int b = 0; b < 2; ++b) {
                const T *row = pl + pxo[e] + b * B::PCX;
                T xv = T(0);
#pragma unroll
                for (int a = 0; a < 2; ++a) xv += wxa[e][a] * row[a];
                v += wya[b] * xv;
            }
            o[e] = v;
        }
    }
    // The z taps of a plane (clamped to the grid), loaded a step before they are used.
    __device__ __forceinline__ ZTap ztap(int kk) const
    {
        const int k = min(max(kk, 0), g.nz - 1);
        return ZTap{__ldg(tw.sz + k), __ldg(tw.wz + 2 * k), __ldg(tw.wz + 2 * k + 1)};
    }
    // PRO: plane kk's correction added to this thread's elements in u slot
    // uc (inside: plane kk lies inside the grid, no check); then za takes
    // zb, zb plane kk + 2.
    __device__ __forceinline__ void correct(int kk, int uc, bool inside = false)
    {
        const ZTap z = za;
        za = zb;
        {
            const int k = min(kk + 2, g.nz - 1); // (kk >= k0 - 2)
            zb = ZTap{__ldg(tw.sz + k), __ldg(tw.wz + 2 * k), __ldg(tw.wz + 2 * k + 1)};
        }
        if (!inside && (kk < 0 || kk >= g.nz)) return; // (uniform)
        const int s = z.s;
        if (s != cs) {
            if (s == cs + 1) {
                P0[0] = P1[0];
                P0[1] = P1[1];
            } else {
                interp_xy(s, P0);
            }
            interp_xy(s + 1, P1);
            cs = s;
        }
        const T w0 = z.w0, w1_ = z.w1;
#pragma unroll
        for (int e = 0; e < 2; ++e)
            if (act[e]) {
                T v = T(0);
                v += w0 * P0[e];
                v += w1_ * P1[e];
                T *q = su + uc * PL + me + e * RW;
                *q = *q + v;
            }
    }

    // Element e at plane p: the other x neighbour and the y neighbours from u
    // slot uc, its own centre, partner (the pair's other element) and z
    // neighbours, f, its faces (fr6, GenPoint's order).  FAST: the uniform
    // couplings (the smoother's sums per axis: cx times the faces' weighted
    // neighbours); else the table form's, for every lane (the value counts
    // where act[e]).  MODE: U_RELAX; U_RESID, the residual there instead
    // (RES, RS); U_BOTH, the new value, and into rr the residual after it
    // (RS: where the neighbours are final).
    template <bool FAST, int MODE>
    __device__ __forceinline__ T update(int e, int p, int uc, T centre, T partner, T zl, T zh, T fv, const T (&fr6)[6],
                                        T &rr) const
    {
        constexpr bool RESID = MODE == U_RESID;
        const T *u = su + uc * PL + me + e * RW;
        const T side = u[e ? 1 - RW : RW - 1];
        T nb6[6] = {e ? partner : side, e ? side : partner, u[-2 * RW], u[2 * RW], zl, zh};
        T off, dg;
        if constexpr (FAST) {
            const T c[6] = {mul_rn(g.cx, fr6[0]), mul_rn(g.cx, fr6[1]), mul_rn(g.cy, fr6[2]),
                            mul_rn(g.cy, fr6[3]), mul_rn(g.cz, fr6[4]), mul_rn(g.cz, fr6[5])};
            if constexpr (RESID) return residual(c, c, nb6, centre, fv);
            off = plain_sum(c, c, nb6, dg);
            const T v = relax_scaled(centre, (fv - shift) + off, keep, smooth_scale_lean(omega, dg));
            if constexpr (MODE == U_BOTH) rr = T(point_res(sh.template of_as<double>(fv) + off, double(dg), double(v)));
            return act[e] ? v : centre; // ghosts and points outside keep their values
        } else {
            const int ex = 2 * tx + e;
            const ColZ<T> z = col_z(g, p);
            GenPoint<T> gp;
            gp.v[0] = cxs[0][ex]; gp.v[1] = cxs[1][ex]; gp.v[2] = cys[0][ty]; gp.v[3] = cys[1][ty];
            gp.v[4] = z.vzl; gp.v[5] = z.vzh;
            gp.d[0] = cxs[2][ex]; gp.d[1] = cxs[3][ex]; gp.d[2] = cys[2][ty]; gp.d[3] = cys[3][ty];
            gp.d[4] = g.czl[p]; gp.d[5] = g.czh[p];
            gen_faces(gp, fr6, 0u);
            if constexpr (RESID) return residual(gp.v, gp.d, nb6, centre, fv);
            off = plain_sum(gp.v, gp.d, nb6, dg);
            const T v = relax_scaled(centre, (fv - shift) + off, keep, smooth_scale_lean(omega, dg));
            if constexpr (MODE == U_BOTH) rr = T(point_res(sh.template of_as<double>(fv) + off, double(dg), double(v)));
            return act[e] && dg > T(0) ? v : centre; // only Neumann faces open: left as it is
        }
    }

    // Planes k0 - 2 .. k0 of u and 1 / beta in flight, the first two ready
    // (PRO: corrected), warp_in decided and plane k0 - 1's faces formed.
    __device__ __forceinline__ void prime()
    {
        ip = k0 - 2;
        po = col + (int64_t)ip * g.sz;
        for (int a = 0; a < 3; ++a) {
            const int d = ip - (k0 - 2);
            int need = 0;
            if constexpr (PRO) need = ztap(ip).s + 1;
            issue<false>(d % RU, d % RB, (d + RF - 1) % RF, (d + RC - 1) % RC, need);
        }
        if constexpr (PRO) {
            za = ztap(k0 - 2);
            zb = ztap(k0 - 1);
        }
        __pipeline_wait_prior(1);
        __syncthreads();
        if constexpr (PRO) { // planes k0 - 2 and k0 - 1 (slots 0, 1); k0 at the first step
            correct(k0 - 2, 0);
            correct(k0 - 1, 1);
        }
        warp_in = uniform_row();
        if constexpr (!FR) { // (FR: the z faces are stored)
            wo[0] = sr[me];
            wo[1] = sr[me + RW];
        }
#pragma unroll
        for (int c = 0; c < RC; ++c) wz[c][0] = wz[c][1] = T(0);
        form(1, 1); // plane k0 - 1
        acc.Kc = K0;
    }
    // A warp is a row: whether every interior point of the row takes the
    // uniform couplings (cx, cy) for x and y: no x / y neighbour is a box
    // face, or the face's table couplings equal them as Grid::fast counts
    // equal (a Dirichlet face of a uniform axis).
    __device__ __forceinline__ bool uniform_row() const
    {
        auto near = [](T a, T c) { return fabs((double)a - (double)c) <= 1e-12 * fabs((double)c); };
        const bool yok = (y >= 1 && y <= g.ny - 2) || (near(cys[0][ty], g.cy) && near(cys[1][ty], g.cy) &&
                                                      near(cys[2][ty], g.cy) && near(cys[3][ty], g.cy));
        bool ok = true;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int x = x0 + e, ex = 2 * tx + e;
            const bool xok = (x >= 1 && x <= g.nx - 2) || (near(cxs[0][ex], g.cx) && near(cxs[1][ex], g.cx) &&
                                                          near(cxs[2][ex], g.cx) && near(cxs[3][ex], g.cx));
            ok = ok && (!act[e] || (xok && yok));
        }
        return __all_sync(0xffffffffu, ok);
    }

    // RR: residual plane kf summed over this thread's coarse column's x / y
    // children into acc (restrict_tile_kernel's order of the sums).
    __device__ __forceinline__ void flush(int K, T v)
    {
        if (K >= K0 && K < K1) dst[rfb[rt] + (int64_t)K * cg.sz] = v;
    }
    __device__ __forceinline__ void restrict_plane(int kf)
    {
        const T4 wx = rwx[ci], wy = rwy[cj];
        const int4 o4 = rox[ci];
        const int o[4] = {o4.x, o4.y, o4.z, o4.w};
        const T *pl = sres + (kf & 1) * PL + roy[cj];
        T sm = T(0); // (RsThread::sum's order: rs_add)
#pragma unroll
        for (int b = 0; b < RR; ++b) {
            const T *row = pl + b * 2 * RW;
            T sx_ = T(0);
#pragma unroll
            for (int a = 0; a < RR; ++a) sx_ = rs_add(sx_, wx.v[a], row[o[a]]);
            sm = rs_add(sm, wy.v[b], sx_);
        }
        acc.add(xr, kf, sm, [&](int K, T v) { flush(K, v); });
    }

    // The walk, element A at plane k0 - 1 being E0: blocks of S steps, each
    // ring slot a constant; steps past mend are not taken.  FAST: the whole
    // block of S steps on the planes 1 .. nz - 2 (RS: its residuals' too),
    // and the warp's couplings uniform (warp_in).
    template <int E0> __device__ __forceinline__ void run()
    {
        zo[0] = su[me + E0 * RW];
        zo[1] = su[PL + me + (E0 ^ 1) * RW];
        pd = dst + col + (int64_t)(k0 - 2) * g.sz;
        rpd = rout + col + (int64_t)(k0 - 3) * g.sz;
        for (int mb = k0 - 1; mb <= mend; mb += S) {
            if (warp_in && mb >= (RS ? 3 : 2) && mb + S - 1 <= g.nz - 2) steps<true, E0>(mb);
            else steps<false, E0>(mb);
        }
    }
    template <bool FAST, int E0> __device__ __forceinline__ void steps(int mb)
    {
        each_const(
            [&](auto j_c) __attribute__((always_inline)) {
                if (mb + j_c.value <= mend) step<FAST, decltype(j_c)::value, E0>(mb);
            },
            std::make_integer_sequence<int, S>{});
    }
    // Step m = mb + j: the first colour at plane m, the second at m - 1.
    template <bool FAST, int j, int E0> __device__ __forceinline__ void step(int mb)
    {
        constexpr int e = (E0 + j) & 1;
        const int m = mb + j;
        __pipeline_wait_prior(0);
        __barrier_sync(0); // not __syncthreads: warps reach it through different code (E0, FAST)
        // u, 1 / beta at m + 2; f at m + 1 (PRO: the coarse planes of m + 2)
        issue<FAST>((3 + j) % RU, (3 + j) % RB, (2 + j) % RF, (2 + j) % RC, zb.s + 1, true);
        form((2 + j) % RC, (2 + j) % RB); // plane m + 1
        if constexpr (PRO) correct(m + 1, (2 + j) % RU, FAST);
        constexpr int cl = j % RC, cm = (1 + j) % RC, ch = (2 + j) % RC, ul = j % RU, um = (1 + j) % RU;
        constexpr int mode1 = RES ? U_RESID : U_RELAX;
        constexpr int mode2 = RES ? U_RESID : RS ? U_BOTH : U_RELAX;
        T r2 = T(0); // RS: the second colour's residual
        T *uA = su + um * PL + me + e * RW;
        const T cen = *uA, zh = su[((2 + j) % RU) * PL + me + e * RW], zl = zo[j & 1];
        zo[j & 1] = zh;
        if constexpr (RR != 0)
            if (rown && m - 2 >= k0) restrict_plane(m - 2); // stored at step m - 1
        T v1 = cen, r1 = T(0); // ghosts keep their values
        if (FAST || (m >= 0 && m < g.nz)) {
            const T *ax = sx + cm * PL + me + e * RW, *ay = sy + cm * PL + me + e * RW;
            const T fr6[6] = {ax[0], ax[e ? 1 - RW : RW], ay[0], ay[2 * RW], wz[cm][e], wz[ch][e]};
            const T fv = sf[((1 + j) % RF) * PL + me + e * RW];
            r1 = update<FAST, mode1>(e, m, um, cen, zo[(j + 1) & 1], zl, zh, fv, fr6, r2);
            if constexpr (!RES) *uA = v1 = r1;
        }
        T v2 = zl; // the second colour's value at plane m - 1 (ghosts keep theirs)
        if (m - 1 >= k0 && (!RS || m - 1 < g.nz)) {
            const T *ax = sx + cl * PL + me + e * RW, *ay = sy + cl * PL + me + e * RW;
            const T fr6[6] = {ax[0], ax[e ? 1 - RW : RW], ay[0], ay[2 * RW], wz[cl][e], wz[cm][e]};
            v2 = update<FAST, mode2>(e, m - 1, ul, zl, vp, vp2, v1, sf[(j % RF) * PL + me + e * RW], fr6, r2);
            if constexpr (RR != 0) {
                T *q = sres + ((m - 1) & 1) * PL + me;
                q[e * RW] = rv[e] ? v2 : T(0);
                q[(e ^ 1) * RW] = rv[e ^ 1] ? rp : T(0);
            } else {
                if constexpr (RS) su[ul * PL + me + e * RW] = v2; // (read past the next barrier)
                if (!RS || (m - 1 >= o0 && m - 1 < o1)) {
                    if (own[e]) pd[e] = v2;
                    if (own[e ^ 1]) pd[e ^ 1] = RES ? rp : vp;
                }
            }
        }
        if constexpr (RS) rs_residuals<FAST, j, e>(m, v2, r2);
        pd += g.sz;
        vp2 = vp;
        vp = v1;
        rp = r1;
    }
    // RS: element e's residuals: at plane m - 1 its update's (r2), at m - 2
    // formed here, where every value at plane m - 2 and beside it is final
    // (its own value, its partner's and z neighbours' from this thread's updates).
    template <bool FAST, int j, int e> __device__ __forceinline__ void rs_residuals(int m, T v2, T r2)
    {
        if (m - 1 >= o0 && m - 1 < o1 && own[e]) rpd[g.sz + e] = r2;
        const int p = m - 2;
        if (p >= o0 && p < o1) {
            constexpr int cl = j % RC, cp = (j + RC - 1) % RC, up = (j + RU - 1) % RU;
            const T *ax = sx + cp * PL + me + e * RW, *ay = sy + cp * PL + me + e * RW;
            const T fr6[6] = {ax[0], ax[e ? 1 - RW : RW], ay[0], ay[2 * RW], wz[cp][e], wz[cl][e]};
            T unused;
            const T r = update<FAST, U_RESID>(e, p, up, vp2, w1, w2, v2, sf[((j + RF - 1) % RF) * PL + me + e * RW],
                                              fr6, unused);
            if (own[e]) rpd[e] = r;
        }
        rpd += g.sz;
        w2 = w1;
        w1 = v2;
    }

    // No copy outlives the block; RR: the last plane, stored at the last step.
    __device__ __forceinline__ void finish()
    {
        __pipeline_wait_prior(0);
        if constexpr (RR != 0) {
            __barrier_sync(0);
            if (rown) {
                restrict_plane(k1 - 1);
                acc.finish([&](int K, T v) { flush(K, v); });
            }
        }
    }
};

template <class T, bool RES, bool FR, int RR = 0, bool PRO = false, bool RS = false>
__global__ void __launch_bounds__(BT_TX *Tune<T>::bt_by, Tune<T>::bt_blocks)
    beta_tile_kernel(const Grid<T> g, const T *__restrict__ src, T *__restrict__ dst, const T *__restrict__ f,
                     const T *__restrict__ shiftp, T omega, int flip, const Grid<T> cg, const Xfer<T> xr,
                     const T *__restrict__ ce, const Windows<T> tw, T *__restrict__ rout, int kchunk, int nyb,
                     int nchunks)
{
    typedef BetaWalk<T, RES, FR, RR, PRO, RS> W;
    extern __shared__ __align__(16) unsigned char bt_smem[];
    __shared__ T cxs[4][2 * BT_TX], cys[4][W::BY];
    static_assert(sizeof(cxs) + sizeof(cys) == BetaTile<T>::TABLES, "BetaTile::TABLES counts the static tables");
    W w(g, src, dst, f, omega, cg, xr, ce, tw, rout, cxs, cys, bt_smem);
    if (!w.place(kchunk, nyb, nchunks)) return;
    w.tables();
    w.sh = load_shift(shiftp);
    w.shift = w.sh.hi;
    w.keep = T(1) - omega;
    if constexpr (PRO) w.pro_taps();
    w.prime();
    const int c0 = flip ? 0 : 1; // the first colour: (x + y + z) & 1 == c0
    if (!RES && ((w.x0 + w.y + w.k0 - 1 + c0) & 1)) w.template run<1>(); // RES: either order takes every point
    else w.template run<0>();
    w.finish();
}

} // namespace pgpu
