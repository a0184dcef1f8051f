/* test_fft_reference.c -- checks of the FFT solver's host reference (no
 * device): the transforms, their eigenvalues and the direct solver built
 * from them (test/fft/fft_reference.c), against the host reference of the
 * operator (test/reference.c).
 *
 *  - transforms by their definitions: closed forms (DCT-II and DFT of a
 *    constant, DST-I of a constant, DFT of a shifted delta);
 *  - inverses: DST-I twice = (n+1)/2 identity, DCT-III(DCT-II) = n/2
 *    identity and DCT-II(DCT-III) = n/2 identity, DFT(+)(DFT(-)) = n identity;
 *  - the transforms diagonalise the 1D operator of their axis type as the
 *    reference applies it (Neumann faces reduce the diagonal at the ends; a
 *    periodic axis of one point contributes nothing): T(A x) = Lambda T(x)
 *    for random x, with the eigenvalues of fft_reference.h, which equal
 *    ref_mode_lambda (reference.h) and the diagonal of the operator;
 *  - mixed axes: ref_mode's vectors are eigenvectors, and fref_tridiag
 *    solves (T + lambda I) x = r;
 *  - the direct solver, for every per-axis combination of {DD, NN, PP, DN,
 *    ND} in 2D and 3D (small sizes, some of one point, padded strides,
 *    random right-hand side and boundary data): residual <= 1e-12 by the
 *    reference operator, nothing outside the interior written, mean zero
 *    when singular, the same answer whichever non-periodic axis is solved by
 *    tridiagonal systems or none (every axis transformed, mixed ones by
 *    their sine transform), exact answer v / lambda for eigenvectors v.
 */
#include "common.h"
#include "fft_reference.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

static const int64_t sizes_1d[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 17, 32, 33};
#define N_SIZES_1D (sizeof sizes_1d / sizeof sizes_1d[0])

static double max_abs(const double *x, int64_t n)
{
    double m = 0.0;
    for (int64_t i = 0; i < n; ++i)
        m = t_max_nan(m, fabs(x[i]));
    return m;
}

static double max_diff_scaled(const double *a, const double *b, double scale_b, int64_t n)
{
    double m = 0.0;
    for (int64_t i = 0; i < n; ++i)
        m = t_max_nan(m, fabs(a[i] - scale_b * b[i]));
    return m;
}

static void randomize(double *x, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        x[i] = t_rand(-1.0, 1.0);
}

/* ---- the transforms ---------------------------------------------------------------- */

static void check_closed_forms(void)
{
    double worst_dct = 0.0, worst_dst = 0.0, worst_dft = 0.0;
    for (size_t s = 0; s < N_SIZES_1D; ++s) {
        const int64_t n = sizes_1d[s];
        double ones[64], zero[64], X[64], Y[64], delta[64];
        for (int64_t i = 0; i < n; ++i) {
            ones[i] = 1.0;
            zero[i] = 0.0;
            delta[i] = i == 1 % n ? 1.0 : 0.0; /* x_1 = 1 (x_0 when n == 1) */
        }
        /* DCT-II of ones: n at k = 0, else 0 (the cosines cancel in pairs). */
        fref_dct2(n, ones, X);
        for (int64_t k = 0; k < n; ++k)
            worst_dct = fmax(worst_dct, fabs(X[k] - (k == 0 ? (double)n : 0.0)) / (double)n);
        /* DST-I of ones: sum_j sin(j t), t = pi k/(n+1), is
         * sin(n t/2) sin((n+1) t/2) / sin(t/2): 0 for even k. */
        fref_dst1(n, ones, X);
        for (int64_t k = 1; k <= n; ++k) {
            const double t = pi * (double)k / (double)(n + 1);
            const double want = sin(0.5 * (double)n * t) * sin(0.5 * (double)(n + 1) * t) / sin(0.5 * t);
            worst_dst = fmax(worst_dst, fabs(X[k - 1] - want) / (double)n);
        }
        /* DFT of ones: n delta_0; DFT(-1) of delta_1: exp(-2 pi i k/n). */
        fref_dft(n, -1, ones, zero, X, Y);
        for (int64_t k = 0; k < n; ++k)
            worst_dft = fmax(worst_dft, (fabs(X[k] - (k == 0 ? (double)n : 0.0)) + fabs(Y[k])) / (double)n);
        fref_dft(n, -1, delta, zero, X, Y);
        const int64_t at = 1 % n;
        for (int64_t k = 0; k < n; ++k) {
            const double t = 2.0 * pi * (double)(at * k) / (double)n;
            worst_dft = fmax(worst_dft, fabs(X[k] - cos(t)) + fabs(Y[k] + sin(t)));
        }
    }
    CHECK(worst_dct <= 1e-14, "DCT-II of a constant: n at k = 0, 0 elsewhere (worst %.1e)", worst_dct);
    CHECK(worst_dst <= 1e-14, "DST-I of a constant: the closed form, 0 at even k (worst %.1e)", worst_dst);
    CHECK(worst_dft <= 1e-14, "DFT of a constant and of a shifted delta, sign convention exp(-i) (worst %.1e)",
          worst_dft);
}

