/* bench.c -- the poisson_gpu benchmark: one program, one table, one run.
 *
 * It first measures the device's copy bandwidth (a device-to-device copy,
 * bytes read plus bytes written), then times each scenario with CUDA events
 * on a stream of its own (warm-up first, then the median of repeats; u is
 * reset from a saved initial guess before every repeat, outside the timed
 * region) and prints one row per scenario:
 *
 *   time_ms   median device time of 'iters' iterations (1: per sweep, cycle,
 *             FMG pass or FFT solve)
 *   Mpts/s    interior points * iters / time
 *   GB/s      effective: words per point * word size * points * iters / time,
 *             3 words per sweep, RBGS iteration or V-cycle (read u, read f,
 *             write u), 2 per FMG pass or FFT solve (read f, write u)
 *   %copy     GB/s over the measured copy bandwidth
 *   error     max |u - u_exact| over interior points ('-': no exact solution)
 *   relres    ||b - A u|| / ||b|| from pgpu_residual after the timed runs
 *
 * Scenarios: Jacobi/RBGS sweeps and seed 000's problem; V-cycle, FMG,
 * V-cycle to 1e-10 and the coarse-level share; FFT in 3D against a cuFFT
 * R2C+C2R pair, and seed 001's 2D sizes replayed from a CUDA graph;
 * precision: float FMG, float V-cycles to the default tolerance and the
 * float FFT against an exact discrete solution at 511^3 and 1023^3 (1030^3
 * for the FFT's cuFFT route), PGPU_MIXED against PGPU_DOUBLE to 1e-10 at
 * 512^3, and the default (checked) path against PGPU_FIXED; jumps: FMG on
 * a sphere of held (Dirichlet) values against converged V-cycles and the
 * box, a ball of beta 1e3 and 1e6 by V-cycles, CG and the default FMG
 * (against CG to 1e-11), the ball beside a mask (a solid block, Dirichlet
 * cells above a free surface) by V-cycles and CG, and a random beta on
 * anisotropic grids.  Methods the library cannot serve print 'unsupported'.
 *
 *   bench [--quick] [--csv FILE] [--results FILE] [--only GROUP]
 *     --quick  small sizes only (128^3 for the 3D scenarios, 127^3 and 255^3
 *              for precision), fewer repeats
 *     --csv    also write the rows as CSV (header line + one line per row)
 *     --results  also write them as a Markdown page with the device, the
 *              date and the command: bench/results/<machine>.md holds the
 *              run the documentation quotes (gpu-check.sh writes it)
 *     --only   one group of scenarios after the copy: sweeps, multigrid (with
 *              the sweeps its sweep-equivalents need), fft, masks (a solid
 *              sphere, setting a mask, smooth beta), krylov (CG and
 *              BiCGStab on the box, per iteration, two-phase beta, the
 *              sphere), precision, fft2d (the small 2D FFT solves of
 *              fft alone), or jumps (held values on a sphere, a beta
 *              inclusion and setting it, random beta on anisotropic grids)
 *              (default: all)
 *
 * Exit status: 0 done, 77 no CUDA device, 1 a CUDA call failed, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <cufft.h>

#include "poisson_gpu.h"
#include "results.h"

/* ---- checks ------------------------------------------------------------- */

