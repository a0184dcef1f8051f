// level.h -- one level of a solve: its arrays, the one choice of its kernels (its route), its verbs
#pragma once
#include "smooth.h"
#include "interpolate.h"

namespace pgpu {

// Which kernels serve a level's cycle steps, chosen once where the level's
// form is set (route_level, called by Hierarchy::route after build and
// general_apply): its smoother, its residual, the step down (residual and
// restriction), the step up (the coarse correction) and the folds between
// them.  The verbs below (smooth, residual) and Multigrid's steps read the
// route and test no eligibility themselves (smooth.h's beta_tiled and
// beta_resid, Transfer's rr_fused, bt_rr, bt_pro, pl_tile, odi).  Within a
// route the level's data pick the instance: masked or not (g.mk), faces
// from 1 / beta or from the fractions (g.bw), and the column walk's form
// (walk_masked, from Grid::fast / frfast).  Not routed: FMG's
// interpolation and restriction of the data (Transfer::fi_tile, rs_tile,
// chosen inside Transfer), and the one-node solve (jacobi_pass).
enum class ResidRoute : uint8_t {
    WALK,    // residual_kernel's column walk
    BETA,    // beta_tile_kernel's RES walk
    GALERKIN // gal_residual_kernel: a Galerkin level's 27-point rows
};
// Level l's residual restricted into level l+1's right-hand side.
enum class DownRoute : uint8_t {
    SPLIT,   // the residual (ResidRoute), then the restriction (tiled where Transfer::rs_tile)
    FUSED,   // restrict_residual_kernel, one pass (Transfer::rr_fused)
    BETA_RR, // beta_tile_kernel's RR walk (Transfer::bt_rr where the residual's route is BETA)
    ODI,     // the residual, then the operator-dependent restriction (odi.h)
    SLAB     // a slab of several GPUs (dist.h): halos, the residual, the restriction, the gather
};
// The coarse correction added back, out = in + P e.
enum class UpRoute : uint8_t {
    DIRECT, // interp_kernel
    TILED,  // interp_tile_kernel (Transfer::pl_tile)
    ODI     // the operator-dependent prolongation (odi.h)
};
struct LevelRoute {
    SmoothRoute smooth = SmoothRoute::PLAIN;
    ResidRoute resid = ResidRoute::WALK;
    DownRoute down = DownRoute::SPLIT; // (the coarsest level: unused, and up)
    UpRoute up = UpRoute::DIRECT;
    bool paired = false;    // TILE: two red-black iterations a pass where a smoothing asks for two or more
    bool pre_resid = false; // level 0 (BETA, its x allocated): a pre-smoothing's last pass may form the residual
    bool fold = false;      // level 0 (BETA): a post-smoothing's first pass may add the coarse correction
    bool slab = false;      // a slab of several GPUs (dist.h): the cycle exchanges its halos
};

template <class T> struct Level {
    Grid<T> g{};
    T *u = nullptr, *t = nullptr, *f = nullptr; // iterate, second iterate (and residuals), right-hand side
    // Level 0 where its cycles form the residual in the pre-smoothing
    // (route.pre_resid): a third iterate x, which that pass writes (its
    // residual goes to the other array) and the next pass reads, writing u.
    T *x = nullptr;
    bool in_x = false;        // x holds the iterate
    const T *shift = nullptr; // subtracted from f: the mean of a singular user problem (level 0 only)
    int cur = 0;              // which of u (0) / t (1) holds the iterate (where !in_x)
    int64_t elems = 0;        // array length, ghosts included
    double npts = 0;
    ColLaunch col{}, walk{};  // column and walk launches over the level
    ColLaunch rwalk{};        // ... for walks that reduce, and every Krylov walk (reduce_walk_launch)
    SmoothPlan sm{};          // the smoothers' launch shapes and what the level's size allows
    Transfer<T> down{};       // to the next coarser level (unused on the coarsest)
    GalRows<T> gr{};          // a Galerkin level's rows (gr.st NULL: the level's own 7-point form)
    LevelRoute route{};       // the kernels that serve it (route_level)
    T *iter() const { return in_x ? x : cur ? t : u; }
    T *other() const { return in_x || cur ? u : t; }
};

// Level L's route: l its index, slab whether it is a slab of several GPUs,
// last whether it is the coarsest (no transfer).
template <class T> static LevelRoute route_level(const Env &env, const Level<T> &L, int l, bool slab, bool last)
{
    LevelRoute r;
    const Grid<T> &g = L.g;
    const SmoothPlan &p = L.sm;
    r.slab = slab;
    if (L.gr.st) {
        r.smooth = SmoothRoute::GALERKIN;
        r.resid = ResidRoute::GALERKIN;
    } else {
        r.smooth = beta_tiled(env, g, p)  ? SmoothRoute::BETA
                   : p.tile && g.fx       ? SmoothRoute::TILE_FR
                   : p.tile               ? SmoothRoute::TILE
                                          : SmoothRoute::PLAIN;
        r.paired = r.smooth == SmoothRoute::TILE && p.paired;
        r.resid = beta_tiled(env, g, p, true) ? ResidRoute::BETA : ResidRoute::WALK;
    }
    if (last) return r;
    const Transfer<T> &x = L.down;
    r.down = slab                                        ? DownRoute::SLAB
             : x.odi                                     ? DownRoute::ODI
             : x.rr_fused                                ? DownRoute::FUSED
             : x.bt_rr && r.resid == ResidRoute::BETA    ? DownRoute::BETA_RR
                                                         : DownRoute::SPLIT;
    r.up = x.odi ? UpRoute::ODI : x.pl_tile ? UpRoute::TILED : UpRoute::DIRECT;
    r.pre_resid = l == 0 && !slab && L.x && !x.odi && beta_resid(env, g, p);
    r.fold = l == 0 && !slab && x.bt_pro && !x.odi && r.smooth == SmoothRoute::BETA;
    return r;
}

// ---- the verbs ----
// `iters` iterations of the smoother (Jacobi, or red-black with the colour
// order `flip`) from the level's iterate, ping-ponging between u and t:
// two red-black iterations per pass where the route pairs them.  fold: the
// next coarser level's correction, added to the iterate by the first pass
// (red-black, where route.fold).  resid: the last pass (red-black, where
// route.pre_resid) writes the iterate into L.x and its residual into the
// other array; a pass from x writes u.
template <class T>
static pgpu_status smooth(Env &env, Level<T> &L, bool jacobi, int iters, T omega, int flip = 0,
                          const T *fold = nullptr, bool resid = false)
{
    if (L.route.smooth == SmoothRoute::GALERKIN) { // colour by colour, in place (colour order reversed by flip)
        char *err = env.err;
        if (L.npts <= GAL_BLOCK_NODES) { // (a small one in one block)
            if (iters > 0)
                gal_colours_block_kernel<T><<<1, GAL_BLOCK_THREADS, 0, env.st>>>(L.g, L.gr, L.iter(), (const T *)L.f,
                                                                                 iters, flip);
            PGPU_LAUNCHED();
            return PGPU_SUCCESS;
        }
        const int nc = L.g.is3d ? 8 : 4;
        for (int s = 0; s < iters; ++s)
            for (int c = 0; c < nc; ++c) {
                const int colour = flip ? nc - 1 - c : c;
                if ((colour & 1) >= L.g.nx || (colour >> 1 & 1) >= L.g.ny || (colour >> 2 & 1) >= L.g.nz)
                    continue; // (no node of that colour)
                launch(gal_colour_launch(L.g, colour), 0, env.st, gal_colour_kernel<T>, L.g, L.gr, L.iter(),
                       (const T *)L.f, colour);
                PGPU_LAUNCHED();
            }
        return PGPU_SUCCESS;
    }
    for (int s = 0; s < iters;) {
        const int n = !jacobi && !(s == 0 && fold) && !resid && L.route.paired && iters - s >= 2 ? 2 : 1;
        if (resid && s + n == iters) {
            PGPU_FORWARD(rb_pass_resid(env, L.g, L.sm, L.iter(), L.x, L.other(), L.f, L.shift, omega, flip));
            L.in_x = true;
            s += n;
            continue;
        }
        if (s == 0 && fold)
            PGPU_FORWARD(rb_pass_folded(env, L.g, L.sm, L.down.cg, L.down.w2, fold, L.iter(), L.other(), L.f,
                                        L.shift, omega, flip));
        else if (jacobi) PGPU_FORWARD(jacobi_pass(env, L.g, L.sm, L.iter(), L.other(), L.f, L.shift, omega));
        else PGPU_FORWARD(rb_pass(env, L.g, L.sm, L.route.smooth, n, L.iter(), L.other(), L.f, L.shift, omega, flip));
        L.cur = L.in_x ? 0 : L.cur ^ 1;
        L.in_x = false;
        s += n;
    }
    return PGPU_SUCCESS;
}

// Passes over the arrays that smooth() makes for `iters` iterations.
template <class T> static int smooth_passes(const Level<T> &L, bool jacobi, int iters)
{
    if (L.route.smooth == SmoothRoute::GALERKIN) return 0;
    return !jacobi && L.route.paired ? iters / 2 + iters % 2 : iters;
}

// r = f - shift - A u on a level, stored in the layout of u, by its route.
template <class T> static pgpu_status residual(Env &env, const Level<T> &L, const T *u, T *r)
{
    char *err = env.err;
    switch (L.route.resid) {
    case ResidRoute::GALERKIN: launch(L.walk, 0, env.st, gal_residual_kernel<T>, L.g, L.gr, u, (const T *)L.f, r); break;
    case ResidRoute::BETA:
        launch(L.sm.bt, BetaTile<T>::SMEM, env.st, beta_tile_kernel<T, true, false>, L.g, u, r, (const T *)L.f, L.shift,
               T(0), 0, Grid<T>{}, Xfer<T>{}, (const T *)nullptr, Windows<T>{}, (T *)nullptr);
        break;
    case ResidRoute::WALK:
        walk_masked(L.g, [&](auto mk) {
            launch(L.walk, 0, env.st, residual_kernel<T, true, false, T, decltype(mk)::value>, L.g, u,
                   (const T *)L.f, L.shift, r, (double *)nullptr);
        });
        break;
    }
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

} // namespace pgpu
