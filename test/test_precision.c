/* test_precision.c -- every precision as accurate as it can be, against
 * exact discrete solutions.
 *
 * A smooth, non-separable u (every mode present) is set on the interior, the
 * ghost layer holds boundary data (Dirichlet values, Neumann fluxes), and
 * f = A_h u is formed on the host in double by the reference operator
 * (ref_apply), so u is the exact solution of the discrete problem to double
 * rounding.  f and the ghosts are then rounded to the solver's precision;
 * that perturbs the discrete solution by about the precision's rounding of u.
 * Errors are max |u - u_exact| / max |u_exact| over the interior (means
 * removed for singular problems).  Checked:
 *  - float FMG (one pass): error at most 5e-6 above the double FMG's (one
 *    pass leaves an algebraic error below the discretisation error, 8e-6 on
 *    the periodic cube, whatever the precision); float V-cycles to the
 *    default tolerance (SUCCESS in at most 15 cycles) and the float FFT
 *    (sizes of the cuFFT route: an n+1 with a prime factor above 19, and a
 *    tridiagonal axis): error at most 5e-6; for every boundary set at
 *    N = 256 (255^3 for Dirichlet; and a Dirichlet problem whose u vanishes
 *    on the boundary, where no boundary term hides float's rounding) and
 *    in 2D;
 *  - float Jacobi and RBGS (SOR) on small grids, run to convergence by a
 *    fixed count: error at most 5e-6 (a stationary iteration on float
 *    storage stops where every update is below half an ulp, about
 *    0.07 eps lambda_max / lambda_min from the solution: small grids only);
 *  - singular problems (all-Neumann, periodic, both; 48^3 and 2D 256^2)
 *    whose f carries a large mean (30 and 1000 times max |f|): float
 *    V-cycles, FFT and CG (V-cycle and FFT preconditioners) as accurate as
 *    without it but for f's own rounding, their reports matching the host's
 *    residual (check_offset);
 *  - PGPU_MIXED (V-cycles, FMG, FFT): SUCCESS, relative residual at most
 *    1e-10 by the report and by the host reference, error within twice the
 *    double solver's (plus 1e-11); the report counts its refinements; a
 *    PGPU_FIXED mixed solve of 6 refinements reaches the same accuracy.
 * With --big (suite big): 511^3 and 1023^3 float V-cycles to the default
 * tolerance and 511^3 float FMG, Dirichlet data zero (the problem the
 * precision issue reported: 1.1e-3 at 511^3 before residuals were formed in
 * double).
 */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

typedef struct problem {
    pgpu_config cfg; /* sizes, spacing, boundaries (flags set per solve) */
    ref_grid g;
    int64_t elems;
    double *u;       /* exact discrete solution (interior) with the boundary data (ghosts) */
    double *f;       /* A_h u */
    double umax, umean;
    int singular;
} problem;

/* The exact solution: the sum of two products of per-axis functions
 * sin(a x + b), each consistent with its axis' faces (periodic axes carry
 * whole periods), so that u is smooth on the grid and across its faces and
 * the problem is not separable.  Positions as in mms.h: with a Dirichlet
 * lower face x_i = i h, else cell centres x_i = (i - 1/2) h (periodic: the
 * same); the axes have length L.  zero_bc (Dirichlet cubes): every term
 * vanishes on the boundary nodes, so that b ~ lambda_min u. */
typedef struct term {
    double a[3], b[3];
} term;

static double t_fn(const term *t, int d, double x) { return sin(t->a[d] * x + t->b[d]); }
static double t_slope(const term *t, int d, double x) { return t->a[d] * cos(t->a[d] * x + t->b[d]); }

