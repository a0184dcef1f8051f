/* test_transfer.cu -- the GPU multigrid transfer kernels against a host
 * application of the reference's P and R (mg_reference.h, itself checked
 * against the library's tables by test_transfer_host).
 *
 * For each grid below and each precision, pgpu_create(PGPU_VCYCLE) builds
 * the solver; its levels (grids, transfer tables and launch shapes) are
 * reached through pgpu::solver_of.  For every pair of consecutive levels, on random
 * data:
 *  - the direct restriction and, where a level allows it, the tiled one,
 *    with the cycle's R and, with a subtracted shift, in the FMG form (its
 *    tables Rf, the rows without a first moment):
 *        fc(I,J,K) = sum Rx(I,i) Ry(J,j) Rz(K,k) (r(i,j,k) - shift)
 *  - the direct trilinear interpolation, ADD (u += P e, the coarse-grid
 *    correction) and set (u = P e), e read with its ghosts, and the tiled
 *    ADD kernel (interp_tile_kernel) where the level allows it:
 *        u(i,j,k) = sum Px(i,p) Py(j,q) Pz(k,s) e(p,q,s)
 *    (p, q, s coarse storage indices, 0 and n+1 the ghosts).
 *  - the tiled FMG (tricubic) interpolation against the generic kernel,
 *    to tol * 8 max |e|.
 *  - where a level allows it, the residual's restriction in one pass
 *    (restrict_residual_kernel, uniform levels), against R applied on the
 *    host to f - shift - A u, A from the level's coupling constants (checked
 *    against its tables); the bound there is R applied to each residual's
 *    sum of magnitudes.
 * Per interior point |gpu - host| <= tol * bound, bound = the sum of the
 * magnitudes of the terms (plus |u| for ADD); tol = 1e-14 in double,
 * 32 FLT_EPSILON in float (the float tables are the double ones rounded, and
 * each kernel adds up at most 3 x 5 or 2 x 2 x 2 products).
 * What may not be read holds NaN: the fine array's ghosts and padding for
 * the restriction, the coarse ghosts across Neumann and periodic faces for
 * the prolongation (only Dirichlet walls have values to interpolate
 * towards), the interior of u for the set variant.  What may not be written
 * must come back bit for bit: everything outside the coarse interior
 * (restriction) and outside the fine interior (prolongation; level 0 has
 * padded strides in some cases).
 *
 * Grids: odd, even, prime and non-cubic sizes, every face type, periodic
 * axes of odd length (non-nested coarse rings), semicoarsened axes
 * (identity transfers), 2D, strided level 0, tiny grids.
 */
#include "../whitebox.h"

