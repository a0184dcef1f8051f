/* test_mask_reference.c -- checks of the masked, variable-coefficient host
 * reference (mask_ref.h) itself; no device.
 *
 *  - without a mask and with beta = 1 (NULL, or an array of ones) it is the
 *    box reference of reference.c: A u with the boundary data, the residual
 *    norms, one Jacobi sweep and one red-black iteration (the singular
 *    shift and the mean removal included), for every face combination
 *    (per axis DD, DN, ND, NN, PP) in 2D and 3D on odd sizes;
 *  - cases worked by hand: a Dirichlet point of the mask enters its
 *    neighbour's equation with its value and the harmonic face mean; a
 *    Dirichlet box face has beta_p / h^2, a Neumann face beta_p g / h; a
 *    face towards a solid point carries nothing (diagonal included);
 *  - on random masks (the three types) and random beta, for every face
 *    combination: the operator on the unknowns is symmetric bit for bit,
 *    couples no two regions, is positive definite on each regular region
 *    and positive semi-definite on each singular one with the constant as
 *    its null space (Cholesky of the dense blocks); values at solid points
 *    are never read (NaN there changes nothing);
 *  - a sealed pocket: the regions are counted as expected for Dirichlet,
 *    Neumann and periodic boxes, and a constant on each singular region is
 *    in the null space;
 *  - an exact discrete solution (f = A u, u of mean zero on singular
 *    regions) is a fixed point of both steps and has a zero residual;
 *  - a step done in float arithmetic the way the device does it (couplings
 *    rounded to float, sums in float) stays inside the bound the GPU test
 *    uses (16 FLT_EPSILON * mref_step_bound), on jumps of 1e3 and 1e6 too,
 *    so that bound is not tighter than an honest float implementation; and
 *    likewise the relative residual of float data (b summed in float, r in
 *    double from float couplings) inside the GPU test's residual tolerance.
 */
#include "common.h"
#include "mask_ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *axis_pairs[5] = {"DD", "DN", "ND", "NN", "PP"};

/* The face letters of combination c (base 5 over the axes). */
static void combination(int c, int dims, char *bcs)
{
    for (int a = 0; a < dims; ++a) {
        bcs[2 * a] = axis_pairs[c % 5][0];
        bcs[2 * a + 1] = axis_pairs[c % 5][1];
        c /= 5;
    }
    bcs[2 * dims] = '\0';
}

static int combinations(int dims)
{
    return dims == 3 ? 125 : 25;
}

/* ---- no mask, beta 1: the box reference ------------------------------------------- */

static void box_equivalence(int64_t nx, int64_t ny, int64_t nz, int with_ones)
{
    const int dims = nz > 1 ? 3 : 2;
    double worst_apply = 0, worst_norm = 0, worst_step = 0;
    int bad_regions = 0, cases = 0;
    char bcs[8], worst_at[8] = "";
    for (int c = 0; c < combinations(dims); ++c) {
        combination(c, dims, bcs);
        const pgpu_config cfg = t_config(nx, ny, nz, bcs, 1.0 / 8, 1.0 / 16, 1.0 / 4, 0);
        const ref_grid g = ref_grid_from_config(&cfg);
        const int64_t elems = ref_elems(&g);
        double *beta = NULL;
        if (with_ones) {
            beta = malloc((size_t)elems * sizeof(double));
            for (int64_t e = 0; e < elems; ++e)
                beta[e] = T_POISON_NAN; /* ghosts are not read */
            mref_beta_field(&g, MREF_BETA_ONE, 0, beta);
        }
        const mref m = mref_make(&g, NULL, beta);
        mref_regions R;
        double *u = malloc((size_t)elems * sizeof(double)), *f = malloc((size_t)elems * sizeof(double));
        double *a1 = calloc((size_t)elems, sizeof(double)), *a2 = calloc((size_t)elems, sizeof(double));
        double *s1 = malloc((size_t)elems * sizeof(double)), *s2 = malloc((size_t)elems * sizeof(double));
        if (!u || !f || !a1 || !a2 || !s1 || !s2 || !mref_find_regions(&m, &R)) {
            CHECK(0, "allocation");
            return;
        }
        mref_random_data(&m, u, f, 1.0, 0.3);
        ++cases;
        bad_regions += !(R.count == 1 && R.singular == ref_is_singular(&g));

        /* A u with the data */
        ref_apply(&g, u, a1);
        mref_apply(&m, u, a2, REF_ALL_TERMS);
        double scale = 0;
        for (int a = 0; a < dims; ++a)
            scale += 4.0 / (g.h[a] * g.h[a]);
        const double d_apply = ref_max_diff(&g, a1, a2) / scale;
        if (!(d_apply <= worst_apply)) {
            worst_apply = t_max_nan(worst_apply, d_apply);
            strcpy(worst_at, bcs);
        }
        /* the residual norms */
        const ref_norms n1 = ref_residual(&g, u, f, NULL);
        const ref_norms n2 = mref_residual(&m, &R, u, f, NULL, NULL, NULL);
        const double d_norm = fmax(fabs(n1.norm - n2.norm) / n1.norm, fabs(n1.rhs_norm - n2.rhs_norm) / n1.rhs_norm);
        worst_norm = t_max_nan(worst_norm, d_norm);
        /* one Jacobi sweep, one red-black iteration (mean removed when singular) */
        for (int rb = 0; rb < 2; ++rb) {
            const double omega = rb ? 1.3 : 0.8;
            memcpy(s1, u, (size_t)elems * sizeof(double));
            memcpy(s2, u, (size_t)elems * sizeof(double));
            if (rb)
                ref_rbgs(&g, s1, f, omega);
            else
                ref_jacobi(&g, s1, f, omega);
            if (ref_is_singular(&g))
                ref_remove_mean(&g, s1);
            mref_step(&m, &R, s2, f, omega, rb);
            worst_step = t_max_nan(worst_step, ref_max_diff(&g, s1, s2) / fmax(1.0, ref_max_abs(&g, s1)));
        }
        mref_regions_free(&R);
        free(beta), free(u), free(f), free(a1), free(a2), free(s1), free(s2);
    }
    const char *what = with_ones ? "beta = array of ones" : "beta NULL";
    CHECK(worst_apply <= 1e-15, "no mask, %s, %lldx%lldx%lld, %d face combinations: max |A u - box A u| / scale = %.2e (worst %s)",
          what, (long long)nx, (long long)ny, (long long)nz, cases, worst_apply, worst_at);
    CHECK(worst_norm <= 1e-14, "no mask, %s, %lldx%lldx%lld: residual and rhs norms equal the box reference's (rel. diff %.2e)",
          what, (long long)nx, (long long)ny, (long long)nz, worst_norm);
    CHECK(worst_step <= 1e-14, "no mask, %s, %lldx%lldx%lld: Jacobi and RBGS steps equal the box reference's (max diff %.2e)",
          what, (long long)nx, (long long)ny, (long long)nz, worst_step);
    CHECK(bad_regions == 0, "no mask, %s, %lldx%lldx%lld: one region, singular exactly without a Dirichlet face (%d wrong)",
          what, (long long)nx, (long long)ny, (long long)nz, bad_regions);
}

