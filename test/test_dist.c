/* The distributed mode on every GPU of the machine, one thread per GPU
 * (one process): for 1 .. all GPUs, each method's distributed solve of a
 * global problem against the host reference and the single-GPU solve of
 * the same problem -- every face type on the split axis (Dirichlet,
 * Neumann, periodic across the ranks), singular problems, odd global sizes
 * that do not split evenly, 2D (split along y) and 3D (along z), float and
 * double, padded local strides.  Stationary methods with PGPU_FIXED match
 * the host reference's iterations (which checks the halo exchange and the
 * red-black colours across the interfaces); Krylov methods and the FFT
 * reach the exact discrete solution (the FFT: also one GPU's FFT solve, to
 * rounding).  Then bad input: configs that differ between
 * ranks, more ranks than the grid splits into, methods not served: the
 * same status on every rank, and no rank left waiting.
 *
 * gpu suite (and dist); skipped without a device. */
#include "common.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS 8

typedef struct job {
    int rank, dev;
    ncclComm_t comm;
    pgpu_config cfg;       /* the global config this rank passes */
    const t_problem *P;    /* the global problem (host, packed) */
    double *u_out;         /* the global result: each rank writes its interior */
    pgpu_status create_st, solve_st;
    pgpu_report rep;
    pgpu_box box;
    char msg[600];
    int64_t ghosts_changed; /* non-interface ghosts whose bits changed */
    int solve;              /* 0: create only */
} job;

/* The global element of local element (I, J, K) (ghosts included). */
static int64_t global_of(const t_problem *P, const pgpu_box *b, int64_t I, int64_t J, int64_t K)
{
    return ref_idx(&P->g, I + b->lo[0], J + b->lo[1], P->g.dims == 3 ? K + b->lo[2] : 0);
}

