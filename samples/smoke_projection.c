/* smoke_projection.c -- one pressure projection of a smoke simulation.
 *
 * A box of air, the unit cube, on a cell-centred MAC grid of N^3 cells
 * (h = 1/N; N = 128 unless given): the pressure p at the cell centres (the
 * solver's interior points), the velocity on the cell faces.  A solid
 * sphere (radius 0.2, centre (0.5, 0.4, 0.5)) sits in the box, the top layer
 * of cells is open air at pressure 0, the other five box faces are walls.
 * A rising plume with some swirl, which the walls and the sphere block, is
 * made divergence-free: one masked solve for p, then every open face's
 * velocity is corrected by -dt grad p.  Prints max |div u| over the fluid
 * cells before and after, the solve's time, cycles, residual and count of
 * singular regions, and writes the pressure in the plane x ~ 0.5 (through
 * the sphere's centre) as a greyscale PGM image: black = solid, dark grey =
 * low pressure, white = high.
 *
 * The host does the velocity work here, in double, for clarity; a simulation
 * keeps these arrays on the GPU and does the same loops in its own kernels.
 *
 *     smoke_projection [N [out.pgm]]
 */
#include "poisson_gpu.h"

#include <cuda_runtime_api.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- The grid ---------------------------------------------------------------
 *
 * Cells (i, j, k), 1 <= i, j, k <= n, centre ((i - 1/2) h, (j - 1/2) h,
 * (k - 1/2) h), stored as the solver lays out u: (n+2)^3 elements with one
 * ghost layer, cell (i, j, k) at i + (n+2) (j + (n+2) k).
 *
 * Faces.  x-face (a, j, k), 0 <= a <= n, lies at x = a h between cells
 * (a, j, k) and (a+1, j, k); a = 0 and a = n are the box walls.  Likewise
 * y-faces (i, b, k) and z-faces (i, j, c).  Face velocities point along +x,
 * +y, +z. */
typedef struct grid {
    int n;
    size_t w;                /* n + 2 */
    double h;
    uint8_t *type;           /* PGPU_CELL_* per cell, ghosts PGPU_CELL_SOLID */
    double *u, *v, *wz;      /* x-, y- and z-face velocities */
} grid;

static size_t cell(const grid *g, int i, int j, int k)
{
    return (size_t)i + g->w * ((size_t)j + g->w * (size_t)k);
}
static size_t xface(const grid *g, int a, int j, int k)
{
    const size_t n = (size_t)g->n;
    return (size_t)a + (n + 1) * ((size_t)(j - 1) + n * (size_t)(k - 1));
}
static size_t yface(const grid *g, int i, int b, int k)
{
    const size_t n = (size_t)g->n;
    return (size_t)(i - 1) + n * ((size_t)b + (n + 1) * (size_t)(k - 1));
}
static size_t zface(const grid *g, int i, int j, int c)
{
    const size_t n = (size_t)g->n;
    return (size_t)(i - 1) + n * ((size_t)(j - 1) + n * (size_t)c);
}

/* A face is open when neither of its cells is solid.  The ghost layer is
 * marked solid (the solver never reads a mask's ghosts; the sample's own
 * loops do), so the box walls are closed faces like the sphere's. */
static int open_face(const grid *g, size_t c0, size_t c1)
{
    return g->type[c0] != PGPU_CELL_SOLID && g->type[c1] != PGPU_CELL_SOLID;
}

/* ---- The scene ------------------------------------------------------------ */

static const double sphere_c[3] = {0.5, 0.4, 0.5}, sphere_r = 0.2;

static void make_cells(grid *g)
{
    const int n = g->n;
    for (int k = 0; k <= n + 1; ++k)
        for (int j = 0; j <= n + 1; ++j)
            for (int i = 0; i <= n + 1; ++i) {
                uint8_t t = PGPU_CELL_SOLID; /* ghosts: the walls */
                if (i >= 1 && i <= n && j >= 1 && j <= n && k >= 1 && k <= n) {
                    const double x = (i - 0.5) * g->h - sphere_c[0], y = (j - 0.5) * g->h - sphere_c[1],
                                 z = (k - 0.5) * g->h - sphere_c[2];
                    if (k == n)
                        t = PGPU_CELL_DIRICHLET; /* the open top: air at p = 0 */
                    else if (x * x + y * y + z * z < sphere_r * sphere_r)
                        t = PGPU_CELL_SOLID;
                    else
                        t = PGPU_CELL_FLUID;
                }
                g->type[cell(g, i, j, k)] = t;
            }
}

