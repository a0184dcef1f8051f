/* mms.c -- manufactured solutions shared by the tests; see mms.h. */
#include "mms.h"

#include <math.h>

static const double pi = 3.14159265358979323846;

static double fn_value(const axis_fn *F, double x)
{
    return F->is_exp ? exp(F->a * x + F->b) : sin(F->a * x + F->b);
}

static double fn_slope(const axis_fn *F, double x)
{
    return F->is_exp ? F->a * exp(F->a * x + F->b) : F->a * cos(F->a * x + F->b);
}

/* -X'' / X */
static double fn_lambda(const axis_fn *F)
{
    return F->is_exp ? -F->a * F->a : F->a * F->a;
}

/* Periodic axes use whole periods over their length. */
const mms_case mms_cases_3d[] = {
    {"Dirichlet", "DDDDDD", {1.0, 1.2, 0.9}, {{0, 1.3, 0.4}, {1, 0.8, 0.1}, {0, 2.1, 1.0}}},
    {"Neumann", "NNNNNN", {1.0, 1.1, 0.8}, {{0, 2.2, 0.3}, {0, 1.7, 1.2}, {1, 0.6, -0.2}}},
    {"periodic", "PPPPPP", {1.0, 1.5, 2.0}, {{0, 2 * pi, 0.3}, {0, 2 * pi / 1.5, 1.1}, {0, 2 * pi / 2.0, -0.5}}},
    {"mixed D-N / periodic / N-D", "DNPPND", {1.1, 1.0, 0.9},
     {{0, 1.9, 0.6}, {0, 2 * pi, 0.2}, {1, -0.9, 0.3}}},
};
const mms_case mms_cases_2d[] = {
    {"Dirichlet", "DDDD", {1.0, 1.3, 0}, {{0, 2.3, 0.4}, {1, 0.7, 0.0}, {0, 0, 0}}},
    {"Neumann", "NNNN", {1.2, 1.0, 0}, {{0, 2.5, 0.3}, {1, -1.1, 0.4}, {0, 0, 0}}},
    {"periodic", "PPPP", {1.0, 2.0, 0}, {{0, 2 * pi, 0.7}, {0, 2 * pi, -0.4}, {0, 0, 0}}},
    {"mixed D-N / periodic", "DNPP", {1.0, 1.0, 0}, {{1, 0.8, -0.3}, {0, 4 * pi, 0.9}, {0, 0, 0}}},
};
const size_t mms_ncases_3d = sizeof mms_cases_3d / sizeof mms_cases_3d[0];
const size_t mms_ncases_2d = sizeof mms_cases_2d / sizeof mms_cases_2d[0];

static pgpu_bc letter_bc(char c)
{
    return c == 'D' ? PGPU_BC_DIRICHLET : c == 'N' ? PGPU_BC_NEUMANN : PGPU_BC_PERIODIC;
}

/* Interior points and spacing of an axis for a nominal resolution N. */
static void axis_size(pgpu_bc lo, pgpu_bc hi, int64_t N, double L, int64_t *n, double *h)
{
    const double lo_offset = lo == PGPU_BC_DIRICHLET ? 0.0 : 0.5; /* x_i = (i - lo_offset) h */
    const double hi_extent = hi == PGPU_BC_DIRICHLET ? 1.0 : 0.5; /* L = x_n + hi_extent h */
    *n = (lo == PGPU_BC_NEUMANN || lo == PGPU_BC_PERIODIC) && hi != PGPU_BC_DIRICHLET ? N : N - 1;
    *h = L / ((double)*n - lo_offset + hi_extent);
}

pgpu_config mms_config(const mms_case *c, int dims, int64_t N, unsigned flags)
{
    int64_t n[3] = {1, 1, 1};
    double h[3] = {0.0, 0.0, 0.0};
    for (int a = 0; a < dims; ++a)
        axis_size(letter_bc(c->bcs[2 * a]), letter_bc(c->bcs[2 * a + 1]), N, c->L[a], &n[a], &h[a]);
    return t_config(n[0], n[1], n[2], c->bcs, h[0], h[1], h[2], flags);
}

static double position(const ref_grid *g, int a, int64_t i)
{
    const double lo_offset = g->bc[2 * a] == PGPU_BC_DIRICHLET ? 0.0 : 0.5;
    return ((double)i - lo_offset) * g->h[a];
}

/* u, and the outward normal derivative on a face of axis `across`, at
 * element (i, j, k) of the layout. */
static double exact(const mms_case *c, const ref_grid *g, const int64_t idx[3], int across, int upper)
{
    double v = 1.0;
    for (int a = 0; a < g->dims; ++a) {
        if (a == across) {
            /* The face itself: 0 or L, not the ghost's position. */
            const double x = upper ? c->L[a] : 0.0;
            v *= upper ? fn_slope(&c->X[a], x) : -fn_slope(&c->X[a], x);
        } else {
            v *= fn_value(&c->X[a], position(g, a, idx[a]));
        }
    }
    return v;
}

void mms_fill(const mms_case *c, t_problem *P, double *ue)
{
    const ref_grid *g = &P->g;
    double lambda = 0.0;
    for (int a = 0; a < g->dims; ++a)
        lambda += fn_lambda(&c->X[a]);
    for (int64_t e = 0; e < P->elems; ++e) {
        int face = -1;
        const int kind = ref_classify(g, e, &face);
        const int64_t idx[3] = {e % g->stride[2] % g->stride[1], e % g->stride[2] / g->stride[1],
                                e / g->stride[2]};
        if (kind == REF_INTERIOR) {
            ue[e] = exact(c, g, idx, -1, 0);
            P->f[e] = lambda * ue[e];
            P->u[e] = 0.0;
        } else if (kind == REF_FACE_GHOST && g->bc[face] == PGPU_BC_DIRICHLET) {
            P->u[e] = exact(c, g, idx, -1, 0); /* the ghost is the boundary node */
        } else if (kind == REF_FACE_GHOST && g->bc[face] == PGPU_BC_NEUMANN) {
            P->u[e] = exact(c, g, idx, face / 2, face & 1);
        }
    }
}
