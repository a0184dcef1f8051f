/* mg_reference.h -- an independent host reference, in double, of the
 * multigrid geometry: the coarsening rule, the interpolation P and the
 * restriction R of each axis, and the level hierarchy with semicoarsening.
 * Written from the documented rule (README "What each method supports", the
 * comments of src/transfer.h), not from the library's code, as plain
 * dense matrices, to be read against the rule:
 *
 *  - An axis is a list of node positions x[i] and cell widths w[i], its two
 *    face types and its walls.  The user's axis has x[i] = (i+1) h (0-based
 *    i), w[i] = h; a Dirichlet wall lies at distance h from the outer node,
 *    a Neumann wall at h/2; a periodic axis has period L = n h.
 *  - Coarse nodes: a non-periodic axis of odd n keeps the fine nodes
 *    2, 4, ..., n-1 (1-based), one of even n between two Dirichlet walls
 *    the fine nodes 2, 4, ..., n; any other axis of even n (a Neumann wall,
 *    periodic) gets one node in the middle of each pair (1,2), (3,4), ...;
 *    a periodic axis of odd n gets a uniform ring of nc nodes starting at
 *    the first fine node, nc the even one of (n-1)/2 and (n+1)/2.  An axis
 *    of one node is not coarsened.
 *  - P (interpolation) is linear in position between the two nearest
 *    "anchors": the coarse nodes, the wall value at a Dirichlet wall (coarse
 *    storage column 0 or nc+1, the ghosts), the periodic images of the coarse
 *    nodes across the seam; beyond the last coarse node towards a Neumann
 *    wall the value is constant.  P is stored densely as n rows of nc+2
 *    columns, column c = coarse storage index (0 and nc+1 are the ghosts).
 *  - Coarse widths Wc = P^T w (interior columns only), R = Wc^-1 P^T W
 *    (nc rows of n columns).  The coarse axis has the coarse nodes, the
 *    widths Wc, the same faces, walls and period.
 *  - FMG's data restriction Rf (f and the boundary data of the coarse
 *    problems): R with each row's first moment about its coarse node
 *    removed.  Child offsets d = x[i] - X[I] (on a periodic axis the
 *    nearest image); where sum R(I,i) d != 0, the weight
 *    delta = moment / (d_max - d_min) moves from the child of largest d to
 *    the child of smallest d; a row that would then need a weight below
 *    -1e-12 keeps R's, and a weight between -1e-12 and 0 becomes 0, the
 *    other end child taking the two children's R weights together.
 *  - Semicoarsening: an axis of a level is coarsened when it is active, has
 *    more than one node and its coupling 1/h^2 is at least half the
 *    strongest such coupling of the level.  h of a coarse axis is the fine
 *    h times n/nc (the library's "mean spacing"; only this rule uses it).
 *    The hierarchy ends when no axis can be coarsened any more (one node on
 *    every active axis).  Axes not coarsened get the identity transfer.
 *
 * Header-only (static functions), C style, compiles as C or C++.
 */
#ifndef PGPU_MG_REFERENCE_H
#define PGPU_MG_REFERENCE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poisson_gpu.h"

typedef struct mg_axis {
    int n;
    int lo, hi;      /* pgpu_bc of the lower and upper face */
    int active;      /* 0: the z axis of a 2D problem */
    double *x, *w;   /* n positions, n widths */
    double xlo, xhi; /* wall positions (Dirichlet and Neumann faces) */
    double L;        /* period (periodic axes) */
    double h;        /* spacing for the semicoarsening rule */
} mg_axis;

typedef struct mg_transfer {
    int n, nc;     /* fine and coarse nodes */
    int coarsened; /* 0: identity (nc == n) */
    double *P;     /* n x (nc + 2), row i = fine node i, column = coarse storage index */
    double *R;     /* nc x n */
    double *Rf;    /* nc x n: FMG's data restriction */
} mg_transfer;

