// smooth.h -- how a level is smoothed: SmoothPlan and the passes
#pragma once
#include "smooth_kernels.h"
#include "smooth_tile.h"
#include "smooth_beta.h"

namespace pgpu {

// The red-black kernel a level takes (level.h's route_level chooses it).
enum class SmoothRoute : uint8_t {
    PLAIN,   // rbgs_kernel: any level
    TILE,    // rbgs_tile_kernel on a uniform 3D level (two iterations a pass where paired)
    TILE_FR, // ... with face fractions (a mask's or beta's levels): one iteration a pass
    BETA,    // beta_tile_kernel: beta alone, faces from 1 / beta (g.bw) or from the fractions
    GALERKIN // a Galerkin level (odi.h): colour by colour, in place
};

// What a level's size and form allow its smoothers, and their launch shapes.
struct SmoothPlan {
    bool tile = false;   // the tiled red-black kernels may serve the level
    bool paired = false; // ... rbgs_tile_kernel with two iterations a pass
    bool large = false;  // 2^22 points or more (PAIRED_MIN; also beta_tiled's from 1 / beta)
    bool mid = false;    // BETA_FR_MIN points or more (beta_tiled's from the fractions)
    ColLaunch rb, rbt, rbt2, sweep, bt, bts; // bt: beta_tile_kernel's (where beta_tiled); bts: its RS
};

// uniform: the level's table is (Grid::fast before face fractions came);
// with fractions the tile kernel takes one iteration per pass.
template <class T> static SmoothPlan smooth_plan(const Grid<T> &g, double npts, int sms, bool uniform)
{
    SmoothPlan p;
    const bool is3d = g.is3d != 0;
    p.tile = uniform && is3d && !g.px && !g.py && !g.pz && g.nz >= 4;
    p.large = npts >= PAIRED_MIN;
    p.mid = npts >= BETA_FR_MIN;
    p.paired = p.tile && !g.fx && p.large;
    p.rb = col_launch(g.nx, g.ny, g.nz, is3d, RB_OX, RB_OY, RB_TX, RB_BY, sms);
    typedef RbTile<T, 1> T1;
    typedef RbTile<T, 2> T2;
    p.rbt = col_launch(g.nx, g.ny, g.nz, is3d, T1::OX, T1::OY, T1::TX, T1::BY, sms, T1::PER_SM);
    p.rbt2 = col_launch(g.nx, g.ny, g.nz, is3d, T2::OX, T2::OY, T2::TX, T2::BY, sms, T2::PER_SM);
    p.sweep = walk_launch(g.nx, g.ny, g.nz, is3d, Tune<T>::sweep_group);
    typedef BetaTile<T> BT;
    p.bt = col_launch(g.nx, g.ny, g.nz, is3d, BT::OX, BT::OY, BT_TX, BT::BY, sms, Tune<T>::bt_per_sm);
    // RS (one block an SM): of the z chunks for bt_per_sm and twice that,
    // the ones whose last round of blocks is fuller, less the planes a chunk
    // walks past its own (about four).  Smooth beta V(2,1), double, H200,
    // per cycle against bt_per_sm alone: 512^3 (3 chunks of 171 planes, 11
    // rounds, against 2 of 256, 7.1 rounds) 9.88 -> 9.68 ms, 384^3 4.76 ->
    // 4.65; twice bt_per_sm at 256^3 1.68 -> 1.69, 203^3 1.031 -> 1.037.
    {
        double best = -1;
        for (int per : {Tune<T>::bt_per_sm, 2 * Tune<T>::bt_per_sm}) {
            const ColLaunch L = col_launch(g.nx, g.ny, g.nz, is3d, BT::OX_RS, BT::OY_RS, BT_TX, BT::BY, sms, per);
            const double rounds = (double)blocks_of(L) / std::max(sms, 1), full = rounds / std::ceil(rounds);
            const double score = full * L.kchunk / (L.kchunk + 4.0);
            if (score > best) {
                best = score;
                p.bts = L;
            }
        }
    }
    return p;
}

// The red-black kernels' shared-memory opt-in (once per handle).
template <class T> static pgpu_status smooth_setup(Env &env)
{
    char *err = env.err;
    PGPU_CUDA(cudaFuncSetAttribute(rbgs_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)rbgs_smem_bytes<T>()));
    PGPU_CUDA(cudaFuncSetAttribute(rbgs_tile_kernel<T, 1, true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)frac_smem_bytes<T>()));
    PGPU_CUDA(cudaFuncSetAttribute(rbgs_tile_kernel<T, 1, false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)frac_smem_bytes<T>()));
    if (BetaTile<T>::FIT <= (size_t)env.optin) {
        for (auto fn : {beta_tile_kernel<T, false, false>, beta_tile_kernel<T, true, false>,
                        beta_tile_kernel<T, false, true>})
            PGPU_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)BetaTile<T>::SMEM));
    }
    if constexpr (Tune<T>::bt_pro)
        if (BetaTile<T>::FIT_PRO <= (size_t)env.optin)
            for (auto fn : {beta_tile_kernel<T, false, false, 0, true>, beta_tile_kernel<T, false, true, 0, true>})
                PGPU_CUDA(
                    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)BetaTile<T>::SMEM_PRO));
    if constexpr (Tune<T>::bt_rs)
        if (BetaTile<T>::FIT_RS <= (size_t)env.optin)
            PGPU_CUDA(cudaFuncSetAttribute(beta_tile_kernel<T, false, false, 0, false, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)BetaTile<T>::SMEM_RS));
    if constexpr (Tune<T>::bt_rr)
        if (BetaTile<T>::FIT_RR <= (size_t)env.optin)
            for (auto fn : {beta_tile_kernel<T, true, false, 3>, beta_tile_kernel<T, true, false, 4>})
                PGPU_CUDA(
                    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)BetaTile<T>::SMEM_RR));
    return PGPU_SUCCESS;
}

