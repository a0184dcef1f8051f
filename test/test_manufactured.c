/* test_manufactured.c -- manufactured solutions: the solver converges to the
 * discrete solution, and that converges to the exact one at second order.
 *
 * The exact solutions, their grids and boundary data: test/mms.h.
 *
 * For each boundary set (all Dirichlet, all Neumann (singular: compared
 * after removing the means), all periodic (singular), mixed) in 2D (32, 64,
 * 128 per axis) and 3D (12, 24, 48), solved with RBGS (SOR with omega near
 * the optimum):
 *  - status SUCCESS, report and reference relative residual <= tolerance,
 *    report's rhs norm and (singular) rhs_mean equal to the reference's;
 *  - in double, the observed order log(e_coarse/e_fine)/log(h_coarse/h_fine)
 *    of the max-norm error is 2 +- 0.1 for both pairs of resolutions;
 *  - in float, at the two coarser resolutions (where rounding does not
 *    dominate), the error is within 2x of the double error.
 * Plus Jacobi on small 2D problems: order 2 +- 0.15 and agreement with RBGS.
 */
#include "common.h"
#include "mms.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SOR's best omega for the problem, from the Jacobi spectral radius
 * mu = 1 - lambda_min / diag (diag of an interior point). */
static double sor_omega(const ref_grid *g)
{
    double diag = 0.0;
    for (int a = 0; a < g->dims; ++a)
        diag += 2.0 / (g->h[a] * g->h[a]);
    const double mu = 1.0 - ref_lambda_min(g) / diag;
    const double w = 2.0 / (1.0 + sqrt(1.0 - mu * mu));
    return w < 1.95 ? w : 1.95;
}

typedef struct outcome {
    int ok;       /* the solve itself passed its checks */
    double error; /* max |u - u_exact| (means removed when singular) */
    double h;     /* hx */
} outcome;

static outcome solve(const mms_case *c, int dims, int64_t N, unsigned method, unsigned prec)
{
    outcome out = {0, NAN, 0.0};
    pgpu_config cfg = mms_config(c, dims, N, method | prec);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return out;
    const ref_grid *g = &P.g;
    out.h = cfg.hx;
    double *ue = t_problem_array(&P, NULL), *u = t_problem_array(&P, NULL);
    mms_fill(c, &P, ue);

    /* Tolerances: 1e-10 in double.  In float the relative residual cannot
     * drop below about eps * diag * |u| / |b| (rounding of u alone), so ask
     * for ten times that when it is above the default 1e-5. */
    double diag = 0.0;
    for (int a = 0; a < g->dims; ++a)
        diag += 2.0 / (g->h[a] * g->h[a]);
    const ref_norms b0 = ref_residual(g, P.u, P.f, NULL); /* only its rhs norm is used */
    const double floor_rel = t_eps(PGPU_FLOAT) * diag * ref_rms(g, ue) /
                             (b0.rhs_norm / sqrt((double)(cfg.nx * cfg.ny * cfg.nz)));
    cfg.tolerance = prec == PGPU_FLOAT ? fmax(1e-5, 10.0 * floor_rel) : 1e-10;
    cfg.omega = method == PGPU_RBGS ? sor_omega(g) : 1.0;

    char name[200], letters[8];
    snprintf(name, sizeof name, "%s %dD N=%lld (%lldx%lldx%lld %s) %s %s w=%.3f tol %.1e", c->name,
             dims, (long long)N, (long long)cfg.nx, (long long)cfg.ny, (long long)cfg.nz,
             t_bc_letters(g, letters), t_method_name(cfg.flags), t_precision_name(prec), cfg.omega,
             cfg.tolerance);
    pgpu_solver *s = t_create(&cfg, name);
    pgpu_report rep;
    pgpu_status st;
    if (t_problem_solve(&P, s, name, &rep, &st, u)) {
        const ref_norms nm = ref_residual(g, u, P.f, NULL);
        const int singular = ref_is_singular(g);
        const double rtol = prec == PGPU_FLOAT ? 1e-5 : 1e-10;
        const double shift_mag = ref_shift_magnitude(g, P.u, P.f);
        out.ok = CHECK(st == PGPU_SUCCESS && rep.relative_residual <= cfg.tolerance &&
                           nm.relative <= 1.5 * cfg.tolerance &&
                           fabs(rep.rhs_norm - nm.rhs_norm) <= rtol * nm.rhs_norm &&
                           rep.singular == singular &&
                           fabs(rep.rhs_mean - nm.shift) <= rtol * shift_mag,
                       "%s: %s, %d iterations, relative residual %.2e (reference %.2e), "
                       "|b| %.6e (%.6e), rhs_mean %.3e (%.3e)",
                       name, pgpu_status_string(st), rep.iterations, rep.relative_residual,
                       nm.relative, rep.rhs_norm, nm.rhs_norm, rep.rhs_mean, nm.shift);
        if (singular) {
            ref_remove_mean(g, u);
            ref_remove_mean(g, ue);
        }
        out.error = ref_max_diff(g, u, ue);
        t_note("%s: max error %.4e", name, out.error);
    }
    pgpu_destroy(s);
    t_problem_free(&P);
    free(ue);
    free(u);
    return out;
}