static void check_inverses(void)
{
    for (size_t s = 0; s < N_SIZES_1D; ++s) {
        const int64_t n = sizes_1d[s];
        double x[64], xi[64], X[64], Xi[64], y[64], yi[64];
        randomize(x, n);
        randomize(xi, n);
        const double scale = max_abs(x, n);
        /* Each output sums n terms; rounding is a few n eps of the scale. */
        const double tol = 4.0 * (double)(n + 1) * DBL_EPSILON;

        fref_dst1(n, x, X);
        fref_dst1(n, X, y);
        const double e_dst = max_diff_scaled(y, x, 0.5 * (double)(n + 1), n) / (0.5 * (double)(n + 1) * scale);
        fref_dct2(n, x, X);
        fref_dct3(n, X, y);
        const double e_dct = max_diff_scaled(y, x, 0.5 * (double)n, n) / (0.5 * (double)n * scale);
        fref_dct3(n, x, X);
        fref_dct2(n, X, y);
        const double e_dct32 = max_diff_scaled(y, x, 0.5 * (double)n, n) / (0.5 * (double)n * scale);
        fref_dft(n, -1, x, xi, X, Xi);
        fref_dft(n, +1, X, Xi, y, yi);
        const double e_dft = fmax(max_diff_scaled(y, x, (double)n, n), max_diff_scaled(yi, xi, (double)n, n)) /
                             ((double)n * fmax(scale, max_abs(xi, n)));
        CHECK(e_dst <= tol && e_dct <= tol && e_dct32 <= tol && e_dft <= tol,
              "n = %lld: DST-I twice = (n+1)/2 I (%.1e), DCT-III(DCT-II) = n/2 I (%.1e), "
              "DCT-II(DCT-III) = n/2 I (%.1e), DFT(+)(DFT(-)) = n I (%.1e); tolerance %.1e",
              (long long)n, e_dst, e_dct, e_dct32, e_dft, tol);
    }
}

/* ---- diagonalisation of the 1D operators ----------------------------------------------- */

/* The 1D operator of an axis as the reference applies it: an n x 1 grid
 * whose y axis is periodic with one point (which contributes nothing). */
typedef struct line_op {
    pgpu_config cfg;
    t_problem P; /* u: zero ghost data, f unused */
    double *Ax;
} line_op;

static int line_init(line_op *L, pgpu_bc lo, pgpu_bc hi, int64_t n, double h)
{
    const char letter[3] = {'D', 'N', 'P'};
    char bcs[5] = {letter[lo], letter[hi], 'P', 'P', '\0'};
    L->cfg = t_config(n, 1, 1, bcs, h, 1.0, 1.0, 0);
    if (!t_problem_init(&L->P, &L->cfg))
        return 0;
    L->Ax = t_problem_array(&L->P, NULL);
    return L->Ax != NULL;
}