/* A plume rising along the vertical line x = y = 0.5 (a Gaussian of width
 * 0.08 around it, 1 on the axis) that swirls about it (angular speed 3 on
 * the axis, fading with the same Gaussian).  Closed faces get 0: the walls
 * and the sphere stop the flow, which is where its divergence comes from. */
static double plume(double x, double y)
{
    const double dx = x - 0.5, dy = y - 0.5, s = 0.08;
    return exp(-(dx * dx + dy * dy) / (2 * s * s));
}

static void make_velocity(grid *g)
{
    const int n = g->n;
    const double h = g->h, spin = 3;
    for (int k = 1; k <= n; ++k)
        for (int j = 1; j <= n; ++j)
            for (int a = 0; a <= n; ++a) { /* x-faces: u = -spin (y - 1/2) plume */
                const double x = a * h, y = (j - 0.5) * h;
                g->u[xface(g, a, j, k)] =
                    open_face(g, cell(g, a, j, k), cell(g, a + 1, j, k)) ? -spin * (y - 0.5) * plume(x, y) : 0;
            }
    for (int k = 1; k <= n; ++k)
        for (int b = 0; b <= n; ++b)
            for (int i = 1; i <= n; ++i) { /* y-faces: v = spin (x - 1/2) plume */
                const double x = (i - 0.5) * h, y = b * h;
                g->v[yface(g, i, b, k)] =
                    open_face(g, cell(g, i, b, k), cell(g, i, b + 1, k)) ? spin * (x - 0.5) * plume(x, y) : 0;
            }
    for (int c = 0; c <= n; ++c)
        for (int j = 1; j <= n; ++j)
            for (int i = 1; i <= n; ++i) { /* z-faces: w = plume */
                const double x = (i - 0.5) * h, y = (j - 0.5) * h;
                g->wz[zface(g, i, j, c)] = open_face(g, cell(g, i, j, c), cell(g, i, j, c + 1)) ? plume(x, y) : 0;
            }
}

/* The discrete divergence at cell (i, j, k): the outgoing face velocities
 * summed, over h. */
static double divergence(const grid *g, int i, int j, int k)
{
    return (g->u[xface(g, i, j, k)] - g->u[xface(g, i - 1, j, k)] + g->v[yface(g, i, j, k)] -
            g->v[yface(g, i, j - 1, k)] + g->wz[zface(g, i, j, k)] - g->wz[zface(g, i, j, k - 1)]) /
           g->h;
}

static double max_divergence(const grid *g)
{
    double m = 0;
    for (int k = 1; k <= g->n; ++k)
        for (int j = 1; j <= g->n; ++j)
            for (int i = 1; i <= g->n; ++i)
                if (g->type[cell(g, i, j, k)] == PGPU_CELL_FLUID) m = fmax(m, fabs(divergence(g, i, j, k)));
    return m;
}

/* ---- The projection ---------------------------------------------------------
 *
 * The new velocity is u - dt grad p on every open face:
 *     u_face -= dt (p_right - p_left) / h
 * (right/left: the cell on the +/- side of the face).  Take a fluid cell i
 * and a neighbour q across an open face.  If q is on the + side the face's
 * velocity leaves i and changes by -dt (p_q - p_i) / h; if q is on the
 * - side the velocity leaving i is minus the face's, and it changes by
 * +dt (p_i - p_q) / h.  Either way div_h u at i changes by
 * dt (p_i - p_q) / h^2, so
 *     div_h u_new = div_h u + dt (A p)_i,   (A p)_i = sum over open faces
 *                                            of (p_i - p_q) / h^2,
 * which is the solver's operator with beta = 1 (faces towards solid cells
 * left out; a Neumann box face with ghost 0 adds nothing).  div_h u_new = 0
 * at every fluid cell when
 *     A p = f,   f = -div_h u / dt,
 * i.e. -Laplace(p) = -div(u) / dt, Laplace(p) = div(u) / dt.  Whatever p the
 * solver returns, div_h u_new = dt (A p - f) = -dt (the solver's residual)
 * at each fluid cell: the divergence left is dt times the residual.
 * Closed faces keep velocity 0 (no flow through walls); faces between two
 * air cells do not change (p = 0 on both sides). */
