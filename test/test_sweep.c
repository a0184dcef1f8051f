/* test_sweep.c -- one GPU Jacobi sweep and one red-black Gauss-Seidel
 * iteration (pgpu_solve with PGPU_FIXED, max_iterations 1; and 3 for a few
 * cases) equal the host reference on random data.
 *
 * Per interior point the difference must stay below
 *     tol * bound(p),   tol = 8 FLT_EPSILON (float) or 1e-14 (double),
 * where bound(p) = |u| + w (|f| + |shift| + sum |terms|) / diag is the
 * magnitude of what the update adds up (ref_relax_bound; for RBGS's black
 * points and for later iterations it also carries the bound of the values
 * they read).  test_reference checks that an honest float sweep stays inside
 * this bound.  Everything outside the interior (ghosts, edge ghosts,
 * padding) must come back bit for bit; periodic ghosts, f's ghosts and the
 * padding hold NaN and must not be read.
 *
 * Shapes: 37x20x11, 1x1x1, 2D 65x1 and 33x17, strided layouts with padding;
 * every boundary type with non-zero Dirichlet and Neumann data, periodic
 * axes of even and odd size, mixed faces, anisotropic spacing, omega != 1.
 */
#include "common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sweep_case {
    const char *name;
    int64_t nx, ny, nz;
    const char *bcs;
    double hx, hy, hz;
    int64_t pad_y, pad_z; /* extra elements per row / per plane; 0 and 0: packed (strides 0) */
    double omega_jacobi, omega_rbgs;
} sweep_case;

static const sweep_case cases[] = {
    {"3D Dirichlet", 37, 20, 11, "DDDDDD", 0.03, 0.05, 0.08, 0, 0, 1.0, 1.0},
    {"3D Dirichlet, omega", 37, 20, 11, "DDDDDD", 0.03, 0.05, 0.08, 0, 0, 0.6, 1.7},
    {"3D Neumann (singular)", 37, 20, 11, "NNNNNN", 0.02, 0.03, 0.025, 0, 0, 0.8, 1.3},
    {"3D periodic x odd, y even", 37, 20, 11, "PPPPDN", 0.04, 0.02, 0.05, 0, 0, 0.9, 1.5},
    {"3D periodic even (singular)", 36, 20, 12, "PPPPPP", 0.03, 0.03, 0.03, 0, 0, 0.7, 1.2},
    {"3D periodic odd (singular)", 37, 21, 11, "PPPPPP", 0.03, 0.04, 0.05, 0, 0, 1.0, 1.0},
    {"3D mixed faces", 37, 20, 11, "DNNDPP", 0.05, 0.01, 0.1, 0, 0, 0.8, 1.9},
    {"3D mixed, Neumann+periodic (singular)", 37, 20, 11, "NNPPNN", 0.05, 0.07, 0.02, 0, 0, 0.9, 1.4},
    {"1x1x1 Dirichlet", 1, 1, 1, "DDDDDD", 0.5, 0.25, 0.125, 0, 0, 0.7, 1.5},
    {"1x1x1 mixed", 1, 1, 1, "DNPPND", 0.5, 0.25, 0.125, 0, 0, 1.0, 1.2},
    {"1x1x1 Neumann (no coupling)", 1, 1, 1, "NNNNNN", 0.5, 0.25, 0.125, 0, 0, 1.0, 1.0},
    {"1x1x1 periodic (no coupling)", 1, 1, 1, "PPPPPP", 0.5, 0.25, 0.125, 0, 0, 1.0, 1.0},
    {"1x20x11 periodic x of size 1", 1, 20, 11, "PPDDNN", 0.1, 0.05, 0.07, 0, 0, 0.9, 1.1},
    {"2D 65x1", 65, 1, 1, "DDNN", 0.015, 0.2, 0.0, 0, 0, 1.0, 1.0},
    {"2D 65x1 periodic", 65, 1, 1, "PPPP", 0.015, 0.2, 0.0, 0, 0, 0.8, 1.3},
    {"2D 33x17 mixed", 33, 17, 1, "DNPP", 0.03, 0.06, 0.0, 0, 0, 0.9, 1.6},
    {"2D 33x17 Neumann (singular)", 33, 17, 1, "NNNN", 0.03, 0.03, 0.0, 0, 0, 1.0, 1.0},
    {"2D 33x17 Dirichlet", 33, 17, 1, "DDDD", 0.01, 0.02, 0.0, 0, 0, 0.5, 1.95},
    {"3D strided", 13, 7, 5, "DNPPND", 0.07, 0.09, 0.11, 3, 5, 0.8, 1.4},
    {"3D strided periodic (singular)", 12, 9, 6, "PPNNPP", 0.06, 0.05, 0.04, 2, 7, 1.0, 1.1},
    {"2D strided", 9, 6, 1, "PPDN", 0.1, 0.12, 0.0, 4, 0, 0.9, 1.3},
};

/* The reference result of `iterations` fixed iterations, and per point the
 * rounding bound (to be multiplied by the tolerance factor; bound must come
 * in zeroed).  The mean is removed at the end for singular problems, as the
 * solver does; *extra gets the part of the bound that every point shares
 * (from the mean removal). */
