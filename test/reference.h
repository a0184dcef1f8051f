/* reference.h -- a plain host reference, in double, of the arithmetic that
 * poisson_gpu performs (the operator, its boundary terms, the singular shift,
 * Jacobi and red-black Gauss-Seidel sweeps, mean removal, residual norms).
 *
 * Everything works on the library's own layout: strided arrays with one ghost
 * layer, 2D or 3D, anisotropic spacing, any boundary type on each face.  The
 * functions are written to be read against the "Operator" section of the
 * semantics note, not to be fast; tests of later methods (multigrid, FFT)
 * compare against them too.
 */
#ifndef PGPU_TEST_REFERENCE_H
#define PGPU_TEST_REFERENCE_H

#include <stdint.h>

#include "poisson_gpu.h"

/* The grid and the array layout, with every default resolved. */
typedef struct ref_grid {
    int64_t n[3];      /* interior points per axis; n[2] == 1 in 2D */
    double h[3];       /* spacing per axis (h[2] unused in 2D) */
    int64_t stride[3]; /* element strides: 1, stride_y, stride_z (2D: one plane) */
    pgpu_bc bc[6];     /* x-, x+, y-, y+, z-, z+ */
    int dims;          /* 2 when nz == 1, else 3 */
} ref_grid;

/* The grid a config describes (strides of 0 resolved to packed). */
ref_grid ref_grid_from_config(const pgpu_config *cfg);

/* Elements an array of this layout spans, padding of the last row and plane
 * included (what a test allocates). */
int64_t ref_elems(const ref_grid *g);

static inline int64_t ref_idx(const ref_grid *g, int64_t i, int64_t j, int64_t k)
{
    return i + j * g->stride[1] + k * g->stride[2];
}

/* Interior k range: 1..nz in 3D; the single plane k == 0 in 2D. */
static inline int64_t ref_k_first(const ref_grid *g) { return g->dims == 3 ? 1 : 0; }
static inline int64_t ref_k_last(const ref_grid *g) { return g->dims == 3 ? g->n[2] : 0; }

/* Colour of an interior point: red when i+j+k is even, with k = 1 in 2D. */
static inline int ref_is_red(const ref_grid *g, int64_t i, int64_t j, int64_t k)
{
    return ((i + j + (g->dims == 3 ? k : 1)) & 1) == 0;
}

#define REF_FOR_EACH_INTERIOR(g, i, j, k)                        \
    for (int64_t k = ref_k_first(g); k <= ref_k_last(g); ++k)    \
        for (int64_t j = 1; j <= (g)->n[1]; ++j)                 \
            for (int64_t i = 1; i <= (g)->n[0]; ++i)

/* What an element of the layout is. */
enum {
    REF_INTERIOR = 0,
    REF_FACE_GHOST = 1, /* ghost next to an interior point across one face */
    REF_EDGE_GHOST = 2, /* edge and corner ghosts: no stencil reaches them */
    REF_PADDING = 3     /* between rows or planes: never read or written */
};
/* Classifies element e; *face gets the face (0..5) of a REF_FACE_GHOST. */
int ref_classify(const ref_grid *g, int64_t e, int *face);

/* 1 when no face in use is Dirichlet (in 2D only faces 0..3 are in use). */
int ref_is_singular(const ref_grid *g);

/* The terms of the operator at one interior point:
 *     (A u)(p) = diag * u(p) - off,   residual = f - shift + off - diag * u(p)
 * off gathers the neighbours (REF_NEIGHBOURS: interior points, periodic
 * wrap-around included) and the ghost contributions of Dirichlet and Neumann
 * faces (REF_BOUNDARY).  diag is always complete. */
enum { REF_NEIGHBOURS = 1, REF_BOUNDARY = 2, REF_ALL_TERMS = 3 };
typedef struct ref_terms {
    double off;    /* sum of the selected terms */
    double offabs; /* sum of their magnitudes (for rounding bounds) */
    double diag;
} ref_terms;
ref_terms ref_point(const ref_grid *g, const double *u, int64_t i, int64_t j, int64_t k, int parts);

/* out(p) = diag * u(p) - off(p) at interior points: A applied to the
 * interior of u with u's ghost data included.  out's ghosts are not written. */
void ref_apply(const ref_grid *g, const double *u, double *out);

/* out(p) = the boundary terms at p (what u's ghost data adds to the rhs). */
void ref_boundary_terms(const ref_grid *g, const double *u, double *out);

/* The shift subtracted from f at every point: 0 unless singular, else the
 * mean over interior points of f + boundary terms. */
