/* test_mask.c -- masks and variable coefficients on the GPU against the host
 * reference of mask_ref.h (the header's MASKS AND VARIABLE COEFFICIENTS).
 * Exit 77 without a device.
 *
 * 1. One step.  One PGPU_JACOBI | PGPU_FIXED sweep and one PGPU_RBGS |
 *    PGPU_FIXED iteration (max_iterations 1) from random u, per point
 *    against mref_step: the singular regions' means of b removed from f,
 *    the relaxation, then each singular region's mean of u removed (what
 *    the library does with a mask: Solver::fixed_launches projects f, the
 *    method runs, run_method projects u).  Tolerance per point:
 *    tol * mref_step_bound (the magnitudes the update adds up, the red
 *    values' bounds carried into black points, the means' allowances),
 *    tol = 1e-13 in double, 16 FLT_EPSILON in float (test_mask_reference
 *    shows an honest float step inside 0.1 of that).  The report (status,
 *    1 iteration, NaN norms, singular, projected = the singular regions),
 *    points that are not fluid (solid: a NaN with a payload, in u and f;
 *    Dirichlet: known values) and everything outside the interior (ghosts,
 *    padding) unchanged bit for bit; the mean of u on each singular region
 *    0.  pgpu_residual on the same random u against mref_residual
 *    (||b - A u|| / ||b||, b with the singular regions' means removed, over
 *    fluid points): double 1e-12 relative (the device's fixed-point region
 *    sums are exact to npts 2^-62 max |b|), float 8 eps_f (||r|| scale +
 *    rel ||b|| scale) / ||b||.  Masks: sphere, staircase, one-cell walls,
 *    sealed pockets (two halves and a one-point pocket), air above a pool,
 *    none; beta 1, smooth, random, jumps of 1e3 and 1e6; D, N, P faces,
 *    odd periodic axes (red points meet across the seam), prime and odd
 *    sizes, 2D and 3D, padded strides; spacings are powers of 2 (exact
 *    couplings on both sides).
 * 2. Solves.  V-cycles (and FMG) to 1e-10 on pockets (with the one-point
 *    region), a pool, walls, stairs, no mask: success (jumps next to
 *    Neumann faces may end in BREAKDOWN, the header's caveat: printed, not
 *    failed), the host's relative residual of the result and pgpu_residual
 *    agree with the report, the report's rhs_mean (NaN for several
 *    singular regions, else the mean of b removed; 1e-12 of max |b|), the
 *    singular regions' means of u are 0, nothing but fluid points written.
 * 3. New data.  A new mask between two solves gives what a fresh handle
 *    with that mask gives (1e-12 of max |u|; bit-identity reported), for
 *    V-cycles, fixed V-cycles replaying graphs on the same arrays, FMG and
 *    2D.  Invalid data (mask bytes 3 and 255, no fluid point, beta 0, < 0,
 *    NaN, Inf, at a solid point too) is refused with
 *    PGPU_ERROR_INVALID_ARGUMENT and a message, and the handle's next solve
 *    is bit-identical to its solve before (the header promises
 *    bit-identical results run to run).  pgpu_set_mask(s, NULL) and
 *    pgpu_set_coefficients(s, NULL) give what a handle that never had them
 *    gives (1e-10 of max |u|, solves to 1e-12).  The same solve twice on
 *    one handle (FMG, CG) with solid layers along Dirichlet faces is
 *    bit-identical (no cycle may leave values in coarse ghosts), and so are
 *    V-cycles between odd periodic axes (the first and last points of such
 *    an axis are neighbours of one colour).
 * 4. Convergence.  The V-cycle factor on a solid sphere (radius 0.3) in a
 *    Dirichlet box at 63^3, 127^3 and 128^3 (even axes coarsen otherwise),
 *    and at 120^3 with the first and last x layers solid too (the x faces
 *    touch no fluid; a tile of the coarse build holds only a wall face), from
 *    the monitor's residuals: the
 *    geometric mean over cycles 3 to the last must be <= 0.15 with beta 1
 *    (0.3 with the layers: 0.11 measured on an H100); with a
 *    1000:1 two-phase beta it is printed (the bar waits for the Krylov
 *    work) and the solve must converge (a BREAKDOWN is named).  A pocket
 *    sealed by a one-point shell holding one Dirichlet point off the
 *    coarse nodes: <= 0.95 over 40 cycles at 64^2 and 127^2 (diverged
 *    before the iso rule), printed at 63^3; float V-cycles' own stop on
 *    it, with and without a jump of beta: SUCCESS only with a host
 *    residual within 16 times float's floor, else NOT_CONVERGED.  From
 *    u = 0 on a smooth right-hand side, four V-cycles on a solid sphere
 *    leave at most 3 (128^3) and 6 (255^3) times the empty box's residual
 *    (4.8 and 10.5 before the near tiles' Gauss-Seidel iterations).
 * 5. Float's own stop and a tolerance of the caller's: Jacobi, RBGS,
 *    V-cycles and CG with tolerance 0 end SUCCESS only within 16 times the
 *    (*) value pgpu_get_config shows; with that value passed as the
 *    tolerance, only within it (else NOT_CONVERGED); beta raising float's
 *    floor, so that some own stops end above the value (counted).
 */
#include "common.h"
#include "mask_ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define BETA_NONE (-1) /* no pgpu_set_coefficients */

/* ---- a masked problem on the host and the device ---------------------------------- */

typedef struct mcase {
    pgpu_config cfg;
    ref_grid g;
    unsigned prec;
    int64_t elems;
    size_t bytes;
    int shape, beta_kind;
    uint8_t *mask;  /* host, laid out as u (0xee outside the interior); NULL: no mask */
    double *beta;   /* host, rounded to prec (NaN outside the interior); NULL: none */
    double *u, *f;  /* host data, rounded to prec */
    void *u_sent;   /* the typed image of u as uploaded */
    uint8_t *d_mask;
    void *d_beta, *d_u, *d_f;
    int owns_arrays; /* d_u, d_f allocated here (else borrowed) */
    int may_break;   /* a solve may end in PGPU_ERROR_BREAKDOWN (the header's caveat: strong jumps next to
                        Neumann faces): reported, not failed */
    mref M;
    mref_regions R;
} mcase;

static void mc_free(mcase *mc)
{
    free(mc->mask), free(mc->beta), free(mc->u), free(mc->f), free(mc->u_sent);
    t_dev_free(mc->d_mask);
    t_dev_free(mc->d_beta);
    if (mc->owns_arrays) {
        t_dev_free(mc->d_u);
        t_dev_free(mc->d_f);
    }
    mref_regions_free(&mc->R);
    memset(mc, 0, sizeof *mc);
}

/* Host arrays, the mask and beta on the device, u and f on the device
 * (those of `share` when given: the same pointers). */
static int mc_init(mcase *mc, const pgpu_config *cfg, int shape, int beta_kind, double jump, const mcase *share)
{
    memset(mc, 0, sizeof *mc);
    mc->cfg = *cfg;
    mc->g = ref_grid_from_config(cfg);
    mc->prec = t_precision(cfg->flags);
    mc->elems = ref_elems(&mc->g);
    mc->bytes = (size_t)mc->elems * t_word(mc->prec);
    mc->shape = shape;
    mc->beta_kind = beta_kind;
    const size_t n = (size_t)mc->elems;
    mc->u = malloc(n * sizeof(double));
    mc->f = malloc(n * sizeof(double));
    mc->u_sent = malloc(mc->bytes);
    if (shape != MREF_SHAPE_NONE)
        mc->mask = malloc(n);
    if (beta_kind != BETA_NONE)
        mc->beta = malloc(n * sizeof(double));
    if (!mc->u || !mc->f || !mc->u_sent || (shape != MREF_SHAPE_NONE && !mc->mask) ||
        (beta_kind != BETA_NONE && !mc->beta)) {
        CHECK(0, "host allocation");
        mc_free(mc);
        return 0;
    }
    void *typed = malloc(mc->bytes);
    if (mc->mask) {
        memset(mc->mask, 0xee, n); /* not a type: only interior bytes may be read */
        mref_shape(&mc->g, shape, mc->mask);
        mc->d_mask = t_dev_upload(mc->mask, n);
    }
    if (mc->beta) {
        for (size_t e = 0; e < n; ++e)
            mc->beta[e] = T_POISON_NAN; /* ghosts and padding are not read */
        mref_beta_field(&mc->g, beta_kind, jump, mc->beta);
        for (size_t e = 0; e < n; ++e)
            mc->beta[e] = t_round(mc->prec, mc->beta[e]);
        t_to_typed(mc->prec, mc->beta, typed, mc->elems);
        mc->d_beta = t_dev_upload(typed, mc->bytes);
    }
    free(typed);
    if (share) {
        mc->d_u = share->d_u;
        mc->d_f = share->d_f;
    } else {
        mc->d_u = t_dev_alloc(mc->bytes);
        mc->d_f = t_dev_alloc(mc->bytes);
        mc->owns_arrays = 1;
    }
    mc->M = mref_make(&mc->g, mc->mask, mc->beta);
    if (!mref_find_regions(&mc->M, &mc->R)) {
        CHECK(0, "host allocation (regions)");
        mc_free(mc);
        return 0;
    }
    if ((mc->mask && !mc->d_mask) || (mc->beta && !mc->d_beta) || !mc->d_u || !mc->d_f) {
        mc_free(mc);
        return 0;
    }
    return 1;
}

/* 2/hx^2 + 2/hy^2 (+ 2/hz^2): f of this size makes f / diag comparable to u. */
static double f_scale(const ref_grid *g)
{
    double s = 0;
    for (int a = 0; a < g->dims; ++a)
        s += 2.0 / (g->h[a] * g->h[a]);
    return s;
}

/* Random data (mref_random_data), f offset by half its scale so that the
 * singular regions' means matter; rounded to the precision. */
static void mc_data(mcase *mc)
{
    mref_random_data(&mc->M, mc->u, mc->f, f_scale(&mc->g), 0.5);
    for (int64_t e = 0; e < mc->elems; ++e) {
        mc->u[e] = t_round(mc->prec, mc->u[e]);
        mc->f[e] = t_round(mc->prec, mc->f[e]);
    }
}

static int mc_upload(mcase *mc)
{
    void *typed = malloc(mc->bytes);
    if (!typed) {
        CHECK(0, "host allocation");
        return 0;
    }
    t_to_typed(mc->prec, mc->u, mc->u_sent, mc->elems);
    t_to_typed(mc->prec, mc->f, typed, mc->elems);
    int ok = cudaMemcpy(mc->d_u, mc->u_sent, mc->bytes, cudaMemcpyHostToDevice) == cudaSuccess &&
             cudaMemcpy(mc->d_f, typed, mc->bytes, cudaMemcpyHostToDevice) == cudaSuccess;
    free(typed);
    if (!ok)
        CHECK(0, "upload: %s", cudaGetErrorString(cudaGetLastError()));
    return ok && t_sync("upload");
}

/* u from the device: the typed image (may be NULL) and doubles (may be NULL). */
static int mc_download(const mcase *mc, void *typed_out, double *u_out)
{
    void *typed = typed_out ? typed_out : malloc(mc->bytes);
    int ok = typed && t_dev_download(typed, mc->d_u, mc->bytes);
    if (ok && u_out)
        t_from_typed(mc->prec, typed, u_out, mc->elems);
    if (!typed_out)
        free(typed);
    return ok;
}

/* A handle for the case, its mask and beta set. */
static pgpu_solver *mc_handle(const mcase *mc, const pgpu_config *cfg, const char *what)
{
    pgpu_solver *s = t_create(cfg, what);
    if (!s)
        return NULL;
    pgpu_status st;
    if (mc->mask && (st = pgpu_set_mask(s, mc->d_mask)) != PGPU_SUCCESS) {
        CHECK(0, "%s: pgpu_set_mask: %s: %s", what, pgpu_status_string(st), pgpu_last_error(s));
        pgpu_destroy(s);
        return NULL;
    }
    if (mc->beta && (st = pgpu_set_coefficients(s, mc->d_beta)) != PGPU_SUCCESS) {
        CHECK(0, "%s: pgpu_set_coefficients: %s: %s", what, pgpu_status_string(st), pgpu_last_error(s));
        pgpu_destroy(s);
        return NULL;
    }
    return s;
}

static const char *beta_name(int kind, double jump, char *buf, size_t size)
{
    switch (kind) {
    case BETA_NONE: return "no beta";
    case MREF_BETA_ONE: return "beta 1";
    case MREF_BETA_SMOOTH: return "smooth beta";
    case MREF_BETA_RANDOM: return "random beta";
    case MREF_BETA_BALL: snprintf(buf, size, "a ball of beta %g", jump); return buf;
    case MREF_BETA_CONST: snprintf(buf, size, "beta %g everywhere", jump); return buf;
    default: snprintf(buf, size, "jump %g", jump); return buf;
    }
}

