/* reference.c -- see reference.h.  Plain loops in double. */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ref_grid ref_grid_from_config(const pgpu_config *cfg)
{
    ref_grid g;
    memset(&g, 0, sizeof g);
    g.dims = cfg->nz == 1 ? 2 : 3;
    g.n[0] = cfg->nx;
    g.n[1] = cfg->ny;
    g.n[2] = cfg->nz;
    g.h[0] = cfg->hx;
    g.h[1] = cfg->hy;
    g.h[2] = cfg->hz;
    g.stride[0] = 1;
    g.stride[1] = cfg->stride_y ? cfg->stride_y : cfg->nx + 2;
    if (g.dims == 3)
        g.stride[2] = cfg->stride_z ? cfg->stride_z : g.stride[1] * (cfg->ny + 2);
    else
        g.stride[2] = g.stride[1] * (cfg->ny + 2); /* the one plane */
    for (int f = 0; f < 6; ++f)
        g.bc[f] = cfg->bc[f];
    return g;
}

int64_t ref_elems(const ref_grid *g)
{
    return g->dims == 3 ? (g->n[2] + 2) * g->stride[2] : (g->n[1] + 2) * g->stride[1];
}

int ref_classify(const ref_grid *g, int64_t e, int *face)
{
    int64_t idx[3];
    idx[2] = e / g->stride[2];
    idx[1] = (e % g->stride[2]) / g->stride[1];
    idx[0] = (e % g->stride[2]) % g->stride[1];

    /* Count the coordinates outside the interior; one ghost layer only. */
    int outside = 0, where = -1;
    for (int a = 0; a < g->dims; ++a) {
        if (idx[a] > g->n[a] + 1)
            return REF_PADDING;
        if (idx[a] == 0 || idx[a] == g->n[a] + 1) {
            ++outside;
            where = 2 * a + (idx[a] != 0);
        }
    }
    if (outside == 0)
        return REF_INTERIOR;
    if (outside == 1) {
        if (face)
            *face = where;
        return REF_FACE_GHOST;
    }
    return REF_EDGE_GHOST;
}

int ref_is_singular(const ref_grid *g)
{
    for (int f = 0; f < 2 * g->dims; ++f)
        if (g->bc[f] == PGPU_BC_DIRICHLET)
            return 0;
    return 1;
}

/* Adds the term coef * u[e] to off when its part is selected (u[e] is not
 * read otherwise: callers may leave unselected elements unset). */
static void add_term(ref_terms *t, int selected, double coef, const double *u, int64_t e)
{
    if (selected) {
        const double term = coef * u[e];
        t->off += term;
        t->offabs += fabs(term);
    }
}

ref_terms ref_point(const ref_grid *g, const double *u, int64_t i, int64_t j, int64_t k, int parts)
{
    const int64_t idx[3] = {i, j, k};
    const int64_t p = ref_idx(g, i, j, k);
    const int neighbours = (parts & REF_NEIGHBOURS) != 0;
    const int boundary = (parts & REF_BOUNDARY) != 0;
    ref_terms t = {0.0, 0.0, 0.0};

    for (int a = 0; a < g->dims; ++a) {
        const int64_t n = g->n[a], s = g->stride[a], ia = idx[a];
        const double inv_h = 1.0 / g->h[a];
        const double inv_h2 = 1.0 / (g->h[a] * g->h[a]);

        for (int side = 0; side < 2; ++side) { /* 0: lower neighbour, 1: upper */
            const int at_face = side == 0 ? ia == 1 : ia == n;
            const int64_t across = side == 0 ? p - s : p + s; /* neighbour or ghost */
            if (!at_face) {
                add_term(&t, neighbours, inv_h2, u, across);
                t.diag += inv_h2;
                continue;
            }
            switch (g->bc[2 * a + side]) {
            case PGPU_BC_DIRICHLET: /* the ghost is a boundary node at distance h */
                add_term(&t, boundary, inv_h2, u, across);
                t.diag += inv_h2;
                break;
            case PGPU_BC_NEUMANN: /* the ghost holds du/dn at the face, h/2 away */
                add_term(&t, boundary, inv_h, u, across);
                break;
            case PGPU_BC_PERIODIC: /* the opposite interior plane; nothing when n == 1 */
                if (n > 1) {
                    const int64_t wrap = side == 0 ? p + (n - 1) * s : p - (n - 1) * s;
                    add_term(&t, neighbours, inv_h2, u, wrap);
                    t.diag += inv_h2;
                }
                break;
            }
        }
    }
    return t;
}

void ref_apply(const ref_grid *g, const double *u, double *out)
{
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const ref_terms t = ref_point(g, u, i, j, k, REF_ALL_TERMS);
        out[p] = t.diag * u[p] - t.off;
    }
}

void ref_boundary_terms(const ref_grid *g, const double *u, double *out)
{
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        out[ref_idx(g, i, j, k)] = ref_point(g, u, i, j, k, REF_BOUNDARY).off;
    }
}

static int64_t interior_count(const ref_grid *g)
{
    return g->n[0] * g->n[1] * (g->dims == 3 ? g->n[2] : 1);
}