static void reference_iterations(const t_problem *P, int rbgs, double omega, int iterations,
                                 double *out, double *bound, double *extra)
{
    const ref_grid *g = &P->g;
    const double shift = ref_shift(g, P->u, P->f);
    const double shift_mag = ref_shift_magnitude(g, P->u, P->f);
    double *in = t_problem_array(P, NULL), *err_in = t_problem_array(P, NULL);
    memcpy(out, P->u, (size_t)P->elems * sizeof(double));

    for (int it = 0; it < iterations; ++it) {
        const int first = rbgs ? REF_RED : REF_ALL_POINTS;
        memcpy(in, out, (size_t)P->elems * sizeof(double));
        memcpy(err_in, bound, (size_t)P->elems * sizeof(double));
        ref_relax(g, in, out, P->f, shift, omega, first);
        ref_relax_bound(g, in, P->f, shift_mag, omega, first, it ? err_in : NULL, bound);
        if (rbgs) {
            memcpy(in, out, (size_t)P->elems * sizeof(double));
            memcpy(err_in, bound, (size_t)P->elems * sizeof(double));
            ref_relax(g, in, out, P->f, shift, omega, REF_BLACK);
            ref_relax_bound(g, in, P->f, shift_mag, omega, REF_BLACK, err_in, bound);
        }
    }
    *extra = 0.0;
    if (ref_is_singular(g)) {
        /* The mean carries the average error of the points, and subtracting
         * it rounds relative to |mean|. */
        const double mean = ref_remove_mean(g, out);
        *extra = ref_mean(g, bound) + fabs(mean);
    }
    free(in);
    free(err_in);
}

static void run_case(const sweep_case *c, unsigned method, unsigned prec, int iterations)
{
    const int rbgs = method == PGPU_RBGS;
    const double omega = rbgs ? c->omega_rbgs : c->omega_jacobi;
    pgpu_config cfg = t_config(c->nx, c->ny, c->nz, c->bcs, c->hx, c->hy, c->hz,
                               method | prec | PGPU_FIXED);
    cfg.max_iterations = iterations;
    cfg.omega = omega;
    if (c->pad_y || c->pad_z) {
        cfg.stride_y = c->nx + 2 + c->pad_y;
        cfg.stride_z = c->nz > 1 ? cfg.stride_y * (c->ny + 2) + c->pad_z : 0;
    }
    char what[200], letters[8];
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    snprintf(what, sizeof what, "%s %s %s x%d [%lldx%lldx%lld %s w=%.2f]", c->name,
             t_method_name(cfg.flags), t_precision_name(prec), iterations, (long long)c->nx,
             (long long)c->ny, (long long)c->nz, t_bc_letters(&P.g, letters), omega);

    t_problem_randomize(&P);
    pgpu_solver *s = t_create(&cfg, what);
    if (!s || !t_problem_upload(&P)) {
        pgpu_destroy(s);
        t_problem_free(&P);
        return;
    }

    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    rep.iterations = -1;
    const pgpu_status st = pgpu_solve(s, P.d_u, P.d_f, &rep);
    const int synced = t_sync(what);
    CHECK(st == PGPU_SUCCESS && rep.status == PGPU_SUCCESS && rep.iterations == iterations &&
              isnan(rep.residual_norm) && isnan(rep.relative_residual) &&
              rep.singular == ref_is_singular(&P.g),
          "%s: status %s, report: status %s, iterations %d, norms %g %g (NaN when FIXED), "
          "singular %d %s",
          what, pgpu_status_string(st), pgpu_status_string(rep.status), rep.iterations,
          rep.residual_norm, rep.relative_residual, rep.singular, st ? pgpu_last_error(s) : "");

    double *got = t_problem_array(&P, NULL), *want = t_problem_array(&P, NULL);
    double *bound = t_problem_array(&P, NULL);
    void *typed = malloc(P.bytes);
    if (synced && typed && t_problem_download(&P, got, typed)) {
        double extra = 0.0;
        reference_iterations(&P, rbgs, omega, iterations, want, bound, &extra);
        const double factor = prec == PGPU_FLOAT ? 8.0 * FLT_EPSILON : 1e-14;
        double worst = 0.0, at_diff = 0.0;
        int64_t at = -1;
        REF_FOR_EACH_INTERIOR(&P.g, i, j, k) {
            const int64_t p = ref_idx(&P.g, i, j, k);
            const double diff = fabs(got[p] - want[p]);
            const double ratio = diff == 0.0 ? 0.0 : diff / (factor * (bound[p] + extra));
            if (!(ratio <= worst)) { /* also catches NaN */
                worst = t_max_nan(worst, ratio);
                at = p;
                at_diff = diff;
            }
        }
        CHECK(worst <= 1.0 && !isnan(ref_max_abs(&P.g, want)),
              "%s: max |gpu - ref| / tol = %.3g (diff %.3g at element %lld)", what, worst, at_diff,
              (long long)at);
        const int64_t changed = t_problem_changed_outside(&P, typed);
        CHECK(changed == 0, "%s: ghosts, edges and padding unchanged (%lld of %lld changed)", what,
              (long long)changed, (long long)P.elems);
    }
    free(got);
    free(want);
    free(bound);
    free(typed);
    pgpu_destroy(s);
    t_problem_free(&P);
}

int main(void)
{
    t_require_device("test_sweep");
    t_seed();
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int c = 0; c < ncases; ++c)
        for (int m = 0; m < 2; ++m)
            for (int p = 0; p < 2; ++p)
                run_case(&cases[c], m ? PGPU_RBGS : PGPU_JACOBI, p ? PGPU_FLOAT : PGPU_DOUBLE, 1);

    /* A fixed schedule of several iterations (errors carried through). */
    const int several[] = {0, 2, 6, 16, 18};
    for (int c = 0; c < (int)(sizeof several / sizeof several[0]); ++c)
        for (int m = 0; m < 2; ++m)
            for (int p = 0; p < 2; ++p)
                run_case(&cases[several[c]], m ? PGPU_RBGS : PGPU_JACOBI,
                         p ? PGPU_FLOAT : PGPU_DOUBLE, 3);
    return t_finish("test_sweep");
}
