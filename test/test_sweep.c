/* test_sweep.c -- one GPU Jacobi sweep and one red-black Gauss-Seidel
 * iteration (pgpu_solve with PGPU_FIXED, max_iterations 1; and 3 for a few
 * cases) equal the host reference on random data (t_check_stationary).
 *
 * Per interior point the difference must stay below
 *     tol * bound(p),   tol = 8 FLT_EPSILON (float) or 1e-14 (double),
 * where bound(p) = |u| + w (|f| + |shift| + sum |terms|) / diag is the
 * magnitude of what the update adds up (ref_relax_bound; for RBGS's black
 * points and for later iterations it also carries the bound of the values
 * they read).  test_reference checks that an honest float sweep stays inside
 * this bound.  Everything outside the interior (ghosts, edge ghosts,
 * padding) must come back bit for bit; periodic ghosts, f's ghosts and the
 * padding hold NaN and must not be read.
 *
 * Shapes: 37x20x11, 1x1x1, 2D 65x1 and 33x17, 130x61x37 and 71x50x29 (several
 * tiles and z chunks), strided layouts with padding;
 * every boundary type with non-zero Dirichlet and Neumann data, periodic
 * axes of even and odd size, mixed faces, anisotropic spacing, omega != 1.
 */
#include "common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sweep_case {
    const char *name;
    int64_t nx, ny, nz;
    const char *bcs;
    double hx, hy, hz;
    int64_t pad_y, pad_z; /* extra elements per row / per plane; 0 and 0: packed (strides 0) */
    double omega_jacobi, omega_rbgs;
} sweep_case;

static const sweep_case cases[] = {
    {"3D Dirichlet", 37, 20, 11, "DDDDDD", 0.03, 0.05, 0.08, 0, 0, 1.0, 1.0},
    {"3D Dirichlet, omega", 37, 20, 11, "DDDDDD", 0.03, 0.05, 0.08, 0, 0, 0.6, 1.7},
    {"3D Neumann (singular)", 37, 20, 11, "NNNNNN", 0.02, 0.03, 0.025, 0, 0, 0.8, 1.3},
    {"3D periodic x odd, y even", 37, 20, 11, "PPPPDN", 0.04, 0.02, 0.05, 0, 0, 0.9, 1.5},
    {"3D periodic even (singular)", 36, 20, 12, "PPPPPP", 0.03, 0.03, 0.03, 0, 0, 0.7, 1.2},
    {"3D periodic odd (singular)", 37, 21, 11, "PPPPPP", 0.03, 0.04, 0.05, 0, 0, 1.0, 1.0},
    {"3D mixed faces", 37, 20, 11, "DNNDPP", 0.05, 0.01, 0.1, 0, 0, 0.8, 1.9},
    {"3D mixed, Neumann+periodic (singular)", 37, 20, 11, "NNPPNN", 0.05, 0.07, 0.02, 0, 0, 0.9, 1.4},
    {"1x1x1 Dirichlet", 1, 1, 1, "DDDDDD", 0.5, 0.25, 0.125, 0, 0, 0.7, 1.5},
    {"1x1x1 mixed", 1, 1, 1, "DNPPND", 0.5, 0.25, 0.125, 0, 0, 1.0, 1.2},
    {"1x1x1 Neumann (no coupling)", 1, 1, 1, "NNNNNN", 0.5, 0.25, 0.125, 0, 0, 1.0, 1.0},
    {"1x1x1 periodic (no coupling)", 1, 1, 1, "PPPPPP", 0.5, 0.25, 0.125, 0, 0, 1.0, 1.0},
    {"1x20x11 periodic x of size 1", 1, 20, 11, "PPDDNN", 0.1, 0.05, 0.07, 0, 0, 0.9, 1.1},
    {"2D 65x1", 65, 1, 1, "DDNN", 0.015, 0.2, 0.0, 0, 0, 1.0, 1.0},
    {"2D 65x1 periodic", 65, 1, 1, "PPPP", 0.015, 0.2, 0.0, 0, 0, 0.8, 1.3},
    {"2D 33x17 mixed", 33, 17, 1, "DNPP", 0.03, 0.06, 0.0, 0, 0, 0.9, 1.6},
    {"2D 33x17 Neumann (singular)", 33, 17, 1, "NNNN", 0.03, 0.03, 0.0, 0, 0, 1.0, 1.0},
    {"2D 33x17 Dirichlet", 33, 17, 1, "DDDD", 0.01, 0.02, 0.0, 0, 0, 0.5, 1.95},
    {"3D strided", 13, 7, 5, "DNPPND", 0.07, 0.09, 0.11, 3, 5, 0.8, 1.4},
    {"3D strided periodic (singular)", 12, 9, 6, "PPNNPP", 0.06, 0.05, 0.04, 2, 7, 1.0, 1.1},
    {"2D strided", 9, 6, 1, "PPDN", 0.1, 0.12, 0.0, 4, 0, 0.9, 1.3},
    /* Several tiles and z chunks of the red-black kernels.  Spacings that
     * are powers of 2 keep the node positions, and so the couplings, exact:
     * on 130 nodes of h = 0.01 the library's and the reference's couplings
     * differ by about n eps, which the double tolerance does not cover. */
    {"3D multi-tile", 130, 61, 37, "DNNDND", 1.0 / 128, 1.0 / 64, 1.0 / 32, 0, 0, 0.9, 1.6},
    {"3D multi-tile strided", 71, 50, 29, "NDDNDN", 1.0 / 64, 1.0 / 64, 1.0 / 32, 3, 5, 1.0, 1.2},
};

static void run_case(const sweep_case *c, unsigned method, unsigned prec, int iterations)
{
    const int rbgs = method == PGPU_RBGS;
    pgpu_config cfg = t_config(c->nx, c->ny, c->nz, c->bcs, c->hx, c->hy, c->hz,
                               method | prec | PGPU_FIXED);
    cfg.omega = rbgs ? c->omega_rbgs : c->omega_jacobi;
    if (c->pad_y || c->pad_z) {
        cfg.stride_y = c->nx + 2 + c->pad_y;
        cfg.stride_z = c->nz > 1 ? cfg.stride_y * (c->ny + 2) + c->pad_z : 0;
    }
    t_check_stationary(&cfg, c->name, iterations, NULL, NULL);
}

int main(void)
{
    t_require_device("test_sweep");
    t_seed();
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int c = 0; c < ncases; ++c)
        for (int m = 0; m < 2; ++m)
            for (int p = 0; p < 2; ++p)
                run_case(&cases[c], m ? PGPU_RBGS : PGPU_JACOBI, p ? PGPU_FLOAT : PGPU_DOUBLE, 1);

    /* A fixed schedule of several iterations (errors carried through). */
    const int several[] = {0, 2, 6, 16, 18, 21, 22};
    for (int c = 0; c < (int)(sizeof several / sizeof several[0]); ++c)
        for (int m = 0; m < 2; ++m)
            for (int p = 0; p < 2; ++p)
                run_case(&cases[several[c]], m ? PGPU_RBGS : PGPU_JACOBI,
                         p ? PGPU_FLOAT : PGPU_DOUBLE, 3);
    return t_finish("test_sweep");
}
