/* test_krylov.c -- PGPU_CG (classic and pipelined) and PGPU_BICGSTAB with
 * every preconditioner, against the host reference:
 *  - iterates: a few PGPU_FIXED iterations equal the host's CG / BiCGStab
 *    iterates (double, same preconditioner: none or the diagonal);
 *  - exact discrete solutions: u drawn at random, f = A u by the host
 *    reference, solved from zero, for every boundary combination (2D and 3D,
 *    odd and prime sizes, singular ones with mean zero), float and double;
 *  - singular problems with f offset by a constant, every preconditioner,
 *    float and double (the recursive residual's mean);
 *  - multigrid-preconditioned CG: the iteration count to 1e-10 bounded over
 *    sizes (the bound: 12);
 *  - pipelined and classic CG agree; the FFT preconditioner on the box is
 *    the exact inverse (1 iteration);
 *  - a grid of one point, every method and preconditioner (and the
 *    multigrid methods with float's own stop), twice on one handle;
 *  - a breakdown (float overflow) answered with PGPU_ERROR_BREAKDOWN and u
 *    finite; a PGPU_FIXED solve captured into a CUDA graph by the caller
 *    gives the same bits as the direct one; bad configs refused.
 * Exit 77 without a device. */
#include "common.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *pre_name(int pre)
{
    switch (pre) {
    case PGPU_PRECOND_NONE: return "none";
    case PGPU_PRECOND_JACOBI: return "jacobi";
    case PGPU_PRECOND_VCYCLE: return "vcycle";
    case PGPU_PRECOND_FFT: return "fft";
    }
    return "default";
}

static const char *kname(unsigned flags)
{
    if (flags & PGPU_BICGSTAB) return "BiCGStab";
    return flags & PGPU_PIPELINED ? "pipelined CG" : "CG";
}

/* ---- the host reference: CG and BiCGStab in double ---------------------- */

static double dot(const ref_grid *g, const double *a, const double *b)
{
    double s = 0;
    for (int64_t k = ref_k_first(g); k <= ref_k_last(g); ++k)
        for (int64_t j = 1; j <= g->n[1]; ++j)
            for (int64_t i = 1; i <= g->n[0]; ++i) {
                const int64_t p = ref_idx(g, i, j, k);
                s += a[p] * b[p];
            }
    return s;
}

/* y = a x + b y over the interior */
static void axpby(const ref_grid *g, double a, const double *x, double b, double *y)
{
    for (int64_t k = ref_k_first(g); k <= ref_k_last(g); ++k)
        for (int64_t j = 1; j <= g->n[1]; ++j)
            for (int64_t i = 1; i <= g->n[0]; ++i) {
                const int64_t p = ref_idx(g, i, j, k);
                y[p] = a * x[p] + b * y[p];
            }
}

/* out = A v with zero boundary data (v's ghosts are zero). */
static void apply0(const ref_grid *g, const double *v, double *out) { ref_apply(g, v, out); }

/* z = M r: none or the diagonal. */
static void prec(const ref_grid *g, int pre, const double *r, double *z)
{
    for (int64_t k = ref_k_first(g); k <= ref_k_last(g); ++k)
        for (int64_t j = 1; j <= g->n[1]; ++j)
            for (int64_t i = 1; i <= g->n[0]; ++i) {
                const int64_t p = ref_idx(g, i, j, k);
                const double d = pre == PGPU_PRECOND_JACOBI ? ref_point(g, r, i, j, k, REF_ALL_TERMS).diag : 1.0;
                z[p] = r[p] / d;
            }
}