namespace wb_mg_transfer {

typedef struct xfer_case {
    const char *name;
    int n[3];
    double h[3];
    const char *bcs;
    int64_t pad_y, pad_z; /* extra elements per row / plane of level 0 */
} xfer_case;

static const xfer_case cases[] = {
    {"3D 33x32x31 Dirichlet", {33, 32, 31}, {0.03, 0.03, 0.03}, "DDDDDD", 0, 0},
    {"3D 29x23x19 periodic (odd: non-nested rings)", {29, 23, 19}, {0.03, 0.03, 0.03}, "PPPPPP", 0, 0},
    {"3D 37x20x11 mixed, anisotropic", {37, 20, 11}, {0.03, 0.05, 0.08}, "DNPPND", 0, 0},
    {"3D 64x48x40 hz = 4 hx (semicoarsening)", {64, 48, 40}, {0.01, 0.01, 0.04}, "NDDNPP", 0, 0},
    {"3D 64x48x40 Dirichlet (even: kept nodes, wall planes in the FMG window)", {64, 48, 40}, {0.02, 0.02, 0.02}, "DDDDDD", 0, 0},
    {"3D 24x17x40 strided, hz = hx / 4", {24, 17, 40}, {0.04, 0.04, 0.01}, "NNDDPP", 3, 5},
    {"3D 2x3x5 tiny", {2, 3, 5}, {0.1, 0.1, 0.1}, "DNNDPP", 0, 0},
    {"2D 65x33 mixed", {65, 33, 1}, {0.015, 0.03, 0.0}, "DNPP", 0, 0},
    {"2D 31x29 periodic odd", {31, 29, 1}, {0.03, 0.03, 0.0}, "PPPP", 0, 0},
    {"2D 64x50 Neumann, strided", {64, 50, 1}, {0.02, 0.02, 0.0}, "NNNN", 7, 0},
    /* Several shared-memory tiles and plane chunks for the tiled restriction. */
    {"3D 130x70x45 Dirichlet / Neumann, strided", {130, 70, 45}, {0.01, 0.01, 0.01}, "DDNNDN", 5, 9},
};

/* Level pairs on which the tiled kernels ran (they must run somewhere). */
static int tiled_pairs = 0, tiled_prolong = 0, tiled_fmg = 0, tiled_fmg_z = 0, fused_pairs = 0;

/* A level's layout on the host. */
typedef struct layout {
    int n[3];
    int is3d;
    int64_t sy, sz, base, elems;
} layout;

template <class T> static layout layout_of(const pgpu::Level<T> &L)
{
    layout y;
    y.n[0] = L.g.nx;
    y.n[1] = L.g.ny;
    y.n[2] = L.g.nz;
    y.is3d = L.g.is3d;
    y.sy = L.g.sy;
    y.sz = L.g.sz;
    y.base = L.g.base;
    y.elems = L.elems;
    return y;
}

/* Element of storage coordinates (p, q, s), ghosts included (0..n+1). */
static int64_t at(const layout *y, int p, int q, int s)
{
    const int64_t origin = y->base - 1 - y->sy - (y->is3d ? y->sz : 0);
    return origin + p + q * y->sy + (y->is3d ? (int64_t)s * y->sz : 0);
}

/* Storage coordinates of element e, or 0 when e is padding. */
static int coords(const layout *y, int64_t e, int c[3])
{
    const int64_t origin = y->base - 1 - y->sy - (y->is3d ? y->sz : 0);
    const int64_t rel = e - origin;
    if (rel < 0)
        return 0;
    const int64_t sz = y->is3d ? y->sz : y->sy * (y->n[1] + 2);
    c[2] = y->is3d ? (int)(rel / sz) : 1;
    c[1] = (int)(rel % sz / y->sy);
    c[0] = (int)(rel % sz % y->sy);
    return c[0] <= y->n[0] + 1 && c[1] <= y->n[1] + 1 && (!y->is3d || c[2] <= y->n[2] + 1);
}

static int interior(const layout *y, const int c[3])
{
    for (int a = 0; a < (y->is3d ? 3 : 2); ++a)
        if (c[a] < 1 || c[a] > y->n[a])
            return 0;
    return 1;
}

/* ---- device helpers ---------------------------------------------------------------- */

template <class T> static T *upload(const std::vector<double> &h)
{
    std::vector<T> t(h.size());
    for (size_t k = 0; k < h.size(); ++k)
        t[k] = (T)h[k];
    return (T *)t_dev_upload(t.data(), t.size() * sizeof(T));
}

template <class T> static std::vector<T> download_raw(const T *d, size_t count)
{
    std::vector<T> t(count);
    t_dev_download(t.data(), d, count * sizeof(T));
    return t;
}

/* Values rounded to T, as the device sees them. */
template <class T> static void round_all(std::vector<double> &v)
{
    for (double &x : v)
        x = (double)(T)x;
}

/* ---- one pair of levels ------------------------------------------------------------ */

template <class T>
static void test_pair(pgpu::Env &env, const char *name, int l, const pgpu::Level<T> &Lf, const pgpu::Level<T> &Lc,
                      const mg_level *ref)
{
    const layout F = layout_of(Lf), C = layout_of(Lc);
    const int dims = F.is3d ? 3 : 2;
    const double tol = sizeof(T) == sizeof(float) ? 32.0 * FLT_EPSILON : 1e-14;
    const char *prec = sizeof(T) == sizeof(float) ? "float" : "double";
    const mg_transfer *tr = ref->tr;
    char what[200];
    snprintf(what, sizeof what, "%s %s level %d (%dx%dx%d) -> %d (%dx%dx%d)", name, prec, l, F.n[0], F.n[1],
             F.n[2], l + 1, C.n[0], C.n[1], C.n[2]);
    for (int d = 0; d < dims; ++d)
        if (!CHECK(tr[d].n == F.n[d] && tr[d].nc == C.n[d], "%s: axis %d sizes %d -> %d match the reference %d -> %d",
                   what, d, F.n[d], C.n[d], tr[d].n, tr[d].nc))
            return;

    /* Sparse rows of the reference's R and P per axis (2D: z is the one plane). */
    struct rows {
        std::vector<int> cnt, idx;
        std::vector<double> wt;
    } R[3], Rf[3], P[3];
    for (int d = 0; d < 3; ++d) {
        const int nc = d < dims ? C.n[d] : 1, nf = d < dims ? F.n[d] : 1;
        R[d].cnt.assign(nc, 0);
        R[d].idx.assign((size_t)nc * 8, 0);
        R[d].wt.assign((size_t)nc * 8, 0.0);
        Rf[d] = R[d];
        P[d].cnt.assign(nf, 0);
        P[d].idx.assign((size_t)nf * 8, 0);
        P[d].wt.assign((size_t)nf * 8, 0.0);
        for (int I = 0; I < nc; ++I) {
            if (d < dims) {
                R[d].cnt[I] = mg_r_row(&tr[d], I, &R[d].idx[(size_t)I * 8], &R[d].wt[(size_t)I * 8], 8);
                Rf[d].cnt[I] = mg_rf_row(&tr[d], I, &Rf[d].idx[(size_t)I * 8], &Rf[d].wt[(size_t)I * 8], 8);
            } else {
                R[d].cnt[I] = Rf[d].cnt[I] = 1;
                R[d].idx[0] = Rf[d].idx[0] = 0;
                R[d].wt[0] = Rf[d].wt[0] = 1.0;
            }
        }
        for (int i = 0; i < nf; ++i) {
            if (d < dims) {
                P[d].cnt[i] = mg_p_row(&tr[d], i, &P[d].idx[(size_t)i * 8], &P[d].wt[(size_t)i * 8], 8);
            } else {
                P[d].cnt[i] = 1;
                P[d].idx[0] = 1; /* the plane, storage index 1 */
                P[d].wt[0] = 1.0;
            }
        }
    }
    const double sentinel = 12345.0;
    int c[3];
    /* A coarse result got against R (rows RR) applied on the host to the
     * fine values val(p, v, mag), mag the magnitude v's rounding scales
     * with: the worst |got - host| / bound over the coarse interior, and how
     * many elements outside it changed (they must keep the sentinel). */
    auto compare_restricted = [&](const std::vector<T> &got, const rows *RR, auto &&val, double &worst,
                                  int64_t &touched) {
        worst = 0.0;
        touched = 0;
        int cc[3];
        for (int64_t e = 0; e < C.elems; ++e) {
            if (!(coords(&C, e, cc) && interior(&C, cc))) {
                if (!(got[e] == (T)sentinel))
                    ++touched;
                continue;
            }
            const int I = cc[0] - 1, J = cc[1] - 1, kz = C.is3d ? cc[2] - 1 : 0;
            double sum = 0.0, bound = 0.0;
            for (int z = 0; z < RR[2].cnt[kz]; ++z) {
                const int k = RR[2].idx[(size_t)kz * 8 + z];
                const double wz = RR[2].wt[(size_t)kz * 8 + z];
                for (int b = 0; b < RR[1].cnt[J]; ++b) {
                    const int j = RR[1].idx[(size_t)J * 8 + b];
                    const double wy = RR[1].wt[(size_t)J * 8 + b];
                    for (int a = 0; a < RR[0].cnt[I]; ++a) {
                        const int i = RR[0].idx[(size_t)I * 8 + a];
                        const double w = RR[0].wt[(size_t)I * 8 + a] * wy * wz;
                        double v, mag;
                        val(at(&F, i + 1, j + 1, k + 1), v, mag);
                        sum += w * v;
                        bound += fabs(w) * mag;
                    }
                }
            }
            const double err = fabs((double)got[e] - sum);
            worst = t_max_nan(worst, bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0));
        }
    };

