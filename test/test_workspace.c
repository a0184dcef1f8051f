/* test_workspace.c -- pgpu_workspace_size against pgpu_workspace_bytes.
 *
 * For every method, precision (float, double, mixed where the method takes
 * it), option (W-cycles, PGPU_FIXED), boundary set (Dirichlet, Neumann,
 * periodic, mixed axes: the FFT's three routes) and size (1 point, odd, even,
 * prime, padded strides, 2D and 3D): the query's answer equals, to the byte,
 * the device memory the handle pgpu_create returns for the same config holds
 * (pgpu_workspace_bytes).  The query allocates nothing: the device's free
 * memory is the same before and after it (cuFFT's own modules are loaded
 * first by one FFT handle, as any first use of cuFFT loads them).  Configs
 * pgpu_create refuses are refused by the query with the same status.
 * Needs a device (exit 77 without one).
 */
#include "common.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

static size_t free_bytes(void)
{
    size_t free_b = 0, total = 0;
    if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) return 0;
    return free_b;
}

static void compare(const char *what, const pgpu_config *cfg)
{
    size_t q = 0;
    const size_t before = free_bytes();
    const pgpu_status qs = pgpu_workspace_size(cfg, &q);
    const size_t after = free_bytes();
    char qmsg[600];
    snprintf(qmsg, sizeof qmsg, "%s", pgpu_last_error(NULL));
    pgpu_solver *s = NULL;
    const pgpu_status cs = pgpu_create(cfg, &s);
    if (cs != PGPU_SUCCESS) {
        CHECK(qs == cs && q == 0, "%-44s refused by both: create %s, query %s (\"%s\")", what,
              pgpu_status_string(cs), pgpu_status_string(qs), qmsg);
        return;
    }
    const size_t held = pgpu_workspace_bytes(s);
    const int64_t points = cfg->nx * cfg->ny * cfg->nz;
    CHECK(qs == PGPU_SUCCESS && q == held, "%-44s query %zu, handle %zu bytes (%+lld; %.2f bytes per point)",
          what, q, held, (long long)q - (long long)held, (double)held / (double)points);
    /* (not "unchanged": memory an earlier handle released may come back to
     * the free pool while the query runs) */
    CHECK(after >= before, "%-44s free device memory not taken by the query (%zu -> %zu)", what, before, after);
    pgpu_destroy(s);
}

static pgpu_config make(int64_t nx, int64_t ny, int64_t nz, const char *bc, unsigned flags)
{
    return t_config(nx, ny, nz, bc, 1.0 / (double)(nx + 1), 1.0 / (double)(ny + 1),
                    nz > 1 ? 1.0 / (double)(nz + 1) : 1.0, flags);
}