/* `its` iterations of CG (or BiCGStab) from x (ghosts: the data), in place. */
static void host_krylov(const ref_grid *g, int bicg, int pre, int its, double *x, const double *f, int64_t n)
{
    double *r = calloc(n, 8), *z = calloc(n, 8), *p = calloc(n, 8), *q = calloc(n, 8), *r0 = calloc(n, 8),
           *v = calloc(n, 8), *s = calloc(n, 8), *t = calloc(n, 8), *ph = calloc(n, 8), *sh = calloc(n, 8);
    ref_residual(g, x, f, r);
    if (!bicg) {
        prec(g, pre, r, z);
        memcpy(p, z, n * 8);
        double rz = dot(g, r, z);
        for (int it = 0; it < its; ++it) {
            apply0(g, p, q);
            const double alpha = rz / dot(g, p, q);
            axpby(g, alpha, p, 1, x);
            axpby(g, -alpha, q, 1, r);
            prec(g, pre, r, z);
            const double rz1 = dot(g, r, z);
            axpby(g, 1, z, rz1 / rz, p);
            rz = rz1;
        }
    } else {
        memcpy(r0, r, n * 8);
        double rho = dot(g, r0, r), beta = 0, omega = 1;
        for (int it = 0; it < its; ++it) {
            if (it == 0) {
                memcpy(p, r, n * 8);
            } else {
                axpby(g, -omega, v, 1, p); /* p - omega v */
                axpby(g, 1, r, beta, p);   /* r + beta (p - omega v) */
            }
            prec(g, pre, p, ph);
            apply0(g, ph, v);
            const double alpha = rho / dot(g, r0, v);
            memcpy(s, r, n * 8);
            axpby(g, -alpha, v, 1, s);
            prec(g, pre, s, sh);
            apply0(g, sh, t);
            omega = dot(g, t, s) / dot(g, t, t);
            axpby(g, alpha, ph, 1, x);
            axpby(g, omega, sh, 1, x);
            memcpy(r, s, n * 8);
            axpby(g, -omega, t, 1, r);
            const double rho1 = dot(g, r0, r);
            beta = (rho1 / rho) * (alpha / omega);
            rho = rho1;
        }
    }
    free(r); free(z); free(p); free(q); free(r0); free(v); free(s); free(t); free(ph); free(sh);
}

/* ---- helpers -------------------------------------------------------------- */

/* u_exact: random interior (mean zero when singular), random data ghosts;
 * f = A u_exact + offset (so the solution of the problem is u_exact: the
 * solver removes a singular problem's mean of f); the initial u has the
 * same ghosts and a zero interior. */
static void exact_problem(t_problem *P, double *ue, double offset)
{
    t_problem_randomize(P);
    memcpy(ue, P->u, P->elems * 8);
    if (ref_is_singular(&P->g)) ref_remove_mean(&P->g, ue);
    ref_apply(&P->g, ue, P->f);
    for (int64_t k = ref_k_first(&P->g); k <= ref_k_last(&P->g); ++k)
        for (int64_t j = 1; j <= P->g.n[1]; ++j)
            for (int64_t i = 1; i <= P->g.n[0]; ++i) {
                P->u[ref_idx(&P->g, i, j, k)] = 0;
                P->f[ref_idx(&P->g, i, j, k)] += offset;
            }
}

static int64_t elems_of(const t_problem *P) { return P->elems; }

/* One solve of an exact discrete problem; returns the max error relative to
 * max |u_exact|, the report in *rep and the status in *st. */
static double solve_exact_offset(const pgpu_config *c, const char *what, pgpu_report *rep, pgpu_status *st,
                                 double offset)
{
    t_problem P;
    *st = PGPU_ERROR_INVALID_ARGUMENT;
    if (!t_problem_init(&P, c)) return INFINITY;
    double *ue = t_problem_array(&P, NULL), *u = t_problem_array(&P, NULL);
    exact_problem(&P, ue, offset);
    pgpu_solver *s = t_create(c, what);
    double err = INFINITY;
    if (s && t_problem_solve(&P, s, what, rep, st, u))
        err = ref_max_diff(&P.g, u, ue) / ref_max_abs(&P.g, ue);
    pgpu_destroy(s);
    free(ue);
    free(u);
    t_problem_free(&P);
    return err;
}

static double solve_exact(const pgpu_config *c, const char *what, pgpu_report *rep, pgpu_status *st)
{
    return solve_exact_offset(c, what, rep, st, 0.0);
}

/* ---- the tests -------------------------------------------------------------- */

