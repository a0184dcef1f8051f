// general_levels.h -- the general form on every level of a hierarchy
#pragma once
#include "general_coarse.h"
#include "hierarchy.h"

namespace pgpu {

template <class T> pgpu_status Hierarchy<T>::general_alloc(Env &env, bool want_mask, bool want_beta)
{
    char *err = env.err;
    const int nl = (int)lv.size();
    const bool is3d = lv[0].g.is3d != 0;
    const int axes = is3d ? 3 : 2;
    // Each part is done only once all of it is: after a failed allocation
    // (the handle keeps what it had) the next call allocates that part
    // again, and what the failed call took stays the handle's until
    // pgpu_destroy.
    if (!gen.built) {
        gen.mk.assign(nl, nullptr);
        gen.one.assign(nl, nullptr);
        for (int d = 0; d < 3; ++d) gen.fr[d].assign(nl, nullptr);
        for (int l = 1; l < nl; ++l) {
            const size_t n = (size_t)lv[l].elems;
            const size_t nb = (n + 15) / 16 * 16; // (a multiple of 16 bytes: gen_first_kernel's loads)
            PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.mk[l], nb, "a coarse level's cell types"));
            PGPU_CUDA(cudaMemsetAsync(gen.mk[l], 0, nb, env.st));
            PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.one[l], nb, "a coarse level's unit faces"));
            PGPU_CUDA(cudaMemsetAsync(gen.one[l], 0, nb, env.st));
            for (int d = 0; d < axes; ++d) {
                PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.fr[d][l], n * sizeof(T), "a coarse level's face fractions"));
                PGPU_CUDA(cudaMemsetAsync(gen.fr[d][l], 0, n * sizeof(T), env.st));
            }
        }
        // gen_coarse_kernel's tables: tiles of 30 x 4 x 4 coarse positions
        // (2D: 30 x 8), halved along their longest side while a tile would
        // touch more than 255 fine slots on an axis or need more shared
        // memory than a block may have.
        std::vector<int> iv;
        std::vector<double> wv;
        std::vector<size_t> off; // per level pair and axis: rows, slots (ints), weights (doubles)
        std::vector<size_t> woff; // per level pair and axis: the walk's nodes (ints), distances (doubles),
                                  // the parents (ints), their weights (doubles)
        size_t smem_most = 0;
        unsigned tiles_most = 0;
        gen.coarse.assign((size_t)std::max(nl - 1, 0), {});
        for (int l = 0; l + 1 < nl; ++l) {
            std::vector<int> cnt[3], idx[3];
            for (int d = 0; d < 3; ++d)
                PGPU_RETURN_IF(!path_table(hl[l].ax[d], hl[l + 1].ax[d], hl[l].tr[d].coarsened, cnt[d], idx[d]),
                               PGPU_ERROR_UNSUPPORTED, "masks and coefficients: no fine face under a face of level %d "
                               "along axis %d", l + 1, d);
            int tb[3] = {30, is3d ? 4 : 8, is3d ? 4 : 1}; // halved below; at most FIRST_POS together (checked)
            CoarseAxisHost h[3];
            for (;;) {
                bool ok = true;
                int s[3];
                for (int d = 0; d < 3; ++d) {
                    const int nc = hl[l + 1].ax[d].n, span = d == 2 && !is3d ? 1 : nc + 1;
                    ok = coarse_axis_table(hl[l].ax[d], hl[l].tr[d], cnt[d], idx[d], nc, span, tb[d], h[d]) && ok;
                    s[d] = h[d].smax;
                }
                gen.coarse[(size_t)l].smem = coarse_smem_bytes(tb, s);
                if (ok && gen.coarse[(size_t)l].smem <= (size_t)env.optin) break;
                const int d = (int)(std::max_element(tb, tb + 3) - tb);
                PGPU_RETURN_IF(tb[d] == 1, PGPU_ERROR_UNSUPPORTED,
                               "masks and coefficients: the coarse build of level %d does not fit a block", l + 1);
                tb[d] /= 2;
            }
            PGPU_RETURN_IF(tb[0] + tb[1] + tb[2] > FIRST_POS, PGPU_ERROR_UNSUPPORTED,
                           "masks and coefficients: the coarse build's tiles of level %d are too long", l + 1);
            smem_most = std::max(smem_most, gen.coarse[(size_t)l].smem);
            for (int d = 0; d < 3; ++d) {
                off.push_back(iv.size());
                iv.insert(iv.end(), h[d].row.begin(), h[d].row.end());
                off.push_back(iv.size());
                iv.insert(iv.end(), h[d].slot.begin(), h[d].slot.end());
                iv.resize((iv.size() + 3) / 4 * 4); // the next rows start on 16 bytes
                off.push_back(wv.size());
                wv.insert(wv.end(), h[d].w.begin(), h[d].w.end());
                CoarseAxis &c = gen.coarse[(size_t)l].ax[d];
                c.tb = h[d].tb;
                c.nt = h[d].nt;
                c.by_nt = FastDiv((uint32_t)h[d].nt);
                c.stride = h[d].smax + 1;
                std::vector<int> wk;
                std::vector<double> wx;
                walk_table(hl[l].ax[d], hl[l + 1].ax[d], wk, wx);
                woff.push_back(iv.size());
                iv.insert(iv.end(), wk.begin(), wk.end());
                iv.resize((iv.size() + 3) / 4 * 4);
                woff.push_back(wv.size());
                wv.insert(wv.end(), wx.begin(), wx.end());
                PGPU_RETURN_IF(!parent_table(hl[l].tr[d], hl[l].ax[d].n, hl[l + 1].ax[d].n, wk, wx),
                               PGPU_ERROR_UNSUPPORTED, "masks: a point of level %d has more than %d coarse parents "
                               "along axis %d", l, MAX_PARENTS, d);
                woff.push_back(iv.size());
                iv.insert(iv.end(), wk.begin(), wk.end());
                woff.push_back(wv.size());
                wv.insert(wv.end(), wx.begin(), wx.end());
            }
            gen.coarse[(size_t)l].tiles = (unsigned)((int64_t)h[0].nt * h[1].nt * h[2].nt);
            tiles_most = std::max(tiles_most, gen.coarse[(size_t)l].tiles);
        }
        if (nl > 1) {
            PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.tile_list, (size_t)tiles_most * sizeof(uint32_t),
                                       "the coarse build's tile list"));
            PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.tile_count, (size_t)nl * 2 * sizeof(uint32_t),
                                       "the coarse build's tile and candidate counts"));
        }
        if (!iv.empty()) {
            int *di = nullptr;
            double *dw = nullptr;
            PGPU_FORWARD(env.upload(iv, &di, "the coarse build's tables"));
            PGPU_FORWARD(env.upload(wv, &dw, "the coarse build's weights"));
            for (int l = 0; l + 1 < nl; ++l)
                for (int d = 0; d < 3; ++d) {
                    const size_t *o = &off[((size_t)l * 3 + d) * 3];
                    CoarseAxis &c = gen.coarse[(size_t)l].ax[d];
                    c.row = (const int4 *)(di + o[0]);
                    c.slot = di + o[1];
                    c.w = dw + o[2];
                    const size_t *ow = &woff[((size_t)l * 3 + d) * 4];
                    gen.coarse[(size_t)l].wk[d] = {di + ow[0], dw + ow[1]};
                    gen.coarse[(size_t)l].par[d] = {(const int4 *)(di + ow[2]), dw + ow[3]};
                }
        }
        // The limit belongs to the kernel, shared by every handle of the
        // process: the most a block may have, never one handle's need.
        if (smem_most > 48 * 1024)
            for (auto k : {gen_coarse_kernel<T, false>, gen_coarse_kernel<T, true>})
                PGPU_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, env.optin));
        // The scalars: flags, count, the largest value, region 0's mean (the
        // last two side by side: Solver::read_projection reads them at once).
        char *sc = nullptr;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&sc, 64, "the general form's scalars"));
        PGPU_CUDA(cudaMemsetAsync(sc, 0, 64, env.st));
        gen.flags = (unsigned *)sc;
        gen.count = (uint32_t *)(sc + 8);
        gen.near_count = (uint32_t *)(sc + 12); // read back with count
        gen.maxbits = (unsigned long long *)(sc + 16);
        gen.first = (double *)(sc + 24);
        gen.range = (unsigned long long *)(sc + 32);
        gen.built = true;
    }
    if (want_mask && !gen.mk[0]) {
        const Level<T> &L = lv[0];
        const double npts = L.npts;
        PGPU_RETURN_IF(npts >= 2147483647.0, PGPU_ERROR_UNSUPPORTED,
                       "masks: fewer than 2^31 - 1 interior points (this grid has %.0f)", npts);
        gen.cap = (uint32_t)(npts / 8) + 64;
        // (a multiple of 16 bytes: gen_first_kernel's loads of 16 bytes)
        const size_t mbytes = ((size_t)L.elems + 15) / 16 * 16;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.spare, mbytes, "the mask"));
        PGPU_CUDA(cudaMemsetAsync(gen.spare, PGPU_CELL_FLUID, mbytes, env.st)); // the ghosts
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.lab, (size_t)npts * sizeof(uint32_t), "the region labels"));
        gen.bit_words = (uint32_t)((L.npts + 31) / 32);
        gen.tile_words = (rg_tiles(L.g) + 31) / 32;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.bits,
                                   ((size_t)gen.bit_words * 2 + gen.tile_words) * sizeof(uint32_t), "the region bit sets"));
        const uint32_t nt = near_tiles(L.g);
        gen.near_words = (nt + 31) / 32;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.near_bits, (size_t)gen.near_words * sizeof(uint32_t),
                                   "the near tiles' bit set"));
        PGPU_CUDA(cudaMemsetAsync(gen.near_bits, 0, (size_t)gen.near_words * sizeof(uint32_t), env.st));
        PGPU_FORWARD(
            env.mem.alloc(err, (void **)&gen.near_list, (size_t)nt * sizeof(uint32_t), "the near tiles' list"));
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.sizes, (size_t)gen.cap * sizeof(uint32_t), "the region sizes"));
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.sums, (size_t)gen.cap * 2 * sizeof(long long), "the region sums"));
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.fp, (size_t)L.elems * sizeof(T), "the projected right-hand side"));
        if (!gen.side) PGPU_CUDA(cudaStreamCreateWithFlags(&gen.side, cudaStreamNonBlocking));
        if (!gen.fork) PGPU_CUDA(cudaEventCreateWithFlags(&gen.fork, cudaEventDisableTiming));
        if (!gen.join) PGPU_CUDA(cudaEventCreateWithFlags(&gen.join, cudaEventDisableTiming));
        // last: mk[0] says this part is done
        uint8_t *mk0 = nullptr;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&mk0, mbytes, "the mask"));
        PGPU_CUDA(cudaMemsetAsync(mk0, PGPU_CELL_FLUID, mbytes, env.st));
        gen.mk[0] = mk0;
    }
    if (want_beta && !gen.fr[axes - 1][0]) // (the last array says this part is done)
        for (int d = 0; d < axes; ++d) {
            const size_t n = (size_t)lv[0].elems * sizeof(T);
            PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.fr[d][0], n, "the face coefficients"));
            PGPU_CUDA(cudaMemsetAsync(gen.fr[d][0], 0, n, env.st));
        }
    if (want_beta && lv[0].g.is3d && !gen.bw) {
        const size_t n = (size_t)lv[0].elems * sizeof(T);
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.bw, n, "the coefficients' reciprocals"));
        PGPU_CUDA(cudaMemsetAsync(gen.bw, 0, n, env.st));
    }
    // (a cycle's level 0 where beta_resid)
    if (want_beta && lv.size() > 1 && lv[0].g.is3d && beta_resid_fits<T>(env, lv[0].sm) && !lv[0].x) {
        const size_t n = (size_t)lv[0].elems * sizeof(T);
        PGPU_FORWARD(env.mem.alloc(err, (void **)&lv[0].x, n, "level 0's third iterate"));
        PGPU_CUDA(cudaMemsetAsync(lv[0].x, 0, n, env.st));
    }
    return PGPU_SUCCESS;
}