static double order(const outcome *coarse, const outcome *fine)
{
    return log(coarse->error / fine->error) / log(coarse->h / fine->h);
}

static void study(const mms_case *c, int dims, const int64_t N[3])
{
    outcome d[3], f[2];
    for (int r = 0; r < 3; ++r)
        d[r] = solve(c, dims, N[r], PGPU_RBGS, PGPU_DOUBLE);
    for (int r = 0; r < 2; ++r)
        f[r] = solve(c, dims, N[r], PGPU_RBGS, PGPU_FLOAT);
    if (d[0].ok && d[1].ok && d[2].ok) {
        const double p1 = order(&d[0], &d[1]), p2 = order(&d[1], &d[2]);
        CHECK(fabs(p1 - 2.0) <= 0.1 && fabs(p2 - 2.0) <= 0.1,
              "%s %dD double: observed order %.3f (N %lld->%lld), %.3f (N %lld->%lld); errors %.3e %.3e %.3e",
              c->name, dims, p1, (long long)N[0], (long long)N[1], p2, (long long)N[1],
              (long long)N[2], d[0].error, d[1].error, d[2].error);
    }
    for (int r = 0; r < 2; ++r)
        if (f[r].ok && d[r].ok)
            CHECK(f[r].error <= 2.0 * d[r].error, "%s %dD N=%lld float error %.3e within 2x of double %.3e",
                  c->name, dims, (long long)N[r], f[r].error, d[r].error);
}

/* Jacobi: second order too, and the same answer as RBGS. */
static void jacobi_study(const mms_case *c)
{
    const int64_t N[2] = {16, 32};
    outcome j[2], r[2];
    for (int k = 0; k < 2; ++k) {
        j[k] = solve(c, 2, N[k], PGPU_JACOBI, PGPU_DOUBLE);
        r[k] = solve(c, 2, N[k], PGPU_RBGS, PGPU_DOUBLE);
    }
    if (j[0].ok && j[1].ok) {
        const double p = order(&j[0], &j[1]);
        CHECK(fabs(p - 2.0) <= 0.15, "%s 2D jacobi double: observed order %.3f (errors %.3e %.3e)",
              c->name, p, j[0].error, j[1].error);
    }
    for (int k = 0; k < 2; ++k) {
        if (j[k].ok && r[k].ok) {
            /* Both stop at relative residual 1e-10: they agree far below the
             * discretisation error. */
            CHECK(fabs(j[k].error - r[k].error) <= 1e-3 * r[k].error,
                  "%s 2D N=%lld: jacobi and rbgs errors agree: %.6e %.6e", c->name,
                  (long long)N[k], j[k].error, r[k].error);
        }
    }
}

int main(void)
{
    t_require_device("test_manufactured");
    const int64_t N2[3] = {32, 64, 128}, N3[3] = {12, 24, 48};
    for (size_t c = 0; c < mms_ncases_2d; ++c)
        study(&mms_cases_2d[c], 2, N2);
    for (size_t c = 0; c < mms_ncases_3d; ++c)
        study(&mms_cases_3d[c], 3, N3);
    jacobi_study(&mms_cases_2d[0]);
    jacobi_study(&mms_cases_2d[3]);
    return t_finish("test_manufactured");
}
