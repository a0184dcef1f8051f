/* common.c -- see common.h. */
#define _POSIX_C_SOURCE 200809L /* getpid, clock_gettime under -std=c99 */

#include "common.h"

#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

/* ---- checks --------------------------------------------------------------- */

static int checks_run, checks_failed;

int t_check(int ok, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    ++checks_run;
    if (ok)
        printf("ok    ");
    else {
        ++checks_failed;
        printf("FAIL  %s:%d: ", file, line);
    }
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return ok;
}

void t_note(const char *fmt, ...)
{
    va_list ap;
    printf("      ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

int t_finish(const char *test_name)
{
    if (checks_run == 0) {
        /* A test that checked nothing has not shown anything. */
        printf("%s: FAILED: no checks ran\n", test_name);
        return T_EXIT_FAIL;
    }
    printf("%s: %d checks, %d failed%s\n", test_name, checks_run, checks_failed,
           checks_failed ? "" : ": PASSED");
    fflush(stdout);
    return checks_failed ? T_EXIT_FAIL : T_EXIT_PASS;
}

/* ---- device ----------------------------------------------------------------- */

int t_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the error so that later calls start clean */
        return 0;
    }
    return n;
}

void t_require_device(const char *test_name)
{
    if (t_device_count() == 0) {
        printf("%s: SKIPPED: no CUDA device\n", test_name);
        fflush(stdout);
        exit(T_EXIT_SKIP);
    }
}

void *t_dev_alloc(size_t bytes)
{
    void *d = NULL;
    cudaError_t e = cudaMalloc(&d, bytes);
    if (e != cudaSuccess) {
        CHECK(0, "cudaMalloc(%zu): %s", bytes, cudaGetErrorString(e));
        return NULL;
    }
    return d;
}

void *t_dev_upload(const void *host, size_t bytes)
{
    void *d = t_dev_alloc(bytes);
    if (!d)
        return NULL;
    cudaError_t e = cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        CHECK(0, "cudaMemcpy to device: %s", cudaGetErrorString(e));
        cudaFree(d);
        return NULL;
    }
    return d;
}

int t_dev_download(void *host, const void *dev, size_t bytes)
{
    /* cudaMemcpy on the legacy default stream waits for work on blocking
     * streams, not for non-blocking ones: callers synchronise those. */
    cudaError_t e = cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        CHECK(0, "cudaMemcpy to host: %s", cudaGetErrorString(e));
        return 0;
    }
    return 1;
}

void t_dev_free(void *dev)
{
    if (dev)
        cudaFree(dev);
}

pgpu_config t_config(int64_t nx, int64_t ny, int64_t nz, const char *bc_letters, double hx,
                     double hy, double hz, unsigned flags)
{
    pgpu_config c = pgpu_config_default(nx, ny, nz);
    const size_t letters = strlen(bc_letters);
    c.hx = hx;
    c.hy = hy;
    c.hz = hz;
    c.flags = flags;
    for (int f = 0; f < 6; ++f) {
        const char l = (size_t)f < letters ? bc_letters[f] : 'D';
        c.bc[f] = l == 'N' ? PGPU_BC_NEUMANN : l == 'P' ? PGPU_BC_PERIODIC : PGPU_BC_DIRICHLET;
    }
    return c;
}

pgpu_solver *t_create(const pgpu_config *cfg, const char *what)
{
    pgpu_solver *s = NULL;
    const pgpu_status st = pgpu_create(cfg, &s);
    if (st != PGPU_SUCCESS) {
        CHECK(0, "%s: pgpu_create: %s: %s", what, pgpu_status_string(st), pgpu_last_error(NULL));
        pgpu_destroy(s);
        return NULL;
    }
    return s;
}

int t_sync(const char *what)
{
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        CHECK(0, "%s: cudaDeviceSynchronize: %s", what, cudaGetErrorString(e));
        return 0;
    }
    return 1;
}

/* ---- random numbers: splitmix64 ------------------------------------------------- */

static uint64_t rng_state;
static int rng_seeded;