template <class T> bool Hierarchy<T>::general_apply(Env &env)
{
    const int nl = (int)lv.size();
    const bool on = gen.on();
    bool changed = false;
    // Operator-dependent transfers where beta jumps (odi.h), into a Galerkin
    // level (its arrays allocated: galerkin_alloc), with a mask too (the
    // operator on its fluid points: odi_held); the coarse build takes the
    // series along its paths there (GenCoarse::series), for a level built
    // from it by the geometric rule.  Not across a periodic axis.
    const bool odi = on && gen.beta && gen.jump && !lv[0].g.px && !lv[0].g.py && !lv[0].g.pz;
    auto galerkin = [&](int l) { // level l is a Galerkin one
        return odi && l > 0 && lv[(size_t)l - 1].down.odi_ok && (size_t)l < gen.gst.size() && gen.gst[(size_t)l];
    };
    for (int l = 0; l < nl; ++l) {
        Level<T> &L = lv[l];
        Grid<T> g = L.g;
        g.gen = on;
        // (a Galerkin level has no cell types: every node is an unknown of
        // its rows, those with none held at 0 by them)
        const bool mk = on && gen.mask && !galerkin(l);
        g.mk = mk ? gen.mk[l] : nullptr;
        const T *fr[3];
        for (int d = 0; d < 3; ++d)
            fr[d] = !on || (l == 0 && !gen.beta) || (d == 2 && !g.is3d) ? nullptr : gen.fr[d][l];
        g.fx = fr[0];
        g.fy = fr[1];
        g.fz = fr[2];
        g.bw = on && l == 0 && gen.beta && gen.narrow ? gen.bw : nullptr;
        g.fast = on && (g.fx || g.fy || g.fz) ? 0 : fast_box[l];
        g.frfast = on && g.fx && g.is3d ? fast_box[l] : 0;
        g.shut = mk && shut_ok ? 1 : 0;
        changed = changed || std::memcmp(&g, &L.g, sizeof(g)) != 0;
        L.g = g;
        L.sm = smooth_plan(g, L.npts, env.sms, fast_box[l] != 0);
        if (l < dist_levels) L.sm.paired = L.sm.paired && env.dist->band[l]; // (dist.h) as in build
    }
    lv[0].gr = GalRows<T>{};
    for (int l = 0; l + 1 < nl; ++l) {
        Transfer<T> &x = lv[l].down;
        x.fg = lv[l].g;
        x.cg = lv[l + 1].g;
        x.rr_fused = rr_box[l] && !on;
        x.odi = galerkin(l + 1);
        x.fr = lv[l].gr;
        x.pw = x.odi && x.fr.st && (size_t)l < gen.gpw.size() ? gen.gpw[(size_t)l] : nullptr;
        const Grid<T> &cg = lv[l + 1].g;
        lv[l + 1].gr = x.odi ? GalRows<T>{gen.gst[(size_t)l + 1], (int64_t)lv[l + 1].npts, cg.is3d ? 0 : 9,
                                          gal_pack(cg.nx, cg.ny, cg.is3d ? cg.nz : 1)}
                             : GalRows<T>{};
    }
    singular = singular_box && !gen.mask;
    route(env);
    return changed;
}