/* ---- cases worked by hand ------------------------------------------------------------- */

/* 2D, 3 x 1 points, hx = 1/2, hy = 1/4, faces NNNN; mask (fluid, Dirichlet,
 * solid), beta (1, 3, 7); u = (5, 4, NaN), f = (2, NaN, NaN), the x- ghost
 * (a flux) 0.5, the y ghosts 0.25 and -0.75.  At point 1:
 *   x-: Neumann, beta_1 g / h = 1 * 0.5 / 0.5 = 1 on the right, no diagonal
 *   x+: the Dirichlet point, a = 2*1*3/(1+3) = 1.5, a / h^2 = 6: diag 6,
 *       6 * 4 = 24 on the right
 *   y-, y+: Neumann, 1 * g / 0.25: 1 and -3 on the right
 *   b = 2 + 1 + 24 + 1 - 3 = 25, A u = 6 * 5 - 23 = 7, residual 25 - 30 = -5
 * Points 2 and 3 have no equation. */
static void by_hand_2d(void)
{
    const pgpu_config c = t_config(3, 1, 1, "NNNN", 0.5, 0.25, 0.0, 0);
    const ref_grid g = ref_grid_from_config(&c);
    double u[15], f[15], beta[15], r[15];
    uint8_t mask[15];
    for (int e = 0; e < 15; ++e) {
        u[e] = f[e] = beta[e] = r[e] = T_POISON_NAN;
        mask[e] = 0xee; /* ghosts of the mask are not read */
    }
    const int64_t p1 = ref_idx(&g, 1, 1, 0), p2 = ref_idx(&g, 2, 1, 0), p3 = ref_idx(&g, 3, 1, 0);
    mask[p1] = PGPU_CELL_FLUID, mask[p2] = PGPU_CELL_DIRICHLET, mask[p3] = PGPU_CELL_SOLID;
    beta[p1] = 1, beta[p2] = 3, beta[p3] = 7;
    u[p1] = 5, u[p2] = 4;
    f[p1] = 2;
    u[ref_idx(&g, 0, 1, 0)] = 0.5;
    u[ref_idx(&g, 4, 1, 0)] = 100; /* the x+ ghost: next to the solid point, no equation reads it */
    for (int i = 1; i <= 3; ++i) {
        u[ref_idx(&g, i, 0, 0)] = 0.25;
        u[ref_idx(&g, i, 2, 0)] = -0.75;
    }
    const mref m = mref_make(&g, mask, beta);
    const mref_face fx = mref_face_at(&m, 1, 1, 0, 1);
    CHECK(fx.kind == MREF_FACE_HELD && fx.a == 1.5 && fx.coef == 6.0 && fx.diag == 6.0 && fx.q == p2,
          "by hand 2D: the face towards the Dirichlet point: kind %d, harmonic mean %g (1.5), coef %g (6)", fx.kind,
          fx.a, fx.coef);
    const mref_face fn = mref_face_at(&m, 1, 1, 0, 0);
    CHECK(fn.kind == MREF_FACE_NEUMANN && fn.coef == 2.0 && fn.diag == 0.0,
          "by hand 2D: the Neumann face: beta_p / h = %g (2), no diagonal part (%g)", fn.coef, fn.diag);
    const ref_terms all = mref_point(&m, u, 1, 1, 0, REF_ALL_TERMS);
    const ref_terms bnd = mref_point(&m, u, 1, 1, 0, REF_BOUNDARY);
    const ref_terms nb = mref_point(&m, u, 1, 1, 0, REF_NEIGHBOURS);
    CHECK(all.diag == 6.0 && all.off == 23.0 && bnd.off == 23.0 && nb.off == 0.0,
          "by hand 2D: diag %g (6), off %g (23: 1 + 24 + 1 - 3), boundary %g, neighbours %g (0)", all.diag, all.off,
          bnd.off, nb.off);
    mref_regions R;
    if (!mref_find_regions(&m, &R)) {
        CHECK(0, "allocation");
        return;
    }
    const ref_norms nm = mref_residual(&m, &R, u, f, r, NULL, NULL);
    CHECK(R.count == 1 && R.singular == 0 && r[p1] == -5.0 && nm.norm == 5.0 && nm.rhs_norm == 25.0,
          "by hand 2D: one regular region (%lld, singular %lld): residual %g (-5), ||b|| %g (25)", (long long)R.count,
          (long long)R.singular, r[p1], nm.rhs_norm);
    /* Jacobi, omega 1: u1 = (2 + 23) / 6; points 2 and 3 keep their values */
    double s[15];
    memcpy(s, u, sizeof s);
    mref_step(&m, &R, s, f, 1.0, 0);
    CHECK(s[p1] == 25.0 / 6.0 && s[p2] == 4.0 && isnan(s[p3]), "by hand 2D: Jacobi gives %.17g (25/6), keeps %g, %g",
          s[p1], s[p2], s[p3]);
    mref_regions_free(&R);
}

