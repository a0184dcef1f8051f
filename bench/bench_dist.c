/* bench_dist.c -- the distributed mode on 1 .. all GPUs of this machine, one
 * thread per GPU, one NCCL communicator per GPU count.
 *
 * First the halo-exchange bandwidth between GPU 0 and GPU 1 (ncclSend /
 * ncclRecv of one 512^2 plane each way, as a sweep exchanges it).  Then per
 * GPU count p, weak scaling (n^3 per GPU: a global grid of n x n x p n, the
 * same spacing on every axis) and strong scaling (n^3 in all), double,
 * Dirichlet faces, a rough right-hand side, u = 0 to start:
 *
 *   jacobi     PGPU_FIXED, 20 sweeps: time per sweep
 *   cg-none    PGPU_FIXED, 20 unpreconditioned CG iterations: per iteration
 *   pipe-none  the same, pipelined CG
 *   rbgs       PGPU_FIXED, 20 red-black iterations: per iteration
 *   vcycle     PGPU_FIXED, 5 V(2,1)-cycles: per cycle; V(1,1) too; and
 *              V(2,1) to 1e-10
 *   fmg        one FMG pass (the default solve: tolerance 0), and FMG then
 *              V(2,1)-cycles to 1e-10
 *   cg-mg      CG with the V-cycle preconditioner to a relative residual of
 *              1e-10: total time and iterations
 *
 * Each time is the median over repeats (after a warm-up) of the slowest
 * rank's CUDA-event time around pgpu_solve; the ranks start each repeat
 * together (a barrier).  Efficiency: weak T(1) / T(p), strong T(1) / (p T(p)).
 *
 * Every form takes --results FILE: what it prints, written there as well (a
 * Markdown page, bench/results/<machine>-dist.md for the figures the
 * documentation quotes).
 *
 *   bench_dist [--n N] [--reps R] [--only TEXT]   (N = 512, R = 5; TEXT:
 *              only the scenarios whose name contains it)
 *   bench_dist --largest N [--reps R]
 *              one float FMG pass (the default solve) of N^3 on 1 .. all
 *              GPUs where it fits: u = sin(pi x) sin(pi y) sin(pi z) on the
 *              unit cube, f = 3 pi^2 u, Dirichlet 0; the time and the max
 *              error against u (discretisation and float rounding)
 *   bench_dist --fft N [--reps R]
 *              the FFT of N^3, periodic, float, PGPU_FIXED (the transforms
 *              and transposes alone) on 1 .. all GPUs (one GPU: the
 *              single-GPU FFT), and per GPU count the all-to-all the
 *              solve's two transposes make (grouped ncclSend / ncclRecv of
 *              N^3 / p^2 floats per pair) timed alone; the speed-up over
 *              one GPU, and the time over its bound, the larger of one
 *              GPU's time / p and the two all-to-alls
 *
 * Exit status: 0 done, 77 no device or a build without NCCL, 1 a failure.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "poisson_gpu.h"
#include "results.h"

#define MAX_GPUS 8

/* The scaling table's head (printed again after the halo line inside it). */
#define TABLE_HEAD                                                                                                    \
    "| scaling | GPUs | global grid | scenario | time ms | per iteration ms | iterations | relres | efficiency |\n"   \
    "|---|---|---|---|---|---|---|---|---|\n"

/* --results FILE: everything printed goes there as well (a Markdown page). */
static FILE *g_md;
#define say(...)                                                                                                      \
    do {                                                                                                              \
        printf(__VA_ARGS__);                                                                                          \
        if (g_md) fprintf(g_md, __VA_ARGS__);                                                                         \
    } while (0)
