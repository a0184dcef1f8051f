// stationary.h -- the Jacobi and red-black Gauss-Seidel methods
#pragma once
#include "multigrid.h"

namespace pgpu {

// Weighted Jacobi and red-black Gauss-Seidel / SOR on level 0: smoothing
// passes (smooth.h) ping-ponging between the user's u and the handle's
// second iterate, checked every `interval` iterations (none with `fixed`).
// In float they converge to a point where every update is below half an
// ulp of u, which leaves a smooth error of about 0.07 eps lambda_max /
// lambda_min (a host model, 2D Dirichlet: 1.3e-6, 4.6e-6, 2.0e-5 at 15^2,
// 31^2, 63^2); updates formed in double reach the same point within 1.5x
// (measured at 40-66% more time per sweep), so they are not used: the limit
// belongs to stationary iterations on float storage.  Multigrid's coarse
// corrections are not sub-ulp; float V-cycles reach float's rounding.

constexpr int STATIONARY_STALL = 16;
template <class T>
static pgpu_status run_stationary(Env &e, Reducer &red, Hierarchy<T> &h, Convergence &cv, bool jacobi, T omega,
                                  bool fixed, int interval, pgpu_report &r)
{
    char *err = e.err;
    Level<T> &L = h.lv[0];
    PGPU_FORWARD(frame(e, L.g, (const T *)L.u, L.t, (T *)nullptr, h.data_faces)); // boundary data in both iterates
    const int maxit = cv.max_it;
    int it = 0;
    pgpu_status result = PGPU_SUCCESS;
    // Distributed: dist_smooth (Jacobi: one iteration per exchange;
    // red-black where level 0 has bands: a band pass of two iterations, or
    // of the last single one, per exchange; else one iteration per
    // exchange, the second colour next to the interfaces redone).
    auto iterations = [&](int n) -> pgpu_status {
        return e.dist ? dist_smooth(e, L, 0, jacobi, n, omega, 0) : smooth(e, L, jacobi, n, omega);
    };
    // Float with its own tolerance (the config's 0): the residual stops
    // falling at rounding that float_residual_floor only estimates (an
    // anisotropic 4 x 11 x 8 grid: 1.9e-5 against 1.1e-5).  Where it makes
    // no new low for STATIONARY_STALL checks within FLOAT_OWN_SLACK times
    // the tolerance, that is float's limit: success.  A residual still
    // falling, however slowly, makes a new low at every check; one that has
    // risen to more than twice its low is no plateau and goes on (to
    // max_iterations, NOT_CONVERGED).
    const bool own = cv.own();
    double best = INFINITY;
    int since = 0;
    for (bool stop = false; !stop;) {
        const int n = fixed ? maxit : std::min(interval, maxit - it);
        PGPU_FORWARD(iterations(n));
        it += n;
        if (fixed) break;
        double rn = 0, rmax = 0;
        PGPU_FORWARD(h.norm(e, red, rn, rmax));
        cv.judge(err, rn, rmax, it, jacobi ? "Jacobi" : "RBGS", "iterations", r, stop, result);
        if (rn < best) best = rn, since = 0;
        else ++since;
        if (own && result != PGPU_ERROR_BREAKDOWN && since >= STATIONARY_STALL && rn <= 2.0 * best &&
            r.relative_residual <= FLOAT_OWN_SLACK * cv.tol) {
            result = PGPU_SUCCESS;
            err[0] = 0;
            stop = true;
        }
    }
    r.iterations = it;
    PGPU_FORWARD(h.settle(e));
    return result;
}

} // namespace pgpu
