/* test_reference.c -- checks of the host reference itself (no device).
 *
 *  - the layout helper classifies every element of a padded layout;
 *  - discrete eigenfunctions of each axis type (Dirichlet, Neumann, periodic,
 *    Dirichlet-Neumann, Neumann-Dirichlet), alone and as 2D/3D products:
 *    A v = lambda v to 1e-12 of the operator's scale;
 *  - linear functions with their exact Neumann flux and Dirichlet values in
 *    the ghosts leave zero residual for f = 0;
 *  - the singular shift makes the right-hand side sum to zero, and only
 *    faces in use count (2D ignores the z faces);
 *  - Jacobi and RBGS iterations of the reference converge to the answer of a
 *    dense direct solve (regular and singular problems);
 *  - the RBGS reference equals a plain in-place red-black sweep when every
 *    periodic axis is even, and differs from it when one is odd (red points
 *    are then neighbours across the seam and must read old values);
 *  - a sweep done in float arithmetic stays inside the rounding bound that
 *    the GPU tests use (8 * FLT_EPSILON * ref_relax_bound), so that bound is
 *    not tighter than an honest float implementation.
 */
#include "common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layout ---------------------------------------------------------------------- */

static void check_layout(void)
{
    pgpu_config c = t_config(5, 4, 3, "DDDDDD", 1, 1, 1, 0);
    c.stride_y = 9;               /* nx + 2 = 7, two padding elements per row */
    c.stride_z = 9 * (4 + 2) + 4; /* four padding elements per plane */
    const ref_grid g = ref_grid_from_config(&c);
    int64_t count[4] = {0, 0, 0, 0}, per_face[6] = {0, 0, 0, 0, 0, 0};
    for (int64_t e = 0; e < ref_elems(&g); ++e) {
        int face = -1;
        const int kind = ref_classify(&g, e, &face);
        ++count[kind];
        if (kind == REF_FACE_GHOST)
            ++per_face[face];
    }
    const int64_t all = (int64_t)(3 + 2) * c.stride_z;
    const int64_t box = 7 * 6 * 5;
    CHECK(ref_elems(&g) == all, "layout: %lld elements", (long long)ref_elems(&g));
    CHECK(count[REF_INTERIOR] == 5 * 4 * 3, "layout: %lld interior", (long long)count[REF_INTERIOR]);
    CHECK(per_face[0] == 12 && per_face[1] == 12 && per_face[2] == 15 && per_face[3] == 15 &&
              per_face[4] == 20 && per_face[5] == 20,
          "layout: face ghosts per face %lld %lld %lld %lld %lld %lld", (long long)per_face[0],
          (long long)per_face[1], (long long)per_face[2], (long long)per_face[3],
          (long long)per_face[4], (long long)per_face[5]);
    CHECK(count[REF_EDGE_GHOST] == box - 60 - 94, "layout: %lld edge/corner ghosts",
          (long long)count[REF_EDGE_GHOST]);
    CHECK(count[REF_PADDING] == all - box, "layout: %lld padding", (long long)count[REF_PADDING]);
    CHECK(ref_idx(&g, 2, 3, 1) == 2 + 3 * 9 + c.stride_z, "layout: index of (2,3,1)");
}

/* ---- a case worked by hand ---------------------------------------------------------- */

/* 2D, nx = 2, ny = 1 periodic (contributes nothing), h = 1/2: x- Dirichlet
 * with ghost 1, x+ Neumann with ghost (flux) 2, u = (3, 5), f = (7, 11):
 *   r1 = 7 + (1 + 5)/h^2 - 2*3/h^2 = 7,   r2 = 11 + 3/h^2 + 2/h - 5/h^2 = 7,
 *   Jacobi: u1 = (7 + 24)/8 = 3.875,       u2 = (11 + 12 + 4)/4 = 6.75. */
