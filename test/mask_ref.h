/* mask_ref.h -- a plain host reference, in double, of the masked,
 * variable-coefficient operator of poisson_gpu (the header's section MASKS
 * AND VARIABLE COEFFICIENTS): -div(beta grad u) = f with a cell-type mask,
 * its boundary terms, the connected fluid regions and the projection of the
 * singular ones, residual norms, and one weighted Jacobi sweep or one
 * red-black Gauss-Seidel iteration as a PGPU_FIXED solve performs them.
 *
 * It works on the layout of reference.h (ref_grid: strided arrays with one
 * ghost layer, 2D or 3D, any face types) and reduces to that reference when
 * there is no mask and beta is 1 (test_mask_reference checks this).  The
 * functions are written to be read against the header, not to be fast.
 *
 * The operator at a fluid point p, over its faces (x-, x+, y-, y+, z-, z+):
 *     sum over faces of  a_face (u_p - u_q) / h^2  = f_p
 *  - q a fluid point (the wrapped one across a periodic face): an unknown;
 *    a_face = 2 beta_p beta_q / (beta_p + beta_q);
 *  - q a Dirichlet point of the mask: the same coefficient, u_q is data
 *    (its term moves to the right-hand side);
 *  - q a solid point: the face is left out (zero flux);
 *  - a Dirichlet box face: a_face = beta_p, u_q is the ghost value;
 *  - a Neumann box face: no diagonal part, a_face g / h on the right
 *    (g: the ghost value, du/dn);
 *  - a periodic axis of one point does not couple to itself.
 * b = f + the boundary terms (held points and box ghosts).  A connected
 * fluid region (fluid-fluid faces, periodic wraps included) that touches no
 * Dirichlet point and no Dirichlet box face is singular: its mean of b is
 * removed, and the solver's u is returned with mean zero on it.
 */
#ifndef PGPU_TEST_MASK_REF_H
#define PGPU_TEST_MASK_REF_H

#include <stdint.h>

#include "reference.h"

/* The masked problem: the layout, the mask and beta (host arrays laid out
 * as u; only interior entries are read). */
typedef struct mref {
    ref_grid g;
    const uint8_t *mask; /* PGPU_CELL_*; NULL: every interior point fluid */
    const double *beta;  /* > 0; NULL: beta = 1 */
} mref;

mref mref_make(const ref_grid *g, const uint8_t *mask, const double *beta);

/* Cell type of interior element p (PGPU_CELL_FLUID without a mask). */
int mref_type(const mref *m, int64_t p);

/* 2 a b / (a + b), the coefficient of the face between two points. */
double mref_harmonic(double a, double b);

/* What lies across face f (0..5: x-, x+, y-, y+, z-, z+) of an interior
 * point. */
enum {
    MREF_FACE_NONE = 0,      /* no coupling: a solid point, or a periodic axis of one point */
    MREF_FACE_UNKNOWN = 1,   /* a fluid point (perhaps across a periodic seam) */
    MREF_FACE_HELD = 2,      /* a Dirichlet point of the mask: its value is data */
    MREF_FACE_DIRICHLET = 3, /* the ghost of a Dirichlet box face */
    MREF_FACE_NEUMANN = 4    /* the ghost of a Neumann box face (a flux) */
};
typedef struct mref_face {
    int kind;
    int64_t q;   /* the element across (the neighbour, wrapped point or ghost) */
    double a;    /* the face coefficient (harmonic mean; beta_p at a box face) */
    double coef; /* what multiplies u_q: a / h^2, or a / h at a Neumann face */
    double diag; /* the face's part of the diagonal: a / h^2, 0 at a Neumann face */
} mref_face;
mref_face mref_face_at(const mref *m, int64_t i, int64_t j, int64_t k, int f);

/* The terms of the equation at an interior point, as ref_point:
 *     (A u)(p) = diag * u(p) - off
 * off gathers the selected parts: REF_NEIGHBOURS the unknowns (fluid
 * neighbours), REF_BOUNDARY the data (held points, Dirichlet and Neumann
 * ghosts).  diag is always complete.  At a point that is not fluid all
 * three are 0.  The faces are visited in the order x-, x+, y-, y+, z-, z+,
 * the order of ref_point. */
