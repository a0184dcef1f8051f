/* fft_reference.h -- a host reference, in double, of the transforms the FFT
 * solver is built on, and a direct Poisson solver made of them.
 *
 * The 1D transforms are the plain O(n^2) sums (no fast algorithm), so that
 * they can be read against their definitions:
 *
 *   DST-I    X_k = sum_{j=1..n} x_j sin(pi j k / (n+1))              k = 1..n
 *            DST-I(DST-I(x)) = (n+1)/2 x
 *   DCT-II   X_k = sum_{j=0..n-1} x_j cos(pi k (2j+1) / (2n))       k = 0..n-1
 *   DCT-III  x_j = X_0 / 2 + sum_{k=1..n-1} X_k cos(pi k (2j+1) / (2n))
 *            DCT-III(DCT-II(x)) = n/2 x
 *   DFT      X_k = sum_{j=0..n-1} x_j exp(sign 2 pi i j k / n)       k = 0..n-1
 *            DFT(+1)(DFT(-1)(x)) = n x
 *
 * Arrays are 0-based: x_j of DST-I (j = 1..n) lives at x[j-1], and X_k at
 * X[k-1]; everything else at its own index.
 *
 * Per axis, with zero ghost data, the 1D operator of the semantics note
 * (Neumann faces reduce the diagonal at the ends, a periodic axis of one
 * point contributes nothing) is diagonalised by
 *   Dirichlet-Dirichlet  DST-I    eigenvalue of X[m]  4/h^2 sin^2(pi (m+1) / (2(n+1)))
 *   Neumann-Neumann      DCT-II   eigenvalue of X[m]  4/h^2 sin^2(pi m / (2n))
 *   periodic             DFT      eigenvalue of X[m]  4/h^2 sin^2(pi m / n)
 *   Dirichlet-Neumann    X_m = sum_j x_j sin(pi (2m+1) j' / (2n+1)), j' = 1..n
 *                        the node's number counted from the Dirichlet face
 *                                 eigenvalue of X[m]  4/h^2 sin^2(pi (2m+1) / (2(2n+1)))
 *                        inverse: 4/(2n+1) times the transpose
 * An axis that mixes Dirichlet and Neumann is solved by tridiagonal systems
 * or by that transform.
 */
#ifndef PGPU_TEST_FFT_REFERENCE_H
#define PGPU_TEST_FFT_REFERENCE_H

#include <stdint.h>

#include "poisson_gpu.h"
#include "reference.h"

/* How an axis is treated. */
typedef enum fref_kind {
    FREF_DST1 = 0,   /* Dirichlet-Dirichlet */
    FREF_DCT2 = 1,   /* Neumann-Neumann */
    FREF_DFT = 2,    /* periodic */
    FREF_MIXED = 3   /* Dirichlet-Neumann or Neumann-Dirichlet */
} fref_kind;

fref_kind fref_kind_of(pgpu_bc lo, pgpu_bc hi);
fref_kind fref_axis_kind(const ref_grid *g, int axis);

/* The transforms above, by their sums (out must not alias in). */
void fref_dst1(int64_t n, const double *x, double *X);
void fref_dct2(int64_t n, const double *x, double *X);
void fref_dct3(int64_t n, const double *X, double *x);
void fref_dft(int64_t n, int sign, const double *re, const double *im, double *out_re, double *out_im);

/* The eigenvalue that goes with output index m (0-based, as stored) of the
 * transform of kind (FREF_DST1, FREF_DCT2, FREF_DFT, FREF_MIXED). */
double fref_eigen(fref_kind kind, int64_t n, double h, int64_t m);

/* Solves (T + lambda I) x = r by the Thomas algorithm, T being the 1D
 * operator of an axis with faces lo, hi (Dirichlet or Neumann, zero ghost
 * data) and spacing h.  T + lambda I must be nonsingular. */
void fref_tridiag(pgpu_bc lo, pgpu_bc hi, int64_t n, double h, double lambda, const double *r, double *x);

/* Which axis is solved by tridiagonal systems. */
enum {
    FREF_TRI_AUTO = -1, /* the last mixed axis if there is one, else none (every axis transformed) */
    FREF_TRI_NONE = -2  /* none: every axis transformed */
};

typedef struct fref_info {
    int tri_axis;    /* the axis solved by tridiagonal systems, -1 for none */
    double imag_max; /* max |imaginary part| left after the inverse transforms */
    double real_max; /* max |real part| (the scale of imag_max) */
} fref_info;

/* Solves A u = b directly, b = f + boundary terms - shift as ref_residual
 * defines it (u's ghost layer holds the boundary data), and writes u's
 * interior; nothing else of u is written.  Every axis but the tridiagonal
 * one (tri: FREF_TRI_AUTO, FREF_TRI_NONE, or an axis 0..dims-1 that is not
 * periodic) is transformed, each
 * mode divided by the sum of the axes' eigenvalues, and transformed back.
 * Singular problems: the zero mode is set to 0 (a Neumann-Neumann
 * tridiagonal line with lambda == 0 is anchored and then given mean zero),
 * so u has mean zero.
 * Returns 1, or 0 when the request cannot be served (a bad tri) or memory
 * runs out; info may be NULL. */
int fref_solve_ex(const ref_grid *g, double *u, const double *f, int tri, fref_info *info);
int fref_solve(const ref_grid *g, double *u, const double *f); /* FREF_TRI_AUTO */

#endif /* PGPU_TEST_FFT_REFERENCE_H */