/* y = A x (x, y: n values). */
static void line_apply(line_op *L, const double *x, double *y)
{
    const ref_grid *g = &L->P.g;
    for (int64_t i = 1; i <= g->n[0]; ++i)
        L->P.u[ref_idx(g, i, 1, 0)] = x[i - 1];
    ref_apply(g, L->P.u, L->Ax);
    for (int64_t i = 1; i <= g->n[0]; ++i)
        y[i - 1] = L->Ax[ref_idx(g, i, 1, 0)];
}

static void line_free(line_op *L)
{
    free(L->Ax);
    t_problem_free(&L->P);
}

static void check_diagonalisation(void)
{
    static const char *names[3] = {"Dirichlet-Dirichlet (DST-I)", "Neumann-Neumann (DCT-II)", "periodic (DFT)"};
    static const pgpu_bc faces[3] = {PGPU_BC_DIRICHLET, PGPU_BC_NEUMANN, PGPU_BC_PERIODIC};
    for (int kind = 0; kind < 3; ++kind) {
        double worst = 0.0, worst_lambda = 0.0, worst_diag = 0.0;
        for (size_t s = 0; s < N_SIZES_1D; ++s) {
            const int64_t n = sizes_1d[s];
            const double h = t_rand(0.05, 0.5);
            line_op L;
            if (!line_init(&L, faces[kind], faces[kind], n, h)) {
                line_free(&L);
                return;
            }
            double x[64], zero[64], Ax[64], X[64], Xi[64], Y[64], Yi[64], lam[64];
            randomize(x, n);
            for (int64_t i = 0; i < n; ++i)
                zero[i] = 0.0;
            line_apply(&L, x, Ax);
            for (int64_t m = 0; m < n; ++m)
                lam[m] = fref_eigen((fref_kind)kind, n, h, m);
            if (kind == FREF_DST1) {
                fref_dst1(n, x, X);
                fref_dst1(n, Ax, Y);
            } else if (kind == FREF_DCT2) {
                fref_dct2(n, x, X);
                fref_dct2(n, Ax, Y);
            } else {
                fref_dft(n, -1, x, zero, X, Xi);
                fref_dft(n, -1, Ax, zero, Y, Yi);
            }
            /* |T(A x) - Lambda T(x)| against the scale of lambda_max sum |x|. */
            double err = 0.0, sum_x = 0.0;
            for (int64_t m = 0; m < n; ++m) {
                err = t_max_nan(err, fabs(Y[m] - lam[m] * X[m]));
                if (kind == FREF_DFT)
                    err = t_max_nan(err, fabs(Yi[m] - lam[m] * Xi[m]));
                sum_x += fabs(x[m]);
            }
            worst = t_max_nan(worst, err / (4.0 / (h * h) * sum_x));
            /* The same eigenvalues as reference.h lists (its k: DST from 1). */
            for (int64_t m = 0; m < n; ++m) {
                const double r = ref_mode_lambda(faces[kind], faces[kind], n, (int)(kind == FREF_DST1 ? m + 1 : m), h);
                worst_lambda = t_max_nan(worst_lambda, fabs(r - lam[m]) / (4.0 / (h * h)));
            }
            /* Trace check: sum of the eigenvalues = sum of the operator's
             * diagonal (Neumann ends reduced, a one-point periodic axis 0). */
            double trace = 0.0, sum_lam = 0.0;
            for (int64_t i = 1; i <= n; ++i)
                trace += ref_point(&L.P.g, L.P.u, i, 1, 0, REF_ALL_TERMS).diag;
            for (int64_t m = 0; m < n; ++m)
                sum_lam += lam[m];
            worst_diag = t_max_nan(worst_diag, fabs(trace - sum_lam) / (4.0 / (h * h) * (double)n));
            line_free(&L);
        }
        CHECK(worst <= 1e-13, "%s diagonalises the 1D operator: T(A x) = Lambda T(x) for n = 1..33 (worst %.1e "
              "of lambda_max sum |x|)", names[kind], worst);
        CHECK(worst_lambda <= 1e-15 && worst_diag <= 1e-14,
              "%s: eigenvalues 4/h^2 sin^2(...) equal ref_mode_lambda (%.1e) and sum to the operator's trace (%.1e)",
              names[kind], worst_lambda, worst_diag);
    }

    /* The ends of a Neumann axis carry 1/h^2 on the diagonal, inner points
     * and Dirichlet ends 2/h^2. */
    {
        line_op L;
        if (line_init(&L, PGPU_BC_NEUMANN, PGPU_BC_DIRICHLET, 5, 0.5)) {
            const ref_grid *g = &L.P.g;
            const double d1 = ref_point(g, L.P.u, 1, 1, 0, REF_ALL_TERMS).diag;
            const double d3 = ref_point(g, L.P.u, 3, 1, 0, REF_ALL_TERMS).diag;
            const double d5 = ref_point(g, L.P.u, 5, 1, 0, REF_ALL_TERMS).diag;
            CHECK(d1 == 4.0 && d3 == 8.0 && d5 == 8.0,
                  "Neumann-Dirichlet axis, h = 1/2: diagonal %g at the Neumann end, %g inside, %g at the "
                  "Dirichlet end (4, 8, 8)", d1, d3, d5);
        }
        line_free(&L);
    }

    /* Mixed axes: ref_mode's vectors are eigenvectors of the operator with
     * ref_mode_lambda, and fref_tridiag solves (T + lambda I) x = r. */
    for (int order = 0; order < 2; ++order) {
        const pgpu_bc lo = order ? PGPU_BC_NEUMANN : PGPU_BC_DIRICHLET;
        const pgpu_bc hi = order ? PGPU_BC_DIRICHLET : PGPU_BC_NEUMANN;
        double worst_mode = 0.0, worst_tri = 0.0;
        for (size_t s = 0; s < N_SIZES_1D; ++s) {
            const int64_t n = sizes_1d[s];
            const double h = t_rand(0.05, 0.5);
            line_op L;
            if (!line_init(&L, lo, hi, n, h)) {
                line_free(&L);
                return;
            }
            double v[64], Av[64], r[64], x[64], Ax[64];
            for (int k = 1; k <= n; ++k) {
                const double lam = ref_mode_lambda(lo, hi, n, k, h);
                for (int64_t i = 0; i < n; ++i)
                    v[i] = ref_mode(lo, hi, n, k, 0.0, i + 1);
                line_apply(&L, v, Av);
                worst_mode = t_max_nan(worst_mode, max_diff_scaled(Av, v, lam, n) / (4.0 / (h * h)));
            }
            for (int rep = 0; rep < 3; ++rep) {
                const double lambda = rep == 0 ? 0.0 : t_rand(0.0, 4.0 / (h * h));
                randomize(r, n);
                fref_tridiag(lo, hi, n, h, lambda, r, x);
                line_apply(&L, x, Ax);
                double res = 0.0;
                for (int64_t i = 0; i < n; ++i)
                    res = t_max_nan(res, fabs(Ax[i] + lambda * x[i] - r[i]));
                worst_tri = t_max_nan(worst_tri, res / max_abs(r, n));
            }
            line_free(&L);
        }
        CHECK(worst_mode <= 1e-14 && worst_tri <= 1e-12,
              "%s axis: A v = lambda v for ref_mode's vectors (%.1e of 4/h^2); (T + lambda I) x = r by "
              "fref_tridiag (%.1e relative)", order ? "Neumann-Dirichlet" : "Dirichlet-Neumann", worst_mode,
              worst_tri);
    }
    /* Dirichlet-Dirichlet and Neumann-Neumann lines by fref_tridiag too (the
     * solver may put any non-periodic axis there). */
    {
        double worst = 0.0;
        for (int nn = 0; nn < 2; ++nn)
            for (size_t s = 0; s < N_SIZES_1D; ++s) {
                const int64_t n = sizes_1d[s];
                const double h = t_rand(0.05, 0.5);
                const pgpu_bc b = nn ? PGPU_BC_NEUMANN : PGPU_BC_DIRICHLET;
                line_op L;
                if (!line_init(&L, b, b, n, h)) {
                    line_free(&L);
                    return;
                }
                double r[64], x[64], Ax[64];
                const double lambda = nn ? t_rand(0.01, 4.0 / (h * h)) : (s % 2 ? 0.0 : t_rand(0.0, 4.0 / (h * h)));
                randomize(r, n);
                fref_tridiag(b, b, n, h, lambda, r, x);
                line_apply(&L, x, Ax);
                double res = 0.0;
                for (int64_t i = 0; i < n; ++i)
                    res = t_max_nan(res, fabs(Ax[i] + lambda * x[i] - r[i]));
                worst = t_max_nan(worst, res / max_abs(r, n));
                line_free(&L);
            }
        CHECK(worst <= 1e-11, "Dirichlet-Dirichlet and Neumann-Neumann lines: (T + lambda I) x = r by "
              "fref_tridiag (%.1e relative)", worst);
    }
}