int main(void)
{
    t_require_device("test_workspace");

    /* Load cuFFT's modules once, as the first FFT handle of a process does. */
    {
        /* (per precision and transform: cuFFT loads what a plan type needs
         * on its first use, into memory no handle owns; seen once: 8 MB at
         * the first float FFT) */
        const char *faces[] = {"PPPPPP", "DDDDDD", "NNNNNN", "DDNNPP"};
        for (int k = 0; k < 8; ++k) {
            pgpu_config c = make(32, 32, k >= 4 ? 1 : 32, faces[k % 4], PGPU_FFT | (k & 1 ? PGPU_FLOAT : PGPU_DOUBLE));
            pgpu_solver *s = NULL;
            for (int p = 0; p < 2; ++p) {
                c.flags = PGPU_FFT | (p ? PGPU_FLOAT : PGPU_DOUBLE);
                if (pgpu_create(&c, &s) == PGPU_SUCCESS) pgpu_destroy(s);
                s = NULL;
            }
        }
        pgpu_config c = make(1, 1, 1, "DDDDDD", PGPU_FFT | PGPU_FLOAT);
        pgpu_solver *s = t_create(&c, "warm-up FFT handle");
        pgpu_destroy(s);
    }

    const struct {
        int64_t nx, ny, nz;
    } sizes[] = {{1, 1, 1}, {33, 33, 33}, {64, 48, 40}, {127, 127, 127}, {97, 31, 7}, {65, 65, 1}, {200, 131, 1},
                 {1, 9, 1}};
    const char *bcs[] = {"DDDDDD", "NNNNNN", "PPPPPP", "DNPPNN", "DDNNDD"};
    const unsigned methods[] = {PGPU_JACOBI, PGPU_RBGS, PGPU_VCYCLE, PGPU_VCYCLE | PGPU_WCYCLE, PGPU_FMG,
                                PGPU_FMG | PGPU_FIXED, PGPU_FFT, PGPU_FFT | PGPU_FIXED};
    const unsigned precs[] = {PGPU_FLOAT, PGPU_DOUBLE, PGPU_MIXED};
    char what[128];
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; ++z)
        for (size_t b = 0; b < sizeof bcs / sizeof *bcs; ++b)
            for (size_t m = 0; m < sizeof methods / sizeof *methods; ++m)
                for (size_t p = 0; p < sizeof precs / sizeof *precs; ++p) {
                    const unsigned method = methods[m] & PGPU_METHOD_MASK;
                    if (precs[p] == PGPU_MIXED && (method == PGPU_JACOBI || method == PGPU_RBGS)) continue;
                    pgpu_config c = make(sizes[z].nx, sizes[z].ny, sizes[z].nz, bcs[b], methods[m] | precs[p]);
                    snprintf(what, sizeof what, "%lldx%lldx%lld %s %s%s %s", (long long)c.nx, (long long)c.ny,
                             (long long)c.nz, bcs[b], t_method_name(c.flags),
                             methods[m] & PGPU_FIXED ? "(fixed)" : "",
                             precs[p] == PGPU_MIXED ? "mixed" : t_precision_name(precs[p]));
                    compare(what, &c);
                }

    /* The Krylov methods: their vectors and every preconditioner. */
    {
        const unsigned kinds[] = {PGPU_CG, PGPU_CG | PGPU_PIPELINED, PGPU_BICGSTAB, PGPU_CG | PGPU_FIXED};
        const pgpu_preconditioner pres[] = {PGPU_PRECOND_VCYCLE, PGPU_PRECOND_FFT, PGPU_PRECOND_JACOBI,
                                            PGPU_PRECOND_NONE};
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; ++k)
            for (size_t q = 0; q < sizeof pres / sizeof *pres; ++q)
                for (size_t p = 0; p < sizeof precs / sizeof *precs; ++p) {
                    if (precs[p] == PGPU_MIXED && (pres[q] == PGPU_PRECOND_JACOBI || pres[q] == PGPU_PRECOND_NONE ||
                                                   (kinds[k] & PGPU_PIPELINED)))
                        continue;
                    pgpu_config c = make(64, 48, 40, "DNPPNN", kinds[k] | precs[p]);
                    c.preconditioner = pres[q];
                    snprintf(what, sizeof what, "64x48x40 DNPPNN %s preconditioner %d %s", t_method_name(c.flags),
                             (int)pres[q], precs[p] == PGPU_MIXED ? "mixed" : t_precision_name(precs[p]));
                    compare(what, &c);
                }
    }

    /* Padded strides, and the FFT's row routes (all-periodic powers of two;
     * all-Dirichlet with n + 1 of small primes). */
    {
        pgpu_config c = make(30, 20, 10, "DDDDDD", PGPU_FMG | PGPU_DOUBLE);
        c.stride_y = 40;
        c.stride_z = 40 * 25;
        compare("30x20x10 strides 40, 1000 FMG double", &c);
        c.flags = PGPU_FFT | PGPU_FLOAT;
        compare("30x20x10 strides 40, 1000 FFT float", &c);
    }
    {
        pgpu_config c = make(256, 64, 32, "PPPPPP", PGPU_FFT | PGPU_FLOAT);
        compare("256x64x32 periodic FFT float (row route)", &c);
        c = make(63, 63, 63, "DDDDDD", PGPU_FFT | PGPU_DOUBLE);
        compare("63^3 Dirichlet FFT double (row route)", &c);
        c = make(255, 255, 255, "DDDDDD", PGPU_FMG | PGPU_FLOAT);
        compare("255^3 FMG float", &c);
    }
    /* Several axes mixing Dirichlet and Neumann (the FFT's sine transforms of odd length). */
    {
        pgpu_config c = make(16, 16, 16, "DNDNDD", PGPU_FFT | PGPU_DOUBLE);
        compare("16^3 DNDNDD FFT double (two mixed axes)", &c);
        c = make(37, 22, 19, "NDDNDN", PGPU_FFT | PGPU_FLOAT);
        compare("37x22x19 NDDNDN FFT float (three mixed axes)", &c);
        c = make(45, 30, 1, "DNND", PGPU_FFT | PGPU_MIXED);
        compare("45x30 DNND FFT mixed precision (two mixed axes)", &c);
    }
    return t_finish("test_workspace");
}