template <class T> pgpu_status Hierarchy<T>::general_build(Env &env)
{
    char *err = env.err;
    const int nl = (int)lv.size();
    if (nl > 1) PGPU_CUDA(cudaMemsetAsync(gen.tile_count, 0, (size_t)nl * 2 * sizeof(uint32_t), env.st));
    for (int l = 0; l + 1 < nl; ++l) {
        const Grid<T> &C = lv[l + 1].g;
        const auto &cl = gen.coarse[(size_t)l];
        GenCoarse<T> a;
        a.iso = gen.mask && gen.held ? (uint8_t *)gen.fp : nullptr; // (fp is free until a solve)
        // the candidates' list behind the bytes, where fp holds it
        const size_t at = ((size_t)lv[l + 1].elems + 3) / 4 * 4;
        const bool room = at + (size_t)lv[l + 1].npts * sizeof(uint32_t) <= (size_t)lv[0].elems * sizeof(T);
        a.cand = a.iso && room ? (uint32_t *)((uint8_t *)gen.fp + at) : nullptr;
        a.ncand = gen.tile_count + nl + l;
        a.f = lv[l].g;
        a.c = C;
        if (gen.mask) { // (the geometric levels' cell types, Galerkin levels' too)
            a.f.mk = gen.mk[l];
            a.f.shut = shut_ok ? 1 : 0;
            a.c.mk = gen.mk[l + 1];
            a.c.shut = a.f.shut;
        }
        a.cmk = gen.mask ? gen.mk[l + 1] : nullptr;
        a.cone = gen.mask ? gen.one[l + 1] : nullptr;
        a.fone = gen.mask && l > 0 ? gen.one[l] : nullptr;
        for (int d = 0; d < 3; ++d) {
            a.cf[d] = gen.fr[d][l + 1];
            a.ax[d] = cl.ax[d];
            a.wk[d] = cl.wk[d];
            a.par[d] = cl.par[d];
        }
        // The second pass's grid: the blocks that fit the GPU at once (two
        // per SM), or one per tile; where that is every tile, it takes them
        // all without the first pass.
        const unsigned fit = std::min(cl.tiles, 2u * (unsigned)env.sms);
        a.list = fit < cl.tiles ? gen.tile_list : nullptr;
        a.count = gen.tile_count + l;
        a.tiles = cl.tiles;
        a.scale = gen.beta;
        a.series = lv[l].down.odi;
        const dim3 block((unsigned)cl.ax[0].tb, (unsigned)cl.ax[1].tb, (unsigned)cl.ax[2].tb);
        const bool fr = a.f.fx || a.f.fy || a.f.fz;
        if (a.list) {
            if (fr) gen_first_kernel<T, true><<<cl.tiles, 32 * FIRST_WARPS, 0, env.st>>>(a);
            else gen_first_kernel<T, false><<<(cl.tiles + FIRST_WARPS - 1) / FIRST_WARPS, 32 * FIRST_WARPS, 0, env.st>>>(a);
            PGPU_LAUNCHED();
        }
        if (fr) gen_coarse_kernel<T, true><<<fit, block, cl.smem, env.st>>>(a);
        else gen_coarse_kernel<T, false><<<fit, block, cl.smem, env.st>>>(a);
        PGPU_LAUNCHED();
        if (a.cmk && gen.held) {
            gen_iso_kernel<T><<<grid_for((int64_t)lv[l + 1].npts, env.sms), 256, 0, env.st>>>(a);
            PGPU_LAUNCHED();
        }
        if (a.cmk) {
            gen_shut_kernel<T><<<grid_for((int64_t)lv[l + 1].npts, env.sms), 256, 0, env.st>>>(a);
            PGPU_LAUNCHED();
        }
        if (a.cmk && gen.held) {
            gen_distance_kernel<T><<<grid_for((int64_t)lv[l + 1].npts, env.sms), 256, 0, env.st>>>(a);
            PGPU_LAUNCHED();
        }
        if (a.cmk) {
            gen_check_kernel<T, false><<<grid_for((int64_t)lv[l + 1].npts, env.sms), 256, 0, env.st>>>(
                a.c, a.cmk, (const T *)nullptr, (unsigned *)nullptr, a.cmk, (uint32_t *)nullptr);
            PGPU_LAUNCHED();
        }
    }
    return galerkin_build(env);
}