/* ---- the direct solver -------------------------------------------------------------------- */

static const char *axis_letters[5] = {"DD", "NN", "PP", "DN", "ND"};

/* bcs from per-axis codes 0..4 (axis_letters). */
static void make_bcs(int dims, const int code[3], char *bcs)
{
    int c = 0;
    for (int a = 0; a < dims; ++a) {
        bcs[c++] = axis_letters[code[a]][0];
        bcs[c++] = axis_letters[code[a]][1];
    }
    bcs[c] = '\0';
}

typedef struct solver_tally {
    int problems;
    double worst_res, worst_mean, worst_alt, worst_imag;
    int64_t outside_written;
    int failures;
    char first_failure[200];
} solver_tally;

static void note_failure(solver_tally *t, const char *what)
{
    if (!t->failures++)
        snprintf(t->first_failure, sizeof t->first_failure, "%s", what);
}

static int64_t outside_changed(const ref_grid *g, const double *a, const double *b)
{
    int64_t n = 0;
    for (int64_t e = 0; e < ref_elems(g); ++e)
        if (ref_classify(g, e, NULL) != REF_INTERIOR && memcmp(&a[e], &b[e], sizeof(double)) != 0)
            ++n;
    return n;
}

/* sqrt(sum (|f| + |boundary terms|)^2) over the interior. */
static double rhs_terms_norm(const ref_grid *g, const double *u, const double *f)
{
    double s = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const double m = fabs(f[ref_idx(g, i, j, k)]) + ref_point(g, u, i, j, k, REF_BOUNDARY).offabs;
        s += m * m;
    }
    return sqrt(s);
}