/* PGPU_FIXED iterations against the host's iterates. */
static void test_iterates(void)
{
    static const struct {
        int nx, ny, nz;
        const char *bc;
    } grids[] = {{13, 11, 7, "DDNDPP"}, {17, 1 + 12, 1, "NDDD"}, {9, 10, 11, "PPNNDN"}, {12, 12, 12, "NNNNNN"},
                 {19, 13, 1, "PPPP"}};
    const unsigned kinds[] = {PGPU_CG, PGPU_CG | PGPU_PIPELINED, PGPU_BICGSTAB};
    const int pres[] = {PGPU_PRECOND_NONE, PGPU_PRECOND_JACOBI};
    for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; ++gi)
        for (size_t ki = 0; ki < 3; ++ki)
            for (size_t pi = 0; pi < 2; ++pi)
                for (int its = 1; its <= 6; its += 5) {
                    pgpu_config c = t_config(grids[gi].nx, grids[gi].ny, grids[gi].nz, grids[gi].bc, 0.9 / grids[gi].nx,
                                             1.1 / grids[gi].ny, 1.0 / grids[gi].nz, kinds[ki] | PGPU_DOUBLE | PGPU_FIXED);
                    c.preconditioner = pres[pi];
                    c.max_iterations = its;
                    char what[160];
                    snprintf(what, sizeof what, "%s/%s %d it, %dx%dx%d %s", kname(kinds[ki]), pre_name(pres[pi]), its,
                             grids[gi].nx, grids[gi].ny, grids[gi].nz, grids[gi].bc);
                    t_problem P;
                    if (!t_problem_init(&P, &c)) continue;
                    t_problem_randomize(&P);
                    double *x = t_problem_array(&P, P.u), *u = t_problem_array(&P, NULL);
                    host_krylov(&P.g, (kinds[ki] & PGPU_BICGSTAB) != 0, pres[pi], its, x, P.f, elems_of(&P));
                    if (ref_is_singular(&P.g)) ref_remove_mean(&P.g, x);
                    pgpu_solver *s = t_create(&c, what);
                    pgpu_report rep;
                    pgpu_status st;
                    if (s && t_problem_solve(&P, s, what, &rep, &st, u)) {
                        const double d = ref_max_diff(&P.g, u, x) / ref_max_abs(&P.g, x);
                        /* pipelined CG: the same iterates in exact arithmetic, other rounding */
                        const double tol = (kinds[ki] & PGPU_PIPELINED) ? 1e-8 : 1e-11;
                        CHECK(st == PGPU_SUCCESS && d <= tol, "%s: status %s, max diff to the host %.2e (<= %.0e)",
                              what, pgpu_status_string(st), d, tol);
                    }
                    pgpu_destroy(s);
                    free(x);
                    free(u);
                    t_problem_free(&P);
                }
}

/* Exact discrete solutions, every boundary combination. */
static void test_exact_all_faces(void)
{
    static const char *axis[5] = {"DD", "DN", "ND", "NN", "PP"};
    int worst_it = 0;
    for (int dims = 2; dims <= 3; ++dims)
        for (int a = 0; a < 5; ++a)
            for (int b = 0; b < 5; ++b)
                for (int cz = 0; cz < (dims == 3 ? 5 : 1); ++cz) {
                    char bc[8];
                    snprintf(bc, sizeof bc, "%s%s%s", axis[a], axis[b], dims == 3 ? axis[cz] : "");
                    const int nx = 19, ny = 13, nz = dims == 3 ? 11 : 1;
                    /* cycle through the methods so that each meets many face sets */
                    const int which = (a + 2 * b + 3 * cz) % 4;
                    unsigned flags = which == 3 ? PGPU_BICGSTAB : PGPU_CG;
                    if (which == 1) flags |= PGPU_PIPELINED;
                    pgpu_config c = t_config(nx, ny, nz, bc, 1.0 / nx, 1.3 / ny, 0.8 / nz, flags | PGPU_DOUBLE);
                    c.preconditioner = which == 2 ? PGPU_PRECOND_JACOBI : PGPU_PRECOND_VCYCLE;
                    c.tolerance = 1e-12;
                    if (which == 2) c.max_iterations = 5000;
                    char what[128];
                    snprintf(what, sizeof what, "%s/%s %dD %s", kname(flags), pre_name(c.preconditioner), dims, bc);
                    pgpu_report rep;
                    pgpu_status st;
                    const double err = solve_exact(&c, what, &rep, &st);
                    const double bound = which == 2 ? 1e-8 : 1e-9;
                    CHECK(st == PGPU_SUCCESS && err <= bound && rep.relative_residual <= 1e-12,
                          "%s: %s, %d iterations, relative residual %.2e, error %.2e (<= %.0e)", what,
                          pgpu_status_string(st), rep.iterations, rep.relative_residual, err, bound);
                    if (c.preconditioner == PGPU_PRECOND_VCYCLE && rep.iterations > worst_it) worst_it = rep.iterations;
                }
    t_note("multigrid-preconditioned: at most %d iterations to 1e-12 over the face sets", worst_it);
}

/* A grid of one point (the hierarchy is that point alone: its cycle is the
 * exact solve): every Krylov method and preconditioner, and the multigrid
 * methods with float's own stop, twice on one handle with fresh data (the
 * second solve replays the first one's graphs). */