static int make_problem(problem *P, int64_t N, int dims, const char *bcs, int zero_bc)
{
    memset(P, 0, sizeof *P);
    double L[3] = {1.0, 1.1, 0.9};
    int64_t n[3] = {1, 1, 1};
    double h[3] = {1.0, 1.0, 1.0};
    term T[2];
    for (int d = 0; d < 3; ++d) {
        const char lo = bcs[2 * d < (int)strlen(bcs) ? 2 * d : 0], hi = bcs[2 * d + 1 < (int)strlen(bcs) ? 2 * d + 1 : 0];
        if (lo == 'P') { /* a whole period over a length of 2 */
            L[d] = 2.0;
            T[0].a[d] = T[1].a[d] = 2.0 * PI / L[d];
            T[0].b[d] = 0.3 + d;
            T[1].b[d] = 1.9 - 0.7 * d;
        } else if (zero_bc) { /* zero on both walls of a D-D axis */
            T[0].a[d] = PI / L[d];
            T[0].b[d] = 0.0;
            T[1].a[d] = (d == 1 ? 2.0 : 1.0) * PI / L[d];
            T[1].b[d] = 0.0;
        } else {
            T[0].a[d] = 1.3 + 0.4 * d;
            T[0].b[d] = 0.4 - 0.3 * d;
            T[1].a[d] = 2.9 - 0.5 * d;
            T[1].b[d] = 1.1 + 0.2 * d;
        }
        if (d < dims) {
            const double lo_off = lo == 'D' ? 0.0 : 0.5, hi_ext = hi == 'D' ? 1.0 : 0.5;
            n[d] = (lo != 'D' && hi != 'D') ? N : N - 1;
            h[d] = L[d] / ((double)n[d] - lo_off + hi_ext);
        }
    }
    P->cfg = t_config(n[0], n[1], dims == 3 ? n[2] : 1, bcs, h[0], h[1], h[2], PGPU_FMG | PGPU_DOUBLE);
    P->g = ref_grid_from_config(&P->cfg);
    P->elems = ref_elems(&P->g);
    P->u = (double *)calloc((size_t)P->elems, sizeof(double));
    P->f = (double *)calloc((size_t)P->elems, sizeof(double));
    if (!CHECK(P->u && P->f, "host memory for %s N=%lld", bcs, (long long)N))
        return 0;
    const ref_grid *g = &P->g;
    for (int64_t e = 0; e < P->elems; ++e) {
        int face = -1;
        const int kind = ref_classify(g, e, &face);
        if (kind != REF_INTERIOR && kind != REF_FACE_GHOST)
            continue;
        const int64_t idx[3] = {e % g->stride[2] % g->stride[1], e % g->stride[2] / g->stride[1],
                                g->dims == 3 ? e / g->stride[2] : 1};
        double x[3];
        for (int d = 0; d < 3; ++d)
            x[d] = ((double)idx[d] - (g->bc[2 * d] == PGPU_BC_DIRICHLET ? 0.0 : 0.5)) * g->h[d];
        const int across = kind == REF_FACE_GHOST && g->bc[face] == PGPU_BC_NEUMANN ? face / 2 : -1;
        if (across >= 0) /* the outward derivative at the face itself (0 or L) */
            x[across] = (face & 1) ? L[across] : 0.0;
        double v = 0.0;
        for (int t = 0; t < 2; ++t) {
            double p = 1.0;
            for (int d = 0; d < dims; ++d)
                p *= d == across ? ((face & 1) ? t_slope(&T[t], d, x[d]) : -t_slope(&T[t], d, x[d])) : t_fn(&T[t], d, x[d]);
            v += p;
        }
        if (kind == REF_INTERIOR || g->bc[face] != PGPU_BC_PERIODIC)
            P->u[e] = v;
    }
    ref_apply(g, P->u, P->f);
    P->singular = ref_is_singular(g);
    int64_t npts = 0;
    REF_FOR_EACH_INTERIOR(g, i, j, k)
    {
        P->umean += P->u[ref_idx(g, i, j, k)];
        ++npts;
    }
    P->umean /= (double)npts;
    REF_FOR_EACH_INTERIOR(g, i, j, k)
    P->umax = fmax(P->umax, fabs(P->u[ref_idx(g, i, j, k)] - (P->singular ? P->umean : 0.0)));
    return 1;
}

static void free_problem(problem *P)
{
    free(P->u);
    free(P->f);
}