/* One problem: random f and boundary data, solved with every admissible
 * choice of the tridiagonal axis; each answer checked, and all compared. */
static void solve_one(solver_tally *t, int64_t nx, int64_t ny, int64_t nz, const char *bcs, int padded)
{
    const int dims = nz == 1 ? 2 : 3;
    pgpu_config cfg = t_config(nx, ny, nz, bcs, t_rand(0.05, 0.3), t_rand(0.05, 0.3), t_rand(0.05, 0.3), 0);
    if (padded) {
        cfg.stride_y = nx + 2 + 3;
        cfg.stride_z = dims == 3 ? cfg.stride_y * (ny + 2) + 5 : 0;
    }
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    const ref_grid *g = &P.g;
    char what[160];
    snprintf(what, sizeof what, "%lldx%lldx%lld %s%s", (long long)nx, (long long)ny, (long long)nz, bcs,
             padded ? " padded" : "");

    double *u = t_problem_array(&P, P.u), *first = NULL;
    if (!u) {
        t_problem_free(&P);
        return;
    }
    ++t->problems;
    /* Choices: AUTO (the last mixed axis, or none), NONE (every axis
     * transformed, mixed ones by their sine transform), and each
     * non-periodic axis by tridiagonal systems. */
    int choices[5], nchoices = 0;
    choices[nchoices++] = FREF_TRI_AUTO;
    choices[nchoices++] = FREF_TRI_NONE;
    for (int a = 0; a < dims; ++a)
        if (fref_axis_kind(g, a) != FREF_DFT)
            choices[nchoices++] = a;
    for (int c = 0; c < nchoices; ++c) {
        memcpy(u, P.u, (size_t)P.elems * sizeof(double));
        fref_info info;
        if (!fref_solve_ex(g, u, P.f, choices[c], &info)) {
            note_failure(t, what);
            continue;
        }
        /* Relative to ||b||, or to the size of the terms of b when they
         * cancel (a singular problem of one point has b == 0 exactly). */
        const ref_norms nm = ref_residual(g, u, P.f, NULL);
        const double rel = nm.norm / fmax(nm.rhs_norm, 1e-3 * rhs_terms_norm(g, P.u, P.f));
        t->worst_res = t_max_nan(t->worst_res, rel);
        t->worst_imag = t_max_nan(t->worst_imag, info.imag_max / fmax(info.real_max, 1e-300));
        t->outside_written += outside_changed(g, P.u, u);
        if (ref_is_singular(g))
            t->worst_mean = t_max_nan(t->worst_mean, fabs(ref_mean(g, u)) / fmax(ref_max_abs(g, u), 1e-300));
        if (!(rel <= 1e-12))
            note_failure(t, what);
        if (!first) {
            first = t_problem_array(&P, u);
        } else {
            const double d = ref_max_diff(g, u, first) / fmax(ref_max_abs(g, first), 1e-300);
            t->worst_alt = t_max_nan(t->worst_alt, d);
            if (!(d <= 1e-11))
                note_failure(t, what);
        }
    }
    free(first);
    free(u);
    t_problem_free(&P);
}

