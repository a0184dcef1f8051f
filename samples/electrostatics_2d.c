/* electrostatics_2d.c -- the potential of a few charges in a grounded box.
 *
 * -Laplace(phi) = rho on the unit square, phi = 0 on the walls (Dirichlet),
 * 513 x 513 interior points, rho a few narrow Gaussian charges of both signs.
 * Solved directly by the FFT solver (a sine transform along x, tridiagonal
 * systems along y), then written as a greyscale PGM image (mid-grey = 0,
 * white = the largest positive potential).  Prints the device time of this
 * one (first) solve, input scan and residual check included; a warm solve
 * alone, replayed from a CUDA graph, is the bench's fft2d row.
 *
 *     electrostatics_2d [out.pgm]
 */
#include "poisson_gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "potential.pgm";
    const int n = 513;
    pgpu_config cfg = pgpu_config_domain(n, n, 1, 1.0, 1.0, 0.0, NULL); /* 2D, grounded: h = 1/(n+1) */
    cfg.flags = PGPU_FFT | PGPU_DOUBLE;
    pgpu_solver *s = NULL;
    pgpu_status st = pgpu_create(&cfg, &s);
    if (st == PGPU_ERROR_NO_DEVICE) { /* 77: skipped, as the tests say it */
        printf("skipped: %s\n", pgpu_last_error(NULL));
        return 77;
    }
    if (st != PGPU_SUCCESS) {
        fprintf(stderr, "pgpu_create: %s: %s\n", pgpu_status_string(st), pgpu_last_error(NULL));
        return 1;
    }
    const int w = n + 2;
    double *phi = calloc((size_t)w * w, sizeof *phi), *rho = calloc((size_t)w * w, sizeof *rho);
    if (!phi || !rho) return 1;
    /* charges: position x, y and strength */
    const double q[4][3] = {{0.30, 0.35, 1.0}, {0.70, 0.65, 1.0}, {0.30, 0.70, -1.5}, {0.65, 0.30, -0.5}};
    const double h = cfg.hx, width = 0.01;
    for (int j = 1; j <= n; ++j)
        for (int i = 1; i <= n; ++i)
            for (int c = 0; c < 4; ++c) {
                const double dx = i * h - q[c][0], dy = j * h - q[c][1];
                rho[i + (size_t)w * j] += q[c][2] * exp(-(dx * dx + dy * dy) / (2 * width * width)) /
                                          (2 * 3.14159265358979 * width * width);
            }
    pgpu_report rep;
    st = pgpu_solve_host(s, phi, rho, &rep);
    if (st != PGPU_SUCCESS) {
        fprintf(stderr, "pgpu_solve: %s: %s\n", pgpu_status_string(st), pgpu_last_error(s));
        return 1;
    }
    printf("513 x 513 FFT solve (first call, with input scan and residual check): %.1f us on the device, "
           "relative residual %.2e\n", rep.seconds * 1e6,
           rep.relative_residual);

    double peak = 0;
    for (size_t k = 0; k < (size_t)w * w; ++k) peak = fmax(peak, fabs(phi[k]));
    FILE *out = fopen(path, "wb");
    if (!out) {
        perror(path);
        return 1;
    }
    fprintf(out, "P5\n%d %d\n255\n", n, n);
    for (int j = n; j >= 1; --j) /* y up */
        for (int i = 1; i <= n; ++i)
            fputc((int)lround(127.5 + 127.5 * phi[i + (size_t)w * j] / peak), out);
    fclose(out);
    printf("wrote %s (peak |phi| = %.4g)\n", path, peak);
    pgpu_destroy(s);
    free(phi);
    free(rho);
    return 0;
}