/* 3D, 3 x 3 x 3, h = 1/2, Dirichlet box with ghosts 1; the centre (2,2,2)
 * fluid with beta 2; its x- neighbour solid, its x+ neighbour fluid with
 * beta 6, every other point Dirichlet with value 3 and beta 2:
 *   x-: nothing; x+: a = 2*2*6/8 = 3 -> 12 on the diagonal, unknown;
 *   y-, y+, z-, z+: a = 2 -> 8 each on the diagonal, 8 * 3 = 24 each on the
 *   right.  diag = 12 + 32 = 44, boundary 96.
 * The x+ neighbour (3,2,2) (beta 6): x-: the centre, 12; x+: the Dirichlet
 * box face, beta 6 / h^2 = 24, ghost 1; the four others Dirichlet points:
 * a = 2*6*2/8 = 3 -> 12 each, value 3.  diag = 12 + 24 + 48 = 84, boundary
 * 24 + 144 = 168. */
static void by_hand_3d(void)
{
    const pgpu_config c = t_config(3, 3, 3, "DDDDDD", 0.5, 0.5, 0.5, 0);
    const ref_grid g = ref_grid_from_config(&c);
    const int64_t elems = ref_elems(&g);
    double *u = malloc((size_t)elems * sizeof(double)), *beta = malloc((size_t)elems * sizeof(double));
    uint8_t *mask = malloc((size_t)elems);
    for (int64_t e = 0; e < elems; ++e) {
        u[e] = 1.0; /* box ghosts */
        beta[e] = 2.0;
        mask[e] = PGPU_CELL_DIRICHLET;
    }
    REF_FOR_EACH_INTERIOR(&g, i, j, k) {
        u[ref_idx(&g, i, j, k)] = 3.0;
    }
    const int64_t pc = ref_idx(&g, 2, 2, 2), ps = ref_idx(&g, 1, 2, 2), pn = ref_idx(&g, 3, 2, 2);
    mask[pc] = PGPU_CELL_FLUID, mask[ps] = PGPU_CELL_SOLID, mask[pn] = PGPU_CELL_FLUID;
    beta[pn] = 6.0;
    u[pc] = 0.0, u[pn] = 0.0;
    u[ps] = T_POISON_NAN;
    const mref m = mref_make(&g, mask, beta);
    const ref_terms tc = mref_point(&m, u, 2, 2, 2, REF_BOUNDARY);
    const ref_terms tn = mref_point(&m, u, 3, 2, 2, REF_BOUNDARY);
    const mref_face fs = mref_face_at(&m, 2, 2, 2, 0);
    CHECK(fs.kind == MREF_FACE_NONE && fs.diag == 0.0,
          "by hand 3D: the face towards the solid point: kind %d (none), diagonal part %g", fs.kind, fs.diag);
    CHECK(tc.diag == 44.0 && tc.off == 96.0, "by hand 3D: centre diag %g (44: the solid face left out), boundary %g (96)",
          tc.diag, tc.off);
    CHECK(tn.diag == 84.0 && tn.off == 168.0,
          "by hand 3D: neighbour diag %g (84: harmonic 3 / h^2 = 12, box face beta_p / h^2 = 24), boundary %g (168)",
          tn.diag, tn.off);
    /* u = 1 at both unknowns: A u = diag u - 12 u_other */
    u[pc] = u[pn] = 1.0;
    double au[2];
    au[0] = tc.diag - mref_point(&m, u, 2, 2, 2, REF_NEIGHBOURS).off;
    au[1] = tn.diag - mref_point(&m, u, 3, 2, 2, REF_NEIGHBOURS).off;
    CHECK(au[0] == 32.0 && au[1] == 72.0, "by hand 3D: operator on the unknowns (1, 1) -> (%g, %g), (32, 72)", au[0],
          au[1]);
    free(u), free(beta), free(mask);
}

