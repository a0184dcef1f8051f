/* test_mask_exact.c -- masks and variable coefficients against exact discrete
 * solutions: u drawn at random (mean zero on every singular region), f = A u
 * formed on the host in double by the header's definition of the operator
 * (mask_ref.h),
 * solved on the GPU from zero; the error must be at rounding level, solid
 * points (NaN in u and f) and Dirichlet points untouched, the singular
 * regions counted.  A float solve gets the data rounded to float, whose
 * exact solution differs from u by up to a few 1e-6 of max |u| on these
 * grids (the rounding of f times the inverse's norm): its error is measured
 * against that solution, the same rounded data solved in double to 1e-12
 * (the double rows check that solve against u).  Exit 77 without a device.
 * test_mask_exact [TEXT]: only the rows whose name holds TEXT;
 * PGPU_TEST_SEED=S repeats a run's data (with the same TEXT);
 * PGPU_TEST_TRACE=1 prints every convergence check. */
#include "poisson_gpu.h"
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mask_ref.h"

static int NX, NY, NZ, SY, SZ, IS3D;
static pgpu_preconditioner PRE = PGPU_PRECOND_DEFAULT; /* for the Krylov rows */
static pgpu_bc BC[6];
static double BSCALE = 1, USCALE = 1; /* beta's and u's scales */
#define IDX(i, j, k) ((i) + (j) * (long)SY + (k) * (long)SZ)

static double rnd(void) { return rand() / (double)RAND_MAX; }
static const char *ONLY; /* test_mask_exact TEXT: the rows whose name holds TEXT */
/* PGPU_TEST_TRACE set: every convergence check (float's correction checks
 * show NaN for the norm and the correction's ratio to u for the residual) */
static void trace(void *user, int it, double rn, double rel)
{
    (void)user;
    printf("    check %3d: norm %.3e, relative %.3e\n", it, rn, rel);
}

/* The exact solution of the data rounded to float (u's held and ghost
 * values, f, beta): those values in double, solved by double V-cycles to
 * 1e-12 on the same mask; NULL if that solve fails (the row then fails). */
static double *rounded_solution(const pgpu_config *cf, long n, const unsigned char *m, const double *bt,
                                const double *ue, const double *f, const void *dm)
{
    pgpu_config c = *cf;
    c.flags = PGPU_VCYCLE | PGPU_DOUBLE;
    c.tolerance = 1e-12;
    c.max_iterations = 500;
    double *hu = malloc(n * 8), *hf = malloc(n * 8), *hb = bt ? malloc(n * 8) : NULL;
    for (long p = 0; p < n; ++p) {
        hu[p] = m[p] == 0 ? 0.0 : (double)(float)ue[p];
        hf[p] = (double)(float)f[p];
        if (bt) hb[p] = (double)(float)bt[p];
    }
    for (long p = 0; p < n; ++p) { /* ghosts: their data, rounded */
        const int i = (int)(p % SY), j = (int)((p / SY) % (NY + 2)), k = IS3D ? (int)(p / SZ) : 1;
        if (i == 0 || i == NX + 1 || j == 0 || j == NY + 1 || k == 0 || k == NZ + 1) hu[p] = (double)(float)ue[p];
    }
    void *du = NULL, *df = NULL, *db = NULL;
    pgpu_solver *s = NULL;
    pgpu_report r;
    int ok = !cudaMalloc(&du, n * 8) && !cudaMalloc(&df, n * 8) && !cudaMemcpy(du, hu, n * 8, cudaMemcpyHostToDevice) &&
             !cudaMemcpy(df, hf, n * 8, cudaMemcpyHostToDevice) && !pgpu_create(&c, &s) &&
             !(dm && pgpu_set_mask(s, dm));
    if (ok && bt)
        ok = !cudaMalloc(&db, n * 8) && !cudaMemcpy(db, hb, n * 8, cudaMemcpyHostToDevice) && !pgpu_set_coefficients(s, db);
    ok = ok && pgpu_solve(s, du, df, &r) == PGPU_SUCCESS && !cudaMemcpy(hu, du, n * 8, cudaMemcpyDeviceToHost);
    if (!ok) printf("   (the rounded data's solution in double failed: %s)\n", pgpu_last_error(s));
    pgpu_destroy(s);
    cudaFree(du); cudaFree(df); cudaFree(db);
    free(hf); free(hb);
    if (!ok) { free(hu); return NULL; }
    return hu;
}

