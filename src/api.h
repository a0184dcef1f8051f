// api.h -- the C API
#pragma once
#include "dist.h"
#include "validate.h"

struct pgpu_solver {
    pgpu::SolverBase *impl;
};

namespace pgpu {
// For tests that include this file (not part of the API): the solver behind a
// handle of precision T.
template <class T> Solver<T> *solver_of(pgpu_solver *s) { return static_cast<Solver<T> *>(s->impl); }

// PGPU_ERROR_NO_DEVICE unless the runtime sees a device.
static pgpu_status require_device(char *err)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();
        if (e == cudaSuccess)
            return record(err, PGPU_ERROR_NO_DEVICE, "%s; cudaGetDeviceCount reports 0 devices", NO_DEVICE_TEXT);
        return record(err, PGPU_ERROR_NO_DEVICE, "%s; cudaGetDeviceCount said %s (%s)", NO_DEVICE_TEXT,
                      cudaGetErrorName(e), cudaGetErrorString(e));
    }
    return PGPU_SUCCESS;
}

// The bytes pgpu_create would allocate for the resolved config c: the build
// of a handle with DeviceMem counting (see Solver::init).  sms > 0 describes
// the device by hand (its SM count and opt-in shared memory per block; only
// the FFT then still asks cuFFT); sms == 0 reads the current device's.
static pgpu_status count_workspace(const pgpu_config &c, char *err, size_t *bytes, int sms = 0, int optin = 0)
{
    const bool flt = (c.flags & PGPU_PRECISION_MASK) == PGPU_FLOAT;
    std::unique_ptr<SolverBase> impl(flt ? (SolverBase *)new Solver<float>() : (SolverBase *)new Solver<double>());
    impl->env.mem.counting = true;
    impl->env.sms = sms;
    impl->env.optin = optin;
    const pgpu_status st = flt ? static_cast<Solver<float> *>(impl.get())->init(c)
                               : static_cast<Solver<double> *>(impl.get())->init(c);
    if (st == PGPU_SUCCESS) *bytes = impl->env.mem.bytes;
    else if (impl->env.err[0]) snprintf(err, ERR_LEN, "%s", impl->env.err);
    return st;
}

// A new solver of the config's precision, built by init(c), its solves
// ending by rule; on failure deleted, its message copied to err.
static pgpu_status build_solver(const pgpu_config &c, Dist *dist, Stop rule, SolverBase *&impl, char *err)
{
    impl = nullptr;
    pgpu_status st = PGPU_SUCCESS;
    try {
        if ((c.flags & PGPU_PRECISION_MASK) == PGPU_FLOAT) {
            Solver<float> *p = new Solver<float>();
            impl = p;
            p->env.dist = dist;
            p->rule = rule;
            st = p->init(c);
        } else {
            Solver<double> *p = new Solver<double>();
            impl = p;
            p->env.dist = dist;
            p->rule = rule;
            st = p->init(c);
        }
    } catch (const std::bad_alloc &) {
        st = record(err, PGPU_ERROR_OUT_OF_MEMORY, "host memory exhausted while building the solver");
    }
    if (st != PGPU_SUCCESS) {
        if (impl && impl->env.err[0]) snprintf(err, ERR_LEN, "%s", impl->env.err);
        delete impl;
        impl = nullptr;
    }
    return st;
}

#ifdef PGPU_WITH_NCCL
// The maximum over the ranks of v (in place), on stream st; synchronises.
static pgpu_status agree_max(ncclComm_t comm, cudaStream_t st, std::vector<long long> &v, char *err)
{
    long long *d = nullptr;
    PGPU_CUDA(cudaMalloc((void **)&d, v.size() * sizeof(long long)));
    std::unique_ptr<long long, decltype(&cudaFree)> hold(d, &cudaFree);
    PGPU_CUDA(cudaMemcpyAsync(d, v.data(), v.size() * sizeof(long long), cudaMemcpyHostToDevice, st));
    PGPU_NCCL(ncclAllReduce(d, d, v.size(), ncclInt64, ncclMax, comm, st));
    PGPU_CUDA(cudaMemcpyAsync(v.data(), d, v.size() * sizeof(long long), cudaMemcpyDeviceToHost, st));
    PGPU_CUDA(cudaStreamSynchronize(st));
    return PGPU_SUCCESS;
}