uint64_t t_seed(void)
{
    static uint64_t seed;
    if (rng_seeded)
        return seed;
    const char *env = getenv("PGPU_TEST_SEED");
    if (env && *env) {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    }
    rng_state = seed;
    rng_seeded = 1;
    printf("      seed %llu (PGPU_TEST_SEED=%llu repeats this run)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

uint64_t t_rand_u64(void)
{
    if (!rng_seeded)
        t_seed();
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t t_rand_at(uint64_t state)
{
    t_seed();
    const uint64_t was = rng_state;
    rng_state = state;
    return was;
}

double t_rand(double lo, double hi)
{
    const double unit = (double)(t_rand_u64() >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
    return lo + (hi - lo) * unit;
}

/* ---- precision ---------------------------------------------------------------- */

unsigned t_precision(unsigned flags)
{
    return (flags & PGPU_PRECISION_MASK) == PGPU_FLOAT ? PGPU_FLOAT : PGPU_DOUBLE;
}

const char *t_precision_name(unsigned prec)
{
    return prec == PGPU_FLOAT ? "float" : "double";
}

size_t t_word(unsigned prec)
{
    return prec == PGPU_FLOAT ? sizeof(float) : sizeof(double);
}

double t_eps(unsigned prec)
{
    return prec == PGPU_FLOAT ? (double)FLT_EPSILON : DBL_EPSILON;
}

double t_round(unsigned prec, double v)
{
    return prec == PGPU_FLOAT ? (double)(float)v : v;
}

void t_to_typed(unsigned prec, const double *src, void *dst, int64_t n)
{
    if (prec == PGPU_FLOAT) {
        float *d = dst;
        for (int64_t e = 0; e < n; ++e)
            d[e] = (float)src[e];
    } else {
        memcpy(dst, src, (size_t)n * sizeof(double));
    }
}

void t_from_typed(unsigned prec, const void *src, double *dst, int64_t n)
{
    if (prec == PGPU_FLOAT) {
        const float *s = src;
        for (int64_t e = 0; e < n; ++e)
            dst[e] = (double)s[e];
    } else {
        memcpy(dst, src, (size_t)n * sizeof(double));
    }
}

double t_max_nan(double a, double b)
{
    if (a != a || b != b)
        return NAN;
    return a > b ? a : b;
}

/* ---- names ------------------------------------------------------------------------ */

const char *t_method_name(unsigned flags)
{
    switch (flags & PGPU_METHOD_MASK) {
    case PGPU_JACOBI: return "jacobi";
    case PGPU_RBGS: return "rbgs";
    case PGPU_VCYCLE: return (flags & PGPU_WCYCLE) ? "wcycle" : "vcycle";
    case 0:
    case PGPU_FMG: return "fmg";
    case PGPU_FFT: return "fft";
    case PGPU_CG: return (flags & PGPU_PIPELINED) ? "pipelined-cg" : "cg";
    case PGPU_BICGSTAB: return "bicgstab";
    default: return "?";
    }
}

const char *t_bc_letters(const ref_grid *g, char *buf)
{
    static const char letter[3] = {'D', 'N', 'P'};
    int f;
    for (f = 0; f < 2 * g->dims; ++f)
        buf[f] = (g->bc[f] >= 0 && g->bc[f] <= 2) ? letter[g->bc[f]] : '?';
    buf[f] = '\0';
    return buf;
}

/* ---- a test problem ------------------------------------------------------------------ */

int t_problem_init(t_problem *P, const pgpu_config *cfg)
{
    memset(P, 0, sizeof *P);
    P->g = ref_grid_from_config(cfg);
    P->prec = t_precision(cfg->flags);
    P->elems = ref_elems(&P->g);
    P->bytes = (size_t)P->elems * t_word(P->prec);
    P->u = t_problem_array(P, NULL);
    P->f = t_problem_array(P, NULL);
    P->u_sent = malloc(P->bytes);
    if (!P->u || !P->f || !P->u_sent) {
        CHECK(0, "host allocation of %lld elements", (long long)P->elems);
        t_problem_free(P);
        return 0;
    }
    for (int64_t e = 0; e < P->elems; ++e) {
        int face = -1;
        switch (ref_classify(&P->g, e, &face)) {
        case REF_INTERIOR:
            break;
        case REF_FACE_GHOST:
            P->f[e] = T_POISON_NAN; /* f's ghost layer is never read */
            if (P->g.bc[face] == PGPU_BC_PERIODIC)
                P->u[e] = T_POISON_NAN; /* not data */
            break;
        case REF_EDGE_GHOST:
            P->f[e] = T_POISON_NAN;
            P->u[e] = T_POISON_FINITE;
            break;
        case REF_PADDING:
            P->f[e] = T_POISON_NAN;
            P->u[e] = T_POISON_NAN;
            break;
        }
    }
    return 1;
}

void t_problem_randomize(t_problem *P)
{
    for (int64_t e = 0; e < P->elems; ++e) {
        int face = -1;
        switch (ref_classify(&P->g, e, &face)) {
        case REF_INTERIOR:
            P->f[e] = t_rand(-1.0, 1.0);
            P->u[e] = t_rand(-1.0, 1.0);
            break;
        case REF_FACE_GHOST:
            if (P->g.bc[face] != PGPU_BC_PERIODIC)
                P->u[e] = t_rand(-1.0, 1.0);
            break;
        default:
            break;
        }
    }
}

int t_problem_upload(t_problem *P)
{
    for (int64_t e = 0; e < P->elems; ++e) {
        P->u[e] = t_round(P->prec, P->u[e]);
        P->f[e] = t_round(P->prec, P->f[e]);
    }
    void *typed = malloc(P->bytes);
    if (!typed) {
        CHECK(0, "host allocation");
        return 0;
    }
    t_dev_free(P->d_u);
    t_dev_free(P->d_f);
    t_to_typed(P->prec, P->u, P->u_sent, P->elems);
    t_to_typed(P->prec, P->f, typed, P->elems);
    P->d_u = t_dev_upload(P->u_sent, P->bytes);
    P->d_f = t_dev_upload(typed, P->bytes);
    free(typed);
    /* A copy from pageable memory may still be landing when cudaMemcpy
     * returns; a solve on a non-blocking stream would not wait for it. */
    return P->d_u && P->d_f && t_sync("upload");
}

int t_problem_download(t_problem *P, double *u_out, void *typed_out)
{
    void *typed = typed_out ? typed_out : malloc(P->bytes);
    if (!typed) {
        CHECK(0, "host allocation");
        return 0;
    }
    int ok = t_dev_download(typed, P->d_u, P->bytes);
    if (ok && u_out)
        t_from_typed(P->prec, typed, u_out, P->elems);
    if (!typed_out)
        free(typed);
    return ok;
}

int t_problem_solve(t_problem *P, pgpu_solver *s, const char *what, pgpu_report *rep, pgpu_status *st,
                    double *u_out)
{
    memset(rep, 0, sizeof *rep);
    *st = PGPU_ERROR_INVALID_ARGUMENT;
    if (!s || !t_problem_upload(P))
        return 0;
    *st = pgpu_solve(s, P->d_u, P->d_f, rep);
    return t_sync(what) && t_problem_download(P, u_out, NULL);
}

int64_t t_problem_changed_outside(const t_problem *P, const void *typed)
{
    const size_t w = t_word(P->prec);
    const unsigned char *a = P->u_sent, *b = typed;
    int64_t changed = 0;
    for (int64_t e = 0; e < P->elems; ++e)
        if (ref_classify(&P->g, e, NULL) != REF_INTERIOR && memcmp(a + e * w, b + e * w, w) != 0)
            ++changed;
    return changed;
}

void t_problem_free(t_problem *P)
{
    free(P->u);
    free(P->f);
    free(P->u_sent);
    t_dev_free(P->d_u);
    t_dev_free(P->d_f);
    memset(P, 0, sizeof *P);
}

double *t_problem_array(const t_problem *P, const double *src)
{
    double *a = calloc((size_t)P->elems, sizeof(double));
    if (a && src)
        memcpy(a, src, (size_t)P->elems * sizeof(double));
    return a;
}

/* ---- fixed stationary solves against the host reference ------------------------------ */

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

void t_check_stationary(const pgpu_config *cfg_in, const char *name, int iterations,
                        void (*prepare)(pgpu_solver *s, void *ctx), void *ctx)
{
    pgpu_config cfg = *cfg_in;
    cfg.max_iterations = iterations;
    const unsigned method = cfg.flags & PGPU_METHOD_MASK, prec = t_precision(cfg.flags);
    const int rbgs = method == PGPU_RBGS;
    const double omega = cfg.omega;
    char what[200], letters[8];
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    snprintf(what, sizeof what, "%s %s %s x%d [%lldx%lldx%lld %s w=%.2f]", name,
             t_method_name(cfg.flags), t_precision_name(prec), iterations, (long long)cfg.nx,
             (long long)cfg.ny, (long long)cfg.nz, t_bc_letters(&P.g, letters), omega);

    t_problem_randomize(&P);
    pgpu_solver *s = t_create(&cfg, what);
    if (s && prepare)
        prepare(s, ctx);
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
