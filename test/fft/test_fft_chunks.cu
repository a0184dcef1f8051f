/* test_fft_chunks.cu -- the FFT's cuFFT route with its lines in chunks
 * (FFT_CHUNK; a white-box unit: the bound, fft_chunk_elems, is lowered so
 * that small grids take many chunks, the last one shorter).  For face sets
 * of every kind of axis transform (DST-I, float's odd extension, DCT-II,
 * Dirichlet-Neumann both ways, periodic with line solves), 2D and 3D, odd
 * sizes and padded strides, float and double:
 *  - the handle's workspace shrinks with the bound (the scratch and the line
 *    solves' pivots are a chunk's; in double a grid with no transformed
 *    axis keeps its spectrum-sized scratch), and pgpu_workspace_size says so;
 *  - the solve equals the one-chunk solve to rounding (each line's
 *    transform is the same; cuFFT may order a batch's sums otherwise), and
 *    its residual by the host reference is at most twice the one-chunk
 *    one's and small (relative 1e-10 in double, 1e-3 in float: these
 *    grids' lambda_max / lambda_min times float's eps);
 *  - u's ghosts and padding are unchanged.
 */
#include "../whitebox.h"

namespace wb_fft_chunks {

struct chunk_case {
    int64_t n[3];
    const char *bcs;
    int pad;
    int keeps_double; // no transformed axis: in double the pivots share a scratch of the spectrum's size
};

/* One solve of P's problem with the chunk bound `limit`; u (host, double)
 * and the workspace bytes come back.  0 when it did not run. */
static int solve(t_problem *P, pgpu_config cfg, int64_t limit, double *u, size_t *bytes, size_t *query)
{
    pgpu::fft_chunk_elems = limit;
    *query = 0;
    pgpu_workspace_size(&cfg, query);
    pgpu_solver *s = t_create(&cfg, "FFT");
    int ok = 0;
    if (s) {
        *bytes = pgpu_workspace_bytes(s);
        pgpu_report rep;
        pgpu_status st;
        ok = t_problem_solve(P, s, "FFT solve", &rep, &st, u) && st == PGPU_SUCCESS;
        pgpu_destroy(s);
    }
    pgpu::fft_chunk_elems = pgpu::FFT_CHUNK;
    return ok;
}

static void check(const chunk_case &c, unsigned prec)
{
    pgpu_config cfg = t_config(c.n[0], c.n[1], c.n[2], c.bcs, 1.0 / (double)(c.n[0] + 1), 1.3 / (double)(c.n[1] + 1),
                               0.8 / (double)(c.n[2] + 1), PGPU_FFT | prec);
    if (c.pad) {
        cfg.stride_y = cfg.nx + 5;
        if (cfg.nz > 1) cfg.stride_z = cfg.stride_y * (cfg.ny + 2) + 3;
    }
    t_problem P;
    if (!t_problem_init(&P, &cfg)) return;
    t_problem_randomize(&P);
    char name[160];
    snprintf(name, sizeof name, "%s %lldx%lldx%lld %s%s", t_precision_name(prec), (long long)c.n[0],
             (long long)c.n[1], (long long)c.n[2], c.bcs, c.pad ? " padded" : "");
    double *one = t_problem_array(&P, P.u), *many = t_problem_array(&P, P.u);
    void *typed = malloc(P.bytes);
    size_t b1 = 0, bm = 0, q1 = 0, qm = 0;
    // 300 elements: a handful of lines a chunk, never a divisor of every count.
    const int ran = one && many && typed && solve(&P, cfg, pgpu::FFT_CHUNK, one, &b1, &q1) &&
                    solve(&P, cfg, 300, many, &bm, &qm) && t_problem_download(&P, NULL, typed);
    CHECK(ran, "%s: both solves ran", name);
    if (ran) {
        const double scale = fmax(ref_max_abs(&P.g, one), 1e-300);
        const double d = ref_max_diff(&P.g, one, many) / scale;
        const double tol = prec == PGPU_DOUBLE ? 1e-12 : 1e-5;
        const ref_norms r1 = ref_residual(&P.g, one, P.f, NULL), rm = ref_residual(&P.g, many, P.f, NULL);
        CHECK(d <= tol, "%s: in chunks of 300 elements equals one chunk: max diff %.2e of max |u| (<= %.0e)", name, d,
              tol);
        const double rel = rm.norm / fmax(rm.rhs_norm, 1e-300), rtol = prec == PGPU_DOUBLE ? 1e-10 : 1e-3;
        CHECK(rm.norm <= 2.0 * r1.norm + 1e-300 * rm.rhs_norm && rel <= rtol,
              "%s: residual in chunks %.3e, in one %.3e (relative %.2e <= %.0e)", name, rm.norm, r1.norm, rel, rtol);
        const bool shrinks = bm < b1 || (c.keeps_double && prec == PGPU_DOUBLE && bm == b1);
        CHECK(shrinks && qm == bm && q1 == b1, "%s: workspace %zu bytes in chunks, %zu in one (query %zu, %zu)", name,
              bm, b1, qm, q1);
        CHECK(t_problem_changed_outside(&P, typed) == 0, "%s: ghosts and padding unchanged", name);
    }
    free(typed);
    free(one);
    free(many);
    t_problem_free(&P);
}

int run(int, char **)
{
    t_require_device("test_fft_chunks");
    static_assert(pgpu::FDM_NMAX < 136, "the 2D cases must pass the dense transforms' size");
    t_seed();
    // n + 1 prime on the Dirichlet axes: the cuFFT route, not the row kernels;
    // 2D past FDM_NMAX a side: not the dense transforms.
    const chunk_case cases[] = {
        {{36, 22, 18}, "DDDDDD", 0, 0}, {{29, 17, 23}, "NNNNNN", 1, 0}, {{21, 18, 16}, "DNNDDN", 0, 0},
        {{25, 30, 12}, "PPDDNN", 1, 0}, {{138, 28, 1}, "DDND", 0, 0},   {{30, 136, 1}, "PPDD", 0, 1},
        {{128, 40, 24}, "DNNDDD", 0, 0}, // x transformed at the prime length 2n+1 = 257
    };
    for (const chunk_case &c : cases)
        for (int p = 0; p < 2; ++p) check(c, p ? PGPU_FLOAT : PGPU_DOUBLE);
    return t_finish("test_fft_chunks");
}

} // namespace wb_fft_chunks