static void test_one_point(void)
{
    static const char *const bcs[] = {"DDDD", "NDDN", "PPDN", "DNND"};
    const unsigned kinds[] = {PGPU_CG, PGPU_CG | PGPU_PIPELINED, PGPU_BICGSTAB, PGPU_VCYCLE,
                              PGPU_VCYCLE | PGPU_WCYCLE, PGPU_FMG};
    const unsigned precs[] = {PGPU_DOUBLE, PGPU_FLOAT, PGPU_MIXED};
    for (size_t bi = 0; bi < 4; ++bi)
        for (size_t ki = 0; ki < 6; ++ki)
            for (size_t qi = 0; qi < 3; ++qi)
                for (int pre = PGPU_PRECOND_NONE; pre <= PGPU_PRECOND_FFT; ++pre) {
                    const int krylov = (kinds[ki] & (PGPU_CG | PGPU_BICGSTAB)) != 0;
                    if (!krylov && pre != PGPU_PRECOND_NONE) continue; /* the multigrid methods once */
                    pgpu_config c = t_config(1, 1, 1, bcs[bi], 0.5, 0.7, 0.6, kinds[ki] | precs[qi]);
                    if (krylov) c.preconditioner = (pgpu_preconditioner)pre;
                    char what[160];
                    snprintf(what, sizeof what, "one point %s %s/%s %s", bcs[bi], kname(kinds[ki]),
                             krylov ? pre_name(pre) : "-", t_precision_name(precs[qi]));
                    pgpu_solver *s = NULL;
                    if (pgpu_create(&c, &s) != PGPU_SUCCESS) { /* MIXED and FFT where they do not serve */
                        t_note("%s: %s", what, pgpu_last_error(NULL));
                        continue;
                    }
                    for (int round = 0; round < 2; ++round) {
                        t_problem P;
                        if (!t_problem_init(&P, &c)) break;
                        double *ue = t_problem_array(&P, NULL), *u = t_problem_array(&P, NULL);
                        exact_problem(&P, ue, 0.0);
                        pgpu_report rep;
                        pgpu_status st;
                        if (t_problem_solve(&P, s, what, &rep, &st, u)) {
                            /* The error relative to the data's scale: the
                             * point's value and the wall values (ue holds
                             * both).  A point far smaller than its walls
                             * has f near minus their sum, and f's rounding
                             * moves it by eps times the walls' scale. */
                            double scale = 0;
                            for (int64_t e = 0; e < P.elems; ++e) scale = fmax(scale, fabs(ue[e]));
                            const double err = ref_max_diff(&P.g, u, ue) / scale;
                            /* float: f, the data and u rounded, and the
                             * operator's cancellation on a periodic axis of
                             * one point (30 eps seen) */
                            const double tol = precs[qi] == PGPU_FLOAT ? 1e-5 : 1e-12;
                            CHECK(st == PGPU_SUCCESS && err <= tol, "%s, solve %d: %s, %d iterations, error %.2e",
                                  what, round + 1, pgpu_status_string(st), rep.iterations, err);
                        }
                        free(ue);
                        free(u);
                        t_problem_free(&P);
                    }
                    pgpu_destroy(s);
                }
}

/* Odd/prime sizes, float and double, every preconditioner.  The last four
 * grids are singular with f offset by a constant: rounding moves the
 * recursive residual's mean, and unless the solver takes it out, float CG
 * without a preconditioner on the 1D Neumann line ran to max_iterations
 * with u's constant growing until the true residual was 1e4 times ||f||. */