    /* ---- restriction: the cycle's, and FMG's (shift, Rf) ---- */
    std::vector<double> r(F.elems, NAN);
    for (int64_t e = 0; e < F.elems; ++e)
        if (coords(&F, e, c) && interior(&F, c))
            r[e] = t_rand(-1.0, 1.0);
    round_all<T>(r);
    std::vector<double> fc0(C.elems, sentinel);
    T *d_r = upload<T>(r), *d_fc = upload<T>(fc0);
    /* the shift as the solver keeps it: the mean rounded and what that
     * rounding left (pgpu::Shift), here a second part of 1e-6 its size */
    const T shift_pair[2] = {(T)t_rand(-0.5, 0.5), (T)(t_rand(-0.5, 0.5) * 1e-6)};
    T *d_shift = (T *)t_dev_upload(shift_pair, sizeof shift_pair);
    /* Both kernels: the generic one everywhere, the tiled one where the
     * level allows it (and then the solver uses it). */
    for (int v = 0; v < 4 && d_r && d_fc && d_shift; ++v) {
        const int with_shift = v & 1, tile = v >> 1;
        if (tile && !Lf.down.rs_tile)
            break;
        tiled_pairs += tile && !with_shift;
        if (v > 0) { /* the sentinels back */
            t_dev_free(d_fc);
            d_fc = upload<T>(fc0);
            if (!d_fc)
                break;
        }
        const rows *RR = with_shift ? Rf : R;
        Lf.down.restrict_(env, d_r, with_shift ? d_shift : nullptr, d_fc, with_shift != 0,
                          tile ? pgpu::Transfer<T>::TILED : pgpu::Transfer<T>::DIRECT);
        if (!t_sync(what))
            break;
        const std::vector<T> got = download_raw(d_fc, (size_t)C.elems);
        const double shift = with_shift ? (double)shift_pair[0] + (double)shift_pair[1] : 0.0;
        double worst = 0.0;
        int64_t touched = 0;
        /* (the bound from the operands' sizes: r - shift rounds at eps (|r| + |shift|), and may cancel) */
        compare_restricted(got, RR,
                           [&](int64_t p, double &v, double &mag) {
                               v = r[p] - shift;
                               mag = fabs(r[p]) + fabs(shift);
                           },
                           worst, touched);
        CHECK(worst <= tol && touched == 0,
              "%s: restriction%s (%s kernel): max |gpu - host| / bound %.2e (tol %.1e), %lld elements outside "
              "the coarse interior changed",
              what, with_shift ? " of r - shift, FMG's Rf" : "", tile ? "tiled" : "generic", worst, tol, (long long)touched);
    }
    t_dev_free(d_r);
    t_dev_free(d_fc);
    t_dev_free(d_shift);

