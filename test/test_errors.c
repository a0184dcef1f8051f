/* test_errors.c -- bad inputs get the right status and leave u alone; what
 * is not data is not checked; the handle stays usable; the report and
 * pgpu_residual tell the truth; pgpu_solve_host equals pgpu_solve.
 *
 *  - NaN/Inf in f's interior, in a Dirichlet ghost, in a Neumann ghost:
 *    PGPU_ERROR_NONFINITE_INPUT and u bit for bit unchanged (interior and
 *    ghosts), from pgpu_solve, pgpu_solve_host and pgpu_residual; also on a
 *    2D FFT whose checks run inside its one launch (both such routes: the
 *    dense transforms of a small grid, 63x31 with a Neumann face, and the
 *    all-Dirichlet rows, 511x15);
 *  - NaN in periodic ghosts, f's ghost layer, edge ghosts and padding: not
 *    data, the solve succeeds;
 *  - max_iterations 3 with a tight tolerance: PGPU_ERROR_NOT_CONVERGED with
 *    report->iterations == 3, u equal to 3 reference iterations, and norms
 *    that match the reference's;
 *  - u == f, overlapping u and f, host pointers, NULL pointers:
 *    PGPU_ERROR_INVALID_ARGUMENT (adjacent, non-overlapping arrays are fine);
 *  - data whose norm double cannot hold (1e-200, 1e200): PGPU_ERROR_UNSUPPORTED
 *    and u unchanged; 1e-120 and 1e120 solve (multigrid and both 2D FFT routes);
 *  - pgpu_last_error(s) is "" on a new handle and non-empty after each failure;
 *  - pgpu_get_config resolves the documented defaults, among them the
 *    multigrid smoother's omega by the number of odd periodic rings.
 */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

/* x- Dirichlet, x+ Neumann, y periodic, z Dirichlet. */
static pgpu_config small_config(unsigned flags)
{
    return t_config(8, 6, 5, "DNPPDD", 0.1, 0.12, 0.09, flags);
}

/* 2D FFT routes that fold their checks into one launch: 1 the dense
 * transforms of small grids (any faces), 2 the all-Dirichlet rows (n+1 a
 * power of two, larger grids). */
static pgpu_config fft2d_config(unsigned prec, int route)
{
    if (route == 2)
        return t_config(511, 15, 1, "DDDD", 0.002, 0.06, 0.0, PGPU_FFT | prec);
    return t_config(63, 31, 1, "DNDD", 0.02, 0.03, 0.0, PGPU_FFT | prec);
}

static int64_t random_interior(const ref_grid *g)
{
    const int64_t i = 1 + (int64_t)(t_rand_u64() % (uint64_t)g->n[0]);
    const int64_t j = 1 + (int64_t)(t_rand_u64() % (uint64_t)g->n[1]);
    const int64_t k = g->dims == 3 ? 1 + (int64_t)(t_rand_u64() % (uint64_t)g->n[2]) : 0;
    return ref_idx(g, i, j, k);
}

static int64_t ghost_of_face(const ref_grid *g, int face)
{
    const int64_t j = 1 + (int64_t)(t_rand_u64() % (uint64_t)g->n[1]);
    const int64_t k = g->dims == 3 ? 1 + (int64_t)(t_rand_u64() % (uint64_t)g->n[2]) : 0;
    const int64_t i = 1 + (int64_t)(t_rand_u64() % (uint64_t)g->n[0]);
    switch (face) {
    case 0: return ref_idx(g, 0, j, k);
    case 1: return ref_idx(g, g->n[0] + 1, j, k);
    case 2: return ref_idx(g, i, 0, k);
    case 3: return ref_idx(g, i, g->n[1] + 1, k);
    case 4: return ref_idx(g, i, j, 0);
    default: return ref_idx(g, i, j, g->n[2] + 1);
    }
}

static int message_set(const pgpu_solver *s)
{
    const char *m = pgpu_last_error(s);
    return m && m[0];
}

/* ---- non-finite data ------------------------------------------------------------ */

enum { SPOIL_F, SPOIL_GHOST };