static void check_by_hand(void)
{
    const pgpu_config c = t_config(2, 1, 1, "DNPP", 0.5, 0.25, 0.0, 0);
    const ref_grid g = ref_grid_from_config(&c);
    double u[16], f[16], r[16];
    for (int e = 0; e < 16; ++e)
        u[e] = f[e] = r[e] = T_POISON_NAN;
    u[ref_idx(&g, 0, 1, 0)] = 1.0;
    u[ref_idx(&g, 3, 1, 0)] = 2.0;
    u[ref_idx(&g, 1, 1, 0)] = 3.0;
    u[ref_idx(&g, 2, 1, 0)] = 5.0;
    f[ref_idx(&g, 1, 1, 0)] = 7.0;
    f[ref_idx(&g, 2, 1, 0)] = 11.0;
    const ref_norms nm = ref_residual(&g, u, f, r);
    CHECK(ref_elems(&g) == 12 && r[ref_idx(&g, 1, 1, 0)] == 7.0 && r[ref_idx(&g, 2, 1, 0)] == 7.0 &&
              nm.shift == 0.0,
          "by hand: residual (%g, %g) == (7, 7)", r[ref_idx(&g, 1, 1, 0)], r[ref_idx(&g, 2, 1, 0)]);
    ref_jacobi(&g, u, f, 1.0);
    CHECK(u[ref_idx(&g, 1, 1, 0)] == 3.875 && u[ref_idx(&g, 2, 1, 0)] == 6.75,
          "by hand: Jacobi gives (%g, %g) == (3.875, 6.75)", u[ref_idx(&g, 1, 1, 0)],
          u[ref_idx(&g, 2, 1, 0)]);
}

/* ---- eigenfunctions ----------------------------------------------------------------- */

/* Fills u with the product of the axes' modes k[a] (zero ghost data, NaN in
 * periodic ghosts) and returns lambda. */
static double fill_mode(const ref_grid *g, double *u, const int k[3], const double phase[3])
{
    for (int64_t e = 0; e < ref_elems(g); ++e) {
        int face = -1;
        const int kind = ref_classify(g, e, &face);
        u[e] = T_POISON_NAN; /* periodic ghosts, edges, padding: not read */
        if (kind == REF_FACE_GHOST && g->bc[face] != PGPU_BC_PERIODIC)
            u[e] = 0.0; /* homogeneous data: zero value or zero flux */
    }
    return ref_fill_mode(g, u, k, phase);
}

static void check_eigen(int64_t nx, int64_t ny, int64_t nz, const char *bcs, double hx, double hy,
                        double hz, int kx, int ky, int kz)
{
    const pgpu_config c = t_config(nx, ny, nz, bcs, hx, hy, hz, 0);
    const ref_grid g = ref_grid_from_config(&c);
    double *u = calloc((size_t)ref_elems(&g), sizeof(double));
    double *au = calloc((size_t)ref_elems(&g), sizeof(double));
    const int k[3] = {kx, ky, kz};
    const double phase[3] = {0.3, -1.1, 2.0};
    const double lambda = fill_mode(&g, u, k, phase);

    ref_apply(&g, u, au);
    double err = 0.0, scale = 0.0;
    for (int a = 0; a < g.dims; ++a)
        scale += 4.0 / (g.h[a] * g.h[a]);
    scale *= ref_max_abs(&g, u);
    REF_FOR_EACH_INTERIOR(&g, i, j, kk) {
        const int64_t p = ref_idx(&g, i, j, kk);
        err = t_max_nan(err, fabs(au[p] - lambda * u[p]));
    }
    char letters[8];
    CHECK(err <= 1e-12 * scale && ref_max_abs(&g, u) > 0.1,
          "eigen %lldx%lldx%lld %s k=(%d,%d,%d): |Av - lambda v| = %.2e (scale %.2e, lambda %.6g)",
          (long long)nx, (long long)ny, (long long)nz, t_bc_letters(&g, letters), kx, ky, kz, err,
          scale, lambda);
    free(u);
    free(au);
}