/* The result of one solve. */
typedef struct outcome {
    pgpu_status st;
    pgpu_report rep;
    double err;      /* max |u - u_exact| / max |u_exact| */
    double host_rel; /* the host reference's relative residual of the answer */
    char said[320];  /* the status, with pgpu_last_error when the solve failed */
} outcome;

/* Solves P with flags (method | precision | options) from u = 0 in the
 * interior (boundary data in the ghosts), max_iterations maxit (0: default). */
static int PRE = PGPU_PRECOND_DEFAULT; /* the Krylov methods' preconditioner */
static outcome solve(const problem *P, unsigned flags, int maxit, double omega)
{
    outcome out;
    memset(&out, 0, sizeof out);
    out.err = out.host_rel = NAN;
    snprintf(out.said, sizeof out.said, "not run");
    pgpu_config c = P->cfg;
    c.flags = flags;
    c.max_iterations = maxit;
    c.omega = omega;
    c.preconditioner = PRE;
    const int dbl = t_precision(flags) == PGPU_DOUBLE;
    const size_t es = dbl ? sizeof(double) : sizeof(float), bytes = (size_t)P->elems * es;
    void *hu = malloc(bytes), *hf = malloc(bytes);
    double *back = (double *)malloc((size_t)P->elems * sizeof(double));
    pgpu_solver *s = NULL;
    void *du = NULL, *df = NULL;
    if (!hu || !hf || !back)
        goto done;
    for (int64_t e = 0; e < P->elems; ++e) {
        int face;
        const double uv = ref_classify(&P->g, e, &face) == REF_INTERIOR ? 0.0 : P->u[e];
        if (dbl) {
            ((double *)hu)[e] = uv;
            ((double *)hf)[e] = P->f[e];
        } else {
            ((float *)hu)[e] = (float)uv;
            ((float *)hf)[e] = (float)P->f[e];
        }
    }
    du = t_dev_upload(hu, bytes);
    df = t_dev_upload(hf, bytes);
    out.st = pgpu_create(&c, &s);
    if (out.st != PGPU_SUCCESS)
        snprintf(out.said, sizeof out.said, "%s (%s)", pgpu_status_string(out.st), pgpu_last_error(NULL));
    if (out.st != PGPU_SUCCESS || !du || !df)
        goto done;
    out.st = pgpu_solve(s, du, df, &out.rep);
    snprintf(out.said, sizeof out.said, "%s%s%s%s", pgpu_status_string(out.st), out.st ? " (" : "",
             out.st ? pgpu_last_error(s) : "", out.st ? ")" : "");
    if (!t_sync("solve") || !t_dev_download(hu, du, bytes))
        goto done;
    /* Host copies in double: the answer, and f as the solver saw it. */
    double mean = 0.0;
    int64_t npts = 0;
    for (int64_t e = 0; e < P->elems; ++e)
        back[e] = dbl ? ((double *)hu)[e] : (double)((float *)hu)[e];
    REF_FOR_EACH_INTERIOR(&P->g, i, j, k)
    {
        mean += back[ref_idx(&P->g, i, j, k)];
        ++npts;
    }
    mean /= (double)npts;
    out.err = 0.0;
    REF_FOR_EACH_INTERIOR(&P->g, i, j, k)
    {
        const int64_t p = ref_idx(&P->g, i, j, k);
        const double v = P->singular ? back[p] - mean + P->umean : back[p];
        out.err = t_max_nan(out.err, fabs(v - P->u[p]) / P->umax);
    }
    {
        double *fs = (double *)malloc((size_t)P->elems * sizeof(double));
        if (fs) {
            for (int64_t e = 0; e < P->elems; ++e)
                fs[e] = dbl ? ((double *)hf)[e] : (double)((float *)hf)[e];
            out.host_rel = ref_residual(&P->g, back, fs, NULL).relative;
            free(fs);
        }
    }
done:
    if (s)
        pgpu_destroy(s);
    t_dev_free(du);
    t_dev_free(df);
    free(hu);
    free(hf);
    free(back);
    return out;
}

