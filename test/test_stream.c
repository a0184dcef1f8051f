/* test_stream.c -- streams and determinism.
 *
 *  - two solves on a user's non-blocking stream give bit-identical u and
 *    reports (RBGS and Jacobi, float and double), and the same bits as a
 *    solve on the legacy default stream;
 *  - two handles on two streams, launched back to back without waiting,
 *    each give the result they give alone (handles share nothing);
 *  - a PGPU_FIXED solve captured into a CUDA graph (global capture mode: any
 *    host synchronisation inside pgpu_solve breaks the capture) and launched
 *    twice equals two direct calls bit for bit (for multigrid, the direct
 *    calls replay the library's own graph, the captured one launches);
 *  - PGPU_FIXED multigrid's graphs per (u, f) pair: over more pairs than it
 *    keeps, and with new data in the same arrays, every solve equals a new
 *    handle's first bit for bit;
 *  - pgpu_set_stream / pgpu_get_stream: a handle moved from the default
 *    stream to a non-blocking one (graph replay, cuFFT plans included) gives
 *    the bits of a handle created on it; the monitor is called at every
 *    check with rising iterations, its last call the report's numbers;
 *  - pgpu_set_mask / pgpu_set_coefficients and a solve on a non-blocking
 *    stream while the legacy default stream is busy with other work give
 *    the bits of the same calls on a quiet device: none of the handle's
 *    copies or memsets waits on, or is overtaken through, the legacy
 *    stream.
 */
#include "common.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        return CHECK(0, "%s: %s", what, cudaGetErrorString(e));
    return 1;
}

/* Puts the problem's initial u back on the device. */
static int reset_u(const t_problem *P)
{
    /* A copy from pageable memory may still be landing when cudaMemcpy
     * returns, and non-blocking streams do not wait for it: synchronise. */
    return cuda_ok(cudaMemcpy(P->d_u, P->u_sent, P->bytes, cudaMemcpyHostToDevice), "reset u") &&
           cuda_ok(cudaDeviceSynchronize(), "synchronise after reset");
}

/* One solve of P on handle s (whose stream is `stream`), result into out. */
static pgpu_status solve_once(const t_problem *P, pgpu_solver *s, cudaStream_t stream, void *out,
                              pgpu_report *rep)
{
    if (!reset_u(P))
        return PGPU_ERROR_CUDA;
    const pgpu_status st = pgpu_solve(s, P->d_u, P->d_f, rep);
    if (!cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize") ||
        !t_dev_download(out, P->d_u, P->bytes))
        return PGPU_ERROR_CUDA;
    return st;
}

static int same_report(const pgpu_report *a, const pgpu_report *b)
{
    return a->status == b->status && a->iterations == b->iterations &&
           memcmp(&a->residual_norm, &b->residual_norm, sizeof(double)) == 0 &&
           memcmp(&a->relative_residual, &b->relative_residual, sizeof(double)) == 0 &&
           memcmp(&a->rhs_norm, &b->rhs_norm, sizeof(double)) == 0;
}

static void check_repeat(cudaStream_t stream, unsigned method, unsigned prec, const char *bcs)
{
    pgpu_config cfg = t_config(24, 18, 12, bcs, 0.05, 0.06, 0.08, method | prec);
    cfg.tolerance = prec == PGPU_FLOAT ? 1e-4 : 1e-8;
    cfg.omega = method == PGPU_RBGS ? 1.6 : 0.9;
    char name[160];
    snprintf(name, sizeof name, "%s %s %s", t_method_name(cfg.flags), t_precision_name(prec), bcs);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    pgpu_config on_stream = cfg;
    on_stream.stream = stream;
    pgpu_solver *s = t_create(&on_stream, name), *s0 = t_create(&cfg, name);
    void *a = malloc(P.bytes), *b = malloc(P.bytes), *c = malloc(P.bytes);
    if (s && s0 && a && b && c && t_problem_upload(&P)) {
        pgpu_report ra, rb, rc;
        const pgpu_status sa = solve_once(&P, s, stream, a, &ra);
        const pgpu_status sb = solve_once(&P, s, stream, b, &rb);
        const pgpu_status sc = solve_once(&P, s0, 0, c, &rc);
        CHECK(sa == PGPU_SUCCESS && sb == PGPU_SUCCESS && sc == PGPU_SUCCESS,
              "%s: three solves: %s %s %s (%d iterations)", name, pgpu_status_string(sa),
              pgpu_status_string(sb), pgpu_status_string(sc), ra.iterations);
        CHECK(memcmp(a, b, P.bytes) == 0 && same_report(&ra, &rb),
              "%s: two solves on a non-blocking stream: same bits, same report", name);
        CHECK(memcmp(a, c, P.bytes) == 0 && same_report(&ra, &rc),
              "%s: the default stream gives the same bits and report", name);
    }
    free(a);
    free(b);
    free(c);
    pgpu_destroy(s);
    pgpu_destroy(s0);
    t_problem_free(&P);
}