template <class T> pgpu_status Hierarchy<T>::galerkin_alloc(Env &env)
{
    char *err = env.err;
    const int nl = (int)lv.size();
    if (nl < 2 || !gen.gst.empty()) return PGPU_SUCCESS;
    std::vector<T *> st((size_t)nl, nullptr);
    T *scr = nullptr;
    // (P's weights from a level of 7-point rows -- level 0, or one below a
    // pair that keeps no nodes -- then level 0's two vectors)
    size_t n0 = 2 * (size_t)lv[0].elems;
    for (int l = 0; l + 1 < nl; ++l)
        if (lv[l].down.odi_ok) n0 = std::max(n0, (size_t)odi_pw_count(lv[l].g, lv[l + 1].g));
    PGPU_FORWARD(env.mem.alloc(err, (void **)&scr, n0 * sizeof(T), "the Galerkin build's vectors"));
    std::vector<T *> pw((size_t)nl, nullptr);
    for (int l = 1; l < nl; ++l) {
        if (!lv[l - 1].down.odi_ok) continue;
        const size_t bytes = (size_t)gal_stored(lv[l].g.is3d != 0) * (size_t)lv[l].npts * sizeof(T);
        PGPU_FORWARD(env.mem.alloc(err, (void **)&st[(size_t)l], bytes, "a Galerkin level's operator"));
        PGPU_CUDA(cudaMemsetAsync(st[(size_t)l], 0, bytes, env.st));
        if (l + 1 == nl || !lv[l].down.odi_ok) continue;
        const size_t wb = (size_t)odi_pw_count(lv[l].g, lv[l + 1].g) * sizeof(T);
        PGPU_FORWARD(env.mem.alloc(err, (void **)&pw[(size_t)l], wb, "a Galerkin level's prolongation weights"));
        PGPU_CUDA(cudaMemsetAsync(pw[(size_t)l], 0, wb, env.st));
    }
    gen.gscr = scr;
    gen.gpw = pw;
    gen.gst = st; // last: says the part is done
    return PGPU_SUCCESS;
}