static const char *sizes_of(const problem *P, char *buf, size_t n)
{
    if (P->g.dims == 3)
        snprintf(buf, n, "%lldx%lldx%lld %s", (long long)P->g.n[0], (long long)P->g.n[1], (long long)P->g.n[2],
                 "3D");
    else
        snprintf(buf, n, "%lldx%lld 2D", (long long)P->g.n[0], (long long)P->g.n[1]);
    return buf;
}

/* Float: FMG one pass, V-cycles to the default tolerance, FFT. */
static void check_float(const problem *P, const char *name, int fft)
{
    char sz[64];
    sizes_of(P, sz, sizeof sz);
    const double bound = 5e-6;
    const outcome dbl = solve(P, PGPU_FMG | PGPU_DOUBLE, 0, 0.0);
    outcome o = solve(P, PGPU_FMG | PGPU_FLOAT, 0, 0.0);
    CHECK(o.st == PGPU_SUCCESS && o.err <= bound + dbl.err,
          "%s %s float FMG one pass: %s, error %.3e <= %.0e + the double FMG's %.3e (FMG's algebraic error)", name,
          sz, o.said, o.err, bound, dbl.err);
    o = solve(P, PGPU_VCYCLE | PGPU_FLOAT, 0, 0.0);
    CHECK(o.st == PGPU_SUCCESS && o.rep.iterations <= 15 && o.err <= bound,
          "%s %s float V-cycles, default tolerance: %s after %d cycles (<= 15), error %.3e <= %.0e, relative "
          "residual %.2e",
          name, sz, o.said, o.rep.iterations, o.err, bound, o.rep.relative_residual);
    if (fft) {
        o = solve(P, PGPU_FFT | PGPU_FLOAT, 0, 0.0);
        CHECK(o.st == PGPU_SUCCESS && o.err <= bound, "%s %s float FFT: %s, error %.3e <= %.0e", name, sz,
              o.said, o.err, bound);
    }
}

/* A singular problem whose right-hand side carries a large mean: f + c with
 * c = scale max |f|, which the solver removes (the same solution), against
 * the same solve without it.  In float, f + c is rounded to about eps c / 2
 * per point, which moves the solution by about that over f's size: the
 * error may grow by 2 eps scale, and the host's relative residual (of the
 * data the solver saw) by 4 eps scale.  The mean removed must not leave
 * its own rounding behind (half an ulp of c in every point: a constant
 * outside the operator's range, which had CG with the FFT preconditioner
 * stall at 26 times ||b||, the float FFT err by 1.6e-4, and the reports
 * measure it, 27 times the true one): the report's relative residual within
 * 25% of the host's (the mean taken out of u after the report rounds u
 * once more). */
static void check_offset(problem *P, const char *name)
{
    char sz[64];
    sizes_of(P, sz, sizeof sz);
    double big = 0.0;
    REF_FOR_EACH_INTERIOR(&P->g, i, j, k) big = fmax(big, fabs(P->f[ref_idx(&P->g, i, j, k)]));
    static const struct {
        unsigned method;
        int pre;
        const char *what;
    } runs[4] = {{PGPU_VCYCLE, 0, "V-cycles"}, {PGPU_FFT, 0, "FFT"}, {PGPU_CG, PGPU_PRECOND_VCYCLE, "CG (V-cycle)"},
                 {PGPU_CG, PGPU_PRECOND_FFT, "CG (FFT)"}};
    static const double scales[2] = {30.0, 1000.0};
    for (int r = 0; r < 4; ++r) {
        PRE = runs[r].pre;
        const outcome base = solve(P, runs[r].method | PGPU_FLOAT, 0, 0.0);
        for (int q = 0; q < 2; ++q) {
            const double c = scales[q] * big, e2 = 2.0 * 1.1920929e-7 * scales[q];
            REF_FOR_EACH_INTERIOR(&P->g, i, j, k) P->f[ref_idx(&P->g, i, j, k)] += c;
            const outcome o = solve(P, runs[r].method | PGPU_FLOAT, 0, 0.0);
            REF_FOR_EACH_INTERIOR(&P->g, i, j, k) P->f[ref_idx(&P->g, i, j, k)] -= c;
            CHECK(base.st == PGPU_SUCCESS && o.st == PGPU_SUCCESS && o.err <= 2.0 * base.err + e2 &&
                      o.host_rel <= 2.0 * base.host_rel + 2.0 * e2 &&
                      fabs(o.rep.relative_residual - o.host_rel) <= 0.25 * o.host_rel,
                  "%s %s, f + %.0f max|f|, float %s: %s after %d, error %.3e <= 2 x %.3e + %.1e, relative residual "
                  "%.3e (host %.3e <= 2 x %.3e + %.1e)",
                  name, sz, scales[q], runs[r].what, o.said, o.rep.iterations, o.err, base.err, e2,
                  o.rep.relative_residual, o.host_rel, base.host_rel, 2.0 * e2);
        }
    }
    PRE = PGPU_PRECOND_DEFAULT;
}

