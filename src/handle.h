// handle.h -- the solver behind a handle: create, workspace, one solve
#pragma once
#include "stationary.h"
#include "krylov.h"
#include "dist_fft.h"

namespace pgpu {

// The solver behind a handle: the resolved config, the environment (stream,
// error text, allocations), the reductions, the levels, and the method's
// machinery (multigrid, FFT, graph replay).  One solve: check the arrays,
// scan the right-hand side (finite? its norm, and its mean when singular),
// run the method, report.

static int method_of(unsigned flags) { return (int)(flags & PGPU_METHOD_MASK); }
static bool is_multigrid(int m) { return m == PGPU_VCYCLE || m == PGPU_FMG; }
static bool is_krylov(int m) { return m == PGPU_CG || m == PGPU_BICGSTAB; }
// The handle holds multigrid levels: a multigrid method, or a Krylov method
// preconditioned by a cycle.
static bool uses_multigrid(const pgpu_config &c)
{
    const int m = method_of(c.flags);
    return is_multigrid(m) || (is_krylov(m) && c.preconditioner == PGPU_PRECOND_VCYCLE);
}

// Makes the handle's device current for the duration of a call.
struct DeviceGuard {
    int prev = -1, want = -1;
    cudaError_t status = cudaSuccess;
    explicit DeviceGuard(int dev) : want(dev)
    {
        status = cudaGetDevice(&prev);
        if (status == cudaSuccess && prev != want) status = cudaSetDevice(want);
    }
    ~DeviceGuard()
    {
        if (prev >= 0 && prev != want) cudaSetDevice(prev);
    }
};

struct SolverBase {
    pgpu_config cfg{};
    Env env;
    pgpu_box box{};              // the part of the global grid the handle holds (pgpu_get_box)
    std::unique_ptr<Dist> dist;  // the distributed mode's state (env.dist), or NULL
    virtual ~SolverBase() {}
    virtual pgpu_status solve(void *u, const void *f, pgpu_report *rep) = 0;
    virtual pgpu_status solve_host(void *u, const void *f, pgpu_report *rep) = 0;
    virtual pgpu_status residual(const void *u, const void *f, double *rel) = 0;
    virtual pgpu_status set_stream(cudaStream_t st) = 0;
    virtual void set_monitor(pgpu_monitor fn, void *user) = 0;
    virtual pgpu_status set_general(const uint8_t *mask, const void *beta, bool is_mask) = 0;
};

template <class T> struct Solver : SolverBase {
    pgpu_status init(const pgpu_config &c);
    // Which cycle the multigrid preconditioner runs (krylov.h's head).
    void symmetric_cycle();
    pgpu_status solve(void *u, const void *f, pgpu_report *rep) override;
    pgpu_status solve_host(void *u, const void *f, pgpu_report *rep) override;
    pgpu_status residual(const void *u, const void *f, double *rel) override;
    pgpu_status set_stream(cudaStream_t st) override;
    pgpu_status set_general(const uint8_t *mask, const void *beta, bool is_mask) override;
    void set_monitor(pgpu_monitor fn, void *user) override
    {
        monitor = fn;
        monitor_user = user;
    }
    ~Solver() override
    {
        if (ev0) cudaEventDestroy(ev0);
        if (ev1) cudaEventDestroy(ev1);
        if (scan_ev) cudaEventDestroy(scan_ev);
    }

    int method = 0;
    bool fixed = false, mixed = false;
    Stop rule = Stop::TOLERANCE; // how a solve ends (build_solver sets it from the config as given)
    Hierarchy<T> h;  // level 0 alone for Jacobi, RBGS, FFT and PGPU_MIXED
    Multigrid<T> mg; // V/W-cycles and FMG, the Krylov methods' cycle
    FftSolver<T> fft;
    Krylov<T> kry;   // CG, BiCGStab
    Replay replay;   // PGPU_FIXED multigrid
    Reducer red;
    // PGPU_MIXED (T = double): the float solver of the corrections, on its
    // own level-0 arrays (the user's strides, zero ghosts).
    struct Inner {
        Hierarchy<float> h;
        Multigrid<float> mg;
        FftSolver<float> fft;
        float *d_shift = nullptr; // the mean of a singular residual
    };
    std::unique_ptr<Inner> in;
    pgpu_monitor monitor = nullptr; // pgpu_set_monitor
    void *monitor_user = nullptr;
    T *d_shift = nullptr;                        // the mean of a singular right-hand side (0 otherwise)
    T *d_host_u = nullptr, *d_host_f = nullptr; // pgpu_solve_host's copies, made on first use
    cudaEvent_t ev0 = nullptr, ev1 = nullptr;

    cudaEvent_t scan_ev = nullptr; // the scan's results are on the host
    pgpu_status check_arrays(const void *u, const void *f);
    pgpu_status scan_launch(const T *u, const T *f);
    pgpu_status scan_read(double &rhs_norm, bool &finite);
    pgpu_status check_range(double scale, bool low);
    pgpu_status scan(const T *u, const T *f, bool readback, double &rhs_norm, bool &finite);
    pgpu_status solve_fmg_pass(T *u, const T *f, pgpu_report &r);
    pgpu_status solve_folded(T *u, const T *f, pgpu_report &r, bool &folded);
    pgpu_status remove_mean(T *u);
    // What project_rhs leaves on the device, in one read: max |b| over the
    // singular regions' points (its double's bits) and region 0's mean of b
    // (the report's rhs_mean where a mask has one singular region).
    pgpu_status read_projection(double &vmax, double &first)
    {
        char *err = env.err;
        static_assert(sizeof(unsigned long long) == sizeof(double), "maxbits holds a double's bits");
        double v[2];
        PGPU_CUDA(cudaMemcpyAsync(v, h.gen.maxbits, sizeof v, cudaMemcpyDeviceToHost, env.st));
        PGPU_CUDA(cudaStreamSynchronize(env.st));
        vmax = v[0];
        first = v[1];
        return PGPU_SUCCESS;
    }
    pgpu_status run_method(T *u, const T *f, double rhs_norm, pgpu_report &r);
    pgpu_status run_mixed(T *u, const T *f, double rhs_norm, pgpu_report &r);
    pgpu_status fixed_launches(T *u, const T *f, pgpu_report &r);
    // The general form's singular regions (general.h): mean of b removed from
    // f into gen.fp (returns the f to solve with), mean of u removed from u
    // (the report measured again; a SUCCESS it lifts above the tolerance
    // becomes NOT_CONVERGED).
    pgpu_status project_rhs(const T *u, const T *f, const T *&fb);
    bool rhs_at_rounding(double rhs_norm, double vmax) const;
    pgpu_status project_u(T *u, const Convergence &cv, pgpu_report &r, pgpu_status &result);
    pgpu_status measure_again(const Convergence &cv, pgpu_report &r, pgpu_status &result, double slack = 0);
};

// Builds everything the handle holds.  With env.mem.counting set it is the
// sizing of pgpu_workspace_size: the same code, allocating nothing and
// skipping every other device call (PGPU_CUDA_SETUP), so what it adds up is
// what pgpu_create allocates.  Whatever a method allocates goes through
// env.mem.alloc in this function (or what it calls), never elsewhere.
// The device's attributes are read unless the caller set them (env.sms > 0:
// a sizing for a device described by hand).
template <class T> pgpu_status Solver<T>::init(const pgpu_config &c)
{
    char *err = env.err;
    cfg = c;
    env.st = (cudaStream_t)c.stream;
    method = method_of(c.flags);
    fixed = (c.flags & PGPU_FIXED) != 0;
    if (env.sms <= 0) {
        PGPU_CUDA(cudaGetDevice(&env.device));
        PGPU_CUDA(cudaDeviceGetAttribute(&env.sms, cudaDevAttrMultiProcessorCount, env.device));
        PGPU_CUDA(cudaDeviceGetAttribute(&env.optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, env.device));
    }
    if (!env.mem.counting) {
        PGPU_FORWARD(smooth_setup<T>(env));
        PGPU_FORWARD(transfer_setup<T>(env));
    }
    mixed = (c.flags & PGPU_PRECISION_MASK) == PGPU_MIXED;
    const bool krylov = is_krylov(method), kmg = krylov && uses_multigrid(c);
    // (dist.h) multigrid on several GPUs: the global hierarchy in slabs,
    // its coarse levels replicated; where the split axis' coarsening cannot
    // be cut so, a Krylov method's cycle stays on the rank's slab.
    std::vector<HostLevel> plan;
    if (env.dist && env.dist->ranks > 1 && uses_multigrid(c) && !mixed) {
        char why[ERR_LEN] = {0};
        if (dist_plan(*env.dist, plan, why)) {
            h.plan = &plan;
            h.dist_levels = env.dist->levels;
            h.global_cfg = env.dist->global;
        } else {
            PGPU_RETURN_IF(!krylov, PGPU_ERROR_UNSUPPORTED, "%s", why);
        }
    }
    PGPU_FORWARD(h.build(env, c, uses_multigrid(c) && !mixed, krylov ? kmg && !mixed : method != PGPU_FFT && !mixed));
    h.plan = nullptr;
    const Level<T> &L0 = h.lv[0];
    // Partials for the largest launch that reduces on level 0.
    size_t most = std::max(blocks_of(L0.col), blocks_of(L0.walk));
    if (h.lv.size() > 1) most = std::max({most, blocks_of(L0.down.it), blocks_of(L0.down.ot)});
    if (mixed) {
        if constexpr (std::is_same<T, double>::value) {
            in.reset(new Inner());
            pgpu_config cf = c;
            cf.flags = (c.flags & ~PGPU_PRECISION_MASK) | PGPU_FLOAT;
            PGPU_FORWARD(in->h.build(env, cf, uses_multigrid(c), method != PGPU_FFT && !(krylov && !kmg), true));
            if (in->h.lv.size() > 1) most = std::max(most, blocks_of(in->h.lv[0].down.it));
            PGPU_FORWARD(env.mem.alloc(err, (void **)&in->d_shift, 2 * sizeof(float), "the residual's mean"));
            PGPU_CUDA_SETUP(env, cudaMemsetAsync(in->d_shift, 0, 2 * sizeof(float), env.st));
        }
    }
    // >>workspace-hook: a method's own level-0 arrays (the Krylov methods'
    // vectors, below) are allocated in this function through env.mem.alloc;
    // any device call other than an allocation goes through
    // PGPU_CUDA_SETUP.  Then pgpu_workspace_size counts them with no change
    // of its own.
    PGPU_FORWARD(red.init(env, most));
    if (env.dist) { // (dist.h) the halo planes and the all-reduced totals
        PGPU_FORWARD(env.mem.alloc(err, &env.dist->halo, (size_t)(4 * env.dist->plane) * sizeof(T), "halo planes"));
        PGPU_FORWARD(env.mem.alloc(err, (void **)&env.dist->d_red, 4 * sizeof(double), "totals to all-reduce"));
        PGPU_CUDA_SETUP(env, cudaMemsetAsync(env.dist->d_red, 0, 4 * sizeof(double), env.st));
        Dist &d = *env.dist;
        d.band_sz = 0;
        const int smoothed = method == PGPU_RBGS ? 1 : h.dist_levels; // the levels dist_smooth runs on
        for (int l = 0; l < (int)d.band.size() && l < smoothed; ++l)
            if (d.band[l]) d.band_sz = std::max<int64_t>(d.band_sz, h.lv[l].g.sz);
        if (d.band_sz)
            PGPU_FORWARD(env.mem.alloc(err, &d.bandbuf, (size_t)(6 * DIST_BAND_L * d.band_sz) * sizeof(T),
                                       "the smoothing bands"));
    }
    // (dist.h) level 0's points are the global problem's from here on (means,
    // norms, and the cycle's choice of its dense level: alike on every rank).
    if (env.dist) h.lv[0].npts = (double)env.dist->global.nx * env.dist->global.ny * env.dist->global.nz;
    if (uses_multigrid(c) && !mixed) PGPU_FORWARD(mg.init(env, h, c, &red));
    symmetric_cycle();
    if (in && uses_multigrid(c)) PGPU_FORWARD(in->mg.init(env, in->h, c, &red));
    if (in && (method == PGPU_FFT || (krylov && c.preconditioner == PGPU_PRECOND_FFT)))
        PGPU_FORWARD(in->fft.init(env, c, in->h.lv[0]));
    PGPU_FORWARD(env.mem.alloc(err, (void **)&d_shift, 2 * sizeof(T), "the right-hand side mean"));
    PGPU_CUDA_SETUP(env, cudaMemsetAsync(d_shift, 0, 2 * sizeof(T), env.st));
    PGPU_CUDA_SETUP(env, cudaEventCreate(&ev0));
    PGPU_CUDA_SETUP(env, cudaEventCreate(&ev1));
    PGPU_CUDA_SETUP(env, cudaEventCreateWithFlags(&scan_ev, cudaEventDisableTiming));
    if ((is_multigrid(method) || krylov) && !env.mem.counting) PGPU_FORWARD(replay.init(env));
    if ((method == PGPU_FFT || (krylov && c.preconditioner == PGPU_PRECOND_FFT)) && !mixed)
        PGPU_FORWARD(fft.init(env, c, L0));
    // (>>workspace-hook) the Krylov methods' vectors, partials and scalars
    if (krylov) PGPU_FORWARD(kry.init(env, h, &mg, &fft, &replay, &red, c));
    if (krylov && in) kry.fp = FloatPrecond{&in->h, &in->mg, &in->fft, in->d_shift};
    if (env.dist) {
        // (dist.h) means and singularity are the global problem's: the
        // slab's interface faces are Dirichlet only to its own cycle.
        const pgpu_config &gc = env.dist->global;
        const int nfaces = gc.nz > 1 ? 6 : 4;
        bool singular = true;
        for (int fc = 0; fc < nfaces; ++fc)
            if (gc.bc[fc] == PGPU_BC_DIRICHLET) singular = false;
        h.singular = h.singular_box = singular;
    }
    PGPU_CUDA_SETUP(env, cudaDeviceSynchronize());
    return PGPU_SUCCESS;
}

// Scan f and the boundary data: the device mean (shift) and, on the host
// once scan_ev has passed, the sums: finite?  ||b|| (centred when singular).
template <class T> pgpu_status Solver<T>::scan_launch(const T *u, const T *f)
{
    char *err = env.err;
    const Level<T> &L = h.lv[0];
    const ColLaunch &c = L.col;
    const Grid<T> g = rhs_grid(env, L.g); // (dist.h) the faces between ranks hold no boundary data
    launch(c, 0, env.st, scan_rhs_kernel<T>, g, u, f, (const T *)d_shift, 0, red.d_part);
    PGPU_LAUNCHED();
    PGPU_FORWARD(red.total<T>(env, blocks_of(c), RES_SCAN, FINAL_SHIFT, L.npts, h.singular, d_shift));
    if (h.singular) { // ||b - mean||, summed again rather than by the cancelling formula
        launch(c, 0, env.st, scan_rhs_kernel<T>, g, u, f, (const T *)d_shift, 1, red.d_part);
        PGPU_LAUNCHED();
        PGPU_FORWARD(red.total<T>(env, blocks_of(c), RES_CENTRED));
    }
    PGPU_CUDA(cudaMemcpyAsync(red.h_res + RES_SCAN, red.d_res + RES_SCAN, 6 * sizeof(double), cudaMemcpyDeviceToHost,
                              env.st));
    PGPU_CUDA(cudaEventRecord(scan_ev, env.st));
    return PGPU_SUCCESS;
}

static pgpu_status nonfinite_input(char *err)
{
    return record(err, PGPU_ERROR_NONFINITE_INPUT,
                  "f or the boundary data in u's ghost layer hold NaN or Inf; u is unchanged");
}

// The range check on max |b| (scale); the low end only where `low`.
template <class T> pgpu_status Solver<T>::check_range(double scale, bool low)
{
    char *err = env.err;
    PGPU_RETURN_IF((std::isfinite(scale) && scale > RHS_MAX) || (low && scale > 0 && scale < RHS_MIN),
                   PGPU_ERROR_UNSUPPORTED,
                   "the right-hand side's largest magnitude (f and the boundary terms) is %g, outside %g .. %g, "
                   "where its norm in double would underflow or overflow: scale f and the boundary data; u is "
                   "unchanged", scale, RHS_MIN, RHS_MAX);
    return PGPU_SUCCESS;
}

// The scan's sums: finite?  ||b||; and the range check on max |b|, its low
// end only where no mask's singular regions were projected (project_rhs
// leaves rounding there: pgpu_solve checks the low end with the
// projection's maximum, pgpu_residual and the one-pass FMG do not).
template <class T> pgpu_status Solver<T>::scan_read(double &rhs_norm, bool &finite)
{
    char *err = env.err;
    PGPU_CUDA(cudaEventSynchronize(scan_ev));
    finite = std::isfinite(red.h_res[RES_SCAN]) && std::isfinite(red.h_res[RES_SCAN + 1]);
    rhs_norm = std::sqrt(red.h_res[(h.singular ? RES_CENTRED : RES_SCAN) + 1]);
    return check_range(red.h_res[RES_SCAN + 2], !(h.gen.mask && h.gen.regions));
}

template <class T> pgpu_status Solver<T>::scan(const T *u, const T *f, bool readback, double &rhs_norm, bool &finite)
{
    PGPU_FORWARD(scan_launch(u, f));
    rhs_norm = NAN;
    finite = true;
    return readback ? scan_read(rhs_norm, finite) : PGPU_SUCCESS;
}

// u -= mean(u) over the interior (singular problems).
template <class T> pgpu_status Solver<T>::remove_mean(T *u)
{
    const Level<T> &L = h.lv[0];
    return subtract_mean(env, red, L.g, L.col, u, L.npts);
}

// The method, then, where the problem is singular, the mean taken out of u.
// NOT_CONVERGED and BREAKDOWN leave u as reached and are returned after
// that; other errors at once.
template <class T> pgpu_status Solver<T>::run_method(T *u, const T *f, double rhs_norm, pgpu_report &r)
{
    h.bind(u, f, d_shift);
    if (mixed && !is_krylov(method)) {
        const pgpu_status result = run_mixed(u, f, rhs_norm, r);
        if (result != PGPU_SUCCESS && result != PGPU_ERROR_NOT_CONVERGED && result != PGPU_ERROR_BREAKDOWN)
            return result;
        if (h.singular) PGPU_FORWARD(remove_mean(u));
        return result;
    }
    Convergence cv;
    cv.rule = rule;
    cv.rhs_norm = rhs_norm;
    cv.floor = float_residual_floor(env.dist ? env.dist->global : cfg);
    cv.tol = cv.own() ? float_own_tolerance(cv.floor) : cfg.tolerance;
    cv.lmax = lambda_max_bound(cfg) * (h.gen.on() ? h.gen.beta_hi : 1.0);
    cv.max_it = cfg.max_iterations;
    cv.monitor = monitor;
    cv.user = monitor_user;
    pgpu_status result;
    switch (method) {
    case PGPU_JACOBI:
    case PGPU_RBGS:
        result = run_stationary(env, red, h, cv, method == PGPU_JACOBI, (T)cfg.omega, fixed, cfg.check_interval, r);
        break;
    case PGPU_VCYCLE:
    case PGPU_FMG:
        result = run_multigrid(env, red, h, mg, cv, method == PGPU_FMG, fixed, cfg.check_interval, r, &replay);
        break;
    case PGPU_CG:
    case PGPU_BICGSTAB: result = kry.run(u, f, d_shift, cv, fixed, cfg.check_interval, r); break;
    default: result = fft.run(u, f, d_shift); break;
    }
    if (result != PGPU_SUCCESS && result != PGPU_ERROR_NOT_CONVERGED && result != PGPU_ERROR_BREAKDOWN)
        return result;
    if (h.singular && (method != PGPU_FFT || fft.line_solve())) {
        // The report describes the u returned; in float, u - mean rounds u
        // anew, by about its floor, which is not counted against the tolerance.
        PGPU_FORWARD(remove_mean(u));
        if (h.gen.on()) PGPU_FORWARD(measure_again(cv, r, result));
        else if (std::is_same<T, float>::value) PGPU_FORWARD(measure_again(cv, r, result, FLOAT_OWN_SLACK * cv.floor));
    }
    if (h.gen.mask && h.gen.regions) PGPU_FORWARD(project_u(u, cv, r, result));
    return result;
}

// PGPU_MIXED: iterative refinement.  Each step forms the residual of u in
// double and rounds it into the float problem's right-hand side (with its
// norm, the convergence test, and its mean, the float problem's shift when
// singular, in the same pass), solves A e = r in float from zero -- a float
// FFT solve (FFT), else an FMG pass the first time and MIXED_CYCLES V-cycles
// after -- and adds e to u in double.  The float problem's ghosts are zero:
// the boundary data stay in the double residual.  FMG and FFT start from u =
// 0 (they ignore the initial guess); V-cycles from the caller's u.
template <class T> pgpu_status Solver<T>::run_mixed(T *u, const T *f, double rhs_norm, pgpu_report &r)
{
    if constexpr (!std::is_same<T, double>::value) {
        (void)u, (void)f, (void)rhs_norm, (void)r;
        return record(env.err, PGPU_ERROR_UNSUPPORTED, "PGPU_MIXED takes double arrays");
    } else {
        char *err = env.err;
        const Level<T> &L = h.lv[0];
        Level<float> &E = in->h.lv[0];
        if (method != PGPU_VCYCLE) // FMG and FFT ignore the initial guess
            PGPU_FORWARD(axpby(env, L.g, L.col, 0.0, 0.0, (const T *)nullptr, 0.0, (const T *)nullptr, u));
        Convergence cv;
        cv.rhs_norm = rhs_norm;
        cv.tol = cfg.tolerance;
        cv.max_it = cfg.max_iterations;
        cv.monitor = monitor;
        cv.user = monitor_user;
        const char *what = method == PGPU_FFT ? "FFT (mixed)" : "multigrid (mixed)";
        pgpu_status result = PGPU_SUCCESS;
        int steps = 0, cycles = 0;
        for (;;) {
            // r = f - shift - A u, in double, rounded into E.f; its norm and mean.
            walk_masked(L.g, [&](auto mk) {
                launch(L.rwalk, 0, env.st, residual_kernel<T, true, true, float, decltype(mk)::value>, L.g, (const T *)u, f,
                       (const T *)d_shift, E.f, red.d_part);
            });
            PGPU_LAUNCHED();
            PGPU_FORWARD(red.total<float>(env, blocks_of(L.rwalk), RES_NORM, FINAL_SHIFT, L.npts, h.singular,
                                          in->d_shift));
            if (fixed) {
                if (steps == cv.max_it) break;
            } else {
                PGPU_FORWARD(red.fetch(env, RES_NORM, 3));
                bool stop = false;
                cv.judge(err, std::sqrt(red.h_res[RES_NORM + 1]), red.h_res[RES_NORM + 2], steps, what,
                         "refinement steps", r, stop, result);
                if (stop) break;
            }
            // e = A^-1 (r - mean) in float, from zero.
            in->h.bind(E.u, E.f, in->d_shift);
            PGPU_FORWARD(axpby(env, E.g, E.col, 0.0f, 0.0f, (const float *)nullptr, 0.0f, (const float *)nullptr, E.u));
            if (method == PGPU_FFT) {
                PGPU_FORWARD(in->fft.run(E.u, E.f, in->d_shift));
            } else if (steps == 0) {
                int none = 0;
                PGPU_FORWARD(replay.run(env, E.u, E.f, REPLAY_FMG, none, [&] { return in->mg.fmg_pass(); }));
            } else {
                for (int k = 0; k < MIXED_CYCLES; ++k) {
                    int none = 0;
                    PGPU_FORWARD(replay.run(env, E.u, E.f, REPLAY_CYCLE, none, [&] { return in->mg.cycle(0); }));
                }
                cycles += MIXED_CYCLES;
            }
            // u += e, in double.
            PGPU_FORWARD(axpby(env, L.g, L.col, 0.0, 1.0, (const float *)E.iter(), 1.0, (const T *)u, u));
            ++steps;
        }
        r.iterations = cycles;
        r.refinements = steps;
        return result;
    }
}

// A PGPU_FIXED solve: every launch on the stream, nothing waited for (the
// mean of a singular right-hand side is scanned on the device).
template <class T> pgpu_status Solver<T>::fixed_launches(T *u, const T *f, pgpu_report &r)
{
    double rhs_norm = NAN;
    bool finite = true;
    PGPU_FORWARD(project_rhs(u, f, f));
    if (h.singular && (mixed || method != PGPU_FFT || fft.line_solve())) PGPU_FORWARD(scan(u, f, false, rhs_norm, finite));
    return run_method(u, f, rhs_norm, r);
}

template <class T> pgpu_status Solver<T>::check_arrays(const void *u, const void *f)
{
    char *err = env.err;
    PGPU_RETURN_IF(!u, PGPU_ERROR_INVALID_ARGUMENT, "u is NULL");
    PGPU_RETURN_IF(!f, PGPU_ERROR_INVALID_ARGUMENT, "f is NULL");
    PGPU_RETURN_IF((uintptr_t)u % sizeof(T) || (uintptr_t)f % sizeof(T), PGPU_ERROR_INVALID_ARGUMENT,
                   "u and f must be aligned to their element size (%zu bytes)", sizeof(T));
    const uintptr_t bytes = (uintptr_t)h.lv[0].elems * sizeof(T);
    const uintptr_t a = (uintptr_t)u, b = (uintptr_t)f;
    PGPU_RETURN_IF(a < b + bytes && b < a + bytes, PGPU_ERROR_INVALID_ARGUMENT,
                   "u and f overlap (each spans %zu bytes)", (size_t)bytes);
    const void *ptr[2] = {u, f};
    for (int k = 0; k < 2; ++k) {
        cudaPointerAttributes at;
        cudaError_t e = cudaPointerGetAttributes(&at, ptr[k]);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return record(err, PGPU_ERROR_INVALID_ARGUMENT, "%s is not a pointer the CUDA runtime knows (%s)",
                          k ? "f" : "u", cudaGetErrorString(e));
        }
        const bool ok =
            at.type == cudaMemoryTypeManaged || (at.type == cudaMemoryTypeDevice && at.device == env.device);
        PGPU_RETURN_IF(!ok, PGPU_ERROR_INVALID_ARGUMENT,
                       "%s is not device memory of device %d (pgpu_solve takes device pointers; use "
                       "pgpu_solve_host for host arrays)", k ? "f" : "u", env.device);
    }
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Solver<T>::solve(void *uv, const void *fv, pgpu_report *rep)
{
    char *err = env.err;
    pgpu_report r;
    r.iterations = 0;
    r.residual_norm = r.residual_max = r.relative_residual = r.rhs_norm = r.seconds = NAN;
    r.status = PGPU_SUCCESS;
    r.singular = h.singular || (h.gen.mask && h.gen.regions);
    r.projected = h.gen.mask ? (int)h.gen.regions : h.singular ? 1 : 0;
    r.rhs_mean = 0;
    r.refinements = 0;
    err[0] = 0;
    auto finish = [&](pgpu_status s) {
        r.status = s;
        if (rep) *rep = r;
        return s;
    };
    DeviceGuard guard(env.device);
    if (guard.status != cudaSuccess) return finish(cuda_status(err, guard.status, "cudaSetDevice", PGPU_AT));
    PGPU_FORWARD(finish(check_arrays(uv, fv)));
    T *u = (T *)uv;
    const T *f = (const T *)fv;
    if (fixed) {
        if (r.singular) r.rhs_mean = NAN; // computed on the device, not read back
        if (!is_multigrid(method)) return finish(fixed_launches(u, f, r));
        return finish(replay.run(env, u, f, REPLAY_SOLVE, r.iterations, [&] { return fixed_launches(u, f, r); }));
    }
    PGPU_CUDA(cudaEventRecord(ev0, env.st));
    PGPU_FORWARD(finish(project_rhs(u, f, f)));
    if (method == PGPU_FMG && rule == Stop::ONCE) {
        const pgpu_status st = solve_fmg_pass(u, f, r);
        if (h.gen.mask && h.gen.regions) r.rhs_mean = NAN;
        double vmax = 0;
        if (st == PGPU_SUCCESS && h.gen.mask && h.gen.regions == 1)
            PGPU_FORWARD(finish(read_projection(vmax, r.rhs_mean)));
        return finish(st);
    }
    if (method == PGPU_FFT && !mixed && fft.folds_checks()) {
        bool folded = true;
        const pgpu_status st = solve_folded(u, f, r, folded);
        if (folded) return finish(st);
    }
    // 1. The right-hand side: finite?  its norm, and its mean when singular.
    double rhs_norm = NAN;
    bool finite = true;
    PGPU_FORWARD(finish(scan(u, f, true, rhs_norm, finite)));
    if (!finite)
        return finish(nonfinite_input(err));
    r.rhs_norm = rhs_norm;
    r.rhs_mean = h.singular ? red.h_res[RES_SCAN] / h.lv[0].npts : 0.0;
    bool zero = rhs_norm == 0;
    if (h.gen.mask && h.gen.regions) {
        double vmax = 0, first = 0;
        PGPU_FORWARD(finish(read_projection(vmax, first)));
        PGPU_FORWARD(finish(check_range(std::max(red.h_res[RES_SCAN + 2], vmax), true)));
        r.rhs_mean = h.gen.regions == 1 ? first : NAN;
        zero = zero || rhs_at_rounding(rhs_norm, vmax);
    }
    if (zero) { // b = 0, or 0 but for the projection's rounding: the solution is 0
        const Level<T> &L = h.lv[0];
        PGPU_FORWARD(finish(axpby(env, L.g, L.col, T(0), T(0), (const T *)nullptr, T(0), (const T *)nullptr, u)));
        r.residual_norm = r.residual_max = r.relative_residual = 0;
        if (rhs_norm > 0) { // what is left is that rounding: measured
            double rn = 0, rmax = 0;
            PGPU_FORWARD(finish(residual_norm(env, red, L.g, L.rwalk, (const T *)u, f, (const T *)d_shift, rn, rmax)));
            Convergence cv;
            cv.rhs_norm = rhs_norm;
            cv.measured(rn, rmax, r);
        }
        PGPU_CUDA(cudaStreamSynchronize(env.st));
        r.seconds = 0;
        return finish(PGPU_SUCCESS);
    }
    // 2. The method.
    pgpu_status result = run_method(u, f, rhs_norm, r);
    if (result != PGPU_SUCCESS && result != PGPU_ERROR_NOT_CONVERGED && result != PGPU_ERROR_BREAKDOWN)
        return finish(result);
    if (method == PGPU_FFT) {
        double rn = 0, rmax = 0;
        const Level<T> &L = h.lv[0];
        PGPU_FORWARD(finish(residual_norm(env, red, L.g, L.rwalk, (const T *)u, f, (const T *)d_shift, rn, rmax)));
        Convergence cv;
        cv.rhs_norm = rhs_norm;
        cv.measured(rn, rmax, r);
        if (!std::isfinite(rn)) result = record(err, PGPU_ERROR_BREAKDOWN, "FFT: the residual is %g", rn);
    }
    PGPU_CUDA(cudaEventRecord(ev1, env.st));
    PGPU_CUDA(cudaEventSynchronize(ev1));
    float ms = 0;
    PGPU_CUDA(cudaEventElapsedTime(&ms, ev0, ev1));
    r.seconds = ms * 1e-3;
    return finish(result);
}

// The default FMG solve, one pass: the scan, the pass's coarse levels
// (workspace only) while the host waits for the scan's sums, then -- f and
// the boundary data finite -- level 0 and the report's residual norm, each
// part replayed as a graph.  The scan's host round trip hides behind the
// coarse levels, and u is written only once f is known to be finite.
template <class T> pgpu_status Solver<T>::solve_fmg_pass(T *u, const T *f, pgpu_report &r)
{
    char *err = env.err;
    PGPU_FORWARD(scan_launch(u, f));
    h.bind(u, f, d_shift);
    Level<T> &L = h.lv[0];
    PGPU_FORWARD(frame(env, L.g, (const T *)L.u, L.t, L.x, h.data_faces));
    int none = 0;
    PGPU_FORWARD(replay.run(env, u, f, REPLAY_FMG_COARSE, none, [&] { return mg.fmg_coarse(); }));
    double rhs_norm = NAN;
    bool finite = true;
    PGPU_FORWARD(scan_read(rhs_norm, finite));
    if (!finite || rhs_norm == 0) PGPU_CUDA(cudaStreamSynchronize(env.st)); // the coarse levels' work is moot
    if (!finite)
        return nonfinite_input(err);
    r.rhs_norm = rhs_norm;
    r.rhs_mean = h.singular ? red.h_res[RES_SCAN] / L.npts : 0.0;
    if (rhs_norm == 0) { // b = 0: the solution is 0
        PGPU_FORWARD(axpby(env, L.g, L.col, T(0), T(0), (const T *)nullptr, T(0), (const T *)nullptr, u));
        PGPU_CUDA(cudaStreamSynchronize(env.st));
        r.residual_norm = r.residual_max = r.relative_residual = 0;
        r.seconds = 0;
        return PGPU_SUCCESS;
    }
    // With a mask the pass alone leaves an error of about 3e-3 of max |u|
    // near solid cells (a sphere at 256^3, double: 3.2e-3 against V-cycles
    // to 1e-12; the box's pass 6e-7), and 1e-4 to 2e-4 near held points (a
    // sphere of Dirichlet cells, 63^3 to 512^3, against 2e-5 to 3e-7
    // converged): FMG_MASK_CYCLES V-cycles follow it there (solid cells:
    // 1.3e-4 after one, 3.5e-6 after two; held points: the converged error,
    // to 1.0 times at 63^3 to 256^3 and 1.36 at 512^3).  In float the cycles
    // after it run under float's own stop instead (the V-cycles' rule, the
    // true residual confirming it): two fixed cycles left 1e-2 to 1e-1 of
    // max |u| on small masks where float V-cycles reach 1e-6.  Where beta
    // jumps the pass is no accurate solve (the 1e3 ball, 64^3 to 128^3: 2-3%
    // of max |u| from the solution, relative residual 12; the 1e6 one 2-8
    // times max |u|): V-cycles follow it to FMG_JUMP_TOL in double, to
    // float's own stop in float, which they may not reach (NOT_CONVERGED,
    // not a wrong SUCCESS).
    // Those cycles must converge, which they do not on every mask (the
    // header's list), and must leave no error that the residual hides:
    // where they leave more than FMG_MASK_FALL of the pass's residual (its
    // norm in RES_CORR) or a relative residual above FMG_MASK_RES, and more
    // than FMG_JUMP_TOL of b, V-cycles go on to FMG_JUMP_TOL, so that a
    // stall or a divergence ends in NOT_CONVERGED or BREAKDOWN, not in
    // SUCCESS with what the pass left.
    const bool flt = std::is_same<T, float>::value;
    const bool own_stop = flt && (h.gen.mask || h.gen.jump);
    double after_tol = !flt && h.gen.jump ? FMG_JUMP_TOL : 0.0;
    const int extra = h.gen.mask && !own_stop && after_tol == 0 ? FMG_MASK_CYCLES : 0;
    PGPU_FORWARD(replay.run(env, u, f, REPLAY_FMG_FINISH, none, [&] {
        PGPU_FORWARD(mg.fmg_finish());
        if (extra) PGPU_FORWARD(h.norm_launch(env, red, RES_CORR));
        for (int k = 0; k < extra; ++k) PGPU_FORWARD(mg.cycle(0));
        return h.norm_launch(env, red);
    }));
    static_assert(RES_CORR > RES_NORM, "one fetch takes both");
    PGPU_FORWARD(red.fetch(env, RES_NORM, extra ? RES_CORR + 3 - RES_NORM : 3));
    Convergence cv;
    cv.rule = Stop::ONCE; // (the cycles after the pass, where they run, take their own rule)
    cv.rhs_norm = rhs_norm;
    cv.measured(std::sqrt(red.h_res[RES_NORM + 1]), red.h_res[RES_NORM + 2], r);
    pgpu_status result = PGPU_SUCCESS;
    if (!std::isfinite(r.residual_norm))
        result = record(err, PGPU_ERROR_BREAKDOWN, "FMG: the residual became %g", r.residual_norm);
    else if (extra &&
             !(r.residual_norm <= FMG_MASK_FALL * std::sqrt(red.h_res[RES_CORR + 1]) &&
               r.residual_norm <= FMG_MASK_RES * rhs_norm) &&
             r.residual_norm > FMG_JUMP_TOL * rhs_norm)
        after_tol = FMG_JUMP_TOL;
    r.iterations = extra;
    PGPU_FORWARD(h.settle(env));
    if ((own_stop || after_tol > 0) && result == PGPU_SUCCESS) {
        cv.rule = after_tol > 0 ? Stop::TOLERANCE : Stop::FLOAT_OWN;
        cv.floor = float_residual_floor(cfg);
        cv.tol = cv.own() ? float_own_tolerance(cv.floor) : after_tol;
        cv.lmax = lambda_max_bound(cfg) * h.gen.beta_hi;
        cv.max_it = cfg.max_iterations;
        cv.monitor = monitor;
        cv.user = monitor_user;
        result = run_multigrid(env, red, h, mg, cv, false, false, cfg.check_interval, r, &replay);
        if (result != PGPU_SUCCESS && result != PGPU_ERROR_NOT_CONVERGED && result != PGPU_ERROR_BREAKDOWN)
            return result;
    }
    if (h.singular) {
        PGPU_FORWARD(remove_mean(u));
        if (h.gen.on()) PGPU_FORWARD(measure_again(cv, r, result));
    }
    if (h.gen.mask && h.gen.regions && result == PGPU_SUCCESS) PGPU_FORWARD(project_u(u, cv, r, result));
    PGPU_CUDA(cudaEventRecord(ev1, env.st));
    PGPU_CUDA(cudaEventSynchronize(ev1));
    float ms = 0;
    PGPU_CUDA(cudaEventElapsedTime(&ms, ev0, ev1));
    r.seconds = ms * 1e-3;
    return result;
}

// The FFT's one-launch route (FftSolver::folds_checks): the scan, the guard
// that keeps u untouched on bad data and the report's residual run inside
// the solve's launch; one read-back, then the same verdicts as the steps
// of solve() in the same order (range, finite).
template <class T> pgpu_status Solver<T>::solve_folded(T *u, const T *f, pgpu_report &r, bool &folded)
{
    char *err = env.err;
    // (the totals straight into the pinned host buffer where the device
    // can address it: no copy to wait for)
    PGPU_FORWARD(fft.run_checked(u, f, red.h_res_dev ? red.h_res_dev : red.d_res));
    folded = fft.folds_checks();
    if (!folded) return PGPU_SUCCESS; // the device refused the one launch: solve()'s steps instead
    if (!red.h_res_dev)
        PGPU_CUDA(cudaMemcpyAsync(red.h_res, red.d_res, (RES_NORM + 3) * sizeof(double), cudaMemcpyDeviceToHost,
                                  env.st));
    PGPU_CUDA(cudaEventRecord(ev1, env.st));
    PGPU_CUDA(cudaEventSynchronize(ev1));
    const double *sc = red.h_res + RES_SCAN, *rs = red.h_res + RES_NORM;
    PGPU_FORWARD(check_range(sc[2], true));
    if (!std::isfinite(sc[0]) || !std::isfinite(sc[1])) return nonfinite_input(err);
    r.rhs_norm = std::sqrt(sc[1]);
    if (sc[1] == 0) { // b = 0: u = 0, reported as solve() reports it
        r.residual_norm = r.residual_max = r.relative_residual = 0;
        r.seconds = 0;
        return PGPU_SUCCESS;
    }
    Convergence cv;
    cv.rhs_norm = r.rhs_norm;
    cv.measured(std::sqrt(rs[1]), rs[2], r);
    float ms = 0;
    PGPU_CUDA(cudaEventElapsedTime(&ms, ev0, ev1));
    r.seconds = ms * 1e-3;
    if (!std::isfinite(r.residual_norm))
        return record(err, PGPU_ERROR_BREAKDOWN, "FFT: the residual is %g", r.residual_norm);
    return PGPU_SUCCESS;
}

// Later work goes to st, ordered after everything the handle queued on the
// old stream (an event, no host wait).
template <class T> pgpu_status Solver<T>::set_stream(cudaStream_t st)
{
    char *err = env.err;
    err[0] = 0;
    DeviceGuard guard(env.device);
    if (guard.status != cudaSuccess) return cuda_status(err, guard.status, "cudaSetDevice", PGPU_AT);
    if (st == env.st) return PGPU_SUCCESS;
    PGPU_CUDA(cudaEventRecord(ev1, env.st));
    PGPU_CUDA(cudaStreamWaitEvent(st, ev1, 0));
    PGPU_FORWARD(fft.set_stream(err, st));
    if (in) PGPU_FORWARD(in->fft.set_stream(err, st));
    env.st = st;
    cfg.stream = (struct CUstream_st *)st;
    return PGPU_SUCCESS;
}

// Pipelined CG needs a symmetric cycle, and classic CG takes it where beta
// varies or a mask is set; otherwise classic CG and BiCGStab take the
// standard one (krylov.h's head says why).  A solve by cycles alone of a
// singular problem in the general form keeps the coarse corrections'
// constant out (Multigrid::centre; never in a preconditioner).
template <class T> void Solver<T>::symmetric_cycle()
{
    const bool kmg = is_krylov(method) && cfg.preconditioner == PGPU_PRECOND_VCYCLE;
    mg.post_flip = kmg && ((cfg.flags & PGPU_PIPELINED) || (method == PGPU_CG && h.gen.on())) ? 1 : 0;
    mg.centre = !is_krylov(method) && h.singular && h.gen.on() && !env.dist;
}

// pgpu_set_mask (is_mask) and pgpu_set_coefficients: check the data (one
// wait for the stream), then copy it, rebuild the coarse levels and the
// regions on the device, and put the form into every level's grid.
template <class T> pgpu_status Solver<T>::set_general(const uint8_t *mask, const void *beta, bool is_mask)
{
    char *err = env.err;
    err[0] = 0;
    const char *what = is_mask ? "pgpu_set_mask" : "pgpu_set_coefficients";
    PGPU_RETURN_IF(method == PGPU_FFT || mixed, PGPU_ERROR_UNSUPPORTED,
                   "%s: masks and coefficients are served by every method but FFT, and not with MIXED", what);
    PGPU_RETURN_IF(env.dist != nullptr, PGPU_ERROR_UNSUPPORTED,
                   "%s: masks and coefficients are not served yet on several GPUs", what);
    DeviceGuard guard(env.device);
    if (guard.status != cudaSuccess) return cuda_status(err, guard.status, "cudaSetDevice", PGPU_AT);
    const void *data = is_mask ? (const void *)mask : beta;
    if (data) {
        cudaPointerAttributes at;
        cudaError_t e = cudaPointerGetAttributes(&at, data);
        if (e != cudaSuccess) cudaGetLastError();
        const bool ok = e == cudaSuccess && (at.type == cudaMemoryTypeManaged ||
                                             (at.type == cudaMemoryTypeDevice && at.device == env.device));
        PGPU_RETURN_IF(!ok, PGPU_ERROR_INVALID_ARGUMENT, "%s: the %s is not device memory of device %d", what,
                       is_mask ? "mask" : "coefficient array", env.device);
        PGPU_RETURN_IF(!is_mask && (uintptr_t)beta % sizeof(T), PGPU_ERROR_INVALID_ARGUMENT,
                       "%s: beta must be aligned to its element size (%zu bytes)", what, sizeof(T));
        PGPU_FORWARD(h.general_alloc(env, is_mask, !is_mask));
    }
    General<T> &G = h.gen;
    Level<T> &L = h.lv[0];
    Grid<T> g0 = L.g; // the interior geometry of level 0, for the checks
    g0.gen = 0;
    g0.mk = nullptr;
    const unsigned blocks = grid_for((int64_t)L.npts, env.sms);
    unsigned checked = 0; // the check's flags
    bool beta_jump = false;
    double beta_hi = 1;
    if (data) {
        PGPU_CUDA(cudaMemsetAsync(G.flags, 0, sizeof(unsigned), env.st));
        PGPU_CUDA(cudaMemsetAsync(G.range, 0xff, sizeof(unsigned long long), env.st)); // smallest: above all
        PGPU_CUDA(cudaMemsetAsync(G.range + 1, 0, sizeof(unsigned long long), env.st));
        gen_check_kernel<T, true><<<blocks, 256, 0, env.st>>>(g0, is_mask ? mask : nullptr,
                                                              is_mask ? nullptr : (const T *)beta, G.flags, G.spare,
                                                              is_mask ? G.near_bits : nullptr,
                                                              is_mask ? nullptr : G.range);
        PGPU_LAUNCHED();
        unsigned flags = 0;
        unsigned long long range[2] = {0, 0};
        PGPU_CUDA(cudaMemcpyAsync(&flags, G.flags, sizeof(unsigned), cudaMemcpyDeviceToHost, env.st));
        PGPU_CUDA(cudaMemcpyAsync(range, G.range, sizeof range, cudaMemcpyDeviceToHost, env.st));
        PGPU_CUDA(cudaStreamSynchronize(env.st));
        checked = flags;
        if (!is_mask) {
            double lo, hi;
            std::memcpy(&lo, &range[0], sizeof lo);
            std::memcpy(&hi, &range[1], sizeof hi);
            beta_jump = hi > JUMP_RATIO * lo;
            beta_hi = hi;
        }
        if (is_mask && ((flags & GEN_BAD_TYPE) || !(flags & GEN_FLUID))) // the near tiles' marks of a refused mask
            PGPU_CUDA(cudaMemsetAsync(G.near_bits, 0, (size_t)G.near_words * sizeof(uint32_t), env.st));
        PGPU_RETURN_IF(flags & GEN_BAD_TYPE, PGPU_ERROR_INVALID_ARGUMENT,
                       "%s: a mask byte is not PGPU_CELL_FLUID, _DIRICHLET or _SOLID; the handle keeps its data", what);
        PGPU_RETURN_IF(is_mask && !(flags & GEN_FLUID), PGPU_ERROR_INVALID_ARGUMENT,
                       "%s: the mask has no fluid point; the handle keeps its data", what);
        PGPU_RETURN_IF(flags & GEN_BAD_BETA, PGPU_ERROR_INVALID_ARGUMENT,
                       "%s: beta must be positive and finite at every interior point; the handle keeps its data", what);
        if ((is_mask ? G.beta && G.jump : beta_jump) && uses_multigrid(cfg)) PGPU_FORWARD(h.galerkin_alloc(env));
    } else {
        PGPU_CUDA(cudaStreamSynchronize(env.st)); // the levels' tables change below
    }
    if (is_mask && mask) std::swap(G.mk[0], G.spare); // checked: the new mask
    if (is_mask) G.mask = mask != nullptr;
    else G.beta = beta != nullptr;
    if (is_mask && mask) G.held = (checked & GEN_HELD) != 0;
    if (!is_mask && beta) G.narrow = !(checked & GEN_WIDE_BETA);
    if (!is_mask) G.jump = beta && beta_jump;
    if (!is_mask) G.beta_hi = beta ? beta_hi : 1.0;
    h.shut_ok = !is_krylov(method);
    const bool changed = h.general_apply(env);
    symmetric_cycle();
    if (!is_mask && beta) {
        gen_fractions_kernel<T><<<blocks, 256, 0, env.st>>>(L.g, (const T *)beta, G.fr[0][0], G.fr[1][0], G.fr[2][0],
                                                              G.narrow && G.bw ? G.bw : nullptr);
        PGPU_LAUNCHED();
    }
    // The regions go to the second stream, beside the coarse build (they
    // share only level 0's mask, which both read): forked before the build,
    // joined after it (the solver's stream waits for them).
    if (is_mask && mask) {
        PGPU_CUDA(cudaEventRecord(G.fork, env.st));
        PGPU_CUDA(cudaStreamWaitEvent(G.side, G.fork, 0));
    }
    if (G.on()) PGPU_FORWARD(h.general_build(env));
    // Coarse iterates may hold values of earlier solves where points are no
    // longer unknowns: start them from zero (beside the regions, before the
    // join).
    for (size_t l = 1; l < h.lv.size(); ++l) {
        const size_t n = (size_t)h.lv[l].elems * sizeof(T);
        PGPU_CUDA(cudaMemsetAsync(h.lv[l].u, 0, n, env.st));
        PGPU_CUDA(cudaMemsetAsync(h.lv[l].t, 0, n, env.st));
    }
    if (is_mask && mask) {
        cudaStream_t rs = G.side;
        PGPU_CUDA(cudaMemsetAsync(G.count, 0, sizeof(uint32_t), rs));
        PGPU_CUDA(cudaMemsetAsync(G.sizes, 0, (size_t)G.cap * sizeof(uint32_t), rs));
        uint32_t *roots = G.bits, *touch = G.bits + G.bit_words, *full = touch + G.bit_words;
        PGPU_CUDA(cudaMemsetAsync(G.bits, 0, ((size_t)G.bit_words * 2 + G.tile_words) * sizeof(uint32_t), rs));
        const unsigned tiles = rg_tiles(L.g);
        const FastDiv tdx((uint32_t)(L.g.nx + RG_TX - 1) / RG_TX), tdy((uint32_t)(L.g.ny + RG_TY - 1) / RG_TY);
        if (L.g.is3d)
            gen_regions_tile_kernel<T, RG_TZ_3D>
                <<<tiles, dim3(RG_TX, RG_TY), 0, rs>>>(L.g, G.lab, roots, full, touch, tdx, tdy);
        else
            gen_regions_tile_kernel<T, 1>
                <<<tiles, dim3(RG_TX, RG_TY), 0, rs>>>(L.g, G.lab, roots, full, touch, tdx, tdy);
        PGPU_LAUNCHED();
        if (checked & GEN_HELD) {
            gen_regions_touch_kernel<T><<<blocks, 256, 0, rs>>>(L.g, G.lab, full, touch);
            PGPU_LAUNCHED();
        }
        gen_regions_link_kernel<T><<<dim3(blocks, 3), 256, 0, rs>>>(L.g, G.lab, full);
        PGPU_LAUNCHED();
        gen_near_list_kernel<<<1, 1024, 0, rs>>>(G.near_bits, G.near_words, G.near_list, G.near_count);
        PGPU_LAUNCHED();
        const unsigned wblocks = grid_for((int64_t)G.bit_words, env.sms);
        for (int stage = 0; stage < 2; ++stage) {
            gen_regions_roots_kernel<<<wblocks, 256, 0, rs>>>(G.lab, roots, touch, G.bit_words, stage, G.count, G.cap,
                                                             G.flags);
            PGPU_LAUNCHED();
        }
        gen_regions_final_kernel<T><<<blocks, 256, 0, rs>>>(L.g, G.lab, full, G.sizes, G.count);
        PGPU_LAUNCHED();
        PGPU_CUDA(cudaEventRecord(G.join, rs));
        PGPU_CUDA(cudaStreamWaitEvent(env.st, G.join, 0));
    }
    if (is_mask) {
        G.regions = 0;
        if (mask) {
            uint32_t counts[2] = {0, 0}; // the singular regions, the near tiles
            unsigned flags = 0;
            PGPU_CUDA(cudaMemcpyAsync(counts, G.count, sizeof(counts), cudaMemcpyDeviceToHost, env.st));
            const uint32_t count = counts[0];
            G.near = counts[1];
            PGPU_CUDA(cudaMemcpyAsync(&flags, G.flags, sizeof(flags), cudaMemcpyDeviceToHost, env.st));
            PGPU_CUDA(cudaStreamSynchronize(env.st));
            if (flags & GEN_TOO_MANY) {
                G.mask = false;
                h.general_apply(env);
                // (the coarse levels were built with the mask: again without)
                if (G.on()) PGPU_FORWARD(h.general_build(env));
                if (uses_multigrid(cfg)) PGPU_FORWARD(mg.refresh(G.on()));
                replay.clear();
                return record(err, PGPU_ERROR_UNSUPPORTED,
                              "%s: the mask has %u singular regions, more than the %u this grid provides for; the "
                              "handle has no mask now", what, count, G.cap);
            }
            G.regions = count;
        }
    }
    if (!h.singular) PGPU_CUDA(cudaMemsetAsync(d_shift, 0, 2 * sizeof(T), env.st)); // no mean shift with a mask
    if (uses_multigrid(cfg)) PGPU_FORWARD(mg.refresh(G.on()));
    if (is_krylov(method) && is_mask) PGPU_FORWARD(kry.reset()); // points that were unknowns may not be
    (void)changed;
    replay.clear(); // the graphs hold the old grids (and the regions' count)
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Solver<T>::project_rhs(const T *u, const T *f, const T *&fb)
{
    fb = f;
    if (!h.gen.mask || !h.gen.regions) return PGPU_SUCCESS;
    // f outside the singular regions is copied too: fp replaces f everywhere.
    const Level<T> &L = h.lv[0];
    PGPU_FORWARD(axpby(env, L.g, L.col, T(0), T(1), f, T(0), (const T *)nullptr, h.gen.fp));
    PGPU_FORWARD(h.project(env, f, u, 1, h.gen.fp));
    fb = h.gen.fp;
    return PGPU_SUCCESS;
}

// Whether b's norm after project_rhs is only the projection's rounding:
// every singular region's b constant (one-point regions, say) leaves each
// point (f - mean) rounded to T, a norm of at most about 2 eps max|b|
// sqrt(points), which no method can reduce (a relative residual of 1 then
// is rounding over rounding).  vmax: max |b| over the singular regions
// (read_projection).
template <class T> bool Solver<T>::rhs_at_rounding(double rhs_norm, double vmax) const
{
    return rhs_norm <= 8.0 * (double)std::numeric_limits<T>::epsilon() * vmax * std::sqrt(h.lv[0].npts);
}

// Each singular region's mean of u out, after every method.  The report
// (where it holds a residual) is measured again, so that it describes the
// u returned: taking each region's constant out changes the rounding of
// A u where u has drifted far along the null space (10^4 times its size:
// the residual 2.55e-11 before, 2.64e-11 after).
template <class T>
pgpu_status Solver<T>::project_u(T *u, const Convergence &cv, pgpu_report &r, pgpu_status &result)
{
    PGPU_FORWARD(h.project(env, u, u, 0, u));
    return measure_again(cv, r, result);
}

// With beta's jumps the rounding of the constants taken out of u moves the
// residual (a 1e6 jump: 2.4e-11 to 2.8e-11; 6.8e-9 to 1.8e-8): the report
// describes the u returned, and no SUCCESS stands above the tolerance, nor,
// under float's own rule, above FLOAT_OWN_SLACK times the (*) tolerance (the
// most any own stop accepts).  slack: what the caller does not count
// against the tolerance (a float box's mean taken out rounds u anew, by up
// to about float's floor).
template <class T>
pgpu_status Solver<T>::measure_again(const Convergence &cv, pgpu_report &r, pgpu_status &result, double slack)
{
    char *err = env.err;
    if (!std::isfinite(r.residual_norm)) return PGPU_SUCCESS;
    const double before = r.relative_residual;
    double rn = 0, rmax = 0;
    PGPU_FORWARD(h.norm(env, red, rn, rmax));
    cv.measured(rn, rmax, r);
    const double cap = (cv.own() ? FLOAT_OWN_SLACK : 1.0) * cv.tol + slack;
    if (result == PGPU_SUCCESS && cv.rule != Stop::ONCE && !(r.relative_residual <= cap))
        result = record(err, PGPU_ERROR_NOT_CONVERGED,
                        "relative residual %.3e with the null space's constants taken out of u (%.3e before), "
                        "tolerance %.3e",
                        r.relative_residual, before, cv.tol);
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Solver<T>::solve_host(void *u, const void *f, pgpu_report *rep)
{
    char *err = env.err;
    err[0] = 0;
    PGPU_RETURN_IF(!u, PGPU_ERROR_INVALID_ARGUMENT, "u is NULL");
    PGPU_RETURN_IF(!f, PGPU_ERROR_INVALID_ARGUMENT, "f is NULL");
    const size_t bytes = (size_t)h.lv[0].elems * sizeof(T);
    const uintptr_t a = (uintptr_t)u, b = (uintptr_t)f;
    PGPU_RETURN_IF(a < b + bytes && b < a + bytes, PGPU_ERROR_INVALID_ARGUMENT,
                   "u and f overlap (each spans %zu bytes)", bytes);
    DeviceGuard guard(env.device);
    if (guard.status != cudaSuccess) return cuda_status(err, guard.status, "cudaSetDevice", PGPU_AT);
    if (!d_host_u) {
        PGPU_FORWARD(env.mem.alloc(err, (void **)&d_host_u, bytes, "pgpu_solve_host's copy of u"));
        PGPU_FORWARD(env.mem.alloc(err, (void **)&d_host_f, bytes, "pgpu_solve_host's copy of f"));
    }
    PGPU_CUDA(cudaMemcpyAsync(d_host_u, u, bytes, cudaMemcpyHostToDevice, env.st));
    PGPU_CUDA(cudaMemcpyAsync(d_host_f, f, bytes, cudaMemcpyHostToDevice, env.st));
    const pgpu_status s = solve(d_host_u, d_host_f, rep);
    if (s == PGPU_SUCCESS || s == PGPU_ERROR_NOT_CONVERGED || s == PGPU_ERROR_BREAKDOWN) {
        PGPU_CUDA(cudaMemcpyAsync(u, d_host_u, bytes, cudaMemcpyDeviceToHost, env.st));
    }
    PGPU_CUDA(cudaStreamSynchronize(env.st));
    return s;
}

template <class T> pgpu_status Solver<T>::residual(const void *uv, const void *fv, double *rel)
{
    char *err = env.err;
    err[0] = 0;
    PGPU_RETURN_IF(!rel, PGPU_ERROR_INVALID_ARGUMENT, "rel_norm is NULL");
    DeviceGuard guard(env.device);
    if (guard.status != cudaSuccess) return cuda_status(err, guard.status, "cudaSetDevice", PGPU_AT);
    PGPU_FORWARD(check_arrays(uv, fv));
    const T *u = (const T *)uv, *f = (const T *)fv;
    PGPU_FORWARD(project_rhs(u, f, f));
    double bn = 0, rn = 0, rmax = 0;
    bool finite = true;
    PGPU_FORWARD(scan(u, f, true, bn, finite));
    const Level<T> &L = h.lv[0];
    PGPU_FORWARD(residual_norm(env, red, L.g, L.rwalk, u, f, (const T *)d_shift, rn, rmax));
    PGPU_RETURN_IF(!finite, PGPU_ERROR_NONFINITE_INPUT, "f or the boundary data hold NaN or Inf");
    *rel = bn > 0 ? rn / bn : rn;
    return PGPU_SUCCESS;
}

} // namespace pgpu