static void correct_velocity(grid *g, const float *p, double dt)
{
    const int n = g->n;
    const double s = dt / g->h;
    for (int k = 1; k <= n; ++k)
        for (int j = 1; j <= n; ++j)
            for (int a = 0; a <= n; ++a) {
                const size_t l = cell(g, a, j, k), r = cell(g, a + 1, j, k);
                if (open_face(g, l, r)) g->u[xface(g, a, j, k)] -= s * ((double)p[r] - p[l]);
            }
    for (int k = 1; k <= n; ++k)
        for (int b = 0; b <= n; ++b)
            for (int i = 1; i <= n; ++i) {
                const size_t l = cell(g, i, b, k), r = cell(g, i, b + 1, k);
                if (open_face(g, l, r)) g->v[yface(g, i, b, k)] -= s * ((double)p[r] - p[l]);
            }
    for (int c = 0; c <= n; ++c)
        for (int j = 1; j <= n; ++j)
            for (int i = 1; i <= n; ++i) {
                const size_t l = cell(g, i, j, c), r = cell(g, i, j, c + 1);
                if (open_face(g, l, r)) g->wz[zface(g, i, j, c)] -= s * ((double)p[r] - p[l]);
            }
}

/* The pressure in the plane of cells i (x = (i - 1/2) h) as a binary PGM:
 * y to the right, z up, solid cells black, the other cells from grey level 40
 * (the lowest pressure in the plane) to 255 (the highest). */
static int write_slice(const grid *g, const float *p, int i, const char *path)
{
    const int n = g->n;
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 1; k <= n; ++k)
        for (int j = 1; j <= n; ++j) {
            const size_t c = cell(g, i, j, k);
            if (g->type[c] == PGPU_CELL_SOLID) continue;
            lo = fmin(lo, p[c]);
            hi = fmax(hi, p[c]);
        }
    const double range = hi > lo ? hi - lo : 1;
    FILE *out = fopen(path, "wb");
    if (!out) {
        perror(path);
        return 0;
    }
    fprintf(out, "P5\n%d %d\n255\n", n, n);
    for (int k = n; k >= 1; --k) /* z up: the top row first */
        for (int j = 1; j <= n; ++j) {
            const size_t c = cell(g, i, j, k);
            fputc(g->type[c] == PGPU_CELL_SOLID ? 0 : 40 + (int)lround(215 * (p[c] - lo) / range), out);
        }
    if (fclose(out) != 0) {
        perror(path);
        return 0;
    }
    printf("wrote %s: pressure in the plane x = %.4f, %.4g (grey 40) to %.4g (white), solid black\n", path,
           (i - 0.5) * g->h, lo, hi);
    return 1;
}

/* ---- main ------------------------------------------------------------------ */

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return 1;
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return 0;
}