static void eigenfunctions(void)
{
    /* One axis type at a time along x (2D, y a single Dirichlet point). */
    check_eigen(9, 1, 1, "DDDD", 0.1, 0.3, 1, 3, 1, 1);
    check_eigen(9, 1, 1, "NNDD", 0.1, 0.3, 1, 2, 1, 1);
    check_eigen(9, 1, 1, "PPDD", 0.1, 0.3, 1, 2, 1, 1);
    check_eigen(8, 1, 1, "PPDD", 0.1, 0.3, 1, 4, 1, 1); /* the checkerboard mode */
    check_eigen(9, 1, 1, "DNDD", 0.1, 0.3, 1, 2, 1, 1);
    check_eigen(9, 1, 1, "NDDD", 0.1, 0.3, 1, 3, 1, 1);
    /* Products in 3D, anisotropic spacing, every type on some axis. */
    check_eigen(7, 6, 5, "DDNNPP", 0.11, 0.07, 0.2, 2, 1, 2);
    check_eigen(6, 5, 7, "PPDNND", 0.05, 0.13, 0.09, 1, 3, 2);
    check_eigen(5, 7, 6, "NDDDNN", 0.2, 0.1, 0.3, 1, 7, 0);
    check_eigen(8, 4, 3, "DNPPDD", 0.06, 0.08, 0.1, 4, 2, 3);
    check_eigen(4, 3, 4, "NNNNNN", 0.5, 0.25, 0.125, 3, 2, 1);
    check_eigen(5, 3, 4, "PPPPPP", 0.5, 0.25, 0.125, 2, 1, 3);
    /* 2D, and tiny periodic axes (n == 1 contributes nothing; n == 2). */
    check_eigen(12, 9, 1, "PPNN", 0.08, 0.11, 0, 5, 3, 0);
    check_eigen(11, 8, 1, "DDPP", 0.08, 0.11, 0, 3, 3, 0);
    check_eigen(6, 1, 2, "DDPPPP", 0.1, 0.2, 0.3, 2, 0, 1);
}

/* ---- linear functions and Neumann flux ------------------------------------------------- */

/* Position of index i on an axis: nodes at i*h when the lower face is
 * Dirichlet (the ghost is the boundary node), else cell centres (i - 1/2) h. */
static double position(const ref_grid *g, int a, int64_t i)
{
    const double offset = g->bc[2 * a] == PGPU_BC_DIRICHLET ? 0.0 : 0.5;
    return ((double)i - offset) * g->h[a];
}

static void check_linear(int64_t nx, int64_t ny, int64_t nz, const char *bcs, const double slope[3])
{
    const pgpu_config c = t_config(nx, ny, nz, bcs, 0.1, 0.07, 0.13, 0);
    const ref_grid g = ref_grid_from_config(&c);
    const int64_t elems = ref_elems(&g);
    double *u = calloc((size_t)elems, sizeof(double));
    double *f = calloc((size_t)elems, sizeof(double));
    double *r = calloc((size_t)elems, sizeof(double));

    for (int64_t e = 0; e < elems; ++e) {
        int face = -1;
        const int kind = ref_classify(&g, e, &face);
        const int64_t idx[3] = {e % g.stride[2] % g.stride[1], e % g.stride[2] / g.stride[1],
                                e / g.stride[2]};
        double value = 0.0;
        for (int a = 0; a < g.dims; ++a)
            value += slope[a] * position(&g, a, idx[a]);
        if (kind == REF_INTERIOR)
            u[e] = value;
        else if (kind == REF_FACE_GHOST && g.bc[face] == PGPU_BC_DIRICHLET)
            u[e] = value; /* the boundary node's value */
        else if (kind == REF_FACE_GHOST && g.bc[face] == PGPU_BC_NEUMANN)
            u[e] = (face & 1) ? slope[face / 2] : -slope[face / 2]; /* outward derivative */
        else
            u[e] = T_POISON_NAN;
        f[e] = kind == REF_INTERIOR ? 0.0 : T_POISON_NAN;
    }
    const ref_norms nm = ref_residual(&g, u, f, r);
    double scale = 0.0;
    for (int a = 0; a < g.dims; ++a)
        scale += 4.0 / (g.h[a] * g.h[a]);
    scale *= ref_max_abs(&g, u);
    char letters[8];
    CHECK(nm.max <= 1e-12 * scale && fabs(nm.shift) <= 1e-12 * scale,
          "linear u in %s (slopes %g %g %g): max residual %.2e, shift %.2e (scale %.2e)",
          t_bc_letters(&g, letters), slope[0], slope[1], slope[2], nm.max, nm.shift, scale);
    free(u);
    free(f);
    free(r);
}

