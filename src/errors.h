// errors.h -- the status / message pair every call goes through; device memory; Env
#pragma once
#include "config.h"

namespace pgpu {

// Every failure is recorded as text in an error buffer (the handle's, or a
// thread-local one during pgpu_create) and returned as a status.  The macros
// below are the only way errors travel: nothing prints, aborts or exits.

constexpr size_t ERR_LEN = 512;
static thread_local char tls_create_error[ERR_LEN];

static pgpu_status record(char *buf, pgpu_status st, const char *fmt, ...)
{
    if (buf) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, ERR_LEN, fmt, ap);
        va_end(ap);
    }
    return st;
}

// What the user reads first when the runtime finds no device to run on:
// without a GPU the runtime says "CUDA driver version is insufficient",
// which is true only where a GPU and an old driver are both there.
static const char *const NO_DEVICE_TEXT =
    "no CUDA device: the CUDA runtime found no GPU it can use (no NVIDIA GPU, no driver loaded, or a driver "
    "older than this CUDA runtime)";

static const char *base_name(const char *path)
{
    const char *slash = std::strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static bool no_device_error(cudaError_t e) { return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver; }

static pgpu_status cuda_status(char *buf, cudaError_t e, const char *what, const char *file, int line)
{
    if (no_device_error(e))
        return record(buf, PGPU_ERROR_NO_DEVICE, "%s; %s said %s (%s) [%s:%d]", NO_DEVICE_TEXT, what,
                      cudaGetErrorName(e), cudaGetErrorString(e), file, line);
    pgpu_status st = (e == cudaErrorMemoryAllocation) ? PGPU_ERROR_OUT_OF_MEMORY : PGPU_ERROR_CUDA;
    return record(buf, st, "%s failed: %s (%s) [%s:%d]", what, cudaGetErrorName(e), cudaGetErrorString(e),
                  file, line);
}

static const char *cufft_name(cufftResult r)
{
    switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cufftResult (unknown)";
    }
}

// Where a failure was found, for its message: the file (its name without
// the folders: src/'s with PGPU_SRC_LINES, else poisson_gpu.cu) and the line.
#define PGPU_AT ::pgpu::base_name(__FILE__), __LINE__
// Return `st` with a message when `cond` holds.  Uses the variable `err`.
#define PGPU_RETURN_IF(cond, st, ...)                                                              \
    do {                                                                                           \
        if (cond) return ::pgpu::record(err, (st), __VA_ARGS__);                                   \
    } while (0)
// Check a CUDA runtime call.
#define PGPU_CUDA(call)                                                                            \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) return ::pgpu::cuda_status(err, e_, #call, PGPU_AT);                \
    } while (0)
// Check the launch just made (configuration errors surface here).
#define PGPU_LAUNCHED() PGPU_CUDA(cudaGetLastError())
#ifdef PGPU_WITH_NCCL
// Check an NCCL call.
#define PGPU_NCCL(call)                                                                            \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess)                                                                     \
            return ::pgpu::record(err, PGPU_ERROR_CUDA, "%s failed: %s [%s:%d]", #call,            \
                                  ncclGetErrorString(r_), PGPU_AT);                                \
    } while (0)
#endif
// Check a cuFFT call.
#define PGPU_CUFFT(call)                                                                           \
    do {                                                                                           \
        cufftResult r_ = (call);                                                                   \
        if (r_ != CUFFT_SUCCESS)                                                                   \
            return ::pgpu::record(err, r_ == CUFFT_ALLOC_FAILED ? PGPU_ERROR_OUT_OF_MEMORY         \
                                                                : PGPU_ERROR_CUDA,                 \
                                  "%s failed: %s [%s:%d]", #call,                                  \
                                  ::pgpu::cufft_name(r_), PGPU_AT);                                \
    } while (0)
// Pass a failure up unchanged.
#define PGPU_FORWARD(expr)                                                                         \
    do {                                                                                           \
        pgpu_status s_ = (expr);                                                                   \
        if (s_ != PGPU_SUCCESS) return s_;                                                         \
    } while (0)
// A device call on pgpu_create's path that is not an allocation (a copy, a
// memset, an attribute, a stream): skipped while the build only counts bytes
// (env.mem.counting, pgpu_workspace_size).  Every such call of the create
// path goes through this macro, every allocation through DeviceMem::alloc.
#define PGPU_CUDA_SETUP(env, call)                                                                 \
    do {                                                                                           \
        if (!(env).mem.counting) PGPU_CUDA(call);                                                  \
    } while (0)