static void check_solver(void)
{
    /* 2D: 25 combinations x sizes (some with an axis of one point). */
    static const int64_t sizes2[][2] = {{5, 4}, {7, 6}, {1, 5}, {6, 1}, {1, 1}, {8, 9}};
    static const int64_t sizes3[][3] = {{4, 3, 5}, {5, 4, 3}, {1, 3, 4}, {3, 1, 2}, {2, 2, 2}};
    for (int dims = 2; dims <= 3; ++dims) {
        solver_tally t;
        memset(&t, 0, sizeof t);
        int combos = 0;
        const int n2 = dims == 3 ? 5 : 1;
        for (int c0 = 0; c0 < 5; ++c0)
            for (int c1 = 0; c1 < 5; ++c1)
                for (int c2 = 0; c2 < n2; ++c2) {
                    const int code[3] = {c0, c1, c2};
                    char bcs[8];
                    make_bcs(dims, code, bcs);
                    ++combos;
                    const int ns = dims == 3 ? (int)(sizeof sizes3 / sizeof sizes3[0])
                                             : (int)(sizeof sizes2 / sizeof sizes2[0]);
                    for (int s = 0; s < ns; ++s) {
                        if (dims == 2)
                            solve_one(&t, sizes2[s][0], sizes2[s][1], 1, bcs, s % 2);
                        else
                            solve_one(&t, sizes3[s][0], sizes3[s][1], sizes3[s][2], bcs, s % 2);
                    }
                }
        CHECK(t.failures == 0 && t.outside_written == 0 && t.worst_res <= 1e-12 &&
                  t.worst_mean <= 1e-13 && t.worst_alt <= 1e-11 && t.worst_imag <= 1e-13,
              "%dD reference solver, %d combinations, %d problems: relative residual <= %.1e, mean/max %.1e "
              "when singular, tridiagonal-axis choices agree to %.1e, imaginary part %.1e, %lld elements "
              "outside the interior written%s%s",
              dims, combos, t.problems, t.worst_res, t.worst_mean, t.worst_alt, t.worst_imag,
              (long long)t.outside_written, t.failures ? "; first failure: " : "",
              t.failures ? t.first_failure : "");
    }
}