static void linear_functions(void)
{
    const double s3[3] = {1.5, -0.7, 2.0};
    const double s_no_z[3] = {1.5, -0.7, 0.0};
    const double s_no_y[3] = {1.0, 0.0, -3.0};
    check_linear(6, 5, 4, "NNNNNN", s3);     /* singular: the fluxes cancel, shift 0 */
    check_linear(6, 5, 4, "NNDDPP", s_no_z); /* u constant along the periodic axis */
    check_linear(6, 5, 4, "NDPPDN", s_no_y);
    check_linear(7, 5, 1, "DNND", s3);       /* 2D */
    check_linear(1, 1, 1, "NNNNNN", s3);     /* one point: only ghost terms */
}

/* ---- the singular shift ------------------------------------------------------------- */

static void random_problem(const ref_grid *g, double *u, double *f)
{
    for (int64_t e = 0; e < ref_elems(g); ++e) {
        int face = -1;
        const int kind = ref_classify(g, e, &face);
        u[e] = T_POISON_NAN;
        f[e] = T_POISON_NAN;
        if (kind == REF_INTERIOR) {
            u[e] = t_rand(-1, 1);
            f[e] = t_rand(-1, 1);
        } else if (kind == REF_FACE_GHOST && g->bc[face] != PGPU_BC_PERIODIC) {
            u[e] = t_rand(-1, 1);
        }
    }
}

static void check_shift(int64_t nx, int64_t ny, int64_t nz, const char *bcs, int singular)
{
    const pgpu_config c = t_config(nx, ny, nz, bcs, 0.1, 0.2, 0.05, 0);
    const ref_grid g = ref_grid_from_config(&c);
    const int64_t elems = ref_elems(&g);
    double *u = calloc((size_t)elems, sizeof(double));
    double *f = calloc((size_t)elems, sizeof(double));
    random_problem(&g, u, f);

    const double shift = ref_shift(&g, u, f);
    double sum = 0.0, sum_abs = 0.0;
    REF_FOR_EACH_INTERIOR(&g, i, j, k) {
        const double b = f[ref_idx(&g, i, j, k)] + ref_point(&g, u, i, j, k, REF_BOUNDARY).off - shift;
        sum += b;
        sum_abs += fabs(b);
    }
    char letters[8];
    CHECK(ref_is_singular(&g) == singular, "shift %s: singular == %d", t_bc_letters(&g, letters),
          singular);
    if (singular)
        CHECK(fabs(sum) <= 1e-13 * sum_abs && shift != 0.0,
              "shift %s: sum of b = %.2e (sum |b| %.2e), shift %.6g", letters, sum, sum_abs, shift);
    else
        CHECK(shift == 0.0, "shift %s: no shift when not singular", letters);
    free(u);
    free(f);
}

static void singular_shift(void)
{
    check_shift(6, 5, 4, "NNNNNN", 1);
    check_shift(6, 5, 4, "PPNNPP", 1);
    check_shift(6, 5, 4, "PPPPPP", 1);
    check_shift(6, 5, 4, "PPNNDN", 0);
    check_shift(9, 7, 1, "NNPPDD", 1); /* 2D: the z faces are not in use */
    check_shift(9, 7, 1, "NDPP", 0);
}

/* ---- iterations against a dense direct solve ------------------------------------------- */

/* Solves the dense n x n system a x = b in place (partial pivoting). */
static int dense_solve(int64_t n, double *a, double *b)
{
    for (int64_t c = 0; c < n; ++c) {
        int64_t piv = c;
        for (int64_t r = c + 1; r < n; ++r)
            if (fabs(a[r * n + c]) > fabs(a[piv * n + c]))
                piv = r;
        if (a[piv * n + c] == 0.0)
            return 0;
        for (int64_t k = 0; k < n; ++k) {
            const double t = a[c * n + k];
            a[c * n + k] = a[piv * n + k];
            a[piv * n + k] = t;
        }
        const double t = b[c];
        b[c] = b[piv];
        b[piv] = t;
        for (int64_t r = c + 1; r < n; ++r) {
            const double m = a[r * n + c] / a[c * n + c];
            for (int64_t k = c; k < n; ++k)
                a[r * n + k] -= m * a[c * n + k];
            b[r] -= m * b[c];
        }
    }
    for (int64_t c = n - 1; c >= 0; --c) {
        for (int64_t k = c + 1; k < n; ++k)
            b[c] -= a[c * n + k] * b[k];
        b[c] /= a[c * n + c];
    }
    return 1;
}