// What every part of a solve needs: the stream its work goes to, the error
// buffer, the device's SM count, and the allocations of the handle.
//
// DeviceMem counts what it allocates (pgpu_workspace_bytes).  With counting
// set it allocates nothing and hands out a placeholder address that is never
// dereferenced: pgpu_workspace_size runs the whole build of a handle this
// way, so that the query and pgpu_create agree to the byte by construction.
struct DeviceMem {
    std::vector<void *> ptrs;
    size_t bytes = 0;
    bool counting = false;
    pgpu_status alloc(char *err, void **p, size_t n, const char *what)
    {
        *p = nullptr;
        if (n == 0) n = 1;
        if (counting) {
            *p = reinterpret_cast<void *>(uintptr_t(256)); // aligned for every element type, never read
            bytes += n;
            return PGPU_SUCCESS;
        }
        cudaError_t e = cudaMalloc(p, n);
        if (e != cudaSuccess) {
            *p = nullptr;
            cudaGetLastError(); // clear the (non-sticky) allocation error
            return record(err, e == cudaErrorMemoryAllocation ? PGPU_ERROR_OUT_OF_MEMORY : PGPU_ERROR_CUDA,
                          "cudaMalloc of %zu bytes for %s failed: %s", n, what, cudaGetErrorString(e));
        }
        ptrs.push_back(*p);
        bytes += n;
        return PGPU_SUCCESS;
    }
    ~DeviceMem()
    {
        for (void *p : ptrs) cudaFree(p);
    }
};

// Red-black iterations on a slab with one exchange (dist.h, dist_band_pass):
// a pass of S colour half-steps (two iterations: DIST_BAND_S; one: half of
// it) holds the ghost planes at their old values, which leaves the S - 1
// planes next to an interface wrong; a band of 3 S planes around it (S + 1
// of them the neighbour's) redoes the S half-steps there, the ghost plane's
// included, so that the ghosts hold the neighbour's new values after it.
// DIST_BAND_L: the longest band.
constexpr int DIST_BAND_S = 4, DIST_BAND_L = 3 * DIST_BAND_S;
static_assert(DIST_BAND_S == 4, "rb_band_kernel ping-pongs two iterations' values, dist_smooth passes of 2 and 1");

// A handle of the distributed mode (dist.h): where its box lies in the global
// grid, its neighbours along the split axis, and the buffers of the halo
// exchange and the all-reductions.  NULL in Env: a single-GPU handle.
struct Dist {
    int rank = 0, ranks = 1;
    int axis = 2;                   // the split axis: z in 3D, y in 2D
    int lo_peer = -1, hi_peer = -1; // the ranks across the box's low / high face on that axis (-1: none)
    pgpu_config global{};           // the global config, defaults resolved
    pgpu_box box{};
    int64_t plane = 0;              // points of one interface plane, its ghost lines included
    void *halo = nullptr;           // send low, send high, receive low, receive high: 4 planes
    double *d_red = nullptr;        // a reduction's local totals, all-reduced in place (4 doubles)
    // Multigrid (dist_plan): the first `levels` levels are slabs of the
    // global levels -- on level l this rank holds the split axis' nodes
    // lva[l] .. of lvN[l] -- the rest are the global levels, replicated;
    // on the first replicated level rank r computes planes own_a[r] ..
    // own_b[r] - 1 and broadcasts them.
    int levels = 0;
    std::vector<int64_t> lvN, lva, own_a, own_b;
    // band[l]: slab level l smooths red-black with one exchange per pass and
    // band fix-ups (every rank decides alike, from the plan); bandc: per such
    // level the couplings of the band planes' nodes along the split axis,
    // c_lo then c_hi, low band then high band (4 DIST_BAND_L values, the
    // planes of a band of DIST_BAND_S half-steps);
    // bandbuf: the bands (u low, u high, f low, f high, then u low and high
    // after one iteration), band_sz elements per plane.
    std::vector<char> band;
    std::vector<double> bandc;
    bool band_strides = true; // every rank's level 0 has the same strides (else no band there)
    void *bandbuf = nullptr;
    int64_t band_sz = 0;
#ifdef PGPU_WITH_NCCL
    ncclComm_t comm = nullptr;
#endif
};

struct Env {
    Dist *dist = nullptr;      // the distributed mode's state (dist.h), or NULL
    cudaStream_t st = nullptr; // where every launch goes (the graph replay swaps it while capturing)
    char err[ERR_LEN] = {0};
    int device = 0, sms = 0, optin = 0; // optin: the most shared memory a block may opt into
    DeviceMem mem;
    // Copy host data to device memory d.  Every copy and memset the handle
    // makes goes to its stream: a stream created with cudaStreamNonBlocking
    // does not wait for the legacy default stream, where cudaMemcpy /
    // cudaMemset would run.  The wait: the pageable source may be read
    // until the copy is done.
    template <class V> pgpu_status put(const std::vector<V> &h, V *d)
    {
        if (h.empty()) return PGPU_SUCCESS;
        PGPU_CUDA_SETUP(*this, cudaMemcpyAsync(d, h.data(), h.size() * sizeof(V), cudaMemcpyHostToDevice, st));
        PGPU_CUDA_SETUP(*this, cudaStreamSynchronize(st));
        return PGPU_SUCCESS;
    }
    // Allocate, then put.
    template <class V> pgpu_status upload(const std::vector<V> &h, V **d, const char *what)
    {
        PGPU_FORWARD(mem.alloc(err, (void **)d, std::max<size_t>(1, h.size()) * sizeof(V), what));
        return put(h, *d);
    }
};

} // namespace pgpu