ref_terms mref_point(const mref *m, const double *u, int64_t i, int64_t j, int64_t k, int parts);

/* out(p) = diag * u(p) - off(p, parts) at fluid points; other elements of
 * out are not written.  parts = REF_ALL_TERMS gives the f for which u (its
 * data included) is the exact discrete solution; REF_NEIGHBOURS the
 * operator on the unknowns alone (zero data). */
void mref_apply(const mref *m, const double *u, double *out, int parts);

/* The connected fluid regions. */
typedef struct mref_regions {
    int64_t count;    /* regions */
    int64_t singular; /* of them singular */
    int32_t *label;   /* per element: its region, -1 where not a fluid interior point */
    int *is_singular; /* per region */
    int64_t *size;    /* per region: points */
} mref_regions;
/* 1 on success, 0 when memory fails. */
int mref_find_regions(const mref *m, mref_regions *r);
void mref_regions_free(mref_regions *r);

/* Per region: the mean of b = f + boundary terms (mean_b), the largest |b|
 * (max_b) and the mean of |f| + |boundary terms| (mag_b).  Arrays of
 * r->count entries, any of them may be NULL. */
void mref_rhs_stats(const mref *m, const mref_regions *r, const double *u, const double *f, double *mean_b,
                    double *max_b, double *mag_b);

/* fb = f - mean_b(region) at the points of singular regions, f at every
 * other element (copied).  The right-hand side a solve works with: its b is
 * fb + the boundary terms. */
void mref_project_rhs(const mref *m, const mref_regions *r, const double *u, const double *f, double *fb);

/* Subtracts each singular region's mean of u from u on that region;
 * means (r->count entries, may be NULL) gets the means removed (0 for
 * regular regions). */
void mref_project_u(const mref *m, const mref_regions *r, double *u, double *means);

/* The residual r = b - A u over fluid points, b = f + boundary terms with
 * the singular regions' means removed (what pgpu_residual measures);
 * res may be NULL, else its fluid entries are written.  mag_r and mag_b
 * (may be NULL) get ||(|f| + |mean| + sum |terms| + diag |u|)||_2 and
 * ||(|f| + |mean| + sum |boundary terms|)||_2, the magnitudes that the
 * rounding of r and b is relative to. */
ref_norms mref_residual(const mref *m, const mref_regions *r, const double *u, const double *f, double *res,
                        double *mag_r, double *mag_b);

/* One relaxation of the fluid points of the selected colours (REF_RED,
 * REF_BLACK, REF_ALL_POINTS; red: i+j+k even, 1-based, k = 1 in 2D):
 *     uout(p) = (1 - w) uin(p) + w (fb(p) + off(uin, p)) / diag(p)
 * every term read from uin (uout(p) = uin(p) where diag == 0).  Every
 * other interior element (the other colour, points not fluid) is copied
 * from uin; uout's ghosts are not written.  fb: the projected f. */
void mref_relax(const mref *m, const double *uin, double *uout, const double *fb, double omega, int colours);

/* The rounding bound of mref_relax done in another arithmetic, per point,
 * in units of that arithmetic's epsilon, as ref_relax_bound:
 *     |uin| + w (|fb| + smag + sum |terms|) / diag
 * (smag: per element, may be NULL: what the mean removed from fb may be
 * off by), plus, with err_in, how errors in uin pass through the update.
 * err_out is written at interior points (non-fluid: err_in or 0). */
void mref_relax_bound(const mref *m, const double *uin, const double *fb, const double *smag, double omega,
                      int colours, const double *err_in, double *err_out);

/* One PGPU_FIXED step as the library performs it (max_iterations 1): the
 * singular regions' means of b removed from f, one Jacobi sweep (rbgs 0)
 * or one red-black iteration (rbgs 1) of u in place, then each singular
 * region's mean of u removed.  Returns 1, 0 when memory fails. */
int mref_step(const mref *m, const mref_regions *r, double *u, const double *f, double omega, int rbgs);

/* A bound on the rounding error of mref_step done in another arithmetic,
 * per element (fluid points; 0 elsewhere), in units of that arithmetic's
 * epsilon: mref_relax_bound through the step (for red-black the black
 * points carry the red points' bounds), with smag = the largest |b| over
 * the singular regions at their points (the mean of b removed may be off
 * by a part of it), and after the projection of u, on singular regions,
 * the region's mean bound plus the largest |u| over the singular regions
 * (the mean of u removed).  uin: u before the step.  1, 0 when memory
 * fails. */