static void test_sizes_and_precisions(void)
{
    static const struct {
        int nx, ny, nz;
        const char *bc;
        double offset;
    } grids[] = {{31, 37, 29, "DDDDDD", 0},   {41, 23, 1, "NDDN", 0},     {33, 32, 31, "PPNNDD", 0},
                 {64, 64, 64, "NNNNNN", 0},   {97, 89, 1, "PPPP", 0},     {38, 1, 1, "NNNN", 1.7e2},
                 {29, 1, 1, "PPNN", -3e2},    {39, 23, 1, "NNPP", 1.7e2}, {19, 17, 13, "PPNNNN", 50}};
    const int pres[] = {PGPU_PRECOND_VCYCLE, PGPU_PRECOND_FFT, PGPU_PRECOND_JACOBI, PGPU_PRECOND_NONE};
    const unsigned kinds[] = {PGPU_CG, PGPU_CG | PGPU_PIPELINED, PGPU_BICGSTAB};
    for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; ++gi)
        for (int fl = 0; fl < 2; ++fl)
            for (size_t pi = 0; pi < 4; ++pi)
                for (size_t ki = 0; ki < 3; ++ki) {
                    if (pres[pi] >= PGPU_PRECOND_JACOBI && grids[gi].nx > 40) continue; /* slow without multigrid */
                    const unsigned prec = fl ? PGPU_FLOAT : PGPU_DOUBLE;
                    pgpu_config c = t_config(grids[gi].nx, grids[gi].ny, grids[gi].nz, grids[gi].bc, 1.0 / grids[gi].nx,
                                             1.0 / grids[gi].ny, 1.0 / grids[gi].nz, kinds[ki] | prec);
                    c.preconditioner = pres[pi];
                    if (!fl) c.tolerance = 1e-11;
                    char what[160];
                    snprintf(what, sizeof what, "%s/%s %s %dx%dx%d %s", kname(kinds[ki]), pre_name(pres[pi]),
                             t_precision_name(prec), grids[gi].nx, grids[gi].ny, grids[gi].nz, grids[gi].bc);
                    pgpu_solver *probe = NULL;
                    const pgpu_status cs = pgpu_create(&c, &probe);
                    pgpu_destroy(probe);
                    if (cs == PGPU_ERROR_UNSUPPORTED && pres[pi] == PGPU_PRECOND_FFT) {
                        t_note("%s: the FFT does not serve these faces (%s)", what, pgpu_last_error(NULL));
                        continue;
                    }
                    pgpu_report rep;
                    pgpu_status st;
                    const double err = solve_exact_offset(&c, what, &rep, &st, grids[gi].offset);
                    if (fl && (kinds[ki] & PGPU_PIPELINED) && pres[pi] == PGPU_PRECOND_NONE &&
                        st == PGPU_ERROR_BREAKDOWN) {
                        /* documented: the pipelined recurrences in float
                         * without a preconditioner may break down, u then
                         * holds the last iterate before it, finite; the
                         * recurrences may have drifted first, so its
                         * residual is not bounded by the start's (one run
                         * in about fifteen here: 5.6 after 540 iterations) */
                        CHECK(rep.iterations > 0 && isfinite(rep.relative_residual) && isfinite(err),
                              "%s: breakdown (documented for float without a preconditioner) after %d iterations, "
                              "u finite: relative residual %.2e, error %.2e",
                              what, rep.iterations, rep.relative_residual, err);
                        continue;
                    }
                    /* double: tolerance 1e-11 times the condition number of
                     * these grids (<= ~2e3).  Float, the default stop: with
                     * multigrid or the FFT, float's rounding of u times a
                     * modest factor; with none or the diagonal the smooth
                     * error left is the condition number times eps, or
                     * times the residual reached where that is larger (the
                     * stop is met by the recursive residual; pipelined CG's
                     * true one can end near 1e-5: 29x1x1 PPNN, Jacobi, 7e-6,
                     * error 1.3e-4 against 8 kappa eps = 8e-5). */
                    const ref_grid rg = ref_grid_from_config(&c);
                    double lmax = 4 / (c.hx * c.hx) + 4 / (c.hy * c.hy) + (c.nz > 1 ? 4 / (c.hz * c.hz) : 0);
                    const double kappa = lmax / ref_lambda_min(&rg);
                    const int weak = pres[pi] == PGPU_PRECOND_NONE || pres[pi] == PGPU_PRECOND_JACOBI;
                    const double bound =
                        !fl ? 5e-8 : weak ? kappa * (8 * 1.19e-7 + 2 * rep.relative_residual) : 2e-5;
                    CHECK(st == PGPU_SUCCESS && err <= bound, "%s: %s, %d iterations, relative residual %.2e, error %.2e (<= %.0e)",
                          what, pgpu_status_string(st), rep.iterations, rep.relative_residual, err, bound);
                }
}

/* PGPU_MIXED: double vectors, float preconditioner; double's accuracy. */
static void test_mixed(void)
{
    static const struct {
        int nx, ny, nz;
        const char *bc;
    } grids[] = {{47, 41, 39, "DDDDDD"}, {48, 48, 48, "PPPPPP"}, {37, 29, 1, "NNDDPP"}, {33, 34, 35, "NNNNNN"}};
    const unsigned kinds[] = {PGPU_CG, PGPU_BICGSTAB};
    const int pres[] = {PGPU_PRECOND_VCYCLE, PGPU_PRECOND_FFT};
    for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; ++gi)
        for (size_t ki = 0; ki < 2; ++ki)
            for (size_t pi = 0; pi < 2; ++pi) {
                pgpu_config c = t_config(grids[gi].nx, grids[gi].ny, grids[gi].nz, grids[gi].bc, 1.0 / grids[gi].nx,
                                         1.0 / grids[gi].ny, 1.0 / grids[gi].nz, kinds[ki] | PGPU_MIXED);
                c.preconditioner = pres[pi];
                char what[160];
                snprintf(what, sizeof what, "%s/%s mixed %dx%dx%d %s", kname(kinds[ki]), pre_name(pres[pi]),
                         grids[gi].nx, grids[gi].ny, grids[gi].nz, grids[gi].bc);
                pgpu_solver *probe = NULL;
                if (pgpu_create(&c, &probe) == PGPU_ERROR_UNSUPPORTED && pres[pi] == PGPU_PRECOND_FFT) {
                    t_note("%s: the FFT does not serve these faces", what);
                    continue;
                }
                pgpu_destroy(probe);
                pgpu_report rep;
                pgpu_status st;
                const double err = solve_exact(&c, what, &rep, &st);
                CHECK(st == PGPU_SUCCESS && rep.relative_residual <= 1e-10 && err <= 5e-8,
                      "%s: %s, %d iterations, relative residual %.2e (<= 1e-10), error %.2e (<= 5e-8)", what,
                      pgpu_status_string(st), rep.iterations, rep.relative_residual, err);
            }
}