// Level g (plan p) smoothed by beta_tile_kernel: a uniform 3D level of
// beta alone, from 1 / beta where it has it (level 0), else from its
// fractions from BETA_FR_MIN points (512^3's level 1, ncu: a pass float 0.29
// -> 0.265 ms, double 0.535 -> 0.45; small grids' cycles took longer with it
// and the residual on every level).  res: its residual formed so, on level
// 0 where large (the column walk took less on coarse levels and small
// grids: 512^3's level 1 float 0.20 against 0.30 ms, double 0.32 against
// 0.44; a 203^3 float cycle 0.73 ms with the walk, 0.78 with this and
// 16 blocks an SM).  Float's cycles restrict that residual in the same walk
// where the transfer allows it (Transfer::bt_rr, Multigrid::down).
template <class T> static bool beta_tiled(const Env &env, const Grid<T> &g, const SmoothPlan &p, bool res = false)
{
    return p.tile && (g.bw ? p.large || !res : p.mid && !res && g.fx && g.fy && g.fz) && !g.mk && !env.dist &&
           BetaTile<T>::FIT <= (size_t)env.optin;
}

// ... and a pass of it that also forms the residual (RS, from 1 / beta;
// where Tune::bt_rs), on a large 3D level whose RS tiles are at most 1.25
// times the pass's tiles a plane (512^3: 1.21, 203^3: 1.24, faster; 300^3:
// 1.44, a cycle 2.38 -> 2.49 ms).
template <class T> static bool beta_resid_fits(const Env &env, const SmoothPlan &p)
{
    auto tiles = [](const ColLaunch &L) { return (int64_t)L.grid.x * L.nyb; };
    return Tune<T>::bt_rs && p.tile && p.large && !env.dist && BetaTile<T>::FIT_RS <= (size_t)env.optin &&
           tiles(p.bts) * 4 <= tiles(p.bt) * 5;
}
template <class T> static bool beta_resid(const Env &env, const Grid<T> &g, const SmoothPlan &p)
{
    return g.bw && beta_tiled(env, g, p, true) && beta_resid_fits<T>(env, p);
}