// pgpu_create_distributed: every rank checks its part, then the ranks agree
// (one all-reduction of a fingerprint of the config and of each rank's
// verdict) before anything is built, and again after the build, so that a
// failure anywhere is a failure everywhere and no rank waits for another.
static pgpu_status create_distributed(const pgpu_config &user, ncclComm_t comm, pgpu_solver **out)
{
    char *err = tls_create_error;
    int ranks = 0, rank = 0, cdev = -1, dev = -1;
    PGPU_NCCL(ncclCommCount(comm, &ranks));
    PGPU_NCCL(ncclCommUserRank(comm, &rank));
    PGPU_NCCL(ncclCommCuDevice(comm, &cdev));
    PGPU_FORWARD(require_device(err));
    PGPU_CUDA(cudaGetDevice(&dev));
    std::unique_ptr<Dist> d(new Dist());
    d->comm = comm;
    pgpu_config local{};
    char mine[ERR_LEN] = {0};
    Stop rule = Stop::TOLERANCE;
    pgpu_status ls = dist_configs(&user, ranks, rank, *d, local, mine, &rule);
    if (ls == PGPU_SUCCESS && dev != cdev)
        ls = record(mine, PGPU_ERROR_INVALID_ARGUMENT,
                    "the communicator's rank %d uses device %d but the current device is %d", rank, cdev, dev);
    DeviceGuard guard(cdev);
    if (guard.status != cudaSuccess) return cuda_status(err, guard.status, "cudaSetDevice", PGPU_AT);
    const cudaStream_t st = (cudaStream_t)user.stream;
    // The fingerprint: the fields every rank must share, resolved; the
    // tolerance as given (0 and the value it resolves to end solves by
    // different rules, Stop).
    const pgpu_config &g = ls == PGPU_SUCCESS ? d->global : user;
    auto bits = [](double x) {
        long long b;
        memcpy(&b, &x, sizeof b);
        return b;
    };
    static const char *names[] = {"nx", "ny", "nz", "hx", "hy", "hz", "flags", "bc x-", "bc x+", "bc y-", "bc y+",
                                  "bc z-", "bc z+", "tolerance", "max_iterations", "omega", "pre_smooth",
                                  "post_smooth", "check_interval", "preconditioner"};
    const long long f[] = {g.nx, g.ny, g.nz, bits(g.hx), bits(g.hy), bits(g.hz), (long long)g.flags, g.bc[0], g.bc[1],
                           g.bc[2], g.bc[3], g.bc[4], g.bc[5], bits(user.tolerance), g.max_iterations, bits(g.omega),
                           g.pre_smooth, g.post_smooth, g.check_interval, (long long)g.preconditioner};
    const size_t K = sizeof f / sizeof f[0];
    // ... and the local arrays' strides, which may differ between ranks: the
    // paired smoothing's bands of level 0 move storage planes, so they need
    // the same layout on every rank (Dist::band_strides).
    const long long ls_y = ls == PGPU_SUCCESS ? local.stride_y : 0, ls_z = ls == PGPU_SUCCESS ? local.stride_z : 0;
    std::vector<long long> v(2 + 2 * K + 4);
    v[0] = ls != PGPU_SUCCESS;
    v[1] = (long long)ls;
    for (size_t k = 0; k < K; ++k) {
        v[2 + k] = f[k];
        v[2 + K + k] = ~f[k]; // (order-reversing like negation, defined for every value)
    }
    v[2 + 2 * K] = ls_y;
    v[3 + 2 * K] = ~ls_y;
    v[4 + 2 * K] = ls_z;
    v[5 + 2 * K] = ~ls_z;
    PGPU_FORWARD(agree_max(comm, st, v, err));
    if (ls != PGPU_SUCCESS) return record(err, ls, "pgpu_create_distributed on rank %d: %s", rank, mine);
    PGPU_RETURN_IF(v[0], (pgpu_status)v[1],
                   "pgpu_create_distributed: another rank's call failed (%s; its pgpu_last_error(NULL) says why)",
                   status_text((pgpu_status)v[1]));
    for (size_t k = 0; k < K; ++k)
        PGPU_RETURN_IF(v[2 + k] != ~v[2 + K + k], PGPU_ERROR_INVALID_ARGUMENT,
                       "pgpu_create_distributed: the ranks' configs differ in %s (every rank must pass the same "
                       "global problem)", names[k]);
    if (v[2 + 2 * K] != ~v[3 + 2 * K] || v[4 + 2 * K] != ~v[5 + 2 * K]) { // strides differ somewhere
        d->band_strides = false; // (dist_plan keeps it so)
        d->band.assign(1, 0);
    }
    // Build, then agree that every rank built.
    SolverBase *impl = nullptr;
    const pgpu_status bs = build_solver(local, d.get(), rule, impl, mine);
    std::vector<long long> w = {bs != PGPU_SUCCESS, (long long)bs};
    const pgpu_status as = agree_max(comm, st, w, err);
    if (bs != PGPU_SUCCESS) return record(err, bs, "pgpu_create_distributed on rank %d: %s", rank, mine);
    if (as != PGPU_SUCCESS || w[0]) {
        delete impl;
        if (as != PGPU_SUCCESS) return as;
        return record(err, (pgpu_status)w[1],
                      "pgpu_create_distributed: another rank could not build its solver (%s; its "
                      "pgpu_last_error(NULL) says why)", status_text((pgpu_status)w[1]));
    }
    impl->box = d->box;
    impl->dist = std::move(d);
    if (dist_connect(impl->env) != PGPU_SUCCESS) { // (every rank built: every rank is here)
        snprintf(err, ERR_LEN, "%s", impl->env.err);
        delete impl;
        return PGPU_ERROR_CUDA;
    }
    try {
        *out = new pgpu_solver{impl};
    } catch (const std::bad_alloc &) {
        delete impl;
        return record(err, PGPU_ERROR_OUT_OF_MEMORY, "host memory exhausted while building the solver");
    }
    return PGPU_SUCCESS;
}
#endif
} // namespace pgpu