/* Points that are not fluid and every element outside the interior: the
 * bits uploaded (solid points hold a NaN with a payload: a copy through
 * arithmetic would change it). */
static void check_untouched(const mcase *mc, const void *typed, const char *what)
{
    const size_t w = t_word(mc->prec);
    const unsigned char *a = mc->u_sent, *b = typed;
    int64_t solid = 0, held = 0, outside = 0, nsolid = 0, nheld = 0;
    for (int64_t e = 0; e < mc->elems; ++e) {
        const int diff = memcmp(a + e * w, b + e * w, w) != 0;
        if (ref_classify(&mc->g, e, NULL) != REF_INTERIOR) {
            outside += diff;
            continue;
        }
        const int t = mref_type(&mc->M, e);
        if (t == PGPU_CELL_SOLID)
            solid += diff, ++nsolid;
        else if (t == PGPU_CELL_DIRICHLET)
            held += diff, ++nheld;
    }
    CHECK(solid == 0 && held == 0 && outside == 0,
          "%s: untouched bit for bit: solid points %lld of %lld changed, Dirichlet points %lld of %lld, "
          "ghosts and padding %lld", what, (long long)solid, (long long)nsolid, (long long)held, (long long)nheld,
          (long long)outside);
}

/* The largest |mean of u| over the singular regions, relative to max |u|. */
static double singular_means(const mcase *mc, const double *u)
{
    double *sum = calloc((size_t)mc->R.count + 1, sizeof(double)), worst = 0, umax = 0;
    REF_FOR_EACH_INTERIOR(&mc->g, i, j, k) {
        const int64_t p = ref_idx(&mc->g, i, j, k);
        const int32_t id = mc->R.label[p];
        if (id >= 0) {
            sum[id] += u[p];
            umax = t_max_nan(umax, fabs(u[p]));
        }
    }
    for (int64_t id = 0; id < mc->R.count; ++id)
        if (mc->R.is_singular[id])
            worst = t_max_nan(worst, fabs(sum[id] / (double)mc->R.size[id]));
    free(sum);
    return umax > 0 ? worst / umax : worst;
}

/* pgpu_residual of the device arrays against mref_residual of u (the host
 * image of the device's u) and mc->f. */
static void check_residual(pgpu_solver *s, const mcase *mc, const double *u, const char *what)
{
    double rel = NAN, mag_r = 0, mag_b = 0;
    const pgpu_status st = pgpu_residual(s, mc->d_u, mc->d_f, &rel);
    const ref_norms nm = mref_residual(&mc->M, &mc->R, u, mc->f, NULL, &mag_r, &mag_b);
    double tol;
    if (mc->prec == PGPU_FLOAT)
        tol = 8.0 * FLT_EPSILON * (mag_r + nm.relative * mag_b) / nm.rhs_norm;
    else
        tol = 1e-12 * nm.relative + 64.0 * DBL_EPSILON * (mag_r + mag_b) / nm.rhs_norm;
    CHECK(st == PGPU_SUCCESS && fabs(rel - nm.relative) <= tol,
          "%s: pgpu_residual %.15g, host ||b - A u|| / ||b|| %.15g (b: singular regions' means removed): diff "
          "%.2e, tol %.2e %s", what, rel, nm.relative, fabs(rel - nm.relative), tol,
          st ? pgpu_last_error(s) : "");
}

/* ---- 1. one step -------------------------------------------------------------------------- */

typedef struct step_case {
    const char *name;
    int64_t nx, ny, nz;
    const char *bcs;
    int shape, beta;
    double jump;
    double hx, hy, hz;
    int64_t pad_y, pad_z;
    double w_jacobi, w_rbgs;
} step_case;

static const step_case step_cases[] = {
    {"sphere, Dirichlet box", 29, 23, 19, "DDDDDD", MREF_SHAPE_SPHERE, MREF_BETA_ONE, 0, 1. / 32, 1. / 32, 1. / 16, 0, 0, 1.0, 1.0},
    {"sphere, periodic x odd", 31, 17, 13, "PPNNDD", MREF_SHAPE_SPHERE, MREF_BETA_SMOOTH, 0, 1. / 32, 1. / 16, 1. / 16, 0, 0, 0.8, 1.3},
    {"staircase", 37, 29, 23, "DNNDDN", MREF_SHAPE_STAIRCASE, MREF_BETA_JUMP, 1e3, 1. / 32, 1. / 32, 1. / 32, 0, 0, 0.9, 1.6},
    {"thin walls, periodic x odd", 29, 19, 17, "PPDDNN", MREF_SHAPE_WALLS, MREF_BETA_JUMP, 1e6, 1. / 32, 1. / 16, 1. / 16, 0, 0, 1.0, 1.2},
    {"pockets, Dirichlet box", 31, 29, 23, "DDDDDD", MREF_SHAPE_POCKET, MREF_BETA_SMOOTH, 0, 1. / 32, 1. / 32, 1. / 32, 0, 0, 0.7, 1.5},
    {"pockets, Neumann box (all singular)", 29, 23, 19, "NNNNNN", MREF_SHAPE_POCKET, MREF_BETA_JUMP, 1e3, 1. / 32, 1. / 32, 1. / 16, 0, 0, 1.0, 1.0},
    {"pockets, periodic odd, no beta", 23, 19, 17, "PPPPPP", MREF_SHAPE_POCKET, BETA_NONE, 0, 1. / 16, 1. / 16, 1. / 16, 0, 0, 0.9, 1.9},
    {"pool, Neumann box", 37, 23, 29, "NNNNNN", MREF_SHAPE_POOL, MREF_BETA_JUMP, 1e3, 1. / 32, 1. / 16, 1. / 32, 0, 0, 1.0, 1.0},
    {"pool, periodic x y", 31, 23, 19, "PPPPNN", MREF_SHAPE_POOL, MREF_BETA_JUMP, 1e6, 1. / 32, 1. / 32, 1. / 16, 0, 0, 0.8, 1.4},
    {"no mask, Neumann box (singular)", 23, 19, 17, "NNNNNN", MREF_SHAPE_NONE, MREF_BETA_SMOOTH, 0, 1. / 16, 1. / 16, 1. / 16, 0, 0, 1.0, 1.0},
    {"no mask", 19, 23, 17, "DNPPND", MREF_SHAPE_NONE, MREF_BETA_JUMP, 1e6, 1. / 16, 1. / 32, 1. / 16, 0, 0, 0.9, 1.1},
    {"sphere, padded strides", 19, 17, 13, "DNPPND", MREF_SHAPE_SPHERE, MREF_BETA_SMOOTH, 0, 1. / 16, 1. / 16, 1. / 16, 3, 5, 0.8, 1.4},
    {"2D staircase", 61, 47, 1, "DDNN", MREF_SHAPE_STAIRCASE, MREF_BETA_JUMP, 1e3, 1. / 64, 1. / 64, 0, 0, 0, 1.0, 1.0},
    {"2D pockets, Neumann box", 53, 41, 1, "NNNN", MREF_SHAPE_POCKET, MREF_BETA_SMOOTH, 0, 1. / 64, 1. / 32, 0, 0, 0, 0.9, 1.7},
    {"2D thin walls, periodic x odd", 43, 37, 1, "PPDN", MREF_SHAPE_WALLS, MREF_BETA_JUMP, 1e6, 1. / 32, 1. / 32, 0, 0, 0, 1.0, 1.3},
    {"2D pool", 41, 31, 1, "NNDN", MREF_SHAPE_POOL, MREF_BETA_ONE, 0, 1. / 32, 1. / 32, 0, 0, 0, 0.8, 1.0},
    {"2D sphere, padded strides", 37, 29, 1, "NDPP", MREF_SHAPE_SPHERE, MREF_BETA_RANDOM, 0, 1. / 32, 1. / 32, 0, 4, 0, 1.0, 1.5},
    {"2D no mask, periodic (singular)", 31, 29, 1, "PPPP", MREF_SHAPE_NONE, MREF_BETA_RANDOM, 0, 1. / 32, 1. / 32, 0, 0, 0, 0.7, 1.2},
    /* A mask without beta: the fine level keeps the box's kernels, reading the
     * mask byte; cells walled in on the box (on Neumann faces only Neumann
     * faces open: no diagonal, left as they are). */
    {"cells on Neumann faces, no beta", 32, 29, 31, "NNNNNN", MREF_SHAPE_CELLS, BETA_NONE, 0, 1. / 32, 1. / 32, 1. / 32, 0, 0, 0.9, 1.3},
    {"cells on the box, no beta", 26, 24, 22, "DDNNND", MREF_SHAPE_CELLS, BETA_NONE, 0, 1. / 32, 1. / 16, 1. / 32, 0, 0, 1.0, 1.1},
    {"sphere, no beta", 33, 30, 28, "DNNDND", MREF_SHAPE_SPHERE, BETA_NONE, 0, 1. / 32, 1. / 32, 1. / 16, 0, 0, 0.8, 1.4},
    {"2D cells on Neumann faces, no beta", 45, 38, 1, "NNNN", MREF_SHAPE_CELLS, BETA_NONE, 0, 1. / 64, 1. / 32, 0, 0, 0, 1.0, 1.2},
    /* Many sealed pockets across several 32 x 8 x 8 tiles of the region
     * labelling and across periodic seams: the report's projected count
     * and each pocket's projection against the host's regions. */
    {"random solid, periodic x y", 75, 21, 19, "PPPPNN", MREF_SHAPE_RANDOM, BETA_NONE, 0, 1. / 32, 1. / 32, 1. / 32, 0, 0, 0.9, 1.2},
    {"random solid, Dirichlet box", 67, 18, 17, "DDDDDD", MREF_SHAPE_RANDOM, MREF_BETA_SMOOTH, 0, 1. / 32, 1. / 16, 1. / 16, 0, 0, 1.0, 1.1},
    {"2D random solid, periodic y", 101, 67, 1, "NNPP", MREF_SHAPE_RANDOM, BETA_NONE, 0, 1. / 64, 1. / 64, 0, 0, 0, 1.0, 1.3},
};

static pgpu_config case_config(int64_t nx, int64_t ny, int64_t nz, const char *bcs, double hx, double hy, double hz,
                               int64_t pad_y, int64_t pad_z, unsigned flags)
{
    pgpu_config cfg = t_config(nx, ny, nz, bcs, hx, hy, hz, flags);
    if (pad_y || pad_z) {
        cfg.stride_y = nx + 2 + pad_y;
        cfg.stride_z = nz > 1 ? cfg.stride_y * (ny + 2) + pad_z : 0;
    }
    return cfg;
}