#define CK(call)                                                                                                      \
    do {                                                                                                              \
        cudaError_t e_ = (call);                                                                                      \
        if (e_ != cudaSuccess) {                                                                                      \
            fprintf(stderr, "bench_dist: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__,                        \
                    cudaGetErrorString(e_));                                                                          \
            exit(1);                                                                                                  \
        }                                                                                                             \
    } while (0)
#define CKN(call)                                                                                                     \
    do {                                                                                                              \
        ncclResult_t r_ = (call);                                                                                     \
        if (r_ != ncclSuccess) {                                                                                      \
            fprintf(stderr, "bench_dist: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__,                        \
                    ncclGetErrorString(r_));                                                                          \
            exit(1);                                                                                                  \
        }                                                                                                             \
    } while (0)

static int reps = 5;

typedef struct scenario {
    const char *name;
    unsigned flags;
    pgpu_preconditioner pre;
    int fixed; /* iterations with PGPU_FIXED; 0: to the tolerance */
    int nu1, nu2; /* smoothing iterations (0: the defaults, 2 and 1) */
    double tol;   /* the tolerance (fixed == 0) */
} scenario;

typedef struct rank_job {
    int rank, ranks;
    ncclComm_t comm;
    pgpu_config cfg;
    pthread_barrier_t *bar;
    float ms[16];      /* per repeat */
    int iterations;
    double relres;
    pgpu_status st;
    char msg[600];
    int fill; /* f a constant (cudaMemset), not random: timing of data-blind work */
} rank_job;

/* One warm-up and `reps` timed solves, the ranks starting each together (a
 * barrier), u zeroed before each (interior and boundary data: `bytes`); the
 * CUDA-event times into ms, the report of the last; the first failure's
 * status and message (every rank runs every repeat, so none is left
 * waiting at the barrier). */
static pgpu_status timed_solves(pgpu_solver *s, void *du, const void *df, size_t bytes, cudaStream_t st,
                                pthread_barrier_t *bar, float *ms, pgpu_report *rep, char *msg, size_t cap)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    pgpu_status status = PGPU_SUCCESS;
    for (int r = -1; r < reps; ++r) {
        CK(cudaMemsetAsync(du, 0, bytes, st));
        CK(cudaStreamSynchronize(st));
        pthread_barrier_wait(bar);
        CK(cudaEventRecord(e0, st));
        const pgpu_status one = pgpu_solve(s, du, df, rep);
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        if (one != PGPU_SUCCESS && status == PGPU_SUCCESS) {
            status = one;
            snprintf(msg, cap, "%s", pgpu_last_error(s));
        }
        if (r >= 0) CK(cudaEventElapsedTime(&ms[r], e0, e1));
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return status;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static void *rank_main(void *arg)
{
    rank_job *j = (rank_job *)arg;
    CK(cudaSetDevice(j->rank));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    j->cfg.stream = (struct CUstream_st *)st;
    pgpu_solver *s = NULL;
    j->st = pgpu_create_distributed(&j->cfg, j->comm, &s);
    if (j->st != PGPU_SUCCESS) {
        snprintf(j->msg, sizeof j->msg, "%s", pgpu_last_error(NULL));
        pthread_barrier_wait(j->bar); /* every rank fails together: the barrier count stays right */
        return NULL;
    }
    pgpu_box b;
    pgpu_get_box(s, &b);
    pgpu_config lc;
    pgpu_get_config(s, &lc);
    const size_t elems = (size_t)lc.stride_z * (size_t)(b.n[2] + 2);
    const size_t word = (j->cfg.flags & PGPU_FLOAT) ? sizeof(float) : sizeof(double);
    void *du, *df;
    CK(cudaMalloc(&du, elems * word));
    CK(cudaMalloc(&df, elems * word));
    if (j->fill) {
        CK(cudaMemset(df, 0x3c, elems * word));
    } else {
        double *h = (double *)malloc(elems * sizeof(double));
        uint64_t seed = 12345 + 977 * (uint64_t)j->rank;
        for (size_t e = 0; e < elems; ++e) h[e] = (double)lcg(&seed) / 9007199254740992.0 - 0.5;
        if (word == sizeof(float))
            for (size_t e = 0; e < elems; ++e) ((float *)h)[e] = (float)h[e]; /* in place, forwards */
        CK(cudaMemcpy(df, h, elems * word, cudaMemcpyHostToDevice));
        free(h);
    }
    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    j->st = timed_solves(s, du, df, elems * word, st, j->bar, j->ms, &rep, j->msg, sizeof j->msg);
    j->iterations = rep.iterations;
    j->relres = rep.relative_residual;
    pgpu_destroy(s);
    cudaFree(du);
    cudaFree(df);
    cudaStreamDestroy(st);
    return NULL;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* fn on p threads, one per job (jobs: p structs of `size` bytes), joined. */
static void on_threads(void *(*fn)(void *), void *jobs, size_t size, int p)
{
    pthread_t th[MAX_GPUS];
    for (int r = 0; r < p; ++r) pthread_create(&th[r], NULL, fn, (char *)jobs + (size_t)r * size);
    for (int r = 0; r < p; ++r) pthread_join(th[r], NULL);
}

/* The median over repeats of the slowest rank's time (ms[r]: rank r's). */
static double slowest_median(const float *const *ms, int p)
{
    float worst[16];
    for (int k = 0; k < reps; ++k) {
        worst[k] = 0;
        for (int r = 0; r < p; ++r)
            if (ms[r][k] > worst[k]) worst[k] = ms[r][k];
    }
    qsort(worst, (size_t)reps, sizeof(float), cmp_float);
    return worst[reps / 2];
}

/* The median over repeats of the slowest rank; its iterations. */
static double run(const scenario *sc, int p, int64_t n, int64_t nz, ncclComm_t *comms, int *its, double *relres,
                  char *msg, int periodic)
{
    rank_job jobs[MAX_GPUS];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)p);
    memset(jobs, 0, sizeof jobs);
    for (int r = 0; r < p; ++r) {
        pgpu_config c = pgpu_config_default(n, n, nz);
        c.hz = c.hx; /* cubic cells: the weak grids are p copies of one GPU's */
        c.flags = sc->flags | (sc->fixed ? PGPU_FIXED : 0);
        c.preconditioner = sc->pre;
        c.pre_smooth = sc->nu1;
        c.post_smooth = sc->nu2;
        if (sc->fixed) c.max_iterations = sc->fixed;
        else c.tolerance = sc->tol;
        if (periodic)
            for (int f = 0; f < 6; ++f) c.bc[f] = PGPU_BC_PERIODIC;
        jobs[r] = (rank_job){.rank = r, .ranks = p, .comm = comms[r], .cfg = c, .bar = &bar, .fill = periodic};
    }
    on_threads(rank_main, jobs, sizeof jobs[0], p);
    pthread_barrier_destroy(&bar);
    for (int r = 0; r < p; ++r)
        if (jobs[r].st != PGPU_SUCCESS) {
            snprintf(msg, 800, "rank %d: %s: %s", r, pgpu_status_string(jobs[r].st), jobs[r].msg);
            return NAN;
        }
    const float *ms[MAX_GPUS];
    for (int r = 0; r < p; ++r) ms[r] = jobs[r].ms;
    *its = jobs[0].iterations;
    *relres = jobs[0].relres;
    return slowest_median(ms, p);
}

/* --largest: one rank's part. */
typedef struct big_job {
    int rank, ranks;
    int64_t n;
    ncclComm_t comm;
    pthread_barrier_t *bar;
    float ms[16];
    double err, umax, gb; /* max error, max u, GB held on the GPU (u, f, the handle) */
    pgpu_status st;
    char msg[600];
} big_job;

static void *big_main(void *arg)
{
    big_job *j = (big_job *)arg;
    const double pi = 3.14159265358979323846;
    j->err = j->umax = NAN;
    CK(cudaSetDevice(j->rank));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    pgpu_config c = pgpu_config_default(j->n, j->n, j->n); /* unit cube, Dirichlet, FMG */
    c.flags = PGPU_FMG | PGPU_FLOAT;
    c.stream = (struct CUstream_st *)st;
    pgpu_solver *s = NULL;
    float *du = NULL, *df = NULL, *h = NULL;
    j->st = pgpu_create_distributed(&c, j->comm, &s);
    if (j->st != PGPU_SUCCESS) snprintf(j->msg, sizeof j->msg, "create: %s", pgpu_last_error(NULL));
    pgpu_box b;
    pgpu_config lc;
    size_t elems = 0;
    if (j->st == PGPU_SUCCESS) {
        pgpu_get_box(s, &b);
        pgpu_get_config(s, &lc);
        elems = (size_t)lc.stride_z * (size_t)(b.n[2] + 2);
        j->gb = (2.0 * elems * sizeof(float) + (double)pgpu_workspace_bytes(s)) * 1e-9;
        if (cudaMalloc((void **)&du, elems * sizeof(float)) != cudaSuccess ||
            cudaMalloc((void **)&df, elems * sizeof(float)) != cudaSuccess ||
            !(h = (float *)malloc(elems * sizeof(float)))) {
            j->st = PGPU_ERROR_OUT_OF_MEMORY;
            snprintf(j->msg, sizeof j->msg, "u and f (%.1f GB each) do not fit beside the handle's %.1f GB",
                     elems * 4e-9, pgpu_workspace_bytes(s) * 1e-9);
        }
    }
    /* every rank learns whether all could start (an all-reduction of the verdicts) */
    int *dv = NULL, ok = j->st == PGPU_SUCCESS ? 0 : 1;
    CK(cudaMalloc((void **)&dv, sizeof(int)));
    CK(cudaMemcpy(dv, &ok, sizeof(int), cudaMemcpyHostToDevice));
    CKN(ncclAllReduce(dv, dv, 1, ncclInt, ncclMax, j->comm, st));
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(&ok, dv, sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(dv);
    if (ok == 0) {
        const double hh = 1.0 / (double)(j->n + 1);
        double *sx = (double *)malloc((b.n[0] + 2) * sizeof(double)), *sy = (double *)malloc((b.n[1] + 2) * sizeof(double));
        for (int64_t i = 0; i < b.n[0] + 2; ++i) sx[i] = sin(pi * (double)(b.lo[0] + i) * hh);
        for (int64_t i = 0; i < b.n[1] + 2; ++i) sy[i] = sin(pi * (double)(b.lo[1] + i) * hh);
        memset(h, 0, elems * sizeof(float));
        for (int64_t k = 1; k <= b.n[2]; ++k) {
            const double sz = 3 * pi * pi * sin(pi * (double)(b.lo[2] + k) * hh);
            for (int64_t jj = 1; jj <= b.n[1]; ++jj) {
                float *row = h + (size_t)k * lc.stride_z + (size_t)jj * lc.stride_y;
                for (int64_t i = 1; i <= b.n[0]; ++i) row[i] = (float)(sz * sy[jj] * sx[i]);
            }
        }
        CK(cudaMemcpy(df, h, elems * sizeof(float), cudaMemcpyHostToDevice));
        pgpu_report rep;
        j->st = timed_solves(s, du, df, elems * sizeof(float), st, j->bar, j->ms, &rep, j->msg, sizeof j->msg);
        if (j->st == PGPU_SUCCESS) {
            CK(cudaMemcpy(h, du, elems * sizeof(float), cudaMemcpyDeviceToHost));
            double e = 0, m = 0;
            for (int64_t k = 1; k <= b.n[2]; ++k) {
                const double sz = sin(pi * (double)(b.lo[2] + k) * hh);
                for (int64_t jj = 1; jj <= b.n[1]; ++jj) {
                    const float *row = h + (size_t)k * lc.stride_z + (size_t)jj * lc.stride_y;
                    for (int64_t i = 1; i <= b.n[0]; ++i) {
                        const double x = sz * sy[jj] * sx[i], d = fabs((double)row[i] - x);
                        if (!(d <= e)) e = d; /* (NaN sticks) */
                        if (x > m) m = x;
                    }
                }
            }
            j->err = e;
            j->umax = m;
        }
        free(sx);
        free(sy);
    }
    free(h);
    cudaFree(du);
    cudaFree(df);
    pgpu_destroy(s);
    cudaStreamDestroy(st);
    return NULL;
}

/* --largest: N^3 float FMG on 1 .. ndev GPUs. */
static void largest(int64_t n, int ndev)
{
    say("\n| GPUs | global grid | float FMG pass ms | max error | of max u | GB per GPU (u, f, handle; the most) |\n"
           "|---|---|---|---|---|---|\n");
    for (int p = 1; p <= ndev; ++p) {
        ncclComm_t comms[MAX_GPUS];
        int devs[MAX_GPUS];
        for (int r = 0; r < p; ++r) devs[r] = r;
        CKN(ncclCommInitAll(comms, p, devs));
        big_job jobs[MAX_GPUS];
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, (unsigned)p);
        memset(jobs, 0, sizeof jobs);
        for (int r = 0; r < p; ++r) jobs[r] = (big_job){.rank = r, .ranks = p, .n = n, .comm = comms[r], .bar = &bar};
        on_threads(big_main, jobs, sizeof jobs[0], p);
        pthread_barrier_destroy(&bar);
        for (int r = 0; r < p; ++r) ncclCommDestroy(comms[r]);
        int failed = -1;
        for (int r = 0; r < p && failed < 0; ++r)
            if (jobs[r].st != PGPU_SUCCESS) failed = r;
        if (failed >= 0) {
            say("| %d | %lld^3 | not run: rank %d: %s | | | |\n", p, (long long)n, failed, jobs[failed].msg);
            fflush(stdout);
            continue;
        }
        double err = 0, umax = 0, gb = 0;
        const float *ms[MAX_GPUS];
        for (int r = 0; r < p; ++r) {
            ms[r] = jobs[r].ms;
            if (!(jobs[r].err <= err)) err = jobs[r].err;
            if (jobs[r].umax > umax) umax = jobs[r].umax;
            if (jobs[r].gb > gb) gb = jobs[r].gb;
        }
        say("| %d | %lld^3 | %.1f | %.2e | %.2e | %.1f |\n", p, (long long)n, slowest_median(ms, p), err, err / umax,
               gb);
        fflush(stdout);
    }
}

/* ms of one all-to-all among p GPUs, `count` floats per pair (grouped
 * ncclSend / ncclRecv from one thread), the median of 10 after 3. */
static double a2a_ms(ncclComm_t *comms, int p, size_t count)
{
    float *buf[MAX_GPUS];
    cudaStream_t st[MAX_GPUS];
    for (int r = 0; r < p; ++r) {
        CK(cudaSetDevice(r));
        CK(cudaMalloc((void **)&buf[r], 2 * (size_t)p * count * sizeof(float)));
        CK(cudaMemset(buf[r], 0, 2 * (size_t)p * count * sizeof(float)));
        CK(cudaStreamCreate(&st[r]));
    }
    cudaEvent_t e0, e1;
    CK(cudaSetDevice(0));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float t[13];
    for (int it = 0; it < 13; ++it) {
        for (int r = 0; r < p; ++r) { /* every GPU idle before the start */
            CK(cudaSetDevice(r));
            CK(cudaStreamSynchronize(st[r]));
        }
        CK(cudaSetDevice(0));
        CK(cudaEventRecord(e0, st[0]));
        CKN(ncclGroupStart());
        for (int r = 0; r < p; ++r)
            for (int q = 0; q < p; ++q) {
                if (q == r) continue;
                CKN(ncclSend(buf[r] + (size_t)q * count, count, ncclFloat, q, comms[r], st[r]));
                CKN(ncclRecv(buf[r] + (size_t)(p + q) * count, count, ncclFloat, q, comms[r], st[r]));
            }
        CKN(ncclGroupEnd());
        for (int r = 1; r < p; ++r) { /* the last GPU's end */
            CK(cudaSetDevice(r));
            CK(cudaStreamSynchronize(st[r]));
        }
        CK(cudaSetDevice(0));
        CK(cudaEventRecord(e1, st[0]));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&t[it], e0, e1));
    }
    for (int r = 0; r < p; ++r) {
        CK(cudaSetDevice(r));
        cudaFree(buf[r]);
        cudaStreamDestroy(st[r]);
    }
    CK(cudaSetDevice(0));
    qsort(t + 3, 10, sizeof(float), cmp_float);
    return t[3 + 5];
}

/* --fft: N^3 periodic float FFT solves on 1 .. ndev GPUs. */
static void fft_scaling(int64_t n, int ndev)
{
    const scenario sc = {"fft", PGPU_FFT | PGPU_FLOAT, PGPU_PRECOND_DEFAULT, 1, 0, 0, 0};
    say("\n| GPUs | global grid | FFT solve ms | one GPU ms | speed-up | all-to-all ms (GB per GPU each way) | bound ms | "
        "time / bound |\n"
        "|---|---|---|---|---|---|---|---|\n");
    double t1 = NAN;
    for (int p = 1; p <= ndev; ++p) {
        ncclComm_t comms[MAX_GPUS];
        int devs[MAX_GPUS];
        for (int r = 0; r < p; ++r) devs[r] = r;
        CKN(ncclCommInitAll(comms, p, devs));
        int its = 0;
        double rr = NAN;
        char msg[800] = "";
        const double t = run(&sc, p, n, n, comms, &its, &rr, msg, 1);
        if (p == 1) t1 = t;
        if (isnan(t)) {
            say("| %d | %lld^3 | failed: %s |\n", p, (long long)n, msg);
        } else if (p == 1) {
            say("| 1 | %lld^3 | %.2f | %.2f | 1.00 | - | - | - |\n", (long long)n, t, t);
        } else {
            const size_t count = (size_t)(n * n * n / ((int64_t)p * p));
            const double a = a2a_ms(comms, p, count), bound = fmax(t1 / p, 2 * a);
            say("| %d | %lld^3 | %.2f | %.2f | %.2f | %.2f (%.2f) | %.2f | %.2f |\n", p, (long long)n, t, t1, t1 / t, a,
                (double)count * (p - 1) * 4e-9, bound, t / bound);
        }
        fflush(stdout);
        for (int r = 0; r < p; ++r) ncclCommDestroy(comms[r]);
    }
}

/* GB/s of one plane each way between GPU 0 and 1 (bytes sent by both). */
static double halo_bandwidth(ncclComm_t *comms, int64_t n)
{
    const size_t count = (size_t)(n * n);
    double *buf[2];
    cudaStream_t st[2];
    for (int r = 0; r < 2; ++r) {
        CK(cudaSetDevice(r));
        CK(cudaMalloc((void **)&buf[r], 2 * count * sizeof(double)));
        CK(cudaMemset(buf[r], 0, 2 * count * sizeof(double)));
        CK(cudaStreamCreate(&st[r]));
    }
    cudaEvent_t e0, e1;
    CK(cudaSetDevice(0));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float best = 1e30f;
    for (int it = 0; it < 20; ++it) {
        CK(cudaSetDevice(0));
        CK(cudaEventRecord(e0, st[0]));
        CKN(ncclGroupStart());
        for (int r = 0; r < 2; ++r) {
            CKN(ncclSend(buf[r], count, ncclDouble, 1 - r, comms[r], st[r]));
            CKN(ncclRecv(buf[r] + count, count, ncclDouble, 1 - r, comms[r], st[r]));
        }
        CKN(ncclGroupEnd());
        CK(cudaSetDevice(0));
        CK(cudaEventRecord(e1, st[0]));
        CK(cudaEventSynchronize(e1));
        CK(cudaSetDevice(1));
        CK(cudaStreamSynchronize(st[1]));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (it >= 3 && ms < best) best = ms;
    }
    for (int r = 0; r < 2; ++r) {
        CK(cudaSetDevice(r));
        cudaFree(buf[r]);
        cudaStreamDestroy(st[r]);
    }
    CK(cudaSetDevice(0));
    say("\nhalo exchange, GPU 0 <-> 1, one %lldx%lld double plane each way: %.1f us, %.1f GB/s each way\n\n",
        (long long)n, (long long)n, best * 1e3, count * 8.0 / (best * 1e-3) / 1e9);
    say("%s", TABLE_HEAD); /* (the table goes on after this line) */
    return best;
}

/* The end of a run: the results file closed (1 where writing it failed). */
static int finish(void)
{
    if (g_md && fclose(g_md) != 0) {
        fprintf(stderr, "bench_dist: writing the results file failed\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int64_t n = 512;
    const char *only = NULL;
    int64_t big = 0, fftn = 0;
    const char *results = NULL;
    for (int a = 1; a < argc; ++a) {
        if (!strcmp(argv[a], "--n") && a + 1 < argc) n = atoll(argv[++a]);
        else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--only") && a + 1 < argc) only = argv[++a];
        else if (!strcmp(argv[a], "--largest") && a + 1 < argc) big = atoll(argv[++a]);
        else if (!strcmp(argv[a], "--fft") && a + 1 < argc) fftn = atoll(argv[++a]);
        else if (!strcmp(argv[a], "--results") && a + 1 < argc) results = argv[++a];
        else {
            fprintf(stderr, "usage: bench_dist [--n N] [--reps R] [--only TEXT] | --largest N [--reps R] | --fft N "
                            "[--reps R]; each with [--results FILE]\n");
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    if (reps > 16) reps = 16;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        say("bench_dist: no CUDA device: skipped\n");
        return 77;
    }
    if (!pgpu_has_distributed()) {
        say("bench_dist: the library was built without NCCL: skipped\n");
        return 77;
    }
    if (ndev > MAX_GPUS) ndev = MAX_GPUS;
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    if (results) {
        char title[320];
        snprintf(title, sizeof title, "Distributed bench results: %d x %s", ndev, prop.name);
        g_md = results_open(results, title, "bench_dist", argc, argv);
        if (!g_md) return 1;
        fprintf(g_md, "\n");
    }
    if (big > 0) {
        say("bench_dist: %d x %s, the largest grid: %lld^3, %d repeats\n", ndev, prop.name, (long long)big, reps);
        largest(big, ndev);
        return finish();
    }
    if (fftn > 0) {
        say("bench_dist: %d x %s, periodic float FFT of %lld^3, %d repeats\n", ndev, prop.name, (long long)fftn, reps);
        fft_scaling(fftn, ndev);
        return finish();
    }
    say("bench_dist: %d x %s, n = %lld, %d repeats, double, Dirichlet, rough f\n", ndev, prop.name, (long long)n,
           reps);
    const scenario scs[] = {
        {"jacobi (20 sweeps)", PGPU_JACOBI | PGPU_DOUBLE, PGPU_PRECOND_DEFAULT, 20, 0, 0, 0},
        {"rbgs (20 it.)", PGPU_RBGS | PGPU_DOUBLE, PGPU_PRECOND_DEFAULT, 20, 0, 0, 0},
        {"cg-none (20 it.)", PGPU_CG | PGPU_DOUBLE, PGPU_PRECOND_NONE, 20, 0, 0, 0},
        {"pipe-none (20 it.)", PGPU_CG | PGPU_PIPELINED | PGPU_DOUBLE, PGPU_PRECOND_NONE, 20, 0, 0, 0},
        {"vcycle (5 cycles)", PGPU_VCYCLE | PGPU_DOUBLE, PGPU_PRECOND_DEFAULT, 5, 0, 0, 0},
        {"vcycle V(1,1) (5 cycles)", PGPU_VCYCLE | PGPU_DOUBLE, PGPU_PRECOND_DEFAULT, 5, 1, 1, 0},
        {"vcycle to 1e-10", PGPU_VCYCLE | PGPU_DOUBLE, PGPU_PRECOND_DEFAULT, 0, 0, 0, 1e-10},
        {"fmg (one pass)", PGPU_FMG | PGPU_DOUBLE, PGPU_PRECOND_DEFAULT, 0, 0, 0, 0},
        {"fmg to 1e-10", PGPU_FMG | PGPU_DOUBLE, PGPU_PRECOND_DEFAULT, 0, 0, 0, 1e-10},
        {"cg-mg to 1e-10", PGPU_CG | PGPU_DOUBLE, PGPU_PRECOND_VCYCLE, 0, 0, 0, 1e-10},
    };
    const int nsc = (int)(sizeof scs / sizeof scs[0]);
    double t1w[16] = {0}, t1s[16] = {0};
    say("\n%s", TABLE_HEAD);
    ncclComm_t comms[MAX_GPUS];
    for (int p = 1; p <= ndev; ++p) {
        int devs[MAX_GPUS];
        for (int r = 0; r < p; ++r) devs[r] = r;
        CKN(ncclCommInitAll(comms, p, devs));
        if (p == 2) halo_bandwidth(comms, n);
        for (int weak = 1; weak >= 0; --weak) {
            const int64_t nz = weak ? p * n : n;
            for (int k = 0; k < nsc; ++k) {
                if (only && !strstr(scs[k].name, only)) continue;
                int its = 0;
                double rr = NAN;
                char msg[800] = "";
                const double t = run(&scs[k], p, n, nz, comms, &its, &rr, msg, 0);
                if (isnan(t)) {
                    say("| %s | %d | %lldx%lldx%lld | %s | failed: %s |\n", weak ? "weak" : "strong", p,
                           (long long)n, (long long)n, (long long)nz, scs[k].name, msg);
                    continue;
                }
                double *t1 = weak ? t1w : t1s;
                if (p == 1) t1[k] = t;
                const double eff = weak ? t1[k] / t : t1[k] / (p * t);
                say("| %s | %d | %lldx%lldx%lld | %s | %.2f | %.3f | %d | %s%.2e | %.2f |\n", weak ? "weak" : "strong",
                       p, (long long)n, (long long)n, (long long)nz, scs[k].name, t, its > 0 ? t / its : t, its,
                       scs[k].fixed ? "(fixed) " : "", rr, eff);
                fflush(stdout);
            }
            if (p == 1) { /* one GPU: weak and strong are the same runs */
                memcpy(t1s, t1w, sizeof t1s);
                break;
            }
        }
        for (int r = 0; r < p; ++r) ncclCommDestroy(comms[r]);
    }
    return finish();
}