    /* ---- the residual's restriction in one pass (restrict_residual_kernel) ----
     * fc = R (f - shift - A u) against the host: A from the level's own
     * coupling tables (as the kernels read them), u random on the interior
     * and the face ghosts, NaN on edge and corner ghosts and padding (never
     * read into a used residual), f NaN outside the interior. */
    if (Lf.down.rr_fused) {
        ++fused_pairs;
        const pgpu::Grid<T> &g = Lf.g;
        const T *dl[3] = {g.cxl, g.cyl, g.czl}, *dh[3] = {g.cxh, g.cyh, g.czh};
        const double gl[3] = {(double)g.gxl, (double)g.gyl, (double)g.gzl};
        const double gh[3] = {(double)g.gxh, (double)g.gyh, (double)g.gzh};
        std::vector<T> cl[3], ch[3];
        for (int d = 0; d < 3; ++d) {
            cl[d] = download_raw(dl[d], (size_t)F.n[d]);
            ch[d] = download_raw(dh[d], (size_t)F.n[d]);
        }
        /* The kernel runs on uniform levels (Grid::fast) and takes the x / y
         * couplings from the level's few constants by the node's place on
         * its axis: they must match the tables (to the 1e-12 that counts as
         * uniform, or float rounding), and the host uses them too. */
        auto coupling = [&](int a, int i, double &vl, double &vh, double &d) {
            const int n = F.n[a];
            if (a == 2) {
                vl = i > 0 ? (double)cl[2][i] : gl[2];
                vh = i < n - 1 ? (double)ch[2][i] : gh[2];
                d = (double)cl[2][i] + (double)ch[2][i];
                return;
            }
            const double c0 = a ? g.cy : g.cx, fl = a ? g.fyl : g.fxl, fh = a ? g.fyh : g.fxh;
            const double el = a ? g.eyl : g.exl, eh = a ? g.eyh : g.exh;
            const bool b0 = i == 0, b1 = i == n - 1;
            vl = b0 ? gl[a] : b1 ? fh : c0;
            vh = b1 ? gh[a] : b0 ? fl : c0;
            d = (b0 ? el : b1 ? fh : c0) + (b1 ? eh : b0 ? fl : c0);
        };
        {
            const double rel = sizeof(T) == sizeof(float) ? 4.0 * FLT_EPSILON : 1e-11;
            double worst = 0.0;
            for (int a = 0; a < 2; ++a)
                for (int i = 0; i < F.n[a]; ++i) {
                    double vl, vh, d;
                    coupling(a, i, vl, vh, d);
                    const double tl = i > 0 ? (double)cl[a][i] : gl[a], th = i < F.n[a] - 1 ? (double)ch[a][i] : gh[a];
                    const double td = (double)cl[a][i] + (double)ch[a][i];
                    worst = fmax(worst, fabs(vl - tl) / fmax(fabs(tl), 1e-300));
                    worst = fmax(worst, fabs(vh - th) / fmax(fabs(th), 1e-300));
                    worst = fmax(worst, fabs(d - td) / fmax(fabs(td), 1e-300));
                }
            CHECK(g.fast && worst <= rel,
                  "%s: uniform level (fast %d); its x / y coupling constants match the tables: max relative "
                  "difference %.2e (tol %.1e)",
                  what, g.fast, worst, rel);
        }
        std::vector<double> uh(F.elems, NAN), fh(F.elems, NAN);
        for (int64_t e = 0; e < F.elems; ++e) {
            if (!coords(&F, e, c))
                continue;
            int outside = 0;
            for (int a = 0; a < 3; ++a)
                outside += c[a] == 0 || c[a] == F.n[a] + 1;
            if (outside <= 1)
                uh[e] = t_rand(-1.0, 1.0);
            if (outside == 0)
                fh[e] = t_rand(-1.0, 1.0);
        }
        round_all<T>(uh);
        round_all<T>(fh);
        const std::vector<double> fcs(C.elems, sentinel);
        const T shift_pair[2] = {(T)t_rand(-0.5, 0.5), (T)(t_rand(-0.5, 0.5) * 1e-6)};
        const double shift_value = (double)shift_pair[0] + (double)shift_pair[1];
        T *d_u = upload<T>(uh), *d_f = upload<T>(fh), *d_fc = upload<T>(fcs);
        T *d_shift = (T *)t_dev_upload(shift_pair, sizeof shift_pair);
        if (d_u && d_f && d_fc && d_shift) {
            Lf.down.restrict_residual(env, d_u, d_f, d_shift, d_fc);
            if (t_sync(what)) {
                /* The residual and a bound of its rounding per fine interior point. */
                std::vector<double> rr(F.elems, 0.0), rb(F.elems, 0.0);
                for (int64_t e = 0; e < F.elems; ++e) {
                    if (!(coords(&F, e, c) && interior(&F, c)))
                        continue;
                    double sum = fh[e] - (double)shift_value, bound = fabs(fh[e]) + fabs((double)shift_value);
                    double diag = 0.0;
                    for (int a = 0; a < 3; ++a) {
                        double vl, vh, d;
                        coupling(a, c[a] - 1, vl, vh, d);
                        diag += d;
                        int lo[3] = {c[0], c[1], c[2]}, hi[3] = {c[0], c[1], c[2]};
                        --lo[a];
                        ++hi[a];
                        const double tl = vl * uh[at(&F, lo[0], lo[1], lo[2])], th = vh * uh[at(&F, hi[0], hi[1], hi[2])];
                        sum += tl + th;
                        bound += fabs(tl) + fabs(th);
                    }
                    sum -= diag * uh[e];
                    bound += fabs(diag * uh[e]);
                    rr[e] = sum;
                    rb[e] = bound;
                }
                const std::vector<T> got = download_raw(d_fc, (size_t)C.elems);
                double worst = 0.0;
                int64_t touched = 0;
                compare_restricted(got, R, [&](int64_t p, double &v, double &mag) { v = rr[p]; mag = rb[p]; }, worst,
                                   touched);
                CHECK(worst <= tol && touched == 0,
                      "%s: residual restriction in one pass, R (f - shift - A u): max |gpu - host| / bound %.2e "
                      "(tol %.1e), %lld elements outside the coarse interior changed",
                      what, worst, tol, (long long)touched);
            }
        }
        t_dev_free(d_u);
        t_dev_free(d_f);
        t_dev_free(d_fc);
        t_dev_free(d_shift);
    }