#define CK(call)                                                                     \
    do {                                                                             \
        cudaError_t e_ = (call);                                                     \
        if (e_ != cudaSuccess) {                                                     \
            fprintf(stderr, "bench: %s failed at %s:%d: %s\n", #call, __FILE__,      \
                    __LINE__, cudaGetErrorString(e_));                               \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

#define CKFFT(call)                                                                  \
    do {                                                                             \
        cufftResult r_ = (call);                                                     \
        if (r_ != CUFFT_SUCCESS) {                                                   \
            fprintf(stderr, "bench: %s failed at %s:%d: cufftResult %d\n", #call,    \
                    __FILE__, __LINE__, (int)r_);                                    \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

/* ---- settings ----------------------------------------------------------- */

static const double PI = 3.14159265358979323846;

enum { MAXREP = 32 };          /* event pairs */
enum { SWEEP_K = 20 };         /* iterations per timed PGPU_FIXED solve (issue 2) */
enum { VC_K = 5 };             /* cycles per timed V-cycle solve */
enum { RHO_KMAX = 8 };         /* cycles of the convergence-factor run */
enum { GRAPH_SOLVES = 100 };   /* solves per captured graph (2D) */
enum { MAXN = 1024 };          /* largest axis length (tables) */
static const double ROW_BUDGET_S = 6.0; /* aim for one timed row, seconds */

static int g_quick;
static int g_warm = 2, g_reps = 10;
static FILE *g_csv;
static FILE *g_md; /* --results: the same rows as a Markdown table */

static cudaStream_t g_stream;
static cudaEvent_t g_ev0[MAXREP], g_ev1[MAXREP];
static void *d_u, *d_f, *d_u0; /* device arrays, g_cap bytes each */
static void *h_buf;            /* pinned host array, g_cap bytes */
static size_t g_cap;
static double g_copy_gbs;      /* measured copy bandwidth, GB/s */
static size_t g_l2;            /* L2 size, bytes */

/* ---- grids and problems ------------------------------------------------- */

typedef struct {
    int64_t nx, ny, nz; /* interior points; nz == 1: 2D */
    int esz;            /* 4: float, 8: double */
} grid_t;

static grid_t grid3(int64_t n, int esz) { grid_t g = {n, n, n, esz}; return g; }
static grid_t grid2(int64_t n, int esz) { grid_t g = {n, n, 1, esz}; return g; }
static int64_t npoints(const grid_t *g) { return g->nx * g->ny * g->nz; }
static int64_t nelems(const grid_t *g)
{
    return (g->nx + 2) * (g->ny + 2) * (g->nz == 1 ? 1 : g->nz + 2);
}
static size_t nbytes(const grid_t *g) { return (size_t)nelems(g) * (size_t)g->esz; }
static int g_mixed; /* double arrays solved with PGPU_MIXED (prob_config, new_row) */
static unsigned pflag(int esz) { return esz == 4 ? PGPU_FLOAT : g_mixed ? PGPU_MIXED : PGPU_DOUBLE; }
static const char *pname(int esz) { return esz == 4 ? "f32" : g_mixed ? "mixed" : "f64"; }
static int same_grid(const grid_t *a, const grid_t *b)
{
    return a->nx == b->nx && a->ny == b->ny && a->nz == b->nz && a->esz == b->esz;
}
static void grid_name(const grid_t *g, char *s, size_t n)
{
    if (g->nz == 1)
        snprintf(s, n, "%lldx%lld", (long long)g->nx, (long long)g->ny);
    else if (g->nx == g->ny && g->ny == g->nz)
        snprintf(s, n, "%lld^3", (long long)g->nx);
    else
        snprintf(s, n, "%lldx%lldx%lld", (long long)g->nx, (long long)g->ny, (long long)g->nz);
}

/* Manufactured problems:
 *  PROB_DIR: zero Dirichlet on the unit cube/square, h = 1/(n+1), nodes at
 *            x = i h, u = prod sin(pi x), f = d pi^2 u (d = dimensions).
 *  PROB_PER: periodic on every axis, h = 1/n, nodes at x = (i-1) h,
 *            u = prod sin(2 pi x), f = 4 d pi^2 u (mean zero). */
enum { PROB_DIR = 0, PROB_PER = 1, PROB_ROUGH = 2 };
enum { INIT_ZERO = 0, INIT_RAND = 1 };

static double g_tx[MAXN + 2], g_ty[MAXN + 2], g_tz[MAXN + 2]; /* exact u per axis */
static int g_fprob = -1;   /* problem whose f is in d_f */
static grid_t g_fgrid;
static int g_uinit = -1;   /* initial guess in d_u0 */
static grid_t g_ugrid;

static void axis_table(double *t, int64_t n, int prob)
{
    memset(t, 0, sizeof(double) * (size_t)(n + 2));
    for (int64_t i = 1; i <= n; i++)
        t[i] = prob == PROB_DIR ? sin(PI * (double)i / (double)(n + 1))
                                : sin(2.0 * PI * (double)(i - 1) / (double)n);
}

static double prob_h(int prob, int64_t n) { return prob != PROB_PER ? 1.0 / (double)(n + 1) : 1.0 / (double)n; }

/* A config for prob on g with the given flags, on the bench's stream. */
static pgpu_config prob_config(int prob, const grid_t *g, unsigned flags)
{
    pgpu_config c = pgpu_config_default(g->nx, g->ny, g->nz);
    c.hx = prob_h(prob, g->nx);
    c.hy = prob_h(prob, g->ny);
    c.hz = g->nz == 1 ? 1.0 : prob_h(prob, g->nz);
    for (int i = 0; i < 6; i++)
        c.bc[i] = prob != PROB_PER ? PGPU_BC_DIRICHLET : PGPU_BC_PERIODIC;
    c.flags = flags | pflag(g->esz);
    c.stream = g_stream;
    return c;
}

static void h_store(int esz, int64_t idx, double v)
{
    if (esz == 4)
        ((float *)h_buf)[idx] = (float)v;
    else
        ((double *)h_buf)[idx] = v;
}

static double h_load(int esz, int64_t idx)
{
    return esz == 4 ? (double)((const float *)h_buf)[idx] : ((const double *)h_buf)[idx];
}

static void upload(void *dst, size_t bytes)
{
    CK(cudaMemcpyAsync(dst, h_buf, bytes, cudaMemcpyHostToDevice, g_stream));
    CK(cudaStreamSynchronize(g_stream));
}

/* f of prob on g into d_f (ghosts 0); also sets the exact-solution tables. */
static void set_rhs(int prob, const grid_t *g)
{
    if (prob == g_fprob && same_grid(g, &g_fgrid))
        return;
    if (prob == PROB_ROUGH) { /* every mode: f uniform in [-1, 1), no exact solution */
        int64_t sy = g->nx + 2, sz = sy * (g->ny + 2);
        int64_t k0 = g->nz == 1 ? 0 : 1, k1 = g->nz == 1 ? 0 : g->nz;
        uint64_t x = 0x2545f4914f6cdd1dull;
        memset(h_buf, 0, nbytes(g));
        for (int64_t k = k0; k <= k1; k++)
            for (int64_t j = 1; j <= g->ny; j++)
                for (int64_t i = 1; i <= g->nx; i++) {
                    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                    h_store(g->esz, i + j * sy + k * sz, (double)(x >> 11) * 0x1p-52 - 1.0);
                }
        upload(d_f, nbytes(g));
        g_fprob = prob;
        g_fgrid = *g;
        return;
    }
    int dims = g->nz == 1 ? 2 : 3;
    axis_table(g_tx, g->nx, prob);
    axis_table(g_ty, g->ny, prob);
    if (g->nz == 1) {
        memset(g_tz, 0, sizeof g_tz);
        g_tz[0] = 1.0;
    } else {
        axis_table(g_tz, g->nz, prob);
    }
    double c = (prob == PROB_DIR ? 1.0 : 4.0) * dims * PI * PI;
    int64_t sy = g->nx + 2, sz = sy * (g->ny + 2);
    int64_t k0 = g->nz == 1 ? 0 : 1, k1 = g->nz == 1 ? 0 : g->nz;
    memset(h_buf, 0, nbytes(g));
    for (int64_t k = k0; k <= k1; k++)
        for (int64_t j = 1; j <= g->ny; j++) {
            double a = c * g_tz[k] * g_ty[j];
            for (int64_t i = 1; i <= g->nx; i++)
                h_store(g->esz, i + j * sy + k * sz, a * g_tx[i]);
        }
    upload(d_f, nbytes(g));
    g_fprob = prob;
    g_fgrid = *g;
}

/* The initial guess into d_u0: zero, or uniform in [-1, 1) in the interior;
 * ghosts (the zero Dirichlet data) 0. */
static void set_guess(int init, const grid_t *g)
{
    if (init == g_uinit && same_grid(g, &g_ugrid))
        return;
    int64_t sy = g->nx + 2, sz = sy * (g->ny + 2);
    int64_t k0 = g->nz == 1 ? 0 : 1, k1 = g->nz == 1 ? 0 : g->nz;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    memset(h_buf, 0, nbytes(g));
    if (init == INIT_RAND)
        for (int64_t k = k0; k <= k1; k++)
            for (int64_t j = 1; j <= g->ny; j++)
                for (int64_t i = 1; i <= g->nx; i++) {
                    x ^= x << 13; x ^= x >> 7; x ^= x << 17; /* xorshift64 */
                    h_store(g->esz, i + j * sy + k * sz, (double)(x >> 11) * 0x1p-52 - 1.0);
                }
    upload(d_u0, nbytes(g));
    g_uinit = init;
    g_ugrid = *g;
}

/* d_u = d_u0, on the stream, outside any timed region. */
static void reset_u(const grid_t *g)
{
    CK(cudaMemcpyAsync(d_u, d_u0, nbytes(g), cudaMemcpyDeviceToDevice, g_stream));
}

/* max |u - u_exact| over interior points of d_u (problem in d_f). */
static double max_error(const grid_t *g)
{
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaMemcpyAsync(h_buf, d_u, nbytes(g), cudaMemcpyDeviceToHost, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    int64_t sy = g->nx + 2, sz = sy * (g->ny + 2);
    int64_t k0 = g->nz == 1 ? 0 : 1, k1 = g->nz == 1 ? 0 : g->nz;
    double e = 0.0;
    for (int64_t k = k0; k <= k1; k++)
        for (int64_t j = 1; j <= g->ny; j++) {
            double a = g_tz[k] * g_ty[j];
            for (int64_t i = 1; i <= g->nx; i++) {
                double d = fabs(h_load(g->esz, i + j * sy + k * sz) - a * g_tx[i]);
                if (!(d <= e)) /* NaN propagates */
                    e = d;
            }
        }
    return e;
}

static double residual(pgpu_solver *s)
{
    double r = NAN;
    CK(cudaStreamSynchronize(g_stream));
    if (pgpu_residual(s, d_u, d_f, &r) != PGPU_SUCCESS)
        return NAN;
    return r;
}

/* ---- timing ------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Reads the reps event pairs after a sync; the median in ms. */
static double events_median(int reps)
{
    double t[MAXREP];
    CK(cudaStreamSynchronize(g_stream));
    for (int r = 0; r < reps; r++) {
        float ms = 0.0f;
        CK(cudaEventElapsedTime(&ms, g_ev0[r], g_ev1[r]));
        t[r] = ms;
    }
    return median(t, reps);
}

static int solve_ok(pgpu_status st, int accept_nc)
{
    return st == PGPU_SUCCESS || (accept_nc && st == PGPU_ERROR_NOT_CONVERGED);
}

/* Median device time (ms) of one pgpu_solve: warm warm-up calls, then reps
 * timed ones, u reset from d_u0 before each.  Returns the first status that
 * is not accepted (PGPU_SUCCESS otherwise); rep holds the last report. */
static pgpu_status time_solve(pgpu_solver *s, const grid_t *g, int warm, int reps,
                              int accept_nc, double *ms, pgpu_report *rep)
{
    pgpu_status st;
    double t0 = now_s(), per = 0.0;
    for (int w = 0; w < warm; w++) {
        reset_u(g);
        st = pgpu_solve(s, d_u, d_f, rep);
        if (!solve_ok(st, accept_nc))
            return st;
        CK(cudaStreamSynchronize(g_stream));
        per = (now_s() - t0) / (w + 1);
        if (per * (w + 1) > ROW_BUDGET_S / 3)
            break; /* a slow solve: one warm-up is enough */
    }
    /* Fewer repeats for slow solves, so that one row stays near
     * ROW_BUDGET_S: at least 3, or 1 when one solve takes over a third. */
    if (per > 0 && per * reps > ROW_BUDGET_S) {
        int fit = (int)(ROW_BUDGET_S / per);
        int lo = per > ROW_BUDGET_S / 3 ? 1 : (reps < 3 ? reps : 3);
        reps = fit < lo ? lo : fit;
    }
    for (int r = 0; r < reps; r++) {
        reset_u(g);
        CK(cudaEventRecord(g_ev0[r], g_stream));
        st = pgpu_solve(s, d_u, d_f, rep);
        CK(cudaEventRecord(g_ev1[r], g_stream));
        if (!solve_ok(st, accept_nc))
            return st;
    }
    *ms = events_median(reps);
    return PGPU_SUCCESS;
}

/* ---- rows --------------------------------------------------------------- */

typedef struct {
    char scen[16], grid[24], method[12], prec[8];
    int iters;      /* iterations the time covers */
    double ms;      /* median device time, ms */
    int64_t pts;    /* interior points (0: no rate) */
    double bytes_per_iter; /* effective bytes per iteration (0: none) */
    double err, res;       /* NaN: '-' */
    const char *fail;      /* NULL, "unsupported" or "error" */
    char note[160];
} row_t;

static row_t new_row(const char *scen, const grid_t *g, const char *method)
{
    row_t r;
    memset(&r, 0, sizeof r);
    snprintf(r.scen, sizeof r.scen, "%s", scen);
    snprintf(r.method, sizeof r.method, "%s", method);
    if (g) {
        grid_name(g, r.grid, sizeof r.grid);
        snprintf(r.prec, sizeof r.prec, "%s", pname(g->esz));
        r.pts = npoints(g);
    }
    r.iters = 1;
    r.ms = NAN;
    r.err = r.res = NAN;
    return r;
}

static void set_words(row_t *r, const grid_t *g, double words)
{
    r->bytes_per_iter = words * (double)g->esz * (double)npoints(g);
}

#ifdef __GNUC__
static void note_add(row_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif

static void note_add(row_t *r, const char *fmt, ...)
{
    size_t len = strlen(r->note);
    if (len + 2 >= sizeof r->note)
        return;
    if (len > 0) {
        r->note[len++] = ';';
        r->note[len++] = ' ';
        r->note[len] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note + len, sizeof r->note - len, fmt, ap);
    va_end(ap);
}

static void mark_fail(row_t *r, pgpu_status st, const char *detail)
{
    r->fail = st == PGPU_ERROR_UNSUPPORTED ? "unsupported" : "error";
    r->ms = NAN;
    if (detail && *detail)
        note_add(r, "%s: %.100s", pgpu_status_string(st), detail);
    else
        note_add(r, "%s", pgpu_status_string(st));
}

/* A handle for c, or NULL with the row marked failed. */
static pgpu_solver *create_or_mark(const pgpu_config *c, row_t *r)
{
    pgpu_solver *s = NULL;
    const pgpu_status st = pgpu_create(c, &s);
    if (st != PGPU_SUCCESS)
        mark_fail(r, st, pgpu_last_error(NULL));
    return s;
}

static void fmt_num(char *s, size_t n, const char *fmt, double v)
{
    if (isnan(v))
        snprintf(s, n, "-");
    else
        snprintf(s, n, fmt, v);
}

static void csv_num(FILE *f, const char *fmt, double v)
{
    if (!isnan(v))
        fprintf(f, fmt, v);
    fputc(',', f);
}

static void print_header(void)
{
    printf("%-9s %-9s %-7s %-4s %5s %11s %9s %7s %5s %9s %9s  %s\n", "scenario", "grid",
           "method", "prec", "iters", "time_ms", "Mpts/s", "GB/s", "%copy", "error", "relres",
           "note");
    if (g_csv)
        fprintf(g_csv, "scenario,grid,method,precision,iterations,time_ms,mpoints_per_s,"
                       "eff_gb_s,pct_copy,error,rel_residual,status,note\n");
    if (g_md)
        fprintf(g_md, "| scenario | grid | method | prec | iters | time ms | Mpts/s | GB/s | %% copy | error | "
                      "relres | note |\n|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n");
}

static void print_row(const row_t *r)
{
    int ok = r->fail == NULL && !isnan(r->ms) && r->ms > 0.0;
    double sec = ok ? r->ms * 1e-3 : NAN;
    double mpts = ok && r->pts > 0 ? (double)r->pts * r->iters / sec * 1e-6 : NAN;
    double gbs = ok && r->bytes_per_iter > 0 ? r->bytes_per_iter * r->iters / sec * 1e-9 : NAN;
    double pct = !isnan(gbs) && g_copy_gbs > 0 ? 100.0 * gbs / g_copy_gbs : NAN;
    char it[16], t[24], m[24], b[24], p[24], e[24], s[24];
    if (r->fail)
        snprintf(it, sizeof it, "-");
    else
        snprintf(it, sizeof it, "%d", r->iters);
    if (r->fail)
        snprintf(t, sizeof t, "%s", r->fail);
    else
        fmt_num(t, sizeof t, "%.4g", r->ms);
    fmt_num(m, sizeof m, "%.0f", mpts);
    fmt_num(b, sizeof b, "%.0f", gbs);
    fmt_num(p, sizeof p, "%.1f", pct);
    fmt_num(e, sizeof e, "%.2e", r->err);
    fmt_num(s, sizeof s, "%.2e", r->res);
    printf("%-9s %-9s %-7s %-4s %5s %11s %9s %7s %5s %9s %9s  %s\n", r->scen, r->grid,
           r->method, r->prec[0] ? r->prec : "-", it, t, m, b, p, e, s, r->note);
    fflush(stdout);
    if (g_csv) {
        fprintf(g_csv, "%s,%s,%s,%s,", r->scen, r->grid, r->method, r->prec);
        if (r->fail)
            fputc(',', g_csv);
        else
            fprintf(g_csv, "%d,", r->iters);
        csv_num(g_csv, "%.6g", r->fail ? NAN : r->ms);
        csv_num(g_csv, "%.6g", mpts);
        csv_num(g_csv, "%.6g", gbs);
        csv_num(g_csv, "%.4g", pct);
        csv_num(g_csv, "%.6e", r->err);
        csv_num(g_csv, "%.6e", r->res);
        fprintf(g_csv, "%s,\"", r->fail ? r->fail : "ok");
        for (const char *c = r->note; *c; c++) {
            if (*c == '"')
                fputc('"', g_csv);
            fputc(*c, g_csv);
        }
        fprintf(g_csv, "\"\n");
        fflush(g_csv);
    }
    if (g_md) {
        fprintf(g_md, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | ", r->scen, r->grid, r->method,
                r->prec[0] ? r->prec : "-", it, t, m, b, p, e, s);
        for (const char *c = r->note; *c; c++) {
            if (*c == '|')
                fputc('\\', g_md);
            fputc(*c, g_md);
        }
        fprintf(g_md, " |\n");
        fflush(g_md);
    }
}

/* ---- remembered times (for sweep-equivalents and shares) ---------------- */

typedef struct { int64_t n; int esz; double ms; } memo_t;
static memo_t g_sweep[16], g_vcyc[16];
static int g_nsweep, g_nvcyc;

static void memo_put(memo_t *m, int *cnt, int64_t n, int esz, double ms)
{
    if (*cnt < 16) {
        m[*cnt].n = n;
        m[*cnt].esz = esz;
        m[*cnt].ms = ms;
        (*cnt)++;
    }
}

static double memo_get(const memo_t *m, int cnt, int64_t n, int esz)
{
    for (int i = 0; i < cnt; i++)
        if (m[i].n == n && m[i].esz == esz)
            return m[i].ms;
    return NAN;
}

static void note_sweep_eq(row_t *r, const grid_t *g, double ms)
{
    double sw = memo_get(g_sweep, g_nsweep, g->nx, g->esz);
    if (!isnan(sw) && sw > 0 && !isnan(ms))
        note_add(r, "sweep-eq %.1f", ms / sw);
}

static void note_l2(row_t *r, const grid_t *g)
{
    if (g_l2 > 0 && 3 * nbytes(g) <= g_l2)
        note_add(r, "u,f fit in L2");
}

/* ---- copy bandwidth ----------------------------------------------------- */

static void bench_copy(size_t bytes)
{
    CK(cudaMemsetAsync(d_u0, 0x3c, bytes, g_stream));
    for (int w = 0; w < 3; w++)
        CK(cudaMemcpyAsync(d_u, d_u0, bytes, cudaMemcpyDeviceToDevice, g_stream));
    int reps = 20;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(g_ev0[r], g_stream));
        CK(cudaMemcpyAsync(d_u, d_u0, bytes, cudaMemcpyDeviceToDevice, g_stream));
        CK(cudaEventRecord(g_ev1[r], g_stream));
    }
    double ms = events_median(reps);
    g_copy_gbs = 2.0 * (double)bytes / (ms * 1e-3) * 1e-9;
    g_uinit = -1; /* d_u0 overwritten */
    printf("copy bandwidth: %.0f GB/s (cudaMemcpyAsync D2D of %.2f GiB, read + write, median of %d)\n\n",
           g_copy_gbs, (double)bytes / (1 << 30), reps);
    if (g_md)
        fprintf(g_md, "Copy bandwidth: %.0f GB/s (cudaMemcpyAsync D2D of %.2f GiB, read + write, median of %d).\n\n",
                g_copy_gbs, (double)bytes / (1 << 30), reps);

    row_t r = new_row("copy", NULL, "memcpy");
    snprintf(r.grid, sizeof r.grid, "%.0fMiB", (double)bytes / (1 << 20));
    r.ms = ms;
    r.bytes_per_iter = 2.0 * (double)bytes;
    note_add(&r, "D2D copy, bytes read + written");
    print_header();
    print_row(&r);
}

/* ---- issue 2: sweeps ---------------------------------------------------- */

static const char *mname(unsigned m)
{
    switch (m) {
    case PGPU_JACOBI: return "jacobi";
    case PGPU_RBGS: return "rbgs";
    case PGPU_VCYCLE: return "vcycle";
    case PGPU_FMG: return "fmg";
    case PGPU_FFT: return "fft";
    case PGPU_CG: return "cg";
    case PGPU_CG | PGPU_PIPELINED: return "pipe-cg";
    case PGPU_BICGSTAB: return "bicgstab";
    default: return "?";
    }
}

/* A PGPU_FIXED solve of k iterations of method on prob, timed; the row's
 * time is per 'per' iterations (per == k: the whole solve). */
static double run_fixed(const char *scen, unsigned method, int prob, const grid_t *g, int init,
                        int k, int per, double words, int want_err, row_t *out)
{
    row_t r = new_row(scen, g, mname(method));
    set_words(&r, g, words);
    set_rhs(prob, g);
    set_guess(init, g);
    pgpu_config c = prob_config(prob, g, method | PGPU_FIXED);
    c.max_iterations = k;
    pgpu_status st = PGPU_SUCCESS;
    pgpu_solver *s = create_or_mark(&c, &r);
    if (!s) {
        *out = r;
        return NAN;
    }
    double ms = NAN;
    pgpu_report rep;
    st = time_solve(s, g, g_warm, g_reps, 0, &ms, &rep);
    if (st != PGPU_SUCCESS) {
        mark_fail(&r, st, pgpu_last_error(s));
    } else {
        r.iters = per;
        r.ms = ms * per / k;
        if (want_err) {
            r.err = max_error(g);
            r.res = residual(s);
        }
    }
    pgpu_destroy(s);
    *out = r;
    return r.ms;
}

static void bench_sweeps(const int64_t *sizes, int nsizes)
{
    for (int si = 0; si < nsizes; si++)
        for (int pi = 0; pi < 2; pi++) {
            grid_t g = grid3(sizes[si], pi ? 8 : 4);
            unsigned methods[2] = {PGPU_JACOBI, PGPU_RBGS};
            for (int mi = 0; mi < 2; mi++) {
                row_t r;
                double ms = run_fixed("sweep", methods[mi], PROB_DIR, &g, INIT_RAND, SWEEP_K, 1,
                                      3.0, 0, &r);
                if (!r.fail) {
                    note_add(&r, "%d-iter fixed solve / %d", SWEEP_K, SWEEP_K);
                    note_l2(&r, &g);
                    if (methods[mi] == PGPU_JACOBI)
                        memo_put(g_sweep, &g_nsweep, g.nx, g.esz, ms);
                    else
                        note_sweep_eq(&r, &g, ms);
                }
                print_row(&r);
            }
        }
}

/* Seed 000: 512^3 float, zero start, 41 Jacobi sweeps and 21 RBGS iterations. */
static void bench_seed000(int64_t n)
{
    grid_t g = grid3(n, 4);
    row_t r;
    run_fixed("seed000", PGPU_JACOBI, PROB_DIR, &g, INIT_ZERO, 41, 41, 3.0, 1, &r);
    if (!r.fail)
        note_add(&r, "u0 = 0; seed: 630 ms on a Titan XP");
    print_row(&r);
    run_fixed("seed000", PGPU_RBGS, PROB_DIR, &g, INIT_ZERO, 21, 21, 3.0, 1, &r);
    if (!r.fail)
        note_add(&r, "u0 = 0; seed: 476 ms on a Titan XP");
    print_row(&r);
}

/* ---- issue 3: multigrid ------------------------------------------------- */

/* Convergence factor per V-cycle from a random start: residuals after
 * 0..RHO_KMAX single-cycle PGPU_FIXED solves chained on u; the geometric
 * mean reduction over cycles 3..8, cut where the residual nears rounding
 * level (below thr * r0).  NaN when it cannot be measured. */
static double conv_factor(const grid_t *g, int *ka, int *kb)
{
    pgpu_config c = prob_config(PROB_DIR, g, PGPU_VCYCLE | PGPU_FIXED);
    c.max_iterations = 1;
    pgpu_solver *s = NULL;
    if (pgpu_create(&c, &s) != PGPU_SUCCESS)
        return NAN;
    double r[RHO_KMAX + 1];
    reset_u(g);
    r[0] = residual(s);
    int k;
    for (k = 1; k <= RHO_KMAX; k++) {
        if (pgpu_solve(s, d_u, d_f, NULL) != PGPU_SUCCESS)
            break;
        r[k] = residual(s);
    }
    pgpu_destroy(s);
    int kmax = k - 1;
    double thr = g->esz == 4 ? 1e-5 : 1e-12;
    for (int a = 3; a >= 1; a -= 2) {
        int b = a;
        while (b + 1 <= kmax && isfinite(r[b + 1]) && r[b + 1] > thr * r[0])
            b++;
        if (b - a >= (a == 3 ? 2 : 1) && r[a] > 0) {
            *ka = a;
            *kb = b;
            return pow(r[b] / r[a], 1.0 / (b - a));
        }
    }
    return NAN;
}

static void bench_multigrid(const int64_t *sizes, int nsizes, int64_t nbig)
{
    for (int si = 0; si < nsizes; si++)
        for (int pi = 0; pi < 2; pi++) {
            grid_t g = grid3(sizes[si], pi ? 8 : 4);
            row_t r;
            /* V-cycle: time per cycle from a 5-cycle fixed solve. */
            double ms = run_fixed("vcycle", PGPU_VCYCLE, PROB_DIR, &g, INIT_RAND, VC_K, 1, 3.0, 0, &r);
            if (!r.fail) {
                memo_put(g_vcyc, &g_nvcyc, g.nx, g.esz, ms);
                note_sweep_eq(&r, &g, ms);
                int a = 0, b = 0;
                double rho = conv_factor(&g, &a, &b);
                if (!isnan(rho))
                    note_add(&r, "rho %.3f (cycles %d-%d, random u0)", rho, a, b);
                else
                    note_add(&r, "rho not measured");
            }
            print_row(&r);
            /* FMG: one pass. */
            ms = run_fixed("fmg", PGPU_FMG, PROB_DIR, &g, INIT_RAND, 1, 1, 2.0, 1, &r);
            if (!r.fail)
                note_sweep_eq(&r, &g, ms);
            print_row(&r);
        }

    /* Share of a big V-cycle spent on levels below 32^3: a 16^3 cycle. */
    for (int pi = 0; pi < 2; pi++) {
        grid_t g = grid3(16, pi ? 8 : 4);
        row_t r;
        double ms = run_fixed("vc-coarse", PGPU_VCYCLE, PROB_DIR, &g, INIT_RAND, VC_K, 1, 3.0, 0, &r);
        double big = memo_get(g_vcyc, g_nvcyc, nbig, g.esz);
        if (!r.fail && !isnan(big) && big > 0)
            note_add(&r, "est. %.1f%% of a %lld^3 cycle below 32^3", 100.0 * ms / big,
                     (long long)nbig);
        print_row(&r);
    }

    /* Time to a relative residual of 1e-10, double, zero start. */
    {
        grid_t g = grid3(nbig, 8);
        row_t r = new_row("vc-tol", &g, "vcycle");
        set_words(&r, &g, 3.0);
        set_rhs(PROB_DIR, &g);
        set_guess(INIT_ZERO, &g);
        pgpu_config c = prob_config(PROB_DIR, &g, PGPU_VCYCLE);
        c.tolerance = 1e-10;
        pgpu_status st = PGPU_SUCCESS;
        pgpu_solver *s = create_or_mark(&c, &r);
        if (!s) {
        } else {
            double ms = NAN;
            pgpu_report rep;
            memset(&rep, 0, sizeof rep);
            st = time_solve(s, &g, 1, g_quick ? 2 : 5, 1, &ms, &rep);
            if (st != PGPU_SUCCESS) {
                mark_fail(&r, st, pgpu_last_error(s));
            } else {
                r.iters = rep.iterations;
                r.ms = ms;
                r.err = max_error(&g);
                r.res = residual(s);
                note_add(&r, "tol 1e-10, u0 = 0; report %.4g ms", rep.seconds * 1e3);
                if (rep.status == PGPU_ERROR_NOT_CONVERGED)
                    note_add(&r, "NOT CONVERGED");
                note_sweep_eq(&r, &g, ms);
            }
            pgpu_destroy(s);
        }
        print_row(&r);
    }
}

/* ---- masks and coefficients -------------------------------------------- */

/* A device mask of g's layout: cell(x, y, z) at each interior point, at its
 * position in the unit cube (i / (nx + 1), ...); NULL on failure. */
static uint8_t *mask_of(const grid_t *g, uint8_t (*cell)(double x, double y, double z))
{
    const int64_t n = nelems(g), sy = g->nx + 2, sz = sy * (g->ny + 2);
    uint8_t *h = (uint8_t *)h_buf, *d = NULL;
    memset(h, PGPU_CELL_FLUID, (size_t)n);
    for (int64_t k = 1; k <= g->nz; k++)
        for (int64_t j = 1; j <= g->ny; j++)
            for (int64_t i = 1; i <= g->nx; i++)
                h[i + j * sy + k * sz] =
                    cell((double)i / (g->nx + 1), (double)j / (g->ny + 1), (double)k / (g->nz + 1));
    CK(cudaMalloc((void **)&d, (size_t)n));
    CK(cudaMemcpy(d, h, (size_t)n, cudaMemcpyHostToDevice));
    return d;
}

/* A solid sphere (radius 1/4, centred) in the box. */
static uint8_t sphere_cell(double x, double y, double z)
{
    x -= 0.5, y -= 0.5, z -= 0.5;
    return x * x + y * y + z * z < 0.0625 ? PGPU_CELL_SOLID : PGPU_CELL_FLUID;
}
static uint8_t *sphere_mask(const grid_t *g) { return mask_of(g, sphere_cell); }

/* Median ms of a solve of prob to tolerance tol from u0 = 0 by method
 * (flags) with preconditioner pre and (mask, beta), on a fresh handle; the
 * note compares with ref_ms (the row named ref). */
static int g_smooth; /* > 0: pre- and post-smoothing of solve_row's cycles */
static void solve_row(const char *scen, const grid_t *g, int prob, unsigned method, int pre, const uint8_t *mask,
                      const void *beta, double tol, double ref_ms, const char *ref, double *ms_out)
{
    row_t r = new_row(scen, g, mname(method));
    set_words(&r, g, 3.0);
    set_rhs(prob, g);
    set_guess(INIT_ZERO, g);
    pgpu_config c = prob_config(prob, g, method);
    c.tolerance = tol;
    c.preconditioner = (pgpu_preconditioner)pre;
    c.pre_smooth = c.post_smooth = g_smooth;
    *ms_out = NAN;
    pgpu_solver *s = create_or_mark(&c, &r);
    if (s) {
        pgpu_status st = mask ? pgpu_set_mask(s, mask) : PGPU_SUCCESS;
        if (st == PGPU_SUCCESS && beta)
            st = pgpu_set_coefficients(s, beta);
        double ms = NAN;
        pgpu_report rep;
        memset(&rep, 0, sizeof rep);
        if (st == PGPU_SUCCESS)
            st = time_solve(s, g, 1, g_quick ? 2 : 5, 1, &ms, &rep);
        if (st != PGPU_SUCCESS) {
            mark_fail(&r, st, pgpu_last_error(s));
        } else {
            r.iters = rep.iterations;
            r.ms = ms;
            r.res = rep.relative_residual;
            *ms_out = ms;
            if (pre)
                note_add(&r, "%s", pre == PGPU_PRECOND_VCYCLE ? "MG-precond"
                                    : pre == PGPU_PRECOND_FFT  ? "FFT-precond"
                                    : pre == PGPU_PRECOND_JACOBI ? "Jacobi-precond"
                                                                 : "no precond");
            if (g_smooth)
                note_add(&r, "V(%d,%d)", g_smooth, g_smooth);
            if (tol > 0)
                note_add(&r, "tol %.0e", tol);
            else
                note_add(&r, "float's own stop");
            if (rep.status == PGPU_ERROR_NOT_CONVERGED)
                note_add(&r, "NOT CONVERGED");
            note_sweep_eq(&r, g, ms);
            if (!isnan(ref_ms) && ref_ms > 0)
                note_add(&r, "%.2fx %s", ms / ref_ms, ref);
        }
        pgpu_destroy(s);
    }
    print_row(&r);
}

static void mask_row(const char *scen, const grid_t *g, const uint8_t *mask, const void *beta, double tol,
                     double box_ms, double *ms_out)
{
    solve_row(scen, g, PROB_DIR, PGPU_VCYCLE, 0, mask, beta, tol, box_ms, "the box", ms_out);
}

/* Host time of pgpu_set_mask(mask), or of pgpu_set_coefficients(beta) where
 * mask is NULL, on a fresh handle: the first call allocates and is not
 * timed, then the median of repeats; `what` (may be NULL) opens the note. */
static void set_data_row(const char *scen, const grid_t *g, const uint8_t *mask, const void *beta, const char *what)
{
    row_t r = new_row(scen, g, mask ? "set_mask" : "set_coef");
    if (what)
        note_add(&r, "%s", what);
    pgpu_config c = prob_config(PROB_DIR, g, PGPU_VCYCLE);
    pgpu_solver *s = create_or_mark(&c, &r);
    if (s) {
        double t[MAXREP];
        const int reps = g_quick ? 3 : 7;
        pgpu_status st = PGPU_SUCCESS;
        for (int k = -1; k < reps && st == PGPU_SUCCESS; k++) {
            const double t0 = now_s();
            st = mask ? pgpu_set_mask(s, mask) : pgpu_set_coefficients(s, beta);
            if (k < 0)
                CK(cudaStreamSynchronize(g_stream));
            else
                t[k] = (now_s() - t0) * 1e3;
        }
        if (st != PGPU_SUCCESS) {
            mark_fail(&r, st, pgpu_last_error(s));
        } else {
            r.ms = median(t, reps);
            note_add(&r, mask ? "host time of pgpu_set_mask (checks, copy, coarse levels, regions)"
                              : "host time of pgpu_set_coefficients (checks, copy, coarse levels)");
            note_sweep_eq(&r, g, r.ms);
        }
        pgpu_destroy(s);
    }
    print_row(&r);
}

static void bench_masks(int64_t n)
{
    for (int pi = 0; pi < 2; pi++) {
        grid_t g = grid3(n, pi ? 8 : 4);
        uint8_t *mask = sphere_mask(&g);
        const double tols[2] = {pi ? 1e-6 : 0.0, 1e-10};
        for (int ti = 0; ti < (pi ? 2 : 1); ti++) {
            double box = NAN, sph = NAN;
            mask_row("mask-box", &g, NULL, NULL, tols[ti], NAN, &box);
            mask_row("mask-sphere", &g, mask, NULL, tols[ti], box, &sph);
        }
        /* A closed tank: the sphere in a periodic box, one singular region
         * whose right-hand side and solution each solve projects to mean
         * zero. */
        {
            double pbox = NAN, tank = NAN;
            solve_row("mask-box-per", &g, PROB_PER, PGPU_VCYCLE, 0, NULL, NULL, tols[0], NAN, "", &pbox);
            solve_row("mask-tank", &g, PROB_PER, PGPU_VCYCLE, 0, mask, NULL, tols[0], pbox, "the periodic box", &tank);
        }
        /* Setting a new mask (a moved sphere and back): host time of the call. */
        set_data_row("mask-set", &g, mask, NULL, NULL);
        /* Smooth beta: time per V-cycle against the box's. */
        {
            void *beta = NULL;
            const int64_t ne = nelems(&g), sy = g.nx + 2, sz = sy * (g.ny + 2);
            for (int64_t p = 0; p < ne; p++) {
                const int64_t i = p % sy, j = (p / sy) % (g.ny + 2), k = p / sz;
                const double v = 1.0 + 0.5 * sin(2 * PI * i / (g.nx + 1)) * sin(2 * PI * j / (g.ny + 1)) *
                                           sin(2 * PI * k / (g.nz + 1));
                h_store(g.esz, p, v);
            }
            CK(cudaMalloc(&beta, nbytes(&g)));
            CK(cudaMemcpy(beta, h_buf, nbytes(&g), cudaMemcpyHostToDevice));
            double ms[2] = {NAN, NAN};
            for (int b = 0; b < 2; b++) {
                row_t r = new_row(b ? "beta-smooth" : "beta-box", &g, "vcycle");
                set_words(&r, &g, 3.0);
                set_rhs(PROB_DIR, &g);
                set_guess(INIT_RAND, &g);
                pgpu_config c = prob_config(PROB_DIR, &g, PGPU_VCYCLE | PGPU_FIXED);
                c.max_iterations = VC_K;
                pgpu_solver *s = create_or_mark(&c, &r);
                if (s) {
                    pgpu_status st = b ? pgpu_set_coefficients(s, beta) : PGPU_SUCCESS;
                    pgpu_report rep;
                    double t = NAN;
                    if (st == PGPU_SUCCESS)
                        st = time_solve(s, &g, 2, g_reps, 0, &t, &rep);
                    if (st != PGPU_SUCCESS) {
                        mark_fail(&r, st, pgpu_last_error(s));
                    } else {
                        r.iters = VC_K;
                        r.ms = t / VC_K;
                        ms[b] = r.ms;
                        r.res = residual(s);
                        note_add(&r, "per cycle (%d-cycle fixed solve)", VC_K);
                        note_sweep_eq(&r, &g, r.ms);
                        if (b && !isnan(ms[0]))
                            note_add(&r, "%.2fx the box", ms[1] / ms[0]);
                    }
                    pgpu_destroy(s);
                }
                print_row(&r);
            }
            CK(cudaFree(beta));
        }
        CK(cudaFree(mask));
    }
}

/* ---- Krylov methods ----------------------------------------------------- */

/* A two-phase beta: 1 below the plane z = 1/2 (y in 2D), `ratio` above, as a
 * device array of g's layout and precision. */
static void *two_phase_beta(const grid_t *g, double ratio)
{
    const int64_t ne = nelems(g), sy = g->nx + 2, sz = sy * (g->ny + 2);
    for (int64_t p = 0; p < ne; p++) {
        const int64_t j = (p / sy) % (g->ny + 2), k = p / sz;
        const double h = g->nz == 1 ? (double)j / (g->ny + 1) : (double)k / (g->nz + 1);
        h_store(g->esz, p, h > 0.5 ? ratio : 1.0);
    }
    void *d = NULL;
    CK(cudaMalloc(&d, nbytes(g)));
    CK(cudaMemcpy(d, h_buf, nbytes(g), cudaMemcpyHostToDevice));
    return d;
}

/* Time per iteration of a PGPU_FIXED Krylov solve of k iterations. */
static double krylov_per_iter(const grid_t *g, unsigned method, int pre, int k, row_t *out)
{
    row_t r = new_row("kr-iter", g, mname(method));
    set_rhs(PROB_ROUGH, g);
    set_guess(INIT_ZERO, g);
    pgpu_config c = prob_config(PROB_ROUGH, g, method | PGPU_FIXED);
    c.max_iterations = k;
    c.preconditioner = (pgpu_preconditioner)pre;
    pgpu_solver *s = create_or_mark(&c, &r);
    if (s) {
        pgpu_report rep;
        double ms = NAN;
        pgpu_status st = time_solve(s, g, g_warm, g_reps, 0, &ms, &rep);
        if (st != PGPU_SUCCESS) {
            mark_fail(&r, st, pgpu_last_error(s));
        } else {
            r.iters = 1;
            r.ms = ms / k;
            note_add(&r, "per iteration (%d-iteration fixed solve), %s", k,
                     pre == PGPU_PRECOND_VCYCLE ? "MG-precond" : "no precond");
        }
        pgpu_destroy(s);
    }
    *out = r;
    return r.fail ? NAN : r.ms;
}

static void bench_krylov(int64_t n)
{
    /* Double, n^3 box, rough f, relative residual 1e-10 from zero. */
    {
        grid_t g = grid3(n, 8);
        double fmg = NAN, ms = NAN;
        solve_row("kr-box", &g, PROB_ROUGH, PGPU_FMG, 0, NULL, NULL, 1e-10, NAN, "", &fmg);
        solve_row("kr-box", &g, PROB_ROUGH, PGPU_VCYCLE, 0, NULL, NULL, 1e-10, fmg, "FMG+V", &ms);
        solve_row("kr-box", &g, PROB_ROUGH, PGPU_CG, PGPU_PRECOND_VCYCLE, NULL, NULL, 1e-10, fmg, "FMG+V", &ms);
        g_smooth = 1;
        solve_row("kr-box", &g, PROB_ROUGH, PGPU_CG, PGPU_PRECOND_VCYCLE, NULL, NULL, 1e-10, fmg, "FMG+V", &ms);
        g_smooth = 0;
        solve_row("kr-box", &g, PROB_ROUGH, PGPU_CG | PGPU_PIPELINED, PGPU_PRECOND_VCYCLE, NULL, NULL, 1e-10, fmg,
                  "FMG+V", &ms);
        solve_row("kr-box", &g, PROB_ROUGH, PGPU_BICGSTAB, PGPU_PRECOND_VCYCLE, NULL, NULL, 1e-10, fmg, "FMG+V", &ms);
        solve_row("kr-box", &g, PROB_ROUGH, PGPU_CG, PGPU_PRECOND_FFT, NULL, NULL, 1e-10, fmg, "FMG+V", &ms);
        g_mixed = 1; /* double vectors, float preconditioner */
        solve_row("kr-box", &g, PROB_ROUGH, PGPU_CG, PGPU_PRECOND_VCYCLE, NULL, NULL, 1e-10, fmg, "FMG+V", &ms);
        solve_row("kr-box", &g, PROB_ROUGH, PGPU_CG, PGPU_PRECOND_FFT, NULL, NULL, 1e-10, fmg, "FMG+V", &ms);
        g_mixed = 0;
        if (!g_quick) {
            grid_t g2 = grid3(256, 8);
            solve_row("kr-box", &g2, PROB_ROUGH, PGPU_CG, PGPU_PRECOND_NONE, NULL, NULL, 1e-8, NAN, "", &ms);
        }
    }
    /* Pipelined against classic CG per iteration where latency dominates. */
    static const int64_t small[] = {64, 128};
    for (int si = 0; si < 2; si++)
        for (int pre = PGPU_PRECOND_NONE; pre <= PGPU_PRECOND_VCYCLE; pre += 2) {
            grid_t g = grid3(small[si], 8);
            row_t a, b;
            const double ca = krylov_per_iter(&g, PGPU_CG, pre, 20, &a);
            print_row(&a);
            const double cb = krylov_per_iter(&g, PGPU_CG | PGPU_PIPELINED, pre, 20, &b);
            if (!isnan(ca) && !isnan(cb))
                note_add(&b, "%.2fx classic", cb / ca);
            print_row(&b);
        }
    /* Two-phase flow, 1000:1, at 256^3 (128^3 quick), to 1e-8. */
    {
        grid_t g = grid3(g_quick ? 128 : 256, 8);
        void *beta = two_phase_beta(&g, 1000.0);
        double vc = NAN, ms = NAN;
        solve_row("kr-2phase", &g, PROB_ROUGH, PGPU_VCYCLE, 0, NULL, beta, 1e-8, NAN, "", &vc);
        solve_row("kr-2phase", &g, PROB_ROUGH, PGPU_CG, PGPU_PRECOND_VCYCLE, NULL, beta, 1e-8, vc, "V-cycles", &ms);
        solve_row("kr-2phase", &g, PROB_ROUGH, PGPU_BICGSTAB, PGPU_PRECOND_VCYCLE, NULL, beta, 1e-8, vc, "V-cycles",
                  &ms);
        CK(cudaFree(beta));
    }
    /* The masked sphere at n^3 to 1e-6, double. */
    {
        grid_t g = grid3(n, 8);
        uint8_t *mask = sphere_mask(&g);
        double box = NAN, ms = NAN;
        solve_row("kr-sphere", &g, PROB_DIR, PGPU_CG, PGPU_PRECOND_VCYCLE, NULL, NULL, 1e-6, NAN, "", &box);
        solve_row("kr-sphere", &g, PROB_DIR, PGPU_VCYCLE, 0, mask, NULL, 1e-6, box, "CG on the box", &ms);
        solve_row("kr-sphere", &g, PROB_DIR, PGPU_CG, PGPU_PRECOND_VCYCLE, mask, NULL, 1e-6, box, "CG on the box", &ms);
        solve_row("kr-sphere", &g, PROB_DIR, PGPU_CG, PGPU_PRECOND_FFT, mask, NULL, 1e-6, box, "CG on the box", &ms);
        CK(cudaFree(mask));
    }
}

/* ---- jumps: held values, inclusions, random beta ------------------------ */

/* A device copy of the first `bytes` of h_buf. */
static void *to_device(size_t bytes)
{
    void *d = NULL;
    CK(cudaMalloc(&d, bytes));
    CK(cudaMemcpy(d, h_buf, bytes, cudaMemcpyHostToDevice));
    return d;
}

/* The held sphere: u = sin(x + 2y + 3z) + x^2 y z on the unit cube (nodes at
 * x = i h, h = 1/(n+1)), f = -Laplace(u) = 14 sin(x + 2y + 3z) - 2yz; the
 * interior points farther than 0.4 from the centre are Dirichlet cells that
 * hold u, so that FMG's coarse problems must carry held values that vary
 * along a curved wall, not the constant ghosts of a box. */
static double held_u(double x, double y, double z) { return sin(x + 2 * y + 3 * z) + x * x * y * z; }

static int held_at(const grid_t *g, int64_t i, int64_t j, int64_t k)
{
    const double x = (double)i / (g->nx + 1) - 0.5, y = (double)j / (g->ny + 1) - 0.5,
                 z = (double)k / (g->nz + 1) - 0.5;
    return i >= 1 && i <= g->nx && j >= 1 && j <= g->ny && k >= 1 && k <= g->nz &&
           x * x + y * y + z * z > 0.16;
}

/* f into d_f and the initial u into d_u0 (0 at fluid points, u at held points
 * and ghosts); with sphere also the mask, as a device array of g's layout
 * (else NULL: the plain box, every interior point fluid).  h_buf holds each
 * array in turn, so that 512^3 needs no other host array of that size. */
static uint8_t *held_setup(const grid_t *g, int sphere)
{
    const int64_t sy = g->nx + 2, sz = sy * (g->ny + 2);
    uint8_t *mask = NULL;
    if (sphere) {
        for (int64_t k = 0; k <= g->nz + 1; k++)
            for (int64_t j = 0; j <= g->ny + 1; j++)
                for (int64_t i = 0; i <= g->nx + 1; i++)
                    ((uint8_t *)h_buf)[i + j * sy + k * sz] =
                        held_at(g, i, j, k) ? PGPU_CELL_DIRICHLET : PGPU_CELL_FLUID;
        mask = (uint8_t *)to_device((size_t)nelems(g));
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t k = 0; k <= g->nz + 1; k++)
            for (int64_t j = 0; j <= g->ny + 1; j++)
                for (int64_t i = 0; i <= g->nx + 1; i++) {
                    const double x = (double)i / (g->nx + 1), y = (double)j / (g->ny + 1),
                                 z = (double)k / (g->nz + 1);
                    const int fluid = i >= 1 && i <= g->nx && j >= 1 && j <= g->ny && k >= 1 &&
                                      k <= g->nz && !(sphere && held_at(g, i, j, k));
                    h_store(g->esz, i + j * sy + k * sz,
                            pass == 0 ? 14.0 * sin(x + 2 * y + 3 * z) - 2 * y * z
                            : fluid   ? 0.0
                                      : held_u(x, y, z));
                }
        upload(pass == 0 ? d_f : d_u0, nbytes(g));
    }
    g_fprob = g_uinit = -1; /* neither holds a manufactured problem now */
    return mask;
}

/* max |u - u_exact| over the fluid points of d_u (the held ones left out with
 * sphere): the discretisation error plus what the solve left. */
static double held_error(const grid_t *g, int sphere)
{
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaMemcpyAsync(h_buf, d_u, nbytes(g), cudaMemcpyDeviceToHost, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    const int64_t sy = g->nx + 2, sz = sy * (g->ny + 2);
    double e = 0.0;
    for (int64_t k = 1; k <= g->nz; k++)
        for (int64_t j = 1; j <= g->ny; j++)
            for (int64_t i = 1; i <= g->nx; i++) {
                if (sphere && held_at(g, i, j, k))
                    continue;
                const double d = fabs(h_load(g->esz, i + j * sy + k * sz) -
                                      held_u((double)i / (g->nx + 1), (double)j / (g->ny + 1),
                                             (double)k / (g->nz + 1)));
                if (!(d <= e)) /* NaN propagates */
                    e = d;
            }
    return e;
}

/* f = sin(3x) cos(2y) + z at the nodes x = i hx, y = j hy, z = k hz into d_f
 * (ghosts 0): smooth, without an exact solution, for rows that measure
 * convergence. */
static void smooth_rhs(const grid_t *g, double hx, double hy, double hz)
{
    const int64_t sy = g->nx + 2, sz = sy * (g->ny + 2);
    memset(h_buf, 0, nbytes(g));
    for (int64_t k = 1; k <= g->nz; k++)
        for (int64_t j = 1; j <= g->ny; j++)
            for (int64_t i = 1; i <= g->nx; i++)
                h_store(g->esz, i + j * sy + k * sz, sin(3.0 * i * hx) * cos(2.0 * j * hy) + k * hz);
    upload(d_f, nbytes(g));
    g_fprob = -1;
}

/* beta = J in the ball of radius 1/4 at the centre of the unit cube, 1
 * elsewhere (ghosts included), as a device array of g's layout. */
static void *ball_beta(const grid_t *g, double J)
{
    const int64_t sy = g->nx + 2, sz = sy * (g->ny + 2);
    for (int64_t k = 0; k <= g->nz + 1; k++)
        for (int64_t j = 0; j <= g->ny + 1; j++)
            for (int64_t i = 0; i <= g->nx + 1; i++) {
                const double x = (double)i / (g->nx + 1) - 0.5, y = (double)j / (g->ny + 1) - 0.5,
                             z = (double)k / (g->nz + 1) - 0.5;
                h_store(g->esz, i + j * sy + k * sz, x * x + y * y + z * z < 0.0625 ? J : 1.0);
            }
    return to_device(nbytes(g));
}

/* Beside the ball: a solid block (x in [0.1, 0.3], y in [0.2, 0.8], z in
 * [0.1, 0.3]) and Dirichlet cells above z = 0.85 (a free surface; u's
 * values there, 0 from the zero guess, held). */
static uint8_t ball_cell(double x, double y, double z)
{
    if (z > 0.85)
        return PGPU_CELL_DIRICHLET;
    return x >= 0.1 && x <= 0.3 && y >= 0.2 && y <= 0.8 && z >= 0.1 && z <= 0.3 ? PGPU_CELL_SOLID : PGPU_CELL_FLUID;
}

/* max |d_u - ref| over the interior of g, over max |ref| (ref: a host
 * array of g's layout in double). */
static double distance_to(const grid_t *g, const double *ref)
{
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaMemcpyAsync(h_buf, d_u, nbytes(g), cudaMemcpyDeviceToHost, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    const int64_t sy = g->nx + 2, sz = sy * (g->ny + 2);
    double e = 0.0, m = 0.0;
    for (int64_t k = 1; k <= g->nz; k++)
        for (int64_t j = 1; j <= g->ny; j++)
            for (int64_t i = 1; i <= g->nx; i++) {
                const int64_t p = i + j * sy + k * sz;
                const double d = fabs(h_load(g->esz, p) - ref[p]);
                if (!(d <= e)) /* NaN propagates */
                    e = d;
                if (fabs(ref[p]) > m)
                    m = fabs(ref[p]);
            }
    return m > 0 ? e / m : e;
}

/* beta uniform in [0.1, 10], drawn point by point (ghosts included) from a
 * fixed seed, so that every run solves the same problem. */
static void *random_beta(const grid_t *g)
{
    uint64_t x = 0x243f6a8885a308d3ull;
    for (int64_t p = 0; p < nelems(g); p++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17; /* xorshift64 */
        h_store(g->esz, p, 0.1 + 9.9 * (double)(x >> 11) * 0x1p-53);
    }
    return to_device(nbytes(g));
}

/* A solve of c with (mask, beta) on a fresh handle, u from d_u0 and f in d_f:
 * the median time after warm warm-ups (time_solve), the report's iterations
 * (FMG: one solve, the cycles after its pass in the note) and relative
 * residual, the status in the note where it is not PGPU_SUCCESS.  d_u holds
 * the last solution.  0 where the row failed (marked; the iterations reached
 * in the note). */
static int jumps_solve(row_t *r, const grid_t *g, pgpu_config c, const uint8_t *mask, const void *beta,
                       int warm, int reps, pgpu_report *rep)
{
    memset(rep, 0, sizeof *rep);
    pgpu_solver *s = create_or_mark(&c, r);
    if (!s)
        return 0;
    pgpu_status st = mask ? pgpu_set_mask(s, mask) : PGPU_SUCCESS;
    if (st == PGPU_SUCCESS && beta)
        st = pgpu_set_coefficients(s, beta);
    double ms = NAN;
    if (st == PGPU_SUCCESS)
        st = time_solve(s, g, warm, reps, 1, &ms, rep);
    if (st != PGPU_SUCCESS) {
        mark_fail(r, st, pgpu_last_error(s));
        if (rep->iterations > 0)
            note_add(r, "after %d iterations", rep->iterations);
        pgpu_destroy(s);
        return 0;
    }
    pgpu_destroy(s);
    r->ms = ms;
    r->res = rep->relative_residual;
    r->iters = (c.flags & PGPU_FMG) ? 1 : rep->iterations;
    if ((c.flags & PGPU_FMG) && rep->iterations > 0)
        note_add(r, "pass + %d V-cycles", rep->iterations);
    if (rep->status != PGPU_SUCCESS)
        note_add(r, "%s", pgpu_status_string(rep->status));
    return 1;
}

/* V-cycles and CG around them to 1e-8 on (mask, beta), rows of scenario
 * scen. */
static void ball_rows(const char *scen, const grid_t *g, const uint8_t *mask, const void *beta, const char *what)
{
    double vc = NAN;
    for (int cg = 0; cg < 2; cg++) {
        row_t r = new_row(scen, g, cg ? "cg" : "vcycle");
        set_words(&r, g, 3.0);
        pgpu_config c = prob_config(PROB_DIR, g, cg ? PGPU_CG : PGPU_VCYCLE);
        c.tolerance = 1e-8;
        if (cg)
            c.preconditioner = PGPU_PRECOND_VCYCLE;
        else
            c.max_iterations = 100;
        note_add(&r, "%s, tol 1e-8%s", what, cg ? ", MG-precond" : "");
        pgpu_report rep;
        if (jumps_solve(&r, g, c, mask, beta, 1, g_quick ? 2 : 5, &rep)) {
            note_sweep_eq(&r, g, r.ms);
            if (!cg)
                vc = r.ms;
            else if (!isnan(vc) && vc > 0)
                note_add(&r, "%.2fx the V-cycles", r.ms / vc);
        }
        print_row(&r);
    }
}

static void bench_jumps(int64_t nbig)
{
    /* FMG on held values: the default solve against V-cycles converged to
     * 1e-12, both measured against the exact u; the default should stay
     * within 1.3 times the converged (discretisation) error. */
    static const int64_t held_n[] = {128, 256};
    for (int si = 0; si < (g_quick ? 1 : 2); si++) {
        grid_t g = grid3(held_n[si], 8);
        uint8_t *mask = held_setup(&g, 1);
        row_t r = new_row("fmg-held", &g, "fmg");
        pgpu_report rep;
        if (jumps_solve(&r, &g, prob_config(PROB_DIR, &g, PGPU_FMG), mask, NULL, 1, g_quick ? 2 : 5, &rep)) {
            r.err = held_error(&g, 1);
            row_t v = new_row("", &g, "vcycle"); /* not printed: its figures go to r's note */
            pgpu_config c = prob_config(PROB_DIR, &g, PGPU_VCYCLE);
            c.tolerance = 1e-12;
            if (jumps_solve(&v, &g, c, mask, NULL, 0, 1, &rep)) {
                const double e = held_error(&g, 1);
                note_add(&r, "converged error %.3e, ratio %.3f (bar 1.3)", e, r.err / e);
            }
            if (v.note[0])
                note_add(&r, "V-cycles to 1e-12: %s", v.note);
        }
        print_row(&r);
        CK(cudaFree(mask));
    }
    /* Its time against the box's default FMG (no mask, the same f and
     * ghosts): held values should cost at most 1.5 times the box. */
    {
        grid_t g = grid3(nbig, 8);
        double box = NAN;
        for (int sphere = 0; sphere < 2; sphere++) {
            uint8_t *mask = held_setup(&g, sphere);
            row_t r = new_row(sphere ? "fmg-held" : "fmg-box", &g, "fmg");
            pgpu_report rep;
            if (jumps_solve(&r, &g, prob_config(PROB_DIR, &g, PGPU_FMG), mask, NULL, g_warm, g_reps, &rep)) {
                r.err = held_error(&g, sphere);
                note_sweep_eq(&r, &g, r.ms);
                if (!sphere)
                    box = r.ms;
                else if (!isnan(box) && box > 0)
                    note_add(&r, "x%.2f the box's default FMG (bar 1.5)", r.ms / box);
            }
            print_row(&r);
            if (mask)
                CK(cudaFree(mask));
        }
    }
    /* A ball inclusion of beta 1e3 and 1e6 in beta = 1: V-cycles stall on
     * its near-constant mode (the coarse levels follow beta there, with a
     * 7-point coarse operator); CG around them is the documented remedy. */
    {
        grid_t g = grid3(g_quick ? 128 : 256, 8);
        const double h = 1.0 / (double)(g.nx + 1);
        static const double jump[2] = {1e3, 1e6};
        static const char *const jname[2] = {"1e3", "1e6"};
        smooth_rhs(&g, h, h, h);
        set_guess(INIT_ZERO, &g);
        for (int ji = 0; ji < 2; ji++) {
            void *beta = ball_beta(&g, jump[ji]);
            char what[48];
            snprintf(what, sizeof what, "beta %s in a ball of radius 1/4", jname[ji]);
            ball_rows("ball", &g, NULL, beta, what);
            /* The default FMG (no tolerance): where beta jumps its pass is
             * followed by V-cycles to 1e-8, NOT_CONVERGED where they stall;
             * its distance from CG's solution to 1e-11. */
            {
                row_t r = new_row("ball", &g, "fmg");
                row_t ref = new_row("", &g, "cg"); /* not printed: the reference */
                pgpu_config c = prob_config(PROB_DIR, &g, PGPU_CG);
                c.tolerance = 1e-11;
                c.preconditioner = PGPU_PRECOND_VCYCLE;
                pgpu_report rep;
                double *uref = NULL;
                if (jumps_solve(&ref, &g, c, NULL, beta, 0, 1, &rep)) {
                    uref = malloc((size_t)nelems(&g) * sizeof(double));
                    if (uref) {
                        CK(cudaMemcpy(h_buf, d_u, nbytes(&g), cudaMemcpyDeviceToHost));
                        for (int64_t p = 0; p < nelems(&g); p++)
                            uref[p] = h_load(g.esz, p);
                    }
                }
                note_add(&r, "%s, default (no tolerance)", what);
                jumps_solve(&r, &g, prob_config(PROB_DIR, &g, PGPU_FMG), NULL, beta, 1, g_quick ? 2 : 5, &rep);
                if (uref)
                    note_add(&r, "%.2e of max |u| from CG to 1e-11", distance_to(&g, uref));
                else
                    note_add(&r, "no reference: CG to 1e-11 %s", ref.note);
                print_row(&r);
                free(uref);
            }
            /* The same ball beside a mask (ball_cell). */
            uint8_t *mask = mask_of(&g, ball_cell);
            char beside[128];
            snprintf(beside, sizeof beside, "%s beside a solid block and Dirichlet cells above z = 0.85", what);
            ball_rows("ball-mask", &g, mask, beta, beside);
            CK(cudaFree(mask));
            set_data_row("ball", &g, NULL, beta, what);
            CK(cudaFree(beta));
        }
    }
    /* A beta drawn at random point by point on strongly anisotropic grids,
     * where V-cycles may diverge: cycles to 1e-10 from u = 0 and the mean
     * reduction per cycle (the relative residual starts at 1). */
    {
        static const int64_t dims[2][3] = {{96, 96, 96}, {128, 64, 32}};
        static const int ratio[2] = {9, 22};
        for (int ai = 0; ai < 2; ai++) {
            grid_t g = {dims[ai][0], dims[ai][1], dims[ai][2], 8};
            const double h = 1.0 / (double)(g.ny + 1); /* hy = hz = h, hx = ratio h */
            smooth_rhs(&g, ratio[ai] * h, h, h);
            set_guess(INIT_ZERO, &g);
            void *beta = random_beta(&g);
            row_t r = new_row("beta-aniso", &g, "vcycle");
            set_words(&r, &g, 3.0);
            pgpu_config c = prob_config(PROB_DIR, &g, PGPU_VCYCLE);
            c.hx = ratio[ai] * h;
            c.hy = c.hz = h;
            c.tolerance = 1e-10;
            c.max_iterations = 100;
            note_add(&r, "hx:hy:hz %d:1:1, random beta 0.1..10, tol 1e-10", ratio[ai]);
            pgpu_report rep;
            if (jumps_solve(&r, &g, c, NULL, beta, 1, g_quick ? 2 : 5, &rep) && rep.iterations > 0)
                note_add(&r, "rate %.3f per cycle (bar 0.2)", pow(rep.relative_residual, 1.0 / rep.iterations));
            print_row(&r);
            CK(cudaFree(beta));
        }
    }
}

/* ---- issue 4: FFT ------------------------------------------------------- */

/* Median time (ms) of a cuFFT R2C + C2R pair (D2Z + Z2D in double) of n^3,
 * out of place; the real input is never overwritten. */
static double time_cufft_pair(int64_t n, int esz)
{
    size_t real = (size_t)(n * n * n) * (size_t)esz;
    size_t cplx = (size_t)(n * n * (n / 2 + 1)) * 2u * (size_t)esz;
    void *in = NULL, *c = NULL, *out = NULL;
    CK(cudaMalloc(&in, real));
    CK(cudaMalloc(&c, cplx));
    CK(cudaMalloc(&out, real));
    /* random input through the host buffer */
    uint64_t x = 0x2545f4914f6cdd1dull;
    for (int64_t i = 0; i < n * n * n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        h_store(esz, i, (double)(x >> 11) * 0x1p-52 - 1.0);
    }
    upload(in, real);
    cufftHandle fwd, inv;
    CKFFT(cufftPlan3d(&fwd, (int)n, (int)n, (int)n, esz == 4 ? CUFFT_R2C : CUFFT_D2Z));
    CKFFT(cufftPlan3d(&inv, (int)n, (int)n, (int)n, esz == 4 ? CUFFT_C2R : CUFFT_Z2D));
    CKFFT(cufftSetStream(fwd, g_stream));
    CKFFT(cufftSetStream(inv, g_stream));
    for (int r = 0; r < g_warm + g_reps; r++) {
        int t = r - g_warm;
        if (t >= 0)
            CK(cudaEventRecord(g_ev0[t], g_stream));
        if (esz == 4) {
            CKFFT(cufftExecR2C(fwd, (cufftReal *)in, (cufftComplex *)c));
            CKFFT(cufftExecC2R(inv, (cufftComplex *)c, (cufftReal *)out));
        } else {
            CKFFT(cufftExecD2Z(fwd, (cufftDoubleReal *)in, (cufftDoubleComplex *)c));
            CKFFT(cufftExecZ2D(inv, (cufftDoubleComplex *)c, (cufftDoubleReal *)out));
        }
        if (t >= 0)
            CK(cudaEventRecord(g_ev1[t], g_stream));
    }
    double ms = events_median(g_reps);
    CKFFT(cufftDestroy(fwd));
    CKFFT(cufftDestroy(inv));
    CK(cudaFree(in));
    CK(cudaFree(c));
    CK(cudaFree(out));
    return ms;
}

/* The FFT rows of each size, Dirichlet up to problem `last` (PROB_PER:
 * periodic too), beside the cuFFT pair of the same grid and of (n+1)^3. */
static void bench_fft3d(const int64_t *sizes, int nsizes, int last)
{
    for (int si = 0; si < nsizes; si++)
        for (int pi = 0; pi < 2; pi++) {
            int esz = pi ? 8 : 4;
            grid_t g = grid3(sizes[si], esz);
            double pair = time_cufft_pair(g.nx, esz);
            /* A DST-I of n points is a transform of length n+1 (see the
             * README): the pair at (n+1)^3 says what cuFFT takes there. */
            double pair1 = time_cufft_pair(g.nx + 1, esz);
            for (int prob = PROB_DIR; prob <= last; prob++) {
                row_t r;
                double ms = run_fixed(prob == PROB_DIR ? "fft-dir" : "fft-per", PGPU_FFT, prob, &g,
                                      INIT_RAND, 1, 1, 2.0, 1, &r);
                if (!r.fail)
                    note_add(&r, "cufft pair %.4g ms, x%.2f", pair, ms / pair);
                else
                    note_add(&r, "cufft pair %.4g ms", pair);
                if (prob == PROB_DIR && !r.fail)
                    note_add(&r, "at (n+1)^3 %.4g ms, x%.2f", pair1, ms / pair1);
                print_row(&r);
            }
        }
}

/* Seed 001: 2D double, Dirichlet; time per solve from a graph of 100
 * PGPU_FIXED solves (plain launches if capture fails). */
static void bench_fft2d(int64_t n)
{
    grid_t g = grid2(n, 8);
    row_t r = new_row("fft2d", &g, "fft");
    set_words(&r, &g, 2.0);
    set_rhs(PROB_DIR, &g);
    set_guess(INIT_RAND, &g);
    pgpu_config c = prob_config(PROB_DIR, &g, PGPU_FFT | PGPU_FIXED);
    pgpu_status st = PGPU_SUCCESS;
    pgpu_solver *s = create_or_mark(&c, &r);
    if (!s) {
        print_row(&r);
        return;
    }
    /* warm-up outside any capture; also says whether the method is there */
    for (int w = 0; w < g_warm; w++) {
        reset_u(&g);
        st = pgpu_solve(s, d_u, d_f, NULL);
        if (st != PGPU_SUCCESS) {
            mark_fail(&r, st, pgpu_last_error(s));
            pgpu_destroy(s);
            print_row(&r);
            return;
        }
    }
    CK(cudaStreamSynchronize(g_stream));

    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    const char *why = NULL;
    char whybuf[128];
    CK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < GRAPH_SOLVES && st == PGPU_SUCCESS; i++)
        st = pgpu_solve(s, d_u, d_f, NULL);
    cudaError_t ce = cudaStreamEndCapture(g_stream, &graph);
    if (st != PGPU_SUCCESS) {
        snprintf(whybuf, sizeof whybuf, "%s: %s", pgpu_status_string(st), pgpu_last_error(s));
        why = whybuf;
    } else if (ce != cudaSuccess) {
        why = cudaGetErrorString(ce);
    } else if ((ce = cudaGraphInstantiateWithFlags(&exec, graph, 0)) != cudaSuccess) {
        why = cudaGetErrorString(ce);
    }
    st = PGPU_SUCCESS; /* a failed capture falls back to plain solves */
    if (why) {
        (void)cudaGetLastError(); /* capture errors are not sticky; clear */
        if (exec)
            CK(cudaGraphExecDestroy(exec));
        if (graph)
            CK(cudaGraphDestroy(graph));
        exec = NULL;
        graph = NULL;
    }

    for (int i = 0; i < g_warm + g_reps; i++) {
        int t = i - g_warm;
        reset_u(&g);
        if (t >= 0)
            CK(cudaEventRecord(g_ev0[t], g_stream));
        if (exec) {
            CK(cudaGraphLaunch(exec, g_stream));
        } else {
            for (int k = 0; k < GRAPH_SOLVES; k++) {
                st = pgpu_solve(s, d_u, d_f, NULL);
                if (st != PGPU_SUCCESS)
                    break;
            }
        }
        if (t >= 0)
            CK(cudaEventRecord(g_ev1[t], g_stream));
        if (st != PGPU_SUCCESS)
            break;
    }
    if (st != PGPU_SUCCESS) {
        mark_fail(&r, st, pgpu_last_error(s));
    } else {
        r.ms = events_median(g_reps) / GRAPH_SOLVES;
        r.err = max_error(&g);
        r.res = residual(s);
        if (exec)
            note_add(&r, "graph of %d solves, per solve", GRAPH_SOLVES);
        else
            note_add(&r, "capture failed (%.60s): %d plain solves, per solve", why, GRAPH_SOLVES);
        note_add(&r, "%lldx%lld nodes", (long long)n + 2, (long long)n + 2);
    }
    if (exec)
        CK(cudaGraphExecDestroy(exec));
    if (graph)
        CK(cudaGraphDestroy(graph));
    pgpu_destroy(s);
    print_row(&r);
}

/* Time to answer: the host wall time of one plain pgpu_solve that returns
 * when the solve is done (the call, then a stream synchronisation: a no-op
 * on the default path, which reads its status back), median of
 * WALL_CALLS back-to-back calls; 2D double Dirichlet, default path and
 * PGPU_FIXED. */
#define WALL_CALLS 1000
static void bench_fft2d_wall(int64_t n, int fixed)
{
    static double t[WALL_CALLS];
    grid_t g = grid2(n, 8);
    row_t r = new_row("fft2d-wall", &g, "fft");
    set_rhs(PROB_DIR, &g);
    set_guess(INIT_RAND, &g);
    reset_u(&g); /* u's ghosts hold the Dirichlet data: the FFT reads them */
    pgpu_config c = prob_config(PROB_DIR, &g, PGPU_FFT | (fixed ? PGPU_FIXED : 0));
    pgpu_status st = PGPU_SUCCESS;
    pgpu_solver *s = create_or_mark(&c, &r);
    if (!s) {
        print_row(&r);
        return;
    }
    for (int i = 0; i < 20 + WALL_CALLS && st == PGPU_SUCCESS; i++) {
        const double t0 = now_s();
        st = pgpu_solve(s, d_u, d_f, NULL);
        CK(cudaStreamSynchronize(g_stream));
        if (i >= 20)
            t[i - 20] = now_s() - t0;
    }
    if (st != PGPU_SUCCESS) {
        mark_fail(&r, st, pgpu_last_error(s));
    } else {
        r.ms = 1e3 * median(t, WALL_CALLS);
        r.err = max_error(&g);
        r.res = residual(s);
        note_add(&r, "host wall time of one call, median of %d; %s", WALL_CALLS,
                 fixed ? "PGPU_FIXED" : "default path");
    }
    pgpu_destroy(s);
    print_row(&r);
}

/* ---- precision -------------------------------------------------------------- */

/* An exact discrete solution: u = X1 Y1 Z1 + X2 Y2 Z2 on the unit cube with
 * zero Dirichlet faces (h = 1/(n+1)), f = A_h u in double from the per-axis
 * second differences, rounded to the array's precision.  Not separable,
 * every mode present, and the boundary data are zero, so that b = f is about
 * lambda_min u and nothing hides float's rounding of u. */
static double *g_xt[2][3], *g_xd[2][3]; /* per term and axis: values, minus second differences */
static int64_t g_xn = -1;

static double exact_axis(int term, int axis, double x)
{
    if (term == 0)
        return axis == 0 ? sin(PI * x) * exp(x) : axis == 1 ? sin(PI * x) * (1.0 + x) : sin(PI * x);
    return axis == 0 ? sin(2.0 * PI * x) * x : axis == 1 ? sin(3.0 * PI * x) : x * (1.0 - x) * cos(x);
}

static void exact_tables(int64_t n)
{
    if (g_xn == n)
        return;
    double h = 1.0 / (double)(n + 1);
    for (int t = 0; t < 2; t++)
        for (int a = 0; a < 3; a++) {
            free(g_xt[t][a]);
            free(g_xd[t][a]);
            g_xt[t][a] = (double *)calloc((size_t)n + 2, sizeof(double));
            g_xd[t][a] = (double *)calloc((size_t)n + 2, sizeof(double));
            if (!g_xt[t][a] || !g_xd[t][a]) {
                fprintf(stderr, "bench: out of host memory\n");
                exit(1);
            }
            for (int64_t i = 0; i <= n + 1; i++)
                g_xt[t][a][i] = (i == 0 || i == n + 1) ? 0.0 : exact_axis(t, a, (double)i * h);
            for (int64_t i = 1; i <= n; i++)
                g_xd[t][a][i] = -(g_xt[t][a][i - 1] - 2.0 * g_xt[t][a][i] + g_xt[t][a][i + 1]) / (h * h);
        }
    g_xn = n;
}

static double exact_u(int64_t i, int64_t j, int64_t k)
{
    return g_xt[0][0][i] * g_xt[0][1][j] * g_xt[0][2][k] + g_xt[1][0][i] * g_xt[1][1][j] * g_xt[1][2][k];
}

/* f of the exact problem into d_f (cubes only). */
static void set_exact(const grid_t *g)
{
    exact_tables(g->nx);
    int64_t n = g->nx, sy = n + 2, sz = sy * (n + 2);
    memset(h_buf, 0, nbytes(g));
    for (int64_t k = 1; k <= n; k++)
        for (int64_t j = 1; j <= n; j++)
            for (int64_t i = 1; i <= n; i++) {
                double f = 0.0;
                for (int t = 0; t < 2; t++) {
                    const double x = g_xt[t][0][i], y = g_xt[t][1][j], z = g_xt[t][2][k];
                    f += g_xd[t][0][i] * y * z + x * g_xd[t][1][j] * z + x * y * g_xd[t][2][k];
                }
                h_store(g->esz, i + j * sy + k * sz, f);
            }
    upload(d_f, nbytes(g));
    g_fprob = -1; /* d_f no longer holds a manufactured problem */
}

/* max |u - u_exact| / max |u_exact| over the interior of d_u. */
static double exact_error(const grid_t *g)
{
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaMemcpyAsync(h_buf, d_u, nbytes(g), cudaMemcpyDeviceToHost, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    int64_t n = g->nx, sy = n + 2, sz = sy * (n + 2);
    double e = 0.0, m = 0.0;
    for (int64_t k = 1; k <= n; k++)
        for (int64_t j = 1; j <= n; j++)
            for (int64_t i = 1; i <= n; i++) {
                double ue = exact_u(i, j, k), d = fabs(h_load(g->esz, i + j * sy + k * sz) - ue);
                m = fabs(ue) > m ? fabs(ue) : m;
                if (!(d <= e))
                    e = d;
            }
    return m > 0 ? e / m : e;
}

/* One solve of the exact problem with `flags`; the row's time is the median
 * solve, its error against the exact discrete solution. */
static void run_exact(const char *scen, const grid_t *g, unsigned flags, int maxit, row_t *out)
{
    row_t r = new_row(scen, g, mname(flags & PGPU_METHOD_MASK));
    set_words(&r, g, 2.0);
    set_exact(g);
    set_guess(INIT_ZERO, g);
    pgpu_config c = pgpu_config_default(g->nx, g->ny, g->nz);
    c.flags = flags | pflag(g->esz);
    c.max_iterations = maxit;
    c.stream = g_stream;
    pgpu_status st = PGPU_SUCCESS;
    pgpu_solver *s = create_or_mark(&c, &r);
    if (!s) {
        *out = r;
        return;
    }
    double ms = NAN;
    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    st = time_solve(s, g, g_quick ? 1 : 2, g_quick ? 3 : 5, 0, &ms, &rep);
    if (st != PGPU_SUCCESS) {
        mark_fail(&r, st, pgpu_last_error(s));
    } else {
        r.ms = ms;
        r.iters = (flags & PGPU_FIXED) ? maxit : rep.iterations;
        r.err = exact_error(g);
        r.res = residual(s);
        note_add(&r, "error vs the exact discrete solution");
    }
    pgpu_destroy(s);
    *out = r;
}

/* A solve of the manufactured Dirichlet problem from u = 0 with `flags` and
 * tolerance tol (0: the method's default); returns the median time. */
static double run_checked(const char *scen, const grid_t *g, unsigned flags, double tol, row_t *out)
{
    row_t r = new_row(scen, g, mname(flags & PGPU_METHOD_MASK));
    set_words(&r, g, 3.0);
    set_rhs(PROB_DIR, g);
    set_guess(INIT_ZERO, g);
    pgpu_config c = prob_config(PROB_DIR, g, flags);
    c.tolerance = tol;
    pgpu_status st = PGPU_SUCCESS;
    pgpu_solver *s = create_or_mark(&c, &r);
    if (!s) {
        *out = r;
        return NAN;
    }
    double ms = NAN;
    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    st = time_solve(s, g, g_quick ? 1 : 2, g_quick ? 3 : 7, 0, &ms, &rep);
    if (st != PGPU_SUCCESS) {
        mark_fail(&r, st, pgpu_last_error(s));
    } else {
        r.ms = ms;
        r.iters = rep.iterations;
        r.err = max_error(g);
        r.res = rep.relative_residual;
        if (rep.refinements > 0)
            note_add(&r, "%d refinements, %d float cycles", rep.refinements, rep.iterations);
        if (tol > 0)
            note_add(&r, "tol %.0e", tol);
    }
    pgpu_destroy(s);
    *out = r;
    return r.ms;
}

/* Grows the bench's arrays to hold g (freed and allocated anew). */
static void ensure_cap(const grid_t *g)
{
    if (nbytes(g) <= g_cap)
        return;
    CK(cudaFreeHost(h_buf));
    CK(cudaFree(d_u));
    CK(cudaFree(d_f));
    CK(cudaFree(d_u0));
    g_cap = nbytes(g);
    CK(cudaMalloc(&d_u, g_cap));
    CK(cudaMalloc(&d_f, g_cap));
    CK(cudaMalloc(&d_u0, g_cap));
    CK(cudaMallocHost(&h_buf, g_cap));
    g_fprob = g_uinit = -1;
}

static void bench_precision(int64_t nbig)
{
    /* The default (checked) path against PGPU_FIXED: FMG one pass. */
    for (int pi = 0; pi < 2; pi++) {
        grid_t g = grid3(nbig, pi ? 8 : 4);
        row_t r;
        double fixed = run_fixed("fmg", PGPU_FMG, PROB_DIR, &g, INIT_ZERO, 1, 1, 2.0, 0, &r);
        print_row(&r);
        double ms = run_checked("fmg-def", &g, PGPU_FMG, 0.0, &r);
        if (!r.fail && fixed > 0)
            note_add(&r, "default path: x%.3f the PGPU_FIXED pass above", ms / fixed);
        print_row(&r);
    }
    /* PGPU_MIXED against PGPU_DOUBLE to 1e-10, zero start. */
    {
        grid_t g = grid3(nbig, 8);
        row_t r;
        double dbl = run_checked("vc-tol", &g, PGPU_VCYCLE, 1e-10, &r);
        print_row(&r);
        g_mixed = 1;
        double mx = run_checked("vc-tol", &g, PGPU_VCYCLE, 1e-10, &r);
        if (!r.fail && dbl > 0)
            note_add(&r, "x%.3f the double V-cycles", mx / dbl);
        print_row(&r);
        mx = run_checked("fmg-tol", &g, PGPU_FMG, 1e-10, &r);
        if (!r.fail && dbl > 0)
            note_add(&r, "x%.3f the double V-cycles", mx / dbl);
        print_row(&r);
        g_mixed = 0;
    }
    /* Float against an exact discrete solution. */
    static const int64_t full[] = {511, 1023}, quick[] = {127, 255};
    const int64_t *sizes = g_quick ? quick : full;
    for (int si = 0; si < 2; si++) {
        grid_t g = grid3(sizes[si], 4);
        ensure_cap(&g);
        row_t r;
        run_exact("exact", &g, PGPU_FMG | PGPU_FIXED, 1, &r);
        print_row(&r);
        run_exact("exact", &g, PGPU_VCYCLE, 0, &r);
        if (!r.fail)
            note_add(&r, "default tolerance");
        print_row(&r);
        if (si == 0) {
            grid_t gd = grid3(sizes[si], 8);
            ensure_cap(&gd);
            run_exact("exact", &gd, PGPU_FMG | PGPU_FIXED, 1, &r);
            print_row(&r);
        }
    }
    /* The float FFT on a size of the cuFFT route (n+1 prime: 1031, 257). */
    {
        grid_t g = grid3(g_quick ? 256 : 1030, 4);
        ensure_cap(&g);
        row_t r;
        run_exact("exact", &g, PGPU_FFT, 0, &r);
        if (!r.fail)
            note_add(&r, "cuFFT route (n+1 = %lld)", (long long)g.nx + 1);
        print_row(&r);
    }
}

/* ---- main --------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: bench [--quick] [--csv FILE] [--results FILE] "
                    "[--only sweeps|multigrid|fft|fft2d|masks|krylov|precision|jumps]\n");
}

int main(int argc, char **argv)
{
    const char *csv = NULL, *only = NULL, *md = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            g_quick = 1;
        } else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
            csv = argv[++i];
        } else if (!strcmp(argv[i], "--results") && i + 1 < argc) {
            md = argv[++i];
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc &&
                   (!strcmp(argv[i + 1], "sweeps") || !strcmp(argv[i + 1], "multigrid") ||
                    !strcmp(argv[i + 1], "fft") || !strcmp(argv[i + 1], "masks") || !strcmp(argv[i + 1], "krylov") ||
                    !strcmp(argv[i + 1], "precision") || !strcmp(argv[i + 1], "fft2d") ||
                    !strcmp(argv[i + 1], "jumps"))) {
            only = argv[++i];
        } else {
            usage();
            return 2;
        }
    }
    double t_start = now_s();

    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        printf("bench: skipped: no CUDA device (cudaGetDeviceCount: %s)\n",
               e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
        return 77;
    }
    CK(cudaSetDevice(0));
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int rt = 0, drv = 0;
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    g_l2 = (size_t)prop.l2CacheSize;
    printf("device: %s, %d SMs, %.1f GiB, L2 %.0f MiB, sm_%d%d; CUDA runtime %d, driver %d; "
           "poisson_gpu %d (header %d)%s\n",
           prop.name, prop.multiProcessorCount, (double)prop.totalGlobalMem / (1 << 30),
           (double)prop.l2CacheSize / (1 << 20), prop.major, prop.minor, rt, drv, pgpu_version(),
           PGPU_VERSION, g_quick ? "; --quick" : "");

    if (csv) {
        g_csv = fopen(csv, "w");
        if (!g_csv) {
            fprintf(stderr, "bench: cannot open %s\n", csv);
            return 1;
        }
    }
    if (md) {
        char title[320];
        snprintf(title, sizeof title, "Bench results: %s", prop.name);
        g_md = results_open(md, title, "bench", argc, argv);
        if (!g_md)
            return 1;
        fprintf(g_md, "- device: %s, %d SMs, %.1f GiB, L2 %.0f MiB, sm_%d%d; CUDA runtime %d, driver %d\n\n",
                prop.name, prop.multiProcessorCount, (double)prop.totalGlobalMem / (1 << 30),
                (double)prop.l2CacheSize / (1 << 20), prop.major, prop.minor, rt, drv);
        fprintf(g_md, "Columns: time of `iters` iterations (1: per sweep, cycle, FMG pass or FFT solve), median "
                      "of repeats after warm-up (CUDA events); GB/s effective (3 words a point per sweep, "
                      "red-black iteration or V-cycle, 2 per FMG pass or FFT solve) and its share of the copy "
                      "bandwidth; error: max |u - u_exact|; relres: ||b - A u|| / ||b||.  The notes say what "
                      "else a row measured (bench.c's scenarios).\n\n");
    }
    if (g_quick) {
        g_warm = 1;
        g_reps = 3;
    }

    /* Sizes: 128^3 ... 512^3 (quick: 128^3); every array fits g_cap. */
    static const int64_t full[] = {128, 256, 512}, quick[] = {128};
    const int64_t *sizes = g_quick ? quick : full;
    int nsizes = g_quick ? 1 : 3;
    int64_t nbig = sizes[nsizes - 1];
    grid_t big = grid3(nbig, 8), big2 = grid2(511, 8);
    g_cap = nbytes(&big) > nbytes(&big2) ? nbytes(&big) : nbytes(&big2);
    size_t copy_bytes = g_quick ? ((size_t)256 << 20) : ((size_t)1 << 30);
    if (g_cap < copy_bytes)
        g_cap = copy_bytes;

    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    for (int i = 0; i < MAXREP; i++) {
        CK(cudaEventCreate(&g_ev0[i]));
        CK(cudaEventCreate(&g_ev1[i]));
    }
    CK(cudaMalloc(&d_u, g_cap));
    CK(cudaMalloc(&d_f, g_cap));
    CK(cudaMalloc(&d_u0, g_cap));
    CK(cudaMallocHost(&h_buf, g_cap));

    bench_copy(copy_bytes);
    if (!only || !strcmp(only, "sweeps") || !strcmp(only, "multigrid") || !strcmp(only, "masks") ||
        !strcmp(only, "krylov") || !strcmp(only, "jumps"))
        /* multigrid, masks and jumps count in sweeps */
        bench_sweeps(sizes, nsizes);
    if (!only || !strcmp(only, "sweeps"))
        bench_seed000(nbig);
    if (!only || !strcmp(only, "multigrid"))
        bench_multigrid(sizes, nsizes, nbig);
    if (!only || !strcmp(only, "fft") || !strcmp(only, "fft2d")) {
        if (!only || strcmp(only, "fft2d")) {
            bench_fft3d(sizes, nsizes, PROB_PER);
            /* Dirichlet where n+1 is a power of two (511^3: 512) */
            const int64_t pow2 = nbig - 1;
            if (!g_quick)
                bench_fft3d(&pow2, 1, PROB_DIR);
        }
        bench_fft2d(63);
        bench_fft2d(511);
        static const int64_t wall_n[] = {31, 63, 127, 255, 511};
        for (int i = 0; i < 5; i++)
            for (int fixed = 0; fixed < 2; fixed++)
                bench_fft2d_wall(wall_n[i], fixed);
    }
    if (!only || !strcmp(only, "masks"))
        bench_masks(nbig);
    if (!only || !strcmp(only, "krylov"))
        bench_krylov(nbig);
    if (!only || !strcmp(only, "jumps"))
        bench_jumps(nbig);
    if (!only || !strcmp(only, "precision"))
        bench_precision(nbig); /* last: it grows the arrays */

    CK(cudaFreeHost(h_buf));
    CK(cudaFree(d_u));
    CK(cudaFree(d_f));
    CK(cudaFree(d_u0));
    for (int i = 0; i < MAXREP; i++) {
        CK(cudaEventDestroy(g_ev0[i]));
        CK(cudaEventDestroy(g_ev1[i]));
    }
    CK(cudaStreamDestroy(g_stream));
    if (g_csv && fclose(g_csv) != 0) {
        fprintf(stderr, "bench: writing %s failed\n", csv);
        return 1;
    }
    if (g_md) {
        fprintf(g_md, "\nThe whole run took %.0f s.\n", now_s() - t_start);
        if (fclose(g_md) != 0) {
            fprintf(stderr, "bench: writing %s failed\n", md);
            return 1;
        }
    }
    printf("\nbench: done in %.0f s\n", now_s() - t_start);
    return 0;
}