/* f = an exact eigenvector v (zero boundary data): u = v / lambda. */
static void check_solver_eigen(void)
{
    static const struct {
        int64_t n[3];
        const char *bcs;
        int k[3];
    } cases[] = {
        {{9, 7, 1}, "DDNN", {2, 3, 0}},       {{8, 6, 1}, "PPDN", {3, 1, 0}},
        {{7, 9, 1}, "NDPP", {2, 4, 0}},       {{6, 5, 4}, "DNNNPP", {1, 2, 1}},
        {{5, 6, 7}, "PPNDDD", {2, 3, 5}},     {{6, 6, 6}, "NNNNNN", {1, 0, 2}},
        {{5, 7, 6}, "PPPPPP", {2, 3, 1}},     {{4, 5, 6}, "NNPPND", {3, 1, 2}},
        {{7, 6, 1}, "DNND", {2, 5, 0}},       {{6, 5, 4}, "DNNDDN", {1, 2, 3}},
        {{5, 6, 7}, "NDPPDN", {4, 2, 6}},
    };
    double worst = 0.0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        pgpu_config cfg = t_config(cases[c].n[0], cases[c].n[1], cases[c].n[2], cases[c].bcs, 0.11, 0.07, 0.13, 0);
        t_problem P;
        if (!t_problem_init(&P, &cfg))
            return;
        const double phase[3] = {0.3, -1.1, 0.7};
        double *v = t_problem_array(&P, NULL);
        const double lambda = ref_fill_mode(&P.g, v, cases[c].k, phase);
        REF_FOR_EACH_INTERIOR(&P.g, i, j, k) {
            P.f[ref_idx(&P.g, i, j, k)] = v[ref_idx(&P.g, i, j, k)];
        }
        double *u = t_problem_array(&P, P.u);
        double err = INFINITY;
        if (fref_solve(&P.g, u, P.f)) {
            err = 0.0;
            REF_FOR_EACH_INTERIOR(&P.g, i, j, k) {
                const int64_t p = ref_idx(&P.g, i, j, k);
                err = t_max_nan(err, fabs(u[p] - v[p] / lambda));
            }
            err /= ref_max_abs(&P.g, v) / lambda;
        }
        worst = t_max_nan(worst, err);
        free(u);
        free(v);
        t_problem_free(&P);
    }
    CHECK(worst <= 1e-12, "reference solver: f = eigenvector v (mixed axes, periodic phases, singular) gives "
          "v / lambda (worst %.1e relative)", worst);
}

/* A 1 x 1 problem worked by hand: u = (f + sum of ghost / h^2) / diag. */
static void check_by_hand(void)
{
    const pgpu_config cfg = t_config(1, 1, 1, "DDDN", 0.5, 0.25, 0.0, 0);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    const ref_grid *g = &P.g;
    P.u[ref_idx(g, 0, 1, 0)] = 1.0;  /* x- Dirichlet value: 1/h^2 = 4 */
    P.u[ref_idx(g, 2, 1, 0)] = 2.0;  /* x+ Dirichlet value */
    P.u[ref_idx(g, 1, 0, 0)] = 3.0;  /* y- Dirichlet value: 1/h^2 = 16 */
    P.u[ref_idx(g, 1, 2, 0)] = 0.5;  /* y+ Neumann flux: 1/h = 4 */
    P.f[ref_idx(g, 1, 1, 0)] = 7.0;
    /* diag = 4 + 4 + 16 = 24; rhs = 7 + 4 + 8 + 48 + 2 = 69. */
    const int ok = fref_solve(g, P.u, P.f);
    CHECK(ok && fabs(P.u[ref_idx(g, 1, 1, 0)] - 69.0 / 24.0) <= 1e-15,
          "1x1 DDDN worked by hand: u = %.17g (69/24)", P.u[ref_idx(g, 1, 1, 0)]);
    t_problem_free(&P);
}

int main(void)
{
    t_seed();
    check_closed_forms();
    check_inverses();
    check_diagonalisation();
    check_by_hand();
    check_solver();
    check_solver_eigen();
    return t_finish("test_fft_reference");
}
