/* test_smoke.c -- every method, both precisions, a few boundary mixes, on
 * grids small enough to run under compute-sanitizer (memcheck, racecheck).
 *
 * Each solve must succeed (fixed-schedule methods: finite output), reach its
 * tolerance, and match the host reference residual; FFT and V-cycles must
 * agree.  Checks are loose on purpose: the point is to drive every kernel
 * (smoothers, transfers, FMG interpolation, FFT passes and row kernels, PCR
 * and Thomas) once with the sanitizer watching; the other tests check the
 * numbers closely.
 */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct smoke_case {
    int64_t nx, ny, nz;
    const char *bcs;
} smoke_case;

/* Few and small: under racecheck every launch is slow. */
static const smoke_case cases[] = {
    {13, 9, 7, "DDDDDD"},   /* FFT: the DST-I row kernels on every axis */
    {12, 10, 9, "NNPPDN"},  /* one mixed axis: FFT solves z by tridiagonal systems; singular */
    {16, 11, 1, "PPND"},    /* 2D, mixed */
    {9, 7, 1, "DDND"},      /* 2D, mixed: DST-I through cuFFT */
    {32, 9, 16, "PPPPPP"},  /* FFT: x rows and z lines by the solver's own kernels; singular */
};

/* Solves and returns the solution (host, double) or NULL. */
static double *solve(const smoke_case *c, unsigned flags, double tol, int maxit, double *rel_out)
{
    const double h = 1.0 / 16;
    pgpu_config cfg = t_config(c->nx, c->ny, c->nz, c->bcs, h, 1.3 * h, 0.9 * h, flags);
    cfg.tolerance = tol;
    cfg.max_iterations = maxit;
    if ((flags & PGPU_METHOD_MASK) == PGPU_JACOBI) cfg.omega = 0.8;
    t_problem P;
    if (!t_problem_init(&P, &cfg)) return NULL;
    t_problem_randomize(&P);
    pgpu_solver *s = t_create(&cfg, t_method_name(flags));
    double *out = NULL;
    if (s && t_problem_upload(&P)) {
        pgpu_report rep;
        const pgpu_status st = pgpu_solve(s, P.d_u, P.d_f, &rep);
        t_sync("solve");
        out = t_problem_array(&P, NULL);
        t_problem_download(&P, out, NULL);
        const ref_norms rn = ref_residual(&P.g, out, P.f, NULL);
        const double rel = rn.relative;
        if (rel_out) *rel_out = rel;
        const int fixed = (flags & PGPU_FIXED) != 0;
        CHECK(st == PGPU_SUCCESS, "%s %s %s %lldx%lldx%lld: status %s", t_method_name(flags),
              t_precision_name(t_precision(flags)), c->bcs, (long long)c->nx, (long long)c->ny,
              (long long)c->nz, pgpu_status_string(st));
        CHECK(isfinite(rel) && (fixed || rel <= 10 * (tol > 0 ? tol : 1e-3)),
              "  reference relative residual %.3e", rel);
    }
    pgpu_destroy(s);
    t_problem_free(&P);
    return out;
}

int main(void)
{
    t_require_device("smoke");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        const smoke_case *c = &cases[k];
        for (int pr = 0; pr < 2; ++pr) {
            const unsigned prec = pr ? PGPU_FLOAT : PGPU_DOUBLE;
            const double tol = pr ? 1e-4 : 1e-10;
            double rel;
            free(solve(c, PGPU_JACOBI | PGPU_FIXED | prec, 0, 3, &rel));
            free(solve(c, PGPU_RBGS | PGPU_FIXED | prec, 0, 3, &rel));
            double *v = solve(c, PGPU_VCYCLE | (k == 1 ? PGPU_WCYCLE : 0) | prec, tol, 50, &rel);
            double *fm = solve(c, PGPU_FMG | prec, tol, 50, &rel);
            double *ff = solve(c, PGPU_FFT | prec, 0, 0, &rel);
            CHECK(!pr ? rel <= 1e-11 : rel <= 1e-3, "  FFT reference relative residual %.3e", rel);
            free(v);
            free(fm);
            free(ff);
        }
    }
    return t_finish("smoke");
}
