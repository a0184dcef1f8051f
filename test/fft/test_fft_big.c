/* test_fft_big.c -- the FFT in float past 2^31 points (suite big: minutes,
 * and about 30 GB of device memory).
 *
 * For each grid (default: 1300^3 Dirichlet, n+1 prime, and 1290x1290x1300
 * with every axis mixing Dirichlet and Neumann; or the one given as
 * "NX NY NZ FACES"): f = an exact discrete eigenvector v (a product of the
 * axes' modes, zero boundary data), so the answer is v / lambda.
 *  - pgpu_workspace_size equals what the handle holds, and that is at most
 *    1.3 float words a point beyond u and f (the packed copy of the grid
 *    and a chunk of scratch, FFT_CHUNK);
 *  - the solve succeeds and max |u - v/lambda| <= 1e-5 max |v/lambda|;
 *  - u's ghost layer is unchanged.
 * Prints the create and solve times (host wall clock, for the record).
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "common.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void one(int64_t nx, int64_t ny, int64_t nz, const char *faces)
{
    const int64_t n[3] = {nx, ny, nz};
    pgpu_config cfg = t_config(nx, ny, nz, faces, 1.0 / (double)(nx + 1), 1.0 / (double)(ny + 1),
                               1.0 / (double)(nz + 1), PGPU_FFT | PGPU_FLOAT);
    char name[96];
    snprintf(name, sizeof name, "%lldx%lldx%lld %s float", (long long)nx, (long long)ny, (long long)nz, faces);
    const int64_t N = nx * ny * nz, sy = nx + 2, sz = sy * (ny + 2), elems = sz * (nz + 2);
    /* The modes per axis and the eigenvalue. */
    const int k[3] = {3, 2, 5};
    const double h[3] = {cfg.hx, cfg.hy, cfg.hz};
    double *mode[3], lambda = 0.0;
    for (int a = 0; a < 3; ++a) {
        mode[a] = malloc((size_t)n[a] * sizeof(double));
        if (!mode[a]) abort();
        for (int64_t i = 0; i < n[a]; ++i)
            mode[a][i] = ref_mode(cfg.bc[2 * a], cfg.bc[2 * a + 1], n[a], k[a], 0.0, i + 1);
        lambda += ref_mode_lambda(cfg.bc[2 * a], cfg.bc[2 * a + 1], n[a], k[a], h[a]);
    }
    float *f = calloc((size_t)elems, sizeof(float)), *u = calloc((size_t)elems, sizeof(float));
    if (!f || !u) {
        CHECK(0, "%s: %.1f GB of host memory", name, 2.0 * (double)elems * 4e-9);
        free(f);
        free(u);
        return;
    }
    double vmax = 0.0;
    for (int64_t z = 0; z < nz; ++z)
        for (int64_t y = 0; y < ny; ++y) {
            const double yz = mode[1][y] * mode[2][z];
            float *row = f + (z + 1) * sz + (y + 1) * sy + 1;
            for (int64_t x = 0; x < nx; ++x) row[x] = (float)(mode[0][x] * yz);
        }
    for (int a = 0; a < 3; ++a) {
        double m = 0.0;
        for (int64_t i = 0; i < n[a]; ++i) m = fmax(m, fabs(mode[a][i]));
        vmax = a ? vmax * m : m;
    }
    size_t query = 0;
    const pgpu_status qs = pgpu_workspace_size(&cfg, &query);
    void *du = NULL, *df = NULL;
    const size_t bytes = (size_t)elems * sizeof(float);
    if (cudaMalloc(&du, bytes) != cudaSuccess || cudaMalloc(&df, bytes) != cudaSuccess ||
        cudaMemcpy(du, u, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(df, f, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        CHECK(0, "%s: u and f on the device (%.1f GB)", name, 2.0 * (double)bytes * 1e-9);
    } else {
        double t0 = now();
        pgpu_solver *s = t_create(&cfg, name);
        const double t_create_s = now() - t0;
        if (s) {
            const size_t held = pgpu_workspace_bytes(s);
            CHECK(qs == PGPU_SUCCESS && query == held, "%s: pgpu_workspace_size %zu bytes = the handle's %zu", name,
                  query, held);
            CHECK((double)held <= 1.3 * 4.0 * (double)N,
                  "%s: workspace %.2f GB, %.3f float words a point beyond u and f (<= 1.3)", name, (double)held * 1e-9,
                  (double)held / (4.0 * (double)N));
            pgpu_report rep;
            t0 = now();
            const pgpu_status st = pgpu_solve(s, du, df, &rep);
            const cudaError_t ce = cudaDeviceSynchronize();
            const double t_solve = now() - t0;
            CHECK(st == PGPU_SUCCESS && ce == cudaSuccess, "%s: solve %s (%s)", name, pgpu_status_string(st),
                  st == PGPU_SUCCESS ? "" : pgpu_last_error(s));
            t_note("%s: create %.2f s, solve %.3f s (host wall time, first solve)", name, t_create_s, t_solve);
            pgpu_destroy(s);
            if (st == PGPU_SUCCESS && cudaMemcpy(u, du, bytes, cudaMemcpyDeviceToHost) == cudaSuccess) {
                double err = 0.0;
                int64_t ghosts = 0;
                for (int64_t z = 0; z < nz + 2; ++z)
                    for (int64_t y = 0; y < ny + 2; ++y)
                        for (int64_t x = 0; x < nx + 2; ++x) {
                            const int64_t p = z * sz + y * sy + x;
                            const int inside = x >= 1 && x <= nx && y >= 1 && y <= ny && z >= 1 && z <= nz;
                            if (!inside) {
                                ghosts += u[p] != 0.0f;
                                continue;
                            }
                            const double v = mode[0][x - 1] * mode[1][y - 1] * mode[2][z - 1] / lambda;
                            err = t_max_nan(err, fabs((double)u[p] - v));
                        }
                const double rel = err / (vmax / lambda);
                CHECK(rel <= 1e-5, "%s: max |u - v/lambda| = %.2e of max |v/lambda| (<= 1e-5)", name, rel);
                CHECK(ghosts == 0, "%s: ghost layer unchanged (%lld changed)", name, (long long)ghosts);
            }
        }
    }
    cudaFree(du);
    cudaFree(df);
    free(f);
    free(u);
    for (int a = 0; a < 3; ++a) free(mode[a]);
}

int main(int argc, char **argv)
{
    t_require_device("test_fft_big");
    if (argc == 5) {
        one(atoll(argv[1]), atoll(argv[2]), atoll(argv[3]), argv[4]);
    } else {
        one(1300, 1300, 1300, "DDDDDD");
        one(1290, 1290, 1300, "DNNDDN");
    }
    return t_finish("test_fft_big");
}