#define MG_P(t, i, c) ((t)->P[(size_t)(i) * (size_t)((t)->nc + 2) + (size_t)(c)])
#define MG_R(t, I, i) ((t)->R[(size_t)(I) * (size_t)(t)->n + (size_t)(i)])
#define MG_RF(t, I, i) ((t)->Rf[(size_t)(I) * (size_t)(t)->n + (size_t)(i)])

static double *mg_alloc(size_t count)
{
    double *p = (double *)calloc(count ? count : 1, sizeof(double));
    if (!p)
        abort(); /* a test's host arrays: nothing sensible to do without them */
    return p;
}

static mg_axis mg_fine_axis(int n, double h, int lo, int hi, int active)
{
    mg_axis a;
    a.n = n;
    a.lo = lo;
    a.hi = hi;
    a.active = active;
    a.h = h;
    a.x = mg_alloc((size_t)n);
    a.w = mg_alloc((size_t)n);
    for (int i = 0; i < n; ++i) {
        a.x[i] = (double)(i + 1) * h;
        a.w[i] = h;
    }
    a.xlo = a.x[0] - (lo == PGPU_BC_NEUMANN ? 0.5 * h : h);
    a.xhi = a.x[n - 1] + (hi == PGPU_BC_NEUMANN ? 0.5 * h : h);
    a.L = (double)n * h;
    return a;
}

static mg_axis mg_copy_axis(const mg_axis *a)
{
    mg_axis c = *a;
    c.x = mg_alloc((size_t)a->n);
    c.w = mg_alloc((size_t)a->n);
    memcpy(c.x, a->x, (size_t)a->n * sizeof(double));
    memcpy(c.w, a->w, (size_t)a->n * sizeof(double));
    return c;
}

static void mg_free_axis(mg_axis *a)
{
    free(a->x);
    free(a->w);
    a->x = a->w = NULL;
}

static void mg_free_transfer(mg_transfer *t)
{
    free(t->P);
    free(t->R);
    free(t->Rf);
    t->P = t->R = t->Rf = NULL;
}

/* Number of coarse nodes by the rule (0: not coarsened). */
static int mg_coarse_count(int n, int periodic)
{
    if (n <= 1)
        return 0;
    if (!periodic || n % 2 == 0)
        return n / 2;
    return ((n - 1) / 2) % 2 == 0 ? (n - 1) / 2 : (n + 1) / 2;
}

/* The identity transfer of an axis that is not coarsened. */
static mg_transfer mg_identity(int n)
{
    mg_transfer t;
    t.n = t.nc = n;
    t.coarsened = 0;
    t.P = mg_alloc((size_t)n * (size_t)(n + 2));
    t.R = mg_alloc((size_t)n * (size_t)n);
    t.Rf = mg_alloc((size_t)n * (size_t)n);
    for (int i = 0; i < n; ++i) {
        MG_P(&t, i, i + 1) = 1.0;
        MG_R(&t, i, i) = 1.0;
        MG_RF(&t, i, i) = 1.0;
    }
    return t;
}

/* Coarsens axis a by the rule: fills *c (the coarse axis) and *t, returns 1;
 * returns 0 (and touches nothing) for an axis of one node. */