// One Jacobi sweep src -> dst.
template <class T>
static pgpu_status jacobi_pass(Env &env, const Grid<T> &g, const SmoothPlan &p, const T *src, T *dst, const T *f,
                               const T *shift, T w)
{
    char *err = env.err;
    walk_masked(g, [&](auto mk) {
        launch(p.sweep, 0, env.st, jacobi_kernel<T, decltype(mk)::value>, g, src, dst, f, shift, w,
               interior_scale(g, w));
    });
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// One pass of `iters` red-black iterations src -> dst by route r (iters 2
// only where the level's route pairs them), first colour flipped by `flip`.
template <class T>
static pgpu_status rb_pass(Env &env, const Grid<T> &g, const SmoothPlan &p, SmoothRoute r, int iters, const T *src,
                           T *dst, const T *f, const T *shift, T w, int flip)
{
    char *err = env.err;
    switch (r) {
    case SmoothRoute::BETA:
        launch(p.bt, BetaTile<T>::SMEM, env.st,
               g.bw ? beta_tile_kernel<T, false, false> : beta_tile_kernel<T, false, true>, g, src, dst, f, shift, w,
               flip, Grid<T>{}, Xfer<T>{}, (const T *)nullptr, Windows<T>{}, (T *)nullptr);
        break;
    case SmoothRoute::TILE_FR:
        launch(p.rbt, frac_smem_bytes<T>(), env.st,
               g.mk ? rbgs_tile_kernel<T, 1, true, true> : rbgs_tile_kernel<T, 1, false, true>, g, src, dst, f, shift,
               w, flip);
        break;
    case SmoothRoute::TILE:
        if (iters == 2)
            launch(p.rbt2, 0, env.st, g.mk ? rbgs_tile_kernel<T, 2, true> : rbgs_tile_kernel<T, 2, false>, g, src,
                   dst, f, shift, w, flip);
        else
            launch(p.rbt, 0, env.st, g.mk ? rbgs_tile_kernel<T, 1, true> : rbgs_tile_kernel<T, 1, false>, g, src,
                   dst, f, shift, w, flip);
        break;
    default: launch(p.rb, rbgs_smem_bytes<T>(), env.st, rbgs_kernel<T>, g, src, dst, f, shift, w, flip);
    }
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// One red-black pass (src + P e) -> dst on a level routed BETA: the coarse
// correction e of level cg (taps w2) folded in (beta_tile_kernel's PRO,
// where Transfer::bt_pro).
template <class T>
static pgpu_status rb_pass_folded(Env &env, const Grid<T> &g, const SmoothPlan &p, const Grid<T> &cg,
                                  const Windows<T> &w2, const T *e, const T *src, T *dst, const T *f, const T *shift,
                                  T w, int flip)
{
    char *err = env.err;
    if constexpr (Tune<T>::bt_pro) {
        launch(p.bt, BetaTile<T>::SMEM_PRO, env.st,
               g.bw ? beta_tile_kernel<T, false, false, 0, true> : beta_tile_kernel<T, false, true, 0, true>, g, src,
               dst, f, shift, w, flip, cg, Xfer<T>{}, e, w2, (T *)nullptr);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    } else {
        (void)g, (void)p, (void)cg, (void)w2, (void)e, (void)src, (void)dst, (void)f, (void)shift, (void)w, (void)flip;
        return record(err, PGPU_ERROR_UNSUPPORTED, "internal: the folded correction is built for double only");
    }
}

// One red-black pass src -> dst on a level where route.pre_resid, its residual
// f - shift - A dst stored into r as well.
template <class T>
static pgpu_status rb_pass_resid(Env &env, const Grid<T> &g, const SmoothPlan &p, const T *src, T *dst, T *r,
                                 const T *f, const T *shift, T w, int flip)
{
    char *err = env.err;
    if constexpr (Tune<T>::bt_rs) {
        launch(p.bts, BetaTile<T>::SMEM_RS, env.st, beta_tile_kernel<T, false, false, 0, false, true>, g, src, dst, f,
               shift, w, flip, Grid<T>{}, Xfer<T>{}, (const T *)nullptr, Windows<T>{}, r);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    } else {
        (void)g, (void)p, (void)src, (void)dst, (void)r, (void)f, (void)shift, (void)w, (void)flip;
        return record(err, PGPU_ERROR_UNSUPPORTED,
                      "internal: the smoothing pass with its residual is built for double only");
    }
}

} // namespace pgpu