static void run_step(const step_case *c, unsigned prec, int rbgs)
{
    const unsigned method = rbgs ? PGPU_RBGS : PGPU_JACOBI;
    pgpu_config cfg = case_config(c->nx, c->ny, c->nz, c->bcs, c->hx, c->hy, c->hz, c->pad_y, c->pad_z,
                                  method | prec | PGPU_FIXED);
    cfg.omega = rbgs ? c->w_rbgs : c->w_jacobi;
    cfg.max_iterations = 1;
    char what[240], letters[8], bn[32];
    mcase mc;
    if (!mc_init(&mc, &cfg, c->shape, c->beta, c->jump, NULL))
        return;
    snprintf(what, sizeof what, "%s, %s [%s %s %lldx%lldx%lld %s w=%.2f]", c->name,
             beta_name(c->beta, c->jump, bn, sizeof bn), t_method_name(cfg.flags), t_precision_name(prec),
             (long long)c->nx, (long long)c->ny, (long long)c->nz, t_bc_letters(&mc.g, letters), cfg.omega);
    pgpu_solver *s = mc_handle(&mc, &cfg, what);
    mc_data(&mc);
    if (!s || !mc_upload(&mc)) {
        pgpu_destroy(s);
        mc_free(&mc);
        return;
    }
    if (!rbgs)
        check_residual(s, &mc, mc.u, what);

    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    rep.iterations = -1;
    const pgpu_status st = pgpu_solve(s, mc.d_u, mc.d_f, &rep);
    const int synced = t_sync(what);
    const int want_projected = (int)mc.R.singular;
    CHECK(st == PGPU_SUCCESS && rep.status == PGPU_SUCCESS && rep.iterations == 1 && isnan(rep.residual_norm) &&
              isnan(rep.relative_residual) && rep.singular == (mc.R.singular > 0) && rep.projected == want_projected,
          "%s: status %s, report: iterations %d (1), norms %g %g (NaN), singular %d, projected %d (%d of %lld "
          "regions singular) %s", what, pgpu_status_string(st), rep.iterations, rep.residual_norm,
          rep.relative_residual, rep.singular, rep.projected, want_projected, (long long)mc.R.count,
          st ? pgpu_last_error(s) : "");

    double *got = malloc((size_t)mc.elems * sizeof(double)), *want = malloc((size_t)mc.elems * sizeof(double));
    double *bound = malloc((size_t)mc.elems * sizeof(double));
    void *typed = malloc(mc.bytes);
    if (synced && got && want && bound && typed && mc_download(&mc, typed, got)) {
        memcpy(want, mc.u, (size_t)mc.elems * sizeof(double));
        mref_step(&mc.M, &mc.R, want, mc.f, cfg.omega, rbgs);
        mref_step_bound(&mc.M, &mc.R, mc.u, mc.f, cfg.omega, rbgs, bound);
        const double tol = prec == PGPU_FLOAT ? 16.0 * FLT_EPSILON : 1e-13;
        double worst = 0, at_diff = 0, at_want = 0;
        int64_t at = -1, npts = 0;
        REF_FOR_EACH_INTERIOR(&mc.g, i, j, k) {
            const int64_t p = ref_idx(&mc.g, i, j, k);
            if (mref_type(&mc.M, p) != PGPU_CELL_FLUID)
                continue;
            ++npts;
            const double diff = fabs(got[p] - want[p]);
            const double ratio = diff == 0.0 ? 0.0 : diff / (tol * bound[p]);
            if (!(ratio <= worst)) {
                worst = t_max_nan(worst, ratio);
                at = p, at_diff = diff, at_want = want[p];
            }
        }
        CHECK(worst <= 1.0 && npts > 0,
              "%s: one step against the host: max |gpu - ref| / (%.0e bound) = %.3g (diff %.3g at element %lld, "
              "ref %.6g; %lld fluid points)", what, tol, worst, at_diff, (long long)at, at_want, (long long)npts);
        check_untouched(&mc, typed, what);
        if (mc.R.singular > 0) {
            const double mean = singular_means(&mc, got);
            const double mtol = prec == PGPU_FLOAT ? 64.0 * FLT_EPSILON : 1e-13;
            CHECK(mean <= mtol, "%s: a FIXED step leaves mean 0 on each of %lld singular regions (max |mean| / "
                  "max |u| = %.2e)", what, (long long)mc.R.singular, mean);
        }
    }
    free(got), free(want), free(bound), free(typed);
    pgpu_destroy(s);
    mc_free(&mc);
}

static void steps(void)
{
    const int n = (int)(sizeof step_cases / sizeof step_cases[0]);
    for (int c = 0; c < n; ++c)
        for (int p = 0; p < 2; ++p)
            for (int rb = 0; rb < 2; ++rb)
                run_step(&step_cases[c], p ? PGPU_FLOAT : PGPU_DOUBLE, rb);
}

/* ---- 2. solves -------------------------------------------------------------------------- */

/* Solves mc (data already uploaded) with s and checks the result; u_out
 * (may be NULL) gets u, typed_out (may be NULL) its image.  1 when it ran. */
static int solve_and_check(pgpu_solver *s, mcase *mc, const char *what, double tol, double *u_out, void *typed_out,
                           pgpu_report *rep_out)
{
    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    const pgpu_status st = pgpu_solve(s, mc->d_u, mc->d_f, &rep);
    if (rep_out)
        *rep_out = rep;
    double *u = u_out ? u_out : malloc((size_t)mc->elems * sizeof(double));
    void *typed = typed_out ? typed_out : malloc(mc->bytes);
    int ok = t_sync(what) && u && typed && mc_download(mc, typed, u);
    const int fixed = (mc->cfg.flags & PGPU_FIXED) != 0;
    if (mc->may_break && (st == PGPU_ERROR_BREAKDOWN || st == PGPU_ERROR_NOT_CONVERGED)) {
        t_note("%s: %s after %d iterations (not failed: the header's caveat for V-cycles alone; a CG row "
               "solves the same case): %s", what, st == PGPU_ERROR_BREAKDOWN ? "BREAKDOWN" : "NOT CONVERGED",
               rep.iterations, pgpu_last_error(s));
        if (ok)
            check_untouched(mc, typed, what);
        if (!u_out)
            free(u);
        if (!typed_out)
            free(typed);
        return 0;
    }
    double mag_r = 0, floor = 0;
    ref_norms nm;
    memset(&nm, 0, sizeof nm);
    if (ok) {
        nm = mref_residual(&mc->M, &mc->R, u, mc->f, NULL, &mag_r, NULL);
        floor = 64.0 * (mc->prec == PGPU_FLOAT ? FLT_EPSILON : DBL_EPSILON) * mag_r /
                nm.rhs_norm; /* rounding of r near the solution */
    }
    /* A tolerance below what rounding lets the residual reach (beta jumps of
     * 10^6 with a large solution) may end as the header says: the true
     * residual just above it, PGPU_ERROR_NOT_CONVERGED; the result is still
     * checked below. */
    const int rounding = st == PGPU_ERROR_NOT_CONVERGED && ok && tol > 0 && tol < floor;
    CHECK((st == PGPU_SUCCESS || rounding) && rep.projected == (int)mc->R.singular &&
              rep.singular == (mc->R.singular > 0),
          "%s: %s after %d iterations, relative residual %.2e; projected %d (%lld singular regions) %s", what,
          pgpu_status_string(st), rep.iterations, rep.relative_residual, rep.projected, (long long)mc->R.singular,
          st ? pgpu_last_error(s) : "");
    if (rounding)
        t_note("%s: NOT CONVERGED at relative residual %.3e, tolerance %.0e below the rounding floor %.1e (accepted: "
               "the header's rounding limit)", what, rep.relative_residual, tol, floor);
    if (ok) {
        if (!fixed && tol > 0) {
            CHECK(nm.relative <= 10.0 * tol + floor &&
                      fabs(nm.relative - rep.relative_residual) <= 1e-3 * nm.relative + floor,
                  "%s: host relative residual of the result %.3e (report %.3e, tolerance %.0e, rounding floor %.1e)",
                  what, nm.relative, rep.relative_residual, tol, floor);
        }
        if (!fixed) {
            /* rhs_mean: the mean removed from b; with a mask, NaN for several
             * singular regions, region 0's for one */
            double *mean_b = malloc((size_t)(mc->R.count + 1) * sizeof(double));
            double *max_b = malloc((size_t)(mc->R.count + 1) * sizeof(double));
            double want = 0, scale = 0;
            mref_rhs_stats(&mc->M, &mc->R, mc->u, mc->f, mean_b, max_b, NULL);
            for (int64_t id = 0; id < mc->R.count; ++id)
                if (mc->R.is_singular[id])
                    want = mean_b[id], scale = max_b[id];
            if (mc->R.singular > 1) {
                CHECK(isnan(rep.rhs_mean), "%s: report rhs_mean %g (NaN: %lld singular regions)", what, rep.rhs_mean,
                      (long long)mc->R.singular);
            } else {
                /* (float: b = f + the boundary terms is formed in float, as the
                 * solver uses it, and summed in double) */
                const double rtol = mc->prec == PGPU_FLOAT ? 16.0 * FLT_EPSILON : 1e-12;
                CHECK(fabs(rep.rhs_mean - want) <= rtol * scale,
                      "%s: report rhs_mean %.15g, host %.15g (%s; tol %.1e)", what, rep.rhs_mean, want,
                      mc->R.singular ? "the singular region's mean of b" : "no singular region: 0", rtol * scale);
            }
            free(mean_b);
            free(max_b);
        }
        check_untouched(mc, typed, what);
        if (mc->R.singular > 0) {
            const double mean = singular_means(mc, u);
            CHECK(mean <= (mc->prec == PGPU_FLOAT ? 1e-5 : 1e-12),
                  "%s: mean 0 on each of %lld singular regions (max |mean| / max |u| = %.2e)", what,
                  (long long)mc->R.singular, mean);
        }
    }
    if (!u_out)
        free(u);
    if (!typed_out)
        free(typed);
    return ok && st == PGPU_SUCCESS;
}

static void solve_case_h(const char *name, int64_t nx, int64_t ny, int64_t nz, const char *bcs, double hx, double hy,
                         double hz, int shape, int beta, double jump, unsigned method, double tol, int may_break)
{
    const unsigned prec = (method & PGPU_FLOAT) ? PGPU_FLOAT : PGPU_DOUBLE;
    pgpu_config cfg = case_config(nx, ny, nz, bcs, hx, hy, hz, 0, 0, (method & ~(unsigned)PGPU_FLOAT) | prec);
    cfg.tolerance = tol;
    /* (CG on random solid masks took up to 300 iterations to 1e-10) */
    cfg.max_iterations = (method & PGPU_METHOD_MASK) == PGPU_CG ? 3000 : 100;
    char what[200], letters[8], bn[32];
    mcase mc;
    if (!mc_init(&mc, &cfg, shape, beta, jump, NULL))
        return;
    mc.may_break = may_break;
    snprintf(what, sizeof what, "solve: %s, %s [%s %lldx%lldx%lld %s]", name, beta_name(beta, jump, bn, sizeof bn),
             t_method_name(cfg.flags), (long long)nx, (long long)ny, (long long)nz, t_bc_letters(&mc.g, letters));
    pgpu_solver *s = mc_handle(&mc, &cfg, what);
    mc_data(&mc);
    double *u = malloc((size_t)mc.elems * sizeof(double));
    if (s && u && mc_upload(&mc) && solve_and_check(s, &mc, what, tol, u, NULL, NULL))
        check_residual(s, &mc, u, what);
    free(u);
    pgpu_destroy(s);
    mc_free(&mc);
}

static void solve_case(const char *name, int64_t nx, int64_t ny, int64_t nz, const char *bcs, int shape, int beta,
                       double jump, unsigned method, double tol, int may_break)
{
    solve_case_h(name, nx, ny, nz, bcs, 1.0 / 32, 1.0 / 32, 1.0 / 32, shape, beta, jump, method, tol, may_break);
}