/* The answer of A u = f + boundary terms - shift (mean zero when singular),
 * by building A column by column from ref_apply on unit vectors. */
static double *direct_answer(const ref_grid *g, const double *u, const double *f)
{
    const int64_t elems = ref_elems(g);
    int64_t n = 0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) { (void)i; ++n; }
    int64_t *where = malloc((size_t)n * sizeof(int64_t));
    double *a = calloc((size_t)(n * n), sizeof(double));
    double *b = calloc((size_t)n, sizeof(double));
    double *e = calloc((size_t)elems, sizeof(double)); /* zero ghosts: homogeneous A */
    double *ae = calloc((size_t)elems, sizeof(double));
    double *x = calloc((size_t)elems, sizeof(double));
    int64_t m = 0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) { where[m++] = ref_idx(g, i, j, k); }

    const double shift = ref_shift(g, u, f);
    for (int64_t c = 0; c < n; ++c) {
        e[where[c]] = 1.0;
        ref_apply(g, e, ae);
        e[where[c]] = 0.0;
        for (int64_t r = 0; r < n; ++r)
            a[r * n + c] = ae[where[r]] + (ref_is_singular(g) ? 1.0 : 0.0); /* + 1 1^T pins the mean */
    }
    m = 0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        b[m++] = f[ref_idx(g, i, j, k)] + ref_point(g, u, i, j, k, REF_BOUNDARY).off - shift;
    }
    if (!dense_solve(n, a, b))
        CHECK(0, "dense solve: singular matrix");
    memcpy(x, u, (size_t)elems * sizeof(double)); /* same ghosts as u */
    for (int64_t c = 0; c < n; ++c)
        x[where[c]] = b[c];
    free(where);
    free(a);
    free(b);
    free(e);
    free(ae);
    return x;
}

static void check_convergence(int64_t nx, int64_t ny, int64_t nz, const char *bcs, int rbgs,
                              double omega, int iterations)
{
    const pgpu_config c = t_config(nx, ny, nz, bcs, 0.3, 0.2, 0.25, 0);
    const ref_grid g = ref_grid_from_config(&c);
    const int64_t elems = ref_elems(&g);
    double *u = calloc((size_t)elems, sizeof(double));
    double *f = calloc((size_t)elems, sizeof(double));
    random_problem(&g, u, f);
    double *x = direct_answer(&g, u, f);

    const double start = ref_max_diff(&g, u, x);
    double after10 = 0.0;
    for (int it = 0; it < iterations; ++it) {
        if (rbgs)
            ref_rbgs(&g, u, f, omega);
        else
            ref_jacobi(&g, u, f, omega);
        if (ref_is_singular(&g))
            ref_remove_mean(&g, u);
        if (it == 9)
            after10 = ref_max_diff(&g, u, x);
    }
    const double err = ref_max_diff(&g, u, x);
    const ref_norms nm_x = ref_residual(&g, x, f, NULL);
    char letters[8];
    CHECK(after10 < start && err <= 1e-10 * ref_max_abs(&g, x) && nm_x.relative < 1e-12,
          "%s omega %.2f on %lldx%lldx%lld %s: error %.2e -> %.2e (10 it) -> %.2e (%d it); "
          "direct answer's relative residual %.1e",
          rbgs ? "rbgs" : "jacobi", omega, (long long)nx, (long long)ny, (long long)nz,
          t_bc_letters(&g, letters), start, after10, err, iterations, nm_x.relative);
    free(u);
    free(f);
    free(x);
}

static void convergence(void)
{
    check_convergence(5, 4, 1, "DDND", 0, 1.0, 3000);
    check_convergence(5, 4, 1, "DDND", 1, 1.0, 1500);
    check_convergence(4, 3, 3, "DNPPND", 0, 0.8, 3000);
    check_convergence(4, 3, 3, "DNPPND", 1, 1.5, 1000);
    check_convergence(5, 4, 3, "NNPPNN", 0, 0.8, 4000); /* singular */
    check_convergence(5, 4, 3, "NNPPNN", 1, 1.2, 2000);
    check_convergence(5, 3, 1, "PPPP", 1, 1.0, 2000);   /* singular, odd periodic */
}

/* ---- RBGS: simultaneous colours vs an in-place sweep ----------------------------------------- */

