/* test_manufactured.c -- manufactured solutions: the solver converges to the
 * discrete solution, and that converges to the exact one at second order.
 *
 * u = X(x) Y(y) Z(z) with X = sin(a x + b) or exp(a x + b), so that
 * f = -Laplace(u) = (lx + ly + lz) u (l = a^2 for sin, -a^2 for exp), with
 * non-trivial boundary values.  Positions on an axis of length L: with a
 * Dirichlet lower face the nodes are x_i = i h (the ghost is the boundary
 * node x_0 = 0), else cell centres x_i = (i - 1/2) h (the face lies at 0);
 * at the upper face a Dirichlet ghost is the node x_{n+1} = L, a Neumann or
 * periodic face lies at x_n + h/2 = L.  So h = L/(n+1) for D-D, L/n for N-N
 * and periodic, L/(n+1/2) for D-N and N-D.  Dirichlet ghosts hold u at the
 * boundary node, Neumann ghosts the outward normal derivative at the face.
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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

/* ---- the exact solution ------------------------------------------------------- */

typedef struct axis_fn {
    int is_exp; /* 0: sin(a x + b), 1: exp(a x + b) */
    double a, b;
} axis_fn;

static double fn_value(const axis_fn *F, double x)
{
    return F->is_exp ? exp(F->a * x + F->b) : sin(F->a * x + F->b);
}

static double fn_slope(const axis_fn *F, double x)
{
    return F->is_exp ? F->a * exp(F->a * x + F->b) : F->a * cos(F->a * x + F->b);
}

/* -X'' / X */
static double fn_lambda(const axis_fn *F)
{
    return F->is_exp ? -F->a * F->a : F->a * F->a;
}

typedef struct mms_case {
    const char *name;
    const char *bcs;
    double L[3];
    axis_fn X[3];
} mms_case;

/* Periodic axes use whole periods over their length. */
static const mms_case cases_3d[] = {
    {"Dirichlet", "DDDDDD", {1.0, 1.2, 0.9}, {{0, 1.3, 0.4}, {1, 0.8, 0.1}, {0, 2.1, 1.0}}},
    {"Neumann", "NNNNNN", {1.0, 1.1, 0.8}, {{0, 2.2, 0.3}, {0, 1.7, 1.2}, {1, 0.6, -0.2}}},
    {"periodic", "PPPPPP", {1.0, 1.5, 2.0}, {{0, 2 * pi, 0.3}, {0, 2 * pi / 1.5, 1.1}, {0, 2 * pi / 2.0, -0.5}}},
    {"mixed D-N / periodic / N-D", "DNPPND", {1.1, 1.0, 0.9},
     {{0, 1.9, 0.6}, {0, 2 * pi, 0.2}, {1, -0.9, 0.3}}},
};
static const mms_case cases_2d[] = {
    {"Dirichlet", "DDDD", {1.0, 1.3, 0}, {{0, 2.3, 0.4}, {1, 0.7, 0.0}, {0, 0, 0}}},
    {"Neumann", "NNNN", {1.2, 1.0, 0}, {{0, 2.5, 0.3}, {1, -1.1, 0.4}, {0, 0, 0}}},
    {"periodic", "PPPP", {1.0, 2.0, 0}, {{0, 2 * pi, 0.7}, {0, 2 * pi, -0.4}, {0, 0, 0}}},
    {"mixed D-N / periodic", "DNPP", {1.0, 1.0, 0}, {{1, 0.8, -0.3}, {0, 4 * pi, 0.9}, {0, 0, 0}}},
};

/* Interior points and spacing of an axis for a nominal resolution N (h
 * halves when N doubles). */
static void axis_size(pgpu_bc lo, pgpu_bc hi, int64_t N, double L, int64_t *n, double *h)
{
    const double lo_offset = lo == PGPU_BC_DIRICHLET ? 0.0 : 0.5; /* x_i = (i - lo_offset) h */
    const double hi_extent = hi == PGPU_BC_DIRICHLET ? 1.0 : 0.5; /* L = x_n + hi_extent h */
    *n = (lo == PGPU_BC_NEUMANN || lo == PGPU_BC_PERIODIC) && hi != PGPU_BC_DIRICHLET ? N : N - 1;
    *h = L / ((double)*n - lo_offset + hi_extent);
}

static double position(const ref_grid *g, int a, int64_t i)
{
    const double lo_offset = g->bc[2 * a] == PGPU_BC_DIRICHLET ? 0.0 : 0.5;
    return ((double)i - lo_offset) * g->h[a];
}

/* u, and the outward normal derivative on a face of axis `across`, at
 * element (i, j, k) of the layout. */
