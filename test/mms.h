/* mms.h -- manufactured solutions shared by the tests (test_manufactured.c,
 * multigrid/test_fmg.c).
 *
 * u = X(x) Y(y) Z(z) with X = sin(a x + b) or exp(a x + b) per axis, so that
 * f = -Laplace(u) = (lx + ly + lz) u (l = a^2 for sin, -a^2 for exp), with
 * non-trivial boundary values.  Positions on an axis of length L: with a
 * Dirichlet lower face the nodes are x_i = i h (the ghost is the boundary
 * node x_0 = 0), else cell centres x_i = (i - 1/2) h (the face lies at 0);
 * at the upper face a Dirichlet ghost is the node x_{n+1} = L, a Neumann or
 * periodic face lies at x_n + h/2 = L.  So h = L/(n+1) for D-D, L/n for N-N
 * and periodic, L/(n+1/2) for D-N and N-D.  Dirichlet ghosts hold u at the
 * boundary node, Neumann ghosts the outward normal derivative at the face;
 * periodic axes carry whole periods.
 */
#ifndef PGPU_TEST_MMS_H
#define PGPU_TEST_MMS_H

#include "common.h"

typedef struct axis_fn {
    int is_exp; /* 0: sin(a x + b), 1: exp(a x + b) */
    double a, b;
} axis_fn;

typedef struct mms_case {
    const char *name;
    const char *bcs;
    double L[3];
    axis_fn X[3];
} mms_case;

/* The boundary sets: all Dirichlet, all Neumann (singular), all periodic
 * (singular), mixed. */
extern const mms_case mms_cases_3d[];
extern const mms_case mms_cases_2d[];
extern const size_t mms_ncases_3d, mms_ncases_2d;

/* The config of case c in dims dimensions at nominal resolution N per axis
 * (h halves when N doubles), with the given flags. */
pgpu_config mms_config(const mms_case *c, int dims, int64_t N, unsigned flags);

/* Fills P: f = -Laplace(u) inside, boundary data in u's ghosts, initial
 * guess 0; writes the exact solution's interior values into ue. */
void mms_fill(const mms_case *c, t_problem *P, double *ue);

#endif
