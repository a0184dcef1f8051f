/* test_eigen.c -- solve A u = v for an exact discrete eigenvector v
 * (A v = lambda v, homogeneous boundary data) with JACOBI and RBGS, float
 * and double, and check the answer u = v / lambda.
 *
 * The bound used is rigorous: A is symmetric, so for the error e = u - v/lambda
 *     ||e||_2 <= ||A e||_2 / lambda_min = ||r||_2 / lambda_min,
 * where lambda_min is A's smallest eigenvalue (the smallest non-zero one
 * for singular problems, where e has mean zero).  With the relative
 * residual rel = ||r|| / ||v|| (taken from the reference, on the returned u):
 *     ||e|| / ||v / lambda|| <= rel * lambda / lambda_min
 * (plus the rounding of f = v to the solver's precision).
 * Also checked: status SUCCESS, report->relative_residual <= tolerance and
 * close to the reference's value, the singular flag, and for singular
 * problems rhs_mean == 0 (these modes have mean zero) and mean(u) == 0.
 */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct eigen_case {
    int64_t nx, ny, nz;
    const char *bcs;
    double hx, hy, hz;
    int k[3];
} eigen_case;

static const eigen_case cases[] = {
    {16, 12, 10, "DDDDDD", 0.06, 0.08, 0.1, {1, 1, 1}},
    {16, 12, 10, "DDDDDD", 0.06, 0.08, 0.1, {3, 2, 4}},
    {12, 10, 8, "NNPPDD", 0.1, 0.1, 0.1, {2, 1, 1}},
    {10, 8, 6, "NNNNNN", 0.1, 0.12, 0.15, {1, 2, 0}},      /* singular */
    {9, 7, 5, "PPPPPP", 0.1, 0.1, 0.1, {1, 1, 2}},         /* singular, odd periodic */
    {40, 24, 1, "PPNN", 0.025, 0.04, 0.0, {2, 1, 0}},      /* 2D singular */
    {33, 20, 1, "DNND", 0.03, 0.05, 0.0, {1, 2, 0}},       /* 2D, mixed axes */
    {1, 15, 11, "PPDNND", 0.1, 0.07, 0.09, {0, 2, 1}},     /* a periodic axis of one point */
};

static double diag_max(const ref_grid *g)
{
    double d = 0.0;
    for (int a = 0; a < g->dims; ++a)
        d += 2.0 / (g->h[a] * g->h[a]);
    return d;
}

static void run(const eigen_case *c, unsigned method, unsigned prec)
{
    pgpu_config cfg = t_config(c->nx, c->ny, c->nz, c->bcs, c->hx, c->hy, c->hz, method | prec);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    const ref_grid *g = &P.g;
    const int singular = ref_is_singular(g);
    const double phase[3] = {0.4, -0.2, 1.3};
    double *v = t_problem_array(&P, NULL);
    const double lambda = ref_fill_mode(g, v, c->k, phase);

    /* f = v, initial guess random, ghost data zero (periodic ghosts NaN). */
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        P.f[p] = v[p];
        P.u[p] = t_rand(-0.1, 0.1) / lambda;
    }
    /* The float residual cannot drop below about eps * diag * |u| / |b|
     * (rounding of u alone); ask for ten times that, or the default. */
    const double floor_rel = t_eps(prec) * diag_max(g) / lambda;
    cfg.tolerance = prec == PGPU_FLOAT ? fmax(1e-5, 10.0 * floor_rel) : 1e-10;
    /* Jacobi with weight 1 hardly damps the checkerboard mode (nor, on a
     * singular problem, at all): in float, rounding noise piles up there
     * and holds the residual above the tolerance.  Weight 0.8 damps it. */
    cfg.omega = method == PGPU_RBGS ? 1.5 : (singular || prec == PGPU_FLOAT ? 0.8 : 1.0);

    char name[200], letters[8];
    snprintf(name, sizeof name, "eigen %s %s %lldx%lldx%lld %s k=(%d,%d,%d) tol %.1e",
             t_method_name(cfg.flags), t_precision_name(prec), (long long)c->nx, (long long)c->ny,
             (long long)c->nz, t_bc_letters(g, letters), c->k[0], c->k[1], c->k[2], cfg.tolerance);
    pgpu_solver *s = t_create(&cfg, name);
    double *u = t_problem_array(&P, NULL);
    pgpu_report rep;
    pgpu_status st;
    if (t_problem_solve(&P, s, name, &rep, &st, u)) {
        const ref_norms nm = ref_residual(g, u, P.f, NULL);
        CHECK(st == PGPU_SUCCESS && rep.status == st && rep.relative_residual <= cfg.tolerance &&
                  rep.singular == singular && rep.iterations > 0,
              "%s: %s after %d iterations, report relative residual %.2e, singular %d", name,
              pgpu_status_string(st), rep.iterations, rep.relative_residual, rep.singular);
        /* Computed in the solver's precision, the residual carries
         * noise of about 2 floor_rel. */
        CHECK(nm.relative <= 1.5 * cfg.tolerance &&
                  fabs(rep.relative_residual - nm.relative) <= 0.2 * nm.relative + 3.0 * floor_rel,
              "%s: reference relative residual %.3e (report %.3e)", name, nm.relative,
              rep.relative_residual);

        /* v is exact; f is v rounded to the precision, which adds
         * eps/2 ||v|| to ||A e||. */
        const double err = ref_norm2_diff(g, u, v, 1.0 / lambda) / (ref_norm2(g, v) / lambda);
        const double bound = 1.01 * (nm.relative * (1.0 + t_eps(prec)) + t_eps(prec)) * lambda /
                             ref_lambda_min(g);
        CHECK(err <= bound, "%s: ||u - v/lambda|| / ||v/lambda|| = %.3e <= %.3e (lambda %.4g, "
              "lambda_min %.4g)", name, err, bound, lambda, ref_lambda_min(g));
        if (singular)
            CHECK(fabs(ref_mean(g, u)) <= 8.0 * t_eps(prec) * ref_max_abs(g, u) &&
                      fabs(rep.rhs_mean) <= 100.0 * t_eps(prec) * ref_rms(g, v),
                  "%s: mean(u) %.2e, rhs_mean %.2e (both ~0)", name, ref_mean(g, u), rep.rhs_mean);
    }
    free(u);
    free(v);
    pgpu_destroy(s);
    t_problem_free(&P);
}

int main(void)
{
    t_require_device("test_eigen");
    t_seed();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (int m = 0; m < 2; ++m)
            for (int p = 0; p < 2; ++p)
                run(&cases[c], m ? PGPU_RBGS : PGPU_JACOBI, p ? PGPU_FLOAT : PGPU_DOUBLE);
    return t_finish("test_eigen");
}
