/* test_smoother.cu -- red-black smoothing two iterations per pass
 * (rbgs_tile_kernel<T, 2>).  The library runs it on uniform 3D levels of
 * at least PAIRED_MIN points; here it is switched on, through the levels'
 * smoothing plans (pgpu::solver_of), on grids small enough for the host
 * reference.
 *  - PGPU_RBGS with 2, 3 and 4 fixed iterations (one pass, one pass and a
 *    single iteration, two passes) against the host reference
 *    (t_check_stationary: per point within the reference's rounding bound,
 *    ghosts and padding unchanged): several tiles along x and y, several z
 *    chunks and chunks of one plane, Dirichlet and Neumann data, a singular
 *    problem (the shift), a strided layout, omega != 1, float and double.
 *  - V-cycles and FMG with every uniform level paired against the same
 *    solve unpaired, on the same data: both passes do the same arithmetic
 *    (the pass count changes only where the prolongation writes), so the
 *    results must agree to rounding, tol * max |u| with tol 1e-12 (double)
 *    or 1e-4 (float).
 *  - Which levels the library pairs by itself: level 0 of 256x128x128
 *    (2^22 points), not of 255x128x128 nor with a periodic axis, no level
 *    below it.
 *  - The tile kernel's FRAC form (levels with face fractions: beta's level
 *    0, every coarse level of a mask or beta) against the general red-black
 *    kernel on the same levels: V-cycles with a mask and / or beta, the
 *    FRAC levels switched to the general kernel through their plans, must
 *    agree to rounding with the library's own choice (tol as above).
 * With --short (the sanitizer suite) only the first case of the first two
 * parts and one FRAC case run.
 */
#include "../whitebox.h"