static void in_place_colour(const ref_grid *g, double *u, const double *f, double shift,
                            double omega, int red)
{
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        if (ref_is_red(g, i, j, k) != red)
            continue;
        const int64_t p = ref_idx(g, i, j, k);
        const ref_terms t = ref_point(g, u, i, j, k, REF_ALL_TERMS);
        if (t.diag != 0.0)
            u[p] = (1.0 - omega) * u[p] + omega * (f[p] - shift + t.off) / t.diag;
    }
}

static void check_rbgs_in_place(int64_t nx, int64_t ny, int64_t nz, const char *bcs, int expect_equal)
{
    const pgpu_config c = t_config(nx, ny, nz, bcs, 0.1, 0.15, 0.12, 0);
    const ref_grid g = ref_grid_from_config(&c);
    const int64_t elems = ref_elems(&g);
    double *u = calloc((size_t)elems, sizeof(double));
    double *f = calloc((size_t)elems, sizeof(double));
    random_problem(&g, u, f);
    double *v = malloc((size_t)elems * sizeof(double));
    memcpy(v, u, (size_t)elems * sizeof(double));
    const double omega = 1.3, shift = ref_shift(&g, u, f);

    ref_rbgs(&g, u, f, omega);
    in_place_colour(&g, v, f, shift, omega, 1);
    in_place_colour(&g, v, f, shift, omega, 0);
    int64_t differ = 0;
    REF_FOR_EACH_INTERIOR(&g, i, j, k) {
        const int64_t p = ref_idx(&g, i, j, k);
        differ += memcmp(&u[p], &v[p], sizeof(double)) != 0;
    }
    char letters[8];
    if (expect_equal)
        CHECK(differ == 0, "rbgs %lldx%lldx%lld %s equals the in-place sweep bit for bit (%lld differ)",
              (long long)nx, (long long)ny, (long long)nz, t_bc_letters(&g, letters), (long long)differ);
    else
        CHECK(differ > 0, "rbgs %lldx%lldx%lld %s (odd periodic axis) differs from the in-place "
              "sweep (%lld points)", (long long)nx, (long long)ny, (long long)nz,
              t_bc_letters(&g, letters), (long long)differ);
    free(u);
    free(f);
    free(v);
}

static void rbgs_in_place(void)
{
    check_rbgs_in_place(6, 4, 5, "PPPPDN", 1);
    check_rbgs_in_place(7, 5, 3, "DNNDDD", 1);
    check_rbgs_in_place(8, 6, 1, "PPPP", 1);
    check_rbgs_in_place(5, 4, 4, "PPDDNN", 0);
    check_rbgs_in_place(6, 7, 1, "DDPP", 0);
}

/* ---- the float rounding bound ----------------------------------------------------------- */

/* One colour of a sweep in float arithmetic, as a GPU kernel might do it:
 * coefficients rounded to float, terms summed in float, either the update
 * form (1-w) u + w (b + off) / diag or the residual form u + w r / diag. */
static void float_colour(const ref_grid *g, const float *uin, float *uout, const float *f,
                         double shift, double omega, int colours, int residual_form)
{
    const float w = (float)omega, s = (float)shift;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const int red = ref_is_red(g, i, j, k);
        uout[p] = uin[p];
        if (!((red && (colours & REF_RED)) || (!red && (colours & REF_BLACK))))
            continue;
        const int64_t idx[3] = {i, j, k};
        float off = 0.0f, diag = 0.0f;
        for (int a = 0; a < g->dims; ++a) {
            const float c2 = (float)(1.0 / (g->h[a] * g->h[a])), c1 = (float)(1.0 / g->h[a]);
            const int64_t n = g->n[a], st = g->stride[a];
            for (int side = 0; side < 2; ++side) {
                const int at_face = side == 0 ? idx[a] == 1 : idx[a] == n;
                const int64_t across = side == 0 ? p - st : p + st;
                const pgpu_bc bc = g->bc[2 * a + side];
                if (!at_face || bc == PGPU_BC_DIRICHLET) {
                    off += c2 * uin[across];
                    diag += c2;
                } else if (bc == PGPU_BC_NEUMANN) {
                    off += c1 * uin[across];
                } else if (n > 1) {
                    off += c2 * uin[side == 0 ? p + (n - 1) * st : p - (n - 1) * st];
                    diag += c2;
                }
            }
        }
        if (diag == 0.0f)
            continue;
        if (residual_form)
            uout[p] = uin[p] + w * ((f[p] - s) + off - diag * uin[p]) / diag;
        else
            uout[p] = (1.0f - w) * uin[p] + w * ((f[p] - s) + off) / diag;
    }
}