/* Two handles, two problems, two streams, no waiting in between. */
static void check_two_handles(cudaStream_t s1, cudaStream_t s2)
{
    pgpu_config c1 = t_config(40, 30, 20, "DDNNPP", 0.02, 0.03, 0.04, PGPU_RBGS | PGPU_FIXED | PGPU_DOUBLE);
    pgpu_config c2 = t_config(33, 17, 1, "PPNN", 0.03, 0.05, 0.0, PGPU_JACOBI | PGPU_FIXED | PGPU_FLOAT);
    c1.max_iterations = 20;
    c2.max_iterations = 30;
    c1.stream = s1;
    c2.stream = s2;
    t_problem P1, P2;
    if (!t_problem_init(&P1, &c1))
        return;
    if (!t_problem_init(&P2, &c2)) {
        t_problem_free(&P1);
        return;
    }
    t_problem_randomize(&P1);
    t_problem_randomize(&P2);
    pgpu_solver *h1 = t_create(&c1, "two handles 1"), *h2 = t_create(&c2, "two handles 2");
    void *alone1 = malloc(P1.bytes), *alone2 = malloc(P2.bytes);
    void *both1 = malloc(P1.bytes), *both2 = malloc(P2.bytes);
    if (h1 && h2 && alone1 && alone2 && both1 && both2 && t_problem_upload(&P1) && t_problem_upload(&P2)) {
        pgpu_report r;
        const pgpu_status a1 = solve_once(&P1, h1, s1, alone1, &r);
        const pgpu_status a2 = solve_once(&P2, h2, s2, alone2, &r);
        reset_u(&P1);
        reset_u(&P2);
        const pgpu_status b1 = pgpu_solve(h1, P1.d_u, P1.d_f, NULL);
        const pgpu_status b2 = pgpu_solve(h2, P2.d_u, P2.d_f, NULL);
        cuda_ok(cudaStreamSynchronize(s1), "sync 1");
        cuda_ok(cudaStreamSynchronize(s2), "sync 2");
        t_dev_download(both1, P1.d_u, P1.bytes);
        t_dev_download(both2, P2.d_u, P2.bytes);
        CHECK(a1 == PGPU_SUCCESS && a2 == PGPU_SUCCESS && b1 == PGPU_SUCCESS && b2 == PGPU_SUCCESS,
              "two handles: statuses %s %s %s %s", pgpu_status_string(a1), pgpu_status_string(a2),
              pgpu_status_string(b1), pgpu_status_string(b2));
        CHECK(memcmp(alone1, both1, P1.bytes) == 0 && memcmp(alone2, both2, P2.bytes) == 0,
              "two handles on two streams at once: each result equals its result alone");
    }
    free(alone1);
    free(alone2);
    free(both1);
    free(both2);
    pgpu_destroy(h1);
    pgpu_destroy(h2);
    t_problem_free(&P1);
    t_problem_free(&P2);
}

