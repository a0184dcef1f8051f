// hierarchy.h -- the levels of a multigrid solve: the ghost frame, Hierarchy<T>
#pragma once
#include "level.h"
#include "regions.h"

namespace pgpu {

// The levels of a solve: level 0 is the user's grid (its arrays are bound
// per solve); each next level coarsens the axes whose coupling 1/h^2 is at
// least half the strongest (semicoarsening keeps strongly anisotropic
// problems converging), until every axis has one node.  Jacobi, RBGS and FFT
// use level 0 alone.  Every per-axis table of every level lives in one
// device array of T and one of int; each level holds its grid, its smoothing
// plan and its transfer to the next level.

struct HostLevel {
    Axis ax[3];
    AxisTransfer tr[3]; // to the next coarser level (unused on the coarsest)
};

static bool build_hierarchy(const Axis fine[3], std::vector<HostLevel> &levels)
{
    levels.clear();
    HostLevel l0;
    for (int d = 0; d < 3; ++d) l0.ax[d] = fine[d];
    levels.push_back(l0);
    while ((int)levels.size() < MAX_LEVELS) {
        HostLevel &cur = levels.back();
        double smax = 0;
        for (int d = 0; d < 3; ++d)
            if (cur.ax[d].active && cur.ax[d].n > 1) smax = std::max(smax, 1.0 / (cur.ax[d].h * cur.ax[d].h));
        if (smax == 0) return true; // one node: the coarsest level
        HostLevel next;
        for (int d = 0; d < 3; ++d) {
            const Axis &a = cur.ax[d];
            const bool strong = a.active && a.n > 1 && 1.0 / (a.h * a.h) >= 0.5 * smax;
            if (strong) {
                if (!coarsen_axis(a, next.ax[d], cur.tr[d])) return false;
            } else {
                next.ax[d] = a;
                cur.tr[d] = identity_transfer(a);
            }
        }
        levels.push_back(next);
    }
    return false;
}

// (dist.h) `iters` smoothing iterations of slab level l (red-black: two per
// exchange where the level has bands, else one, the halo exchanged before
// each); the slab level's restricted right-hand side broadcast to every
// rank (the first replicated level).
template <class T>
static pgpu_status dist_smooth(Env &env, Level<T> &L, int l, bool jacobi, int iters, T omega, int flip,
                               bool *fresh = nullptr);
template <class T> static pgpu_status dist_gather(Env &env, const Grid<T> &g, T *f, bool frame = false);
// The faces of a slab towards other ranks (bit f: face f).
static int dist_faces(const Dist &d)
{
    return (d.lo_peer >= 0 ? 1 << (2 * d.axis) : 0) | (d.hi_peer >= 0 ? 2 << (2 * d.axis) : 0);
}

// ---- the ghost frame ----
// Points of the ghost layer (faces, edges, corners), numbered: 3D, the two z
// planes of the frame whole, then per interior plane the two y rows and the
// two x ends; 2D the two y rows and the x ends.
__host__ __device__ inline int64_t frame_points(int nx, int ny, int nz, bool is3d)
{
    const int64_t cap = is3d ? 2 * ((int64_t)nx + 2) * ((int64_t)ny + 2) : 0;
    return cap + (int64_t)(is3d ? nz : 1) * (2 * ((int64_t)nx + 2) + 2 * (int64_t)ny);
}

// dst0 and dst1 (may be NULL) = src (NULL: 0) at the frame points that lie
// on a face in `faces` (bit f: face f; edges and corners of such a face
// included).  Copies a user's boundary data into the second iterate, zeroes
// the ghosts of correction levels.
template <class T>
__global__ void frame_kernel(const Grid<T> g, const T *__restrict__ src, T *__restrict__ dst0, T *__restrict__ dst1,
                             int faces)
{
    const int64_t ex = g.nx + 2, ey = g.ny + 2, ez = g.is3d ? g.nz + 2 : 1;
    const int64_t cap = g.is3d ? 2 * ex * ey : 0, per = 2 * ex + 2 * (int64_t)g.ny;
    const int64_t total = frame_points(g.nx, g.ny, g.nz, g.is3d != 0);
    const int64_t origin = ghost_origin(g);
    PGPU_GRID_STRIDE(t, total)
    {
        int64_t I, J, K;
        if (t < cap) {
            K = t < ex * ey ? 0 : g.nz + 1;
            const int64_t r = t % (ex * ey);
            I = r % ex;
            J = r / ex;
        } else {
            const int64_t r = (t - cap) % per;
            K = g.is3d ? 1 + (t - cap) / per : 0;
            if (r < 2 * ex) {
                I = r % ex;
                J = r < ex ? 0 : ey - 1;
            } else {
                J = 1 + (r - 2 * ex) / 2;
                I = ((r - 2 * ex) & 1) ? ex - 1 : 0;
            }
        }
        const int on = (I == 0) | (I == ex - 1) << 1 | (J == 0) << 2 | (J == ey - 1) << 3 |
                       (g.is3d ? (K == 0) << 4 | (K == ez - 1) << 5 : 0);
        if (!(on & faces)) continue;
        const int64_t p = origin + I + J * g.sy + K * g.sz;
        const T v = src ? src[p] : T(0);
        if (dst0) dst0[p] = v;
        if (dst1) dst1[p] = v;
    }
}

template <class T>
static pgpu_status frame(Env &env, const Grid<T> &g, const T *src, T *dst0, T *dst1, int faces)
{
    char *err = env.err;
    if (!faces) return PGPU_SUCCESS;
    frame_kernel<T><<<grid_for(frame_points(g.nx, g.ny, g.nz, g.is3d != 0), env.sms), 256, 0, env.st>>>(g, src, dst0,
                                                                                                         dst1, faces);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// ---- building the levels ----
template <class T> class Hierarchy {
  public:
    std::vector<Level<T>> lv;
    std::vector<HostLevel> hl; // the host description (axes, transfer tables)
    int data_faces = 0;        // bit f: face f is Dirichlet or Neumann
    // (dist.h) a distributed hierarchy: set before build.  plan: the levels
    // (the slab's first dist_levels, then the global grid's, replicated on
    // every rank); global_cfg: the faces of the replicated levels.
    const std::vector<HostLevel> *plan = nullptr;
    int dist_levels = 0;
    pgpu_config global_cfg{};
    bool singular = false;     // no Dirichlet face (and no mask: then regions decide, see General)
    bool singular_box = false; // no Dirichlet face
    // Grid::shut may be set: the cycles need not be symmetric (not a Krylov
    // method's preconditioner, whose restriction must stay P's transpose).
    bool shut_ok = true;
    General<T> gen;            // the general form's data (regions.h)
    std::vector<int> fast_box; // each level's Grid::fast in the box form
    std::vector<char> rr_box;  // each transfer's rr_fused in the box form
    // (general_levels.h) allocate what the general form needs; build the coarse
    // levels' types and fractions from level 0's; put the form into every
    // grid (true when a grid changed); b of the bound problem into out.
    pgpu_status general_alloc(Env &env, bool mask, bool beta);
    pgpu_status general_build(Env &env);
    bool general_apply(Env &env);
    // Every level's route (level.h), from its form, plan and transfer: after
    // build and general_apply, and wherever those change.
    void route(const Env &env)
    {
        const int nl = (int)lv.size();
        for (int l = 0; l < nl; ++l)
            lv[l].route = route_level(env, lv[l], l, env.dist && l < dist_levels, l + 1 == nl);
    }
    pgpu_status general_rhs(Env &env, T *out, bool held = true);
    // (general_levels.h) the Galerkin levels' arrays, where beta jumps; their
    // operators R A P, after the coarse build.
    pgpu_status galerkin_alloc(Env &env);
    pgpu_status galerkin_build(Env &env);
    // out = src (+ u's boundary terms where `terms`) minus the mean of each
    // singular region of level 0 (out may be src).
    pgpu_status project(Env &env, const T *src, const T *u, int terms, T *out);

    // Level 0 only, or every level (multigrid); second: level 0's second
    // iterate (the iterative methods ping-pong between two arrays); own:
    // level 0's iterate and right-hand side too (a problem in workspace, zero
    // ghosts: PGPU_MIXED's corrections).
    pgpu_status build(Env &env, const pgpu_config &c, bool multigrid, bool second, bool own = false);
    // Level 0 works on the user's (or a solver's) arrays: iterate u, right-
    // hand side f, mean shift (NULL: none).
    void bind(T *u, const T *f, const T *shift)
    {
        lv[0].u = u;
        lv[0].f = const_cast<T *>(f);
        lv[0].shift = shift;
        lv[0].cur = 0;
        lv[0].in_x = false;
    }
    // Leaves level 0's iterate in its u (it may have ended in t).
    pgpu_status settle(Env &env)
    {
        Level<T> &L = lv[0];
        if (!L.cur) return PGPU_SUCCESS;
        L.cur = 0;
        return axpby(env, L.g, L.col, T(0), T(1), (const T *)L.t, T(0), (const T *)nullptr, L.u);
    }
    // Level 0's norms ||f - shift - A u|| and max |.| (synchronises).
    pgpu_status norm(Env &env, Reducer &red, double &rn, double &rmax)
    {
        const Level<T> &L = lv[0];
        return residual_norm(env, red, L.g, L.rwalk, (const T *)L.iter(), (const T *)L.f, L.shift, rn, rmax);
    }
    // ... its launches alone (into the reducer's slot).
    pgpu_status norm_launch(Env &env, Reducer &red, int slot = RES_NORM)
    {
        const Level<T> &L = lv[0];
        return residual_norm_launch(env, red, L.g, L.rwalk, (const T *)L.iter(), (const T *)L.f, L.shift, slot);
    }
};

template <class T>
pgpu_status Hierarchy<T>::build(Env &env, const pgpu_config &c, bool multigrid, bool second, bool own)
{
    char *err = env.err;
    const bool is3d = c.nz > 1;
    const int nfaces = is3d ? 6 : 4;
    // (dist.h) the slab's levels take the slab's faces, the replicated ones
    // the global problem's; singular is the global problem's.
    auto cfg_of = [&](int l) -> const pgpu_config & { return plan && l >= dist_levels ? global_cfg : c; };
    const pgpu_config &sc = plan ? global_cfg : c;
    singular = true;
    data_faces = 0;
    for (int fc = 0; fc < nfaces; ++fc) {
        if (sc.bc[fc] == PGPU_BC_DIRICHLET) singular = false;
        if (c.bc[fc] != PGPU_BC_PERIODIC || sc.bc[fc] != PGPU_BC_PERIODIC) data_faces |= 1 << fc;
    }
    Axis fine[3];
    fine_axes(c, fine);
    if (plan) {
        hl = *plan;
    } else if (multigrid) {
        PGPU_RETURN_IF(!build_hierarchy(fine, hl), PGPU_ERROR_UNSUPPORTED,
                       "multigrid: could not build a level hierarchy for this grid");
    } else {
        hl.clear();
        hl.resize(1);
        for (int d = 0; d < 3; ++d) hl[0].ax[d] = fine[d];
    }
    const int nl = (int)hl.size();

    // Every table in one array of T (tv) and one of int (iv); offsets first,
    // pointers once the arrays are on the device.
    std::vector<T> tv;
    std::vector<int> iv;
    auto putT = [&](const std::vector<double> &v) { size_t o = tv.size(); for (double d : v) tv.push_back((T)d); return o; };
    auto putI = [&](const std::vector<int> &v) { size_t o = iv.size(); iv.insert(iv.end(), v.begin(), v.end()); return o; };
    struct AxisOff { size_t cl, ch, rw, fw, cnt, idx, i2, w2, i4, w4, s2, ws2, s4, ws4, cn, cf, wf, wc; };
    struct LevelOff { AxisOff a[3]; size_t tz0, wz0, wz1, fz0, fz1; };
    std::vector<LevelOff> off(nl);
    std::vector<char> odi_ok(nl, 0);
    std::vector<AxisCoef> coefs((size_t)nl * 3);
    std::vector<char> uniform_ax((size_t)nl * 3, 0); // snap_uniform's verdict per level and axis
    std::vector<char> rs_tile(nl, 0), pl_tile(nl, 0), fi_tile(nl, 0), bt_rr(nl, 0), bt_pro(nl, 0);
    for (int l = 0; l < nl; ++l) {
        for (int d = 0; d < 3; ++d) {
            AxisCoef &ac = coefs[(size_t)l * 3 + d];
            ac = axis_coef(hl[l].ax[d]);
            // (not a slab's: its tables stay the global axis' slices, which
            // the band kernels' couplings and the neighbours' slabs share)
            uniform_ax[(size_t)l * 3 + d] = snap_uniform(ac, !(plan && l < dist_levels));
            off[l].a[d].cl = putT(ac.c_lo);
            off[l].a[d].ch = putT(ac.c_hi);
        }
        if (l + 1 == nl) continue;
        const AxisTransfer *t = hl[l].tr;
        bool ok2 = true, ok4 = true, fold = Tune<T>::bt_pro && is3d;
        for (int d = 0; d < 3; ++d) {
            AxisOff &o = off[l].a[d];
            const Axis &a = hl[l].ax[d];
            const int n = a.n, nc = hl[l + 1].ax[d].n;
            std::vector<int> i2((size_t)n * 2);
            std::vector<double> q2((size_t)n * 2);
            for (int i = 0; i < n; ++i) {
                i2[(size_t)2 * i] = t[d].p0[i];
                i2[(size_t)2 * i + 1] = t[d].p1[i];
                q2[(size_t)2 * i] = t[d].q0[i];
                q2[(size_t)2 * i + 1] = t[d].q1[i];
            }
            o.rw = putT(t[d].rw);
            o.fw = putT(t[d].fw);
            o.cnt = putI(t[d].rcnt);
            o.idx = putI(t[d].ridx);
            o.i2 = putI(i2);
            o.w2 = putT(q2);
            o.i4 = putI(t[d].c4);
            o.w4 = putT(t[d].w4);
            // Windows for interp_tile_kernel: linear (prolongation), cubic (FMG).
            const int tile = d == 0 ? IT_FX : (d == 1 ? IT_FY : 0), span = d == 0 ? IT_CX : IT_CY;
            const bool live = d < 2 || is3d; // 2D: z is not read
            std::vector<int> sw;
            std::vector<double> ww;
            const bool lin = window_taps(n, nc, a.lo, a.hi, i2, q2, 2, 2, tile, span, sw, ww);
            ok2 = ok2 && (lin || !live);
            fold = fold && lin && bt_fold_fits(sw, n, d);
            o.s2 = putI(sw);
            o.ws2 = putT(ww);
            const bool cub = window_taps(n, nc, a.lo, a.hi, t[d].c4, t[d].w4, 4, 4, tile, span, sw, ww);
            ok4 = ok4 && (cub || !live);
            o.s4 = putI(sw);
            o.ws4 = putT(ww);
        }
        // The operator-dependent transfers' node map (odi.h): every
        // coarsened axis keeps nodes (vertex coarsening, no periodic wrap).
        bool vertex = true;
        for (int d = 0; d < 3; ++d) {
            const Axis &a = hl[l].ax[d], &ca = hl[l + 1].ax[d];
            std::vector<int> cn;
            vertex = odi_node_map(a, ca, t[d].coarsened, cn) && vertex;
            std::vector<int> cf((size_t)ca.n, 0);
            for (int i = 0; i < a.n; ++i)
                if (cn[(size_t)i] >= 0 && cn[(size_t)i] < ca.n) cf[(size_t)cn[(size_t)i]] = i;
            off[l].a[d].cn = putI(cn);
            off[l].a[d].cf = putI(cf);
            off[l].a[d].wf = putT(a.w);
            off[l].a[d].wc = putT(ca.w);
        }
        odi_ok[l] = vertex;
        std::vector<int> t0, f0;
        std::vector<double> w0, w1, fz0, fz1;
        const bool z = plane_owners(t[2], t[2].rw, hl[l].ax[2].n, t0, w0, w1) &&
                       plane_owners(t[2], t[2].fw, hl[l].ax[2].n, f0, fz0, fz1);
        const int64_t plane = (int64_t)(l == 0 ? c.stride_y : hl[l].ax[0].n + 2) * (hl[l].ax[1].n + 2);
        rs_tile[l] = z && runs_forward(t[0], RS_TX, RS_SX) && runs_forward(t[1], RS_TY, RS_SY) && plane < INT32_MAX;
        // beta_tile_kernel's RR: the children inside the points one in from
        // its tile's edges (2 BT_TX - 2 columns, BY - 2 rows)
        typedef BetaTile<T> BT;
        // (x and y coarsened: an axis kept whole would leave half the tile idle)
        if (Tune<T>::bt_rr && z && is3d && runs_forward(t[0], BT::RX, 2 * BT_TX - 2) &&
            runs_forward(t[1], BT::RY, BT::BY - 2) &&
            2 * (int64_t)hl[l + 1].ax[0].n <= hl[l].ax[0].n + 2 && 2 * (int64_t)hl[l + 1].ax[1].n <= hl[l].ax[1].n + 2 &&
            BT::FIT_RR <= (size_t)env.optin) {
            const int most = std::max(*std::max_element(t[0].rcnt.begin(), t[0].rcnt.end()),
                                      *std::max_element(t[1].rcnt.begin(), t[1].rcnt.end()));
            bt_rr[l] = (char)(most <= 3 ? 3 : 4);
        }
        off[l].tz0 = putI(t0);
        off[l].wz0 = putT(w0);
        off[l].wz1 = putT(w1);
        off[l].fz0 = putT(fz0);
        off[l].fz1 = putT(fz1);
        const int64_t cplane = (int64_t)(hl[l + 1].ax[0].n + 2) * (hl[l + 1].ax[1].n + 2);
        pl_tile[l] = ok2 && cplane < INT32_MAX;
        bt_pro[l] = pl_tile[l] && fold && BetaTile<T>::FIT_PRO <= (size_t)env.optin;
        fi_tile[l] = ok4 && cplane < INT32_MAX;
    }
    T *dt = nullptr;
    int *di = nullptr;
    PGPU_FORWARD(env.upload(tv, &dt, "coefficient and transfer tables"));
    PGPU_FORWARD(env.upload(iv, &di, "transfer tables"));

    const bool rr_fits = Tune<T>::rr_fused && rr_smem_bytes<T>() <= (size_t)env.optin;
    lv.clear();
    lv.resize(nl);
    for (int l = 0; l < nl; ++l) {
        Level<T> &L = lv[l];
        Grid<T> &g = L.g;
        const Axis *ax = hl[l].ax;
        g.nx = ax[0].n;
        g.ny = ax[1].n;
        g.nz = ax[2].n;
        g.is3d = is3d;
        const pgpu_config &cl = cfg_of(l);
        g.px = cl.bc[0] == PGPU_BC_PERIODIC;
        g.py = cl.bc[2] == PGPU_BC_PERIODIC;
        g.pz = is3d && cl.bc[4] == PGPU_BC_PERIODIC;
        g.sy = l == 0 ? c.stride_y : g.nx + 2;
        g.sz = l == 0 ? c.stride_z : g.sy * (g.ny + 2);
        g.base = 1 + g.sy + (is3d ? g.sz : 0);
        L.elems = is3d ? g.sz * (g.nz + 2) : g.sy * (g.ny + 2);
        L.npts = (double)g.nx * g.ny * g.nz;
        const AxisCoef *ac = &coefs[(size_t)l * 3];
        const AxisOff *o = off[l].a;
        g.cxl = dt + o[0].cl; g.cxh = dt + o[0].ch;
        g.cyl = dt + o[1].cl; g.cyh = dt + o[1].ch;
        g.czl = dt + o[2].cl; g.czh = dt + o[2].ch;
        g.gxl = (T)ac[0].g_lo; g.gxh = (T)ac[0].g_hi;
        g.gyl = (T)ac[1].g_lo; g.gyh = (T)ac[1].g_hi;
        g.gzl = (T)ac[2].g_lo; g.gzh = (T)ac[2].g_hi;
        g.oxl = g.px ? (int64_t)(g.nx - 1) : -1;
        g.oxh = g.px ? -(int64_t)(g.nx - 1) : 1;
        g.oyl = g.py ? (int64_t)(g.ny - 1) * g.sy : -g.sy;
        g.oyh = g.py ? -(int64_t)(g.ny - 1) * g.sy : g.sy;
        g.ozl = g.pz ? (int64_t)(g.nz - 1) * g.sz : -g.sz;
        g.ozh = g.pz ? -(int64_t)(g.nz - 1) * g.sz : g.sz;
        int ldf = 0; // this level's faces with data
        for (int fc = 0; fc < nfaces; ++fc)
            if (cl.bc[fc] != PGPU_BC_PERIODIC) ldf |= 1 << fc;
        g.dxl = (ldf >> 0) & 1; g.dxh = (ldf >> 1) & 1;
        g.dyl = (ldf >> 2) & 1; g.dyh = (ldf >> 3) & 1;
        g.dzl = (ldf >> 4) & 1; g.dzh = (ldf >> 5) & 1;
        g.dirichlet = 0;
        for (int fc = 0; fc < nfaces; ++fc)
            if (cl.bc[fc] == PGPU_BC_DIRICHLET) g.dirichlet |= 1 << fc;
        { // the uniform form (see Grid::fast)
            T cu[3] = {T(0), T(0), T(0)};
            bool uniform = true;
            for (int d = 0; d < 3; ++d) {
                if (d == 2 && !is3d) continue;
                if (ac[d].c_lo.size() > 1) cu[d] = (T)ac[d].c_lo[1];
                uniform = uniform && uniform_ax[(size_t)l * 3 + d];
            }
            const bool fits = std::max<int64_t>(g.ny, 2) * g.sy < INT32_MAX && g.nx < INT32_MAX;
            g.fast = uniform && fits;
            g.cx = cu[0];
            g.cy = cu[1];
            g.cz = cu[2];
            g.fxl = g.nx > 1 ? (T)ac[0].c_hi[0] : T(0);
            g.fxh = g.nx > 1 ? (T)ac[0].c_lo[g.nx - 1] : T(0);
            g.fyl = g.ny > 1 ? (T)ac[1].c_hi[0] : T(0);
            g.fyh = g.ny > 1 ? (T)ac[1].c_lo[g.ny - 1] : T(0);
            g.exl = (T)ac[0].c_lo[0];
            g.exh = (T)ac[0].c_hi[g.nx - 1];
            g.eyl = (T)ac[1].c_lo[0];
            g.eyh = (T)ac[1].c_hi[g.ny - 1];
        }
        L.col = col_launch(g.nx, g.ny, g.nz, is3d, COL_BX, COL_BY, COL_BX, COL_BY, env.sms);
        L.walk = walk_launch(g.nx, g.ny, g.nz, is3d, Tune<T>::walk_group);
        L.rwalk = reduce_walk_launch(g.nx, g.ny, g.nz, is3d, Tune<T>::walk_group, env.sms);
        L.sm = smooth_plan(g, L.npts, env.sms, g.fast != 0);
        // (dist.h) a slab pairs red-black iterations only with band fix-ups
        if (plan && l < dist_levels) L.sm.paired = L.sm.paired && env.dist->band[l];
        const size_t bytes = (size_t)L.elems * sizeof(T);
        if (l == 0 && !own) {
            if (second) PGPU_FORWARD(env.mem.alloc(err, (void **)&L.t, bytes, "the second iterate"));
        } else {
            PGPU_FORWARD(env.mem.alloc(err, (void **)&L.u, bytes, "a level's iterate"));
            PGPU_FORWARD(env.mem.alloc(err, (void **)&L.t, bytes, "a level's second iterate"));
            PGPU_FORWARD(env.mem.alloc(err, (void **)&L.f, bytes, "a level's right-hand side"));
            // Ghosts of correction levels must read as zero.
            PGPU_CUDA_SETUP(env, cudaMemsetAsync(L.u, 0, bytes, env.st));
            PGPU_CUDA_SETUP(env, cudaMemsetAsync(L.t, 0, bytes, env.st));
            PGPU_CUDA_SETUP(env, cudaMemsetAsync(L.f, 0, bytes, env.st));
        }
    }
    // The transfers, once both grids of each pair are known.
    for (int l = 0; l + 1 < nl; ++l) {
        Transfer<T> &x = lv[l].down;
        const Level<T> &F = lv[l], &C = lv[l + 1];
        const AxisOff *o = off[l].a;
        x.fg = F.g;
        x.cg = C.g;
        Xfer<T> &r = x.rc;
        r.cntx = di + o[0].cnt; r.idxx = di + o[0].idx; r.rwx = dt + o[0].rw;
        r.cnty = di + o[1].cnt; r.idxy = di + o[1].idx; r.rwy = dt + o[1].rw;
        r.cntz = di + o[2].cnt; r.idxz = di + o[2].idx; r.rwz = dt + o[2].rw;
        r.tz0 = di + off[l].tz0; r.wz0 = dt + off[l].wz0; r.wz1 = dt + off[l].wz1;
        x.rf = r; // FMG's data restriction: the same with moment-free rows
        x.rf.rwx = dt + o[0].fw; x.rf.rwy = dt + o[1].fw; x.rf.rwz = dt + o[2].fw;
        x.rf.wz0 = dt + off[l].fz0; x.rf.wz1 = dt + off[l].fz1;
        x.p2 = Taps<T>{di + o[0].i2, di + o[1].i2, di + o[2].i2, dt + o[0].w2, dt + o[1].w2, dt + o[2].w2};
        x.p4 = Taps<T>{di + o[0].i4, di + o[1].i4, di + o[2].i4, dt + o[0].w4, dt + o[1].w4, dt + o[2].w4};
        x.w2 = Windows<T>{di + o[0].s2, di + o[1].s2, di + o[2].s2, dt + o[0].ws2, dt + o[1].ws2, dt + o[2].ws2};
        x.w4 = Windows<T>{di + o[0].s4, di + o[1].s4, di + o[2].s4, dt + o[0].ws4, dt + o[1].ws4, dt + o[2].ws4};
        x.fwalk = F.walk;
        x.cwalk = C.walk;
        x.rs_tile = rs_tile[l] != 0;
        // (dist.h: not on a slab: its rows reach the residual's ghost planes)
        x.rr_fused = x.rs_tile && rr_fits && is3d && F.g.fast && !F.g.px && !F.g.py && !F.g.pz &&
                     !(plan && l < dist_levels);
        x.pl_tile = pl_tile[l] != 0;
        x.bt_pro = bt_pro[l] && !(plan && l < dist_levels);
        x.fi_tile = fi_tile[l] != 0;
        x.oa = OdiAxes<T>{{di + o[0].cn, di + o[1].cn, di + o[2].cn},
                          {di + o[0].cf, di + o[1].cf, di + o[2].cf},
                          {dt + o[0].wf, dt + o[1].wf, dt + o[2].wf},
                          {dt + o[0].wc, dt + o[1].wc, dt + o[2].wc}};
        x.odi_ok = odi_ok[l] && !plan;
        x.odi = false;
        x.it = col_launch(F.g.nx, F.g.ny, F.g.nz, is3d, IT_FX, IT_FY, IT_FX, IT_FY, env.sms);
        x.ot = odi_launch(F.g.nx, F.g.ny, F.g.nz, is3d, env.sms);
        x.rs = col_launch(C.g.nx, C.g.ny, C.g.nz, is3d, RS_TX, RS_TY, RS_TX, RS_TY, env.sms);
        x.bt_rr = plan && l < dist_levels ? 0 : bt_rr[l];
        typedef BetaTile<T> BT;
        x.brr = col_launch(C.g.nx, C.g.ny, C.g.nz, is3d, BT::RX, BT::RY, BT_TX, BT::BY, env.sms, Tune<T>::bt_per_sm);
    }
    singular_box = singular;
    fast_box.resize(nl);
    rr_box.resize(nl);
    for (int l = 0; l < nl; ++l) {
        fast_box[l] = lv[l].g.fast;
        rr_box[l] = lv[l].down.rr_fused;
    }
    route(env);
    return PGPU_SUCCESS;
}

} // namespace pgpu
