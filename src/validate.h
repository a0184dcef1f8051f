// validate.h -- the config: validation and defaults, in one place
#pragma once
#include "handle.h"

namespace pgpu {

static bool mul_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }

// An upper bound of the largest eigenvalue of the operator with unit
// coefficient: 4 / h^2 summed over the axes.
static double lambda_max_bound(const pgpu_config &c)
{
    const int dims = c.nz > 1 ? 3 : 2;
    const double h[3] = {c.hx, c.hy, c.hz};
    double lmax = 0;
    for (int a = 0; a < dims; ++a) lmax += 4.0 / (h[a] * h[a]);
    return lmax;
}

// The relative residual float rounding lets an iteration reach: storing u
// in float perturbs it by about eps |u| in every mode, which the operator
// turns into a residual of up to eps * diag * |u|, while b is about
// lambda_min |u| for a smooth solution.  A quarter of eps * lambda_max /
// lambda_min (lambda_max = 2 diag).  With the grid's lambda_min
// (float_residual_floor): reachable for smooth solutions, loose for rough
// ones (set the tolerance explicitly to go further); with ||b|| / ||u|| of a
// u at hand in its place, that u's own floor (run_multigrid; in double
// with eps = 2^-52, where V-cycles stop falling).
static double rounding_floor(double eps, double lmax, double lmin) { return 0.25 * eps * lmax / lmin; }
static double float_floor(double lmax, double lmin) { return rounding_floor(FLOAT_EPS, lmax, lmin); }
static double float_residual_floor(const pgpu_config &c)
{
    const bool is3d = c.nz > 1;
    const int dims = is3d ? 3 : 2;
    const int64_t n[3] = {c.nx, c.ny, c.nz};
    const double h[3] = {c.hx, c.hy, c.hz};
    double lsum = 0, lnz = INFINITY;
    for (int a = 0; a < dims; ++a) {
        const int lo = c.bc[2 * a], hi = c.bc[2 * a + 1];
        const double q = 4.0 / (h[a] * h[a]);
        double first; // the lowest eigenvalue of the axis, or its lowest non-zero one
        if (lo == PGPU_BC_DIRICHLET && hi == PGPU_BC_DIRICHLET) first = q * std::pow(std::sin(M_PI / (2.0 * (n[a] + 1))), 2);
        else if (lo == PGPU_BC_PERIODIC) first = n[a] > 1 ? q * std::pow(std::sin(M_PI / n[a]), 2) : INFINITY;
        else if (lo == PGPU_BC_NEUMANN && hi == PGPU_BC_NEUMANN) first = n[a] > 1 ? q * std::pow(std::sin(M_PI / (2.0 * n[a])), 2) : INFINITY;
        else first = q * std::pow(std::sin(M_PI / (2.0 * (2 * n[a] + 1))), 2);
        const bool zero_mode = !(lo == PGPU_BC_DIRICHLET || hi == PGPU_BC_DIRICHLET);
        if (!zero_mode) lsum += first;
        lnz = std::min(lnz, first);
    }
    const double lmin = lsum > 0 ? lsum : lnz;
    return std::isfinite(lmin) && lmin > 0 ? float_floor(lambda_max_bound(c), lmin) : 1e-5;
}