double ref_shift(const ref_grid *g, const double *u, const double *f);

/* An upper bound on the magnitude of the quantities that enter the shift
 * (mean of |f| + |boundary terms|; 0 unless singular): rounding of the shift
 * is relative to this. */
double ref_shift_magnitude(const ref_grid *g, const double *u, const double *f);

typedef struct ref_norms {
    double norm;     /* ||r||_2 over interior points */
    double max;      /* max |r| */
    double rhs_norm; /* ||b||_2, b = f + boundary terms - shift */
    double relative; /* norm / rhs_norm (norm when rhs_norm == 0) */
    double shift;
} ref_norms;
/* Residual r = b - A u; r may be NULL, else its interior is written. */
ref_norms ref_residual(const ref_grid *g, const double *u, const double *f, double *r);

/* One relaxation of the points of one colour:
 *     uout(p) = (1 - w) uin(p) + w (f(p) - shift + off(uin, p)) / diag(p)
 * (uout(p) = uin(p) where diag == 0), every term read from uin, so all the
 * points of the colour are updated at once.  Interior points of the other
 * colour are copied from uin; uout's ghosts are not written.  uin and uout
 * must be different arrays. */
enum { REF_RED = 1, REF_BLACK = 2, REF_ALL_POINTS = 3 };
void ref_relax(const ref_grid *g, const double *uin, double *uout, const double *f,
               double shift, double omega, int colours);

/* A bound on the rounding error of ref_relax done in another precision, per
 * point, in units of that precision's epsilon (multiply by a few epsilon):
 *     |uin| + w (|f| + shift_mag + sum |terms|) / diag
 * plus, when err_in is not NULL (the bound on uin's own errors), how those
 * errors pass through the update.  Points not updated carry err_in (or 0).
 * err_out is written at interior points. */
void ref_relax_bound(const ref_grid *g, const double *uin, const double *f, double shift_mag,
                     double omega, int colours, const double *err_in, double *err_out);

/* One Jacobi sweep of u in place (shift computed from f and u's ghosts). */
void ref_jacobi(const ref_grid *g, double *u, const double *f, double omega);

/* One red-black Gauss-Seidel iteration of u in place: every red point from
 * the old values, then every black point from the values after the red
 * update. */
void ref_rbgs(const ref_grid *g, double *u, const double *f, double omega);

/* Mean of u over interior points; ref_remove_mean subtracts it and returns it. */
double ref_mean(const ref_grid *g, const double *u);
double ref_remove_mean(const ref_grid *g, double *u);

/* Discrete eigenvectors of one axis, by its pair of face types (with zero
 * ghost data), at interior index i (1..n):
 *   Dirichlet-Dirichlet  sin(pi k i / (n+1))                    k = 1..n
 *   Neumann-Neumann      cos(pi k (i - 1/2) / n)                k = 0..n-1
 *   periodic             cos(2 pi k (i - 1) / n + phase)        k = 0..n-1
 *   Dirichlet-Neumann    sin(pi (2k-1) i / (2n+1))              k = 1..n
 *   Neumann-Dirichlet    cos(pi (2k-1) (i - 1/2) / (2n+1))      k = 1..n
 * and their eigenvalues 4/h^2 sin^2(theta/2) for the angle theta above. */
double ref_mode(pgpu_bc lo, pgpu_bc hi, int64_t n, int k, double phase, int64_t i);
double ref_mode_lambda(pgpu_bc lo, pgpu_bc hi, int64_t n, int k, double h);

/* Writes the product of the axes' modes k[a] (phase[a] for periodic axes)
 * into u's interior and returns its eigenvalue (the sum over the axes).
 * The ghost data that goes with it is zero (periodic ghosts: not read). */
double ref_fill_mode(const ref_grid *g, double *u, const int k[3], const double phase[3]);

/* The smallest eigenvalue of the operator (the smallest non-zero one when
 * it is singular), from the axes' modes above. */
double ref_lambda_min(const ref_grid *g);

/* Over interior points: max |a - b|, max |a|, root mean square of a,
 * ||a||_2 and ||a - scale_b * b||_2. */
double ref_max_diff(const ref_grid *g, const double *a, const double *b);
double ref_max_abs(const ref_grid *g, const double *a);
double ref_rms(const ref_grid *g, const double *a);
double ref_norm2(const ref_grid *g, const double *a);
double ref_norm2_diff(const ref_grid *g, const double *a, const double *b, double scale_b);

#endif /* PGPU_TEST_REFERENCE_H */