/* ---- symmetry, definiteness, regions on random masks --------------------------------- */

/* Cholesky of the n x n block a (row-major, overwritten); 1 when positive
 * definite (every pivot above tol times the largest diagonal). */
static int cholesky(double *a, int n, double tol)
{
    double dmax = 0;
    for (int i = 0; i < n; ++i)
        dmax = fmax(dmax, a[(size_t)i * n + i]);
    for (int j = 0; j < n; ++j) {
        double d = a[(size_t)j * n + j];
        for (int k = 0; k < j; ++k)
            d -= a[(size_t)j * n + k] * a[(size_t)j * n + k];
        if (!(d > tol * dmax))
            return 0;
        d = sqrt(d);
        a[(size_t)j * n + j] = d;
        for (int i = j + 1; i < n; ++i) {
            double s = a[(size_t)i * n + j];
            for (int k = 0; k < j; ++k)
                s -= a[(size_t)i * n + k] * a[(size_t)j * n + k];
            a[(size_t)i * n + j] = s / d;
        }
    }
    return 1;
}

typedef struct dense_result {
    int asym;        /* entries with A_pq != A_qp (bits) */
    int cross;       /* couplings between different regions */
    int not_pd;      /* regular regions whose block is not positive definite */
    int not_psd;     /* singular regions whose block + 1 1^T is not positive definite */
    double null_res; /* max |A 1| / diag over singular regions */
    int solid_read;  /* fluid results that changed when solid points became NaN */
} dense_result;

static void dense_checks(const mref *m, const mref_regions *R, dense_result *out)
{
    const ref_grid *g = &m->g;
    const int64_t elems = ref_elems(g);
    memset(out, 0, sizeof *out);
    /* the unknowns, numbered */
    int64_t *at = malloc((size_t)elems * sizeof(int64_t));
    int64_t nu = 0;
    for (int64_t e = 0; e < elems; ++e)
        at[e] = -1;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        if (mref_type(m, p) == PGPU_CELL_FLUID)
            at[p] = nu++;
    }
    int64_t *elem = malloc((size_t)nu * sizeof(int64_t));
    for (int64_t e = 0; e < elems; ++e)
        if (at[e] >= 0)
            elem[at[e]] = e;
    double *A = calloc((size_t)(nu * nu), sizeof(double));
    double *x = malloc((size_t)elems * sizeof(double)), *y = malloc((size_t)elems * sizeof(double));
    double *y2 = malloc((size_t)elems * sizeof(double));
    const double poison = mref_poison();
    /* column q of A: the operator on the unknowns applied to e_q (zero data;
     * solid points NaN, which must change nothing) */
    for (int64_t q = 0; q < nu; ++q) {
        for (int64_t e = 0; e < elems; ++e)
            x[e] = 0.0;
        x[elem[q]] = 1.0;
        mref_apply(m, x, y, REF_NEIGHBOURS);
        REF_FOR_EACH_INTERIOR(g, i, j, k) {
            const int64_t p = ref_idx(g, i, j, k);
            if (mref_type(m, p) == PGPU_CELL_SOLID)
                x[p] = poison;
        }
        mref_apply(m, x, y2, REF_ALL_TERMS); /* ghosts and held values 0: the same operator */
        for (int64_t p = 0; p < nu; ++p) {
            A[(size_t)p * nu + q] = y[elem[p]];
            if (memcmp(&y[elem[p]], &y2[elem[p]], sizeof(double)) != 0)
                ++out->solid_read;
        }
    }
    for (int64_t p = 0; p < nu; ++p)
        for (int64_t q = 0; q < nu; ++q) {
            const double apq = A[(size_t)p * nu + q], aqp = A[(size_t)q * nu + p];
            if (memcmp(&apq, &aqp, sizeof apq) != 0)
                ++out->asym;
            if (apq != 0.0 && R->label[elem[p]] != R->label[elem[q]])
                ++out->cross;
        }
    /* per region: its block */
    for (int64_t id = 0; id < R->count; ++id) {
        const int n = (int)R->size[id];
        double *B = malloc((size_t)n * n * sizeof(double));
        int64_t *pick = malloc((size_t)n * sizeof(int64_t));
        int c = 0;
        for (int64_t p = 0; p < nu; ++p)
            if (R->label[elem[p]] == id)
                pick[c++] = p;
        double dmax = 0, rowmax = 0;
        for (int a = 0; a < n; ++a) {
            double row = 0;
            for (int b = 0; b < n; ++b) {
                B[(size_t)a * n + b] = A[(size_t)pick[a] * nu + pick[b]];
                row += B[(size_t)a * n + b];
            }
            dmax = fmax(dmax, B[(size_t)a * n + a]);
            rowmax = fmax(rowmax, fabs(row));
        }
        if (R->is_singular[id]) {
            /* a point without any coupling (diag 0) is a singular region of its own */
            const double scale = dmax > 0 ? dmax : 1.0;
            out->null_res = t_max_nan(out->null_res, rowmax / scale);
            for (int a = 0; a < n; ++a)
                for (int b = 0; b < n; ++b)
                    B[(size_t)a * n + b] += scale / n; /* + 1 1^T: the null space lifted */
            out->not_psd += !cholesky(B, n, 1e-13);
        } else {
            out->not_pd += !cholesky(B, n, 1e-13);
        }
        free(B);
        free(pick);
    }
    free(at), free(elem), free(A), free(x), free(y), free(y2);
}