static int mg_coarsen(const mg_axis *a, mg_axis *c, mg_transfer *t)
{
    const int n = a->n, per = a->lo == PGPU_BC_PERIODIC;
    const int nc = mg_coarse_count(n, per);
    if (nc == 0)
        return 0;
    double *X = mg_alloc((size_t)nc);
    for (int I = 0; I < nc; ++I) {
        if (n % 2 == 0 && !(a->lo == PGPU_BC_DIRICHLET && a->hi == PGPU_BC_DIRICHLET))
            X[I] = 0.5 * (a->x[2 * I] + a->x[2 * I + 1]); /* middle of a pair */
        else if (!per)
            X[I] = a->x[2 * I + 1]; /* fine nodes 2, 4, ... (1-based) */
        else
            X[I] = a->x[0] + I * (a->L / nc); /* uniform ring from the first node */
    }

    /* The anchors of the linear interpolation, in increasing position. */
    const int na_max = nc + 2;
    double *apos = mg_alloc((size_t)na_max);
    int *acol = (int *)malloc((size_t)na_max * sizeof(int));
    if (!acol)
        abort();
    int na = 0;
    if (per) {
        apos[na] = X[nc - 1] - a->L; /* the last coarse node's image below */
        acol[na++] = nc;
    } else if (a->lo == PGPU_BC_DIRICHLET) {
        apos[na] = a->xlo; /* the wall value, in the lower ghost */
        acol[na++] = 0;
    }
    for (int I = 0; I < nc; ++I) {
        apos[na] = X[I];
        acol[na++] = I + 1;
    }
    if (per) {
        apos[na] = X[0] + a->L;
        acol[na++] = 1;
    } else if (a->hi == PGPU_BC_DIRICHLET) {
        apos[na] = a->xhi;
        acol[na++] = nc + 1;
    }

    t->n = n;
    t->nc = nc;
    t->coarsened = 1;
    t->P = mg_alloc((size_t)n * (size_t)(nc + 2));
    t->R = mg_alloc((size_t)nc * (size_t)n);
    for (int i = 0; i < n; ++i) {
        const double xi = a->x[i];
        if (xi < apos[0]) { /* towards a Neumann wall below: constant */
            MG_P(t, i, acol[0]) = 1.0;
        } else if (xi > apos[na - 1]) { /* towards a Neumann wall above */
            MG_P(t, i, acol[na - 1]) = 1.0;
        } else if (na == 1) { /* the only anchor, hit exactly */
            MG_P(t, i, acol[0]) = 1.0;
        } else {
            int k = 0;
            while (k + 2 < na && apos[k + 1] <= xi)
                ++k;
            /* apos[k] <= xi <= apos[k+1] */
            const double s = (apos[k + 1] - xi) / (apos[k + 1] - apos[k]);
            MG_P(t, i, acol[k]) += s;
            MG_P(t, i, acol[k + 1]) += 1.0 - s;
        }
    }
    double *Wc = mg_alloc((size_t)nc);
    for (int I = 0; I < nc; ++I)
        for (int i = 0; i < n; ++i)
            Wc[I] += MG_P(t, i, I + 1) * a->w[i];
    for (int I = 0; I < nc; ++I)
        for (int i = 0; i < n; ++i)
            MG_R(t, I, i) = MG_P(t, i, I + 1) * a->w[i] / Wc[I];
    t->Rf = mg_alloc((size_t)nc * (size_t)n);
    memcpy(t->Rf, t->R, (size_t)nc * (size_t)n * sizeof(double));
    for (int I = 0; I < nc; ++I) {
        double moment = 0.0, dmin = 0.0, dmax = 0.0;
        int imin = -1, imax = -1;
        for (int i = 0; i < n; ++i) {
            if (MG_R(t, I, i) == 0.0)
                continue;
            double d = a->x[i] - X[I];
            if (per) {
                while (d > 0.5 * a->L)
                    d -= a->L;
                while (d < -0.5 * a->L)
                    d += a->L;
            }
            moment += MG_R(t, I, i) * d;
            if (imin < 0 || d < dmin) {
                dmin = d;
                imin = i;
            }
            if (imax < 0 || d > dmax) {
                dmax = d;
                imax = i;
            }
        }
        if (imin < 0 || !(dmax > dmin) || fabs(moment) <= 1e-12 * (dmax - dmin))
            continue;
        const double delta = moment / (dmax - dmin);
        const double wlo = MG_R(t, I, imin) + delta, whi = MG_R(t, I, imax) - delta;
        if (wlo < -1e-12 || whi < -1e-12)
            continue;
        const double both = MG_R(t, I, imin) + MG_R(t, I, imax);
        if (whi < 0.0) {
            MG_RF(t, I, imin) = both;
            MG_RF(t, I, imax) = 0.0;
        } else if (wlo < 0.0) {
            MG_RF(t, I, imin) = 0.0;
            MG_RF(t, I, imax) = both;
        } else {
            MG_RF(t, I, imin) = wlo;
            MG_RF(t, I, imax) = whi;
        }
    }

    *c = *a;
    c->n = nc;
    c->x = X;
    c->w = Wc;
    c->h = a->h * n / nc;
    free(apos);
    free(acol);
    return 1;
}