static int run(const char *name, int nx, int ny, int nz, const char *bcs, int masktype, double jump, unsigned method,
               unsigned prec, double tol, double bound)
{
    if (ONLY && !strstr(name, ONLY)) return 0;
    NX = nx; NY = ny; NZ = nz; IS3D = nz > 1;
    SY = nx + 2; SZ = (nx + 2) * (ny + 2);
    long n = IS3D ? (long)SZ * (nz + 2) : (long)SY * (ny + 2);
    for (int f = 0; f < 6; ++f) BC[f] = bcs[f] == 'N' ? PGPU_BC_NEUMANN : bcs[f] == 'P' ? PGPU_BC_PERIODIC : PGPU_BC_DIRICHLET;
    pgpu_config c = pgpu_config_default(nx, ny, nz);
    for (int f = 0; f < 6; ++f) c.bc[f] = BC[f];
    c.flags = method | prec;
    c.tolerance = tol;
    c.max_iterations = method == PGPU_JACOBI || method == PGPU_RBGS ? 200000 : 200;
    if (method & (PGPU_CG | PGPU_BICGSTAB)) {
        c.preconditioner = PRE;
        if (PRE == PGPU_PRECOND_NONE || PRE == PGPU_PRECOND_JACOBI) c.max_iterations = 20000;
    }
    unsigned char *m = calloc(n, 1);
    double *bt = jump > 0 ? malloc(n * sizeof(double)) : NULL;
    double *ue = calloc(n, sizeof(double)), *f = calloc(n, sizeof(double));
    for (long p = 0; p < n; ++p) { ue[p] = (rnd() - 0.5) * USCALE; if (bt) bt[p] = 1; }
    for (int k = IS3D; k <= (IS3D ? nz : 0); ++k)
        for (int j = 1; j <= ny; ++j)
            for (int i = 1; i <= nx; ++i) {
                long p = IDX(i, j, k);
                double x = (i - 0.5) / nx, y = (j - 0.5) / ny, z = IS3D ? (k - 0.5) / nz : 0.5;
                if (masktype == 1) { /* sphere */
                    double r2 = (x - .5) * (x - .5) + (y - .5) * (y - .5) + (IS3D ? (z - .5) * (z - .5) : 0);
                    if (r2 < 0.3 * 0.3) m[p] = 2;
                } else if (masktype == 2) { /* air above pool */
                    if ((IS3D ? z : y) > 0.7) m[p] = 1;
                    if (x < 0.2 && y < 0.3) m[p] = 2;
                } else if (masktype == 3) { /* thin wall with a gap + staircase */
                    if (i == nx / 2 && (IS3D ? k : j) < 3 * (IS3D ? nz : ny) / 4) m[p] = 2;
                    if (i + j < nx / 3) m[p] = 2;
                }
                if (masktype >= 4) {
                    double r2 = (x - .5) * (x - .5) + (y - .5) * (y - .5) + (IS3D ? (z - .5) * (z - .5) : 0);
                    if (r2 > 0.2 * 0.2 && r2 < 0.3 * 0.3) m[p] = 2;
                    if (masktype == 5 && r2 <= 0.2 * 0.2 && i == nx / 2) m[p] = 2;
                }
                if (bt) bt[p] = ((IS3D ? z : y) > 0.5) ? jump : 1.0;
                if (bt && masktype == 0) bt[p] = 1 + 0.5 * sin(3 * x) * cos(2 * y) + (((IS3D ? z : y) > 0.5) ? jump : 0);
                if (bt) bt[p] *= BSCALE;
                if (m[p] == 2) ue[p] = NAN;
            }
    if (masktype >= 4) { /* mean zero on each singular region */
        double sum[3] = {0, 0, 0}, cnt[3] = {0, 0, 0};
        for (int pass = 0; pass < 2; ++pass)
            for (int k = IS3D; k <= (IS3D ? nz : 0); ++k)
                for (int j = 1; j <= ny; ++j)
                    for (int i = 1; i <= nx; ++i) {
                        long p = IDX(i, j, k);
                        if (m[p]) continue;
                        double x = (i - 0.5) / nx, y = (j - 0.5) / ny, z = IS3D ? (k - 0.5) / nz : 0.5;
                        double r2 = (x - .5) * (x - .5) + (y - .5) * (y - .5) + (IS3D ? (z - .5) * (z - .5) : 0);
                        int reg = r2 <= 0.04 ? (i < nx / 2 ? 0 : 1) : 2;
                        if (masktype == 4 && reg == 1) reg = 0;
                        if (masktype == 4 && reg == 2) continue; /* Dirichlet box: not singular */
                        if (pass == 0) { sum[reg] += ue[p]; cnt[reg] += 1; }
                        else ue[p] -= sum[reg] / cnt[reg];
                    }
    }
    /* f = A u with u's data (held values, ghosts): the host reference's operator */
    const ref_grid g = ref_grid_from_config(&c);
    const mref M = mref_make(&g, m, bt);
    mref_apply(&M, ue, f, REF_ALL_TERMS);
    for (long p = 0; p < n; ++p) if (m[p] == 2) f[p] = NAN;
    /* device */
    size_t es = prec == PGPU_FLOAT ? 4 : 8;
    void *hu = malloc(n * es), *hf = malloc(n * es), *hb = malloc(n * es);
    for (long p = 0; p < n; ++p) {
        int interior_fluid = 0;
        /* initial u: zero at fluid interior, data elsewhere */
        (void)interior_fluid;
    }
    for (long p = 0; p < n; ++p) {
        double uv = ue[p];
        if (es == 4) { ((float *)hu)[p] = (float)uv; ((float *)hf)[p] = (float)f[p]; if (bt) ((float *)hb)[p] = (float)bt[p]; }
        else { ((double *)hu)[p] = uv; ((double *)hf)[p] = f[p]; if (bt) ((double *)hb)[p] = bt[p]; }
    }
    for (int k = IS3D; k <= (IS3D ? nz : 0); ++k)
        for (int j = 1; j <= ny; ++j)
            for (int i = 1; i <= nx; ++i) {
                long p = IDX(i, j, k);
                if (m[p] == 0) { if (es == 4) ((float *)hu)[p] = 0; else ((double *)hu)[p] = 0; }
            }
    void *du, *df, *db = NULL; unsigned char *dm;
    cudaMalloc(&du, n * es); cudaMalloc(&df, n * es); cudaMalloc((void **)&dm, n);
    cudaMemcpy(du, hu, n * es, cudaMemcpyHostToDevice);
    cudaMemcpy(df, hf, n * es, cudaMemcpyHostToDevice);
    cudaMemcpy(dm, m, n, cudaMemcpyHostToDevice);
    pgpu_solver *s = NULL;
    pgpu_status st = pgpu_create(&c, &s);
    if (st) { printf("%s: create %s %s\n", name, pgpu_status_string(st), pgpu_last_error(NULL)); return 1; }
    if (masktype) { st = pgpu_set_mask(s, dm); if (st) { printf("%s: set_mask %s %s\n", name, pgpu_status_string(st), pgpu_last_error(s)); return 1; } }
    if (bt) {
        cudaMalloc(&db, n * es); cudaMemcpy(db, hb, n * es, cudaMemcpyHostToDevice);
        st = pgpu_set_coefficients(s, db);
        if (st) { printf("%s: set_coef %s %s\n", name, pgpu_status_string(st), pgpu_last_error(s)); return 1; }
    }
    pgpu_report r;
    if (getenv("PGPU_TEST_TRACE")) pgpu_set_monitor(s, trace, NULL);
    st = pgpu_solve(s, du, df, &r);
    cudaMemcpy(hu, du, n * es, cudaMemcpyDeviceToHost);
    /* float: the reference is the rounded data's solution (see the top) */
    double *ur = es == 4 ? rounded_solution(&c, n, m, bt, ue, f, masktype ? dm : NULL) : ue;
    double emax = 0, umax = 0, eu = 0; int untouched = 1;
    for (int k = IS3D; k <= (IS3D ? nz : 0); ++k)
        for (int j = 1; j <= ny; ++j)
            for (int i = 1; i <= nx; ++i) {
                long p = IDX(i, j, k);
                double v = es == 4 ? ((float *)hu)[p] : ((double *)hu)[p];
                if (m[p] == 0) {
                    emax = fmax(emax, ur ? fabs(v - ur[p]) : INFINITY);
                    eu = fmax(eu, fabs(v - ue[p]));
                    umax = fmax(umax, fabs(ue[p]));
                }
                else if (m[p] == 2) untouched &= isnan(v);
                else untouched &= (v == (es == 4 ? (double)(float)ue[p] : ue[p]));
            }
    int ok = st == PGPU_SUCCESS && emax <= bound * umax && untouched;
    printf("%-34s %s it %3d rel %.2e err %.2e proj %d untouched %d %6.2f ms  %s %s", name, pgpu_status_string(st),
           r.iterations, r.relative_residual, emax / umax, r.projected, untouched, r.seconds * 1e3, ok ? "ok" : "FAIL",
           st ? pgpu_last_error(s) : "");
    if (es == 4) printf(" (against the unrounded u: %.2e)", eu / umax);
    printf("\n");
    if (ur != ue) free(ur);
    pgpu_destroy(s);
    cudaFree(du); cudaFree(df); cudaFree(dm); if (db) cudaFree(db);
    free(m); free(bt); free(ue); free(f); free(hu); free(hf); free(hb);
    return !ok;
}