static void random_masks(int64_t nx, int64_t ny, int64_t nz)
{
    const int dims = nz > 1 ? 3 : 2;
    dense_result worst;
    memset(&worst, 0, sizeof worst);
    int64_t regions = 0, singular = 0;
    char bcs[8];
    for (int c = 0; c < combinations(dims); ++c) {
        combination(c, dims, bcs);
        const pgpu_config cfg = t_config(nx, ny, nz, bcs, 1.0 / 8, 1.0 / 4, 1.0 / 16, 0);
        const ref_grid g = ref_grid_from_config(&cfg);
        const int64_t elems = ref_elems(&g);
        uint8_t *mask = malloc((size_t)elems);
        double *beta = malloc((size_t)elems * sizeof(double));
        for (int64_t e = 0; e < elems; ++e) {
            mask[e] = 0xee;
            beta[e] = T_POISON_NAN;
        }
        /* every other combination without Dirichlet points, so that regions
         * away from Dirichlet faces are singular (among the boxes without a
         * Dirichlet face, half have an odd c) */
        const double held = c % 2 ? 0.0 : 0.15;
        REF_FOR_EACH_INTERIOR(&g, i, j, k) {
            const double r = t_rand(0, 1);
            mask[ref_idx(&g, i, j, k)] = r < 0.7 ? PGPU_CELL_FLUID : r < 1.0 - held ? PGPU_CELL_SOLID : PGPU_CELL_DIRICHLET;
        }
        mref_beta_field(&g, MREF_BETA_RANDOM, 0, beta);
        const mref m = mref_make(&g, mask, beta);
        mref_regions R;
        if (!mref_find_regions(&m, &R)) {
            CHECK(0, "allocation");
            return;
        }
        dense_result d;
        dense_checks(&m, &R, &d);
        worst.asym += d.asym;
        worst.cross += d.cross;
        worst.not_pd += d.not_pd;
        worst.not_psd += d.not_psd;
        worst.solid_read += d.solid_read;
        worst.null_res = t_max_nan(worst.null_res, d.null_res);
        regions += R.count;
        singular += R.singular;
        mref_regions_free(&R);
        free(mask), free(beta);
    }
    const char *dim = dims == 3 ? "3D" : "2D";
    t_note("random masks %s %lldx%lldx%lld: %lld regions, %lld of them singular", dim, (long long)nx, (long long)ny,
           (long long)nz, (long long)regions, (long long)singular);
    CHECK(worst.asym == 0, "random masks %s: the operator on the unknowns is symmetric bit for bit (%d entries differ)",
          dim, worst.asym);
    CHECK(worst.cross == 0, "random masks %s: no coupling between different regions (%d)", dim, worst.cross);
    CHECK(worst.not_pd == 0, "random masks %s: positive definite on every regular region (%d not)", dim, worst.not_pd);
    CHECK(worst.not_psd == 0 && worst.null_res <= 1e-14 && singular > 0,
          "random masks %s: on singular regions A 1 = 0 (max |A 1| / diag %.2e) and A + 1 1^T is positive definite "
          "(%d not)", dim, worst.null_res, worst.not_psd);
    CHECK(worst.solid_read == 0, "random masks %s: NaN at solid points changes nothing (%d values changed)", dim,
          worst.solid_read);
}

/* ---- a sealed pocket ------------------------------------------------------------------ */