// Validates a config (no CUDA call) and resolves every default in one
// place; rule (where given): how its solves end, from the tolerance as
// given, before its default replaces a 0.
static pgpu_status resolve_config(const pgpu_config *in, pgpu_config *c, char *err, Stop *rule)
{
    *c = *in;
    const int64_t MAXN = 0x7fffff00; // per axis: kernels index an axis (and a tile past its end) with int
    PGPU_RETURN_IF(c->nx < 1 || c->ny < 1 || c->nz < 1, PGPU_ERROR_INVALID_ARGUMENT,
                   "grid size %lld x %lld x %lld: every axis needs at least one point", (long long)c->nx,
                   (long long)c->ny, (long long)c->nz);
    PGPU_RETURN_IF(c->nx > MAXN || c->ny > MAXN || c->nz > MAXN, PGPU_ERROR_INVALID_ARGUMENT,
                   "grid size %lld x %lld x %lld: at most %lld points per axis", (long long)c->nx,
                   (long long)c->ny, (long long)c->nz, (long long)MAXN);
    const bool is3d = c->nz > 1;
    PGPU_RETURN_IF(!(c->hx > 0) || !std::isfinite(c->hx), PGPU_ERROR_INVALID_ARGUMENT, "hx = %g must be finite and > 0", c->hx);
    PGPU_RETURN_IF(!(c->hy > 0) || !std::isfinite(c->hy), PGPU_ERROR_INVALID_ARGUMENT, "hy = %g must be finite and > 0", c->hy);
    PGPU_RETURN_IF(is3d && (!(c->hz > 0) || !std::isfinite(c->hz)), PGPU_ERROR_INVALID_ARGUMENT,
                   "hz = %g must be finite and > 0", c->hz);
    // Strides and the array size.
    const int64_t row = c->nx + 2;
    PGPU_RETURN_IF(c->stride_y < 0 || (c->stride_y != 0 && c->stride_y < row), PGPU_ERROR_INVALID_ARGUMENT,
                   "stride_y = %lld is smaller than a row (nx + 2 = %lld)", (long long)c->stride_y, (long long)row);
    if (c->stride_y == 0) c->stride_y = row;
    int64_t plane, elems, bytes;
    PGPU_RETURN_IF(!mul_ok(c->stride_y, c->ny + 2, &plane), PGPU_ERROR_INVALID_ARGUMENT, "array size overflows");
    if (is3d) {
        PGPU_RETURN_IF(c->stride_z < 0 || (c->stride_z != 0 && c->stride_z < plane), PGPU_ERROR_INVALID_ARGUMENT,
                       "stride_z = %lld is smaller than a plane (stride_y * (ny + 2) = %lld)",
                       (long long)c->stride_z, (long long)plane);
        if (c->stride_z == 0) c->stride_z = plane;
        PGPU_RETURN_IF(!mul_ok(c->stride_z, c->nz + 2, &elems), PGPU_ERROR_INVALID_ARGUMENT, "array size overflows");
    } else {
        c->stride_z = plane; // unused in 2D
        elems = plane;
    }
    PGPU_RETURN_IF(!mul_ok(elems, 8, &bytes), PGPU_ERROR_INVALID_ARGUMENT, "array size overflows");
    // Flags: one method, one precision (each a bit of its own), options.
    const unsigned methods = PGPU_JACOBI | PGPU_RBGS | PGPU_VCYCLE | PGPU_FMG | PGPU_FFT | PGPU_CG | PGPU_BICGSTAB;
    const unsigned precisions = PGPU_DOUBLE | PGPU_FLOAT | PGPU_MIXED;
    const unsigned known = methods | precisions | PGPU_WCYCLE | PGPU_FIXED | PGPU_PIPELINED;
    PGPU_RETURN_IF(c->flags & ~known, PGPU_ERROR_INVALID_ARGUMENT,
                   "flags: unknown bits 0x%x (methods 0x%x, precisions 0x%x, PGPU_WCYCLE, PGPU_FIXED, PGPU_PIPELINED)",
                   c->flags & ~known, methods, precisions);
    unsigned method = c->flags & PGPU_METHOD_MASK, prec = c->flags & PGPU_PRECISION_MASK;
    PGPU_RETURN_IF(method & (method - 1), PGPU_ERROR_INVALID_ARGUMENT,
                   "flags: the method field names more than one method (%s%s%s%s%s%s%s); choose one",
                   method & PGPU_JACOBI ? " JACOBI" : "", method & PGPU_RBGS ? " RBGS" : "",
                   method & PGPU_VCYCLE ? " VCYCLE" : "", method & PGPU_FMG ? " FMG" : "", method & PGPU_FFT ? " FFT" : "",
                   method & PGPU_CG ? " CG" : "", method & PGPU_BICGSTAB ? " BICGSTAB" : "");
    PGPU_RETURN_IF(prec & (prec - 1), PGPU_ERROR_INVALID_ARGUMENT,
                   "flags: the precision field names more than one precision (%s%s%s); choose one",
                   prec & PGPU_DOUBLE ? " DOUBLE" : "", prec & PGPU_FLOAT ? " FLOAT" : "", prec & PGPU_MIXED ? " MIXED" : "");
    if (method == 0) method = PGPU_FMG;
    if (prec == 0) prec = PGPU_DOUBLE;
    // The Krylov methods' preconditioner.
    const bool krylov = is_krylov((int)method);
    PGPU_RETURN_IF((int)c->preconditioner < 0 || (int)c->preconditioner > PGPU_PRECOND_FFT, PGPU_ERROR_INVALID_ARGUMENT,
                   "preconditioner = %d is not a pgpu_preconditioner", (int)c->preconditioner);
    PGPU_RETURN_IF(c->preconditioner != PGPU_PRECOND_DEFAULT && !krylov, PGPU_ERROR_INVALID_ARGUMENT,
                   "preconditioner = %d: only PGPU_CG and PGPU_BICGSTAB take a preconditioner", (int)c->preconditioner);
    if (krylov && c->preconditioner == PGPU_PRECOND_DEFAULT) c->preconditioner = PGPU_PRECOND_VCYCLE;
    const bool kmg = krylov && c->preconditioner == PGPU_PRECOND_VCYCLE;
    PGPU_RETURN_IF((c->flags & PGPU_WCYCLE) && !is_multigrid((int)method) && !kmg, PGPU_ERROR_INVALID_ARGUMENT,
                   "flags: PGPU_WCYCLE needs PGPU_VCYCLE, PGPU_FMG, or a Krylov method with PGPU_PRECOND_VCYCLE");
    PGPU_RETURN_IF((c->flags & PGPU_PIPELINED) && method != PGPU_CG, PGPU_ERROR_INVALID_ARGUMENT,
                   "flags: PGPU_PIPELINED is a form of PGPU_CG");
    PGPU_RETURN_IF(prec == PGPU_MIXED && (c->flags & PGPU_PIPELINED), PGPU_ERROR_UNSUPPORTED,
                   "flags: PGPU_PIPELINED with PGPU_MIXED: the pipelined recurrences need the same symmetric "
                   "preconditioner every iteration, which a float one rounding its input is not (use the classic "
                   "CG, whose flexible coefficients allow it)");
    PGPU_RETURN_IF(prec == PGPU_MIXED && krylov && c->preconditioner != PGPU_PRECOND_VCYCLE &&
                       c->preconditioner != PGPU_PRECOND_FFT,
                   PGPU_ERROR_UNSUPPORTED,
                   "flags: PGPU_MIXED with a Krylov method takes a float multigrid or FFT preconditioner "
                   "(PGPU_PRECOND_VCYCLE or PGPU_PRECOND_FFT)");
    PGPU_RETURN_IF(prec == PGPU_MIXED && (method == PGPU_JACOBI || method == PGPU_RBGS), PGPU_ERROR_UNSUPPORTED,
                   "flags: PGPU_MIXED serves PGPU_VCYCLE, PGPU_FMG, PGPU_FFT, PGPU_CG and PGPU_BICGSTAB (Jacobi and "
                   "RBGS converge too slowly for a refinement to pay; use PGPU_DOUBLE)");
    c->flags = (c->flags & ~(PGPU_METHOD_MASK | PGPU_PRECISION_MASK)) | method | prec;
    // Boundaries.
    static const char *face[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
    const int nfaces = is3d ? 6 : 4;
    for (int k = 0; k < nfaces; ++k)
        PGPU_RETURN_IF((int)c->bc[k] < 0 || (int)c->bc[k] > 2, PGPU_ERROR_INVALID_ARGUMENT,
                       "bc[%d] (%s) = %d is not a pgpu_bc", k, face[k], (int)c->bc[k]);
    if (!is3d) c->bc[4] = c->bc[5] = PGPU_BC_DIRICHLET; // unused in 2D
    for (int k = 0; k < nfaces; k += 2)
        PGPU_RETURN_IF((c->bc[k] == PGPU_BC_PERIODIC) != (c->bc[k + 1] == PGPU_BC_PERIODIC),
                       PGPU_ERROR_INVALID_ARGUMENT, "periodic on face %s but not on face %s", face[k],
                       face[k + 1]);
    // Numbers.
    PGPU_RETURN_IF(!(c->tolerance >= 0) || !std::isfinite(c->tolerance), PGPU_ERROR_INVALID_ARGUMENT,
                   "tolerance = %g must be finite and >= 0", c->tolerance);
    PGPU_RETURN_IF(c->max_iterations < 0, PGPU_ERROR_INVALID_ARGUMENT, "max_iterations = %d < 0", c->max_iterations);
    PGPU_RETURN_IF(!(c->omega >= 0) || !std::isfinite(c->omega), PGPU_ERROR_INVALID_ARGUMENT,
                   "omega = %g must be finite and >= 0", c->omega);
    PGPU_RETURN_IF(method == PGPU_JACOBI && c->omega > 1, PGPU_ERROR_INVALID_ARGUMENT,
                   "omega = %g: the Jacobi weight must lie in (0, 1]", c->omega);
    PGPU_RETURN_IF(method != PGPU_JACOBI && c->omega >= 2, PGPU_ERROR_INVALID_ARGUMENT,
                   "omega = %g: the relaxation factor must lie in (0, 2)", c->omega);
    PGPU_RETURN_IF(c->pre_smooth < 0 || c->post_smooth < 0 || c->pre_smooth > 64 || c->post_smooth > 64,
                   PGPU_ERROR_INVALID_ARGUMENT, "pre_smooth = %d, post_smooth = %d: each must lie in [0, 64]",
                   c->pre_smooth, c->post_smooth);
    PGPU_RETURN_IF(c->check_interval < 0, PGPU_ERROR_INVALID_ARGUMENT, "check_interval = %d < 0", c->check_interval);
    // Defaults.
    const bool fixed = (c->flags & PGPU_FIXED) != 0;
    const bool flt = prec == PGPU_FLOAT, mixed = prec == PGPU_MIXED;
    // (Float V-cycles keep 0: they stop on the size of the correction, see
    // run_multigrid; float Krylov methods on the recursive residual, see
    // Krylov::run.)
    if (c->tolerance == 0 && mixed) c->tolerance = 1e-10;
    if (c->tolerance == 0 && (method == PGPU_JACOBI || method == PGPU_RBGS || method == PGPU_VCYCLE || krylov) &&
        !(flt && (method == PGPU_VCYCLE || krylov)))
        c->tolerance = flt ? float_own_tolerance(float_residual_floor(*c)) : 1e-10;
    if (c->max_iterations == 0) {
        if (fixed) c->max_iterations = 1;
        else if (mixed && !krylov) c->max_iterations = MIXED_MAX_STEPS;
        else if (method == PGPU_FFT) c->max_iterations = 1;
        else if (method == PGPU_VCYCLE) c->max_iterations = 100;
        else if (method == PGPU_FMG) c->max_iterations = 50;
        else if (krylov && (kmg || c->preconditioner == PGPU_PRECOND_FFT)) c->max_iterations = 200;
        else c->max_iterations = 20000;
    }
    if (c->omega == 0) {
        // Over-relaxed red-black smoothing: 1.3 (3D) and 1.2 (2D) give V(2,1)
        // about 0.05 per cycle, and about 0.08 with one odd periodic ring.
        // Around an odd ring the colouring is inconsistent (two neighbours
        // of one colour across the seam); where two or three such rings
        // cross, less relaxation converges faster: measured on an H200, 3D
        // all-periodic odd cubes 0.125 at 1.2 against 0.19 at 1.3, 2D odd
        // squares 0.10 at 1.15 against 0.13 at 1.2.
        int odd_rings = 0;
        const int64_t n[3] = {c->nx, c->ny, c->nz};
        for (int a = 0; a < (is3d ? 3 : 2); ++a)
            if (c->bc[2 * a] == PGPU_BC_PERIODIC && n[a] % 2 == 1 && n[a] > 1) ++odd_rings;
        c->omega = !is_multigrid(method) && !kmg ? 1.0 : is3d ? (odd_rings >= 2 ? 1.2 : 1.3) : (odd_rings >= 2 ? 1.15 : 1.2);
    }
    if (is_multigrid(method)) {
        if (c->pre_smooth == 0) c->pre_smooth = 2;
        if (c->post_smooth == 0) c->post_smooth = 1;
    }
    if (kmg) { // a symmetric cycle: as many post- as pre-smoothing iterations
        if (c->pre_smooth == 0) c->pre_smooth = c->post_smooth ? c->post_smooth : 2;
        if (c->post_smooth == 0) c->post_smooth = c->pre_smooth;
    }
    if (c->check_interval == 0)
        c->check_interval = is_multigrid(method) || kmg || (krylov && c->preconditioner == PGPU_PRECOND_FFT) ? 1 : 10;
    if (rule) {
        // (a float tolerance of the caller's equal to the (*) value is the
        // caller's: held to it, with none of the own rule's slack)
        if (mixed) *rule = Stop::TOLERANCE; // iterative refinement to a tolerance, whatever the method
        else if ((method == PGPU_FFT || method == PGPU_FMG) && in->tolerance == 0) *rule = Stop::ONCE;
        else if (flt && in->tolerance == 0) *rule = Stop::FLOAT_OWN;
        else *rule = Stop::TOLERANCE;
    }
    return PGPU_SUCCESS;
}

// The axis' length over its spacing, from its faces (the header's GEOMETRY):
// n + 1 between two Dirichlet faces, n between two Neumann faces or around a
// periodic ring, n + 1/2 from a Dirichlet to a Neumann face.
static double axis_cells(int64_t n, int lo, int hi)
{
    const int dirichlet = (lo == PGPU_BC_DIRICHLET) + (hi == PGPU_BC_DIRICHLET);
    return (double)n + 0.5 * dirichlet;
}

// c's spacing for a box of lengths len (z only in 3D): len over cells.
static void domain_spacing(pgpu_config *c, const double len[3])
{
    double *h[3] = {&c->hx, &c->hy, &c->hz};
    const int64_t n[3] = {c->nx, c->ny, c->nz};
    for (int a = 0; a < (c->nz > 1 ? 3 : 2); ++a) *h[a] = len[a] / axis_cells(n[a], c->bc[2 * a], c->bc[2 * a + 1]);
}

static const char *status_text(pgpu_status st)
{
    switch (st) {
    case PGPU_SUCCESS: return "success";
    case PGPU_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case PGPU_ERROR_UNSUPPORTED: return "unsupported request";
    case PGPU_ERROR_OUT_OF_MEMORY: return "out of device memory";
    case PGPU_ERROR_CUDA: return "CUDA, cuFFT or NCCL error";
    case PGPU_ERROR_NO_DEVICE: return "no CUDA device";
    case PGPU_ERROR_NOT_CONVERGED: return "not converged: the tolerance was not reached";
    case PGPU_ERROR_BREAKDOWN: return "breakdown: NaN/Inf appeared or the iteration diverged";
    case PGPU_ERROR_NONFINITE_INPUT: return "f or the boundary data hold NaN/Inf";
    }
    return "unknown status";
}

} // namespace pgpu