namespace wb_mg_smoother {

/* Pairs every level that allows it (its plan, then the routes again);
 * *ctx counts them. */
template <class T> static void pair_all(pgpu_solver *s, void *ctx)
{
    pgpu::Solver<T> *sol = pgpu::solver_of<T>(s);
    for (pgpu::Level<T> &L : sol->h.lv)
        if (L.sm.tile) {
            L.sm.paired = true;
            ++*(int *)ctx;
        }
    sol->h.route(sol->env);
}

typedef struct smooth_case {
    const char *name;
    int64_t n[3];
    const char *bcs;
    double h[3];
    int64_t pad_y, pad_z;
    double omega;
} smooth_case;

static const smooth_case cases[] = {
    {"multi-tile", {120, 50, 23}, "DNNDND", {1.0 / 128, 1.0 / 64, 1.0 / 32}, 0, 0, 1.6},
    {"strided", {61, 30, 17}, "NDDNDN", {1.0 / 64, 1.0 / 64, 1.0 / 32}, 3, 5, 1.2},
    {"anisotropic", {37, 20, 11}, "DDDDDD", {0.03, 0.05, 0.08}, 0, 0, 1.0},
    {"Neumann (singular)", {40, 30, 20}, "NNNNNN", {1.0 / 32, 1.0 / 32, 1.0 / 32}, 0, 0, 1.3},
    {"four planes", {30, 26, 4}, "DDNNDN", {1.0 / 32, 1.0 / 32, 1.0 / 16}, 0, 0, 1.1},
};

static pgpu_config config_of(const smooth_case *c, unsigned flags)
{
    pgpu_config cfg = t_config(c->n[0], c->n[1], c->n[2], c->bcs, c->h[0], c->h[1], c->h[2], flags);
    cfg.omega = c->omega;
    if (c->pad_y || c->pad_z) {
        cfg.stride_y = c->n[0] + 2 + c->pad_y;
        cfg.stride_z = cfg.stride_y * (c->n[1] + 2) + c->pad_z;
    }
    return cfg;
}

static void check_rbgs(const smooth_case *c, unsigned prec)
{
    const pgpu_config cfg = config_of(c, PGPU_RBGS | prec | PGPU_FIXED);
    for (int it = 2; it <= 4; ++it) {
        int paired = 0;
        if (prec == PGPU_FLOAT)
            t_check_stationary(&cfg, c->name, it, pair_all<float>, &paired);
        else
            t_check_stationary(&cfg, c->name, it, pair_all<double>, &paired);
        CHECK(paired == 1, "%s %s x%d: the level ran in pairs (%d)", c->name, t_precision_name(prec), it, paired);
    }
}

/* max |a - b| over the interior (NaN-propagating). */
static double interior_diff(const t_problem *P, const double *a, const double *b)
{
    double worst = 0.0;
    REF_FOR_EACH_INTERIOR(&P->g, i, j, k) {
        const int64_t p = ref_idx(&P->g, i, j, k);
        worst = t_max_nan(worst, fabs(b[p] - a[p]));
    }
    return worst;
}

/* A multigrid solve with and without pairs on the same data. */
static void check_multigrid(const smooth_case *c, unsigned method, unsigned prec)
{
    pgpu_config cfg = config_of(c, method | prec | PGPU_FIXED);
    cfg.omega = 0; /* the multigrid default */
    cfg.max_iterations = method == PGPU_VCYCLE ? 3 : 1;
    char what[200];
    snprintf(what, sizeof what, "%s %s %s [%lldx%lldx%lld %s]", c->name, t_method_name(cfg.flags),
             t_precision_name(prec), (long long)c->n[0], (long long)c->n[1], (long long)c->n[2], c->bcs);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    double *u[2] = {t_problem_array(&P, NULL), t_problem_array(&P, NULL)};
    int paired = 0, ok = 1;
    for (int run = 0; run < 2 && ok; ++run) {
        pgpu_solver *s = t_create(&cfg, what);
        if (!s) {
            ok = 0;
            break;
        }
        if (run == 1) {
            if (prec == PGPU_FLOAT)
                pair_all<float>(s, &paired);
            else
                pair_all<double>(s, &paired);
        }
        pgpu_report rep;
        pgpu_status st;
        ok = t_problem_solve(&P, s, what, &rep, &st, u[run]) && st == PGPU_SUCCESS;
        CHECK(ok, "%s %s: status %s %s", what, run ? "paired" : "unpaired", pgpu_status_string(st),
              st ? pgpu_last_error(s) : "");
        pgpu_destroy(s);
    }
    if (ok) {
        const double scale = ref_max_abs(&P.g, u[0]), worst = interior_diff(&P, u[0], u[1]);
        const double tol = prec == PGPU_FLOAT ? 1e-4 : 1e-12;
        CHECK(paired >= 1 && worst <= tol * scale,
              "%s: paired (%d levels) against unpaired: max |diff| %.3g, tol * max |u| = %.3g", what, paired, worst,
              tol * scale);
    }
    free(u[0]);
    free(u[1]);
    t_problem_free(&P);
}

/* Levels smoothed by the FRAC tile kernel switched to the general one;
 * returns how many. */
template <class T> static int frac_to_general(pgpu_solver *s)
{
    int n = 0;
    pgpu::Solver<T> *sol = pgpu::solver_of<T>(s);
    for (pgpu::Level<T> &L : sol->h.lv)
        if (L.sm.tile && L.g.fx) {
            L.sm.tile = false;
            ++n;
        }
    sol->h.route(sol->env);
    for (const pgpu::Level<T> &L : sol->h.lv)
        CHECK(L.g.fx == nullptr || L.route.smooth == pgpu::SmoothRoute::PLAIN ||
                  L.route.smooth == pgpu::SmoothRoute::GALERKIN,
              "a level with fractions still routed to a tiled smoother");
    return n;
}

/* V-cycles with a mask (shape, or MREF_SHAPE_NONE: none) and / or beta
 * (beta_kind, or -1: none) through the FRAC tile kernel and through the
 * general red-black kernel, on the same data. */
static void check_frac(const smooth_case *c, int shape, int beta_kind, double jump, unsigned prec)
{
    pgpu_config cfg = config_of(c, PGPU_VCYCLE | prec | PGPU_FIXED);
    cfg.omega = 0;
    cfg.max_iterations = 3;
    char what[240];
    snprintf(what, sizeof what, "FRAC %s, mask %s, beta %d (jump %g), %s [%lldx%lldx%lld %s]", c->name,
             mref_shape_name(shape), beta_kind, jump, t_precision_name(prec), (long long)c->n[0], (long long)c->n[1],
             (long long)c->n[2], c->bcs);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    const size_t elems = (size_t)P.elems, word = prec == PGPU_FLOAT ? 4 : 8;
    std::vector<uint8_t> mask(elems, PGPU_CELL_FLUID);
    std::vector<double> beta(elems, 1.0);
    std::vector<float> beta_f(elems);
    mref_shape(&P.g, shape, mask.data());
    if (beta_kind >= 0)
        mref_beta_field(&P.g, beta_kind, jump, beta.data());
    for (size_t e = 0; e < elems; ++e)
        beta_f[e] = (float)beta[e];
    uint8_t *d_mask = nullptr;
    void *d_beta = nullptr;
    int ok = cudaMalloc((void **)&d_mask, elems) == cudaSuccess && cudaMalloc(&d_beta, elems * word) == cudaSuccess &&
             cudaMemcpy(d_mask, mask.data(), elems, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(d_beta, word == 4 ? (const void *)beta_f.data() : (const void *)beta.data(), elems * word,
                        cudaMemcpyHostToDevice) == cudaSuccess;
    CHECK(ok, "%s: device arrays", what);
    double *u[2] = {t_problem_array(&P, NULL), t_problem_array(&P, NULL)};
    int frac = 0;
    for (int run = 0; run < 2 && ok; ++run) {
        pgpu_solver *s = t_create(&cfg, what);
        if (!s) {
            ok = 0;
            break;
        }
        pgpu_status st = PGPU_SUCCESS;
        if (shape != MREF_SHAPE_NONE)
            st = pgpu_set_mask(s, d_mask);
        if (st == PGPU_SUCCESS && beta_kind >= 0)
            st = pgpu_set_coefficients(s, d_beta);
        CHECK(st == PGPU_SUCCESS, "%s: setting the data: %s %s", what, pgpu_status_string(st), pgpu_last_error(s));
        if (run == 1)
            frac = prec == PGPU_FLOAT ? frac_to_general<float>(s) : frac_to_general<double>(s);
        pgpu_report rep;
        ok = st == PGPU_SUCCESS && t_problem_solve(&P, s, what, &rep, &st, u[run]) && st == PGPU_SUCCESS;
        CHECK(ok, "%s %s: status %s %s", what, run ? "general" : "FRAC", pgpu_status_string(st),
              st ? pgpu_last_error(s) : "");
        pgpu_destroy(s);
    }
    if (ok) {
        const double scale = ref_max_abs(&P.g, u[0]), worst = interior_diff(&P, u[0], u[1]);
        const double tol = prec == PGPU_FLOAT ? 1e-4 : 1e-12;
        CHECK(frac >= 1 && worst <= tol * scale,
              "%s: FRAC (%d levels) against the general kernel: max |diff| %.3g, tol * max |u| = %.3g", what, frac,
              worst, tol * scale);
    }
    cudaFree(d_mask);
    cudaFree(d_beta);
    free(u[0]);
    free(u[1]);
    t_problem_free(&P);
}

/* The library's own choice: level 0 pairs from PAIRED_MIN points on, where
 * it is uniform; the levels below it do not. */
template <class T> static void check_choice(unsigned method)
{
    const unsigned prec = sizeof(T) == 4 ? PGPU_FLOAT : PGPU_DOUBLE;
    const int64_t sizes[3][3] = {{256, 128, 128}, {255, 128, 128}, {256, 128, 128}};
    const char *bcs[3] = {"DDDDDD", "DDDDDD", "DDPPDD"};
    for (int c = 0; c < 3; ++c) {
        pgpu_config cfg = t_config(sizes[c][0], sizes[c][1], sizes[c][2], bcs[c], 1.0 / 256, 1.0 / 256, 1.0 / 256,
                                   method | prec);
        char what[160];
        snprintf(what, sizeof what, "%s %s %lldx%lldx%lld %s", t_method_name(cfg.flags), t_precision_name(prec),
                 (long long)sizes[c][0], (long long)sizes[c][1], (long long)sizes[c][2], bcs[c]);
        pgpu_solver *s = t_create(&cfg, what);
        if (!s)
            continue;
        const std::vector<pgpu::Level<T>> &lv = pgpu::solver_of<T>(s)->h.lv;
        const bool want = c == 0; /* 2^22 points, uniform, no periodic axis */
        int below = 0;
        for (size_t l = 1; l < lv.size(); ++l)
            below += lv[l].route.paired;
        CHECK(lv[0].route.paired == want && below == 0, "%s: level 0 paired %d (expected %d), levels below paired: %d",
              what, (int)lv[0].route.paired, (int)want, below);
        pgpu_destroy(s);
    }
}

/* --short (the sanitizer runs): the first case of each part only. */
int run(int argc, char **argv)
{
    t_require_device("test_smoother");
    t_seed();
    const bool all = !(argc > 1 && strcmp(argv[1], "--short") == 0);
    const int ncases = all ? (int)(sizeof cases / sizeof cases[0]) : 1;
    for (int c = 0; c < ncases; ++c)
        for (int p = 0; p < 2; ++p)
            check_rbgs(&cases[c], p ? PGPU_FLOAT : PGPU_DOUBLE);
    const smooth_case mg[] = {
        {"multigrid", {64, 48, 40}, "DDNNDD", {1.0 / 64, 1.0 / 64, 1.0 / 64}, 0, 0, 0},
        {"multigrid strided", {45, 40, 33}, "DNDNND", {1.0 / 64, 1.0 / 32, 1.0 / 32}, 2, 3, 0},
    };
    for (int c = 0; c < (all ? 2 : 1); ++c)
        for (int p = 0; p < 2; ++p) {
            check_multigrid(&mg[c], PGPU_VCYCLE, p ? PGPU_FLOAT : PGPU_DOUBLE);
            check_multigrid(&mg[c], PGPU_FMG, p ? PGPU_FLOAT : PGPU_DOUBLE);
        }
    for (int c = 0; c < (all ? 2 : 1); ++c)
        for (int p = 0; p < (all ? 2 : 1); ++p) {
            const unsigned prec = p ? PGPU_FLOAT : PGPU_DOUBLE;
            check_frac(&mg[c], MREF_SHAPE_SPHERE, -1, 0, prec); /* coarse levels only */
            if (!all)
                break;
            check_frac(&mg[c], MREF_SHAPE_NONE, MREF_BETA_JUMP, 1e3, prec); /* level 0 without a mask too */
            check_frac(&mg[c], MREF_SHAPE_POOL, MREF_BETA_SMOOTH, 0, prec);
            check_frac(&mg[c], MREF_SHAPE_CELLS, MREF_BETA_RANDOM, 0, prec);
        }
    if (all) {
        check_choice<float>(PGPU_RBGS);
        check_choice<double>(PGPU_VCYCLE);
    }
    return t_finish("test_smoother");
}

} // namespace wb_mg_smoother