static void solves(void)
{
    /* Within what the header promises: converged, checked. */
    solve_case("pockets with a one-point pocket", 33, 31, 29, "DDDDDD", MREF_SHAPE_POCKET, MREF_BETA_SMOOTH, 0,
               PGPU_VCYCLE, 1e-10, 0);
    solve_case("pockets, every region singular", 32, 29, 31, "NNNNNN", MREF_SHAPE_POCKET, BETA_NONE, 0, PGPU_VCYCLE,
               1e-10, 0);
    solve_case("pockets, periodic", 31, 32, 29, "PPPPNN", MREF_SHAPE_POCKET, MREF_BETA_SMOOTH, 0, PGPU_VCYCLE, 1e-10,
               0);
    solve_case("pockets", 31, 29, 33, "NNDDNN", MREF_SHAPE_POCKET, MREF_BETA_SMOOTH, 0, PGPU_FMG, 1e-10, 0);
    /* FMG's one pass (tolerance 0) and float's own stop on singular
     * regions: each region's mean of u taken out there too */
    solve_case("pockets, FMG's one pass", 31, 29, 33, "NNDDNN", MREF_SHAPE_POCKET, MREF_BETA_SMOOTH, 0, PGPU_FMG, 0, 0);
    solve_case("pockets, every region singular, FMG's one pass", 32, 29, 31, "NNNNNN", MREF_SHAPE_POCKET, BETA_NONE,
               0, PGPU_FMG | PGPU_FLOAT, 0, 0);
    solve_case("pockets, every region singular, float's own stop", 32, 29, 31, "NNNNNN", MREF_SHAPE_POCKET,
               BETA_NONE, 0, PGPU_VCYCLE | PGPU_FLOAT, 0, 0);
    solve_case("2D pockets", 61, 53, 1, "NNNN", MREF_SHAPE_POCKET, MREF_BETA_SMOOTH, 0, PGPU_VCYCLE, 1e-10, 1);
    solve_case("cells on Neumann faces", 32, 29, 31, "NNNNNN", MREF_SHAPE_CELLS, BETA_NONE, 0, PGPU_VCYCLE, 1e-10, 0);
    solve_case("cells on Neumann faces", 31, 30, 29, "NNNNNN", MREF_SHAPE_CELLS, BETA_NONE, 0, PGPU_CG, 1e-10, 0);
    solve_case("cells on the box", 30, 33, 28, "DDNNNN", MREF_SHAPE_CELLS, BETA_NONE, 0, PGPU_FMG, 1e-10, 0);
    solve_case("pool, Neumann box", 37, 31, 29, "NNNNNN", MREF_SHAPE_POOL, MREF_BETA_ONE, 0, PGPU_VCYCLE, 1e-10, 0);
    solve_case("pool, Dirichlet box", 37, 31, 29, "DDDDDD", MREF_SHAPE_POOL, MREF_BETA_JUMP, 1e3, PGPU_VCYCLE, 1e-10,
               0);
    solve_case("thin walls", 29, 31, 37, "DDNNDD", MREF_SHAPE_WALLS, MREF_BETA_SMOOTH, 0, PGPU_VCYCLE, 1e-10, 0);
    solve_case("staircase, Dirichlet box", 37, 29, 31, "DDDDDD", MREF_SHAPE_STAIRCASE, MREF_BETA_JUMP, 1e6,
               PGPU_VCYCLE, 1e-10, 0);
    /* one singular region: the report's rhs_mean is its mean of b */
    solve_case("thin walls, Neumann box", 31, 29, 27, "NNNNNN", MREF_SHAPE_WALLS, MREF_BETA_SMOOTH, 0, PGPU_CG,
               1e-10, 0);
    solve_case("2D staircase covering the Dirichlet floor", 63, 47, 1, "PPDN", MREF_SHAPE_STAIRCASE, MREF_BETA_ONE, 0,
               PGPU_CG, 1e-10, 0);
    /* V-cycles alone stall on the thin walls and on the 2D pockets with
     * beta (measured: 2e-7 and 1e-5 after 100 cycles; the header's caveat):
     * printed, not failed; CG above and below solves them.  The staircase
     * over the Dirichlet floor (closed coarse wall faces over it) must
     * converge: asserted. */
    solve_case("thin walls, Neumann box", 31, 29, 27, "NNNNNN", MREF_SHAPE_WALLS, MREF_BETA_SMOOTH, 0, PGPU_VCYCLE,
               1e-10, 1);
    solve_case("2D staircase covering the Dirichlet floor", 63, 47, 1, "PPDN", MREF_SHAPE_STAIRCASE, MREF_BETA_ONE, 0,
               PGPU_VCYCLE, 1e-10, 0);
    solve_case("2D pockets", 61, 53, 1, "NNNN", MREF_SHAPE_POCKET, MREF_BETA_SMOOTH, 0, PGPU_CG, 1e-10, 0);
    /* Random solid points with held cells on thin, flat and anisotropic
     * grids (the shapes and spacings of random cases where flexible CG
     * around the standard cycle stalled, at relative residuals 1e-5 to 0.1
     * after 400 iterations); CG takes the symmetric cycle where a mask is
     * set. */
    solve_case_h("random solid", 42, 5, 3, "DNDDNN", 0.01881, 0.2984, 0.4743, MREF_SHAPE_RANDOM, BETA_NONE, 0, PGPU_CG,
                 1e-10, 0);
    solve_case_h("random solid", 3, 31, 3, "NDPPDD", 0.4648, 0.0175, 0.3685, MREF_SHAPE_RANDOM, BETA_NONE, 0, PGPU_CG,
                 1e-10, 0);
    solve_case_h("random solid", 66, 11, 3, "NNDDNN", 0.01562, 0.1037, 0.3838, MREF_SHAPE_RANDOM, BETA_NONE, 0,
                 PGPU_CG, 1e-10, 0);
    solve_case_h("random solid, periodic x y", 53, 19, 25, "PPPPNN", 0.03039, 0.02543, 0.06196, MREF_SHAPE_RANDOM,
                 BETA_NONE, 0, PGPU_CG, 1e-10, 0);
    solve_case_h("random solid", 4, 65, 16, "NNPPDD", 0.258, 0.01954, 0.07588, MREF_SHAPE_RANDOM, BETA_NONE, 0,
                 PGPU_CG, 1e-10, 0);
    solve_case("2D random solid", 97, 43, 1, "DNNN", MREF_SHAPE_RANDOM, BETA_NONE, 0, PGPU_CG, 1e-10, 0);
    /* Masks of that 3x31x3 grid on which CG stalled (relative residuals
     * 1e-8 to 14 after 600 iterations) when its first direction came from
     * an FMG pass, the later ones from the symmetric cycle: each drawn
     * again from the generator's state that drew it once. */
    static const uint64_t stalled[] = {17110557489023578740ull, 14037637129392073816ull, 10076299025429865060ull,
                                       4563825242880532548ull};
    for (size_t k = 0; k < sizeof stalled / sizeof stalled[0]; ++k)
        for (int w = 0; w < 2; ++w) {
            const uint64_t was = t_rand_at(stalled[k]);
            solve_case_h(w ? "random solid, W-cycle, a stalled draw" : "random solid, a stalled draw", 3, 31, 3,
                         "NDPPDD", 0.4648, 0.0175, 0.3685, MREF_SHAPE_RANDOM, BETA_NONE, 0,
                         PGPU_CG | (w ? PGPU_WCYCLE : 0), 1e-10, 0);
            t_rand_at(was);
        }
    /* In float, directions that kept a singular region's constant made p.Ap
     * rounding alone (a breakdown after 10 iterations): z loses each
     * region's mean, as r does. */
    solve_case_h("pockets, float", 61, 6, 23, "NNPPPP", 0.02037, 0.1804, 0.05262, MREF_SHAPE_POCKET, BETA_NONE, 0,
                 PGPU_CG | PGPU_FLOAT, 1e-5, 0);
    solve_case_h("random solid, float", 53, 19, 25, "PPPPNN", 0.03039, 0.02543, 0.06196, MREF_SHAPE_RANDOM, BETA_NONE,
                 0, PGPU_CG | PGPU_FLOAT, 1e-5, 0);
    /* A 10^6 ball, singular or not: the standard cycle grows the residual
     * ~1000x per cycle there, and flexible CG around it stalled (relative
     * residual 10 to 90 after 100 iterations); CG takes the symmetric cycle
     * where beta varies. */
    solve_case("no mask, periodic", 64, 64, 1, "PPPP", MREF_SHAPE_NONE, MREF_BETA_BALL, 1e6, PGPU_CG, 1e-9, 0);
    solve_case("no mask, Neumann box", 8, 43, 1, "NNPP", MREF_SHAPE_NONE, MREF_BETA_BALL, 1e6, PGPU_CG, 1e-9, 0);
    /* (with Dirichlet data: double's rounding leaves 5e-8 here) */
    solve_case("no mask", 40, 40, 40, "DDPPPP", MREF_SHAPE_NONE, MREF_BETA_BALL, 1e6, PGPU_CG, 1e-7, 0);
    solve_case("no mask, Neumann box", 33, 29, 31, "NNNNNN", MREF_SHAPE_NONE, MREF_BETA_SMOOTH, 0, PGPU_VCYCLE, 1e-10,
               0);
    /* Jumps next to Neumann faces: the header allows a BREAKDOWN there, which
     * is printed; a converged solve is checked in full. */
    solve_case("pool, Neumann box", 37, 31, 29, "NNNNNN", MREF_SHAPE_POOL, MREF_BETA_JUMP, 1e3, PGPU_VCYCLE, 1e-10, 1);
    solve_case("pockets, periodic", 31, 32, 29, "PPPPNN", MREF_SHAPE_POCKET, MREF_BETA_JUMP, 1e3, PGPU_VCYCLE, 1e-10,
               1);
    solve_case("staircase", 37, 29, 31, "DDPPDN", MREF_SHAPE_STAIRCASE, MREF_BETA_JUMP, 1e3, PGPU_VCYCLE, 1e-10, 1);
    solve_case("no mask, Neumann box", 33, 29, 31, "NNNNNN", MREF_SHAPE_NONE, MREF_BETA_JUMP, 1e3, PGPU_VCYCLE, 1e-10,
               1);
}

/* Every fluid region a single point sealed by solid points (one on a
 * Dirichlet face, covered, counts as sealed): b projected is zero but for
 * rounding, and every method must answer u = 0 there with PGPU_SUCCESS, not
 * iterate on the rounding (which ended NOT_CONVERGED at a relative residual
 * of 1).  Fluid where each 0-based index is 1 modulo 4 (3 in 2D) and not the
 * last; a few held cells among the solid. */
static void one_point_regions(int64_t nx, int64_t ny, int64_t nz, const char *bcs, unsigned method, unsigned prec)
{
    pgpu_config cfg = case_config(nx, ny, nz, bcs, 1.0 / 16, 1.0 / 16, 1.0 / 16, 0, 0, method | prec);
    cfg.tolerance = prec == PGPU_FLOAT ? 1e-4 : 1e-10;
    char what[200], letters[8];
    mcase mc;
    if (!mc_init(&mc, &cfg, MREF_SHAPE_SPHERE, BETA_NONE, 0, NULL))
        return;
    const int step = nz > 1 ? 4 : 3;
    REF_FOR_EACH_INTERIOR(&mc.g, i, j, k) {
        const int64_t n[3] = {nx, ny, nz}, c[3] = {i - 1, j - 1, k - 1}; /* 0-based */
        int fluid = 1;
        for (int a = 0; a < mc.g.dims; ++a)
            fluid = fluid && (n[a] == 1 || (c[a] % step == 1 && c[a] != n[a] - 1));
        mc.mask[ref_idx(&mc.g, i, j, k)] = fluid ? PGPU_CELL_FLUID
                                                 : ((i + 2 * j + 3 * k) % 7 == 0 ? PGPU_CELL_DIRICHLET : PGPU_CELL_SOLID);
    }
    /* a held cell next to a fluid point would make its region regular: none is */
    REF_FOR_EACH_INTERIOR(&mc.g, i, j, k) {
        const int64_t p = ref_idx(&mc.g, i, j, k);
        if (mc.mask[p] != PGPU_CELL_FLUID)
            continue;
        const int64_t *o = mc.g.stride;
        for (int a = 0; a < mc.g.dims; ++a)
            for (int sgn = -1; sgn <= 1; sgn += 2)
                if (mc.mask[p + sgn * o[a]] == PGPU_CELL_DIRICHLET)
                    mc.mask[p + sgn * o[a]] = PGPU_CELL_SOLID;
    }
    mref_regions_free(&mc.R);
    mc.M = mref_make(&mc.g, mc.mask, mc.beta);
    if (!CHECK(mref_find_regions(&mc.M, &mc.R), "host allocation (regions)") ||
        !CHECK(cudaMemcpy(mc.d_mask, mc.mask, (size_t)mc.elems, cudaMemcpyHostToDevice) == cudaSuccess,
               "mask upload")) {
        mc_free(&mc);
        return;
    }
    snprintf(what, sizeof what, "one-point regions [%s %s %lldx%lldx%lld %s, %lld regions]", t_method_name(cfg.flags),
             prec == PGPU_FLOAT ? "float" : "double", (long long)nx, (long long)ny, (long long)nz,
             t_bc_letters(&mc.g, letters), (long long)mc.R.count);
    pgpu_solver *s = mc_handle(&mc, &cfg, what);
    mc_data(&mc);
    double *u = malloc((size_t)mc.elems * sizeof(double));
    pgpu_report rep;
    if (s && u && mc_upload(&mc) && CHECK(mc.R.singular == mc.R.count && mc.R.count > 0, "%s: every region singular",
                                          what)) {
        solve_and_check(s, &mc, what, cfg.tolerance, u, NULL, &rep);
        double umax = 0;
        REF_FOR_EACH_INTERIOR(&mc.g, i, j, k) {
            const int64_t p = ref_idx(&mc.g, i, j, k);
            if (mc.mask[p] == PGPU_CELL_FLUID)
                umax = t_max_nan(umax, fabs(u[p]));
        }
        CHECK(umax == 0, "%s: u = 0 on every one-point region (max |u| %.3e; %d iterations, relative residual %.3e)",
              what, umax, rep.iterations, rep.relative_residual);
    }
    free(u);
    pgpu_destroy(s);
    mc_free(&mc);
}

static void one_point(void)
{
    static const unsigned methods[] = {PGPU_VCYCLE, PGPU_FMG, PGPU_CG, PGPU_CG | PGPU_PIPELINED, PGPU_BICGSTAB,
                                       PGPU_JACOBI, PGPU_RBGS};
    for (size_t m = 0; m < sizeof methods / sizeof methods[0]; ++m)
        for (int p = 0; p < 2; ++p) {
            const unsigned prec = p ? PGPU_FLOAT : PGPU_DOUBLE;
            one_point_regions(64, 1, 1, "NNNN", methods[m], prec);
            one_point_regions(1, 31, 1, "NNDD", methods[m], prec);
            one_point_regions(13, 10, 7, "NNDDPP", methods[m], prec);
        }
}