static void check_nonfinite(const char *what, unsigned prec, int where, int face, double bad, int fft2d)
{
    const pgpu_config cfg = fft2d ? fft2d_config(prec, fft2d) : small_config(PGPU_RBGS | prec);
    char name[160];
    snprintf(name, sizeof name, "%s (%s%s)", what, t_precision_name(prec),
             fft2d == 1 ? ", 2D FFT dense" : fft2d == 2 ? ", 2D FFT rows" : "");
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    const int64_t e = where == SPOIL_F ? random_interior(&P.g) : ghost_of_face(&P.g, face);
    if (where == SPOIL_F)
        P.f[e] = bad;
    else
        P.u[e] = bad;
    pgpu_solver *s = t_create(&cfg, name);
    if (!s || !t_problem_upload(&P))
        goto done;

    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    pgpu_status st = pgpu_solve(s, P.d_u, P.d_f, &rep);
    void *back = malloc(P.bytes);
    int same = t_sync(name) && back && t_problem_download(&P, NULL, back) &&
               memcmp(back, P.u_sent, P.bytes) == 0;
    CHECK(st == PGPU_ERROR_NONFINITE_INPUT && rep.status == st && message_set(s),
          "%s: pgpu_solve -> %s (report %s), \"%s\"", name, pgpu_status_string(st),
          pgpu_status_string(rep.status), pgpu_last_error(s));
    CHECK(same, "%s: u bit for bit unchanged (interior and ghosts)", name);

    double rel = -1.0;
    st = pgpu_residual(s, P.d_u, P.d_f, &rel);
    CHECK(st == PGPU_ERROR_NONFINITE_INPUT && message_set(s), "%s: pgpu_residual -> %s", name,
          pgpu_status_string(st));

    /* The host path checks the same and leaves the host array alone. */
    void *hu = malloc(P.bytes), *hf = malloc(P.bytes);
    if (hu && hf) {
        memcpy(hu, P.u_sent, P.bytes);
        t_to_typed(P.prec, P.f, hf, P.elems);
        st = pgpu_solve_host(s, hu, hf, NULL);
        CHECK(st == PGPU_ERROR_NONFINITE_INPUT && memcmp(hu, P.u_sent, P.bytes) == 0,
              "%s: pgpu_solve_host -> %s, host u unchanged", name, pgpu_status_string(st));
    }
    free(hu);
    free(hf);

    /* The handle is still good: mend the input and solve. */
    if (where == SPOIL_F)
        P.f[e] = 0.5;
    else
        P.u[e] = 0.5;
    if (t_problem_upload(&P)) {
        st = pgpu_solve(s, P.d_u, P.d_f, &rep);
        CHECK(st == PGPU_SUCCESS, "%s: after mending the input the same handle solves: %s", name,
              pgpu_status_string(st));
    }
    free(back);
done:
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* Data whose norm double cannot hold (a sum of squares that underflows or
 * overflows: max |b| outside 2^-480 .. 2^480) get PGPU_ERROR_UNSUPPORTED and
 * u unchanged, also from pgpu_residual; data well inside solve.  Double only:
 * float's range lies inside. */
static void check_range(double scale, int ok, int fft2d)
{
    pgpu_config cfg = fft2d ? fft2d_config(PGPU_DOUBLE, fft2d) : small_config(PGPU_VCYCLE | PGPU_DOUBLE);
    if (!fft2d)
        cfg.tolerance = 1e-10;
    char name[160];
    snprintf(name, sizeof name, "data scaled by %g (double%s)", scale,
             fft2d == 1 ? ", 2D FFT dense" : fft2d == 2 ? ", 2D FFT rows" : "");
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    for (int64_t e = 0; e < P.elems; ++e) {
        P.f[e] *= scale;
        P.u[e] *= scale;
    }
    pgpu_solver *s = t_create(&cfg, name);
    if (s && t_problem_upload(&P)) {
        pgpu_report rep;
        memset(&rep, 0, sizeof rep);
        pgpu_status st = pgpu_solve(s, P.d_u, P.d_f, &rep);
        void *back = malloc(P.bytes);
        const int same = t_sync(name) && back && t_problem_download(&P, NULL, back) &&
                         memcmp(back, P.u_sent, P.bytes) == 0;
        if (ok) {
            CHECK(st == PGPU_SUCCESS && rep.relative_residual <= 1e-10 && !same,
                  "%s: pgpu_solve -> %s, relative residual %g", name, pgpu_status_string(st),
                  rep.relative_residual);
        } else {
            CHECK(st == PGPU_ERROR_UNSUPPORTED && rep.status == st && message_set(s) && same,
                  "%s: pgpu_solve -> %s, u unchanged %d, \"%s\"", name, pgpu_status_string(st), same,
                  pgpu_last_error(s));
            double rel = -1.0;
            st = pgpu_residual(s, P.d_u, P.d_f, &rel);
            CHECK(st == PGPU_ERROR_UNSUPPORTED && message_set(s), "%s: pgpu_residual -> %s", name,
                  pgpu_status_string(st));
        }
        free(back);
    }
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* NaN where nothing is read: periodic ghosts and f's ghosts (always poisoned
 * by t_problem_init), plus edge ghosts and padding here. */
static void check_not_data(unsigned prec)
{
    pgpu_config cfg = small_config(PGPU_RBGS | prec);
    cfg.stride_y = cfg.nx + 2 + 3;
    cfg.stride_z = cfg.stride_y * (cfg.ny + 2) + 5;
    cfg.tolerance = prec == PGPU_FLOAT ? 1e-4 : 1e-9;
    char name[160];
    snprintf(name, sizeof name, "NaN in periodic ghosts, f's ghosts, edges, padding (%s)",
             t_precision_name(prec));
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    for (int64_t e = 0; e < P.elems; ++e)
        if (ref_classify(&P.g, e, NULL) == REF_EDGE_GHOST)
            P.u[e] = T_POISON_NAN;
    pgpu_solver *s = t_create(&cfg, name);
    if (s && t_problem_upload(&P)) {
        pgpu_report rep;
        const pgpu_status st = pgpu_solve(s, P.d_u, P.d_f, &rep);
        double *u = t_problem_array(&P, NULL);
        void *back = malloc(P.bytes);
        if (t_sync(name) && u && back && t_problem_download(&P, u, back)) {
            const ref_norms nm = ref_residual(&P.g, u, P.f, NULL);
            CHECK(st == PGPU_SUCCESS && nm.relative <= 1.5 * cfg.tolerance,
                  "%s: %s, reference relative residual %.2e", name, pgpu_status_string(st),
                  nm.relative);
            CHECK(t_problem_changed_outside(&P, back) == 0, "%s: ghosts and padding unchanged", name);
        }
        free(u);
        free(back);
    }
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* ---- not converged ------------------------------------------------------------------- */

static void check_not_converged(unsigned method, unsigned prec)
{
    pgpu_config cfg = small_config(method | prec);
    cfg.max_iterations = 3;
    cfg.tolerance = 1e-14;
    cfg.omega = method == PGPU_RBGS ? 1.3 : 0.9;
    char name[160];
    snprintf(name, sizeof name, "max_iterations 3 %s %s", t_method_name(cfg.flags),
             t_precision_name(prec));
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    pgpu_solver *s = t_create(&cfg, name);
    if (!s || !t_problem_upload(&P))
        goto done;

    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    const pgpu_status st = pgpu_solve(s, P.d_u, P.d_f, &rep);
    CHECK(st == PGPU_ERROR_NOT_CONVERGED && rep.status == st && rep.iterations == 3 &&
              message_set(s),
          "%s: %s, report status %s, iterations %d, \"%s\"", name, pgpu_status_string(st),
          pgpu_status_string(rep.status), rep.iterations, pgpu_last_error(s));
    CHECK(isfinite(rep.residual_norm) && isfinite(rep.residual_max) &&
              isfinite(rep.relative_residual) && isfinite(rep.rhs_norm) && rep.rhs_norm > 0.0 &&
              rep.relative_residual > cfg.tolerance && rep.seconds >= 0.0,
          "%s: finite report: |r| %.3e max %.3e rel %.3e |b| %.3e, %.3g s", name, rep.residual_norm,
          rep.residual_max, rep.relative_residual, rep.rhs_norm, rep.seconds);

    double *u = t_problem_array(&P, NULL), *want = t_problem_array(&P, P.u);
    if (t_sync(name) && t_problem_download(&P, u, NULL)) {
        /* "u and the report hold what was reached": three iterations. */
        for (int it = 0; it < 3; ++it) {
            if (method == PGPU_RBGS)
                ref_rbgs(&P.g, want, P.f, cfg.omega);
            else
                ref_jacobi(&P.g, want, P.f, cfg.omega);
        }
        const double scale = ref_max_abs(&P.g, want);
        const double diff = ref_max_diff(&P.g, u, want);
        const double tol = prec == PGPU_FLOAT ? 1e-5 : 1e-12; /* relative to max |u| */
        CHECK(diff <= tol * scale, "%s: u equals 3 reference iterations: max diff %.2e (max |u| %.3g)",
              name, diff, scale);

        /* The report describes this u: same norms as the reference. */
        const ref_norms nm = ref_residual(&P.g, u, P.f, NULL);
        const double rtol = prec == PGPU_FLOAT ? 1e-4 : 1e-9;
        CHECK(fabs(rep.residual_norm - nm.norm) <= rtol * nm.norm &&
                  fabs(rep.residual_max - nm.max) <= rtol * nm.max &&
                  fabs(rep.rhs_norm - nm.rhs_norm) <= rtol * nm.rhs_norm &&
                  fabs(rep.relative_residual - nm.relative) <= rtol * nm.relative,
              "%s: report vs reference: |r| %.6e / %.6e, max %.6e / %.6e, |b| %.6e / %.6e", name,
              rep.residual_norm, nm.norm, rep.residual_max, nm.max, rep.rhs_norm, nm.rhs_norm);

        double rel = -1.0;
        const pgpu_status rs = pgpu_residual(s, P.d_u, P.d_f, &rel);
        CHECK(rs == PGPU_SUCCESS && fabs(rel - nm.relative) <= rtol * nm.relative,
              "%s: pgpu_residual %.6e, reference %.6e", name, rel, nm.relative);
    }
    free(u);
    free(want);
done:
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* ---- pointers ---------------------------------------------------------------------------- */

static void expect_invalid_solve(pgpu_solver *s, const char *what, void *u, const void *f,
                                 const t_problem *P, const void *u_device_image)
{
    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    const pgpu_status st = pgpu_solve(s, u, f, &rep);
    CHECK(st == PGPU_ERROR_INVALID_ARGUMENT && message_set(s), "%s -> %s, \"%s\"", what,
          pgpu_status_string(st), pgpu_last_error(s));
    if (u_device_image) { /* the device u must be as it was */
        void *back = malloc(P->bytes);
        CHECK(back && t_dev_download(back, u, P->bytes) && memcmp(back, u_device_image, P->bytes) == 0,
              "%s: u unchanged", what);
        free(back);
    }
}

static void check_pointers(void)
{
    const pgpu_config cfg = small_config(PGPU_JACOBI | PGPU_DOUBLE);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    pgpu_solver *s = t_create(&cfg, "pointers");
    if (!s || !t_problem_upload(&P))
        goto done;
    CHECK(pgpu_last_error(s) && pgpu_last_error(s)[0] == '\0', "a new handle's pgpu_last_error is \"\"");

    /* u and f inside one allocation: overlapping, the same, and adjacent. */
    const size_t w = t_word(P.prec);
    char *both = t_dev_alloc(2 * P.bytes);
    void *typed_f = malloc(P.bytes);
    if (both && typed_f) {
        t_to_typed(P.prec, P.f, typed_f, P.elems);
        cudaMemcpy(both, P.u_sent, P.bytes, cudaMemcpyHostToDevice);
        cudaMemcpy(both + P.bytes, typed_f, P.bytes, cudaMemcpyHostToDevice);
        expect_invalid_solve(s, "u == f", both, both, &P, P.u_sent);
        expect_invalid_solve(s, "f starts one element after u", both, both + w, &P, P.u_sent);
        expect_invalid_solve(s, "u starts one element after f (f inside u's span)", both + w, both,
                             &P, NULL);
        expect_invalid_solve(s, "f ends one element into u", both + P.bytes - w, both, &P, NULL);

        pgpu_report rep;
        const pgpu_status st = pgpu_solve(s, both, both + P.bytes, &rep);
        CHECK(st == PGPU_SUCCESS, "u and f adjacent in one allocation (no overlap) -> %s",
              pgpu_status_string(st));
    }
    t_dev_free(both);

    /* Host memory handed to the device call. */
    void *host_u = malloc(P.bytes), *host_f = malloc(P.bytes);
    if (host_u && host_f && typed_f) {
        memcpy(host_u, P.u_sent, P.bytes);
        memcpy(host_f, typed_f, P.bytes);
        expect_invalid_solve(s, "host u", host_u, P.d_f, &P, NULL);
        CHECK(memcmp(host_u, P.u_sent, P.bytes) == 0, "host u: not written");
        expect_invalid_solve(s, "host f", P.d_u, host_f, &P, P.u_sent);
        expect_invalid_solve(s, "host u and f", host_u, host_f, &P, NULL);
    }
    expect_invalid_solve(s, "u NULL", NULL, P.d_f, &P, NULL);
    expect_invalid_solve(s, "f NULL", P.d_u, NULL, &P, P.u_sent);

    pgpu_status st = pgpu_solve_host(s, NULL, host_f, NULL);
    CHECK(st == PGPU_ERROR_INVALID_ARGUMENT && message_set(s), "pgpu_solve_host u NULL -> %s",
          pgpu_status_string(st));
    st = pgpu_solve_host(s, host_u, NULL, NULL);
    CHECK(st == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_solve_host f NULL -> %s", pgpu_status_string(st));
    st = pgpu_solve_host(s, host_u, host_u, NULL);
    CHECK(st == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_solve_host u == f -> %s", pgpu_status_string(st));
    double rel;
    st = pgpu_residual(s, P.d_u, P.d_f, NULL);
    CHECK(st == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_residual rel_norm NULL -> %s", pgpu_status_string(st));
    st = pgpu_residual(s, NULL, P.d_f, &rel);
    CHECK(st == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_residual u NULL -> %s", pgpu_status_string(st));
    st = pgpu_residual(s, host_u, P.d_f, &rel);
    CHECK(st == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_residual host u -> %s", pgpu_status_string(st));
    st = pgpu_get_config(s, NULL);
    CHECK(st == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_get_config out NULL -> %s", pgpu_status_string(st));

    /* After all that, the handle still solves. */
    pgpu_report rep;
    st = pgpu_solve(s, P.d_u, P.d_f, &rep);
    CHECK(st == PGPU_SUCCESS, "the handle still solves after the failures: %s", pgpu_status_string(st));
    free(host_u);
    free(host_f);
    free(typed_f);
done:
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* ---- pgpu_solve_host == pgpu_solve ------------------------------------------------------------ */

static void check_solve_host(unsigned method, unsigned prec)
{
    pgpu_config cfg = t_config(10, 8, 6, "DNNDPP", 0.09, 0.11, 0.1, method | prec);
    cfg.tolerance = prec == PGPU_FLOAT ? 1e-4 : 1e-8;
    char name[160];
    snprintf(name, sizeof name, "pgpu_solve_host %s %s", t_method_name(cfg.flags), t_precision_name(prec));
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    pgpu_solver *s = t_create(&cfg, name);
    void *host_u = malloc(P.bytes), *host_f = malloc(P.bytes), *dev_result = malloc(P.bytes);
    if (s && host_u && host_f && dev_result && t_problem_upload(&P)) {
        memcpy(host_u, P.u_sent, P.bytes);
        t_to_typed(P.prec, P.f, host_f, P.elems);
        pgpu_report rep_d, rep_h;
        const pgpu_status sd = pgpu_solve(s, P.d_u, P.d_f, &rep_d);
        const pgpu_status sh = pgpu_solve_host(s, host_u, host_f, &rep_h);
        if (t_sync(name) && t_problem_download(&P, NULL, dev_result)) {
            CHECK(sd == PGPU_SUCCESS && sh == PGPU_SUCCESS && rep_d.iterations == rep_h.iterations &&
                      rep_d.relative_residual == rep_h.relative_residual,
                  "%s: %s / %s, iterations %d / %d, relative residual %.3e / %.3e", name,
                  pgpu_status_string(sd), pgpu_status_string(sh), rep_d.iterations,
                  rep_h.iterations, rep_d.relative_residual, rep_h.relative_residual);
            CHECK(memcmp(host_u, dev_result, P.bytes) == 0, "%s: result bit for bit equal to pgpu_solve's",
                  name);
            /* A second call reuses the device copies made by the first. */
            memcpy(host_u, P.u_sent, P.bytes);
            const pgpu_status sh2 = pgpu_solve_host(s, host_u, host_f, NULL);
            CHECK(sh2 == PGPU_SUCCESS && memcmp(host_u, dev_result, P.bytes) == 0,
                  "%s: second call equal too", name);
        }
    }
    free(host_u);
    free(host_f);
    free(dev_result);
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* ---- resolved defaults ----------------------------------------------------------------------- */

static void check_get_config(unsigned method, unsigned prec)
{
    const pgpu_config cfg = t_config(10, 8, 6, "DDDDDD", 0.09, 0.11, 0.1, method | prec);
    pgpu_solver *s = t_create(&cfg, "get_config");
    if (!s)
        return;
    pgpu_config got;
    memset(&got, 0, sizeof got);
    const pgpu_status st = pgpu_get_config(s, &got);
    const double tol = prec == PGPU_FLOAT ? 1e-5 : 1e-10;
    CHECK(st == PGPU_SUCCESS && got.tolerance == tol && got.max_iterations == 20000 &&
              got.omega == 1.0 && got.check_interval == 10 && got.stride_y == 12 &&
              got.stride_z == 12 * 10 && (got.flags & PGPU_METHOD_MASK) == method &&
              (got.flags & PGPU_PRECISION_MASK) == prec && got.nx == 10 && got.hx == 0.09,
          "get_config %s %s: tolerance %g, max_iterations %d, omega %g, check_interval %d, "
          "strides %lld %lld, flags 0x%x",
          t_method_name(method), t_precision_name(prec), got.tolerance, got.max_iterations,
          got.omega, got.check_interval, (long long)got.stride_y, (long long)got.stride_z, got.flags);
    CHECK(pgpu_workspace_bytes(s) > 0, "workspace %zu bytes", pgpu_workspace_bytes(s));
    pgpu_destroy(s);
}

/* The multigrid smoother's default omega (poisson_gpu.h): 1.3 in 3D and 1.2
 * in 2D, 1.2 / 1.15 where two or three periodic axes have an odd number
 * (> 1) of points; pre/post smoothing 2 / 1; a value set by the caller is
 * kept. */
static void check_multigrid_defaults(void)
{
    static const struct {
        int n[3];
        const char *bcs;
        unsigned method;
        double omega, want;
    } cases[] = {
        {{10, 8, 6}, "DDDDDD", PGPU_VCYCLE, 0.0, 1.3},
        {{10, 8, 6}, "PPPPPP", PGPU_VCYCLE, 0.0, 1.3},  /* even rings */
        {{9, 8, 6}, "PPDDNN", PGPU_VCYCLE, 0.0, 1.3},   /* one odd ring */
        {{10, 8, 7}, "DNDNPP", PGPU_FMG, 0.0, 1.3},     /* one odd ring */
        {{9, 7, 6}, "PPPPDD", PGPU_VCYCLE, 0.0, 1.2},   /* two */
        {{9, 7, 5}, "PPPPPP", PGPU_FMG, 0.0, 1.2},      /* three */
        {{1, 7, 5}, "PPPPDD", PGPU_VCYCLE, 0.0, 1.3},   /* a periodic axis of one point is no ring */
        {{9, 7, 5}, "PPPPPP", PGPU_VCYCLE, 1.1, 1.1},   /* the caller's value */
        {{10, 8, 1}, "DDDD", PGPU_VCYCLE, 0.0, 1.2},
        {{9, 8, 1}, "PPDD", PGPU_FMG, 0.0, 1.2},        /* one odd ring */
        {{9, 7, 1}, "PPPP", PGPU_VCYCLE, 0.0, 1.15},    /* two */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        pgpu_config cfg = t_config(cases[c].n[0], cases[c].n[1], cases[c].n[2], cases[c].bcs, 0.1, 0.1,
                                   cases[c].n[2] > 1 ? 0.1 : 0.0, cases[c].method | PGPU_DOUBLE);
        cfg.omega = cases[c].omega;
        char name[96];
        snprintf(name, sizeof name, "multigrid defaults %dx%dx%d %s %s", cases[c].n[0], cases[c].n[1],
                 cases[c].n[2], cases[c].bcs, t_method_name(cases[c].method));
        pgpu_solver *s = t_create(&cfg, name);
        if (!s)
            continue;
        pgpu_config got;
        memset(&got, 0, sizeof got);
        const pgpu_status st = pgpu_get_config(s, &got);
        CHECK(st == PGPU_SUCCESS && got.omega == cases[c].want && got.pre_smooth == 2 && got.post_smooth == 1,
              "%s: omega %g (want %g), pre/post smoothing %d / %d", name, got.omega, cases[c].want,
              got.pre_smooth, got.post_smooth);
        pgpu_destroy(s);
    }
}

int main(void)
{
    t_require_device("test_errors");
    t_seed();
    for (int p = 0; p < 2; ++p) {
        const unsigned prec = p ? PGPU_FLOAT : PGPU_DOUBLE;
        check_nonfinite("NaN in f", prec, SPOIL_F, 0, NAN, 0);
        check_nonfinite("+Inf in f", prec, SPOIL_F, 0, INFINITY, 0);
        check_nonfinite("Inf in a Dirichlet ghost (x-)", prec, SPOIL_GHOST, PGPU_XMIN, INFINITY, 0);
        check_nonfinite("-Inf in a Dirichlet ghost (z+)", prec, SPOIL_GHOST, PGPU_ZMAX, -INFINITY, 0);
        check_nonfinite("NaN in a Neumann ghost (x+)", prec, SPOIL_GHOST, PGPU_XMAX, NAN, 0);
        for (int route = 1; route <= 2; ++route) {
            check_nonfinite("NaN in f", prec, SPOIL_F, 0, NAN, route);
            check_nonfinite("-Inf in f", prec, SPOIL_F, 0, -INFINITY, route);
            check_nonfinite("NaN in a Dirichlet ghost (y+)", prec, SPOIL_GHOST, PGPU_YMAX, NAN, route);
            check_nonfinite("Inf in a Dirichlet ghost (x-)", prec, SPOIL_GHOST, PGPU_XMIN, INFINITY, route);
        }
        check_nonfinite("NaN in a Neumann ghost (x+)", prec, SPOIL_GHOST, PGPU_XMAX, NAN, 1);
        check_not_data(prec);
        check_not_converged(PGPU_RBGS, prec);
        check_not_converged(PGPU_JACOBI, prec);
        check_solve_host(PGPU_RBGS, prec);
        check_solve_host(PGPU_JACOBI, prec);
        check_get_config(PGPU_RBGS, prec);
        check_get_config(PGPU_JACOBI, prec);
    }
    for (int fft2d = 0; fft2d <= 2; ++fft2d) {
        check_range(1e-200, 0, fft2d);
        check_range(1e200, 0, fft2d);
        check_range(1e-120, 1, fft2d);
        check_range(1e120, 1, fft2d);
    }
    check_pointers();
    check_multigrid_defaults();
    return t_finish("test_errors");
}
