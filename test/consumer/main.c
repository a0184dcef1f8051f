/* A consumer of poisson_gpu (Meson subproject, CMake add_subdirectory): the
 * header and the library agree on the version, and a small solve runs where
 * there is a device.  Exit 0: solved, or no CUDA device here; 1: failure. */
#include "poisson_gpu.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    if (pgpu_version() != PGPU_VERSION) {
        fprintf(stderr, "header %d, library %d\n", PGPU_VERSION, pgpu_version());
        return 1;
    }
    const int n = 15;
    pgpu_config cfg = pgpu_config_default(n, n, n);
    pgpu_solver *s = NULL;
    pgpu_status st = pgpu_create(&cfg, &s);
    if (st == PGPU_ERROR_NO_DEVICE) {
        printf("poisson_gpu %d: linked; no CUDA device here (%s)\n", pgpu_version(), pgpu_last_error(NULL));
        return 0;
    }
    if (st != PGPU_SUCCESS) {
        fprintf(stderr, "pgpu_create: %s: %s\n", pgpu_status_string(st), pgpu_last_error(NULL));
        return 1;
    }
    const size_t elems = (size_t)(n + 2) * (n + 2) * (n + 2);
    double *u = calloc(elems, sizeof *u), *f = calloc(elems, sizeof *f);
    if (!u || !f) return 1;
    for (size_t p = 0; p < elems; ++p) f[p] = 1.0; /* ghosts of f are never read */
    pgpu_report rep;
    st = pgpu_solve_host(s, u, f, &rep);
    printf("poisson_gpu %d: %s, relative residual %.2e\n", pgpu_version(), pgpu_status_string(st),
           rep.relative_residual);
    pgpu_destroy(s);
    free(u);
    free(f);
    return st == PGPU_SUCCESS ? 0 : 1;
}