static void check_graph(cudaStream_t stream, unsigned method, unsigned prec, const char *bcs)
{
    pgpu_config cfg = t_config(20, 16, 12, bcs, 0.05, 0.06, 0.07, method | prec | PGPU_FIXED);
    cfg.max_iterations = 3;
    cfg.stream = stream;
    char name[160];
    snprintf(name, sizeof name, "graph %s %s %s", t_method_name(cfg.flags), t_precision_name(prec), bcs);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    pgpu_solver *s = t_create(&cfg, name);
    void *direct = malloc(P.bytes), *replayed = malloc(P.bytes);
    if (!s || !direct || !replayed || !t_problem_upload(&P))
        goto done;

    /* Two direct calls, no report (a report would be allowed, but keep the
     * two paths alike). */
    pgpu_status st1 = PGPU_SUCCESS, st2 = PGPU_SUCCESS;
    if (!reset_u(&P))
        goto done;
    st1 = pgpu_solve(s, P.d_u, P.d_f, NULL);
    st2 = pgpu_solve(s, P.d_u, P.d_f, NULL);
    if (!cuda_ok(cudaStreamSynchronize(stream), "sync") || !t_dev_download(direct, P.d_u, P.bytes))
        goto done;

    /* The same call captured once, launched twice. */
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    if (!reset_u(&P) ||
        !cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture"))
        goto done;
    const pgpu_status cap = pgpu_solve(s, P.d_u, P.d_f, NULL);
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    CHECK(cap == PGPU_SUCCESS && end == cudaSuccess && graph != NULL,
          "%s: pgpu_solve captured: %s, cudaStreamEndCapture: %s %s", name, pgpu_status_string(cap),
          cudaGetErrorString(end), cap ? pgpu_last_error(s) : "");
    if (cap == PGPU_SUCCESS && end == cudaSuccess && graph &&
        cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate") &&
        cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch") &&
        cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch") &&
        cuda_ok(cudaStreamSynchronize(stream), "sync") && t_dev_download(replayed, P.d_u, P.bytes)) {
        CHECK(st1 == PGPU_SUCCESS && st2 == PGPU_SUCCESS && memcmp(direct, replayed, P.bytes) == 0,
              "%s: two graph launches equal two direct calls bit for bit", name);
    }
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    cudaGetLastError(); /* a failed capture leaves an error behind; keep it out of later checks */
done:
    free(direct);
    free(replayed);
    pgpu_destroy(s);
    t_problem_free(&P);
}

/* PGPU_FIXED multigrid replays a CUDA graph per (u, f) pair, at most 4 kept:
 * one handle solving six problems in turn, twice over (evictions and new
 * captures), then one of them again with new data in the same arrays,
 * must give each time the bits a new handle gives on its first solve. */
enum { REPLAY_PROBLEMS = 6 };

static int fresh_solve(const pgpu_config *cfg, t_problem *P, void *out, const char *name)
{
    pgpu_solver *s = t_create(cfg, name);
    if (!s)
        return 0;
    const pgpu_status st = solve_once(P, s, (cudaStream_t)cfg->stream, out, NULL);
    pgpu_destroy(s);
    return CHECK(st == PGPU_SUCCESS, "%s: reference solve: %s", name, pgpu_status_string(st));
}

static void check_replays(cudaStream_t stream, unsigned method, unsigned prec)
{
    pgpu_config cfg = t_config(20, 16, 12, "DDNNDD", 0.05, 0.06, 0.07, method | prec | PGPU_FIXED);
    cfg.max_iterations = 2;
    cfg.stream = stream;
    char name[160];
    snprintf(name, sizeof name, "graph replays %s %s", t_method_name(cfg.flags), t_precision_name(prec));
    t_problem P[REPLAY_PROBLEMS];
    void *want[REPLAY_PROBLEMS] = {0}, *got = NULL;
    int ready = 0;
    for (; ready < REPLAY_PROBLEMS; ++ready) {
        if (!t_problem_init(&P[ready], &cfg))
            break;
        t_problem_randomize(&P[ready]);
        want[ready] = malloc(P[ready].bytes);
        if (!want[ready] || !t_problem_upload(&P[ready]) ||
            !fresh_solve(&cfg, &P[ready], want[ready], name)) {
            ++ready;
            goto done;
        }
    }
    if (ready < REPLAY_PROBLEMS)
        goto done;
    got = malloc(P[0].bytes);
    pgpu_solver *s = got ? t_create(&cfg, name) : NULL;
    if (!s)
        goto done;
    int same = 0, runs = 0;
    for (int round = 0; round < 2; ++round)
        for (int k = 0; k < REPLAY_PROBLEMS; ++k) {
            const int q = round ? REPLAY_PROBLEMS - 1 - k : k;
            pgpu_report rep;
            const pgpu_status st = solve_once(&P[q], s, stream, got, &rep);
            ++runs;
            same += st == PGPU_SUCCESS && rep.iterations == cfg.max_iterations - (method == PGPU_FMG) &&
                    memcmp(got, want[q], P[q].bytes) == 0;
        }
    CHECK(same == runs, "%s: %d of %d solves over %d (u, f) pairs equal a new handle's bit for bit", name, same,
          runs, REPLAY_PROBLEMS);
    /* New data in arrays whose graph is kept (problem 0 was the last one). */
    t_problem_randomize(&P[0]);
    if (t_problem_upload(&P[0]) && fresh_solve(&cfg, &P[0], want[0], name)) {
        const pgpu_status st = solve_once(&P[0], s, stream, got, NULL);
        CHECK(st == PGPU_SUCCESS && memcmp(got, want[0], P[0].bytes) == 0,
              "%s: new data in the same arrays: the replay reads it (bit for bit)", name);
    }
    pgpu_destroy(s);
done:
    free(got);
    for (int k = 0; k < ready; ++k) {
        free(want[k]);
        t_problem_free(&P[k]);
    }
}

/* A monitor that records its calls. */
typedef struct calls {
    int n, rising, last_it;
    double last_rn, last_rel;
} calls;

static void record_call(void *user, int it, double rn, double rel)
{
    calls *c = (calls *)user;
    if (c->n > 0 && it <= c->last_it)
        c->rising = 0;
    c->n++;
    c->last_it = it;
    c->last_rn = rn;
    c->last_rel = rel;
}

/* A handle created on the default stream and moved to `stream` gives the
 * bits of one created there; the monitor sees every check. */
static void check_set_stream(cudaStream_t stream, unsigned flags, const char *bcs)
{
    pgpu_config cfg = t_config(33, 20, 17, bcs, 0.03, 0.05, 0.06, flags);
    const unsigned method = flags & PGPU_METHOD_MASK;
    const int mixed = (flags & PGPU_MIXED) != 0, by_correction = method == PGPU_VCYCLE && (flags & PGPU_FLOAT);
    if (method == PGPU_RBGS)
        cfg.tolerance = (flags & PGPU_FLOAT) ? 1e-4 : 1e-9;
    else if (method == PGPU_VCYCLE && !by_correction)
        cfg.tolerance = 1e-9;
    char name[160];
    snprintf(name, sizeof name, "set_stream %s %s %s", t_method_name(flags), t_precision_name(t_precision(flags)),
             bcs);
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    pgpu_config on_stream = cfg;
    on_stream.stream = stream;
    pgpu_solver *moved = t_create(&cfg, name), *born = t_create(&on_stream, name);
    void *a = malloc(P.bytes), *b = malloc(P.bytes);
    if (moved && born && a && b && t_problem_upload(&P)) {
        pgpu_report ra, rb;
        struct CUstream_st *got = (struct CUstream_st *)1;
        const pgpu_status g0 = pgpu_get_stream(moved, &got);
        CHECK(g0 == PGPU_SUCCESS && got == NULL, "%s: pgpu_get_stream before: %s, %p", name, pgpu_status_string(g0),
              (void *)got);
        /* A solve on the default stream first, so that graphs and plans exist. */
        const pgpu_status s0 = solve_once(&P, moved, 0, a, &ra);
        const pgpu_status ss = pgpu_set_stream(moved, stream);
        const pgpu_status g1 = pgpu_get_stream(moved, &got);
        CHECK(s0 == PGPU_SUCCESS && ss == PGPU_SUCCESS && g1 == PGPU_SUCCESS && got == stream,
              "%s: solve %s, pgpu_set_stream %s, pgpu_get_stream %s gives the new stream", name,
              pgpu_status_string(s0), pgpu_status_string(ss), pgpu_status_string(g1));
        calls c = {0, 1, 0, 0.0, 0.0};
        pgpu_set_monitor(moved, record_call, &c);
        const pgpu_status sa = solve_once(&P, moved, stream, a, &ra);
        const pgpu_status sb = solve_once(&P, born, stream, b, &rb);
        CHECK(sa == PGPU_SUCCESS && sb == PGPU_SUCCESS && memcmp(a, b, P.bytes) == 0 && same_report(&ra, &rb),
              "%s: after pgpu_set_stream the bits of a handle created on the stream (%s, %s)", name,
              pgpu_status_string(sa), pgpu_status_string(sb));
        const int checks = !(flags & PGPU_FIXED) && (mixed || (method != PGPU_FFT && method != PGPU_FMG));
        const int last_it = mixed ? ra.refinements : ra.iterations;
        if (checks && by_correction) /* the correction's size, no residual */
            CHECK(c.n >= 1 && c.rising && c.last_it == last_it && c.last_rn != c.last_rn && c.last_rel > 0 &&
                      c.last_rel < 1e-4,
                  "%s: monitor called %d times, rising %d, last at %d (the report's %d), residual NaN (%g), "
                  "correction %.3e",
                  name, c.n, c.rising, c.last_it, last_it, c.last_rn, c.last_rel);
        else if (checks)
            CHECK(c.n >= 1 && c.rising && c.last_it == last_it && c.last_rel == ra.relative_residual &&
                      c.last_rn == ra.residual_norm,
                  "%s: monitor called %d times, rising %d, last (%d, %.3e) = the report's (%d, %.3e)", name, c.n,
                  c.rising, c.last_it, c.last_rel, last_it, ra.relative_residual);
        else
            CHECK(c.n == 0, "%s: no convergence checks, no monitor calls (%d)", name, c.n);
        pgpu_set_monitor(moved, NULL, NULL);
        c.n = 0;
        solve_once(&P, moved, stream, a, &ra);
        CHECK(c.n == 0, "%s: the monitor removed is not called (%d)", name, c.n);
    }
    CHECK(pgpu_set_stream(NULL, stream) == PGPU_ERROR_INVALID_ARGUMENT &&
              pgpu_get_stream(moved, NULL) == PGPU_ERROR_INVALID_ARGUMENT &&
              pgpu_set_monitor(NULL, record_call, NULL) == PGPU_ERROR_INVALID_ARGUMENT,
          "%s: NULL handle / NULL out: PGPU_ERROR_INVALID_ARGUMENT", name);
    free(a);
    free(b);
    pgpu_destroy(moved);
    pgpu_destroy(born);
    t_problem_free(&P);
}

/* A solid ball and two layers of Dirichlet cells under the top face: the
 * general form's coarse tables and its regions. */
static uint8_t *ball_pool_mask(const ref_grid *g)
{
    uint8_t *m = calloc((size_t)ref_elems(g), 1);
    if (!m)
        return NULL;
    REF_FOR_EACH_INTERIOR(g, i, j, k)
    {
        const double x = (double)i / (g->n[0] + 1) - 0.5, y = (double)j / (g->n[1] + 1) - 0.5,
                     z = (double)k / (g->n[2] + 1) - 0.45;
        uint8_t t = PGPU_CELL_FLUID;
        if (x * x + y * y + z * z < 0.06)
            t = PGPU_CELL_SOLID;
        else if (k >= g->n[2] - 1)
            t = PGPU_CELL_DIRICHLET;
        m[ref_idx(g, i, j, k)] = t;
    }
    return m;
}

static void check_busy_legacy(cudaStream_t stream, unsigned prec)
{
    pgpu_config cfg = t_config(37, 29, 23, "DDNNNN", 0.03, 0.035, 0.04, PGPU_VCYCLE | prec);
    cfg.tolerance = prec == PGPU_FLOAT ? 0 : 1e-9;
    const char *name = prec == PGPU_FLOAT ? "busy legacy stream, float" : "busy legacy stream, double";
    t_problem P;
    if (!t_problem_init(&P, &cfg))
        return;
    t_problem_randomize(&P);
    uint8_t *mask = ball_pool_mask(&P.g);
    double *beta = t_problem_array(&P, NULL);
    void *tb = beta ? malloc(P.bytes) : NULL;
    void *quiet = malloc(P.bytes), *busy = malloc(P.bytes);
    const size_t big = (size_t)1 << 30;
    void *d_mask = NULL, *d_beta = NULL, *d_big = NULL;
    pgpu_config on_stream = cfg;
    on_stream.stream = stream;
    pgpu_solver *q = t_create(&cfg, name), *b = t_create(&on_stream, name);
    if (mask && beta && tb && quiet && busy && q && b && t_problem_upload(&P)) {
        REF_FOR_EACH_INTERIOR(&P.g, i, j, k)
        beta[ref_idx(&P.g, i, j, k)] = 1.0 + 0.5 * sin(0.3 * (double)i) * cos(0.2 * (double)(j + k));
        t_to_typed(prec, beta, tb, P.elems);
        d_mask = t_dev_upload(mask, (size_t)P.elems);
        d_beta = t_dev_upload(tb, P.bytes);
        d_big = t_dev_alloc(big);
    }
    if (d_mask && d_beta && d_big && cuda_ok(cudaDeviceSynchronize(), "synchronise after uploads")) {
        pgpu_report rq, rb;
        pgpu_status sq = pgpu_set_mask(q, d_mask);
        if (sq == PGPU_SUCCESS) sq = pgpu_set_coefficients(q, d_beta);
        if (sq == PGPU_SUCCESS) sq = solve_once(&P, q, 0, quiet, &rq);
        /* The same calls on b, each behind a queue of writes on the legacy
         * stream (tens of milliseconds), not waited for. */
        pgpu_status sb = PGPU_ERROR_CUDA;
        if (reset_u(&P)) {
            int queued = 1;
            for (int r = 0; r < 40 && queued; ++r)
                queued = cuda_ok(cudaMemsetAsync(d_big, r, big, 0), "a memset on the legacy stream");
            sb = pgpu_set_mask(b, d_mask);
            for (int r = 0; r < 40 && queued; ++r)
                queued = cuda_ok(cudaMemsetAsync(d_big, r, big, 0), "a memset on the legacy stream");
            if (sb == PGPU_SUCCESS) sb = pgpu_set_coefficients(b, d_beta);
            if (sb == PGPU_SUCCESS) sb = pgpu_solve(b, P.d_u, P.d_f, &rb);
            if (!cuda_ok(cudaDeviceSynchronize(), "synchronise") || !t_dev_download(busy, P.d_u, P.bytes))
                sb = PGPU_ERROR_CUDA;
        }
        CHECK(sq == PGPU_SUCCESS && sb == PGPU_SUCCESS, "%s: quiet %s (%s), busy %s (%s)", name,
              pgpu_status_string(sq), pgpu_last_error(q), pgpu_status_string(sb), pgpu_last_error(b));
        if (sq == PGPU_SUCCESS && sb == PGPU_SUCCESS)
            CHECK(memcmp(quiet, busy, P.bytes) == 0 && same_report(&rq, &rb),
                  "%s: mask, beta and solve on a non-blocking stream give the quiet device's bits and report "
                  "(%d and %d cycles)", name, rq.iterations, rb.iterations);
    }
    t_dev_free(d_mask);
    t_dev_free(d_beta);
    t_dev_free(d_big);
    pgpu_destroy(q);
    pgpu_destroy(b);
    free(mask);
    free(beta);
    free(tb);
    free(quiet);
    free(busy);
    t_problem_free(&P);
}

int main(void)
{
    t_require_device("test_stream");
    t_seed();
    cudaStream_t s1 = NULL, s2 = NULL;
    if (!cuda_ok(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), "cudaStreamCreateWithFlags") ||
        !cuda_ok(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"))
        return t_finish("test_stream");

    for (int p = 0; p < 2; ++p) {
        const unsigned prec = p ? PGPU_FLOAT : PGPU_DOUBLE;
        check_repeat(s1, PGPU_RBGS, prec, "DNPPDD");
        check_repeat(s1, PGPU_JACOBI, prec, "DNPPDD");
        check_repeat(s1, PGPU_RBGS, prec, "NNPPNN"); /* singular: the mean's reduction too */
        check_graph(s1, PGPU_JACOBI, prec, "DDNNDD");
        check_graph(s1, PGPU_RBGS, prec, "PPNNPP");
        check_graph(s1, PGPU_FMG, prec, "DDNNDD");
        check_graph(s1, PGPU_VCYCLE, prec, "NNNNNN"); /* singular: the mean's scan and removal too */
        check_replays(s1, PGPU_FMG, prec);
        check_replays(s1, PGPU_VCYCLE, prec);
    }
    check_two_handles(s1, s2);
    check_set_stream(s2, PGPU_VCYCLE | PGPU_DOUBLE, "DNPPDD");
    check_set_stream(s2, PGPU_VCYCLE | PGPU_FLOAT, "DDDDDD"); /* checks the correction */
    check_set_stream(s2, PGPU_VCYCLE | PGPU_MIXED, "NNPPNN");
    check_set_stream(s2, PGPU_RBGS | PGPU_FLOAT, "DDNNPP");
    check_set_stream(s2, PGPU_FMG | PGPU_FLOAT | PGPU_FIXED, "DDNNDD");
    check_set_stream(s2, PGPU_FFT | PGPU_DOUBLE, "DDNNPP");
    check_set_stream(s2, PGPU_FFT | PGPU_MIXED, "DDDDDD");
    check_busy_legacy(s1, PGPU_DOUBLE);
    check_busy_legacy(s1, PGPU_FLOAT);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    return t_finish("test_stream");
}