/* ---- 3. new data ---------------------------------------------------------------------------- */

/* max |a - b| / max |b| over the fluid points of mc, and whether the typed
 * images are equal bit for bit over the whole array. */
static double fluid_diff(const mcase *mc, const double *a, const double *b)
{
    double d = 0, m = 0;
    REF_FOR_EACH_INTERIOR(&mc->g, i, j, k) {
        const int64_t p = ref_idx(&mc->g, i, j, k);
        if (mref_type(&mc->M, p) != PGPU_CELL_FLUID)
            continue;
        d = t_max_nan(d, fabs(a[p] - b[p]));
        m = t_max_nan(m, fabs(b[p]));
    }
    return m > 0 ? d / m : d;
}

/* A handle solves with mask 1, then mask 2 is set and it solves again: the
 * result must be what a fresh handle with mask 2 gives.  Both solves of the
 * first handle use the same device arrays (a fixed multigrid solve replays
 * the graph it captured for them). */
static void remask(const char *name, int64_t nx, int64_t ny, int64_t nz, const char *bcs, unsigned flags, double tol,
                   int max_it, int shape1, int shape2, int beta)
{
    pgpu_config cfg = case_config(nx, ny, nz, bcs, 1.0 / 32, 1.0 / 32, 1.0 / 32, 0, 0, flags | PGPU_DOUBLE);
    cfg.tolerance = tol;
    cfg.max_iterations = max_it;
    char what[200], letters[8];
    mcase m1, m2;
    if (!mc_init(&m1, &cfg, shape1, beta, 1e3, NULL))
        return;
    if (!mc_init(&m2, &cfg, shape2, beta, 1e3, &m1)) {
        mc_free(&m1);
        return;
    }
    snprintf(what, sizeof what, "new mask: %s, %s -> %s [%s%s %lldx%lldx%lld %s]", name, mref_shape_name(shape1),
             mref_shape_name(shape2), t_method_name(flags), (flags & PGPU_FIXED) ? " fixed" : "", (long long)nx,
             (long long)ny, (long long)nz, t_bc_letters(&m1.g, letters));
    pgpu_solver *a = mc_handle(&m1, &cfg, what);
    pgpu_solver *b = mc_handle(&m2, &cfg, what);
    double *x = malloc((size_t)m1.elems * sizeof(double)), *y = malloc((size_t)m1.elems * sizeof(double));
    void *tx = malloc(m1.bytes), *ty = malloc(m1.bytes);
    mc_data(&m1);
    mc_data(&m2);
    int ok = a && b && x && y && tx && ty;
    /* handle a: mask 1, twice (a fixed solve captures, then replays), then mask 2 */
    ok = ok && mc_upload(&m1) && solve_and_check(a, &m1, what, tol, NULL, NULL, NULL);
    ok = ok && mc_upload(&m1) && solve_and_check(a, &m1, what, tol, NULL, NULL, NULL);
    if (ok) {
        const pgpu_status st = pgpu_set_mask(a, m2.d_mask);
        ok = CHECK(st == PGPU_SUCCESS, "%s: pgpu_set_mask between solves: %s %s", what, pgpu_status_string(st),
                   st ? pgpu_last_error(a) : "");
    }
    ok = ok && mc_upload(&m2) && solve_and_check(a, &m2, what, tol, x, tx, NULL);
    /* handle b: mask 2 from the start, the same data and arrays */
    ok = ok && mc_upload(&m2) && solve_and_check(b, &m2, what, tol, y, ty, NULL);
    if (ok) {
        const double d = fluid_diff(&m2, x, y);
        const int same = memcmp(tx, ty, m2.bytes) == 0;
        CHECK(d <= 1e-12, "%s: after the new mask = a fresh handle with it: max diff / max |u| %.2e (bit-identical: %s)",
              what, d, same ? "yes" : "no");
    }
    free(x), free(y), free(tx), free(ty);
    pgpu_destroy(a);
    pgpu_destroy(b);
    mc_free(&m2);
    mc_free(&m1);
}

/* Invalid data is refused and changes nothing: the next solve equals the
 * one before bit for bit. */
typedef struct bad_data {
    const char *name;
    int is_mask;
    int kind; /* mask: 0 one byte = value, 1 every byte = value, 2 solid and Dirichlet alternating;
                 beta: 0 one fluid point = value, 1 one solid point = value */
    double value;
} bad_data;