/* Multigrid-preconditioned CG: iterations to 1e-10 bounded over sizes. */
static void test_iteration_bound(void)
{
    const int bound = 12;
    const int sizes[] = {64, 128, 256};
    const unsigned kinds[] = {PGPU_CG, PGPU_CG | PGPU_PIPELINED};
    for (size_t ki = 0; ki < 2; ++ki)
        for (size_t si = 0; si < 3; ++si) {
            const int n = sizes[si];
            pgpu_config c = t_config(n, n, n, "DDDDDD", 1.0 / (n + 1), 1.0 / (n + 1), 1.0 / (n + 1), kinds[ki] | PGPU_DOUBLE);
            c.tolerance = 1e-10;
            char what[96];
            snprintf(what, sizeof what, "%s/vcycle %d^3 Dirichlet to 1e-10", kname(kinds[ki]), n);
            pgpu_report rep;
            pgpu_status st;
            const double err = solve_exact(&c, what, &rep, &st);
            CHECK(st == PGPU_SUCCESS && rep.iterations <= bound && err <= 1e-6,
                  "%s: %s, %d iterations (<= %d), relative residual %.2e, error %.2e, %.2f ms", what,
                  pgpu_status_string(st), rep.iterations, bound, rep.relative_residual, err, rep.seconds * 1e3);
        }
}

/* Pipelined and classic CG reach the same solution; the FFT preconditioner
 * on the box is the exact inverse. */
static void test_agreement(void)
{
    pgpu_config c = t_config(45, 38, 29, "DNPPND", 1.0 / 45, 1.0 / 38, 1.0 / 29, PGPU_CG | PGPU_DOUBLE);
    c.tolerance = 1e-11;
    t_problem P;
    if (!t_problem_init(&P, &c)) return;
    t_problem_randomize(&P);
    double *u[2] = {t_problem_array(&P, NULL), t_problem_array(&P, NULL)};
    int its[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
        pgpu_config ck = c;
        if (k) ck.flags |= PGPU_PIPELINED;
        pgpu_solver *s = t_create(&ck, "agreement");
        pgpu_report rep;
        pgpu_status st;
        if (s && t_problem_solve(&P, s, "agreement", &rep, &st, u[k]))
            CHECK(st == PGPU_SUCCESS, "%s CG to 1e-11: %s, %d iterations", k ? "pipelined" : "classic",
                  pgpu_status_string(st), rep.iterations);
        its[k] = rep.iterations;
        pgpu_destroy(s);
    }
    const double d = ref_max_diff(&P.g, u[0], u[1]) / ref_max_abs(&P.g, u[0]);
    CHECK(d <= 1e-8, "pipelined and classic CG agree: max difference %.2e of max |u| (<= 1e-8; %d and %d iterations)",
          d, its[0], its[1]);
    free(u[0]);
    free(u[1]);
    t_problem_free(&P);

    static const char *faces[] = {"DDDDDD", "PPPPPP", "NNNNNN", "DDNNPP"};
    for (int k = 0; k < 4; ++k) {
        pgpu_config cf = t_config(32, 32, 32, faces[k], 1.0 / 33, 1.0 / 33, 1.0 / 33, PGPU_CG | PGPU_DOUBLE);
        cf.preconditioner = PGPU_PRECOND_FFT;
        cf.tolerance = 1e-10;
        char what[64];
        snprintf(what, sizeof what, "CG/fft on the box %s", faces[k]);
        pgpu_solver *probe = NULL;
        if (pgpu_create(&cf, &probe) != PGPU_SUCCESS) {
            t_note("%s: not served (%s)", what, pgpu_last_error(NULL));
            continue;
        }
        pgpu_destroy(probe);
        pgpu_report rep;
        pgpu_status st;
        const double err = solve_exact(&cf, what, &rep, &st);
        CHECK(st == PGPU_SUCCESS && rep.iterations <= 2 && err <= 1e-9, "%s: %s, %d iterations (<= 2), error %.2e",
              what, pgpu_status_string(st), rep.iterations, err);
    }
}