double ref_shift(const ref_grid *g, const double *u, const double *f)
{
    if (!ref_is_singular(g))
        return 0.0;
    double sum = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        sum += f[ref_idx(g, i, j, k)] + ref_point(g, u, i, j, k, REF_BOUNDARY).off;
    }
    return sum / (double)interior_count(g);
}

double ref_shift_magnitude(const ref_grid *g, const double *u, const double *f)
{
    if (!ref_is_singular(g))
        return 0.0;
    double sum = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        sum += fabs(f[ref_idx(g, i, j, k)]) + ref_point(g, u, i, j, k, REF_BOUNDARY).offabs;
    }
    return sum / (double)interior_count(g);
}

/* s += x, Neumaier's compensated sum (the compensation in *c): a plain
 * running sum over millions of points drops the small terms once the large
 * ones (boundary terms of 1/h^2) have made it big, an error the device's
 * blocked sums do not have. */
static void sum_add(double *s, double *c, double x)
{
    const double t = *s + x;
    *c += fabs(*s) >= fabs(x) ? (*s - t) + x : (x - t) + *s;
    *s = t;
}

ref_norms ref_residual(const ref_grid *g, const double *u, const double *f, double *r)
{
    ref_norms nm = {0.0, 0.0, 0.0, 0.0, 0.0};
    nm.shift = ref_shift(g, u, f);
    double rr = 0.0, bb = 0.0, rc = 0.0, bc = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const ref_terms t = ref_point(g, u, i, j, k, REF_ALL_TERMS);
        const double b = f[p] - nm.shift + ref_point(g, u, i, j, k, REF_BOUNDARY).off;
        const double res = f[p] - nm.shift + t.off - t.diag * u[p];
        if (r)
            r[p] = res;
        sum_add(&rr, &rc, res * res);
        sum_add(&bb, &bc, b * b);
        if (fabs(res) > nm.max)
            nm.max = fabs(res);
    }
    nm.norm = sqrt(rr + rc);
    nm.rhs_norm = sqrt(bb + bc);
    nm.relative = nm.rhs_norm > 0.0 ? nm.norm / nm.rhs_norm : nm.norm;
    return nm;
}

static int selected(const ref_grid *g, int colours, int64_t i, int64_t j, int64_t k)
{
    return ref_is_red(g, i, j, k) ? (colours & REF_RED) != 0 : (colours & REF_BLACK) != 0;
}

void ref_relax(const ref_grid *g, const double *uin, double *uout, const double *f,
               double shift, double omega, int colours)
{
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        if (!selected(g, colours, i, j, k)) {
            uout[p] = uin[p];
            continue;
        }
        const ref_terms t = ref_point(g, uin, i, j, k, REF_ALL_TERMS);
        if (t.diag == 0.0)
            uout[p] = uin[p]; /* a point with no coupling at all: nothing to solve */
        else
            uout[p] = (1.0 - omega) * uin[p] + omega * (f[p] - shift + t.off) / t.diag;
    }
}

void ref_relax_bound(const ref_grid *g, const double *uin, const double *f, double shift_mag,
                     double omega, int colours, const double *err_in, double *err_out)
{
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const double carried = err_in ? err_in[p] : 0.0;
        if (!selected(g, colours, i, j, k)) {
            err_out[p] = carried;
            continue;
        }
        const ref_terms t = ref_point(g, uin, i, j, k, REF_ALL_TERMS);
        if (t.diag == 0.0) {
            err_out[p] = carried;
            continue;
        }
        /* |uin| covers implementations that form u + w * residual / diag. */
        double e = fabs(uin[p]) + omega * (fabs(f[p]) + shift_mag + t.offabs) / t.diag;
        if (err_in) {
            /* Errors already in uin pass through the update with the same
             * (positive) coefficients as the values themselves. */
            const double through = ref_point(g, err_in, i, j, k, REF_NEIGHBOURS).off;
            e += fabs(1.0 - omega) * carried + omega * through / t.diag;
        }
        err_out[p] = e;
    }
}

static double *copy_of(const ref_grid *g, const double *u)
{
    const size_t bytes = (size_t)ref_elems(g) * sizeof(double);
    double *c = malloc(bytes);
    if (c)
        memcpy(c, u, bytes);
    return c;
}

void ref_jacobi(const ref_grid *g, double *u, const double *f, double omega)
{
    const double shift = ref_shift(g, u, f);
    double *old = copy_of(g, u);
    if (!old)
        abort(); /* a test helper: no way to go on without memory */
    ref_relax(g, old, u, f, shift, omega, REF_ALL_POINTS);
    free(old);
}

void ref_rbgs(const ref_grid *g, double *u, const double *f, double omega)
{
    const double shift = ref_shift(g, u, f);
    double *old = copy_of(g, u);
    if (!old)
        abort();
    ref_relax(g, old, u, f, shift, omega, REF_RED);
    memcpy(old, u, (size_t)ref_elems(g) * sizeof(double));
    ref_relax(g, old, u, f, shift, omega, REF_BLACK);
    free(old);
}