static void pocket(int64_t nx, int64_t ny, int64_t nz, const char *bcs, int64_t want_regions, int64_t want_singular)
{
    const pgpu_config cfg = t_config(nx, ny, nz, bcs, 1.0 / 16, 1.0 / 16, 1.0 / 16, 0);
    const ref_grid g = ref_grid_from_config(&cfg);
    const int64_t elems = ref_elems(&g);
    uint8_t *mask = malloc((size_t)elems);
    double *beta = malloc((size_t)elems * sizeof(double));
    double *u = calloc((size_t)elems, sizeof(double)), *au = calloc((size_t)elems, sizeof(double));
    memset(mask, 0xee, (size_t)elems);
    mref_shape(&g, MREF_SHAPE_POCKET, mask);
    mref_beta_field(&g, MREF_BETA_RANDOM, 0, beta);
    const mref m = mref_make(&g, mask, beta);
    mref_regions R;
    if (!mref_find_regions(&m, &R)) {
        CHECK(0, "allocation");
        return;
    }
    CHECK(R.count == want_regions && R.singular == want_singular,
          "pocket %lldx%lldx%lld %s: %lld regions (%lld), %lld singular (%lld)", (long long)nx, (long long)ny,
          (long long)nz, bcs, (long long)R.count, (long long)want_regions, (long long)R.singular,
          (long long)want_singular);
    /* a different constant on each singular region, zero data elsewhere: the
     * one-point pocket has no coupling at all (diag 0) */
    double worst = 0, dmax = 0;
    int64_t one_point = 0;
    REF_FOR_EACH_INTERIOR(&g, i, j, k) {
        const int64_t p = ref_idx(&g, i, j, k);
        const int32_t id = R.label[p];
        u[p] = (id >= 0 && R.is_singular[id]) ? 1.0 + id : 0.0;
        if (mask[p] == PGPU_CELL_SOLID)
            u[p] = mref_poison();
        if (id >= 0 && R.size[id] == 1)
            ++one_point;
    }
    mref_apply(&m, u, au, REF_ALL_TERMS);
    REF_FOR_EACH_INTERIOR(&g, i, j, k) {
        const int64_t p = ref_idx(&g, i, j, k);
        const int32_t id = R.label[p];
        if (id < 0 || !R.is_singular[id])
            continue;
        const ref_terms t = mref_point(&m, u, i, j, k, REF_ALL_TERMS);
        dmax = fmax(dmax, t.diag * u[p]);
        worst = t_max_nan(worst, fabs(au[p]));
    }
    CHECK(worst <= 1e-14 * dmax && one_point == 1,
          "pocket %s: a constant on each singular region is in the null space (max |A c| %.2e, scale %.2e); "
          "one one-point region (%lld)", bcs, worst, dmax, (long long)one_point);
    mref_regions_free(&R);
    free(mask), free(beta), free(u), free(au);
}

/* ---- exact solutions are fixed points ---------------------------------------------- */

static void fixed_point(int64_t nx, int64_t ny, int64_t nz, const char *bcs, int shape, int beta_kind, double jump)
{
    const pgpu_config cfg = t_config(nx, ny, nz, bcs, 1.0 / 32, 1.0 / 16, 1.0 / 32, 0);
    const ref_grid g = ref_grid_from_config(&cfg);
    const int64_t elems = ref_elems(&g);
    uint8_t *mask = malloc((size_t)elems);
    double *beta = malloc((size_t)elems * sizeof(double));
    double *u = malloc((size_t)elems * sizeof(double)), *f = malloc((size_t)elems * sizeof(double));
    double *s = malloc((size_t)elems * sizeof(double));
    memset(mask, 0xee, (size_t)elems);
    mref_shape(&g, shape, mask);
    mref_beta_field(&g, beta_kind, jump, beta);
    const mref m = mref_make(&g, mask, beta);
    mref_regions R;
    if (!mref_find_regions(&m, &R)) {
        CHECK(0, "allocation");
        return;
    }
    mref_random_data(&m, u, f, 1.0, 0.0);
    mref_project_u(&m, &R, u, NULL);
    mref_apply(&m, u, f, REF_ALL_TERMS); /* u is the exact solution */
    double mag_r = 0;
    const ref_norms nm = mref_residual(&m, &R, u, f, NULL, &mag_r, NULL);
    double worst = 0;
    for (int rb = 0; rb < 2; ++rb) {
        memcpy(s, u, (size_t)elems * sizeof(double));
        mref_step(&m, &R, s, f, rb ? 1.5 : 0.7, rb);
        REF_FOR_EACH_INTERIOR(&g, i, j, k) {
            const int64_t p = ref_idx(&g, i, j, k);
            if (mask[p] == PGPU_CELL_FLUID)
                worst = t_max_nan(worst, fabs(s[p] - u[p]));
            else if (memcmp(&s[p], &u[p], sizeof(double)) != 0)
                worst = NAN; /* points not fluid are copied bit for bit */
        }
    }
    CHECK(nm.norm <= 1e-14 * mag_r && worst <= 1e-12,
          "exact solution %s %s jump %g %s: residual %.2e (scale %.2e); Jacobi and RBGS move it by %.2e",
          mref_shape_name(shape), bcs, jump, nz > 1 ? "3D" : "2D", nm.norm, mag_r, worst);
    mref_regions_free(&R);
    free(mask), free(beta), free(u), free(f), free(s);
}

/* ---- an honest float step inside the GPU test's bound ------------------------------- */

/* One step in float arithmetic as a device kernel forms it: couplings
 * float(float(1/h^2 or 1/h) * float(face fraction)), the neighbour sum
 * ((x pair) + (y pair)) + (z pair) in float, rhs = (f - mean) + sum,
 * (1 - w) u + w rhs / diag; the means of b and u formed in double, the
 * differences rounded to float. */
static float float_face(const mref *m, int64_t i, int64_t j, int64_t k, int f, float *d)
{
    const mref_face fc = mref_face_at(m, i, j, k, f);
    *d = 0.0f;
    if (fc.kind == MREF_FACE_NONE)
        return 0.0f;
    const double h = m->g.h[f / 2];
    const float c = fc.kind == MREF_FACE_NEUMANN ? (float)(1.0 / h) : (float)(1.0 / (h * h));
    const float frac = (float)fc.a;
    const float v = c * frac;
    *d = fc.kind == MREF_FACE_NEUMANN ? 0.0f : v;
    return v;
}