int main(int argc, char **argv)
{
    int n = 128;
    if (argc > 1) {
        char *end;
        const long v = strtol(argv[1], &end, 10);
        if (*argv[1] == '\0' || *end != '\0' || v < 8 || v > 1024) {
            fprintf(stderr, "usage: %s [N (8 to 1024, default 128) [out.pgm]]\n", argv[0]);
            return 2;
        }
        n = (int)v;
    }
    const char *path = argc > 2 ? argv[2] : "smoke_pressure.pgm";
    const double dt = 1;

    /* Cell-centred: every box face Neumann, so h = 1/n on every axis
     * (pgpu_config_domain; pgpu_config_default's 1/(n+1) is for Dirichlet
     * faces).  Neumann with ghost 0, i.e. dp/dn = 0: a wall, where the
     * velocity is 0 before and after.  The z+ face touches only the layer of
     * air cells under it, which have no equation, so its type changes
     * nothing: it is that layer at p = 0 that fixes the pressure level and
     * makes the problem non-singular (report.projected: 0).
     * Float V-cycles, which is what a projection needs, under float's own
     * stopping rule (tolerance 0: they stop when the correction reaches
     * float's rounding of p).  A residual tolerance such as 1e-6 would never
     * be met: p rounded to float, even the exact discrete solution, leaves a
     * relative residual of ~1.5e-5 at 128^3 (~5e-6 at 64^3), and the cycles
     * would run to their limit.  For 1e-6: PGPU_DOUBLE, tolerance 1e-6, and
     * p and f in double. */
    const pgpu_bc walls[6] = {PGPU_BC_NEUMANN, PGPU_BC_NEUMANN, PGPU_BC_NEUMANN,
                              PGPU_BC_NEUMANN, PGPU_BC_NEUMANN, PGPU_BC_NEUMANN};
    pgpu_config cfg = pgpu_config_domain(n, n, n, 1.0, 1.0, 1.0, walls);
    cfg.flags = PGPU_VCYCLE | PGPU_FLOAT;

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

    int rc = 1;
    grid g = {n, (size_t)n + 2, 1.0 / n, NULL, NULL, NULL, NULL};
    const size_t cells = g.w * g.w * g.w, faces = (size_t)(n + 1) * (size_t)n * (size_t)n;
    float *p = calloc(cells, sizeof *p), *f = calloc(cells, sizeof *f);
    g.type = malloc(cells);
    g.u = malloc(faces * sizeof *g.u);
    g.v = malloc(faces * sizeof *g.v);
    g.wz = malloc(faces * sizeof *g.wz);
    uint8_t *d_mask = NULL;
    float *d_p = NULL, *d_f = NULL;
    double div_before, div_after;
    pgpu_report rep;
    if (!p || !f || !g.type || !g.u || !g.v || !g.wz) {
        fprintf(stderr, "out of host memory for a %d^3 grid\n", n);
        goto done;
    }

    make_cells(&g);
    make_velocity(&g);
    div_before = max_divergence(&g);
    for (int k = 1; k <= n; ++k)
        for (int j = 1; j <= n; ++j)
            for (int i = 1; i <= n; ++i)
                if (g.type[cell(&g, i, j, k)] == PGPU_CELL_FLUID)
                    f[cell(&g, i, j, k)] = (float)(-divergence(&g, i, j, k) / dt);
    /* p: initial guess 0 at fluid cells, the air cells' held value 0, the
     * walls' ghost dp/dn = 0 -- calloc's zeros. */

    /* The mask goes to the device (the solver reads it from there and keeps a
     * copy); p and f do too, as they would in a simulation. */
    if (!cuda_ok(cudaMalloc((void **)&d_mask, cells), "cudaMalloc (mask)") ||
        !cuda_ok(cudaMalloc((void **)&d_p, cells * sizeof *d_p), "cudaMalloc (p)") ||
        !cuda_ok(cudaMalloc((void **)&d_f, cells * sizeof *d_f), "cudaMalloc (f)") ||
        !cuda_ok(cudaMemcpy(d_mask, g.type, cells, cudaMemcpyHostToDevice), "cudaMemcpy (mask)") ||
        !cuda_ok(cudaMemcpy(d_p, p, cells * sizeof *p, cudaMemcpyHostToDevice), "cudaMemcpy (p)") ||
        !cuda_ok(cudaMemcpy(d_f, f, cells * sizeof *f, cudaMemcpyHostToDevice), "cudaMemcpy (f)"))
        goto done;

    st = pgpu_set_mask(s, d_mask);
    if (st != PGPU_SUCCESS) {
        fprintf(stderr, "pgpu_set_mask: %s: %s\n", pgpu_status_string(st), pgpu_last_error(s));
        goto done;
    }
    st = pgpu_solve(s, d_p, d_f, &rep);
    if (st != PGPU_SUCCESS) {
        fprintf(stderr, "pgpu_solve: %s: %s\n", pgpu_status_string(st), pgpu_last_error(s));
        goto done;
    }
    if (!cuda_ok(cudaMemcpy(p, d_p, cells * sizeof *p, cudaMemcpyDeviceToHost), "cudaMemcpy (p back)")) goto done;

    correct_velocity(&g, p, dt);
    div_after = max_divergence(&g);
    printf("smoke projection on %d^3 cells (h = 1/%d, dt = %g)\n", n, n, dt);
    printf("  pressure solve: %d V-cycles (float), %.3f ms on the device, relative residual %.2e, "
           "%d singular region%s projected\n",
           rep.iterations, rep.seconds * 1e3, rep.relative_residual, rep.projected, rep.projected == 1 ? "" : "s");
    printf("  max |div u| over fluid cells: %.4e before, %.4e after (dt x max residual: %.4e)\n", div_before,
           div_after, dt * rep.residual_max);
    if (!write_slice(&g, p, n / 2 + 1, path)) goto done;
    rc = 0;

done:
    if (!cuda_ok(cudaFree(d_mask), "cudaFree (mask)")) rc = 1;
    if (!cuda_ok(cudaFree(d_p), "cudaFree (p)")) rc = 1;
    if (!cuda_ok(cudaFree(d_f), "cudaFree (f)")) rc = 1;
    pgpu_destroy(s);
    free(p);
    free(f);
    free(g.type);
    free(g.u);
    free(g.v);
    free(g.wz);
    return rc;
}