static void check_float_bound(int64_t nx, int64_t ny, int64_t nz, const char *bcs, double h,
                              int rbgs, double omega, int residual_form)
{
    const pgpu_config c = t_config(nx, ny, nz, bcs, h, 0.7 * h, 1.3 * h, 0);
    const ref_grid g = ref_grid_from_config(&c);
    const int64_t elems = ref_elems(&g);
    double *u = calloc((size_t)elems, sizeof(double)), *f = calloc((size_t)elems, sizeof(double));
    double *half = calloc((size_t)elems, sizeof(double)), *full = calloc((size_t)elems, sizeof(double));
    double *err1 = calloc((size_t)elems, sizeof(double)), *err2 = calloc((size_t)elems, sizeof(double));
    float *uf = calloc((size_t)elems, sizeof(float)), *ff = calloc((size_t)elems, sizeof(float));
    float *hf = calloc((size_t)elems, sizeof(float)), *gf = calloc((size_t)elems, sizeof(float));
    random_problem(&g, u, f);
    for (int64_t e = 0; e < elems; ++e) {
        u[e] = t_round(PGPU_FLOAT, u[e]);
        f[e] = t_round(PGPU_FLOAT, f[e]);
        uf[e] = (float)u[e];
        ff[e] = (float)f[e];
    }
    const double shift = ref_shift(&g, u, f), shift_mag = ref_shift_magnitude(&g, u, f);

    /* Reference and bound, one or two colour passes. */
    const int first = rbgs ? REF_RED : REF_ALL_POINTS;
    ref_relax(&g, u, half, f, shift, omega, first);
    ref_relax_bound(&g, u, f, shift_mag, omega, first, NULL, err1);
    float_colour(&g, uf, hf, ff, shift, omega, first, residual_form);
    const double *ref_out = half, *bound = err1;
    const float *got = hf;
    if (rbgs) {
        ref_relax(&g, half, full, f, shift, omega, REF_BLACK);
        ref_relax_bound(&g, half, f, shift_mag, omega, REF_BLACK, err1, err2);
        float_colour(&g, hf, gf, ff, shift, omega, REF_BLACK, residual_form);
        ref_out = full;
        bound = err2;
        got = gf;
    }
    double worst = 0.0;
    REF_FOR_EACH_INTERIOR(&g, i, j, k) {
        const int64_t p = ref_idx(&g, i, j, k);
        worst = t_max_nan(worst, fabs((double)got[p] - ref_out[p]) / (8.0 * FLT_EPSILON * bound[p]));
    }
    char letters[8];
    CHECK(worst <= 1.0, "float %s%s omega %.2f %lldx%lldx%lld %s h %.3g: max error / bound = %.3f",
          rbgs ? "rbgs" : "jacobi", residual_form ? " (residual form)" : "", omega, (long long)nx,
          (long long)ny, (long long)nz, t_bc_letters(&g, letters), h, worst);
    free(u); free(f); free(half); free(full); free(err1); free(err2);
    free(uf); free(ff); free(hf); free(gf);
}

static void float_bound(void)
{
    for (int form = 0; form < 2; ++form) {
        check_float_bound(17, 12, 9, "DDNNPP", 0.01, 0, 0.8, form);
        check_float_bound(17, 12, 9, "DDNNPP", 0.01, 1, 1.6, form);
        check_float_bound(16, 11, 8, "NNNNNN", 0.003, 1, 1.0, form);
        check_float_bound(15, 13, 1, "PPDN", 1e-3, 0, 1.0, form);
        check_float_bound(15, 13, 1, "PPDN", 1e-3, 1, 1.9, form);
    }
}

int main(void)
{
    t_seed();
    check_layout();
    check_by_hand();
    eigenfunctions();
    linear_functions();
    singular_shift();
    convergence();
    rbgs_in_place();
    float_bound();
    return t_finish("test_reference");
}