static void float_relax(const mref *m, const float *uin, float *uout, const float *fb, float omega, int colours)
{
    const ref_grid *g = &m->g;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        uout[p] = uin[p];
        const int red = ref_is_red(g, i, j, k);
        if (mref_type(m, p) != PGPU_CELL_FLUID || !(red ? colours & REF_RED : colours & REF_BLACK))
            continue;
        float t[6] = {0, 0, 0, 0, 0, 0}, d[6] = {0, 0, 0, 0, 0, 0};
        for (int f = 0; f < 2 * g->dims; ++f) {
            const float v = float_face(m, i, j, k, f, &d[f]);
            if (v != 0.0f)
                t[f] = v * uin[mref_face_at(m, i, j, k, f).q];
        }
        const float off = ((t[0] + t[1]) + (t[2] + t[3])) + (t[4] + t[5]);
        const float diag = ((d[0] + d[1]) + (d[2] + d[3])) + (d[4] + d[5]);
        const float rhs = fb[p] + off;
        if (diag > 0.0f)
            uout[p] = (1.0f - omega) * uin[p] + omega * rhs / diag;
    }
}

/* The relative residual of float data as the device forms it: f with the
 * means removed rounded to float, b = f + the boundary terms summed in
 * float, r in double from the float couplings. */
static double float_residual(const mref *m, const mref_regions *R, const double *u, const double *f)
{
    const ref_grid *g = &m->g;
    double *fbd = malloc((size_t)ref_elems(g) * sizeof(double));
    mref_project_rhs(m, R, u, f, fbd);
    double rr = 0, bb = 0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        if (mref_type(m, p) != PGPU_CELL_FLUID)
            continue;
        const float fp = (float)fbd[p];
        float s = 0.0f;
        double t[6] = {0, 0, 0, 0, 0, 0}, d[6] = {0, 0, 0, 0, 0, 0};
        for (int fc = 0; fc < 2 * g->dims; ++fc) {
            float df;
            const float v = float_face(m, i, j, k, fc, &df);
            const mref_face face = mref_face_at(m, i, j, k, fc);
            d[fc] = df;
            if (v == 0.0f)
                continue;
            t[fc] = (double)v * u[face.q];
            if (face.kind != MREF_FACE_UNKNOWN)
                s += v * (float)u[face.q];
        }
        const double b = (double)(fp + s);
        const double off = ((t[0] + t[1]) + (t[2] + t[3])) + (t[4] + t[5]);
        const double diag = ((d[0] + d[1]) + (d[2] + d[3])) + (d[4] + d[5]);
        const double r = (double)fp + off - diag * u[p];
        rr += r * r;
        bb += b * b;
    }
    free(fbd);
    return sqrt(rr) / sqrt(bb);
}