double ref_mean(const ref_grid *g, const double *u)
{
    double sum = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        sum += u[ref_idx(g, i, j, k)];
    }
    return sum / (double)interior_count(g);
}

double ref_remove_mean(const ref_grid *g, double *u)
{
    const double mean = ref_mean(g, u);
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        u[ref_idx(g, i, j, k)] -= mean;
    }
    return mean;
}

double ref_max_diff(const ref_grid *g, const double *a, const double *b)
{
    double m = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const double d = fabs(a[p] - b[p]);
        if (d > m || d != d) /* a NaN must not hide */
            m = d;
    }
    return m;
}

double ref_max_abs(const ref_grid *g, const double *a)
{
    double m = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const double d = fabs(a[ref_idx(g, i, j, k)]);
        if (d > m || d != d)
            m = d;
    }
    return m;
}

double ref_rms(const ref_grid *g, const double *a)
{
    double sum = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const double v = a[ref_idx(g, i, j, k)];
        sum += v * v;
    }
    return sqrt(sum / (double)interior_count(g));
}

double ref_norm2(const ref_grid *g, const double *a)
{
    double s = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const double v = a[ref_idx(g, i, j, k)];
        s += v * v;
    }
    return sqrt(s);
}

double ref_norm2_diff(const ref_grid *g, const double *a, const double *b, double scale_b)
{
    double s = 0.0;
    REF_FOR_EACH_INTERIOR(g, i, j, k) {
        const int64_t p = ref_idx(g, i, j, k);
        const double d = a[p] - scale_b * b[p];
        s += d * d;
    }
    return sqrt(s);
}

static const double pi = 3.14159265358979323846;

double ref_mode(pgpu_bc lo, pgpu_bc hi, int64_t n, int k, double phase, int64_t i)
{
    const double x = (double)i, dn = (double)n;
    if (lo == PGPU_BC_PERIODIC)
        return cos(2.0 * pi * k * (x - 1.0) / dn + phase);
    if (lo == PGPU_BC_DIRICHLET && hi == PGPU_BC_DIRICHLET)
        return sin(pi * k * x / (dn + 1.0));
    if (lo == PGPU_BC_NEUMANN && hi == PGPU_BC_NEUMANN)
        return cos(pi * k * (x - 0.5) / dn);
    if (lo == PGPU_BC_DIRICHLET) /* the ghost below is zero, the flux above is zero */
        return sin(pi * (2 * k - 1) * x / (2.0 * dn + 1.0));
    return cos(pi * (2 * k - 1) * (x - 0.5) / (2.0 * dn + 1.0));
}

double ref_mode_lambda(pgpu_bc lo, pgpu_bc hi, int64_t n, int k, double h)
{
    const double dn = (double)n;
    double half_angle;
    if (lo == PGPU_BC_PERIODIC)
        half_angle = pi * k / dn;
    else if (lo == PGPU_BC_DIRICHLET && hi == PGPU_BC_DIRICHLET)
        half_angle = pi * k / (2.0 * (dn + 1.0));
    else if (lo == PGPU_BC_NEUMANN && hi == PGPU_BC_NEUMANN)
        half_angle = pi * k / (2.0 * dn);
    else
        half_angle = pi * (2 * k - 1) / (2.0 * (2.0 * dn + 1.0));
    const double s = sin(half_angle);
    return 4.0 / (h * h) * s * s;
}

double ref_fill_mode(const ref_grid *g, double *u, const int k[3], const double phase[3])
{
    double lambda = 0.0;
    for (int a = 0; a < g->dims; ++a)
        lambda += ref_mode_lambda(g->bc[2 * a], g->bc[2 * a + 1], g->n[a], k[a], g->h[a]);
    REF_FOR_EACH_INTERIOR(g, i, j, kk) {
        const int64_t idx[3] = {i, j, kk};
        double v = 1.0;
        for (int a = 0; a < g->dims; ++a)
            v *= ref_mode(g->bc[2 * a], g->bc[2 * a + 1], g->n[a], k[a], phase[a], idx[a]);
        u[ref_idx(g, i, j, kk)] = v;
    }
    return lambda;
}

double ref_lambda_min(const ref_grid *g)
{
    double sum = 0.0, smallest_nonzero = INFINITY;
    for (int a = 0; a < g->dims; ++a) {
        const pgpu_bc lo = g->bc[2 * a], hi = g->bc[2 * a + 1];
        /* Neumann-Neumann and periodic axes have the constant (k = 0) mode. */
        const int has_constant = lo == PGPU_BC_PERIODIC || (lo == PGPU_BC_NEUMANN && hi == PGPU_BC_NEUMANN);
        sum += ref_mode_lambda(lo, hi, g->n[a], has_constant ? 0 : 1, g->h[a]);
        if (has_constant && g->n[a] > 1) {
            const double first = ref_mode_lambda(lo, hi, g->n[a], 1, g->h[a]);
            if (first < smallest_nonzero)
                smallest_nonzero = first;
        }
    }
    return sum > 0.0 ? sum : smallest_nonzero;
}