int mref_step_bound(const mref *m, const mref_regions *r, const double *uin, const double *f, double omega,
                    int rbgs, double *bound);

/* ---- test geometry ---------------------------------------------------------------- */

/* Masks, written into the interior of mask (other elements untouched).
 * Coordinates are cell-centred in the unit box, x = (i - 1/2) / nx; "up"
 * is z in 3D, y in 2D. */
enum {
    MREF_SHAPE_NONE = 0,   /* every point fluid */
    MREF_SHAPE_SPHERE,     /* a solid ball of radius 0.3 at the centre */
    MREF_SHAPE_STAIRCASE,  /* solid steps rising along x (and y in 3D) from the bottom */
    MREF_SHAPE_WALLS,      /* one-cell solid walls with gaps, one free-standing */
    MREF_SHAPE_POCKET,     /* a closed solid shell (0.2 < r < 0.3) whose inside a one-cell
                              wall splits in two sealed pockets, and a one-point pocket near
                              the low corner (needs n >= 5 per axis) */
    MREF_SHAPE_POOL,       /* air (Dirichlet) above 0.7, a liquid pool below, a solid block
                              in a corner of its floor */
    MREF_SHAPE_CELLS,      /* a solid ball of radius 0.25 and fluid cells walled in by solid
                              ones on the box: at the low corner, on the edge along the
                              last axis, on the low x face and at the high corner (apart
                              for n >= 6 per axis) */
    MREF_SHAPE_RANDOM,     /* each point solid with probability 0.35, Dirichlet with 0.01
                              (t_rand: fresh each run): many small sealed pockets */
    MREF_SHAPE_SPHERE_WALL, /* the sphere, and every point at i = 1 and i = nx solid: the x
                              faces of the box touch no fluid (zero-flux walls one point
                              inside them) */
    MREF_SHAPE_HELD,       /* a closed solid shell one point thick over 0.3-0.7 of each axis
                              (0-based a = (int)(0.3 n) to b = (int)(0.7 n)), holding one
                              Dirichlet point at 0-based 2 ((a + b) / 4) on every axis: off
                              the coarse nodes of a Dirichlet axis (needs n >= 5) */
    MREF_SHAPE_COUNT
};
void mref_shape(const ref_grid *g, int shape, uint8_t *mask);
const char *mref_shape_name(int shape);

/* A quiet NaN with a payload (0x7ffdeadbeef00000; as a float 0x7fef56df):
 * what the tests store where nothing may be read or written, so that a
 * value copied through arithmetic (which would make it the device's
 * canonical NaN) shows. */
double mref_poison(void);

/* Random data on m's layout: at fluid points u in [-1, 1) and
 * f = fscale (r + foffset), r in [-1, 1); at Dirichlet points of the mask
 * u in [2, 3) (the held values) and f poison; at solid points u and f
 * poison; on Dirichlet and Neumann box faces ghost data in [-1, 1);
 * periodic ghosts, f's ghosts and padding poison, edge and corner ghosts
 * T_POISON_FINITE (no stencil reaches them). */
void mref_random_data(const mref *m, double *u, double *f, double fscale, double foffset);

/* beta fields, written into the interior. */
enum {
    MREF_BETA_ONE = 0, /* 1 (an array of ones) */
    MREF_BETA_SMOOTH,  /* 1 + 0.5 sin(3x) cos(2y) (+ 0.3 sin(2z)): between 0.2 and 1.8 */
    MREF_BETA_JUMP,    /* two phases: `jump` above the middle (up > 0.5), 1 below */
    MREF_BETA_RANDOM,  /* independent values in [0.1, 10) from the test generator */
    MREF_BETA_BALL,    /* `jump` inside the ball of radius 0.3 around (0.45, 0.55, 0.5), 1 outside */
    MREF_BETA_CONST    /* `jump` everywhere */
};
void mref_beta_field(const ref_grid *g, int kind, double jump, double *beta);

#endif /* PGPU_TEST_MASK_REF_H */