// Each Galerkin level's operator R A P, from the level above's rows
// (Transfer::fr): P's weights stage by stage (gal_weights_kernel; from 7-point
// rows in gscr, a Galerkin level's kept for its transfers), the entries off the
// centre directly from them (gal_rap_kernel), the rows' sums as
// R A (1 - delta) (gal_sums_kernel: delta, and A (1 - delta) by
// gal_residual_kernel, in two vectors of the fine level -- level 0: gscr; a
// coarse one: its u and t, free between solves -- R of it in the coarse t).
template <class T> pgpu_status Hierarchy<T>::galerkin_build(Env &env)
{
    char *err = env.err;
    const int nl = (int)lv.size();
    for (int l = 0; l + 1 < nl; ++l) {
        Level<T> &F = lv[l], &C = lv[l + 1];
        const Transfer<T> &x = F.down;
        if (!x.odi) continue;
        const int64_t tiles = F.g.is3d ? (int64_t)((C.g.nx + GAL_TX - 1) / GAL_TX) * ((C.g.ny + GAL_TY - 1) / GAL_TY) *
                                             ((C.g.nz + GAL_TZ - 1) / GAL_TZ)
                                       : (int64_t)((C.g.nx + GAL_T2X - 1) / GAL_T2X) * ((C.g.ny + GAL_T2Y - 1) / GAL_T2Y);
        PGPU_RETURN_IF(tiles > INT32_MAX, PGPU_ERROR_UNSUPPORTED, "a Galerkin level of %lld tiles", (long long)tiles);
        PGPU_RETURN_IF(x.fr.st && !x.pw, PGPU_ERROR_CUDA, "internal: a Galerkin level without P's weights");
        const bool s27 = x.fr.st != nullptr;
        T *const pw = s27 ? x.pw : gen.gscr;
        T *dl = l ? F.u : gen.gscr, *r = l ? F.t : gen.gscr + F.elems;
        for (int stage = 1; stage <= odi_top(F.g); ++stage) {
            launch(F.walk, 0, env.st, s27 ? gal_weights_kernel<T, true> : gal_weights_kernel<T, false>, F.g, x.fr,
                   C.g, x.oa, pw, dl, stage);
            PGPU_LAUNCHED();
        }
        const auto rap = s27 ? gal_rap_kernel<T, true> : gal_rap_kernel<T, false>;
        const size_t smem = gal_rap_smem(s27);
        PGPU_RETURN_IF(smem + GAL_STATIC_SMEM > (size_t)env.optin, PGPU_ERROR_UNSUPPORTED,
                       "the Galerkin build needs %zu bytes of shared memory a block, the device offers %d",
                       smem + GAL_STATIC_SMEM, env.optin);
        PGPU_CUDA(cudaFuncSetAttribute(rap, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        rap<<<(unsigned)tiles, GAL_THREADS, smem, env.st>>>(F.g, x.fr, C.g, x.oa, C.gr, (const T *)pw);
        PGPU_LAUNCHED();
        if (!s27) PGPU_FORWARD(x.odi_delta(env, dl)); // (a Galerkin level's: with its weights)
        launch(F.walk, 0, env.st, gal_residual_kernel<T>, F.g, x.fr, (const T *)dl, (const T *)nullptr, r);
        PGPU_LAUNCHED();
        PGPU_FORWARD(x.odi_restrict(env, r, C.t));
        launch(C.walk, 0, env.st, gal_sums_kernel<T>, C.g, (const T *)C.t, C.gr);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Hierarchy<T>::general_rhs(Env &env, T *out, bool held)
{
    char *err = env.err;
    const Level<T> &L = lv[0];
    gen_rhs_kernel<T><<<grid_for((int64_t)L.npts, env.sms), 256, 0, env.st>>>(L.g, (const T *)L.u, (const T *)L.f,
                                                                               L.shift, out, held);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// One pass of gen_project_kernel over level 0's singular regions: out = src
// (+ u's boundary terms where `terms`) minus each region's mean.
template <class T> pgpu_status Hierarchy<T>::project(Env &env, const T *src, const T *u, int terms, T *out)
{
    char *err = env.err;
    const Level<T> &L = lv[0];
    const unsigned blocks = grid_for((int64_t)L.npts, env.sms);
    PGPU_CUDA(cudaMemsetAsync(gen.maxbits, 0, sizeof(unsigned long long), env.st));
    PGPU_CUDA(cudaMemsetAsync(gen.sums, 0, (size_t)gen.regions * 2 * sizeof(long long), env.st));
    for (int mode = 0; mode < 3; ++mode) {
        gen_project_kernel<T><<<blocks, 256, 0, env.st>>>(L.g, gen.lab, src, u, terms, mode, gen.maxbits, gen.sums,
                                                          gen.sizes, out, terms ? gen.first : nullptr);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

} // namespace pgpu