/* PGPU_MIXED against PGPU_DOUBLE. */
static void check_mixed(const problem *P, const char *name)
{
    char sz[64];
    sizes_of(P, sz, sizeof sz);
    const unsigned methods[3] = {PGPU_VCYCLE, PGPU_FMG, PGPU_FFT};
    for (int m = 0; m < 3; ++m) {
        const outcome d = solve(P, methods[m] | PGPU_DOUBLE, 0, 0.0);
        const outcome x = solve(P, methods[m] | PGPU_MIXED, 0, 0.0);
        if (d.st == PGPU_ERROR_UNSUPPORTED) { /* e.g. the FFT with two mixed axes */
            CHECK(x.st == PGPU_ERROR_UNSUPPORTED, "%s %s %s | MIXED: %s, as the double solve", name, sz,
                  t_method_name(methods[m]), x.said);
            continue;
        }
        const double want = 2.0 * d.err + 1e-11;
        CHECK(x.st == PGPU_SUCCESS && x.rep.relative_residual <= 1e-10 && x.host_rel <= 1e-10 && x.err <= want &&
                  x.rep.refinements >= 1,
              "%s %s %s | MIXED: %s, %d refinements, %d float cycles, relative residual %.2e (host %.2e) <= 1e-10, "
              "error %.3e <= 2 x double's %.3e + 1e-11",
              name, sz, t_method_name(methods[m]), x.said, x.rep.refinements, x.rep.iterations,
              x.rep.relative_residual, x.host_rel, x.err, d.err);
    }
    /* A fixed schedule: six refinements, no checks. */
    const outcome f = solve(P, PGPU_VCYCLE | PGPU_MIXED | PGPU_FIXED, 6, 0.0);
    CHECK(f.st == PGPU_SUCCESS && f.host_rel <= 1e-10 && f.err <= 1e-9,
          "%s %s VCYCLE | MIXED | FIXED, 6 refinements: %s, host relative residual %.2e <= 1e-10, error %.3e <= 1e-9",
          name, sz, f.said, f.host_rel, f.err);
}

/* Float Jacobi and RBGS (SOR), run to convergence by a fixed count. */
static void check_stationary(const problem *P, const char *name, int jacobi_sweeps, int sor_iterations)
{
    char sz[64];
    sizes_of(P, sz, sizeof sz);
    outcome o = solve(P, PGPU_JACOBI | PGPU_FLOAT | PGPU_FIXED, jacobi_sweeps, 1.0);
    CHECK(o.st == PGPU_SUCCESS && o.err <= 5e-6, "%s %s float Jacobi, %d sweeps: error %.3e <= 5e-6", name, sz,
          jacobi_sweeps, o.err);
    o = solve(P, PGPU_RBGS | PGPU_FLOAT | PGPU_FIXED, sor_iterations, 1.7);
    CHECK(o.st == PGPU_SUCCESS && o.err <= 5e-6, "%s %s float SOR (1.7), %d iterations: error %.3e <= 5e-6", name,
          sz, sor_iterations, o.err);
}