    /* ---- prolongation, ADD and set ---- */
    std::vector<double> ec(C.elems, NAN);
    for (int64_t e = 0; e < C.elems; ++e) {
        if (!coords(&C, e, c))
            continue;
        /* A ghost may be read only across Dirichlet faces (the wall value). */
        int readable = 1;
        for (int a = 0; a < dims; ++a) {
            const int lo = c[a] == 0, hi = c[a] == C.n[a] + 1;
            if ((lo && !((Lc.g.dirichlet >> (2 * a)) & 1)) || (hi && !((Lc.g.dirichlet >> (2 * a + 1)) & 1)))
                readable = 0;
        }
        if (readable)
            ec[e] = t_rand(-1.0, 1.0);
    }
    round_all<T>(ec);
    T *d_e = upload<T>(ec);
    /* u += P e by both kernels (the tiled one where the level allows it),
     * u = P e by the generic one. */
    for (int v = 0; v < 3 && d_e; ++v) {
        const int add = v < 2, tile = v == 1;
        if (tile && !Lf.down.pl_tile)
            continue;
        tiled_prolong += tile;
        std::vector<double> u0(F.elems, NAN);
        for (int64_t e = 0; e < F.elems; ++e)
            if (add && coords(&F, e, c) && interior(&F, c))
                u0[e] = t_rand(-1.0, 1.0);
        round_all<T>(u0);
        T *d_u = upload<T>(u0);
        if (!d_u)
            break;
        const std::vector<T> before = download_raw(d_u, (size_t)F.elems);
        if (add)
            Lf.down.prolong(env, d_e, d_u, d_u, tile ? pgpu::Transfer<T>::TILED : pgpu::Transfer<T>::DIRECT);
        else /* the direct kernel's set variant, which the library itself does not use */
            pgpu::launch(Lf.walk, 0, (cudaStream_t)0, pgpu::interp_kernel<T, 2, false>, Lf.g, Lc.g, Lf.down.p2,
                         (const T *)d_e, (const T *)d_u, d_u, (double *)nullptr);
        if (t_sync(what)) {
            const std::vector<T> got = download_raw(d_u, (size_t)F.elems);
            double worst = 0.0;
            int64_t touched = 0;
            for (int64_t e = 0; e < F.elems; ++e) {
                if (!(coords(&F, e, c) && interior(&F, c))) {
                    if (memcmp(&got[e], &before[e], sizeof(T)) != 0)
                        ++touched;
                    continue;
                }
                const int i = c[0] - 1, j = c[1] - 1, k = F.is3d ? c[2] - 1 : 0;
                double sum = add ? u0[e] : 0.0, bound = add ? fabs(u0[e]) : 0.0;
                for (int z = 0; z < P[2].cnt[k]; ++z) {
                    const int s = P[2].idx[(size_t)k * 8 + z];
                    const double wz = P[2].wt[(size_t)k * 8 + z];
                    for (int b = 0; b < P[1].cnt[j]; ++b) {
                        const int q = P[1].idx[(size_t)j * 8 + b];
                        const double wy = P[1].wt[(size_t)j * 8 + b];
                        for (int a = 0; a < P[0].cnt[i]; ++a) {
                            const int p = P[0].idx[(size_t)i * 8 + a];
                            const double term = P[0].wt[(size_t)i * 8 + a] * wy * wz * ec[at(&C, p, q, s)];
                            sum += term;
                            bound += fabs(term);
                        }
                    }
                }
                const double err = fabs((double)got[e] - sum);
                worst = t_max_nan(worst, bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0));
            }
            CHECK(worst <= tol && touched == 0,
                  "%s: prolongation %s (%s kernel): max |gpu - host| / bound %.2e (tol %.1e), %lld elements "
                  "outside the fine interior changed",
                  what, add ? "u += P e" : "u = P e", tile ? "tiled" : "generic", worst, tol, (long long)touched);
        }
        t_dev_free(d_u);
    }

    /* ---- FMG interpolation: the tiled kernel against the generic one ---- */
    if (Lf.down.fi_tile && d_e) {
        std::vector<double> u0(F.elems, NAN);
        round_all<T>(u0);
        T *d_a = upload<T>(u0), *d_b = upload<T>(u0);
        if (d_a && d_b) {
            Lf.down.interpolate(env, d_e, d_a, pgpu::Transfer<T>::DIRECT);
            Lf.down.interpolate(env, d_e, d_b, pgpu::Transfer<T>::TILED);
            ++tiled_fmg;
            tiled_fmg_z += F.is3d && C.n[2] < F.n[2]; /* the z planes step too */
        }
        if (d_a && d_b && t_sync(what)) {
            const std::vector<T> a = download_raw(d_a, (size_t)F.elems), b = download_raw(d_b, (size_t)F.elems);
            double emax = 0.0, worst = 0.0;
            for (int64_t e = 0; e < C.elems; ++e)
                if (ec[e] == ec[e])
                    emax = fmax(emax, fabs(ec[e]));
            int64_t touched = 0;
            for (int64_t e = 0; e < F.elems; ++e) {
                if (!(coords(&F, e, c) && interior(&F, c))) {
                    touched += memcmp(&b[e], &a[e], sizeof(T)) != 0;
                    continue;
                }
                worst = t_max_nan(worst, fabs((double)a[e] - (double)b[e]) / (8.0 * emax));
            }
            CHECK(worst <= tol && touched == 0,
                  "%s: FMG interpolation, tiled against generic kernel: max |difference| / (8 max |e|) %.2e (tol "
                  "%.1e), %lld elements outside the fine interior differ",
                  what, worst, tol, (long long)touched);
        }
        t_dev_free(d_a);
        t_dev_free(d_b);
    }
    t_dev_free(d_e);
}