static void bad_input(int with_mask, int with_beta)
{
    static const bad_data bad[] = {
        {"a mask byte 3", 1, 0, 3}, {"a mask byte 255", 1, 0, 255}, {"every point solid", 1, 1, PGPU_CELL_SOLID},
        {"every point Dirichlet", 1, 1, PGPU_CELL_DIRICHLET}, {"solid and Dirichlet, no fluid", 1, 2, 0},
        {"beta 0", 0, 0, 0.0}, {"beta -1", 0, 0, -1.0}, {"beta -0", 0, 0, -0.0}, {"beta NaN", 0, 0, NAN},
        {"beta +Inf", 0, 0, INFINITY}, {"beta -Inf", 0, 0, -INFINITY}, {"beta 0 at a solid point", 0, 1, 0.0},
    };
    pgpu_config cfg = case_config(23, 19, 17, "DDNNPP", 1.0 / 16, 1.0 / 16, 1.0 / 16, 0, 0, PGPU_VCYCLE | PGPU_DOUBLE);
    cfg.tolerance = 1e-10;
    char what[200];
    mcase mc, sh; /* the handle's problem; a sphere for the solid point of beta's case */
    const int shape = with_mask ? MREF_SHAPE_SPHERE : MREF_SHAPE_NONE;
    if (!mc_init(&mc, &cfg, shape, with_beta ? MREF_BETA_SMOOTH : BETA_NONE, 0, NULL))
        return;
    if (!mc_init(&sh, &cfg, MREF_SHAPE_SPHERE, MREF_BETA_SMOOTH, 0, &mc)) {
        mc_free(&mc);
        return;
    }
    snprintf(what, sizeof what, "invalid data, handle with%s mask, with%s beta", with_mask ? "" : "out",
             with_beta ? "" : "out");
    pgpu_solver *s = mc_handle(&mc, &cfg, what);
    mc_data(&mc);
    void *t0 = malloc(mc.bytes), *t1 = malloc(mc.bytes);
    uint8_t *m = malloc((size_t)mc.elems);
    double *bt = malloc((size_t)mc.elems * sizeof(double));
    void *bt_typed = malloc(mc.bytes);
    uint8_t *d_m = t_dev_alloc((size_t)mc.elems);
    void *d_b = t_dev_alloc(mc.bytes);
    pgpu_report r0, r1;
    int ok = s && t0 && t1 && m && bt && bt_typed && d_m && d_b && mc_upload(&mc) &&
             solve_and_check(s, &mc, what, cfg.tolerance, NULL, t0, &r0);
    for (size_t q = 0; ok && q < sizeof bad / sizeof bad[0]; ++q) {
        const bad_data *d = &bad[q];
        /* the data: the sphere's mask and beta with the fault */
        memcpy(m, sh.mask, (size_t)mc.elems);
        memcpy(bt, sh.beta, (size_t)mc.elems * sizeof(double));
        const int64_t fluid_p = ref_idx(&mc.g, 2, 3, 4), solid_p = ref_idx(&mc.g, 12, 10, 9);
        if (d->is_mask) {
            REF_FOR_EACH_INTERIOR(&mc.g, i, j, k) {
                const int64_t p = ref_idx(&mc.g, i, j, k);
                if (d->kind == 1)
                    m[p] = (uint8_t)d->value;
                else if (d->kind == 2)
                    m[p] = (i + j + k) % 2 ? PGPU_CELL_SOLID : PGPU_CELL_DIRICHLET;
            }
            if (d->kind == 0)
                m[fluid_p] = (uint8_t)d->value;
        } else {
            bt[d->kind ? solid_p : fluid_p] = d->value;
        }
        if (!d->is_mask && d->kind == 1 && sh.mask[solid_p] != PGPU_CELL_SOLID) {
            CHECK(0, "%s: the test's solid point is not solid", what);
            break;
        }
        t_to_typed(mc.prec, bt, bt_typed, mc.elems);
        if (cudaMemcpy(d_m, m, (size_t)mc.elems, cudaMemcpyHostToDevice) != cudaSuccess ||
            cudaMemcpy(d_b, bt_typed, mc.bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
            CHECK(0, "upload of the invalid data");
            break;
        }
        const pgpu_status st = d->is_mask ? pgpu_set_mask(s, d_m) : pgpu_set_coefficients(s, d_b);
        const char *msg = pgpu_last_error(s);
        CHECK(st == PGPU_ERROR_INVALID_ARGUMENT && msg && msg[0] != '\0', "%s: %s refused: %s, message \"%s\"", what,
              d->name, pgpu_status_string(st), msg ? msg : "(null)");
        ok = mc_upload(&mc) && solve_and_check(s, &mc, what, cfg.tolerance, NULL, t1, &r1);
        if (ok) {
            const int same = memcmp(t0, t1, mc.bytes) == 0;
            CHECK(same && r1.iterations == r0.iterations && r1.relative_residual == r0.relative_residual,
                  "%s: after %s the solve is the one before, bit for bit (%s; %d / %d cycles, residual %.3e / %.3e)",
                  what, d->name, same ? "same bits" : "DIFFERENT bits", r1.iterations, r0.iterations,
                  r1.relative_residual, r0.relative_residual);
        }
    }
    free(t0), free(t1), free(m), free(bt), free(bt_typed);
    t_dev_free(d_m);
    t_dev_free(d_b);
    pgpu_destroy(s);
    mc_free(&sh);
    mc_free(&mc);
}

/* pgpu_set_mask(s, NULL) and then pgpu_set_coefficients(s, NULL) give what
 * a handle that never had them gives. */
static void removal(int64_t nx, int64_t ny, int64_t nz, const char *bcs)
{
    pgpu_config cfg = case_config(nx, ny, nz, bcs, 1.0 / 32, 1.0 / 32, 1.0 / 32, 0, 0, PGPU_VCYCLE | PGPU_DOUBLE);
    cfg.tolerance = 1e-12;
    char what[200], letters[8];
    mcase masked, coef, plain; /* sphere + beta; beta alone; neither: the same data layout */
    if (!mc_init(&masked, &cfg, MREF_SHAPE_SPHERE, MREF_BETA_SMOOTH, 0, NULL))
        return;
    if (!mc_init(&coef, &cfg, MREF_SHAPE_NONE, MREF_BETA_SMOOTH, 0, &masked)) {
        mc_free(&masked);
        return;
    }
    if (!mc_init(&plain, &cfg, MREF_SHAPE_NONE, BETA_NONE, 0, &masked)) {
        mc_free(&coef);
        mc_free(&masked);
        return;
    }
    snprintf(what, sizeof what, "removal [%lldx%lldx%lld %s]", (long long)nx, (long long)ny, (long long)nz,
             t_bc_letters(&masked.g, letters));
    pgpu_solver *a = mc_handle(&masked, &cfg, what);
    pgpu_solver *b = mc_handle(&coef, &cfg, what);  /* beta only, never a mask */
    pgpu_solver *c = mc_handle(&plain, &cfg, what); /* never either */
    mc_data(&masked);
    mc_data(&coef);
    memcpy(plain.u, coef.u, (size_t)coef.elems * sizeof(double));
    memcpy(plain.f, coef.f, (size_t)coef.elems * sizeof(double));
    double *x = malloc((size_t)masked.elems * sizeof(double)), *y = malloc((size_t)masked.elems * sizeof(double));
    void *tx = malloc(masked.bytes), *ty = malloc(masked.bytes);
    int ok = a && b && c && x && y && tx && ty && mc_upload(&masked) &&
             solve_and_check(a, &masked, what, cfg.tolerance, NULL, NULL, NULL);
    if (ok) {
        const pgpu_status st = pgpu_set_mask(a, NULL);
        ok = CHECK(st == PGPU_SUCCESS, "%s: pgpu_set_mask(NULL): %s", what, pgpu_status_string(st));
    }
    ok = ok && mc_upload(&coef) && solve_and_check(a, &coef, what, cfg.tolerance, x, tx, NULL);
    ok = ok && mc_upload(&coef) && solve_and_check(b, &coef, what, cfg.tolerance, y, ty, NULL);
    if (ok) {
        const double d = fluid_diff(&coef, x, y);
        CHECK(d <= 1e-10, "%s: after pgpu_set_mask(NULL) = a handle that never had a mask (beta set on both): max "
              "diff / max |u| %.2e (bit-identical: %s)", what, d, memcmp(tx, ty, coef.bytes) ? "no" : "yes");
        const pgpu_status st = pgpu_set_coefficients(a, NULL);
        ok = CHECK(st == PGPU_SUCCESS, "%s: pgpu_set_coefficients(NULL): %s", what, pgpu_status_string(st));
    }
    ok = ok && mc_upload(&plain) && solve_and_check(a, &plain, what, cfg.tolerance, x, tx, NULL);
    ok = ok && mc_upload(&plain) && solve_and_check(c, &plain, what, cfg.tolerance, y, ty, NULL);
    if (ok) {
        const double d = fluid_diff(&plain, x, y);
        CHECK(d <= 1e-10, "%s: after pgpu_set_coefficients(NULL) too = a handle that never had either: max diff / "
              "max |u| %.2e (bit-identical: %s)", what, d, memcmp(tx, ty, plain.bytes) ? "no" : "yes");
    }
    free(x), free(y), free(tx), free(ty);
    pgpu_destroy(a);
    pgpu_destroy(b);
    pgpu_destroy(c);
    mc_free(&plain);
    mc_free(&coef);
    mc_free(&masked);
}

/* The same solve twice on one handle gives the same bits (the header
 * promises bit-identical results run to run).  The mask has solid layers
 * along the Dirichlet x faces (closed coarse wall faces, where the
 * prolongation's weights change); FMG, and CG's FMG start, read coarse
 * ghosts as zero boundary data, so nothing a cycle writes may stay in
 * them. */
static void repeat_solves(unsigned flags, unsigned prec, int64_t nx, int64_t ny, int64_t nz, int beta,
                          const char *bcs)
{
    pgpu_config cfg = case_config(nx, ny, nz, bcs, 1.0 / 32, 1.0 / 32, 1.0 / 32, 0, 0, flags | prec);
    cfg.tolerance = prec == PGPU_FLOAT ? 0 : 1e-10; /* float: FMG's one pass, CG's rounding stop */
    char what[200], letters[8];
    mcase mc;
    if (!mc_init(&mc, &cfg, MREF_SHAPE_SPHERE_WALL, beta, 0, NULL))
        return;
    snprintf(what, sizeof what, "repeated solve, sphere and solid x layers, %s [%s %s %lldx%lldx%lld %s]",
             beta == BETA_NONE ? "no beta" : "beta smooth", t_method_name(flags),
             prec == PGPU_FLOAT ? "float" : "double", (long long)nx, (long long)ny, (long long)nz,
             t_bc_letters(&mc.g, letters));
    pgpu_solver *s = mc_handle(&mc, &cfg, what);
    void *t1 = malloc(mc.bytes), *t2 = malloc(mc.bytes);
    mc_data(&mc);
    int ok = s && t1 && t2;
    if (ok) { /* what a solve does not download differs: the comparison runs whatever the solves report */
        memset(t1, 0x00, mc.bytes);
        memset(t2, 0xff, mc.bytes);
    }
    ok = ok && mc_upload(&mc);
    if (ok)
        solve_and_check(s, &mc, what, cfg.tolerance, NULL, t1, NULL);
    ok = ok && mc_upload(&mc);
    if (ok)
        solve_and_check(s, &mc, what, cfg.tolerance, NULL, t2, NULL);
    if (ok) {
        size_t first = 0;
        while (first < mc.bytes && ((const unsigned char *)t1)[first] == ((const unsigned char *)t2)[first])
            ++first;
        CHECK(first == mc.bytes, "%s: the second solve is bit-identical to the first (first differing byte: %zu of %zu)",
              what, first, mc.bytes);
    }
    free(t1), free(t2);
    pgpu_destroy(s);
    mc_free(&mc);
}

/* ---- 4. the V-cycle convergence factor -------------------------------------------------------- */

#define MAX_CHECKS 64
typedef struct history {
    int n;
    int it[MAX_CHECKS];
    double rn[MAX_CHECKS];
} history;

static void record(void *user, int iteration, double residual_norm, double relative_residual)
{
    history *h = (history *)user;
    (void)relative_residual;
    if (h->n < MAX_CHECKS) {
        h->it[h->n] = iteration;
        h->rn[h->n] = residual_norm;
        ++h->n;
    }
}

/* Returns the geometric-mean factor (NaN where it could not be formed). */
/* converge: the solve must reach 1e-12 within 40 cycles (else the factor
 * over the 40 cycles is all that is checked) */
static double convergence_run(int64_t n, int dims, const char *bcs, int shape, int beta, double jump, double bar,
                              int converge)
{
    pgpu_config cfg = case_config(n, n, dims == 3 ? n : 1, bcs, 1.0 / (n + 1), 1.0 / (n + 1), 1.0 / (n + 1), 0, 0,
                                  PGPU_VCYCLE | PGPU_DOUBLE);
    cfg.check_interval = 1;
    cfg.tolerance = 1e-12;
    cfg.max_iterations = 40;
    char what[160], bn[32];
    mcase mc;
    if (!mc_init(&mc, &cfg, shape, beta, jump, NULL))
        return NAN;
    snprintf(what, sizeof what, "V-cycle factor: %s, faces %s, %s, %lld^%d", mref_shape_name(shape), bcs,
             beta_name(beta, jump, bn, sizeof bn), (long long)n, dims);
    pgpu_solver *s = mc_handle(&mc, &cfg, what);
    history h;
    memset(&h, 0, sizeof h);
    mref_random_data(&mc.M, mc.u, mc.f, 1.0, 0.0);
    if (!s || pgpu_set_monitor(s, record, &h) != PGPU_SUCCESS || !mc_upload(&mc)) {
        CHECK(s == NULL, "%s: pgpu_set_monitor", what);
        pgpu_destroy(s);
        mc_free(&mc);
        return NAN;
    }
    pgpu_report rep;
    memset(&rep, 0, sizeof rep);
    const pgpu_status st = pgpu_solve(s, mc.d_u, mc.d_f, &rep);
    t_sync(what);
    /* rn after cycle c: the check with iteration c */
    double at[MAX_CHECKS];
    int last = -1;
    for (int c = 0; c < MAX_CHECKS; ++c)
        at[c] = NAN;
    for (int q = 0; q < h.n; ++q)
        if (h.it[q] >= 0 && h.it[q] < MAX_CHECKS) {
            at[h.it[q]] = h.rn[q];
            last = h.it[q] > last ? h.it[q] : last;
        }
    char line[512];
    size_t used = 0;
    line[0] = '\0';
    for (int c = 1; c <= last && used + 16 < sizeof line; ++c)
        used += (size_t)snprintf(line + used, sizeof line - used, " %.3f", at[c] / at[c - 1]);
    t_note("%s: per-cycle factors%s", what, line);
    /* to the stop at 1e-12: a mode the coarse levels miss shows only once
     * the others are gone (cycles 6 on at 120^3 with the wall layer) */
    const int to = last;
    const double factor = to > 2 ? pow(at[to] / at[2], 1.0 / (to - 2)) : NAN;
    CHECK(st == PGPU_SUCCESS || (!converge && st == PGPU_ERROR_NOT_CONVERGED),
          "%s: converges to 1e-12%s: %s after %d cycles (relative residual %.2e)%s%s", what,
          converge ? "" : " or runs its 40 cycles", st == PGPU_ERROR_BREAKDOWN ? "BREAKDOWN" : pgpu_status_string(st),
          rep.iterations, rep.relative_residual, st ? ": " : "", st ? pgpu_last_error(s) : "");
    /* bar (0: none): the bar, 0.15, on the sphere.  With the coarse fluid region taken from the
     * whole restriction row: 0.035 at 63^3 and 127^3 (H100), like the empty
     * box; with the core children only it was 0.22 / 0.26.  Even sizes
     * converged more slowly while even axes coarsened by cell pairs
     * (a sphere of radius 1/4: 0.10 at 256^3, 0.19 at 512^3). */
    if (bar > 0) {
        CHECK(factor <= bar, "%s: geometric-mean factor over cycles 3..%d = %.4f (<= %.2f)", what, to, factor, bar);
    } else
        t_note("%s: geometric-mean factor over cycles 3..%d = %.4f (not asserted; bar 0.15)", what, to, factor);
    pgpu_destroy(s);
    mc_free(&mc);
    return factor;
}

static double convergence_bc(int64_t n, int dims, const char *bcs, int shape, int beta, double jump, double bar)
{
    return convergence_run(n, dims, bcs, shape, beta, jump, bar, 1);
}

static double convergence_nd(int64_t n, int dims, int shape, int beta, double jump, double bar)
{
    return convergence_bc(n, dims, dims == 3 ? "DDDDDD" : "DDDD", shape, beta, jump, bar);
}

static double convergence(int64_t n, int shape, int beta, double jump, double bar)
{
    return convergence_nd(n, 3, shape, beta, jump, bar);
}

/* From u = 0 on a smooth right-hand side (f = 3 pi^2 sin sin sin, zero
 * Dirichlet faces), the residual after four V-cycles on a solid sphere of
 * radius 1/4 against the empty box's.  The coarse levels cannot follow the
 * wall, so the residual the cycle leaves gathers beside it; the
 * Gauss-Seidel iterations on the near tiles after each cycle take it out
 * (H200, double: 4.8 times the box's at 128^3 and 10.5 at 255^3 without
 * them, 1.8 and 4.0 with them). */
static void smooth_start(int64_t n, double bar)
{
    const int64_t sy = n + 2, sz = sy * (n + 2), ne = sz * (n + 2);
    const double h = 1.0 / (n + 1), pi = 3.14159265358979323846;
    double *f = (double *)calloc((size_t)ne, sizeof(double)), *zero = (double *)calloc((size_t)ne, sizeof(double));
    uint8_t *m = (uint8_t *)malloc((size_t)ne);
    char what[96];
    snprintf(what, sizeof what, "smooth start, sphere against the box, %lld^3", (long long)n);
    if (!f || !zero || !m) {
        CHECK(0, "%s: host memory", what);
        free(f), free(zero), free(m);
        return;
    }
    memset(m, PGPU_CELL_FLUID, (size_t)ne);
    for (int64_t k = 1; k <= n; ++k)
        for (int64_t j = 1; j <= n; ++j)
            for (int64_t i = 1; i <= n; ++i) {
                const int64_t p = i + j * sy + k * sz;
                const double x = i * h - 0.5, y = j * h - 0.5, z = k * h - 0.5;
                f[p] = 3 * pi * pi * sin(pi * i * h) * sin(pi * j * h) * sin(pi * k * h);
                if (x * x + y * y + z * z < 0.0625) m[p] = PGPU_CELL_SOLID;
            }
    void *d_f = t_dev_upload(f, (size_t)ne * sizeof(double)), *d_m = t_dev_upload(m, (size_t)ne);
    double rel[2] = {NAN, NAN};
    for (int masked = 0; masked < 2 && d_f && d_m; ++masked) {
        pgpu_config cfg = t_config(n, n, n, "DDDDDD", h, h, h, PGPU_VCYCLE | PGPU_FIXED | PGPU_DOUBLE);
        cfg.max_iterations = 4;
        pgpu_solver *s = t_create(&cfg, what);
        void *d_u = t_dev_upload(zero, (size_t)ne * sizeof(double));
        pgpu_report rep;
        if (s && d_u && (!masked || CHECK(pgpu_set_mask(s, d_m) == PGPU_SUCCESS, "%s: set_mask", what)) &&
            CHECK(pgpu_solve(s, d_u, d_f, &rep) == PGPU_SUCCESS, "%s: solve: %s", what, pgpu_last_error(s)))
            CHECK(pgpu_residual(s, d_u, d_f, &rel[masked]) == PGPU_SUCCESS, "%s: residual", what);
        t_dev_free(d_u);
        pgpu_destroy(s);
    }
    t_note("%s: relative residual after 4 V-cycles %.3e (sphere), %.3e (box)", what, rel[1], rel[0]);
    CHECK(rel[1] <= bar * rel[0], "%s: the sphere's residual %.3e <= %.1f x the box's %.3e", what, rel[1], bar, rel[0]);
    t_dev_free(d_f);
    t_dev_free(d_m);
    free(f), free(zero), free(m);
}

/* A constant beta scales the operator and every coarse one with it, so it
 * must leave the V-cycle factor as it is.  In a tank (Neumann sides and
 * floor, Dirichlet top) of even size the levels are coarsened by cell
 * pairs, whose coarse nodes lie half a fine spacing off their children: a
 * free-surface face's distance rule counts those end pieces with the fine
 * face's coefficient (counted as 1, beta 1000 made the coupling 250-500
 * times too weak). */
static void scale_free(int64_t n, int dims)
{
    const char *bcs = dims == 3 ? "NNNNND" : "NNND";
    const double f0 = convergence_bc(n, dims, bcs, MREF_SHAPE_POOL, BETA_NONE, 0, 0);
    const double jumps[2] = {1e3, 1e-3};
    for (int q = 0; q < 2; ++q) {
        const double f1 = convergence_bc(n, dims, bcs, MREF_SHAPE_POOL, MREF_BETA_CONST, jumps[q], 0);
        CHECK(fabs(f1 - f0) <= 0.01 + 0.05 * f0,
              "V-cycle factor, pool in a tank %lld^%d: beta %g everywhere %.4f against %.4f without beta", (long long)n,
              dims, jumps[q], f1, f0);
    }
}

/* float's floor for a Dirichlet cube of n points a side, spacing 1 / (n + 1)
 * (the header's (*) value: a quarter of eps lambda_max / lambda_min) */
static double float_floor(int64_t n)
{
    const double s = sin(3.14159265358979323846 / (2.0 * (double)(n + 1)));
    return 0.25 * FLT_EPSILON / (s * s);
}

/* A pocket sealed by a one-point solid shell holding one Dirichlet point
 * off the coarse nodes: a coarse point is Dirichlet where a core child is,
 * so that point left the coarse levels, whose problems were then singular
 * (V-cycles diverged: 1.91 per cycle at 64^2, 1.20 at 127^2; H200) until
 * its parent of the largest weight took it (gen_iso_kernel: 0.71, 0.86).
 * In 3D the factor stays about 0.97 (reported).  Float V-cycles' own stop
 * on the correction then stopped early where that mode was left (with
 * walls and a jump of beta: relative residual 2.4e-3); with a mask the
 * true residual confirms the stop: SUCCESS only within 16 times float's
 * floor, else NOT_CONVERGED (the header's (**) rule). */
static void held_pocket(void)
{
    convergence_run(64, 2, "DDDD", MREF_SHAPE_HELD, BETA_NONE, 0, 0.95, 0);
    convergence_run(127, 2, "DDDD", MREF_SHAPE_HELD, BETA_NONE, 0, 0.95, 0);
    convergence_run(63, 3, "DDDDDD", MREF_SHAPE_HELD, BETA_NONE, 0, 0, 0);
    const struct {
        int64_t n;
        int dims, beta;
        double jump;
    } fc[] = {{31, 2, BETA_NONE, 0}, {63, 2, MREF_BETA_JUMP, 1e3}, {15, 3, MREF_BETA_JUMP, 1e3},
              {31, 3, BETA_NONE, 0}, {31, 3, MREF_BETA_JUMP, 1e3}};
    for (size_t q = 0; q < sizeof fc / sizeof fc[0]; ++q) {
        const int64_t n = fc[q].n;
        const int dims = fc[q].dims;
        pgpu_config cfg = case_config(n, n, dims == 3 ? n : 1, dims == 3 ? "DDDDDD" : "DDDD", 1.0 / (n + 1),
                                      1.0 / (n + 1), 1.0 / (n + 1), 0, 0, PGPU_VCYCLE | PGPU_FLOAT);
        cfg.tolerance = 0;
        cfg.max_iterations = 200;
        char what[160], bn[32];
        snprintf(what, sizeof what, "float V-cycles' own stop: held pocket, %s, %lld^%d",
                 beta_name(fc[q].beta, fc[q].jump, bn, sizeof bn), (long long)n, dims);
        mcase mc;
        if (!mc_init(&mc, &cfg, MREF_SHAPE_HELD, fc[q].beta, fc[q].jump, NULL))
            continue;
        mc_data(&mc);
        pgpu_solver *s = mc_handle(&mc, &cfg, what);
        double *u = malloc((size_t)mc.elems * sizeof(double));
        void *typed = malloc(mc.bytes);
        if (s && u && typed && mc_upload(&mc)) {
            pgpu_report rep;
            memset(&rep, 0, sizeof rep);
            const pgpu_status st = pgpu_solve(s, mc.d_u, mc.d_f, &rep);
            if (t_sync(what) && mc_download(&mc, typed, u)) {
                const ref_norms nm = mref_residual(&mc.M, &mc.R, u, mc.f, NULL, NULL, NULL);
                const double bound = 16.0 * fmax(8.0 * 0x1p-20, float_floor(n));
                CHECK((st == PGPU_SUCCESS && nm.relative <= bound) || st == PGPU_ERROR_NOT_CONVERGED,
                      "%s: %s after %d cycles, host relative residual %.3e (SUCCESS needs <= %.3e)%s%s", what,
                      pgpu_status_string(st), rep.iterations, nm.relative, bound, st ? ": " : "",
                      st ? pgpu_last_error(s) : "");
                check_untouched(&mc, typed, what);
            }
        }
        free(u);
        free(typed);
        pgpu_destroy(s);
        mc_free(&mc);
    }
}

/* Float's own stop against a tolerance of the caller's: a handle with
 * tolerance 0 takes the (*) value, which pgpu_get_config shows, and may
 * accept a stall up to 16 times it (Jacobi, RBGS; the other methods' own
 * rules accept no more); a caller who passes that value as their own
 * tolerance is held to it (the header's (*): NOT_CONVERGED where not
 * reached), although it equals the default.  Smooth f, zero data, beta
 * raising float's floor above the box's estimate (balls of large beta,
 * where u is near constant but not small: the own stop stalls above the
 * value on some of them, counted and printed).  Every
 * SUCCESS is checked against the report and the host's residual. */
static void own_or_given(void)
{
    const struct {
        int64_t nx, ny, nz;
        const char *bcs;
        double hx, hy, hz;
        int beta;
        double jump;
    } oc[] = {
        {24, 22, 20, "DDDDDD", 1. / 32, 1. / 32, 1. / 32, MREF_BETA_BALL, 30},
        {24, 22, 20, "DDDDDD", 1. / 32, 1. / 32, 1. / 32, MREF_BETA_BALL, 300},
        {40, 36, 1, "DDNN", 1. / 64, 1. / 64, 0, MREF_BETA_BALL, 100},
        {24, 22, 20, "DDDDDD", 1. / 32, 1. / 32, 1. / 32, MREF_BETA_JUMP, 100},
        {20, 18, 16, "DDNNDD", 1. / 16, 1. / 32, 1. / 64, MREF_BETA_SMOOTH, 0},
        {13, 11, 9, "DNDDNN", 1. / 8, 1. / 32, 1. / 16, MREF_BETA_JUMP, 30},
        {48, 40, 1, "DDDD", 1. / 64, 1. / 64, 0, MREF_BETA_JUMP, 100},
        {40, 44, 1, "DNDN", 1. / 16, 1. / 64, 0, MREF_BETA_SMOOTH, 0},
        {30, 28, 26, "DDDDDD", 1. / 32, 1. / 32, 1. / 32, BETA_NONE, 0},
    };
    const unsigned methods[4] = {PGPU_RBGS, PGPU_JACOBI, PGPU_VCYCLE, PGPU_CG};
    int apart = 0, runs = 0;
    for (size_t q = 0; q < sizeof oc / sizeof oc[0]; ++q)
        for (int m = 0; m < 4; ++m) {
            pgpu_config cfg = case_config(oc[q].nx, oc[q].ny, oc[q].nz, oc[q].bcs, oc[q].hx, oc[q].hy, oc[q].hz, 0,
                                          0, PGPU_JACOBI | PGPU_FLOAT);
            double star = NAN; /* the (*) value: what a float Jacobi handle resolves 0 to */
            {
                pgpu_solver *s = t_create(&cfg, "float Jacobi, tolerance 0");
                pgpu_config got;
                if (!s || pgpu_get_config(s, &got) != PGPU_SUCCESS) {
                    pgpu_destroy(s);
                    CHECK(0, "pgpu_get_config of a float Jacobi handle");
                    return;
                }
                star = got.tolerance;
                pgpu_destroy(s);
            }
            cfg.flags = methods[m] | PGPU_FLOAT;
            mcase mc;
            if (!(star > 0) || !mc_init(&mc, &cfg, MREF_SHAPE_NONE, oc[q].beta, oc[q].jump, NULL))
                continue;
            for (int64_t e = 0; e < mc.elems; ++e) /* zero data, smooth f, rounded to float */
                mc.u[e] = mc.f[e] = 0.0;
            REF_FOR_EACH_INTERIOR(&mc.g, i, j, k)
            {
                const double x = (i + 0.5) / (double)mc.g.n[0], y = (j + 0.5) / (double)mc.g.n[1],
                             z = (k + 0.5) / (double)mc.g.n[2];
                mc.f[ref_idx(&mc.g, i, j, k)] = t_round(PGPU_FLOAT, sin(3.0 * x + 0.2) * cos(2.0 * y) + z);
            }
            double *u = malloc((size_t)mc.elems * sizeof(double));
            int own_iters = 0;
            for (int given = 0; given < 2 && u; ++given) {
                pgpu_config c = cfg;
                c.tolerance = given ? star : 0.0;
                if (given)
                    c.max_iterations = 2 * own_iters + 200; /* a stall ends at this count */
                char what[200], bn[32];
                snprintf(what, sizeof what, "float %s, tolerance %s %.3e, %lldx%lldx%lld %s, %s",
                         t_method_name(c.flags), given ? "given:" : "0, the (*) value", star,
                         (long long)oc[q].nx, (long long)oc[q].ny, (long long)oc[q].nz, oc[q].bcs,
                         beta_name(oc[q].beta, oc[q].jump, bn, sizeof bn));
                pgpu_solver *s = mc_handle(&mc, &c, what);
                pgpu_report rep;
                memset(&rep, 0, sizeof rep);
                if (!s || !mc_upload(&mc)) {
                    pgpu_destroy(s);
                    break;
                }
                const pgpu_status st = pgpu_solve(s, mc.d_u, mc.d_f, &rep);
                if (t_sync(what) && mc_download(&mc, NULL, u)) {
                    const ref_norms nm = mref_residual(&mc.M, &mc.R, u, mc.f, NULL, NULL, NULL);
                    const double cap = (given ? 1.0 : 16.0) * star;
                    CHECK((st == PGPU_SUCCESS && rep.relative_residual <= cap && nm.relative <= 1.01 * cap) ||
                              st == PGPU_ERROR_NOT_CONVERGED,
                          "%s: %s after %d, relative residual %.3e (host %.3e); SUCCESS needs <= %.3e%s%s", what,
                          pgpu_status_string(st), rep.iterations, rep.relative_residual, nm.relative, cap,
                          st ? ": " : "", st ? pgpu_last_error(s) : "");
                    if (!given) {
                        own_iters = rep.iterations;
                        ++runs;
                        if (st == PGPU_SUCCESS && rep.relative_residual > star)
                            ++apart;
                    }
                }
                pgpu_destroy(s);
            }
            free(u);
            mc_free(&mc);
        }
    printf("  float's own stop: %d of %d solves ended above the (*) value, within the slack a given tolerance "
           "does not have\n", apart, runs);
}

/* Double V-cycles at the rounding of u: on a ball of beta 1e6 a tolerance
 * of 1e-14 lies below what any double u reaches; the cycles end in
 * NOT_CONVERGED soon after the residual stops falling (not at
 * max_iterations), and a tolerance 20 times the level they stopped at is
 * met. */
static void rounding_stop(void)
{
    const int64_t n = 64;
    double reached = NAN;
    for (int pass = 0; pass < 2; ++pass) {
        pgpu_config cfg = case_config(n, n, n, "DDDDDD", 1.0 / (n + 1), 1.0 / (n + 1), 1.0 / (n + 1), 0, 0,
                                      PGPU_VCYCLE | PGPU_DOUBLE);
        cfg.tolerance = pass ? 20.0 * reached : 1e-14;
        cfg.max_iterations = 100;
        char what[128];
        snprintf(what, sizeof what, "V-cycles at double's rounding: a ball of beta 1e6, %lld^3, tolerance %.2e",
                 (long long)n, cfg.tolerance);
        mcase mc;
        if (!(cfg.tolerance > 0) || !mc_init(&mc, &cfg, MREF_SHAPE_NONE, MREF_BETA_BALL, 1e6, NULL))
            return;
        mc_data(&mc);
        pgpu_solver *s = mc_handle(&mc, &cfg, what);
        double *u = malloc((size_t)mc.elems * sizeof(double));
        void *typed = malloc(mc.bytes);
        if (s && u && typed && mc_upload(&mc)) {
            pgpu_report rep;
            memset(&rep, 0, sizeof rep);
            const pgpu_status st = pgpu_solve(s, mc.d_u, mc.d_f, &rep);
            if (t_sync(what) && mc_download(&mc, typed, u)) {
                const ref_norms nm = mref_residual(&mc.M, &mc.R, u, mc.f, NULL, NULL, NULL);
                if (!pass) {
                    CHECK(st == PGPU_ERROR_NOT_CONVERGED && rep.iterations < 40 && rep.relative_residual < 1e-5 &&
                              strstr(pgpu_last_error(s), "rounding") != NULL,
                          "%s: NOT_CONVERGED at the rounding before 40 cycles: %s after %d cycles, relative "
                          "residual %.3e: %s",
                          what, pgpu_status_string(st), rep.iterations, rep.relative_residual, pgpu_last_error(s));
                    reached = rep.relative_residual;
                } else {
                    CHECK(st == PGPU_SUCCESS && nm.relative <= 1.01 * cfg.tolerance,
                          "%s: SUCCESS: %s after %d cycles, host relative residual %.3e%s%s", what,
                          pgpu_status_string(st), rep.iterations, nm.relative, st ? ": " : "",
                          st ? pgpu_last_error(s) : "");
                }
                t_note("%s: %s after %d cycles, relative residual %.3e (host %.3e)", what, pgpu_status_string(st),
                       rep.iterations, rep.relative_residual, nm.relative);
            }
        }
        free(u);
        free(typed);
        pgpu_destroy(s);
        mc_free(&mc);
    }
}

/* Two handles of different sizes set masks in turn: what one handle's set
 * up for the coarse build (a kernel's shared-memory limit is the
 * process's) must not break the other's next pgpu_set_mask. */
static void two_handles(void)
{
    const int64_t dims[2][3] = {{64, 64, 64}, {40, 64, 64}};
    pgpu_solver *s[2] = {NULL, NULL};
    uint8_t *m[2] = {NULL, NULL};
    int ok = 1;
    for (int h = 0; h < 2 && ok; ++h) {
        pgpu_config c = pgpu_config_default(dims[h][0], dims[h][1], dims[h][2]);
        c.flags = PGPU_VCYCLE | PGPU_DOUBLE;
        const size_t n = (size_t)(dims[h][0] + 2) * (dims[h][1] + 2) * (dims[h][2] + 2);
        ok = CHECK(pgpu_create(&c, &s[h]) == PGPU_SUCCESS, "two handles: create %d", h) &&
             CHECK(cudaMalloc((void **)&m[h], n) == cudaSuccess, "two handles: mask %d", h) &&
             CHECK(cudaMemset(m[h], PGPU_CELL_FLUID, n) == cudaSuccess, "two handles: mask %d", h);
    }
    for (int round = 0; round < 3 && ok; ++round) {
        const int h = round == 1;
        const pgpu_status st = pgpu_set_mask(s[h], m[h]);
        ok = CHECK(st == PGPU_SUCCESS, "two handles: pgpu_set_mask on handle %d (round %d): %s", h, round,
                   st ? pgpu_last_error(s[h]) : "ok");
    }
    for (int h = 0; h < 2; ++h) {
        if (s[h])
            pgpu_destroy(s[h]);
        if (m[h])
            cudaFree(m[h]);
    }
}

int main(int argc, char **argv)
{
    /* --short: a few cases that run every mask kernel once (the
     * sanitizers' run): single steps on a sphere with beta, a mask alone,
     * sealed random pockets and beta alone; V-cycles on beta alone; new
     * masks under fixed V-cycles with beta (the coarse build with
     * fractions; a pool: faces between coarse fluid and Dirichlet points)
     * and in 2D without (a level of more tiles than the second pass's
     * grid: the first pass by words, and a last tile that holds only the
     * high x wall's face); refused data. */
    const int short_run = argc > 1 && !strcmp(argv[1], "--short");
    t_require_device(short_run ? "test_mask --short" : "test_mask");
    t_seed();

    if (short_run) {
        const int picks[3] = {0, 20, 22}; /* sphere with beta 1, sphere without beta, random solid */
        for (int c = 0; c < 3; ++c)
            for (int rb = 0; rb < 2; ++rb)
                run_step(&step_cases[picks[c]], c == 1 ? PGPU_FLOAT : PGPU_DOUBLE, rb);
        run_step(&step_cases[9], PGPU_FLOAT, 1); /* no mask, Neumann box */
        run_step(&step_cases[9], PGPU_DOUBLE, 1);
        solve_case("no mask, Neumann box, float", 21, 19, 17, "NNNNNN", MREF_SHAPE_NONE, MREF_BETA_SMOOTH, 0,
                   PGPU_VCYCLE | PGPU_FLOAT, 1e-5, 0);
        solve_case("no mask, Neumann box, double", 21, 19, 17, "NNNNNN", MREF_SHAPE_NONE, MREF_BETA_SMOOTH, 0,
                   PGPU_VCYCLE, 1e-10, 0);
        remask("fixed V-cycles, pockets", 23, 21, 19, "NNNNNN", PGPU_VCYCLE | PGPU_FIXED, 0, 6, MREF_SHAPE_WALLS,
               MREF_SHAPE_POCKET, MREF_BETA_SMOOTH);
        remask("2D fixed V-cycles", 1020, 232, 1, "DDNN", PGPU_VCYCLE | PGPU_FIXED, 0, 1, MREF_SHAPE_STAIRCASE,
               MREF_SHAPE_SPHERE_WALL, BETA_NONE);
        remask("fixed V-cycles, a pool", 37, 29, 23, "DDNNDD", PGPU_VCYCLE | PGPU_FIXED, 0, 12, MREF_SHAPE_SPHERE,
               MREF_SHAPE_POOL, MREF_BETA_SMOOTH);
        repeat_solves(PGPU_FMG, PGPU_DOUBLE, 40, 36, 33, BETA_NONE, "DDDDDD");
        bad_input(1, 1);
        return t_finish("test_mask --short");
    }

    steps();
    solves();
    one_point();
    own_or_given();

    remask("V-cycles", 37, 29, 23, "DDNNDD", PGPU_VCYCLE, 1e-10, 100, MREF_SHAPE_SPHERE, MREF_SHAPE_POOL,
           MREF_BETA_SMOOTH);
    remask("fixed V-cycles (graph replay)", 37, 29, 23, "DDNNDD", PGPU_VCYCLE | PGPU_FIXED, 0, 12, MREF_SHAPE_SPHERE,
           MREF_SHAPE_POOL, MREF_BETA_SMOOTH);
    remask("fixed V-cycles, pockets", 31, 29, 27, "NNNNNN", PGPU_VCYCLE | PGPU_FIXED, 0, 12, MREF_SHAPE_WALLS,
           MREF_SHAPE_POCKET, MREF_BETA_SMOOTH);
    remask("FMG", 33, 31, 29, "DDDDNN", PGPU_FMG, 1e-10, 50, MREF_SHAPE_POCKET, MREF_SHAPE_STAIRCASE, BETA_NONE);
    remask("2D V-cycles", 67, 59, 1, "PPDN", PGPU_VCYCLE, 1e-10, 100, MREF_SHAPE_STAIRCASE, MREF_SHAPE_WALLS,
           MREF_BETA_SMOOTH);
    remask("V-cycles, jump", 33, 29, 31, "DDDDDD", PGPU_VCYCLE, 1e-10, 100, MREF_SHAPE_STAIRCASE, MREF_SHAPE_SPHERE,
           MREF_BETA_JUMP);
    remask("fixed RBGS", 23, 19, 17, "DNDDPP", PGPU_RBGS | PGPU_FIXED, 0, 40, MREF_SHAPE_POOL, MREF_SHAPE_SPHERE,
           MREF_BETA_SMOOTH);

    bad_input(1, 1);
    bad_input(0, 0);
    bad_input(1, 0);
    two_handles();

    repeat_solves(PGPU_FMG, PGPU_DOUBLE, 40, 36, 33, BETA_NONE, "DDDDDD");
    repeat_solves(PGPU_FMG, PGPU_FLOAT, 61, 47, 40, MREF_BETA_SMOOTH, "DDDDDD");
    repeat_solves(PGPU_CG, PGPU_DOUBLE, 48, 37, 35, BETA_NONE, "DDDDDD");
    /* Odd periodic axes: their first and last points are neighbours of one
     * colour, which the in-place Gauss-Seidel beside the walls must not
     * update together (it did: run-to-run differences). */
    repeat_solves(PGPU_VCYCLE, PGPU_DOUBLE, 61, 47, 37, BETA_NONE, "PPPPNN");
    removal(31, 29, 27, "DDNNPP");
    removal(57, 47, 1, "NDDD");

    convergence(63, MREF_SHAPE_SPHERE, BETA_NONE, 0, 0.15);
    const double odd = convergence(127, MREF_SHAPE_SPHERE, BETA_NONE, 0, 0.15);
    const double even = convergence(128, MREF_SHAPE_SPHERE, BETA_NONE, 0, 0.15);
    /* Kept nodes make an even size converge like its odd neighbour (a CPU
     * model of the hierarchy, sphere of radius 1/4: 0.05 at 64^3-256^3, as
     * odd sizes); cell pairs gave 0.087 at 128^3 there, 0.19 at 512^3 on
     * an H100, against 0.035-0.05 at odd sizes. */
    if (!isnan(odd) && !isnan(even))
        CHECK(even <= 1.6 * odd + 0.01, "V-cycle factor at 128^3 %.4f <= 1.6 x the factor at 127^3 %.4f + 0.01", even,
              odd);
    /* Solid layers along the Dirichlet x faces: every coarse wall face must
     * stay closed (120 -> 60 -> 30 -> 15 -> 7: the odd levels' wall faces
     * reach past the fine wall face's midpoint).  And 120 = 2 * 60: the
     * first coarse level's 61 x positions make a last tile (30 wide) that
     * holds only the high x wall's face.  Bar 0.3: 0.11 measured
     * (H100; the sphere alone gives 0.05), where open coarse wall faces
     * gave 0.55 to 0.80. */
    convergence(120, MREF_SHAPE_SPHERE_WALL, BETA_NONE, 0, 0.3);
    /* Dirichlet cells above a liquid (the pool: above 0.7 of the height).
     * Where the fine free surface falls between two kept nodes, a face
     * between coarse fluid and coarse Dirichlet points must couple them as
     * close as the fine points are: with the path's mean it put the held
     * value a coarse spacing away at every level, and V-cycles diverged
     * (1023^2: 1.12 per cycle; 127^3 with the surface at y: 0.58; H100).
     * With the distance rule, these three: 0.056, 0.059, 0.045 (H100). */
    convergence_nd(255, 2, MREF_SHAPE_POOL, BETA_NONE, 0, 0.15);
    convergence_nd(1023, 2, MREF_SHAPE_POOL, BETA_NONE, 0, 0.15);
    convergence(127, MREF_SHAPE_POOL, BETA_NONE, 0, 0.15);
    /* Even sizes between Dirichlet faces: where rounding made a kept
     * node's neighbour a core child, the pool converged at 0.30-0.34 per
     * cycle (120^2, 128^2, 256^2, 128^3; H100). */
    convergence_nd(120, 2, MREF_SHAPE_POOL, BETA_NONE, 0, 0.15);
    convergence_nd(256, 2, MREF_SHAPE_POOL, BETA_NONE, 0, 0.15);
    convergence(128, MREF_SHAPE_POOL, BETA_NONE, 0, 0.15);
    /* Thin solid walls standing in the fluid: V-cycles stalled at
     * 0.62-0.84 per cycle (63^2-1024^2, 63^3-128^3; H100) until the coarse
     * levels took the split and shut rules (gen_coarse_kernel,
     * gen_shut_kernel). */
    convergence_nd(127, 2, MREF_SHAPE_WALLS, BETA_NONE, 0, 0.5);
    convergence_nd(256, 2, MREF_SHAPE_WALLS, BETA_NONE, 0, 0.5);
    convergence(64, MREF_SHAPE_WALLS, BETA_NONE, 0, 0.5);
    smooth_start(128, 3.0);
    smooth_start(255, 6.0);
    scale_free(128, 2);
    scale_free(64, 3);
    held_pocket();
    rounding_stop();
    convergence(63, MREF_SHAPE_SPHERE, MREF_BETA_JUMP, 1e3, 0);
    convergence(127, MREF_SHAPE_SPHERE, MREF_BETA_JUMP, 1e3, 0);
    return t_finish("test_mask");
}