/* Smooth beta alone in double on a grid whose level 0 is smoothed by the
 * tiled walk, where a cycle may end in the handle's second array (the
 * coarse correction folded into the post-smoothing): a solve to a
 * tolerance (each cycle a graph of its own, captured, then replayed by a
 * second solve) and a fixed solve of as many cycles (one graph) must give
 * the same u -- each replay bit for bit, the two solves to 1e-12 of max
 * |u| -- for an odd and an even count, each ending with its iterate in the
 * caller's u. */
static int fold_consistency(int nx, int ny, int nz)
{
    const long sy = nx + 2, sz = sy * (ny + 2), n = sz * (nz + 2);
    double *hb = malloc(n * sizeof(double)), *hf = malloc(n * sizeof(double)), *h[4];
    for (int q = 0; q < 4; ++q) h[q] = malloc(n * sizeof(double));
    for (long p = 0; p < n; ++p) {
        const long i = p % sy, j = (p / sy) % (ny + 2), k = p / sz;
        hb[p] = 1 + 0.5 * sin(3.0 * i / nx) * cos(2.0 * j / ny) * (1 + 0.3 * k / nz);
        hf[p] = rnd() - 0.5;
    }
    void *du = NULL, *df = NULL, *db = NULL;
    int fails = 0, its[2] = {0, 0};
    if (cudaMalloc(&du, n * 8) || cudaMalloc(&df, n * 8) || cudaMalloc(&db, n * 8) ||
        cudaMemcpy(df, hf, n * 8, cudaMemcpyHostToDevice) || cudaMemcpy(db, hb, n * 8, cudaMemcpyHostToDevice)) {
        printf("fold %dx%dx%d: device arrays: FAIL\n", nx, ny, nz);
        fails = 1;
    }
    for (int tol = 0; tol < 2 && !fails; ++tol) { /* 3e-6: N cycles; 1e-7: N + 1 */
        pgpu_config c = pgpu_config_default(nx, ny, nz);
        c.flags = PGPU_VCYCLE | PGPU_DOUBLE;
        c.tolerance = tol ? 1e-7 : 3e-6;
        c.check_interval = 1;
        pgpu_solver *s = NULL, *x = NULL;
        if (pgpu_create(&c, &s) || pgpu_set_coefficients(s, db)) {
            printf("fold %dx%dx%d: create %s: FAIL\n", nx, ny, nz, pgpu_last_error(s));
            pgpu_destroy(s);
            fails = 1;
            break;
        }
        pgpu_report r[2];
        for (int q = 0; q < 2; ++q) { /* capture, replay */
            cudaMemset(du, 0, n * 8);
            if (pgpu_solve(s, du, df, &r[q])) ++fails;
            cudaMemcpy(h[q], du, n * 8, cudaMemcpyDeviceToHost);
        }
        its[tol] = r[0].iterations;
        c.flags |= PGPU_FIXED;
        c.max_iterations = r[0].iterations;
        if (pgpu_create(&c, &x) || pgpu_set_coefficients(x, db)) {
            printf("fold %dx%dx%d: create fixed %s: FAIL\n", nx, ny, nz, pgpu_last_error(x));
            pgpu_destroy(s);
            pgpu_destroy(x);
            fails = 1;
            break;
        }
        for (int q = 2; q < 4; ++q) {
            cudaMemset(du, 0, n * 8);
            if (pgpu_solve(x, du, df, NULL)) ++fails;
            cudaMemcpy(h[q], du, n * 8, cudaMemcpyDeviceToHost);
        }
        double diff = 0, umax = 0;
        int bits = 1; /* the replays' u bit for bit their captures' */
        for (long p = 0; p < n; ++p) {
            umax = fmax(umax, fabs(h[0][p]));
            diff = fmax(diff, fabs(h[2][p] - h[0][p]));
            bits &= !memcmp(&h[1][p], &h[0][p], 8) && !memcmp(&h[3][p], &h[2][p], 8);
        }
        const int same = r[1].iterations == r[0].iterations && bits && diff <= 1e-12 * umax && umax > 0 && !fails;
        printf("fold beta V d %dx%dx%d tol %.0e: %d cycles (replay %d), rel %.2e, replays same bits %d, fixed against "
               "tolerance %.2e of max |u|  %s\n",
               nx, ny, nz, c.tolerance, r[0].iterations, r[1].iterations, r[0].relative_residual, bits, diff / umax,
               same ? "ok" : "FAIL");
        fails += !same;
        pgpu_destroy(s);
        pgpu_destroy(x);
    }
    if (!fails && its[0] % 2 == its[1] % 2)
        printf("fold %dx%dx%d: (both counts %s: one parity checked)\n", nx, ny, nz, its[0] % 2 ? "odd" : "even");
    cudaFree(du); cudaFree(df); cudaFree(db);
    free(hb); free(hf);
    for (int q = 0; q < 4; ++q) free(h[q]);
    return fails != 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) ONLY = argv[1];
    int nd = 0;
    if (cudaGetDeviceCount(&nd) != cudaSuccess || nd == 0) {
        printf("test_mask_exact: SKIPPED: no CUDA device\n");
        return 77;
    }
    unsigned seed = (unsigned)time(NULL);
    if (getenv("PGPU_TEST_SEED")) seed = (unsigned)strtoul(getenv("PGPU_TEST_SEED"), NULL, 10);
    printf("seed %u (PGPU_TEST_SEED=%u repeats this run)\n", seed, seed);
    srand(seed);
    int fails = 0;
    fails += run("pocket VC d 33^3", 33, 33, 33, "DDDDDD", 4, 0.0, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("pockets+box NNNNNN VC d 32^3", 32, 32, 32, "NNNNNN", 5, 0.0, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("pockets+box NNNNNN FMG d 31^3", 31, 31, 31, "NNNNNN", 5, 0.0, PGPU_FMG, PGPU_DOUBLE, 1e-11, 1e-8);
    fails += run("pockets NNPPNN RBGS d 2D 29x23", 29, 23, 1, "NNPPNN", 5, 0.0, PGPU_RBGS, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("box-allfluid-beta1 VC d", 33, 29, 31, "DDDDDD", 0, 0.0, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("sphere VC d 37^3", 37, 37, 37, "DDDDDD", 1, 0.0, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("sphere FMG d 64^3", 64, 64, 64, "DDDDDD", 1, 0.0, PGPU_FMG, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("pool VC d 41x33x29 NNNNDD", 41, 33, 29, "NNNNNN", 2, 0.0, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("wall VC d 2D 61x47", 61, 47, 1, "DDNNDD", 3, 0.0, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("smooth beta VC d 33^3", 33, 33, 33, "DDDDDD", 0, 0.0001, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("jump 1e3 VC d 32^3", 32, 32, 32, "DDDDDD", 0, 1e3, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 3e-8);
    fails += run("jump 1e3 sphere VC d 31^3 PPD", 31, 31, 31, "PPPPDD", 1, 1e3, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 3e-8);
    fails += run("jump 1e6 pool VC d 32^3", 32, 32, 32, "DDDDDD", 2, 1e6, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 3e-7);
    fails += run("sphere RBGS d 17^3", 17, 17, 17, "DDDDDD", 1, 0.0, PGPU_RBGS, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("sphere JAC d 2D 23x19", 23, 19, 1, "DDDDDD", 1, 0.0, PGPU_JACOBI, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("sphere VC f 63^3", 63, 63, 63, "DDDDDD", 1, 0.0, PGPU_VCYCLE, PGPU_FLOAT, 0, 1e-4);
    /* (a tolerance of 1e-6 leaves 0.9e-4 to 1.0e-4 of max |u| here: the
     * pool's smoothest error mode is that much larger than its residual) */
    fails += run("pool FMG f 64^3", 64, 64, 64, "NNNNNN", 2, 0.0, PGPU_FMG, PGPU_FLOAT, 1e-6, 3e-4);
    /* The default FMG in float on masks: the pass, then V-cycles to float's
     * own stop, at float's accuracy (two fixed cycles after the pass left
     * 1e-2 of max |u| on such grids and said success) */
    fails += run("sphere FMG f 63^3", 63, 63, 63, "DDDDDD", 1, 0.0, PGPU_FMG, PGPU_FLOAT, 0, 5e-6);
    fails += run("pool FMG f 41x33x29 NNNNNN", 41, 33, 29, "NNNNNN", 2, 0.0, PGPU_FMG, PGPU_FLOAT, 0, 5e-6);
    fails += run("pockets+box FMG f 31^3 NNNNNN", 31, 31, 31, "NNNNNN", 5, 0.0, PGPU_FMG, PGPU_FLOAT, 0, 5e-6);
    fails += run("pockets FMG f 2D 29x23 NNPPNN", 29, 23, 1, "NNPPNN", 5, 0.0, PGPU_FMG, PGPU_FLOAT, 0, 5e-6);
    fails += run("wall FMG f 2D 61x47 DDNNDD", 61, 47, 1, "DDNNDD", 3, 0.0, PGPU_FMG, PGPU_FLOAT, 0, 5e-6);
    fails += run("pocket FMG f 23x19x17", 23, 19, 17, "DDDDDD", 4, 0.0, PGPU_FMG, PGPU_FLOAT, 0, 5e-6);
    fails += run("jump 1e3 sphere FMG f 31^3 PPD", 31, 31, 31, "PPPPDD", 1, 1e3, PGPU_FMG, PGPU_FLOAT, 0, 5e-6);
    fails += run("sphere VC d 128^3", 128, 128, 128, "DDDDDD", 1, 0.0, PGPU_VCYCLE, PGPU_DOUBLE, 1e-10, 1e-7);
    /* 2^22 points and more: two red-black iterations per pass, with the mask */
    fails += run("sphere VC d 171^3 NNDDNN", 171, 171, 171, "NNDDNN", 1, 0.0, PGPU_VCYCLE, PGPU_DOUBLE, 1e-10, 1e-7);
    fails += run("sphere VC f 176^3", 176, 176, 176, "DDDDDD", 1, 0.0, PGPU_VCYCLE, PGPU_FLOAT, 0, 1e-4);
    /* beta on larger grids (the faces formed from beta's reciprocals in
     * double), with and without a mask; beta scaled far from 1 (in double
     * beyond the reciprocals' range, 2^-900 .. 2^900: the faces by division;
     * u scaled so that b stays in the range solves take) */
    fails += run("smooth beta VC d 167^3 NNDDNN", 167, 167, 167, "NNDDNN", 0, 0.0001, PGPU_VCYCLE, PGPU_DOUBLE, 1e-10, 1e-7);
    fails += run("smooth beta VC f 165x170x163", 165, 170, 163, "DDDDDD", 0, 0.0001, PGPU_VCYCLE, PGPU_FLOAT, 0, 1e-4);
    fails += run("smooth beta VC f 164x166x160 NNDDNN", 164, 166, 160, "NNDDNN", 0, 0.0001, PGPU_VCYCLE, PGPU_FLOAT, 0, 1e-4);
    fails += run("jump 1e3 sphere VC d 163^3", 163, 163, 163, "DDDDDD", 1, 1e3, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 3e-7);
    fails += run("jump 1e3 sphere VC f 166^3", 166, 166, 166, "DDDDDD", 1, 1e3, PGPU_VCYCLE, PGPU_FLOAT, 0, 1e-3);
    BSCALE = 1e32;
    fails += run("smooth beta 1e32 VC f 47^3", 47, 47, 47, "DDDDDD", 0, 0.0001, PGPU_VCYCLE, PGPU_FLOAT, 0, 1e-4);
    /* beta alone smoothed from its stored fractions (2^22 points and more):
     * level 0 without 1 / beta (float beta beyond 2^100), and level 1 */
    fails += run("smooth beta 1e32 VC f 165x161x163", 165, 161, 163, "DDDDDD", 0, 0.0001, PGPU_VCYCLE, PGPU_FLOAT, 0, 1e-4);
    BSCALE = 1;
    fails += run("smooth beta VC f 325x323x321", 325, 323, 321, "DDDDDD", 0, 0.0001, PGPU_VCYCLE, PGPU_FLOAT, 0, 1e-4);
    BSCALE = 1e-272, USCALE = 1e150;
    fails += run("smooth beta 1e-272 VC d 33^3", 33, 33, 33, "DDDDDD", 0, 0.0001, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("smooth beta 1e-272 VC d 163x165x167", 163, 165, 167, "DDDDDD", 0, 0.0001, PGPU_VCYCLE, PGPU_DOUBLE, 1e-10, 1e-7);
    BSCALE = 1e272, USCALE = 1e-135;
    fails += run("jump 1e3 beta 1e272 VC d 35x33x31", 35, 33, 31, "DDDDDD", 0, 1e3, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 3e-8);
    BSCALE = 1, USCALE = 1;
    /* beta alone in double where level 0's correction folds into its
     * post-smoothing: odd and prime sizes, mixed faces, a 1e3 jump */
    fails += run("smooth beta VC d 173x163x167", 173, 163, 167, "DDDDDD", 0, 0.0001, PGPU_VCYCLE, PGPU_DOUBLE, 1e-10, 1e-7);
    fails += run("smooth beta VC d 161x181x167 DNNDDN", 161, 181, 167, "DNNDDN", 0, 0.0001, PGPU_VCYCLE, PGPU_DOUBLE, 1e-10, 1e-7);
    fails += run("jump 1e3 beta VC d 163x165x161", 163, 165, 161, "DDDDDD", 0, 1e3, PGPU_VCYCLE, PGPU_DOUBLE, 1e-12, 3e-7);
    fails += fold_consistency(167, 163, 171);
    /* Krylov methods on the same classes: the cases where V-cycles alone
     * diverge (beta jumps next to Neumann faces) included. */
    const unsigned CG = PGPU_CG, PCG = PGPU_CG | PGPU_PIPELINED, BI = PGPU_BICGSTAB;
    fails += run("CG sphere d 37^3", 37, 37, 37, "DDDDDD", 1, 0.0, CG, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("pipelined CG sphere d 37^3", 37, 37, 37, "DDDDDD", 1, 0.0, PCG, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("BiCGStab sphere d 37^3", 37, 37, 37, "DDDDDD", 1, 0.0, BI, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("CG pockets+box NNNNNN d 32^3", 32, 32, 32, "NNNNNN", 5, 0.0, CG, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("BiCGStab pockets NNPPNN d 2D 29x23", 29, 23, 1, "NNPPNN", 5, 0.0, BI, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("CG pool d 41x33x29 NNNNNN", 41, 33, 29, "NNNNNN", 2, 0.0, CG, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("CG wall d 2D 61x47", 61, 47, 1, "DDNNDD", 3, 0.0, CG, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("CG jump 1e3 d 32^3", 32, 32, 32, "DDDDDD", 0, 1e3, CG, PGPU_DOUBLE, 1e-12, 3e-8);
    fails += run("CG jump 1e3 d 33^3 NNNNDD", 33, 33, 33, "NNNNDD", 0, 1e3, CG, PGPU_DOUBLE, 1e-12, 3e-8);
    fails += run("pipelined CG jump 1e3 d 33^3 NNNNDD", 33, 33, 33, "NNNNDD", 0, 1e3, PCG, PGPU_DOUBLE, 1e-11, 3e-7);
    fails += run("CG jump 1e6 pool d 32^3 NNNNNN", 32, 32, 32, "NNNNNN", 2, 1e6, CG, PGPU_DOUBLE, 1e-12, 3e-7);
    /* (BiCGStab minimises no error norm: at the same residual its error on
     * the 1e6 jump is larger than CG's) */
    fails += run("BiCGStab jump 1e6 pool d 32^3", 32, 32, 32, "DDDDDD", 2, 1e6, BI, PGPU_DOUBLE, 1e-12, 3e-5);
    fails += run("CG jump 1e3 sphere d 31^3 PPD", 31, 31, 31, "PPPPDD", 1, 1e3, CG, PGPU_DOUBLE, 1e-12, 3e-8);
    fails += run("CG sphere f 63^3", 63, 63, 63, "DDDDDD", 1, 0.0, CG, PGPU_FLOAT, 0, 1e-4);
    PRE = PGPU_PRECOND_FFT;
    fails += run("CG/fft sphere d 37^3", 37, 37, 37, "DDDDDD", 1, 0.0, CG, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("CG/fft pool d 32^3 NNNNNN", 32, 32, 32, "NNNNNN", 2, 0.0, CG, PGPU_DOUBLE, 1e-12, 1e-9);
    PRE = PGPU_PRECOND_JACOBI;
    fails += run("CG/jacobi sphere d 2D 61x47", 61, 47, 1, "DDDDDD", 1, 0.0, CG, PGPU_DOUBLE, 1e-12, 1e-9);
    fails += run("BiCGStab/jacobi jump 1e3 d 2D 41x37", 41, 37, 1, "DDNNDD", 0, 1e3, BI, PGPU_DOUBLE, 1e-12, 1e-6);
    PRE = PGPU_PRECOND_NONE;
    fails += run("CG/none pockets d 2D 29x23 NNPPNN", 29, 23, 1, "NNPPNN", 5, 0.0, CG, PGPU_DOUBLE, 1e-12, 1e-9);
    PRE = PGPU_PRECOND_DEFAULT;
    fails += run("CG sphere d 128^3", 128, 128, 128, "DDDDDD", 1, 0.0, CG, PGPU_DOUBLE, 1e-10, 1e-7);
    printf("%d failed\n", fails);
    return fails != 0;
}