template <class T> static void run_case(const xfer_case *xc)
{
    const unsigned prec = sizeof(T) == sizeof(float) ? PGPU_FLOAT : PGPU_DOUBLE;
    const int dims = xc->n[2] == 1 ? 2 : 3;
    pgpu_config cfg = t_config(xc->n[0], xc->n[1], xc->n[2], xc->bcs, xc->h[0], xc->h[1], xc->h[2],
                               PGPU_VCYCLE | prec);
    if (xc->pad_y || xc->pad_z) {
        cfg.stride_y = xc->n[0] + 2 + xc->pad_y;
        cfg.stride_z = dims == 3 ? cfg.stride_y * (xc->n[1] + 2) + xc->pad_z : 0;
    }
    char what[160];
    snprintf(what, sizeof what, "%s %s", xc->name, t_precision_name(prec));
    pgpu_solver *s = t_create(&cfg, what);
    if (!s)
        return;
    pgpu::Solver<T> *sol = pgpu::solver_of<T>(s);
    const std::vector<pgpu::Level<T>> &lv = sol->h.lv;
    int bc[6];
    for (int f = 0; f < 6; ++f)
        bc[f] = cfg.bc[f];
    mg_hierarchy *H = (mg_hierarchy *)calloc(1, sizeof *H);
    const int built = mg_build(H, xc->n, xc->h, bc, dims);
    if (CHECK(built && H->count == (int)lv.size(), "%s: %d levels, reference %d", what, (int)lv.size(), H->count)) {
        for (int l = 0; l + 1 < H->count; ++l)
            test_pair<T>(sol->env, xc->name, l, lv[l], lv[l + 1], &H->lv[l]);
    }
    mg_free_hierarchy(H);
    free(H);
    pgpu_destroy(s);
}

int run(int, char **)
{
    t_require_device("test_transfer");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        run_case<double>(&cases[c]);
        run_case<float>(&cases[c]);
    }
    CHECK(tiled_pairs >= 4 && tiled_prolong >= 4 && tiled_fmg >= 4 && tiled_fmg_z >= 4 && fused_pairs >= 4,
          "the tiled kernels ran on enough level pairs (at least 4 each): restriction %d, prolongation %d, FMG "
          "interpolation %d (3D with a coarsened z axis: %d), residual restriction in one pass %d",
          tiled_pairs, tiled_prolong, tiled_fmg, tiled_fmg_z, fused_pairs);
    return t_finish("test_transfer");
}

} // namespace wb_mg_transfer