static double exact(const mms_case *c, const ref_grid *g, const int64_t idx[3], int across, int upper)
{
    double v = 1.0;
    for (int a = 0; a < g->dims; ++a) {
        if (a == across) {
            /* The face itself: 0 or L, not the ghost's position. */
            const double x = upper ? c->L[a] : 0.0;
            v *= upper ? fn_slope(&c->X[a], x) : -fn_slope(&c->X[a], x);
        } else {
            v *= fn_value(&c->X[a], position(g, a, idx[a]));
        }
    }
    return v;
}

/* Fills P: f = -Laplace(u) inside, boundary data in u's ghosts, initial
 * guess 0; writes the exact solution's interior values into ue. */
static void fill(const mms_case *c, t_problem *P, double *ue)
{
    const ref_grid *g = &P->g;
    double lambda = 0.0;
    for (int a = 0; a < g->dims; ++a)
        lambda += fn_lambda(&c->X[a]);
    for (int64_t e = 0; e < P->elems; ++e) {
        int face = -1;
        const int kind = ref_classify(g, e, &face);
        const int64_t idx[3] = {e % g->stride[2] % g->stride[1], e % g->stride[2] / g->stride[1],
                                e / g->stride[2]};
        if (kind == REF_INTERIOR) {
            ue[e] = exact(c, g, idx, -1, 0);
            P->f[e] = lambda * ue[e];
            P->u[e] = 0.0;
        } else if (kind == REF_FACE_GHOST && g->bc[face] == PGPU_BC_DIRICHLET) {
            P->u[e] = exact(c, g, idx, -1, 0); /* the ghost is the boundary node */
        } else if (kind == REF_FACE_GHOST && g->bc[face] == PGPU_BC_NEUMANN) {
            P->u[e] = exact(c, g, idx, face / 2, face & 1);
        }
    }
}

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
    int64_t n[3] = {1, 1, 1};
    double h[3] = {0.0, 0.0, 0.0};
    for (int a = 0; a < dims; ++a) {
        const pgpu_bc lo = c->bcs[2 * a] == 'D' ? PGPU_BC_DIRICHLET : c->bcs[2 * a] == 'N' ? PGPU_BC_NEUMANN : PGPU_BC_PERIODIC;
        const pgpu_bc hi = c->bcs[2 * a + 1] == 'D' ? PGPU_BC_DIRICHLET : c->bcs[2 * a + 1] == 'N' ? PGPU_BC_NEUMANN : PGPU_BC_PERIODIC;
        axis_size(lo, hi, N, c->L[a], &n[a], &h[a]);
    }
    pgpu_config cfg = t_config(n[0], n[1], n[2], c->bcs, h[0], h[1], h[2], method | prec);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return out;
    const ref_grid *g = &P.g;
    out.h = h[0];
    double *ue = t_problem_array(&P, NULL), *u = t_problem_array(&P, NULL);
    fill(c, &P, ue);

    /* Tolerances: 1e-10 in double.  In float the relative residual cannot
     * drop below about eps * diag * |u| / |b| (rounding of u alone), so ask
     * for ten times that when it is above the default 1e-5. */
    double diag = 0.0;
    for (int a = 0; a < g->dims; ++a)
        diag += 2.0 / (g->h[a] * g->h[a]);
    const ref_norms b0 = ref_residual(g, P.u, P.f, NULL); /* only its rhs norm is used */
    const double floor_rel = t_eps(PGPU_FLOAT) * diag * ref_rms(g, ue) /
                             (b0.rhs_norm / sqrt((double)(n[0] * n[1] * n[2])));
    cfg.tolerance = prec == PGPU_FLOAT ? fmax(1e-5, 10.0 * floor_rel) : 1e-10;
    cfg.omega = method == PGPU_RBGS ? sor_omega(g) : 1.0;

    char name[200], letters[8];
    snprintf(name, sizeof name, "%s %dD N=%lld (%lldx%lldx%lld %s) %s %s w=%.3f tol %.1e", c->name,
             dims, (long long)N, (long long)n[0], (long long)n[1], (long long)n[2],
             t_bc_letters(g, letters), t_method_name(cfg.flags), t_precision_name(prec), cfg.omega,
             cfg.tolerance);
    pgpu_solver *s = t_create(&cfg, name);
    if (s && t_problem_upload(&P)) {
        pgpu_report rep;
        memset(&rep, 0, sizeof rep);
        const pgpu_status st = pgpu_solve(s, P.d_u, P.d_f, &rep);
        if (t_sync(name) && t_problem_download(&P, u, NULL)) {
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
    for (size_t c = 0; c < sizeof cases_2d / sizeof cases_2d[0]; ++c)
        study(&cases_2d[c], 2, N2);
    for (size_t c = 0; c < sizeof cases_3d / sizeof cases_3d[0]; ++c)
        study(&cases_3d[c], 3, N3);
    jacobi_study(&cases_2d[0]);
    jacobi_study(&cases_2d[3]);
    return t_finish("test_manufactured");
}
