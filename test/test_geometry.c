/* test_geometry.c -- where the walls are, as the header's GEOMETRY section
 * says, checked through the observed order of accuracy of its worked
 * example: a cell-centred problem with a wall VALUE on one face.
 *
 * 2D, x in [0, 1], y periodic with period 1, exact solution
 *     u = cos(pi x / 2 + pi / 4) cos(2 pi y) + 1,   f = (pi^2 / 4 + 4 pi^2) (u - 1),
 * u = g(y) at the wall x = 0, where du/dx is not zero (else moving the wall
 * by h/2 would cost only O(h^2)), du/dn = -(pi / 2) sin(3 pi / 4) cos(2 pi y)
 * at x = 1 (a Neumann face, exact in every variant).  n cells per unit
 * length, n = 32, 64, 128; double, V-cycles to 1e-12:
 *  (a) cell-centred, x_i = (i - 1/2) h, PGPU_BC_DIRICHLET with ghost = g:
 *      the wall sits on the ghost node, h/2 too far out: first order
 *      (observed order 0.8 to 1.3);
 *  (b) vertex-centred, x_i = i h with h = 1/(n + 1/2), ghost = g at x = 0:
 *      second order (1.8 to 2.3);
 *  (c) cell-centred plus one layer of PGPU_CELL_DIRICHLET cells holding g,
 *      beta 1e6 there and 1 in the fluid (the harmonic face mean 2 beta_f
 *      puts the wall value at h/2): second order (1.8 to 2.3).
 * Needs a device (exit 77 without one).
 */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const double PI = 3.14159265358979323846;

static double exact(double x, double y) { return cos(PI * x / 2 + PI / 4) * cos(2 * PI * y) + 1; }
static double rhs(double x, double y) { return (PI * PI / 4 + 4 * PI * PI) * (exact(x, y) - 1); }
static double flux_x1(double y) { return -(PI / 2) * sin(3 * PI / 4) * cos(2 * PI * y); } /* du/dn at x = 1 */

enum { CELL_GHOST_G, VERTEX, CELL_MASKED };
static const char *variant_name[] = {"(a) cell-centred, ghost = g", "(b) vertex-centred", "(c) cell-centred, masked layer"};

/* The max error of variant v at n cells per unit length; -1 on failure. */
static double solve_variant(int v, int n)
{
    const int nx = v == CELL_MASKED ? n + 1 : n, ny = n;
    const double hy = 1.0 / n, hx = v == VERTEX ? 1.0 / (n + 0.5) : 1.0 / n;
    const int64_t sy = nx + 2, elems = (int64_t)sy * (ny + 2);
    double *u = calloc((size_t)elems, sizeof *u), *f = calloc((size_t)elems, sizeof *f);
    double *beta = calloc((size_t)elems, sizeof *beta);
    uint8_t *mask = calloc((size_t)elems, 1);
    double err = -1;
    if (!u || !f || !beta || !mask) goto out;

    /* x of node i, per variant (the masked layer i = 1 has no position). */
#define XPOS(i) (v == VERTEX ? (i) * hx : v == CELL_GHOST_G ? ((i) - 0.5) * hx : ((i) - 1.5) * hx)
    for (int j = 0; j <= ny + 1; ++j) {
        const double y = (j - 0.5) * hy;
        for (int i = 1; i <= nx; ++i) {
            f[i + j * sy] = rhs(XPOS(i), y);
            beta[i + j * sy] = 1.0;
        }
        u[0 + j * sy] = v == CELL_MASKED ? 0.0 : exact(0.0, y); /* (c): the face touches only the layer */
        u[nx + 1 + j * sy] = flux_x1(y);
        if (v == CELL_MASKED) {
            u[1 + j * sy] = exact(0.0, y); /* the layer holds the wall value */
            mask[1 + j * sy] = PGPU_CELL_DIRICHLET;
            beta[1 + j * sy] = 1e6;
        }
    }

    pgpu_config cfg = pgpu_config_default(nx, ny, 1);
    cfg.hx = hx;
    cfg.hy = hy;
    cfg.flags = PGPU_VCYCLE | PGPU_DOUBLE;
    cfg.tolerance = 1e-12;
    cfg.bc[PGPU_XMIN] = PGPU_BC_DIRICHLET;
    cfg.bc[PGPU_XMAX] = PGPU_BC_NEUMANN;
    cfg.bc[PGPU_YMIN] = cfg.bc[PGPU_YMAX] = PGPU_BC_PERIODIC;
    pgpu_solver *s = t_create(&cfg, variant_name[v]);
    if (!s) goto out;
    const size_t bytes = (size_t)elems * sizeof(double);
    void *du = t_dev_upload(u, bytes), *df = t_dev_upload(f, bytes);
    void *db = NULL, *dm = NULL;
    pgpu_status st = PGPU_SUCCESS;
    if (v == CELL_MASKED) {
        db = t_dev_upload(beta, bytes);
        dm = t_dev_upload(mask, (size_t)elems);
        if (db && dm) {
            st = pgpu_set_mask(s, dm);
            if (st == PGPU_SUCCESS) st = pgpu_set_coefficients(s, db);
        }
    }
    pgpu_report rep;
    if (du && df && st == PGPU_SUCCESS) st = pgpu_solve(s, du, df, &rep);
    if (st == PGPU_SUCCESS && t_dev_download(u, du, bytes)) {
        err = 0;
        const int first = v == CELL_MASKED ? 2 : 1;
        for (int j = 1; j <= ny; ++j)
            for (int i = first; i <= nx; ++i)
                err = t_max_nan(err, fabs(u[i + j * sy] - exact(XPOS(i), (j - 0.5) * hy)));
        t_note("%-32s n = %3d: %d cycles, max error %.3e", variant_name[v], n, rep.iterations, err);
    } else {
        CHECK(0, "%s n = %d: %s: %s", variant_name[v], n, pgpu_status_string(st), pgpu_last_error(s));
    }
#undef XPOS
    t_dev_free(du);
    t_dev_free(df);
    t_dev_free(db);
    t_dev_free(dm);
    pgpu_destroy(s);
out:
    free(u);
    free(f);
    free(beta);
    free(mask);
    return err;
}

int main(void)
{
    t_require_device("test_geometry");
    const int sizes[] = {32, 64, 128};
    double e[3][3];
    for (int v = 0; v < 3; ++v)
        for (int k = 0; k < 3; ++k) e[v][k] = solve_variant(v, sizes[k]);
    for (int v = 0; v < 3; ++v) {
        const double lo = v == CELL_GHOST_G ? 0.8 : 1.8, hi = v == CELL_GHOST_G ? 1.3 : 2.3;
        for (int k = 0; k + 1 < 3; ++k) {
            const double order = e[v][k] > 0 && e[v][k + 1] > 0 ? log2(e[v][k] / e[v][k + 1]) : NAN;
            CHECK(order >= lo && order <= hi, "%-32s order %.2f from n = %d to %d (expected %.1f to %.1f)",
                  variant_name[v], order, sizes[k], sizes[k + 1], lo, hi);
        }
    }
    return t_finish("test_geometry");
}