int main(int argc, char **argv)
{
    t_require_device("test_precision");
    const int big = argc > 1 && strcmp(argv[1], "--big") == 0;
    problem P;
    if (big) {
        const int64_t n[3] = {512, 1024, 512};
        for (int c = 0; c < 3; ++c) {
            if (!make_problem(&P, n[c], 3, "DDDDDD", 1))
                break;
            char sz[64];
            sizes_of(&P, sz, sizeof sz);
            if (c < 2) {
                const outcome o = solve(&P, PGPU_VCYCLE | PGPU_FLOAT, 0, 0.0);
                CHECK(o.st == PGPU_SUCCESS && o.rep.iterations <= 15 && o.err <= 5e-6,
                      "zero-data Dirichlet %s float V-cycles, default tolerance: %s after %d cycles (<= 15), error "
                      "%.3e <= 5e-6",
                      sz, o.said, o.rep.iterations, o.err);
            } else {
                const outcome o = solve(&P, PGPU_FMG | PGPU_FLOAT, 0, 0.0);
                CHECK(o.st == PGPU_SUCCESS && o.err <= 5e-6,
                      "zero-data Dirichlet %s float FMG one pass: %s, error %.3e <= 5e-6", sz,
                      o.said, o.err);
            }
            free_problem(&P);
        }
        return t_finish("test_precision --big");
    }
    /* Float, 3D at N = 256 (255^3 Dirichlet): every boundary set, and a
     * Dirichlet problem without boundary data. */
    static const char *sets[5] = {"DDDDDD", "NNNNNN", "PPPPPP", "DNPPND", "NNDDPP"};
    for (int c = 0; c < 5; ++c)
        if (make_problem(&P, 256, 3, sets[c], 0)) {
            check_float(&P, sets[c], c == 4);
            free_problem(&P);
        }
    if (make_problem(&P, 256, 3, "DDDDDD", 1)) {
        check_float(&P, "zero-data DDDDDD", 0);
        free_problem(&P);
    }
    /* Float FFT on the cuFFT route: n+1 = 127 and 257 (primes), a tridiagonal z. */
    if (make_problem(&P, 128, 3, "DDDDDD", 1)) {
        const outcome o = solve(&P, PGPU_FFT | PGPU_FLOAT, 0, 0.0);
        CHECK(o.st == PGPU_SUCCESS && o.err <= 5e-6, "127^3 zero-data Dirichlet float FFT: %s, error %.3e <= 5e-6",
              o.said, o.err);
        free_problem(&P);
    }
    /* 2D. */
    static const char *sets2[2] = {"DDNN", "DNPP"};
    for (int c = 0; c < 2; ++c)
        if (make_problem(&P, 1024, 2, sets2[c], 0)) {
            check_float(&P, sets2[c], 1);
            free_problem(&P);
        }
    /* Singular problems with a large mean in f. */
    static const char *osets[3] = {"NNNNNN", "PPPPPP", "NNNNPP"};
    for (int c = 0; c < 3; ++c)
        if (make_problem(&P, 48, 3, osets[c], 0)) {
            check_offset(&P, osets[c]);
            free_problem(&P);
        }
    if (make_problem(&P, 256, 2, "NNPP", 0)) {
        check_offset(&P, "NNPP");
        free_problem(&P);
    }
    /* Jacobi and SOR on small grids. */
    if (make_problem(&P, 16, 3, "DDNNPP", 0)) {
        check_stationary(&P, "DDNNPP", 6000, 400);
        free_problem(&P);
    }
    if (make_problem(&P, 12, 2, "DNDN", 0)) {
        check_stationary(&P, "DNDN", 12000, 800);
        free_problem(&P);
    }
    /* PGPU_MIXED. */
    static const char *msets[3] = {"DDDDDD", "NNNNNN", "DNPPND"};
    for (int c = 0; c < 3; ++c)
        if (make_problem(&P, 64, 3, msets[c], 0)) {
            check_mixed(&P, msets[c]);
            free_problem(&P);
        }
    if (make_problem(&P, 128, 2, "DNPP", 0)) {
        check_mixed(&P, "DNPP");
        free_problem(&P);
    }
    return t_finish("test_precision");
}
