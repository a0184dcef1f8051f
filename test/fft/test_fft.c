/* test_fft.c -- the FFT direct solver (PGPU_FFT) on the device, against the
 * host references: the operator (test/reference.c) and the direct solver
 * (test/fft/fft_reference.c, plain O(n^2) transforms in double).
 *
 * Run with one argument: "combos" (the small, quick part), "sizes" (the
 * larger grids and the comparison with multigrid), or none for both.
 *
 * combos:
 *  - every per-axis combination of {DD, NN, PP, DN, ND}, 2D (25) and 3D
 *    (125; up to three mixed axes), on odd/even sizes (7x6, 9x10, 11x7,
 *    7x6x5, 9x10x11, 11x7x5; the second size with padded strides), with
 *    anisotropic spacing, random f and random boundary data (Dirichlet
 *    values, Neumann fluxes), double (all sizes) and float (the first);
 *    each solve checked by check_random below;
 *  - exact discrete eigenvectors v as f (zero boundary data): u = v / lambda
 *    within the bound the residual gives (||e|| <= ||r|| / lambda_min);
 *  - f = 0 and zero boundary data: u = 0 exactly;
 *  - CUDA graphs: 10 PGPU_FFT | PGPU_FIXED solves captured on a non-blocking
 *    stream, instantiated and launched (twice) give the bits of one direct
 *    solve (2D 65x65 Dirichlet double, 3D all-periodic, 3D singular with a
 *    Neumann-Neumann tridiagonal axis, a float one, 2D grids of one
 *    cooperative launch: the dense transforms and the all-Dirichlet rows);
 *    the direct FIXED
 *    solve's report has NaN norms; its result matches the host reference.
 * sizes:
 *  - prime and odd sizes (37x41x43), 2D 65x65 and 513x513, 2D all-Dirichlet
 *    grids the one-launch routes take (31^2 ... 1023^2, 4095x15, non-square,
 *    anisotropic, padded and offset), 2D grids of the dense transforms with
 *    every kind of face up to 128x128 and just past it (padded grids of the
 *    cuFFT route and the all-periodic rows among them), non-cubic grids,
 *    strongly anisotropic spacing, strided arrays with padding (all-periodic
 *    with stride_z a multiple of stride_y, a layout cuFFT could address in
 *    place, and not), all-periodic grids with nx a power of two from 32 to
 *    4096 (x transformed by the solver's own row kernels, padded and
 *    offset arrays among them; with nz a power of two from 16 to 2048 z
 *    too),
 *    axes of one point, singular problems (all-Neumann, all-periodic, N/P
 *    mixes), u and f pointers aligned to the element size only (an offset
 *    of one element into an allocation); each solve checked by check_random;
 *  - FFT and PGPU_VCYCLE (tolerance 1e-11) agree to 1e-9 relative;
 *  - a solver made after another, for a size whose row kernels need less
 *    shared memory, leaves the first one working (the kernels' limit is
 *    per kernel, not per handle).
 *
 * check_random (one solve, random problem):
 *  - status PGPU_SUCCESS, report status, 0 iterations, singular flag,
 *    seconds, rhs_norm and rhs_mean as the host computes them, residual_max
 *    <= residual_norm;
 *  - relative residual, from the report and recomputed on the host from the
 *    returned u: <= max(1e-12, 4 eps lambda_max / lambda_min) in double,
 *    max(1e-5, 4 eps lambda_max / lambda_min) in float (rounding u alone
 *    leaves about eps/2 lambda_max / lambda_min; the ratio passes 1e3 only
 *    on the long, anisotropic rows), lambda_max = sum 4/h^2;
 *  - u equals the host direct solver's answer: to 1e-11 relative (max norm)
 *    in double; in float within the rigorous bound
 *    ||u - u_ref||_2 <= (||r|| + ||r_ref||) / lambda_min (+ the difference
 *    of the means when singular);
 *  - singular problems: mean(u) ~ 0 ((8 + 2 log2 N) eps max |u|);
 *  - u's ghosts, edges and padding (poisoned: NaN, 1e30) unchanged bit for
 *    bit, f unchanged bit for bit.
 */
#include "common.h"
#include "fft_reference.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

/* ---- helpers ------------------------------------------------------------------------- */

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        return CHECK(0, "%s: %s", what, cudaGetErrorString(e));
    return 1;
}

static double lambda_max(const ref_grid *g)
{
    double s = 0.0;
    for (int a = 0; a < g->dims; ++a)
        s += 4.0 / (g->h[a] * g->h[a]);
    return s;
}

/* Relative residual the solver must reach on a random problem. */
static double residual_tol(unsigned prec, const ref_grid *g)
{
    const double kappa = lambda_max(g) / ref_lambda_min(g);
    if (prec == PGPU_DOUBLE) /* long anisotropic rows: kappa ~ 1e6 */
        return fmax(1e-12, 4.0 * DBL_EPSILON * kappa);
    return fmax(1e-5, 4.0 * FLT_EPSILON * kappa);
}

static int64_t interior_count(const ref_grid *g)
{
    return g->n[0] * g->n[1] * (g->dims == 3 ? g->n[2] : 1);
}

/* sqrt(sum (|f| + |boundary terms| + |shift|)^2): the scale of the rounding
 * of b in the solver's precision. */
static double rhs_magnitude(const ref_grid *g, const double *u, const double *f, double shift)
{
    double s = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const double m = fabs(f[ref_idx(g, i, j, k)]) + ref_point(g, u, i, j, k, REF_BOUNDARY).offabs + fabs(shift);
        s += m * m;
    }
    return sqrt(s);
}

/* What mean(u) may be for a singular problem: the rounding of u, a few
 * eps max |u| per transform stage (log2 N stages). */
static double mean_bound(const ref_grid *g, const double *u, double eps)
{
    return (8.0 + 2.0 * log2((double)interior_count(g) + 1.0)) * eps * ref_max_abs(g, u);
}