/* ---- the hierarchy ------------------------------------------------------------ */

#define MG_MAX_LEVELS 96

typedef struct mg_level {
    mg_axis ax[3];
    mg_transfer tr[3]; /* to the next level (not set on the coarsest) */
} mg_level;

typedef struct mg_hierarchy {
    int count;
    mg_level lv[MG_MAX_LEVELS];
} mg_hierarchy;

/* From the user's grid: n and h per axis, bc[6], dims 2 or 3 (in 2D the z
 * axis is one inactive node).  Returns 0 when it does not end within
 * MG_MAX_LEVELS levels. */
static int mg_build(mg_hierarchy *H, const int n[3], const double h[3], const int bc[6], int dims)
{
    memset(H, 0, sizeof *H);
    for (int d = 0; d < 3; ++d) {
        const int active = d < dims;
        H->lv[0].ax[d] = mg_fine_axis(active ? n[d] : 1, active ? h[d] : 1.0,
                                      active ? bc[2 * d] : PGPU_BC_NEUMANN,
                                      active ? bc[2 * d + 1] : PGPU_BC_NEUMANN, active);
    }
    H->count = 1;
    while (H->count < MG_MAX_LEVELS) {
        mg_level *cur = &H->lv[H->count - 1], *next = &H->lv[H->count];
        double strongest = 0.0;
        for (int d = 0; d < 3; ++d) {
            const mg_axis *a = &cur->ax[d];
            if (a->active && a->n > 1 && 1.0 / (a->h * a->h) > strongest)
                strongest = 1.0 / (a->h * a->h);
        }
        if (strongest == 0.0)
            return 1;
        for (int d = 0; d < 3; ++d) {
            const mg_axis *a = &cur->ax[d];
            if (a->active && a->n > 1 && 1.0 / (a->h * a->h) >= 0.5 * strongest) {
                mg_coarsen(a, &next->ax[d], &cur->tr[d]);
            } else {
                next->ax[d] = mg_copy_axis(a);
                cur->tr[d] = mg_identity(a->n);
            }
        }
        ++H->count;
    }
    return 0;
}

static void mg_free_hierarchy(mg_hierarchy *H)
{
    for (int l = 0; l < H->count; ++l)
        for (int d = 0; d < 3; ++d) {
            mg_free_axis(&H->lv[l].ax[d]);
            if (l + 1 < H->count)
                mg_free_transfer(&H->lv[l].tr[d]);
        }
    H->count = 0;
}

/* The non-zero entries of row i of P (at most 2 for a coarsened axis, 1 for
 * the identity): columns and weights; returns the count. */
static int mg_p_row(const mg_transfer *t, int i, int col[], double wt[], int max)
{
    int k = 0;
    for (int c = 0; c < t->nc + 2; ++c)
        if (MG_P(t, i, c) != 0.0 && k < max) {
            col[k] = c;
            wt[k] = MG_P(t, i, c);
            ++k;
        }
    return k;
}

/* Row I of a restriction on the children of coarse node I (the non-zero
 * entries of R): indices and the weights of W (t->R or t->Rf); the count. */
static int mg_restriction_row(const mg_transfer *t, const double *W, int I, int idx[], double wt[], int max)
{
    int k = 0;
    for (int i = 0; i < t->n; ++i)
        if (MG_R(t, I, i) != 0.0 && k < max) {
            idx[k] = i;
            wt[k] = W[(size_t)I * (size_t)t->n + (size_t)i];
            ++k;
        }
    return k;
}

static int mg_r_row(const mg_transfer *t, int I, int idx[], double wt[], int max)
{
    return mg_restriction_row(t, t->R, I, idx, wt, max);
}

/* Row I of Rf, FMG's data restriction. */
static int mg_rf_row(const mg_transfer *t, int I, int idx[], double wt[], int max)
{
    return mg_restriction_row(t, t->Rf, I, idx, wt, max);
}

#endif /* PGPU_MG_REFERENCE_H */
