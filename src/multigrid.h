// multigrid.h -- Multigrid<T>: V / W cycles, FMG, the stop rules of a multigrid solve
#pragma once
#include "hierarchy.h"
#include "coarse_solve.h"
#include "general_coarse.h"

namespace pgpu {

template <class T> class Multigrid {
  public:
    int pre = 2, post = 1, post_flip = 0;
    bool wcycle = false;
    T omega = T(1);
    // measure: the next level-0 prolongation also sums the size of its
    // correction into the reducer's slot RES_CORR (a float convergence test).
    bool measure = false;
    // centre: a solve by cycles alone of a singular problem in the general
    // form (coefficients, no mask): every level-0 prolongation takes the
    // coarse correction's mean out, and the FMG pass each coarse solution's
    // before it is interpolated.  Galerkin levels carry no constant of their
    // own but drift along it (their right-hand sides are in range only to
    // rounding, scaled by the coefficients' contrast): an all-Neumann box
    // around a 1e6 inclusion gathered a constant of 1e5 times u in a W-cycle
    // FMG, whose removal at the end then left 1.5e-11 of u in its mean.
    // (Not in a preconditioner: the projection would break its symmetry.
    // Solver::symmetric_cycle sets it with the handle's form.)
    bool centre = false;
    // flip0: a cycle may end with level 0's iterate in its other array
    // (Level::cur), which a caller that keeps track of it allows: level 0's
    // prolongation then folds into its post-smoothing where the transfer
    // allows it (Transfer::bt_pro), and a V(2,1) cycle takes three passes
    // over level 0's arrays instead of four.
    bool flip0 = false;
    Reducer *red = nullptr;
    // Level 0's residual, where the pre-smoothing formed it (its last pass,
    // where route.pre_resid): the restriction takes it from there.
    const T *resid0 = nullptr;

    pgpu_status init(Env &env, Hierarchy<T> &h, const pgpu_config &c, Reducer *red);
    // One cycle on level l (V, or W).  gamma_top > 0 (FMG's finest cycle)
    // solves level l's own coarse-grid correction more accurately: one cycle
    // two levels down, interpolated, then one on l+1 where l+1 has
    // FMG_START_MIN points or more, else gamma_top cycles of l+1.
    pgpu_status cycle(int l, int gamma_top = 0);
    // Full multigrid, one pass, for the problem bound to level 0: the coarse
    // levels (workspace only), then level 0 (its interpolation and cycle).
    pgpu_status fmg_pass()
    {
        PGPU_FORWARD(fmg_coarse());
        return fmg_finish();
    }
    pgpu_status fmg_coarse();
    pgpu_status fmg_finish();
    // FMG: level l+1's data restricted from level l's; level l's u the
    // tricubic interpolant of level l+1's solution.
    pgpu_status fmg_restrict(int l);
    pgpu_status fmg_interpolate(int l);
    // FMG with held points (a mask with Dirichlet points): the coarse
    // problems take the held values where their own couplings put them
    // (held_terms_kernel), and the interpolation reads them
    // (held_values_kernel).  A coarse level's values wait in its t from
    // fmg_coarse's start until that level is interpolated.
    // Not on Galerkin levels (odi), which have no held points: their coarse
    // problems take b with zero data, as a mask without held points.
    bool held_fmg() const { return gen && h->gen.mask && h->gen.held && !odi; }
    GenCoarse<T> held_pair(int l) const; // levels l and l + 1, as the held kernels read them
    // Level l's points in the global problem (a slab level's npts are the rank's).
    double global_points(int l) const;
    // The general operator (a mask or coefficients) has no dense level: its
    // cycles go down to the single node.
    int last_level() const { return dense_level >= 0 && !gen ? dense_level : (int)h->lv.size() - 1; }
    int tiny_first = 0;   // levels from here on run in tiny_cycle_kernel (never level 0)
    // A pair of levels takes the operator-dependent transfers (odi.h), which
    // the tiny levels' kernel has not: every level's steps are launched.
    bool odi = false;
    int tiny_from() const { return odi ? (int)h->lv.size() : tiny_first; }
    // (dist.h) fresh[l]: slab level l's iterate has the neighbours' current
    // values in its ghost planes (its last smoothing ended in a band pass),
    // so the next residual or prolongation needs no exchange.
    std::vector<char> fresh;
    int dense_level = -1; // the level solved by its inverse, or -1
    bool gen = false;     // the hierarchy's levels take the general form
    // After the levels' grids changed (the general form set or removed): the
    // tiny levels' table again, and the schedule that ends where it should.
    pgpu_status refresh(bool general);

  private:
    Env *env = nullptr;
    Hierarchy<T> *h = nullptr;
    const T *folded = nullptr; // level 0's coarse correction, left to its post-smoothing (flip0, in x)
    std::vector<std::vector<Step>> sched; // per start level (of the current form)
    std::vector<int> dsched;              // offset of sched[s] in d_steps (tiny levels)
    std::vector<std::vector<Step>> sched_form[2]; // per form: box (0), general (1)
    std::vector<int> dsched_form[2];
    Step *d_steps = nullptr;
    TinyLevel<T> *d_tiny = nullptr;
    const T *d_dense = nullptr;
    std::vector<TinyLevel<T>> tiny_table() const;
    pgpu_status run(int l, int op);
    pgpu_status down(int l, bool zero);
    pgpu_status tiny(int s);
    pgpu_status near_relax(Level<T> &L);
};

template <class T> pgpu_status Multigrid<T>::init(Env &e, Hierarchy<T> &hh, const pgpu_config &c, Reducer *r)
{
    env = &e;
    h = &hh;
    red = r;
    pre = c.pre_smooth;
    post = c.post_smooth;
    wcycle = (c.flags & PGPU_WCYCLE) != 0;
    omega = (T)c.omega;
    std::vector<Level<T>> &lv = h->lv;
    const int nl = (int)lv.size();
    fresh.assign(nl, 0);
    // The tail of levels that tiny_cycle_kernel runs (never level 0: the
    // user's arrays, strides and mean shift stay with the general kernels).
    tiny_first = nl;
    // (dist.h: nor a slab level: they exchange halos between passes)
    while (tiny_first > std::max(1, h->dist_levels) && lv[tiny_first - 1].npts <= TINY_THREADS &&
           nl - (tiny_first - 1) <= TINY_LEVELS)
        --tiny_first;
    if (tiny_first < nl) {
        // The dense level: the finest tiny one (not the single node) of at
        // most DENSE_MAX points whose inverse takes at most a quarter word
        // per point of level 0.
        for (int l = tiny_first; l + 1 < nl && dense_level < 0; ++l) {
            const double n = lv[l].npts;
            if (n > DENSE_MAX || n * n > lv[0].npts / 4) continue;
            std::vector<double> mt;
            if (!dense_inverse(h->hl[l].ax, h->singular, mt)) break;
            T *dd = nullptr;
            PGPU_FORWARD(e.upload(std::vector<T>(mt.begin(), mt.end()), &dd, "the dense coarse inverse"));
            d_dense = dd;
            dense_level = l;
        }
        PGPU_FORWARD(e.upload(tiny_table(), &d_tiny, "the tiny levels' table"));
    }
    // Both forms' schedules in one array.
    std::vector<Step> all;
    for (int form = 0; form < 2; ++form) {
        gen = form == 1;
        const int last = last_level();
        sched_form[form].assign(last + 1, std::vector<Step>{});
        dsched_form[form].assign(last + 1, -1);
        for (int s = 0; s <= last; ++s) {
            build_schedule(s, last, wcycle, sched_form[form][s]);
            if (s >= tiny_first) {
                dsched_form[form][s] = (int)all.size();
                all.insert(all.end(), sched_form[form][s].begin(), sched_form[form][s].end());
            }
        }
    }
    gen = false;
    sched = sched_form[0];
    dsched = dsched_form[0];
    PGPU_FORWARD(e.upload(all, &d_steps, "the cycle schedule"));
    return PGPU_SUCCESS;
}

template <class T> std::vector<TinyLevel<T>> Multigrid<T>::tiny_table() const
{
    std::vector<TinyLevel<T>> tl;
    const std::vector<Level<T>> &lv = h->lv;
    for (int l = tiny_first; l < (int)lv.size(); ++l)
        tl.push_back(TinyLevel<T>{lv[l].g, lv[l].down.rc, lv[l].down.p2, lv[l].u, lv[l].t, lv[l].f, lv[l].elems,
                                  l == dense_level && !gen ? d_dense : nullptr});
    return tl;
}

template <class T> pgpu_status Multigrid<T>::refresh(bool general)
{
    gen = general;
    odi = false;
    for (const Level<T> &L : h->lv) odi = odi || L.route.up == UpRoute::ODI;
    sched = sched_form[gen ? 1 : 0];
    dsched = dsched_form[gen ? 1 : 0];
    return d_tiny ? env->put(tiny_table(), d_tiny) : PGPU_SUCCESS;
}

// A cycle from tiny level s in one block.
template <class T> pgpu_status Multigrid<T>::tiny(int s)
{
    char *err = env->err;
    PGPU_RETURN_IF(h->lv[s].cur != 0, PGPU_ERROR_CUDA, "internal: a tiny level's iterate is not in its u");
    tiny_cycle_kernel<T><<<1, TINY_THREADS, 0, env->st>>>(d_tiny, tiny_first, d_steps + dsched[s],
                                                          (int)sched[s].size(), omega, pre, post, post_flip);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// Level l's residual restricted into level l+1's right-hand side; zero:
// the correction on l+1 starts from zero.
template <class T> pgpu_status Multigrid<T>::down(int l, bool zero)
{
    Env &e = *env;
    char *err = e.err;
    Level<T> &L = h->lv[l], &C = h->lv[l + 1];
    if (l == 0 && resid0) { // (the pre-smoothing formed it: route.pre_resid)
        const T *r = resid0;
        resid0 = nullptr;
        PGPU_FORWARD(L.down.restrict_(e, r, nullptr, C.f));
    } else {
        switch (L.route.down) {
        case DownRoute::SLAB: // (dist.h) its halos, then the global level's rows
            if (!fresh[l]) PGPU_FORWARD(dist_halo(e, L.g, L.iter()));
            PGPU_FORWARD(residual(e, L, L.iter(), L.other()));
            PGPU_FORWARD(dist_halo(e, L.g, L.other()));
            PGPU_FORWARD(L.down.restrict_(e, L.other(), nullptr, C.f));
            if (!C.route.slab) PGPU_FORWARD(dist_gather(e, C.g, C.f));
            break;
        case DownRoute::ODI:
            PGPU_FORWARD(residual(e, L, L.iter(), L.other()));
            PGPU_FORWARD(L.down.odi_restrict(e, L.other(), C.f));
            break;
        case DownRoute::FUSED: PGPU_FORWARD(L.down.restrict_residual(e, L.iter(), L.f, L.shift, C.f)); break;
        case DownRoute::BETA_RR: PGPU_FORWARD(L.down.restrict_beta_residual(e, L.iter(), L.f, L.shift, C.f)); break;
        case DownRoute::SPLIT:
            PGPU_FORWARD(residual(e, L, L.iter(), L.other()));
            PGPU_FORWARD(L.down.restrict_(e, L.other(), nullptr, C.f));
            break;
        }
    }
    if (zero) {
        PGPU_CUDA(cudaMemsetAsync(C.u, 0, (size_t)C.elems * sizeof(T), e.st));
        C.cur = 0;
    }
    return PGPU_SUCCESS;
}

// One step of a schedule on a level the host launches for.
template <class T> pgpu_status Multigrid<T>::run(int l, int op)
{
    Env &e = *env;
    Level<T> &L = h->lv[l];
    const bool slab = L.route.slab; // (dist.h)
    bool fr = false;
    if (l == 0 && op != STEP_DOWN) resid0 = nullptr; // (only the step after the pre-smoothing takes it)
    switch (op) {
    case STEP_PRE:
        // (the post-smoothing's first pass reads x and writes u: an odd
        // count ends there)
        if (l == 0 && L.route.pre_resid && pre > 0 && post % 2 == 1) {
            PGPU_FORWARD(smooth(e, L, false, pre, omega, 0, (const T *)nullptr, true));
            resid0 = L.cur ? L.u : L.t;
            return PGPU_SUCCESS;
        }
        if (!slab) return smooth(e, L, false, pre, omega);
        PGPU_FORWARD(dist_smooth(e, L, l, false, pre, omega, 0, &fr));
        fresh[l] = fr;
        return PGPU_SUCCESS;
    case STEP_DOWN: return down(l, true);
    case STEP_SOLVE: // one node (the tiny levels hold every other last level): weight 1 solves it
        if (L.route.smooth == SmoothRoute::GALERKIN) return smooth(e, L, false, 1, omega); // (in place)
        PGPU_FORWARD(jacobi_pass(e, L.g, L.sm, L.iter(), L.other(), L.f, L.shift, T(1)));
        if (l == 0) // a one-node grid's cycle ends where it started (graphs replay no host state)
            return axpby(e, L.g, L.col, T(0), T(1), (const T *)L.other(), T(0), (const T *)nullptr, L.iter());
        L.cur ^= 1;
        return PGPU_SUCCESS;
    case STEP_UP: {
        // Out of place where that makes the cycle's passes over L even (it
        // then ends in the array it started in: u on level 0), else in place;
        // or left to the post-smoothing (flip0: the cycle may end in level
        // 0's other array; in x: it ends in u).  In x, in place: the
        // post-smoothing's first pass goes to u.
        Level<T> &C = h->lv[l + 1];
        const bool in_place = L.in_x || (smooth_passes(L, false, pre) + smooth_passes(L, false, post)) % 2 == 0;
        const bool sum = measure && l == 0 && red;
        const bool drop = l == 0 && red && h->singular && !e.dist && (sum || centre);
        if (l == 0 && L.route.fold && (flip0 || L.in_x) && !sum && !drop && post > 0) {
            folded = C.iter(); // (the post-smoothing's first pass adds it)
            return PGPU_SUCCESS;
        }
        size_t blocks = 0;
        if (C.route.slab && !fresh[l + 1]) PGPU_FORWARD(dist_halo(e, C.g, C.iter())); // (dist.h)
        if (slab) fresh[l] = 0;
        if (drop) {
            // A singular problem's correction may carry a constant (the
            // right-hand side's mean, rounded, is not quite removed, and the
            // coarse levels' smoothing drifts along the null space) that no
            // cycle removes and that changes u only by a constant: the
            // measured correction leaves it out (P keeps constants: no
            // Dirichlet wall, no ghost taps).
            PGPU_FORWARD(subtract_mean(e, *red, C.g, C.col, C.iter(), C.npts));
        }
        T *out = in_place ? L.iter() : L.other();
        if (L.route.up == UpRoute::ODI)
            PGPU_FORWARD(L.down.odi_prolong(e, C.iter(), L.iter(), out, sum ? red->d_part : nullptr, &blocks));
        else
            PGPU_FORWARD(L.down.prolong(e, C.iter(), L.iter(), out,
                                        L.route.up == UpRoute::TILED ? Transfer<T>::TILED : Transfer<T>::DIRECT,
                                        sum ? red->d_part : nullptr, &blocks));
        if (sum) PGPU_FORWARD(red->total<T>(e, blocks, RES_CORR));
        if (!in_place) L.cur ^= 1;
        return PGPU_SUCCESS;
    }
    default:
        if (!slab) {
            const T *fold = l == 0 ? folded : nullptr;
            if (l == 0) folded = nullptr;
            PGPU_FORWARD(smooth(e, L, false, post, omega, post_flip, fold));
            return l == 0 ? near_relax(L) : PGPU_SUCCESS;
        }
        PGPU_FORWARD(dist_smooth(e, L, l, false, post, omega, post_flip, &fr));
        fresh[l] = fr;
        return PGPU_SUCCESS;
    }
}

// After level 0's post-smoothing on a mask: NEAR_SWEEPS Gauss-Seidel
// iterations on the near tiles (gen_near_kernel), where the coarse levels'
// correction leaves most of the residual (the solid sphere at 512^3, double,
// from u = 0: 70-75% of the residual's square within two points of the
// wall after each of cycles 3-7).  Not in a symmetric cycle, whose
// post-smoothing mirrors its pre-smoothing.
constexpr int NEAR_SWEEPS = 2;
template <class T> pgpu_status Multigrid<T>::near_relax(Level<T> &L)
{
    const General<T> &G = h->gen;
    if (!G.mask || !G.near || post_flip) return PGPU_SUCCESS;
    Env &e = *env;
    char *err = e.err;
    const unsigned blocks = std::min(G.near, 8u * (unsigned)e.sms);
    for (int it = 0; it < NEAR_SWEEPS; ++it)
        for (int c = 0; c < 2; ++c) {
            gen_near_kernel<T><<<blocks, NEAR_THREADS, 0, e.st>>>(L.g, L.iter(), L.f, L.shift, c, G.near_list,
                                                                  G.near_count);
            PGPU_LAUNCHED();
        }
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Multigrid<T>::cycle(int l, int gamma_top)
{
    std::vector<Level<T>> &lv = h->lv;
    if (l >= tiny_from()) return tiny(l);
    if (gamma_top == 0) {
        const std::vector<Step> &s = sched[l];
        for (size_t q = 0; q < s.size();) {
            if (s[q].level >= tiny_from()) { // a cycle of the tiny levels
                PGPU_FORWARD(tiny(s[q].level));
                q += sched[s[q].level].size();
            } else {
                PGPU_FORWARD(run(s[q].level, s[q].op));
                ++q;
            }
        }
        return PGPU_SUCCESS;
    }
    Env &e = *env;
    char *err = e.err;
    Level<T> &C = lv[l + 1];
    PGPU_FORWARD(run(l, STEP_PRE));
    if (l + 2 <= last_level() && global_points(l + 1) >= FMG_START_MIN) {
        // The correction on l+1 starts from the interpolated solution of its
        // own restriction on l+2 (one cycle there), then one cycle on l+1.
        // C's ghosts are zero (a correction level), its interior is all
        // written by the interpolation.
        PGPU_FORWARD(down(l, false));
        Level<T> &D = lv[l + 2];
        if (C.route.slab) PGPU_FORWARD(dist_halo(e, C.g, C.f)); // (dist.h) C's f with its neighbours' planes
        PGPU_FORWARD(C.down.restrict_(e, C.f, nullptr, D.f));
        if (C.route.slab && !D.route.slab) PGPU_FORWARD(dist_gather(e, D.g, D.f));
        PGPU_CUDA(cudaMemsetAsync(D.u, 0, (size_t)D.elems * sizeof(T), e.st));
        D.cur = 0;
        PGPU_FORWARD(cycle(l + 2));
        C.cur = 0;
        if (D.route.slab) PGPU_FORWARD(dist_halo(e, D.g, D.iter()));
        PGPU_FORWARD(C.down.interpolate(e, D.iter(), C.u));
        PGPU_FORWARD(cycle(l + 1));
    } else {
        PGPU_FORWARD(down(l, true));
        for (int k = 0; k < gamma_top; ++k) PGPU_FORWARD(cycle(l + 1));
    }
    PGPU_FORWARD(run(l, STEP_UP));
    return run(l, STEP_POST);
}

// Full multigrid, one pass: restrict f and the boundary data (FMG's rows,
// see moment_free) down to last_level, solve it exactly, then on each finer
// level interpolate the coarser solution (tricubic) and improve it by one
// cycle.  The finest level's cycle solves its coarse-grid correction more
// accurately than one cycle does (gamma_top 2, see cycle): with one, the
// algebraic error left on the 3D test grids reached half the discretisation
// error and moved the observed order to 2.25-2.48.
template <class T> pgpu_status Multigrid<T>::fmg_coarse()
{
    Env &e = *env;
    std::vector<Level<T>> &lv = h->lv;
    const int nl = (int)lv.size();
    const int top = last_level(); // FMG's coarsest level, solved exactly
    const int all_faces = lv[0].g.is3d ? 63 : 15;
    if (nl == 1) return PGPU_SUCCESS;
    // Right-hand sides and boundary data of the coarse problems.  The general
    // form restricts b (f and every boundary term, Dirichlet points' values
    // included) instead, with zero data on the coarse levels: u's fluid values
    // solve A u = b with zero data, which is what the coarse levels
    // approximate.  With held points (held_fmg) it restricts f and the box's
    // boundary terms, then adds each coarse level's own held terms
    // (held_terms_kernel).
    char *err = e.err;
    PGPU_RETURN_IF(h->lv[top].route.slab, PGPU_ERROR_CUDA, "internal: FMG's coarsest level is a slab");
    for (int l = 1; l <= top; ++l) PGPU_FORWARD(fmg_restrict(l - 1));
    if (held_fmg())
        for (int l = 1; l <= top; ++l) {
            const GenCoarse<T> a = held_pair(l - 1);
            const T *src = l == 1 ? lv[0].u : lv[l - 1].t;
            const unsigned blocks = grid_for((int64_t)lv[l].npts, e.sms);
            held_values_kernel<T><<<blocks, 256, 0, e.st>>>(a, src, lv[l].t);
            PGPU_LAUNCHED();
            held_terms_kernel<T><<<blocks, 256, 0, e.st>>>(a, src, lv[l].t, lv[l].f);
            PGPU_LAUNCHED();
        }
    // The coarsest interior starts from zero; its ghosts hold the data.
    Level<T> &B = lv[top];
    B.cur = 0;
    PGPU_FORWARD(axpby(e, B.g, B.col, T(0), T(0), (const T *)nullptr, T(0), (const T *)nullptr, B.u));
    if (held_fmg()) PGPU_CUDA(cudaMemsetAsync(B.t, 0, (size_t)B.elems * sizeof(T), e.st)); // (its values: unused)
    PGPU_FORWARD(cycle(top));
    for (int l = top - 1; l >= 1; --l) {
        Level<T> &C = lv[l + 1];
        PGPU_FORWARD(fmg_interpolate(l));
        // Level l+1 becomes a correction level: zero ghosts from here on.
        // (Its interiors are written before they are read: the cycle zeroes
        // u or interpolates into it; t takes residuals and prolongations.)
        if (h->data_faces) PGPU_FORWARD(frame(e, C.g, (const T *)nullptr, C.u, C.t, all_faces));
        PGPU_FORWARD(cycle(l));
    }
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Multigrid<T>::fmg_finish()
{
    Env &e = *env;
    std::vector<Level<T>> &lv = h->lv;
    if (lv.size() == 1) { // one node: its cycle solves it, from zero (FMG reads no initial guess)
        Level<T> &L = lv[0];
        PGPU_FORWARD(axpby(e, L.g, L.col, T(0), T(0), (const T *)nullptr, T(0), (const T *)nullptr, L.iter()));
        return cycle(0);
    }
    Level<T> &L = lv[0], &C = lv[1];
    PGPU_FORWARD(fmg_interpolate(0));
    if (h->data_faces) PGPU_FORWARD(frame(e, C.g, (const T *)nullptr, C.u, C.t, L.g.is3d ? 63 : 15));
    return cycle(0, 2);
}

// On slab levels (dist.h): f with the neighbours' planes (level 0's f is
// the caller's: a copy in t, whose ghosts hold the boundary data), and the
// data restricted across the global faces only; the coarse boundary data's
// ghost lines in the planes between ranks exchanged (the neighbours' face
// ghosts there: a restriction row or a cubic tap one node across reads
// them), or, on the first replicated level, every rank's planes broadcast.
// The general form restricts b instead (see fmg_coarse).
template <class T> pgpu_status Multigrid<T>::fmg_restrict(int l)
{
    Env &e = *env;
    Level<T> &F = h->lv[l], &C = h->lv[l + 1];
    const bool data = h->data_faces && !gen;
    if (gen && l == 0) {
        PGPU_FORWARD(h->general_rhs(e, F.other(), !held_fmg()));
        return F.down.restrict_(e, F.other(), nullptr, C.f, true);
    }
    if (!F.route.slab) {
        PGPU_FORWARD(F.down.restrict_(e, F.f, gen ? nullptr : F.shift, C.f, true));
        return data ? F.down.restrict_ghosts(e, F.u, C.u, C.t) : PGPU_SUCCESS;
    }
    T *f = F.f, *ub = F.u;
    if (l == 0) {
        PGPU_FORWARD(axpby(e, F.g, F.col, T(0), T(1), (const T *)F.f, T(0), (const T *)nullptr, F.t));
        f = ub = F.t;
    }
    PGPU_FORWARD(dist_halo(e, F.g, f, l == 0 && data));
    PGPU_FORWARD(F.down.restrict_(e, f, F.shift, C.f, true));
    const bool last = !C.route.slab;
    if (last) PGPU_FORWARD(dist_gather(e, C.g, C.f));
    if (!data) return PGPU_SUCCESS;
    PGPU_FORWARD(F.down.restrict_ghosts(e, ub, C.u, C.t, 63 & ~dist_faces(*e.dist)));
    if (!last) return dist_halo(e, C.g, C.u, true);
    PGPU_FORWARD(dist_gather(e, C.g, C.u, true));
    return dist_gather(e, C.g, C.t, true);
}

// Edge and corner ghosts first (where C has two Dirichlet faces); a slab
// C's planes between ranks, ghost lines included, from the neighbours
// (which made their own edges), not extrapolated.
template <class T> pgpu_status Multigrid<T>::fmg_interpolate(int l)
{
    Env &e = *env;
    Level<T> &L = h->lv[l], &C = h->lv[l + 1];
    const bool slab = C.route.slab;
    Grid<T> g = C.g;
    if (slab) g.dirichlet &= ~dist_faces(*e.dist);
    L.cur = 0;
    if (g.dirichlet) PGPU_FORWARD(edge_ghosts(e, g, C.iter()));
    if (slab) PGPU_FORWARD(dist_halo(e, C.g, C.iter(), true));
    // With held points: the caller's values at C's Dirichlet points, from
    // level l's (its t, or the caller's u), for the interpolation to read;
    // then 0 in C's iterate and in l's t (C becomes a correction level, and
    // l's cycle comes next: zero data).
    const bool held = held_fmg();
    char *err = e.err;
    if (held) {
        held_values_kernel<T><<<grid_for((int64_t)C.npts, e.sms), 256, 0, e.st>>>(held_pair(l), l ? L.t : L.u,
                                                                                   C.iter());
        PGPU_LAUNCHED();
    }
    if (centre && red) PGPU_FORWARD(subtract_mean(e, *red, C.g, C.col, C.iter(), C.npts));
    PGPU_FORWARD(L.down.interpolate(e, C.iter(), L.u));
    if (held) {
        PGPU_CUDA(cudaMemsetAsync(C.iter(), 0, (size_t)C.elems * sizeof(T), e.st));
        if (l) PGPU_CUDA(cudaMemsetAsync(L.t, 0, (size_t)L.elems * sizeof(T), e.st));
    }
    return PGPU_SUCCESS;
}

template <class T> GenCoarse<T> Multigrid<T>::held_pair(int l) const
{
    GenCoarse<T> a{};
    a.f = h->lv[l].g;
    a.c = h->lv[l + 1].g;
    a.scale = h->gen.beta;
    for (int d = 0; d < 3; ++d) {
        a.ax[d] = h->gen.coarse[(size_t)l].ax[d];
        a.wk[d] = h->gen.coarse[(size_t)l].wk[d];
    }
    return a;
}

template <class T> double Multigrid<T>::global_points(int l) const
{
    const Level<T> &L = h->lv[l];
    if (!L.route.slab) return L.npts;
    const double N = (double)env->dist->lvN[l];
    return env->dist->axis == 2 ? (double)L.g.nx * L.g.ny * N : (double)L.g.nx * N;
}

// The V/W-cycle and FMG methods on the problem bound to level 0: FMG (one
// pass, then cycles while a tolerance asks for them), or cycles from the
// iterate; checks every `interval` cycles (cv), none with `fixed` (FMG then
// max_iterations - 1 cycles).  The result ends in level 0's u.
// Float V-cycles with the default tolerance (0) stop on the size of the
// coarse-grid correction instead of the residual: once u is close, its
// rounding alone leaves a relative residual of about eps lambda_max /
// lambda_min / 10 (1e-3 at 511^3 with zero boundary data), which hides a
// smooth error far larger than float's rounding; the correction measures
// that error.  Converged when its RMS falls to FLOAT_CORRECTION of u's
// (against an exact discrete solution at 511^3: 5 cycles, max error 6e-7)
// -- a cycle whose correction falls slowly, by f a check, leaves about
// f / (1 - f) times it still to add, and that is what must fall so far --
// or when it is below FLOAT_STALL times that and no longer falls below
// FLOAT_STALL_FALL of the last check's: the smoother's own rounding of u
// keeps it there (255x256x255 with D/N, P/P and N/D faces: 1.09e-6 from
// the 8th cycle on, max error 8.8e-7).
constexpr int FMG_MASK_CYCLES = 2; // V-cycles after the default FMG pass on a mask (solve_fmg_pass)
// ... which leave at most this much of the pass's residual (a rate of about
// 0.3 a cycle; slower, the pass is short of the discretisation error too:
// on masks of solid cells drawn point by point, walls one cell thick and
// small pockets, the pass and two cycles left 0.3 to 20 times ||u|| from
// the exact discrete solution at relative residuals of 1e-3 to 3e-2), else
// more V-cycles follow (solve_fmg_pass)
constexpr double FMG_MASK_FALL = 0.1;
// ... and a relative residual of at most this: where the mask leaves modes
// of small eigenvalue (pockets joined by a channel a cell wide, held points
// far from the rest) the residual hides the error, and two cycles that took
// nine tenths off it still left 0.3 to 8 times ||u|| from the exact discrete
// solution at relative residuals of 2e-4 to 5e-2; at or below 1e-6 the
// fuzzer's masks were within 2.4e-4 of ||u|| (solve_fmg_pass)
constexpr double FMG_MASK_RES = 1e-6;
constexpr double FMG_JUMP_TOL = 1e-8; // FMG's residual tolerance where beta jumps and none is given (run_method)
constexpr double FLOAT_CORRECTION = 0x1p-20;
constexpr double FLOAT_STALL = 8.0;
constexpr double FLOAT_STALL_FALL = 0.8;
constexpr int FLOAT_FLOOR_CHECKS = 2; // (run_multigrid: float on a mask's singular regions)
// Double V-cycles whose residual takes less than a tenth off in
// DOUBLE_FLOOR_CYCLES cycles within DOUBLE_FLOOR_SLACK times the floor of
// the u at hand (rounding_floor) have met double's rounding of u: more
// cycles move neither the residual nor u (a ball of beta 1e6 at 256^3: a
// relative residual of 7.1e-7 and u 5.6e-9 of max |u| from the exact
// discrete solution after 20 cycles, 7.2e-7 and 5.2e-9 after 100).
constexpr int DOUBLE_FLOOR_CYCLES = 5;
constexpr double DOUBLE_FLOOR_FALL = 0.9, DOUBLE_FLOOR_SLACK = 4.0;
// Float Krylov methods' own stop: a true residual up to this many times the
// accepted floor is float's limit, above it not converged.
constexpr double FLOAT_OWN_SLACK = 16.0;
// Float V-cycles' stop on the correction on the box (no mask, no beta):
// the true residual confirms it up to this many times the (*) tolerance.
constexpr double FLOAT_BOX_SLACK = 4.0;
// The relative residual float's own stop accepts: the floor of the
// config, at least what the correction's stall leaves.  Krylov methods
// stop there (up to FLOAT_OWN_SLACK times it); V-cycles that stopped on the
// correction check their residual against FLOAT_OWN_SLACK times it.
inline double float_accept(const Convergence &cv) { return std::max(FLOAT_STALL * FLOAT_CORRECTION, cv.floor); }

// The launch sequences the handle's graph replay (graph.h) captures.
enum ReplayKind {
    REPLAY_SOLVE = 0,
    REPLAY_FMG = 1,
    REPLAY_CYCLE = 2,
    REPLAY_CYCLE_MEASURED = 3,
    REPLAY_FMG_COARSE = 4,
    REPLAY_FMG_FINISH = 5,
    REPLAY_KRYLOV_START = 6,
    REPLAY_KRYLOV_ITER = 7,
    REPLAY_KRYLOV_ITER_ODD = 8, // (unpreconditioned pipelined CG alternates two buffers of w)
    REPLAY_KRYLOV_STEP = 9,     // classic CG's first iteration after a start: the step alone
    REPLAY_FROM_T = 16,         // (added to a cycle's kind) level 0's iterate in its t at the start
    REPLAY_KEEP_U = 32          // (added to a cycle's kind) a cycle that must not leave the array it starts in
};

// (rp: the handle's graph replay; the FMG pass and every cycle run as graphs.)
template <class T, class Rp>
static pgpu_status run_multigrid(Env &e, Reducer &red, Hierarchy<T> &h, Multigrid<T> &mg, Convergence cv, bool fmg,
                                 bool fixed, int interval, pgpu_report &r, Rp *rp)
{
    char *err = e.err;
    Level<T> &L = h.lv[0];
    const void *uk = L.u, *fk = L.f;
    auto pass = [&]() -> pgpu_status {
        int none = 0;
        return rp->run(e, uk, fk, REPLAY_FMG, none, [&] { return mg.fmg_pass(); });
    };
    // A cycle may end in level 0's other array (Multigrid::flip0): its graph
    // is that of the array it starts in, and its replay sets where it ends
    // (settle, below, brings the iterate back to u).  The last of a fixed
    // count does not leave u (a fold saves less than settle's copy costs).
    auto cycle = [&](bool measured, bool last = false) -> pgpu_status {
        int ends = L.cur;
        mg.measure = measured;
        mg.flip0 = !last || L.cur != 0;
        const int kind = (measured ? REPLAY_CYCLE_MEASURED : REPLAY_CYCLE) + (L.cur ? REPLAY_FROM_T : 0) +
                         (mg.flip0 ? 0 : REPLAY_KEEP_U);
        const pgpu_status s = rp->run(e, uk, fk, kind, ends, [&] {
            const pgpu_status q = mg.cycle(0);
            ends = L.cur;
            return q;
        });
        mg.measure = false;
        mg.flip0 = false;
        L.cur = ends;
        return s;
    };
    PGPU_FORWARD(frame(e, L.g, (const T *)L.u, L.t, L.x, h.data_faces)); // boundary data in every iterate
    const int maxit = cv.max_it;
    int it = 0;
    pgpu_status result = PGPU_SUCCESS;
    bool iterate = true;
    if (fmg) {
        PGPU_FORWARD(pass());
        iterate = cv.rule != Stop::ONCE && !fixed;
        if (fixed) {
            for (int k = 1; k < maxit; ++k) PGPU_FORWARD(cycle(false, k == maxit - 1));
            it = maxit - 1;
        }
    } else if (fixed) {
        for (int k = 0; k < maxit; ++k) PGPU_FORWARD(cycle(false, k == maxit - 1));
        it = maxit;
        iterate = false;
    }
    // A mask's singular regions: the correction carries a constant per
    // region that no cycle removes (each region's coarse problems are
    // singular, their right-hand sides not quite in range) and that changes
    // u only by constants, so its size says nothing there (a float W-cycle
    // on a closed tank kept a correction of 2.5e-4 of u for 200 cycles at a
    // relative residual of 5e-8).  The residual decides instead (`fall`):
    // the cycles go on while it falls, and end where it falls less than
    // 5% per cycle within `bound` (a closed tank at 512^3 crept along
    // float's rounding from 1.13e-3 to 1.06e-3 over five more cycles when
    // only a rise ended it; the documented slow cases, a Dirichlet cell
    // apart in the fluid or a beta inclusion, crawl at 0.95-0.99 and stop
    // there too), or less than twofold below 2^-20 at FLOAT_FLOOR_CHECKS
    // checks in a row (ending below float_accept instead stopped a slow
    // mask at 1.7e-5 with an error of 5e-3; at the first such check, u's
    // rounding, which the residual then shows, still hid a smooth error
    // that the next cycles remove).
    const bool own = iterate && !fmg && cv.own();
    const bool fall = own && h.lv.size() > 1 && h.gen.mask && h.gen.regions > 0;
    const bool by_correction = own && h.lv.size() > 1 && !fall;
    if (fall) cv.tol = 0; // (judge meets no tolerance there: the fall decides, below)
    // A single level (one node) is solved exactly by its cycle: float's own
    // stop has nothing to measure and nothing left after one cycle.
    const bool one_node = own && h.lv.size() == 1;
    if (one_node) {
        PGPU_FORWARD(cycle(false));
        it = 1;
        iterate = false;
    }
    // reported: the report's norms hold the end's residual; verify: the
    // residual confirms a stop on the correction (below)
    bool residual_stop = false, reported = false, verify = false;
    const double bound0 = FLOAT_OWN_SLACK * float_accept(cv);
    double bound = bound0;
    // With a mask or beta the grid's floor may lie far above what float
    // reaches (a pocket held by one Dirichlet cell: float V-cycles crawling
    // at 0.95 a cycle, where double's stall, stopped at a relative residual
    // of 2.8e-4 with 1e-2 to 0.85 of ||u*|| left; float CG reached 2e-6
    // there): the floor of the u at hand, measured again wherever a stop is
    // decided, bounds it (measured once, where a stop first came in sight,
    // an iterate still 5 times the size of the u returned let a float FMG on
    // a mask of random solid cells end at 1.0e-5 with 0.9 of max |u| left).
    // A singular problem's iterate (beta, no mask) may carry a
    // constant several times its size (a periodic 2D grid around a 1e3 ball:
    // u's floor with it 4 times that of the u returned, which let a stop at
    // 1.0e-5 pass against 2.6e-6 after the mean is out): the mean goes out
    // of u first, as the solve's end takes it out anyway.
    const bool own_floor = std::is_same<T, float>::value && h.gen.on() && cv.lmax > 0;
    // The floor of the u at hand for rounding eps (rounding_floor; 0 where
    // u or b is 0 or u not finite).
    auto u_floor = [&](double eps, double &fu) -> pgpu_status {
        PGPU_FORWARD(red.dot(e, L.g, L.col, (const T *)L.iter(), (const T *)nullptr, RES_CORR));
        PGPU_FORWARD(red.fetch(e, RES_CORR, 3));
        const double un = std::sqrt(red.h_res[RES_CORR + 1]);
        fu = un > 0 && cv.rhs_norm > 0 ? rounding_floor(eps, cv.lmax, cv.rhs_norm / un) : 0.0;
        return PGPU_SUCCESS;
    };
    auto tighten = [&]() -> pgpu_status {
        if (!own_floor) return PGPU_SUCCESS;
        if (h.singular) PGPU_FORWARD(subtract_mean(e, red, L.g, L.col, L.iter(), L.npts));
        double fu = 0;
        PGPU_FORWARD(u_floor(FLOAT_EPS, fu));
        bound = fu > 0 ? std::min(bound0, FLOAT_OWN_SLACK * fu) : bound0; // (not where u is 0 or not finite)
        return PGPU_SUCCESS;
    };
    double last_rn = HUGE_VAL; // verify, fall: the residual at the previous check, after last_it cycles
    int last_it = 0;
    if (by_correction) {
        double last = HUGE_VAL;
        for (;;) {
            const int n = std::min(interval, maxit - it);
            for (int k = 0; k < n; ++k) PGPU_FORWARD(cycle(k == n - 1));
            it += n;
            PGPU_FORWARD(red.fetch(e, RES_CORR, 3));
            if (red.h_res[RES_CORR] == 0 && red.h_res[RES_CORR + 1] > 0) {
                // The coarse levels carried no correction at all (one node
                // of a singular problem, whose constant is left out; a mask
                // with no fluid coarse point): the cycle is smoothing alone
                // and its correction says nothing; the residual decides, at
                // float's floor as for Jacobi and RBGS (the monitor hears
                // of this check from judge, once); on the box a residual
                // that stops falling within FLOAT_BOX_SLACK times it is
                // float's limit there (a 1 x 2 Neumann grid stalled at 1.1
                // times it).
                residual_stop = true;
                if (!h.gen.on()) {
                    verify = true;
                    bound = FLOAT_BOX_SLACK * float_own_tolerance(cv.floor);
                }
                break;
            }
            const double ratio = std::sqrt(red.h_res[RES_CORR] / red.h_res[RES_CORR + 1]);
            cv.tell(it, NAN, ratio);
            if (!std::isfinite(red.h_res[RES_CORR]) || !std::isfinite(red.h_res[RES_CORR + 1])) {
                result = record(err, PGPU_ERROR_BREAKDOWN, "multigrid: the correction became %g after %d cycles",
                                red.h_res[RES_CORR], it);
                break;
            }
            // What the cycles have left to add: this correction times
            // q / (1 - q), q its fall since the last check (a slow cycle
            // leaves several times its correction).
            const double q = ratio / last, left = q < 1 ? ratio * std::max(1.0, q / (1 - q)) : ratio;
            if (left <= FLOAT_CORRECTION || red.h_res[RES_CORR + 1] == 0 ||
                (ratio <= FLOAT_STALL * FLOAT_CORRECTION && ratio > FLOAT_STALL_FALL * last))
                break;
            last = ratio;
            if (it >= maxit) {
                result = record(err, PGPU_ERROR_NOT_CONVERGED,
                                "multigrid: the last correction is %.2e of u (RMS) after %d cycles, float's rounding "
                                "is %.2e",
                                ratio, it, FLOAT_CORRECTION);
                break;
            }
        }
        // With a mask or beta the correction may stay small while the
        // error does not (a mode the coarse levels barely correct, such as
        // a pocket held by one Dirichlet cell: a float V-cycle stopped at a
        // relative residual of 2.4e-3).  The true residual, which the
        // report takes anyway, decides there: above `bound`, FLOAT_OWN_SLACK
        // times float's floor (the Krylov methods' own stop), the cycles go
        // on as for the stop on the residual, until the residual no longer
        // falls (float's rounding); where it then ends above the bound, the
        // solve has not converged.  On the box the correction may mislead
        // too, where the coarse levels see little of the error (a 3 x 3 x 3
        // grid with an odd periodic axis, whose coarse ring is not nested,
        // stopped after 5 cycles at 7.7e-5, 6.5e-5 of ||u*|| off; 6 more
        // cycles took it to 7.6e-6): its bound is FLOAT_BOX_SLACK times the
        // (*) tolerance, which the box's cycles meet by far (float's
        // rounding of a smooth u gives about the (*) floor).
        if (result == PGPU_SUCCESS && !residual_stop) {
            double rn = 0, rmax = 0;
            PGPU_FORWARD(h.norm(e, red, rn, rmax));
            cv.measured(rn, rmax, r);
            if (h.gen.on())
                PGPU_FORWARD(tighten());
            else
                bound = FLOAT_BOX_SLACK * float_own_tolerance(cv.floor);
            if (!std::isfinite(rn))
                result = record(err, PGPU_ERROR_BREAKDOWN, "multigrid: the residual became %g after %d cycles", rn, it);
            else if (!(r.relative_residual <= bound))
                residual_stop = verify = true;
            else
                reported = true;
        }
        if (verify) cv.tol = std::min(cv.tol, bound); // (residual_stop: cv.tol, the (*) tolerance)
        iterate = residual_stop;
    }
    // Float on a mask's singular regions: u drifts along each region's
    // constant by what the cycles add there (a W-cycle on a closed tank
    // stalled at a relative residual of 1.7e-2 against 1.1e-4, its u's
    // rounding grown with the drift), so each check takes the regions'
    // means out first (three passes over the labels and u, 4 ms at 512^3
    // against a cycle of 14-22 ms there; double keeps 10^4-fold drifts
    // harmless and the cost).
    const bool drift = std::is_same<T, float>::value && h.gen.mask && h.gen.regions > 0;
    // In double the regions' means go out where a stop comes (the solve's
    // end takes them out, and with beta's 1e6 jumps that alone raised a
    // relative residual of 6.8e-9 to 1.8e-8 against a tolerance of 1e-8):
    // the stop is judged on u as returned; the cycles go on where that is
    // above the tolerance, once (a second time it is this problem's rounding:
    // NOT_CONVERGED).
    const bool end_projection = !drift && h.gen.mask && h.gen.regions > 0 && cv.rule == Stop::TOLERANCE;
    int projected_misses = 0;
    int floor_checks = 0; // fall: checks in a row at float's floor
    // (double: the residual at the last tenth it fell by, and the cycles since)
    const bool floor_watch = std::is_same<T, double>::value && iterate && cv.rule == Stop::TOLERANCE && cv.lmax > 0 &&
                             !e.dist;
    double floor_mark = HUGE_VAL;
    int floor_since = 0;
    bool at_floor = false;
    for (bool stop = !iterate; !stop;) {
        double rn = 0, rmax = 0;
        if (drift) PGPU_FORWARD(h.project(e, (const T *)L.iter(), (const T *)L.iter(), 0, L.iter()));
        PGPU_FORWARD(h.norm(e, red, rn, rmax));
        cv.judge(err, rn, rmax, it, "multigrid", "cycles", r, stop, result);
        if (stop && result == PGPU_SUCCESS && end_projection) {
            const double before = r.relative_residual;
            PGPU_FORWARD(h.project(e, (const T *)L.iter(), (const T *)L.iter(), 0, L.iter()));
            PGPU_FORWARD(h.norm(e, red, rn, rmax));
            cv.measured(rn, rmax, r);
            if (!(r.relative_residual <= cv.tol)) {
                if (++projected_misses < 2 && it < maxit)
                    stop = false;
                else
                    result = record(err, PGPU_ERROR_NOT_CONVERGED,
                                    "multigrid: relative residual %.3e after %d cycles with the singular regions' "
                                    "constants taken out (%.3e before), tolerance %.3e",
                                    r.relative_residual, it, before, cv.tol);
            }
        }
        // (the stop on the residual where the coarse levels carry nothing:
        // with a mask or beta u's own floor bounds it as well)
        if (stop && result == PGPU_SUCCESS && residual_stop && !verify && own_floor) {
            PGPU_FORWARD(tighten());
            if (!(r.relative_residual <= bound)) cv.tol = bound, verify = true, stop = false;
        }
        if (fall) {
            // the fall per cycle (checks may be several cycles apart)
            const double rel = r.relative_residual, per = std::pow(rn / last_rn, 1.0 / std::max(1, it - last_it));
            if (rel <= bound0) PGPU_FORWARD(tighten());
            floor_checks = rel <= FLOAT_CORRECTION && per > 0.5 ? floor_checks + 1 : 0;
            const bool done = (rel <= bound && per > 0.95) || floor_checks >= FLOAT_FLOOR_CHECKS;
            if (done || (stop && result == PGPU_ERROR_NOT_CONVERGED && rel <= bound)) {
                result = PGPU_SUCCESS;
                err[0] = 0;
                break;
            }
            if (stop && result == PGPU_ERROR_NOT_CONVERGED)
                result = record(err, PGPU_ERROR_NOT_CONVERGED,
                                "multigrid: relative residual %.3e after %d cycles, above float's limit %.3e for "
                                "this grid",
                                rel, it, bound);
        }
        if (verify && (stop || !(rn < last_rn))) {
            PGPU_FORWARD(tighten());
            if (r.relative_residual <= bound) {
                result = PGPU_SUCCESS;
                err[0] = 0;
                break;
            }
            // (u's floor, measured again, may lie below the tolerance just
            // met: a residual still falling goes on to it)
            if (result == PGPU_SUCCESS && rn < last_rn && it < maxit) {
                cv.tol = bound;
                stop = false;
            } else {
                if (result == PGPU_SUCCESS)
                    result = record(err, PGPU_ERROR_NOT_CONVERGED,
                                    "multigrid: the residual stopped falling at a relative %.3e after %d cycles, "
                                    "above float's limit %.3e for this grid",
                                    r.relative_residual, it, bound);
                break;
            }
        }
        if (floor_watch && !stop) {
            if (rn < DOUBLE_FLOOR_FALL * floor_mark) {
                floor_mark = rn;
                floor_since = 0;
            } else if ((floor_since += it - last_it) >= DOUBLE_FLOOR_CYCLES) {
                double fu = 0;
                PGPU_FORWARD(u_floor(DOUBLE_EPS, fu));
                if (r.relative_residual <= DOUBLE_FLOOR_SLACK * fu) {
                    result = record(err, PGPU_ERROR_NOT_CONVERGED,
                                    "multigrid: the residual stopped falling at a relative %.3e after %d cycles, "
                                    "the rounding of u for this operator (a quarter of eps lambda_max ||u|| / ||b|| "
                                    "= %.1e): the tolerance %.3e is below what double can reach here",
                                    r.relative_residual, it, fu, cv.tol);
                    at_floor = true;
                    break;
                }
                floor_mark = rn;
                floor_since = 0;
            }
        }
        last_rn = rn;
        last_it = it;
        if (stop) break;
        const int n = std::min(interval, maxit - it);
        for (int k = 0; k < n; ++k) PGPU_FORWARD(cycle(false));
        it += n;
    }
    if (!fixed && !reported && (by_correction || one_node || (fmg && cv.rule == Stop::ONCE))) { // the report's norms of what was reached
        double rn = 0, rmax = 0;
        PGPU_FORWARD(h.norm(e, red, rn, rmax));
        cv.measured(rn, rmax, r);
        if (!std::isfinite(rn) && result == PGPU_SUCCESS)
            result = record(err, PGPU_ERROR_BREAKDOWN, "multigrid: the residual became %g", rn);
    }
    if ((result == PGPU_ERROR_NOT_CONVERGED || result == PGPU_ERROR_BREAKDOWN) && h.gen.on() && !at_floor) {
        const size_t n = strlen(err);
        snprintf(err + n, ERR_LEN - n, "; on a mask or beta, PGPU_CG around this cycle (its default preconditioner) "
                                       "often converges where the cycles alone do not");
    }
    r.iterations = it;
    PGPU_FORWARD(h.settle(e));
    return result;
}

} // namespace pgpu