/* Float overflow in the operator: PGPU_ERROR_BREAKDOWN, u finite. */
static void test_breakdown(void)
{
    const unsigned kinds[] = {PGPU_CG, PGPU_CG | PGPU_PIPELINED, PGPU_BICGSTAB};
    /* (unpreconditioned: A r overflows float; a preconditioner keeps the
     * vectors at the scale of u, which does not overflow) */
    const int pres[] = {PGPU_PRECOND_NONE};
    for (size_t ki = 0; ki < 3; ++ki)
        for (size_t pi = 0; pi < 1; ++pi) {
            pgpu_config c = t_config(33, 33, 33, "DDDDDD", 1.0 / 34, 1.0 / 34, 1.0 / 34, kinds[ki] | PGPU_FLOAT);
            c.preconditioner = pres[pi];
            t_problem P;
            if (!t_problem_init(&P, &c)) return;
            t_problem_randomize(&P);
            for (int64_t e = 0; e < P.elems; ++e)
                if (ref_classify(&P.g, e, NULL) == REF_INTERIOR) {
                    P.f[e] = 3e37 * (P.f[e] > 0 ? 1 : -1);
                    P.u[e] = 0.25;
                }
            double *u = t_problem_array(&P, NULL);
            char what[96];
            snprintf(what, sizeof what, "%s/%s float, f = +-3e37", kname(kinds[ki]), pre_name(pres[pi]));
            pgpu_solver *s = t_create(&c, what);
            pgpu_report rep;
            pgpu_status st;
            if (s && t_problem_solve(&P, s, what, &rep, &st, u)) {
                int finite = 1;
                for (int64_t e = 0; e < P.elems; ++e)
                    if (ref_classify(&P.g, e, NULL) == REF_INTERIOR && !isfinite(u[e])) finite = 0;
                CHECK(st == PGPU_ERROR_BREAKDOWN && rep.status == st && finite && strlen(pgpu_last_error(s)) > 0,
                      "%s: %s after %d iterations, u finite: %d (%s)", what, pgpu_status_string(st), rep.iterations,
                      finite, pgpu_last_error(s));
            }
            pgpu_destroy(s);
            free(u);
            t_problem_free(&P);
        }
}

/* A PGPU_FIXED solve captured by the caller equals the direct one. */
static void test_capture(void)
{
    const unsigned kinds[] = {PGPU_CG, PGPU_CG | PGPU_PIPELINED, PGPU_BICGSTAB, PGPU_CG | PGPU_PIPELINED};
    for (size_t ki = 0; ki < 4; ++ki) {
        pgpu_config c = t_config(40, 36, 30, "DDNNPP", 1.0 / 40, 1.0 / 36, 1.0 / 30, kinds[ki] | PGPU_DOUBLE | PGPU_FIXED);
        c.max_iterations = 5;
        if (ki == 3) c.preconditioner = PGPU_PRECOND_NONE; /* two buffers of w: an odd count */
        cudaStream_t st = NULL;
        if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) return;
        c.stream = (struct CUstream_st *)st;
        t_problem P;
        if (!t_problem_init(&P, &c)) return;
        t_problem_randomize(&P);
        void *a = malloc(P.bytes), *b = malloc(P.bytes);
        pgpu_solver *s = t_create(&c, "capture");
        int ok = s && t_problem_upload(&P);
        ok = ok && pgpu_solve(s, P.d_u, P.d_f, NULL) == PGPU_SUCCESS && cudaStreamSynchronize(st) == cudaSuccess;
        ok = ok && t_dev_download(a, P.d_u, P.bytes);
        ok = ok && t_problem_upload(&P);
        cudaGraph_t graph = NULL;
        cudaGraphExec_t exec = NULL;
        ok = ok && cudaStreamSynchronize(st) == cudaSuccess;
        ok = ok && cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
        const pgpu_status ss = ok ? pgpu_solve(s, P.d_u, P.d_f, NULL) : PGPU_ERROR_CUDA;
        ok = cudaStreamEndCapture(st, &graph) == cudaSuccess && ok && ss == PGPU_SUCCESS;
        ok = ok && cudaGraphInstantiateWithFlags(&exec, graph, 0) == cudaSuccess;
        ok = ok && cudaGraphLaunch(exec, st) == cudaSuccess && cudaStreamSynchronize(st) == cudaSuccess;
        ok = ok && t_dev_download(b, P.d_u, P.bytes);
        CHECK(ok && memcmp(a, b, P.bytes) == 0, "%s PGPU_FIXED, 5 iterations, captured by the caller: %s",
              kname(kinds[ki]), !ok ? "the capture failed" : memcmp(a, b, P.bytes) ? "differs" : "the same bits");
        if (exec) cudaGraphExecDestroy(exec);
        if (graph) cudaGraphDestroy(graph);
        pgpu_destroy(s);
        t_problem_free(&P);
        free(a);
        free(b);
        cudaStreamDestroy(st);
    }
}