static void problem_name(char *buf, size_t len, const char *label, const t_problem *P, const pgpu_config *cfg)
{
    char letters[8];
    const int padded = cfg->stride_y != 0 || cfg->stride_z != 0;
    snprintf(buf, len, "%s %s %lldx%lldx%lld %s h=(%.3g,%.3g,%.3g)%s", label, t_precision_name(P->prec),
             (long long)P->g.n[0], (long long)P->g.n[1], (long long)P->g.n[2], t_bc_letters(&P->g, letters),
             P->g.h[0], P->g.h[1], P->g.dims == 3 ? P->g.h[2] : 0.0, padded ? " strided" : "");
}

/* ---- one random problem, checked every way ------------------------------------------- */

/* offset: u and f are passed offset by this many elements from the start
 * of their allocations (pointers aligned to the element size only). */
static void check_random(const pgpu_config *cfg, const char *label, int offset)
{
    t_problem P;
    if (!t_problem_init(&P, cfg))
        return;
    t_problem_randomize(&P);
    const ref_grid *g = &P.g;
    const unsigned prec = P.prec;
    const double eps = t_eps(prec);
    const int singular = ref_is_singular(g);
    char name[240];
    problem_name(name, sizeof name, label, &P, cfg);
    if (offset) {
        const size_t len = strlen(name);
        snprintf(name + len, sizeof name - len, " pointers +%d element%s", offset, offset > 1 ? "s" : "");
    }

    pgpu_solver *s = t_create(cfg, name);
    double *u = t_problem_array(&P, NULL), *uref = NULL;
    void *typed = malloc(P.bytes), *f_sent = malloc(P.bytes), *f_back = malloc(P.bytes);
    char *bu = NULL, *bf = NULL;
    if (!s || !u || !typed || !f_sent || !f_back || !t_problem_upload(&P))
        goto done;
    t_to_typed(prec, P.f, f_sent, P.elems);
    void *du = P.d_u, *df = P.d_f;
    if (offset) {
        const size_t off = (size_t)offset * t_word(prec);
        bu = t_dev_alloc(P.bytes + off);
        bf = t_dev_alloc(P.bytes + off);
        if (!bu || !bf || !cuda_ok(cudaMemcpy(bu + off, P.d_u, P.bytes, cudaMemcpyDeviceToDevice), "copy u") ||
            !cuda_ok(cudaMemcpy(bf + off, P.d_f, P.bytes, cudaMemcpyDeviceToDevice), "copy f"))
            goto done;
        du = bu + off;
        df = bf + off;
    }

    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    const pgpu_status st = pgpu_solve(s, du, df, &rep);
    if (!t_sync(name) || !t_dev_download(typed, du, P.bytes) || !t_dev_download(f_back, df, P.bytes))
        goto done;
    t_from_typed(prec, typed, u, P.elems);

    /* The host's view of the returned u, and the reference answer. */
    const ref_norms nm = ref_residual(g, u, P.f, NULL);
    uref = t_problem_array(&P, P.u);
    if (!uref || !CHECK(fref_solve(g, uref, P.f), "%s: the host reference solver", name))
        goto done;
    const ref_norms nref = ref_residual(g, uref, P.f, NULL);
    const double tol = residual_tol(prec, g);

    /* Report. */
    const double mag = rhs_magnitude(g, P.u, P.f, nm.shift);
    /* b is formed in the solver's precision (a few roundings of the terms
     * per point, the coefficients 1/h^2 and 1/h rounded too); the sums over
     * the N points, the host's plain one and the device's blocked one, add
     * about sqrt(N) eps of the magnitude in double. */
    const double shift_mag = ref_shift_magnitude(g, P.u, P.f);
    const double sum_err = (8.0 + 2.0 * sqrt((double)interior_count(g))) * DBL_EPSILON;
    const double drhs = fabs(rep.rhs_norm - nm.rhs_norm), dmean = fabs(rep.rhs_mean - nm.shift);
    const int rhs_ok = drhs <= 1e-12 * nm.rhs_norm + (8.0 * eps + sum_err) * mag;
    const int mean_ok = dmean <= (8.0 * eps + sum_err) * shift_mag + 1e-300;
    CHECK(st == PGPU_SUCCESS && rep.status == st && rep.iterations == 0 && rep.singular == singular &&
              rep.seconds >= 0.0 && rhs_ok && mean_ok && rep.residual_max <= rep.residual_norm,
          "%s: %s, %d iterations, singular %d, %.3f ms, rhs_norm %.6e (host: %s by %.1e), rhs_mean %.3e (host: %s "
          "by %.1e), residual max %.2e norm %.2e%s%s",
          name, pgpu_status_string(st), rep.iterations, rep.singular, rep.seconds * 1e3, rep.rhs_norm,
          rhs_ok ? "agrees" : "DIFFERS", drhs, rep.rhs_mean, mean_ok ? "agrees" : "DIFFERS", dmean,
          rep.residual_max, rep.residual_norm, st != PGPU_SUCCESS ? "; last error: " : "",
          st != PGPU_SUCCESS ? pgpu_last_error(s) : "");

    /* Residual and answer. */
    const double umax = ref_max_abs(g, uref);
    double sol_err, sol_bound;
    if (prec == PGPU_DOUBLE) {
        sol_err = ref_max_diff(g, u, uref) / (umax > 0.0 ? umax : 1.0);
        sol_bound = 1e-11;
    } else {
        const double dmean = singular ? fabs(ref_mean(g, u) - ref_mean(g, uref)) : 0.0;
        sol_err = ref_norm2_diff(g, u, uref, 1.0);
        sol_bound = 1.01 * (nm.norm + nref.norm) / ref_lambda_min(g) + dmean * sqrt((double)interior_count(g)) +
                    1e-12 * ref_norm2(g, uref);
    }
    const double mean = singular ? fabs(ref_mean(g, u)) : 0.0;
    CHECK(rep.relative_residual <= tol && nm.relative <= tol && sol_err <= sol_bound && mean <= mean_bound(g, u, eps),
          "%s: relative residual %.2e (host %.2e) <= %.1e; %s %.2e <= %.2e%s", name, rep.relative_residual,
          nm.relative, tol, prec == PGPU_DOUBLE ? "max |u - u_ref| / max |u_ref|" : "||u - u_ref||_2", sol_err,
          sol_bound, singular ? "; singular: mean(u) ~ 0" : "");
    if (singular)
        t_note("mean(u) %.2e, max |u| %.2e, bound %.2e", ref_mean(g, u), ref_max_abs(g, u), mean_bound(g, u, eps));

    /* Nothing else written. */
    const int64_t changed = t_problem_changed_outside(&P, typed);
    CHECK(changed == 0 && memcmp(f_sent, f_back, P.bytes) == 0,
          "%s: %lld elements of u outside the interior changed (ghosts, edges, padding), f %s", name,
          (long long)changed, memcmp(f_sent, f_back, P.bytes) == 0 ? "unchanged" : "CHANGED");
done:
    t_dev_free(bu);
    t_dev_free(bf);
    free(typed);
    free(f_sent);
    free(f_back);
    free(u);
    free(uref);
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* ---- every per-axis combination ------------------------------------------------------ */

static const char *axis_letters[5] = {"DD", "NN", "PP", "DN", "ND"};

static void make_bcs(int dims, const int code[3], char *bcs)
{
    int c = 0;
    for (int a = 0; a < dims; ++a) {
        bcs[c++] = axis_letters[code[a]][0];
        bcs[c++] = axis_letters[code[a]][1];
    }
    bcs[c] = '\0';
}

static pgpu_config fft_config(int64_t nx, int64_t ny, int64_t nz, const char *bcs, unsigned prec)
{
    /* Anisotropic spacing: different lengths per axis. */
    return t_config(nx, ny, nz, bcs, 1.0 / (double)(nx + 1), 1.3 / (double)(ny + 1),
                    0.8 / (double)(nz + 1), PGPU_FFT | prec);
}

static void pad(pgpu_config *c, int64_t pad_y, int64_t pad_z)
{
    c->stride_y = c->nx + 2 + pad_y;
    if (c->nz > 1)
        c->stride_z = c->stride_y * (c->ny + 2) + pad_z;
}

static void check_combinations(void)
{
    /* The third sizes have planes of an odd number of points. */
    static const int64_t sizes2[3][2] = {{7, 6}, {9, 10}, {11, 7}};
    static const int64_t sizes3[3][3] = {{7, 6, 5}, {9, 10, 11}, {11, 7, 5}};
    for (int dims = 2; dims <= 3; ++dims) {
        int solved = 0;
        const int n2 = dims == 3 ? 5 : 1;
        for (int c0 = 0; c0 < 5; ++c0)
            for (int c1 = 0; c1 < 5; ++c1)
                for (int c2 = 0; c2 < n2; ++c2) {
                    const int code[3] = {c0, c1, c2};
                    char bcs[8];
                    make_bcs(dims, code, bcs);
                    for (int sz = 0; sz < 3; ++sz)
                        for (int p = 0; p < 2; ++p) {
                            if (p == 1 && sz > 0)
                                continue; /* float on the first size only */
                            const unsigned prec = p ? PGPU_FLOAT : PGPU_DOUBLE;
                            pgpu_config c = dims == 3
                                                ? fft_config(sizes3[sz][0], sizes3[sz][1], sizes3[sz][2], bcs, prec)
                                                : fft_config(sizes2[sz][0], sizes2[sz][1], 1, bcs, prec);
                            if (sz == 1)
                                pad(&c, 3, 5); /* stride_z not a multiple of stride_y */
                            check_random(&c, "combination", 0);
                            ++solved;
                        }
                }
        CHECK(solved == (dims == 3 ? 125 : 25) * 4,
              "%dD: every per-axis combination of DD, NN, PP, DN and ND solved (%d problems; each checked above)",
              dims, solved);
    }
}

/* ---- eigenvectors --------------------------------------------------------------------- */

typedef struct eigen_case {
    int64_t n[3];
    const char *bcs;
    double h[3];
    int k[3];
} eigen_case;

static const eigen_case eigen_cases[] = {
    {{16, 12, 10}, "DDDDDD", {0.06, 0.08, 0.1}, {1, 1, 1}},
    {{16, 12, 10}, "DDDDDD", {0.06, 0.08, 0.1}, {3, 2, 4}},
    {{12, 10, 8}, "NNPPDD", {0.1, 0.1, 0.1}, {2, 1, 1}},
    {{10, 8, 6}, "NNNNNN", {0.1, 0.12, 0.15}, {1, 2, 0}},   /* singular */
    {{9, 7, 5}, "PPPPPP", {0.1, 0.1, 0.1}, {1, 1, 2}},      /* singular, odd periodic */
    {{40, 24, 1}, "PPNN", {0.025, 0.04, 0.0}, {2, 1, 0}},   /* 2D singular */
    {{33, 20, 1}, "DNPP", {0.03, 0.05, 0.0}, {1, 2, 0}},    /* 2D, mixed axis */
    {{31, 26, 1}, "NDDN", {0.03, 0.04, 0.0}, {5, 3, 0}},    /* 2D, two mixed axes */
    {{14, 11, 9}, "DNNDDN", {0.07, 0.09, 0.1}, {3, 7, 2}},  /* three mixed axes */
    {{12, 15, 10}, "NDPPDN", {0.08, 0.06, 0.1}, {9, 4, 6}}, /* two mixed axes beside a periodic one */
    {{21, 18, 1}, "NNND", {0.05, 0.05, 0.0}, {3, 2, 0}},    /* 2D, mixed axis with NN */
    {{1, 15, 11}, "PPDNNN", {0.1, 0.07, 0.09}, {0, 2, 1}},  /* a periodic axis of one point */
    {{11, 13, 9}, "NDPPNN", {0.09, 0.07, 0.1}, {4, 3, 2}},  /* mixed x, periodic, NN */
    {{37, 41, 43}, "DDDDDD", {1.0 / 38, 1.0 / 42, 1.0 / 44}, {1, 1, 1}},
    {{32, 12, 10}, "PPPPPP", {0.1, 0.1, 0.1}, {5, 1, 2}},   /* x by the row kernels */
    {{32, 12, 16}, "PPPPPP", {0.1, 0.1, 0.1}, {5, 1, 7}},   /* x and z by the row kernels */
    {{64, 9, 1}, "PPPP", {0.02, 0.1, 0.0}, {31, 4, 0}},     /* 2D, x by the row kernels */
};

static void check_eigen(const eigen_case *c, unsigned prec)
{
    pgpu_config cfg = t_config(c->n[0], c->n[1], c->n[2], c->bcs, c->h[0], c->h[1], c->h[2], PGPU_FFT | prec);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    const ref_grid *g = &P.g;
    const int singular = ref_is_singular(g);
    const double eps = t_eps(prec);
    const double phase[3] = {0.4, -0.2, 1.3};
    double *v = t_problem_array(&P, NULL), *u = t_problem_array(&P, NULL);
    const double lambda = ref_fill_mode(g, v, c->k, phase);
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        P.f[p] = v[p];
        P.u[p] = t_rand(-1.0, 1.0); /* the initial guess, ignored */
    }
    char name[240], letters[8];
    snprintf(name, sizeof name, "eigen %s %lldx%lldx%lld %s k=(%d,%d,%d)", t_precision_name(prec),
             (long long)c->n[0], (long long)c->n[1], (long long)c->n[2], t_bc_letters(g, letters), c->k[0],
             c->k[1], c->k[2]);
    pgpu_solver *s = t_create(&cfg, name);
    pgpu_report rep;
    pgpu_status st;
    if (v && u && t_problem_solve(&P, s, name, &rep, &st, u)) {
        const ref_norms nm = ref_residual(g, u, P.f, NULL);
        const double lmin = ref_lambda_min(g);
        const double tol = prec == PGPU_DOUBLE ? fmax(1e-12, 4.0 * eps * lambda_max(g) / lmin)
                                               : fmax(1e-5, 4.0 * eps * lambda_max(g) / lmin);
        /* e = u - v/lambda: ||e|| <= ||A e|| / lambda_min, and A e = r
         * plus the rounding of f = v to the precision (eps/2 ||v||). */
        const double err = ref_norm2_diff(g, u, v, 1.0 / lambda) / (ref_norm2(g, v) / lambda);
        const double bound = 1.01 * (nm.relative * (1.0 + eps) + eps) * lambda / lmin;
        CHECK(st == PGPU_SUCCESS && rep.relative_residual <= tol && nm.relative <= tol &&
                  rep.singular == singular && err <= bound,
              "%s: %s, relative residual %.2e (host %.2e) <= %.1e, ||u - v/lambda|| / ||v/lambda|| = %.2e "
              "<= %.2e (lambda %.4g, lambda_min %.4g)%s%s",
              name, pgpu_status_string(st), rep.relative_residual, nm.relative, tol, err, bound, lambda, lmin,
              st != PGPU_SUCCESS ? "; last error: " : "", st != PGPU_SUCCESS ? pgpu_last_error(s) : "");
        if (singular)
            CHECK(fabs(ref_mean(g, u)) <= mean_bound(g, u, eps) &&
                      fabs(rep.rhs_mean) <= 100.0 * eps * ref_rms(g, v),
                  "%s: mean(u) %.2e, rhs_mean %.2e (both ~0)", name, ref_mean(g, u), rep.rhs_mean);
    }
    free(u);
    free(v);
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* ---- f = 0 ------------------------------------------------------------------------------ */

static void check_zero(const char *bcs, int64_t nx, int64_t ny, int64_t nz)
{
    pgpu_config cfg = fft_config(nx, ny, nz, bcs, PGPU_DOUBLE);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    REF_FOR_EACH_INTERIOR(&P.g, i, j, k) {
        P.u[ref_idx(&P.g, i, j, k)] = t_rand(-1.0, 1.0); /* initial guess */
    }
    char name[240];
    problem_name(name, sizeof name, "zero rhs", &P, &cfg);
    pgpu_solver *s = t_create(&cfg, name);
    double *u = t_problem_array(&P, NULL);
    if (s && u && t_problem_upload(&P)) {
        pgpu_report rep;
        const pgpu_status st = pgpu_solve(s, P.d_u, P.d_f, &rep);
        if (t_sync(name) && t_problem_download(&P, u, NULL))
            CHECK(st == PGPU_SUCCESS && ref_max_abs(&P.g, u) == 0.0 && rep.residual_norm == 0.0 &&
                      rep.rhs_norm == 0.0,
                  "%s: f = 0, boundary data 0: %s, max |u| = %g, residual %g", name, pgpu_status_string(st),
                  ref_max_abs(&P.g, u), rep.residual_norm);
    }
    free(u);
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* ---- CUDA graphs ------------------------------------------------------------------------ */

static void check_graph(cudaStream_t stream, int64_t nx, int64_t ny, int64_t nz, const char *bcs, unsigned prec)
{
    pgpu_config cfg = fft_config(nx, ny, nz, bcs, prec);
    cfg.flags |= PGPU_FIXED;
    cfg.stream = stream;
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    const ref_grid *g = &P.g;
    char name[240];
    problem_name(name, sizeof name, "graph", &P, &cfg);
    pgpu_solver *s = t_create(&cfg, name);
    void *direct = malloc(P.bytes), *replayed = malloc(P.bytes), *again = malloc(P.bytes);
    double *u = t_problem_array(&P, NULL), *uref = t_problem_array(&P, NULL);
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    if (!s || !direct || !replayed || !again || !u || !uref || !t_problem_upload(&P))
        goto done;

    /* One direct solve. */
    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    const pgpu_status st = pgpu_solve(s, P.d_u, P.d_f, &rep);
    if (!cuda_ok(cudaStreamSynchronize(stream), "sync") || !t_dev_download(direct, P.d_u, P.bytes))
        goto done;
    CHECK(st == PGPU_SUCCESS && rep.status == st && rep.iterations == 0 && isnan(rep.residual_norm) &&
              isnan(rep.relative_residual) && isnan(rep.seconds) && rep.singular == ref_is_singular(g),
          "%s: direct PGPU_FIXED solve: %s, report iterations %d, norms %g %g, seconds %g, singular %d%s%s", name,
          pgpu_status_string(st), rep.iterations, rep.residual_norm, rep.relative_residual, rep.seconds,
          rep.singular, st != PGPU_SUCCESS ? "; last error: " : "", st != PGPU_SUCCESS ? pgpu_last_error(s) : "");
    /* The direct answer is right. */
    t_from_typed(P.prec, direct, u, P.elems);
    memcpy(uref, P.u, (size_t)P.elems * sizeof(double));
    if (fref_solve(g, uref, P.f)) {
        const double d = ref_max_diff(g, u, uref) / ref_max_abs(g, uref);
        const ref_norms nm = ref_residual(g, u, P.f, NULL);
        const double tol = residual_tol(P.prec, g);
        CHECK(nm.relative <= tol && (P.prec == PGPU_FLOAT || d <= 1e-11),
              "%s: direct solve: host relative residual %.2e <= %.1e, max |u - u_ref| / max |u_ref| %.2e", name,
              nm.relative, tol, d);
    }

    /* Back to the initial u; ten solves captured, one launch. */
    if (!cuda_ok(cudaMemcpy(P.d_u, P.u_sent, P.bytes, cudaMemcpyHostToDevice), "reset u") ||
        !cuda_ok(cudaDeviceSynchronize(), "sync") ||
        !cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture"))
        goto done;
    int captured = 0;
    for (int r = 0; r < 10; ++r)
        captured += pgpu_solve(s, P.d_u, P.d_f, NULL) == PGPU_SUCCESS;
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    size_t nodes = 0;
    if (end == cudaSuccess && graph)
        cudaGraphGetNodes(graph, NULL, &nodes);
    CHECK(captured == 10 && end == cudaSuccess && graph != NULL && nodes > 0,
          "%s: 10 pgpu_solve captured (%d succeeded%s%s), cudaStreamEndCapture: %s, %zu graph nodes", name,
          captured, captured == 10 ? "" : ": ", captured == 10 ? "" : pgpu_last_error(s), cudaGetErrorString(end),
          nodes);
    if (captured == 10 && end == cudaSuccess && graph &&
        cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate") &&
        cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch") &&
        cuda_ok(cudaStreamSynchronize(stream), "sync") && t_dev_download(replayed, P.d_u, P.bytes) &&
        cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch") &&
        cuda_ok(cudaStreamSynchronize(stream), "sync") && t_dev_download(again, P.d_u, P.bytes)) {
        CHECK(memcmp(direct, replayed, P.bytes) == 0 && memcmp(direct, again, P.bytes) == 0,
              "%s: the graph of 10 solves, launched twice, gives the bits of one direct solve (whole array)",
              name);
    }
done:
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    cudaGetLastError(); /* a failed capture leaves an error behind; keep it out of later checks */
    free(direct);
    free(replayed);
    free(again);
    free(u);
    free(uref);
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* ---- sizes that matter ------------------------------------------------------------------ */

typedef struct size_case {
    int64_t n[3];
    const char *bcs;
    double h[3];       /* 0: the fft_config spacing */
    int64_t pad_y;     /* padding per row (0: packed) */
    int64_t pad_z;     /* padding per plane; -1: one extra row (stride_z a multiple of stride_y) */
    int precisions;    /* 1 double, 2 float, 3 both */
    int offset;        /* u and f passed this many elements past their allocations' start */
} size_case;

static const size_case size_cases[] = {
    /* prime and odd */
    {{37, 41, 43}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{37, 41, 43}, "NNNNNN", {0, 0, 0}, 0, 0, 3, 0},
    {{37, 41, 43}, "PPPPPP", {0, 0, 0}, 0, 0, 3, 0},
    {{37, 41, 43}, "DNPPNN", {0, 0, 0}, 0, 0, 3, 0},
    {{37, 41, 43}, "PPNNDD", {0, 0, 0}, 0, 0, 3, 0},
    {{37, 41, 43}, "NNPPPP", {0, 0, 0}, 0, 0, 1, 0},
    {{37, 41, 43}, "PPDDND", {0, 0, 0}, 3, 7, 1, 0},
    /* axes whose cuFFT length has a prime factor past 7 take dense
     * products (more than one tile of rows and of lines), beside cuFFT
     * axes, line solves, a periodic axis, padded and offset arrays */
    {{136, 129, 20}, "DDDDNN", {0, 0, 0}, 0, 0, 3, 0},
    {{200, 23, 30}, "DNNDDD", {0.004, 0.03, 0.02}, 3, 5, 3, 1},
    {{127, 100, 16}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{101, 12, 40}, "NNPPDD", {0, 0, 0}, 0, 0, 3, 0},
    {{300, 200, 1}, "DDNN", {0, 0, 0}, 0, 0, 3, 0},
    /* 2D 65 x 65 and 513 x 513 */
    {{65, 65, 1}, "DDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{65, 65, 1}, "NNNN", {0, 0, 0}, 0, 0, 3, 0},
    {{65, 65, 1}, "PPPP", {0, 0, 0}, 0, 0, 3, 0},
    {{65, 65, 1}, "DNPP", {0, 0, 0}, 0, 0, 3, 0},
    {{65, 65, 1}, "PPND", {0, 0, 0}, 0, 0, 3, 0},
    {{65, 65, 1}, "NNPP", {0, 0, 0}, 0, 0, 1, 0},
    {{513, 513, 1}, "DDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{513, 513, 1}, "NNNN", {0, 0, 0}, 0, 0, 1, 0},
    {{513, 513, 1}, "PPPP", {0, 0, 0}, 0, 0, 1, 0},
    {{513, 513, 1}, "DNNN", {0, 0, 0}, 0, 0, 1, 0},
    {{513, 513, 1}, "PPDD", {0, 0, 0}, 0, 0, 2, 0},
    /* 2D all-Dirichlet in one launch (n+1 a power of two from 16 on both
     * axes): 2^k - 1 as in the time-to-answer bench, non-square, anisotropic,
     * padded and offset arrays; beside them sizes that take other routes */
    {{31, 31, 1}, "DDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{63, 63, 1}, "DDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{127, 127, 1}, "DDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{255, 255, 1}, "DDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{511, 511, 1}, "DDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{1023, 1023, 1}, "DDDD", {0, 0, 0}, 0, 0, 1, 0},
    {{4095, 15, 1}, "DDDD", {0.001, 0.05, 0}, 0, 0, 1, 0},
    {{63, 15, 1}, "DDDD", {0.01, 0.05, 0}, 0, 0, 3, 0},
    {{140, 26, 1}, "DDDD", {0.005, 0.05, 0}, 0, 0, 3, 0}, /* 141, 27: the cuFFT route */
    {{15, 4095, 1}, "DDDD", {0.05, 0.001, 0}, 0, 0, 1, 0},
    {{2, 3, 1}, "DDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{1, 20, 1}, "DDDD", {0, 0, 0}, 0, 0, 1, 0},
    {{63, 31, 1}, "DDDD", {0, 0, 0}, 5, 0, 3, 1},
    {{511, 31, 1}, "DDDD", {0, 0, 0}, 5, 0, 3, 1}, /* the rows, padded and offset */
    /* 2D, at most 128 a side: the dense transforms (every face set; the
     * small combinations above too; all-Dirichlet grids the rows take only
     * past 64 a side); 129 a side: the other routes */
    {{128, 128, 1}, "DDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{128, 100, 1}, "DNND", {0.008, 0.01, 0}, 0, 0, 3, 0},
    {{127, 128, 1}, "PPNN", {0, 0, 0}, 0, 0, 3, 0},
    {{97, 128, 1}, "NDPP", {0.01, 0.004, 0}, 3, 0, 3, 1},
    {{128, 3, 1}, "PPDN", {0.007, 0.3, 0}, 0, 0, 3, 0},
    {{127, 63, 1}, "DDND", {0, 0, 0}, 0, 0, 3, 0},
    {{129, 31, 1}, "DDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{31, 129, 1}, "DNPP", {0, 0, 0}, 0, 0, 1, 0},
    /* at most 64 a side: one thread-block cluster where the device has them
     * (a cluster of 16, of 8 at most 8 rows), the dense transforms above
     * elsewhere; 65 a side: the dense transforms */
    {{64, 64, 1}, "DNND", {0.01, 0.012, 0}, 0, 0, 3, 0},
    {{64, 64, 1}, "PPNN", {0, 0, 0}, 3, 0, 3, 1},
    {{64, 17, 1}, "NDDD", {0.01, 0.05, 0}, 0, 0, 3, 0},
    {{40, 7, 1}, "PPDN", {0.02, 0.1, 0}, 2, 0, 3, 1},
    {{5, 64, 1}, "DDPP", {0.2, 0.01, 0}, 0, 0, 3, 0},
    {{65, 64, 1}, "NDDD", {0, 0, 0}, 0, 0, 3, 0},
    /* non-cubic, strongly anisotropic spacing */
    {{64, 24, 9}, "DDPPNN", {0.01, 0.05, 0.2}, 0, 0, 3, 0},
    {{10, 50, 6}, "NDDDPP", {0.2, 0.01, 0.05}, 0, 0, 3, 0},
    {{3, 5, 96}, "PPNNDN", {0.3, 0.1, 0.004}, 0, 0, 3, 0},
    {{96, 8, 40}, "NNNNDD", {0.01, 0.1, 0.03}, 0, 0, 1, 0},
    {{200, 7, 1}, "DDPP", {0.005, 0.3, 0}, 0, 0, 3, 0},
    /* strided arrays with padding */
    {{30, 20, 12}, "PPPPPP", {0, 0, 0}, 7, -1, 3, 0}, /* stride_z a multiple of stride_y */
    {{30, 20, 12}, "PPPPPP", {0, 0, 0}, 7, 11, 3, 0}, /* not a multiple */
    {{30, 20, 12}, "DNDDNN", {0, 0, 0}, 5, 9, 3, 0},
    {{30, 20, 12}, "NNNNPP", {0, 0, 0}, 4, -1, 1, 0},
    {{33, 17, 1}, "PPPP", {0, 0, 0}, 7, 0, 3, 0},
    {{33, 17, 1}, "DDNN", {0, 0, 0}, 8, 0, 3, 0},
    {{29, 31, 1}, "NDPP", {0, 0, 0}, 3, 0, 1, 0},
    {{133, 17, 1}, "PPPP", {0, 0, 0}, 7, 0, 3, 0}, /* ... past the dense transforms: cuFFT */
    {{150, 17, 1}, "DDNN", {0, 0, 0}, 8, 0, 3, 0},
    /* axes of one point */
    {{1, 20, 1}, "PPDD", {0, 0, 0}, 0, 0, 1, 0},
    {{20, 1, 1}, "DDNN", {0, 0, 0}, 0, 0, 1, 0},
    {{1, 1, 1}, "DDDD", {0, 0, 0}, 0, 0, 1, 0},
    {{1, 1, 1}, "DNPP", {0, 0, 0}, 0, 0, 1, 0},
    {{1, 12, 9}, "PPDDNN", {0, 0, 0}, 0, 0, 1, 0},
    {{9, 1, 7}, "DDNNPP", {0, 0, 0}, 0, 0, 1, 0},
    {{1, 1, 6}, "NNNNND", {0, 0, 0}, 0, 0, 1, 0},
    {{2, 1, 3}, "NNNNNN", {0, 0, 0}, 0, 0, 1, 0},
    {{1, 1, 2}, "PPPPPP", {0, 0, 0}, 2, -1, 1, 0},
    /* larger */
    {{64, 64, 64}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{64, 48, 40}, "PPNNPP", {0, 0, 0}, 0, 0, 1, 0},
    /* pointers aligned to the element only (the header asks for no more) */
    {{7, 6, 5}, "PPPPPP", {0, 0, 0}, 0, 0, 3, 1},
    {{8, 6, 1}, "PPPP", {0, 0, 0}, 1, 0, 3, 1},
    {{7, 6, 5}, "DNPPNN", {0, 0, 0}, 0, 0, 3, 1},
    {{9, 10, 11}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 3},
    /* all-periodic with nx a power of two, 32 ... 4096: x by the solver's own
     * row kernels (one radix-16 pass at 32, several passes with a smaller last
     * one above), y and z by cuFFT */
    {{32, 16, 8}, "PPPPPP", {0, 0, 0}, 0, 0, 3, 1},
    {{64, 37, 20}, "PPPPPP", {0.02, 0.03, 0.05}, 5, 9, 3, 0},
    {{256, 65, 1}, "PPPP", {0, 0, 0}, 3, 0, 3, 1},
    {{256, 24, 17}, "PPPPPP", {0, 0, 0}, 2, -1, 3, 0},
    {{512, 9, 7}, "PPPPPP", {0.001, 0.2, 0.1}, 0, 0, 3, 0},
    {{2048, 5, 1}, "PPPP", {0, 0, 0}, 0, 0, 3, 0},
    {{4096, 3, 2}, "PPPPPP", {0, 0, 0}, 1, 0, 3, 0},
    /* ... and nz a power of two, 16 ... 2048: z by the solver's kernel too */
    {{32, 37, 16}, "PPPPPP", {0.03, 0.02, 0.05}, 3, 5, 3, 0},
    {{128, 33, 64}, "PPPPPP", {0, 0, 0}, 0, 0, 3, 1},
    {{64, 10, 2048}, "PPPPPP", {0, 0, 0}, 0, 0, 3, 0},
    /* 3D, all Dirichlet, every n+1 a product of primes up to 19: the solver's
     * own DST-I row kernels on every axis (radices 16, 8, 4, 2, 27, 9 and the
     * odd primes; one to three passes; rows of 2 to 4096) */
    {{512, 9, 7}, "DDDDDD", {0.001, 0.2, 0.1}, 0, 0, 3, 0}, /* 513 = 3^3 19 */
    /* 513 on y and z: its kernels of their own (DR_CONST_N), the z solve as two passes */
    {{6, 512, 512}, "DDDDDD", {0.1, 0.002, 0.003}, 2, -1, 3, 0},
    {{18, 16, 12}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 1},        /* 19, 17, 13 */
    {{34, 127, 10}, "DDDDDD", {0.03, 0.01, 0.05}, 3, 5, 3, 0}, /* 5 7, 16 8, 11 */
    {{63, 44, 24}, "DDDDDD", {0, 0, 0}, 2, -1, 3, 0},        /* 16 4, 9 5, 5 5 */
    {{31, 1, 3}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 0},           /* 16 2, 2, 4 */
    {{4095, 3, 2}, "DDDDDD", {0, 0, 0}, 1, 0, 3, 0},         /* 16^3: 256 threads per row */
    /* ... where n+1 is a power of two, the inlined transform, and on z the
     * forward and inverse transforms in one pass */
    {{15, 31, 63}, "DDDDDD", {0.02, 0.03, 0.01}, 3, 5, 3, 0}, /* 16, 32, 64 */
    {{12, 10, 255}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 1},         /* z alone: 256 */
    {{127, 127, 127}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 0},
    {{1023, 5, 15}, "DDDDDD", {0, 0, 0}, 2, -1, 3, 0},        /* 1024: 64 threads per row */
    {{7, 5, 4095}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 0},          /* z 4096: one row a block */
    {{6, 255, 1023}, "DDDDDD", {0.1, 0.004, 0.001}, 1, 0, 3, 0}, /* y 256, z 1024 */
    {{2047, 511, 3}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 0},          /* x 2048, y 512 */
    {{255, 20, 1}, "DDDD", {0.004, 0.05, 0}, 0, 0, 3, 1},    /* 2D: the cuFFT path */
    {{196, 65, 1}, "DDDD", {0, 0, 0}, 5, 0, 3, 0},           /* 197 is prime: the cuFFT path */
    {{22, 30, 12}, "DDDDDD", {0, 0, 0}, 0, 0, 3, 0},         /* 23 is prime: the cuFFT path */
};

static void check_sizes(void)
{
    for (size_t c = 0; c < sizeof size_cases / sizeof size_cases[0]; ++c) {
        const size_case *sc = &size_cases[c];
        for (int p = 0; p < 2; ++p) {
            if (!(sc->precisions & (1 << p)))
                continue;
            const unsigned prec = p ? PGPU_FLOAT : PGPU_DOUBLE;
            pgpu_config cfg = fft_config(sc->n[0], sc->n[1], sc->n[2], sc->bcs, prec);
            if (sc->h[0] > 0.0) {
                cfg.hx = sc->h[0];
                cfg.hy = sc->h[1];
                cfg.hz = sc->h[2] > 0.0 ? sc->h[2] : 1.0;
            }
            if (sc->pad_y) {
                cfg.stride_y = cfg.nx + 2 + sc->pad_y;
                if (cfg.nz > 1)
                    cfg.stride_z = sc->pad_z < 0 ? cfg.stride_y * (cfg.ny + 3) : cfg.stride_y * (cfg.ny + 2) + sc->pad_z;
            }
            check_random(&cfg, "size", sc->offset);
        }
    }
}

/* ---- independent handles ------------------------------------------------------------------ */

/* The row kernels' shared memory limit belongs to the kernel: a solver made
 * later, for a size that needs less, must not break one made earlier.  A
 * needs the most (x rows of 4096 in float; z lines of 16), B less of both;
 * A solves after B exists and must reach its residual. */
static void check_two_handles(void)
{
    pgpu_config ca = fft_config(4096, 3, 16, "PPPPPP", PGPU_FLOAT), cb = fft_config(64, 4, 2048, "PPPPPP", PGPU_FLOAT);
    t_problem P;
    if (!t_problem_init(&P, &ca))
        return;
    t_problem_randomize(&P);
    const char *name = "two handles: fft float 4096x3x16 PPPPPP solves after fft float 64x4x2048 PPPPPP was made";
    pgpu_solver *a = t_create(&ca, name), *b = a ? t_create(&cb, name) : NULL;
    if (a && b && t_problem_upload(&P)) {
        pgpu_report rep;
        memset(&rep, 0, sizeof rep);
        const pgpu_status st = pgpu_solve(a, P.d_u, P.d_f, &rep);
        const double tol = residual_tol(PGPU_FLOAT, &P.g);
        CHECK(t_sync(name) && st == PGPU_SUCCESS && rep.relative_residual <= tol,
              "%s: %s, relative residual %.2e <= %.1e%s%s", name, pgpu_status_string(st), rep.relative_residual, tol,
              st != PGPU_SUCCESS ? "; last error: " : "", st != PGPU_SUCCESS ? pgpu_last_error(a) : "");
    }
    pgpu_destroy(a);
    pgpu_destroy(b);
    t_problem_free(&P);
}

/* ---- agreement with multigrid ----------------------------------------------------------- */

static void check_vs_multigrid(int64_t nx, int64_t ny, int64_t nz, const char *bcs)
{
    pgpu_config cf = fft_config(nx, ny, nz, bcs, PGPU_DOUBLE);
    pgpu_config cm = cf;
    cm.flags = PGPU_VCYCLE | PGPU_DOUBLE;
    cm.tolerance = 1e-11;
    t_problem P;
    if (!t_problem_init(&P, &cf))
        return;
    t_problem_randomize(&P);
    char name[240];
    problem_name(name, sizeof name, "fft vs vcycle", &P, &cf);
    pgpu_solver *sf = t_create(&cf, name), *sm = t_create(&cm, name);
    double *uf = t_problem_array(&P, NULL), *um = t_problem_array(&P, NULL);
    if (sf && sm && uf && um && t_problem_upload(&P)) {
        pgpu_report rf, rm;
        const pgpu_status a = pgpu_solve(sf, P.d_u, P.d_f, &rf);
        int ok = t_sync(name) && t_problem_download(&P, uf, NULL);
        ok = ok && cuda_ok(cudaMemcpy(P.d_u, P.u_sent, P.bytes, cudaMemcpyHostToDevice), "reset u");
        const pgpu_status b = ok ? pgpu_solve(sm, P.d_u, P.d_f, &rm) : PGPU_ERROR_CUDA;
        ok = ok && t_sync(name) && t_problem_download(&P, um, NULL);
        if (ok) {
            const double d = ref_max_diff(&P.g, uf, um) / ref_max_abs(&P.g, uf);
            CHECK(a == PGPU_SUCCESS && b == PGPU_SUCCESS && d <= 1e-9,
                  "%s: fft %s (residual %.1e), vcycle %s after %d cycles (residual %.1e): max |u_fft - u_mg| / "
                  "max |u_fft| = %.2e <= 1e-9",
                  name, pgpu_status_string(a), rf.relative_residual, pgpu_status_string(b), rm.iterations,
                  rm.relative_residual, d);
        }
    }
    free(uf);
    free(um);
    pgpu_destroy(sf);
    pgpu_destroy(sm);
    t_problem_free(&P);
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *part = argc > 1 ? argv[1] : "all";
    const int combos = strcmp(part, "sizes") != 0, sizes = strcmp(part, "combos") != 0;
    t_require_device("test_fft");
    t_seed();

    if (combos) {
        check_combinations();
        for (size_t c = 0; c < sizeof eigen_cases / sizeof eigen_cases[0]; ++c)
            for (int p = 0; p < 2; ++p)
                check_eigen(&eigen_cases[c], p ? PGPU_FLOAT : PGPU_DOUBLE);
        check_zero("DDDD", 17, 12, 1);
        check_zero("DDDD", 31, 15, 1); /* one launch, its checks folded in: dense */
        check_zero("DNDD", 31, 15, 1);
        check_zero("DDDD", 511, 15, 1); /* ... the all-Dirichlet rows */
        check_zero("PPPPPP", 8, 6, 5);
        check_zero("NNDNPP", 9, 7, 6);
        cudaStream_t stream = NULL;
        if (cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags")) {
            check_graph(stream, 65, 65, 1, "DDDD", PGPU_DOUBLE);
            check_graph(stream, 23, 20, 16, "PPPPPP", PGPU_DOUBLE);
            check_graph(stream, 64, 20, 16, "PPPPPP", PGPU_FLOAT); /* the row kernels */
            check_graph(stream, 20, 16, 12, "NNNNPP", PGPU_DOUBLE); /* singular, NN tridiagonal axis */
            check_graph(stream, 17, 12, 10, "DNPPDD", PGPU_FLOAT);
            check_graph(stream, 18, 20, 12, "DDDDDD", PGPU_FLOAT); /* the DST-I row kernels */
            check_graph(stream, 63, 63, 1, "DDDD", PGPU_DOUBLE);    /* one cooperative launch: dense */
            check_graph(stream, 31, 127, 1, "NDPP", PGPU_FLOAT);
            check_graph(stream, 511, 63, 1, "DDDD", PGPU_DOUBLE);   /* ... the all-Dirichlet rows */
            check_graph(stream, 140, 65, 1, "DNDD", PGPU_DOUBLE);   /* 2D past both: cuFFT */
            cudaStreamDestroy(stream);
        }
    }
    if (sizes) {
        check_sizes();
        check_two_handles();
        check_vs_multigrid(65, 65, 1, "DDDD");
        check_vs_multigrid(63, 127, 1, "DDDD");
        check_vs_multigrid(100, 37, 1, "DNND");
        check_vs_multigrid(33, 28, 30, "DDNNPP");
        check_vs_multigrid(24, 20, 16, "NNNNNN");
        check_vs_multigrid(64, 48, 1, "PPDN");
        check_vs_multigrid(31, 32, 17, "DNDDDD");
        check_vs_multigrid(33, 20, 12, "DDDDDD");
        check_vs_multigrid(64, 24, 16, "PPPPPP");
    }
    return t_finish("test_fft");
}