static void float_step(int64_t nx, int64_t ny, int64_t nz, const char *bcs, int shape, int beta_kind, double jump)
{
    const pgpu_config cfg = t_config(nx, ny, nz, bcs, 1.0 / 32, 1.0 / 64, 1.0 / 16, 0);
    const ref_grid g = ref_grid_from_config(&cfg);
    const int64_t elems = ref_elems(&g);
    uint8_t *mask = malloc((size_t)elems);
    double *beta = malloc((size_t)elems * sizeof(double));
    double *u = malloc((size_t)elems * sizeof(double)), *f = malloc((size_t)elems * sizeof(double));
    double *want = malloc((size_t)elems * sizeof(double)), *bound = malloc((size_t)elems * sizeof(double));
    double *fbd = malloc((size_t)elems * sizeof(double)), *means = NULL;
    float *uf = malloc((size_t)elems * sizeof(float)), *uf2 = malloc((size_t)elems * sizeof(float));
    float *fbf = malloc((size_t)elems * sizeof(float));
    memset(mask, 0xee, (size_t)elems);
    mref_shape(&g, shape, mask);
    mref_beta_field(&g, beta_kind, jump, beta);
    double fscale = 0;
    for (int a = 0; a < g.dims; ++a)
        fscale += 2.0 / (g.h[a] * g.h[a]);
    REF_FOR_EACH_INTERIOR(&g, i, j, k) {
        const int64_t p = ref_idx(&g, i, j, k);
        beta[p] = (double)(float)beta[p];
    }
    const mref m = mref_make(&g, mask, beta);
    mref_regions R;
    if (!mref_find_regions(&m, &R)) {
        CHECK(0, "allocation");
        return;
    }
    means = malloc((size_t)(R.count + 1) * sizeof(double));
    double worst = 0, worst_res = 0;
    for (int rb = 0; rb < 2; ++rb) {
        const double omega = rb ? 1.4 : 0.9;
        mref_random_data(&m, u, f, fscale, 0.5);
        for (int64_t e = 0; e < elems; ++e) {
            u[e] = (double)(float)u[e];
            f[e] = (double)(float)f[e];
            uf[e] = (float)u[e];
        }
        if (!rb) {
            /* the residual: the GPU test's float tolerance */
            double mag_r = 0, mag_b = 0;
            const ref_norms nm = mref_residual(&m, &R, u, f, NULL, &mag_r, &mag_b);
            const double tol = 8.0 * FLT_EPSILON * (mag_r + nm.relative * mag_b) / nm.rhs_norm;
            worst_res = t_max_nan(worst_res, fabs(float_residual(&m, &R, u, f) - nm.relative) / tol);
        }
        memcpy(want, u, (size_t)elems * sizeof(double));
        mref_step(&m, &R, want, f, omega, rb);
        mref_step_bound(&m, &R, u, f, omega, rb, bound);
        /* float: b's means in double, f - mean rounded */
        mref_project_rhs(&m, &R, u, f, fbd);
        for (int64_t e = 0; e < elems; ++e)
            fbf[e] = (float)fbd[e];
        memcpy(uf2, uf, (size_t)elems * sizeof(float)); /* the ghosts: float_relax writes the interior */
        float_relax(&m, uf, uf2, fbf, (float)omega, rb ? REF_RED : REF_ALL_POINTS);
        if (rb) {
            memcpy(uf, uf2, (size_t)elems * sizeof(float));
            float_relax(&m, uf, uf2, fbf, (float)omega, REF_BLACK);
        }
        for (int64_t e = 0; e < elems; ++e)
            fbd[e] = uf2[e];
        mref_project_u(&m, &R, fbd, means);
        REF_FOR_EACH_INTERIOR(&g, i, j, k) {
            const int64_t p = ref_idx(&g, i, j, k);
            if (mask[p] != PGPU_CELL_FLUID)
                continue;
            const double got = (double)(float)fbd[p]; /* u - mean rounded to float */
            const double diff = fabs(got - want[p]);
            worst = t_max_nan(worst, diff == 0 ? 0 : diff / (16.0 * FLT_EPSILON * bound[p]));
        }
    }
    CHECK(worst <= 1.0 && worst > 0.0,
          "float steps %s %s beta %d jump %g %s: max |float - ref| / (16 eps_f bound) = %.3f",
          mref_shape_name(shape), bcs, beta_kind, jump, nz > 1 ? "3D" : "2D", worst);
    CHECK(worst_res <= 1.0 && worst_res > 0.0,
          "float residual %s %s beta %d jump %g %s: |float rel - ref rel| / (8 eps_f (||r|| scale + rel ||b|| "
          "scale) / ||b||) = %.3f", mref_shape_name(shape), bcs, beta_kind, jump, nz > 1 ? "3D" : "2D", worst_res);
    mref_regions_free(&R);
    free(mask), free(beta), free(u), free(f), free(want), free(bound), free(fbd), free(means);
    free(uf), free(uf2), free(fbf);
}

int main(void)
{
    t_seed();
    box_equivalence(5, 7, 3, 0);
    box_equivalence(5, 7, 3, 1);
    box_equivalence(7, 5, 1, 0);
    box_equivalence(7, 5, 1, 1);
    box_equivalence(1, 3, 1, 1); /* a periodic axis of one point couples to nothing */

    by_hand_2d();
    by_hand_3d();

    random_masks(5, 4, 3);
    random_masks(7, 5, 1);
    random_masks(6, 7, 1);

    /* the pocket: outer region, the shell's inside in two halves, the one-point pocket */
    pocket(13, 12, 11, "DDDDDD", 4, 3);
    pocket(13, 12, 11, "NNNNNN", 4, 4);
    pocket(13, 11, 12, "PPPPPP", 4, 4);
    pocket(13, 11, 12, "PPNNDN", 4, 3);
    pocket(17, 13, 1, "DDDD", 4, 3);
    pocket(17, 13, 1, "NNPP", 4, 4);

    for (int shape = 0; shape < MREF_SHAPE_COUNT; ++shape) {
        fixed_point(17, 13, 11, shape % 2 ? "DNPPNN" : "NNNNNN", shape, MREF_BETA_SMOOTH, 0);
        fixed_point(19, 15, 1, shape % 2 ? "PPND" : "DDNN", shape, MREF_BETA_JUMP, 1e3);
    }

    float_step(19, 13, 11, "DDDDDD", MREF_SHAPE_SPHERE, MREF_BETA_ONE, 0);
    float_step(19, 13, 11, "NNNNNN", MREF_SHAPE_POCKET, MREF_BETA_SMOOTH, 0);
    float_step(17, 13, 11, "PPDDNN", MREF_SHAPE_WALLS, MREF_BETA_JUMP, 1e3);
    float_step(17, 13, 11, "NNNNPP", MREF_SHAPE_POOL, MREF_BETA_JUMP, 1e6);
    float_step(23, 17, 1, "DNPP", MREF_SHAPE_STAIRCASE, MREF_BETA_RANDOM, 0);
    float_step(23, 17, 1, "NNNN", MREF_SHAPE_POCKET, MREF_BETA_JUMP, 1e6);
    float_step(23, 17, 1, "NNNN", MREF_SHAPE_NONE, MREF_BETA_SMOOTH, 0);
    return t_finish("test_mask_reference");
}