extern "C" {

int pgpu_version(void) { return PGPU_VERSION; }

pgpu_config pgpu_config_default(int64_t nx, int64_t ny, int64_t nz)
{
    pgpu_config c;
    memset(&c, 0, sizeof c);
    c.nx = nx;
    c.ny = ny;
    c.nz = nz;
    c.hx = nx > 0 ? 1.0 / (double)(nx + 1) : 0.0;
    c.hy = ny > 0 ? 1.0 / (double)(ny + 1) : 0.0;
    c.hz = nz > 0 ? 1.0 / (double)(nz + 1) : 0.0;
    c.flags = PGPU_FMG | PGPU_DOUBLE;
    for (int k = 0; k < 6; ++k) c.bc[k] = PGPU_BC_DIRICHLET;
    return c;
}

pgpu_status pgpu_config_set_domain(pgpu_config *cfg, double lx, double ly, double lz)
{
    using namespace pgpu;
    char *err = tls_create_error;
    err[0] = 0;
    PGPU_RETURN_IF(!cfg, PGPU_ERROR_INVALID_ARGUMENT, "cfg is NULL");
    const int64_t n[3] = {cfg->nx, cfg->ny, cfg->nz};
    const double len[3] = {lx, ly, lz};
    static const char *axis[3] = {"x", "y", "z"};
    PGPU_RETURN_IF(n[0] < 1 || n[1] < 1 || n[2] < 1, PGPU_ERROR_INVALID_ARGUMENT,
                   "grid size %lld x %lld x %lld: every axis needs at least one point", (long long)n[0],
                   (long long)n[1], (long long)n[2]);
    for (int a = 0; a < (cfg->nz > 1 ? 3 : 2); ++a) {
        PGPU_RETURN_IF(!(len[a] > 0) || !std::isfinite(len[a]), PGPU_ERROR_INVALID_ARGUMENT,
                       "l%s = %g: the length must be finite and > 0", axis[a], len[a]);
        const int lo = cfg->bc[2 * a], hi = cfg->bc[2 * a + 1];
        PGPU_RETURN_IF(lo < 0 || lo > 2 || hi < 0 || hi > 2, PGPU_ERROR_INVALID_ARGUMENT,
                       "the faces of axis %s, (%d, %d), are not pgpu_bc values", axis[a], lo, hi);
        PGPU_RETURN_IF((lo == PGPU_BC_PERIODIC) != (hi == PGPU_BC_PERIODIC), PGPU_ERROR_INVALID_ARGUMENT,
                       "axis %s: periodic on one face only", axis[a]);
    }
    domain_spacing(cfg, len);
    return PGPU_SUCCESS;
}

pgpu_config pgpu_config_domain(int64_t nx, int64_t ny, int64_t nz, double lx, double ly, double lz,
                               const pgpu_bc bc[6])
{
    pgpu_config c = pgpu_config_default(nx, ny, nz);
    if (bc)
        for (int k = 0; k < 6; ++k) c.bc[k] = bc[k];
    // Unchecked: a length that is not positive and finite gives a spacing
    // that pgpu_create refuses, naming it.
    const double len[3] = {lx, ly, lz};
    pgpu::domain_spacing(&c, len);
    return c;
}

pgpu_status pgpu_create(const pgpu_config *cfg, pgpu_solver **out)
{
    using namespace pgpu;
    char *err = tls_create_error;
    err[0] = 0;
    if (out) *out = nullptr;
    PGPU_RETURN_IF(!cfg, PGPU_ERROR_INVALID_ARGUMENT, "cfg is NULL");
    PGPU_RETURN_IF(!out, PGPU_ERROR_INVALID_ARGUMENT, "out is NULL");
    pgpu_config c;
    Stop rule = Stop::TOLERANCE;
    PGPU_FORWARD(resolve_config(cfg, &c, err, &rule));
    PGPU_FORWARD(require_device(err));
    SolverBase *impl = nullptr;
    PGPU_FORWARD(build_solver(c, nullptr, rule, impl, err));
    impl->box.n[0] = c.nx;
    impl->box.n[1] = c.ny;
    impl->box.n[2] = c.nz;
    impl->box.ranks = 1;
    try {
        *out = new pgpu_solver{impl};
    } catch (const std::bad_alloc &) {
        delete impl;
        return record(err, PGPU_ERROR_OUT_OF_MEMORY, "host memory exhausted while building the solver");
    }
    return PGPU_SUCCESS;
}

int pgpu_has_distributed(void)
{
#ifdef PGPU_WITH_NCCL
    return 1;
#else
    return 0;
#endif
}

pgpu_status pgpu_decompose(const pgpu_config *global, int ranks, int rank, pgpu_box *box)
{
    using namespace pgpu;
    char *err = tls_create_error;
    err[0] = 0;
    if (box) memset(box, 0, sizeof *box);
    PGPU_RETURN_IF(!global, PGPU_ERROR_INVALID_ARGUMENT, "global is NULL");
    PGPU_RETURN_IF(!box, PGPU_ERROR_INVALID_ARGUMENT, "box is NULL");
    Dist d;
    pgpu_config local;
    PGPU_FORWARD(dist_configs(global, ranks, rank, d, local, err));
    *box = d.box;
    return PGPU_SUCCESS;
}

pgpu_status pgpu_create_distributed(const pgpu_config *global, struct ncclComm *comm, pgpu_solver **out)
{
    using namespace pgpu;
    char *err = tls_create_error;
    err[0] = 0;
    if (out) *out = nullptr;
    PGPU_RETURN_IF(!global, PGPU_ERROR_INVALID_ARGUMENT, "global is NULL");
    PGPU_RETURN_IF(!out, PGPU_ERROR_INVALID_ARGUMENT, "out is NULL");
#ifdef PGPU_WITH_NCCL
    PGPU_RETURN_IF(!comm, PGPU_ERROR_INVALID_ARGUMENT, "comm is NULL");
    try {
        return create_distributed(*global, comm, out);
    } catch (const std::bad_alloc &) {
        return record(err, PGPU_ERROR_OUT_OF_MEMORY, "host memory exhausted while building the solver");
    }
#else
    (void)comm;
    return record(err, PGPU_ERROR_UNSUPPORTED,
                  "pgpu_create_distributed: this build has no NCCL (compile poisson_gpu.cu with -DPGPU_WITH_NCCL "
                  "and link NCCL; Meson: -Dnccl=enabled)");
#endif
}

pgpu_status pgpu_get_box(const pgpu_solver *s, pgpu_box *box)
{
    if (!s || !box) return PGPU_ERROR_INVALID_ARGUMENT;
    *box = s->impl->box;
    return PGPU_SUCCESS;
}

pgpu_status pgpu_workspace_size(const pgpu_config *cfg, size_t *bytes)
{
    using namespace pgpu;
    char *err = tls_create_error;
    err[0] = 0;
    if (bytes) *bytes = 0;
    PGPU_RETURN_IF(!cfg, PGPU_ERROR_INVALID_ARGUMENT, "cfg is NULL");
    PGPU_RETURN_IF(!bytes, PGPU_ERROR_INVALID_ARGUMENT, "bytes is NULL");
    pgpu_config c;
    PGPU_FORWARD(resolve_config(cfg, &c, err));
    PGPU_FORWARD(require_device(err));
    try {
        return count_workspace(c, err, bytes);
    } catch (const std::bad_alloc &) {
        return record(err, PGPU_ERROR_OUT_OF_MEMORY, "host memory exhausted while sizing the solver");
    }
}

pgpu_status pgpu_solve(pgpu_solver *s, void *u, const void *f, pgpu_report *report)
{
    if (!s) return PGPU_ERROR_INVALID_ARGUMENT;
    try {
        return s->impl->solve(u, f, report);
    } catch (const std::bad_alloc &) {
        return pgpu::record(s->impl->env.err, PGPU_ERROR_OUT_OF_MEMORY, "host memory exhausted");
    }
}

pgpu_status pgpu_solve_host(pgpu_solver *s, void *u, const void *f, pgpu_report *report)
{
    if (!s) return PGPU_ERROR_INVALID_ARGUMENT;
    try {
        return s->impl->solve_host(u, f, report);
    } catch (const std::bad_alloc &) {
        return pgpu::record(s->impl->env.err, PGPU_ERROR_OUT_OF_MEMORY, "host memory exhausted");
    }
}

pgpu_status pgpu_residual(pgpu_solver *s, const void *u, const void *f, double *rel_norm)
{
    if (!s) return PGPU_ERROR_INVALID_ARGUMENT;
    try {
        return s->impl->residual(u, f, rel_norm);
    } catch (const std::bad_alloc &) {
        return pgpu::record(s->impl->env.err, PGPU_ERROR_OUT_OF_MEMORY, "host memory exhausted");
    }
}

pgpu_status pgpu_get_config(const pgpu_solver *s, pgpu_config *out)
{
    if (!s || !out) return PGPU_ERROR_INVALID_ARGUMENT;
    *out = s->impl->cfg;
    return PGPU_SUCCESS;
}

size_t pgpu_workspace_bytes(const pgpu_solver *s) { return s ? s->impl->env.mem.bytes : 0; }

pgpu_status pgpu_set_stream(pgpu_solver *s, struct CUstream_st *stream)
{
    if (!s) return PGPU_ERROR_INVALID_ARGUMENT;
    return s->impl->set_stream((cudaStream_t)stream);
}

pgpu_status pgpu_get_stream(const pgpu_solver *s, struct CUstream_st **stream)
{
    if (!s || !stream) return PGPU_ERROR_INVALID_ARGUMENT;
    *stream = (struct CUstream_st *)s->impl->env.st;
    return PGPU_SUCCESS;
}

pgpu_status pgpu_set_monitor(pgpu_solver *s, pgpu_monitor fn, void *user)
{
    if (!s) return PGPU_ERROR_INVALID_ARGUMENT;
    s->impl->set_monitor(fn, user);
    return PGPU_SUCCESS;
}

pgpu_status pgpu_set_mask(pgpu_solver *s, const uint8_t *mask)
{
    if (!s) return PGPU_ERROR_INVALID_ARGUMENT;
    return s->impl->set_general(mask, nullptr, true);
}

pgpu_status pgpu_set_coefficients(pgpu_solver *s, const void *beta)
{
    if (!s) return PGPU_ERROR_INVALID_ARGUMENT;
    return s->impl->set_general(nullptr, beta, false);
}

void pgpu_destroy(pgpu_solver *s)
{
    if (!s) return;
    {
        pgpu::DeviceGuard guard(s->impl->env.device);
        delete s->impl;
    }
    delete s;
}

const char *pgpu_status_string(pgpu_status st) { return pgpu::status_text(st); }

const char *pgpu_last_error(const pgpu_solver *s) { return s ? s->impl->env.err : pgpu::tls_create_error; }

} // extern "C"