/* Configs the Krylov methods refuse. */
static void test_refusals(void)
{
    pgpu_config c = t_config(16, 16, 16, "DDDDDD", 1.0 / 17, 1.0 / 17, 1.0 / 17, PGPU_VCYCLE);
    pgpu_solver *s = NULL;
    c.preconditioner = PGPU_PRECOND_JACOBI;
    CHECK(pgpu_create(&c, &s) == PGPU_ERROR_INVALID_ARGUMENT && !s, "a preconditioner with PGPU_VCYCLE is refused");
    c.flags = PGPU_CG;
    c.preconditioner = (pgpu_preconditioner)7;
    CHECK(pgpu_create(&c, &s) == PGPU_ERROR_INVALID_ARGUMENT && !s, "preconditioner 7 is refused");
    c.preconditioner = PGPU_PRECOND_DEFAULT;
    c.flags = PGPU_BICGSTAB | PGPU_PIPELINED;
    CHECK(pgpu_create(&c, &s) == PGPU_ERROR_INVALID_ARGUMENT && !s, "PGPU_PIPELINED with BiCGStab is refused");
    c.flags = PGPU_CG | PGPU_MIXED;
    c.preconditioner = PGPU_PRECOND_JACOBI;
    CHECK(pgpu_create(&c, &s) == PGPU_ERROR_UNSUPPORTED && !s,
          "PGPU_MIXED with a Jacobi-preconditioned CG: unsupported (no float preconditioner to gain from)");
    c.preconditioner = PGPU_PRECOND_DEFAULT;
    c.flags = PGPU_CG | PGPU_PIPELINED | PGPU_MIXED;
    CHECK(pgpu_create(&c, &s) == PGPU_ERROR_UNSUPPORTED && !s, "PGPU_PIPELINED with PGPU_MIXED: unsupported");
    c.flags = PGPU_CG | PGPU_WCYCLE;
    c.preconditioner = PGPU_PRECOND_JACOBI;
    CHECK(pgpu_create(&c, &s) == PGPU_ERROR_INVALID_ARGUMENT && !s, "PGPU_WCYCLE with a Jacobi-preconditioned CG is refused");
    c.flags = PGPU_CG;
    c.preconditioner = PGPU_PRECOND_DEFAULT;
    if (CHECK(pgpu_create(&c, &s) == PGPU_SUCCESS, "CG with defaults is created")) {
        pgpu_config got;
        pgpu_get_config(s, &got);
        CHECK(got.preconditioner == PGPU_PRECOND_VCYCLE && got.pre_smooth == got.post_smooth && got.tolerance == 1e-10,
              "CG's defaults: preconditioner %d (vcycle 3), pre %d = post %d, tolerance %.0e", (int)got.preconditioner,
              got.pre_smooth, got.post_smooth, got.tolerance);
        pgpu_destroy(s);
        s = NULL;
    }
}

int main(int argc, char **argv)
{
    /* --short: the small grids only, every kernel once (the sanitizers' run) */
    const int short_run = argc > 1 && !strcmp(argv[1], "--short");
    t_require_device("krylov");
    test_refusals();
    test_iterates();
    if (short_run) {
        /* the multigrid and FFT preconditioners, double and mixed */
        const unsigned kinds[] = {PGPU_CG | PGPU_DOUBLE, PGPU_CG | PGPU_PIPELINED | PGPU_DOUBLE,
                                  PGPU_BICGSTAB | PGPU_MIXED, PGPU_CG | PGPU_FLOAT};
        for (int k = 0; k < 4; ++k)
            for (int pre = PGPU_PRECOND_VCYCLE; pre <= PGPU_PRECOND_FFT; ++pre) {
                pgpu_config c = t_config(17, 15, 16, "DDPPNN", 1.0 / 17, 1.0 / 15, 1.0 / 16, kinds[k]);
                c.preconditioner = (pgpu_preconditioner)pre;
                pgpu_report rep;
                pgpu_status st;
                char what[96];
                snprintf(what, sizeof what, "%s/%s short, flags 0x%x", kname(kinds[k]), pre_name(pre), kinds[k]);
                const double err = solve_exact(&c, what, &rep, &st);
                CHECK(st == PGPU_SUCCESS && err <= ((kinds[k] & PGPU_FLOAT) ? 2e-5 : 1e-7), "%s: %s, %d iterations, error %.2e",
                      what, pgpu_status_string(st), rep.iterations, err);
            }
        test_breakdown();
        test_capture();
        return t_finish("krylov --short");
    }
    test_one_point();
    test_exact_all_faces();
    test_sizes_and_precisions();
    test_agreement();
    test_mixed();
    test_breakdown();
    test_capture();
    test_iteration_bound();
    return t_finish("krylov");
}