static void *worker(void *arg)
{
    job *w = (job *)arg;
    w->msg[0] = 0;
    w->ghosts_changed = 0;
    if (cudaSetDevice(w->dev) != cudaSuccess) {
        snprintf(w->msg, sizeof w->msg, "cudaSetDevice(%d) failed", w->dev);
        w->create_st = PGPU_ERROR_CUDA;
        return NULL;
    }
    pgpu_solver *s = NULL;
    w->create_st = pgpu_create_distributed(&w->cfg, w->comm, &s);
    if (w->create_st != PGPU_SUCCESS) {
        snprintf(w->msg, sizeof w->msg, "%s", pgpu_last_error(NULL));
        return NULL;
    }
    pgpu_get_box(s, &w->box);
    if (!w->solve) {
        pgpu_destroy(s);
        return NULL;
    }
    const t_problem *P = w->P;
    pgpu_config lc;
    pgpu_get_config(s, &lc);
    const unsigned prec = t_precision(lc.flags);
    const size_t word = t_word(prec);
    const int is3d = P->g.dims == 3;
    const pgpu_box *b = &w->box;
    const int64_t nI = b->n[0] + 2, nJ = b->n[1] + 2, nK = is3d ? b->n[2] + 2 : 1;
    const int64_t elems = is3d ? lc.stride_z * nK : lc.stride_y * nJ;
    double *hu = (double *)malloc(elems * sizeof(double)), *hf = (double *)malloc(elems * sizeof(double));
    void *tu = malloc(elems * word), *tf = malloc(elems * word), *back = malloc(elems * word);
    for (int64_t e = 0; e < elems; ++e) hu[e] = hf[e] = T_POISON_NAN; /* padding */
    for (int64_t K = 0; K < nK; ++K)
        for (int64_t J = 0; J < nJ; ++J)
            for (int64_t I = 0; I < nI; ++I) {
                const int64_t l = I + J * lc.stride_y + K * lc.stride_z, g = global_of(P, b, I, J, K);
                hu[l] = P->u[g];
                hf[l] = P->f[g];
            }
    t_to_typed(prec, hu, tu, elems);
    t_to_typed(prec, hf, tf, elems);
    void *du = NULL, *df = NULL;
    if (cudaMalloc(&du, elems * word) != cudaSuccess || cudaMalloc(&df, elems * word) != cudaSuccess ||
        cudaMemcpy(du, tu, elems * word, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(df, tf, elems * word, cudaMemcpyHostToDevice) != cudaSuccess) {
        snprintf(w->msg, sizeof w->msg, "device arrays failed");
        w->solve_st = PGPU_ERROR_CUDA;
    } else {
        memset(&w->rep, 0, sizeof w->rep);
        w->solve_st = pgpu_solve(s, du, df, &w->rep);
        if (w->solve_st != PGPU_SUCCESS) snprintf(w->msg, sizeof w->msg, "%s", pgpu_last_error(s));
        cudaDeviceSynchronize();
        cudaMemcpy(back, du, elems * word, cudaMemcpyDeviceToHost);
        double *r = (double *)malloc(elems * sizeof(double));
        t_from_typed(prec, back, r, elems);
        const int axis = is3d ? 2 : 1;
        for (int64_t K = 0; K < nK; ++K)
            for (int64_t J = 0; J < nJ; ++J)
                for (int64_t I = 0; I < nI; ++I) {
                    const int64_t l = I + J * lc.stride_y + K * lc.stride_z;
                    const int64_t idx[3] = {I, J, K}, n[3] = {nI, nJ, nK};
                    int interior = 1, ghost_face = -1, nghost = 0;
                    for (int a = 0; a < (is3d ? 3 : 2); ++a)
                        if (idx[a] == 0 || idx[a] == n[a] - 1) {
                            interior = 0;
                            ++nghost;
                            ghost_face = 2 * a + (idx[a] != 0);
                        }
                    if (interior) {
                        w->u_out[global_of(P, b, I, J, K)] = r[l];
                    } else if (nghost == 1) {
                        /* a face ghost: the library may write it only on faces between ranks */
                        const int between = ghost_face / 2 == axis &&
                                            ((ghost_face % 2 == 0 && (b->rank > 0 || P->g.bc[2 * axis] == PGPU_BC_PERIODIC)) ||
                                             (ghost_face % 2 == 1 && (b->rank < b->ranks - 1 || P->g.bc[2 * axis] == PGPU_BC_PERIODIC))) &&
                                            b->ranks > 1;
                        if (!between && memcmp((char *)back + l * word, (char *)tu + l * word, word) != 0)
                            ++w->ghosts_changed;
                    } else if (memcmp((char *)back + l * word, (char *)tu + l * word, word) != 0) {
                        ++w->ghosts_changed; /* edges and corners: never written */
                    }
                }
        free(r);
    }
    cudaFree(du);
    cudaFree(df);
    free(hu);
    free(hf);
    free(tu);
    free(tf);
    free(back);
    pgpu_destroy(s);
    return NULL;
}

static int ndev = 0;

/* The communicators over the first `ranks` GPUs, made once per count (a
 * handle uses its communicator until pgpu_destroy; the next case's handles
 * take it over): a communicator costs about a second to make. */
static ncclComm_t comm_cache[MAX_RANKS + 1][MAX_RANKS];
static int comm_made[MAX_RANKS + 1];

static void free_comms(void)
{
    for (int n = 1; n <= MAX_RANKS; ++n)
        if (comm_made[n])
            for (int r = 0; r < n; ++r) ncclCommDestroy(comm_cache[n][r]);
}

/* Runs one job per rank, each rank on its own GPU (device r). */
static void run_ranks(job *jobs, int ranks)
{
    ncclComm_t *comms = comm_cache[ranks];
    int devs[MAX_RANKS];
    for (int r = 0; r < ranks; ++r) devs[r] = r;
    if (!comm_made[ranks]) {
        ncclResult_t nr = ncclCommInitAll(comms, ranks, devs);
        if (!CHECK(nr == ncclSuccess, "ncclCommInitAll over %d GPUs: %s", ranks, ncclGetErrorString(nr))) {
            for (int r = 0; r < ranks; ++r) jobs[r].create_st = jobs[r].solve_st = PGPU_ERROR_CUDA;
            return;
        }
        comm_made[ranks] = 1;
    }
    pthread_t th[MAX_RANKS];
    for (int r = 0; r < ranks; ++r) {
        jobs[r].rank = r;
        jobs[r].dev = devs[r];
        jobs[r].comm = comms[r];
        pthread_create(&th[r], NULL, worker, &jobs[r]);
    }
    for (int r = 0; r < ranks; ++r) pthread_join(th[r], NULL);
}

static double hz_scale = 0.9; /* hz = hz_scale / (nz + 1): > 1.4 makes z weak (semicoarsening) */

/* The distributed solve of cfg (global, packed) over `ranks` GPUs, checked:
 * stationary methods (fixed_its > 0) against the host reference, Krylov
 * methods and V-cycles to a tolerance (fixed_its == 0) against an exact
 * discrete solution, V-cycles with fixed_its > 0 against the single-GPU
 * solve of the same problem.  FMG: one pass (fixed_its == 0, the default
 * solve) or PGPU_FIXED (fixed_its > 0) no further from an exact discrete
 * solution than one GPU's FMG (its cubic interpolation takes other
 * windows next to the interfaces between two slab levels), or to 1e-10
 * (fixed_its < 0) against that solution. */
static void dist_case(const char *bc, int64_t nx, int64_t ny, int64_t nz, unsigned flags, pgpu_preconditioner pre,
                      int fixed_its, int ranks, int padded)
{
    pgpu_config cfg = t_config(nx, ny, nz, bc, 1.0 / (nx + 1), 1.3 / (ny + 1), hz_scale / (nz + 1), flags);
    cfg.preconditioner = pre;
    const int vcycle = (flags & PGPU_VCYCLE) != 0, fmg = (flags & PGPU_FMG) != 0;
    const int krylov = (flags & (PGPU_CG | PGPU_BICGSTAB)) != 0 || (vcycle && !fixed_its) || (fmg && fixed_its < 0);
    const int fft = (flags & PGPU_FFT) != 0;
    const int single = (vcycle && fixed_its) || (fmg && fixed_its >= 0) || fft; /* against the single-GPU solve */
    const int exactly = krylov || fft; /* against the exact discrete solution */
    if (fmg && fixed_its < 0) {
        cfg.tolerance = 1e-10;
        fixed_its = 0;
    }
    if (fixed_its) {
        cfg.flags |= PGPU_FIXED;
        cfg.max_iterations = fixed_its;
    }
    const unsigned prec = t_precision(flags);
    char name[200];
    snprintf(name, sizeof name, "%s %s%s %s %lldx%lldx%lld over %d%s", t_method_name(flags),
             pre == PGPU_PRECOND_NONE ? "none " : pre == PGPU_PRECOND_JACOBI ? "jacobi " : pre == PGPU_PRECOND_FFT ? "fft "
             : krylov ? "vcycle " : "",
             t_precision_name(prec), bc, (long long)nx, (long long)ny, (long long)nz, ranks,
             padded == 2 ? " padded on odd ranks" : padded ? " padded" : "");
    t_problem P;
    if (!CHECK(t_problem_init(&P, &cfg), "%s: host problem", name)) return;
    t_problem_randomize(&P);
    const ref_grid *g = &P.g;
    if (fmg) { /* a smooth solution and boundary data (FMG's error is then small: an interface's shows) */
        double w[3];
        for (int a = 0; a < 3; ++a) /* a whole period on periodic axes */
            w[a] = g->bc[2 * a] == PGPU_BC_PERIODIC ? 2 * 3.14159265358979 / g->n[a] : 1.3 * 3.14159265358979 / (g->n[a] + 1);
        for (int64_t k = 0; k < (g->dims == 3 ? g->n[2] + 2 : 1); ++k)
            for (int64_t j = 0; j < g->n[1] + 2; ++j)
                for (int64_t i = 0; i < g->n[0] + 2; ++i)
                    P.u[ref_idx(g, i, j, k)] = sin(w[0] * i + 0.4) * cos(w[1] * j - 0.3) * (g->dims == 3 ? sin(w[2] * k + 0.7) : 1.0);
    }
    double *ref = t_problem_array(&P, P.u);
    double *exact = NULL;
    if (exactly || fmg) {
        /* an exact discrete solution: f = A u_exact with u's ghost data */
        exact = t_problem_array(&P, P.u);
        if (!fmg) REF_FOR_EACH_INTERIOR(g, i, j, k) exact[ref_idx(g, i, j, k)] = t_rand(-1, 1);
        double *Au = t_problem_array(&P, NULL);
        ref_apply(g, exact, Au);
        REF_FOR_EACH_INTERIOR(g, i, j, k) P.f[ref_idx(g, i, j, k)] = t_round(prec, Au[ref_idx(g, i, j, k)]);
        free(Au);
        if (ref_is_singular(g)) ref_remove_mean(g, exact);
    }
    if (!exactly && !single) {
        for (int it = 0; it < fixed_its; ++it) {
            if (flags & PGPU_JACOBI) ref_jacobi(g, ref, P.f, cfg.omega > 0 ? cfg.omega : 1.0);
            else ref_rbgs(g, ref, P.f, cfg.omega > 0 ? cfg.omega : 1.0);
        }
    }
    /* values as the device sees them */
    t_problem_upload(&P);
    t_from_typed(prec, P.u_sent, P.u, P.elems);
    {
        void *tf = malloc(P.bytes);
        t_to_typed(prec, P.f, tf, P.elems);
        t_from_typed(prec, tf, P.f, P.elems);
        free(tf);
    }
    if (single) { /* the reference: one GPU, the same config */
        pgpu_solver *s1 = t_create(&cfg, name);
        pgpu_report r1;
        pgpu_status st1 = PGPU_ERROR_CUDA;
        if (s1) t_problem_solve(&P, s1, name, &r1, &st1, ref);
        CHECK(s1 && st1 == PGPU_SUCCESS, "%s: the single-GPU solve: %s", name, pgpu_status_string(st1));
        pgpu_destroy(s1);
    } else if (!exactly) { /* the reference from the rounded start */
        free(ref);
        ref = t_problem_array(&P, P.u);
        for (int it = 0; it < fixed_its; ++it) {
            if (flags & PGPU_JACOBI) ref_jacobi(g, ref, P.f, cfg.omega > 0 ? cfg.omega : 1.0);
            else ref_rbgs(g, ref, P.f, cfg.omega > 0 ? cfg.omega : 1.0);
        }
    }
    double *u_out = t_problem_array(&P, P.u); /* the ghosts as sent; the interior from the ranks */
    REF_FOR_EACH_INTERIOR(g, i, j, k) u_out[ref_idx(g, i, j, k)] = T_POISON_NAN;
    job jobs[MAX_RANKS];
    memset(jobs, 0, sizeof jobs);
    for (int r = 0; r < ranks; ++r) {
        jobs[r].cfg = cfg;
        if (padded == 1 || (padded == 2 && r % 2 == 1)) {
            jobs[r].cfg.stride_y = nx + 5;
            jobs[r].cfg.stride_z = (nx + 5) * (ny + 2) + 7;
        }
        jobs[r].P = &P;
        jobs[r].u_out = u_out;
        jobs[r].solve = 1;
    }
    run_ranks(jobs, ranks);
    int ok = 1;
    for (int r = 0; r < ranks; ++r) {
        ok &= CHECK(jobs[r].create_st == PGPU_SUCCESS, "%s: rank %d create: %s (%s)", name, r,
                    pgpu_status_string(jobs[r].create_st), jobs[r].msg);
        if (jobs[r].create_st != PGPU_SUCCESS) continue;
        ok &= CHECK(jobs[r].solve_st == PGPU_SUCCESS, "%s: rank %d solve: %s (%s)", name, r,
                    pgpu_status_string(jobs[r].solve_st), jobs[r].msg);
        ok &= CHECK(jobs[r].ghosts_changed == 0, "%s: rank %d changed %lld ghosts outside the interfaces", name, r,
                    (long long)jobs[r].ghosts_changed);
        if (r > 0)
            ok &= CHECK(jobs[r].rep.iterations == jobs[0].rep.iterations &&
                            (fixed_its || jobs[r].rep.residual_norm == jobs[0].rep.residual_norm),
                        "%s: rank %d reports %d iterations, residual %.6e; rank 0 %d, %.6e", name, r,
                        jobs[r].rep.iterations, jobs[r].rep.residual_norm, jobs[0].rep.iterations,
                        jobs[0].rep.residual_norm);
    }
    if (ok && !exactly && !single && ref_is_singular(g)) { /* the solver returns the solution of mean 0 */
        ref_remove_mean(g, ref);
        ref_remove_mean(g, u_out);
    }
    if (ok && fmg && single) {
        const double scale = ref_max_abs(g, exact);
        const double e1 = ref_max_diff(g, ref, exact), ed = ref_max_diff(g, u_out, exact);
        CHECK(ed <= 1.5 * e1 + (prec == PGPU_FLOAT ? 1e-6 : 1e-12) * scale,
              "%s: max |u - exact| = %.3e of max %.3e, one GPU's %.3e", name, ed, scale, e1);
        t_note("%s: max |u - exact| %.3e, one GPU's %.3e (of max %.3e)", name, ed, e1, scale);
    } else if (ok) {
        const double scale = ref_max_abs(g, exactly ? exact : ref);
        const double diff = ref_max_diff(g, u_out, exactly ? exact : ref);
        double tol;
        if (fft) tol = prec == PGPU_FLOAT ? 1e-4 : 1e-11; /* rounding times the condition number */
        else if (krylov) tol = prec == PGPU_FLOAT ? 2e-3 : 1e-6; /* cond * tolerance on these grids */
        else tol = prec == PGPU_FLOAT ? 3e-5 : single ? 1e-11 : 1e-12;
        CHECK(diff <= tol * scale, "%s: max |u - %s| = %.3e of max %.3e (bound %.1e) after %d iterations", name,
              exactly ? "exact" : single ? "one GPU's" : "host reference", diff, scale, tol, jobs[0].rep.iterations);
        if (fft) {
            const double d1 = ref_max_diff(g, u_out, ref), e1 = ref_max_diff(g, ref, exact);
            CHECK(d1 <= tol * scale, "%s: max |u - one GPU's| = %.3e of max %.3e (bound %.1e)", name, d1, scale, tol);
            t_note("%s: max |u - exact| %.3e, one GPU's %.3e, between them %.3e (of max %.3e)", name, diff, e1, d1,
                   scale);
        }
        if (exactly && prec == PGPU_DOUBLE) {
            ref_norms rn = ref_residual(g, u_out, P.f, NULL);
            CHECK(rn.relative <= 2e-10 && (fixed_its || /* (a PGPU_FIXED solve reports no residual) */
                                           fabs(jobs[0].rep.relative_residual - rn.relative) <= 1e-3 * rn.relative + 1e-14),
                  "%s: host relative residual %.3e, reported %.3e (%d iterations)", name, rn.relative,
                  jobs[0].rep.relative_residual, jobs[0].rep.iterations);
        }
        if (krylov) t_note("%s: %d iterations", name, jobs[0].rep.iterations);
    }
    free(ref);
    free(exact);
    free(u_out);
    t_problem_free(&P);
}

/* Create-time agreement: every rank gets `want`; cfg2 for odd ranks. */
static void bad_case(const char *what, const pgpu_config *cfg, const pgpu_config *cfg_odd, int ranks,
                     pgpu_status want)
{
    job jobs[MAX_RANKS];
    memset(jobs, 0, sizeof jobs);
    for (int r = 0; r < ranks; ++r) jobs[r].cfg = (r % 2 && cfg_odd) ? *cfg_odd : *cfg;
    run_ranks(jobs, ranks);
    for (int r = 0; r < ranks; ++r)
        CHECK(jobs[r].create_st == want && jobs[r].msg[0], "%s over %d: rank %d %s (want %s): %s", what, ranks, r,
              pgpu_status_string(jobs[r].create_st), pgpu_status_string(want), jobs[r].msg);
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;
    t_require_device("dist");
    if (!pgpu_has_distributed()) {
        printf("dist: the library was built without NCCL: skipped\n");
        return T_EXIT_SKIP;
    }
    ndev = t_device_count();
    if (ndev > MAX_RANKS) ndev = MAX_RANKS;
    t_note("%d GPUs", ndev);
    const unsigned D = PGPU_DOUBLE, F = PGPU_FLOAT;
    for (int ranks = 1; ranks <= ndev; ++ranks) {
        /* stationary methods, fixed iterations, against the host reference */
        const char *bcs3[] = {"DDDDDD", "NDDNPP", "PPNNDN", "NNNNNN", "PPPPPP", "DNPPNN"};
        for (int b = 0; b < 6; ++b) {
            dist_case(bcs3[b], 13, 10, 23, PGPU_JACOBI | D, PGPU_PRECOND_DEFAULT, 4, ranks, 0);
            dist_case(bcs3[b], 11, 9, 19, PGPU_RBGS | D, PGPU_PRECOND_DEFAULT, 3, ranks, b == 1);
        }
        dist_case("NNPP", 17, 29, 1, PGPU_RBGS | D, PGPU_PRECOND_DEFAULT, 3, ranks, 0); /* 2D: split along y */
        dist_case("DDNN", 16, 31, 1, PGPU_JACOBI | F, PGPU_PRECOND_DEFAULT, 5, ranks, 0);
        dist_case("PPDN", 12, 17, 21, PGPU_RBGS | F, PGPU_PRECOND_DEFAULT, 3, ranks, 0);
        /* Krylov methods to 1e-10 (float: its own stop), against the exact discrete solution */
        const char *kb[] = {"DDDDDD", "NNDNPP", "NNNNNN", "PPPPPP", "DDNNND"};
        for (int b = 0; b < 5; ++b) {
            dist_case(kb[b], 21, 17, 27, PGPU_CG | D, PGPU_PRECOND_VCYCLE, 0, ranks, b == 4);
            dist_case(kb[b], 15, 14, 19, PGPU_CG | D, PGPU_PRECOND_NONE, 0, ranks, 0);
        }
        dist_case("DNPPND", 19, 13, 23, PGPU_CG | D, PGPU_PRECOND_JACOBI, 0, ranks, 0);
        dist_case("NNDDPP", 18, 13, 22, PGPU_CG | PGPU_PIPELINED | D, PGPU_PRECOND_NONE, 0, ranks, 0);
        dist_case("DDNNDD", 18, 13, 25, PGPU_CG | PGPU_PIPELINED | D, PGPU_PRECOND_VCYCLE, 0, ranks, 0);
        dist_case("NNPPDN", 17, 16, 21, PGPU_BICGSTAB | D, PGPU_PRECOND_VCYCLE, 0, ranks, 0);
        dist_case("DDDD", 33, 41, 1, PGPU_CG | D, PGPU_PRECOND_VCYCLE, 0, ranks, 0);
        dist_case("NNPP", 29, 37, 1, PGPU_BICGSTAB | D, PGPU_PRECOND_NONE, 0, ranks, 0);
        dist_case("DDDDNN", 21, 17, 27, PGPU_CG | F, PGPU_PRECOND_VCYCLE, 0, ranks, 0);
        dist_case("PPPPPP", 16, 16, 16, PGPU_CG | F, PGPU_PRECOND_NONE, 0, ranks, 0);
        /* multigrid: V-cycles to 1e-10 against the exact solution, fixed
         * V/W-cycles against one GPU's; the larger grids keep a coarse
         * level in slabs (odd z: vertex coarsening, slabs at odd nodes) */
        const char *vb[] = {"DDDDDD", "NNDNPP", "NNNNNN", "PPPPPP", "DDPPND", "NDNDDN"};
        for (int b = 0; b < 6; ++b) {
            dist_case(vb[b], 21, 17, 28, PGPU_VCYCLE | D, PGPU_PRECOND_DEFAULT, 0, ranks, b == 4);
            dist_case(vb[b], 19, 16, 26, PGPU_VCYCLE | D, PGPU_PRECOND_DEFAULT, 2, ranks, 0);
        }
        dist_case("DDDD", 45, 38, 1, PGPU_VCYCLE | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("NNPP", 45, 38, 1, PGPU_VCYCLE | D, PGPU_PRECOND_DEFAULT, 2, ranks, 0);
        dist_case("DDNNDD", 21, 17, 27, PGPU_VCYCLE | PGPU_WCYCLE | D, PGPU_PRECOND_DEFAULT, 2, ranks, 0);
        dist_case("DDDDNN", 23, 17, 27, PGPU_VCYCLE | F, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("DDNNDN", 96, 80, 221, PGPU_VCYCLE | D, PGPU_PRECOND_DEFAULT, 2, ranks, 0);
        dist_case("NNDDPP", 96, 80, 200, PGPU_VCYCLE | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("DDDDDD", 96, 80, 221, PGPU_CG | D, PGPU_PRECOND_VCYCLE, 0, ranks, 0);
        /* FMG: one pass (the default), fixed, to 1e-10; small grids (slabs
         * on level 0 only) and larger ones (two slab levels) */
        for (int b = 0; b < 6; ++b) {
            dist_case(vb[b], 19, 16, 26, PGPU_FMG | D, PGPU_PRECOND_DEFAULT, 0, ranks, b == 4);
            dist_case(vb[b], 21, 17, 28, PGPU_FMG | D, PGPU_PRECOND_DEFAULT, b % 2 ? -1 : 2, ranks, 0);
        }
        dist_case("DDDD", 45, 38, 1, PGPU_FMG | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("NNPP", 45, 38, 1, PGPU_FMG | D, PGPU_PRECOND_DEFAULT, -1, ranks, 0);
        dist_case("DDDDNN", 23, 17, 27, PGPU_FMG | F, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("DDNNDN", 96, 80, 221, PGPU_FMG | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("NDDNDD", 96, 80, 221, PGPU_FMG | D, PGPU_PRECOND_DEFAULT, 3, ranks, 0);
        dist_case("NNDDPP", 96, 80, 200, PGPU_FMG | D, PGPU_PRECOND_DEFAULT, -1, ranks, 0);
        dist_case("NNNNNN", 96, 80, 200, PGPU_FMG | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("DDDDDD", 96, 80, 221, PGPU_FMG | F, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        /* slabs of 2^22 points: two red-black iterations in one tiled pass,
         * the planes next to the interfaces redone in the bands (the slabs
         * above have 7 planes or more too: band passes of two single ones) */
        hz_scale = 4.0;
        dist_case("DDNNDD", 129, 128, 520, PGPU_VCYCLE | D, PGPU_PRECOND_DEFAULT, 2, ranks, 0);
        /* three slab levels: the finest cycle's own FMG step on slabs */
        dist_case("DNDDND", 129, 128, 520, PGPU_FMG | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        /* strides that differ between ranks (allowed): level 0 has no bands then */
        dist_case("DDNNDD", 21, 17, 27, PGPU_VCYCLE | D, PGPU_PRECOND_DEFAULT, 2, ranks, 2);
        dist_case("DDDDNN", 11, 9, 19, PGPU_RBGS | D, PGPU_PRECOND_DEFAULT, 3, ranks, 2);
        hz_scale = 3.0; /* z weak: the first levels do not coarsen z */
        dist_case("DDNNDD", 64, 48, 90, PGPU_VCYCLE | D, PGPU_PRECOND_DEFAULT, 2, ranks, 0);
        dist_case("DDNNDD", 64, 48, 90, PGPU_FMG | D, PGPU_PRECOND_DEFAULT, 0, ranks, 2);
        hz_scale = 0.9;
        /* the FFT: each face type, a mixed axis (line solves) on each
         * axis, 2D and 3D, odd sizes, padded strides; and as CG's
         * preconditioner */
        const char *fb[] = {"DDDDDD", "NNNNNN", "PPPPPP", "DDNNPP", "PPDDNN", "NDPPDD", "DDNDPP", "PPNNDN"};
        for (int b = 0; b < 8; ++b) dist_case(fb[b], 21, 17, 27, PGPU_FFT | D, PGPU_PRECOND_DEFAULT, 0, ranks, b == 3);
        dist_case("PPPPPP", 16, 12, 20, PGPU_FFT | F, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        /* all periodic with x and z powers of two: the row kernels on each
         * slab, the x modes split over the ranks (uneven splits of z and of
         * the modes over 3 ranks), the slabs moved in one chunk or (the
         * largest: 4 MiB of spectrum a chunk) two to four */
        dist_case("PPPPPP", 64, 24, 32, PGPU_FFT | D, PGPU_PRECOND_DEFAULT, 0, ranks, 1);
        dist_case("PPPPPP", 32, 21, 16, PGPU_FFT | F, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("PPPPPP", 128, 40, 64, PGPU_FFT | D, PGPU_PRECOND_DEFAULT, 1, ranks, 0); /* PGPU_FIXED */
        dist_case("PPPPPP", 256, 128, 128, PGPU_FFT | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("PPPPPP", 32, 16, 16, PGPU_CG | D, PGPU_PRECOND_FFT, 0, ranks, 0);
        dist_case("PPPPPP", 256, 128, 128, PGPU_CG | D, PGPU_PRECOND_FFT, 0, ranks, 0); /* chunks in a replayed graph */
        dist_case("DDNNDN", 13, 19, 23, PGPU_FFT | F, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("PPDDNN", 20, 18, 24, PGPU_FFT | D, PGPU_PRECOND_DEFAULT, 1, ranks, 0); /* PGPU_FIXED */
        dist_case("DDPP", 33, 41, 1, PGPU_FFT | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("NDPP", 29, 37, 1, PGPU_FFT | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("PPDN", 30, 26, 1, PGPU_FFT | F, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("NNNN", 31, 27, 1, PGPU_FFT | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        /* several mixed axes: the last by line solves, the others by their sine transform */
        dist_case("NDDNDD", 21, 17, 27, PGPU_FFT | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("DNNDDN", 19, 23, 25, PGPU_FFT | F, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("DNND", 29, 31, 1, PGPU_FFT | D, PGPU_PRECOND_DEFAULT, 0, ranks, 0);
        dist_case("DDNNPP", 21, 17, 27, PGPU_CG | D, PGPU_PRECOND_FFT, 0, ranks, 0);
        dist_case("DDNNDD", 21, 17, 27, PGPU_CG | D, PGPU_PRECOND_FFT, 0, ranks, 0);
    }
    /* bad input, on two or more ranks: the same status everywhere, no hang */
    for (int ranks = 2; ranks <= ndev; ++ranks) {
        pgpu_config c = t_config(16, 16, 4 * ranks, "DDDDDD", 0.1, 0.1, 0.1, PGPU_CG | PGPU_DOUBLE);
        pgpu_config other = c;
        other.nz = c.nz + 2;
        bad_case("nz differs", &c, &other, ranks, PGPU_ERROR_INVALID_ARGUMENT);
        other = c;
        other.tolerance = 1e-6;
        bad_case("tolerance differs", &c, &other, ranks, PGPU_ERROR_INVALID_ARGUMENT);
        other = c;
        other.hx = -1; /* refused on the odd ranks only */
        bad_case("a bad config on some ranks", &c, &other, ranks, PGPU_ERROR_INVALID_ARGUMENT);
        pgpu_config shallow = c;
        shallow.nz = 2 * ranks - 1;
        bad_case("too few planes", &shallow, NULL, ranks, PGPU_ERROR_INVALID_ARGUMENT);
        pgpu_config mixed = c;
        mixed.flags = PGPU_FFT | PGPU_MIXED;
        bad_case("MIXED", &mixed, NULL, ranks, PGPU_ERROR_UNSUPPORTED);
        /* V-cycles across an odd periodic split axis: its coarse ring is not
         * nested, its restriction reaches two planes across a face */
        pgpu_config ring = t_config(16, 16, 4 * ranks + 1, "DDDDPP", 0.1, 0.1, 0.1, PGPU_VCYCLE | PGPU_DOUBLE);
        bad_case("V-cycles, odd periodic z", &ring, NULL, ranks, PGPU_ERROR_UNSUPPORTED);
    }
    free_comms();
    return t_finish("dist");
}
