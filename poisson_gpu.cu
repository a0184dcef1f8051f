// poisson_gpu.cu -- GENERATED FILE, do not edit.  The implementation of
// poisson_gpu.h in one file: compile it into your project beside the header
// (README.md).  It is made by src/amalgamate.py from the files of src/ (with
// -DPGPU_SRC_LINES, #line directives name them): edit those and run the
// script; CI fails when this file differs from the script's output.

// src/poisson_gpu.cu -- the whole implementation of poisson_gpu.h, one
// translation unit made of the files of src/, one file a mechanism, each with
// its kernels together with their host-side planning, eligibility checks and
// launch code.  Each file includes the files it uses; this list gives the
// order in which src/amalgamate.py writes them into the shipped file.
// Precision is a template parameter everywhere; the C API dispatches once.
// doc/internals.md says how the pieces fit and why each kernel variant exists.
// config.h -- every tunable of the library, with what it trades
#ifdef PGPU_SRC_LINES
#line 2 "src/config.h"
#endif

#include "poisson_gpu.h"

#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>
#include <cufft.h>
#ifdef PGPU_WITH_NCCL
#include <nccl.h>
#endif

#include <algorithm>
#include <cfloat>
#include <climits>
#include <limits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace pgpu {

// Every tunable of the library.  Figures are H100 measurements at 512^3
// unless they say otherwise; the numbers are block shapes, register budgets
// (blocks per SM a kernel is compiled for) and size thresholds.


// ---- launch shapes (launch.h) ----
// Column kernels (reductions, scans, pointwise passes): a block covers a
// COL_BX x COL_BY patch of (x, y) columns and walks a chunk of z planes;
// launches aim at COL_PER_SM blocks per SM.
constexpr int COL_BX = 32, COL_BY = 8, COL_PER_SM = 32;
// A z chunk's two halo planes cost 2 / kchunk of its traffic: chunks of at
// least CHUNK_MIN planes, except on grids below SMALL_GRID_PTS points, whose
// kernels are latency-bound (a block walks its planes one after another):
// there more blocks of SMALL_CHUNK planes finish sooner (FMG pass in float:
// red-black on 16^3 and 32^3 487 -> 310 us, restrictions to 32^3 and below
// 265 -> 150 us; on 64^3 and 128^3 shorter chunks were slower).
constexpr int CHUNK_MIN = 8, SMALL_CHUNK = 2;
constexpr int64_t SMALL_GRID_PTS = 1 << 17;
// Walk kernels (Jacobi sweep, residual, direct transfers): 256-thread
// blocks, 128 wide where rows are long, over short column pieces.  Many
// threads, each issuing all loads of its piece at once, keep more requests
// in flight than long walks with a look-ahead window.
constexpr int WALK_THREADS = 256;
// Walks that end in a block reduction (norms, Krylov sums) take pieces of
// up to REDUCE_WALK_PIECES groups where REDUCE_WALK_BLOCKS blocks per SM
// remain: at 512^3 in double a two-plane piece per thread made the
// reduction tails most of CG's q = A p (1.72 ms for two array passes).
constexpr int REDUCE_WALK_PIECES = 4, REDUCE_WALK_BLOCKS = 32;
constexpr int FINAL_THREADS = 1024; // the one block that adds the block partials
constexpr size_t FOLD_AT = 8 * FINAL_THREADS, FOLD_BLOCKS = 128; // more partials are folded first

// ---- multigrid structure ----
constexpr int MAX_LEVELS = 96;
// Restriction touches at most this many fine nodes per coarse node and axis
// (vertex coarsening: 3, cell pairs: 4, non-nested periodic rings: 5).
constexpr int MAX_CHILDREN = 5;
// FMG's finest cycle starts its coarse-grid correction from the level below
// where the next level has at least this many points (multigrid.h); on smaller
// ones the extra launches cost more than the cycle they save (128^3 FMG in
// float: 1.31 -> 1.45 ms with it).
constexpr double FMG_START_MIN = 1 << 20;
// Red-black smoothing runs two iterations per pass on uniform levels of at
// least this many points.  On smaller ones its 1024-thread blocks are too
// few to fill the GPU: one pass against two single ones, float: 512^3 1.10
// against 1.54 ms, 256^3 0.23 against 0.25 ms, 128^3 89 against 58 us.
constexpr double PAIRED_MIN = 1 << 22;
// beta_tile_kernel smooths a level of beta alone from its stored fractions
// (beta_tiled) from this many points: 512^3's level 2 (128^3) too, smooth
// beta V(2,1) at 512^3 double 9.88-9.89 -> 9.85-9.86 ms, float 6.05 ->
// 6.03, 256^3 double 1.70 -> 1.68 (H200, same runs).
constexpr double BETA_FR_MIN = 1 << 21;
// The single-block coarse cycle (multigrid.h): levels of at most TINY_THREADS
// points (one per thread; 8^3, 32^2) and at most TINY_LEVELS of them run as
// one block, barriers between steps.  From 16^3 (four points per thread) the
// one SM issued every instruction: 122 us per cycle against 49 us from 8^3.
constexpr int TINY_THREADS = 1024, TINY_LEVELS = 24;
// The dense coarse solve: a tiny level of at most DENSE_MAX points whose
// inverse takes at most a quarter word per fine point is solved by its
// inverse (formed in double at create) instead of cycling further down.
constexpr int DENSE_MAX = 512;

// The norms are sums of squares in double: where max |b| lies outside
// RHS_MIN .. RHS_MAX they would underflow (a b of 1e-200 would read as 0,
// and the solve would return u = 0) or overflow, so such data get a status
// (Solver::check_range, and on the device dr_data_ok).  The low end leaves
// room below it for the residuals a tolerance asks for (their squares stay
// normal down to a relative 1e-12 or so).
constexpr double RHS_MIN = 0x1p-400, RHS_MAX = 0x1p+480;

// ---- FFT ----
constexpr int LF_T = 256;                   // row kernels of the all-periodic route: threads per block
constexpr int LF_MIN = 32, LF_MAX = 4096;   // x rows (reals) they take: powers of two
constexpr int LF_ZMIN = 16, LF_ZMAX = 2048; // z lines the z kernel takes
constexpr int DR_T = 256;                   // all-Dirichlet row kernels: threads per block
constexpr int DR_MAXP = 8;                  // passes at most
constexpr int DR_NMAX = 4097;               // transform length (n + 1) at most
// General-plan transform lengths (n + 1, not powers of two) with 3D row
// kernels of their own, the length a constant (dr_kernel's CN): n = 512.
constexpr int DR_CONST_N[] = {513};
// Blocks a multiprocessor runs of their passes (launch bounds), float and
// double: unbounded, float's took up to 80 registers (three blocks) and
// double's x inverse so many that one block ran.
constexpr int DR_CONST_BLOCKS_F = 4, DR_CONST_BLOCKS_D = 2;
// Blocks a multiprocessor runs of the float 3D passes whose n+1 is a power
// of two (their launch bounds: 64 registers at 4): as many as its shared
// memory holds at N = 512, about 51 KB each -- four from sm_90 on (228 KB),
// three on sm_80 (164 KB), where a cap at four would spill for nothing.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr int DR_POW2_BLOCKS = 3;
#else
constexpr int DR_POW2_BLOCKS = 4;
#endif
// 2D grids of at most FDM_NMAX nodes a side take the dense transforms of
// fft_fdm.h, unless the all-Dirichlet rows (dr2_kernel) take them and they
// pass FDM_ROWS_MIN a side.  Both are latency-bound at these sizes; the
// dense products read the whole grid once per row from L2, and their time
// grows with n^3: measured (bench fft2d-wall, H100) faster than the rows up
// to 63^2, slower from 127^2, and 255^2 took 3.6x the rows' time.  Against
// the all-periodic rows and the cuFFT route (other faces) the limit is not
// measured: there the one launch replaces four or more launches and the
// default path's separate scan and residual.
// FDM_T threads a block, FDM_KB loads in flight a thread.
constexpr int FDM_T = 256, FDM_KB = 16;
constexpr int FDM_NMAX = 128;
static_assert(FDM_NMAX <= FDM_T, "fdm_mm: a product's columns fit one block's threads");
constexpr int FDM_ROWS_MIN = 64;
// Where the device groups blocks in clusters, grids of at most FDMC_NMAX a
// side take fdmc_kernel instead (one cluster of at most FDMC_C blocks of
// FDMC_T threads, each block FDMC_RM rows at most); a thread's share of a
// sum is at most FDMC_KB terms.
constexpr int FDMC_T = 256, FDMC_NMAX = 64, FDMC_C = 16, FDMC_RM = 4, FDMC_KB = 16, FDMC_LROWS = FDMC_NMAX + FDMC_KB;
constexpr int FDMC_EDGE = (4 * FDMC_NMAX + FDMC_T - 1) / FDMC_T; // the box's edge points a thread
static_assert(FDMC_RM * FDMC_C >= FDMC_NMAX, "fdmc: the cluster's rows cover a grid");
static_assert(FDMC_T / FDMC_NMAX * FDMC_KB >= FDMC_NMAX, "fdmc: the slices of a sum cover it");
// The cuFFT route transforms an axis as a dense product instead (Q^T, Q:
// fdm_basis's orthonormal eigenvectors; dense_axis_kernel) where its cuFFT
// length has a prime factor past 7 -- there cuFFT takes a slower algorithm
// (Bluestein's for large primes: 129 = 3 x 43, 257) -- and the axis has at
// most DENSE_NMAX nodes (and the grid at most DENSE_GRID_MAX points:
// fft_dense_axis); a product costs n multiply-adds a point, so longer
// axes keep cuFFT.  A block of DENSE_T threads forms a tile of
// 16 DENSE_TM rows (DENSE_TM_SMALL where a product has at most 16 times
// that many: no tile mostly empty) by 16 Tune::dense_tn lines, DENSE_KC
// terms a step.
constexpr int DENSE_NMAX = 384, DENSE_T = 256, DENSE_KC = 16, DENSE_TM = 8, DENSE_TM_SMALL = 4;
// The line solves (tri_kernel): a thread a line, blocks of TRI_T (a grid
// of few lines still spreads over the SMs), each reading TRI_AHEAD nodes of
// its line ahead.
constexpr int TRI_T = 64, TRI_AHEAD = 8;
constexpr int PCR_MAX = 512;                // cyclic reduction: line length at most (a block per line)
constexpr int PCR_MAX_LINES = 4096;         // ... used when there are fewer lines than this
// The cuFFT route's per-axis scratch (the real copy of the lines and their
// half spectra) and the line solves' pivots take at most this many elements
// each: a larger axis goes in chunks of lines, so that beyond u and f the
// solve needs the packed copy of the grid and a little more (in one chunk,
// float's DST-I by the odd extension takes about two words a point for the
// scratch, two for its spectra and two for the pivots).  A chunk is a few
// launches on up to 2^26 elements: a 256^3 axis takes one, a 512^3 axis two
// to four.
constexpr int64_t FFT_CHUNK = (int64_t)1 << 26;
// The dense products write a second array of the grid; past this many
// points the cuFFT route, whose scratch is a few chunks, needs less
// memory (about as much at 2^28 in float; below, the dense products need
// less: 1.12 against 1.90 GB at 256 x 256 x 1100 in float).
constexpr int64_t DENSE_GRID_MAX = 4 * FFT_CHUNK;
// The distributed all-periodic FFT moves each slab in chunks of planes, so
// that a chunk travels while the next is transformed and a returned chunk
// is transformed back while the next travels: at most FFT_DIST_CHUNKS, each
// of FFT_DIST_CHUNK_MIN bytes of spectrum or more.
constexpr int FFT_DIST_CHUNKS = 8;
constexpr int64_t FFT_DIST_CHUNK_MIN = (int64_t)4 << 20;

// ---- PGPU_MIXED ----
// Float V-cycles per refinement step after the first (an FMG pass): two.
// A V-cycle reduces the residual about tenfold, and a step's float
// correction carries its error to float's rounding of the correction, whose
// residual is about eps lambda_max / lambda_min / 10 of the step's (1e-3 at
// 512^3): two cycles use most of that, and a step's two passes over u cost
// less than another cycle (V-cycles to 1e-10 at 512^3: one cycle per step
// took 10 steps, 81 ms; two, 5 steps, 64.5 ms; double V-cycles 89 ms).
// And the default limit on the steps.
constexpr int MIXED_CYCLES = 2, MIXED_MAX_STEPS = 30;

// ---- graph replay ----
// Krylov methods: restarts from the true residual when the recursive one
// met the tolerance and the true one did not (krylov.h).
constexpr int KRYLOV_RESTARTS = 3;
constexpr int REPLAY_MAX = 8; // graphs a handle keeps (per (u, f) pair and sequence)

// ---- per precision ----
template <class T> struct Tune {
    static constexpr bool F32 = sizeof(T) == 4;
    // Walk kernels: planes per thread piece.  The residual and the direct
    // transfers take 4 (float) / 2 (double); the Jacobi sweep 2, at 8 blocks
    // per SM in float (0.627 ms against 0.651 for four-plane pieces at six).
    // Dense axis transforms (dense_axis_kernel): a thread's lines (double:
    // half of float's); float's folded products take two blocks an SM
    // (their registers capped at 128), the others one.
    static constexpr int dense_tn = F32 ? 8 : 4;
    static constexpr int walk_group = F32 ? 4 : 2;
    static constexpr int walk_blocks = F32 ? 5 : 4;
    static constexpr int sweep_group = 2;
    static constexpr int sweep_blocks = F32 ? 8 : 4;
    // The residual with the norm reduction runs one block fewer per SM than
    // the other walk kernels, so that it does not spill.
    static constexpr int norm_blocks = walk_blocks - 1;
    // Red-black tile kernel (uniform levels): pairs per row, 16 rows, blocks
    // per SM (1024 threads per SM in float, 512 in double, whose registers
    // allow no more; two blocks of 16 pairs rather than one of 32, so that one
    // block's barrier does not stall the SM: 1.48 against 1.52 ms), planes
    // loaded ahead (double keeps more in flight: it runs half the threads per
    // SM; look-ahead 2, 3, 4, 5 took 1.75, 1.61, 1.59, 1.63 ms), and the
    // chunk target in blocks per SM (float: fewer, longer chunks, its
    // pipeline takes four planes to fill: V-cycle 4.70 -> 4.41 ms at 8 per SM
    // (H200); double gained about 1% at 16 and lost at fewer, keeps 32).
    static constexpr int rbt_tx = F32 ? 32 : 16;
    static constexpr int rbt_by = 16;
    static constexpr int rbt_blocks = (F32 ? 1024 : 512) / (rbt_tx * rbt_by);
    static constexpr int rbt_ahead = F32 ? 2 : 4;
    // ... on a masked level (MASKED), whose closed-face path needs more
    // registers: ptxas spills of the two-iteration kernel at look-ahead
    // 4 / 2 / 1 (double) 284 / 100 / 40 bytes stored, (float) - / 212 / 164.
    static constexpr int rbt_ahead_mk = F32 ? 1 : 2;
    static constexpr int rbt_per_sm = F32 ? 8 : 32;
    // ... with face fractions (FRAC): points away from the x / y box faces
    // of the planes coupled by cz take their couplings as the diagonal parts
    // (no table loads, no selects without closed faces) in double only
    // (smooth beta cycle 21.66 -> 18.56 ms; float's, at 64 registers, 10.44
    // -> 10.98).
    static constexpr bool rbt_frac_lean = !F32;
    // ... the fractions staged in shared memory by cp.async (FR_RING) in
    // double: smooth beta V(2,1) at 512^3 16.63 -> 14.42 ms (H200; it
    // replaced the faces formed from 1 / beta, Grid::bw, there); float's
    // kernel, issue-bound at 64 registers, took 9.19 -> 9.75 ms (8.2% more
    // instructions, more spills; with 16 pairs a row at 128 registers
    // 11.40, lean 10.84; at 80 registers, lean, 9.61), so float reads
    // them through L1, prefetched three planes ahead.  The ring and sb take
    // 93.6 KB a block in double: two blocks per SM where an SM has 228 KB
    // (H100, H200), one on A100 (164 KB) and sm_86 / sm_89 (100 KB), not
    // measured there.
    static constexpr bool frac_ring = !F32;
    // Level 0's beta faces formed in the FRAC column walk from 1 / beta
    // (Grid::bw: one array read instead of three), in double only: smooth
    // beta V(2,1) at 512^3 18.76 -> 17.13 ms with the FRAC tile kernel
    // reading them too, until the ring (residual 3.13 -> 2.85 ms); in float
    // the tile kernel's pass took 2.30 ms against 2.15 with the stored
    // fractions (cycle 10.37 against 10.39 ms: no gain).
    static constexpr bool beta_reciprocals = !F32;
    // Level 0 of beta alone (no mask) smoothed by beta_tile_kernel, which
    // forms the faces from 1 / beta once a plane (Grid::bw, allocated in both
    // precisions for it): smooth beta V(2,1) at 512^3 (H200, event-timed)
    // float 8.21 -> 7.27 ms, double 13.61 -> 12.23 ms; its pass (ncu) float
    // 1.75 -> 1.54 ms, double 3.05 -> 2.76.  Blocks of 32 pairs x 16 rows, two
    // blocks per SM in float (88 KB of rings each), one in double (176 KB).
    // Rows 32 in float (one block of 1024 threads per SM): a pass took as
    // long (ncu 1.30 ms) and the residual longer (1.79 against 1.54).  Float
    // chunk target 16 blocks an SM: cycle 6.66 against 6.63 ms with 8 (the
    // column walk's residual), kept with the residual on this kernel (6.48
    // ms; 8 not measured with it).
    static constexpr int bt_by = 16;
    static constexpr int bt_blocks = F32 ? 2 : 1;
    static constexpr int bt_per_sm = F32 ? 16 : 4;
    // The prolongation folded into the post-smoothing's first pass on a
    // beta_tiled level 0 (beta_tile_kernel's PRO, Transfer::bt_pro), in
    // double (float's 64 registers would not hold its taps): smooth beta
    // V(2,1) at 512^3 (H200, 5-cycle fixed solves, four of them folded)
    // 10.33 -> 10.03 ms a cycle; its pass (ncu) 2.24 ms against 1.77 for the
    // post-smoothing and 0.86 for the prolongation.
    static constexpr bool bt_pro = !F32;
    // Level 0's residual restricted in the same walk (beta_tile_kernel's RR)
    // in float only: smooth beta V(2,1) at 512^3 (H200) float 6.19 -> 6.08
    // ms, double 10.45 -> 10.57 (its one block an SM waits at every step's
    // barrier for the restriction's warps).
    static constexpr bool bt_rr = F32;
    // Level 0's residual formed by the last pre-smoothing pass of a cycle
    // (beta_tile_kernel's RS, into Level::x) in double: smooth beta V(2,1) at
    // 512^3 (H200, 5-cycle fixed solves, same runs) 10.06 -> 9.89-9.91 ms a
    // cycle (9.68 with its chunks: SmoothPlan::bts); its pass (ncu) 3.40 ms
    // against 1.76 + 1.73 for the pass and the residual, and every cycle of
    // an odd count folds.  Float keeps RR.
    static constexpr bool bt_rs = !F32;
    // ... two iterations per pass: blocks of rbt_tx pairs by 32 rows, one per
    // SM (float: 64 registers, 36 bytes spilled; double: 128, 12 spilled), so
    // few blocks per SM as the chunk target (FMG float: 2, 4, 8 took 7.56,
    // 7.57, 7.76 ms).
    static constexpr int rbt2_by = 32;
    static constexpr int rbt2_per_sm = 4;
    // General red-black kernel (periodic or non-uniform levels): 32 pairs by
    // 16 rows, 2 blocks per SM in float, 1 in double (more would spill).
    static constexpr int rbg_blocks = F32 ? 2 : 1;
    // Restriction tiles: blocks per SM; more (8 / 5) lost.
    static constexpr int rs_blocks = F32 ? 4 : 3;
    // The residual restricted in the pass that forms it: double only (1.51
    // ms against 1.12 + 0.50 for the pair); in float it took 1.02 against
    // 0.94 (instruction- and barrier-bound), so float keeps the pair.
    static constexpr bool rr_fused = !F32;
    // Row FFTs of the all-periodic route: complex values per thread (double
    // keeps registers for more warps); float copies the twiddles to shared
    // memory (0.91 against 1.10 ms for the forward kernel), double reads
    // them through L1 (equal or faster).
    static constexpr int lf_vals = F32 ? 16 : 8;
    static constexpr bool lf_shared_tw = F32;
    // The cuFFT route's DST-I: float by the odd extension (twice the
    // transform length: the running sum of the half-length form loses the
    // high modes in float), double by the running sum (fft.h).
    static constexpr bool dst_extension = F32;
};

// Red-black general kernel: 32 pairs by 16 rows; a block owns 60 x 12 points.
constexpr int RB_TX = 32, RB_BY = 16;
constexpr int RB_OX = 2 * RB_TX - 4, RB_OY = RB_BY - 4;
// Restriction tiles: a block owns RS_TX x RS_TY coarse columns and reads
// RS_SX x RS_SY fine values per plane into a ring of RS_STAGES planes
// filled by cp.async (three in flight while one is summed: 346 -> 300 us in
// float, 640 -> 500 us in double against two staged through registers; six
// stages gained nothing in float, double has no room for five).
constexpr int RS_TX = 32, RS_TY = 8, RS_SX = 2 * RS_TX + 4, RS_SY = 2 * RS_TY + 4;
constexpr int RS_STAGES = 4;
// Interpolation tiles: a block owns IT_FX x IT_FY fine columns and reads an
// IT_CX x IT_CY coarse tile per plane; the old fine values are loaded
// IT_OLD planes at a time (prolongation 585 -> 517 us, H200; the double
// mask path, which holds the mask bytes too, half as many).  Four blocks
// per SM (double: 64 registers; 512^3 prolongation 1.54 -> 1.41 ms, H100).
constexpr int IT_FX = 32, IT_FY = 8, IT_CX = 24, IT_CY = 12, IT_OLD = 8;

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 8 "src/poisson_gpu.cu"
#endif
// errors.h -- the status / message pair every call goes through; device memory; Env
#ifdef PGPU_SRC_LINES
#line 2 "src/errors.h"
#endif


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
#ifdef PGPU_SRC_LINES
#line 9 "src/poisson_gpu.cu"
#endif
// launch.h -- how kernels cover a level: column and walk launches
#ifdef PGPU_SRC_LINES
#line 2 "src/launch.h"
#endif


namespace pgpu {

// Two shapes cover a level's interior (x fastest, then y, then z):
//  - column launches (col_launch): a block covers a tile of (x, y) columns
//    and walks a chunk of kchunk z planes; used by pointwise passes,
//    reductions and the tiled kernels;
//  - walk launches (walk_launch): 256-thread blocks whose threads each take
//    one short column piece (one group of planes, walk_thread).
// Both flatten (row tile, z chunk) pairs over the y and z grid dimensions
// when they exceed the launch limits; block_yz undoes it.

struct ColLaunch {
    dim3 grid, block;
    int nyb, nchunks, kchunk;
};

// The block's row tile yb and z chunk zc; false for the spare blocks of a
// flattened launch.
__device__ __forceinline__ bool block_yz(int nyb, int nchunks, int &yb, int &zc)
{
    if (gridDim.y == (unsigned)nyb) { // the common case: no split needed
        yb = blockIdx.y;
        zc = blockIdx.z;
        return true;
    }
    const unsigned flat = blockIdx.y + gridDim.y * blockIdx.z; // < 2^32 by the launch limits
    yb = (int)(flat % (unsigned)nyb);
    zc = (int)(flat / (unsigned)nyb);
    return zc < nchunks;
}

// A thread of a walk launch: its column (i, j) and its planes [k0, k1).
// Chunks of kchunk planes start at plane 1 (so that each is one fast group
// of column_walk); the first also takes plane 0 and the last runs to nz.
// False for threads outside the grid.
__device__ __forceinline__ bool walk_thread(int nx, int ny, int nz, int kchunk, int nyb, int nchunks, int &i, int &j,
                                            int &k0, int &k1)
{
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return false;
    i = blockIdx.x * blockDim.x + threadIdx.x;
    j = yb * blockDim.y + threadIdx.y;
    k0 = zc == 0 ? 0 : 1 + zc * kchunk;
    k1 = zc == nchunks - 1 ? nz : 1 + (zc + 1) * kchunk;
    return i < nx && j < ny;
}

// The column launch's planes of chunk zc: [k0, k1).
__device__ __forceinline__ void chunk_planes(int zc, int kchunk, int nz, int &k0, int &k1)
{
    k0 = zc * kchunk;
    k1 = min(k0 + kchunk, nz);
}

#define PGPU_GRID_STRIDE(t, total)                                                                 \
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < (total);                 \
         t += (int64_t)gridDim.x * blockDim.x)

// The launch grid for gx x-blocks and nyb x nchunks (row tile, z chunk)
// pairs: (gx, nyb, nchunks) when that fits the limits, else the pairs
// flattened over y and z.
static void set_grid(ColLaunch &L, int64_t gx)
{
    const int64_t flat = (int64_t)L.nyb * L.nchunks;
    const int64_t gy = L.nyb <= 65535 && L.nchunks <= 65535 ? L.nyb : std::min<int64_t>(flat, 65535);
    L.grid = dim3((unsigned)gx, (unsigned)gy, (unsigned)((flat + gy - 1) / gy));
}

// A column launch over nx x ny x nz: blocks of bx x by threads owning
// tile_x x tile_y columns each, z chunks sized so that about per_sm blocks
// per SM run (CHUNK_MIN / SMALL_CHUNK planes at least).
static ColLaunch col_launch(int nx, int ny, int nz, bool is3d, int tile_x, int tile_y, int bx, int by, int sms,
                            int per_sm = COL_PER_SM)
{
    ColLaunch L;
    L.block = dim3(bx, by, 1);
    const int64_t gx = ((int64_t)nx + tile_x - 1) / tile_x;
    L.nyb = (int)(((int64_t)ny + tile_y - 1) / tile_y);
    const int64_t xy = gx * L.nyb;
    const int64_t target = (int64_t)sms * per_sm;
    int64_t chunks = is3d ? std::max<int64_t>(1, std::min<int64_t>(nz, (target + xy - 1) / xy)) : 1;
    L.kchunk = is3d ? (int)((nz + chunks - 1) / chunks) : 1;
    const int kmin = (int64_t)nx * ny * nz < SMALL_GRID_PTS ? SMALL_CHUNK : CHUNK_MIN;
    if (is3d && L.kchunk < kmin) L.kchunk = std::min(kmin, nz);
    L.nchunks = is3d ? (int)(((int64_t)nz + L.kchunk - 1) / L.kchunk) : 1;
    set_grid(L, gx);
    return L;
}

// A walk launch over nx x ny x nz: pieces of `group` planes (walk_thread).
static ColLaunch walk_launch(int nx, int ny, int nz, bool is3d, int group)
{
    ColLaunch L;
    const int bx = nx > 64 ? 128 : 32, by = WALK_THREADS / bx;
    L.block = dim3(bx, by, 1);
    const int64_t gx = ((int64_t)nx + bx - 1) / bx;
    L.nyb = (int)(((int64_t)ny + by - 1) / by);
    L.kchunk = group;
    L.nchunks = is3d ? std::max(1, (nz - 1 + group - 1) / group) : 1;
    set_grid(L, gx);
    return L;
}

static size_t blocks_of(const ColLaunch &L) { return (size_t)L.grid.x * L.grid.y * L.grid.z; }

// A walk launch for kernels that end in a block reduction (norms, Krylov
// sums): pieces of up to REDUCE_WALK_PIECES groups, as long as that leaves
// REDUCE_WALK_BLOCKS blocks per SM, so that the reductions are fewer where
// the grid is large and the parallelism stays where it is small.
static ColLaunch reduce_walk_launch(int nx, int ny, int nz, bool is3d, int group, int sms)
{
    ColLaunch L = walk_launch(nx, ny, nz, is3d, group);
    for (int m = REDUCE_WALK_PIECES; m > 1; m /= 2) {
        const ColLaunch W = walk_launch(nx, ny, nz, is3d, group * m);
        if (blocks_of(W) >= (size_t)REDUCE_WALK_BLOCKS * sms) return W;
    }
    return L;
}

// Blocks of 256 threads for a grid-stride loop over `total` items.
static unsigned grid_for(int64_t total, int sms)
{
    return (unsigned)std::max<int64_t>(1, std::min<int64_t>((total + 255) / 256, (int64_t)sms * 32));
}

// Launch kernel k over L: k<<<L.grid, L.block, smem, st>>>(args..., L.kchunk, L.nyb, L.nchunks).
template <class K, class... A>
static void launch(const ColLaunch &L, size_t smem, cudaStream_t st, K k, A... args)
{
    k<<<L.grid, L.block, smem, st>>>(args..., L.kchunk, L.nyb, L.nchunks);
}

// Position t (x fastest) of a box of extents ex x ey x ...: its indices;
// `small` (every t below 2^32) takes 32-bit divisions, far fewer
// instructions.
__device__ __forceinline__ void split_index(int64_t t, uint32_t ex, uint32_t ey, bool small, int &i, int &j, int &k)
{
    if (small) {
        const uint32_t u = (uint32_t)t, r = u / ex;
        i = (int)(u - r * ex);
        j = (int)(r % ey);
        k = (int)(r / ey);
    } else {
        const int64_t r = t / ex;
        i = (int)(t - r * ex);
        j = (int)(r % ey);
        k = (int)(r / ey);
    }
}

// Division of n by a divisor fixed for a loop, for n * d < 2^32: the
// quotient by a multiply-high with m = 2^32 / d rounded up (exact there:
// the error n (m d - 2^32) / (d 2^32) stays below 1 / d), a few
// instructions instead of a division's sequence.
struct SmallDiv {
    uint32_t d, m;
    __host__ __device__ explicit SmallDiv(uint32_t d_) : d(d_), m(d_ > 1 ? 0xffffffffu / d_ + 1 : 0) {}
    __device__ __forceinline__ uint32_t operator()(uint32_t n) const { return d > 1 ? __umulhi(n, m) : n; }
};

// Division of any 32-bit n by a divisor d >= 1 set up on the host: with
// s = ceil(log2 d) and the 33-bit multiplier 2^32 + m, m = 2^32 (2^s - d) /
// d + 1 (rounded down), the quotient is (mulhi(n, m) + n) >> s, exact for
// every n (Granlund and Montgomery's round-up method).
struct FastDiv {
    uint32_t m = 0, s = 0;
    FastDiv() = default;
    explicit FastDiv(uint32_t d)
    {
        while ((1ull << s) < d) ++s;
        m = (uint32_t)(((1ull << 32) * ((1ull << s) - d)) / d + 1);
    }
    __host__ __device__ __forceinline__ uint32_t operator()(uint32_t n) const
    {
#ifdef __CUDA_ARCH__
        const uint32_t hi = __umulhi(n, m);
#else
        const uint32_t hi = (uint32_t)(((uint64_t)n * m) >> 32);
#endif
        return (uint32_t)(((uint64_t)hi + n) >> s);
    }
};

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 10 "src/poisson_gpu.cu"
#endif
// operator.h -- the discrete operator: axes, the couplings at a point, boundary terms, the residual
#ifdef PGPU_SRC_LINES
#line 2 "src/operator.h"
#endif



namespace pgpu {

// The discrete operator on every level.  Each axis is described by node
// positions x[i] and cell widths w[i] (the fine grid is uniform: x = (i+1) h,
// w = h), its two face types and where the walls are.  Along an axis the
// operator is the finite-volume form
//     (1/w_i) [ (u_i - u_{i-1}) / (x_i - x_{i-1}) + (u_i - u_{i+1}) / (x_{i+1} - x_i) ]
// which on the uniform fine grid is exactly the 3-point difference; at a
// Dirichlet wall the neighbour is the wall value at distance (x_0 - xlo), at a
// Neumann wall the flux (the ghost value) enters as g / w_0, and periodic axes
// wrap.  Coarse levels use the same form on their own (possibly non-uniform)
// nodes, so one set of kernels serves every level and boundary type.
//
// On the device a point's operator is its couplings: the weight of each of
// its six neighbours and its diagonal, (A u)_p = diag u_p - sum weight u_nb.
// Two forms give them, both separable into a column's x/y part (ColXY) and a
// plane's z part (ColZ):
//  - the table form (any level, any faces): per-axis tables c_lo / c_hi, the
//    face coefficients at the ghosts and the neighbour offsets (the ghost, or
//    the opposite plane on a periodic axis): col_xy, col_z;
//  - the uniform form (Grid::fast, planes 1..nz-2): the same numbers from a
//    few constants, without table loads: uniform_axis, uniform_xy.
// Every kernel forms the neighbour sum through neighbours(), gen_sum or
// plain_sum, in one order (below; a smoothing update may take
// neighbours_cz() where the z couplings are one constant), a residual
// through point_res, and updates through relax() / relax_scaled(); the
// host assembles the same operator in assemble_dense.  The general form
// (face coefficients and a cell mask, per point and not separable) is read
// through gen_couplings, stencil_off and boundary_terms (below).

struct Axis {
    int n = 1;
    int lo = PGPU_BC_DIRICHLET, hi = PGPU_BC_DIRICHLET;
    bool active = true; // false: the z axis of a 2D problem
    std::vector<double> x, w;
    double xlo = 0, xhi = 0, L = 0; // wall positions (D/N), period (P)
    double h = 1;                   // mean spacing, for the coarsening rule
};

// Coefficients of the axis operator: c_lo[i] couples node i to i-1 (at i = 0
// to the wall or the wrapped node; 0 for a Neumann wall), c_hi[i] to i+1.
// g_lo / g_hi multiply the ghost value at the faces (Dirichlet: the wall
// coefficient; Neumann: 1/w, the flux entering the cell; periodic: c_lo[0]).
struct AxisCoef {
    std::vector<double> c_lo, c_hi;
    double g_lo = 0, g_hi = 0;
};

static AxisCoef axis_coef(const Axis &a)
{
    AxisCoef c;
    const int n = a.n;
    c.c_lo.assign(n, 0.0);
    c.c_hi.assign(n, 0.0);
    if (!a.active) return c;
    for (int i = 0; i < n; ++i) {
        if (i > 0) c.c_lo[i] = 1.0 / (a.w[i] * (a.x[i] - a.x[i - 1]));
        if (i < n - 1) c.c_hi[i] = 1.0 / (a.w[i] * (a.x[i + 1] - a.x[i]));
    }
    switch (a.lo) {
    case PGPU_BC_DIRICHLET: c.c_lo[0] = 1.0 / (a.w[0] * (a.x[0] - a.xlo)); c.g_lo = c.c_lo[0]; break;
    case PGPU_BC_NEUMANN: c.c_lo[0] = 0; c.g_lo = 1.0 / a.w[0]; break;
    default: // periodic: an axis of one node does not couple to itself
        c.c_lo[0] = n > 1 ? 1.0 / (a.w[0] * (a.x[0] - (a.x[n - 1] - a.L))) : 0.0;
        c.g_lo = c.c_lo[0];
    }
    switch (a.hi) {
    case PGPU_BC_DIRICHLET: c.c_hi[n - 1] = 1.0 / (a.w[n - 1] * (a.xhi - a.x[n - 1])); c.g_hi = c.c_hi[n - 1]; break;
    case PGPU_BC_NEUMANN: c.c_hi[n - 1] = 0; c.g_hi = 1.0 / a.w[n - 1]; break;
    default:
        c.c_hi[n - 1] = n > 1 ? 1.0 / (a.w[n - 1] * (a.x[0] + a.L - a.x[n - 1])) : 0.0;
        c.g_hi = c.c_hi[n - 1];
    }
    return c;
}

// Node positions carry rounding, so the couplings of a uniform axis differ
// in their last bits.  Where the interior ones (nodes 1..n-2) agree to
// 1e-12, the axis is uniform (Grid::fast), and (with write) every coupling
// within 1e-12 of the first interior one becomes exactly that number (the
// end nodes' too where they equal it so, as at a Dirichlet face of a
// uniform axis; the ghost coefficient with the wall's coupling): the table
// and the uniform form's one constant are then the same numbers, and
// kernels that read either sum alike (test_routes).  False where the axis
// is not uniform (nothing changed).
static bool snap_uniform(AxisCoef &c, bool write = true)
{
    const int n = (int)c.c_lo.size();
    if (n < 2) return true;
    const double ref = c.c_lo[1], tol = 1e-12 * std::fabs(ref);
    auto near = [&](double v) { return std::fabs(v - ref) <= tol; };
    for (int q = 1; q + 1 < n; ++q)
        if (!near(c.c_hi[q]) || !near(c.c_lo[q])) return false;
    if (!write) return true;
    const bool glo = c.g_lo == c.c_lo[0], ghi = c.g_hi == c.c_hi[n - 1];
    for (int q = 0; q < n; ++q) {
        if (near(c.c_lo[q])) c.c_lo[q] = ref;
        if (near(c.c_hi[q])) c.c_hi[q] = ref;
    }
    if (glo) c.g_lo = c.c_lo[0];
    if (ghi) c.g_hi = c.c_hi[n - 1];
    return true;
}

// The fine axis as the user configured it.
static Axis fine_axis(int64_t n, double h, int lo, int hi, bool active)
{
    Axis a;
    a.n = (int)n;
    a.lo = lo;
    a.hi = hi;
    a.active = active;
    a.h = h;
    a.x.resize(a.n);
    a.w.assign(a.n, h);
    for (int i = 0; i < a.n; ++i) a.x[i] = (i + 1) * h;
    a.xlo = a.x[0] - (lo == PGPU_BC_NEUMANN ? 0.5 * h : h);
    a.xhi = a.x[a.n - 1] + (hi == PGPU_BC_NEUMANN ? 0.5 * h : h);
    a.L = n * h;
    return a;
}

// The three fine axes of a config (2D: an inactive z axis).
static void fine_axes(const pgpu_config &c, Axis fine[3])
{
    const bool is3d = c.nz > 1;
    fine[0] = fine_axis(c.nx, c.hx, c.bc[0], c.bc[1], true);
    fine[1] = fine_axis(c.ny, c.hy, c.bc[2], c.bc[3], true);
    fine[2] = fine_axis(c.nz, is3d ? c.hz : 1.0, is3d ? c.bc[4] : PGPU_BC_NEUMANN, is3d ? c.bc[5] : PGPU_BC_NEUMANN,
                        is3d);
}

// The operator of a small level as a dense matrix a (row p, column q, points
// p = i + nx (j + ny k)) and the cell volumes w of its points.
static void assemble_dense(const Axis ax[3], std::vector<double> &a, std::vector<double> &w)
{
    const int nx = ax[0].n, ny = ax[1].n, nz = ax[2].n, n = nx * ny * nz;
    const int nn[3] = {nx, ny, nz};
    AxisCoef c[3];
    for (int d = 0; d < 3; ++d) c[d] = axis_coef(ax[d]);
    a.assign((size_t)n * n, 0.0);
    w.assign(n, 1.0);
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                const int idx[3] = {i, j, k}, p = i + nx * (j + ny * k);
                for (int d = 0; d < 3; ++d) {
                    if (!ax[d].active) continue;
                    const int m = idx[d], nd = nn[d];
                    const bool per = ax[d].lo == PGPU_BC_PERIODIC;
                    auto at = [&](int mm) { // node p moved to mm along axis d
                        int q[3] = {i, j, k};
                        q[d] = mm;
                        return q[0] + nx * (q[1] + ny * q[2]);
                    };
                    w[p] *= ax[d].w[m];
                    a[(size_t)p * n + p] += c[d].c_lo[m] + c[d].c_hi[m];
                    if (m > 0) a[(size_t)p * n + at(m - 1)] -= c[d].c_lo[m];
                    else if (per && nd > 1) a[(size_t)p * n + at(nd - 1)] -= c[d].c_lo[0];
                    if (m < nd - 1) a[(size_t)p * n + at(m + 1)] -= c[d].c_hi[m];
                    else if (per && nd > 1) a[(size_t)p * n + at(0)] -= c[d].c_hi[nd - 1];
                }
            }
}

// What a kernel knows of one level.  Point (i,j,k), 0-based interior
// indices, is stored at base + i + j*sy + k*sz (2D: k == 0).  o?? are the
// offsets from a face point to the value across the face: the ghost (-1, +1
// times the stride) or, on a periodic axis, the opposite plane.
template <class T> struct Grid {
    int nx, ny, nz;
    int is3d;
    int px, py, pz; // periodic axes
    int64_t sy, sz, base;
    const T *cxl, *cxh, *cyl, *cyh, *czl, *czh; // the table form (AxisCoef per axis)
    T gxl, gxh, gyl, gyh, gzl, gzh;
    int64_t oxl, oxh, oyl, oyh, ozl, ozh;
    int dxl, dxh, dyl, dyh, dzl, dzh; // face carries data (Dirichlet or Neumann)
    int dirichlet;                    // bit f: face f (x-, x+, y-, y+, z-, z+) is Dirichlet
    // The uniform form (fast != 0): along each axis the nodes 1..n-2 couple to
    // both neighbours with the same coefficient (cx, cy, cz; to 1e-12, the
    // rounding of the node positions).  The end nodes may differ: on coarse
    // levels of an even axis the cells at the walls are narrower.  So planes
    // 1..nz-2 have the z couplings cz, and a column's x/y coefficients follow
    // from whether it is an end node: fxl / fxh are node 0's coupling to node
    // 1 and node n-1's to n-2, exl / exh the face parts of their diagonals
    // (c_lo[0], c_hi[n-1]).  The x/y neighbour offsets fit in an int.
    int fast;
    T cx, cy, cz, fxl, fxh, fyl, fyh, exl, exh, eyl, eyh;
    // The general form (gen != 0; a mask or coefficients were set, see
    // gen_couplings): the cell types mk (NULL: every point fluid; ghosts read
    // as fluid) and the face fractions fx, fy, fz (NULL: 1) that multiply the
    // table form's couplings; fx[p] belongs to the face between p - x and p,
    // so the high face of the last node is at its ghost.  fast is 0 then,
    // unless the level is uniform and has a mask but no fractions: the
    // column walk and rbgs_tile_kernel read the mask bytes then.
    int gen;
    const uint8_t *mk;
    const T *fx, *fy, *fz;
    // Level 0 of a 3D grid with coefficients in beta_face's range: 1 / beta
    // per point (layout of u, face ghosts too), from which beta_tile_kernel
    // and, in double, the column walk form the faces' fractions (beta_face,
    // the bits fx .. fz hold): one array read instead of three.  NULL
    // otherwise.
    const T *bw = nullptr;
    // The table is uniform (fast before the fractions turned it off): the
    // column walk groups planes with the fractions (WALK_FRAC).
    int frfast = 0;
    // The general form with a mask, in cycles that need not be symmetric:
    // the closed bits of mk (on coarse levels they include the faces of
    // fraction 0, general.h) steer the prolongation into this level
    // (ip_point_shut).  0 otherwise.
    int shut = 0;
};

// A column's x/y couplings (values vxl .. vyh, neighbour offsets nxl .. nyh)
// and x/y share of the diagonal; a plane's z couplings.
template <class T> struct ColXY {
    T vxl, vxh, vyl, vyh, dxy;
    int64_t nxl, nxh, nyl, nyh;
};
template <class T> struct ColZ {
    T vzl, vzh, dz;
    int64_t nzl, nzh;
};

// The table form's diagonal parts in the arithmetic A (the couplings'
// association order): in T the numbers col_xy and col_z store; in double,
// where a residual or the operator of float values is formed, their exact
// sums.  A float diagonal rounded apart from its couplings (cells that are
// not cubic: 2/hx^2 + 2/hy^2 rounded) shifts the problem by up to eps/2 of
// the diagonal, which lambda_min magnifies: a 2D 59 x 56 grid between
// Neumann and Dirichlet faces solved 1.5e-4 from its exact solution in
// float, by every method.  (uniform_axis takes the same arithmetic.)
template <class A, class T> __device__ __forceinline__ A table_dxy(const Grid<T> &g, int i, int j)
{
    return (A(g.cxl[i]) + A(g.cxh[i])) + (A(g.cyl[j]) + A(g.cyh[j]));
}
template <class A, class T> __device__ __forceinline__ A table_dz(const Grid<T> &g, int k)
{
    return A(g.czl[k]) + A(g.czh[k]);
}
template <class A, class T> __device__ __forceinline__ A table_diag(const Grid<T> &g, int i, int j, int k)
{
    return g.is3d ? table_dxy<A>(g, i, j) + table_dz<A>(g, k) : table_dxy<A>(g, i, j);
}

// The table form.
template <class T> __device__ __forceinline__ ColXY<T> col_xy(const Grid<T> &g, int i, int j)
{
    ColXY<T> c;
    c.vxl = i > 0 ? g.cxl[i] : g.gxl;
    c.nxl = i > 0 ? -1 : g.oxl;
    c.vxh = i < g.nx - 1 ? g.cxh[i] : g.gxh;
    c.nxh = i < g.nx - 1 ? 1 : g.oxh;
    c.vyl = j > 0 ? g.cyl[j] : g.gyl;
    c.nyl = j > 0 ? -g.sy : g.oyl;
    c.vyh = j < g.ny - 1 ? g.cyh[j] : g.gyh;
    c.nyh = j < g.ny - 1 ? g.sy : g.oyh;
    c.dxy = table_dxy<T>(g, i, j);
    return c;
}

template <class T> __device__ __forceinline__ ColZ<T> col_z(const Grid<T> &g, int k)
{
    ColZ<T> c;
    if (!g.is3d) {
        c.vzl = c.vzh = c.dz = T(0);
        c.nzl = c.nzh = 0;
        return c;
    }
    c.vzl = k > 0 ? g.czl[k] : g.gzl;
    c.nzl = k > 0 ? -g.sz : g.ozl;
    c.vzh = k < g.nz - 1 ? g.czh[k] : g.gzh;
    c.nzh = k < g.nz - 1 ? g.sz : g.ozh;
    c.dz = table_dz<T>(g, k);
    return c;
}

// The uniform form along one axis: couplings to the low and high neighbour
// and the diagonal part of a node by its place (first, last) on the axis,
// the diagonal in the arithmetic D (as table_dxy's A).
template <class T, class D>
__host__ __device__ __forceinline__ void uniform_axis(bool first, bool last, T c, T f_lo, T f_hi, T g_lo, T g_hi,
                                                      T e_lo, T e_hi, T &vl, T &vh, D &d)
{
    vl = first ? g_lo : last ? f_hi : c;
    vh = last ? g_hi : first ? f_lo : c;
    d = D(first ? e_lo : last ? f_hi : c) + D(last ? e_hi : first ? f_lo : c);
}

template <class T, class D>
__device__ __forceinline__ void uniform_xy(const Grid<T> &g, bool x0, bool x1, bool y0, bool y1, T &vxl, T &vxh,
                                           T &vyl, T &vyh, D &dxy)
{
    D dx, dy;
    uniform_axis(x0, x1, g.cx, g.fxl, g.fxh, g.gxl, g.gxh, g.exl, g.exh, vxl, vxh, dx);
    uniform_axis(y0, y1, g.cy, g.fyl, g.fyh, g.gyl, g.gyh, g.eyl, g.eyh, vyl, vyh, dy);
    dxy = dx + dy;
}

// The neighbour sum, in one order for every kernel: per axis the pair
// fma(c_hi, u_hi, c_lo u_lo), the low product rounded on its own; then
// (x pair + y pair) + z pair; in the arithmetic A (the solver's precision,
// or double where a residual of float values is formed: its products are
// exact there).  Written out (mul_rn, fma) so that no contraction of the
// compiler's rounds one site otherwise than another: every kernel and
// route forms a point's sum bit for bit alike (test_routes).
// neighbours_cz: the smoothers' sum where the z couplings are one constant,
// the z pair cz (u_lo + u_hi): an operation less than the pair (the paired
// float red-black pass is issue-bound: 9% slower with the pair at 512^3),
// so a smoothing update rounds otherwise than a residual (known, and
// harmless: the updates differ in their form anyway, relax_scaled).
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
template <class A> __device__ __forceinline__ A pair_sum(A cl, A ul, A ch, A uh) { return fma(ch, uh, mul_rn(cl, ul)); }
template <class A, class T>
__device__ __forceinline__ A neighbours_xy(T cxl, T uxl, T cxh, T uxh, T cyl, T uyl, T cyh, T uyh)
{
    return pair_sum(A(cxl), A(uxl), A(cxh), A(uxh)) + pair_sum(A(cyl), A(uyl), A(cyh), A(uyh));
}
template <class A, class T>
__device__ __forceinline__ A neighbours(T cxl, T uxl, T cxh, T uxh, T cyl, T uyl, T cyh, T uyh, T czl, T uzl, T czh,
                                        T uzh)
{
    return neighbours_xy<A>(cxl, uxl, cxh, uxh, cyl, uyl, cyh, uyh) + pair_sum(A(czl), A(uzl), A(czh), A(uzh));
}
template <class A, class T>
__device__ __forceinline__ A neighbours_cz(T cxl, T uxl, T cxh, T uxh, T cyl, T uyl, T cyh, T uyh, T cz, T uzl, T uzh)
{
    return fma(A(cz), A(uzl) + A(uzh), neighbours_xy<A>(cxl, uxl, cxh, uxh, cyl, uyl, cyh, uyh));
}
// The restriction's sums, in one order for every kernel (restrict_kernel,
// restrict_tile_kernel, restrict_residual_kernel, beta_tile_kernel's RR):
// along x the children's w r in a chain of fused multiply-adds from 0, along
// y the x sums so, along z the y sums so (RsPlanes); a child of weight 0
// changes no sum.
template <class T> __device__ __forceinline__ T rs_add(T acc, T w, T v) { return fma(w, v, acc); }
// The residual b + off - diag u at a point (rhs = b + off), rounded once;
// the operator diag u - off is its negation.
template <class A> __device__ __forceinline__ A point_res(A rhs, A diag, A centre) { return fma(-diag, centre, rhs); }

// ---- the general form ----
// A point's type is the low two bits of its mask byte; bits 2..7 say which
// of its six faces (x-, x+, y-, y+, z-, z+) are closed, the neighbour across
// them being solid (the builder sets them, general_coarse.h; a byte is 0 at a fluid
// point with every face open).  Faces couple with the table form's values
// times the face fraction -- beta's harmonic face mean, on coarse levels the
// coarsened one (general_coarse.h) -- and closed faces not at all.  v: the
// couplings to the neighbours at offsets o, d: the faces' parts of the
// diagonal (they differ at Neumann box faces, whose ghost holds a flux: no
// diagonal part; a closed face has a point across it, so there d = v).
constexpr int CELL_BITS = 3, CLOSED_SHIFT = 2;
// A coarse fluid point whose core children are all solid, as gen_coarse_kernel
// writes it for gen_shut_kernel (gen_distance_kernel takes it as fluid);
// gen_check_kernel makes it fluid.
constexpr unsigned CELL_FLUID_SOLID_CORE = 3;
template <class T> __device__ __forceinline__ bool gen_fluid(const Grid<T> &g, int64_t p)
{
    return !g.mk || (g.mk[p] & CELL_BITS) == PGPU_CELL_FLUID;
}
template <class T> struct GenPoint {
    T v[6], d[6];
    int64_t o[6];
};
// Point p's mask byte (0, open fluid, without a mask), for kernels that
// load it ahead of its use.
template <class T> __device__ __forceinline__ unsigned gen_byte(const Grid<T> &g, int64_t p)
{
    return g.mk ? (unsigned)g.mk[p] : 0u;
}
// The faces that couple nothing (bit f, GenPoint's order) of a fluid point
// with mask byte b, where Grid::shut says to look.
template <class T> __device__ __forceinline__ unsigned gen_shut(const Grid<T> &g, unsigned b)
{
    return g.shut ? (b >> CLOSED_SHIFT) & 63u : 0u;
}
// The faces of element e whose fractions are 0 (bit f, GenPoint's order).
template <class T> __device__ __forceinline__ unsigned zero_faces(const Grid<T> &g, int64_t e)
{
    unsigned c = 0;
    if (g.fx) c |= (g.fx[e] == T(0) ? 1u : 0u) | (g.fx[e + 1] == T(0) ? 2u : 0u);
    if (g.fy) c |= (g.fy[e] == T(0) ? 4u : 0u) | (g.fy[e + g.sy] == T(0) ? 8u : 0u);
    if (g.fz && g.is3d) c |= (g.fz[e] == T(0) ? 16u : 0u) | (g.fz[e + g.sz] == T(0) ? 32u : 0u);
    return c;
}
// The faces' fractions fr applied to the table couplings and diagonal
// parts of q; closed faces (bit f of `closed`) couple not at all.
template <class T> __device__ __forceinline__ void gen_faces(GenPoint<T> &q, const T (&fr)[6], unsigned closed)
{
#pragma unroll
    for (int f = 0; f < 6; ++f) {
        const T a = (closed >> f) & 1u ? T(0) : fr[f];
        q.v[f] = mul_rn(q.v[f], a);
        q.d[f] = mul_rn(q.d[f], a);
    }
}
template <class T>
__device__ __forceinline__ GenPoint<T> gen_couplings(const Grid<T> &g, int64_t p, int i, int j, int k)
{
    GenPoint<T> q;
    const ColXY<T> c = col_xy(g, i, j);
    q.o[0] = c.nxl; q.o[1] = c.nxh; q.o[2] = c.nyl; q.o[3] = c.nyh;
    q.v[0] = c.vxl; q.v[1] = c.vxh; q.v[2] = c.vyl; q.v[3] = c.vyh;
    q.d[0] = g.cxl[i]; q.d[1] = g.cxh[i]; q.d[2] = g.cyl[j]; q.d[3] = g.cyh[j];
    T fr[6] = {T(1), T(1), T(1), T(1), T(0), T(0)};
    if (g.fx) { fr[0] = g.fx[p]; fr[1] = g.fx[p + 1]; }
    if (g.fy) { fr[2] = g.fy[p]; fr[3] = g.fy[p + g.sy]; }
    if (g.is3d) {
        const ColZ<T> z = col_z(g, k);
        q.o[4] = z.nzl; q.o[5] = z.nzh; q.v[4] = z.vzl; q.v[5] = z.vzh; q.d[4] = g.czl[k]; q.d[5] = g.czh[k];
        fr[4] = g.fz ? g.fz[p] : T(1);
        fr[5] = g.fz ? g.fz[p + g.sz] : T(1);
    } else {
        q.o[4] = q.o[5] = 0;
        q.v[4] = q.v[5] = q.d[4] = q.d[5] = T(0);
    }
    gen_faces(q, fr, g.mk ? (unsigned)g.mk[p] >> CLOSED_SHIFT : 0u);
    return q;
}
// The neighbour sum and the diagonal of a general point, in the order of
// neighbours(); value(f) gives the neighbour across face f, read
// only where the face couples (a solid neighbour may hold anything).
template <class A, class T, class V>
__device__ __forceinline__ A gen_sum(const GenPoint<T> &q, V value, A &diag)
{
    A n[6];
#pragma unroll
    for (int f = 0; f < 6; ++f) n[f] = q.v[f] != T(0) ? A(value(f)) : A(0);
    diag = ((A(q.d[0]) + A(q.d[1])) + (A(q.d[2]) + A(q.d[3]))) + (A(q.d[4]) + A(q.d[5]));
    return (pair_sum(A(q.v[0]), n[0], A(q.v[1]), n[1]) + pair_sum(A(q.v[2]), n[2], A(q.v[3]), n[3])) +
           pair_sum(A(q.v[4]), n[4], A(q.v[5]), n[5]);
}

// gen_sum's sums without its selects, in its order (diag from d): for
// couplings v that are all nonzero, or whose zero ones face a neighbour
// value set to 0 (no solid point's value is read).
template <class T>
__device__ __forceinline__ T plain_sum(const T (&v)[6], const T (&d)[6], const T (&nb)[6], T &diag)
{
    const T off = (pair_sum(v[0], nb[0], v[1], nb[1]) + pair_sum(v[2], nb[2], v[3], nb[3])) +
                  pair_sum(v[4], nb[4], v[5], nb[5]);
    diag = ((d[0] + d[1]) + (d[2] + d[3])) + (d[4] + d[5]);
    return off;
}

// A fluid point of a uniform masked level with closed faces `closed` (bit
// f, face order of GenPoint): the neighbour values nb across closed faces
// become 0 (a solid point may hold anything), so that the uniform form's
// neighbour sum drops them; returns the diagonal, the open faces' parts d
// summed as gen_sum sums them.  So it is exactly 0 where only Neumann box
// faces (diagonal part 0) are open, as in the general form.
template <class A, class T>
__device__ __forceinline__ A drop_closed(unsigned closed, const T (&d)[6], T (&nb)[6])
{
    A t[6];
#pragma unroll
    for (int f = 0; f < 6; ++f) {
        const bool c = (closed >> f) & 1u;
        if (c) nb[f] = T(0);
        t[f] = c ? A(0) : A(d[f]);
    }
    return ((t[0] + t[1]) + (t[2] + t[3])) + (t[4] + t[5]);
}

// The neighbours' part of the operator at interior point (i, j, k), element
// p, whose value is s[0]; diag gets its diagonal (0 at a point that is not
// fluid, whose caller leaves it as it is).  A: the arithmetic (T, or double
// for a residual of float values).
template <class A, class T>
__device__ __forceinline__ A stencil_off(const Grid<T> &g, const T *s, int64_t p, int i, int j, int k, A &diag)
{
    if (g.gen) {
        if (!gen_fluid(g, p)) {
            diag = A(0);
            return A(0);
        }
        const GenPoint<T> q = gen_couplings(g, p, i, j, k);
        return gen_sum<A>(q, [&](int f) { return s[q.o[f]]; }, diag);
    }
    const ColXY<T> c = col_xy(g, i, j);
    const A xy = neighbours_xy<A>(c.vxl, s[c.nxl], c.vxh, s[c.nxh], c.vyl, s[c.nyl], c.vyh, s[c.nyh]);
    diag = table_diag<A>(g, i, j, k);
    if (!g.is3d) return xy;
    const ColZ<T> z = col_z(g, k);
    return xy + pair_sum(A(z.vzl), A(s[z.nzl]), A(z.vzh), A(s[z.nzh]));
}

// b - A u at interior point (i, j, k), element p, b = f (its boundary
// terms are u's ghosts, which stencil_off reads), in double: the form of
// the small checks that form the residual inside another kernel.
template <class T>
__device__ __forceinline__ double point_residual(const Grid<T> &g, const T *u, const T *f, int64_t p, int i, int j, int k)
{
    double diag = 0;
    const double off = stencil_off<double>(g, u + p, p, i, j, k, diag);
    return point_res((double)f[p] + off, diag, (double)u[p]);
}

// The update shared by Jacobi and red-black: (1 - w) u + w (b + off) / diag.
// A zero diagonal (a single node of a purely periodic/Neumann grid) leaves u
// as it is.  relax_scaled: the same with w / diag precomputed as `scale`.
template <class T> __device__ __forceinline__ T relax(T u, T rhs, T diag, T w)
{
    return diag > T(0) ? (T(1) - w) * u + w * rhs / diag : u;
}
template <class T> __device__ __forceinline__ T relax_scaled(T u, T rhs, T keep, T scale)
{
    return keep * u + rhs * scale;
}
// 1 / d by the approximate reciprocal and STEPS Newton steps, each
// operation rounded as written (d in 2^-1000 .. 2^1000: the callers see to
// it).  Each step squares the relative error: two give the division's
// accuracy, one is enough for float (smooth_scale_lean).
template <int STEPS = 2> __device__ __forceinline__ double recip_newton(double d)
{
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(d));
#pragma unroll
    for (int s = 0; s < STEPS; ++s) r = __fma_rn(r, __fma_rn(-d, r, 1.0), r);
    return r;
}
// w / diag for diag > 0 where a kernel forms it per point: in double the
// hardware's approximate reciprocal and STEPS = 2 Newton steps (about as
// accurate as the division, a fifth of its instructions, and no slow path) where
// diag lies in 2^-1000 .. 2^1000 (the reciprocal flushes subnormals: a
// subnormal diag would give infinity, a diag near the top a zero), else the
// division; in float the division.
__device__ __forceinline__ float smooth_scale(float w, float diag) { return w / diag; }
template <int STEPS = 2> __device__ __forceinline__ double smooth_scale(double w, double diag)
{
    if (!(diag >= 9.332636185032189e-302 && diag <= 1.0715086071862673e+301)) return w / diag; // 2^-1000, 2^1000
    return w * recip_newton<STEPS>(diag);
}

// ... for beta_tile_kernel.  In float by the double reciprocal and one
// Newton step (no branch, no division's slow path, which spilled its 64
// registers; every float diagonal lies in the double one's range, and one
// step leaves 2^-38, below float's rounding).  In double with both steps:
// one left the step 2^-38 from the division's, which a sweep checked
// against the host reference in double can see.
__device__ __forceinline__ float smooth_scale_lean(float w, float diag)
{
    return (float)((double)w * recip_newton<1>(diag));
}
__device__ __forceinline__ double smooth_scale_lean(double w, double diag) { return smooth_scale<2>(w, diag); }

// beta's harmonic face mean 2 a b / (a + b) from the reciprocals wa = 1/a,
// wb = 1/b (Grid::bw): 2 / (wa + wb), the reciprocal as in smooth_scale
// (float: one Newton step), every operation rounded as written, so
// that both points of a face and every kernel (and the stored fractions,
// gen_fractions_kernel) get the same bits.  For beta in beta_recip_min ..
// beta_recip_max, where the sum stays inside the approximate reciprocal's
// range; other data take the division (gen_fractions_kernel).
// In float (one Newton step) the range is 2^-100 .. 2^100, where the
// reciprocals, their sums and the means stay normal floats.
template <class T> __host__ __device__ constexpr double beta_recip_min() { return sizeof(T) == 4 ? 0x1p-100 : 0x1p-900; }
template <class T> __host__ __device__ constexpr double beta_recip_max() { return sizeof(T) == 4 ? 0x1p+100 : 0x1p+900; }
__device__ __forceinline__ double beta_face(double wa, double wb)
{
    return __dmul_rn(2.0, recip_newton(__dadd_rn(wa, wb)));
}
__device__ __forceinline__ float beta_face(float wa, float wb)
{
    const float s = __fadd_rn(wa, wb);
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));
    r = __fmaf_rn(r, __fmaf_rn(-s, r, 1.0f), r);
    return __fmul_rn(2.0f, r);
}

// The six face fractions (GenPoint's order) of a point q away from the box
// faces: from beta's reciprocals bw (wzl, wc, wzh: those of the points below,
// at and above q, which the callers hold), or the stored fx .. fz.
template <class T>
__device__ __forceinline__ void beta_faces(const T *__restrict__ bw, int64_t q, int64_t sy, T wzl, T wc, T wzh,
                                           T (&fr)[6])
{
    fr[0] = beta_face(__ldg(bw + q - 1), wc);
    fr[1] = beta_face(wc, __ldg(bw + q + 1));
    fr[2] = beta_face(__ldg(bw + q - sy), wc);
    fr[3] = beta_face(wc, __ldg(bw + q + sy));
    fr[4] = beta_face(wzl, wc);
    fr[5] = beta_face(wc, wzh);
}
template <class T> __device__ __forceinline__ void stored_faces(const Grid<T> &g, int64_t q, T (&fr)[6])
{
    fr[0] = __ldg(g.fx + q); fr[1] = __ldg(g.fx + q + 1);
    fr[2] = __ldg(g.fy + q); fr[3] = __ldg(g.fy + q + g.sy);
    fr[4] = __ldg(g.fz + q); fr[5] = __ldg(g.fz + q + g.sz);
}

// omega / the interior diagonal of a uniform level, rounded as the kernels
// form the diagonal (0 when the level is not uniform: then unused).
template <class T> static T interior_scale(const Grid<T> &g, T omega)
{
    if (!g.fast) return T(0);
    const T d = ((g.cx + g.cx) + (g.cy + g.cy)) + (g.cz + g.cz);
    return omega / d;
}

// Boundary terms of the right-hand side at a point: the ghost contributions
// of its Dirichlet and Neumann faces (what the neighbour sum would be if the
// interior were 0).  box_terms: the box's faces and the level's table
// alone, as the FFT's box problem takes them (its method refuses masks and
// beta; as a preconditioner the vector whose ghosts it reads, its output,
// is 0 there and at a mask's held points, so the general form's terms are
// 0 too).
template <class T>
__device__ __forceinline__ T box_terms(const Grid<T> &g, const T *__restrict__ u, int64_t p, int i, int j, int k)
{
    T s = T(0);
    if (i == 0 && g.dxl) s += g.gxl * u[p + g.oxl];
    if (i == g.nx - 1 && g.dxh) s += g.gxh * u[p + g.oxh];
    if (j == 0 && g.dyl) s += g.gyl * u[p + g.oyl];
    if (j == g.ny - 1 && g.dyh) s += g.gyh * u[p + g.oyh];
    if (g.is3d) {
        if (k == 0 && g.dzl) s += g.gzl * u[p + g.ozl];
        if (k == g.nz - 1 && g.dzh) s += g.gzh * u[p + g.ozh];
    }
    return s;
}
// In the general form they are the faces towards a box ghost with data and
// (where `held`) towards a Dirichlet point (the held value), with their
// fractions; 0 at a point that is not fluid.
template <class T>
__device__ __forceinline__ T boundary_terms(const Grid<T> &g, const T *__restrict__ u, int64_t p, int i, int j, int k,
                                            bool held = true)
{
    if (g.gen) {
        if (!gen_fluid(g, p)) return T(0);
        const GenPoint<T> q = gen_couplings(g, p, i, j, k);
        const bool ghost[6] = {i == 0 && g.dxl, i == g.nx - 1 && g.dxh, j == 0 && g.dyl, j == g.ny - 1 && g.dyh,
                               k == 0 && g.dzl, k == g.nz - 1 && g.dzh};
        T s = T(0);
#pragma unroll
        for (int f = 0; f < 6; ++f) {
            if (q.v[f] == T(0)) continue;
            const int64_t o = p + q.o[f];
            const bool in_box = !ghost[f] && (f < 4 || g.is3d);
            if (ghost[f] || (held && in_box && g.mk && (g.mk[o] & CELL_BITS) == PGPU_CELL_DIRICHLET)) s += q.v[f] * u[o];
        }
        return s;
    }
    return box_terms(g, u, p, i, j, k);
}

// The mean taken out of a singular problem's right-hand side, in two parts
// of u's precision: hi, the mean rounded, and lo, what that rounding left
// (0 in double).  f - hi is exact where f lies near the mean, so (f - hi) -
// lo is b to b's own rounding.  One part alone left half an ulp of the mean
// in every point, a constant outside A's range: the residual of a float
// problem whose mean is large against b (all-Neumann, f = 1540 + a few
// units) could not fall below it, and CG with the FFT preconditioner
// stalled at 26 times ||b||.  `shift` in the kernels is this pair, read
// from a device array of two (load_shift: none, 0).
template <class T> struct Shift {
    T hi, lo;
    __host__ __device__ __forceinline__ T of(T v) const { return (v - hi) - lo; }
    template <class A> __device__ __forceinline__ A of_as(T v) const { return (A(v) - A(hi)) - A(lo); }
};
template <class T> __device__ __forceinline__ Shift<T> load_shift(const T *p)
{
    return p ? Shift<T>{p[0], p[1]} : Shift<T>{};
}
// The pair for a mean m formed in double; store_shift writes it.
template <class T> __device__ __forceinline__ Shift<T> shift_of(double m)
{
    const T hi = T(m);
    return Shift<T>{hi, T(m - (double)hi)};
}
template <class T> __device__ __forceinline__ void store_shift(T *p, double m)
{
    p[0] = T(m);
    p[1] = shift_of<T>(m).lo;
}

// The column walk shared by the Jacobi sweep, the residual and the Krylov
// methods' operator.  For each plane k in [k0, k1) of column (i, j) it calls
//     emit(p, centre, rhs, diag, uniform)
// with p the element index of the point, centre = u there, rhs = (f - shift)
// + the neighbour sum (the neighbour sum alone, f not read, where
// Emit::reads_f is false), diag the diagonal, all in the arithmetic A; `uniform`
// (a compile-time constant after inlining) says that diag is the column's
// value on the fast range, announced once by emit.uniform_diag(diag,
// interior) before it (interior: the column touches no x/y face, so diag is
// the level's interior diagonal), so the caller may use a reciprocal it
// computed there.
// Planes 1..nz-2 of a level with g.fast run in groups of G (walk_launch
// gives each thread one group): the G+2 column values and G values of f a
// group needs are all loaded before it computes, so they are in flight
// together; x/y neighbours are the neighbouring threads' column values and
// come from L1.  The remaining planes (the first, the last, a short tail)
// take the table form, which handles ghosts, wrapped planes and non-uniform
// coefficients.  MK (walk_masked), a kernel's template argument so that the
// box's kernels keep their registers: WALK_MASK (a uniform level with a mask
// and no face fractions) groups too, a point with a nonzero mask byte is
// skipped where it is no unknown and otherwise drops its closed faces
// (drop_closed); WALK_FRAC (a level whose table is uniform under face
// fractions, Grid::frfast) groups with the general form's couplings
// (gen_faces, gen_sum: the table's values, the same bits as the plane-wise
// form), the fractions read at the point or, in columns off the x / y faces
// of level 0 with Grid::bw, formed from beta's reciprocals; WALK_BETA the
// same on a level without a mask (beta alone), with no mask byte read.
enum { WALK_PLAIN, WALK_MASK, WALK_FRAC, WALK_BETA }; // column_walk's MK
template <class T, class A, int G, int MK, class Emit>
__device__ __forceinline__ void column_walk(const Grid<T> &g, const T *__restrict__ u, const T *__restrict__ f,
                                            int i, int j, int k0, int k1, Shift<T> shift, Emit &emit)
{
    const int64_t sz = g.sz;
    const int64_t col = g.base + i + (int64_t)j * g.sy;
    int kg0 = k1, kg1 = k1; // the grouped range [kg0, kg1)
    if (MK >= WALK_FRAC ? g.frfast : g.fast) {
        const int a = max(k0, 1), b = min(k1, g.nz - 1);
        if (b - a >= G) {
            kg0 = a;
            kg1 = a + (b - a) / G * G;
        }
    }
    // (Each part takes its own column coefficients, so that nothing of the
    // table form stays live in registers across the fast loop.)
    auto general = [&](int k) {
        const int64_t p = col + (int64_t)k * sz;
        const T *s = u + p;
        if (g.gen && !gen_fluid(g, p)) { // not an unknown: left as it is
            emit.skip(p, s[0]);
            return;
        }
        A diag;
        const A off = stencil_off<A>(g, s, p, i, j, k, diag);
        if constexpr (Emit::reads_f) emit(p, A(s[0]), shift.template of_as<A>(f[p]) + off, diag, false);
        else emit(p, A(s[0]), off, diag, false);
    };
    for (int k = k0; k < kg0; ++k) general(k);
    if constexpr (MK >= WALK_FRAC) {
        if (kg0 < kg1) {
            const ColXY<T> c = col_xy(g, i, j);
            const int64_t o[4] = {c.nxl, c.nxh, c.nyl, c.nyh};
            const T d[4] = {g.cxl[i], g.cxh[i], g.cyl[j], g.cyh[j]};
            const bool lean = Tune<T>::beta_reciprocals && g.bw && i > 0 && i < g.nx - 1 && j > 0 && j < g.ny - 1;
            constexpr int GF = 2; // planes per group (G's registers spilled here)
            static_assert(G % GF == 0, "the grouped range is a multiple of G");
            for (int64_t p = col + (int64_t)kg0 * sz, k = kg0; k < kg1; k += GF, p += GF * sz) {
                const T *s = u + p, *fp = f + p;
                T zw[GF + 2], fw[GF], ww[GF + 2]; // planes k-1 .. k+GF of u and 1 / beta; f at k .. k+GF-1
                unsigned cw[GF];
#pragma unroll
                for (int q = 0; q < GF + 2; ++q) zw[q] = s[(q - 1) * sz];
#pragma unroll
                for (int q = 0; q < GF; ++q) fw[q] = Emit::reads_f ? fp[q * sz] : T(0);
#pragma unroll
                for (int q = 0; q < GF; ++q) cw[q] = MK == WALK_FRAC && g.mk ? g.mk[p + q * sz] : 0u;
                if (lean) {
#pragma unroll
                    for (int q = 0; q < GF + 2; ++q) ww[q] = __ldg(g.bw + p + (q - 1) * sz);
                }
#pragma unroll
                for (int q = 0; q < GF; ++q) {
                    const int64_t pq = p + q * sz;
                    if ((cw[q] & CELL_BITS) != PGPU_CELL_FLUID) {
                        emit.skip(pq, zw[q + 1]);
                        continue;
                    }
                    GenPoint<T> gp;
                    gp.v[0] = c.vxl; gp.v[1] = c.vxh; gp.v[2] = c.vyl; gp.v[3] = c.vyh;
#pragma unroll
                    for (int a = 0; a < 4; ++a) gp.d[a] = d[a];
                    gp.v[4] = gp.d[4] = g.czl[k + q];
                    gp.v[5] = gp.d[5] = g.czh[k + q];
                    T fr[6];
                    if (lean) beta_faces(g.bw, pq, g.sy, ww[q], ww[q + 1], ww[q + 2], fr);
                    else stored_faces(g, pq, fr);
                    gen_faces(gp, fr, cw[q] >> CLOSED_SHIFT);
                    const T *sq = s + q * sz;
                    A dq;
                    const A off = gen_sum<A>(gp, [&](int fc) {
                        return fc < 4 ? sq[o[fc]] : zw[fc == 4 ? q : q + 2];
                    }, dq);
                    if constexpr (Emit::reads_f) emit(pq, A(zw[q + 1]), shift.template of_as<A>(fw[q]) + off, dq, false);
                    else emit(pq, A(zw[q + 1]), off, dq, false);
                }
            }
        }
    } else if (kg0 < kg1) {
        const bool x0 = i == 0, x1 = i == g.nx - 1, y0 = j == 0, y1 = j == g.ny - 1;
        T vxl, vxh, vyl, vyh;
        A dxy;
        uniform_xy(g, x0, x1, y0, y1, vxl, vxh, vyl, vyh, dxy);
        const int nxl = x0 ? (int)g.oxl : -1, nxh = x1 ? (int)g.oxh : 1;
        const int nyl = y0 ? (int)g.oyl : -(int)g.sy, nyh = y1 ? (int)g.oyh : (int)g.sy;
        const T cz = g.cz;
        const A diag = dxy + (A(cz) + A(cz));
        emit.uniform_diag(diag, !x0 && !x1 && !y0 && !y1);
        // Without a periodic x axis the x neighbours are always the adjacent
        // elements (ghosts at the faces): constant offsets, no address math.
        auto groups = [&](auto x_adjacent) {
            constexpr bool adj = decltype(x_adjacent)::value;
            for (int64_t p = col + (int64_t)kg0 * sz, k = kg0; k < kg1; k += G, p += G * sz) {
                const T *s = u + p, *fp = f + p;
                T zw[G + 2], fw[G]; // planes k-1 .. k+G of the column; f at k .. k+G-1
                unsigned cw[G];     // mask bytes at k .. k+G-1
#pragma unroll
                for (int q = 0; q < G + 2; ++q) zw[q] = s[(q - 1) * sz];
#pragma unroll
                for (int q = 0; q < G; ++q) fw[q] = Emit::reads_f ? fp[q * sz] : T(0);
#pragma unroll
                for (int q = 0; q < G; ++q) cw[q] = MK ? g.mk[p + q * sz] : 0u;
#pragma unroll
                for (int q = 0; q < G; ++q) {
                    const T *sq = s + q * sz;
                    T nb[6] = {sq[adj ? -1 : nxl], sq[adj ? 1 : nxh], sq[nyl], sq[nyh], zw[q], zw[q + 2]};
                    A dq = diag;
                    if (MK && cw[q] != 0u) {
                        if ((cw[q] & CELL_BITS) != PGPU_CELL_FLUID) {
                            emit.skip(p + q * sz, zw[q + 1]);
                            continue;
                        }
                        const T d[6] = {g.cxl[i], g.cxh[i], g.cyl[j], g.cyh[j], cz, cz};
                        dq = drop_closed<A>(cw[q] >> CLOSED_SHIFT, d, nb);
                    }
                    const A off = neighbours<A>(vxl, nb[0], vxh, nb[1], vyl, nb[2], vyh, nb[3], cz, nb[4], cz, nb[5]);
                    const bool uni = !MK || cw[q] == 0u;
                    if constexpr (Emit::reads_f) emit(p + q * sz, A(zw[q + 1]), shift.template of_as<A>(fw[q]) + off, dq, uni);
                    else emit(p + q * sz, A(zw[q + 1]), off, dq, uni);
                }
            }
        };
        if (g.px) groups(std::false_type{});
        else groups(std::true_type{});
    }
    for (int k = kg1; k < k1; ++k) general(k);
}

// Calls fn with column_walk's MK for level g as a compile-time constant:
// WALK_FRAC where the table is uniform under face fractions (WALK_BETA where
// the level has no mask), WALK_MASK on a uniform level with a mask (no
// fractions), else WALK_PLAIN.
template <class T, class F> static void walk_masked(const Grid<T> &g, F &&fn)
{
    if (g.frfast && !g.mk) fn(std::integral_constant<int, WALK_BETA>{});
    else if (g.frfast) fn(std::integral_constant<int, WALK_FRAC>{});
    else if (g.fast && g.mk) fn(std::integral_constant<int, WALK_MASK>{});
    else fn(std::integral_constant<int, WALK_PLAIN>{});
}

// ---- the residual ----
// Three numbers per point reduce (reduce.h): two sums and a maximum.
struct Red3 {
    double s0, s1, m;
};

// The residual is formed in double whatever the precision: f - A u nearly
// cancels once u is close to the solution, and in float the rounding of the
// sum (eps diag |u|) would then be all the residual holds, limiting the
// solution's accuracy to about eps times the condition number instead of
// float's rounding of u.  The products of float values are exact in double;
// the kernels stay memory-bound.
template <class R, bool WRITE, bool REDUCE> struct ResidualEmit {
    static constexpr bool reads_f = true;
    R *r;
    Red3 *acc;
    __device__ void uniform_diag(double, bool) {}
    __device__ void skip(int64_t p, R)
    {
        if (WRITE) r[p] = R(0);
    }
    __device__ void operator()(int64_t p, double centre, double rhs, double diag, bool)
    {
        const double res = point_res(rhs, diag, centre);
        if (WRITE) r[p] = R(res);
        if (REDUCE) {
            acc->s0 += res;
            acc->s1 += res * res;
            const double aa = fabs(res);
            acc->m = (aa >= acc->m || aa != aa) ? aa : acc->m;
        }
    }
};

__device__ __forceinline__ void write_partial(double *partials, Red3 v); // reduce.h

// Residual r = b + off - diag * u with b = f - shift (shiftp may be NULL).
// WRITE stores r in the layout of u, in the precision R (the multigrid
// restriction reads it; PGPU_MIXED rounds it into its float problem);
// REDUCE sums r, r^2 and max |r| into block partials (the norm, the mean).
template <class T, bool WRITE, bool REDUCE, class R = T, int MK = WALK_PLAIN>
__global__ void __launch_bounds__(WALK_THREADS, REDUCE ? Tune<T>::norm_blocks : Tune<T>::walk_blocks)
    residual_kernel(const Grid<T> g, const T *__restrict__ u, const T *__restrict__ f,
                    const T *__restrict__ shiftp, R *__restrict__ r, double *partials, int kchunk, int nyb,
                    int nchunks)
{
    int i, j, k0, k1;
    Red3 acc{0, 0, 0};
    if (walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const Shift<T> shift = load_shift(shiftp);
        ResidualEmit<R, WRITE, REDUCE> emit{r, &acc};
        column_walk<T, double, Tune<T>::walk_group, MK>(g, u, f, i, j, k0, k1, shift, emit);
    }
    if (REDUCE) write_partial(partials, acc);
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 11 "src/poisson_gpu.cu"
#endif
// reduce.h -- reductions and vector operations over a level; the stop test (Convergence)
#ifdef PGPU_SRC_LINES
#line 2 "src/reduce.h"
#endif


namespace pgpu {

// Reductions: three numbers per point (two sums and a maximum), reduced warp
// (shuffle) -> block (shared memory) -> one partial per block; a single
// block then adds the partials in a fixed order.  No atomics: results are
// bit-identical from run to run.  The vector operations over a level's
// interior (dot, axpby) are the building blocks of the solvers' bookkeeping.
// In the distributed mode each rank's totals are all-reduced before the
// last step that uses them (dist_allreduce, dist.h).

// (dist.h) fill the ghost planes of level-0 array u at the box's faces
// between ranks; all-reduce d[0 .. nsum) by sums and d[nsum .. nsum + nmax)
// by maxima on stream st.  Both do nothing on a single-GPU handle.
template <class T> static pgpu_status dist_halo(Env &env, const Grid<T> &g, T *u, bool lines = false);
static pgpu_status dist_allreduce(Env &env, double *d, int nsum, int nmax, cudaStream_t st);

__device__ __forceinline__ Red3 red_combine(Red3 a, Red3 b)
{
    // NaN must survive the maximum (fmax would drop it).
    return Red3{a.s0 + b.s0, a.s1 + b.s1, (a.m >= b.m || a.m != a.m) ? a.m : b.m};
}
__device__ __forceinline__ Red3 shfl_down(Red3 x, int o)
{
    return Red3{__shfl_down_sync(0xffffffffu, x.s0, o), __shfl_down_sync(0xffffffffu, x.s1, o),
                __shfl_down_sync(0xffffffffu, x.m, o)};
}

// Four sums (the Krylov methods' fused dot products, krylov.h).
struct Sum4 {
    double v[4];
};
__device__ __forceinline__ Sum4 red_combine(Sum4 a, Sum4 b)
{
#pragma unroll
    for (int q = 0; q < 4; ++q) a.v[q] += b.v[q];
    return a;
}
__device__ __forceinline__ Sum4 shfl_down(Sum4 x, int o)
{
#pragma unroll
    for (int q = 0; q < 4; ++q) x.v[q] = __shfl_down_sync(0xffffffffu, x.v[q], o);
    return x;
}

// Warp (shuffle) then block (shared memory); V is Red3 or Sum4.  Valid in
// thread 0 only.
template <class V> __device__ V block_reduce(V v)
{
    __shared__ V warp_part[32];
    const int lane = (threadIdx.x + threadIdx.y * blockDim.x) & 31;
    const int warp = (threadIdx.x + threadIdx.y * blockDim.x) >> 5;
    const int nwarps = (blockDim.x * blockDim.y + 31) >> 5;
    auto warp_sum = [](V &x) {
        for (int o = 16; o > 0; o >>= 1) x = red_combine(x, shfl_down(x, o));
    };
    warp_sum(v);
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < nwarps ? warp_part[lane] : V{};
        warp_sum(v);
    }
    return v;
}

// What the prolongation can measure on its way (REDUCE): the size of the
// correction it adds, sum (P e)^2, of the corrected values, sum out^2, and
// max |P e|, per block; a float V-cycle's convergence test.
__device__ __forceinline__ void note_correction(Red3 &acc, double v, double out)
{
    acc.s0 += v * v;
    acc.s1 += out * out;
    const double a = fabs(v);
    acc.m = (a >= acc.m || a != a) ? a : acc.m;
}

__device__ __forceinline__ void write_partial(double *partials, Red3 v)
{
    v = block_reduce(v);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        const size_t b = blockIdx.x + (size_t)gridDim.x * (blockIdx.y + (size_t)gridDim.y * blockIdx.z);
        partials[3 * b + 0] = v.s0;
        partials[3 * b + 1] = v.s1;
        partials[3 * b + 2] = v.m;
    }
}

// What the final pass does with the total besides storing it.
enum FinalMode { FINAL_STORE = 0, FINAL_SHIFT = 1 };

// Block b: out[3b .. 3b+2] = the totals of partials [b seg, (b+1) seg) of
// nblocks.  One block is the final pass; many fold a long list first
// (Reducer::total), in a fixed order either way.  FINAL_SHIFT (one block)
// also sets *shift = singular ? s0 / npts : 0 (the mean of the right-hand
// side, removed from singular problems).
template <class T>
__global__ void __launch_bounds__(FINAL_THREADS) final_kernel(const double *__restrict__ partials, size_t nblocks,
                                                              size_t seg, double *out, int mode, double npts,
                                                              int singular, T *shift)
{
    Red3 v{0, 0, 0};
    const size_t end = min(nblocks, seg * (blockIdx.x + 1));
    for (size_t b = seg * blockIdx.x + threadIdx.x; b < end; b += blockDim.x)
        v = red_combine(v, Red3{partials[3 * b], partials[3 * b + 1], partials[3 * b + 2]});
    v = block_reduce(v);
    if (threadIdx.x == 0) {
        out[3 * blockIdx.x + 0] = v.s0;
        out[3 * blockIdx.x + 1] = v.s1;
        out[3 * blockIdx.x + 2] = v.m;
        if (mode == FINAL_SHIFT) store_shift(shift, singular ? v.s0 / npts : 0.0);
    }
}

// The column launch's thread: its column (i, j) and its planes [k0, k1);
// false outside the grid (the block still takes part in its reduction).
template <class T>
__device__ __forceinline__ bool col_thread(const Grid<T> &g, int kchunk, int nyb, int nchunks, int &i, int &j,
                                           int &k0, int &k1)
{
    int yb, zc;
    const bool blk = block_yz(nyb, nchunks, yb, zc);
    i = blockIdx.x * COL_BX + threadIdx.x;
    j = yb * COL_BY + threadIdx.y;
    chunk_planes(zc, kchunk, g.nz, k0, k1);
    return blk && i < g.nx && j < g.ny;
}

template <class T> __device__ __forceinline__ int64_t at_point(const Grid<T> &g, int i, int j, int k)
{
    return g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
}

__device__ __forceinline__ void accumulate(Red3 &acc, double s, double q, double a)
{
    acc.s0 += s;
    acc.s1 += q;
    acc.m = (a >= acc.m || a != a) ? a : acc.m;
}

// Right-hand side scan: c = f + boundary terms; sums c (or c - shift when
// `centred`), c^2 and max |c|.  NaN/Inf anywhere in f or the boundary data
// shows in the sums.
template <class T>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    scan_rhs_kernel(const Grid<T> g, const T *__restrict__ u, const T *__restrict__ f, const T *__restrict__ shiftp,
                    int centred, double *partials, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    Red3 acc{0, 0, 0};
    if (col_thread(g, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const double shift = centred ? (double)shiftp[0] + (double)shiftp[1] : 0.0;
        for (int k = k0; k < k1; ++k) {
            const int64_t p = at_point(g, i, j, k);
            if (!gen_fluid(g, p)) continue; // (the general form) not an unknown: f is not read
            const double c = ((double)f[p] + (double)boundary_terms(g, u, p, i, j, k)) - shift;
            accumulate(acc, c, c * c, fabs(c));
        }
    }
    write_partial(partials, acc);
}

// Over the interior: sum a*b (b == NULL: sum a), sum a^2 and max |a|.
template <class T>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    dot_kernel(const Grid<T> g, const T *__restrict__ a, const T *__restrict__ b, double *partials, int kchunk,
               int nyb, int nchunks)
{
    int i, j, k0, k1;
    Red3 acc{0, 0, 0};
    if (col_thread(g, kchunk, nyb, nchunks, i, j, k0, k1))
        for (int k = k0; k < k1; ++k) {
            const int64_t p = at_point(g, i, j, k);
            if (!gen_fluid(g, p)) continue;
            const double x = (double)a[p];
            accumulate(acc, b ? x * (double)b[p] : x, x * x, fabs(x));
        }
    write_partial(partials, acc);
}

// Over the interior: out = c + a x + b y - mean, where x or y may be NULL
// (0) and mean = mean_of[0] / npts when mean_of is given, else 0; x may be of
// another precision (PGPU_MIXED adds a float correction to a double u).
template <class T, class X = T>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    axpby_kernel(const Grid<T> g, T c, T a, const X *x, T b, const T *y, T *out, const double *__restrict__ mean_of,
                 double npts, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!col_thread(g, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    // the mean in two parts, so that it leaves no rounding of its own size behind
    const Shift<T> sub = mean_of ? shift_of<T>(mean_of[0] / npts) : Shift<T>{};
    for (int k = k0; k < k1; ++k) {
        const int64_t p = at_point(g, i, j, k);
        if (!gen_fluid(g, p)) continue; // (the general form) only unknowns change
        T v = c;
        if (x) v += a * T(x[p]);
        if (y) v += b * y[p];
        out[p] = sub.of(v);
    }
}

// The last pass of a reduction over `blocks` block partials of `width`
// doubles each, at part: where they are many (one block would take tens of
// microseconds) fold(n, seg, from, blocks, to) first adds them into n
// groups of seg at part + width * nparts, then last(from, blocks) adds what
// is left in one block.  Shared by the Reducer (three numbers) and the
// Krylov methods (four sums).
template <class Fold, class Last>
static pgpu_status fold_then_last(char *err, double *part, size_t nparts, int width, size_t blocks, Fold fold,
                                  Last last)
{
    const double *from = part;
    if (blocks > FOLD_AT) {
        const size_t seg = (blocks + FOLD_BLOCKS - 1) / FOLD_BLOCKS, n = (blocks + seg - 1) / seg;
        double *folded = part + (size_t)width * nparts;
        fold((unsigned)n, seg, from, blocks, folded);
        PGPU_LAUNCHED();
        from = folded;
        blocks = n;
    }
    last(from, blocks);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// Slots of the results buffer (three doubles each).
enum { RES_SCAN = 0, RES_CENTRED = 3, RES_NORM = 6, RES_SUM = 9, RES_CORR = 12, RES_COUNT = 15 };

// The reductions' buffers: block partials, the totals, their host copy.
struct Reducer {
    double *d_part = nullptr, *d_res = nullptr, *h_res = nullptr;
    double *h_res_dev = nullptr; // h_res as the device addresses it (pinned memory; NULL: copy through d_res)
    size_t nparts = 0;
    pgpu_status init(Env &env, size_t most_blocks)
    {
        char *err = env.err;
        nparts = most_blocks;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&d_part, (nparts + FOLD_BLOCKS) * 3 * sizeof(double),
                                   "reduction partials"));
        PGPU_FORWARD(env.mem.alloc(err, (void **)&d_res, RES_COUNT * sizeof(double), "reduction results"));
        PGPU_CUDA_SETUP(env, cudaMallocHost((void **)&h_res, RES_COUNT * sizeof(double)));
        if (h_res && cudaHostGetDevicePointer((void **)&h_res_dev, h_res, 0) != cudaSuccess) {
            (void)cudaGetLastError();
            h_res_dev = nullptr;
        }
        return PGPU_SUCCESS;
    }
    ~Reducer()
    {
        if (h_res) cudaFreeHost(h_res);
    }
    // The totals of the partials of `blocks` blocks into slot; FINAL_SHIFT
    // also sets *shift (see final_kernel).
    // Distributed: the rank's totals go to dist->d_red, are all-reduced
    // there, and the final pass runs again over that one partial.
    template <class T>
    pgpu_status total(Env &env, size_t blocks, int slot, int mode = FINAL_STORE, double npts = 0, int singular = 0,
                      T *shift = nullptr)
    {
        const cudaStream_t st = env.st;
        char *err = env.err;
        double *loc = env.dist ? env.dist->d_red : nullptr;
        PGPU_FORWARD(fold_then_last(
            env.err, d_part, nparts, 3, blocks,
            [&](unsigned n, size_t seg, const double *from, size_t b, double *to) {
                final_kernel<T><<<n, FINAL_THREADS, 0, st>>>(from, b, seg, to, FINAL_STORE, 0, 0, nullptr);
            },
            [&](const double *from, size_t b) {
                if (loc) final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(from, b, b, loc, FINAL_STORE, 0, 0, nullptr);
                else final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(from, b, b, d_res + slot, mode, npts, singular, shift);
            }));
        if (!loc) return PGPU_SUCCESS;
        PGPU_FORWARD(dist_allreduce(env, loc, 2, 1, st));
        final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(loc, 1, 1, d_res + slot, mode, npts, singular, shift);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // Copies `count` results from slot on to the host and waits for them.
    pgpu_status fetch(Env &env, int slot, int count)
    {
        char *err = env.err;
        PGPU_CUDA(cudaMemcpyAsync(h_res + slot, d_res + slot, count * sizeof(double), cudaMemcpyDeviceToHost, env.st));
        PGPU_CUDA(cudaStreamSynchronize(env.st));
        return PGPU_SUCCESS;
    }
    // sum a*b (a's sum when b is NULL), sum a^2, max |a| over level g's
    // interior into slot (on the device).
    template <class T>
    pgpu_status dot(Env &env, const Grid<T> &g, const ColLaunch &c, const T *a, const T *b, int slot)
    {
        char *err = env.err;
        launch(c, 0, env.st, dot_kernel<T>, g, a, b, d_part);
        PGPU_LAUNCHED();
        return total<T>(env, blocks_of(c), slot);
    }
};

// out = c + a x + b y (- the mean in mean_of) over g's interior.
template <class T, class X = T>
static pgpu_status axpby(Env &env, const Grid<T> &g, const ColLaunch &cl, T c, T a, const X *x, T b, const T *y,
                         T *out, const double *mean_of = nullptr, double npts = 0)
{
    char *err = env.err;
    launch(cl, 0, env.st, axpby_kernel<T, X>, g, c, a, x, b, y, out, mean_of, npts);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// u -= mean(u) over g's interior of npts points: the constant of a singular
// problem's null space.
template <class T>
static pgpu_status subtract_mean(Env &env, Reducer &red, const Grid<T> &g, const ColLaunch &cl, T *u, double npts)
{
    PGPU_FORWARD(red.dot(env, g, cl, (const T *)u, (const T *)nullptr, RES_SUM));
    return axpby(env, g, cl, T(0), T(1), (const T *)u, T(0), (const T *)nullptr, u, red.d_res + RES_SUM, npts);
}

// ||f - shift - A u||_2 and max |f - shift - A u| over g's interior, into
// the reducer's slot (residual_norm: RES_NORM, and synchronises).
template <class T>
static pgpu_status residual_norm_launch(Env &env, Reducer &red, const Grid<T> &g, const ColLaunch &walk, const T *u,
                                        const T *f, const T *shift, int slot = RES_NORM)
{
    char *err = env.err;
    PGPU_FORWARD(dist_halo(env, g, const_cast<T *>(u)));
    walk_masked(g, [&](auto mk) {
        launch(walk, 0, env.st, residual_kernel<T, false, true, T, decltype(mk)::value>, g, u, f, shift, (T *)nullptr,
               red.d_part);
    });
    PGPU_LAUNCHED();
    return red.total<T>(env, blocks_of(walk), slot);
}
template <class T>
static pgpu_status residual_norm(Env &env, Reducer &red, const Grid<T> &g, const ColLaunch &walk, const T *u,
                                 const T *f, const T *shift, double &rn, double &rmax)
{
    PGPU_FORWARD(residual_norm_launch(env, red, g, walk, u, f, shift));
    PGPU_FORWARD(red.fetch(env, RES_NORM, 3));
    rn = std::sqrt(red.h_res[RES_NORM + 1]);
    rmax = red.h_res[RES_NORM + 2];
    return PGPU_SUCCESS;
}

static double float_residual_floor(const pgpu_config &c); // validate.h
static double float_floor(double lmax, double lmin);       // validate.h
static double rounding_floor(double eps, double lmax, double lmin); // validate.h
constexpr double FLOAT_EPS = 1.1920929e-7, DOUBLE_EPS = 0x1p-52;     // (rounding_floor's eps)
static double lambda_max_bound(const pgpu_config &c);      // validate.h
// The tolerance float takes for a config's 0 (the header's (*)): 1e-5, or
// float's floor on the grid where that is larger.
inline double float_own_tolerance(double floor) { return std::max(1e-5, floor); }

// How an iterative solve ends: decided once, at create, from the method,
// the precision and the tolerance as the caller gave it (resolve_config,
// validate.h); each solve's Convergence carries it.
enum class Stop {
    TOLERANCE, // the relative residual at the tolerance (the caller's, or the method's default)
    FLOAT_OWN, // float with tolerance 0: the method's own rule (the header's (*), (**), (***))
    ONCE,      // nothing to decide: the FFT's one solve, FMG's one pass (tolerance 0 for both)
};

// The convergence test of the iterative methods.  judge() fills the
// report's norms from a residual norm after `it` iterations (`unit`) of
// `what` and sets stop when the tolerance is met, or with result =
// PGPU_ERROR_BREAKDOWN (the residual not finite, or grown 1e8-fold over the
// larger of ||b|| and its first value) or PGPU_ERROR_NOT_CONVERGED
// (max_iterations reached).
struct Convergence {
    Stop rule = Stop::TOLERANCE;
    // tol: the tolerance judge() holds the residual to (FLOAT_OWN: the (*)
    // value, float_own_tolerance); a method may hold a copy to another.
    double rhs_norm = NAN, tol = 0, first = -1;
    double floor = 0; // float_residual_floor of the (global) config: where float's own stops end
    double lmax = 0;  // a bound of the operator's largest eigenvalue (rounding_floor of a u)
    int max_it = 0;
    pgpu_monitor monitor = nullptr; // the user's, called at every check
    void *user = nullptr;
    void tell(int it, double rn, double rel) const
    {
        if (monitor) monitor(user, it, rn, rel);
    }
    bool own() const { return rule == Stop::FLOAT_OWN; }
    void measured(double rn, double rmax, pgpu_report &r) const
    {
        r.residual_norm = rn;
        r.residual_max = rmax;
        r.relative_residual = rhs_norm > 0 ? rn / rhs_norm : rn;
    }
    void judge(char *err, double rn, double rmax, int it, const char *what, const char *unit, pgpu_report &r,
               bool &stop, pgpu_status &result)
    {
        measured(rn, rmax, r);
        tell(it, rn, r.relative_residual);
        if (first < 0) first = rn;
        stop = true;
        if (!std::isfinite(rn) || rn > 1e8 * std::max(rhs_norm, first)) {
            result = record(err, PGPU_ERROR_BREAKDOWN, "%s: the residual became %g after %d %s", what, rn, it, unit);
        } else if (r.relative_residual > tol) {
            if (it >= max_it)
                result = record(err, PGPU_ERROR_NOT_CONVERGED, "%s: relative residual %.3e after %d %s, tolerance %.3e",
                                what, r.relative_residual, it, unit, tol);
            else
                stop = false;
        }
    }
};

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 12 "src/poisson_gpu.cu"
#endif
// smooth_kernels.h -- Jacobi's walk and red-black Gauss-Seidel on any level
#ifdef PGPU_SRC_LINES
#line 2 "src/smooth_kernels.h"
#endif


namespace pgpu {

// Smoothing passes over one level, src -> dst (never in place, so no block
// depends on another and the result does not depend on scheduling):
//  - jacobi_kernel: weighted Jacobi, the column walk of operator.h;
//  - rbgs_tile_kernel (smooth_tile.h): red-black Gauss-Seidel on uniform 3D
//    levels without a periodic axis (the common case, the one that decides
//    the smoother's speed), one or two iterations per pass;
//  - rbgs_kernel: red-black on any level (periodic axes, odd periodic seams,
//    non-uniform couplings).
// Colours: the first colour of an iteration is red, (i+j+k) odd in 0-based
// indices (even in 1-based ones), unless `flip` is set (black first: the
// post-smoothing of a symmetric cycle).  All first-colour points are updated
// from the old values, then the second colour from the new first-colour ones.
// Each traffic is one read of src and f and one write of dst per pass: the
// cost of a Jacobi sweep, where two colour sweeps would move every word twice.

// Storage offset of plane m of a column (relative to the plane-0 element):
// real planes 0..nz-1; on a periodic z axis every m wraps; otherwise -1 and nz
// are the ghost planes and anything further is not a plane (ok = false).
template <class T> __device__ __forceinline__ int64_t plane_off(const Grid<T> &g, int m, bool &ok)
{
    ok = true;
    if (m >= 0 && m < g.nz) return (int64_t)m * g.sz;
    if (!g.is3d) { ok = false; return 0; }
    if (g.pz) return (int64_t)(((m % g.nz) + g.nz) % g.nz) * g.sz;
    if (m == -1 || m == g.nz) return (int64_t)m * g.sz;
    ok = false;
    return 0;
}

template <class T> struct JacobiEmit {
    static constexpr bool reads_f = true;
    T *dst;
    T omega, keep, scale_interior, scale;
    __device__ void uniform_diag(T diag, bool interior) { scale = interior ? scale_interior : omega / diag; }
    __device__ void skip(int64_t p, T centre) { dst[p] = centre; }
    __device__ void operator()(int64_t p, T centre, T rhs, T diag, bool uniform)
    {
        dst[p] = uniform ? relax_scaled(centre, rhs, keep, scale) : relax(centre, rhs, diag, omega);
    }
};

// Weighted Jacobi sweep, one column piece per thread (column_walk).  On the
// fast range the division by the diagonal is a multiplication by
// omega / diag: scale_interior (interior_scale) for columns off the x/y
// faces, computed once per column on the others.
template <class T, int MK>
__global__ void __launch_bounds__(WALK_THREADS, Tune<T>::sweep_blocks)
    jacobi_kernel(const Grid<T> g, const T *__restrict__ src, T *__restrict__ dst, const T *__restrict__ f,
                  const T *__restrict__ shiftp, T omega, T scale_interior, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    const Shift<T> shift = load_shift(shiftp);
    JacobiEmit<T> emit{dst, omega, T(1) - omega, scale_interior, T(0)};
    column_walk<T, T, Tune<T>::sweep_group, MK>(g, src, f, i, j, k0, k1, shift, emit);
}

template <class T> struct Pair;
template <> struct Pair<float> { typedef float2 type; };
template <> struct Pair<double> { typedef double2 type; };

// Red-black on any level.  Each thread holds two neighbouring points of a row
// -- one red and one black, except across the seam of an odd periodic axis --
// so no lane idles while the other colour is computed.  A block (RB_TX pairs
// x RB_BY rows) owns a RB_OX x RB_OY tile and walks a z chunk; the ring two
// points wide around the tile is loaded too and its inner half recomputes its
// first-colour values, so no block depends on another.  Old values go through
// a register window into shared plane buffers two planes ahead, so no load is
// waited for at a barrier.  Per plane m: first colour at m from the old-value
// buffers, one barrier, then the second colour at m-1 from the half-updated
// buffers.  Blocks without a seam pair, on uniform planes, take branch-free
// updates with omega / diag precomputed.
template <class T> constexpr size_t rbgs_smem_bytes() { return 8 * RB_BY * RB_TX * sizeof(typename Pair<T>::type); }

template <class T>
__global__ void __launch_bounds__(RB_TX *RB_BY, Tune<T>::rbg_blocks)
    rbgs_kernel(const Grid<T> g, const T *__restrict__ src, T *__restrict__ dst, const T *__restrict__ f,
                const T *__restrict__ shiftp, T omega, int flip, int kchunk, int nyb, int nchunks)
{
    typedef typename Pair<T>::type P2;
    constexpr int EX = 2 * RB_TX;
    extern __shared__ __align__(16) unsigned char rb_smem[];
    P2(*ob)[RB_BY][RB_TX] = reinterpret_cast<P2(*)[RB_BY][RB_TX]>(rb_smem); // old values, 4 planes
    P2(*hb)[RB_BY][RB_TX] = ob + 4;                                          // half-updated, 4 planes
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return; // uniform per block
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int gx0 = blockIdx.x * RB_OX - 2 + 2 * tx, gj = yb * RB_OY - 2 + ty;

    // Classify a coordinate: interior (periodic axes wrap), ghost, or out.
    auto classify = [](int gidx, int n, int periodic, int &idx, int &store) {
        if (gidx >= 0 && gidx < n) { idx = gidx; store = gidx; return 0; }
        if (periodic) { idx = ((gidx % n) + n) % n; store = idx; return 0; }
        if (gidx == -1 || gidx == n) { idx = -1; store = gidx; return 1; }
        idx = -1; store = 0; return 2;
    };
    int yj, ys;
    const int ky = classify(gj, g.ny, g.py, yj, ys);
    int xi[2], xs[2];
    bool loads[2], reds[2], owner[2];
    int64_t col[2];
    T vxl[2], vxh[2], vyl[2], vyh[2], dxy[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
        const int kx = classify(gx0 + e, g.nx, g.px, xi[e], xs[e]);
        const bool active = kx == 0 && ky == 0;
        const bool ghost = (kx == 1 && ky == 0) || (kx == 0 && ky == 1);
        const int ex = 2 * tx + e;
        loads[e] = active || ghost;
        reds[e] = active && ex >= 1 && ex <= EX - 2 && ty >= 1 && ty <= RB_BY - 2;
        owner[e] = active && ex >= 2 && ex <= EX - 3 && ty >= 2 && ty <= RB_BY - 3 && gx0 + e < g.nx && gj < g.ny;
        col[e] = g.base + xs[e] + (int64_t)ys * g.sy;
        vxl[e] = vxh[e] = vyl[e] = vyh[e] = dxy[e] = T(0);
        if (reds[e]) {
            const ColXY<T> c = col_xy(g, xi[e], yj);
            vxl[e] = c.vxl; vxh[e] = c.vxh; vyl[e] = c.vyl; vyh[e] = c.vyh; dxy[e] = c.dxy;
        }
    }
    const Shift<T> shift = load_shift(shiftp);
    int k0, k1;
    chunk_planes(zc, kchunk, g.nz, k0, k1);
    const int mstart = g.is3d ? k0 - 1 : k0;
    // Fast planes (g.fast, planes 2..nz-4: every plane touched is real and
    // has the uniform z coefficients): one first-colour and one second-colour
    // value per thread, which needs the two points of a pair to differ in
    // colour; a block with a seam pair keeps the general path.
    const int yf = yj + flip; // (x + y + flip + m) odd: first colour at plane m
    const int par0 = (xi[0] + yf) & 1, par1 = (xi[1] + yf) & 1;
    const bool pair_ok = !(reds[0] && reds[1]) || par0 != par1;
    const bool fast = __syncthreads_and(pair_ok) && g.fast && !g.gen;
    const T keep = T(1) - omega;
    T sc[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) sc[e] = (fast && reds[e]) ? omega / (dxy[e] + (g.cz + g.cz)) : T(0);
    const int txl = max(tx - 1, 0), txh = min(tx + 1, RB_TX - 1);
    const int tyl = max(ty - 1, 0), tyh = min(ty + 1, RB_BY - 1);
    // One point's update from its neighbours in buffer b: plane slot s (x/y
    // neighbours), sm / sp (planes below / above); element e of the pair.
    auto fast_update = [&](P2(*b)[RB_BY][RB_TX], int s, int sm, int sp, int e, T fe) {
        const P2 cc = b[s][ty][tx], lf = b[s][ty][txl], rt = b[s][ty][txh];
        const P2 dn = b[s][tyl][tx], up = b[s][tyh][tx], bl = b[sm][ty][tx], ab = b[sp][ty][tx];
        const T xl = e ? cc.x : lf.y, xh = e ? rt.x : cc.y, c0 = e ? cc.y : cc.x;
        const T off = neighbours_cz<T>(e ? vxl[1] : vxl[0], xl, e ? vxh[1] : vxh[0], xh, e ? vyl[1] : vyl[0],
                                    e ? dn.y : dn.x, e ? vyh[1] : vyh[0], e ? up.y : up.x, g.cz, e ? bl.y : bl.x,
                                    e ? ab.y : ab.x);
        return relax_scaled(c0, shift.of(fe) + off, keep, e ? sc[1] : sc[0]);
    };
    const int mend = g.is3d ? k1 : k0 + 1;
    auto old_at = [&](int m) {
        bool ok = true;
        const int64_t o = (m >= 0 && m < g.nz) ? (int64_t)m * g.sz : plane_off(g, m, ok);
        P2 v;
        v.x = (loads[0] && ok) ? src[col[0] + o] : T(0);
        v.y = (loads[1] && ok) ? src[col[1] + o] : T(0);
        return v;
    };
    auto f_at = [&](int m) {
        bool ok = true;
        const bool inside = m >= 0 && m < g.nz;
        const int64_t o = inside ? (int64_t)m * g.sz : plane_off(g, m, ok);
        const bool real = ok && (inside || g.pz);
        P2 v;
        v.x = (reds[0] && real) ? f[col[0] + o] : T(0);
        v.y = (reds[1] && real) ? f[col[1] + o] : T(0);
        return v;
    };
    auto get = [](const P2 &p, int e) { return e ? p.y : p.x; };
    // The general update of element e from buffer b (plane slot s, planes
    // below / above sm, sp) with the z couplings z.
    auto general_update = [&](P2(*b)[RB_BY][RB_TX], int s, int sm, int sp, int e, const ColZ<T> &z, T centre, T fe,
                              int kk) {
        const T xl = e ? b[s][ty][tx].x : b[s][ty][tx - 1].y;
        const T xh = e ? b[s][ty][tx + 1].x : b[s][ty][tx].y;
        const T yl = get(b[s][ty - 1][tx], e), yh = get(b[s][ty + 1][tx], e);
        if (g.gen) {
            const int64_t p = col[e] + (int64_t)kk * g.sz;
            if (!gen_fluid(g, p)) return centre;
            const GenPoint<T> q = gen_couplings(g, p, xi[e], yj, kk);
            T diag;
            const T off = gen_sum<T>(q, [&](int f) {
                return f == 0 ? xl : f == 1 ? xh : f == 2 ? yl : f == 3 ? yh
                     : f == 4 ? get(b[sm][ty][tx], e) : get(b[sp][ty][tx], e);
            }, diag);
            return relax(centre, shift.of(fe) + off, diag, omega);
        }
        const T off = g.is3d ? neighbours<T>(vxl[e], xl, vxh[e], xh, vyl[e], yl, vyh[e], yh, z.vzl, get(b[sm][ty][tx], e),
                                          z.vzh, get(b[sp][ty][tx], e))
                             : neighbours_xy<T>(vxl[e], xl, vxh[e], xh, vyl[e], yl, vyh[e], yh);
        return relax(centre, shift.of(fe) + off, dxy[e] + z.dz, omega);
    };
    ob[(mstart + 3) & 3][ty][tx] = old_at(mstart - 1);
    ob[mstart & 3][ty][tx] = old_at(mstart);
    ob[(mstart + 1) & 3][ty][tx] = old_at(mstart + 1);
    // Loads run two planes ahead of their use: entering iteration m, ra and
    // rb hold the old values of planes m+2 and m+3 (plane m+4 is loaded
    // there) and fa holds f of plane m+1 (plane m+2 is loaded there).
    P2 ra = old_at(mstart + 2), rb = old_at(mstart + 3);
    P2 fq = f_at(mstart - 1), f0 = f_at(mstart), fa = f_at(mstart + 1);
    __syncthreads();
    for (int m = mstart; m <= mend; ++m) {
        if (fast && m >= 2 && m + 5 <= g.nz) {
            ob[(m + 2) & 3][ty][tx] = ra;
            ra = rb;
            const int64_t o4 = (int64_t)(m + 4) * g.sz, o2 = (int64_t)(m + 2) * g.sz;
            rb.x = loads[0] ? src[col[0] + o4] : T(0);
            rb.y = loads[1] ? src[col[1] + o4] : T(0);
            const P2 fn = fa;
            fa.x = reds[0] ? f[col[0] + o2] : T(0);
            fa.y = reds[1] ? f[col[1] + o2] : T(0);
            const int s0 = m & 3;
            const bool r0 = reds[0] && ((par0 + m) & 1), r1 = reds[1] && ((par1 + m) & 1);
            const T rv = fast_update(ob, s0, (m + 3) & 3, (m + 1) & 3, r1, r1 ? f0.y : f0.x);
            P2 v = ob[s0][ty][tx];
            if (r0) v.x = rv;
            if (r1) v.y = rv;
            hb[s0][ty][tx] = v;
            __syncthreads();
            const int q = m - 1;
            if (q >= k0 && q < k1) {
                const int hq = (m + 3) & 3;
                const bool b0 = owner[0] && !((par0 + q) & 1), b1 = owner[1] && !((par1 + q) & 1);
                const T bv = fast_update(hb, hq, (m + 2) & 3, s0, b1, b1 ? fq.y : fq.x);
                P2 out = hb[hq][ty][tx];
                if (b0) out.x = bv;
                if (b1) out.y = bv;
                const int64_t oq = (int64_t)q * g.sz;
                if (owner[0]) dst[col[0] + oq] = out.x;
                if (owner[1]) dst[col[1] + oq] = out.y;
            }
            fq = f0;
            f0 = fn;
            continue;
        }
        ob[(m + 2) & 3][ty][tx] = ra;
        ra = rb;
        rb = old_at(m + 4);
        const P2 fn = fa;
        fa = f_at(m + 2);
        int km;
        bool real = true;
        if (m >= 0 && m < g.nz) km = m;
        else if (g.is3d && g.pz) km = m < 0 ? g.nz - 1 : 0;
        else { km = m < 0 ? -1 : g.nz; real = false; }
        const int s0 = m & 3, sm = (m + 3) & 3, sp = (m + 1) & 3;
        const P2 cc = ob[s0][ty][tx];
        P2 v = cc; // second colour: old value; ghost column or z ghost plane: boundary data
        if (real) {
            const ColZ<T> z = col_z(g, km);
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                if (!reds[e] || !((xi[e] + yf + km) & 1)) continue; // first colour only
                const T r = general_update(ob, s0, sm, sp, e, z, get(cc, e), get(f0, e), km);
                if (e) v.y = r; else v.x = r;
            }
        }
        hb[s0][ty][tx] = v;
        __syncthreads();
        const int q = m - 1;
        if (q >= k0 && q < k1) {
            const int hq = (m + 3) & 3, hqm = (m + 2) & 3; // slots of planes q and q-1
            const ColZ<T> z = col_z(g, q);
            const P2 hc = hb[hq][ty][tx];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                if (!owner[e]) continue;
                T out = get(hc, e);
                if (((xi[e] + yf + q) & 1) == 0) out = general_update(hb, hq, hqm, s0, e, z, out, get(fq, e), q);
                dst[col[e] + (int64_t)q * g.sz] = out;
            }
        }
        fq = f0;
        f0 = fn;
    }
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 13 "src/poisson_gpu.cu"
#endif
// smooth_tile.h -- red-black Gauss-Seidel tiled in shared memory on uniform 3D levels
#ifdef PGPU_SRC_LINES
#line 2 "src/smooth_tile.h"
#endif


namespace pgpu {

// The thread setup of rbgs_tile_kernel: thread (tx, ty) of a tile of TX
// pairs by BY rows holds the points x0, x0 + 1 (x0 even) of row y; the outer
// RING points on each side of the tile are loaded, not owned.  Per element:
// act, an interior point; ld, its u is loaded (interior, or an x or y ghost);
// own, it is stored; fl, its f is needed (the outermost ring computes
// nothing); cc, its x/y couplings.
template <class T, int TX, int BY, int RING>
__device__ __forceinline__ void rb_points(const Grid<T> &g, int x0, int y, int tx, int ty, bool (&act)[2],
                                          bool (&ld)[2], bool (&own)[2], bool (&fl)[2], ColXY<T> (&cc)[2])
{
    const bool yin = y >= 0 && y < g.ny, ygh = y == -1 || y == g.ny;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
        const int x = x0 + e, ex = 2 * tx + e;
        const bool xin = x >= 0 && x < g.nx, xgh = x == -1 || x == g.nx;
        act[e] = xin && yin;
        ld[e] = act[e] || (xgh && yin) || (xin && ygh);
        own[e] = act[e] && ex >= RING && ex <= 2 * TX - 1 - RING && ty >= RING && ty <= BY - 1 - RING;
        fl[e] = act[e] && ex >= 1 && ex <= 2 * TX - 2 && ty >= 1 && ty <= BY - 2;
        if (act[e]) cc[e] = col_xy(g, x, y);
        else cc[e] = ColXY<T>{T(0), T(0), T(0), T(0), T(1), 0, 0, 0, 0};
    }
}

// ... and per plane parity ph, for the element of the first colour on plane
// ph (er0: that element on even planes): whether it is updated (ghosts are
// not), its couplings to the pair's other element (own) and to the side
// neighbour, its x/y diagonal, omega / diag on planes coupled by cz, and the
// side neighbour's thread column in shared memory (one padding column on the
// left).
template <class T>
__device__ __forceinline__ void rb_parity(const bool (&act)[2], const ColXY<T> (&cc)[2], int er0, int tx, T omega,
                                          T cz, bool (&upd)[2], T (&cown)[2], T (&cside)[2], T (&dxyp)[2],
                                          T (&scp)[2], int (&side)[2])
{
#pragma unroll
    for (int ph = 0; ph < 2; ++ph) {
        const int er = er0 ^ ph;
        upd[ph] = er ? act[1] : act[0];
        cown[ph] = er ? cc[1].vxl : cc[0].vxh;
        cside[ph] = er ? cc[1].vxh : cc[0].vxl;
        dxyp[ph] = er ? cc[1].dxy : cc[0].dxy;
        scp[ph] = omega / (dxyp[ph] + (cz + cz));
        side[ph] = tx + 1 + (er ? 1 : -1);
    }
}

// Red-black on a uniform 3D level with no periodic axis (SmoothPlan::tile),
// ITERS (1 or 2) iterations per pass.  Nothing is selected per point at run
// time:
//  - A thread keeps its pair in colour order and its own column in
//    registers: the z neighbours of a point are the other-colour values of
//    the same element in the planes above and below, and the other element of
//    the pair is one of its x neighbours.  Shared memory holds only what the
//    neighbouring threads need, one word per thread, stage and plane parity,
//    read without bank conflicts.
//  - The x side neighbour is thread tx-1 or tx+1, which alternates with the
//    plane's parity; the loop runs in blocks of four planes, so the parity,
//    the buffer slots and omega / diag are compile-time choices.
//  - Step m runs S = 2 ITERS stages on the element A of the first colour at
//    plane m, stage s at plane m - s + 1: first colour of iteration 1 at m
//    (from the old values), second colour of iteration 1 at m - 1, (ITERS 2:)
//    first colour of iteration 2 at m - 2, second at m - 3; the last stage's
//    plane is stored with the other element's value of the stage before.
//    Every stage reads its neighbours' values of the previous step and its
//    own column from registers: one barrier per step.  Each stage loses one
//    point of the tile on every side, so a block of TX pairs by BY rows owns
//    (2 TX - 2 S) x (BY - 2 S) points, and a chunk starts S - 1 planes early.
//  - Planes 1..nz-2 couple with cz (Grid::fast); the first and last steps
//    of a chunk take the table form.
// Two iterations per pass read u and f once and write u once, where two
// passes move each word twice: 1.10 ms per pass at 512^3 in float, 2.08 in
// double, against 2 x 0.77 and 2 x 1.48 ms (ncu), and the same arithmetic
// and results bit for bit.
// MASKED (a uniform level with a mask and no face fractions): the mask
// bytes travel with f; a point with a nonzero byte is left as it is where
// it is no unknown and otherwise drops its closed faces, as drop_closed does.
// FRAC (a level whose table is uniform but whose faces carry fractions --
// beta's, or a coarse level's): every unknown takes the general form's
// couplings (gen_faces, gen_sum), its six fractions those stored at the
// point and its high neighbours (from the ring below in double, through L1
// in float: Tune::frac_ring); with MASKED the level's mask as for MASKED,
// without (a level of beta alone) no mask bytes, no closed face and no
// coupling that is 0, so the neighbour sum takes no selects.
// FRAC's fractions: a ring of FR_RING planes in shared memory (per plane
// the three arrays, per array BY + 1 rows by the two elements' columns,
// TX + 1 each: the high x and y faces of the tile's last column and row
// are read as 0, which reaches only its ring), filled by cp.async
// FR_AHEAD planes ahead of the step that first reads them.
constexpr int FR_AHEAD = 4, FR_RING = FR_AHEAD + 2;
template <class T, int ITERS> struct RbTile {
    static constexpr int S = 2 * ITERS;
    static constexpr int TX = Tune<T>::rbt_tx;
    static constexpr int BY = ITERS == 1 ? Tune<T>::rbt_by : Tune<T>::rbt2_by;
    static constexpr int OX = 2 * TX - 2 * S, OY = BY - 2 * S; // owned points per block
    static constexpr int BLOCKS = ITERS == 1 ? Tune<T>::rbt_blocks : 1;
    static constexpr int PER_SM = ITERS == 1 ? Tune<T>::rbt_per_sm : Tune<T>::rbt2_per_sm;
    static constexpr int FW = TX + 1, FPLANE = 3 * (BY + 1) * 2 * FW; // FRAC's ring: a row's elements, a plane
};
template <class T> constexpr size_t frac_smem_bytes()
{
    return Tune<T>::frac_ring ? (size_t)FR_RING * RbTile<T, 1>::FPLANE * sizeof(T) : 0;
}

// One thread's walk through its column of a tile (the kernel's state, as
// described above): set up once per block (the constructor), the window
// filled for the chunk's first step (start), then one step per plane (run).
template <class T, int ITERS, bool MASKED, bool FRAC> struct RbWalk {
    typedef RbTile<T, ITERS> Tl;
    static constexpr bool RING = FRAC && Tune<T>::frac_ring; // FRAC's fractions from the shared ring, else through L1
    static constexpr int S = Tl::S, TX = Tl::TX, BY = Tl::BY;
    static constexpr int W = TX + 2, H = BY + 2; // one padding word around the thread grid
    static constexpr int FP = Tl::FPLANE, FA = (BY + 1) * 2 * Tl::FW; // FRAC's ring: a plane, an array of it
    static constexpr int PF = 3; // without the ring: planes of fractions prefetched into L1 ahead
    static constexpr int LA = (MASKED || FRAC) ? Tune<T>::rbt_ahead_mk : Tune<T>::rbt_ahead; // planes loaded ahead
    typedef T Buf[S][2][H][W];

    const Grid<T> &g;
    // sb[0]: old values of the second colour (for stage 1); sb[s]: the values
    // of stage s (for stage s + 1 of the next step); per plane parity.
    Buf &sb;
    T *const fs; // FRAC's ring (frac_smem_bytes)
    const int tx, ty, x0, y; // x0 is even
    bool ld[2], act[2], own[2], fl[2];
    ColXY<T> cc[2];
    const int64_t sz, col; // element 0; only dereferenced where ld / fl
    const T *su, *sf;
    T *du;
    // The shift's first part only (Shift), for one subtraction per update
    // less: the box's float cycle took 4.14 against 4.08 ms with both, the
    // masked sphere 77.4 against 76.9 (H200).  The second part is a
    // constant A's range lacks; red-black smoothing of it leaves a residual
    // of about +-lo on the two colours (a checkerboard, not only a mean), so
    // on a singular problem whose mean is large against b the residual of
    // RBGS and of V-cycles stays near |lo| / rms(b) (as with one number
    // everywhere); the residual and the other methods take both parts.
    const T omega;
    T shift;
    const T keep, cz;
    // The element of the first colour on even planes ((x + y + m + flip) odd),
    // its couplings per plane parity.  The y couplings are the same for both
    // elements of an active pair.
    const int er0;
    bool upd[2];
    T cown[2], cside[2], dxyp[2], scp[2];
    int side[2];
    T cyl, cyh;
    bool inner[2]; // FRAC: the first-colour element per plane parity has no box face in x or y
    int k0, k1, mstart;
    // FRAC: plane p's fractions into its ring slot, one copy group per plane
    // (empty outside the planes the chunk's updates read, 0 .. nz for the
    // high z faces).  Per element the faces an interior point reads: fx up
    // to the x ghost, fy up to the y ghost, fz up to the z ghost plane.
    unsigned fin = 0; // bit 3 e + a: element e loads array a
    int fo, fp_lo, fp_hi; // element 0 of this thread in an array's rows; the planes read
    // issue_fr is called for planes mstart - 1, mstart, ... in turn: the
    // plane's offset and slot run along.
    int64_t fq;
    int fsl, fpl;
    // Window at step m (A: the first-colour element at m, B: its partner):
    // ubk = old A at m-1; (rm, bm) old (A, B) at m; (rp, bp) old (B, A) at
    // m+1; raw u of planes m+2 .. in flight (uq).  f less the shift in
    // colour order, fr[d] / fk[d] of the first / second colour at plane
    // m - d; raw f in flight (fw).
    // Stage values: prev[s] of the step before (element B), prev2[s] of two
    // steps before (element A).
    // Mask bytes (MASKED): cr / ck hold those of fr / fk, byte d for plane m - d;
    // cq the raw pairs in flight with fw.
    T ubk, rm, bm, rp, bp, fr[S], fk[S], prev[S], prev2[S];
    T uq[LA][2], fw[LA][2];
    unsigned cr = 0, ck = 0, cq[LA];
    // Running pointers of step m: the u and f planes it loads, the plane it
    // stores (no 64-bit multiplications in the loop).
    const T *pu, *pf;
    T *pd;

    __device__ __forceinline__ RbWalk(const Grid<T> &g_, Buf &sb_, T *fs_, const T *src, T *dst, const T *f,
                                      const T *shiftp, T omega_, int flip, int kchunk, int yb, int zc)
        : g(g_), sb(sb_), fs(fs_), tx(threadIdx.x), ty(threadIdx.y), x0(blockIdx.x * Tl::OX - S + 2 * tx),
          y(yb * Tl::OY - S + ty), sz(g_.sz), col(g_.base + x0 + (int64_t)y * g_.sy), omega(omega_),
          keep(T(1) - omega_), cz(g_.cz), er0(((y & 1) ? 0 : 1) ^ (flip & 1))
    {
        rb_points<T, TX, BY, S>(g, x0, y, tx, ty, act, ld, own, fl, cc);
        su = src + col;
        sf = f + col;
        du = dst + col;
        shift = load_shift(shiftp).hi;
        rb_parity(act, cc, er0, tx, omega, cz, upd, cown, cside, dxyp, scp, side);
        cyl = act[0] ? cc[0].vyl : cc[1].vyl;
        cyh = act[0] ? cc[0].vyh : cc[1].vyh;
#pragma unroll
        for (int ph = 0; ph < 2; ++ph) {
            const int x = x0 + (er0 ^ ph);
            inner[ph] = x >= 1 && x <= g.nx - 2 && y >= 1 && y <= g.ny - 2;
        }
        chunk_planes(zc, kchunk, g.nz, k0, k1);
        mstart = k0 - (S - 1);
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int x = x0 + e;
            const bool xi = x >= 0 && x < g.nx, yi = y >= 0 && y < g.ny;
            fin |= ((x >= 0 && x <= g.nx && yi) | (xi && y >= 0 && y <= g.ny) << 1 | (xi && yi) << 2) << (3 * e);
        }
        fo = ty * 2 * Tl::FW + tx;
        fp_lo = max(0, mstart - 1);
        fp_hi = min(g.nz, k1 + S - 1);
        fq = col + (int64_t)(mstart - 1) * sz;
        fsl = slot(mstart - 1);
        fpl = mstart - 1;
    }

    // Raw pairs (x order) of plane p at s, as loaded; steps at the chunk ends
    // check the plane.
    __device__ __forceinline__ void load_u(const T *s, int p, bool edge, T &v0, T &v1) const
    {
        v0 = v1 = T(0);
        if (edge && (p < -1 || p > g.nz)) return;
        if (ld[0]) v0 = s[0];
        if (ld[1]) v1 = s[1];
    }
    __device__ __forceinline__ void load_f(const T *s, int p, bool edge, T &v0, T &v1) const
    {
        v0 = v1 = T(0);
        if (edge && (p < 0 || p >= g.nz)) return;
        if (fl[0]) v0 = s[0];
        if (fl[1]) v1 = s[1];
    }
    // The pair's mask bytes of plane p (element e in byte e), where f is loaded.
    __device__ __forceinline__ unsigned load_c(int p, bool edge) const
    {
        unsigned c = 0;
        if (!MASKED || (edge && (p < 0 || p >= g.nz))) return c;
        const uint8_t *mp = g.mk + col + (int64_t)p * sz;
        if (fl[0]) c = mp[0];
        if (fl[1]) c |= (unsigned)mp[1] << 8;
        return c;
    }
    static __device__ __forceinline__ int slot(int p) { return (p + 8 * FR_RING) % FR_RING; } // p >= -2
    __device__ __forceinline__ void issue_fr()
    {
        if constexpr (RING) {
            if (fpl >= fp_lo && fpl <= fp_hi && fin) {
                T *d = fs + fsl * FP + fo;
                const T *a3[3] = {g.fx + fq, g.fy + fq, g.fz + fq};
#pragma unroll
                for (int a = 0; a < 3; ++a)
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        if ((fin >> (3 * e + a)) & 1u) __pipeline_memcpy_async(d + a * FA + e * Tl::FW, a3[a] + e, sizeof(T));
            }
            __pipeline_commit();
            fq += sz;
            fsl = fsl == FR_RING - 1 ? 0 : fsl + 1;
            ++fpl;
        }
    }
    // Without the ring: plane p's fractions into L1, PF planes ahead of the
    // update that reads them.
    __device__ __forceinline__ void prefetch_fr(int p, bool edge) const
    {
        if constexpr (FRAC && !RING) {
            if (!(fl[0] || fl[1]) || (edge && (p < 0 || p >= g.nz))) return;
            const int64_t q = col + (int64_t)p * sz;
            asm volatile("prefetch.global.L1 [%0];" ::"l"(g.fx + q));
            asm volatile("prefetch.global.L1 [%0];" ::"l"(g.fy + q));
            asm volatile("prefetch.global.L1 [%0];" ::"l"(g.fz + q));
        }
    }
    // The byte of the first / second colour of a raw pair whose first-colour element is er.
    static __device__ __forceinline__ unsigned first_c(int er, unsigned c) { return (c >> (er ? 8 : 0)) & 0xffu; }
    static __device__ __forceinline__ unsigned second_c(int er, unsigned c) { return (c >> (er ? 0 : 8)) & 0xffu; }
    __device__ __forceinline__ const T *at(const T *base, int p) const { return base + (int64_t)p * sz; }
    // Colour order of a raw pair whose first-colour element is er.
    static __device__ __forceinline__ void colour(int er, T v0, T v1, T &r, T &b)
    {
        r = er ? v1 : v0;
        b = er ? v0 : v1;
    }

    // The window for the chunk's first step; the caller synchronises.
    __device__ __forceinline__ void start()
    {
#pragma unroll
        for (int s = 0; s < S; ++s) fr[s] = fk[s] = prev[s] = prev2[s] = T(0);
        T v0, v1, dummy;
        const int e_m = er0 ^ (mstart & 1);
        load_u(at(su, mstart - 1), mstart - 1, true, v0, v1);
        colour(e_m ^ 1, v0, v1, dummy, ubk);
        load_u(at(su, mstart), mstart, true, v0, v1);
        colour(e_m, v0, v1, rm, bm);
        load_u(at(su, mstart + 1), mstart + 1, true, v0, v1);
        colour(e_m ^ 1, v0, v1, rp, bp);
#pragma unroll
        for (int a = 0; a + 1 < LA; ++a) load_u(at(su, mstart + 2 + a), mstart + 2 + a, true, uq[a][0], uq[a][1]);
        load_f(at(sf, mstart), mstart, true, v0, v1);
        colour(e_m, v0, v1, fr[0], fk[0]);
        fr[0] -= shift; // (f less the shift, once a plane: each value serves S / 2 updates)
        fk[0] -= shift;
        const unsigned c0 = load_c(mstart, true);
        cr = first_c(e_m, c0);
        ck = second_c(e_m, c0);
#pragma unroll
        for (int a = 0; a + 1 < LA; ++a) {
            load_f(at(sf, mstart + 1 + a), mstart + 1 + a, true, fw[a][0], fw[a][1]);
            cq[a] = load_c(mstart + 1 + a, true);
        }
        if constexpr (RING) { // planes mstart - 1 .. mstart + 1 in place for the first step
#pragma unroll
            for (int a = -1; a < FR_AHEAD; ++a) issue_fr(); // planes mstart - 1 .. mstart + FR_AHEAD - 1
            __pipeline_wait_prior(FR_AHEAD - 2);
        }
#pragma unroll
        for (int a = 0; a < PF; ++a) prefetch_fr(mstart + a, true);
        sb[0][mstart & 1][ty + 1][tx + 1] = bm;
        pu = at(su, mstart + 1 + LA);
        pf = at(sf, mstart + LA);
        pd = du + (int64_t)(mstart - (S - 1)) * sz;
    }

    // Element A's update at plane p: x side and y neighbours from buffer b,
    // the partner (element B), the z neighbours zl / zh.  cd: its mask byte
    // (MASKED).
    template <int PH, bool FAST>
    __device__ __forceinline__ T update(T (*b)[W], T centre, T partner, T zl, T zh, T fv, unsigned cd, int p) const
    {
        const int er = er0 ^ PH;
        if (!FAST && (p < 0 || p >= g.nz)) return centre;
        T sd = b[ty + 1][side[PH]], lo = b[ty][tx + 1], hi = b[ty + 2][tx + 1];
        T off, s = scp[PH];
        if constexpr (!MASKED && !FRAC) {
            if (FAST) {
                off = neighbours_cz<T>(cown[PH], partner, cside[PH], sd, cyl, lo, cyh, hi, cz, zl, zh);
            } else {
                const ColZ<T> z = col_z(g, p);
                off = neighbours<T>(cown[PH], partner, cside[PH], sd, cyl, lo, cyh, hi, z.vzl, zl, z.vzh, zh);
                s = omega / (dxyp[PH] + z.dz);
            }
        } else {
            T vzl = cz, vzh = cz, dzl = cz, dzh = cz;
            if (!FAST) {
                const ColZ<T> z = col_z(g, p);
                vzl = z.vzl;
                vzh = z.vzh;
                dzl = g.czl[p];
                dzh = g.czh[p];
                s = omega / (dxyp[PH] + z.dz);
            }
            if constexpr (FRAC) {
                if (!upd[PH] || (MASKED && (cd & CELL_BITS) != PGPU_CELL_FLUID)) return centre;
                // element 0's partner is its x+ neighbour, element 1's its x-
                const int xa = x0 + er;
                GenPoint<T> gp;
                gp.v[0] = er ? cown[PH] : cside[PH];
                gp.v[1] = er ? cside[PH] : cown[PH];
                gp.v[2] = cyl; gp.v[3] = cyh; gp.v[4] = vzl; gp.v[5] = vzh;
                const bool lean = Tune<T>::rbt_frac_lean && FAST && inner[PH];
                T fr6[6];
                if constexpr (!RING) {
                    stored_faces(g, col + er + (int64_t)p * sz, fr6);
                } else { // element er's faces from the ring: the high x face is element 1's, or the next thread's 0
                    const T *r = fs + slot(p) * FP + fo + er * Tl::FW;
                    fr6[0] = r[0];
                    fr6[1] = r[er ? 1 - Tl::FW : Tl::FW];
                    fr6[2] = r[FA];
                    fr6[3] = r[FA + 2 * Tl::FW];
                    fr6[4] = r[2 * FA];
                    fr6[5] = fs[slot(p + 1) * FP + fo + er * Tl::FW + 2 * FA];
                }
                const unsigned closed = MASKED ? cd >> CLOSED_SHIFT : 0u;
                T nb6[6] = {er ? partner : sd, er ? sd : partner, lo, hi, zl, zh};
                T dg;
                if (lean) {
                    // No box face: each face's diagonal part is its
                    // coupling; gen_faces and gen_sum's arithmetic without
                    // the table's diagonal parts, and without selects where
                    // no face is closed.
                    T c[6];
#pragma unroll
                    for (int fc = 0; fc < 6; ++fc) c[fc] = mul_rn(gp.v[fc], fr6[fc]);
                    if (closed) {
#pragma unroll
                        for (int fc = 0; fc < 6; ++fc)
                            if ((closed >> fc) & 1u) c[fc] = nb6[fc] = T(0);
                    }
                    off = plain_sum(c, c, nb6, dg);
                } else {
                    gp.d[0] = g.cxl[xa]; gp.d[1] = g.cxh[xa]; gp.d[2] = g.cyl[y]; gp.d[3] = g.cyh[y];
                    gp.d[4] = dzl; gp.d[5] = dzh;
                    gen_faces(gp, fr6, closed);
                    if constexpr (!MASKED) off = plain_sum(gp.v, gp.d, nb6, dg); // every coupling is nonzero
                    else off = gen_sum<T>(gp, [&](int f) { return nb6[f]; }, dg);
                }
                if (!(dg > T(0))) return centre; // only Neumann faces open: left as it is
                return relax_scaled(centre, fv + off, keep, smooth_scale(omega, dg));
            } else if (cd != 0u) {
                if ((cd & CELL_BITS) != PGPU_CELL_FLUID) return centre;
                // element 0's partner is its x+ neighbour, element 1's its x-
                const int xa = x0 + er;
                const T d6[6] = {g.cxl[xa], g.cxh[xa], g.cyl[y], g.cyh[y], dzl, dzh};
                T nb6[6] = {er ? partner : sd, er ? sd : partner, lo, hi, zl, zh};
                const T dg = drop_closed<T>(cd >> CLOSED_SHIFT, d6, nb6);
                if (!(dg > T(0))) return centre; // only Neumann faces open: left as it is
                s = omega / dg;
                partner = er ? nb6[0] : nb6[1];
                sd = er ? nb6[1] : nb6[0];
                lo = nb6[2];
                hi = nb6[3];
                zl = nb6[4];
                zh = nb6[5];
            }
            off = neighbours<T>(cown[PH], partner, cside[PH], sd, cyl, lo, cyh, hi, vzl, zl, vzh, zh);
        }
        const T v = relax_scaled(centre, fv + off, keep, s);
        return upd[PH] ? v : centre;
    }

    // The step for plane m; PH = m & 1.  Fast steps lie inside the chunk.
    template <int PH, bool FAST> __device__ __forceinline__ void step(int m)
    {
        const bool edge = !FAST;
        const int er = er0 ^ PH;
        load_u(pu, m + 1 + LA, edge, uq[LA - 1][0], uq[LA - 1][1]); // in flight until the end of step m+LA-1
        load_f(pf, m + LA, edge, fw[LA - 1][0], fw[LA - 1][1]);
        cq[LA - 1] = load_c(m + LA, edge);
        issue_fr(); // plane m + FR_AHEAD
        prefetch_fr(m + PF, edge);
        pu += sz;
        pf += sz;
        T v[S + 1]; // v[s]: stage s's value of element A
        v[1] = update<PH, FAST>(sb[0][PH], rm, bm, ubk, bp, fr[0], cr & 0xffu, m);
        v[2] = update<PH, FAST>(sb[1][PH ^ 1], ubk, prev[1], prev2[1], v[1], fk[1], (ck >> 8) & 0xffu, m - 1);
        if constexpr (S == 4) {
            v[3] = update<PH, FAST>(sb[2][PH ^ 1], prev2[1], prev[2], prev2[2], v[2], fr[2], (cr >> 16) & 0xffu, m - 2);
            v[4] = update<PH, FAST>(sb[3][PH ^ 1], prev2[2], prev[3], prev2[3], v[3], fk[3], (ck >> 24) & 0xffu, m - 3);
        }
        const int q = m - (S - 1);
        if (FAST || (q >= k0 && q < k1)) {
            if (own[0]) pd[0] = er ? prev[S - 1] : v[S];
            if (own[1]) pd[1] = er ? v[S] : prev[S - 1];
        }
        pd += sz;
#pragma unroll
        for (int s = 1; s < S; ++s) sb[s][PH][ty + 1][tx + 1] = v[s];
        sb[0][PH ^ 1][ty + 1][tx + 1] = bp;
        if constexpr (RING) __pipeline_wait_prior(FR_AHEAD - 2); // plane m + 2 in place for the next step
        __syncthreads();
        // Advance the window by one plane.
#pragma unroll
        for (int s = 1; s < S; ++s) {
            prev2[s] = prev[s];
            prev[s] = v[s];
        }
        ubk = bm;
        rm = rp;
        bm = bp;
        colour(er, uq[0][0], uq[0][1], rp, bp); // plane m+2 has the parity of m
#pragma unroll
        for (int a = 0; a + 1 < LA; ++a) {
            uq[a][0] = uq[a + 1][0];
            uq[a][1] = uq[a + 1][1];
        }
#pragma unroll
        for (int d = S - 1; d > 0; --d) {
            fr[d] = fr[d - 1];
            fk[d] = fk[d - 1];
        }
        colour(er ^ 1, fw[0][0], fw[0][1], fr[0], fk[0]); // plane m+1
        fr[0] -= shift;
        fk[0] -= shift;
        cr = cr << 8 | first_c(er ^ 1, cq[0]);
        ck = ck << 8 | second_c(er ^ 1, cq[0]);
#pragma unroll
        for (int a = 0; a + 1 < LA; ++a) {
            fw[a][0] = fw[a + 1][0];
            fw[a][1] = fw[a + 1][1];
            cq[a] = cq[a + 1];
        }
    }

    // The chunk's steps: fast blocks of U planes (planes m-S+1 .. m take cz,
    // their loads stay inside, they store), single steps at the ends.
    __device__ __forceinline__ void run()
    {
        constexpr int U = 4; // planes per fast block (even)
        const int fast_lo = max(S, k0 + S - 1), fast_end = min(k1 + S - 2, g.nz - 2 - LA);
        int m = mstart;
        while (m <= k1 + S - 2) {
            if (m >= fast_lo && !(m & 1) && m + U - 1 <= fast_end) {
#pragma unroll
                for (int s = 0; s < U; s += 2) {
                    step<0, true>(m + s);
                    step<1, true>(m + s + 1);
                }
                m += U;
            } else {
                if (m & 1) step<1, false>(m);
                else step<0, false>(m);
                ++m;
            }
        }
    }
};

template <class T, int ITERS, bool MASKED, bool FRAC = false>
__global__ void __launch_bounds__(RbTile<T, ITERS>::TX *RbTile<T, ITERS>::BY, RbTile<T, ITERS>::BLOCKS)
    rbgs_tile_kernel(const Grid<T> g, const T *__restrict__ src, T *__restrict__ dst, const T *__restrict__ f,
                     const T *__restrict__ shiftp, T omega, int flip, int kchunk, int nyb, int nchunks)
{
    static_assert(ITERS == 1 || ITERS == 2, "one or two iterations per pass");
    typedef RbWalk<T, ITERS, MASKED, FRAC> Walk;
    static_assert(!Walk::RING || ITERS == 1, "the ring holds the three planes a one-iteration step reads");
    constexpr int S = Walk::S, TX = Walk::TX, BY = Walk::BY;
    __shared__ typename Walk::Buf sb;
    extern __shared__ __align__(16) unsigned char rb_smem[];
    T *const fs = reinterpret_cast<T *>(rb_smem); // FRAC's ring (frac_smem_bytes)
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return; // uniform per block
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int q = ty * TX + tx; q < S * 2 * Walk::H * Walk::W; q += TX * BY) (&sb[0][0][0][0])[q] = T(0);
    if constexpr (Walk::RING)
        for (int q = ty * TX + tx; q < FR_RING * Walk::FP; q += TX * BY) fs[q] = T(0);
    __syncthreads();
    Walk w(g, sb, fs, src, dst, f, shiftp, omega, flip, kchunk, yb, zc);
    w.start();
    __syncthreads();
    w.run();
    if constexpr (Walk::RING) __pipeline_wait_prior(0); // no copy outlives the block
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 14 "src/poisson_gpu.cu"
#endif
// smooth_beta.h -- red-black Gauss-Seidel of beta alone, faces formed from 1 / beta
#ifdef PGPU_SRC_LINES
#line 2 "src/smooth_beta.h"
#endif


namespace pgpu {

// Red-black, one iteration per pass, on uniform levels of coefficients alone
// (no mask; SmoothPlan::tile, beta_tiled).  On level 0 with beta in
// beta_face's range (Grid::bw) the faces are formed once a plane from
// 1 / beta (one array read instead of rbgs_tile_kernel's three fractions)
// and everything a block reads is staged by cp.async into rings in shared
// memory one plane ahead, so that no update waits for global memory:
//  - A block of BT_TX pairs by BY rows (one warp a row) walks its chunk's
//    planes; step m updates the first colour at plane m (from the old
//    values) and the second at m - 1 (from the first colour's new values),
//    and stores plane m - 1.  Each colour loses a point of the tile on
//    every side: a block owns (2 BT_TX - 4) x (BY - 4) points.
//  - Thread (tx, ty) holds the points x0, x0 + 1 of its row; in shared
//    memory an array's plane keeps the two elements' columns apart (BT_RW
//    words each, one padding word each side), so a warp reads one bank row.
//  - The element A updated at step m is the same for both colours (the
//    first at m, the second at m - 1); its own column (old u, the first
//    colour's new values, its z faces, 1 / beta) stays in registers, and
//    the shared rings hold what the neighbours read: u (6 planes, the new
//    first colour written in place), f and 1 / beta (3), the x / y faces (3).
//  - The loop runs in blocks of 6 steps, so every ring slot is a constant.
// Rows whose x or y neighbours at a box face couple as inside (Dirichlet
// faces of a uniform axis), and the points of every row away from the
// faces, take the uniform couplings times the fractions (each face's
// coupling its diagonal part); the rest, and the planes next to a z face,
// the table form's (gen_faces, plain_sum: every coupling of beta alone is
// nonzero).
constexpr int BT_TX = 32, BT_RW = BT_TX + 2;
template <int N> using IntC = std::integral_constant<int, N>;
// fn(IntC<0>{}) .. fn(IntC<N - 1>{}), in order.
template <class F, int... J> __device__ __forceinline__ void each_const(F &&fn, std::integer_sequence<int, J...>)
{
    (fn(IntC<J>{}), ...);
}
template <class T> struct BetaTile {
    static constexpr int BY = Tune<T>::bt_by;
    static constexpr int PL = (BY + 2) * 2 * BT_RW; // a plane of one array
    static constexpr int RU = 6, RF = 3, RB = 3, RC = 3;
    static constexpr size_t SMEM = (size_t)(RU + RF + RB + 2 * RC) * PL * sizeof(T);
    static constexpr int OX = 2 * BT_TX - 4, OY = BY - 4;
    // RR: a block's coarse nodes (RX x RY), and its dynamic shared memory:
    // two residual planes and the restriction's tables after SMEM.
    static constexpr int RX = OX / 2, RY = OY / 2;
    static constexpr size_t SMEM_RR = SMEM + 2 * PL * sizeof(T) + 4 * (RX + RY) * sizeof(T) +
                                      (4 * RX + RY) * sizeof(int) + RX * RY * sizeof(int64_t);
    // The kernel's static tables (cxs, cys) count against a block's opt-in
    // limit too: a block's whole shared memory without and with RR (float
    // RR's 99.3 KB do not fit sm_86 / sm_89 / sm_120's 99 KB).
    static constexpr size_t TABLES = (size_t)4 * (2 * BT_TX + BY) * sizeof(T);
    // PRO: the coarse correction's tiles (PCX x PCY coarse storage points,
    // four planes) after SMEM.
    static constexpr int PCX = 36, PCY = 12, PCPL = PCX * PCY, PRING = 4;
    static constexpr size_t SMEM_PRO = SMEM + (size_t)PRING * PCPL * sizeof(T);
    // RS: a smoothing pass that also forms the residual, the first colour's
    // two planes behind: f and the faces one plane longer in their rings, and
    // a block owns the points three in from the tile's edges.
    static constexpr int RF_RS = 4, RC_RS = 4, OX_RS = 2 * BT_TX - 6, OY_RS = BY - 6;
    static constexpr size_t SMEM_RS = (size_t)(RU + RF_RS + RB + 2 * RC_RS) * PL * sizeof(T);
    static constexpr size_t FIT = SMEM + TABLES, FIT_RR = SMEM_RR + TABLES, FIT_PRO = SMEM_PRO + TABLES,
                            FIT_RS = SMEM_RS + TABLES;
};
template <class T> struct alignas(16) Vec4 { T v[4]; }; // (16: the shared memory's alignment)
template <class T> struct Xfer;     // (transfer.h) the restriction's tables
template <class T> struct RsPlanes; // ... and its sums over z
template <class T> struct Windows;  // ... the prolongation's taps

// FR: the faces are the level's stored fractions (Grid::fx, fy, fz: any
// level of beta alone, 1 / beta or not), staged as they are: x / y one
// plane ahead into their rings, z two planes ahead into 1 / beta's.
// RES: the same walk forms the residual instead (dst = f - shift - A src at
// the interior points, in double as the column walk forms it; omega and flip
// unused): step m's two updates become the residual at the same two points,
// from the old values.
// RR (with RES; 3 or 4: the children per coarse node and axis, at most): the
// residual restricted instead, dst = R (f - shift - A src) on the coarse
// level cg (restriction xr, restrict_tile_kernel's sums in its order), with
// no fine residual in memory.  The launch covers cg: a block owns RX x RY
// coarse columns and a chunk of coarse planes, and walks the fine planes of
// their children, its tile placed so that the children lie in the points
// whose residual it forms (one point in from the tile's edges; the host
// checked the x / y runs, bt_rr).  Step m puts plane m - 1's residual into
// a plane of shared memory (zero outside those points and the interior), and
// step m + 1, past its barrier, sums it over each coarse column's children.
// PRO (a smoothing pass): src is first corrected by the coarse level cg's
// correction ce, src + P ce (interp_tile_kernel's taps tw and order of the
// sums), as its planes arrive: a block stages the PCX x PCY coarse tile of
// each coarse plane its fine planes need (tiles of at most that span, and z
// windows that move by at most one plane a fine plane: the host checked
// them, bt_pro), and step m corrects this thread's elements of plane m + 1
// (read by the others only past step m + 1's barrier) with the planes' x-y
// interpolants held in registers.
// RS (a smoothing pass): the residual of its result, f - shift - A dst, is
// stored into rout as well, at the same points.  A second-colour point's
// neighbours are final when it is updated, so its update forms it (from its
// sums; step m, plane m - 1); a first-colour point's neighbours are final two
// planes later, so step m forms it at plane m - 2 (as RES does; the second
// colour's values go back into the ring), from the faces and f one plane
// longer in their rings (BetaTile::RF_RS, RC_RS).  A block owns the points
// three in from its tile's edges, and its walk takes a plane more below its
// chunk and two steps more above it.
enum { U_RELAX, U_RESID, U_BOTH }; // BetaWalk::update: what it forms
// The walk of one block, its state in members and each of its steps a
// function (every one inlined: the kernel is this object's walk).
template <class T, bool RES, bool FR, int RR, bool PRO, bool RS> struct BetaWalk {
    static_assert(RR == 0 || (RES && (RR == 3 || RR == 4)), "the restricted residual: a residual, 3 or 4 children");
    static_assert(!PRO || !RES, "the correction folds into a smoothing pass");
    static_assert(!RS || (!RES && !PRO && !FR), "RS: a smoothing pass from 1 / beta");
    typedef BetaTile<T> B;
    static_assert(!PRO || B::PCPL <= BT_TX * B::BY, "a thread stages each coarse tile point");
    static constexpr int PL = B::PL, RW = BT_RW, RU = B::RU, RB = B::RB, BY = B::BY;
    static constexpr int RF = RS ? B::RF_RS : B::RF, RC = RS ? B::RC_RS : B::RC;
    static constexpr int S = RS ? 12 : 6; // steps a block of them (each ring slot a constant)
    static_assert(S % RU == 0 && S % RF == 0 && S % RB == 0 && S % RC == 0, "a block of steps turns every ring");
    static constexpr int H = RS ? 3 : 2; // the points a tile's edge lends to its neighbours
    typedef Vec4<T> T4;
    struct ZTap {
        int s;
        T w0, w1;
    };

    // The launch's arguments.
    const Grid<T> &g, &cg;
    const T *__restrict__ src;
    T *__restrict__ dst;
    const T *__restrict__ f;
    const T omega;
    const Xfer<T> &xr;
    const T *__restrict__ ce;
    const Windows<T> &tw;
    T *__restrict__ rout;
    // The static tables (x / y couplings and diagonal parts of the tile's
    // columns and rows) and the rings in shared memory.
    T (*const cxs)[2 * BT_TX];
    T (*const cys)[BY];
    T *su, *sf, *sr, *sx, *sy;
    // The chunk's fine planes [k0, k1) and the tile's first column xb and row
    // yb0 (RR: the chunk's coarse planes [K0, K1) and their children).  RS:
    // [o0, o1) the chunk, k0 a plane below it.  mend: the last step.
    int yb = 0, k0 = 0, k1 = 0, K0 = 0, K1 = 0, xb = 0, yb0 = 0, o0 = 0, o1 = 0, mend = 0;
    int tx = 0, ty = 0, x0 = 0, y = 0, me = 0;
    int64_t col = 0;
    // Per element: ld, its u and 1 / beta are loaded (ghosts too); act, an
    // interior point; own, stored; rv (RR), its residual goes to the
    // residual plane (else zero).
    bool ld[2], act[2], own[2], rv[2];
    // RR: thread t < RX RY sums coarse column (I0 + t % RX, J0 + t / RX)
    // (rown: one of cg's).  Tables, read four at a time: per tile column of
    // coarse nodes the children's x weights rwx and places in a residual
    // plane's row rox (4 from the first child; unused slots weigh 0), per row
    // of them the y weights rwy and the first child row's offset roy; per
    // thread its column's offset in cg, rfb.
    T *sres = nullptr;
    T4 *rwx = nullptr, *rwy = nullptr;
    int4 *rox = nullptr;
    int *roy = nullptr;
    int64_t *rfb = nullptr;
    int rt = 0, ci = 0, cj = 0;
    bool rown = false;
    Shift<T> sh;
    T shift, keep;
    // PRO: the coarse tile's first storage column cx0 and row cy0; thread
    // rt < PCPL stages its point (cstage: inside the storage) from cgo in each
    // plane; cnext: the next coarse plane to stage.  Per element its taps'
    // place in the tile and weights (clamped to the grid: used where act).
    T *cring = nullptr;
    int cnext = 0, pxo[2] = {0, 0}, pyo = 0;
    int64_t cgo = 0;
    bool cstage = false;
    T wxa[2][2], wya[2];
    // issue(): the next plane ip and its offset po.
    int ip = 0;
    int64_t po = 0;
    // The pair's low faces (fractions) per plane slot, and its 1 / beta at
    // the plane formed last.
    T wz[RC][2], wo[2] = {T(0), T(0)};
    // PRO: the x-y interpolants P0 / P1 of coarse planes cs and cs + 1; the
    // z taps za of the plane the next correct() takes, zb of the one after.
    T P0[2] = {T(0), T(0)}, P1[2] = {T(0), T(0)};
    int cs = -4;
    ZTap za{0, T(0), T(0)}, zb{0, T(0), T(0)};
    bool warp_in = false;
    // RR: this thread's coarse column's sums over the z children.
    RsPlanes<T> acc{0};
    // run(): element A's old u one plane above, by step parity (its z low
    // two steps later); the first colour's new values of the last two steps
    // (RES: old); RES: the first update's residual of the last step; RS: the
    // second colour's values of the last two steps; plane m - 1 of step m
    // (RS: rpd, plane m - 2).
    T zo[2], vp = T(0), vp2 = T(0), rp = T(0), w1 = T(0), w2 = T(0);
    T *pd = nullptr, *rpd = nullptr;

    __device__ __forceinline__ BetaWalk(const Grid<T> &g_, const T *src_, T *dst_, const T *f_, T omega_,
                                        const Grid<T> &cg_, const Xfer<T> &xr_, const T *ce_, const Windows<T> &tw_,
                                        T *rout_, T (*cxs_)[2 * BT_TX], T (*cys_)[BY], unsigned char *smem)
        : g(g_), cg(cg_), src(src_), dst(dst_), f(f_), omega(omega_), xr(xr_), ce(ce_), tw(tw_), rout(rout_),
          cxs(cxs_), cys(cys_)
    {
        su = reinterpret_cast<T *>(smem);
        sf = su + RU * PL;
        sr = sf + RF * PL;
        sx = sr + RB * PL; // the low x faces
        sy = sx + RC * PL; // the low y faces
        sres = sy + RC * PL; // RR: the residual planes of odd and even planes
        cring = sy + RC * PL; // PRO: the coarse tiles
    }

    // The block's chunk and tile and this thread's elements; false: no block there.
    __device__ __forceinline__ bool place(int kchunk, int nyb, int nchunks)
    {
        int zc;
        if (!block_yz(nyb, nchunks, yb, zc)) return false; // uniform per block
        if constexpr (RR != 0) {
            chunk_planes(zc, kchunk, cg.nz, K0, K1);
            k0 = __ldg(xr.idxz + K0 * MAX_CHILDREN);
            k1 = __ldg(xr.idxz + (K1 - 1) * MAX_CHILDREN + __ldg(xr.cntz + K1 - 1) - 1) + 1;
            xb = __ldg(xr.idxx + blockIdx.x * B::RX * MAX_CHILDREN) - 1;
            yb0 = __ldg(xr.idxy + yb * B::RY * MAX_CHILDREN) - 1;
        } else {
            chunk_planes(zc, kchunk, g.nz, k0, k1);
            xb = blockIdx.x * (RS ? B::OX_RS : B::OX) - H;
            yb0 = yb * (RS ? B::OY_RS : B::OY) - H;
            if constexpr (RS) {
                o0 = k0;
                o1 = k1;
                k0 = max(k0 - 1, 0);
            }
        }
        mend = RS ? o1 + 1 : k1;
        tx = threadIdx.x;
        ty = threadIdx.y;
        x0 = xb + 2 * tx; // even but for RR and RS
        y = yb0 + ty;
        col = g.base + x0 + (int64_t)y * g.sy; // only dereferenced where loaded
        me = (ty + 1) * 2 * RW + tx + 1;       // element 0 in a plane, element 1 at + RW
        const bool yl = y >= -1 && y <= g.ny, yi = y >= 0 && y < g.ny;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int x = x0 + e;
            const bool xi = x >= 0 && x < g.nx;
            ld[e] = x >= -1 && x <= g.nx && yl;
            act[e] = xi && yi;
            own[e] = act[e] && 2 * tx + e >= H && 2 * tx + e < 2 * BT_TX - H && ty >= H && ty < BY - H;
        }
#pragma unroll
        for (int e = 0; e < 2; ++e)
            rv[e] = act[e] && 2 * tx + e >= 1 && 2 * tx + e < 2 * BT_TX - 1 && ty >= 1 && ty < BY - 1;
        rt = ty * BT_TX + tx;
        ci = rt % B::RX;
        cj = rt / B::RX;
        return true;
    }

    // The table form's couplings of the tile's columns and rows (clamped to
    // the grid), for the points at box faces; RR: the restriction's tables.
    __device__ __forceinline__ void tables()
    {
        const int t = ty * BT_TX + tx;
        if (t < 2 * BT_TX) {
            const int x = min(max(xb + t, 0), g.nx - 1);
            const ColXY<T> c = col_xy(g, x, 0);
            cxs[0][t] = c.vxl;
            cxs[1][t] = c.vxh;
            cxs[2][t] = g.cxl[x];
            cxs[3][t] = g.cxh[x];
        } else if (t < 2 * BT_TX + BY) {
            const int r = t - 2 * BT_TX, yc = min(max(yb0 + r, 0), g.ny - 1);
            const ColXY<T> c = col_xy(g, 0, yc);
            cys[0][r] = c.vyl;
            cys[1][r] = c.vyh;
            cys[2][r] = g.cyl[yc];
            cys[3][r] = g.cyh[yc];
        }
        if constexpr (RR != 0) {
            rwx = reinterpret_cast<T4 *>(sres + 2 * PL);
            rwy = rwx + B::RX;
            rox = reinterpret_cast<int4 *>(rwy + B::RY);
            roy = reinterpret_cast<int *>(rox + B::RX);
            rfb = reinterpret_cast<int64_t *>(roy + B::RY);
            const int u = rt - 2 * BT_TX - BY; // threads past those filling cxs, cys
            if (u >= 0 && u < B::RX) {
                const int I = min(blockIdx.x * B::RX + u, cg.nx - 1), n = __ldg(xr.cntx + I);
                const int p = __ldg(xr.idxx + I * MAX_CHILDREN) - xb; // the first child's place in the tile
                T4 w;
                int o[4];
#pragma unroll
                for (int a = 0; a < 4; ++a) {
                    w.v[a] = a < n ? __ldg(xr.rwx + I * MAX_CHILDREN + a) : T(0);
                    o[a] = ((p + a) >> 1) + 1 + ((p + a) & 1) * RW;
                }
                rwx[u] = w;
                rox[u] = make_int4(o[0], o[1], o[2], o[3]);
            } else if (u >= B::RX && u < B::RX + B::RY) {
                const int r = u - B::RX, J = min(yb * B::RY + r, cg.ny - 1), n = __ldg(xr.cnty + J);
                T4 w;
#pragma unroll
                for (int a = 0; a < 4; ++a) w.v[a] = a < n ? __ldg(xr.rwy + J * MAX_CHILDREN + a) : T(0);
                rwy[r] = w;
                roy[r] = (__ldg(xr.idxy + J * MAX_CHILDREN) - yb0 + 1) * 2 * RW;
            }
            const int I = blockIdx.x * B::RX + ci, J = yb * B::RY + cj;
            rown = rt < B::RX * B::RY && I < cg.nx && J < cg.ny;
            if (rown) rfb[rt] = cg.base + I + (int64_t)J * cg.sy;
        }
    }

    // PRO: the coarse tile's place and this thread's taps.
    __device__ __forceinline__ void pro_taps()
    {
        const int cx0 = __ldg(tw.sx + min(max(xb, 0), g.nx - 1)), cy0 = __ldg(tw.sy + min(max(yb0, 0), g.ny - 1));
        const int r = rt / B::PCX, c = rt - r * B::PCX;
        cstage = rt < B::PCPL && cx0 + c <= cg.nx + 1 && cy0 + r <= cg.ny + 1;
        cgo = ghost_origin(cg) + cx0 + c + (int64_t)(cy0 + r) * cg.sy;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int x = min(max(x0 + e, 0), g.nx - 1);
            pxo[e] = __ldg(tw.sx + x) - cx0;
            wxa[e][0] = __ldg(tw.wx + 2 * x);
            wxa[e][1] = __ldg(tw.wx + 2 * x + 1);
        }
        const int yc = min(max(y, 0), g.ny - 1);
        pyo = (__ldg(tw.sy + yc) - cy0) * B::PCX;
        wya[0] = __ldg(tw.wy + 2 * yc);
        wya[1] = __ldg(tw.wy + 2 * yc + 1);
        cnext = __ldg(tw.sz + max(k0 - 2, 0));
    }

    // Issue: plane ip of u and 1 / beta (FR: the z faces), ip - 1 of f (FR:
    // and the x / y faces, into slot sc_), one commit group; slots counted
    // from plane k0 - 2.  INNER: planes ip - 1, ip inside (no range check).
    // PRO: the coarse planes up to need; one: at most one of them (a step's:
    // the windows move by at most one plane a plane).
    template <bool INNER>
    __device__ __forceinline__ void issue(int su_, int sr_, int sf_, int sc_, int need, bool one = false)
    {
        if (INNER || (ip >= -1 && ip <= g.nz)) {
#pragma unroll
            for (int e = 0; e < 2; ++e)
                if (ld[e]) {
                    __pipeline_memcpy_async(su + su_ * PL + me + e * RW, src + po + e, sizeof(T));
                    __pipeline_memcpy_async(sr + sr_ * PL + me + e * RW, (FR ? g.fz : g.bw) + po + e, sizeof(T));
                }
        }
        if (INNER || (ip - 1 >= 0 && ip - 1 < g.nz)) {
            const int64_t pf = po - g.sz;
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                if (act[e]) __pipeline_memcpy_async(sf + sf_ * PL + me + e * RW, f + pf + e, sizeof(T));
                if (FR && ld[e]) {
                    __pipeline_memcpy_async(sx + sc_ * PL + me + e * RW, g.fx + pf + e, sizeof(T));
                    __pipeline_memcpy_async(sy + sc_ * PL + me + e * RW, g.fy + pf + e, sizeof(T));
                }
            }
        }
        if constexpr (PRO) { // the coarse planes plane ip's correction reads: up to need
            if (one) {
                if (cnext <= need) {
                    stage();
                    ++cnext;
                }
            } else {
                for (; cnext <= need; ++cnext) stage();
            }
        }
        __pipeline_commit();
        ++ip;
        po += g.sz;
    }
    __device__ __forceinline__ void stage()
    {
        if (cstage)
            __pipeline_memcpy_async(cring + (cnext % B::PRING) * B::PCPL + rt, ce + cgo + (int64_t)cnext * cg.sz,
                                    sizeof(T));
    }

    // The faces of plane slot c from 1 / beta in slot rc (FR: its z faces).
    __device__ __forceinline__ void form(int c, int rc)
    {
        if constexpr (FR) {
            wz[c][0] = sr[rc * PL + me];
            wz[c][1] = sr[rc * PL + me + RW];
            return;
        }
        const T *r = sr + rc * PL + me;
        const T r0 = r[0], r1 = r[RW];
        sx[c * PL + me] = beta_face(r[RW - 1], r0);
        sx[c * PL + me + RW] = beta_face(r0, r1);
        sy[c * PL + me] = beta_face(r[-2 * RW], r0);
        sy[c * PL + me + RW] = beta_face(r[-RW], r1);
        wz[c][0] = beta_face(wo[0], r0);
        wz[c][1] = beta_face(wo[1], r1);
        wo[0] = r0;
        wo[1] = r1;
    }

    // RES: the residual of couplings v, diagonal parts d (ResidualEmit's).
    __device__ __forceinline__ T residual(const T (&v)[6], const T (&d)[6], const T (&nb)[6], T centre, T fv) const
    {
        double va[6], da[6], na[6], dg;
#pragma unroll
        for (int fc = 0; fc < 6; ++fc) {
            va[fc] = v[fc];
            da[fc] = d[fc];
            na[fc] = nb[fc];
        }
        const double off = plain_sum(va, da, na, dg);
        return T(point_res(sh.template of_as<double>(fv) + off, dg, (double)centre));
    }

    // PRO: coarse plane s's x-y interpolant at this thread's elements
    // (interp_tile_kernel's order of the sums).
    __device__ __forceinline__ void interp_xy(int s, T (&o)[2]) const
    {
        const T *pl = cring + (s % B::PRING) * B::PCPL + pyo;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            T v = T(0);
#pragma unroll
            for (int b = 0; b < 2; ++b) {
                const T *row = pl + pxo[e] + b * B::PCX;
                T xv = T(0);
#pragma unroll
                for (int a = 0; a < 2; ++a) xv += wxa[e][a] * row[a];
                v += wya[b] * xv;
            }
            o[e] = v;
        }
    }
    // The z taps of a plane (clamped to the grid), loaded a step before they are used.
    __device__ __forceinline__ ZTap ztap(int kk) const
    {
        const int k = min(max(kk, 0), g.nz - 1);
        return ZTap{__ldg(tw.sz + k), __ldg(tw.wz + 2 * k), __ldg(tw.wz + 2 * k + 1)};
    }
    // PRO: plane kk's correction added to this thread's elements in u slot
    // uc (inside: plane kk lies inside the grid, no check); then za takes
    // zb, zb plane kk + 2.
    __device__ __forceinline__ void correct(int kk, int uc, bool inside = false)
    {
        const ZTap z = za;
        za = zb;
        {
            const int k = min(kk + 2, g.nz - 1); // (kk >= k0 - 2)
            zb = ZTap{__ldg(tw.sz + k), __ldg(tw.wz + 2 * k), __ldg(tw.wz + 2 * k + 1)};
        }
        if (!inside && (kk < 0 || kk >= g.nz)) return; // (uniform)
        const int s = z.s;
        if (s != cs) {
            if (s == cs + 1) {
                P0[0] = P1[0];
                P0[1] = P1[1];
            } else {
                interp_xy(s, P0);
            }
            interp_xy(s + 1, P1);
            cs = s;
        }
        const T w0 = z.w0, w1_ = z.w1;
#pragma unroll
        for (int e = 0; e < 2; ++e)
            if (act[e]) {
                T v = T(0);
                v += w0 * P0[e];
                v += w1_ * P1[e];
                T *q = su + uc * PL + me + e * RW;
                *q = *q + v;
            }
    }

    // Element e at plane p: the other x neighbour and the y neighbours from u
    // slot uc, its own centre, partner (the pair's other element) and z
    // neighbours, f, its faces (fr6, GenPoint's order).  FAST: the uniform
    // couplings (the smoother's sums per axis: cx times the faces' weighted
    // neighbours); else the table form's, for every lane (the value counts
    // where act[e]).  MODE: U_RELAX; U_RESID, the residual there instead
    // (RES, RS); U_BOTH, the new value, and into rr the residual after it
    // (RS: where the neighbours are final).
    template <bool FAST, int MODE>
    __device__ __forceinline__ T update(int e, int p, int uc, T centre, T partner, T zl, T zh, T fv, const T (&fr6)[6],
                                        T &rr) const
    {
        constexpr bool RESID = MODE == U_RESID;
        const T *u = su + uc * PL + me + e * RW;
        const T side = u[e ? 1 - RW : RW - 1];
        T nb6[6] = {e ? partner : side, e ? side : partner, u[-2 * RW], u[2 * RW], zl, zh};
        T off, dg;
        if constexpr (FAST) {
            const T c[6] = {mul_rn(g.cx, fr6[0]), mul_rn(g.cx, fr6[1]), mul_rn(g.cy, fr6[2]),
                            mul_rn(g.cy, fr6[3]), mul_rn(g.cz, fr6[4]), mul_rn(g.cz, fr6[5])};
            if constexpr (RESID) return residual(c, c, nb6, centre, fv);
            off = plain_sum(c, c, nb6, dg);
            const T v = relax_scaled(centre, (fv - shift) + off, keep, smooth_scale_lean(omega, dg));
            if constexpr (MODE == U_BOTH) rr = T(point_res(sh.template of_as<double>(fv) + off, double(dg), double(v)));
            return act[e] ? v : centre; // ghosts and points outside keep their values
        } else {
            const int ex = 2 * tx + e;
            const ColZ<T> z = col_z(g, p);
            GenPoint<T> gp;
            gp.v[0] = cxs[0][ex]; gp.v[1] = cxs[1][ex]; gp.v[2] = cys[0][ty]; gp.v[3] = cys[1][ty];
            gp.v[4] = z.vzl; gp.v[5] = z.vzh;
            gp.d[0] = cxs[2][ex]; gp.d[1] = cxs[3][ex]; gp.d[2] = cys[2][ty]; gp.d[3] = cys[3][ty];
            gp.d[4] = g.czl[p]; gp.d[5] = g.czh[p];
            gen_faces(gp, fr6, 0u);
            if constexpr (RESID) return residual(gp.v, gp.d, nb6, centre, fv);
            off = plain_sum(gp.v, gp.d, nb6, dg);
            const T v = relax_scaled(centre, (fv - shift) + off, keep, smooth_scale_lean(omega, dg));
            if constexpr (MODE == U_BOTH) rr = T(point_res(sh.template of_as<double>(fv) + off, double(dg), double(v)));
            return act[e] && dg > T(0) ? v : centre; // only Neumann faces open: left as it is
        }
    }

    // Planes k0 - 2 .. k0 of u and 1 / beta in flight, the first two ready
    // (PRO: corrected), warp_in decided and plane k0 - 1's faces formed.
    __device__ __forceinline__ void prime()
    {
        ip = k0 - 2;
        po = col + (int64_t)ip * g.sz;
        for (int a = 0; a < 3; ++a) {
            const int d = ip - (k0 - 2);
            int need = 0;
            if constexpr (PRO) need = ztap(ip).s + 1;
            issue<false>(d % RU, d % RB, (d + RF - 1) % RF, (d + RC - 1) % RC, need);
        }
        if constexpr (PRO) {
            za = ztap(k0 - 2);
            zb = ztap(k0 - 1);
        }
        __pipeline_wait_prior(1);
        __syncthreads();
        if constexpr (PRO) { // planes k0 - 2 and k0 - 1 (slots 0, 1); k0 at the first step
            correct(k0 - 2, 0);
            correct(k0 - 1, 1);
        }
        warp_in = uniform_row();
        if constexpr (!FR) { // (FR: the z faces are stored)
            wo[0] = sr[me];
            wo[1] = sr[me + RW];
        }
#pragma unroll
        for (int c = 0; c < RC; ++c) wz[c][0] = wz[c][1] = T(0);
        form(1, 1); // plane k0 - 1
        acc.Kc = K0;
    }
    // A warp is a row: whether every interior point of the row takes the
    // uniform couplings (cx, cy) for x and y: no x / y neighbour is a box
    // face, or the face's table couplings equal them as Grid::fast counts
    // equal (a Dirichlet face of a uniform axis).
    __device__ __forceinline__ bool uniform_row() const
    {
        auto near = [](T a, T c) { return fabs((double)a - (double)c) <= 1e-12 * fabs((double)c); };
        const bool yok = (y >= 1 && y <= g.ny - 2) || (near(cys[0][ty], g.cy) && near(cys[1][ty], g.cy) &&
                                                      near(cys[2][ty], g.cy) && near(cys[3][ty], g.cy));
        bool ok = true;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int x = x0 + e, ex = 2 * tx + e;
            const bool xok = (x >= 1 && x <= g.nx - 2) || (near(cxs[0][ex], g.cx) && near(cxs[1][ex], g.cx) &&
                                                          near(cxs[2][ex], g.cx) && near(cxs[3][ex], g.cx));
            ok = ok && (!act[e] || (xok && yok));
        }
        return __all_sync(0xffffffffu, ok);
    }

    // RR: residual plane kf summed over this thread's coarse column's x / y
    // children into acc (restrict_tile_kernel's order of the sums).
    __device__ __forceinline__ void flush(int K, T v)
    {
        if (K >= K0 && K < K1) dst[rfb[rt] + (int64_t)K * cg.sz] = v;
    }
    __device__ __forceinline__ void restrict_plane(int kf)
    {
        const T4 wx = rwx[ci], wy = rwy[cj];
        const int4 o4 = rox[ci];
        const int o[4] = {o4.x, o4.y, o4.z, o4.w};
        const T *pl = sres + (kf & 1) * PL + roy[cj];
        T sm = T(0); // (RsThread::sum's order: rs_add)
#pragma unroll
        for (int b = 0; b < RR; ++b) {
            const T *row = pl + b * 2 * RW;
            T sx_ = T(0);
#pragma unroll
            for (int a = 0; a < RR; ++a) sx_ = rs_add(sx_, wx.v[a], row[o[a]]);
            sm = rs_add(sm, wy.v[b], sx_);
        }
        acc.add(xr, kf, sm, [&](int K, T v) { flush(K, v); });
    }

    // The walk, element A at plane k0 - 1 being E0: blocks of S steps, each
    // ring slot a constant; steps past mend are not taken.  FAST: the whole
    // block of S steps on the planes 1 .. nz - 2 (RS: its residuals' too),
    // and the warp's couplings uniform (warp_in).
    template <int E0> __device__ __forceinline__ void run()
    {
        zo[0] = su[me + E0 * RW];
        zo[1] = su[PL + me + (E0 ^ 1) * RW];
        pd = dst + col + (int64_t)(k0 - 2) * g.sz;
        rpd = rout + col + (int64_t)(k0 - 3) * g.sz;
        for (int mb = k0 - 1; mb <= mend; mb += S) {
            if (warp_in && mb >= (RS ? 3 : 2) && mb + S - 1 <= g.nz - 2) steps<true, E0>(mb);
            else steps<false, E0>(mb);
        }
    }
    template <bool FAST, int E0> __device__ __forceinline__ void steps(int mb)
    {
        each_const(
            [&](auto j_c) __attribute__((always_inline)) {
                if (mb + j_c.value <= mend) step<FAST, decltype(j_c)::value, E0>(mb);
            },
            std::make_integer_sequence<int, S>{});
    }
    // Step m = mb + j: the first colour at plane m, the second at m - 1.
    template <bool FAST, int j, int E0> __device__ __forceinline__ void step(int mb)
    {
        constexpr int e = (E0 + j) & 1;
        const int m = mb + j;
        __pipeline_wait_prior(0);
        __barrier_sync(0); // not __syncthreads: warps reach it through different code (E0, FAST)
        // u, 1 / beta at m + 2; f at m + 1 (PRO: the coarse planes of m + 2)
        issue<FAST>((3 + j) % RU, (3 + j) % RB, (2 + j) % RF, (2 + j) % RC, zb.s + 1, true);
        form((2 + j) % RC, (2 + j) % RB); // plane m + 1
        if constexpr (PRO) correct(m + 1, (2 + j) % RU, FAST);
        constexpr int cl = j % RC, cm = (1 + j) % RC, ch = (2 + j) % RC, ul = j % RU, um = (1 + j) % RU;
        constexpr int mode1 = RES ? U_RESID : U_RELAX;
        constexpr int mode2 = RES ? U_RESID : RS ? U_BOTH : U_RELAX;
        T r2 = T(0); // RS: the second colour's residual
        T *uA = su + um * PL + me + e * RW;
        const T cen = *uA, zh = su[((2 + j) % RU) * PL + me + e * RW], zl = zo[j & 1];
        zo[j & 1] = zh;
        if constexpr (RR != 0)
            if (rown && m - 2 >= k0) restrict_plane(m - 2); // stored at step m - 1
        T v1 = cen, r1 = T(0); // ghosts keep their values
        if (FAST || (m >= 0 && m < g.nz)) {
            const T *ax = sx + cm * PL + me + e * RW, *ay = sy + cm * PL + me + e * RW;
            const T fr6[6] = {ax[0], ax[e ? 1 - RW : RW], ay[0], ay[2 * RW], wz[cm][e], wz[ch][e]};
            const T fv = sf[((1 + j) % RF) * PL + me + e * RW];
            r1 = update<FAST, mode1>(e, m, um, cen, zo[(j + 1) & 1], zl, zh, fv, fr6, r2);
            if constexpr (!RES) *uA = v1 = r1;
        }
        T v2 = zl; // the second colour's value at plane m - 1 (ghosts keep theirs)
        if (m - 1 >= k0 && (!RS || m - 1 < g.nz)) {
            const T *ax = sx + cl * PL + me + e * RW, *ay = sy + cl * PL + me + e * RW;
            const T fr6[6] = {ax[0], ax[e ? 1 - RW : RW], ay[0], ay[2 * RW], wz[cl][e], wz[cm][e]};
            v2 = update<FAST, mode2>(e, m - 1, ul, zl, vp, vp2, v1, sf[(j % RF) * PL + me + e * RW], fr6, r2);
            if constexpr (RR != 0) {
                T *q = sres + ((m - 1) & 1) * PL + me;
                q[e * RW] = rv[e] ? v2 : T(0);
                q[(e ^ 1) * RW] = rv[e ^ 1] ? rp : T(0);
            } else {
                if constexpr (RS) su[ul * PL + me + e * RW] = v2; // (read past the next barrier)
                if (!RS || (m - 1 >= o0 && m - 1 < o1)) {
                    if (own[e]) pd[e] = v2;
                    if (own[e ^ 1]) pd[e ^ 1] = RES ? rp : vp;
                }
            }
        }
        if constexpr (RS) rs_residuals<FAST, j, e>(m, v2, r2);
        pd += g.sz;
        vp2 = vp;
        vp = v1;
        rp = r1;
    }
    // RS: element e's residuals: at plane m - 1 its update's (r2), at m - 2
    // formed here, where every value at plane m - 2 and beside it is final
    // (its own value, its partner's and z neighbours' from this thread's updates).
    template <bool FAST, int j, int e> __device__ __forceinline__ void rs_residuals(int m, T v2, T r2)
    {
        if (m - 1 >= o0 && m - 1 < o1 && own[e]) rpd[g.sz + e] = r2;
        const int p = m - 2;
        if (p >= o0 && p < o1) {
            constexpr int cl = j % RC, cp = (j + RC - 1) % RC, up = (j + RU - 1) % RU;
            const T *ax = sx + cp * PL + me + e * RW, *ay = sy + cp * PL + me + e * RW;
            const T fr6[6] = {ax[0], ax[e ? 1 - RW : RW], ay[0], ay[2 * RW], wz[cp][e], wz[cl][e]};
            T unused;
            const T r = update<FAST, U_RESID>(e, p, up, vp2, w1, w2, v2, sf[((j + RF - 1) % RF) * PL + me + e * RW],
                                              fr6, unused);
            if (own[e]) rpd[e] = r;
        }
        rpd += g.sz;
        w2 = w1;
        w1 = v2;
    }

    // No copy outlives the block; RR: the last plane, stored at the last step.
    __device__ __forceinline__ void finish()
    {
        __pipeline_wait_prior(0);
        if constexpr (RR != 0) {
            __barrier_sync(0);
            if (rown) {
                restrict_plane(k1 - 1);
                acc.finish([&](int K, T v) { flush(K, v); });
            }
        }
    }
};

template <class T, bool RES, bool FR, int RR = 0, bool PRO = false, bool RS = false>
__global__ void __launch_bounds__(BT_TX *Tune<T>::bt_by, Tune<T>::bt_blocks)
    beta_tile_kernel(const Grid<T> g, const T *__restrict__ src, T *__restrict__ dst, const T *__restrict__ f,
                     const T *__restrict__ shiftp, T omega, int flip, const Grid<T> cg, const Xfer<T> xr,
                     const T *__restrict__ ce, const Windows<T> tw, T *__restrict__ rout, int kchunk, int nyb,
                     int nchunks)
{
    typedef BetaWalk<T, RES, FR, RR, PRO, RS> W;
    extern __shared__ __align__(16) unsigned char bt_smem[];
    __shared__ T cxs[4][2 * BT_TX], cys[4][W::BY];
    static_assert(sizeof(cxs) + sizeof(cys) == BetaTile<T>::TABLES, "BetaTile::TABLES counts the static tables");
    W w(g, src, dst, f, omega, cg, xr, ce, tw, rout, cxs, cys, bt_smem);
    if (!w.place(kchunk, nyb, nchunks)) return;
    w.tables();
    w.sh = load_shift(shiftp);
    w.shift = w.sh.hi;
    w.keep = T(1) - omega;
    if constexpr (PRO) w.pro_taps();
    w.prime();
    const int c0 = flip ? 0 : 1; // the first colour: (x + y + z) & 1 == c0
    if (!RES && ((w.x0 + w.y + w.k0 - 1 + c0) & 1)) w.template run<1>(); // RES: either order takes every point
    else w.template run<0>();
    w.finish();
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 15 "src/poisson_gpu.cu"
#endif
// smooth.h -- how a level is smoothed: SmoothPlan and the passes
#ifdef PGPU_SRC_LINES
#line 2 "src/smooth.h"
#endif




namespace pgpu {

// The red-black kernel a level takes (level.h's route_level chooses it).
enum class SmoothRoute : uint8_t {
    PLAIN,   // rbgs_kernel: any level
    TILE,    // rbgs_tile_kernel on a uniform 3D level (two iterations a pass where paired)
    TILE_FR, // ... with face fractions (a mask's or beta's levels): one iteration a pass
    BETA,    // beta_tile_kernel: beta alone, faces from 1 / beta (g.bw) or from the fractions
    GALERKIN // a Galerkin level (odi.h): colour by colour, in place
};

// What a level's size and form allow its smoothers, and their launch shapes.
struct SmoothPlan {
    bool tile = false;   // the tiled red-black kernels may serve the level
    bool paired = false; // ... rbgs_tile_kernel with two iterations a pass
    bool large = false;  // 2^22 points or more (PAIRED_MIN; also beta_tiled's from 1 / beta)
    bool mid = false;    // BETA_FR_MIN points or more (beta_tiled's from the fractions)
    ColLaunch rb, rbt, rbt2, sweep, bt, bts; // bt: beta_tile_kernel's (where beta_tiled); bts: its RS
};

// uniform: the level's table is (Grid::fast before face fractions came);
// with fractions the tile kernel takes one iteration per pass.
template <class T> static SmoothPlan smooth_plan(const Grid<T> &g, double npts, int sms, bool uniform)
{
    SmoothPlan p;
    const bool is3d = g.is3d != 0;
    p.tile = uniform && is3d && !g.px && !g.py && !g.pz && g.nz >= 4;
    p.large = npts >= PAIRED_MIN;
    p.mid = npts >= BETA_FR_MIN;
    p.paired = p.tile && !g.fx && p.large;
    p.rb = col_launch(g.nx, g.ny, g.nz, is3d, RB_OX, RB_OY, RB_TX, RB_BY, sms);
    typedef RbTile<T, 1> T1;
    typedef RbTile<T, 2> T2;
    p.rbt = col_launch(g.nx, g.ny, g.nz, is3d, T1::OX, T1::OY, T1::TX, T1::BY, sms, T1::PER_SM);
    p.rbt2 = col_launch(g.nx, g.ny, g.nz, is3d, T2::OX, T2::OY, T2::TX, T2::BY, sms, T2::PER_SM);
    p.sweep = walk_launch(g.nx, g.ny, g.nz, is3d, Tune<T>::sweep_group);
    typedef BetaTile<T> BT;
    p.bt = col_launch(g.nx, g.ny, g.nz, is3d, BT::OX, BT::OY, BT_TX, BT::BY, sms, Tune<T>::bt_per_sm);
    // RS (one block an SM): of the z chunks for bt_per_sm and twice that,
    // the ones whose last round of blocks is fuller, less the planes a chunk
    // walks past its own (about four).  Smooth beta V(2,1), double, H200,
    // per cycle against bt_per_sm alone: 512^3 (3 chunks of 171 planes, 11
    // rounds, against 2 of 256, 7.1 rounds) 9.88 -> 9.68 ms, 384^3 4.76 ->
    // 4.65; twice bt_per_sm at 256^3 1.68 -> 1.69, 203^3 1.031 -> 1.037.
    {
        double best = -1;
        for (int per : {Tune<T>::bt_per_sm, 2 * Tune<T>::bt_per_sm}) {
            const ColLaunch L = col_launch(g.nx, g.ny, g.nz, is3d, BT::OX_RS, BT::OY_RS, BT_TX, BT::BY, sms, per);
            const double rounds = (double)blocks_of(L) / std::max(sms, 1), full = rounds / std::ceil(rounds);
            const double score = full * L.kchunk / (L.kchunk + 4.0);
            if (score > best) {
                best = score;
                p.bts = L;
            }
        }
    }
    return p;
}

// The red-black kernels' shared-memory opt-in (once per handle).
template <class T> static pgpu_status smooth_setup(Env &env)
{
    char *err = env.err;
    PGPU_CUDA(cudaFuncSetAttribute(rbgs_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)rbgs_smem_bytes<T>()));
    PGPU_CUDA(cudaFuncSetAttribute(rbgs_tile_kernel<T, 1, true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)frac_smem_bytes<T>()));
    PGPU_CUDA(cudaFuncSetAttribute(rbgs_tile_kernel<T, 1, false, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)frac_smem_bytes<T>()));
    if (BetaTile<T>::FIT <= (size_t)env.optin) {
        for (auto fn : {beta_tile_kernel<T, false, false>, beta_tile_kernel<T, true, false>,
                        beta_tile_kernel<T, false, true>})
            PGPU_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)BetaTile<T>::SMEM));
    }
    if constexpr (Tune<T>::bt_pro)
        if (BetaTile<T>::FIT_PRO <= (size_t)env.optin)
            for (auto fn : {beta_tile_kernel<T, false, false, 0, true>, beta_tile_kernel<T, false, true, 0, true>})
                PGPU_CUDA(
                    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)BetaTile<T>::SMEM_PRO));
    if constexpr (Tune<T>::bt_rs)
        if (BetaTile<T>::FIT_RS <= (size_t)env.optin)
            PGPU_CUDA(cudaFuncSetAttribute(beta_tile_kernel<T, false, false, 0, false, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)BetaTile<T>::SMEM_RS));
    if constexpr (Tune<T>::bt_rr)
        if (BetaTile<T>::FIT_RR <= (size_t)env.optin)
            for (auto fn : {beta_tile_kernel<T, true, false, 3>, beta_tile_kernel<T, true, false, 4>})
                PGPU_CUDA(
                    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)BetaTile<T>::SMEM_RR));
    return PGPU_SUCCESS;
}

// Level g (plan p) smoothed by beta_tile_kernel: a uniform 3D level of
// beta alone, from 1 / beta where it has it (level 0), else from its
// fractions from BETA_FR_MIN points (512^3's level 1, ncu: a pass float 0.29
// -> 0.265 ms, double 0.535 -> 0.45; small grids' cycles took longer with it
// and the residual on every level).  res: its residual formed so, on level
// 0 where large (the column walk took less on coarse levels and small
// grids: 512^3's level 1 float 0.20 against 0.30 ms, double 0.32 against
// 0.44; a 203^3 float cycle 0.73 ms with the walk, 0.78 with this and
// 16 blocks an SM).  Float's cycles restrict that residual in the same walk
// where the transfer allows it (Transfer::bt_rr, Multigrid::down).
template <class T> static bool beta_tiled(const Env &env, const Grid<T> &g, const SmoothPlan &p, bool res = false)
{
    return p.tile && (g.bw ? p.large || !res : p.mid && !res && g.fx && g.fy && g.fz) && !g.mk && !env.dist &&
           BetaTile<T>::FIT <= (size_t)env.optin;
}

// ... and a pass of it that also forms the residual (RS, from 1 / beta;
// where Tune::bt_rs), on a large 3D level whose RS tiles are at most 1.25
// times the pass's tiles a plane (512^3: 1.21, 203^3: 1.24, faster; 300^3:
// 1.44, a cycle 2.38 -> 2.49 ms).
template <class T> static bool beta_resid_fits(const Env &env, const SmoothPlan &p)
{
    auto tiles = [](const ColLaunch &L) { return (int64_t)L.grid.x * L.nyb; };
    return Tune<T>::bt_rs && p.tile && p.large && !env.dist && BetaTile<T>::FIT_RS <= (size_t)env.optin &&
           tiles(p.bts) * 4 <= tiles(p.bt) * 5;
}
template <class T> static bool beta_resid(const Env &env, const Grid<T> &g, const SmoothPlan &p)
{
    return g.bw && beta_tiled(env, g, p, true) && beta_resid_fits<T>(env, p);
}

// One Jacobi sweep src -> dst.
template <class T>
static pgpu_status jacobi_pass(Env &env, const Grid<T> &g, const SmoothPlan &p, const T *src, T *dst, const T *f,
                               const T *shift, T w)
{
    char *err = env.err;
    walk_masked(g, [&](auto mk) {
        launch(p.sweep, 0, env.st, jacobi_kernel<T, decltype(mk)::value>, g, src, dst, f, shift, w,
               interior_scale(g, w));
    });
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// One pass of `iters` red-black iterations src -> dst by route r (iters 2
// only where the level's route pairs them), first colour flipped by `flip`.
template <class T>
static pgpu_status rb_pass(Env &env, const Grid<T> &g, const SmoothPlan &p, SmoothRoute r, int iters, const T *src,
                           T *dst, const T *f, const T *shift, T w, int flip)
{
    char *err = env.err;
    switch (r) {
    case SmoothRoute::BETA:
        launch(p.bt, BetaTile<T>::SMEM, env.st,
               g.bw ? beta_tile_kernel<T, false, false> : beta_tile_kernel<T, false, true>, g, src, dst, f, shift, w,
               flip, Grid<T>{}, Xfer<T>{}, (const T *)nullptr, Windows<T>{}, (T *)nullptr);
        break;
    case SmoothRoute::TILE_FR:
        launch(p.rbt, frac_smem_bytes<T>(), env.st,
               g.mk ? rbgs_tile_kernel<T, 1, true, true> : rbgs_tile_kernel<T, 1, false, true>, g, src, dst, f, shift,
               w, flip);
        break;
    case SmoothRoute::TILE:
        if (iters == 2)
            launch(p.rbt2, 0, env.st, g.mk ? rbgs_tile_kernel<T, 2, true> : rbgs_tile_kernel<T, 2, false>, g, src,
                   dst, f, shift, w, flip);
        else
            launch(p.rbt, 0, env.st, g.mk ? rbgs_tile_kernel<T, 1, true> : rbgs_tile_kernel<T, 1, false>, g, src,
                   dst, f, shift, w, flip);
        break;
    default: launch(p.rb, rbgs_smem_bytes<T>(), env.st, rbgs_kernel<T>, g, src, dst, f, shift, w, flip);
    }
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// One red-black pass (src + P e) -> dst on a level routed BETA: the coarse
// correction e of level cg (taps w2) folded in (beta_tile_kernel's PRO,
// where Transfer::bt_pro).
template <class T>
static pgpu_status rb_pass_folded(Env &env, const Grid<T> &g, const SmoothPlan &p, const Grid<T> &cg,
                                  const Windows<T> &w2, const T *e, const T *src, T *dst, const T *f, const T *shift,
                                  T w, int flip)
{
    char *err = env.err;
    if constexpr (Tune<T>::bt_pro) {
        launch(p.bt, BetaTile<T>::SMEM_PRO, env.st,
               g.bw ? beta_tile_kernel<T, false, false, 0, true> : beta_tile_kernel<T, false, true, 0, true>, g, src,
               dst, f, shift, w, flip, cg, Xfer<T>{}, e, w2, (T *)nullptr);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    } else {
        (void)g, (void)p, (void)cg, (void)w2, (void)e, (void)src, (void)dst, (void)f, (void)shift, (void)w, (void)flip;
        return record(err, PGPU_ERROR_UNSUPPORTED, "internal: the folded correction is built for double only");
    }
}

// One red-black pass src -> dst on a level where route.pre_resid, its residual
// f - shift - A dst stored into r as well.
template <class T>
static pgpu_status rb_pass_resid(Env &env, const Grid<T> &g, const SmoothPlan &p, const T *src, T *dst, T *r,
                                 const T *f, const T *shift, T w, int flip)
{
    char *err = env.err;
    if constexpr (Tune<T>::bt_rs) {
        launch(p.bts, BetaTile<T>::SMEM_RS, env.st, beta_tile_kernel<T, false, false, 0, false, true>, g, src, dst, f,
               shift, w, flip, Grid<T>{}, Xfer<T>{}, (const T *)nullptr, Windows<T>{}, r);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    } else {
        (void)g, (void)p, (void)src, (void)dst, (void)r, (void)f, (void)shift, (void)w, (void)flip;
        return record(err, PGPU_ERROR_UNSUPPORTED,
                      "internal: the smoothing pass with its residual is built for double only");
    }
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 16 "src/poisson_gpu.cu"
#endif
// transfer.h -- coarsening an axis and the transfer tables between two levels
#ifdef PGPU_SRC_LINES
#line 2 "src/transfer.h"
#endif


namespace pgpu {

// Restriction and interpolation between a level and the next coarser one.
// Host: the per-axis tables (coarsening rule, interpolation weights, the
// restriction as their width-weighted adjoint) and the conditions the tiled
// kernels need.  Device, per transfer, a direct kernel that reads each
// point's stencil from memory (any level: periodic rings included) and a
// tiled one that reads each value once through shared memory (where the
// taps of consecutive nodes move forward: every axis but a periodic one):
//   restriction        restrict_kernel / restrict_tile_kernel
//   residual + R       (double) restrict_residual_kernel, the residual formed
//                      in the tiles (uniform 3D levels)
//   prolongation + add interp_kernel<2, ADD> / interp_tile_kernel<2, ADD>
//   FMG interpolation  interp_kernel<4> / interp_tile_kernel<4> (tricubic)
//   FMG boundary data  ghost_restrict_kernel, ghost_edges_kernel
// The single-block coarse cycle (multigrid.h) sums with the direct kernels'
// per-point functions (rs_column / rs_point, ip_column / ip_point).
// Transfer<T> (end of the section) holds one level pair's tables, which
// kernels are eligible, and their launches.

// Fine-to-coarse transfer along one axis.  Prolongation: fine node i takes
// q0[i] * coarse[p0[i]] + q1[i] * coarse[p1[i]], where p are storage indices
// of the coarse axis (0 and nc+1 are its ghosts: the wall values).
// Restriction is the adjoint weighted by cell widths, R = Wc^-1 P^T W, so that
// the coarse right-hand side keeps the integral of the fine one: child
// indices (0-based fine interior) and weights per coarse node.
struct AxisTransfer {
    bool coarsened = false;
    std::vector<int> p0, p1;
    std::vector<double> q0, q1;
    std::vector<int> rcnt, ridx; // rcnt[I], ridx[I * MAX_CHILDREN + m]
    std::vector<double> rw;
    // FMG's restriction of the data (f, boundary values): rw moved to rows
    // without a first moment about their coarse node (see moment_free).
    std::vector<double> fw;
    // FMG interpolation: cubic Lagrange through 4 coarse points per fine
    // node (storage indices c4, weights w4), see cubic_interpolation.
    std::vector<int> c4;
    std::vector<double> w4;
};

// FMG interpolation along one axis: cubic Lagrange interpolation through the
// four points nearest to each fine node, taken from the coarse nodes plus the
// wall itself at a Dirichlet wall (value: the ghost, the boundary data) and
// the wrapped nodes on a periodic axis.  Next to a Neumann wall the stencil
// becomes one-sided (a mirror image would force a zero slope where the flux
// is not zero).  Linear interpolation leaves an error of several times the
// discretisation error for the cycles to remove; cubic leaves far less.
static void cubic_interpolation(const Axis &a, const Axis &c, AxisTransfer &t)
{
    const int nc = c.n;
    std::vector<double> pos;
    std::vector<int> idx; // coarse storage index holding the point's value
    auto push = [&](double p, int i) { pos.push_back(p); idx.push_back(i); };
    if (a.lo == PGPU_BC_DIRICHLET) push(c.xlo, 0);
    else if (a.lo == PGPU_BC_PERIODIC) {
        if (nc > 1) push(c.x[nc - 2] - c.L, nc - 1);
        push(c.x[nc - 1] - c.L, nc);
    }
    for (int I = 0; I < nc; ++I) push(c.x[I], I + 1);
    if (a.hi == PGPU_BC_DIRICHLET) push(c.xhi, nc + 1);
    else if (a.hi == PGPU_BC_PERIODIC) {
        push(c.x[0] + c.L, 1);
        if (nc > 1) push(c.x[1] + c.L, 2);
    }
    const int np = (int)pos.size();
    t.c4.assign((size_t)a.n * 4, 1);
    t.w4.assign((size_t)a.n * 4, 0.0);
    int J = 0; // last point at or left of xi (0 also when all are right of it): the positions rise
    for (int i = 0; i < a.n; ++i) {
        const double xi = a.x[i];
        if (pos[J] > xi) J = 0;
        while (J + 1 < np && pos[J + 1] <= xi) ++J;
        const int m = std::min(4, np);
        const int s0 = std::max(0, std::min(J - 1, np - m));
        for (int k = 0; k < m; ++k) {
            double w = 1;
            for (int q = 0; q < m; ++q)
                if (q != k) w *= (xi - pos[s0 + q]) / (pos[s0 + k] - pos[s0 + q]);
            t.c4[(size_t)i * 4 + k] = idx[s0 + k];
            t.w4[(size_t)i * 4 + k] = w;
        }
    }
}

static AxisTransfer identity_transfer(const Axis &a)
{
    AxisTransfer t;
    t.coarsened = false;
    t.p0.resize(a.n);
    t.p1.resize(a.n);
    t.q0.assign(a.n, 1.0);
    t.q1.assign(a.n, 0.0);
    t.rcnt.assign(a.n, 1);
    t.ridx.assign((size_t)a.n * MAX_CHILDREN, 0);
    t.rw.assign((size_t)a.n * MAX_CHILDREN, 0.0);
    t.c4.assign((size_t)a.n * 4, 1);
    t.w4.assign((size_t)a.n * 4, 0.0);
    for (int i = 0; i < a.n; ++i) {
        t.p0[i] = t.p1[i] = i + 1;
        t.ridx[(size_t)i * MAX_CHILDREN] = i;
        t.rw[(size_t)i * MAX_CHILDREN] = 1.0;
        t.c4[(size_t)i * 4] = i + 1;
        t.w4[(size_t)i * 4] = 1.0;
    }
    t.fw = t.rw;
    return t;
}

// FMG restricts f and the boundary data to define the coarse problems, and
// the coarse solution is only as good as that data: a row of R whose
// children are not centred on its coarse node (the first coarse node of a
// cell-paired Neumann or Dirichlet axis: its fine neighbour on the wall side
// interpolates from it alone, or from the wall; the last one of an even
// Dirichlet axis that keeps nodes, the last fine node) samples f off the node, an
// O(h) error in a layer of cells that left the FMG error next to Neumann
// walls at up to twice the discretisation error after one finest cycle.
// moment_free moves weight between a row's outermost children until the
// row's first moment about its node vanishes (positions wrapped on periodic
// axes); a row that would need a negative weight (below -1e-12: rounding)
// keeps R's.
static void moment_free(const Axis &a, const std::vector<double> &X, AxisTransfer &t)
{
    t.fw = t.rw;
    const int nc = (int)X.size();
    for (int I = 0; I < nc; ++I) {
        const int cnt = t.rcnt[I];
        if (cnt < 2) continue;
        double M = 0, dmin = 0, dmax = 0;
        int mmin = -1, mmax = -1;
        for (int m = 0; m < cnt; ++m) {
            double d = a.x[t.ridx[(size_t)I * MAX_CHILDREN + m]] - X[I];
            if (a.lo == PGPU_BC_PERIODIC) { // the nearest image (+-L/2 kept as is)
                if (d > 0.5 * a.L) d -= a.L;
                else if (d < -0.5 * a.L) d += a.L;
            }
            M += t.rw[(size_t)I * MAX_CHILDREN + m] * d;
            if (mmin < 0 || d < dmin) { dmin = d; mmin = m; }
            if (mmax < 0 || d > dmax) { dmax = d; mmax = m; }
        }
        if (!(dmax - dmin > 0) || std::fabs(M) <= 1e-12 * (dmax - dmin)) continue;
        const double rlo = t.rw[(size_t)I * MAX_CHILDREN + mmin], rhi = t.rw[(size_t)I * MAX_CHILDREN + mmax];
        const double delta = M / (dmax - dmin);
        double wlo = rlo + delta, whi = rhi - delta;
        // Rounding may leave a weight that should be 0 just below it: such a
        // row still goes moment-free (the other end takes both weights), so
        // that mirror-image rows stay alike.
        if (wlo < -1e-12 || whi < -1e-12) continue;
        if (whi < 0) { wlo = rlo + rhi; whi = 0; }
        else if (wlo < 0) { whi = rlo + rhi; wlo = 0; }
        wlo = std::min(wlo, 1.0); // (a row's weights sum to 1: rounding may add to one)
        whi = std::min(whi, 1.0);
        t.fw[(size_t)I * MAX_CHILDREN + mmin] = wlo;
        t.fw[(size_t)I * MAX_CHILDREN + mmax] = whi;
    }
}

// Coarsening rule, per axis (documented in doc/internals.md):
//  - n even between two Dirichlet walls: vertex coarsening, the coarse nodes
//    are the fine nodes 2, 4, ..., n (1-based), the last one next to the
//    high wall.  Cell pairs there converged worse with masks, the more the
//    more levels (a solid sphere at 512^3: 0.19 per V-cycle, 0.05 at 511^3);
//    kept nodes converge like odd sizes, the box included.
//  - other even axes (a Neumann wall, periodic): cell pairs, a coarse node
//    at the middle of fine nodes 2I-1 and 2I, centred in its coarse cell as
//    the fine nodes are next to a Neumann wall.  Kept nodes there put a
//    coarse cell off its node: FMG's error rose to 1.5x the discretisation
//    error between two Neumann walls, and V-cycles slowed (0.115 per cycle
//    on a 256^3 box open at the top, 0.077 with pairs).
//  - odd Dirichlet/Neumann axes: vertex coarsening, fine nodes 2, ..., n-1.
//  - odd periodic axes: a uniform coarse ring of nc nodes (the even one of
//    (n +- 1)/2) not nested in the fine one.
// Interpolation is linear in position, towards the wall value at Dirichlet
// walls, constant towards Neumann walls, wrapping on periodic axes.
static bool coarsen_axis(const Axis &a, Axis &c, AxisTransfer &t)
{
    const int n = a.n;
    if (n <= 1) return false;
    std::vector<double> X;
    const bool pairs = n % 2 == 0 && !(a.lo == PGPU_BC_DIRICHLET && a.hi == PGPU_BC_DIRICHLET);
    if (pairs) {
        for (int I = 0; I < n / 2; ++I) X.push_back(0.5 * (a.x[2 * I] + a.x[2 * I + 1]));
    } else if (a.lo == PGPU_BC_PERIODIC) {
        int nc = (n + 1) / 2;
        if (nc % 2 == 1) nc = (n - 1) / 2;
        for (int I = 0; I < nc; ++I) X.push_back(a.x[0] + I * (a.L / nc));
    } else {
        for (int I = 0; I < n / 2; ++I) X.push_back(a.x[2 * I + 1]);
    }
    const int nc = (int)X.size();
    t.coarsened = true;
    t.p0.assign(n, 0);
    t.p1.assign(n, 0);
    t.q0.assign(n, 0.0);
    t.q1.assign(n, 0.0);
    const bool per = a.lo == PGPU_BC_PERIODIC;
    int J = -1; // last coarse node with X[J] <= x
    for (int i = 0; i < n; ++i) {
        const double xi = a.x[i];
        while (J + 1 < nc && X[J + 1] <= xi * (1 + 1e-14) + 1e-300) ++J;
        int pa, pb;
        double ta; // weight of pa; pb gets 1 - ta
        if (J >= 0 && J < nc - 1) {
            pa = J + 1;
            pb = J + 2;
            ta = (X[J + 1] - xi) / (X[J + 1] - X[J]);
        } else if (J == nc - 1) { // beyond the last coarse node
            pa = nc;
            if (per) {
                pb = 1;
                ta = (X[0] + a.L - xi) / (X[0] + a.L - X[nc - 1]);
            } else if (a.hi == PGPU_BC_DIRICHLET) {
                pb = nc + 1;
                ta = (a.xhi - xi) / (a.xhi - X[nc - 1]);
            } else {
                pb = nc;
                ta = 1.0;
            }
        } else { // before the first coarse node
            pb = 1;
            if (per) {
                pa = nc;
                ta = (X[0] - xi) / (X[0] - (X[nc - 1] - a.L));
            } else if (a.lo == PGPU_BC_DIRICHLET) {
                pa = 0;
                ta = (X[0] - xi) / (X[0] - a.xlo);
            } else {
                pa = 1;
                ta = 1.0;
            }
        }
        t.p0[i] = pa;
        t.q0[i] = ta;
        t.p1[i] = pb;
        t.q1[i] = 1.0 - ta;
    }
    // Coarse cell widths Wc = P^T w and the restriction R = Wc^-1 P^T W.
    std::vector<double> W(nc, 0.0);
    t.rcnt.assign(nc, 0);
    t.ridx.assign((size_t)nc * MAX_CHILDREN, 0);
    t.rw.assign((size_t)nc * MAX_CHILDREN, 0.0);
    auto add = [&](int p, double q, int i) {
        if (p < 1 || p > nc || q == 0.0) return true;
        const int I = p - 1;
        for (int m = 0; m < t.rcnt[I]; ++m)
            if (t.ridx[(size_t)I * MAX_CHILDREN + m] == i) {
                t.rw[(size_t)I * MAX_CHILDREN + m] += q * a.w[i];
                W[I] += q * a.w[i];
                return true;
            }
        if (t.rcnt[I] == MAX_CHILDREN) return false;
        const int m = t.rcnt[I]++;
        t.ridx[(size_t)I * MAX_CHILDREN + m] = i;
        t.rw[(size_t)I * MAX_CHILDREN + m] = q * a.w[i];
        W[I] += q * a.w[i];
        return true;
    };
    for (int i = 0; i < n; ++i)
        if (!add(t.p0[i], t.q0[i], i) || !add(t.p1[i], t.q1[i], i)) return false;
    for (int I = 0; I < nc; ++I) {
        if (!(W[I] > 0)) return false;
        for (int m = 0; m < t.rcnt[I]; ++m) t.rw[(size_t)I * MAX_CHILDREN + m] /= W[I];
    }
    moment_free(a, X, t);
    c = a;
    c.n = nc;
    c.x = X;
    c.w = W;
    c.h = a.h * n / nc;
    cubic_interpolation(a, c, t);
    return true;
}

// interp_tile_kernel's taps along one axis: fine node i's interpolation
// (coarse storage indices idx, weights wt; NW per node) fitted into a window
// of NT consecutive storage indices from s[i], inside the coarse interior or
// on a Dirichlet ghost (the wall value; no weight falls on other ghosts,
// though the kernel's tile may load them).  The windows must never move
// back, and (tile > 0) those of a tile of `tile` fine nodes must lie within
// `span` indices from the first one's start.
static bool window_taps(int n, int nc, int lo_bc, int hi_bc, const std::vector<int> &idx,
                        const std::vector<double> &wt, int NW, int NT, int tile, int span, std::vector<int> &s,
                        std::vector<double> &w)
{
    const int lo = lo_bc == PGPU_BC_DIRICHLET ? 0 : 1, hi = hi_bc == PGPU_BC_DIRICHLET ? nc + 1 : nc;
    s.assign(n, lo);
    w.assign((size_t)n * NT, 0.0);
    bool ok = hi - lo + 1 >= NT;
    for (int i = 0; i < n && ok; ++i) {
        int mn = INT32_MAX, mx = -1;
        for (int m = 0; m < NW; ++m)
            if (wt[(size_t)i * NW + m] != 0.0) {
                mn = std::min(mn, idx[(size_t)i * NW + m]);
                mx = std::max(mx, idx[(size_t)i * NW + m]);
            }
        if (mx < 0) mn = mx = lo; // no weight at all: any window
        // The lowest start that covers the taps and does not move back.
        const int st = std::max({lo, i > 0 ? s[i - 1] : lo, mx - NT + 1});
        if (st > mn || st > hi - NT + 1) { ok = false; break; }
        s[i] = st;
        for (int m = 0; m < NW; ++m)
            if (wt[(size_t)i * NW + m] != 0.0) w[(size_t)i * NT + idx[(size_t)i * NW + m] - st] += wt[(size_t)i * NW + m];
        if (tile > 0 && st - s[i - i % tile] + NT > span) ok = false;
    }
    if (!ok) {
        std::fill(s.begin(), s.end(), lo);
        std::fill(w.begin(), w.end(), 0.0);
    }
    return ok;
}

// beta_tile_kernel's PRO on windows s of n fine nodes (two taps each)
// along x (d 0), y (1) or z (2): along x and y each tile's taps inside its
// coarse tile (tiles of `width` nodes from -2 on, `step` apart; span coarse
// indices), along z windows that move by at most one a plane.
static bool bt_fold_fits(const std::vector<int> &s, int n, int d)
{
    typedef BetaTile<double> BT; // (the tiles' shapes do not depend on the precision)
    static_assert(BT::OX == BetaTile<float>::OX && BT::OY == BetaTile<float>::OY && BT::PCX == BetaTile<float>::PCX &&
                      BT::PCY == BetaTile<float>::PCY,
                  "one fit for both precisions");
    if (d == 2) {
        for (int i = 1; i < n; ++i)
            if (s[i] - s[i - 1] > 1) return false;
        return true;
    }
    const int step = d == 0 ? BT::OX : BT::OY, width = d == 0 ? 2 * BT_TX : BT::BY, span = d == 0 ? BT::PCX : BT::PCY;
    for (int b0 = -2; b0 < n; b0 += step) {
        const int lo = std::max(b0, 0), hi = std::min(b0 + width - 1, n - 1);
        if (s[hi] + 2 - s[lo] > span) return false;
    }
    return true;
}

// restrict_tile_kernel's conditions on an x or y transfer: at most 4 children
// per coarse node, each a contiguous run of fine nodes whose ends never move
// back, and the 4 fine nodes from each run's start inside the shared-memory
// tile (`span` fine nodes from the first child of the tile's first coarse
// node; tiles of `tile` coarse nodes).
static bool runs_forward(const AxisTransfer &t, int tile, int span)
{
    const int nc = (int)t.rcnt.size();
    auto first = [&](int I) { return t.ridx[(size_t)I * MAX_CHILDREN]; };
    auto last = [&](int I) { return t.ridx[(size_t)I * MAX_CHILDREN + t.rcnt[I] - 1]; };
    for (int I = 0; I < nc; ++I) {
        if (t.rcnt[I] < 1 || t.rcnt[I] > 4) return false;
        for (int m = 1; m < t.rcnt[I]; ++m)
            if (t.ridx[(size_t)I * MAX_CHILDREN + m] != first(I) + m) return false;
        if (I > 0 && (first(I) < first(I - 1) || last(I) < last(I - 1))) return false;
    }
    for (int I = 0; I < nc; ++I) // all 4 read slots of every coarse node inside its tile
        if (first(I) - first(I - I % tile) + 4 > span) return false;
    return true;
}

// The z side: per fine plane, the coarse planes whose children include it --
// at most two, consecutive, never moving back (t0: the first, w0 / w1 the
// weights there and in t0 + 1).  False where that does not hold.
static bool plane_owners(const AxisTransfer &t, const std::vector<double> &rw, int nf, std::vector<int> &t0,
                         std::vector<double> &w0, std::vector<double> &w1)
{
    // Entry kf + 1 for fine plane kf = -1 .. nf: a slab's children include
    // the ghost planes across its faces (dist.h); elsewhere 0 and nf + 1
    // stay unused.
    const int nc = (int)t.rcnt.size();
    t0.assign(nf + 2, -1);
    w0.assign(nf + 2, 0.0);
    w1.assign(nf + 2, 0.0);
    bool ok = true;
    for (int K = 0; K < nc && ok; ++K) {
        ok = t.rcnt[K] > 0; // (a row of another rank's node, dist.h: the tiles need every row)
        for (int m = 0; m < t.rcnt[K] && ok; ++m) {
            const int kf = t.ridx[(size_t)K * MAX_CHILDREN + m], e = kf + 1;
            if (kf < -1 || kf > nf) { ok = false; break; }
            if (m > 0 && kf != t.ridx[(size_t)K * MAX_CHILDREN] + m) ok = false;
            const double w = rw[(size_t)K * MAX_CHILDREN + m];
            if (t0[e] < 0) { t0[e] = K; w0[e] = w; }
            else if (K == t0[e] + 1 && w1[e] == 0.0) w1[e] = w;
            else ok = false;
        }
    }
    for (int e = 0, last = -1; e < nf + 2 && ok; ++e) {
        if (t0[e] < 0) { // only a ghost plane may have no parent
            ok = e == 0 || e == nf + 1;
            continue;
        }
        ok = t0[e] >= last;
        last = t0[e];
    }
    if (!ok) std::fill(t0.begin(), t0.end(), 0);
    return ok;
}


// ---- device tables ----
// Restriction rows per axis (see AxisTransfer): rcnt[I], ridx / rw[I *
// MAX_CHILDREN + m]; tz0 / wz0 / wz1: per fine plane, the first coarse plane
// it restricts to and its weights there and in the next one (tiles only).
template <class T> struct Xfer {
    const int *cntx, *cnty, *cntz, *idxx, *idxy, *idxz;
    const T *rwx, *rwy, *rwz;
    const int *tz0;
    const T *wz0, *wz1;
};
// Interpolation taps per axis: tap a of fine node i is coarse storage index
// i?[i * NW + a] with weight w?[i * NW + a] (NW = 2: trilinear, 4: tricubic).
template <class T> struct Taps {
    const int *ix, *iy, *iz;
    const T *wx, *wy, *wz;
};
// The same fitted into windows for the tiles: tap a of fine node i is coarse
// storage index s?[i] + a with weight w?[i * NT + a] (window_taps).
template <class T> struct Windows {
    const int *sx, *sy, *sz;
    const T *wx, *wy, *wz;
};

template <class T> __host__ __device__ __forceinline__ int64_t ghost_origin(const Grid<T> &g)
{
    return g.base - 1 - g.sy - (g.is3d ? g.sz : 0); // storage of (-1, -1, -1)
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 17 "src/poisson_gpu.cu"
#endif
// restrict.h -- restriction of residuals (direct and through shared memory)
#ifdef PGPU_SRC_LINES
#line 2 "src/restrict.h"
#endif



namespace pgpu {

// The x/y children of coarse column (I, J): indices, row offsets, weights
// (unused slots weight 0), in registers for the column's planes.
template <class T> struct RsColumn {
    int cx, cy;
    int ix[MAX_CHILDREN];
    int64_t oy[MAX_CHILDREN];
    T wx[MAX_CHILDREN], wy[MAX_CHILDREN];
};
template <class T> __device__ __forceinline__ RsColumn<T> rs_column(const Xfer<T> &x, int64_t fsy, int I, int J)
{
    RsColumn<T> c;
    c.cx = __ldg(x.cntx + I);
    c.cy = __ldg(x.cnty + J);
#pragma unroll
    for (int a = 0; a < MAX_CHILDREN; ++a) {
        c.ix[a] = a < c.cx ? __ldg(x.idxx + I * MAX_CHILDREN + a) : 0;
        c.wx[a] = a < c.cx ? __ldg(x.rwx + I * MAX_CHILDREN + a) : T(0);
        c.oy[a] = a < c.cy ? (int64_t)__ldg(x.idxy + J * MAX_CHILDREN + a) * fsy : 0;
        c.wy[a] = a < c.cy ? __ldg(x.rwy + J * MAX_CHILDREN + a) : T(0);
    }
    return c;
}
// (R (r - shift)) at coarse plane K of the column.
template <class T>
__device__ __forceinline__ T rs_point(const RsColumn<T> &c, const Grid<T> &fine, const Xfer<T> &x, const T *r, int K,
                                      Shift<T> shift)
{
    const int cz = fine.is3d ? __ldg(x.cntz + K) : 1;
    T acc = T(0);
    for (int q = 0; q < cz; ++q) {
        const int kf = fine.is3d ? __ldg(x.idxz + K * MAX_CHILDREN + q) : 0;
        const T wz = fine.is3d ? __ldg(x.rwz + K * MAX_CHILDREN + q) : T(1);
        const T *plane = r + fine.base + (int64_t)kf * fine.sz;
        T accy = T(0);
#pragma unroll
        for (int b = 0; b < MAX_CHILDREN; ++b) {
            if (b >= c.cy) break;
            const T *row = plane + c.oy[b];
            T accx = T(0);
#pragma unroll
            for (int a = 0; a < MAX_CHILDREN; ++a)
                if (a < c.cx) accx = rs_add(accx, c.wx[a], shift.of(row[c.ix[a]]));
            accy = rs_add(accy, c.wy[b], accx);
        }
        acc = rs_add(acc, wz, accy);
    }
    return acc;
}

// fc = R (r - shift) on the coarse interior, r in the fine layout (shiftp
// may be NULL; FMG restricts f minus the mean of a singular problem).  A walk
// launch on the coarse grid: every load of r is independent of the others.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    restrict_kernel(const Grid<T> fine, const Grid<T> coarse, const Xfer<T> x, const T *__restrict__ r,
                    const T *__restrict__ shiftp, T *__restrict__ fc, int kchunk, int nyb, int nchunks)
{
    int I, J, k0, k1;
    if (!walk_thread(coarse.nx, coarse.ny, coarse.nz, kchunk, nyb, nchunks, I, J, k0, k1)) return;
    const Shift<T> shift = load_shift(shiftp);
    const RsColumn<T> c = rs_column(x, fine.sy, I, J);
    for (int K = k0; K < k1; ++K) fc[at_point(coarse, I, J, K)] = rs_point(c, fine, x, r, K, shift);
}

// ---- restriction through shared memory ----
// Where the children of each coarse node are a contiguous run of fine nodes
// that moves forward with the node (vertex and cell-pair coarsening, identity
// axes; not periodic rings whose ends wrap, except tiny ones where the runs
// still move forward).  A block owns a RS_TX x RS_TY patch of coarse columns
// and a chunk of coarse planes; it walks the fine planes under the chunk, and
// each fine plane is read from memory once, as a tile of RS_SX x RS_SY values
// in a ring of RS_STAGES shared-memory tiles filled by cp.async, so the next
// RS_STAGES - 1 planes are in flight while one is summed.  Each thread sums
// its x-y children from the tile and adds the result to the (at most two)
// coarse planes the fine plane belongs to (x.tz0/wz0/wz1), storing a coarse
// plane once no later fine plane reaches it.  The direct kernel reads every
// fine value once per coarse parent: 64 loads per coarse point on even axes
// against about 9 here.
static_assert(RS_STAGES >= 2, "restrict_tile_kernel waits for all but RS_STAGES - 2 copy groups");
static_assert(RS_STAGES * RS_SX * RS_SY * sizeof(double) <= 48 * 1024, "restriction ring over 48 KB in double");

// A thread of a restriction block (restrict_tile_kernel,
// restrict_residual_kernel): its coarse column (I, J), the chunk's coarse
// planes [k0, k1), the block tile's first fine column and row, and its x-y
// children, a run of up to 4 from tile position (ix, iy); unused slots have
// weight 0 (the host checked that all 4 lie in the tile).
template <class T> struct RsThread {
    int I, J, k0, k1, fx0, fy0, ix, iy;
    bool own;
    T wx[4], wy[4];
    // The children's weighted sum of (v - shift) from a fine tile plane
    // (a uniform branch: the cycle's restrictions have no shift).
    __device__ __forceinline__ T sum(const T *tile, Shift<T> shift) const
    {
        T s = T(0);
        if (shift.hi == T(0) && shift.lo == T(0)) {
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const T *row = tile + (iy + b) * RS_SX + ix;
                T sx = T(0);
#pragma unroll
                for (int a = 0; a < 4; ++a) sx = rs_add(sx, wx[a], row[a]);
                s = rs_add(s, wy[b], sx);
            }
            return s;
        }
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            const T *row = tile + (iy + b) * RS_SX + ix;
            T sx = T(0);
#pragma unroll
            for (int a = 0; a < 4; ++a) sx = rs_add(sx, wx[a], shift.of(row[a]));
            s = rs_add(s, wy[b], sx);
        }
        return s;
    }
};

template <class T>
__device__ __forceinline__ RsThread<T> rs_thread(const Grid<T> &coarse, const Xfer<T> &x, int yb, int zc, int kchunk)
{
    RsThread<T> t;
    t.I = blockIdx.x * RS_TX + threadIdx.x;
    t.J = yb * RS_TY + threadIdx.y;
    t.k0 = zc * kchunk;
    t.k1 = min(t.k0 + kchunk, coarse.nz);
    t.fx0 = __ldg(x.idxx + blockIdx.x * RS_TX * MAX_CHILDREN);
    t.fy0 = __ldg(x.idxy + yb * RS_TY * MAX_CHILDREN);
    t.own = t.I < coarse.nx && t.J < coarse.ny;
    const int Ic = min(t.I, coarse.nx - 1), Jc = min(t.J, coarse.ny - 1);
    const int cx = __ldg(x.cntx + Ic), cy = __ldg(x.cnty + Jc);
    t.ix = __ldg(x.idxx + Ic * MAX_CHILDREN) - t.fx0;
    t.iy = __ldg(x.idxy + Jc * MAX_CHILDREN) - t.fy0;
#pragma unroll
    for (int a = 0; a < 4; ++a) {
        t.wx[a] = t.own && a < cx ? __ldg(x.rwx + Ic * MAX_CHILDREN + a) : T(0);
        t.wy[a] = t.own && a < cy ? __ldg(x.rwy + Jc * MAX_CHILDREN + a) : T(0);
    }
    return t;
}

// The coarse planes Kc and Kc + 1 a restriction thread is summing: fine
// plane kf's x-y sum s goes to the (at most two) coarse planes it belongs to
// (x.tz0/wz0/wz1), and a coarse plane goes to flush(K, value) once no later
// fine plane reaches it.
template <class T> struct RsPlanes {
    int Kc;
    T a0 = T(0), a1 = T(0);
    template <class F> __device__ __forceinline__ void add(const Xfer<T> &x, int kf, T s, F &&flush)
    {
        const int t = __ldg(x.tz0 + kf + 1); // (entry kf + 1: see plane_owners)
        const T w0 = __ldg(x.wz0 + kf + 1), w1 = __ldg(x.wz1 + kf + 1);
        while (Kc < t) { // plane Kc has all its children
            flush(Kc, a0);
            a0 = a1;
            a1 = T(0);
            ++Kc;
        }
        if (t == Kc) {
            a0 = rs_add(a0, w0, s);
            a1 = rs_add(a1, w1, s);
        } else { // t == Kc - 1: the first planes, shared with the chunk below
            a0 = rs_add(a0, w1, s);
        }
    }
    template <class F> __device__ __forceinline__ void finish(F &&flush)
    {
        flush(Kc, a0);
        flush(Kc + 1, a1);
    }
};

template <class T>
__global__ void __launch_bounds__(RS_TX *RS_TY, Tune<T>::rs_blocks)
    restrict_tile_kernel(const Grid<T> fine, const Grid<T> coarse, const Xfer<T> x, const T *__restrict__ r,
                         const T *__restrict__ shiftp, T *__restrict__ fc, int kchunk, int nyb, int nchunks)
{
    constexpr int NT = RS_TX * RS_TY, SLOTS = (RS_SX * RS_SY + NT - 1) / NT, ST = RS_STAGES;
    __shared__ __align__(16) T tile[ST][RS_SY * RS_SX]; // a ring of ST fine planes
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return; // uniform per block
    const int tid = threadIdx.x + RS_TX * threadIdx.y;
    const RsThread<T> th = rs_thread(coarse, x, yb, zc, kchunk);
    const int k0 = th.k0, k1 = th.k1, fx0 = th.fx0, fy0 = th.fy0;
    const Shift<T> shift = load_shift(shiftp);
    // Tile element e = tid + NT q sits at row e / RS_SX, column e % RS_SX;
    // its offset fits an int (checked on the host).  Elements outside the
    // plane (their offsets clamped, never used) are zeroed once here in every
    // slot and never copied to.
    int off[SLOTS];
    unsigned in = 0;
#pragma unroll
    for (int q = 0; q < SLOTS; ++q) {
        const int e = tid + NT * q, rr = e / RS_SX, cc = e - rr * RS_SX;
        off[q] = min(fy0 + rr, fine.ny - 1) * (int)fine.sy + min(fx0 + cc, fine.nx - 1); // in the plane
        if (e < RS_SX * RS_SY && fy0 + rr < fine.ny && fx0 + cc < fine.nx) in |= 1u << q;
        if (e < RS_SX * RS_SY && !((in >> q) & 1)) {
#pragma unroll
            for (int b = 0; b < ST; ++b) tile[b][e] = T(0);
        }
    }
    // Fine plane kf into ring slot b, copied asynchronously; every thread
    // commits one group per plane, copies or not.
    auto fetch = [&](int kf, int b) {
        const T *plane = r + fine.base + (int64_t)kf * fine.sz;
#pragma unroll
        for (int q = 0; q < SLOTS; ++q)
            if ((in >> q) & 1) __pipeline_memcpy_async(&tile[b][tid + NT * q], plane + off[q], sizeof(T));
        __pipeline_commit();
    };
    const int fz0 = __ldg(x.idxz + k0 * MAX_CHILDREN);
    const int fz1 = __ldg(x.idxz + (k1 - 1) * MAX_CHILDREN + __ldg(x.cntz + k1 - 1) - 1);
    auto flush = [&](int K, T v) {
        if (th.own && K >= k0 && K < k1) fc[coarse.base + th.I + (int64_t)th.J * coarse.sy + (int64_t)K * coarse.sz] = v;
    };
    RsPlanes<T> acc{k0};
    // Fine plane fz0 + p sits in slot p % ST.  Planes fz0 .. fz0 + ST - 2 are
    // requested here; at plane p the request for plane p + ST - 1 goes out,
    // so planes p + 1 .. p + ST - 1 are in flight while p is summed.
#pragma unroll
    for (int b = 0; b + 1 < ST; ++b) {
        if (fz0 + b <= fz1) fetch(fz0 + b, b);
        else __pipeline_commit();
    }
    int slot = 0;
    for (int kf = fz0; kf <= fz1; ++kf) {
        __pipeline_wait_prior(ST - 2); // this thread's copies of plane kf are done
        __syncthreads();               // everyone's are, and everyone is done with plane kf - 1
        {
            const int nb = slot == 0 ? ST - 1 : slot - 1; // plane kf - 1's slot takes plane kf + ST - 1
            if (kf + ST - 1 <= fz1) fetch(kf + ST - 1, nb);
            else __pipeline_commit();
        }
        const T s = th.sum(tile[slot], shift);
        slot = slot + 1 == ST ? 0 : slot + 1;
        acc.add(x, kf, s, flush);
    }
    __pipeline_wait_prior(0); // no copy outlives the block
    acc.finish(flush);
}

// The residual's restriction in one pass, double only (Tune::rr_fused): fc =
// R (f - shift - A u) without the fine residual in memory (the residual
// kernel and the restriction read u and f, write r and read it back: four
// words per fine point against two here).  Same blocks, children and z
// accumulation as restrict_tile_kernel; per fine plane the block computes the
// residual on its RS_SX x RS_SY tile into shared memory from rings of u
// planes (the tile and a one-point frame, ghosts included: the neighbours
// across a face are the ghosts, so no periodic axis) and of f planes, copied
// asynchronously.  Uniform 3D levels only (Grid::fast: the x / y couplings
// follow from a node's place on its axis).
constexpr int RR_UX = RS_SX + 2, RR_UY = RS_SY + 2, RR_UE = RR_UX * RR_UY, RR_FE = RS_SX * RS_SY;

// Dynamic shared memory of restrict_residual_kernel: the u and f rings, two
// residual planes, a word per thread.
template <class T> constexpr size_t rr_smem_bytes()
{
    return sizeof(T) * ((size_t)4 * RR_UE + (size_t)2 * RR_FE + 2 * (size_t)RR_FE) + sizeof(unsigned) * RS_TX * RS_TY;
}

template <class T>
__global__ void __launch_bounds__(RS_TX *RS_TY, 2)
    restrict_residual_kernel(const Grid<T> fine, const Grid<T> coarse, const Xfer<T> x, const T *__restrict__ u,
                             const T *__restrict__ f, const T *__restrict__ shiftp, T *__restrict__ fc, int kchunk,
                             int nyb, int nchunks)
{
    constexpr int NT = RS_TX * RS_TY, USL = (RR_UE + NT - 1) / NT, FSL = (RR_FE + NT - 1) / NT;
    constexpr int SU = 4, SF = 2; // ring slots
    extern __shared__ __align__(16) unsigned char rr_smem[];
    T *ut = (T *)rr_smem;        // [SU][RR_UE]: u planes, tile plus frame
    T *ft = ut + SU * RR_UE;     // [SF][RR_FE]: f planes
    T *rt = ft + SF * RR_FE;     // [2][RR_FE]: residual planes
    unsigned *ends_s = (unsigned *)(rt + 2 * RR_FE); // [NT]: see ends below
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return; // uniform per block
    const int tid = threadIdx.x + RS_TX * threadIdx.y;
    const RsThread<T> th = rs_thread(coarse, x, yb, zc, kchunk);
    const int k0 = th.k0, k1 = th.k1, fx0 = th.fx0, fy0 = th.fy0;
    const Shift<T> shift = load_shift(shiftp);
    // u tile element e = tid + NT q: row e / RR_UX, column e % RR_UX, at
    // storage (fx0 - 1 + column, fy0 - 1 + row), ghosts included; past the
    // storage it is zeroed once in every slot and never copied to.  f tile
    // elements as restrict_tile_kernel's, interior only.
    int uoff[USL], foff[FSL];
    unsigned uin = 0, fin = 0;
#pragma unroll
    for (int q = 0; q < USL; ++q) {
        const int e = tid + NT * q, rr = e / RR_UX, cc = e - rr * RR_UX;
        const int yy = fy0 - 1 + rr, xx = fx0 - 1 + cc;
        uoff[q] = min(yy, fine.ny) * (int)fine.sy + min(xx, fine.nx);
        if (e < RR_UE && yy <= fine.ny && xx <= fine.nx) uin |= 1u << q;
        if (e < RR_UE && !((uin >> q) & 1)) {
#pragma unroll
            for (int b = 0; b < SU; ++b) ut[b * RR_UE + e] = T(0);
        }
    }
#pragma unroll
    for (int q = 0; q < FSL; ++q) {
        const int e = tid + NT * q, rr = e / RS_SX, cc = e - rr * RS_SX;
        foff[q] = min(fy0 + rr, fine.ny - 1) * (int)fine.sy + min(fx0 + cc, fine.nx - 1);
        if (e < RR_FE && fy0 + rr < fine.ny && fx0 + cc < fine.nx) fin |= 1u << q;
        if (e < RR_FE && !((fin >> q) & 1)) {
#pragma unroll
            for (int b = 0; b < SF; ++b) ft[b * RR_FE + e] = T(0);
        }
    }
    const int fz0 = __ldg(x.idxz + k0 * MAX_CHILDREN);
    const int fz1 = __ldg(x.idxz + (k1 - 1) * MAX_CHILDREN + __ldg(x.cntz + k1 - 1) - 1);
    // Copy group g: u storage plane fz0 - 1 + g (up to fz1 + 1) into u slot
    // g % SU, and for g >= 2 f plane fz0 + g - 2 (up to fz1) into f slot
    // g % SF.  Every thread commits one group per g, copies or not.
    auto fetch = [&](int g) {
        const int pu = fz0 - 1 + g, pf = fz0 + g - 2;
        if (pu <= fz1 + 1) {
            const T *plane = u + fine.base + (int64_t)pu * fine.sz;
            T *slot = ut + (g % SU) * RR_UE + tid;
#pragma unroll
            for (int q = 0; q < USL; ++q)
                if ((uin >> q) & 1) __pipeline_memcpy_async(slot + NT * q, plane + uoff[q], sizeof(T));
        }
        if (pf >= fz0 && pf <= fz1) {
            const T *plane = f + fine.base + (int64_t)pf * fine.sz;
            T *slot = ft + (g % SF) * RR_FE + tid;
#pragma unroll
            for (int q = 0; q < FSL; ++q)
                if ((fin >> q) & 1) __pipeline_memcpy_async(slot + NT * q, plane + foff[q], sizeof(T));
        }
        __pipeline_commit();
    };
    auto flush = [&](int K, T v) {
        if (th.own && K >= k0 && K < k1) fc[coarse.base + th.I + (int64_t)th.J * coarse.sy + (int64_t)K * coarse.sz] = v;
    };
    RsPlanes<T> acc{k0};
#pragma unroll
    for (int g = 0; g < 3; ++g) fetch(g);
    // This thread's residual elements' u at planes kf - 1 and kf (the centre
    // at kf + 1 is read from the ring each plane).
    T zlo[FSL], zce[FSL];
    {
        unsigned ends = 0; // per element: first / last node along x, along y
#pragma unroll
        for (int q = 0; q < FSL; ++q) {
            const int e = min(tid + NT * q, RR_FE - 1), rr = e / RS_SX, xi = fx0 + e - rr * RS_SX, yi = fy0 + rr;
            ends |= (unsigned)(xi == 0) << (4 * q) | (unsigned)(xi == fine.nx - 1) << (4 * q + 1) |
                    (unsigned)(yi == 0) << (4 * q + 2) | (unsigned)(yi == fine.ny - 1) << (4 * q + 3);
        }
        ends_s[tid] = ends;
    }
    for (int it = 0, kf = fz0; kf <= fz1; ++it, ++kf) {
        __pipeline_wait_prior(0); // this thread's groups up to it + 2 are done
        __syncthreads();          // everyone's are, and everyone is done with plane kf - 1's residual
        fetch(it + 3);            // into the slots of groups it - 1 (u) and it + 1 (f)
        {
            const T *U1 = ut + ((it + 1) % SU) * RR_UE, *U2 = ut + ((it + 2) % SU) * RR_UE,
                    *F = ft + ((it + 2) % SF) * RR_FE;
            T *R = rt + (it & 1) * RR_FE;
            if (it == 0) {
                const T *U0 = ut;
#pragma unroll
                for (int q = 0; q < FSL; ++q) {
                    const int e = min(tid + NT * q, RR_FE - 1), rr = e / RS_SX, c = (rr + 1) * RR_UX + e - rr * RS_SX + 1;
                    zlo[q] = U0[c];
                    zce[q] = U1[c];
                }
            }
            const T vzl = kf > 0 ? __ldg(fine.czl + kf) : fine.gzl;
            const T vzh = kf < fine.nz - 1 ? __ldg(fine.czh + kf) : fine.gzh;
            const T dz = __ldg(fine.czl + kf) + __ldg(fine.czh + kf);
            // Read anew each plane: the couplings below are not kept in
            // registers across the loop (they did not fit).
            const unsigned ends = *(volatile unsigned *)(ends_s + tid);
#pragma unroll
            for (int q = 0; q < FSL; ++q) {
                const int e = min(tid + NT * q, RR_FE - 1);
                const int rr = e / RS_SX, cc = e - rr * RS_SX, c = (rr + 1) * RR_UX + cc + 1;
                // x / y couplings of the uniform form by the node's place
                T vxl, vxh, vyl, vyh, dxy;
                uniform_xy(fine, (ends >> (4 * q)) & 1, (ends >> (4 * q + 1)) & 1, (ends >> (4 * q + 2)) & 1,
                           (ends >> (4 * q + 3)) & 1, vxl, vxh, vyl, vyh, dxy);
                const T zh = U2[c];
                const T off = neighbours<T>(vxl, U1[c - 1], vxh, U1[c + 1], vyl, U1[c - RR_UX], vyh, U1[c + RR_UX], vzl,
                                         zlo[q], vzh, zh);
                const T res = point_res(shift.of(F[e]) + off, dxy + dz, zce[q]);
                if (tid + NT * q < RR_FE) R[e] = (fin >> q) & 1 ? res : T(0);
                zlo[q] = zce[q];
                zce[q] = zh;
            }
        }
        __syncthreads(); // the residual plane is complete
        acc.add(x, kf, th.sum(rt + (it & 1) * RR_FE, Shift<T>{}), flush);
    }
    __pipeline_wait_prior(0); // no copy outlives the block
    acc.finish(flush);
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 18 "src/poisson_gpu.cu"
#endif
// odi.h -- operator-dependent coarsening where beta jumps: Galerkin coarse levels and their transfers
#ifdef PGPU_SRC_LINES
#line 2 "src/odi.h"
#endif


namespace pgpu {

// Where beta jumps, the geometric transfers treat an inclusion and its
// surroundings as one medium: the linear prolongation puts half of an
// outside coarse value onto an inside fine point that the operator couples
// a thousand times more strongly to the inside, and no 7-point coarse
// coefficient (face means, or faces in series along the path) then prices
// the inclusion's near-constant mode right: V-cycles stalled at 0.95-0.99 a
// cycle on a ball of 1e3 or 1e6.  So each level the transfers reach here
// (Transfer::odi, Hierarchy::general_apply's rule: beta jumps, no
// periodic axis, one GPU, every coarsened axis keeping nodes) is a
// Galerkin level: its operator is R A P of the level above, 27 entries a
// node (9 in 2D: GalRows; with a mask, of the level's operator on its
// fluid points: odi_held), and
//  - P follows the level above's rows (BoxMG: Dendy; de Zeeuw), in stages
//    by the axes along which a fine node lies between two coarse nodes
//    (odi_stage): a coarse node takes its value; a node of a higher stage
//    collapses its row onto those between-axes (an entry counts towards
//    the node at its offset with the other components set to 0) and takes
//    the collapsed couplings' positive parts, over their sum plus the row's
//    sum, as weights on its lower-stage neighbours (odi_collapse);
//  - R = Wc^-1 P^T W, its adjoint weighted by the cell volumes, so that
//    R A P is symmetric in Wc and the cycle stays a CG preconditioner;
//  - from level 0 P and R run those stages on its 7-point rows, one pass
//    each (odi_p_kernel, odi_r_kernel); from a Galerkin level they read
//    P's weights, which the build stores (odi_pw_kernel, odi_rw_kernel: not
//    a row of 27 entries read and collapsed per node and stage);
//  - the Galerkin levels are smoothed by Gauss-Seidel in 8 colours (4 in
//    2D: a 27-point row couples no two nodes of one colour) and their
//    residuals formed in differences (GalRows);
//  - pgpu_set_coefficients builds them level by level: P's weights, once
//    a node (gal_weights_kernel), the entries off the centre from them
//    (gal_rap_kernel), the rows' sums as R A P 1 formed in differences
//    from P 1 = 1 - delta (gal_sums_kernel: 0 exactly where no wall
//    reaches).
// The finest level keeps its own 7-point form and smoothers; P and R read
// its faces directly.  Convergence no longer depends on the jump's size
// (1e3 to 1e6: the bench's 'ball' rows); what stops V-cycles and CG on
// large jumps is the residual u's own rounding leaves, which grows with the
// jump (doc/model/floor.py; the header's MASKS AND VARIABLE COEFFICIENTS).

// Per axis of a level pair: cn[i] the coarse interior index of fine node i
// where it is a coarse node, else -1 (cf: the inverse); wf / wc the fine and coarse cell
// widths (the restriction's weights).
template <class T> struct OdiAxes {
    const int *cn[3];
    const int *cf[3]; // coarse node I's fine index
    const T *wf[3], *wc[3];
};

// One axis of a level pair (fine a, coarse c; coarsened or kept whole):
// cn[i] as OdiAxes::cn, and whether the pair keeps nodes along it -- every
// coarse node on a fine one, every other fine node between two of them or
// a wall, no periodic wrap (an axis kept whole keeps them all), on an
// axis whose places for P's weights (odi_pw_at: up to 2 n) fit an int.
static bool odi_node_map(const Axis &a, const Axis &c, bool coarsened, std::vector<int> &cn)
{
    const int n = a.n;
    cn.assign((size_t)n, -1);
    if (!coarsened || !a.active) {
        for (int i = 0; i < n && i < c.n; ++i) cn[(size_t)i] = i;
        return c.n == n && n <= INT32_MAX / 2;
    }
    if (a.lo == PGPU_BC_PERIODIC || n > INT32_MAX / 2) return false;
    const double tol = 1e-9 * a.h;
    for (int i = 0, I = 0; i < n; ++i) {
        while (I < c.n && c.x[(size_t)I] < a.x[(size_t)i] - tol) ++I;
        if (I < c.n && std::fabs(c.x[(size_t)I] - a.x[(size_t)i]) <= tol) cn[(size_t)i] = I;
    }
    int seen = 0;
    for (int i = 0; i < n; ++i) {
        seen += cn[(size_t)i] >= 0;
        if (cn[(size_t)i] < 0 && !((i == 0 || cn[(size_t)i - 1] >= 0) && (i == n - 1 || cn[(size_t)i + 1] >= 0)))
            return false;
    }
    return seen == c.n;
}

// The highest stage: the axes a node may lie between coarse nodes along.
template <class T> __host__ __device__ __forceinline__ int odi_top(const Grid<T> &g) { return g.is3d ? 3 : 2; }

// Node (i, j, k)'s coarse indices c (where it is a coarse node along an
// axis) and its stage: the axes along which it lies between coarse nodes.
template <class T>
__device__ __forceinline__ int odi_stage(const OdiAxes<T> &a, bool is3d, int i, int j, int k, int (&c)[3])
{
    c[0] = __ldg(a.cn[0] + i);
    c[1] = __ldg(a.cn[1] + j);
    c[2] = is3d ? __ldg(a.cn[2] + k) : 0;
    return (c[0] < 0) + (c[1] < 0) + (c[2] < 0);
}

// Coarse node I's block along axis d: its fine nodes x[m] and their offsets
// o[m] from its own (-1, 0, 1), m < the count returned.
template <class T>
__device__ __forceinline__ int odi_block_axis(const OdiAxes<T> &a, int d, int n, int I, int (&x)[3], int (&o)[3])
{
    const int f = __ldg(a.cf[d] + I);
    int m = 0;
#pragma unroll
    for (int s = -1; s <= 1; ++s) {
        const int y = f + s;
        if (s == 0 || (y >= 0 && y < n && __ldg(a.cn[d] + y) < 0)) {
            x[m] = y;
            o[m] = s;
            ++m;
        }
    }
    return m;
}

// A level's operator as the transfers and the Galerkin build read it: the
// 27 slot arrays of a Galerkin level (st, slot s at st + s n, node (i, j,
// k) at gal_index: the entry towards the node at offset gal_offset(s), 0
// where that lies outside the box), or, where st is NULL, the level's
// 7-point general form (gen_couplings), its couplings to nodes inside the
// box as the entries.
// The centre slot holds the row's sum, not the diagonal: A u at p is
//   rsum u_p + sum_{s != centre} a_s (u_{p+s} - u_p),
// whose terms stay small where u is nearly constant across strong
// couplings (inside an inclusion of beta 1e6 a diagonal and its
// neighbours' sum cancel to a few digits); P, R and the build take the
// same differences.  Ghost values never enter (corrections are 0 there).
constexpr int GAL_SLOTS = 27, GAL_CENTRE = 13;
// Where a node's entry lies in a slot array: the nodes by colour (their
// index parities, gal_colour_kernel's), each colour's x fastest, so that a
// colour pass reads its rows contiguously.
struct GalPack {
    int64_t off[8]; // each colour's first index
    int hx[8], hy[8]; // its extents along x and y
};
__host__ __device__ __forceinline__ int64_t gal_index(const GalPack &q, int i, int j, int k)
{
    const int c = (i & 1) | (j & 1) << 1 | (k & 1) << 2;
    return q.off[c] + ((int64_t)(k >> 1) * q.hy[c] + (j >> 1)) * q.hx[c] + (i >> 1);
}
// A colour's extents: its nodes along each axis (nz 1 in 2D: colours with
// the z bit are empty there).
__host__ __device__ __forceinline__ void gal_colour_extent(int nx, int ny, int nz, int colour, int (&h)[3])
{
    h[0] = (nx - (colour & 1) + 1) / 2;
    h[1] = (ny - (colour >> 1 & 1) + 1) / 2;
    h[2] = (nz - (colour >> 2 & 1) + 1) / 2;
}
static GalPack gal_pack(int nx, int ny, int nz)
{
    GalPack q{};
    int64_t at = 0;
    for (int c = 0; c < 8; ++c) {
        int h[3];
        gal_colour_extent(nx, ny, nz, c, h);
        q.hx[c] = h[0];
        q.hy[c] = h[1];
        q.off[c] = at;
        at += (int64_t)h[0] * h[1] * h[2];
    }
    return q;
}
template <class T> struct GalRows {
    const T *st = nullptr;
    int64_t n = 0; // a slot's length: the level's interior points
    int lo = 0;    // the first slot stored: 0, or in 2D 9 (the nine slots of offset 0 along z)
    GalPack pk{};
    __device__ __forceinline__ T at(int s, int i, int j, int k) const
    {
        return st[(s - lo) * n + gal_index(pk, i, j, k)];
    }
};
// The slots a Galerkin level stores (2D: the nine of offset 0 along z).
__host__ __device__ __forceinline__ int gal_stored(bool is3d) { return is3d ? 27 : 9; }
__host__ __device__ __forceinline__ int gal_slot(int dx, int dy, int dz) { return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1); }
__host__ __device__ __forceinline__ void gal_offset(int s, int (&o)[3])
{
    o[0] = s % 3 - 1;
    o[1] = s / 3 % 3 - 1;
    o[2] = s / 9 - 1;
}

// A 7-point level with a mask as its transfers and the Galerkin build see
// it: the operator on the fluid points alone.  A point that is not fluid
// has no row, and P is 0 there (its correction is 0: a Dirichlet point's
// value is held, a solid point is no part of the domain); a face towards
// one is a wall, its coupling in the row's sum (a Dirichlet point's; a
// face towards a solid point is closed: 0).  Bit f (GenPoint's order) of
// odi_held: the neighbour across face f lies inside the box and is not
// fluid, looked for along the axes of `axes` (bit d).
template <class T>
__device__ __forceinline__ unsigned odi_held(const Grid<T> &g, int64_t p, int i, int j, int k, unsigned axes)
{
    if (!g.mk) return 0u;
    const int at[3] = {i, j, k}, n[3] = {g.nx, g.ny, g.nz};
    const int64_t st[3] = {1, g.sy, g.sz};
    unsigned h = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        if (!(axes >> d & 1u) || (d == 2 && !g.is3d)) continue;
        if (at[d] > 0 && !gen_fluid(g, p - st[d])) h |= 1u << 2 * d;
        if (at[d] < n[d] - 1 && !gen_fluid(g, p + st[d])) h |= 2u << 2 * d;
    }
    return h;
}

// Node p's row (i, j, k its indices): a[s] the entry towards slot s, the
// row's sum in the centre (the 7-point form's: its walls' couplings, the
// box's and, with a mask, odi_held's; none on a point that is not fluid).
template <class T>
__device__ __forceinline__ void gal_row(const Grid<T> &g, const GalRows<T> &r, int64_t p, int i, int j, int k,
                                        double (&a)[GAL_SLOTS])
{
    if (r.st) {
#pragma unroll
        for (int s = 0; s < GAL_SLOTS; ++s) a[s] = r.lo == 0 || (s >= 9 && s < 18) ? (double)r.at(s, i, j, k) : 0.0;
        return;
    }
#pragma unroll
    for (int s = 0; s < GAL_SLOTS; ++s) a[s] = 0;
    if (!gen_fluid(g, p)) return;
    const GenPoint<T> q = gen_couplings(g, p, i, j, k);
    const unsigned held = odi_held(g, p, i, j, k, 7u);
    const int at[3] = {i, j, k}, n[3] = {g.nx, g.ny, g.nz};
    double wall = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d)
#pragma unroll
        for (int side = 0; side < 2; ++side) {
            if (d == 2 && !g.is3d) continue;
            const int f = 2 * d + side;
            if ((side ? at[d] < n[d] - 1 : at[d] > 0) && !(held >> f & 1u))
                a[gal_slot(d == 0 ? 2 * side - 1 : 0, d == 1 ? 2 * side - 1 : 0, d == 2 ? 2 * side - 1 : 0)] =
                    -(double)q.v[f];
            else wall += (double)q.d[f];
        }
    a[GAL_CENTRE] = wall;
}

// A row's diagonal from its sum and off-diagonal entries.
__device__ __forceinline__ double gal_diag(const double (&a)[GAL_SLOTS])
{
    double d = a[GAL_CENTRE];
#pragma unroll
    for (int s = 0; s < GAL_SLOTS; ++s)
        if (s != GAL_CENTRE) d -= a[s];
    return d;
}

// The element offset of slot s on grid g.
template <class T> __device__ __forceinline__ int64_t gal_step(const Grid<T> &g, int s)
{
    int o[3];
    gal_offset(s, o);
    return o[0] + (int64_t)o[1] * g.sy + (int64_t)o[2] * g.sz;
}

// A node's collapsed couplings (odi_collapse; c: its coarse indices,
// odi_stage's): w[t] for each slot t with t's components on the node's
// coarse axes 0, the sum of -a over the entries whose offsets agree with t
// on its between-axes (odi_group, for one set CM of coarse axes).  P and R
// take the positive ones alone (a Galerkin row's positive entries would
// otherwise make weights of either sign and divisors near 0); the divisor
// is the row's sum (where positive) plus those.
template <int CM> __device__ __forceinline__ void odi_group(const double (&a)[GAL_SLOTS], double (&w)[GAL_SLOTS])
{
#pragma unroll
    for (int t = 0; t < GAL_SLOTS; ++t) w[t] = 0;
#pragma unroll
    for (int q = 0; q < GAL_SLOTS; ++q) {
        int o[3];
        gal_offset(q, o);
        const int to = gal_slot(CM & 1 ? 0 : o[0], CM & 2 ? 0 : o[1], CM & 4 ? 0 : o[2]);
        if (q != GAL_CENTRE && to != GAL_CENTRE) w[to] -= a[q];
    }
}
__device__ __forceinline__ double odi_collapse(const double (&a)[GAL_SLOTS], const int (&c)[3],
                                               double (&w)[GAL_SLOTS])
{
    // (by the node's coarse axes, known at compile time in each case: w
    // stays in registers)
    switch ((c[0] >= 0 ? 1 : 0) | (c[1] >= 0 ? 2 : 0) | (c[2] >= 0 ? 4 : 0)) {
    case 0: odi_group<0>(a, w); break;
    case 1: odi_group<1>(a, w); break;
    case 2: odi_group<2>(a, w); break;
    case 3: odi_group<3>(a, w); break;
    case 4: odi_group<4>(a, w); break;
    case 5: odi_group<5>(a, w); break;
    case 6: odi_group<6>(a, w); break;
    default: odi_group<7>(a, w); break;
    }
    double den = a[GAL_CENTRE] > 0 ? a[GAL_CENTRE] : 0.0;
#pragma unroll
    for (int t = 0; t < GAL_SLOTS; ++t) den += w[t] > 0 ? w[t] : 0.0;
    return den;
}

// The prolongation P, in stages (odi_stage): a node of stage 0 takes its
// coarse node's value; a node of a higher stage, whose between-axes are B,
// collapses its row onto B (BoxMG's rule): each entry counts towards the
// node at its offset with the components off B set to 0 -- a neighbour of
// a lower stage, or the node itself --
//   s_p = sum_{d != 0} w_d s_{p+d} / den_p,  w_d the sum of -a over the
//   entries that collapse onto d, where positive; den_p = the row's sum
//   (where positive) + the sum of the w_d (no cancellation),
// a neighbour beyond the box counting 0 (a Dirichlet wall: its coupling
// stays in den; a Neumann wall's is 0).  On a 7-point level this is the
// fine couplings along B over their sum, Dirichlet walls included.
// A 7-point level's divisor for a node of between-axes B (c): its
// couplings along B and its walls' (odi_collapse of gal_row, directly;
// held: odi_held's bits along the other axes).
// walls: the part of it from the walls along the other axes.
template <class T> __device__ __forceinline__ double odi_den7(const GenPoint<T> &q, const int (&c)[3], const int (&at)[3],
                                                               const int (&n)[3], unsigned held, double &walls)
{
    double s = 0;
    walls = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        if (c[d] < 0) {
            s += (double)q.d[2 * d] + (double)q.d[2 * d + 1];
        } else {
            const double w = (at[d] > 0 && !(held >> 2 * d & 1u) ? 0.0 : (double)q.d[2 * d]) +
                             (at[d] < n[d] - 1 && !(held >> (2 * d + 1) & 1u) ? 0.0 : (double)q.d[2 * d + 1]);
            s += w;
            walls += w;
        }
    }
    return s;
}

// A Galerkin level's P as stored weights: node x's weight towards the
// coarse node at its corner q (bit d set: the one above it along axis d,
// clear: below it, or its own index where it is a coarse node there),
// packed: along an axis a node the pair keeps as a coarse node takes one
// place and a node between two takes two (its corners below and above),
// so that the weight lies at e_0 + N_0 (e_1 + N_1 e_2), e_d = x_d's first
// place + q_d = 2 x_d - (the coarse nodes below x_d) + q_d, N_d = 2 n_d -
// (the coarse nodes along d): 3.4 values a point in 3D (2.25 in 2D), each
// point's 2^stage places and no more.  gal_weights_kernel stores them.
__host__ __device__ __forceinline__ int odi_corners(bool is3d) { return is3d ? 8 : 4; }
template <class T> __host__ __device__ __forceinline__ int64_t odi_pw_at(const Grid<T> &f, const Grid<T> &c, const int (&e)[3])
{
    return e[0] + (2 * (int64_t)f.nx - c.nx) * (e[1] + (2 * (int64_t)f.ny - c.ny) * e[2]);
}
template <class T> static int64_t odi_pw_count(const Grid<T> &f, const Grid<T> &c)
{
    return (2 * (int64_t)f.nx - c.nx) * (2 * (int64_t)f.ny - c.ny) * (f.is3d ? 2 * (int64_t)f.nz - c.nz : 1);
}
// Node x's first place along an axis (cx: its coarse index there, or -1;
// below: the coarse index of the node below a node between two, -1 at the
// wall), and along axis d of a pair.
__host__ __device__ __forceinline__ int odi_first_place(int x, int cx, int below)
{
    return 2 * x - (cx >= 0 ? cx : below + 1);
}
template <class T> __device__ __forceinline__ int odi_place(const OdiAxes<T> &a, int d, int x, int cx)
{
    return odi_first_place(x, cx, cx >= 0 || x == 0 ? -1 : __ldg(a.cn[d] + x - 1));
}
// The place of the fine node at offset o (-1, 0, 1) from coarse node J's
// own along an axis, its corner towards J included.
__host__ __device__ __forceinline__ int odi_place_of(int fJ, int J, int o) { return 2 * (fJ + o) - J - (o > 0) + (o < 0); }

// out = in + P e (in NULL: out = P e) from the stored weights, a node's
// corners summed in double in corner order; REDUCE measures the correction
// as interp_kernel's does.  A walk launch over the fine level.
template <class T, bool REDUCE>
__global__ void __launch_bounds__(WALK_THREADS)
    odi_pw_kernel(const Grid<T> fine, const Grid<T> coarse, const OdiAxes<T> a, const T *__restrict__ pw,
                  const T *__restrict__ e, const T *in, T *out, double *partials, int kchunk, int nyb, int nchunks)
{
    Red3 acc{0, 0, 0};
    int i, j, k0, k1;
    if (walk_thread(fine.nx, fine.ny, fine.nz, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const int n[3] = {fine.nx, fine.ny, fine.nz};
        for (int k = k0; k < k1; ++k) {
            int c[3];
            odi_stage(a, fine.is3d, i, j, k, c);
            const int at[3] = {i, j, k};
            int pl[3]; // its places (odi_pw_at)
#pragma unroll
            for (int d = 0; d < 3; ++d) pl[d] = odi_place(a, d, at[d], c[d]);
            double s = 0;
            for (int q = 0; q < odi_corners(fine.is3d != 0); ++q) {
                int J[3];
                bool ok = true;
#pragma unroll
                for (int d = 0; d < 3; ++d) {
                    const int up = q >> d & 1;
                    if (c[d] >= 0) {
                        J[d] = c[d];
                        ok = ok && !up;
                    } else {
                        const int x = at[d] + (up ? 1 : -1);
                        ok = ok && x >= 0 && x < n[d];
                        J[d] = ok ? __ldg(a.cn[d] + x) : 0;
                    }
                }
                if (!ok) continue;
                const int eq[3] = {pl[0] + (q & 1), pl[1] + (q >> 1 & 1), pl[2] + (q >> 2 & 1)};
                s += (double)pw[odi_pw_at(fine, coarse, eq)] *
                     (double)e[coarse.base + J[0] + (int64_t)J[1] * coarse.sy + (int64_t)J[2] * coarse.sz];
            }
            const int64_t p = fine.base + i + (int64_t)j * fine.sy + (int64_t)k * fine.sz;
            const T v = T(s);
            if (!in) {
                out[p] = v;
                continue;
            }
            const T old = in[p];
            out[p] = old + v;
            if (REDUCE) note_correction(acc, v, old + v);
        }
    }
    if (REDUCE) write_partial(partials, acc);
}

// fc = R r = Wc^-1 P^T W r from the stored weights: each coarse node sums
// W r P over its block (odi_block_axis), in double.  A walk launch over the
// coarse level.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    odi_rw_kernel(const Grid<T> fine, const Grid<T> coarse, const OdiAxes<T> a, const T *__restrict__ pw,
                  const T *__restrict__ r, T *fc, int kchunk, int nyb, int nchunks)
{
    int I, J, k0, k1;
    if (!walk_thread(coarse.nx, coarse.ny, coarse.nz, kchunk, nyb, nchunks, I, J, k0, k1)) return;
    const bool is3d = fine.is3d != 0;
    const int nf[3] = {fine.nx, fine.ny, is3d ? fine.nz : 1};
    for (int K = k0; K < k1; ++K) {
        const int C[3] = {I, J, K};
        int x[3][3], o[3][3], m[3];
        for (int d = 0; d < 3; ++d) {
            if (d == 2 && !is3d) {
                x[2][0] = o[2][0] = 0;
                m[2] = 1;
                continue;
            }
            m[d] = odi_block_axis(a, d, nf[d], C[d], x[d], o[d]);
        }
        double sum = 0;
        for (int cz = 0; cz < m[2]; ++cz)
            for (int cy = 0; cy < m[1]; ++cy)
                for (int cx = 0; cx < m[0]; ++cx) {
                    const int i = x[0][cx], j = x[1][cy], k = x[2][cz];
                    // the fine node's place, its corner towards C
                    const int eq[3] = {odi_place_of(i - o[0][cx], I, o[0][cx]), odi_place_of(j - o[1][cy], J, o[1][cy]),
                                       odi_place_of(k - o[2][cz], K, o[2][cz])};
                    double w = (double)__ldg(a.wf[0] + i) * (double)__ldg(a.wf[1] + j);
                    if (is3d) w *= (double)__ldg(a.wf[2] + k);
                    sum += w * (double)pw[odi_pw_at(fine, coarse, eq)] *
                           (double)r[fine.base + i + (int64_t)j * fine.sy + (int64_t)k * fine.sz];
                }
        double wc = (double)__ldg(a.wc[0] + I) * (double)__ldg(a.wc[1] + J);
        if (is3d) wc *= (double)__ldg(a.wc[2] + K);
        fc[coarse.base + I + (int64_t)J * coarse.sy + (int64_t)K * coarse.sz] = T(sum / wc);
    }
}

// The coupling of a node across one face of axis d, as gen_couplings forms
// it inside the box: the table's (low or high, at node index at) times the
// face's fraction (element e: the face's high node; odi_face_fr: the
// fraction given).
template <class T> __device__ __forceinline__ double odi_face(const Grid<T> &g, int d, int64_t e, int at, bool high)
{
    const T *tab = d == 0 ? (high ? g.cxh : g.cxl) : d == 1 ? (high ? g.cyh : g.cyl) : (high ? g.czh : g.czl);
    const T *fr = d == 0 ? g.fx : d == 1 ? g.fy : g.fz;
    return (double)(T)(tab[at] * (fr ? fr[e] : T(1)));
}
template <class T> __device__ __forceinline__ double odi_face_fr(const Grid<T> &g, int d, int at, bool high, T fr)
{
    const T *tab = d == 0 ? (high ? g.cxh : g.cxl) : d == 1 ? (high ? g.cyh : g.cyl) : (high ? g.czh : g.czl);
    return (double)(T)(tab[at] * fr);
}

// Level 0's transfers, one pass each (odi_p_kernel, odi_r_kernel), with
// the stages' values in the stages' order:
//  - a block of ODI_TX x ODI_TY threads takes a column each and walks a
//    chunk of planes; its outer ring of columns only supplies the inner
//    ones' neighbours (what an inner column needs never reads past the
//    ring: a neighbour P reads along a node's between-axis is a coarse
//    node there, which reads none along it; R the other way round);
//  - in a plane the nodes run in phases by how many of x and y they lie
//    between coarse nodes along (P: none, one, both; R the other way),
//    passing values through shared memory;
//  - along z a column's values on the planes either side wait in
//    registers: P takes a plane between coarse planes after both, R a
//    coarse plane after the between planes either side.  The block's
//    order of planes (odi_order) is a list in shared memory, so that each
//    plane's loads issue while the plane before runs its phases (behind a
//    barrier each, a phase's own loads would wait a memory latency
//    apiece).
// (A launch per stage would walk the whole level once a stage.)
constexpr int ODI_TX = 32, ODI_TY = 16; // (odi_col's order of threads needs these)
constexpr int ODI_KMAX = 64; // the most planes a block's chunk takes (its list: two more)
constexpr int ODI_PER_SM = 4; // (col_launch's per_sm: blocks of 512 threads)
// A plane's place in the order: how its z neighbours' values come from
// the registers lo and hi (the last two results of the other kind of
// plane: P coarse planes, R between planes), and whether it is written.
enum OdiStep {
    ODI_OTHER = 0, // P: a coarse plane, R: a between plane (lo = hi, hi = its result)
    ODI_PAIR = 1,  // below lo, above hi
    ODI_ONE = 2,   // below hi, nothing above
    ODI_WRITE = 4
};
static ColLaunch odi_launch(int nx, int ny, int nz, bool is3d, int sms)
{
    ColLaunch L = col_launch(nx, ny, nz, is3d, ODI_TX - 2, ODI_TY - 2, ODI_TX, ODI_TY, sms, ODI_PER_SM);
    if (L.kchunk > ODI_KMAX) {
        L.kchunk = ODI_KMAX;
        L.nchunks = (nz + ODI_KMAX - 1) / ODI_KMAX;
        set_grid(L, L.grid.x);
    }
    return L;
}

// A thread's column: its indices, its coarse indices along x and y (-1:
// between coarse nodes), inside the box, owned (inner: written), and
// whether its neighbours along x and y (below, above) lie inside and
// between coarse nodes along that axis.
struct OdiCol {
    int i, j, c0, c1, tx, ty;
    bool in, own, xl, xh, yl, yh;
};
template <class T> __device__ __forceinline__ OdiCol odi_col(const Grid<T> &f, const OdiAxes<T> &a, int yb)
{
    OdiCol c;
    // A warp takes the columns of one parity along x on two rows two apart
    // (rows 0 and 2, 1 and 3, 4 and 6, ...): where the nodes alternate
    // between coarse nodes and not, its lanes then run the same phase.
    const int t = threadIdx.x + threadIdx.y * ODI_TX, w = t >> 5, l = t & 31, q = w >> 1;
    c.ty = (q >> 1) * 4 + (q & 1) + (l < 16 ? 0 : 2);
    c.tx = 2 * (l & 15) + (w & 1);
    c.i = blockIdx.x * (ODI_TX - 2) + c.tx - 1;
    c.j = yb * (ODI_TY - 2) + c.ty - 1;
    c.in = c.i >= 0 && c.i < f.nx && c.j >= 0 && c.j < f.ny;
    c.own = c.in && c.tx > 0 && c.tx < ODI_TX - 1 && c.ty > 0 && c.ty < ODI_TY - 1;
    c.c0 = c.in ? __ldg(a.cn[0] + c.i) : 0;
    c.c1 = c.in ? __ldg(a.cn[1] + c.j) : 0;
    c.xl = c.in && c.i > 0 && __ldg(a.cn[0] + c.i - 1) < 0;
    c.xh = c.in && c.i < f.nx - 1 && __ldg(a.cn[0] + c.i + 1) < 0;
    c.yl = c.in && c.j > 0 && __ldg(a.cn[1] + c.j - 1) < 0;
    c.yh = c.in && c.j < f.ny - 1 && __ldg(a.cn[1] + c.j + 1) < 0;
    return c;
}
// A plane's values by thread (x, y) at [y + 1][x + 1]: the frame around is
// 0, read only by ring nodes no inner one needs.
template <class T> using OdiPlane = T[ODI_TY + 2][ODI_TX + 2];
template <class T> __device__ __forceinline__ T odi_nb(const OdiPlane<T> &sv, int x, int y) { return sv[y + 1][x + 1]; }
template <class T> __device__ __forceinline__ void odi_frame(OdiPlane<T> &sv)
{
    T *v = &sv[0][0];
    for (int t = threadIdx.x + threadIdx.y * ODI_TX; t < (ODI_TY + 2) * (ODI_TX + 2); t += ODI_TX * ODI_TY) v[t] = T(0);
}
template <class T> __device__ __forceinline__ int odi_cz(const Grid<T> &f, const OdiAxes<T> &a, int k)
{
    return f.is3d ? __ldg(a.cn[2] + k) : 0;
}

// The block's order of planes for its chunk [k0, k1) (thread 0 writes it;
// the count returned after a barrier, which also orders odi_frame's
// writes before the first plane's reads): P (R = false) takes a coarse plane
// as it comes and a plane between coarse planes after the coarse one above
// it; R takes a between plane as it comes and a coarse plane after the
// between planes either side.  A chunk that starts on a plane of the
// waiting kind takes the plane below it first, one that ends on one the
// plane above it last (neither written).
template <class T>
__device__ __forceinline__ int odi_order(const Grid<T> &f, const OdiAxes<T> &a, bool R, int k0, int k1, int *seq)
{
    __shared__ int count;
    __shared__ bool bz[ODI_KMAX + 3]; // planes k0 - 1 .. k1 + 1: between coarse planes
    const int t = threadIdx.x + threadIdx.y * blockDim.x;
    if (t < k1 - k0 + 3 && k0 - 1 + t >= 0 && k0 - 1 + t < f.nz) bz[t] = odi_cz(f, a, k0 - 1 + t) < 0;
    __syncthreads();
    if (t == 0) {
        int n = 0, pend = -1;
        auto between = [&](int k) { return bz[k - k0 + 1]; };
        if (k0 > 0 && (R ? !between(k0) && between(k0 - 1) : between(k0))) seq[n++] = ((k0 - 1) << 3) | ODI_OTHER;
        for (int k = k0; k < k1; ++k) {
            if (between(k) != R) { // P: a between plane, R: a coarse one
                if (R ? k + 1 < f.nz && between(k + 1) : k < f.nz - 1) pend = k;
                else seq[n++] = (k << 3) | ODI_ONE | ODI_WRITE;
                continue;
            }
            seq[n++] = (k << 3) | ODI_OTHER | (R ? 0 : ODI_WRITE);
            if (pend >= 0) seq[n++] = (pend << 3) | ODI_PAIR | ODI_WRITE;
            pend = -1;
        }
        if (pend >= 0) {
            seq[n++] = (k1 << 3) | ODI_OTHER;
            seq[n++] = (pend << 3) | ODI_PAIR | ODI_WRITE;
        }
        count = n;
    }
    __syncthreads();
    return count;
}

// What a node of a plane loads, issued a plane ahead of its use: its faces'
// fractions, and P: e at its coarse node, in; R: r; with a mask (odi_held),
// whether it is fluid and, where it lies between coarse nodes, its closed
// faces and odi_held's faces along its other axes.
template <class T> struct OdiLoad {
    T fr[6], a, b;
    bool live;
    unsigned shut, held;
};
// A node's mask data for OdiLoad (c: its coarse indices; MK: the level
// has a mask).
template <bool MK, class T>
__device__ __forceinline__ void odi_mask_load(const Grid<T> &f, int64_t p, int i, int j, int k, const int (&c)[3],
                                              OdiLoad<T> &L)
{
    L.live = true;
    L.shut = L.held = 0;
    if (!MK) return;
    const unsigned b = f.mk[p];
    L.live = (b & CELL_BITS) == PGPU_CELL_FLUID;
    if (!L.live || (c[0] >= 0 && c[1] >= 0 && c[2] >= 0)) return;
    L.shut = b >> CLOSED_SHIFT & 63u;
    L.held = odi_held(f, p, i, j, k, (c[0] >= 0 ? 1u : 0u) | (c[1] >= 0 ? 2u : 0u) | (c[2] >= 0 ? 4u : 0u));
}
// Node p's faces' fractions (GenPoint's order; 1 where the level stores
// none, 0 along z in 2D): gen_couplings' loads, issued ahead.
template <class T> __device__ __forceinline__ void odi_fractions(const Grid<T> &f, int64_t p, T (&fr)[6])
{
    fr[0] = f.fx ? f.fx[p] : T(1);
    fr[1] = f.fx ? f.fx[p + 1] : T(1);
    fr[2] = f.fy ? f.fy[p] : T(1);
    fr[3] = f.fy ? f.fy[p + f.sy] : T(1);
    fr[4] = f.is3d ? (f.fz ? f.fz[p] : T(1)) : T(0);
    fr[5] = f.is3d ? (f.fz ? f.fz[p + f.sz] : T(1)) : T(0);
}
// Node (i, j, k)'s couplings inside the box from its fractions, as
// gen_couplings forms them (its couplings and their diagonal parts agree
// there), before a mask's closed faces (odi_between).
template <class T>
__device__ __forceinline__ void odi_couplings(const Grid<T> &f, int i, int j, int k, const T (&fr)[6], T (&q)[6])
{
    q[0] = mul_rn(f.cxl[i], fr[0]);
    q[1] = mul_rn(f.cxh[i], fr[1]);
    q[2] = mul_rn(f.cyl[j], fr[2]);
    q[3] = mul_rn(f.cyh[j], fr[3]);
    q[4] = f.is3d ? mul_rn(f.czl[k], fr[4]) : T(0);
    q[5] = f.is3d ? mul_rn(f.czh[k], fr[5]) : T(0);
}
// odi_couplings of a node between coarse nodes, its closed faces 0 (shut:
// OdiLoad's), and its divisor (odi_den7; walls: its walls' part along the
// node's coarse axes).
template <class T>
__device__ __forceinline__ double odi_between(const Grid<T> &f, const OdiCol &c, int k, int cz, const OdiLoad<T> &L,
                                              GenPoint<T> &q, double &walls)
{
    odi_couplings(f, c.i, c.j, k, L.fr, q.d);
#pragma unroll
    for (int s = 0; s < 6; ++s)
        if (L.shut >> s & 1u) q.d[s] = T(0);
    const int cc[3] = {c.c0, c.c1, cz}, at[3] = {c.i, c.j, k}, n[3] = {f.nx, f.ny, f.nz};
    return odi_den7(q, cc, at, n, L.held, walls);
}
template <class T> __device__ __forceinline__ int64_t odi_at(const Grid<T> &f, const OdiCol &c, int k)
{
    return f.base + c.i + (int64_t)c.j * f.sy + (int64_t)k * f.sz;
}

// What odi_p_step does: out = in + P e, the same measuring the correction
// (interp_kernel's REDUCE), or out = delta (gal_sums_kernel's, from the
// 7-point rows: e = 0, no in).
enum OdiP { ODI_ADD = 0, ODI_MEASURE = 1, ODI_DELTA = 2 };

template <int MODE, bool MK, class T>
__device__ __forceinline__ OdiLoad<T> odi_p_load(const Grid<T> &f, const Grid<T> &cg, const OdiAxes<T> &a,
                                                 const T *__restrict__ e, const T *in, const OdiCol &c, int step)
{
    OdiLoad<T> L{};
    if (!c.in) return L;
    const int k = step >> 3, cz = odi_cz(f, a, k);
    const int64_t p = odi_at(f, c, k);
    const int cc[3] = {c.c0, c.c1, cz};
    odi_mask_load<MK>(f, p, c.i, c.j, k, cc, L);
    if (c.c0 >= 0 && c.c1 >= 0 && cz >= 0) {
        if (MODE != ODI_DELTA)
            L.a = e[cg.base + c.c0 + (int64_t)c.c1 * cg.sy + (f.is3d ? (int64_t)cz * cg.sz : 0)];
    } else {
        odi_fractions(f, p, L.fr);
    }
    if ((step & ODI_WRITE) && c.own && in) L.b = in[p];
    return L;
}

// One plane of out = in + P e (every thread of the block: it
// synchronises); the column's value of P e.  A node takes its coarse
// node's value, or its couplings along its between-axes times its
// neighbours' values (in the plane: sv; below and above: the column's)
// over its divisor, in that order; 0 where it is not fluid (odi_held),
// whose value in `in` out keeps, as interp_kernel's.  ODI_DELTA: 1 - P 1
// by P's formula written for it (gal_sums_kernel): 0 on a coarse node, 1
// on a point that is not fluid and beyond the box, the walls along the
// node's coarse axes in the sum.
template <int MODE, bool MK, class T>
__device__ __forceinline__ T odi_p_step(const Grid<T> &f, const OdiAxes<T> &a, const T *in, T *out, Red3 &acc,
                                        OdiPlane<T> &sv, const OdiCol &c, int step, const OdiLoad<T> &L, T below,
                                        T above)
{
    constexpr bool DL = MODE == ODI_DELTA;
    const int k = step >> 3, cz = odi_cz(f, a, k), ph = (c.c0 < 0) + (c.c1 < 0);
    const bool coarse = c.c0 >= 0 && c.c1 >= 0 && cz >= 0;
    GenPoint<T> q; // (its couplings inside the box: d = v)
    double den = 0, walls = 0;
    if (c.in && !coarse && L.live) den = odi_between(f, c, k, cz, L, q, walls);
    T v = L.live ? L.a : T(DL ? 1 : 0);
    __syncthreads(); // (the plane before is read)
    for (int s = 0; s < 3; ++s) {
        if (c.in && ph == s) {
            if (!coarse && L.live) {
                // (a neighbour beyond the box: 0, or 1 for delta)
                const double out_box = DL ? 1.0 : 0.0;
                double num = DL ? walls : 0.0;
                if (c.c0 < 0) {
                    num += (double)q.d[0] * (c.i > 0 ? (double)odi_nb(sv, c.tx - 1, c.ty) : out_box);
                    num += (double)q.d[1] * (c.i < f.nx - 1 ? (double)odi_nb(sv, c.tx + 1, c.ty) : out_box);
                }
                if (c.c1 < 0) {
                    num += (double)q.d[2] * (c.j > 0 ? (double)odi_nb(sv, c.tx, c.ty - 1) : out_box);
                    num += (double)q.d[3] * (c.j < f.ny - 1 ? (double)odi_nb(sv, c.tx, c.ty + 1) : out_box);
                }
                if (cz < 0) {
                    num += (double)q.d[4] * (k > 0 ? (double)below : out_box);
                    num += (double)q.d[5] * (k < f.nz - 1 ? (double)above : out_box);
                }
                v = den > 0 ? T(num / den) : T(DL ? 1 : 0);
            }
            sv[c.ty + 1][c.tx + 1] = v;
        }
        if (s < 2) __syncthreads();
    }
    if ((step & ODI_WRITE) && c.own) {
        const int64_t p = odi_at(f, c, k);
        if (!in) {
            out[p] = v;
        } else if (L.live) {
            out[p] = L.b + v;
            if (MODE == ODI_MEASURE) note_correction(acc, v, L.b + v);
        } else if (in != out) { // (not an unknown: keeps its value, bit for bit)
            out[p] = L.b;
        }
    }
    return v;
}

// The walk both kernels take (after block_yz): the block's order of
// planes for its chunk, each plane's loads (load(step): an OdiLoad) issued
// while the plane before runs its step (step(step, its loads, below,
// above): the column's result), the last two results of the other kind of
// plane in lo and hi.
template <class T, class Load, class Step>
__device__ __forceinline__ void odi_walk(const Grid<T> &f, const OdiAxes<T> &a, bool R, int zc, int kchunk,
                                         OdiPlane<T> &sv, int *seq, Load load, Step step)
{
    int k0, k1;
    chunk_planes(zc, kchunk, f.nz, k0, k1);
    odi_frame(sv);
    const int n = odi_order(f, a, R, k0, k1, seq);
    T lo = T(0), hi = T(0);
    OdiLoad<T> next = load(seq[0]);
    for (int s = 0; s < n; ++s) {
        const int st = seq[s], how = st & 3;
        const OdiLoad<T> cur = next;
        if (s + 1 < n) next = load(seq[s + 1]);
        const T below = how == ODI_PAIR ? lo : how == ODI_ONE ? hi : T(0), above = how == ODI_PAIR ? hi : T(0);
        const T v = step(st, cur, below, above);
        if (how == ODI_OTHER) {
            lo = hi;
            hi = v;
        }
    }
}

// out = in + P e (in NULL: out = P e; in == out allowed) on level 0, one
// pass, as odi_p_step's MODE says (MK: the level has a mask).
template <class T, int MODE, bool MK>
__global__ void __launch_bounds__(ODI_TX *ODI_TY, 2)
    odi_p_kernel(const Grid<T> f, const Grid<T> cg, const OdiAxes<T> a, const T *__restrict__ e, const T *in, T *out,
                 double *partials, int kchunk, int nyb, int nchunks)
{
    __shared__ OdiPlane<T> sv;
    __shared__ int seq[ODI_KMAX + 2];
    Red3 acc{0, 0, 0};
    int yb, zc;
    if (block_yz(nyb, nchunks, yb, zc)) {
        const OdiCol c = odi_col(f, a, yb);
        odi_walk(
            f, a, false, zc, kchunk, sv, seq, [&](int st) { return odi_p_load<MODE, MK>(f, cg, a, e, in, c, st); },
            [&](int st, const OdiLoad<T> &L, T below, T above) {
                return odi_p_step<MODE, MK>(f, a, in, out, acc, sv, c, st, L, below, above);
            });
    }
    if (MODE == ODI_MEASURE) write_partial(partials, acc);
}

template <bool MK, class T>
__device__ __forceinline__ OdiLoad<T> odi_r_load(const Grid<T> &f, const OdiAxes<T> &a, const T *__restrict__ r,
                                                 const OdiCol &c, int step)
{
    OdiLoad<T> L{};
    if (!c.in) return L;
    const int k = step >> 3;
    const int64_t p = odi_at(f, c, k);
    const int cc[3] = {c.c0, c.c1, odi_cz(f, a, k)};
    odi_mask_load<MK>(f, p, c.i, c.j, k, cc, L);
    odi_fractions(f, p, L.fr);
    L.a = r[p];
    return L;
}

// One plane of fc = R r = Wc^-1 P^T W r on level 0, the stages' adjoint
// (every thread of the block: it synchronises); the column's t.  A node
// sums W r of its own and, from each neighbour q along its coarse-node
// axes that lies between coarse nodes there, q's coupling towards it times
// t_q (in the plane: sv; below and above: the column's), in that order; t
// = that sum over the node's divisor (P's), or on a coarse node the coarse
// right-hand side; 0 where the node is not fluid (P's column is 0 there).
template <class T>
__device__ __forceinline__ T odi_r_step(const Grid<T> &f, const Grid<T> &cg, const OdiAxes<T> &a, T *fc,
                                        OdiPlane<T> &sv, const OdiCol &c, int step, const OdiLoad<T> &L, T below,
                                        T above)
{
    const int k = step >> 3, cz = odi_cz(f, a, k), ph = (c.c0 < 0) + (c.c1 < 0);
    const bool coarse = c.c0 >= 0 && c.c1 >= 0 && cz >= 0;
    const bool zl = f.is3d && cz >= 0 && k > 0 && __ldg(a.cn[2] + k - 1) < 0;
    const bool zh = f.is3d && cz >= 0 && k < f.nz - 1 && __ldg(a.cn[2] + k + 1) < 0;
    // q's coupling towards the node: q below along an axis (its high face)
    // and above (its low face)
    double cq[6] = {0, 0, 0, 0, 0, 0}, sum = 0, den = 0;
    if (c.in && L.live) {
        double w = (double)__ldg(a.wf[0] + c.i) * (double)__ldg(a.wf[1] + c.j);
        if (f.is3d) w *= (double)__ldg(a.wf[2] + k);
        sum = w * (double)L.a;
        if (c.c0 >= 0 && c.xl) cq[0] = odi_face_fr(f, 0, c.i - 1, true, L.fr[0]);
        if (c.c0 >= 0 && c.xh) cq[1] = odi_face_fr(f, 0, c.i + 1, false, L.fr[1]);
        if (c.c1 >= 0 && c.yl) cq[2] = odi_face_fr(f, 1, c.j - 1, true, L.fr[2]);
        if (c.c1 >= 0 && c.yh) cq[3] = odi_face_fr(f, 1, c.j + 1, false, L.fr[3]);
        if (zl) cq[4] = odi_face_fr(f, 2, k - 1, true, L.fr[4]);
        if (zh) cq[5] = odi_face_fr(f, 2, k + 1, false, L.fr[5]);
        if (!coarse) {
            GenPoint<T> q;
            double walls;
            den = odi_between(f, c, k, cz, L, q, walls); // as odi_p_step's
        }
    }
    T t = T(0);
    __syncthreads(); // (the plane before is read)
    for (int s = 2; s >= 0; --s) {
        if (c.in && ph == s) {
            if (c.c0 >= 0 && c.xl) sum += cq[0] * (double)odi_nb(sv, c.tx - 1, c.ty);
            if (c.c0 >= 0 && c.xh) sum += cq[1] * (double)odi_nb(sv, c.tx + 1, c.ty);
            if (c.c1 >= 0 && c.yl) sum += cq[2] * (double)odi_nb(sv, c.tx, c.ty - 1);
            if (c.c1 >= 0 && c.yh) sum += cq[3] * (double)odi_nb(sv, c.tx, c.ty + 1);
            if (zl) sum += cq[4] * (double)below;
            if (zh) sum += cq[5] * (double)above;
            if (!coarse) {
                t = den > 0 ? T(sum / den) : T(0);
            } else if ((step & ODI_WRITE) && c.own) {
                double wc = (double)__ldg(a.wc[0] + c.c0) * (double)__ldg(a.wc[1] + c.c1);
                if (f.is3d) wc *= (double)__ldg(a.wc[2] + cz);
                fc[cg.base + c.c0 + (int64_t)c.c1 * cg.sy + (f.is3d ? (int64_t)cz * cg.sz : 0)] = T(sum / wc);
            }
            sv[c.ty + 1][c.tx + 1] = t;
        }
        if (s > 0) __syncthreads();
    }
    return t;
}

// fc = R r on level 0, one pass (MK: the level has a mask).
template <class T, bool MK>
__global__ void __launch_bounds__(ODI_TX *ODI_TY, 2)
    odi_r_kernel(const Grid<T> f, const Grid<T> cg, const OdiAxes<T> a, const T *__restrict__ r, T *fc, int kchunk,
                 int nyb, int nchunks)
{
    __shared__ OdiPlane<T> sv;
    __shared__ int seq[ODI_KMAX + 2];
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return;
    const OdiCol c = odi_col(f, a, yb);
    odi_walk(
        f, a, true, zc, kchunk, sv, seq, [&](int st) { return odi_r_load<MK>(f, a, r, c, st); },
        [&](int st, const OdiLoad<T> &L, T below, T above) {
            return odi_r_step(f, cg, a, fc, sv, c, st, L, below, above);
        });
}


// f - (A u)_p for row `row` of node p (u_p = up), in differences, summed in
// double in slot order, entries of 0 skipped.  dense (a Galerkin level,
// whose arrays have the whole ghost frame): every neighbour in the plane
// (3D: in the box) is read, whatever its entry, so that the reads issue
// together; a read that waits on its entry costs a memory latency per slot
// (a colour pass on a level of 15^3 took 13 us).  Otherwise (the 7-point
// form on the caller's arrays) an entry of 0 leaves its neighbour unread.
template <class T>
__device__ __forceinline__ double gal_resid(const Grid<T> &g, const double (&row)[GAL_SLOTS], const T *u, int64_t p,
                                            double up, double f, bool dense)
{
    double s = f - row[GAL_CENTRE] * up;
    if (dense) {
#pragma unroll
        for (int q = 0; q < GAL_SLOTS; ++q) {
            if (q == GAL_CENTRE) continue;
            const double v = g.is3d || (q >= 9 && q < 18) ? (double)u[p + gal_step(g, q)] : up;
            s -= row[q] * (row[q] != 0 ? v - up : 0.0); // (a ghost's value, maybe not a number, never enters)
        }
        return s;
    }
#pragma unroll
    for (int q = 0; q < GAL_SLOTS; ++q)
        if (q != GAL_CENTRE && row[q] != 0) s -= row[q] * ((double)u[p + gal_step(g, q)] - up);
    return s;
}

// r = f - A u on a level, A by rows (gal_row) in differences (gal_resid);
// f NULL: each row's sum, r = A (1 - u) (the build's, from u = delta:
// gal_sums_kernel).  A walk launch over the level.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    gal_residual_kernel(const Grid<T> g, const GalRows<T> gr, const T *__restrict__ u, const T *__restrict__ f,
                        T *__restrict__ r, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    for (int k = k0; k < k1; ++k) {
        const int64_t p = g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
        double row[GAL_SLOTS];
        gal_row(g, gr, p, i, j, k, row);
        r[p] = T(gal_resid(g, row, u, p, (double)u[p], f ? (double)f[p] : row[GAL_CENTRE], gr.st != nullptr));
    }
}

// Gauss-Seidel at node (i, j, k) of a Galerkin level, in place.
template <class T>
__device__ __forceinline__ void gal_gs_node(const Grid<T> &g, const GalRows<T> &gr, T *u, const T *__restrict__ f,
                                            int i, int j, int k)
{
    const int64_t p = g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
    const double up = (double)u[p];
    double row[GAL_SLOTS];
    gal_row(g, gr, p, i, j, k, row);
    const double s = gal_resid(g, row, u, p, up, (double)f[p], true);
    const double d = gal_diag(row);
    if (d > 0) u[p] = T(up + s / d);
}

// One colour of Gauss-Seidel on a Galerkin level, in place: the nodes whose
// index parities (i, j, k) are the colour's bits 0, 1, 2 (27-point rows
// couple no two nodes of one colour).  A walk launch over the level.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    gal_colour_kernel(const Grid<T> g, const GalRows<T> gr, T *u, const T *__restrict__ f, int colour, int kchunk,
                      int nyb, int nchunks)
{
    // a walk launch over the colour's columns and planes: thread (i', j'),
    // planes k' of [k0, k1), at node (2 i' + x bit, 2 j' + y bit, 2 k' + z bit)
    int h[3];
    gal_colour_extent(g.nx, g.ny, g.is3d ? g.nz : 1, colour, h);
    int i, j, k0, k1;
    if (!walk_thread(h[0], h[1], h[2], kchunk, nyb, nchunks, i, j, k0, k1)) return;
    i = 2 * i + (colour & 1);
    j = 2 * j + (colour >> 1 & 1);
    for (int kk = k0; kk < k1; ++kk) gal_gs_node(g, gr, u, f, i, j, g.is3d ? 2 * kk + (colour >> 2 & 1) : 0);
}

// The walk launch of gal_colour_kernel for a colour of g.
template <class T> static ColLaunch gal_colour_launch(const Grid<T> &g, int colour)
{
    int h[3];
    gal_colour_extent(g.nx, g.ny, g.is3d ? g.nz : 1, colour, h);
    return walk_launch(h[0], h[1], h[2], g.is3d != 0, Tune<T>::walk_group);
}

// A small Galerkin level's whole smoothing in one block: `iters` sweeps of
// its colours (in reverse order with flip), each colour's nodes one a
// thread, colours apart by a barrier -- the same updates in the same order
// as a launch per colour, whose latency (about 10 us each, 32 per V(2,2)
// cycle on each of the smallest levels) outweighs their work there.
constexpr int GAL_BLOCK_THREADS = 512, GAL_BLOCK_NODES = 4096;
template <class T>
__global__ void __launch_bounds__(GAL_BLOCK_THREADS)
    gal_colours_block_kernel(const Grid<T> g, const GalRows<T> gr, T *u, const T *__restrict__ f, int iters, int flip)
{
    const int nc = g.is3d ? 8 : 4;
    for (int s = 0; s < iters; ++s)
        for (int c = 0; c < nc; ++c) {
            const int colour = flip ? nc - 1 - c : c;
            int h[3];
            gal_colour_extent(g.nx, g.ny, g.is3d ? g.nz : 1, colour, h);
            const int m = h[0] * h[1] * h[2];
            for (int t = threadIdx.x; t < m; t += GAL_BLOCK_THREADS) {
                const int i = 2 * (t % h[0]) + (colour & 1), j = 2 * (t / h[0] % h[1]) + (colour >> 1 & 1);
                gal_gs_node(g, gr, u, f, i, j, g.is3d ? 2 * (t / (h[0] * h[1])) + (colour >> 2 & 1) : 0);
            }
            __syncthreads();
        }
}

// P's weights (odi_pw_at) for the nodes of one stage (odi_stage), from the
// level's rows and the weights of the stages below: a node of stage 0
// weighs 1 towards itself; a node of a higher stage collapses its row
// (odi_collapse; a 7-point level's couplings along its between-axes over
// odi_den7) and weighs, towards each corner J, its collapsed couplings
// times the weights towards J of the neighbours they reach -- those in J's
// block, a between-axis crossed towards J -- over its divisor, rounded to
// T (the value odi_p_kernel passes on for e = 1 at J).  The build launches
// stages 1 to the top in order, each a walk over the fine level (stage 0's
// weights with stage 1's, which take them as 1).  From a Galerkin level
// (S27) it also writes delta = 1 - P 1 into dl from the same row
// (gal_sums_kernel; stage 0's, 0, with stage 1's, which take them as 0).
template <class T, bool S27>
__global__ void __launch_bounds__(WALK_THREADS)
    gal_weights_kernel(const Grid<T> fine, const GalRows<T> fr, const Grid<T> coarse, const OdiAxes<T> a, T *pw,
                       T *dl, int stage, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(fine.nx, fine.ny, fine.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    const bool is3d = fine.is3d != 0;
    const int nf[3] = {fine.nx, fine.ny, is3d ? fine.nz : 1};
    for (int k = k0; k < k1; ++k) {
        int c[3];
        const int st = odi_stage(a, is3d, i, j, k, c);
        if (st != stage && (st || stage != 1)) continue; // (stage 0 with stage 1)
        const int x[3] = {i, j, k};
        int e[3], lo[3], hi[3]; // its places; its corners' coarse indices below and above (-1: a wall)
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            lo[d] = c[d] >= 0 ? c[d] : x[d] > 0 ? __ldg(a.cn[d] + x[d] - 1) : -1;
            hi[d] = c[d] >= 0 ? c[d] : x[d] < nf[d] - 1 ? __ldg(a.cn[d] + x[d] + 1) : -1;
            e[d] = odi_first_place(x[d], c[d], lo[d]);
        }
        const int64_t p = fine.base + i + (int64_t)j * fine.sy + (int64_t)k * fine.sz;
        const bool live = S27 || gen_fluid(fine, p); // (odi_held)
        if (st == 0) {
            pw[odi_pw_at(fine, coarse, e)] = T(live ? 1 : 0);
            if (S27) dl[p] = T(0);
            continue;
        }
        // the weight towards corner q of the neighbour at offset m (on the
        // between-axes), 0 unless it lies in that corner's block; 1 where it
        // is the corner (m along every between-axis)
        auto towards = [&](int q, int m0, int m1, int m2) -> double {
            const int m[3] = {m0, m1, m2};
            int y[3];
            bool corner = true;
#pragma unroll
            for (int d = 0; d < 3; ++d) {
                const int up = q >> d & 1;
                if (m[d] && (m[d] > 0) != (up != 0)) return 0.0;
                y[d] = m[d] ? 2 * (x[d] + m[d]) - (up ? hi[d] : lo[d]) : e[d] + up;
                corner = corner && (m[d] || c[d] >= 0);
            }
            return corner ? 1.0 : (double)pw[odi_pw_at(fine, coarse, y)];
        };
        double den = 0, w[GAL_SLOTS];
        GenPoint<T> g{};
        if constexpr (S27) {
            double row[GAL_SLOTS];
            gal_row(fine, fr, p, i, j, k, row);
            den = odi_collapse(row, c, w);
            double nd = row[GAL_CENTRE] > 0 ? row[GAL_CENTRE] : 0.0;
            if (stage > 1)
#pragma unroll
                for (int t = 0; t < GAL_SLOTS; ++t)
                    if (w[t] > 0) nd += w[t] * (double)dl[p + gal_step(fine, t)];
            dl[p] = den > 0 ? T(nd / den) : T(1);
        } else if (live) {
            g = gen_couplings(fine, p, i, j, k);
            const unsigned held = odi_held(fine, p, i, j, k, 7u);
#pragma unroll
            for (int f = 0; f < 6; ++f)
                if (held >> f & 1u) g.v[f] = T(0); // (a wall: in den, towards no corner)
            double walls;
            den = odi_den7(g, c, x, nf, held, walls);
        }
        for (int q = 0; q < odi_corners(is3d); ++q) {
            bool ok = true;
#pragma unroll
            for (int d = 0; d < 3; ++d) ok = ok && ((q >> d & 1) ? c[d] < 0 && hi[d] >= 0 : c[d] >= 0 || lo[d] >= 0);
            if (!ok) continue;
            double num = 0;
            if constexpr (S27) {
#pragma unroll
                for (int t = 0; t < GAL_SLOTS; ++t) {
                    int m[3];
                    gal_offset(t, m);
                    if (w[t] > 0) num += w[t] * towards(q, m[0], m[1], m[2]);
                }
            } else {
#pragma unroll
                for (int d = 0; d < 3; ++d) {
                    if (c[d] >= 0) continue;
                    if (x[d] > 0) num += (double)g.v[2 * d] * towards(q, -(d == 0), -(d == 1), -(d == 2));
                    if (x[d] < nf[d] - 1) num += (double)g.v[2 * d + 1] * towards(q, d == 0, d == 1, d == 2);
                }
            }
            const int eq[3] = {e[0] + (q & 1), e[1] + (q >> 1 & 1), e[2] + (q >> 2 & 1)};
            pw[odi_pw_at(fine, coarse, eq)] = den > 0 ? T(num / den) : T(0);
        }
    }
}

// The Galerkin build's off-diagonal entries, R A P directly: for coarse
// nodes I and J = I + o (o != 0),
//   A_c(I, J) = sum_i W_i P(i, I) sum_j A(i, j) P(j, J) / Wc_I,
// i over the fine nodes P's column I reaches, j over column J's (P's
// column of a coarse node lives on its block: the fine nodes within one
// index of it along its coarsened axes that lie between coarse nodes,
// and itself).  W A is symmetric (the couplings of a face are one number
// seen from either side, over the cell volumes W), so Wc A_c is: the sum
// above, e(I, J), is e(J, I), and the build forms it once for each pair of
// neighbours, over the slots o of the upper half (gal_upper: o's last
// nonzero component positive), writing A_c(I, J) = e / Wc_I and
// A_c(J, I) = e / Wc_J.  A block owns a tile of 32 coarse nodes: it first
// reads the columns of the tile and the nodes that upper half reaches
// around it into shared memory from P's weights (gal_weights_kernel), the
// rows of the fine nodes under the tile (a Galerkin level's: their
// diagonals) with their cell volumes, and each axis's pairs; then each
// warp takes a slot o, a lane a tile node, and sums over the pairs (i, j)
// within one index of each other on every axis (on a 7-point level: equal
// on all axes but at most one).  The rows' sums (the centre slots) come
// from R A P 1 formed in differences (Hierarchy::galerkin_build), not from
// these entries.
//
// Shared memory is laid out so that a half-warp's loads meet no bank
// twice: the half-warp's lanes are 8 consecutive tile nodes along x on
// two planes (gal_lane), the fine nodes are stored by parity along each
// axis (gal_fine_at: a lane's nodes, two fine indices apart, fall on
// consecutive words) with plane strides that put the second plane 8 words
// on, and each axis's pairs are packed (gal_pack_pair) so that a term's
// shared-memory places are sums of one word per axis.
constexpr int GAL_TX = 8, GAL_TY = 2, GAL_TZ = 2; // a block's coarse tile in 3D (2D: GAL_T2X x GAL_T2Y)
constexpr int GAL_T2X = 8, GAL_T2Y = 4, GAL_THREADS = 256;
constexpr int GAL_COLS = (GAL_TX + 2) * (GAL_TY + 2) * (GAL_TZ + 1); // (the upper half: z from the tile's first)
constexpr int GAL_FPX = 24, GAL_FPY = 2 * GAL_TY + 1;                          // the fine layout's strides (3D)
constexpr int GAL_FINE = GAL_FPX * GAL_FPY * (2 * GAL_TZ + 1);                 // its places (3D; 2D: fewer)
constexpr int GAL_PAIRS = 7;                                                   // pairs along an axis, at most
static_assert(GAL_TX * GAL_TY * GAL_TZ == 32 && GAL_T2X * GAL_T2Y == 32, "a tile is a warp's lanes");
static_assert(GAL_COLS >= (GAL_T2X + 2) * (GAL_T2Y + 2) && GAL_FINE >= GAL_FPX * (2 * GAL_T2Y + 1),
              "the 2D tile fits the 3D tile's shared arrays");
static_assert(2 * GAL_TX + 1 <= GAL_FPX && 2 * GAL_T2X + 1 <= GAL_FPX && GAL_FPX * GAL_FPY % 16 == 8,
              "the fine layout holds a tile's nodes, a lane's second plane 8 words on");
static_assert(GAL_T2X >= GAL_TX && GAL_T2X >= GAL_TY && GAL_T2X >= GAL_T2Y, "a tile's extents fit the pairs' lists");
// gal_rap_kernel's dynamic shared memory (s27: the level above is a Galerkin one)
static size_t gal_rap_smem(bool s27) { return sizeof(double) * (GAL_COLS * GAL_SLOTS + GAL_FINE * (s27 ? 2 : 8)); }

// Along one axis, the pairs (i of I's block, j of J's) one index apart at
// most: 4 bits a pair (i's block offset + 1, then j's << 2), those at the
// same node (eq, up to 3) and those one apart (ne, up to 4).
struct OdiPairs {
    unsigned eq = 0, ne = 0;
    int neq = 0, nne = 0;
};
// gal_rap_kernel's static shared memory, beside gal_rap_smem's dynamic:
// each axis's pairs by tile node and offset, packed (gal_pack_pair; the
// pairs at one node first), their counts (at one node, one apart), their
// fine indices (the level above a Galerkin one: its rows are read from
// global memory), and the places of P's weights along each axis by column
// (the tile and one node around it) and offset, as odi_pw_at's terms (the
// place times the axis's stride in pw; -1: the column has none there).
typedef unsigned GalPacked[3][GAL_T2X][3][GAL_PAIRS];
typedef unsigned char GalCounts[3][GAL_T2X][3][2];
typedef int GalCoords[3][GAL_T2X][3][GAL_PAIRS];
typedef int64_t GalPlaces[3][GAL_T2X + 2][3];
constexpr size_t GAL_STATIC_SMEM = sizeof(GalPacked) + sizeof(GalCounts) + sizeof(GalCoords) + sizeof(GalPlaces);
template <class T> __device__ __forceinline__ OdiPairs odi_pairs(const OdiAxes<T> &a, int d, int n, int I, int J)
{
    int xi[3], oi[3], xj[3], oj[3];
    const int ni = odi_block_axis(a, d, n, I, xi, oi), nj = odi_block_axis(a, d, n, J, xj, oj);
    OdiPairs r;
#pragma unroll
    for (int u = 0; u < 3; ++u)
#pragma unroll
        for (int v = 0; v < 3; ++v) {
            if (u >= ni || v >= nj) continue;
            const unsigned code = (unsigned)(oi[u] + 1) | (unsigned)(oj[v] + 1) << 2;
            const int gap = xj[v] - xi[u];
            if (gap == 0) r.eq |= code << 4 * r.neq++;
            else if (gap == 1 || gap == -1) r.ne |= code << 4 * r.nne++;
        }
    return r;
}
// A tile node's coordinates in the tile from its lane: in 3D a half-warp
// is 8 nodes along x on two planes along z (the fine layout's and the
// columns' strides put them on distinct banks).
__device__ __forceinline__ void gal_lane(bool is3d, int v, int (&t)[3])
{
    t[0] = v & 7;
    t[1] = is3d ? v >> 4 & 1 : v >> 3;
    t[2] = is3d ? v >> 3 & 1 : 0;
}
// Along axis d, the fine layout's part for the fine node at x (from the
// tile's first, x < 2 t + 1 for a tile extent t): by parity, the even
// nodes first.
__device__ __forceinline__ int gal_fine_at(bool is3d, int d, int x, int t)
{
    const int p = (x >> 1) + (t + 1) * (x & 1);
    return d == 0 ? p : d == 1 ? GAL_FPX * p : GAL_FPX * GAL_FPY * p;
}
// The upper half's slots, q < 13 (2D: 4, the slots of offset 0 along z),
// faces first: warp w takes q = w and w + 8, 70 pairs' terms at most.
__device__ __forceinline__ int gal_upper(bool is3d, int q)
{
    // 3D: 14 16 22 | 15 17 19 21 23 25 | 18 20 24 26; 2D: 14 15 16 17
    constexpr unsigned long long U3 = 14ull | 16ull << 5 | 22ull << 10 | 15ull << 15 | 17ull << 20 | 19ull << 25 |
                                      21ull << 30 | 23ull << 35 | 25ull << 40 | 18ull << 45 | 20ull << 50 |
                                      24ull << 55;
    return is3d ? (q < 12 ? (int)(U3 >> 5 * q & 31u) : 26) : (q & 1 ? 15 : 14) + (q & 2);
}

// A pair along axis d packed as one word, whose sum over the three axes
// gives a term's places: bits 0-4 the slot of P's column I (i's block
// offset + 1 times 1, 3 or 9), 5-9 column J's, 10-20 the fine layout's
// place of i, 21-25 the slot of the entry A(i, j) (gal_slot).
__device__ __forceinline__ unsigned gal_pack_pair(int d, unsigned code, int fine_at, int dir)
{
    const unsigned m = d == 0 ? 1u : d == 1 ? 3u : 9u;
    return (code & 3u) * m | (code >> 2) * m << 5 | (unsigned)fine_at << 10 | (unsigned)(dir + 1) * m << 21;
}

template <class T, bool S27>
__global__ void __launch_bounds__(GAL_THREADS, 3)
    gal_rap_kernel(const Grid<T> fine, const GalRows<T> fr, const Grid<T> coarse, const OdiAxes<T> a,
                   const GalRows<T> cr, const T *__restrict__ pw)
{
    // P's columns by block offset (gal_slot); the fine rows under the tile
    // (gal_rap_smem: 7-point, the couplings by face, 2 d + high, then the
    // diagonal; a Galerkin level's, the diagonal alone) and their cell
    // volumes, at gal_fine_at's places; each axis's pairs by tile node and
    // offset
    extern __shared__ double gal_sm[];
    double(*const col)[GAL_SLOTS] = reinterpret_cast<double(*)[GAL_SLOTS]>(gal_sm);
    constexpr int AW = S27 ? 1 : 7;
    double *const arow = gal_sm + GAL_COLS * GAL_SLOTS, *const vol = arow + GAL_FINE * AW;
    __shared__ GalPacked pairs;
    __shared__ GalCounts counts;
    __shared__ int coords[S27 ? 3 : 1][GAL_T2X][3][GAL_PAIRS]; // (GalCoords)
    __shared__ GalPlaces place;
    const bool is3d = fine.is3d != 0;
    const int tx = is3d ? GAL_TX : GAL_T2X, ty = is3d ? GAL_TY : GAL_T2Y, tz = is3d ? GAL_TZ : 1;
    const int hx = tx + 2, hy = ty + 2, hz = is3d ? tz + 1 : 1; // the tile and the nodes its upper half reaches
    const int cnz = is3d ? coarse.nz : 1, fnz = is3d ? fine.nz : 1;
    const int bx = (coarse.nx + tx - 1) / tx, by = (coarse.ny + ty - 1) / ty;
    const int b = blockIdx.x;
    const int I0[3] = {b % bx * tx, b / bx % by * ty, b / bx / by * tz};
    const int ext[3] = {tx, ty, tz};
    const int nf[3] = {fine.nx, fine.ny, fnz}, nc[3] = {coarse.nx, coarse.ny, cnz};
    // 1. The columns from P's weights (zero outside their blocks): the
    // places along each axis first, then one independent load an entry,
    // consecutive threads along x's places (a column's places along an
    // axis follow its neighbour's: the loads of a row coalesce).
    for (int t = threadIdx.x; t < 3 * (GAL_T2X + 2) * 3; t += blockDim.x) {
        const int d = t / (3 * (GAL_T2X + 2)), u = t / 3 % (GAL_T2X + 2), o = t % 3 - 1;
        const int J = d < 2 ? I0[d] - 1 + u : is3d ? I0[d] + u : 0; // (z: the upper half)
        int64_t pl = -1;
        if (u < (d == 0 ? hx : d == 1 ? hy : hz) && J >= 0 && J < nc[d]) {
            const int F = d < 2 || is3d ? __ldg(a.cf[d] + J) : 0, x = F + o;
            if (!o || (x >= 0 && x < nf[d] && (d < 2 || is3d) && __ldg(a.cn[d] + x) < 0)) {
                const int e[3] = {d == 0, d == 1, d == 2}; // (the axis's stride in pw)
                pl = odi_place_of(F, J, o) * odi_pw_at(fine, coarse, e);
            }
        }
        place[d][u][o + 1] = pl;
    }
    __syncthreads();
    int F0[3];
    for (int d = 0; d < 3; ++d) F0[d] = d < 2 || is3d ? __ldg(a.cf[d] + I0[d]) - 1 : 0;
    // (the extents known at compile time from here to the pairs: 2D or 3D)
    auto fill = [&](auto d3) {
        constexpr bool D3 = decltype(d3)::value;
        constexpr int TX = D3 ? GAL_TX : GAL_T2X, TY = D3 ? GAL_TY : GAL_T2Y, TZ = D3 ? GAL_TZ : 1;
        constexpr int HX = TX + 2, HY = TY + 2, HZ = D3 ? TZ + 1 : 1, FX = 2 * TX + 1, FY = 2 * TY + 1,
                      FZ = D3 ? 2 * TZ + 1 : 1;
#pragma unroll 4
        for (int t = threadIdx.x; t < HX * HY * HZ * GAL_SLOTS; t += GAL_THREADS) {
            const int ax = t % (3 * HX), ayz = t / (3 * HX), ay = ayz % (3 * HY), az = ayz / (3 * HY);
            const int u[3] = {ax / 3, ay / 3, az / 3}, o[3] = {ax - 3 * u[0], ay - 3 * u[1], az - 3 * u[2]};
            const int64_t e[3] = {place[0][u[0]][o[0]], place[1][u[1]][o[1]], place[2][u[2]][o[2]]};
            col[u[0] + HX * (u[1] + HY * u[2])][o[0] + 3 * o[1] + 9 * o[2]] =
                e[0] >= 0 && e[1] >= 0 && e[2] >= 0 ? (double)pw[e[0] + e[1] + e[2]] : 0.0;
        }
        // 2. The rows and cell volumes of the fine nodes from one before
        // the tile's first coarse node to one past its last (consecutive
        // coarse nodes lie at most two fine nodes apart).
        for (int t = threadIdx.x; t < FX * FY * FZ; t += GAL_THREADS) {
            const int l[3] = {t % FX, t / FX % FY, t / (FX * FY)};
            const int x[3] = {F0[0] + l[0], F0[1] + l[1], F0[2] + l[2]};
            const int at = gal_fine_at(D3, 0, l[0], TX) + gal_fine_at(D3, 1, l[1], TY) + gal_fine_at(D3, 2, l[2], TZ);
            double row[GAL_SLOTS], w = 0;
#pragma unroll
            for (int q = 0; q < GAL_SLOTS; ++q) row[q] = 0;
            if (x[0] >= 0 && x[0] < nf[0] && x[1] >= 0 && x[1] < nf[1] && x[2] >= 0 && x[2] < nf[2]) {
                gal_row(fine, fr, fine.base + x[0] + (int64_t)x[1] * fine.sy + (int64_t)x[2] * fine.sz, x[0], x[1],
                        x[2], row);
                w = (double)__ldg(a.wf[0] + x[0]) * (double)__ldg(a.wf[1] + x[1]);
                if (D3) w *= (double)__ldg(a.wf[2] + x[2]);
            }
            if constexpr (!S27)
#pragma unroll
                for (int f = 0; f < 6; ++f)
                    arow[at * AW + f] = row[gal_slot(f >> 1 == 0 ? 2 * (f & 1) - 1 : 0, f >> 1 == 1 ? 2 * (f & 1) - 1 : 0,
                                                   f >> 1 == 2 ? 2 * (f & 1) - 1 : 0)];
            arow[at * AW + AW - 1] = gal_diag(row);
            vol[at] = w;
        }
    };
    if (is3d) fill(std::true_type());
    else fill(std::false_type());
    // each axis's pairs (odi_pairs) by tile node and offset, packed
    for (int t = threadIdx.x; t < 3 * GAL_T2X * 3; t += blockDim.x) {
        const int d = t / (3 * GAL_T2X), v = t / 3 % GAL_T2X, o = t % 3 - 1;
        const int I = I0[d] + v, J = I + o;
        OdiPairs r;
        if (d == 2 && !is3d) r.eq = 5, r.neq = 1; // (offsets 0 and 0)
        else if (v < ext[d] && I < nc[d] && J >= 0 && J < nc[d]) r = odi_pairs(a, d, nf[d], I, J);
        const int FI = d < 2 || is3d ? __ldg(a.cf[d] + min(I, nc[d] - 1)) : 0;
        const int FJ = d < 2 || is3d ? __ldg(a.cf[d] + max(0, min(J, nc[d] - 1))) : 0;
        const unsigned all = r.eq | r.ne << 4 * r.neq;
        for (int q = 0; q < r.neq + r.nne; ++q) {
            const unsigned code = all >> 4 * q & 15u;
            const int i = FI + (int)(code & 3u) - 1, j = FJ + (int)(code >> 2) - 1;
            pairs[d][v][o + 1][q] = gal_pack_pair(d, code, gal_fine_at(is3d, d, i - F0[d], ext[d]), j - i);
            if constexpr (S27) coords[d][v][o + 1][q] = i;
        }
        counts[d][v][o + 1][0] = (unsigned char)r.neq;
        counts[d][v][o + 1][1] = (unsigned char)r.nne;
    }
    __syncthreads();
    // 3. The entries: warp w the upper half's slots gal_upper(w), (w + 8),
    // lane v tile node gal_lane(v).
    int tv[3];
    gal_lane(is3d, threadIdx.x & 31, tv);
    const int I[3] = {I0[0] + tv[0], I0[1] + tv[1], I0[2] + tv[2]};
    if (I[0] >= nc[0] || I[1] >= nc[1] || I[2] >= nc[2]) return;
    auto inside = [&](const int(&x)[3]) {
        return x[0] >= 0 && x[0] < nc[0] && x[1] >= 0 && x[1] < nc[1] && x[2] >= 0 && x[2] < nc[2];
    };
    auto weight = [&](const int(&x)[3]) {
        const double w = (double)__ldg(a.wc[0] + x[0]) * (double)__ldg(a.wc[1] + x[1]);
        return is3d ? w * (double)__ldg(a.wc[2] + x[2]) : w;
    };
    auto put = [&](int s, const int(&x)[3], double v) {
        const_cast<T *>(cr.st)[(s - cr.lo) * cr.n + gal_index(cr.pk, x[0], x[1], x[2])] = T(v);
    };
    const double *ci = col[(tv[0] + 1) + hx * ((tv[1] + 1) + hy * tv[2])];
    const double wc = weight(I);
    for (int q = threadIdx.x >> 5; q < (is3d ? 13 : 4); q += GAL_THREADS / 32) {
        const int s = gal_upper(is3d, q), sm = 2 * GAL_CENTRE - s; // (sm: the opposite offset's slot)
        int o[3];
        gal_offset(s, o);
        const int J[3] = {I[0] + o[0], I[1] + o[1], I[2] + o[2]}, K[3] = {I[0] - o[0], I[1] - o[1], I[2] - o[2]};
        if (!inside(K)) put(sm, I, 0.0); // (else node K's thread writes it)
        if (!inside(J)) {
            put(s, I, 0.0);
            continue;
        }
        double e = 0;
        const double *cj = col[(tv[0] + o[0] + 1) + hx * ((tv[1] + o[1] + 1) + hy * (tv[2] + o[2]))];
        const unsigned *L[3] = {pairs[0][tv[0]][o[0] + 1], pairs[1][tv[1]][o[1] + 1], pairs[2][tv[2]][o[2] + 1]};
        int neq[3], nne[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            neq[d] = counts[d][tv[d]][o[d] + 1][0];
            nne[d] = counts[d][tv[d]][o[d] + 1][1];
        }
        // the pairs L[d][b[d]] .. + m[d] along each axis; sel: the 7-point
        // row's entry (-1 - d: the pair's A(i, j) lies along axis d, its
        // side from the pair's slot)
        auto sum = [&](int b0, int m0, int b1, int m1, int b2, int m2, int sel) {
            for (int cz = b2; cz < b2 + m2; ++cz) {
                const unsigned pz = L[2][cz];
                for (int cy = b1; cy < b1 + m1; ++cy) {
                    const unsigned pyz = pz + L[1][cy];
                    for (int cx = b0; cx < b0 + m0; ++cx) {
                        const unsigned p = pyz + L[0][cx];
                        const double pi = ci[p & 31u], pj = cj[p >> 5 & 31u];
                        if (pi == 0 || pj == 0) continue;
                        const int li = (int)(p >> 10 & 2047u), slot = (int)(p >> 21 & 31u);
                        double aij;
                        if constexpr (S27) {
                            aij = slot == GAL_CENTRE ? arow[li]
                                                     : (double)fr.at(slot, coords[0][tv[0]][o[0] + 1][cx],
                                                                     coords[1][tv[1]][o[1] + 1][cy],
                                                                     coords[2][tv[2]][o[2] + 1][cz]);
                        } else {
                            aij = arow[li * AW + (sel >= 0 ? sel : 2 * (-sel - 1) + (slot > GAL_CENTRE))];
                        }
                        e += vol[li] * pi * aij * pj;
                    }
                }
            }
        };
        if constexpr (S27) {
            sum(0, neq[0] + nne[0], 0, neq[1] + nne[1], 0, neq[2] + nne[2], 0);
        } else {
            sum(0, neq[0], 0, neq[1], 0, neq[2], AW - 1);
            sum(neq[0], nne[0], 0, neq[1], 0, neq[2], -1);
            sum(0, neq[0], neq[1], nne[1], 0, neq[2], -2);
            sum(0, neq[0], 0, neq[1], neq[2], nne[2], -3);
        }
        put(s, I, e / wc);
        put(sm, J, e / weight(J));
    }
}

// The rows' sums R A P 1 come from P 1 = 1 - delta, delta formed without
// P 1's rounding: 0 on a coarse node, 1 on a point that is not fluid
// (odi_held), and on a node of a higher stage P's formula for 1 - delta
// written for delta,
//   delta_p = (rsum_p+ + sum_t w_t delta_{p+t}) / den_p
// (odi_collapse's w and den; gal_weights_kernel forms it from a Galerkin
// level, odi_p_kernel's ODI_DELTA from a 7-point one, in one pass).
// delta is then 0 exactly wherever no wall's coupling reaches through the
// stages, and so is A (1 - delta) in differences: on a region without a
// Dirichlet wall or point (a Neumann box, a sealed pocket of a mask) every
// coarse row's sum is 0 exactly.  Formed from P 1 they were rounding of
// either sign, a single node's diagonal of 1e-16 times its neighbours',
// whose inverse sent the cycle's correction far along the constants
// (V-cycles diverged, CG broke down on a Neumann box with beta from 0.1 to
// 10 point by point).
//
// The rows' sums: the centre slots = y = R A (1 - delta).  A walk launch
// over the coarse level.
template <class T>
__global__ void __launch_bounds__(WALK_THREADS)
    gal_sums_kernel(const Grid<T> g, const T *__restrict__ y, const GalRows<T> gr, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    if (!walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) return;
    for (int k = k0; k < k1; ++k)
        const_cast<T *>(gr.st)[(GAL_CENTRE - gr.lo) * gr.n + gal_index(gr.pk, i, j, k)] =
            y[g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz];
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 19 "src/poisson_gpu.cu"
#endif
// interpolate.h -- interpolation of corrections; Transfer<T>
#ifdef PGPU_SRC_LINES
#line 2 "src/interpolate.h"
#endif


namespace pgpu {

// Fine column (i, j)'s x / y taps: coarse storage offsets and weights.
template <class T, int NW> struct IpColumn {
    int ox[NW];
    int64_t oy[NW];
    T wx[NW], wy[NW];
};
template <class T, int NW>
__device__ __forceinline__ IpColumn<T, NW> ip_column(const Taps<T> &tp, int64_t csy, int i, int j)
{
    IpColumn<T, NW> c;
#pragma unroll
    for (int a = 0; a < NW; ++a) {
        c.ox[a] = __ldg(tp.ix + NW * i + a);
        c.wx[a] = __ldg(tp.wx + NW * i + a);
        c.oy[a] = (int64_t)__ldg(tp.iy + NW * j + a) * csy;
        c.wy[a] = __ldg(tp.wy + NW * j + a);
    }
    return c;
}
// (P e) at fine plane k of the column: e read with its ghosts (the wall
// values; zero for corrections).  Every z tap is read whatever its weight
// (unused taps point at a valid plane with weight 0): no load waits on a
// branch.
template <class T, int NW>
__device__ __forceinline__ T ip_point(const IpColumn<T, NW> &c, const Taps<T> &tp, const Grid<T> &coarse, const T *e,
                                      int k)
{
    const int64_t corigin = ghost_origin(coarse);
    auto plane = [&](int64_t o) {
        T v = T(0);
#pragma unroll
        for (int b = 0; b < NW; ++b) {
            const T *row = e + o + c.oy[b];
            T vx = T(0);
#pragma unroll
            for (int a = 0; a < NW; ++a) vx += c.wx[a] * row[c.ox[a]];
            v += c.wy[b] * vx;
        }
        return v;
    };
    if (!coarse.is3d) return plane(corigin);
    T v = T(0);
#pragma unroll
    for (int q = 0; q < NW; ++q)
        v += __ldg(tp.wz + NW * k + q) * plane(corigin + (int64_t)__ldg(tp.iz + NW * k + q) * coarse.sz);
    return v;
}
// (P e) at fine point (i, j, k), a fluid point of the general form with
// faces that couple nothing (shut: bit f, GenPoint's order; not 0): along
// each axis a parent behind a closed face (tap 0 lies below the point, tap
// 1 above) loses its weight and the other parent takes it all, so a
// correction does not cross a wall: the simplest operator-dependent
// interpolation.  A one-cell fluid film on a Dirichlet face behind a solid
// layer so takes the wall's 0, not the correction of the fluid beyond the
// layer (whose coarse node it shares; V-cycles diverged there), and fluid
// between the last coarse node and a closed coarse wall face the
// correction of its fluid neighbour, not the wall's 0.  A point on a parent
// (weights 1, 0) or closed on both sides keeps its weights.
// corigin: the coarse grid's ghost_origin; csz 0 in 2D.
template <class T>
__device__ __forceinline__ T ip_point_shut(const int *ix, const int *iy, const int *iz, const T *wx, const T *wy,
                                           const T *wz, int64_t csy, int64_t csz, int64_t corigin, const T *e, int i,
                                           int j, int k, unsigned shut)
{
    const Taps<T> tp{ix, iy, iz, wx, wy, wz};
    const IpColumn<T, 2> c = ip_column<T, 2>(tp, csy, i, j);
    T w[3][2] = {{c.wx[0], c.wx[1]}, {c.wy[0], c.wy[1]}, {T(1), T(0)}};
    int64_t oz[2] = {0, 0};
    if (csz)
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            w[2][q] = __ldg(tp.wz + 2 * k + q);
            oz[q] = (int64_t)__ldg(tp.iz + 2 * k + q) * csz;
        }
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        const T lo = (shut >> (2 * d)) & 1u ? T(0) : w[d][0], hi = (shut >> (2 * d + 1)) & 1u ? T(0) : w[d][1];
        if (lo + hi > T(0)) {
            w[d][0] = lo / (lo + hi);
            w[d][1] = hi / (lo + hi);
        }
    }
    T v = T(0);
#pragma unroll
    for (int q = 0; q < 2; ++q)
#pragma unroll
        for (int b = 0; b < 2; ++b)
#pragma unroll
            for (int a = 0; a < 2; ++a) {
                const T wt = w[2][q] * w[1][b] * w[0][a];
                if (wt != T(0)) v += wt * e[corigin + oz[q] + c.oy[b] + c.ox[a]];
            }
    return v;
}

// The same as a call, for kernels that meet these points inside their
// loops: their common path keeps its registers.  Its arguments are values,
// so that no kernel parameter needs an address (a copy to the stack in
// every thread).
template <class T>
__device__ __noinline__ T ip_point_shut_call(const int *ix, const int *iy, const int *iz, const T *wx, const T *wy,
                                             const T *wz, int64_t csy, int64_t csz, int64_t corigin, const T *e,
                                             int i, int j, int k, unsigned shut)
{
    return ip_point_shut(ix, iy, iz, wx, wy, wz, csy, csz, corigin, e, i, j, k, shut);
}

// v, the geometric (P e) at a fluid point (i, j, k) of the fine grid with
// mask byte b, or where it has faces that couple nothing (Grid::shut)
// ip_point_shut's value (CALL: by ip_point_shut_call).
template <bool CALL, class T>
__device__ __forceinline__ T ip_shut_or(const Grid<T> &fine, const Taps<T> &tp, const Grid<T> &coarse, const T *e,
                                        unsigned b, int i, int j, int k, T v)
{
    const unsigned s = gen_shut(fine, b);
    if (!s) return v;
    const int64_t csz = coarse.is3d ? coarse.sz : 0, co = ghost_origin(coarse);
    if (CALL) return ip_point_shut_call(tp.ix, tp.iy, tp.iz, tp.wx, tp.wy, tp.wz, coarse.sy, csz, co, e, i, j, k, s);
    return ip_point_shut(tp.ix, tp.iy, tp.iz, tp.wx, tp.wy, tp.wz, coarse.sy, csz, co, e, i, j, k, s);
}

// out = (ADD: in +) P e with NW taps per axis (2: the trilinear
// prolongation, 4: FMG's tricubic interpolation); in == out is allowed.  A
// walk launch on the fine grid: a thread loads everything its short column
// piece needs before it stores.
template <class T, int NW, bool ADD, bool REDUCE = false>
__global__ void __launch_bounds__(WALK_THREADS)
    interp_kernel(const Grid<T> fine, const Grid<T> coarse, const Taps<T> tp, const T *__restrict__ e, const T *in,
                  T *out, double *partials, int kchunk, int nyb, int nchunks)
{
    // Planes interpolated together: the trilinear taps load a piece (at most
    // walk_group + 1 planes, the first chunk's) at once; the tricubic ones
    // issue 64 loads per point already.
    constexpr int G = NW == 2 ? Tune<T>::walk_group + 1 : 1;
    Red3 acc{0, 0, 0};
    int i, j, k0, k1;
    if (walk_thread(fine.nx, fine.ny, fine.nz, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const IpColumn<T, NW> c = ip_column<T, NW>(tp, coarse.sy, i, j);
        const int64_t p0 = fine.base + i + (int64_t)j * fine.sy;
        for (int kb = k0; kb < k1; kb += G) {
            T v[G], old[G];
            unsigned mb[G]; // the mask bytes, loaded with the old values (stores to out come between)
#pragma unroll
            for (int q = 0; q < G; ++q) {
                const int k = kb + q;
                v[q] = old[q] = T(0);
                mb[q] = 0;
                if (k >= k1) continue;
                if (ADD) old[q] = in[p0 + (int64_t)k * fine.sz];
                mb[q] = gen_byte(fine, p0 + (int64_t)k * fine.sz);
                v[q] = ip_point(c, tp, coarse, e, k);
            }
#pragma unroll
            for (int q = 0; q < G; ++q)
                if (kb + q < k1) {
                    const int64_t p = p0 + (int64_t)(kb + q) * fine.sz;
                    if ((mb[q] & CELL_BITS) != PGPU_CELL_FLUID) { // (the general form) not an unknown: keeps its value
                        if (ADD && in != out) out[p] = old[q];
                        continue;
                    }
                    if constexpr (NW == 2 && ADD) v[q] = ip_shut_or<true>(fine, tp, coarse, e, mb[q], i, j, kb + q, v[q]);
                    out[p] = old[q] + v[q];
                    if (REDUCE) note_correction(acc, v[q], old[q] + v[q]);
                }
        }
    }
    if (REDUCE) write_partial(partials, acc);
}

// ---- interpolation through shared memory ----
// The prolongation with the correction add (NT = 2 taps per axis) and the
// FMG interpolation (NT = 4), where every fine node's taps along each axis
// are NT consecutive coarse storage indices from s[i] on (window_taps; no
// periodic wrap).  A block owns an IT_FX x IT_FY patch of fine columns and a
// chunk of fine planes.  Each coarse plane it needs is read once, as an
// IT_CX x IT_CY tile, interpolated along x (one value per tile row and fine
// column) and then along y; the last NT such planes stay in registers, and
// each fine plane is their z combination.  The direct kernel reads 8 (64)
// coarse values per fine point; this one about 1/8 of one.  in == out is
// allowed (ADD reads each fine value in the thread that writes it).  The next
// coarse tile's loads are in flight while one is interpolated, and the old
// fine values are loaded IT_OLD planes at a time.
template <class T, int NT, bool ADD, bool REDUCE = false, bool MASK = false>
__global__ void __launch_bounds__(IT_FX *IT_FY, 4)
    interp_tile_kernel(const Grid<T> fine, const Grid<T> coarse, const Windows<T> tp, const Taps<T> taps,
                       const T *__restrict__ e, const T *in, T *out, double *partials, int kchunk, int nyb,
                       int nchunks)
{
    constexpr int NTH = IT_FX * IT_FY, CT = IT_CX * IT_CY, SL = (CT + NTH - 1) / NTH;
    __shared__ T ct[CT];           // the coarse tile
    __shared__ T xr[IT_CY * IT_FX]; // interpolated along x
    Red3 acc{0, 0, 0};
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) { // uniform per block
        if (REDUCE) write_partial(partials, acc);
        return;
    }
    const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + IT_FX * ty;
    const int i0 = blockIdx.x * IT_FX, j0 = yb * IT_FY, i = i0 + tx, j = j0 + ty;
    const int k0 = zc * kchunk, k1 = min(k0 + kchunk, fine.nz);
    const bool own = i < fine.nx && j < fine.ny;
    const int ic = min(i, fine.nx - 1), jc = min(j, fine.ny - 1);
    const int cx0 = __ldg(tp.sx + i0), cy0 = __ldg(tp.sy + j0); // the tile's first coarse column / row
    const int px = __ldg(tp.sx + ic) - cx0, py = __ldg(tp.sy + jc) - cy0;
    T wx[NT], wy[NT];
#pragma unroll
    for (int a = 0; a < NT; ++a) {
        wx[a] = __ldg(tp.wx + ic * NT + a);
        wy[a] = __ldg(tp.wy + jc * NT + a);
    }
    // Coarse storage (p, q, s) is at corigin + p + q sy + s sz; tile element
    // t = tid + NTH m is row t / IT_CX, column t % IT_CX (0 outside storage).
    const int64_t corigin = coarse.base - 1 - coarse.sy - (coarse.is3d ? coarse.sz : 0);
    int coff[SL];
    unsigned cin = 0;
#pragma unroll
    for (int m = 0; m < SL; ++m) {
        const int t = tid + NTH * m, rr = t / IT_CX, cc = t - rr * IT_CX;
        coff[m] = min(cy0 + rr, coarse.ny + 1) * (int)coarse.sy + min(cx0 + cc, coarse.nx + 1); // in the plane
        if (t < CT && cy0 + rr <= coarse.ny + 1 && cx0 + cc <= coarse.nx + 1) cin |= 1u << m;
    }
    // The coarse tile of storage plane s, into registers (clamped to the
    // storage planes: the prefetch past the last one is never used).
    T nxt[SL];
    auto fetch = [&](int s) {
        const T *P = e + corigin + (coarse.is3d ? (int64_t)min(s, coarse.nz + 1) * coarse.sz : 0);
#pragma unroll
        for (int m = 0; m < SL; ++m) nxt[m] = (cin >> m) & 1 ? P[coff[m]] : T(0);
    };
    // The plane held in nxt, interpolated to this thread's (i, j); nxt then
    // takes plane s_next, whose loads are in flight while this one is summed.
    auto plane = [&](int s_next) {
#pragma unroll
        for (int m = 0; m < SL; ++m)
            if (tid + NTH * m < CT) ct[tid + NTH * m] = nxt[m];
        __syncthreads(); // the tile is complete; every thread is done with xr of the last plane
        if (fine.is3d) fetch(s_next);
#pragma unroll
        for (int b = ty; b < IT_CY; b += IT_FY) {
            const T *row = ct + b * IT_CX + px;
            T v = T(0);
#pragma unroll
            for (int a = 0; a < NT; ++a) v += wx[a] * row[a];
            xr[b * IT_FX + tx] = v;
        }
        __syncthreads(); // xr is complete; every thread is done with the tile
        T v = T(0);
#pragma unroll
        for (int b = 0; b < NT; ++b) v += wy[b] * xr[(py + b) * IT_FX + tx];
        return v;
    };
    const int64_t p0 = fine.base + i + (int64_t)j * fine.sy;
    if (!fine.is3d) {
        const T old = ADD && own ? in[p0] : T(0);
        fetch(0);
        T v = plane(0);
        const unsigned mb = MASK && own ? gen_byte(fine, p0) : 0u;
        if (own && (mb & CELL_BITS) == PGPU_CELL_FLUID) {
            if constexpr (NT == 2 && ADD) v = ip_shut_or<false>(fine, taps, coarse, e, mb, i, j, 0, v);
            out[p0] = old + v;
            if (REDUCE) note_correction(acc, v, old + v);
        } else if (own && ADD && in != out) {
            out[p0] = old;
        }
        if (REDUCE) write_partial(partials, acc);
        return;
    }
    T Pz[NT]; // the planes cur .. cur + NT - 1
    int cur = __ldg(tp.sz + k0);
    fetch(cur);
#pragma unroll
    for (int c = 0; c < NT; ++c) Pz[c] = plane(cur + c + 1);
    // fine planes whose old values are loaded together (the double mask
    // path, which also holds the mask bytes, half as many: no spills)
    constexpr int G = MASK && sizeof(T) == 8 ? IT_OLD / 2 : IT_OLD;
    bool deferred = false;    // a point of this thread's with faces that couple nothing
    for (int kb = k0; kb < k1; kb += G) {
        T old[G];
        unsigned mb[G]; // MASK: the mask bytes, loaded with the old values (stores to out come between)
#pragma unroll
        for (int q = 0; q < G; ++q) {
            old[q] = ADD && own && kb + q < k1 ? in[p0 + (int64_t)(kb + q) * fine.sz] : T(0);
            mb[q] = MASK && own && kb + q < k1 ? gen_byte(fine, p0 + (int64_t)(kb + q) * fine.sz) : 0u;
        }
#pragma unroll
        for (int q = 0; q < G; ++q) {
            const int k = kb + q;
            if (k >= k1) break;              // uniform per block
            const int zs = __ldg(tp.sz + k); // never moves back (host check)
            while (cur < zs) {
#pragma unroll
                for (int c = 0; c + 1 < NT; ++c) Pz[c] = Pz[c + 1];
                Pz[NT - 1] = plane(cur + NT + 1);
                ++cur;
            }
            T v = T(0);
#pragma unroll
            for (int c = 0; c < NT; ++c) v += __ldg(tp.wz + k * NT + c) * Pz[c];
            const int64_t p = p0 + (int64_t)k * fine.sz;
            const bool fluid = own && (mb[q] & CELL_BITS) == PGPU_CELL_FLUID;
            const bool shut = MASK && NT == 2 && ADD && fluid && gen_shut(fine, mb[q]);
            if (fluid && !shut) {
                out[p] = old[q] + v;
                if (REDUCE) note_correction(acc, v, old[q] + v);
            } else if (own && ADD && in != out) { // (the general form) not an unknown, or shut: keeps its value
                out[p] = old[q];
            }
            deferred |= shut;
        }
    }
    // The points with faces that couple nothing, after the others: their
    // rule's registers are not live in the loop above.
    if constexpr (MASK && NT == 2 && ADD)
        if (deferred)
            for (int k = k0; k < k1; ++k) {
                const int64_t p = p0 + (int64_t)k * fine.sz;
                const unsigned mb = gen_byte(fine, p);
                if ((mb & CELL_BITS) != PGPU_CELL_FLUID || !gen_shut(fine, mb)) continue;
                const T v = ip_shut_or<false>(fine, taps, coarse, e, mb, i, j, k, T(0)), o = out[p];
                out[p] = o + v;
                if (REDUCE) note_correction(acc, v, o + v);
            }
    if (REDUCE) write_partial(partials, acc);
}

// FMG: the coarse problem's boundary data, restricted across each data face
// (of those in `faces`) from the next finer level's ghosts with the lateral
// restriction weights.  blockIdx.z = face; threads cover the coarse face
// (interior lateral extent).
template <class T>
__global__ void ghost_restrict_kernel(const Grid<T> fine, const Grid<T> coarse, const Xfer<T> x,
                                      const T *__restrict__ uf, T *__restrict__ uc0, T *__restrict__ uc1, int faces)
{
    const int face = blockIdx.z;
    const int axis = face >> 1, hi = face & 1;
    const int dmask[6] = {coarse.dxl, coarse.dxh, coarse.dyl, coarse.dyh, coarse.dzl, coarse.dzh};
    if (!dmask[face] || !((faces >> face) & 1)) return;
    const int nfine[3] = {fine.nx, fine.ny, fine.nz}, ncoarse[3] = {coarse.nx, coarse.ny, coarse.nz};
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int n1 = ncoarse[a1], n2 = coarse.is3d ? ncoarse[a2] : 1;
    const int *cnt[3] = {x.cntx, x.cnty, x.cntz};
    const int *idx[3] = {x.idxx, x.idxy, x.idxz};
    const T *rw[3] = {x.rwx, x.rwy, x.rwz};
    const int64_t fstr[3] = {1, fine.sy, fine.sz}, cstr[3] = {1, coarse.sy, coarse.sz};
    // Ghost position along the face's own axis, relative to base (interior 0).
    const int64_t fg = (hi ? nfine[axis] : -1) * fstr[axis];
    const int64_t cg = (hi ? ncoarse[axis] : -1) * cstr[axis];
    const int64_t total = (int64_t)n1 * n2;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        const int I1 = (int)(t % n1), I2 = (int)(t / n1);
        const bool use2 = coarse.is3d || a2 != 2;
        const int c2n = use2 ? cnt[a2][I2] : 1;
        T acc = T(0);
        for (int b = 0; b < c2n; ++b) {
            const int f2 = use2 ? idx[a2][I2 * MAX_CHILDREN + b] : 0;
            const T w2 = use2 ? rw[a2][I2 * MAX_CHILDREN + b] : T(1);
            T acc1 = T(0);
            for (int a = 0; a < cnt[a1][I1]; ++a) {
                const int f1 = idx[a1][I1 * MAX_CHILDREN + a];
                acc1 += rw[a1][I1 * MAX_CHILDREN + a] * uf[fine.base + fg + f1 * fstr[a1] + (use2 ? f2 * fstr[a2] : 0)];
            }
            acc += w2 * acc1;
        }
        const int64_t pc = coarse.base + cg + I1 * cstr[a1] + (use2 ? I2 * cstr[a2] : 0);
        uc0[pc] = acc;
        uc1[pc] = acc;
    }
}

// FMG: edge and corner ghosts between two (three) Dirichlet faces, which the
// tricubic interpolation reads next to an edge.  An edge value is the
// bilinear extrapolation from its square's other three corners (two face
// ghosts and the nearest interior point of the solved coarse problem),
// f(0,0) = f(0,1) + f(1,0) - f(1,1), exact for bilinear data and second-order
// accurate otherwise; corners (pass 1) likewise from the other seven corners
// of their cube, edges included.  Pass 0 does edges, pass 1 corners.
// The threads walk only the frame's edges (edge_points of them), not the
// whole array.
__host__ __device__ inline int64_t edge_points(int nx, int ny, int nz, bool is3d)
{
    return is3d ? 4 * ((int64_t)nx + ny + nz) + 8 : 4;
}


template <class T> __global__ void ghost_edges_kernel(const Grid<T> g, T *__restrict__ u, int pass)
{
    const int64_t ex = g.nx + 2, ey = g.ny + 2, ez = g.is3d ? g.nz + 2 : 1;
    const int64_t total = edge_points(g.nx, g.ny, g.nz, g.is3d != 0);
    const int64_t origin = g.base - 1 - g.sy - (g.is3d ? g.sz : 0);
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        // Point t of the frame's edges: 3D, the x, y and z edges without
        // their ends, then the 8 corners; 2D, the 4 corners.
        int64_t I, J, K = 0, r = t;
        if (!g.is3d) {
            I = (r & 1) ? ex - 1 : 0;
            J = (r & 2) ? ey - 1 : 0;
        } else if (r < 4 * (int64_t)g.nx) {
            I = 1 + r % g.nx; J = ((r / g.nx) & 1) ? ey - 1 : 0; K = ((r / g.nx) & 2) ? ez - 1 : 0;
        } else if ((r -= 4 * (int64_t)g.nx) < 4 * (int64_t)g.ny) {
            J = 1 + r % g.ny; I = ((r / g.ny) & 1) ? ex - 1 : 0; K = ((r / g.ny) & 2) ? ez - 1 : 0;
        } else if ((r -= 4 * (int64_t)g.ny) < 4 * (int64_t)g.nz) {
            K = 1 + r % g.nz; I = ((r / g.nz) & 1) ? ex - 1 : 0; J = ((r / g.nz) & 2) ? ey - 1 : 0;
        } else {
            r -= 4 * (int64_t)g.nz;
            I = (r & 1) ? ex - 1 : 0; J = (r & 2) ? ey - 1 : 0; K = (r & 4) ? ez - 1 : 0;
        }
        const int gx = I == 0 ? -1 : (I == ex - 1 ? 1 : 0);
        const int gy = J == 0 ? -1 : (J == ey - 1 ? 1 : 0);
        const int gz = !g.is3d ? 0 : (K == 0 ? -1 : (K == ez - 1 ? 1 : 0));
        const int nghost = (gx != 0) + (gy != 0) + (gz != 0);
        if (nghost != 2 + pass) continue;
        const bool dx = gx == 0 || ((g.dirichlet >> (gx < 0 ? 0 : 1)) & 1);
        const bool dy = gy == 0 || ((g.dirichlet >> (gy < 0 ? 2 : 3)) & 1);
        const bool dz = gz == 0 || ((g.dirichlet >> (gz < 0 ? 4 : 5)) & 1);
        if (!(dx && dy && dz)) continue;
        const int64_t p = origin + I + J * g.sy + K * g.sz;
        // One step inward along each ghost axis.
        const int64_t s[3] = {gx ? -gx : 0, gy ? -gy * g.sy : 0, gz ? -gz * g.sz : 0};
        T v;
        if (nghost == 2) {
            int64_t a = 0, b = 0; // the two ghost axes' steps
            bool first = true;
            for (int d = 0; d < 3; ++d)
                if (s[d]) { if (first) { a = s[d]; first = false; } else b = s[d]; }
            v = u[p + a] + u[p + b] - u[p + a + b];
        } else {
            v = u[p + s[0]] + u[p + s[1]] + u[p + s[2]] - u[p + s[0] + s[1]] - u[p + s[0] + s[2]] -
                u[p + s[1] + s[2]] + u[p + s[0] + s[1] + s[2]];
        }
        u[p] = v;
    }
}

// One level pair's transfers: the tables on the device, which kernels are
// eligible, and their launches.  Built with the hierarchy (hierarchy.h).
template <class T> struct Transfer {
    Grid<T> fg{}, cg{};       // the fine level and the next coarser one
    Xfer<T> rc{}, rf{};       // the cycle's restriction; FMG's data restriction (moment-free rows)
    Taps<T> p2{}, p4{};       // direct interpolation: trilinear, tricubic
    Windows<T> w2{}, w4{};    // the same in windows, for the tiles
    ColLaunch fwalk{}, cwalk{}, rs{}, it{}; // walk launches over the fine / coarse level; the tiles'
    ColLaunch ot{};           // level 0's operator-dependent transfers (odi_p_kernel, odi_r_kernel)
    bool rs_tile = false;     // restriction through restrict_tile_kernel
    bool rr_fused = false;    // ... and the residual's through restrict_residual_kernel
    // ... and through beta_tile_kernel's RR walk where the fine level is
    // beta_tiled for its residual: bt_rr the most children per coarse node
    // on x and y, 3 or 4 (0: the runs do not fit its tiles); brr: its launch
    int bt_rr = 0;
    ColLaunch brr{};
    bool pl_tile = false, fi_tile = false; // prolongation / FMG interpolation through interp_tile_kernel
    // ... and folded into a beta_tile_kernel smoothing pass (PRO): the
    // windows w2 fit its coarse tiles, z's move by at most one plane a plane
    bool bt_pro = false;
    // Operator-dependent transfers (odi.h): odi_ok where every coarsened
    // axis keeps nodes (a single GPU), odi where the hierarchy takes them
    // (beta that jumps, not across a periodic axis: Hierarchy::general_apply).
    // With odi the coarse level is a Galerkin level (Level::gr); fr: the fine
    // level's rows as the transfers read them.
    OdiAxes<T> oa{};
    GalRows<T> fr{};
    T *pw = nullptr; // with fr.st: P's weights (odi_pw_at), stored by the Galerkin build
    bool odi_ok = false, odi = false;

    enum Route { AUTO = 0, DIRECT = 1, TILED = 2 }; // AUTO: the tiles where eligible
    static bool tiled(int route, bool eligible) { return route == AUTO ? eligible : route == TILED; }

    // fc = R (r - shift) on the coarse interior (shift may be NULL); fmg:
    // FMG's data rows.
    pgpu_status restrict_(Env &env, const T *r, const T *shift, T *fc, bool fmg = false, int route = AUTO) const
    {
        char *err = env.err;
        const Xfer<T> &x = fmg ? rf : rc;
        if (tiled(route, rs_tile)) launch(rs, 0, env.st, restrict_tile_kernel<T>, fg, cg, x, r, shift, fc);
        else launch(cwalk, 0, env.st, restrict_kernel<T>, fg, cg, x, r, shift, fc);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // fc = R (f - shift - A u) in one pass (where rr_fused).
    pgpu_status restrict_residual(Env &env, const T *u, const T *f, const T *shift, T *fc) const
    {
        char *err = env.err;
        if constexpr (Tune<T>::rr_fused) {
            launch(rs, rr_smem_bytes<T>(), env.st, restrict_residual_kernel<T>, fg, cg, rc, u, f, shift, fc);
            PGPU_LAUNCHED();
            return PGPU_SUCCESS;
        } else {
            (void)u, (void)f, (void)shift, (void)fc;
            return record(err, PGPU_ERROR_UNSUPPORTED, "the one-pass residual restriction is built for double only");
        }
    }
    // The same by beta_tile_kernel's RR walk (where bt_rr and the fine level
    // is beta_tiled for its residual).
    pgpu_status restrict_beta_residual(Env &env, const T *u, const T *f, const T *shift, T *fc) const
    {
        char *err = env.err;
        if constexpr (Tune<T>::bt_rr) {
            launch(brr, BetaTile<T>::SMEM_RR, env.st,
                   bt_rr == 3 ? beta_tile_kernel<T, true, false, 3> : beta_tile_kernel<T, true, false, 4>, fg, u, fc,
                   f, shift, T(0), 0, cg, rc, (const T *)nullptr, Windows<T>{}, (T *)nullptr);
            PGPU_LAUNCHED();
            return PGPU_SUCCESS;
        } else {
            (void)u, (void)f, (void)shift, (void)fc;
            return record(err, PGPU_ERROR_UNSUPPORTED, "the beta walk's residual restriction is built for float only");
        }
    }
    // out = in + P e, the coarse-grid correction (in == out allowed).  With
    // partials, also the correction's size per block (note_correction);
    // *blocks gets their count.
    pgpu_status prolong(Env &env, const T *e, const T *in, T *out, int route = AUTO, double *partials = nullptr,
                        size_t *blocks = nullptr) const
    {
        char *err = env.err;
        const bool tile = tiled(route, pl_tile);
        if (blocks) *blocks = blocks_of(tile ? it : fwalk);
        const bool mk = fg.mk != nullptr;
        if (tile && partials)
            launch(it, 0, env.st, mk ? interp_tile_kernel<T, 2, true, true, true> : interp_tile_kernel<T, 2, true, true>,
                   fg, cg, w2, p2, e, in, out, partials);
        else if (tile)
            launch(it, 0, env.st, mk ? interp_tile_kernel<T, 2, true, false, true> : interp_tile_kernel<T, 2, true>, fg,
                   cg, w2, p2, e, in, out, (double *)nullptr);
        else if (partials)
            launch(fwalk, 0, env.st, interp_kernel<T, 2, true, true>, fg, cg, p2, e, in, out, partials);
        else
            launch(fwalk, 0, env.st, interp_kernel<T, 2, true>, fg, cg, p2, e, in, out, (double *)nullptr);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // fc = R r by the operator-dependent weights (odi).
    pgpu_status odi_restrict(Env &env, const T *r, T *fc) const
    {
        char *err = env.err;
        if (fr.st) launch(cwalk, 0, env.st, odi_rw_kernel<T>, fg, cg, oa, (const T *)pw, r, fc);
        else launch(ot, 0, env.st, fg.mk ? odi_r_kernel<T, true> : odi_r_kernel<T, false>, fg, cg, oa, r, fc);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // out = in + P e by the operator-dependent weights (in NULL: out = P e;
    // in == out allowed); partials as prolong's.
    pgpu_status odi_prolong(Env &env, const T *e, const T *in, T *out, double *partials = nullptr,
                            size_t *blocks = nullptr) const
    {
        char *err = env.err;
        if (fr.st) {
            if (blocks) *blocks = blocks_of(fwalk);
            if (partials) launch(fwalk, 0, env.st, odi_pw_kernel<T, true>, fg, cg, oa, (const T *)pw, e, in, out, partials);
            else launch(fwalk, 0, env.st, odi_pw_kernel<T, false>, fg, cg, oa, (const T *)pw, e, in, out, (double *)nullptr);
        } else {
            if (blocks) *blocks = blocks_of(ot);
            const bool mk = fg.mk != nullptr;
            if (partials)
                launch(ot, 0, env.st, mk ? odi_p_kernel<T, ODI_MEASURE, true> : odi_p_kernel<T, ODI_MEASURE, false>, fg,
                       cg, oa, e, in, out, partials);
            else
                launch(ot, 0, env.st, mk ? odi_p_kernel<T, ODI_ADD, true> : odi_p_kernel<T, ODI_ADD, false>, fg, cg,
                       oa, e, in, out, (double *)nullptr);
        }
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // dl = 1 - P 1 from a 7-point level (gal_sums_kernel), one pass.
    pgpu_status odi_delta(Env &env, T *dl) const
    {
        char *err = env.err;
        launch(ot, 0, env.st, fg.mk ? odi_p_kernel<T, ODI_DELTA, true> : odi_p_kernel<T, ODI_DELTA, false>, fg, cg, oa,
               (const T *)nullptr, (const T *)nullptr, dl, (double *)nullptr);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // u = the tricubic interpolant of e (FMG).
    pgpu_status interpolate(Env &env, const T *e, T *u, int route = AUTO) const
    {
        char *err = env.err;
        if (tiled(route, fi_tile))
            launch(it, 0, env.st,
                   fg.mk ? interp_tile_kernel<T, 4, false, false, true> : interp_tile_kernel<T, 4, false>, fg, cg, w4,
                   p4, e, (const T *)nullptr, u, (double *)nullptr);
        else launch(fwalk, 0, env.st, interp_kernel<T, 4, false>, fg, cg, p4, e, (const T *)nullptr, u, (double *)nullptr);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    // The coarse problem's boundary data (FMG), restricted from the fine
    // ghosts of uf into the coarse ghosts of uc0 and uc1 (the faces in
    // `faces`).
    pgpu_status restrict_ghosts(Env &env, const T *uf, T *uc0, T *uc1, int faces = 63) const
    {
        char *err = env.err;
        const int64_t face = std::max<int64_t>({(int64_t)cg.nx * cg.ny, (int64_t)cg.nx * cg.nz, (int64_t)cg.ny * cg.nz});
        const unsigned blocks = (unsigned)std::min<int64_t>((face + 255) / 256, 4096);
        ghost_restrict_kernel<T><<<dim3(blocks, 1, cg.is3d ? 6 : 4), 256, 0, env.st>>>(fg, cg, rf, uf, uc0, uc1, faces);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
};

// Edge and corner ghosts of u on level g from its face ghosts and interior
// (FMG, before interpolating from g; see ghost_edges_kernel).
template <class T> static pgpu_status edge_ghosts(Env &env, const Grid<T> &g, T *u)
{
    char *err = env.err;
    const int64_t all = edge_points(g.nx, g.ny, g.nz, g.is3d != 0);
    const unsigned blocks = (unsigned)std::min<int64_t>((all + 255) / 256, 4096);
    for (int pass = 0; pass < (g.is3d ? 2 : 1); ++pass) {
        ghost_edges_kernel<T><<<blocks, 256, 0, env.st>>>(g, u, pass);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

// The transfers' shared-memory opt-in (once per handle).
template <class T> static pgpu_status transfer_setup(Env &env)
{
    char *err = env.err;
    if constexpr (Tune<T>::rr_fused)
        if (rr_smem_bytes<T>() <= (size_t)env.optin)
            PGPU_CUDA(cudaFuncSetAttribute(restrict_residual_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)rr_smem_bytes<T>()));
    return PGPU_SUCCESS;
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 20 "src/poisson_gpu.cu"
#endif
// general.h -- masks and beta: the general form's tables, checks and face fractions
#ifdef PGPU_SRC_LINES
#line 2 "src/general.h"
#endif


namespace pgpu {

// The general operator's data: cell types and face fractions on every level,
// built on the device from the caller's mask and beta (pgpu_set_mask,
// pgpu_set_coefficients), and the fine grid's connected fluid regions with
// the projection of the singular ones.
//  - Level 0: a copy of the mask (ghosts read as fluid) and, with beta, face
//    fractions = beta's harmonic face means (beta itself at box faces).
//    gen_couplings (operator.h) multiplies the table form's couplings by
//    them and drops faces towards solid points.
//  - Coarse cell types by the seed's rule: a Dirichlet core child (the fine
//    nodes a coarse node stands for: its restriction row's largest weights)
//    makes the coarse point Dirichlet (its correction is held at 0), else a
//    fluid child anywhere in its restriction row makes it fluid, else it is
//    solid.  So the coarse fluid region covers every interpolation parent of
//    a fine fluid point next to a solid wall, and the prolongation there
//    interpolates corrections instead of the zeros of solid coarse points
//    (which held the correction near the wall down, as a Dirichlet wall
//    would): in a CPU model of this cycle the V(2,1) factor on a solid
//    sphere of radius 0.3 was 0.31 / 0.40 / 0.53 at 63^3 / 127^3 / 255^3
//    with core children only, 0.047 / 0.05 / 0.047 with the whole row (the
//    empty box: 0.046).  Dirichlet stays with the core: a dilated held
//    region would pin corrections one fine node inside the fluid.
//  - Coarse face fractions, as HPGMG-FV and AMReX average face
//    coefficients: the mean of the fine faces that lie on the coarse face
//    (across it weighted by the restriction row; along it the fine face at
//    its midpoint, or the two that meet at a fine node under vertex
//    coarsening; a wall face every fine face between its node and the
//    wall).  A fine face towards a solid point counts 0.  The
//    averages err on the strong side (a wall inside a coarse cell does not
//    show), which slows a cycle at worst; the series (harmonic) average
//    along the face's axis, tried first, errs on the weak side and made
//    V-cycles diverge on thin walls next to Neumann faces (with the linear
//    prolongation; where beta jumps the series goes with odi.h's).  At a box face
//    the strong side costs more: an open coarse wall face couples the
//    coarse fluid to the face's value where the fine fluid has a zero-flux
//    wall (a solid layer along a Dirichlet face converged at 0.5 to 0.97
//    per V-cycle).  So a coarse wall face whose path holds a face of
//    fraction 0 is closed.
//    Faces between a coarse fluid and a coarse Dirichlet point take the
//    distance to the fine Dirichlet points instead (gen_distance_kernel).
//  - The coarse operator stays the finite-volume form on the coarse nodes
//    (fluxes over the whole coarse cell), so the plain restriction is
//    consistent with it: solid and Dirichlet children contribute 0 because
//    the residual is 0 there.  Renormalising the weights over non-solid
//    children (the seed's choice, for an operator scaled by neighbour
//    counts) would overweight a partly solid coarse cell's right-hand side.
//  - Regions: union-find on the fluid points (Playne and Hawick's
//    atomicMin linking; the label of a region is its smallest point index,
//    so the labelling is deterministic), a flag on each root whose region
//    touches a Dirichlet point or face, then a compact number for each
//    singular region.  Per solve, each singular region's mean of b is
//    removed into a workspace copy of f and, after the method, its mean of u
//    from u.  The sums are 128-bit integers (fixed point scaled by the
//    largest value), so they are exact and independent of the order of the
//    atomics.

constexpr int MAX_PATH = 5;
constexpr unsigned WIN_OPEN_FLUID = 2u | 4u | 8u | 16u; // gen_coarse_kernel's window: fluid, every low face open
constexpr unsigned WIN_OPEN_DIRICHLET = 1u | 4u | 8u | 16u; // Dirichlet, every low face open
constexpr uint32_t LAB_NONE = 0xffffffffu;     // not fluid
constexpr uint32_t LAB_REGULAR = 0xc0000000u;  // fluid, in a region that touches Dirichlet
constexpr uint32_t LAB_SINGULAR = 0x80000000u; // | id: fluid, in singular region id
constexpr uint32_t LAB_INDEX = 0x7fffffffu;
constexpr unsigned GEN_BAD_TYPE = 1, GEN_FLUID = 2, GEN_BAD_BETA = 4, GEN_TOO_MANY = 8, GEN_HELD = 16,
                   GEN_WIDE_BETA = 32;
// beta's largest over its smallest value above which it jumps: the coarse
// levels then follow the operator (odi.h); below, V-cycles keep the box's
// rate with the averaged coarse coefficients and the geometric transfers.
constexpr double JUMP_RATIO = 10.0;

// The fine faces of one axis of a level pair that coarse face I (0..nc,
// between nodes I-1 and I; 0 and nc the walls, or the wrap) averages:
// idx[I * MAX_PATH + m] (0..n), m < cnt[I].
static bool path_table(const Axis &a, const Axis &c, bool coarsened, std::vector<int> &cnt, std::vector<int> &idx)
{
    const int n = a.n, nc = c.n;
    cnt.assign(nc + 1, 0);
    idx.assign((size_t)(nc + 1) * MAX_PATH, 0);
    if (!coarsened || !a.active) {
        for (int I = 0; I <= nc; ++I) {
            cnt[I] = 1;
            idx[(size_t)I * MAX_PATH] = I;
        }
        return true;
    }
    const bool per = a.lo == PGPU_BC_PERIODIC;
    auto pos = [&](const Axis &x, int i) {
        if (i < 0) return per ? x.x[x.n - 1] - x.L : x.xlo;
        if (i >= x.n) return per ? x.x[0] + x.L : x.xhi;
        return x.x[i];
    };
    const int last = per ? n - 1 : n; // fine faces 0..last, face i between nodes i - 1 and i
    for (int I = 0; I <= nc; ++I) {
        // The fine faces at the coarse face's midpoint: one where it falls
        // inside a fine face (cell coarsening), the two that meet at a fine
        // node (vertex coarsening).  Faces lie in order along the axis, so
        // the walk starts at the first whose high end reaches mid (a
        // bisection) and ends at the first whose low end lies past it.
        // A wall face takes every fine face between its node and the wall
        // (the midpoint may miss the fine wall face, and the coarse build
        // closes a wall face whose path holds a closed one).
        const bool wall = !per && (I == 0 || I == nc);
        if (wall) {
            const double lo = pos(c, I - 1), hi = pos(c, I);
            for (int i = 0; i <= last; ++i) {
                const double flo = pos(a, i - 1), fhi = pos(a, i), tol = 1e-9 * (fhi - flo);
                if (fhi <= lo + tol || flo >= hi - tol) continue;
                if (cnt[I] == MAX_PATH) return false;
                idx[(size_t)I * MAX_PATH + cnt[I]] = i;
                ++cnt[I];
            }
            if (cnt[I] == 0) return false;
            continue;
        }
        const double mid = 0.5 * (pos(c, I - 1) + pos(c, I));
        for (int s = per ? -1 : 0; s <= (per ? 1 : 0); ++s) {
            auto flo = [&](int i) { return pos(a, i - 1) + s * a.L; };
            auto fhi = [&](int i) { return pos(a, i) + s * a.L; };
            int lo = 0, hi = last + 1; // the first face with fhi + tol >= mid, or last + 1
            while (lo < hi) {
                const int m = lo + (hi - lo) / 2;
                if (fhi(m) + 1e-9 * (fhi(m) - flo(m)) < mid) lo = m + 1;
                else hi = m;
            }
            for (int i = lo; i <= last; ++i) {
                const double tol = 1e-9 * (fhi(i) - flo(i));
                if (mid < flo(i) - tol) break;
                if (mid > fhi(i) + tol) continue;
                if (cnt[I] == MAX_PATH) return false;
                idx[(size_t)I * MAX_PATH + cnt[I]] = i;
                ++cnt[I];
            }
        }
        if (cnt[I] == 0) return false;
    }
    return true;
}

// One axis of a level pair as gen_coarse_kernel reads it, for tiles of tb
// coarse positions: per position (padded to whole tiles) its row's child
// count, path count, core children and whether it is a wall face (row.x:
// m | np << 8 | core << 16 | wall << 24)
// and the slots of its children and path faces (bytes of y, z, w), and its
// weights; per tile the count of fine slots, then their fine indices (n: the
// high wall face's slot).
struct CoarseAxis {
    const int4 *row;
    const double *w;
    const int *slot;
    int tb, nt, stride; // positions per tile, tiles, one tile's slot list length
    FastDiv by_nt;      // division by nt
};

// The core children of coarse row P (bit c: child c): those of more than
// half the row's largest restriction weight.  A child with half of it (a
// kept node's neighbours) must not count where the positions' rounding
// leaves its weight a few ulps above half: between Dirichlet walls at even
// sizes (h = 1/(n+1)) that made a fluid node's neighbour core, so a free
// surface moved a node down on such levels (V-cycles at 0.3 to 0.8 per
// cycle).
static unsigned row_core(const AxisTransfer &t, int P)
{
    const int m = t.rcnt[(size_t)P];
    double wmax = 0;
    for (int c = 0; c < m; ++c) wmax = std::max(wmax, t.rw[(size_t)P * MAX_CHILDREN + c]);
    unsigned core = 0;
    for (int c = 0; c < m; ++c) core |= (t.rw[(size_t)P * MAX_CHILDREN + c] > (0.5 + 1e-9) * wmax ? 1u : 0u) << c;
    return core;
}

// The host side of a CoarseAxis: rows from the restriction t and the path
// table (cnt, idx) over `span` positions (0..nc, or the one plane of a 2D
// z axis); false if a tile touches more than 255 fine slots.
struct CoarseAxisHost {
    std::vector<int> row, slot;
    std::vector<double> w;
    int tb = 1, nt = 1, smax = 0;
};
static bool coarse_axis_table(const Axis &a, const AxisTransfer &t, const std::vector<int> &cnt,
                              const std::vector<int> &idx, int nc, int span, int tb, CoarseAxisHost &h)
{
    const int n = a.n;
    const bool per = a.lo == PGPU_BC_PERIODIC;
    h.tb = tb;
    h.nt = (span + tb - 1) / tb;
    h.row.assign((size_t)h.nt * tb * 4, 0);
    h.w.assign((size_t)h.nt * tb * MAX_CHILDREN, 0.0);
    std::vector<std::vector<int>> lists((size_t)h.nt);
    h.smax = 0;
    auto path_fine = [&](int P, int e) { const int fi = idx[(size_t)P * MAX_PATH + e]; return per ? fi % n : fi; };
    for (int it = 0; it < h.nt; ++it) {
        std::vector<int> &s = lists[(size_t)it];
        for (int P = it * tb; P < std::min(span, (it + 1) * tb); ++P) {
            if (P < nc)
                for (int c = 0; c < t.rcnt[P]; ++c) s.push_back(t.ridx[(size_t)P * MAX_CHILDREN + c]);
            for (int e = 0; e < cnt[P]; ++e) s.push_back(path_fine(P, e));
        }
        std::sort(s.begin(), s.end());
        s.erase(std::unique(s.begin(), s.end()), s.end());
        if (s.size() > 255) return false;
        h.smax = std::max(h.smax, (int)s.size());
        for (int P = it * tb; P < std::min(span, (it + 1) * tb); ++P) {
            const int m = P < nc ? t.rcnt[P] : 0, np = cnt[P];
            unsigned char sl[MAX_CHILDREN + MAX_PATH] = {};
            const unsigned core = P < nc ? row_core(t, P) : 0u;
            auto at = [&](int f) { return (unsigned char)(std::lower_bound(s.begin(), s.end(), f) - s.begin()); };
            for (int c = 0; c < m; ++c) {
                sl[c] = at(t.ridx[(size_t)P * MAX_CHILDREN + c]);
                h.w[(size_t)P * MAX_CHILDREN + c] = t.rw[(size_t)P * MAX_CHILDREN + c];
            }
            for (int e = 0; e < np; ++e) sl[MAX_CHILDREN + e] = at(path_fine(P, e));
            int *r = &h.row[(size_t)P * 4];
            const bool wall = !per && (P == 0 || P == nc);
            r[0] = m | np << 8 | (int)core << 16 | (wall ? 1 : 0) << 24;
            for (int e = 0; e < MAX_CHILDREN + MAX_PATH; ++e) r[1 + e / 4] |= (int)sl[e] << (8 * (e & 3));
        }
    }
    const int stride = h.smax + 1;
    h.slot.assign((size_t)h.nt * stride, 0);
    for (int it = 0; it < h.nt; ++it) {
        const std::vector<int> &s = lists[(size_t)it];
        h.slot[(size_t)it * stride] = (int)s.size();
        std::copy(s.begin(), s.end(), h.slot.begin() + (size_t)it * stride + 1);
    }
    return true;
}

// One axis of a level pair as gen_iso_kernel reads it: per fine index i its
// coarse parents (the rows whose restriction holds it), in ascending order,
// p[4 i] = count | 256 if it is a core child of one of them, then their
// indices; w[3 i + c] their weights.  False if a point has more than
// MAX_PARENTS.
constexpr int MAX_PARENTS = 3;
struct ParentAxis {
    const int4 *p;
    const double *w;
};
static bool parent_table(const AxisTransfer &t, int n, int nc, std::vector<int> &p, std::vector<double> &w)
{
    p.assign((size_t)n * 4, 0);
    w.assign((size_t)n * MAX_PARENTS, 0.0);
    for (int P = 0; P < nc; ++P) { // ascending P: each point's parents come in order
        const unsigned core = row_core(t, P);
        for (int c = 0; c < t.rcnt[(size_t)P]; ++c) {
            const int i = t.ridx[(size_t)P * MAX_CHILDREN + c];
            int &head = p[(size_t)i * 4];
            const int k = head & 0xff;
            if (k == MAX_PARENTS) return false;
            w[(size_t)i * MAX_PARENTS + k] = t.rw[(size_t)P * MAX_CHILDREN + c];
            p[(size_t)i * 4 + 1 + k] = P;
            head = (k + 1) | (head & 256) | (int)((core >> c) & 1u) << 8;
        }
    }
    return true;
}

// One axis of a level pair as gen_distance_kernel reads it: per coarse face
// I (between nodes I-1 and I) the fine nodes from node I-1's position to
// node I's, in order (k: their count, then their indices; x: the faces'
// length H, then each node's distance from node I-1), MAX_WALK + 1 entries
// a face; a count of 0 leaves the face as the stages formed it (the walls,
// a periodic axis' wrap, an inactive axis, more nodes than MAX_WALK).
constexpr int MAX_WALK = 6;
struct WalkAxis {
    const int *k;
    const double *x;
};
static void walk_table(const Axis &a, const Axis &c, std::vector<int> &k, std::vector<double> &x)
{
    const int nc = c.n, W = MAX_WALK + 1;
    k.assign((size_t)(nc + 1) * W, 0);
    x.assign((size_t)(nc + 1) * W, 0.0);
    if (!a.active) return;
    for (int I = 1; I < nc; ++I) {
        const double X0 = c.x[(size_t)I - 1], X1 = c.x[(size_t)I], H = X1 - X0, tol = 1e-9 * H;
        const int first = (int)(std::lower_bound(a.x.begin(), a.x.end(), X0 - tol) - a.x.begin());
        int m = 0;
        for (int i = first; i < a.n && a.x[(size_t)i] <= X1 + tol; ++i, ++m)
            if (m < MAX_WALK) {
                k[(size_t)I * W + 1 + m] = i;
                x[(size_t)I * W + 1 + m] = a.x[(size_t)i] - X0;
            }
        if (m == 0 || m > MAX_WALK) continue;
        k[(size_t)I * W] = m;
        x[(size_t)I * W] = H;
    }
}

// Interior point t (x fastest) of a level: its indices and element.
template <class T> __device__ __forceinline__ int64_t point_of(const Grid<T> &g, int64_t t, int &i, int &j, int &k)
{
    split_index(t, (uint32_t)g.nx, (uint32_t)g.ny, (uint64_t)g.nx * (uint64_t)g.ny * (uint64_t)g.nz <= 0xffffffffull,
                i, j, k);
    return g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
}

// Bit sets in device memory: bit q, set it, and set it unless it is (a
// plain load first: most marks of a set that fills find their bit set).
__device__ __forceinline__ bool bit_of(const uint32_t *bits, uint32_t q) { return (bits[q >> 5] >> (q & 31)) & 1u; }
__device__ __forceinline__ void set_bit(uint32_t *bits, uint32_t q) { atomicOr(bits + (q >> 5), 1u << (q & 31)); }
__device__ __forceinline__ void mark_bit(uint32_t *bits, uint32_t q)
{
    if (!bit_of(bits, q)) set_bit(bits, q);
}

// The near tiles of level 0 (general.h, gen_near_kernel): cubes of NEAR_T3
// points in 3D, squares of NEAR_T2 in 2D (both 512 or 256 points, a block
// of NEAR_THREADS), numbered x fastest; a tile is near where it holds a
// fluid point with a closed face.
constexpr int NEAR_T3 = 8, NEAR_T2 = 16, NEAR_THREADS = 256;
template <class T> __host__ __device__ inline int near_side(const Grid<T> &g) { return g.is3d ? NEAR_T3 : NEAR_T2; }
// The tiles along x, y and z.
template <class T> __host__ __device__ inline uint3 near_counts(const Grid<T> &g)
{
    const int t = near_side(g), tz = g.is3d ? t : 1;
    return make_uint3((uint32_t)((g.nx + t - 1) / t), (uint32_t)((g.ny + t - 1) / t), (uint32_t)((g.nz + tz - 1) / tz));
}
template <class T> __host__ __device__ inline uint32_t near_tiles(const Grid<T> &g)
{
    const uint3 n = near_counts(g);
    return n.x * n.y * n.z;
}
// The tile of point (i, j, k), and tile q's first point.
template <class T> __device__ __forceinline__ uint32_t near_tile_of(const Grid<T> &g, int i, int j, int k)
{
    const int t = near_side(g);
    const uint3 n = near_counts(g);
    return (uint32_t)(i / t) + n.x * ((uint32_t)(j / t) + n.y * (uint32_t)(g.is3d ? k / t : 0));
}
template <class T> __device__ __forceinline__ void near_corner(const Grid<T> &g, uint32_t q, int &i, int &j, int &k)
{
    const int t = near_side(g);
    const uint3 n = near_counts(g);
    const uint32_t bz = q / (n.x * n.y), r = q - bz * n.x * n.y, by = r / n.x;
    i = (int)(r - by * n.x) * t;
    j = (int)by * t;
    k = (int)bz * (g.is3d ? t : 1);
}

// Lists the near tiles of the bit set (gen_check_kernel's marks) in
// list, their number in *count, and clears the set for the next mask.  One
// block; the list's order is the atomics', which no result depends on (each
// point lies in one tile, and a colour pass updates every point of its
// colour from the other colour's values).
__global__ void __launch_bounds__(1024) gen_near_list_kernel(uint32_t *bits, uint32_t words, uint32_t *list,
                                                             uint32_t *count)
{
    __shared__ uint32_t n;
    if (threadIdx.x == 0) n = 0;
    __syncthreads();
    for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) {
        uint32_t b = bits[w];
        if (!b) continue;
        bits[w] = 0;
        uint32_t at = atomicAdd(&n, (uint32_t)__popc(b));
        for (; b; b &= b - 1) list[at++] = w * 32u + (uint32_t)(__ffs(b) - 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) *count = n;
}

// One colour of a Gauss-Seidel iteration (weight 1) over the fluid points
// of level 0's near tiles, in place: the points of a colour couple only to
// the other colour's.  After a cycle's post-smoothing of level 0 (multigrid.h,
// near_relax), it takes out the error that the coarse levels leave beside
// solid points, where they cannot follow the walls.  A block per listed
// tile (grid-stride), a thread per column piece.
template <class T>
__global__ void __launch_bounds__(NEAR_THREADS) gen_near_kernel(const Grid<T> g, T *u, const T *__restrict__ f,
                                                                const T *__restrict__ shiftp, int colour,
                                                                const uint32_t *__restrict__ list,
                                                                const uint32_t *__restrict__ count)
{
    const int t = near_side(g), tz = g.is3d ? t : 1, per = NEAR_THREADS / (t * t); // threads per column
    const int x = (int)threadIdx.x % t, y = (int)threadIdx.x / t % t, z0 = (int)threadIdx.x / (t * t);
    const Shift<T> shift = load_shift(shiftp);
    const uint32_t n = *count;
    for (uint32_t e = blockIdx.x; e < n; e += gridDim.x) {
        int i, j, kt;
        near_corner(g, list[e], i, j, kt);
        i += x;
        j += y;
        if (i >= g.nx || j >= g.ny) continue;
        for (int z = z0; z < tz; z += per) {
            const int k = kt + z;
            if (k >= g.nz || ((i + j + k) & 1) != colour) continue;
            // On a periodic axis of odd length the first and last points are
            // neighbours of one colour: the last is left out, so that no point
            // is read while it is written (a one-point axis couples nothing).
            if ((g.px && (g.nx & 1) && g.nx > 1 && i == g.nx - 1) ||
                (g.py && (g.ny & 1) && g.ny > 1 && j == g.ny - 1) ||
                (g.is3d && g.pz && (g.nz & 1) && g.nz > 1 && k == g.nz - 1))
                continue;
            const int64_t p = g.base + i + (int64_t)j * g.sy + (int64_t)k * g.sz;
            if (!gen_fluid(g, p)) continue;
            T diag;
            const T off = stencil_off<T>(g, u + p, p, i, j, k, diag);
            u[p] = relax(u[p], shift.template of_as<T>(f[p]) + off, diag, T(1));
        }
    }
}

// Per byte of v: 1 where the byte's low two bits equal t, else 0.
__device__ __forceinline__ uint32_t type_bytes(uint32_t v, unsigned t)
{
    const uint32_t y = (v & 0x03030303u) ^ (0x01010101u * t); // 0 where equal
    return ((y | y >> 1) & 0x01010101u) ^ 0x01010101u;
}
// type_bytes(v, PGPU_CELL_SOLID) & ones: bit 1 set, bit 0 clear (a shift
// and one three-input logic operation).
static_assert(PGPU_CELL_SOLID == 2, "solid_bytes: the solid type's bits");
__device__ __forceinline__ uint32_t solid_bytes(uint32_t v, uint32_t ones) { return v >> 1 & ~v & ones; }

// Checks a caller's mask (types, a fluid point) and beta (positive, finite)
// over the interior into *flags; with a mask, writes level 0's mask into mk
// (the caller's types with their closed faces, those towards a solid
// neighbour (bit f, GenPoint's order); across a box face the neighbour is a
// ghost, fluid, unless the axis is periodic; the ghosts are never
// written): the spare buffer, taken only when the check passes.  A coarse
// level's closed faces, once gen_coarse_kernel has written its types, come
// from the same pass in place (m == mk, not CHECK): a thread rewrites its
// own bytes and reads only the type bits of its neighbours' and the low
// faces of fraction 0 of those not solid, which the rewrite keeps.  The
// faces of fraction 0 of a point not solid, which couple nothing as closed
// ones do, are closed there too (so the prolongation finds them in one
// byte, gen_shut): coarse_tile wrote a point's low ones into its byte.  A
// warp walks a row (x along the lanes), a lane four points at a time (from
// the row's first, so a row of n points takes n / 4 words however it lies
// in memory), byte-parallel: the four bytes of m and of each neighbour
// (two aligned loads and a funnel shift, the shifts fixed per row), the
// types and closed bits of all four at once, stored as a word where mk's
// row is aligned to one, else byte by byte; a row's end words mask off
// the bytes outside the row and mend the x faces (ghost or wrapped
// neighbour), and only the end words of 2D rows under 16 points go byte
// by byte.  With `near` (the caller's mask), the near tiles of the fluid
// points with a closed face get their bits (gen_near_kernel's tiles).
template <class T, bool CHECK>
__global__ void __launch_bounds__(256, 4) gen_check_kernel(const Grid<T> g, const uint8_t *m, const T *__restrict__ beta,
                                                           unsigned *flags, uint8_t *mk, uint32_t *near,
                                                           unsigned long long *range = nullptr)
{
    double bmin = DBL_MAX, bmax = 0; // (beta, where range: its smallest and largest value)
    const int lane = threadIdx.x & 31;
    const int64_t rows = (int64_t)g.ny * g.nz, warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    unsigned bits = 0;
    // CHECK: the words' bytes, ORed per lane (turned into bits at the end):
    // all of them (high bits set), and those of type 3, fluid, Dirichlet
    uint32_t any_b = 0, t3_b = 0, fl_b = 0, dr_b = 0;
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; r < rows; r += warps) {
        const int j = (int)(r % g.ny), k = (int)(r / g.ny);
        const int64_t row = g.base + j * g.sy + k * g.sz;
        if (m) {
            // the seven byte streams of the row: the point, x -1, x +1, y -1, y +1, z -1, z +1
            const bool in[4] = {j > 0 || g.py, j < g.ny - 1 || g.py, g.is3d && (k > 0 || g.pz),
                                g.is3d && (k < g.nz - 1 || g.pz)};
            const int64_t o[7] = {0, -1, 1, !in[0] ? 0 : j > 0 ? -g.sy : g.oyl, !in[1] ? 0 : j < g.ny - 1 ? g.sy : g.oyh,
                                  !in[2] ? 0 : k > 0 ? -g.sz : g.ozl, !in[3] ? 0 : k < g.nz - 1 ? g.sz : g.ozh};
            const int words = (g.nx + 3) >> 2;
            const bool aligned = ((uintptr_t)(mk + row) & 3u) == 0; // mk's words: whole stores
            const uint32_t *q[7];
            unsigned sh[7];
#pragma unroll
            for (int f = 0; f < 7; ++f) {
                const uint8_t *p = m + row + o[f];
                sh[f] = 8u * (unsigned)((uintptr_t)p & 3u);
                q[f] = (const uint32_t *)(p - ((uintptr_t)p & 3u));
                // kept in registers: recomputed in the loop below (as the
                // compiler otherwise does) they cost 7% more time
                asm("" : "+l"(q[f]));
                asm("" : "+r"(sh[f]));
            }
            const uint32_t keep = CHECK ? 0xffffffffu : 0x03030303u; // the caller's byte, or the type bits
            uint32_t nb[6]; // the faces' neighbours: a solid one closes it
#pragma unroll
            for (int f = 0; f < 6; ++f) nb[f] = f < 2 || in[f - 2] ? 0x01010101u : 0u;
            const uint8_t *rp = m + row;
            // Whole words at the row's ends too where their loads (up to 8
            // bytes past its last point, 4 before its first) stay inside the
            // array: in 3D a ghost plane lies around the interior, in 2D a
            // ghost row.
            const bool ends_whole = g.is3d || g.nx >= 16;
            for (int w = lane; w < words; w += 32) {
                const int i0 = 4 * w; // the word's first byte's x index
                uint8_t *dst = mk + row + i0;
                const bool inner = i0 > 0 && i0 + 3 < g.nx - 1; // the x neighbours inside the row too
                if (inner || ends_whole) {
                    uint32_t v[7];
#pragma unroll
                    for (int f = 0; f < 7; ++f) v[f] = __funnelshift_r(q[f][w], q[f][w + 1], sh[f]);
                    uint32_t c = 0; // the faces' bits are apart: added, a shift and add each
#pragma unroll
                    for (int f = 0; f < 6; ++f) c += solid_bytes(v[1 + f], nb[f]) << (CLOSED_SHIFT + f);
                    uint32_t out = (v[0] & keep) | c, valid = 0xffffffffu;
                    if (!CHECK) out &= ~((v[0] & v[0] >> 1 & 0x01010101u) * CELL_BITS); // CELL_FLUID_SOLID_CORE: fluid
                    // In place: the faces of fraction 0 of the points not
                    // solid, their low ones from their own bytes, the high
                    // ones from the next point's along each axis inside the
                    // box, across it from the fraction at the ghost.  (A
                    // neighbour's low bit, rewritten meanwhile, may change
                    // only where this point or that neighbour is solid:
                    // this point's bits are then dropped below, or that
                    // face is closed by c anyway.)
                    uint32_t zb = 0;
                    if (!CHECK) {
                        zb = (v[0] & 0x54545454u) | (v[2] & 0x04040404u) << 1;
                        if (j < g.ny - 1) zb |= (v[4] & 0x10101010u) << 1;
                        if (g.is3d && k < g.nz - 1) zb |= (v[6] & 0x40404040u) << 1;
                        const bool ty = j == g.ny - 1 && g.fy, tz = g.is3d && k == g.nz - 1 && g.fz;
                        if (ty || tz)
#pragma unroll
                            for (int b = 0; b < 4; ++b) {
                                const int64_t e = row + i0 + b;
                                if (i0 + b < 0 || i0 + b >= g.nx) continue;
                                if (ty && g.fy[e + g.sy] == T(0)) zb |= 0x20u << (8 * b);
                                if (tz && g.fz[e + g.sz] == T(0)) zb |= 0x80u << (8 * b);
                            }
                        zb &= ~(type_bytes(v[0], PGPU_CELL_SOLID) * 0xffu);
                    }
                    if (!inner) { // the bytes inside the row; the x faces across the box
                        valid = 0;
#pragma unroll
                        for (int b = 0; b < 4; ++b) valid |= i0 + b >= 0 && i0 + b < g.nx ? 0xffu << (8 * b) : 0u;
                        if (i0 <= 0) {
                            const unsigned bit = 1u << (CLOSED_SHIFT + 8 * -i0);
                            out = (out & ~bit) | (g.px && (rp[g.oxl] & CELL_BITS) == PGPU_CELL_SOLID ? bit : 0u);
                        }
                        if (i0 + 3 >= g.nx - 1) {
                            const unsigned bit = 2u << (CLOSED_SHIFT + 8 * (g.nx - 1 - i0));
                            out = (out & ~bit) | (g.px && (rp[g.nx - 1 + g.oxh] & CELL_BITS) == PGPU_CELL_SOLID ? bit : 0u);
                            if (!CHECK && g.fx && g.fx[row + g.nx] == T(0) &&
                                (rp[g.nx - 1] & CELL_BITS) != PGPU_CELL_SOLID)
                                zb |= bit;
                        }
                    }
                    out |= zb;
                    if (CHECK && near) { // a fluid byte with a closed face (x + 63 carries into bit 6 where x > 0)
                        const uint32_t cn = out >> CLOSED_SHIFT & 0x3f3f3f3fu;
                        if ((cn + 0x3f3f3f3fu) >> 6 & type_bytes(out, PGPU_CELL_FLUID) & valid)
                            mark_bit(near, near_tile_of(g, i0, j, k));
                    }
                    if (CHECK) {
                        const uint32_t ones = valid & 0x01010101u, hi = v[0] >> 1;
                        any_b |= v[0] & valid;
                        t3_b |= v[0] & hi & ones;
                        fl_b |= ~(v[0] | hi) & ones;
                        dr_b |= v[0] & ~hi & ones;
                    }
                    if (valid == 0xffffffffu && aligned) {
                        *(uint32_t *)dst = out;
                    } else {
#pragma unroll
                        for (int b = 0; b < 4; ++b)
                            if ((valid >> (8 * b)) & 1u) dst[b] = (uint8_t)(out >> (8 * b));
                    }
                    continue;
                }
                // An end word of a short 2D row: byte by byte, those inside the row.
#pragma unroll 1
                for (int b = 0; b < 4; ++b) {
                    const int i = i0 + b;
                    if (i < 0 || i >= g.nx) continue;
                    auto solid = [](unsigned x) { return (x & CELL_BITS) == PGPU_CELL_SOLID ? 1u : 0u; };
                    unsigned c = 0;
                    if (i > 0 || g.px) c |= solid(rp[i > 0 ? i - 1 : i + g.oxl]);
                    if (i < g.nx - 1 || g.px) c |= solid(rp[i < g.nx - 1 ? i + 1 : i + g.oxh]) << 1;
#pragma unroll
                    for (int f = 0; f < 4; ++f)
                        if (in[f]) c |= solid(rp[i + o[3 + f]]) << (2 + f);
                    unsigned t = rp[i] & (CHECK ? 0xffu : CELL_BITS);
                    if (!CHECK && t == CELL_FLUID_SOLID_CORE) t = PGPU_CELL_FLUID;
                    if (!CHECK && t != PGPU_CELL_SOLID) c |= zero_faces(g, row + i);
                    if (CHECK && near && t == PGPU_CELL_FLUID && c) mark_bit(near, near_tile_of(g, i, j, k));
                    bits |= t > PGPU_CELL_SOLID        ? GEN_BAD_TYPE
                            : t == PGPU_CELL_FLUID     ? GEN_FLUID
                            : t == PGPU_CELL_DIRICHLET ? GEN_HELD
                                                       : 0u;
                    dst[b] = (uint8_t)(t | c << CLOSED_SHIFT);
                }
            }
        }
        if (beta)
            for (int i = lane; i < g.nx; i += 32) {
                const double b = (double)beta[row + i];
                if (!(b > 0) || !(b <= DBL_MAX)) bits |= GEN_BAD_BETA;
                else if (!(b >= beta_recip_min<T>() && b <= beta_recip_max<T>())) bits |= GEN_WIDE_BETA;
                bmin = b < bmin ? b : bmin; // (NaN: refused above)
                bmax = b > bmax ? b : bmax;
            }
    }
    if (CHECK) {
        bits |= (any_b & 0xfcfcfcfcu) || t3_b ? GEN_BAD_TYPE : 0u;
        bits |= (fl_b ? GEN_FLUID : 0u) | (dr_b ? GEN_HELD : 0u);
        bits = __reduce_or_sync(0xffffffffu, bits);
        if (bits && lane == 0) atomicOr(flags, bits);
        if (range) { // positive doubles order as their bits do
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                bmin = fmin(bmin, __shfl_xor_sync(0xffffffffu, bmin, o));
                bmax = fmax(bmax, __shfl_xor_sync(0xffffffffu, bmax, o));
            }
            if (lane == 0 && bmax > 0) {
                atomicMin(range, (unsigned long long)__double_as_longlong(bmin));
                atomicMax(range + 1, (unsigned long long)__double_as_longlong(bmax));
            }
        }
    }
}

// Level 0's face fractions from beta: harmonic means between neighbours
// (the wrapped one on a periodic axis), beta at box faces; the high face of
// the last node goes to its ghost.  With bw (beta inside beta_recip_min ..
// max: no GEN_WIDE_BETA) the means are beta_face's of the reciprocals, which
// go to bw, a box face's beta_face(1/b, 1/b) and its ghost's 1/b the same
// (beta_tile_kernel forms every face so); else 2 a b / (a + b) in double, formed as
// min (2 / (1 + min / max)): the product a b underflows or overflows for
// beta beyond about 1e-154 .. 1e154 (double's beta outside the reciprocals'
// range), the mean lies between min and 2 min.
__device__ __forceinline__ double harmonic(double a, double b)
{
    const double lo = fmin(a, b), hi = fmax(a, b);
    return lo * (2.0 / (1.0 + lo / hi));
}
template <class T>
__global__ void gen_fractions_kernel(const Grid<T> g, const T *__restrict__ beta, T *fx, T *fy, T *fz, T *bw)
{
    PGPU_GRID_STRIDE(t, (int64_t)g.nx * g.ny * g.nz)
    {
        int i, j, k;
        const int64_t p = point_of(g, t, i, j, k);
        const double b = (double)beta[p];
        const T wb = T(1.0 / b), edge = bw ? beta_face(wb, wb) : T(b);
        if (bw) bw[p] = wb;
        auto mean = [&](int64_t q) { // the face's mean with the point at q
            return bw ? beta_face(T(1.0 / (double)beta[q]), wb) : T(harmonic(b, (double)beta[q]));
        };
        auto face = [&](T *fr, int m, int n, int per, int64_t s) {
            fr[p] = m > 0 ? mean(p - s) : per ? mean(p + (n - 1) * s) : edge;
            if (m == n - 1) fr[p + s] = per ? mean(p - (n - 1) * s) : edge;
            if (bw && !per && m == 0) bw[p - s] = wb;
            if (bw && !per && m == n - 1) bw[p + s] = wb;
        };
        face(fx, i, g.nx, g.px, 1);
        face(fy, j, g.ny, g.py, g.sy);
        if (g.is3d) face(fz, k, g.nz, g.pz, g.sz);
    }
}

template <class T> struct GenCoarse {
    Grid<T> f, c;     // the fine level as the kernels see it (its mask and fractions), the coarse level
    uint8_t *cmk;     // coarse types (NULL: no mask)
    T *cf[3];         // coarse face fractions
    // per element of the coarse / fine level: 1 where every face fraction
    // coarse_put wrote is 1 (those window_scan counts), 0 where it or a
    // kernel after it wrote another (gen_first_kernel's test of a tile's
    // fractions, a byte a point instead of three values; NULL: none, the
    // fine level's on level 0)
    uint8_t *cone;
    const uint8_t *fone;
    CoarseAxis ax[3]; // per axis: rows, paths and the tiles' fine slots
    WalkAxis wk[3];   // per axis: the fine nodes between two coarse ones (gen_distance_kernel)
    ParentAxis par[3]; // per axis: each fine point's coarse parents (gen_iso_kernel)
    uint8_t *iso;     // gen_iso_kernel's candidates and marks, a byte per coarse element (NULL: none)
    uint32_t *cand;   // the candidates' interior indices, listed by coarse_tile (NULL: gen_iso_kernel scans)
    uint32_t *ncand;  // their number
    uint32_t *list;   // the tiles that take the stages, listed by the first pass (NULL: every tile)
    uint32_t *count;  // their number
    unsigned tiles;   // the level's tiles
    bool scale;       // the fine fractions carry beta's scale (gen_distance_kernel's end pieces)
    bool series;      // faces along a coarse face's path in series (the pair's transfers are odi.h's)
};

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 21 "src/poisson_gpu.cu"
#endif
// general_coarse.h -- masks and beta: coarse cell types and face fractions, built on the device
#ifdef PGPU_SRC_LINES
#line 2 "src/general_coarse.h"
#endif


namespace pgpu {

// The shared memory of gen_coarse_kernel for the tile lengths tb and the
// tiles' largest slot counts s (see there): the head (rows, weights and
// slots), then the stages' sums and bits and the window.
__host__ __device__ inline size_t coarse_smem_head(const int tb[3], const int s[3])
{
    const size_t sb = (size_t)tb[0] + tb[1] + tb[2];
    const size_t bytes = sizeof(int4) * sb + sizeof(double) * sb * (MAX_CHILDREN + 1) +
                         sizeof(int) * ((size_t)s[0] + s[1] + s[2]);
    return (bytes + 15) / 16 * 16;
}
static size_t coarse_smem_bytes(const int tb[3], const int s[3])
{
    const size_t a1 = (size_t)s[0] * s[1] * tb[2], a2 = (size_t)s[0] * tb[1] * tb[2];
    return coarse_smem_head(tb, s) + sizeof(double) * 3 * (a1 + a2) + 2 * a2 + 2 * a1 + a2 + (size_t)s[0] * s[1] * s[2];
}

// Slot e of a CoarseAxis row (its child slots, e < MAX_CHILDREN, then its
// path slots): byte e of the row's y, z, w words.
__device__ __forceinline__ int row_slot(const int4 &r, int e)
{
    const int word = e < 4 ? r.y : e < 8 ? r.z : r.w;
    return (word >> (8 * (e & 3))) & 0xff;
}

// A fine point's window code from its mask byte v (bits 0-1: Dirichlet,
// fluid; bit 2 + d: the low face along d open); at a slot on the high wall
// (wall) only v's type counts.
__device__ __forceinline__ unsigned win_code(unsigned v, bool wall)
{
    if (wall) v &= CELL_BITS;
    const unsigned ty = v & CELL_BITS, open = ty == PGPU_CELL_SOLID ? 0u : ~v >> CLOSED_SHIFT;
    return (ty == PGPU_CELL_DIRICHLET ? 1u : 0u) | (ty == PGPU_CELL_FLUID ? 2u : 0u) | (open & 1u) << 2 |
           (open >> 2 & 1u) << 3 | (open >> 4 & 1u) << 4;
}

// A window's kinds: bit 0, a point other than open fluid seen; bit 1, one
// not solid; bit 2, one other than open Dirichlet (a tile is of one kind
// where its window's OR lacks a bit).  From a code (win_code), and from the
// four mask bytes of a word (those `valid` selects, no wall among them).
__device__ __forceinline__ unsigned code_kinds(unsigned code)
{
    return (code != WIN_OPEN_FLUID ? 1u : 0u) | (code != 0 ? 2u : 0u) | (code != WIN_OPEN_DIRICHLET ? 4u : 0u);
}
// The bytes b of a word with from <= b <= to, as a mask.
__device__ __forceinline__ uint32_t byte_range(int from, int to)
{
    if (from > 3 || to < 0 || from > to) return 0;
    return (0xffffffffu << (8 * max(from, 0))) & (0xffffffffu >> (8 * (3 - min(to, 3))));
}
// (From words already ORed: o the bytes, ns ~type_bytes(SOLID), dx the
// bytes XOR open Dirichlet.)
__device__ __forceinline__ unsigned word_kinds_of(uint32_t o, uint32_t ns, uint32_t dx)
{
    return (o ? 1u : 0u) | (ns & 0x01010101u ? 2u : 0u) | (dx ? 4u : 0u);
}
__device__ __forceinline__ unsigned word_kinds(uint32_t v, uint32_t valid)
{
    return word_kinds_of(v & valid, ~type_bytes(v, PGPU_CELL_SOLID) & valid, (v ^ 0x01010101u * PGPU_CELL_DIRICHLET) & valid);
}

// The calling thread's lane in its warp.
__device__ __forceinline__ unsigned lane_id()
{
    unsigned l;
    asm("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}

// Coarse position P's type and face fractions (and gen_iso_kernel's mark
// and list), from its rows along each axis (rx: the row's x word; W: its
// weights' sum) and its tile's reductions (bits, zs, acc: coarse_tile's),
// or from the tile's kind where the tile is of one (uniform).
template <class T>
__device__ __forceinline__ void coarse_put(const GenCoarse<T> &a, const int P[3], const int rx[3], const double W[3],
                                           unsigned bits, const unsigned zs[3], const double acc[3], bool uniform,
                                           bool all_solid)
{
    const Grid<T> &C = a.c;
    const int span[3] = {C.nx + 1, C.ny + 1, C.is3d ? C.nz + 1 : 1};
    int m[3], np[3];
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        m[d] = rx[d] & 0xff;
        np[d] = (rx[d] >> 8) & 0xff;
    }
    if (P[0] >= span[0] || P[1] >= span[1] || P[2] >= span[2]) return;
    const int64_t pc = C.base + P[0] + (int64_t)P[1] * C.sy + (C.is3d ? (int64_t)P[2] * C.sz : 0);
    unsigned zero = 0; // the low faces of fraction 0 (for gen_check_kernel's closed bits)
    bool one = true;   // every face written 1 (those not written: window_scan's faces that do not count)
    const int nc[3] = {C.nx, C.ny, C.nz};
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        const int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
        if ((d == 2 && !C.is3d) || !m[d1] || !m[d2]) continue;
        const double ws = W[d1] * W[d2];
        const T fr = T(!(ws > 0) || all_solid ? 0.0 : uniform ? 1.0 : acc[d] / (ws * np[d]));
        a.cf[d][pc] = fr;
        one = one && fr == T(1);
        zero |= fr == T(0) ? 1u << (CLOSED_SHIFT + 2 * d) : 0u;
        // an inner face with a path face of 0 across its whole width: for
        // gen_shut_kernel, in the high face's bit (free until
        // gen_check_kernel sets those)
        if (zs[d] && P[d] > 0 && P[d] < nc[d]) zero |= 2u << (CLOSED_SHIFT + 2 * d);
    }
    if (a.cone) a.cone[pc] = one ? 1 : 0;
    if (m[0] && m[1] && m[2] && a.cmk) {
        const unsigned ty = bits & 1u ? PGPU_CELL_DIRICHLET : bits & 2u ? (bits & 4u ? PGPU_CELL_FLUID : CELL_FLUID_SOLID_CORE)
                                                                  : PGPU_CELL_SOLID;
        a.cmk[pc] = (uint8_t)(ty | zero);
        if (a.iso) { // for gen_iso_kernel: not Dirichlet, a Dirichlet child
            const bool cand = (bits & 9u) == 8u;
            a.iso[pc] = (uint8_t)cand;
            if (a.cand) { // listed (interior points), one atomic per warp
                const bool in = cand && P[0] < C.nx && P[1] < C.ny && P[2] < C.nz;
                const unsigned am = __activemask(), bal = __ballot_sync(am, in);
                if (bal) {
                    const int ln = (int)lane_id(), lead = __ffs(bal) - 1;
                    unsigned at = 0;
                    if (ln == lead) at = atomicAdd(a.ncand, (unsigned)__popc(bal));
                    at = __shfl_sync(am, at, lead) + (unsigned)__popc(bal & ((1u << ln) - 1u));
                    if (in) a.cand[at] = (uint32_t)(P[0] + (int64_t)C.nx * (P[1] + (int64_t)C.ny * P[2]));
                }
            }
        }
    }
}

// The window of a tile of gen_coarse_kernel: each slot's point's code
// (win_code; the high wall's slot: the last point's type) into win (where
// given) and the kinds of them all (code_kinds; with FR, a point whose
// fractions that count are not all 1 is neither open fluid nor open
// Dirichlet).
// Rows of slots r = grp, grp + ngrp, ... go to groups of G lanes, R rows
// at a time (their loads in flight together); fsl(d, s) is slot s's fine
// index along d.
template <class T, bool FR, int R, class Slots>
__device__ __forceinline__ unsigned window_scan(const Grid<T> &F, const int S[3], Slots fsl, int grp, int ngrp, int G,
                                                int lane, unsigned char *win)
{
    const int nf[3] = {F.nx, F.ny, F.is3d ? F.nz : 1};
    const int64_t fst[3] = {1, F.sy, F.is3d ? F.sz : 0};
    const T *ffr[3] = {F.fx, F.fy, F.fz};
    const int rows = S[1] * S[2];
    unsigned mix = 0;
    for (int r0 = grp; r0 < rows; r0 += R * ngrp) {
        int64_t at[R]; // the row's first element (j, k unclamped: the fractions'), -1 past the last row
        const uint8_t *src[R];
        unsigned wjk[R]; // bit 1: the row's y slot is the high wall's, bit 2: its z slot
#pragma unroll
        for (int q = 0; q < R; ++q) {
            const int r = r0 + q * ngrp, s2 = r / S[1], j = r < rows ? fsl(1, r - s2 * S[1]) : 0,
                      k = r < rows ? fsl(2, s2) : 0;
            at[q] = r < rows ? F.base + j * fst[1] + k * fst[2] : -1;
            wjk[q] = (j == nf[1] ? 2u : 0u) | (k == nf[2] ? 4u : 0u);
            src[q] = F.mk ? F.mk + F.base + min(j, nf[1] - 1) * fst[1] + min(k, nf[2] - 1) * fst[2] : nullptr;
        }
        for (int s00 = lane; s00 < S[0]; s00 += 2 * G) { // two points a row in flight
            unsigned v[R][2];
            bool one[R][2]; // FR: the point's fractions that count 1, loaded beside its byte
            int x[2] = {0, 0};
#pragma unroll
            for (int h = 0; h < 2; ++h)
                if (s00 + h * G < S[0]) x[h] = fsl(0, s00 + h * G);
#pragma unroll
            for (int q = 0; q < R; ++q)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    v[q][h] = PGPU_CELL_FLUID;
                    one[q][h] = true;
                    if (s00 + h * G >= S[0] || at[q] < 0) continue;
                    if (src[q]) v[q][h] = __ldg(src[q] + min(x[h], nf[0] - 1));
                    if (FR) {
                        // (a face along d counts where no other axis's slot is
                        // the high wall's: there the fine level has only the
                        // wall face, coarse_put wrote no other)
                        const unsigned w = wjk[q] | (x[h] == nf[0] ? 1u : 0u);
                        T fv[3];
#pragma unroll
                        for (int d = 0; d < 3; ++d)
                            fv[d] = ffr[d] && !(w & ~(1u << d)) ? __ldg(ffr[d] + at[q] + x[h]) : T(1);
                        one[q][h] = (fv[0] == T(1)) & (fv[1] == T(1)) & (fv[2] == T(1));
                    }
                }
#pragma unroll
            for (int q = 0; q < R; ++q)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int s0 = s00 + h * G;
                    if (s0 >= S[0] || at[q] < 0) continue;
                    const unsigned code = win_code(v[q][h], wjk[q] || x[h] == nf[0]);
                    mix |= code_kinds(code);
                    if (FR && !one[q][h]) mix |= 5u; // open fluid or Dirichlet: only with its faces' fractions all 1
                    if (win) win[(r0 + q * ngrp) * S[0] + s0] = (unsigned char)code;
                }
        }
    }
    return mix;
}

// The split rule: a fluid position whose core children are all solid
// and whose fluid children fall into two or more parts (open faces among
// them, from the window) is solid.  Boxes of up to 4 children a side whose
// children are consecutive fine points (not a periodic ring's wrap); bit
// x + 4 y + 16 z.  rr: the position's rows along x, y, z; fs, the slots'
// fine indices; win, the window's bytes ([S2][S1][S0]).
__device__ __forceinline__ bool coarse_splits(const int4 (&rr)[3], int *const (&fs)[3], const unsigned char *win,
                                              const int (&S)[3])
{
    int mm[3], s0[3][4];
    bool box = true;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        mm[d] = rr[d].x & 0xff;
        box = box && mm[d] >= 1 && mm[d] <= 4;
        for (int c = 0; box && c < mm[d]; ++c) {
            s0[d][c] = row_slot(rr[d], c);
            box = fs[d][s0[d][c]] == fs[d][s0[d][0]] + c;
        }
    }
    if (box) {
        uint64_t fl = 0, op[3] = {0, 0, 0};
        for (int z = 0; z < mm[2]; ++z)
            for (int y = 0; y < mm[1]; ++y)
                for (int x = 0; x < mm[0]; ++x) {
                    const unsigned v = win[(s0[2][z] * S[1] + s0[1][y]) * S[0] + s0[0][x]];
                    if (!(v & 2u)) continue;
                    const int q = x + 4 * y + 16 * z, at[3] = {x, y, z};
                    fl |= 1ull << q;
#pragma unroll
                    for (int d = 0; d < 3; ++d)
                        if (at[d] > 0 && (v & (4u << d))) op[d] |= 1ull << q;
                }
        const int sh[3] = {1, 4, 16};
#pragma unroll
        for (int d = 0; d < 3; ++d) op[d] &= fl & fl << sh[d];
        uint64_t r = fl & (~fl + 1), prev = 0; // the first fluid child's part, grown face by face
        while (r != prev) {
            prev = r;
#pragma unroll
            for (int d = 0; d < 3; ++d) r |= (r << sh[d] & op[d]) | (r & op[d]) >> sh[d];
        }
        return (fl & ~r) != 0;
    }
    return false;
}

// The head of coarse_tile's shared memory: the tile's rows along each axis
// (item q of sb: axis d's position q - off[d]), their children's weights
// and the weights' sums.
template <class T>
__device__ __forceinline__ void coarse_rows(const GenCoarse<T> &a, const int (&tile)[3], const int (&tb)[3],
                                            const int (&off)[3], int sb, int tid, int nth, int4 *row, double *w,
                                            double *wsum)
{
    for (int q = tid; q < sb; q += nth) {
        const int d = q < tb[0] ? 0 : q < tb[0] + tb[1] ? 1 : 2, p = q - off[d];
        const int64_t P = (int64_t)tile[d] * tb[d] + p;
        row[q] = a.ax[d].row[P];
        double s = 0;
        for (int c = 0; c < MAX_CHILDREN; ++c) {
            const double v = __ldg(a.ax[d].w + P * MAX_CHILDREN + c);
            w[q * MAX_CHILDREN + c] = v;
            s += v;
        }
        wsum[q] = s;
    }
}

// One coarse level's types and face fractions; a block per tile of coarse
// node positions (0..nc on each axis: the last is the high face's ghost), a
// thread per position.  Every quantity is a sum or an OR over a box of fine
// points that factors by axis: the type ORs over the rows' children
// (Dirichlet over the core ones), a face of axis d sums its path along d
// and its rows' weights across.  So the block reads the fine points its
// rows and paths touch (the tile's slots on each axis) once into shared
// memory and reduces them one axis at a time: z (every fine x, y slot),
// then y, then x, each stage a few products per item, instead of a thread
// walking all of its node's children for each of the four quantities.
// A fine face is open where its high point is not solid and has no closed
// low face; the high box face (slot n) is open where the last point is not
// solid (the window holds that point's type there, without closed bits).
// Two passes: the first (gen_first_kernel) reads the window's bytes to
// see whether the tile is of one kind (below), writes such a tile and lists
// the others; the second runs the stages on the listed ones, a grid that
// fits the GPU looping over them.
template <class T, bool FR>
__device__ __forceinline__ void coarse_tile(const GenCoarse<T> &a, int b, unsigned char *gc_smem)
{
    const Grid<T> &F = a.f, &C = a.c;
    const int tb[3] = {a.ax[0].tb, a.ax[1].tb, a.ax[2].tb};
    const int nth = tb[0] * tb[1] * tb[2];
    const int tid = threadIdx.x + tb[0] * (threadIdx.y + tb[1] * threadIdx.z);
    int tile[3];
    {
        const unsigned n0 = (unsigned)a.ax[0].nt, n1 = (unsigned)a.ax[1].nt, q = a.ax[0].by_nt((unsigned)b),
                       q2 = a.ax[1].by_nt(q);
        tile[0] = (int)((unsigned)b - q * n0);
        tile[1] = (int)(q - q2 * n1);
        tile[2] = (int)q2;
    }
    const int *sl[3];
    int S[3];
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        sl[d] = a.ax[d].slot + (size_t)tile[d] * a.ax[d].stride;
        S[d] = __ldg(sl[d]);
    }
    const int sb = tb[0] + tb[1] + tb[2], off[3] = {0, tb[0], tb[0] + tb[1]};
    const int a1 = S[0] * S[1] * tb[2], a2 = S[0] * tb[1] * tb[2];
    const int sx[3] = {a.ax[0].stride - 1, a.ax[1].stride - 1, a.ax[2].stride - 1}; // the slot arrays' room
    // The head (coarse_smem_head), then the stages' part.
    int4 *row = (int4 *)gc_smem;               // [sb]: the rows
    double *w = (double *)(row + sb);          // [sb][MAX_CHILDREN]: their weights
    double *wsum = w + sb * MAX_CHILDREN;      // [sb]: their sums
    int *fine = (int *)(wsum + sb);            // the slots' fine indices, per axis
    double *st1 = (double *)(gc_smem + coarse_smem_head(tb, sx)); // [tb2][S1][S0][3]: z reduced
    double *st2 = st1 + 3 * (size_t)a1;        // [tb2][tb1][S0][3]: z and y reduced
    // the path slots whose faces are 0 after the weighting across so far:
    // z faces' (bits 0-4), y faces' (bits 5-9)
    uint16_t *m2 = (uint16_t *)(st2 + 3 * (size_t)a2);
    unsigned char *m1 = (unsigned char *)(m2 + a2); // z faces' only
    unsigned char *b1 = m1 + a1;               // stage bits: as coarse_tile's bits (below)
    unsigned char *b2 = b1 + a1;
    unsigned char *win = b2 + a2;              // [S2][S1][S0]: the fine points' bytes
    int *fs[3] = {fine, fine + sx[0], fine + sx[0] + sx[1]};

    coarse_rows(a, tile, tb, off, sb, tid, nth, row, w, wsum);
#pragma unroll
    for (int d = 0; d < 3; ++d)
        for (int s = tid; s < S[d]; s += nth) fs[d][s] = __ldg(sl[d] + 1 + s);
    __syncthreads();

    // Rows of items go to groups of 32 threads (a warp; the whole block if
    // its size is no multiple of 32), the x slots to the group's lanes.
    const bool warps = nth % 32 == 0;
    const int G = warps ? 32 : nth, lane = warps ? tid & 31 : tid, grp = warps ? tid >> 5 : 0,
              ngrp = warps ? nth >> 5 : 1;
    const int nf[3] = {F.nx, F.ny, F.is3d ? F.nz : 1};
    const int64_t fst[3] = {1, F.sy, F.is3d ? F.sz : 0};
    const T *ffr[3] = {F.fx, F.fy, F.fz};
    const unsigned mix = window_scan<T, FR, 1>(F, S, [&](int d, int s) { return fs[d][s]; }, grp, ngrp, G, lane, win);
    // A window of one kind (solid everywhere, or fluid or Dirichlet
    // everywhere with every face open and every fine fraction 1: most tiles
    // of a mask, the Dirichlet ones those above a free surface) gives every
    // position of the tile the same type and its faces 0 or 1, the stages'
    // sums without their rounding.
    const bool all_fluid = __syncthreads_and(!(mix & 1u)) != 0, all_solid = __syncthreads_and(!(mix & 2u)) != 0;
    const bool all_held = __syncthreads_and(!(mix & 4u)) != 0;
    const bool uniform = all_solid || all_fluid || all_held;

    // A fine face's conductance from its window byte (bits 0-1: Dirichlet,
    // fluid; bit 2 + d: the low face along d is open): its fraction (FR) or
    // 1, 0 where closed.
    auto ph = [&](unsigned v, int d, int s0, int s1, int s2) -> double {
        if (!(v & (4u << d))) return 0.0;
        if (!FR || !ffr[d]) return 1.0;
        return (double)__ldg(ffr[d] + F.base + fs[0][s0] + fs[1][s1] * fst[1] + fs[2][s2] * fst[2]);
    };
    // A coarse face's sum over its path (np fine faces, face(slot) each); a
    // wall face (bit 24 of its row) closed by any closed face on the path;
    // zm: the path faces of 0 (bit e).  Where the pair's transfers follow
    // the operator (a.series, odi.h) the open faces count in series: their
    // harmonic mean times their count, so that over the path's np it is the
    // open share of the series conductance (a ball's faces 1e3 and 2 weigh
    // 4, as the fine faces do, against the plain mean's 500).
    auto path = [&](const int4 &r, int np, auto face, unsigned &zm) {
        double sum = 0, inv = 0;
        int open = 0;
        zm = 0;
#pragma unroll
        for (int e = 0; e < MAX_PATH; ++e)
            if (e < np) {
                const double f = face(row_slot(r, MAX_CHILDREN + e));
                sum += f;
                if (f != 0.0) {
                    inv += 1.0 / f;
                    ++open;
                }
                zm |= (f == 0.0 ? 1u : 0u) << e;
            }
        if (zm && r.x >> 24) return 0.0;
        return FR && a.series && open ? open * (open / inv) : sum;
    };
    auto put = [](double *st, unsigned char *bt, int q, double x, double y, double z, unsigned bits) {
        st[3 * q] = x; // a stage's item: the faces' sums along x, y, z and its type bits
        st[3 * q + 1] = y;
        st[3 * q + 2] = z;
        bt[q] = (unsigned char)bits;
    };
    const int p[3] = {(int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z};
    // bits: a Dirichlet core child (1), a fluid child (2), a core child
    // not solid (4), a Dirichlet child (8); zs: the faces' path slots of 0
    unsigned bits = all_solid ? 0u : all_held ? 13u : 6u, zs[3] = {0, 0, 0};
    double acc[3] = {0, 0, 0};
    if (!uniform) {
        // Stage 1, along z: items (s0, s1, p2), rows (s1, p2).
        for (int r = grp; r < S[1] * tb[2]; r += ngrp) {
            const int s1 = r % S[1], p2 = r / S[1];
            const int4 rz = row[off[2] + p2];
            const int m = rz.x & 0xff, np = (rz.x >> 8) & 0xff;
            const unsigned core = (rz.x >> 16) & 0xff;
            const double *wz = w + (off[2] + p2) * MAX_CHILDREN;
            for (int s0 = lane; s0 < S[0]; s0 += G) {
                unsigned bits = 0;
                double x = 0, y = 0, z = 0;
#pragma unroll
                for (int c = 0; c < MAX_CHILDREN; ++c) {
                    if (c >= m) break;
                    const int s2 = row_slot(rz, c);
                    const unsigned v = win[(s2 * S[1] + s1) * S[0] + s0], cc = (core >> c) & 1u;
                    bits |= (v & cc) | (v & 2u) | (v & 3u && cc ? 4u : 0u) | (v & 1u) << 3;
                    x += wz[c] * ph(v, 0, s0, s1, s2);
                    y += wz[c] * ph(v, 1, s0, s1, s2);
                }
                unsigned zm;
                z = path(rz, np, [&](int s2) { return ph(win[(s2 * S[1] + s1) * S[0] + s0], 2, s0, s1, s2); }, zm);
                put(st1, b1, r * S[0] + s0, x, y, z, bits);
                m1[r * S[0] + s0] = (unsigned char)zm;
            }
        }
        __syncthreads();
        // Stage 2, along y: items (s0, p1, p2), rows (p1, p2).
        for (int r = grp; r < tb[1] * tb[2]; r += ngrp) {
            const int p1 = r % tb[1], p2 = r / tb[1];
            const int4 ry = row[off[1] + p1];
            const int m = ry.x & 0xff, np = (ry.x >> 8) & 0xff, core = (ry.x >> 16) & 0xff;
            const double *wy = w + (off[1] + p1) * MAX_CHILDREN;
            for (int s0 = lane; s0 < S[0]; s0 += G) {
                unsigned bits = 0, zz = 0x1f;
                double x = 0, y = 0, z = 0;
#pragma unroll
                for (int c = 0; c < MAX_CHILDREN; ++c) {
                    if (c >= m) break;
                    const int i1 = (p2 * S[1] + row_slot(ry, c)) * S[0] + s0;
                    const unsigned v = b1[i1];
                    bits |= (v & ((core >> c) & 1)) | (v & 10u) | (v & 4u & ((core >> c) & 1) << 2);
                    x += wy[c] * st1[3 * i1];
                    z += wy[c] * st1[3 * i1 + 2];
                    zz &= m1[i1];
                }
                unsigned zy;
                y = path(ry, np, [&](int s1) { return st1[3 * ((p2 * S[1] + s1) * S[0] + s0) + 1]; }, zy);
                put(st2, b2, r * S[0] + s0, x, y, z, bits);
                m2[r * S[0] + s0] = (uint16_t)(zz | zy << 5);
            }
        }
        __syncthreads();
        // Stage 3, along x: this thread's position.
        const int4 rx = row[p[0]];
        const int m0 = rx.x & 0xff, np0 = (rx.x >> 8) & 0xff, core = (rx.x >> 16) & 0xff;
        const double *wx = w + p[0] * MAX_CHILDREN;
        const int base2 = (p[2] * tb[1] + p[1]) * S[0];
        bits = 0;
        unsigned zyz = 0x3ff;
#pragma unroll
        for (int c = 0; c < MAX_CHILDREN; ++c) {
            if (c >= m0) break;
            const int i2 = base2 + row_slot(rx, c);
            const unsigned v = b2[i2];
            bits |= (v & ((core >> c) & 1)) | (v & 10u) | (v & 4u & ((core >> c) & 1) << 2);
            acc[1] += wx[c] * st2[3 * i2 + 1];
            acc[2] += wx[c] * st2[3 * i2 + 2];
            zyz &= m2[i2];
        }
        acc[0] = path(rx, np0, [&](int s0) { return st2[3 * (base2 + s0)]; }, zs[0]);
        zs[1] = zyz >> 5;
        zs[2] = zyz & 0x1f;
        // The split rule (coarse_splits).
        if ((bits & 6u) == 2u && !(bits & 1u)) {
            const int4 rr[3] = {rx, row[off[1] + p[1]], row[off[2] + p[2]]};
            if (coarse_splits(rr, fs, win, S)) bits &= 8u; // solid
        }
    }
    int P[3], rx[3];
    double W[3];
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        P[d] = tile[d] * tb[d] + p[d];
        rx[d] = row[off[d] + p[d]].x;
        W[d] = wsum[off[d] + p[d]];
    }
    coarse_put(a, P, rx, W, bits, zs, acc, uniform, all_solid);
}
template <class T, bool FR> __global__ void gen_coarse_kernel(const GenCoarse<T> a)
{
    extern __shared__ __align__(16) unsigned char gc_smem[];
    const uint32_t n = a.list ? *a.count : a.tiles;
    for (uint32_t t = blockIdx.x; t < n; t += gridDim.x) {
        coarse_tile<T, FR>(a, (int)(a.list ? a.list[t] : t), gc_smem);
        __syncthreads(); // the next tile takes the shared memory
    }
}

// The first pass of a level's coarse build: it reads a tile's window, as
// coarse_tile's does, to see whether the tile is of one kind; it writes
// such a tile's positions (coarse_put) and lists the others for
// gen_coarse_kernel.  Without fractions (!FR), a warp takes a tile
// (FIRST_WARPS a block; no barrier: while some warps wait for their
// loads, others issue), and with the tile's x slots in one run (every
// level 0 of a mask) the mask's bytes of each row of slots go by aligned
// loads (word_kinds, stricter than the codes: a byte of 0, fluid without
// a closed face, is open fluid); the high x wall's slot stands for the last
// point, as in the window, so the run is clamped to n - 1 (a tile whose
// only slot is the wall reads that point, not the ghost).  With fractions
// the block takes a tile; on a mask's coarse levels (fone: a byte a point
// for its three fractions) its threads take the rows of slots as a warp
// does without, the fone bytes of a row's slots (x not clamped, as the
// window's fractions) beside its mask bytes (level 1's pass at 512^3,
// float, a sphere: 207 -> 73 us under ncu, against the fractions loaded
// a point at a time); else (beta's level 0) a row of slots a warp through
// window_scan.  A tile is of one kind here only where it is in
// window_scan's view; a stricter test only sends more tiles to the
// stages, which find their kind again.  FIRST_LOADS: a row's loads in
// flight (five, all of a 3D row of 61 slots, took 76 registers, three
// blocks per SM: 256 against 250 us).
constexpr int FIRST_WARPS = 8, FIRST_POS = 40; // tile positions along the three axes: at most 30 + 8 + 1
constexpr int FIRST_LOADS = 4;
template <class T, bool FR> __global__ void __launch_bounds__(32 * FIRST_WARPS) gen_first_kernel(const GenCoarse<T> a)
{
    constexpr int NW = FR ? 1 : FIRST_WARPS, TH = FR ? 32 * FIRST_WARPS : 32; // tiles a block, threads a tile
    __shared__ int srx[NW][FIRST_POS];
    __shared__ double sws[NW][FIRST_POS];
    const int lane = threadIdx.x & 31, wp = FR ? 0 : (int)(threadIdx.x >> 5), tid = (int)threadIdx.x % TH;
    const unsigned b = FR ? blockIdx.x : blockIdx.x * FIRST_WARPS + (threadIdx.x >> 5);
    if (b >= a.tiles) return; // FR: the whole block
    const Grid<T> &F = a.f;
    const int tb[3] = {a.ax[0].tb, a.ax[1].tb, a.ax[2].tb};
    int tile[3];
    {
        const unsigned n0 = (unsigned)a.ax[0].nt, n1 = (unsigned)a.ax[1].nt, q = a.ax[0].by_nt(b), q2 = a.ax[1].by_nt(q);
        tile[0] = (int)(b - q * n0);
        tile[1] = (int)(q - q2 * n1);
        tile[2] = (int)q2;
    }
    const int *sl[3];
    int S[3];
#pragma unroll
    for (int d = 0; d < 3; ++d) {
        sl[d] = a.ax[d].slot + (size_t)tile[d] * a.ax[d].stride;
        S[d] = __ldg(sl[d]);
    }
    // The tile's rows along each axis: x word and weights' sum per position.
    const int off[3] = {0, tb[0], tb[0] + tb[1]}, sb = tb[0] + tb[1] + tb[2];
    for (int q = tid; q < sb; q += TH) {
        const int d = q < tb[0] ? 0 : q < tb[0] + tb[1] ? 1 : 2;
        const int64_t P = (int64_t)tile[d] * tb[d] + (q - off[d]);
        srx[wp][q] = __ldg(&a.ax[d].row[P].x);
        double s = 0;
        for (int c = 0; c < MAX_CHILDREN; ++c) s += __ldg(a.ax[d].w + P * MAX_CHILDREN + c);
        sws[wp][q] = s;
    }
    const int nf[3] = {F.nx, F.ny, F.is3d ? F.nz : 1};
    unsigned mix = 0;
    const int xa = __ldg(sl[0] + 1), xb = __ldg(sl[0] + S[0]);
    const auto fsl = [&](int d, int s) { return __ldg(sl[d] + 1 + s); };
    if (F.mk && xb - xa == S[0] - 1 && (!FR || a.fone)) {
        // CH bytes a load, 16 in 3D, 4 in 2D (short rows).  A load starts
        // at or after the run's first byte rounded down to CH and holds a
        // byte of the run, so it stays inside the mask (and fone), whose
        // start is aligned and whose length is a multiple of 16.
        const int x0 = min(xa, nf[0] - 1), run = min(xb, nf[0] - 1) - x0, CH = F.is3d ? 16 : 4;
        const int64_t fst[3] = {1, F.sy, F.is3d ? F.sz : 0};
        const auto load_ch = [&](const uint8_t *p, uint32_t(&v)[4]) { // the CH bytes at p (aligned)
            if (CH == 16) {
                const uint4 q = *(const uint4 *)p;
                v[0] = q.x;
                v[1] = q.y;
                v[2] = q.z;
                v[3] = q.w;
            } else {
                v[0] = *(const uint32_t *)p;
            }
        };
        // A thread a row of slots, its loads FIRST_LOADS at a time (a row's
        // address once for all of its loads: 310 -> 250 us for a 512^3
        // float mask's first level, against a lane a load); slot counts
        // are bytes, so r stays far below 2^32, SmallDiv's range.
        const SmallDiv by_s1((uint32_t)S[1]);
        for (int r = tid; r < S[1] * S[2]; r += TH) {
            const int r2 = (int)by_s1((uint32_t)r), jf = fsl(1, r - r2 * S[1]), kf = fsl(2, r2);
            const int j = min(jf, nf[1] - 1), k = min(kf, nf[2] - 1);
            const uint8_t *lo = F.mk + F.base + j * fst[1] + k * fst[2] + x0;
            const int first = (int)((uintptr_t)lo & (uintptr_t)(CH - 1)); // the run's first byte in the first load
            const uint8_t *pw0 = lo - first;
            const int nw = (first + run) / CH + 1; // the row's loads
            if (FR) { // the fractions' bytes of the slots (their rows and x unclamped), 1 each
                const uint8_t *ol = a.fone + F.base + jf * fst[1] + kf * fst[2] + xa;
                const int ofirst = (int)((uintptr_t)ol & (uintptr_t)(CH - 1)), orun = xb - xa;
                const uint8_t *ow = ol - ofirst;
                for (int c = 0; c <= (ofirst + orun) / CH; ++c) {
                    uint32_t v[4] = {0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u};
                    load_ch(ow + CH * c, v);
                    const int lb = ofirst - CH * c;
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        if ((v[i] ^ 0x01010101u) & byte_range(lb - 4 * i, lb + orun - 4 * i)) mix |= 5u;
                }
            }
            for (int c0 = 0; c0 < nw; c0 += FIRST_LOADS) {
                uint32_t v[FIRST_LOADS][4] = {};
                int lo_b[FIRST_LOADS], hi_b[FIRST_LOADS]; // the bytes of the load inside the row's run: lo_b .. hi_b
#pragma unroll
                for (int h = 0; h < FIRST_LOADS; ++h) {
                    lo_b[h] = 1;
                    hi_b[h] = 0;
                    if (c0 + h >= nw) continue;
                    lo_b[h] = first - CH * (c0 + h);
                    hi_b[h] = lo_b[h] + run;
                    load_ch(pw0 + CH * (c0 + h), v[h]);
                }
#pragma unroll
                for (int h = 0; h < FIRST_LOADS; ++h) {
                    if (lo_b[h] > hi_b[h]) continue; // no load
                    if (lo_b[h] <= 0 && hi_b[h] >= CH - 1) { // every byte inside the run
                        uint32_t o = 0, dx = 0, ns = 0;
#pragma unroll
                        for (int i = 0; i < 4; ++i)
                            if (4 * i < CH) {
                                o |= v[h][i];
                                dx |= v[h][i] ^ 0x01010101u * PGPU_CELL_DIRICHLET;
                                ns |= ~type_bytes(v[h][i], PGPU_CELL_SOLID);
                            }
                        mix |= word_kinds_of(o, ns, dx);
                    } else {
#pragma unroll
                        for (int i = 0; i < 4; ++i)
                            if (4 * i < CH) mix |= word_kinds(v[h][i], byte_range(lo_b[h] - 4 * i, hi_b[h] - 4 * i));
                    }
                }
            }
        }
    } else if (FR) {
        mix = window_scan<T, FR, 1>(F, S, fsl, (int)(threadIdx.x >> 5), FIRST_WARPS, 32, lane, (unsigned char *)nullptr);
    } else {
        mix = window_scan<T, FR, 4>(F, S, fsl, 0, 1, 32, lane, (unsigned char *)nullptr);
    }
    bool all_fluid, all_solid, all_held;
    if (FR) {
        all_fluid = __syncthreads_and(!(mix & 1u)) != 0; // (also orders srx / sws for the writes)
        all_solid = __syncthreads_and(!(mix & 2u)) != 0;
        all_held = __syncthreads_and(!(mix & 4u)) != 0;
    } else {
        mix = __reduce_or_sync(0xffffffffu, mix);
        all_fluid = !(mix & 1u);
        all_solid = !(mix & 2u);
        all_held = !(mix & 4u);
        __syncwarp();
    }
    if (!all_fluid && !all_solid && !all_held) { // for the second pass
        if (tid == 0) a.list[atomicAdd(a.count, 1u)] = b;
        return;
    }
    const unsigned bits = all_solid ? 0u : all_held ? 13u : 6u, zs[3] = {0, 0, 0};
    const double acc[3] = {0, 0, 0};
    // Threads over x positions, TH / tb[0] rows of the tile at a time.
    const int per = TH / tb[0], lr = tid / tb[0], p0 = tid - lr * tb[0];
    const SmallDiv by_tb1((uint32_t)tb[1]);
    for (int q = lr; q < tb[1] * tb[2]; q += per) {
        if (lr >= per) break;
        const int p2 = (int)by_tb1((uint32_t)q), p[3] = {p0, q - p2 * tb[1], p2};
        int P[3], rx[3];
        double W[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            P[d] = tile[d] * tb[d] + p[d];
            rx[d] = srx[wp][off[d] + p[d]];
            W[d] = sws[wp][off[d] + p[d]];
        }
        coarse_put(a, P, rx, W, bits, zs, acc, true, all_solid);
    }
}

// Fine child c of coarse position P's restriction row along one axis.
__device__ __forceinline__ int row_child(const CoarseAxis &A, int P, int c)
{
    return __ldg(A.slot + (size_t)(P / A.tb) * A.stride + 1 + row_slot(A.row[P], c));
}

// The iso rule, once gen_coarse_kernel has written the level (before
// gen_shut_kernel): a coarse point is Dirichlet where a core child is, so a
// fine Dirichlet point that is nobody's core child (off the coarse nodes)
// and has no Dirichlet parent left the coarse levels.  Where it was the
// only one (a reference cell in a closed tank or a sealed pocket) the
// coarse problems were singular and V-cycles diverged.  Such a point makes
// its parent of the largest restriction weight (ties, to a relative 1e-9
// that the positions' rounding leaves: the lowest index) Dirichlet.  A
// thread per candidate, a point that gen_coarse_kernel listed (a.cand;
// without the room for the list, a thread per coarse point skipping the
// others) and left 1 in a.iso (not Dirichlet, a Dirichlet child: next to
// a Dirichlet region, or a lone cell's parent), walks its Dirichlet children
// that are no core child and their parents, and leaves 1 in its own byte
// of a.iso where it is the heaviest parent of one no coarse Dirichlet
// point holds, else 0; gen_shut_kernel makes it Dirichlet.  (A warp per
// row left the candidates of a free surface's row to one warp: 0.31 ms on
// a 512^3 pool's first level against 0.24.)  The decisions read the types
// as gen_coarse_kernel wrote them, which no thread changes.
template <class T> __global__ void gen_iso_kernel(const GenCoarse<T> a)
{
    const Grid<T> &F = a.f, &C = a.c;
    const int64_t n = a.cand ? (int64_t)*a.ncand : (int64_t)C.nx * C.ny * C.nz;
    PGPU_GRID_STRIDE(s, n)
    {
        int P[3];
        const int64_t pc = point_of(C, a.cand ? (int64_t)a.cand[s] : s, P[0], P[1], P[2]);
        if (!a.iso[pc]) continue;
        // Dirichlet points of the 3 x 3 (x 3) coarse block around this one
        // (bit x + 1 + 3 (y + 1) + 9 (z + 1)), loaded together: a parent
        // of a child lies there unless a periodic wrap parts them (ghost
        // bytes hold no parent but exist).
        const int64_t cs[3] = {1, C.sy, C.sz};
        const int zr = C.is3d ? 1 : 0;
        uint32_t near = 0;
        for (int dz = -zr; dz <= zr; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
                for (int dx = -1; dx <= 1; ++dx)
                    near |= ((a.cmk[pc + dx + dy * cs[1] + dz * cs[2]] & CELL_BITS) == PGPU_CELL_DIRICHLET
                                 ? 1u
                                 : 0u)
                            << (dx + 1 + 3 * (dy + 1) + 9 * (dz + 1));
        auto dirichlet = [&](const int Q[3]) {
            const int o[3] = {Q[0] - P[0], Q[1] - P[1], Q[2] - P[2]};
            if (o[0] >= -1 && o[0] <= 1 && o[1] >= -1 && o[1] <= 1 && o[2] >= -zr && o[2] <= zr)
                return ((near >> (o[0] + 1 + 3 * (o[1] + 1) + 9 * (o[2] + 1))) & 1u) != 0;
            const int64_t q = C.base + Q[0] + (int64_t)Q[1] * C.sy + (C.is3d ? (int64_t)Q[2] * C.sz : 0);
            return (a.cmk[q] & CELL_BITS) == PGPU_CELL_DIRICHLET;
        };
        int m[3], ch[3][MAX_CHILDREN];
        int4 pr[3][MAX_CHILDREN];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            m[d] = a.ax[d].row[P[d]].x & 0xff;
            for (int c = 0; c < m[d]; ++c) {
                ch[d][c] = row_child(a.ax[d], P[d], c);
                pr[d][c] = __ldg(a.par[d].p + ch[d][c]);
            }
        }
        bool mark = false;
        for (int c2 = 0; c2 < m[2] && !mark; ++c2)
            for (int c1 = 0; c1 < m[1] && !mark; ++c1)
                for (int c0 = 0; c0 < m[0] && !mark; ++c0) {
                    const int i = ch[0][c0], j = ch[1][c1], k = ch[2][c2];
                    const int4 px = pr[0][c0], py = pr[1][c1], pz = pr[2][c2];
                    if (px.x & py.x & pz.x & 256) continue; // a core child: its parent is Dirichlet
                    if ((F.mk[F.base + i + (int64_t)j * F.sy + (F.is3d ? (int64_t)k * F.sz : 0)] & CELL_BITS) !=
                        PGPU_CELL_DIRICHLET)
                        continue;
                    const int n[3] = {px.x & 0xff, py.x & 0xff, pz.x & 0xff};
                    const int Q0[3] = {px.y, px.z, px.w}, Q1[3] = {py.y, py.z, py.w}, Q2[3] = {pz.y, pz.z, pz.w};
                    bool held = false;
                    for (int e2 = 0; e2 < n[2] && !held; ++e2)
                        for (int e1 = 0; e1 < n[1] && !held; ++e1)
                            for (int e0 = 0; e0 < n[0] && !held; ++e0) {
                                const int Q[3] = {Q0[e0], Q1[e1], Q2[e2]};
                                held = dirichlet(Q);
                            }
                    if (held) continue;
                    double best = -1;
                    int64_t at = -1;
                    for (int e2 = 0; e2 < n[2]; ++e2)
                        for (int e1 = 0; e1 < n[1]; ++e1)
                            for (int e0 = 0; e0 < n[0]; ++e0) {
                                const double wt = __ldg(a.par[0].w + (size_t)i * MAX_PARENTS + e0) *
                                                  __ldg(a.par[1].w + (size_t)j * MAX_PARENTS + e1) *
                                                  __ldg(a.par[2].w + (size_t)k * MAX_PARENTS + e2);
                                if (wt > best * (1 + 1e-9)) { // (a tie in exact weights: the first)
                                    best = wt;
                                    at = C.base + Q0[e0] + (int64_t)Q1[e1] * C.sy +
                                         (C.is3d ? (int64_t)Q2[e2] * C.sz : 0);
                                }
                            }
                    mark = at == pc;
                }
        a.iso[pc] = mark ? 1 : 0;
    }
}

// The shut rule, once gen_coarse_kernel has written the level (before
// gen_distance_kernel): for solid layers one cell thick that the coarse
// level no longer resolves (doc/model's V5 with the split rule of
// gen_coarse_kernel: thin walls standing in the fluid and films at a high
// face of an even axis stalled V-cycles at 0.6 to 0.9).  An inner face one
// of whose path faces is 0 across the face's whole width (the bit
// gen_coarse_kernel leaves in the high face's place) is closed where one
// side is Dirichlet or neither side's core children are all solid.  A
// warp per row, a lane per point, its low faces: it rewrites its own
// fraction-0 bits and faces only, and reads its neighbours' type bits.
template <class T> __global__ void __launch_bounds__(256) gen_shut_kernel(const GenCoarse<T> a)
{
    const Grid<T> &C = a.c;
    const int lane = threadIdx.x & 31;
    const int64_t rows = (int64_t)C.ny * C.nz, warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; r < rows; r += warps) { // a warp per row
        const int j = (int)(r % C.ny), k = (int)(r / C.ny);
        const int64_t row = C.base + j * C.sy + k * C.sz;
        for (int i = lane; i < C.nx; i += 32) {
            const int64_t pc = row + i;
            // the type with gen_iso_kernel's marks (a neighbour's byte may
            // be rewritten meanwhile, its type only to the marked one)
            auto type_at = [&](int64_t e) {
                return a.iso && a.iso[e] ? (unsigned)PGPU_CELL_DIRICHLET : a.cmk[e] & CELL_BITS;
            };
            const unsigned own = a.cmk[pc], raw = type_at(pc);
            unsigned out = (own & ~CELL_BITS) | raw;
            if ((own & 0xa8u) && raw != PGPU_CELL_SOLID) { // (the bits are set on inner faces only)
#pragma unroll
                for (int d = 0; d < 3; ++d) {
                    const int64_t cs = d == 0 ? 1 : d == 1 ? C.sy : C.sz;
                    if (!((own >> (CLOSED_SHIFT + 2 * d + 1)) & 1u)) continue;
                    const unsigned nb = type_at(pc - cs);
                    if (nb == PGPU_CELL_SOLID) continue;
                    if (raw == PGPU_CELL_DIRICHLET || nb == PGPU_CELL_DIRICHLET ||
                        (raw != CELL_FLUID_SOLID_CORE && nb != CELL_FLUID_SOLID_CORE)) {
                        a.cf[d][pc] = T(0);
                        if (a.cone) a.cone[pc] = 0;
                        out |= 1u << (CLOSED_SHIFT + 2 * d);
                    }
                }
            }
            if (out != own) a.cmk[pc] = (uint8_t)out;
        }
    }
}

// One fine row of a coarse face's walk (gen_distance_kernel's, below),
// from the fluid side: the row's coupling, the coarse spacing H over the
// distance to its first Dirichlet point (0 where a closed face or a solid
// point comes first), and that point's element in `held` (-1: none).  e0:
// the row's element at walk node 0 (unshifted), kk / xx the face's walk
// (nodes, distances), fd the element stride along the axis d, frd the fine
// fractions across that axis (NULL: none), scale as GenCoarse::scale.
template <class T>
__device__ __forceinline__ double walk_row(const Grid<T> &F, const T *frd, int d, int64_t fd, int64_t e0,
                                           const int *kk, const double *xx, bool fwd, bool scale, int64_t &held)
{
    const int cnt = kk[0];
    const double H = xx[0];
    // the walk's end pieces, off the fine nodes (cell pairs, a periodic
    // ring): from the fluid point's position to the first node, from the
    // last node to the far end
    const double lead = fwd ? xx[1] : H - xx[cnt], tail = fwd ? H - xx[cnt] : xx[1];
    // node q of the walk from the fluid side: its element and distance
    auto node = [&](int q) { return e0 + (int64_t)kk[1 + (fwd ? q : cnt - 1 - q)] * fd; };
    auto at = [&](int q) { return fwd ? xx[1 + q] : H - xx[cnt - q]; };
    // the face between nodes q - 1 and q: its fraction, 0 where closed or
    // its higher point is solid (as gen_coarse_kernel's window counts it)
    auto face = [&](int q) {
        const int64_t hi = node(fwd ? q : q - 1);
        const unsigned b = F.mk[hi];
        if (((b >> (CLOSED_SHIFT + 2 * d)) & 1u) || (b & CELL_BITS) == PGPU_CELL_SOLID) return 0.0;
        return frd ? (double)frd[hi] : 1.0;
    };
    // an end piece's length over its fraction: 1 for a mask alone, with
    // beta the fine face's it lies on (hi: that face's higher node);
    // infinite where that is not positive
    auto piece = [&](double len, int64_t hi) {
        if (!(len > 1e-9 * H) || !scale || !frd) return len;
        const double fr = (double)frd[hi];
        return fr > 0 ? len / fr : INFINITY;
    };
    held = -1;
    const unsigned ts = F.mk[node(0)] & CELL_BITS;
    double v = 0;
    if (ts == PGPU_CELL_DIRICHLET) { // held next to the fluid point: the faces' mean
        for (int q = 1; q < cnt; ++q) v += face(q);
        v = cnt > 1 ? v / (cnt - 1) : 1.0;
        held = node(0);
    } else if (ts == PGPU_CELL_FLUID) {
        double dist = piece(lead, node(0) + (fwd ? 0 : fd));
        bool cut = false;
        for (int q = 1; q < cnt && !cut && held < 0; ++q) {
            const double fr = face(q);
            const unsigned tq = F.mk[node(q)] & CELL_BITS;
            cut = fr == 0.0 || tq == PGPU_CELL_SOLID;
            if (!cut) dist += (at(q) - at(q - 1)) / fr;
            if (tq == PGPU_CELL_DIRICHLET) held = node(q);
        }
        if (held < 0) dist += piece(tail, node(cnt - 1) + (fwd ? fd : 0));
        v = cut || !(dist > 0) ? 0.0 : H / dist;
        if (v == 0.0) held = -1;
    }
    return v;
}

// The faces between a coarse fluid and a coarse Dirichlet point, once
// gen_coarse_kernel has written the level: the stages' mean of the fine
// faces on the path puts the held value a coarse spacing away, where the
// fine fluid's nearest held point may be one fine spacing away (a coarse
// point is Dirichlet only where its core child is).  Each level then moved
// the held boundary outwards and V-cycles diverged on a free surface
// between kept nodes (Dirichlet cells above y = 0.5 at 127^2: 1.25 per
// cycle).  Here such a face takes, per fine row across it (the rows'
// weights as the stages use them), the coarse spacing over the distance
// from the fluid point's position to the row's first Dirichlet point along
// the face's axis, each fine face's length over its fraction (a row ends
// at the far coarse point's position when it holds no Dirichlet point);
// 0 where the row meets a closed face or a solid point first, or its point
// next to the fluid one is solid (no flux leaves it).  Fluid sealed from
// Dirichlet cells by a solid layer, which the mean coupled to them with
// 0.5, is then cut off too.
//
// Runs after gen_shut_kernel, and overrides it on these faces.  A thread
// per coarse point, its low faces: it rewrites its own bits and faces
// only, and reads its neighbours' type bits, which no thread changes.
template <class T> __global__ void gen_distance_kernel(const GenCoarse<T> a)
{
    const Grid<T> &F = a.f, &C = a.c;
    PGPU_GRID_STRIDE(t, (int64_t)C.nx * C.ny * C.nz)
    {
        int P[3];
        const int64_t pc = point_of(C, t, P[0], P[1], P[2]);
        // a coarse point's type (CELL_FLUID_SOLID_CORE is fluid here)
        auto type_at = [&](int64_t e) {
            const unsigned b = a.cmk[e] & CELL_BITS;
            return b == CELL_FLUID_SOLID_CORE ? PGPU_CELL_FLUID : b;
        };
        const unsigned own = a.cmk[pc], t1 = type_at(pc);
        if (t1 == PGPU_CELL_SOLID) continue;
        // the type across each low face that makes a pair with this point's
        const unsigned want = t1 == PGPU_CELL_FLUID ? PGPU_CELL_DIRICHLET : PGPU_CELL_FLUID;
        bool pair[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            const int64_t cs = d == 0 ? 1 : d == 1 ? C.sy : C.sz;
            pair[d] = P[d] > 0 && (d < 2 || C.is3d) && type_at(pc - cs) == want;
        }
        if (!pair[0] && !pair[1] && !pair[2]) continue;
        const bool fwd = t1 == PGPU_CELL_DIRICHLET; // the fluid point is the low one
        unsigned out = own;
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            if (!pair[d]) continue;
            const int I = P[d];
            const int *kk = a.wk[d].k + (size_t)I * (MAX_WALK + 1);
            const int cnt = kk[0];
            if (!cnt) continue;
            const double *xx = a.wk[d].x + (size_t)I * (MAX_WALK + 1);
            const T *frd = d == 0 ? F.fx : d == 1 ? F.fy : F.fz;
            const int64_t fd = d == 0 ? 1 : d == 1 ? F.sy : F.sz;
            const int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
            const int64_t f1 = d1 == 0 ? 1 : d1 == 1 ? F.sy : F.sz, f2 = d2 == 0 ? 1 : d2 == 1 ? F.sy : F.is3d ? F.sz : 0;
            const CoarseAxis &A1 = a.ax[d1], &A2 = a.ax[d2];
            const int m1 = A1.row[P[d1]].x & 0xff, m2 = A2.row[P[d2]].x & 0xff;
            double num = 0, W1 = 0, W2 = 0;
            for (int c2 = 0; c2 < m2; ++c2) W2 += A2.w[(size_t)P[d2] * MAX_CHILDREN + c2];
            for (int c1 = 0; c1 < m1; ++c1) {
                const double w1 = A1.w[(size_t)P[d1] * MAX_CHILDREN + c1];
                W1 += w1;
                for (int c2 = 0; c2 < m2; ++c2) {
                    const double w = w1 * A2.w[(size_t)P[d2] * MAX_CHILDREN + c2];
                    const int64_t e0 = F.base + (int64_t)row_child(A1, P[d1], c1) * f1 +
                                       (int64_t)row_child(A2, P[d2], c2) * f2;
                    int64_t held;
                    num += w * walk_row(F, frd, d, fd, e0, kk, xx, fwd, a.scale, held);
                }
            }
            const double ws = W1 * W2;
            const T fr = T(ws > 0 ? num / ws : 0.0);
            a.cf[d][pc] = fr;
            if (a.cone && fr != T(1)) a.cone[pc] = 0;
            const unsigned bit = 1u << (CLOSED_SHIFT + 2 * d);
            out = fr == T(0) ? out | bit : out & ~bit;
        }
        if (out != own) a.cmk[pc] = (uint8_t)out;
    }
}

// FMG's values of a coarse level's Dirichlet points.  The coarse problems
// hold zero there (their right-hand sides carry the held values: fmg_coarse),
// so the coarse solution jumps from u to 0 at the mask's boundary; FMG's
// cubic interpolation reading those zeros left an error of a few percent of
// |u| beside Dirichlet points that no later cycle removes at any h.  Each
// Dirichlet point of the coarse level a.c takes the value (src, level a.f's
// values) of a Dirichlet core child (gen_coarse_kernel's rule made it
// Dirichlet from one), else of any Dirichlet child (gen_iso_kernel's rule),
// else 0: level by level, the caller's values beneath.  Only Dirichlet
// points of dst are written.
template <class T>
__global__ void held_values_kernel(const __grid_constant__ GenCoarse<T> a, const T *__restrict__ src, T *dst)
{
    const Grid<T> &F = a.f, &C = a.c;
    const int64_t fs[3] = {1, F.sy, F.is3d ? F.sz : 0};
    PGPU_GRID_STRIDE(s, (int64_t)C.nx * C.ny * C.nz)
    {
        int P[3];
        const int64_t pc = point_of(C, s, P[0], P[1], P[2]);
        if ((C.mk[pc] & CELL_BITS) != PGPU_CELL_DIRICHLET) continue;
        int m[3], core[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            const int x = a.ax[d].row[P[d]].x;
            m[d] = x & 0xff;
            core[d] = (x >> 16) & 0xff;
        }
        int64_t at = -1;
        for (int pass = 0; pass < 2 && at < 0; ++pass)
            for (int c2 = 0; c2 < m[2] && at < 0; ++c2)
                for (int c1 = 0; c1 < m[1] && at < 0; ++c1)
                    for (int c0 = 0; c0 < m[0] && at < 0; ++c0) {
                        if (pass == 0 && !((core[0] >> c0) & (core[1] >> c1) & (core[2] >> c2) & 1)) continue;
                        const int64_t p = F.base + row_child(a.ax[0], P[0], c0) * fs[0] +
                                          row_child(a.ax[1], P[1], c1) * fs[1] + row_child(a.ax[2], P[2], c2) * fs[2];
                        if ((F.mk[p] & CELL_BITS) == PGPU_CELL_DIRICHLET) at = p;
                    }
        dst[pc] = at >= 0 ? src[at] : T(0);
    }
}

// FMG's coarse right-hand sides with held points: the restriction of f alone
// (fmg_restrict), and here, on the coarse level a.c, each face between a
// fluid and a Dirichlet point adds its coupling times the held value its
// coupling was measured to: per fine row across the face,
// gen_distance_kernel's walk to the row's first Dirichlet point, its value
// from src (level a.f's values: held_values_kernel's), the rows' values
// averaged with the weights that made the coupling; a row that meets no
// Dirichlet point ends at the coarse neighbour (its value in cval, the
// coarse level's).  (The restricted boundary terms that the correction
// levels take instead put a held value's pull where the fine staircase has
// it, which the coarse staircase does not: FMG's pass left 3e-2 of max |u|
// near the boundary of a sphere of Dirichlet cells, at every h.)
template <class T>
__global__ void held_terms_kernel(const __grid_constant__ GenCoarse<T> a, const T *__restrict__ src,
                                  const T *__restrict__ cval, T *rhs)
{
    const Grid<T> &F = a.f, &C = a.c;
    const int64_t fs[3] = {1, F.sy, F.is3d ? F.sz : 0};
    PGPU_GRID_STRIDE(t, (int64_t)C.nx * C.ny * C.nz)
    {
        int P[3];
        const int64_t pc = point_of(C, t, P[0], P[1], P[2]);
        if (!gen_fluid(C, pc)) continue;
        const GenPoint<T> q = gen_couplings(C, pc, P[0], P[1], P[2]);
        double s = 0;
        for (int f = 0; f < (C.is3d ? 6 : 4); ++f) {
            const int64_t pn = pc + q.o[f];
            if (q.v[f] == T(0) || (C.mk[pn] & CELL_BITS) != PGPU_CELL_DIRICHLET) continue;
            const double un = (double)cval[pn];
            const int d = f >> 1;
            const bool fwd = f & 1; // the fluid point is the face's low one
            const int I = P[d] + (fwd ? 1 : 0);
            const int *kk = a.wk[d].k + (size_t)I * (MAX_WALK + 1);
            if (!kk[0]) { // no walk (a periodic wrap): the neighbour's value
                s += (double)q.v[f] * un;
                continue;
            }
            const double *xx = a.wk[d].x + (size_t)I * (MAX_WALK + 1);
            const T *frd = d == 0 ? F.fx : d == 1 ? F.fy : F.fz;
            const int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
            const CoarseAxis &A1 = a.ax[d1], &A2 = a.ax[d2];
            const int m1 = A1.row[P[d1]].x & 0xff, m2 = A2.row[P[d2]].x & 0xff;
            double num = 0, val = 0;
            for (int c1 = 0; c1 < m1; ++c1)
                for (int c2 = 0; c2 < m2; ++c2) {
                    const double w = A1.w[(size_t)P[d1] * MAX_CHILDREN + c1] * A2.w[(size_t)P[d2] * MAX_CHILDREN + c2];
                    const int64_t e0 = F.base + (int64_t)row_child(A1, P[d1], c1) * fs[d1] +
                                       (int64_t)row_child(A2, P[d2], c2) * fs[d2];
                    int64_t held;
                    const double v = walk_row(F, frd, d, fs[d], e0, kk, xx, fwd, a.scale, held);
                    if (!(v > 0)) continue;
                    num += w * v;
                    val += w * v * (held >= 0 ? (double)src[held] : un);
                }
            s += (double)q.v[f] * (num > 0 ? val / num : un);
        }
        if (s != 0) rhs[pc] += T(s);
    }
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 22 "src/poisson_gpu.cu"
#endif
// regions.h -- connected fluid regions and the projection of singular ones; General<T>
#ifdef PGPU_SRC_LINES
#line 2 "src/regions.h"
#endif


namespace pgpu {

// SH: lab is a block's shared array, whose every access while linking is
// an atomic one (the linking races by design; so each access is one the
// hardware orders and a race checker accepts); a global array's parents
// are read by volatile loads and halved by plain stores.
template <bool SH> __device__ __forceinline__ uint32_t uf_parent(uint32_t *lab, uint32_t x)
{
    if (SH) return atomicOr(lab + x, 0u) & LAB_INDEX;
    return ((volatile uint32_t *)lab)[x] & LAB_INDEX;
}
template <bool SH> __device__ __forceinline__ uint32_t uf_find(uint32_t *lab, uint32_t x)
{
    // With path halving (each visited point to its grandparent, as ECL-CC
    // does): parents only decrease and any ancestor lies in the point's set,
    // so a concurrent link is never lost (the linking thread goes on from
    // the old parent).  Labels carry no flag bits while linking (nor do the
    // tile-local indices of gen_regions_tile_kernel, below 4096).
    uint32_t curr = uf_parent<SH>(lab, x);
    if (curr == x) return x;
    uint32_t prev = x, next;
    while (curr > (next = uf_parent<SH>(lab, curr))) {
        if (SH) atomicMin(lab + prev, next);
        else ((volatile uint32_t *)lab)[prev] = next;
        prev = curr;
        curr = next;
    }
    return curr;
}
template <bool SH> __device__ __forceinline__ void uf_union(uint32_t *lab, uint32_t a, uint32_t b)
{
    for (;;) {
        a = uf_find<SH>(lab, a);
        b = uf_find<SH>(lab, b);
        if (a == b) return;
        if (a > b) { const uint32_t s = a; a = b; b = s; }
        const uint32_t old = atomicMin(lab + b, a);
        if (old == b) return;
        b = old;
    }
}

// Region labelling.  Union-find on the fluid points, first within tiles of
// RG_TX x RG_TY x RG_TZ points (gen_regions_tile_kernel, which also sets
// the touch bits of the parts on a Dirichlet box face), then those of the
// parts next to a Dirichlet point (gen_regions_touch_kernel),
// the links across the faces between tiles and the periodic seams
// (gen_regions_link_kernel), the tiles' roots alone
// (gen_regions_roots_kernel), and last each point its region's label
// (gen_regions_final_kernel).  Every label but a final one is an interior
// index, and every parent is a tile root, so a point reaches its region's
// root in at most two steps once the tile roots are flattened.  Two bit sets
// over the interior points: the tile roots, and the roots whose part (after
// linking: whose region) touches a Dirichlet point or face.
constexpr int RG_TX = 32, RG_TY = 8, RG_TZ_3D = 16;
static_assert(RG_TX == 32, "a tile row is a warp");

// The tiles of a level, numbered x fastest.
template <class T> __host__ __device__ inline uint32_t rg_tiles(const Grid<T> &g)
{
    const int tz = g.is3d ? RG_TZ_3D : 1;
    return (uint32_t)((g.nx + RG_TX - 1) / RG_TX) * (uint32_t)((g.ny + RG_TY - 1) / RG_TY) *
           (uint32_t)((g.nz + tz - 1) / tz);
}
// A tile wholly of fluid points (its bit set in `full`) has one label, its
// first point's (the root, an index): gen_regions_tile_kernel writes no
// other.  So the label of point (i, j, k) (interior index q) is read at
// rg_at's index: that first point there, q elsewhere.
template <class T>
__device__ __forceinline__ uint32_t rg_at(const Grid<T> &g, const uint32_t *full, int i, int j, int k, uint32_t q)
{
    const int tz = g.is3d ? RG_TZ_3D : 1;
    const uint32_t bi = (uint32_t)i / RG_TX, bj = (uint32_t)j / RG_TY, bk = (uint32_t)k / (uint32_t)tz;
    const uint32_t bxn = (uint32_t)(g.nx + RG_TX - 1) / RG_TX, byn = (uint32_t)(g.ny + RG_TY - 1) / RG_TY;
    if (!bit_of(full, bi + bxn * (bj + byn * bk))) return q;
    return bi * RG_TX + (uint32_t)g.nx * (bj * RG_TY + (uint32_t)g.ny * bk * (uint32_t)tz);
}

// A block per tile (a warp per row of RG_TX points, each thread a column of
// RG_TZ), tiles numbered x fastest.  A row's runs of fluid points need no
// linking: each point's parent is its run's first point, from the row's
// ballot.  Between two rows (y or z) only the first point of each stretch
// where both rows are fluid links: the rest of the stretch lies in the same
// two runs.  The root is the smallest index of its part of the tile (a tile
// orders its points as the grid does), so labels only point down.  Each
// point's label is its tile root as an interior index; each tile root sets
// its bit in roots.  A tile wholly of fluid writes only its root's label
// and its bit in full (rg_at).  (2D: tiles of one plane, RG_TZ = 1.)
// The tile's coordinates come from the block index by FastDiv (dx, dy: the
// tiles along x and y), the column's bytes from one running address.  A
// part with a fluid point on a Dirichlet box face sets its root's touch
// bit here (a whole tile once).
template <class T> __device__ __forceinline__ bool dirichlet_face(const Grid<T> &g, int f)
{
    const int d = f >> 1, per = d == 0 ? g.px : d == 1 ? g.py : g.pz;
    return (d < 2 || g.is3d) && !per && ((g.dirichlet >> f) & 1);
}
// Whether the box of points from (i0, j0, k0) to (i1, j1, k1) meets a
// Dirichlet box face.
template <class T>
__device__ __forceinline__ bool meets_dirichlet_face(const Grid<T> &g, int i0, int j0, int k0, int i1, int j1, int k1)
{
    return (i0 == 0 && dirichlet_face(g, 0)) || (i1 == g.nx - 1 && dirichlet_face(g, 1)) ||
           (j0 == 0 && dirichlet_face(g, 2)) || (j1 == g.ny - 1 && dirichlet_face(g, 3)) ||
           (k0 == 0 && dirichlet_face(g, 4)) || (k1 == g.nz - 1 && dirichlet_face(g, 5));
}
template <class T, int RG_TZ>
__global__ void __launch_bounds__(RG_TX *RG_TY) gen_regions_tile_kernel(const Grid<T> g, uint32_t *lab,
                                                                         uint32_t *roots, uint32_t *full,
                                                                         uint32_t *touch, const FastDiv dx,
                                                                         const FastDiv dy)
{
    constexpr int TP = RG_TZ * RG_TY * RG_TX;
    __shared__ uint32_t par[TP];
    __shared__ unsigned rows[RG_TZ * RG_TY]; // each row's fluid points, bit tx
    const unsigned bxn = (unsigned)(g.nx + RG_TX - 1) / RG_TX, byn = (unsigned)(g.ny + RG_TY - 1) / RG_TY;
    const unsigned yz = dx(blockIdx.x), bx = blockIdx.x - yz * bxn, bz = dy(yz), by = yz - bz * byn;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i = bx * RG_TX + tx, j = by * RG_TY + ty, k0 = bz * RG_TZ;
    const bool col = i < g.nx && j < g.ny;
    const unsigned below = 0xffffffffu >> (31 - tx); // bits 0..tx
    bool whole = true; // this thread's column wholly fluid (outside the grid: not)
    unsigned char mb[RG_TZ]; // the column's bytes, their loads in flight together
    const uint8_t *cp = g.mk + (g.base + i + (int64_t)j * g.sy + (int64_t)k0 * g.sz);
#pragma unroll
    for (int z = 0; z < RG_TZ; ++z, cp += g.sz) {
        mb[z] = col && k0 + z < g.nz ? __ldg(cp) : (unsigned char)PGPU_CELL_SOLID;
        whole = whole && (mb[z] & CELL_BITS) == PGPU_CELL_FLUID;
    }
    if (__syncthreads_and(whole)) { // a whole tile of fluid (the most common): one part, its first point the root
        if (tx == 0 && ty == 0) {
            const uint32_t q0 = (uint32_t)(bx * RG_TX + (int64_t)g.nx * (by * RG_TY + (int64_t)g.ny * k0));
            set_bit(roots, q0);
            set_bit(full, blockIdx.x);
            lab[q0] = q0;
            // a whole tile lies inside the grid: its last point is at most the last
            const int i0 = (int)bx * RG_TX, j0 = (int)by * RG_TY;
            if (meets_dirichlet_face(g, i0, j0, k0, i0 + RG_TX - 1, j0 + RG_TY - 1, k0 + RG_TZ - 1)) set_bit(touch, q0);
        }
        return;
    }
#pragma unroll
    for (int z = 0; z < RG_TZ; ++z) {
        const int r = ty + RG_TY * z, l = tx + RG_TX * r;
        const bool fluid = (mb[z] & CELL_BITS) == PGPU_CELL_FLUID;
        const unsigned f = __ballot_sync(0xffffffffu, fluid), starts = f & ~(f << 1);
        par[l] = fluid ? (uint32_t)(RG_TX * r + 31 - __clz(starts & below)) : LAB_NONE;
        if (tx == 0) rows[r] = f;
    }
    __syncthreads();
    for (int z = 0; z < RG_TZ; ++z) {
        const int r = ty + RG_TY * z, l = tx + RG_TX * r;
        const unsigned f = rows[r], bit = 1u << tx;
        if (ty + 1 < RG_TY) {
            const unsigned both = f & rows[r + 1];
            if ((both & ~(both << 1)) & bit) uf_union<true>(par, l, l + RG_TX);
        }
        if (z + 1 < RG_TZ) {
            const unsigned both = f & rows[r + RG_TY];
            if ((both & ~(both << 1)) & bit) uf_union<true>(par, l, l + RG_TX * RG_TY);
        }
    }
    __syncthreads();
    for (int z = 0; z < RG_TZ; ++z) {
        const int l = tx + RG_TX * (ty + RG_TY * z), k = k0 + z;
        if (!col || k >= g.nz) continue;
        const int64_t q = i + (int64_t)g.nx * (j + (int64_t)g.ny * k);
        uint32_t out = LAB_NONE;
        if (par[l] != LAB_NONE) {
            uint32_t r = (uint32_t)l, n;
            while ((n = par[r]) != r) r = n;
            if (r == (uint32_t)l) set_bit(roots, (uint32_t)q);
            const int rx = (int)(r % RG_TX), ry = (int)(r / RG_TX % RG_TY), rz = (int)(r / (RG_TX * RG_TY));
            out = (uint32_t)(bx * RG_TX + rx + (int64_t)g.nx * (by * RG_TY + ry + (int64_t)g.ny * (k0 + rz)));
            if (meets_dirichlet_face(g, i, j, k, i, j, k)) mark_bit(touch, out);
        }
        lab[q] = out;
    }
}

// The touch bits of the tile roots (lab as the tile kernel left it) whose
// part has a fluid point next to a Dirichlet point (the tile kernel sets
// those on a Dirichlet box face): a warp per row (x along the lanes), each
// fluid point with a Dirichlet neighbour (the ghost across a box face is
// none; across a periodic seam the wrapped point) marking its own root.
// Launched only where the mask has Dirichlet points.
template <class T>
__global__ void gen_regions_touch_kernel(const Grid<T> g, const uint32_t *lab, const uint32_t *full, uint32_t *touch)
{
    auto fluid = [&](int64_t e) { return (g.mk[e] & CELL_BITS) == PGPU_CELL_FLUID; };
    auto mark = [&](const int (&c)[3], int64_t q) {
        const uint32_t r = lab[rg_at(g, full, c[0], c[1], c[2], (uint32_t)q)];
        mark_bit(touch, r);
    };
    const int64_t rows = (int64_t)g.ny * g.nz, warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    auto held_at = [&](bool there, int64_t e) { return there && (__ldg(g.mk + e) & CELL_BITS) == PGPU_CELL_DIRICHLET; };
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; r < rows; r += warps) {
        const int j = (int)(r % g.ny), k = (int)(r / g.ny);
        const int64_t row = g.base + j * g.sy + k * g.sz, q0 = (int64_t)g.nx * (j + (int64_t)g.ny * k);
        // the neighbours across y and z: inside, wrapped on a periodic axis, or none
        const bool yl = j > 0 || (g.py && g.ny > 1), yh = j < g.ny - 1 || (g.py && g.ny > 1);
        const bool zl = g.is3d && (k > 0 || (g.pz && g.nz > 1)), zh = g.is3d && (k < g.nz - 1 || (g.pz && g.nz > 1));
        const int64_t oyl = j > 0 ? -g.sy : g.oyl, oyh = j < g.ny - 1 ? g.sy : g.oyh;
        const int64_t ozl = k > 0 ? -g.sz : g.ozl, ozh = k < g.nz - 1 ? g.sz : g.ozh;
        for (int i = (int)(threadIdx.x & 31); i < g.nx; i += 32) {
            const int64_t p = row + i;
            if (!fluid(p)) continue;
            const bool xl = i > 0 || (g.px && g.nx > 1), xh = i < g.nx - 1 || (g.px && g.nx > 1);
            const bool h0 = held_at(xl, p + (i > 0 ? -1 : g.oxl)), h1 = held_at(xh, p + (i < g.nx - 1 ? 1 : g.oxh));
            const bool h2 = held_at(yl, p + oyl), h3 = held_at(yh, p + oyh);
            const bool h4 = held_at(zl, p + ozl), h5 = held_at(zh, p + ozh);
            if (h0 || h1 || h2 || h3 || h4 || h5) {
                const int c[3] = {i, j, k};
                mark(c, q0 + i);
            }
        }
    }
}

// The pairs of neighbours that lie in two tiles or across a periodic seam:
// for axis d, the low point's coordinate c = RG_T[d] m - 1 (m = 1 ..
// (n - 1) / RG_T[d]) and, on a periodic axis, n - 1 (its neighbour is 0).
__host__ __device__ inline int seam_planes(int n, int tile, int per) { return (n - 1) / tile + (per && n > 1); }

// Links the fluid pairs between tiles (the x pairs a thread per column of
// a tile's height along z, the y and z pairs a warp per row along x),
// unless the pair
// is joined already through others: an x pair where the pair at j - 1 (or
// k - 1) in the same two tiles is fluid (each point is linked to its
// neighbour there inside its tile), a y or z pair where the pair at x - 1
// is fluid (the two x links are inside a tile or x pairs between tiles) or
// the pair in the row before inside the same two tiles (k - 1 for a y
// pair, j - 1 for a z pair) is, as for an x pair (the tile kernel joins
// every two fluid neighbours inside a tile).
// Every skipped pair refers to one nearer the origin of the same kind, so
// by induction every fluid pair ends up joined.
template <class T> __global__ void gen_regions_link_kernel(const Grid<T> g, uint32_t *lab, const uint32_t *full)
{
    const int d = (int)blockIdx.y; // the axis of the pairs
    if (d == 2 && !g.is3d) return;
    const int n = d == 0 ? g.nx : d == 1 ? g.ny : g.nz, tl = d == 0 ? RG_TX : d == 1 ? RG_TY : RG_TZ_3D;
    const int per = d == 0 ? g.px : d == 1 ? g.py : g.pz;
    const int64_t sd = d == 0 ? 1 : d == 1 ? g.sy : g.sz;
    auto fluid = [](uint8_t v) { return (v & CELL_BITS) == PGPU_CELL_FLUID; };
    if (d > 0) {
        // A warp per row of pairs along x (seam plane m, the other axis r),
        // lanes over x in chunks of 32: a pair links where both points are
        // fluid and the pair at x - 1 is not (a ballot; the previous
        // chunk's last pair carried in).
        const int lane = threadIdx.x & 31;
        const int64_t other = d == 1 ? g.nz : g.ny, rows = (int64_t)seam_planes(n, tl, per) * other;
        const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
        const int64_t qd = d == 1 ? (int64_t)g.nx : (int64_t)g.nx * g.ny;
        const int rt = d == 1 ? RG_TZ_3D : RG_TY; // the rows' axis (z for y pairs, y for z pairs): its tile length
        const int64_t so = d == 1 ? g.sz : g.sy;  // ... and stride
        for (int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; w < rows; w += warps) {
            const uint32_t wu = (uint32_t)w, ou = (uint32_t)other; // rows < 2^31 (a mask's points are)
            const int m = (int)(wu / ou), r = (int)(wu - (uint32_t)m * ou);
            const int c = m < (n - 1) / tl ? tl * (m + 1) - 1 : n - 1;
            const int j = d == 1 ? c : r, k = d == 1 ? r : c;
            const bool seam = c == n - 1;
            const int64_t p0 = g.base + (int64_t)j * g.sy + (int64_t)k * g.sz;
            const int64_t q0 = (int64_t)g.nx * (j + (int64_t)g.ny * k);
            const int64_t po0 = seam ? p0 - (int64_t)(n - 1) * sd : p0 + sd; // the high row
            const int64_t qo0 = seam ? q0 - (int64_t)(n - 1) * qd : q0 + qd;
            unsigned carry = 0; // bit 0: the pair before this chunk is fluid
            constexpr int U = 4; // chunks whose loads are in flight together
            for (int i00 = 0; i00 < g.nx; i00 += 32 * U) {
                unsigned char v[U][2];
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    const int i = i00 + 32 * u + lane;
                    v[u][0] = v[u][1] = (unsigned char)PGPU_CELL_SOLID;
                    if (i < g.nx) {
                        v[u][0] = __ldg(g.mk + p0 + i);
                        v[u][1] = __ldg(g.mk + po0 + i);
                    }
                }
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    const int i = i00 + 32 * u + lane;
                    const bool both = fluid(v[u][0]) && fluid(v[u][1]);
                    const unsigned b = __ballot_sync(0xffffffffu, both), starts = b & ~(b << 1 | carry);
                    // the pair in the row before, inside the same two tiles (a 2D y pair has none)
                    if (((starts >> lane) & 1u) &&
                        (r % rt == 0 || !fluid(__ldg(g.mk + p0 + i - so)) || !fluid(__ldg(g.mk + po0 + i - so)))) {
                        const int jo = d == 1 ? (seam ? 0 : c + 1) : j, ko = d == 2 ? (seam ? 0 : c + 1) : k;
                        uf_union<false>(lab, rg_at(g, full, i, j, k, (uint32_t)(q0 + i)),
                                        rg_at(g, full, i, jo, ko, (uint32_t)(qo0 + i)));
                    }
                    carry = b >> 31;
                }
            }
        }
        return;
    }
    // The x pairs: a thread per seam plane m, z slab of RG_TZ_3D planes
    // (one tile's; 2D: the plane) and y, y along the lanes (padded to a
    // whole warp, so that lane 0's y is a tile's first row), each walking
    // its slab's pairs with their loads in flight together.  Its pair at
    // z - 1 is its own, the pair at y - 1 the lane before's.
    const int tz = g.is3d ? RG_TZ_3D : 1, slabs = (g.nz + tz - 1) / tz, ypad = (g.ny + 31) & ~31;
    PGPU_GRID_STRIDE(s64, (int64_t)seam_planes(n, tl, per) * slabs * ypad)
    {
        // below 2^32: with a mask's points below 2^31, the padding to whole
        // warps and z slabs at most doubles them on grids that large
        const uint32_t s = (uint32_t)s64;
        const int j = (int)(s % (uint32_t)ypad), ms = (int)(s / (uint32_t)ypad);
        const int m = ms / slabs, k0 = (ms - m * slabs) * tz;
        const int i = m < (n - 1) / tl ? tl * (m + 1) - 1 : n - 1, io = i == n - 1 ? 0 : i + 1; // the high point
        unsigned pairs = 0; // bit z: the pair at k0 + z of both points fluid
        uint8_t v[RG_TZ_3D][2];
#pragma unroll
        for (int z = 0; z < RG_TZ_3D; ++z) {
            const bool in = z < tz && j < g.ny && k0 + z < g.nz;
            const int64_t p = g.base + (int64_t)j * g.sy + (int64_t)(k0 + z) * g.sz;
            v[z][0] = in ? __ldg(g.mk + p + i) : (uint8_t)PGPU_CELL_SOLID;
            v[z][1] = in ? __ldg(g.mk + p + io) : (uint8_t)PGPU_CELL_SOLID;
        }
#pragma unroll
        for (int z = 0; z < RG_TZ_3D; ++z) pairs |= (fluid(v[z][0]) && fluid(v[z][1]) ? 1u : 0u) << z;
        const unsigned before = __shfl_up_sync(0xffffffffu, pairs, 1); // the pairs at y - 1 (lane 0: unused)
        for (unsigned b = pairs & ~(pairs << 1) & ~(j % RG_TY ? before : 0u); b; b &= b - 1) {
            const int k = k0 + __ffs(b) - 1;
            const int64_t q = i + (int64_t)g.nx * (j + (int64_t)g.ny * k);
            uf_union<false>(lab, rg_at(g, full, i, j, k, (uint32_t)q),
                            rg_at(g, full, io, j, k, (uint32_t)(q - i + io)));
        }
    }
}

// On the tile roots (a thread per word of the bit set).  Stage 0: each its
// region's root as its label, and the root's touch bit set where its own is
// (a label's step may halve while another thread sets it: either value
// leads to the root, and a root's label is not written).  Stage 1: each
// region's root its final label, regular, or singular with a number (count
// in *count, GEN_TOO_MANY past cap).
__global__ void gen_regions_roots_kernel(uint32_t *lab, const uint32_t *roots, uint32_t *touch, uint32_t words,
                                         int stage, uint32_t *count, uint32_t cap, unsigned *flags)
{
    PGPU_GRID_STRIDE(w, (int64_t)words)
    {
        for (uint32_t b = roots[w]; b; b &= b - 1) {
            const uint32_t q = (uint32_t)w * 32u + (uint32_t)(__ffs(b) - 1);
            if (stage == 0) {
                volatile const uint32_t *v = lab;
                uint32_t r = q, nx;
                while ((nx = v[r]) != r) r = nx;
                if (r == q) continue;
                lab[q] = r;
                if (bit_of(touch, q)) set_bit(touch, r);
            } else if (lab[q] == q) {
                if (bit_of(touch, q)) {
                    lab[q] = LAB_REGULAR;
                } else {
                    const uint32_t id = atomicAdd(count, 1u);
                    if (id >= cap) atomicOr(flags, GEN_TOO_MANY);
                    lab[q] = id < cap ? (LAB_SINGULAR | id) : LAB_REGULAR;
                }
            }
        }
    }
}

// Every fluid point its region's final label (its tile root's root's; a
// final label has bit 31 set, an index never), counted into the singular
// region's size (one atomic per region a warp holds).  Only the projection
// of singular regions reads the labels: without one (*count 0) the pass
// returns at once.
template <class T>
__global__ void gen_regions_final_kernel(const Grid<T> g, uint32_t *lab, const uint32_t *full, uint32_t *sizes,
                                         const uint32_t *count)
{
    if (*count == 0) return;
    const uint32_t npts = (uint32_t)g.nx * (uint32_t)g.ny * (uint32_t)g.nz;
    // Four points a thread at a time, each step's loads together.  Every
    // read after the first is of a tile root; a tile root that is not its
    // region's root may be rewritten meanwhile (region root -> final
    // label), and either value leads to the same label.
    constexpr int U = 4;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int lane = threadIdx.x & 31;
    for (int64_t b = blockIdx.x * (int64_t)blockDim.x + (threadIdx.x & ~31u); b < npts; b += U * stride) {
        uint32_t v[U];
        bool mv[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t q = b + lane + u * stride;
            v[u] = LAB_NONE;
            if (q < npts) {
                int i, j, k;
                split_index(q, (uint32_t)g.nx, (uint32_t)g.ny, true, i, j, k);
                const uint32_t at = rg_at(g, full, i, j, k, (uint32_t)q);
                v[u] = at == (uint32_t)q ? lab[q] : at; // a full tile's point: its root
            }
            mv[u] = v[u] != LAB_NONE && !(v[u] & LAB_SINGULAR);
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (mv[u]) v[u] = lab[v[u]];
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (mv[u] && !(v[u] & LAB_SINGULAR)) v[u] = lab[v[u]];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (mv[u]) lab[b + lane + u * stride] = v[u];
            const bool counted = v[u] != LAB_NONE && v[u] != LAB_REGULAR;
            const unsigned in = __ballot_sync(0xffffffffu, counted);
            if (!counted) continue;
            const unsigned same = __match_any_sync(in, v[u]);
            if (lane == __ffs(same) - 1) atomicAdd(sizes + (v[u] & LAB_INDEX), (unsigned)__popc(same));
        }
    }
}

// Per-region sums over the singular regions' points of v = src (+ the
// boundary terms when `terms`, the Neumann data of b).  mode 0: max |v|
// into *maxbits; 1: sum v in fixed point (each value an integer of at most
// 2^62, scaled to maxbits) into sums[2 id .. 2 id + 1], a 128-bit integer
// (low word, high word); 2: out = src - the region's mean (out may be src),
// and *first = region 0's mean.
// The sums are exact, so independent of the order of the atomics, and a
// value keeps 62 bits whatever the grid's size (64-bit sums with room for
// every point kept 62 - log2(points): a mean off by 1e-11 of max |v| at
// 512^3).  A thread adds its points into one register sum while their
// region stays the same and a warp adds its sums together where they share
// one: an atomic per point on one region's word took 100 ms at 512^3.
// The mean is formed as two doubles (hi + lo): where u has drifted far
// along its null space, the mean's own rounding (eps |mean|) was the
// error left in u.
__device__ __forceinline__ void add_sum128(long long *sum, __int128 a)
{
    if (a == 0) return;
    unsigned long long *w = (unsigned long long *)sum;
    const unsigned long long lo = (unsigned long long)a, hi = (unsigned long long)(a >> 64);
    const unsigned long long old = atomicAdd(w, lo);
    const unsigned long long c = hi + (old + lo < old ? 1ull : 0ull); // the low word's carry
    if (c) atomicAdd(w + 1, c);
}
__device__ __forceinline__ double project_scale(const unsigned long long *maxbits)
{
    const double vmax = __longlong_as_double((long long)*maxbits);
    // 2^e with vmax 2^e <= 2^62 (no value's integer beyond 2^62; 2^1000 at
    // most, where vmax is below 2^-938)
    return vmax > 0 ? exp2(fmin(62.0 - ceil(log2(vmax)), 1000.0)) : 1.0;
}
template <class T>
__global__ void gen_project_kernel(const Grid<T> g, const uint32_t *__restrict__ lab, const T *src, const T *u,
                                   int terms, int mode, unsigned long long *maxbits, long long *sums,
                                   const uint32_t *__restrict__ sizes, T *out, double *first)
{
    const double scale = project_scale(maxbits);
    unsigned long long mine = 0;
    uint32_t cur = LAB_NONE; // mode 1: the region of acc; mode 2: that of mhi, mlo
    __int128 acc = 0;
    double mhi = 0, mlo = 0;
    PGPU_GRID_STRIDE(t, (int64_t)g.nx * g.ny * g.nz)
    {
        const uint32_t v = lab[t];
        if (v == LAB_NONE || v == LAB_REGULAR) continue;
        const uint32_t id = v & LAB_INDEX;
        int i, j, k;
        const int64_t p = point_of(g, t, i, j, k);
        if (mode == 2) {
            if (id != cur) {
                // sum / n = q0 + r / n (q0 from the sum's double, r exact)
                const unsigned long long *w = (const unsigned long long *)(sums + 2 * id);
                const __int128 S = (__int128)(((unsigned __int128)w[1] << 64) | w[0]);
                const uint32_t n = sizes[id];
                const long long q0 = llrint((double)S / (double)n);
                const long long r = (long long)(S - (__int128)q0 * n);
                const double h = (double)q0;
                mhi = h / scale;
                mlo = ((double)(q0 - (long long)h) + (double)r / (double)n) / scale;
                cur = id;
                if (id == 0 && first) *first = mhi + mlo;
            }
            out[p] = T(((double)src[p] - mhi) - mlo);
            continue;
        }
        const double val = (double)src[p] + (terms ? (double)boundary_terms(g, u, p, i, j, k) : 0.0);
        if (mode == 0) {
            const unsigned long long b = (unsigned long long)__double_as_longlong(fabs(val));
            mine = b > mine ? b : mine;
        } else {
            if (id != cur) {
                if (cur != LAB_NONE) add_sum128(sums + 2 * cur, acc);
                cur = id;
                acc = 0;
            }
            acc += (__int128)llrint(val * scale);
        }
    }
    const unsigned full = 0xffffffffu; // every thread of the (whole) warps reaches here
    if (mode == 0) {
        for (int o = 16; o > 0; o >>= 1) {
            const unsigned long long x = __shfl_xor_sync(full, mine, o);
            mine = x > mine ? x : mine;
        }
        if ((threadIdx.x & 31) == 0 && mine) atomicMax(maxbits, mine);
    } else if (mode == 1) {
        const bool has = cur != LAB_NONE && acc != 0;
        const unsigned who = __ballot_sync(full, has);
        if (!who) return;
        const uint32_t lead = __shfl_sync(full, cur, __ffs(who) - 1);
        if (__all_sync(full, !has || cur == lead)) {
            __int128 a = has ? acc : 0;
            for (int o = 16; o > 0; o >>= 1) {
                const long long lo = __shfl_xor_sync(full, (long long)(unsigned long long)a, o);
                const long long hi = __shfl_xor_sync(full, (long long)(a >> 64), o);
                a += (__int128)(((unsigned __int128)(unsigned long long)hi << 64) | (unsigned long long)lo);
            }
            if ((threadIdx.x & 31) == 0) add_sum128(sums + 2 * lead, a);
        } else if (has) {
            add_sum128(sums + 2 * cur, acc);
        }
    }
}

// b of a level's bound problem where it is fluid (f - shift + the boundary
// terms; the held points' only where `held`), 0 elsewhere: the general
// form's FMG restricts it.
template <class T>
__global__ void gen_rhs_kernel(const Grid<T> g, const T *__restrict__ u, const T *__restrict__ f,
                               const T *__restrict__ shiftp, T *out, bool held)
{
    const Shift<T> shift = load_shift(shiftp);
    PGPU_GRID_STRIDE(t, (int64_t)g.nx * g.ny * g.nz)
    {
        int i, j, k;
        const int64_t p = point_of(g, t, i, j, k);
        out[p] = gen_fluid(g, p) ? shift.of(f[p]) + boundary_terms(g, u, p, i, j, k, held) : T(0);
    }
}

// What the general form holds (Hierarchy::gen).  Buffers are allocated by
// the first call that needs them and reused after.
template <class T> struct General {
    bool mask = false, beta = false; // set by the caller
    bool held = false;               // the mask has a Dirichlet point (gen_distance_kernel has work)
    bool on() const { return mask || beta; }
    bool built = false;              // general_alloc's coarse levels, tables and scalars are all in place
    std::vector<uint8_t *> mk;       // per level; level 0: the caller's mask, ghosts fluid
    std::vector<uint8_t *> one;      // per coarse level (with a mask): GenCoarse::cone
    std::vector<T *> fr[3];          // per level, face fractions; level 0: from beta
    T *bw = nullptr;                 // level 0 of a 3D grid: 1 / beta (Grid::bw), used where narrow
    bool narrow = false;             // beta lies inside beta_recip_min .. max
    bool jump = false;               // beta's largest value is more than JUMP_RATIO times its smallest
    double beta_hi = 1;              // beta's largest value (1 without beta)
    // Galerkin levels (odi.h; where beta jumps): per level, gal_stored arrays
    // of its points (NULL where the pair into it keeps no nodes), P's
    // weights from each level that may be a Galerkin one into the next
    // (gpw: odi_pw_count values), and the build's scratch: P's weights from
    // a level of 7-point rows, then two vectors of level 0's size.
    std::vector<T *> gst, gpw;
    T *gscr = nullptr;
    struct CoarseLevel {
        CoarseAxis ax[3];
        WalkAxis wk[3];
        ParentAxis par[3];
        size_t smem = 0; // the second pass's shared memory
        unsigned tiles = 0;
    };
    std::vector<CoarseLevel> coarse; // per level pair: gen_coarse_kernel's tables and shared memory
    uint32_t *tile_list = nullptr;   // gen_coarse_kernel's list of tiles for its stages (the most tiles of a level)
    uint32_t *tile_count = nullptr;  // per level pair: their number; then gen_iso_kernel's candidates'
    // Regions (level 0 with a mask): labels per interior point, the singular
    // regions' sizes, sums and count; the checks' flags.
    uint32_t *lab = nullptr, *sizes = nullptr, *count = nullptr;
    uint32_t *bits = nullptr; // the tile roots' and touch bit sets (bit_words words each), the full tiles' (tile_words)
    uint8_t *spare = nullptr; // level 0's next mask, swapped with mk[0] once checked
    uint32_t bit_words = 0, tile_words = 0;
    unsigned *flags = nullptr;
    unsigned long long *maxbits = nullptr;
    unsigned long long *range = nullptr; // beta's smallest and largest value's bits (the check's)
    long long *sums = nullptr;
    double *first = nullptr; // region 0's mean of b
    T *fp = nullptr;         // f with the singular regions' means removed; while the levels are built,
                             // gen_iso_kernel's candidates and marks
    uint32_t regions = 0, cap = 0;
    // Level 0's near tiles (a mask): the check's bit set, their list and
    // number (on the device beside count, and read back: near).
    uint32_t *near_bits = nullptr, *near_list = nullptr, *near_count = nullptr;
    uint32_t near_words = 0, near = 0;
    // pgpu_set_mask's second stream, the region labelling's beside the
    // coarse build (created with the mask's buffers, gone with the handle).
    cudaStream_t side = nullptr;
    cudaEvent_t fork = nullptr, join = nullptr;
    General() = default;
    General(const General &) = delete;
    General &operator=(const General &) = delete;
    ~General()
    {
        if (fork) cudaEventDestroy(fork);
        if (join) cudaEventDestroy(join);
        if (side) cudaStreamDestroy(side);
    }
};

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 23 "src/poisson_gpu.cu"
#endif
// level.h -- one level of a solve: its arrays, the one choice of its kernels (its route), its verbs
#ifdef PGPU_SRC_LINES
#line 2 "src/level.h"
#endif



namespace pgpu {

// Which kernels serve a level's cycle steps, chosen once where the level's
// form is set (route_level, called by Hierarchy::route after build and
// general_apply): its smoother, its residual, the step down (residual and
// restriction), the step up (the coarse correction) and the folds between
// them.  The verbs below (smooth, residual) and Multigrid's steps read the
// route and test no eligibility themselves (smooth.h's beta_tiled and
// beta_resid, Transfer's rr_fused, bt_rr, bt_pro, pl_tile, odi).  Within a
// route the level's data pick the instance: masked or not (g.mk), faces
// from 1 / beta or from the fractions (g.bw), and the column walk's form
// (walk_masked, from Grid::fast / frfast).  Not routed: FMG's
// interpolation and restriction of the data (Transfer::fi_tile, rs_tile,
// chosen inside Transfer), and the one-node solve (jacobi_pass).
enum class ResidRoute : uint8_t {
    WALK,    // residual_kernel's column walk
    BETA,    // beta_tile_kernel's RES walk
    GALERKIN // gal_residual_kernel: a Galerkin level's 27-point rows
};
// Level l's residual restricted into level l+1's right-hand side.
enum class DownRoute : uint8_t {
    SPLIT,   // the residual (ResidRoute), then the restriction (tiled where Transfer::rs_tile)
    FUSED,   // restrict_residual_kernel, one pass (Transfer::rr_fused)
    BETA_RR, // beta_tile_kernel's RR walk (Transfer::bt_rr where the residual's route is BETA)
    ODI,     // the residual, then the operator-dependent restriction (odi.h)
    SLAB     // a slab of several GPUs (dist.h): halos, the residual, the restriction, the gather
};
// The coarse correction added back, out = in + P e.
enum class UpRoute : uint8_t {
    DIRECT, // interp_kernel
    TILED,  // interp_tile_kernel (Transfer::pl_tile)
    ODI     // the operator-dependent prolongation (odi.h)
};
struct LevelRoute {
    SmoothRoute smooth = SmoothRoute::PLAIN;
    ResidRoute resid = ResidRoute::WALK;
    DownRoute down = DownRoute::SPLIT; // (the coarsest level: unused, and up)
    UpRoute up = UpRoute::DIRECT;
    bool paired = false;    // TILE: two red-black iterations a pass where a smoothing asks for two or more
    bool pre_resid = false; // level 0 (BETA, its x allocated): a pre-smoothing's last pass may form the residual
    bool fold = false;      // level 0 (BETA): a post-smoothing's first pass may add the coarse correction
    bool slab = false;      // a slab of several GPUs (dist.h): the cycle exchanges its halos
};

template <class T> struct Level {
    Grid<T> g{};
    T *u = nullptr, *t = nullptr, *f = nullptr; // iterate, second iterate (and residuals), right-hand side
    // Level 0 where its cycles form the residual in the pre-smoothing
    // (route.pre_resid): a third iterate x, which that pass writes (its
    // residual goes to the other array) and the next pass reads, writing u.
    T *x = nullptr;
    bool in_x = false;        // x holds the iterate
    const T *shift = nullptr; // subtracted from f: the mean of a singular user problem (level 0 only)
    int cur = 0;              // which of u (0) / t (1) holds the iterate (where !in_x)
    int64_t elems = 0;        // array length, ghosts included
    double npts = 0;
    ColLaunch col{}, walk{};  // column and walk launches over the level
    ColLaunch rwalk{};        // ... for walks that reduce, and every Krylov walk (reduce_walk_launch)
    SmoothPlan sm{};          // the smoothers' launch shapes and what the level's size allows
    Transfer<T> down{};       // to the next coarser level (unused on the coarsest)
    GalRows<T> gr{};          // a Galerkin level's rows (gr.st NULL: the level's own 7-point form)
    LevelRoute route{};       // the kernels that serve it (route_level)
    T *iter() const { return in_x ? x : cur ? t : u; }
    T *other() const { return in_x || cur ? u : t; }
};

// Level L's route: l its index, slab whether it is a slab of several GPUs,
// last whether it is the coarsest (no transfer).
template <class T> static LevelRoute route_level(const Env &env, const Level<T> &L, int l, bool slab, bool last)
{
    LevelRoute r;
    const Grid<T> &g = L.g;
    const SmoothPlan &p = L.sm;
    r.slab = slab;
    if (L.gr.st) {
        r.smooth = SmoothRoute::GALERKIN;
        r.resid = ResidRoute::GALERKIN;
    } else {
        r.smooth = beta_tiled(env, g, p)  ? SmoothRoute::BETA
                   : p.tile && g.fx       ? SmoothRoute::TILE_FR
                   : p.tile               ? SmoothRoute::TILE
                                          : SmoothRoute::PLAIN;
        r.paired = r.smooth == SmoothRoute::TILE && p.paired;
        r.resid = beta_tiled(env, g, p, true) ? ResidRoute::BETA : ResidRoute::WALK;
    }
    if (last) return r;
    const Transfer<T> &x = L.down;
    r.down = slab                                        ? DownRoute::SLAB
             : x.odi                                     ? DownRoute::ODI
             : x.rr_fused                                ? DownRoute::FUSED
             : x.bt_rr && r.resid == ResidRoute::BETA    ? DownRoute::BETA_RR
                                                         : DownRoute::SPLIT;
    r.up = x.odi ? UpRoute::ODI : x.pl_tile ? UpRoute::TILED : UpRoute::DIRECT;
    r.pre_resid = l == 0 && !slab && L.x && !x.odi && beta_resid(env, g, p);
    r.fold = l == 0 && !slab && x.bt_pro && !x.odi && r.smooth == SmoothRoute::BETA;
    return r;
}

// ---- the verbs ----
// `iters` iterations of the smoother (Jacobi, or red-black with the colour
// order `flip`) from the level's iterate, ping-ponging between u and t:
// two red-black iterations per pass where the route pairs them.  fold: the
// next coarser level's correction, added to the iterate by the first pass
// (red-black, where route.fold).  resid: the last pass (red-black, where
// route.pre_resid) writes the iterate into L.x and its residual into the
// other array; a pass from x writes u.
template <class T>
static pgpu_status smooth(Env &env, Level<T> &L, bool jacobi, int iters, T omega, int flip = 0,
                          const T *fold = nullptr, bool resid = false)
{
    if (L.route.smooth == SmoothRoute::GALERKIN) { // colour by colour, in place (colour order reversed by flip)
        char *err = env.err;
        if (L.npts <= GAL_BLOCK_NODES) { // (a small one in one block)
            if (iters > 0)
                gal_colours_block_kernel<T><<<1, GAL_BLOCK_THREADS, 0, env.st>>>(L.g, L.gr, L.iter(), (const T *)L.f,
                                                                                 iters, flip);
            PGPU_LAUNCHED();
            return PGPU_SUCCESS;
        }
        const int nc = L.g.is3d ? 8 : 4;
        for (int s = 0; s < iters; ++s)
            for (int c = 0; c < nc; ++c) {
                const int colour = flip ? nc - 1 - c : c;
                if ((colour & 1) >= L.g.nx || (colour >> 1 & 1) >= L.g.ny || (colour >> 2 & 1) >= L.g.nz)
                    continue; // (no node of that colour)
                launch(gal_colour_launch(L.g, colour), 0, env.st, gal_colour_kernel<T>, L.g, L.gr, L.iter(),
                       (const T *)L.f, colour);
                PGPU_LAUNCHED();
            }
        return PGPU_SUCCESS;
    }
    for (int s = 0; s < iters;) {
        const int n = !jacobi && !(s == 0 && fold) && !resid && L.route.paired && iters - s >= 2 ? 2 : 1;
        if (resid && s + n == iters) {
            PGPU_FORWARD(rb_pass_resid(env, L.g, L.sm, L.iter(), L.x, L.other(), L.f, L.shift, omega, flip));
            L.in_x = true;
            s += n;
            continue;
        }
        if (s == 0 && fold)
            PGPU_FORWARD(rb_pass_folded(env, L.g, L.sm, L.down.cg, L.down.w2, fold, L.iter(), L.other(), L.f,
                                        L.shift, omega, flip));
        else if (jacobi) PGPU_FORWARD(jacobi_pass(env, L.g, L.sm, L.iter(), L.other(), L.f, L.shift, omega));
        else PGPU_FORWARD(rb_pass(env, L.g, L.sm, L.route.smooth, n, L.iter(), L.other(), L.f, L.shift, omega, flip));
        L.cur = L.in_x ? 0 : L.cur ^ 1;
        L.in_x = false;
        s += n;
    }
    return PGPU_SUCCESS;
}

// Passes over the arrays that smooth() makes for `iters` iterations.
template <class T> static int smooth_passes(const Level<T> &L, bool jacobi, int iters)
{
    if (L.route.smooth == SmoothRoute::GALERKIN) return 0;
    return !jacobi && L.route.paired ? iters / 2 + iters % 2 : iters;
}

// r = f - shift - A u on a level, stored in the layout of u, by its route.
template <class T> static pgpu_status residual(Env &env, const Level<T> &L, const T *u, T *r)
{
    char *err = env.err;
    switch (L.route.resid) {
    case ResidRoute::GALERKIN: launch(L.walk, 0, env.st, gal_residual_kernel<T>, L.g, L.gr, u, (const T *)L.f, r); break;
    case ResidRoute::BETA:
        launch(L.sm.bt, BetaTile<T>::SMEM, env.st, beta_tile_kernel<T, true, false>, L.g, u, r, (const T *)L.f, L.shift,
               T(0), 0, Grid<T>{}, Xfer<T>{}, (const T *)nullptr, Windows<T>{}, (T *)nullptr);
        break;
    case ResidRoute::WALK:
        walk_masked(L.g, [&](auto mk) {
            launch(L.walk, 0, env.st, residual_kernel<T, true, false, T, decltype(mk)::value>, L.g, u,
                   (const T *)L.f, L.shift, r, (double *)nullptr);
        });
        break;
    }
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 24 "src/poisson_gpu.cu"
#endif
// hierarchy.h -- the levels of a multigrid solve: the ghost frame, Hierarchy<T>
#ifdef PGPU_SRC_LINES
#line 2 "src/hierarchy.h"
#endif



namespace pgpu {

// The levels of a solve: level 0 is the user's grid (its arrays are bound
// per solve); each next level coarsens the axes whose coupling 1/h^2 is at
// least half the strongest (semicoarsening keeps strongly anisotropic
// problems converging), until every axis has one node.  Jacobi, RBGS and FFT
// use level 0 alone.  Every per-axis table of every level lives in one
// device array of T and one of int; each level holds its grid, its smoothing
// plan and its transfer to the next level.

struct HostLevel {
    Axis ax[3];
    AxisTransfer tr[3]; // to the next coarser level (unused on the coarsest)
};

static bool build_hierarchy(const Axis fine[3], std::vector<HostLevel> &levels)
{
    levels.clear();
    HostLevel l0;
    for (int d = 0; d < 3; ++d) l0.ax[d] = fine[d];
    levels.push_back(l0);
    while ((int)levels.size() < MAX_LEVELS) {
        HostLevel &cur = levels.back();
        double smax = 0;
        for (int d = 0; d < 3; ++d)
            if (cur.ax[d].active && cur.ax[d].n > 1) smax = std::max(smax, 1.0 / (cur.ax[d].h * cur.ax[d].h));
        if (smax == 0) return true; // one node: the coarsest level
        HostLevel next;
        for (int d = 0; d < 3; ++d) {
            const Axis &a = cur.ax[d];
            const bool strong = a.active && a.n > 1 && 1.0 / (a.h * a.h) >= 0.5 * smax;
            if (strong) {
                if (!coarsen_axis(a, next.ax[d], cur.tr[d])) return false;
            } else {
                next.ax[d] = a;
                cur.tr[d] = identity_transfer(a);
            }
        }
        levels.push_back(next);
    }
    return false;
}

// (dist.h) `iters` smoothing iterations of slab level l (red-black: two per
// exchange where the level has bands, else one, the halo exchanged before
// each); the slab level's restricted right-hand side broadcast to every
// rank (the first replicated level).
template <class T>
static pgpu_status dist_smooth(Env &env, Level<T> &L, int l, bool jacobi, int iters, T omega, int flip,
                               bool *fresh = nullptr);
template <class T> static pgpu_status dist_gather(Env &env, const Grid<T> &g, T *f, bool frame = false);
// The faces of a slab towards other ranks (bit f: face f).
static int dist_faces(const Dist &d)
{
    return (d.lo_peer >= 0 ? 1 << (2 * d.axis) : 0) | (d.hi_peer >= 0 ? 2 << (2 * d.axis) : 0);
}

// ---- the ghost frame ----
// Points of the ghost layer (faces, edges, corners), numbered: 3D, the two z
// planes of the frame whole, then per interior plane the two y rows and the
// two x ends; 2D the two y rows and the x ends.
__host__ __device__ inline int64_t frame_points(int nx, int ny, int nz, bool is3d)
{
    const int64_t cap = is3d ? 2 * ((int64_t)nx + 2) * ((int64_t)ny + 2) : 0;
    return cap + (int64_t)(is3d ? nz : 1) * (2 * ((int64_t)nx + 2) + 2 * (int64_t)ny);
}

// dst0 and dst1 (may be NULL) = src (NULL: 0) at the frame points that lie
// on a face in `faces` (bit f: face f; edges and corners of such a face
// included).  Copies a user's boundary data into the second iterate, zeroes
// the ghosts of correction levels.
template <class T>
__global__ void frame_kernel(const Grid<T> g, const T *__restrict__ src, T *__restrict__ dst0, T *__restrict__ dst1,
                             int faces)
{
    const int64_t ex = g.nx + 2, ey = g.ny + 2, ez = g.is3d ? g.nz + 2 : 1;
    const int64_t cap = g.is3d ? 2 * ex * ey : 0, per = 2 * ex + 2 * (int64_t)g.ny;
    const int64_t total = frame_points(g.nx, g.ny, g.nz, g.is3d != 0);
    const int64_t origin = ghost_origin(g);
    PGPU_GRID_STRIDE(t, total)
    {
        int64_t I, J, K;
        if (t < cap) {
            K = t < ex * ey ? 0 : g.nz + 1;
            const int64_t r = t % (ex * ey);
            I = r % ex;
            J = r / ex;
        } else {
            const int64_t r = (t - cap) % per;
            K = g.is3d ? 1 + (t - cap) / per : 0;
            if (r < 2 * ex) {
                I = r % ex;
                J = r < ex ? 0 : ey - 1;
            } else {
                J = 1 + (r - 2 * ex) / 2;
                I = ((r - 2 * ex) & 1) ? ex - 1 : 0;
            }
        }
        const int on = (I == 0) | (I == ex - 1) << 1 | (J == 0) << 2 | (J == ey - 1) << 3 |
                       (g.is3d ? (K == 0) << 4 | (K == ez - 1) << 5 : 0);
        if (!(on & faces)) continue;
        const int64_t p = origin + I + J * g.sy + K * g.sz;
        const T v = src ? src[p] : T(0);
        if (dst0) dst0[p] = v;
        if (dst1) dst1[p] = v;
    }
}

template <class T>
static pgpu_status frame(Env &env, const Grid<T> &g, const T *src, T *dst0, T *dst1, int faces)
{
    char *err = env.err;
    if (!faces) return PGPU_SUCCESS;
    frame_kernel<T><<<grid_for(frame_points(g.nx, g.ny, g.nz, g.is3d != 0), env.sms), 256, 0, env.st>>>(g, src, dst0,
                                                                                                         dst1, faces);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// ---- building the levels ----
template <class T> class Hierarchy {
  public:
    std::vector<Level<T>> lv;
    std::vector<HostLevel> hl; // the host description (axes, transfer tables)
    int data_faces = 0;        // bit f: face f is Dirichlet or Neumann
    // (dist.h) a distributed hierarchy: set before build.  plan: the levels
    // (the slab's first dist_levels, then the global grid's, replicated on
    // every rank); global_cfg: the faces of the replicated levels.
    const std::vector<HostLevel> *plan = nullptr;
    int dist_levels = 0;
    pgpu_config global_cfg{};
    bool singular = false;     // no Dirichlet face (and no mask: then regions decide, see General)
    bool singular_box = false; // no Dirichlet face
    // Grid::shut may be set: the cycles need not be symmetric (not a Krylov
    // method's preconditioner, whose restriction must stay P's transpose).
    bool shut_ok = true;
    General<T> gen;            // the general form's data (regions.h)
    std::vector<int> fast_box; // each level's Grid::fast in the box form
    std::vector<char> rr_box;  // each transfer's rr_fused in the box form
    // (general_levels.h) allocate what the general form needs; build the coarse
    // levels' types and fractions from level 0's; put the form into every
    // grid (true when a grid changed); b of the bound problem into out.
    pgpu_status general_alloc(Env &env, bool mask, bool beta);
    pgpu_status general_build(Env &env);
    bool general_apply(Env &env);
    // Every level's route (level.h), from its form, plan and transfer: after
    // build and general_apply, and wherever those change.
    void route(const Env &env)
    {
        const int nl = (int)lv.size();
        for (int l = 0; l < nl; ++l)
            lv[l].route = route_level(env, lv[l], l, env.dist && l < dist_levels, l + 1 == nl);
    }
    pgpu_status general_rhs(Env &env, T *out, bool held = true);
    // (general_levels.h) the Galerkin levels' arrays, where beta jumps; their
    // operators R A P, after the coarse build.
    pgpu_status galerkin_alloc(Env &env);
    pgpu_status galerkin_build(Env &env);
    // out = src (+ u's boundary terms where `terms`) minus the mean of each
    // singular region of level 0 (out may be src).
    pgpu_status project(Env &env, const T *src, const T *u, int terms, T *out);

    // Level 0 only, or every level (multigrid); second: level 0's second
    // iterate (the iterative methods ping-pong between two arrays); own:
    // level 0's iterate and right-hand side too (a problem in workspace, zero
    // ghosts: PGPU_MIXED's corrections).
    pgpu_status build(Env &env, const pgpu_config &c, bool multigrid, bool second, bool own = false);
    // Level 0 works on the user's (or a solver's) arrays: iterate u, right-
    // hand side f, mean shift (NULL: none).
    void bind(T *u, const T *f, const T *shift)
    {
        lv[0].u = u;
        lv[0].f = const_cast<T *>(f);
        lv[0].shift = shift;
        lv[0].cur = 0;
        lv[0].in_x = false;
    }
    // Leaves level 0's iterate in its u (it may have ended in t).
    pgpu_status settle(Env &env)
    {
        Level<T> &L = lv[0];
        if (!L.cur) return PGPU_SUCCESS;
        L.cur = 0;
        return axpby(env, L.g, L.col, T(0), T(1), (const T *)L.t, T(0), (const T *)nullptr, L.u);
    }
    // Level 0's norms ||f - shift - A u|| and max |.| (synchronises).
    pgpu_status norm(Env &env, Reducer &red, double &rn, double &rmax)
    {
        const Level<T> &L = lv[0];
        return residual_norm(env, red, L.g, L.rwalk, (const T *)L.iter(), (const T *)L.f, L.shift, rn, rmax);
    }
    // ... its launches alone (into the reducer's slot).
    pgpu_status norm_launch(Env &env, Reducer &red, int slot = RES_NORM)
    {
        const Level<T> &L = lv[0];
        return residual_norm_launch(env, red, L.g, L.rwalk, (const T *)L.iter(), (const T *)L.f, L.shift, slot);
    }
};

template <class T>
pgpu_status Hierarchy<T>::build(Env &env, const pgpu_config &c, bool multigrid, bool second, bool own)
{
    char *err = env.err;
    const bool is3d = c.nz > 1;
    const int nfaces = is3d ? 6 : 4;
    // (dist.h) the slab's levels take the slab's faces, the replicated ones
    // the global problem's; singular is the global problem's.
    auto cfg_of = [&](int l) -> const pgpu_config & { return plan && l >= dist_levels ? global_cfg : c; };
    const pgpu_config &sc = plan ? global_cfg : c;
    singular = true;
    data_faces = 0;
    for (int fc = 0; fc < nfaces; ++fc) {
        if (sc.bc[fc] == PGPU_BC_DIRICHLET) singular = false;
        if (c.bc[fc] != PGPU_BC_PERIODIC || sc.bc[fc] != PGPU_BC_PERIODIC) data_faces |= 1 << fc;
    }
    Axis fine[3];
    fine_axes(c, fine);
    if (plan) {
        hl = *plan;
    } else if (multigrid) {
        PGPU_RETURN_IF(!build_hierarchy(fine, hl), PGPU_ERROR_UNSUPPORTED,
                       "multigrid: could not build a level hierarchy for this grid");
    } else {
        hl.clear();
        hl.resize(1);
        for (int d = 0; d < 3; ++d) hl[0].ax[d] = fine[d];
    }
    const int nl = (int)hl.size();

    // Every table in one array of T (tv) and one of int (iv); offsets first,
    // pointers once the arrays are on the device.
    std::vector<T> tv;
    std::vector<int> iv;
    auto putT = [&](const std::vector<double> &v) { size_t o = tv.size(); for (double d : v) tv.push_back((T)d); return o; };
    auto putI = [&](const std::vector<int> &v) { size_t o = iv.size(); iv.insert(iv.end(), v.begin(), v.end()); return o; };
    struct AxisOff { size_t cl, ch, rw, fw, cnt, idx, i2, w2, i4, w4, s2, ws2, s4, ws4, cn, cf, wf, wc; };
    struct LevelOff { AxisOff a[3]; size_t tz0, wz0, wz1, fz0, fz1; };
    std::vector<LevelOff> off(nl);
    std::vector<char> odi_ok(nl, 0);
    std::vector<AxisCoef> coefs((size_t)nl * 3);
    std::vector<char> uniform_ax((size_t)nl * 3, 0); // snap_uniform's verdict per level and axis
    std::vector<char> rs_tile(nl, 0), pl_tile(nl, 0), fi_tile(nl, 0), bt_rr(nl, 0), bt_pro(nl, 0);
    for (int l = 0; l < nl; ++l) {
        for (int d = 0; d < 3; ++d) {
            AxisCoef &ac = coefs[(size_t)l * 3 + d];
            ac = axis_coef(hl[l].ax[d]);
            // (not a slab's: its tables stay the global axis' slices, which
            // the band kernels' couplings and the neighbours' slabs share)
            uniform_ax[(size_t)l * 3 + d] = snap_uniform(ac, !(plan && l < dist_levels));
            off[l].a[d].cl = putT(ac.c_lo);
            off[l].a[d].ch = putT(ac.c_hi);
        }
        if (l + 1 == nl) continue;
        const AxisTransfer *t = hl[l].tr;
        bool ok2 = true, ok4 = true, fold = Tune<T>::bt_pro && is3d;
        for (int d = 0; d < 3; ++d) {
            AxisOff &o = off[l].a[d];
            const Axis &a = hl[l].ax[d];
            const int n = a.n, nc = hl[l + 1].ax[d].n;
            std::vector<int> i2((size_t)n * 2);
            std::vector<double> q2((size_t)n * 2);
            for (int i = 0; i < n; ++i) {
                i2[(size_t)2 * i] = t[d].p0[i];
                i2[(size_t)2 * i + 1] = t[d].p1[i];
                q2[(size_t)2 * i] = t[d].q0[i];
                q2[(size_t)2 * i + 1] = t[d].q1[i];
            }
            o.rw = putT(t[d].rw);
            o.fw = putT(t[d].fw);
            o.cnt = putI(t[d].rcnt);
            o.idx = putI(t[d].ridx);
            o.i2 = putI(i2);
            o.w2 = putT(q2);
            o.i4 = putI(t[d].c4);
            o.w4 = putT(t[d].w4);
            // Windows for interp_tile_kernel: linear (prolongation), cubic (FMG).
            const int tile = d == 0 ? IT_FX : (d == 1 ? IT_FY : 0), span = d == 0 ? IT_CX : IT_CY;
            const bool live = d < 2 || is3d; // 2D: z is not read
            std::vector<int> sw;
            std::vector<double> ww;
            const bool lin = window_taps(n, nc, a.lo, a.hi, i2, q2, 2, 2, tile, span, sw, ww);
            ok2 = ok2 && (lin || !live);
            fold = fold && lin && bt_fold_fits(sw, n, d);
            o.s2 = putI(sw);
            o.ws2 = putT(ww);
            const bool cub = window_taps(n, nc, a.lo, a.hi, t[d].c4, t[d].w4, 4, 4, tile, span, sw, ww);
            ok4 = ok4 && (cub || !live);
            o.s4 = putI(sw);
            o.ws4 = putT(ww);
        }
        // The operator-dependent transfers' node map (odi.h): every
        // coarsened axis keeps nodes (vertex coarsening, no periodic wrap).
        bool vertex = true;
        for (int d = 0; d < 3; ++d) {
            const Axis &a = hl[l].ax[d], &ca = hl[l + 1].ax[d];
            std::vector<int> cn;
            vertex = odi_node_map(a, ca, t[d].coarsened, cn) && vertex;
            std::vector<int> cf((size_t)ca.n, 0);
            for (int i = 0; i < a.n; ++i)
                if (cn[(size_t)i] >= 0 && cn[(size_t)i] < ca.n) cf[(size_t)cn[(size_t)i]] = i;
            off[l].a[d].cn = putI(cn);
            off[l].a[d].cf = putI(cf);
            off[l].a[d].wf = putT(a.w);
            off[l].a[d].wc = putT(ca.w);
        }
        odi_ok[l] = vertex;
        std::vector<int> t0, f0;
        std::vector<double> w0, w1, fz0, fz1;
        const bool z = plane_owners(t[2], t[2].rw, hl[l].ax[2].n, t0, w0, w1) &&
                       plane_owners(t[2], t[2].fw, hl[l].ax[2].n, f0, fz0, fz1);
        const int64_t plane = (int64_t)(l == 0 ? c.stride_y : hl[l].ax[0].n + 2) * (hl[l].ax[1].n + 2);
        rs_tile[l] = z && runs_forward(t[0], RS_TX, RS_SX) && runs_forward(t[1], RS_TY, RS_SY) && plane < INT32_MAX;
        // beta_tile_kernel's RR: the children inside the points one in from
        // its tile's edges (2 BT_TX - 2 columns, BY - 2 rows)
        typedef BetaTile<T> BT;
        // (x and y coarsened: an axis kept whole would leave half the tile idle)
        if (Tune<T>::bt_rr && z && is3d && runs_forward(t[0], BT::RX, 2 * BT_TX - 2) &&
            runs_forward(t[1], BT::RY, BT::BY - 2) &&
            2 * (int64_t)hl[l + 1].ax[0].n <= hl[l].ax[0].n + 2 && 2 * (int64_t)hl[l + 1].ax[1].n <= hl[l].ax[1].n + 2 &&
            BT::FIT_RR <= (size_t)env.optin) {
            const int most = std::max(*std::max_element(t[0].rcnt.begin(), t[0].rcnt.end()),
                                      *std::max_element(t[1].rcnt.begin(), t[1].rcnt.end()));
            bt_rr[l] = (char)(most <= 3 ? 3 : 4);
        }
        off[l].tz0 = putI(t0);
        off[l].wz0 = putT(w0);
        off[l].wz1 = putT(w1);
        off[l].fz0 = putT(fz0);
        off[l].fz1 = putT(fz1);
        const int64_t cplane = (int64_t)(hl[l + 1].ax[0].n + 2) * (hl[l + 1].ax[1].n + 2);
        pl_tile[l] = ok2 && cplane < INT32_MAX;
        bt_pro[l] = pl_tile[l] && fold && BetaTile<T>::FIT_PRO <= (size_t)env.optin;
        fi_tile[l] = ok4 && cplane < INT32_MAX;
    }
    T *dt = nullptr;
    int *di = nullptr;
    PGPU_FORWARD(env.upload(tv, &dt, "coefficient and transfer tables"));
    PGPU_FORWARD(env.upload(iv, &di, "transfer tables"));

    const bool rr_fits = Tune<T>::rr_fused && rr_smem_bytes<T>() <= (size_t)env.optin;
    lv.clear();
    lv.resize(nl);
    for (int l = 0; l < nl; ++l) {
        Level<T> &L = lv[l];
        Grid<T> &g = L.g;
        const Axis *ax = hl[l].ax;
        g.nx = ax[0].n;
        g.ny = ax[1].n;
        g.nz = ax[2].n;
        g.is3d = is3d;
        const pgpu_config &cl = cfg_of(l);
        g.px = cl.bc[0] == PGPU_BC_PERIODIC;
        g.py = cl.bc[2] == PGPU_BC_PERIODIC;
        g.pz = is3d && cl.bc[4] == PGPU_BC_PERIODIC;
        g.sy = l == 0 ? c.stride_y : g.nx + 2;
        g.sz = l == 0 ? c.stride_z : g.sy * (g.ny + 2);
        g.base = 1 + g.sy + (is3d ? g.sz : 0);
        L.elems = is3d ? g.sz * (g.nz + 2) : g.sy * (g.ny + 2);
        L.npts = (double)g.nx * g.ny * g.nz;
        const AxisCoef *ac = &coefs[(size_t)l * 3];
        const AxisOff *o = off[l].a;
        g.cxl = dt + o[0].cl; g.cxh = dt + o[0].ch;
        g.cyl = dt + o[1].cl; g.cyh = dt + o[1].ch;
        g.czl = dt + o[2].cl; g.czh = dt + o[2].ch;
        g.gxl = (T)ac[0].g_lo; g.gxh = (T)ac[0].g_hi;
        g.gyl = (T)ac[1].g_lo; g.gyh = (T)ac[1].g_hi;
        g.gzl = (T)ac[2].g_lo; g.gzh = (T)ac[2].g_hi;
        g.oxl = g.px ? (int64_t)(g.nx - 1) : -1;
        g.oxh = g.px ? -(int64_t)(g.nx - 1) : 1;
        g.oyl = g.py ? (int64_t)(g.ny - 1) * g.sy : -g.sy;
        g.oyh = g.py ? -(int64_t)(g.ny - 1) * g.sy : g.sy;
        g.ozl = g.pz ? (int64_t)(g.nz - 1) * g.sz : -g.sz;
        g.ozh = g.pz ? -(int64_t)(g.nz - 1) * g.sz : g.sz;
        int ldf = 0; // this level's faces with data
        for (int fc = 0; fc < nfaces; ++fc)
            if (cl.bc[fc] != PGPU_BC_PERIODIC) ldf |= 1 << fc;
        g.dxl = (ldf >> 0) & 1; g.dxh = (ldf >> 1) & 1;
        g.dyl = (ldf >> 2) & 1; g.dyh = (ldf >> 3) & 1;
        g.dzl = (ldf >> 4) & 1; g.dzh = (ldf >> 5) & 1;
        g.dirichlet = 0;
        for (int fc = 0; fc < nfaces; ++fc)
            if (cl.bc[fc] == PGPU_BC_DIRICHLET) g.dirichlet |= 1 << fc;
        { // the uniform form (see Grid::fast)
            T cu[3] = {T(0), T(0), T(0)};
            bool uniform = true;
            for (int d = 0; d < 3; ++d) {
                if (d == 2 && !is3d) continue;
                if (ac[d].c_lo.size() > 1) cu[d] = (T)ac[d].c_lo[1];
                uniform = uniform && uniform_ax[(size_t)l * 3 + d];
            }
            const bool fits = std::max<int64_t>(g.ny, 2) * g.sy < INT32_MAX && g.nx < INT32_MAX;
            g.fast = uniform && fits;
            g.cx = cu[0];
            g.cy = cu[1];
            g.cz = cu[2];
            g.fxl = g.nx > 1 ? (T)ac[0].c_hi[0] : T(0);
            g.fxh = g.nx > 1 ? (T)ac[0].c_lo[g.nx - 1] : T(0);
            g.fyl = g.ny > 1 ? (T)ac[1].c_hi[0] : T(0);
            g.fyh = g.ny > 1 ? (T)ac[1].c_lo[g.ny - 1] : T(0);
            g.exl = (T)ac[0].c_lo[0];
            g.exh = (T)ac[0].c_hi[g.nx - 1];
            g.eyl = (T)ac[1].c_lo[0];
            g.eyh = (T)ac[1].c_hi[g.ny - 1];
        }
        L.col = col_launch(g.nx, g.ny, g.nz, is3d, COL_BX, COL_BY, COL_BX, COL_BY, env.sms);
        L.walk = walk_launch(g.nx, g.ny, g.nz, is3d, Tune<T>::walk_group);
        L.rwalk = reduce_walk_launch(g.nx, g.ny, g.nz, is3d, Tune<T>::walk_group, env.sms);
        L.sm = smooth_plan(g, L.npts, env.sms, g.fast != 0);
        // (dist.h) a slab pairs red-black iterations only with band fix-ups
        if (plan && l < dist_levels) L.sm.paired = L.sm.paired && env.dist->band[l];
        const size_t bytes = (size_t)L.elems * sizeof(T);
        if (l == 0 && !own) {
            if (second) PGPU_FORWARD(env.mem.alloc(err, (void **)&L.t, bytes, "the second iterate"));
        } else {
            PGPU_FORWARD(env.mem.alloc(err, (void **)&L.u, bytes, "a level's iterate"));
            PGPU_FORWARD(env.mem.alloc(err, (void **)&L.t, bytes, "a level's second iterate"));
            PGPU_FORWARD(env.mem.alloc(err, (void **)&L.f, bytes, "a level's right-hand side"));
            // Ghosts of correction levels must read as zero.
            PGPU_CUDA_SETUP(env, cudaMemsetAsync(L.u, 0, bytes, env.st));
            PGPU_CUDA_SETUP(env, cudaMemsetAsync(L.t, 0, bytes, env.st));
            PGPU_CUDA_SETUP(env, cudaMemsetAsync(L.f, 0, bytes, env.st));
        }
    }
    // The transfers, once both grids of each pair are known.
    for (int l = 0; l + 1 < nl; ++l) {
        Transfer<T> &x = lv[l].down;
        const Level<T> &F = lv[l], &C = lv[l + 1];
        const AxisOff *o = off[l].a;
        x.fg = F.g;
        x.cg = C.g;
        Xfer<T> &r = x.rc;
        r.cntx = di + o[0].cnt; r.idxx = di + o[0].idx; r.rwx = dt + o[0].rw;
        r.cnty = di + o[1].cnt; r.idxy = di + o[1].idx; r.rwy = dt + o[1].rw;
        r.cntz = di + o[2].cnt; r.idxz = di + o[2].idx; r.rwz = dt + o[2].rw;
        r.tz0 = di + off[l].tz0; r.wz0 = dt + off[l].wz0; r.wz1 = dt + off[l].wz1;
        x.rf = r; // FMG's data restriction: the same with moment-free rows
        x.rf.rwx = dt + o[0].fw; x.rf.rwy = dt + o[1].fw; x.rf.rwz = dt + o[2].fw;
        x.rf.wz0 = dt + off[l].fz0; x.rf.wz1 = dt + off[l].fz1;
        x.p2 = Taps<T>{di + o[0].i2, di + o[1].i2, di + o[2].i2, dt + o[0].w2, dt + o[1].w2, dt + o[2].w2};
        x.p4 = Taps<T>{di + o[0].i4, di + o[1].i4, di + o[2].i4, dt + o[0].w4, dt + o[1].w4, dt + o[2].w4};
        x.w2 = Windows<T>{di + o[0].s2, di + o[1].s2, di + o[2].s2, dt + o[0].ws2, dt + o[1].ws2, dt + o[2].ws2};
        x.w4 = Windows<T>{di + o[0].s4, di + o[1].s4, di + o[2].s4, dt + o[0].ws4, dt + o[1].ws4, dt + o[2].ws4};
        x.fwalk = F.walk;
        x.cwalk = C.walk;
        x.rs_tile = rs_tile[l] != 0;
        // (dist.h: not on a slab: its rows reach the residual's ghost planes)
        x.rr_fused = x.rs_tile && rr_fits && is3d && F.g.fast && !F.g.px && !F.g.py && !F.g.pz &&
                     !(plan && l < dist_levels);
        x.pl_tile = pl_tile[l] != 0;
        x.bt_pro = bt_pro[l] && !(plan && l < dist_levels);
        x.fi_tile = fi_tile[l] != 0;
        x.oa = OdiAxes<T>{{di + o[0].cn, di + o[1].cn, di + o[2].cn},
                          {di + o[0].cf, di + o[1].cf, di + o[2].cf},
                          {dt + o[0].wf, dt + o[1].wf, dt + o[2].wf},
                          {dt + o[0].wc, dt + o[1].wc, dt + o[2].wc}};
        x.odi_ok = odi_ok[l] && !plan;
        x.odi = false;
        x.it = col_launch(F.g.nx, F.g.ny, F.g.nz, is3d, IT_FX, IT_FY, IT_FX, IT_FY, env.sms);
        x.ot = odi_launch(F.g.nx, F.g.ny, F.g.nz, is3d, env.sms);
        x.rs = col_launch(C.g.nx, C.g.ny, C.g.nz, is3d, RS_TX, RS_TY, RS_TX, RS_TY, env.sms);
        x.bt_rr = plan && l < dist_levels ? 0 : bt_rr[l];
        typedef BetaTile<T> BT;
        x.brr = col_launch(C.g.nx, C.g.ny, C.g.nz, is3d, BT::RX, BT::RY, BT_TX, BT::BY, env.sms, Tune<T>::bt_per_sm);
    }
    singular_box = singular;
    fast_box.resize(nl);
    rr_box.resize(nl);
    for (int l = 0; l < nl; ++l) {
        fast_box[l] = lv[l].g.fast;
        rr_box[l] = lv[l].down.rr_fused;
    }
    route(env);
    return PGPU_SUCCESS;
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 25 "src/poisson_gpu.cu"
#endif
// general_levels.h -- the general form on every level of a hierarchy
#ifdef PGPU_SRC_LINES
#line 2 "src/general_levels.h"
#endif



namespace pgpu {

template <class T> pgpu_status Hierarchy<T>::general_alloc(Env &env, bool want_mask, bool want_beta)
{
    char *err = env.err;
    const int nl = (int)lv.size();
    const bool is3d = lv[0].g.is3d != 0;
    const int axes = is3d ? 3 : 2;
    // Each part is done only once all of it is: after a failed allocation
    // (the handle keeps what it had) the next call allocates that part
    // again, and what the failed call took stays the handle's until
    // pgpu_destroy.
    if (!gen.built) {
        gen.mk.assign(nl, nullptr);
        gen.one.assign(nl, nullptr);
        for (int d = 0; d < 3; ++d) gen.fr[d].assign(nl, nullptr);
        for (int l = 1; l < nl; ++l) {
            const size_t n = (size_t)lv[l].elems;
            const size_t nb = (n + 15) / 16 * 16; // (a multiple of 16 bytes: gen_first_kernel's loads)
            PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.mk[l], nb, "a coarse level's cell types"));
            PGPU_CUDA(cudaMemsetAsync(gen.mk[l], 0, nb, env.st));
            PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.one[l], nb, "a coarse level's unit faces"));
            PGPU_CUDA(cudaMemsetAsync(gen.one[l], 0, nb, env.st));
            for (int d = 0; d < axes; ++d) {
                PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.fr[d][l], n * sizeof(T), "a coarse level's face fractions"));
                PGPU_CUDA(cudaMemsetAsync(gen.fr[d][l], 0, n * sizeof(T), env.st));
            }
        }
        // gen_coarse_kernel's tables: tiles of 30 x 4 x 4 coarse positions
        // (2D: 30 x 8), halved along their longest side while a tile would
        // touch more than 255 fine slots on an axis or need more shared
        // memory than a block may have.
        std::vector<int> iv;
        std::vector<double> wv;
        std::vector<size_t> off; // per level pair and axis: rows, slots (ints), weights (doubles)
        std::vector<size_t> woff; // per level pair and axis: the walk's nodes (ints), distances (doubles),
                                  // the parents (ints), their weights (doubles)
        size_t smem_most = 0;
        unsigned tiles_most = 0;
        gen.coarse.assign((size_t)std::max(nl - 1, 0), {});
        for (int l = 0; l + 1 < nl; ++l) {
            std::vector<int> cnt[3], idx[3];
            for (int d = 0; d < 3; ++d)
                PGPU_RETURN_IF(!path_table(hl[l].ax[d], hl[l + 1].ax[d], hl[l].tr[d].coarsened, cnt[d], idx[d]),
                               PGPU_ERROR_UNSUPPORTED, "masks and coefficients: no fine face under a face of level %d "
                               "along axis %d", l + 1, d);
            int tb[3] = {30, is3d ? 4 : 8, is3d ? 4 : 1}; // halved below; at most FIRST_POS together (checked)
            CoarseAxisHost h[3];
            for (;;) {
                bool ok = true;
                int s[3];
                for (int d = 0; d < 3; ++d) {
                    const int nc = hl[l + 1].ax[d].n, span = d == 2 && !is3d ? 1 : nc + 1;
                    ok = coarse_axis_table(hl[l].ax[d], hl[l].tr[d], cnt[d], idx[d], nc, span, tb[d], h[d]) && ok;
                    s[d] = h[d].smax;
                }
                gen.coarse[(size_t)l].smem = coarse_smem_bytes(tb, s);
                if (ok && gen.coarse[(size_t)l].smem <= (size_t)env.optin) break;
                const int d = (int)(std::max_element(tb, tb + 3) - tb);
                PGPU_RETURN_IF(tb[d] == 1, PGPU_ERROR_UNSUPPORTED,
                               "masks and coefficients: the coarse build of level %d does not fit a block", l + 1);
                tb[d] /= 2;
            }
            PGPU_RETURN_IF(tb[0] + tb[1] + tb[2] > FIRST_POS, PGPU_ERROR_UNSUPPORTED,
                           "masks and coefficients: the coarse build's tiles of level %d are too long", l + 1);
            smem_most = std::max(smem_most, gen.coarse[(size_t)l].smem);
            for (int d = 0; d < 3; ++d) {
                off.push_back(iv.size());
                iv.insert(iv.end(), h[d].row.begin(), h[d].row.end());
                off.push_back(iv.size());
                iv.insert(iv.end(), h[d].slot.begin(), h[d].slot.end());
                iv.resize((iv.size() + 3) / 4 * 4); // the next rows start on 16 bytes
                off.push_back(wv.size());
                wv.insert(wv.end(), h[d].w.begin(), h[d].w.end());
                CoarseAxis &c = gen.coarse[(size_t)l].ax[d];
                c.tb = h[d].tb;
                c.nt = h[d].nt;
                c.by_nt = FastDiv((uint32_t)h[d].nt);
                c.stride = h[d].smax + 1;
                std::vector<int> wk;
                std::vector<double> wx;
                walk_table(hl[l].ax[d], hl[l + 1].ax[d], wk, wx);
                woff.push_back(iv.size());
                iv.insert(iv.end(), wk.begin(), wk.end());
                iv.resize((iv.size() + 3) / 4 * 4);
                woff.push_back(wv.size());
                wv.insert(wv.end(), wx.begin(), wx.end());
                PGPU_RETURN_IF(!parent_table(hl[l].tr[d], hl[l].ax[d].n, hl[l + 1].ax[d].n, wk, wx),
                               PGPU_ERROR_UNSUPPORTED, "masks: a point of level %d has more than %d coarse parents "
                               "along axis %d", l, MAX_PARENTS, d);
                woff.push_back(iv.size());
                iv.insert(iv.end(), wk.begin(), wk.end());
                woff.push_back(wv.size());
                wv.insert(wv.end(), wx.begin(), wx.end());
            }
            gen.coarse[(size_t)l].tiles = (unsigned)((int64_t)h[0].nt * h[1].nt * h[2].nt);
            tiles_most = std::max(tiles_most, gen.coarse[(size_t)l].tiles);
        }
        if (nl > 1) {
            PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.tile_list, (size_t)tiles_most * sizeof(uint32_t),
                                       "the coarse build's tile list"));
            PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.tile_count, (size_t)nl * 2 * sizeof(uint32_t),
                                       "the coarse build's tile and candidate counts"));
        }
        if (!iv.empty()) {
            int *di = nullptr;
            double *dw = nullptr;
            PGPU_FORWARD(env.upload(iv, &di, "the coarse build's tables"));
            PGPU_FORWARD(env.upload(wv, &dw, "the coarse build's weights"));
            for (int l = 0; l + 1 < nl; ++l)
                for (int d = 0; d < 3; ++d) {
                    const size_t *o = &off[((size_t)l * 3 + d) * 3];
                    CoarseAxis &c = gen.coarse[(size_t)l].ax[d];
                    c.row = (const int4 *)(di + o[0]);
                    c.slot = di + o[1];
                    c.w = dw + o[2];
                    const size_t *ow = &woff[((size_t)l * 3 + d) * 4];
                    gen.coarse[(size_t)l].wk[d] = {di + ow[0], dw + ow[1]};
                    gen.coarse[(size_t)l].par[d] = {(const int4 *)(di + ow[2]), dw + ow[3]};
                }
        }
        // The limit belongs to the kernel, shared by every handle of the
        // process: the most a block may have, never one handle's need.
        if (smem_most > 48 * 1024)
            for (auto k : {gen_coarse_kernel<T, false>, gen_coarse_kernel<T, true>})
                PGPU_CUDA(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, env.optin));
        // The scalars: flags, count, the largest value, region 0's mean (the
        // last two side by side: Solver::read_projection reads them at once).
        char *sc = nullptr;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&sc, 64, "the general form's scalars"));
        PGPU_CUDA(cudaMemsetAsync(sc, 0, 64, env.st));
        gen.flags = (unsigned *)sc;
        gen.count = (uint32_t *)(sc + 8);
        gen.near_count = (uint32_t *)(sc + 12); // read back with count
        gen.maxbits = (unsigned long long *)(sc + 16);
        gen.first = (double *)(sc + 24);
        gen.range = (unsigned long long *)(sc + 32);
        gen.built = true;
    }
    if (want_mask && !gen.mk[0]) {
        const Level<T> &L = lv[0];
        const double npts = L.npts;
        PGPU_RETURN_IF(npts >= 2147483647.0, PGPU_ERROR_UNSUPPORTED,
                       "masks: fewer than 2^31 - 1 interior points (this grid has %.0f)", npts);
        gen.cap = (uint32_t)(npts / 8) + 64;
        // (a multiple of 16 bytes: gen_first_kernel's loads of 16 bytes)
        const size_t mbytes = ((size_t)L.elems + 15) / 16 * 16;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.spare, mbytes, "the mask"));
        PGPU_CUDA(cudaMemsetAsync(gen.spare, PGPU_CELL_FLUID, mbytes, env.st)); // the ghosts
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.lab, (size_t)npts * sizeof(uint32_t), "the region labels"));
        gen.bit_words = (uint32_t)((L.npts + 31) / 32);
        gen.tile_words = (rg_tiles(L.g) + 31) / 32;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.bits,
                                   ((size_t)gen.bit_words * 2 + gen.tile_words) * sizeof(uint32_t), "the region bit sets"));
        const uint32_t nt = near_tiles(L.g);
        gen.near_words = (nt + 31) / 32;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.near_bits, (size_t)gen.near_words * sizeof(uint32_t),
                                   "the near tiles' bit set"));
        PGPU_CUDA(cudaMemsetAsync(gen.near_bits, 0, (size_t)gen.near_words * sizeof(uint32_t), env.st));
        PGPU_FORWARD(
            env.mem.alloc(err, (void **)&gen.near_list, (size_t)nt * sizeof(uint32_t), "the near tiles' list"));
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.sizes, (size_t)gen.cap * sizeof(uint32_t), "the region sizes"));
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.sums, (size_t)gen.cap * 2 * sizeof(long long), "the region sums"));
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.fp, (size_t)L.elems * sizeof(T), "the projected right-hand side"));
        if (!gen.side) PGPU_CUDA(cudaStreamCreateWithFlags(&gen.side, cudaStreamNonBlocking));
        if (!gen.fork) PGPU_CUDA(cudaEventCreateWithFlags(&gen.fork, cudaEventDisableTiming));
        if (!gen.join) PGPU_CUDA(cudaEventCreateWithFlags(&gen.join, cudaEventDisableTiming));
        // last: mk[0] says this part is done
        uint8_t *mk0 = nullptr;
        PGPU_FORWARD(env.mem.alloc(err, (void **)&mk0, mbytes, "the mask"));
        PGPU_CUDA(cudaMemsetAsync(mk0, PGPU_CELL_FLUID, mbytes, env.st));
        gen.mk[0] = mk0;
    }
    if (want_beta && !gen.fr[axes - 1][0]) // (the last array says this part is done)
        for (int d = 0; d < axes; ++d) {
            const size_t n = (size_t)lv[0].elems * sizeof(T);
            PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.fr[d][0], n, "the face coefficients"));
            PGPU_CUDA(cudaMemsetAsync(gen.fr[d][0], 0, n, env.st));
        }
    if (want_beta && lv[0].g.is3d && !gen.bw) {
        const size_t n = (size_t)lv[0].elems * sizeof(T);
        PGPU_FORWARD(env.mem.alloc(err, (void **)&gen.bw, n, "the coefficients' reciprocals"));
        PGPU_CUDA(cudaMemsetAsync(gen.bw, 0, n, env.st));
    }
    // (a cycle's level 0 where beta_resid)
    if (want_beta && lv.size() > 1 && lv[0].g.is3d && beta_resid_fits<T>(env, lv[0].sm) && !lv[0].x) {
        const size_t n = (size_t)lv[0].elems * sizeof(T);
        PGPU_FORWARD(env.mem.alloc(err, (void **)&lv[0].x, n, "level 0's third iterate"));
        PGPU_CUDA(cudaMemsetAsync(lv[0].x, 0, n, env.st));
    }
    return PGPU_SUCCESS;
}

template <class T> bool Hierarchy<T>::general_apply(Env &env)
{
    const int nl = (int)lv.size();
    const bool on = gen.on();
    bool changed = false;
    // Operator-dependent transfers where beta jumps (odi.h), into a Galerkin
    // level (its arrays allocated: galerkin_alloc), with a mask too (the
    // operator on its fluid points: odi_held); the coarse build takes the
    // series along its paths there (GenCoarse::series), for a level built
    // from it by the geometric rule.  Not across a periodic axis.
    const bool odi = on && gen.beta && gen.jump && !lv[0].g.px && !lv[0].g.py && !lv[0].g.pz;
    auto galerkin = [&](int l) { // level l is a Galerkin one
        return odi && l > 0 && lv[(size_t)l - 1].down.odi_ok && (size_t)l < gen.gst.size() && gen.gst[(size_t)l];
    };
    for (int l = 0; l < nl; ++l) {
        Level<T> &L = lv[l];
        Grid<T> g = L.g;
        g.gen = on;
        // (a Galerkin level has no cell types: every node is an unknown of
        // its rows, those with none held at 0 by them)
        const bool mk = on && gen.mask && !galerkin(l);
        g.mk = mk ? gen.mk[l] : nullptr;
        const T *fr[3];
        for (int d = 0; d < 3; ++d)
            fr[d] = !on || (l == 0 && !gen.beta) || (d == 2 && !g.is3d) ? nullptr : gen.fr[d][l];
        g.fx = fr[0];
        g.fy = fr[1];
        g.fz = fr[2];
        g.bw = on && l == 0 && gen.beta && gen.narrow ? gen.bw : nullptr;
        g.fast = on && (g.fx || g.fy || g.fz) ? 0 : fast_box[l];
        g.frfast = on && g.fx && g.is3d ? fast_box[l] : 0;
        g.shut = mk && shut_ok ? 1 : 0;
        changed = changed || std::memcmp(&g, &L.g, sizeof(g)) != 0;
        L.g = g;
        L.sm = smooth_plan(g, L.npts, env.sms, fast_box[l] != 0);
        if (l < dist_levels) L.sm.paired = L.sm.paired && env.dist->band[l]; // (dist.h) as in build
    }
    lv[0].gr = GalRows<T>{};
    for (int l = 0; l + 1 < nl; ++l) {
        Transfer<T> &x = lv[l].down;
        x.fg = lv[l].g;
        x.cg = lv[l + 1].g;
        x.rr_fused = rr_box[l] && !on;
        x.odi = galerkin(l + 1);
        x.fr = lv[l].gr;
        x.pw = x.odi && x.fr.st && (size_t)l < gen.gpw.size() ? gen.gpw[(size_t)l] : nullptr;
        const Grid<T> &cg = lv[l + 1].g;
        lv[l + 1].gr = x.odi ? GalRows<T>{gen.gst[(size_t)l + 1], (int64_t)lv[l + 1].npts, cg.is3d ? 0 : 9,
                                          gal_pack(cg.nx, cg.ny, cg.is3d ? cg.nz : 1)}
                             : GalRows<T>{};
    }
    singular = singular_box && !gen.mask;
    route(env);
    return changed;
}

template <class T> pgpu_status Hierarchy<T>::general_build(Env &env)
{
    char *err = env.err;
    const int nl = (int)lv.size();
    if (nl > 1) PGPU_CUDA(cudaMemsetAsync(gen.tile_count, 0, (size_t)nl * 2 * sizeof(uint32_t), env.st));
    for (int l = 0; l + 1 < nl; ++l) {
        const Grid<T> &C = lv[l + 1].g;
        const auto &cl = gen.coarse[(size_t)l];
        GenCoarse<T> a;
        a.iso = gen.mask && gen.held ? (uint8_t *)gen.fp : nullptr; // (fp is free until a solve)
        // the candidates' list behind the bytes, where fp holds it
        const size_t at = ((size_t)lv[l + 1].elems + 3) / 4 * 4;
        const bool room = at + (size_t)lv[l + 1].npts * sizeof(uint32_t) <= (size_t)lv[0].elems * sizeof(T);
        a.cand = a.iso && room ? (uint32_t *)((uint8_t *)gen.fp + at) : nullptr;
        a.ncand = gen.tile_count + nl + l;
        a.f = lv[l].g;
        a.c = C;
        if (gen.mask) { // (the geometric levels' cell types, Galerkin levels' too)
            a.f.mk = gen.mk[l];
            a.f.shut = shut_ok ? 1 : 0;
            a.c.mk = gen.mk[l + 1];
            a.c.shut = a.f.shut;
        }
        a.cmk = gen.mask ? gen.mk[l + 1] : nullptr;
        a.cone = gen.mask ? gen.one[l + 1] : nullptr;
        a.fone = gen.mask && l > 0 ? gen.one[l] : nullptr;
        for (int d = 0; d < 3; ++d) {
            a.cf[d] = gen.fr[d][l + 1];
            a.ax[d] = cl.ax[d];
            a.wk[d] = cl.wk[d];
            a.par[d] = cl.par[d];
        }
        // The second pass's grid: the blocks that fit the GPU at once (two
        // per SM), or one per tile; where that is every tile, it takes them
        // all without the first pass.
        const unsigned fit = std::min(cl.tiles, 2u * (unsigned)env.sms);
        a.list = fit < cl.tiles ? gen.tile_list : nullptr;
        a.count = gen.tile_count + l;
        a.tiles = cl.tiles;
        a.scale = gen.beta;
        a.series = lv[l].down.odi;
        const dim3 block((unsigned)cl.ax[0].tb, (unsigned)cl.ax[1].tb, (unsigned)cl.ax[2].tb);
        const bool fr = a.f.fx || a.f.fy || a.f.fz;
        if (a.list) {
            if (fr) gen_first_kernel<T, true><<<cl.tiles, 32 * FIRST_WARPS, 0, env.st>>>(a);
            else gen_first_kernel<T, false><<<(cl.tiles + FIRST_WARPS - 1) / FIRST_WARPS, 32 * FIRST_WARPS, 0, env.st>>>(a);
            PGPU_LAUNCHED();
        }
        if (fr) gen_coarse_kernel<T, true><<<fit, block, cl.smem, env.st>>>(a);
        else gen_coarse_kernel<T, false><<<fit, block, cl.smem, env.st>>>(a);
        PGPU_LAUNCHED();
        if (a.cmk && gen.held) {
            gen_iso_kernel<T><<<grid_for((int64_t)lv[l + 1].npts, env.sms), 256, 0, env.st>>>(a);
            PGPU_LAUNCHED();
        }
        if (a.cmk) {
            gen_shut_kernel<T><<<grid_for((int64_t)lv[l + 1].npts, env.sms), 256, 0, env.st>>>(a);
            PGPU_LAUNCHED();
        }
        if (a.cmk && gen.held) {
            gen_distance_kernel<T><<<grid_for((int64_t)lv[l + 1].npts, env.sms), 256, 0, env.st>>>(a);
            PGPU_LAUNCHED();
        }
        if (a.cmk) {
            gen_check_kernel<T, false><<<grid_for((int64_t)lv[l + 1].npts, env.sms), 256, 0, env.st>>>(
                a.c, a.cmk, (const T *)nullptr, (unsigned *)nullptr, a.cmk, (uint32_t *)nullptr);
            PGPU_LAUNCHED();
        }
    }
    return galerkin_build(env);
}

template <class T> pgpu_status Hierarchy<T>::galerkin_alloc(Env &env)
{
    char *err = env.err;
    const int nl = (int)lv.size();
    if (nl < 2 || !gen.gst.empty()) return PGPU_SUCCESS;
    std::vector<T *> st((size_t)nl, nullptr);
    T *scr = nullptr;
    // (P's weights from a level of 7-point rows -- level 0, or one below a
    // pair that keeps no nodes -- then level 0's two vectors)
    size_t n0 = 2 * (size_t)lv[0].elems;
    for (int l = 0; l + 1 < nl; ++l)
        if (lv[l].down.odi_ok) n0 = std::max(n0, (size_t)odi_pw_count(lv[l].g, lv[l + 1].g));
    PGPU_FORWARD(env.mem.alloc(err, (void **)&scr, n0 * sizeof(T), "the Galerkin build's vectors"));
    std::vector<T *> pw((size_t)nl, nullptr);
    for (int l = 1; l < nl; ++l) {
        if (!lv[l - 1].down.odi_ok) continue;
        const size_t bytes = (size_t)gal_stored(lv[l].g.is3d != 0) * (size_t)lv[l].npts * sizeof(T);
        PGPU_FORWARD(env.mem.alloc(err, (void **)&st[(size_t)l], bytes, "a Galerkin level's operator"));
        PGPU_CUDA(cudaMemsetAsync(st[(size_t)l], 0, bytes, env.st));
        if (l + 1 == nl || !lv[l].down.odi_ok) continue;
        const size_t wb = (size_t)odi_pw_count(lv[l].g, lv[l + 1].g) * sizeof(T);
        PGPU_FORWARD(env.mem.alloc(err, (void **)&pw[(size_t)l], wb, "a Galerkin level's prolongation weights"));
        PGPU_CUDA(cudaMemsetAsync(pw[(size_t)l], 0, wb, env.st));
    }
    gen.gscr = scr;
    gen.gpw = pw;
    gen.gst = st; // last: says the part is done
    return PGPU_SUCCESS;
}

// Each Galerkin level's operator R A P, from the level above's rows
// (Transfer::fr): P's weights stage by stage (gal_weights_kernel; from 7-point
// rows in gscr, a Galerkin level's kept for its transfers), the entries off the
// centre directly from them (gal_rap_kernel), the rows' sums as
// R A (1 - delta) (gal_sums_kernel: delta, and A (1 - delta) by
// gal_residual_kernel, in two vectors of the fine level -- level 0: gscr; a
// coarse one: its u and t, free between solves -- R of it in the coarse t).
template <class T> pgpu_status Hierarchy<T>::galerkin_build(Env &env)
{
    char *err = env.err;
    const int nl = (int)lv.size();
    for (int l = 0; l + 1 < nl; ++l) {
        Level<T> &F = lv[l], &C = lv[l + 1];
        const Transfer<T> &x = F.down;
        if (!x.odi) continue;
        const int64_t tiles = F.g.is3d ? (int64_t)((C.g.nx + GAL_TX - 1) / GAL_TX) * ((C.g.ny + GAL_TY - 1) / GAL_TY) *
                                             ((C.g.nz + GAL_TZ - 1) / GAL_TZ)
                                       : (int64_t)((C.g.nx + GAL_T2X - 1) / GAL_T2X) * ((C.g.ny + GAL_T2Y - 1) / GAL_T2Y);
        PGPU_RETURN_IF(tiles > INT32_MAX, PGPU_ERROR_UNSUPPORTED, "a Galerkin level of %lld tiles", (long long)tiles);
        PGPU_RETURN_IF(x.fr.st && !x.pw, PGPU_ERROR_CUDA, "internal: a Galerkin level without P's weights");
        const bool s27 = x.fr.st != nullptr;
        T *const pw = s27 ? x.pw : gen.gscr;
        T *dl = l ? F.u : gen.gscr, *r = l ? F.t : gen.gscr + F.elems;
        for (int stage = 1; stage <= odi_top(F.g); ++stage) {
            launch(F.walk, 0, env.st, s27 ? gal_weights_kernel<T, true> : gal_weights_kernel<T, false>, F.g, x.fr,
                   C.g, x.oa, pw, dl, stage);
            PGPU_LAUNCHED();
        }
        const auto rap = s27 ? gal_rap_kernel<T, true> : gal_rap_kernel<T, false>;
        const size_t smem = gal_rap_smem(s27);
        PGPU_RETURN_IF(smem + GAL_STATIC_SMEM > (size_t)env.optin, PGPU_ERROR_UNSUPPORTED,
                       "the Galerkin build needs %zu bytes of shared memory a block, the device offers %d",
                       smem + GAL_STATIC_SMEM, env.optin);
        PGPU_CUDA(cudaFuncSetAttribute(rap, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        rap<<<(unsigned)tiles, GAL_THREADS, smem, env.st>>>(F.g, x.fr, C.g, x.oa, C.gr, (const T *)pw);
        PGPU_LAUNCHED();
        if (!s27) PGPU_FORWARD(x.odi_delta(env, dl)); // (a Galerkin level's: with its weights)
        launch(F.walk, 0, env.st, gal_residual_kernel<T>, F.g, x.fr, (const T *)dl, (const T *)nullptr, r);
        PGPU_LAUNCHED();
        PGPU_FORWARD(x.odi_restrict(env, r, C.t));
        launch(C.walk, 0, env.st, gal_sums_kernel<T>, C.g, (const T *)C.t, C.gr);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Hierarchy<T>::general_rhs(Env &env, T *out, bool held)
{
    char *err = env.err;
    const Level<T> &L = lv[0];
    gen_rhs_kernel<T><<<grid_for((int64_t)L.npts, env.sms), 256, 0, env.st>>>(L.g, (const T *)L.u, (const T *)L.f,
                                                                               L.shift, out, held);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// One pass of gen_project_kernel over level 0's singular regions: out = src
// (+ u's boundary terms where `terms`) minus each region's mean.
template <class T> pgpu_status Hierarchy<T>::project(Env &env, const T *src, const T *u, int terms, T *out)
{
    char *err = env.err;
    const Level<T> &L = lv[0];
    const unsigned blocks = grid_for((int64_t)L.npts, env.sms);
    PGPU_CUDA(cudaMemsetAsync(gen.maxbits, 0, sizeof(unsigned long long), env.st));
    PGPU_CUDA(cudaMemsetAsync(gen.sums, 0, (size_t)gen.regions * 2 * sizeof(long long), env.st));
    for (int mode = 0; mode < 3; ++mode) {
        gen_project_kernel<T><<<blocks, 256, 0, env.st>>>(L.g, gen.lab, src, u, terms, mode, gen.maxbits, gen.sums,
                                                          gen.sizes, out, terms ? gen.first : nullptr);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 26 "src/poisson_gpu.cu"
#endif
// coarse_solve.h -- the cycle schedule and its coarse end: dense inverse, single-block executor
#ifdef PGPU_SRC_LINES
#line 2 "src/coarse_solve.h"
#endif


namespace pgpu {

// A cycle from level s solves A e = f_s approximately from the level's
// current iterate: pre-smooth, restrict the residual to s+1 (whose
// correction starts from zero), gamma cycles of s+1, prolong and add the
// correction, post-smooth; the level where cycles stop (last_level: the dense
// level, else the single node) is solved exactly.  gamma is 2 for W-cycles
// where s+1 is not that level, else 1.  build_schedule lists these steps once
// per start level; that list is the only statement of the cycle.  The host
// runs the steps of the large levels as kernel launches and hands every run
// of steps on the tiny levels (at most TINY_THREADS points) to
// tiny_cycle_kernel, which runs the same steps in one block with barriers
// between them: below that size each launch costs several microseconds
// whatever its grid, about 0.17 ms per 512^3 V-cycle for the levels below
// 32^3 and several times that in an FMG pass.
// Level 0 is whatever the hierarchy has bound (Hierarchy::bind): the user's
// problem (its mean shift passed in), or a correction problem in workspace.
// post_flip reverses the colour order of post-smoothing (a symmetric cycle,
// with pre == post).

enum StepOp { STEP_PRE = 0, STEP_DOWN = 1, STEP_SOLVE = 2, STEP_UP = 3, STEP_POST = 4 };
struct Step {
    int op, level;
};

static void build_schedule(int s, int last, bool wcycle, std::vector<Step> &out)
{
    if (s == last) {
        out.push_back(Step{STEP_SOLVE, s});
        return;
    }
    out.push_back(Step{STEP_PRE, s});
    out.push_back(Step{STEP_DOWN, s});
    const int gamma = wcycle && s + 1 < last ? 2 : 1;
    for (int k = 0; k < gamma; ++k) build_schedule(s + 1, last, wcycle, out);
    out.push_back(Step{STEP_UP, s});
    out.push_back(Step{STEP_POST, s});
}

// ---- the dense coarse solve ----
// The inverse of a small level's operator, transposed (so that the threads'
// loads of a column are contiguous).  A singular level (no Dirichlet face;
// the constants span the null space and the cell volumes w the left one) is
// inverted as A + s e w^T, which solves A u = r with w^T u = 0 for every r
// with w^T r = 0.  Gauss-Jordan elimination with partial pivoting, in
// double; false if a pivot vanishes.
static bool dense_inverse(const Axis ax[3], bool singular, std::vector<double> &mt)
{
    std::vector<double> a, w;
    assemble_dense(ax, a, w);
    const int n = (int)w.size();
    if (singular) {
        double dsum = 0, wsum = 0;
        for (int p = 0; p < n; ++p) {
            dsum += a[(size_t)p * n + p];
            wsum += w[p];
        }
        const double sc = (dsum > 0 ? dsum / n : 1.0) / wsum;
        for (int p = 0; p < n; ++p)
            for (int q = 0; q < n; ++q) a[(size_t)p * n + q] += sc * w[q];
    }
    std::vector<double> inv((size_t)n * n, 0.0);
    for (int p = 0; p < n; ++p) inv[(size_t)p * n + p] = 1.0;
    for (int col = 0; col < n; ++col) {
        int piv = col;
        for (int r = col + 1; r < n; ++r)
            if (std::fabs(a[(size_t)r * n + col]) > std::fabs(a[(size_t)piv * n + col])) piv = r;
        const double pv = a[(size_t)piv * n + col];
        if (!(std::fabs(pv) > 0) || !std::isfinite(pv)) return false;
        if (piv != col)
            for (int q = 0; q < n; ++q) {
                std::swap(a[(size_t)piv * n + q], a[(size_t)col * n + q]);
                std::swap(inv[(size_t)piv * n + q], inv[(size_t)col * n + q]);
            }
        const double rp = 1.0 / pv;
        for (int q = 0; q < n; ++q) {
            a[(size_t)col * n + q] *= rp;
            inv[(size_t)col * n + q] *= rp;
        }
        for (int r = 0; r < n; ++r) {
            const double f = a[(size_t)r * n + col];
            if (r == col || f == 0.0) continue;
            double *ar = &a[(size_t)r * n], *ir = &inv[(size_t)r * n];
            const double *ac = &a[(size_t)col * n], *ic = &inv[(size_t)col * n];
            for (int q = col; q < n; ++q) ar[q] -= f * ac[q];
            for (int q = 0; q < n; ++q) ir[q] -= f * ic[q];
        }
    }
    mt.assign((size_t)n * n, 0.0);
    for (int p = 0; p < n; ++p)
        for (int q = 0; q < n; ++q) mt[(size_t)q * n + p] = inv[(size_t)p * n + q];
    return true;
}


// ---- the single-block executor ----
template <class T> struct TinyLevel {
    Grid<T> g;
    Xfer<T> x;      // restriction to the next level (unused on the last)
    Taps<T> p2;     // its trilinear prolongation
    T *u, *t, *f;   // iterate, residual, right-hand side
    int64_t elems;
    const T *dense; // the level's inverse (the dense level only), or NULL
};

template <class T> __device__ __forceinline__ int64_t tiny_point(const Grid<T> &g, int e, int &i, int &j, int &k)
{
    i = e % g.nx;
    const int r = e / g.nx;
    j = r % g.ny;
    k = r / g.ny;
    return at_point(g, i, j, k);
}

// One colour (parity of i+j+k) of a red-black sweep, in place: all new
// values first, then the stores, so that two points of one colour that are
// neighbours (across the seam of an odd periodic ring) both read the old
// values, as in rbgs_kernel.
template <class T> __device__ void tiny_colour(const Grid<T> &g, T *u, const T *f, int parity, T omega)
{
    const int n = g.nx * g.ny * g.nz;
    const int e = threadIdx.x;
    T nv = T(0);
    int64_t pp = -1;
    if (e < n) {
        int i, j, k;
        const int64_t p = tiny_point(g, e, i, j, k);
        if (((i + j + k) & 1) == parity) {
            T diag;
            const T off = stencil_off<T>(g, u + p, p, i, j, k, diag);
            nv = relax(u[p], f[p] + off, diag, omega);
            pp = p;
        }
    }
    __syncthreads();
    if (pp >= 0) u[pp] = nv;
    __syncthreads();
}

// r = f - A u on the interior, formed in double (see ResidualEmit).
template <class T> __device__ void tiny_residual(const Grid<T> &g, const T *u, const T *f, T *r)
{
    const int n = g.nx * g.ny * g.nz;
    for (int e = threadIdx.x; e < n; e += TINY_THREADS) {
        int i, j, k;
        const int64_t p = tiny_point(g, e, i, j, k);
        if (!gen_fluid(g, p)) { // (the general form) not an unknown
            r[p] = T(0);
            continue;
        }
        r[p] = T(point_residual(g, u, f, p, i, j, k));
    }
}

// u += M r on the interior (M: the dense level's inverse, transposed).
template <class T> __device__ void tiny_dense(const Grid<T> &g, const T *__restrict__ mt, const T *r, T *u)
{
    __shared__ T rs[DENSE_MAX];
    const int n = g.nx * g.ny * g.nz;
    int i, j, k;
    for (int e = threadIdx.x; e < n; e += TINY_THREADS) rs[e] = r[tiny_point(g, e, i, j, k)];
    __syncthreads();
    for (int e = threadIdx.x; e < n; e += TINY_THREADS) {
        T acc = T(0);
#pragma unroll 8
        for (int q = 0; q < n; ++q) acc += mt[(int64_t)q * n + e] * rs[q];
        const int64_t p = tiny_point(g, e, i, j, k);
        u[p] = u[p] + acc;
    }
    __syncthreads();
}

// The steps steps[0 .. n) of a cycle on the tiny levels, level l being
// tab[l - first]; every level's iterate is its u (updated in place).
template <class T>
__global__ void __launch_bounds__(TINY_THREADS, 1)
    tiny_cycle_kernel(const TinyLevel<T> *__restrict__ tab, int first, const Step *__restrict__ steps, int nsteps,
                      T omega, int pre, int post, int post_flip)
{
    for (int q = 0; q < nsteps; ++q) {
        const int l = steps[q].level;
        const TinyLevel<T> &L = tab[l - first];
        switch (steps[q].op) {
        case STEP_PRE:
        case STEP_POST: {
            const int first_parity = steps[q].op == STEP_POST ? 1 ^ post_flip : 1;
            for (int it = 0, n = steps[q].op == STEP_POST ? post : pre; it < n; ++it) {
                tiny_colour(L.g, L.u, L.f, first_parity, omega);
                tiny_colour(L.g, L.u, L.f, first_parity ^ 1, omega);
            }
            break;
        }
        case STEP_DOWN: {
            const TinyLevel<T> &C = tab[l + 1 - first];
            tiny_residual(L.g, L.u, L.f, L.t);
            for (int64_t e = threadIdx.x; e < C.elems; e += TINY_THREADS) C.u[e] = T(0); // ghosts too
            __syncthreads();
            for (int e = threadIdx.x; e < C.g.nx * C.g.ny * C.g.nz; e += TINY_THREADS) {
                int I, J, K;
                const int64_t pc = tiny_point(C.g, e, I, J, K);
                C.f[pc] = rs_point(rs_column(L.x, L.g.sy, I, J), L.g, L.x, L.t, K, Shift<T>{});
            }
            __syncthreads();
            break;
        }
        case STEP_SOLVE:
            if (L.dense) { // the residual, then the inverse's product
                tiny_residual(L.g, L.u, L.f, L.t);
                __syncthreads();
                tiny_dense(L.g, L.dense, L.t, L.u);
            } else { // one node: weight 1 solves it
                tiny_colour(L.g, L.u, L.f, 0, T(1));
                tiny_colour(L.g, L.u, L.f, 1, T(1));
            }
            break;
        case STEP_UP: {
            const TinyLevel<T> &C = tab[l + 1 - first];
            for (int e = threadIdx.x; e < L.g.nx * L.g.ny * L.g.nz; e += TINY_THREADS) {
                int i, j, k;
                const int64_t p = tiny_point(L.g, e, i, j, k);
                if (!gen_fluid(L.g, p)) continue;
                const T *ce = (const T *)C.u;
                L.u[p] = L.u[p] + ip_shut_or<true>(L.g, L.p2, C.g, ce, gen_byte(L.g, p), i, j, k,
                                             ip_point(ip_column<T, 2>(L.p2, C.g.sy, i, j), L.p2, C.g, ce, k));
            }
            __syncthreads();
            break;
        }
        }
    }
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 27 "src/poisson_gpu.cu"
#endif
// multigrid.h -- Multigrid<T>: V / W cycles, FMG, the stop rules of a multigrid solve
#ifdef PGPU_SRC_LINES
#line 2 "src/multigrid.h"
#endif




namespace pgpu {

template <class T> class Multigrid {
  public:
    int pre = 2, post = 1, post_flip = 0;
    bool wcycle = false;
    T omega = T(1);
    // measure: the next level-0 prolongation also sums the size of its
    // correction into the reducer's slot RES_CORR (a float convergence test).
    bool measure = false;
    // centre: a solve by cycles alone of a singular problem in the general
    // form (coefficients, no mask): every level-0 prolongation takes the
    // coarse correction's mean out, and the FMG pass each coarse solution's
    // before it is interpolated.  Galerkin levels carry no constant of their
    // own but drift along it (their right-hand sides are in range only to
    // rounding, scaled by the coefficients' contrast): an all-Neumann box
    // around a 1e6 inclusion gathered a constant of 1e5 times u in a W-cycle
    // FMG, whose removal at the end then left 1.5e-11 of u in its mean.
    // (Not in a preconditioner: the projection would break its symmetry.
    // Solver::symmetric_cycle sets it with the handle's form.)
    bool centre = false;
    // flip0: a cycle may end with level 0's iterate in its other array
    // (Level::cur), which a caller that keeps track of it allows: level 0's
    // prolongation then folds into its post-smoothing where the transfer
    // allows it (Transfer::bt_pro), and a V(2,1) cycle takes three passes
    // over level 0's arrays instead of four.
    bool flip0 = false;
    Reducer *red = nullptr;
    // Level 0's residual, where the pre-smoothing formed it (its last pass,
    // where route.pre_resid): the restriction takes it from there.
    const T *resid0 = nullptr;

    pgpu_status init(Env &env, Hierarchy<T> &h, const pgpu_config &c, Reducer *red);
    // One cycle on level l (V, or W).  gamma_top > 0 (FMG's finest cycle)
    // solves level l's own coarse-grid correction more accurately: one cycle
    // two levels down, interpolated, then one on l+1 where l+1 has
    // FMG_START_MIN points or more, else gamma_top cycles of l+1.
    pgpu_status cycle(int l, int gamma_top = 0);
    // Full multigrid, one pass, for the problem bound to level 0: the coarse
    // levels (workspace only), then level 0 (its interpolation and cycle).
    pgpu_status fmg_pass()
    {
        PGPU_FORWARD(fmg_coarse());
        return fmg_finish();
    }
    pgpu_status fmg_coarse();
    pgpu_status fmg_finish();
    // FMG: level l+1's data restricted from level l's; level l's u the
    // tricubic interpolant of level l+1's solution.
    pgpu_status fmg_restrict(int l);
    pgpu_status fmg_interpolate(int l);
    // FMG with held points (a mask with Dirichlet points): the coarse
    // problems take the held values where their own couplings put them
    // (held_terms_kernel), and the interpolation reads them
    // (held_values_kernel).  A coarse level's values wait in its t from
    // fmg_coarse's start until that level is interpolated.
    // Not on Galerkin levels (odi), which have no held points: their coarse
    // problems take b with zero data, as a mask without held points.
    bool held_fmg() const { return gen && h->gen.mask && h->gen.held && !odi; }
    GenCoarse<T> held_pair(int l) const; // levels l and l + 1, as the held kernels read them
    // Level l's points in the global problem (a slab level's npts are the rank's).
    double global_points(int l) const;
    // The general operator (a mask or coefficients) has no dense level: its
    // cycles go down to the single node.
    int last_level() const { return dense_level >= 0 && !gen ? dense_level : (int)h->lv.size() - 1; }
    int tiny_first = 0;   // levels from here on run in tiny_cycle_kernel (never level 0)
    // A pair of levels takes the operator-dependent transfers (odi.h), which
    // the tiny levels' kernel has not: every level's steps are launched.
    bool odi = false;
    int tiny_from() const { return odi ? (int)h->lv.size() : tiny_first; }
    // (dist.h) fresh[l]: slab level l's iterate has the neighbours' current
    // values in its ghost planes (its last smoothing ended in a band pass),
    // so the next residual or prolongation needs no exchange.
    std::vector<char> fresh;
    int dense_level = -1; // the level solved by its inverse, or -1
    bool gen = false;     // the hierarchy's levels take the general form
    // After the levels' grids changed (the general form set or removed): the
    // tiny levels' table again, and the schedule that ends where it should.
    pgpu_status refresh(bool general);

  private:
    Env *env = nullptr;
    Hierarchy<T> *h = nullptr;
    const T *folded = nullptr; // level 0's coarse correction, left to its post-smoothing (flip0, in x)
    std::vector<std::vector<Step>> sched; // per start level (of the current form)
    std::vector<int> dsched;              // offset of sched[s] in d_steps (tiny levels)
    std::vector<std::vector<Step>> sched_form[2]; // per form: box (0), general (1)
    std::vector<int> dsched_form[2];
    Step *d_steps = nullptr;
    TinyLevel<T> *d_tiny = nullptr;
    const T *d_dense = nullptr;
    std::vector<TinyLevel<T>> tiny_table() const;
    pgpu_status run(int l, int op);
    pgpu_status down(int l, bool zero);
    pgpu_status tiny(int s);
    pgpu_status near_relax(Level<T> &L);
};

template <class T> pgpu_status Multigrid<T>::init(Env &e, Hierarchy<T> &hh, const pgpu_config &c, Reducer *r)
{
    env = &e;
    h = &hh;
    red = r;
    pre = c.pre_smooth;
    post = c.post_smooth;
    wcycle = (c.flags & PGPU_WCYCLE) != 0;
    omega = (T)c.omega;
    std::vector<Level<T>> &lv = h->lv;
    const int nl = (int)lv.size();
    fresh.assign(nl, 0);
    // The tail of levels that tiny_cycle_kernel runs (never level 0: the
    // user's arrays, strides and mean shift stay with the general kernels).
    tiny_first = nl;
    // (dist.h: nor a slab level: they exchange halos between passes)
    while (tiny_first > std::max(1, h->dist_levels) && lv[tiny_first - 1].npts <= TINY_THREADS &&
           nl - (tiny_first - 1) <= TINY_LEVELS)
        --tiny_first;
    if (tiny_first < nl) {
        // The dense level: the finest tiny one (not the single node) of at
        // most DENSE_MAX points whose inverse takes at most a quarter word
        // per point of level 0.
        for (int l = tiny_first; l + 1 < nl && dense_level < 0; ++l) {
            const double n = lv[l].npts;
            if (n > DENSE_MAX || n * n > lv[0].npts / 4) continue;
            std::vector<double> mt;
            if (!dense_inverse(h->hl[l].ax, h->singular, mt)) break;
            T *dd = nullptr;
            PGPU_FORWARD(e.upload(std::vector<T>(mt.begin(), mt.end()), &dd, "the dense coarse inverse"));
            d_dense = dd;
            dense_level = l;
        }
        PGPU_FORWARD(e.upload(tiny_table(), &d_tiny, "the tiny levels' table"));
    }
    // Both forms' schedules in one array.
    std::vector<Step> all;
    for (int form = 0; form < 2; ++form) {
        gen = form == 1;
        const int last = last_level();
        sched_form[form].assign(last + 1, std::vector<Step>{});
        dsched_form[form].assign(last + 1, -1);
        for (int s = 0; s <= last; ++s) {
            build_schedule(s, last, wcycle, sched_form[form][s]);
            if (s >= tiny_first) {
                dsched_form[form][s] = (int)all.size();
                all.insert(all.end(), sched_form[form][s].begin(), sched_form[form][s].end());
            }
        }
    }
    gen = false;
    sched = sched_form[0];
    dsched = dsched_form[0];
    PGPU_FORWARD(e.upload(all, &d_steps, "the cycle schedule"));
    return PGPU_SUCCESS;
}

template <class T> std::vector<TinyLevel<T>> Multigrid<T>::tiny_table() const
{
    std::vector<TinyLevel<T>> tl;
    const std::vector<Level<T>> &lv = h->lv;
    for (int l = tiny_first; l < (int)lv.size(); ++l)
        tl.push_back(TinyLevel<T>{lv[l].g, lv[l].down.rc, lv[l].down.p2, lv[l].u, lv[l].t, lv[l].f, lv[l].elems,
                                  l == dense_level && !gen ? d_dense : nullptr});
    return tl;
}

template <class T> pgpu_status Multigrid<T>::refresh(bool general)
{
    gen = general;
    odi = false;
    for (const Level<T> &L : h->lv) odi = odi || L.route.up == UpRoute::ODI;
    sched = sched_form[gen ? 1 : 0];
    dsched = dsched_form[gen ? 1 : 0];
    return d_tiny ? env->put(tiny_table(), d_tiny) : PGPU_SUCCESS;
}

// A cycle from tiny level s in one block.
template <class T> pgpu_status Multigrid<T>::tiny(int s)
{
    char *err = env->err;
    PGPU_RETURN_IF(h->lv[s].cur != 0, PGPU_ERROR_CUDA, "internal: a tiny level's iterate is not in its u");
    tiny_cycle_kernel<T><<<1, TINY_THREADS, 0, env->st>>>(d_tiny, tiny_first, d_steps + dsched[s],
                                                          (int)sched[s].size(), omega, pre, post, post_flip);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// Level l's residual restricted into level l+1's right-hand side; zero:
// the correction on l+1 starts from zero.
template <class T> pgpu_status Multigrid<T>::down(int l, bool zero)
{
    Env &e = *env;
    char *err = e.err;
    Level<T> &L = h->lv[l], &C = h->lv[l + 1];
    if (l == 0 && resid0) { // (the pre-smoothing formed it: route.pre_resid)
        const T *r = resid0;
        resid0 = nullptr;
        PGPU_FORWARD(L.down.restrict_(e, r, nullptr, C.f));
    } else {
        switch (L.route.down) {
        case DownRoute::SLAB: // (dist.h) its halos, then the global level's rows
            if (!fresh[l]) PGPU_FORWARD(dist_halo(e, L.g, L.iter()));
            PGPU_FORWARD(residual(e, L, L.iter(), L.other()));
            PGPU_FORWARD(dist_halo(e, L.g, L.other()));
            PGPU_FORWARD(L.down.restrict_(e, L.other(), nullptr, C.f));
            if (!C.route.slab) PGPU_FORWARD(dist_gather(e, C.g, C.f));
            break;
        case DownRoute::ODI:
            PGPU_FORWARD(residual(e, L, L.iter(), L.other()));
            PGPU_FORWARD(L.down.odi_restrict(e, L.other(), C.f));
            break;
        case DownRoute::FUSED: PGPU_FORWARD(L.down.restrict_residual(e, L.iter(), L.f, L.shift, C.f)); break;
        case DownRoute::BETA_RR: PGPU_FORWARD(L.down.restrict_beta_residual(e, L.iter(), L.f, L.shift, C.f)); break;
        case DownRoute::SPLIT:
            PGPU_FORWARD(residual(e, L, L.iter(), L.other()));
            PGPU_FORWARD(L.down.restrict_(e, L.other(), nullptr, C.f));
            break;
        }
    }
    if (zero) {
        PGPU_CUDA(cudaMemsetAsync(C.u, 0, (size_t)C.elems * sizeof(T), e.st));
        C.cur = 0;
    }
    return PGPU_SUCCESS;
}

// One step of a schedule on a level the host launches for.
template <class T> pgpu_status Multigrid<T>::run(int l, int op)
{
    Env &e = *env;
    Level<T> &L = h->lv[l];
    const bool slab = L.route.slab; // (dist.h)
    bool fr = false;
    if (l == 0 && op != STEP_DOWN) resid0 = nullptr; // (only the step after the pre-smoothing takes it)
    switch (op) {
    case STEP_PRE:
        // (the post-smoothing's first pass reads x and writes u: an odd
        // count ends there)
        if (l == 0 && L.route.pre_resid && pre > 0 && post % 2 == 1) {
            PGPU_FORWARD(smooth(e, L, false, pre, omega, 0, (const T *)nullptr, true));
            resid0 = L.cur ? L.u : L.t;
            return PGPU_SUCCESS;
        }
        if (!slab) return smooth(e, L, false, pre, omega);
        PGPU_FORWARD(dist_smooth(e, L, l, false, pre, omega, 0, &fr));
        fresh[l] = fr;
        return PGPU_SUCCESS;
    case STEP_DOWN: return down(l, true);
    case STEP_SOLVE: // one node (the tiny levels hold every other last level): weight 1 solves it
        if (L.route.smooth == SmoothRoute::GALERKIN) return smooth(e, L, false, 1, omega); // (in place)
        PGPU_FORWARD(jacobi_pass(e, L.g, L.sm, L.iter(), L.other(), L.f, L.shift, T(1)));
        if (l == 0) // a one-node grid's cycle ends where it started (graphs replay no host state)
            return axpby(e, L.g, L.col, T(0), T(1), (const T *)L.other(), T(0), (const T *)nullptr, L.iter());
        L.cur ^= 1;
        return PGPU_SUCCESS;
    case STEP_UP: {
        // Out of place where that makes the cycle's passes over L even (it
        // then ends in the array it started in: u on level 0), else in place;
        // or left to the post-smoothing (flip0: the cycle may end in level
        // 0's other array; in x: it ends in u).  In x, in place: the
        // post-smoothing's first pass goes to u.
        Level<T> &C = h->lv[l + 1];
        const bool in_place = L.in_x || (smooth_passes(L, false, pre) + smooth_passes(L, false, post)) % 2 == 0;
        const bool sum = measure && l == 0 && red;
        const bool drop = l == 0 && red && h->singular && !e.dist && (sum || centre);
        if (l == 0 && L.route.fold && (flip0 || L.in_x) && !sum && !drop && post > 0) {
            folded = C.iter(); // (the post-smoothing's first pass adds it)
            return PGPU_SUCCESS;
        }
        size_t blocks = 0;
        if (C.route.slab && !fresh[l + 1]) PGPU_FORWARD(dist_halo(e, C.g, C.iter())); // (dist.h)
        if (slab) fresh[l] = 0;
        if (drop) {
            // A singular problem's correction may carry a constant (the
            // right-hand side's mean, rounded, is not quite removed, and the
            // coarse levels' smoothing drifts along the null space) that no
            // cycle removes and that changes u only by a constant: the
            // measured correction leaves it out (P keeps constants: no
            // Dirichlet wall, no ghost taps).
            PGPU_FORWARD(subtract_mean(e, *red, C.g, C.col, C.iter(), C.npts));
        }
        T *out = in_place ? L.iter() : L.other();
        if (L.route.up == UpRoute::ODI)
            PGPU_FORWARD(L.down.odi_prolong(e, C.iter(), L.iter(), out, sum ? red->d_part : nullptr, &blocks));
        else
            PGPU_FORWARD(L.down.prolong(e, C.iter(), L.iter(), out,
                                        L.route.up == UpRoute::TILED ? Transfer<T>::TILED : Transfer<T>::DIRECT,
                                        sum ? red->d_part : nullptr, &blocks));
        if (sum) PGPU_FORWARD(red->total<T>(e, blocks, RES_CORR));
        if (!in_place) L.cur ^= 1;
        return PGPU_SUCCESS;
    }
    default:
        if (!slab) {
            const T *fold = l == 0 ? folded : nullptr;
            if (l == 0) folded = nullptr;
            PGPU_FORWARD(smooth(e, L, false, post, omega, post_flip, fold));
            return l == 0 ? near_relax(L) : PGPU_SUCCESS;
        }
        PGPU_FORWARD(dist_smooth(e, L, l, false, post, omega, post_flip, &fr));
        fresh[l] = fr;
        return PGPU_SUCCESS;
    }
}

// After level 0's post-smoothing on a mask: NEAR_SWEEPS Gauss-Seidel
// iterations on the near tiles (gen_near_kernel), where the coarse levels'
// correction leaves most of the residual (the solid sphere at 512^3, double,
// from u = 0: 70-75% of the residual's square within two points of the
// wall after each of cycles 3-7).  Not in a symmetric cycle, whose
// post-smoothing mirrors its pre-smoothing.
constexpr int NEAR_SWEEPS = 2;
template <class T> pgpu_status Multigrid<T>::near_relax(Level<T> &L)
{
    const General<T> &G = h->gen;
    if (!G.mask || !G.near || post_flip) return PGPU_SUCCESS;
    Env &e = *env;
    char *err = e.err;
    const unsigned blocks = std::min(G.near, 8u * (unsigned)e.sms);
    for (int it = 0; it < NEAR_SWEEPS; ++it)
        for (int c = 0; c < 2; ++c) {
            gen_near_kernel<T><<<blocks, NEAR_THREADS, 0, e.st>>>(L.g, L.iter(), L.f, L.shift, c, G.near_list,
                                                                  G.near_count);
            PGPU_LAUNCHED();
        }
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Multigrid<T>::cycle(int l, int gamma_top)
{
    std::vector<Level<T>> &lv = h->lv;
    if (l >= tiny_from()) return tiny(l);
    if (gamma_top == 0) {
        const std::vector<Step> &s = sched[l];
        for (size_t q = 0; q < s.size();) {
            if (s[q].level >= tiny_from()) { // a cycle of the tiny levels
                PGPU_FORWARD(tiny(s[q].level));
                q += sched[s[q].level].size();
            } else {
                PGPU_FORWARD(run(s[q].level, s[q].op));
                ++q;
            }
        }
        return PGPU_SUCCESS;
    }
    Env &e = *env;
    char *err = e.err;
    Level<T> &C = lv[l + 1];
    PGPU_FORWARD(run(l, STEP_PRE));
    if (l + 2 <= last_level() && global_points(l + 1) >= FMG_START_MIN) {
        // The correction on l+1 starts from the interpolated solution of its
        // own restriction on l+2 (one cycle there), then one cycle on l+1.
        // C's ghosts are zero (a correction level), its interior is all
        // written by the interpolation.
        PGPU_FORWARD(down(l, false));
        Level<T> &D = lv[l + 2];
        if (C.route.slab) PGPU_FORWARD(dist_halo(e, C.g, C.f)); // (dist.h) C's f with its neighbours' planes
        PGPU_FORWARD(C.down.restrict_(e, C.f, nullptr, D.f));
        if (C.route.slab && !D.route.slab) PGPU_FORWARD(dist_gather(e, D.g, D.f));
        PGPU_CUDA(cudaMemsetAsync(D.u, 0, (size_t)D.elems * sizeof(T), e.st));
        D.cur = 0;
        PGPU_FORWARD(cycle(l + 2));
        C.cur = 0;
        if (D.route.slab) PGPU_FORWARD(dist_halo(e, D.g, D.iter()));
        PGPU_FORWARD(C.down.interpolate(e, D.iter(), C.u));
        PGPU_FORWARD(cycle(l + 1));
    } else {
        PGPU_FORWARD(down(l, true));
        for (int k = 0; k < gamma_top; ++k) PGPU_FORWARD(cycle(l + 1));
    }
    PGPU_FORWARD(run(l, STEP_UP));
    return run(l, STEP_POST);
}

// Full multigrid, one pass: restrict f and the boundary data (FMG's rows,
// see moment_free) down to last_level, solve it exactly, then on each finer
// level interpolate the coarser solution (tricubic) and improve it by one
// cycle.  The finest level's cycle solves its coarse-grid correction more
// accurately than one cycle does (gamma_top 2, see cycle): with one, the
// algebraic error left on the 3D test grids reached half the discretisation
// error and moved the observed order to 2.25-2.48.
template <class T> pgpu_status Multigrid<T>::fmg_coarse()
{
    Env &e = *env;
    std::vector<Level<T>> &lv = h->lv;
    const int nl = (int)lv.size();
    const int top = last_level(); // FMG's coarsest level, solved exactly
    const int all_faces = lv[0].g.is3d ? 63 : 15;
    if (nl == 1) return PGPU_SUCCESS;
    // Right-hand sides and boundary data of the coarse problems.  The general
    // form restricts b (f and every boundary term, Dirichlet points' values
    // included) instead, with zero data on the coarse levels: u's fluid values
    // solve A u = b with zero data, which is what the coarse levels
    // approximate.  With held points (held_fmg) it restricts f and the box's
    // boundary terms, then adds each coarse level's own held terms
    // (held_terms_kernel).
    char *err = e.err;
    PGPU_RETURN_IF(h->lv[top].route.slab, PGPU_ERROR_CUDA, "internal: FMG's coarsest level is a slab");
    for (int l = 1; l <= top; ++l) PGPU_FORWARD(fmg_restrict(l - 1));
    if (held_fmg())
        for (int l = 1; l <= top; ++l) {
            const GenCoarse<T> a = held_pair(l - 1);
            const T *src = l == 1 ? lv[0].u : lv[l - 1].t;
            const unsigned blocks = grid_for((int64_t)lv[l].npts, e.sms);
            held_values_kernel<T><<<blocks, 256, 0, e.st>>>(a, src, lv[l].t);
            PGPU_LAUNCHED();
            held_terms_kernel<T><<<blocks, 256, 0, e.st>>>(a, src, lv[l].t, lv[l].f);
            PGPU_LAUNCHED();
        }
    // The coarsest interior starts from zero; its ghosts hold the data.
    Level<T> &B = lv[top];
    B.cur = 0;
    PGPU_FORWARD(axpby(e, B.g, B.col, T(0), T(0), (const T *)nullptr, T(0), (const T *)nullptr, B.u));
    if (held_fmg()) PGPU_CUDA(cudaMemsetAsync(B.t, 0, (size_t)B.elems * sizeof(T), e.st)); // (its values: unused)
    PGPU_FORWARD(cycle(top));
    for (int l = top - 1; l >= 1; --l) {
        Level<T> &C = lv[l + 1];
        PGPU_FORWARD(fmg_interpolate(l));
        // Level l+1 becomes a correction level: zero ghosts from here on.
        // (Its interiors are written before they are read: the cycle zeroes
        // u or interpolates into it; t takes residuals and prolongations.)
        if (h->data_faces) PGPU_FORWARD(frame(e, C.g, (const T *)nullptr, C.u, C.t, all_faces));
        PGPU_FORWARD(cycle(l));
    }
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Multigrid<T>::fmg_finish()
{
    Env &e = *env;
    std::vector<Level<T>> &lv = h->lv;
    if (lv.size() == 1) { // one node: its cycle solves it, from zero (FMG reads no initial guess)
        Level<T> &L = lv[0];
        PGPU_FORWARD(axpby(e, L.g, L.col, T(0), T(0), (const T *)nullptr, T(0), (const T *)nullptr, L.iter()));
        return cycle(0);
    }
    Level<T> &L = lv[0], &C = lv[1];
    PGPU_FORWARD(fmg_interpolate(0));
    if (h->data_faces) PGPU_FORWARD(frame(e, C.g, (const T *)nullptr, C.u, C.t, L.g.is3d ? 63 : 15));
    return cycle(0, 2);
}

// On slab levels (dist.h): f with the neighbours' planes (level 0's f is
// the caller's: a copy in t, whose ghosts hold the boundary data), and the
// data restricted across the global faces only; the coarse boundary data's
// ghost lines in the planes between ranks exchanged (the neighbours' face
// ghosts there: a restriction row or a cubic tap one node across reads
// them), or, on the first replicated level, every rank's planes broadcast.
// The general form restricts b instead (see fmg_coarse).
template <class T> pgpu_status Multigrid<T>::fmg_restrict(int l)
{
    Env &e = *env;
    Level<T> &F = h->lv[l], &C = h->lv[l + 1];
    const bool data = h->data_faces && !gen;
    if (gen && l == 0) {
        PGPU_FORWARD(h->general_rhs(e, F.other(), !held_fmg()));
        return F.down.restrict_(e, F.other(), nullptr, C.f, true);
    }
    if (!F.route.slab) {
        PGPU_FORWARD(F.down.restrict_(e, F.f, gen ? nullptr : F.shift, C.f, true));
        return data ? F.down.restrict_ghosts(e, F.u, C.u, C.t) : PGPU_SUCCESS;
    }
    T *f = F.f, *ub = F.u;
    if (l == 0) {
        PGPU_FORWARD(axpby(e, F.g, F.col, T(0), T(1), (const T *)F.f, T(0), (const T *)nullptr, F.t));
        f = ub = F.t;
    }
    PGPU_FORWARD(dist_halo(e, F.g, f, l == 0 && data));
    PGPU_FORWARD(F.down.restrict_(e, f, F.shift, C.f, true));
    const bool last = !C.route.slab;
    if (last) PGPU_FORWARD(dist_gather(e, C.g, C.f));
    if (!data) return PGPU_SUCCESS;
    PGPU_FORWARD(F.down.restrict_ghosts(e, ub, C.u, C.t, 63 & ~dist_faces(*e.dist)));
    if (!last) return dist_halo(e, C.g, C.u, true);
    PGPU_FORWARD(dist_gather(e, C.g, C.u, true));
    return dist_gather(e, C.g, C.t, true);
}

// Edge and corner ghosts first (where C has two Dirichlet faces); a slab
// C's planes between ranks, ghost lines included, from the neighbours
// (which made their own edges), not extrapolated.
template <class T> pgpu_status Multigrid<T>::fmg_interpolate(int l)
{
    Env &e = *env;
    Level<T> &L = h->lv[l], &C = h->lv[l + 1];
    const bool slab = C.route.slab;
    Grid<T> g = C.g;
    if (slab) g.dirichlet &= ~dist_faces(*e.dist);
    L.cur = 0;
    if (g.dirichlet) PGPU_FORWARD(edge_ghosts(e, g, C.iter()));
    if (slab) PGPU_FORWARD(dist_halo(e, C.g, C.iter(), true));
    // With held points: the caller's values at C's Dirichlet points, from
    // level l's (its t, or the caller's u), for the interpolation to read;
    // then 0 in C's iterate and in l's t (C becomes a correction level, and
    // l's cycle comes next: zero data).
    const bool held = held_fmg();
    char *err = e.err;
    if (held) {
        held_values_kernel<T><<<grid_for((int64_t)C.npts, e.sms), 256, 0, e.st>>>(held_pair(l), l ? L.t : L.u,
                                                                                   C.iter());
        PGPU_LAUNCHED();
    }
    if (centre && red) PGPU_FORWARD(subtract_mean(e, *red, C.g, C.col, C.iter(), C.npts));
    PGPU_FORWARD(L.down.interpolate(e, C.iter(), L.u));
    if (held) {
        PGPU_CUDA(cudaMemsetAsync(C.iter(), 0, (size_t)C.elems * sizeof(T), e.st));
        if (l) PGPU_CUDA(cudaMemsetAsync(L.t, 0, (size_t)L.elems * sizeof(T), e.st));
    }
    return PGPU_SUCCESS;
}

template <class T> GenCoarse<T> Multigrid<T>::held_pair(int l) const
{
    GenCoarse<T> a{};
    a.f = h->lv[l].g;
    a.c = h->lv[l + 1].g;
    a.scale = h->gen.beta;
    for (int d = 0; d < 3; ++d) {
        a.ax[d] = h->gen.coarse[(size_t)l].ax[d];
        a.wk[d] = h->gen.coarse[(size_t)l].wk[d];
    }
    return a;
}

template <class T> double Multigrid<T>::global_points(int l) const
{
    const Level<T> &L = h->lv[l];
    if (!L.route.slab) return L.npts;
    const double N = (double)env->dist->lvN[l];
    return env->dist->axis == 2 ? (double)L.g.nx * L.g.ny * N : (double)L.g.nx * N;
}

// The V/W-cycle and FMG methods on the problem bound to level 0: FMG (one
// pass, then cycles while a tolerance asks for them), or cycles from the
// iterate; checks every `interval` cycles (cv), none with `fixed` (FMG then
// max_iterations - 1 cycles).  The result ends in level 0's u.
// Float V-cycles with the default tolerance (0) stop on the size of the
// coarse-grid correction instead of the residual: once u is close, its
// rounding alone leaves a relative residual of about eps lambda_max /
// lambda_min / 10 (1e-3 at 511^3 with zero boundary data), which hides a
// smooth error far larger than float's rounding; the correction measures
// that error.  Converged when its RMS falls to FLOAT_CORRECTION of u's
// (against an exact discrete solution at 511^3: 5 cycles, max error 6e-7)
// -- a cycle whose correction falls slowly, by f a check, leaves about
// f / (1 - f) times it still to add, and that is what must fall so far --
// or when it is below FLOAT_STALL times that and no longer falls below
// FLOAT_STALL_FALL of the last check's: the smoother's own rounding of u
// keeps it there (255x256x255 with D/N, P/P and N/D faces: 1.09e-6 from
// the 8th cycle on, max error 8.8e-7).
constexpr int FMG_MASK_CYCLES = 2; // V-cycles after the default FMG pass on a mask (solve_fmg_pass)
// ... which leave at most this much of the pass's residual (a rate of about
// 0.3 a cycle; slower, the pass is short of the discretisation error too:
// on masks of solid cells drawn point by point, walls one cell thick and
// small pockets, the pass and two cycles left 0.3 to 20 times ||u|| from
// the exact discrete solution at relative residuals of 1e-3 to 3e-2), else
// more V-cycles follow (solve_fmg_pass)
constexpr double FMG_MASK_FALL = 0.1;
// ... and a relative residual of at most this: where the mask leaves modes
// of small eigenvalue (pockets joined by a channel a cell wide, held points
// far from the rest) the residual hides the error, and two cycles that took
// nine tenths off it still left 0.3 to 8 times ||u|| from the exact discrete
// solution at relative residuals of 2e-4 to 5e-2; at or below 1e-6 the
// fuzzer's masks were within 2.4e-4 of ||u|| (solve_fmg_pass)
constexpr double FMG_MASK_RES = 1e-6;
constexpr double FMG_JUMP_TOL = 1e-8; // FMG's residual tolerance where beta jumps and none is given (run_method)
constexpr double FLOAT_CORRECTION = 0x1p-20;
constexpr double FLOAT_STALL = 8.0;
constexpr double FLOAT_STALL_FALL = 0.8;
constexpr int FLOAT_FLOOR_CHECKS = 2; // (run_multigrid: float on a mask's singular regions)
// Double V-cycles whose residual takes less than a tenth off in
// DOUBLE_FLOOR_CYCLES cycles within DOUBLE_FLOOR_SLACK times the floor of
// the u at hand (rounding_floor) have met double's rounding of u: more
// cycles move neither the residual nor u (a ball of beta 1e6 at 256^3: a
// relative residual of 7.1e-7 and u 5.6e-9 of max |u| from the exact
// discrete solution after 20 cycles, 7.2e-7 and 5.2e-9 after 100).
constexpr int DOUBLE_FLOOR_CYCLES = 5;
constexpr double DOUBLE_FLOOR_FALL = 0.9, DOUBLE_FLOOR_SLACK = 4.0;
// Float Krylov methods' own stop: a true residual up to this many times the
// accepted floor is float's limit, above it not converged.
constexpr double FLOAT_OWN_SLACK = 16.0;
// Float V-cycles' stop on the correction on the box (no mask, no beta):
// the true residual confirms it up to this many times the (*) tolerance.
constexpr double FLOAT_BOX_SLACK = 4.0;
// The relative residual float's own stop accepts: the floor of the
// config, at least what the correction's stall leaves.  Krylov methods
// stop there (up to FLOAT_OWN_SLACK times it); V-cycles that stopped on the
// correction check their residual against FLOAT_OWN_SLACK times it.
inline double float_accept(const Convergence &cv) { return std::max(FLOAT_STALL * FLOAT_CORRECTION, cv.floor); }

// The launch sequences the handle's graph replay (graph.h) captures.
enum ReplayKind {
    REPLAY_SOLVE = 0,
    REPLAY_FMG = 1,
    REPLAY_CYCLE = 2,
    REPLAY_CYCLE_MEASURED = 3,
    REPLAY_FMG_COARSE = 4,
    REPLAY_FMG_FINISH = 5,
    REPLAY_KRYLOV_START = 6,
    REPLAY_KRYLOV_ITER = 7,
    REPLAY_KRYLOV_ITER_ODD = 8, // (unpreconditioned pipelined CG alternates two buffers of w)
    REPLAY_KRYLOV_STEP = 9,     // classic CG's first iteration after a start: the step alone
    REPLAY_FROM_T = 16,         // (added to a cycle's kind) level 0's iterate in its t at the start
    REPLAY_KEEP_U = 32          // (added to a cycle's kind) a cycle that must not leave the array it starts in
};

// (rp: the handle's graph replay; the FMG pass and every cycle run as graphs.)
template <class T, class Rp>
static pgpu_status run_multigrid(Env &e, Reducer &red, Hierarchy<T> &h, Multigrid<T> &mg, Convergence cv, bool fmg,
                                 bool fixed, int interval, pgpu_report &r, Rp *rp)
{
    char *err = e.err;
    Level<T> &L = h.lv[0];
    const void *uk = L.u, *fk = L.f;
    auto pass = [&]() -> pgpu_status {
        int none = 0;
        return rp->run(e, uk, fk, REPLAY_FMG, none, [&] { return mg.fmg_pass(); });
    };
    // A cycle may end in level 0's other array (Multigrid::flip0): its graph
    // is that of the array it starts in, and its replay sets where it ends
    // (settle, below, brings the iterate back to u).  The last of a fixed
    // count does not leave u (a fold saves less than settle's copy costs).
    auto cycle = [&](bool measured, bool last = false) -> pgpu_status {
        int ends = L.cur;
        mg.measure = measured;
        mg.flip0 = !last || L.cur != 0;
        const int kind = (measured ? REPLAY_CYCLE_MEASURED : REPLAY_CYCLE) + (L.cur ? REPLAY_FROM_T : 0) +
                         (mg.flip0 ? 0 : REPLAY_KEEP_U);
        const pgpu_status s = rp->run(e, uk, fk, kind, ends, [&] {
            const pgpu_status q = mg.cycle(0);
            ends = L.cur;
            return q;
        });
        mg.measure = false;
        mg.flip0 = false;
        L.cur = ends;
        return s;
    };
    PGPU_FORWARD(frame(e, L.g, (const T *)L.u, L.t, L.x, h.data_faces)); // boundary data in every iterate
    const int maxit = cv.max_it;
    int it = 0;
    pgpu_status result = PGPU_SUCCESS;
    bool iterate = true;
    if (fmg) {
        PGPU_FORWARD(pass());
        iterate = cv.rule != Stop::ONCE && !fixed;
        if (fixed) {
            for (int k = 1; k < maxit; ++k) PGPU_FORWARD(cycle(false, k == maxit - 1));
            it = maxit - 1;
        }
    } else if (fixed) {
        for (int k = 0; k < maxit; ++k) PGPU_FORWARD(cycle(false, k == maxit - 1));
        it = maxit;
        iterate = false;
    }
    // A mask's singular regions: the correction carries a constant per
    // region that no cycle removes (each region's coarse problems are
    // singular, their right-hand sides not quite in range) and that changes
    // u only by constants, so its size says nothing there (a float W-cycle
    // on a closed tank kept a correction of 2.5e-4 of u for 200 cycles at a
    // relative residual of 5e-8).  The residual decides instead (`fall`):
    // the cycles go on while it falls, and end where it falls less than
    // 5% per cycle within `bound` (a closed tank at 512^3 crept along
    // float's rounding from 1.13e-3 to 1.06e-3 over five more cycles when
    // only a rise ended it; the documented slow cases, a Dirichlet cell
    // apart in the fluid or a beta inclusion, crawl at 0.95-0.99 and stop
    // there too), or less than twofold below 2^-20 at FLOAT_FLOOR_CHECKS
    // checks in a row (ending below float_accept instead stopped a slow
    // mask at 1.7e-5 with an error of 5e-3; at the first such check, u's
    // rounding, which the residual then shows, still hid a smooth error
    // that the next cycles remove).
    const bool own = iterate && !fmg && cv.own();
    const bool fall = own && h.lv.size() > 1 && h.gen.mask && h.gen.regions > 0;
    const bool by_correction = own && h.lv.size() > 1 && !fall;
    if (fall) cv.tol = 0; // (judge meets no tolerance there: the fall decides, below)
    // A single level (one node) is solved exactly by its cycle: float's own
    // stop has nothing to measure and nothing left after one cycle.
    const bool one_node = own && h.lv.size() == 1;
    if (one_node) {
        PGPU_FORWARD(cycle(false));
        it = 1;
        iterate = false;
    }
    // reported: the report's norms hold the end's residual; verify: the
    // residual confirms a stop on the correction (below)
    bool residual_stop = false, reported = false, verify = false;
    const double bound0 = FLOAT_OWN_SLACK * float_accept(cv);
    double bound = bound0;
    // With a mask or beta the grid's floor may lie far above what float
    // reaches (a pocket held by one Dirichlet cell: float V-cycles crawling
    // at 0.95 a cycle, where double's stall, stopped at a relative residual
    // of 2.8e-4 with 1e-2 to 0.85 of ||u*|| left; float CG reached 2e-6
    // there): the floor of the u at hand, measured again wherever a stop is
    // decided, bounds it (measured once, where a stop first came in sight,
    // an iterate still 5 times the size of the u returned let a float FMG on
    // a mask of random solid cells end at 1.0e-5 with 0.9 of max |u| left).
    // A singular problem's iterate (beta, no mask) may carry a
    // constant several times its size (a periodic 2D grid around a 1e3 ball:
    // u's floor with it 4 times that of the u returned, which let a stop at
    // 1.0e-5 pass against 2.6e-6 after the mean is out): the mean goes out
    // of u first, as the solve's end takes it out anyway.
    const bool own_floor = std::is_same<T, float>::value && h.gen.on() && cv.lmax > 0;
    // The floor of the u at hand for rounding eps (rounding_floor; 0 where
    // u or b is 0 or u not finite).
    auto u_floor = [&](double eps, double &fu) -> pgpu_status {
        PGPU_FORWARD(red.dot(e, L.g, L.col, (const T *)L.iter(), (const T *)nullptr, RES_CORR));
        PGPU_FORWARD(red.fetch(e, RES_CORR, 3));
        const double un = std::sqrt(red.h_res[RES_CORR + 1]);
        fu = un > 0 && cv.rhs_norm > 0 ? rounding_floor(eps, cv.lmax, cv.rhs_norm / un) : 0.0;
        return PGPU_SUCCESS;
    };
    auto tighten = [&]() -> pgpu_status {
        if (!own_floor) return PGPU_SUCCESS;
        if (h.singular) PGPU_FORWARD(subtract_mean(e, red, L.g, L.col, L.iter(), L.npts));
        double fu = 0;
        PGPU_FORWARD(u_floor(FLOAT_EPS, fu));
        bound = fu > 0 ? std::min(bound0, FLOAT_OWN_SLACK * fu) : bound0; // (not where u is 0 or not finite)
        return PGPU_SUCCESS;
    };
    double last_rn = HUGE_VAL; // verify, fall: the residual at the previous check, after last_it cycles
    int last_it = 0;
    if (by_correction) {
        double last = HUGE_VAL;
        for (;;) {
            const int n = std::min(interval, maxit - it);
            for (int k = 0; k < n; ++k) PGPU_FORWARD(cycle(k == n - 1));
            it += n;
            PGPU_FORWARD(red.fetch(e, RES_CORR, 3));
            if (red.h_res[RES_CORR] == 0 && red.h_res[RES_CORR + 1] > 0) {
                // The coarse levels carried no correction at all (one node
                // of a singular problem, whose constant is left out; a mask
                // with no fluid coarse point): the cycle is smoothing alone
                // and its correction says nothing; the residual decides, at
                // float's floor as for Jacobi and RBGS (the monitor hears
                // of this check from judge, once); on the box a residual
                // that stops falling within FLOAT_BOX_SLACK times it is
                // float's limit there (a 1 x 2 Neumann grid stalled at 1.1
                // times it).
                residual_stop = true;
                if (!h.gen.on()) {
                    verify = true;
                    bound = FLOAT_BOX_SLACK * float_own_tolerance(cv.floor);
                }
                break;
            }
            const double ratio = std::sqrt(red.h_res[RES_CORR] / red.h_res[RES_CORR + 1]);
            cv.tell(it, NAN, ratio);
            if (!std::isfinite(red.h_res[RES_CORR]) || !std::isfinite(red.h_res[RES_CORR + 1])) {
                result = record(err, PGPU_ERROR_BREAKDOWN, "multigrid: the correction became %g after %d cycles",
                                red.h_res[RES_CORR], it);
                break;
            }
            // What the cycles have left to add: this correction times
            // q / (1 - q), q its fall since the last check (a slow cycle
            // leaves several times its correction).
            const double q = ratio / last, left = q < 1 ? ratio * std::max(1.0, q / (1 - q)) : ratio;
            if (left <= FLOAT_CORRECTION || red.h_res[RES_CORR + 1] == 0 ||
                (ratio <= FLOAT_STALL * FLOAT_CORRECTION && ratio > FLOAT_STALL_FALL * last))
                break;
            last = ratio;
            if (it >= maxit) {
                result = record(err, PGPU_ERROR_NOT_CONVERGED,
                                "multigrid: the last correction is %.2e of u (RMS) after %d cycles, float's rounding "
                                "is %.2e",
                                ratio, it, FLOAT_CORRECTION);
                break;
            }
        }
        // With a mask or beta the correction may stay small while the
        // error does not (a mode the coarse levels barely correct, such as
        // a pocket held by one Dirichlet cell: a float V-cycle stopped at a
        // relative residual of 2.4e-3).  The true residual, which the
        // report takes anyway, decides there: above `bound`, FLOAT_OWN_SLACK
        // times float's floor (the Krylov methods' own stop), the cycles go
        // on as for the stop on the residual, until the residual no longer
        // falls (float's rounding); where it then ends above the bound, the
        // solve has not converged.  On the box the correction may mislead
        // too, where the coarse levels see little of the error (a 3 x 3 x 3
        // grid with an odd periodic axis, whose coarse ring is not nested,
        // stopped after 5 cycles at 7.7e-5, 6.5e-5 of ||u*|| off; 6 more
        // cycles took it to 7.6e-6): its bound is FLOAT_BOX_SLACK times the
        // (*) tolerance, which the box's cycles meet by far (float's
        // rounding of a smooth u gives about the (*) floor).
        if (result == PGPU_SUCCESS && !residual_stop) {
            double rn = 0, rmax = 0;
            PGPU_FORWARD(h.norm(e, red, rn, rmax));
            cv.measured(rn, rmax, r);
            if (h.gen.on())
                PGPU_FORWARD(tighten());
            else
                bound = FLOAT_BOX_SLACK * float_own_tolerance(cv.floor);
            if (!std::isfinite(rn))
                result = record(err, PGPU_ERROR_BREAKDOWN, "multigrid: the residual became %g after %d cycles", rn, it);
            else if (!(r.relative_residual <= bound))
                residual_stop = verify = true;
            else
                reported = true;
        }
        if (verify) cv.tol = std::min(cv.tol, bound); // (residual_stop: cv.tol, the (*) tolerance)
        iterate = residual_stop;
    }
    // Float on a mask's singular regions: u drifts along each region's
    // constant by what the cycles add there (a W-cycle on a closed tank
    // stalled at a relative residual of 1.7e-2 against 1.1e-4, its u's
    // rounding grown with the drift), so each check takes the regions'
    // means out first (three passes over the labels and u, 4 ms at 512^3
    // against a cycle of 14-22 ms there; double keeps 10^4-fold drifts
    // harmless and the cost).
    const bool drift = std::is_same<T, float>::value && h.gen.mask && h.gen.regions > 0;
    // In double the regions' means go out where a stop comes (the solve's
    // end takes them out, and with beta's 1e6 jumps that alone raised a
    // relative residual of 6.8e-9 to 1.8e-8 against a tolerance of 1e-8):
    // the stop is judged on u as returned; the cycles go on where that is
    // above the tolerance, once (a second time it is this problem's rounding:
    // NOT_CONVERGED).
    const bool end_projection = !drift && h.gen.mask && h.gen.regions > 0 && cv.rule == Stop::TOLERANCE;
    int projected_misses = 0;
    int floor_checks = 0; // fall: checks in a row at float's floor
    // (double: the residual at the last tenth it fell by, and the cycles since)
    const bool floor_watch = std::is_same<T, double>::value && iterate && cv.rule == Stop::TOLERANCE && cv.lmax > 0 &&
                             !e.dist;
    double floor_mark = HUGE_VAL;
    int floor_since = 0;
    bool at_floor = false;
    for (bool stop = !iterate; !stop;) {
        double rn = 0, rmax = 0;
        if (drift) PGPU_FORWARD(h.project(e, (const T *)L.iter(), (const T *)L.iter(), 0, L.iter()));
        PGPU_FORWARD(h.norm(e, red, rn, rmax));
        cv.judge(err, rn, rmax, it, "multigrid", "cycles", r, stop, result);
        if (stop && result == PGPU_SUCCESS && end_projection) {
            const double before = r.relative_residual;
            PGPU_FORWARD(h.project(e, (const T *)L.iter(), (const T *)L.iter(), 0, L.iter()));
            PGPU_FORWARD(h.norm(e, red, rn, rmax));
            cv.measured(rn, rmax, r);
            if (!(r.relative_residual <= cv.tol)) {
                if (++projected_misses < 2 && it < maxit)
                    stop = false;
                else
                    result = record(err, PGPU_ERROR_NOT_CONVERGED,
                                    "multigrid: relative residual %.3e after %d cycles with the singular regions' "
                                    "constants taken out (%.3e before), tolerance %.3e",
                                    r.relative_residual, it, before, cv.tol);
            }
        }
        // (the stop on the residual where the coarse levels carry nothing:
        // with a mask or beta u's own floor bounds it as well)
        if (stop && result == PGPU_SUCCESS && residual_stop && !verify && own_floor) {
            PGPU_FORWARD(tighten());
            if (!(r.relative_residual <= bound)) cv.tol = bound, verify = true, stop = false;
        }
        if (fall) {
            // the fall per cycle (checks may be several cycles apart)
            const double rel = r.relative_residual, per = std::pow(rn / last_rn, 1.0 / std::max(1, it - last_it));
            if (rel <= bound0) PGPU_FORWARD(tighten());
            floor_checks = rel <= FLOAT_CORRECTION && per > 0.5 ? floor_checks + 1 : 0;
            const bool done = (rel <= bound && per > 0.95) || floor_checks >= FLOAT_FLOOR_CHECKS;
            if (done || (stop && result == PGPU_ERROR_NOT_CONVERGED && rel <= bound)) {
                result = PGPU_SUCCESS;
                err[0] = 0;
                break;
            }
            if (stop && result == PGPU_ERROR_NOT_CONVERGED)
                result = record(err, PGPU_ERROR_NOT_CONVERGED,
                                "multigrid: relative residual %.3e after %d cycles, above float's limit %.3e for "
                                "this grid",
                                rel, it, bound);
        }
        if (verify && (stop || !(rn < last_rn))) {
            PGPU_FORWARD(tighten());
            if (r.relative_residual <= bound) {
                result = PGPU_SUCCESS;
                err[0] = 0;
                break;
            }
            // (u's floor, measured again, may lie below the tolerance just
            // met: a residual still falling goes on to it)
            if (result == PGPU_SUCCESS && rn < last_rn && it < maxit) {
                cv.tol = bound;
                stop = false;
            } else {
                if (result == PGPU_SUCCESS)
                    result = record(err, PGPU_ERROR_NOT_CONVERGED,
                                    "multigrid: the residual stopped falling at a relative %.3e after %d cycles, "
                                    "above float's limit %.3e for this grid",
                                    r.relative_residual, it, bound);
                break;
            }
        }
        if (floor_watch && !stop) {
            if (rn < DOUBLE_FLOOR_FALL * floor_mark) {
                floor_mark = rn;
                floor_since = 0;
            } else if ((floor_since += it - last_it) >= DOUBLE_FLOOR_CYCLES) {
                double fu = 0;
                PGPU_FORWARD(u_floor(DOUBLE_EPS, fu));
                if (r.relative_residual <= DOUBLE_FLOOR_SLACK * fu) {
                    result = record(err, PGPU_ERROR_NOT_CONVERGED,
                                    "multigrid: the residual stopped falling at a relative %.3e after %d cycles, "
                                    "the rounding of u for this operator (a quarter of eps lambda_max ||u|| / ||b|| "
                                    "= %.1e): the tolerance %.3e is below what double can reach here",
                                    r.relative_residual, it, fu, cv.tol);
                    at_floor = true;
                    break;
                }
                floor_mark = rn;
                floor_since = 0;
            }
        }
        last_rn = rn;
        last_it = it;
        if (stop) break;
        const int n = std::min(interval, maxit - it);
        for (int k = 0; k < n; ++k) PGPU_FORWARD(cycle(false));
        it += n;
    }
    if (!fixed && !reported && (by_correction || one_node || (fmg && cv.rule == Stop::ONCE))) { // the report's norms of what was reached
        double rn = 0, rmax = 0;
        PGPU_FORWARD(h.norm(e, red, rn, rmax));
        cv.measured(rn, rmax, r);
        if (!std::isfinite(rn) && result == PGPU_SUCCESS)
            result = record(err, PGPU_ERROR_BREAKDOWN, "multigrid: the residual became %g", rn);
    }
    if ((result == PGPU_ERROR_NOT_CONVERGED || result == PGPU_ERROR_BREAKDOWN) && h.gen.on() && !at_floor) {
        const size_t n = strlen(err);
        snprintf(err + n, ERR_LEN - n, "; on a mask or beta, PGPU_CG around this cycle (its default preconditioner) "
                                       "often converges where the cycles alone do not");
    }
    r.iterations = it;
    PGPU_FORWARD(h.settle(e));
    return result;
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 28 "src/poisson_gpu.cu"
#endif
// stationary.h -- the Jacobi and red-black Gauss-Seidel methods
#ifdef PGPU_SRC_LINES
#line 2 "src/stationary.h"
#endif


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
#ifdef PGPU_SRC_LINES
#line 29 "src/poisson_gpu.cu"
#endif
// fft_rows.h -- the FFT solver's row-FFT core and the all-periodic rows
#ifdef PGPU_SRC_LINES
#line 2 "src/fft_rows.h"
#endif


namespace pgpu {

// The direct solver.  Each axis is diagonalised by its own transform
// (Dirichlet-Dirichlet: DST-I, Neumann-Neumann: DCT-II, periodic: DFT), the
// eigenvalues divide the spectrum, and the inverse transforms give u; at most
// one axis (a mixed Dirichlet/Neumann one, or else the slowest non-periodic
// one) is solved by tridiagonal systems instead.  Three routes:
//  - all-periodic, nx a power of two: our row kernels take x (and z when nz
//    is one), straight from f and into u; cuFFT takes y (lf_* kernels);
//  - 3D all-Dirichlet, every n+1 a product of primes up to 19: five or six
//    passes of our DST-I row kernels, no cuFFT (dr_kernel);
//  - otherwise the cuFFT route: per axis a pre-processing pass, a cuFFT real
//    transform and a post-processing pass, on a packed copy.
// The two row engines share one Stockham pass (row_pass) and the in-register
// DFTs.

template <class T> struct Cplx;
template <> struct Cplx<float> { typedef float2 type; };
template <> struct Cplx<double> { typedef double2 type; };

// ---- the row-FFT core ----
// Rows live in shared memory with one spare slot per 16 values (lf_pad), so
// that the strided stores of a pass spread over the banks.

__device__ __forceinline__ int lf_pad(int i) { return i + (i >> 4); }

template <class C> __device__ __forceinline__ C c_add(C a, C b)
{
    a.x += b.x;
    a.y += b.y;
    return a;
}
template <class C> __device__ __forceinline__ C c_sub(C a, C b)
{
    a.x -= b.x;
    a.y -= b.y;
    return a;
}
template <class C> __device__ __forceinline__ C c_mul(C a, C b)
{
    C r;
    r.x = a.x * b.x - a.y * b.y;
    r.y = a.x * b.y + a.y * b.x;
    return r;
}
template <class C> __device__ __forceinline__ C c_conj(C a)
{
    a.y = -a.y;
    return a;
}
template <class C> __device__ __forceinline__ C c_half(C a)
{
    a.x *= 0.5f;
    a.y *= 0.5f;
    return a;
}
// i a
template <class C> __device__ __forceinline__ C c_muli(C a)
{
    C r;
    r.x = -a.y;
    r.y = a.x;
    return r;
}

// cos(2 pi q/16), 0 <= q < 24 (sin(2 pi q/16) = cos(2 pi (q+12)/16)).
__host__ __device__ constexpr double lf_cos16(int q)
{
    return (q & 15) == 0 ? 1.0
           : (q & 15) == 1 || (q & 15) == 15 ? 0.92387953251128674
           : (q & 15) == 2 || (q & 15) == 14 ? 0.70710678118654752
           : (q & 15) == 3 || (q & 15) == 13 ? 0.38268343236508977
           : (q & 15) == 4 || (q & 15) == 12 ? 0.0
           : (q & 15) == 5 || (q & 15) == 11 ? -0.38268343236508977
           : (q & 15) == 6 || (q & 15) == 10 ? -0.70710678118654752
           : (q & 15) == 7 || (q & 15) == 9 ? -0.92387953251128674
                                             : -1.0;
}

// v e^{-2 pi i q/16}; q is a constant once the callers' loops are unrolled.
template <class C> __device__ __forceinline__ C c_rot16(C v, int q)
{
    typedef decltype(v.x) R;
    if (q == 0) return v;
    if (q == 4) { // -i v
        C r;
        r.x = v.y;
        r.y = -v.x;
        return r;
    }
    const R c = (R)lf_cos16(q), s = (R)lf_cos16(q + 12);
    C r;
    r.x = v.x * c + v.y * s;
    r.y = v.y * c - v.x * s;
    return r;
}

// In-register DFT of R = 2, 4, 8 or 16 values, natural order in and out.
template <int R, class C> __device__ __forceinline__ void lf_dft(C *v)
{
    constexpr int B = R == 2 ? 1 : R == 4 ? 2 : R == 8 ? 3 : 4;
#pragma unroll
    for (int i = 0; i < R; ++i) {
        int j = 0; // i with its B bits reversed
#pragma unroll
        for (int b = 0; b < B; ++b) j |= ((i >> b) & 1) << (B - 1 - b);
        if (j > i) {
            const C t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
    }
#pragma unroll
    for (int st = 0; st < B; ++st) { // butterflies of span h = 2^st
        const int h = 1 << st;
#pragma unroll
        for (int p = 0; p < R / 2; ++p) {
            const int k = p & (h - 1), i = (p - k) * 2 + k;
            const C a = v[i], b = c_rot16(v[i + h], k * (8 >> st));
            v[i] = c_add(a, b);
            v[i + h] = c_sub(a, b);
        }
    }
}



// sin (s = 1) or cos (s = 0) of 2 pi m/R, R an odd prime <= 19, 9 or 27, 1 <= m <= (R-1)/2.
__host__ __device__ constexpr double dr_trig_table(int key, int s)
{
    switch (key) {
    case 97: return s ? 0.86602540378443864676 : -0.50000000000000000000;
    case 161: return s ? 0.95105651629515357212 : 0.30901699437494742410;
    case 162: return s ? 0.58778525229247312917 : -0.80901699437494742410;
    case 225: return s ? 0.78183148246802980871 : 0.62348980185873353053;
    case 226: return s ? 0.97492791218182360702 : -0.22252093395631440429;
    case 227: return s ? 0.43388373911755812048 : -0.90096886790241912624;
    case 289: return s ? 0.64278760968653932632 : 0.76604444311897803520;
    case 290: return s ? 0.98480775301220805937 : 0.17364817766693034885;
    case 291: return s ? 0.86602540378443864676 : -0.50000000000000000000;
    case 292: return s ? 0.34202014332566873304 : -0.93969262078590838405;
    case 353: return s ? 0.54064081745559758211 : 0.84125353283118116886;
    case 354: return s ? 0.90963199535451837141 : 0.41541501300188642553;
    case 355: return s ? 0.98982144188093273238 : -0.14231483827328514044;
    case 356: return s ? 0.75574957435425828377 : -0.65486073394528506406;
    case 357: return s ? 0.28173255684142969771 : -0.95949297361449738989;
    case 417: return s ? 0.46472317204376854566 : 0.88545602565320989590;
    case 418: return s ? 0.82298386589365639458 : 0.56806474673115580251;
    case 419: return s ? 0.99270887409805399280 : 0.12053668025532305335;
    case 420: return s ? 0.93501624268541482344 : -0.35460488704253562597;
    case 421: return s ? 0.66312265824079520238 : -0.74851074817110109863;
    case 422: return s ? 0.23931566428755776715 : -0.97094181742605202716;
    case 545: return s ? 0.36124166618715294874 : 0.93247222940435580457;
    case 546: return s ? 0.67369564364655721171 : 0.73900891722065911592;
    case 547: return s ? 0.89516329135506232207 : 0.44573835577653826740;
    case 548: return s ? 0.99573417629503452187 : 0.092268359463301995240;
    case 549: return s ? 0.96182564317281907041 : -0.27366299007208286354;
    case 550: return s ? 0.79801722728023950333 : -0.60263463637925638918;
    case 551: return s ? 0.52643216287735580024 : -0.85021713572961415213;
    case 552: return s ? 0.18374951781657033157 : -0.98297309968390177828;
    case 609: return s ? 0.32469946920468348741 : 0.94581724170063467902;
    case 610: return s ? 0.61421271268966781744 : 0.78914050939639359922;
    case 611: return s ? 0.83716647826252857481 : 0.54694815812242687471;
    case 612: return s ? 0.96940026593933041674 : 0.24548548714079914892;
    case 613: return s ? 0.99658449300666984982 : -0.082579345472332324600;
    case 614: return s ? 0.91577332665505743992 : -0.40169542465296945752;
    case 615: return s ? 0.73572391067313162477 : -0.67728157162574107476;
    case 616: return s ? 0.47594739303707354443 : -0.87947375120648907139;
    case 617: return s ? 0.16459459028073389414 : -0.98636130340272237360;
    case 865: return s ? 0.23061587074244017845 : 0.97304487057982383883;
    case 866: return s ? 0.44879918020046217279 : 0.89363264032341224819;
    case 867: return s ? 0.64278760968653932632 : 0.76604444311897803520;
    case 868: return s ? 0.80212319275504378508 : 0.59715859170278616485;
    case 869: return s ? 0.91821610688027401476 : 0.39607976603915682370;
    case 870: return s ? 0.98480775301220805937 : 0.17364817766693034885;
    case 871: return s ? 0.99830815827126820805 : -0.058144828910475828539;
    case 872: return s ? 0.95798951231548887444 : -0.28680323271109025310;
    case 873: return s ? 0.86602540378443864676 : -0.50000000000000000000;
    case 874: return s ? 0.72737364157304869599 : -0.68624163786873358573;
    case 875: return s ? 0.54950897807080603526 : -0.83548781141293641965;
    case 876: return s ? 0.34202014332566873304 : -0.93969262078590838405;
    case 877: return s ? 0.11609291412523022968 : -0.99323835774194298855;
    }
    return 0.0;
}
__host__ __device__ constexpr double dr_cos(int R, int m)
{
    return m % R == 0 ? 1.0 : dr_trig_table(R * 32 + (2 * (m % R) > R ? R - m % R : m % R), 0);
}
__host__ __device__ constexpr double dr_sin(int R, int m)
{
    return m % R == 0 ? 0.0
                      : (2 * (m % R) > R ? -dr_trig_table(R * 32 + R - m % R, 1) : dr_trig_table(R * 32 + m % R, 1));
}

// In-register DFT of R values (R an odd prime), natural order in and out:
// with s_j = v_j + v_{R-j}, d_j = v_j - v_{R-j}, out_k = A_k - i B_k and
// out_{R-k} = A_k + i B_k, A_k = v_0 + sum s_j cos(2 pi jk/R),
// B_k = sum d_j sin(2 pi jk/R); the constants fold once the loops unroll.
template <int R, class C> __device__ __forceinline__ void dr_prime(C *v)
{
    typedef decltype(v[0].x) Re;
    constexpr int H = (R - 1) / 2;
    C s[H], d[H];
    const C v0 = v[0];
    C y0 = v0;
#pragma unroll
    for (int j = 1; j <= H; ++j) {
        s[j - 1] = c_add(v[j], v[R - j]);
        d[j - 1] = c_sub(v[j], v[R - j]);
        y0 = c_add(y0, s[j - 1]);
    }
#pragma unroll
    for (int k = 1; k <= H; ++k) {
        C a = v0, b;
        b.x = b.y = Re(0);
#pragma unroll
        for (int j = 1; j <= H; ++j) {
            const Re c = (Re)dr_cos(R, j * k), sn = (Re)dr_sin(R, j * k);
            a.x += s[j - 1].x * c;
            a.y += s[j - 1].y * c;
            b.x += d[j - 1].x * sn;
            b.y += d[j - 1].y * sn;
        }
        v[k].x = a.x + b.y;
        v[k].y = a.y - b.x;
        v[R - k].x = a.x - b.y;
        v[R - k].y = a.y + b.x;
    }
    v[0] = y0;
}

// v e^{-2 pi i m/R}, m a constant once the callers' loops unroll.
template <int R, class C> __device__ __forceinline__ C dr_rot(C v, int m)
{
    typedef decltype(v.x) Re;
    if (m % R == 0) return v;
    const Re c = (Re)dr_cos(R, m), s = (Re)dr_sin(R, m);
    C r;
    r.x = v.x * c + v.y * s;
    r.y = v.y * c - v.x * s;
    return r;
}

// In-register DFT of R values, natural order in and out: R = 2, 4, 8, 16, an
// odd prime up to 19, or 9 or 27 (Cooley-Tukey in registers: n = n1 + 3 n2,
// k = k2 + Q k1).
template <int R, class C> __device__ __forceinline__ void dr_dft(C *v)
{
    if constexpr ((R & (R - 1)) == 0) {
        lf_dft<R>(v);
    } else if constexpr (R == 9 || R == 27) {
        constexpr int P = 3, Q = R / 3;
        C y[R];
#pragma unroll
        for (int n1 = 0; n1 < P; ++n1) {
            C t[Q];
#pragma unroll
            for (int n2 = 0; n2 < Q; ++n2) t[n2] = v[n1 + P * n2];
            dr_dft<Q>(t);
#pragma unroll
            for (int k2 = 0; k2 < Q; ++k2) y[n1 * Q + k2] = dr_rot<R>(t[k2], n1 * k2);
        }
#pragma unroll
        for (int k2 = 0; k2 < Q; ++k2) {
            C t[P];
#pragma unroll
            for (int n1 = 0; n1 < P; ++n1) t[n1] = y[n1 * Q + k2];
            dr_dft<P>(t);
#pragma unroll
            for (int k1 = 0; k1 < P; ++k1) v[k2 + Q * k1] = t[k1];
        }
    } else {
        dr_prime<R>(v);
    }
}

// Butterflies a thread holds at most per pass: about 24 values.
__host__ __device__ constexpr int dr_g(int R)
{
    return R == 2 ? 12 : R == 3 ? 8 : R == 4 ? 6 : R == 5 ? 4 : R <= 8 ? 3 : R <= 11 ? 2 : 1;
}


// Rows of at most 32 threads lie within a warp: a warp barrier suffices.
template <bool BLOCK> __device__ __forceinline__ void row_sync(int tpr)
{
    if (BLOCK || tpr > 32) __syncthreads();
    else __syncwarp();
}

// One Stockham pass of radix R over the N-point row s (padded indices) whose
// sub-transforms have length ns so far; tw[q] = e^{-i pi q/N}, so that
// e^{-2 pi i q/N} = tw[2q].  Thread t of the row's tpr threads owns the
// butterflies j = t + g tpr < N / R, g < G.  Every thread of the block calls
// it (barriers inside).  Two modes:
//  - POW2 (N a power of two, every thread exactly G butterflies): block
//    barriers;
//  - general (any N divisible by R): a row of at most 32 threads
//    synchronises as a warp.
// The first pass needs no twiddles; later ones take every fourth power of w
// from the table and the others by one to three products (15 loads of a
// radix-16 butterfly's twiddles kept the passes waiting on the cache).
// A pass's values come from the row itself (FromRow), or, in a first pass,
// from load(p), value p of the row wherever its caller keeps it.
struct FromRow {};
template <int R, int G, bool POW2, class C, class Load = FromRow>
__device__ __forceinline__ void row_pass(C *s, int N, int ns, int t, int tpr, const C *tw, Load load = Load())
{
    constexpr bool own = std::is_same<Load, FromRow>::value;
    const int m = N / R;
    C v[G * R];
    // (POW2: where m, or ns, is a multiple of 16 -- or ns is 1, R dividing
    // 16 -- the padded indices step evenly in r: one add an access.)
    const bool lin_in = POW2 && (m & 15) == 0, lin_out = POW2 && (ns == 1 || (ns & 15) == 0);
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const int j = t + g * tpr;
        if constexpr (!own) {
            if (POW2 || j < m)
#pragma unroll
                for (int r = 0; r < R; ++r) v[g * R + r] = load(j + r * m);
        } else if (lin_in) {
            const C *p = s + lf_pad(j);
            const int pm = lf_pad(m);
#pragma unroll
            for (int r = 0; r < R; ++r) v[g * R + r] = p[r * pm];
        } else if (POW2 || j < m) {
#pragma unroll
            for (int r = 0; r < R; ++r) v[g * R + r] = s[lf_pad(j + r * m)];
        }
    }
    row_sync<POW2>(tpr);
    const int step = 2 * (N / (ns * R));
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const int j = t + g * tpr;
        if (POW2 || j < m) {
            const int k = POW2 ? j & (ns - 1) : ns == 1 ? 0 : j % ns;
            if (k != 0) { // w^r: every fourth from the table, the others by one to three products
                const C w = tw[k * step];
                C wr = w;
#pragma unroll
                for (int r = 1; r < R; ++r) {
                    if (r > 1) wr = (r & 3) == 1 ? tw[r * k * step] : c_mul(wr, w);
                    v[g * R + r] = c_mul(v[g * R + r], wr);
                }
            }
            dr_dft<R>(v + g * R);
            const int d = (j - k) * R + k;
            if (lin_out) {
                C *p = s + lf_pad(d);
                const int pn = ns == 1 ? 1 : lf_pad(ns);
#pragma unroll
                for (int r = 0; r < R; ++r) p[r * pn] = v[g * R + r];
            } else {
#pragma unroll
                for (int r = 0; r < R; ++r) s[lf_pad(d + r * ns)] = v[g * R + r];
            }
        }
    }
    row_sync<POW2>(tpr);
}

// ---- all-periodic rows ----
// cuFFT reads and writes only arrays aligned to its complex type, which the
// ghosted layout is not (rows start at odd offsets), so with cuFFT alone an
// all-periodic solve pays a copy in and a copy out.  When every axis is
// periodic and nx = 2N is a power of two (LF_MIN ... LF_MAX), two kernels of
// ours take the x axis instead: the forward one reads f's rows straight from
// the user's layout and writes their half spectra (N+1 modes each) to C,
// transposed: C[kx][z][y], so that a block's rows (consecutive y) store each
// mode as one contiguous run; the inverse one reads them back and writes u's
// rows.  In between, cuFFT transforms y and z as contiguous batched 2D
// transforms, one per x mode (the same over x-strided data, one execution,
// ran 8x slower), and the division by the eigenvalues is one pass over C.
//
// A row of 2N reals is N complex numbers z_j = x_{2j} + i x_{2j+1}.  Their
// FFT Z runs in shared memory in Stockham passes of radix 16 (the last one
// smaller), each thread holding 16 values in registers; then
// X_k = (Z_k + conj Z_{N-k})/2 - i e^{-i pi k/N} (Z_k - conj Z_{N-k})/2, k = 0..N.
// The inverse rebuilds 2Z from X, transforms it (conjugated) and unpacks.
// Shared indices carry one spare slot per 16 (lf_pad) so that the strided
// stores of a pass spread over the banks.


// Forward complex FFT of the N-point row s, in place (N a power of two,
// >= V), in passes of radix V and a smaller last one.
template <int V, class C> __device__ void lf_fft(C *s, int N, int t, int tpl, const C *tw)
{
    int ns = 1;
    for (; ns * V <= N; ns *= V) row_pass<V, 1, true>(s, N, ns, t, tpl, tw);
    const int rest = N / ns;
    if (V > 8 && rest == 8) row_pass<(V > 8 ? 8 : 2), V / (V > 8 ? 8 : 2), true>(s, N, ns, t, tpl, tw);
    else if (V > 4 && rest == 4) row_pass<(V > 4 ? 4 : 2), V / (V > 4 ? 4 : 2), true>(s, N, ns, t, tpl, tw);
    else if (rest == 2) row_pass<2, V / 2, true>(s, N, ns, t, tpl, tw);
}


// Shared memory of the row kernels: lpb rows, then in float the x kernels'
// copy of the twiddles (measured: 0.91 against 1.10 ms for the forward
// kernel at 512^3); elsewhere they are read from global memory through L1
// (the z kernel and double: equal or faster that way).
struct LfShape {
    int n, N, tpl, lpb, ls, ln, lb; // row length, N = n/2, threads per row, rows per block, row stride,
                                    // log2 n, log2 lpb
};
__host__ __device__ inline LfShape lf_shape(int n, int threads, int vals)
{
    LfShape s;
    s.n = n;
    s.N = n / 2;
    s.tpl = s.N / vals;
    s.lpb = threads / s.tpl;
    s.ls = s.N + (s.N >> 4) + 1;
    s.ln = 0;
    while ((1 << s.ln) < n) ++s.ln;
    s.lb = 0;
    while ((1 << s.lb) < s.lpb) ++s.lb;
    return s;
}
template <class T> size_t lf_smem_bytes(int n, bool x_kernel);
// The kernels' dynamic shared memory limit is a property of the kernel, not
// of a solver: every solver sets the same value, the most any eligible size
// needs (within what the device allows), so that none lowers it under another.
template <class T> size_t lf_smem_most(bool x_kernel)
{
    size_t m = 0;
    for (int n = x_kernel ? LF_MIN : 2 * LF_ZMIN; n <= (x_kernel ? LF_MAX : 2 * LF_ZMAX); n *= 2)
        m = std::max(m, lf_smem_bytes<T>(n, x_kernel));
    return m;
}
template <class T> size_t lf_smem_bytes(int n, bool x_kernel)
{
    const LfShape s = lf_shape(n, LF_T, Tune<T>::lf_vals);
    return (size_t)(s.lpb * s.ls + (x_kernel && Tune<T>::lf_shared_tw ? 2 * s.N : 0)) * sizeof(typename Cplx<T>::type);
}

// The row kernels' common start: the twiddles (in float copied to shared
// memory after the rows), the block's rows and where each starts in the
// user's layout (rb; r < here).
template <class T> struct LfRows {
    const typename Cplx<T>::type *tw;
    int64_t nrows, row0;
    int here;
};
template <class T>
__device__ __forceinline__ LfRows<T> lf_rows_begin(const Grid<T> &g, const LfShape &sh,
                                                   const typename Cplx<T>::type *__restrict__ twg,
                                                   typename Cplx<T>::type *rows, int64_t *rb)
{
    LfRows<T> b;
    b.tw = twg;
    if (Tune<T>::lf_shared_tw) {
        typename Cplx<T>::type *cp = rows + sh.lpb * sh.ls;
        for (int q = threadIdx.x; q < 2 * sh.N; q += LF_T) cp[q] = twg[q];
        b.tw = cp;
    }
    b.nrows = (int64_t)g.ny * g.nz;
    b.row0 = (int64_t)blockIdx.x * sh.lpb;
    b.here = (int)min((int64_t)sh.lpb, b.nrows - b.row0);
    for (int r = threadIdx.x; r < b.here; r += LF_T) {
        const int64_t row = b.row0 + r, j = row % g.ny, k = row / g.ny;
        rb[r] = g.base + j * g.sy + k * g.sz;
    }
    return b;
}

// f's rows (minus the shift) -> their half spectra, C[kx * ny * nz + row].
template <class T>
__global__ void __launch_bounds__(LF_T)
    lf_forward_kernel(const Grid<T> g, const T *__restrict__ f, const T *__restrict__ shiftp,
                      const typename Cplx<T>::type *__restrict__ twg, typename Cplx<T>::type *__restrict__ C)
{
    typedef typename Cplx<T>::type C2;
    extern __shared__ __align__(16) unsigned char lf_smem[];
    __shared__ int64_t rb[LF_T];
    const LfShape sh = lf_shape(g.nx, LF_T, Tune<T>::lf_vals);
    const int N = sh.N;
    C2 *rows = (C2 *)lf_smem;
    const LfRows<T> blk = lf_rows_begin(g, sh, twg, rows, rb);
    const C2 *tw = blk.tw;
    const int64_t nrows = blk.nrows, row0 = blk.row0;
    const int here = blk.here;
    T *re = (T *)rows;
    const Shift<T> shift = load_shift(shiftp);
    __syncthreads();
    for (int e = threadIdx.x; e < sh.lpb * sh.n; e += LF_T) {
        const int r = e >> sh.ln, i = e & (sh.n - 1);
        re[2 * (r * sh.ls + lf_pad(i >> 1)) + (i & 1)] = r < here ? shift.of(f[rb[r] + i]) : T(0);
    }
    __syncthreads();
    const int r = threadIdx.x / sh.tpl, t = threadIdx.x - r * sh.tpl;
    lf_fft<Tune<T>::lf_vals>(rows + r * sh.ls, N, t, sh.tpl, tw);
    for (int e = threadIdx.x; e < sh.lpb * (N + 1); e += LF_T) {
        const int q = e & (sh.lpb - 1), k = e >> sh.lb;
        if (q >= here) continue;
        const C2 *s = rows + q * sh.ls;
        const C2 a = s[lf_pad(k == N ? 0 : k)], b = c_conj(s[lf_pad(k == 0 ? 0 : N - k)]);
        const C2 ev = c_half(c_add(a, b)), od = c_half(c_sub(a, b)); // od = i O_k
        C[k * nrows + row0 + q] = c_sub(ev, c_muli(c_mul(tw[k], od)));
    }
}

// Half spectra in C -> u's rows (unnormalised, as cuFFT's C2R).
template <class T>
__global__ void __launch_bounds__(LF_T)
    lf_inverse_kernel(const Grid<T> g, const typename Cplx<T>::type *__restrict__ C,
                      const typename Cplx<T>::type *__restrict__ twg, T *__restrict__ u)
{
    typedef typename Cplx<T>::type C2;
    extern __shared__ __align__(16) unsigned char lf_smem[];
    __shared__ int64_t rb[LF_T];
    const LfShape sh = lf_shape(g.nx, LF_T, Tune<T>::lf_vals);
    const int N = sh.N;
    C2 *rows = (C2 *)lf_smem;
    const LfRows<T> blk = lf_rows_begin(g, sh, twg, rows, rb);
    const C2 *tw = blk.tw;
    const int64_t nrows = blk.nrows, row0 = blk.row0;
    const int here = blk.here;
    const T *re = (const T *)rows;
    for (int e = threadIdx.x; e < sh.lpb * (N + 1); e += LF_T) {
        const int q = e & (sh.lpb - 1), k = e >> sh.lb;
        C2 v;
        v.x = v.y = 0;
        if (q < here) v = C[k * nrows + row0 + q];
        rows[q * sh.ls + lf_pad(k)] = v;
    }
    __syncthreads();
    const int r = threadIdx.x / sh.tpl, t = threadIdx.x - r * sh.tpl;
    C2 *s = rows + r * sh.ls;
    // 2 Z_k = (X_k + conj X_{N-k}) + i e^{i pi k/N} (X_k - conj X_{N-k}), k < N,
    // stored conjugated; each thread owns the pairs (k, N-k).
    for (int k = t; k <= N / 2; k += sh.tpl) {
        const C2 a = s[lf_pad(k)], b = s[lf_pad(N - k)];
        const C2 zk = c_add(c_add(a, c_conj(b)), c_muli(c_mul(c_conj(tw[k]), c_sub(a, c_conj(b)))));
        s[lf_pad(k)] = c_conj(zk);
        if (k != 0 && k != N - k) {
            const C2 zm = c_add(c_add(b, c_conj(a)), c_muli(c_mul(c_conj(tw[N - k]), c_sub(b, c_conj(a)))));
            s[lf_pad(N - k)] = c_conj(zm);
        }
    }
    __syncthreads();
    lf_fft<Tune<T>::lf_vals>(s, N, t, sh.tpl, tw);
    for (int e = threadIdx.x; e < here * sh.n; e += LF_T) {
        const int q = e >> sh.ln, i = e & (sh.n - 1);
        const T v = re[2 * (q * sh.ls + lf_pad(i >> 1)) + (i & 1)];
        u[rb[q] + i] = (i & 1) ? -v : v;
    }
}

// Per-axis transforms: DST-I by the running sum or by the odd extension
// (dst1x_pre_kernel), DCT-II, the periodic DFT; FFT_RHC: the periodic DFT
// as a real transform in halfcomplex order (rhc_post_kernel), for the
// distributed solve, whose transposes move real data only; FFT_DN / FFT_ND:
// a Dirichlet and a Neumann face (dn_pre_kernel).
enum { FFT_DST1 = 0, FFT_DCT2 = 1, FFT_DFT = 2, FFT_DST1X = 3, FFT_RHC = 4, FFT_DN = 5, FFT_ND = 6 };
static bool fft_dn(int kind) { return kind == FFT_DN || kind == FFT_ND; }

// Eigenvalue of mode k of the 1D operator, per transform (FFT_RHC: of
// slot k, which holds a part of mode (k + 1) / 2).
static double fft_eigen(int kind, int64_t n, double h, int64_t k)
{
    double s;
    if (kind == FFT_DST1 || kind == FFT_DST1X) s = std::sin(M_PI * (double)(k + 1) / (2.0 * (double)(n + 1)));
    else if (kind == FFT_DCT2) s = std::sin(M_PI * (double)k / (2.0 * (double)n));
    else if (kind == FFT_RHC) s = std::sin(M_PI * (double)((k + 1) / 2) / (double)n);
    else if (fft_dn(kind)) s = std::sin(M_PI * (double)(2 * k + 1) / (2.0 * (double)(2 * n + 1)));
    else s = std::sin(M_PI * (double)k / (double)n); // FFT_DFT
    return 4.0 * s * s / (h * h);
}

// Eigenvalues of the transformed axes, per mode index (see fft_eigen).
template <class T> struct Spectrum {
    int64_t e0, e1, e2;  // extents of the spectral array (natural layout)
    const T *ev0, *ev1, *ev2; // eigenvalues per axis; NULL for the tridiagonal axis
    T scale;             // normalisation of all inverse transforms
};

__device__ __forceinline__ void scale_by(float &v, float s) { v *= s; }
__device__ __forceinline__ void scale_by(double &v, double s) { v *= s; }
__device__ __forceinline__ void scale_by(float2 &v, float s) { v.x *= s; v.y *= s; }
__device__ __forceinline__ void scale_by(double2 &v, double s) { v.x *= s; v.y *= s; }
__device__ __forceinline__ void zero(float &v) { v = 0; }
__device__ __forceinline__ void zero(double &v) { v = 0; }
__device__ __forceinline__ void zero(float2 &v) { v.x = v.y = 0; }
__device__ __forceinline__ void zero(double2 &v) { v.x = v.y = 0; }
__device__ __forceinline__ void axpy(float &y, float a, float x) { y += a * x; }
__device__ __forceinline__ void axpy(double &y, double a, double x) { y += a * x; }
__device__ __forceinline__ void axpy(float2 &y, float a, float2 x) { y.x += a * x.x; y.y += a * x.y; }
__device__ __forceinline__ void axpy(double2 &y, double a, double2 x) { y.x += a * x.x; y.y += a * x.y; }

// Every axis transformed: divide each mode by its eigenvalue (the zero mode
// of a singular problem becomes 0).
template <class T, class V>
__global__ void spectral_divide_kernel(const Spectrum<T> sp, V *__restrict__ Z)
{
    const int64_t E = sp.e0 * sp.e1 * sp.e2;
    const bool small = E < ((int64_t)1 << 32); // 32-bit divisions
    PGPU_GRID_STRIDE(t, E)
    {
        int i0, i1, i2;
        split_index(t, (uint32_t)sp.e0, (uint32_t)sp.e1, small, i0, i1, i2);
        const T lam = sp.ev0[i0] + sp.ev1[i1] + (sp.ev2 ? sp.ev2[i2] : T(0));
        V v = Z[t];
        if (lam > T(0)) scale_by(v, sp.scale / lam);
        else zero(v);
        Z[t] = v;
    }
}

// The z axis too, when nz is a power of two (LF_ZMIN ... LF_ZMAX; 3D): after
// cuFFT's y transforms, one kernel per block of columns (a kx, lpb
// consecutive ky) loads their z lines, transforms them, divides by the
// eigenvalues and transforms back, so that the spectrum makes one round trip
// instead of three (z forward, division, z inverse).  Element (kx, z, y) is
// at C[(kx * nz + z) * ny + y]; or, given the table zt (the distributed
// solve, whose planes arrive in blocks of its own layout), at
// C[zt[2 z] + kx * zt[2 z + 1] + y].

template <class T>
__global__ void __launch_bounds__(LF_T)
    lf_zsolve_kernel(const Spectrum<T> sp, const typename Cplx<T>::type *__restrict__ twg,
                     typename Cplx<T>::type *__restrict__ C, const int64_t *__restrict__ zt)
{
    typedef typename Cplx<T>::type C2;
    extern __shared__ __align__(16) unsigned char lf_smem[];
    const int M = (int)sp.e1, ny = (int)sp.e0;
    const LfShape sh = lf_shape(2 * M, LF_T, Tune<T>::lf_vals); // rows of M complex values
    const C2 *tw = twg;
    C2 *rows = (C2 *)lf_smem;
    const int kx = blockIdx.y, y0 = blockIdx.x * sh.lpb, here = min(sh.lpb, ny - y0);
    C2 *col = C + y0; // element (z, y0 + q) at col[at(z) + q]
    auto at = [&](int z) -> int64_t { return zt ? zt[2 * z] + kx * zt[2 * z + 1] : ((int64_t)kx * M + z) * ny; };
    for (int e = threadIdx.x; e < sh.lpb * M; e += LF_T) {
        const int q = e & (sh.lpb - 1), z = e >> sh.lb;
        C2 v;
        v.x = v.y = 0;
        if (q < here) v = col[at(z) + q];
        rows[q * sh.ls + lf_pad(z)] = v;
    }
    __syncthreads();
    const int r = threadIdx.x / sh.tpl, t = threadIdx.x - r * sh.tpl;
    C2 *s = rows + r * sh.ls;
    lf_fft<Tune<T>::lf_vals>(s, M, t, sh.tpl, tw);
    // Divide, conjugated for the inverse (conj FFT conj).
    const T lxy = sp.ev2[kx] + sp.ev0[min(y0 + r, ny - 1)];
    for (int kz = t; kz < M; kz += sh.tpl) {
        const T lam = lxy + sp.ev1[kz];
        C2 v = s[lf_pad(kz)];
        const T w = lam > T(0) ? sp.scale / lam : T(0);
        v.x *= w;
        v.y *= -w;
        s[lf_pad(kz)] = v;
    }
    __syncthreads();
    lf_fft<Tune<T>::lf_vals>(s, M, t, sh.tpl, tw);
    for (int e = threadIdx.x; e < sh.lpb * M; e += LF_T) {
        const int q = e & (sh.lpb - 1), z = e >> sh.lb;
        if (q < here) col[at(z) + q] = c_conj(rows[q * sh.ls + lf_pad(z)]);
    }
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 30 "src/poisson_gpu.cu"
#endif
// fft_dirichlet.h -- the all-Dirichlet rows: DST-I by our own mixed-radix FFT
#ifdef PGPU_SRC_LINES
#line 2 "src/fft_dirichlet.h"
#endif



#include <cooperative_groups.h>

namespace pgpu {

// When every face is Dirichlet and each n+1 factors into primes up to 19
// (n <= 4096; dr_plan says which rows fit), the solve is row passes over the
// data, each transforming rows in shared memory.  3D (dr_kernel):
//   x forward  f's rows (plus boundary terms)  -> T1[kx][z][y]  (transposed)
//   y forward  T1's rows                       -> T2[ky][kx][z]
//   z forward  T2's rows, divided by the eigenvalues, in place
//   z inverse  T2's rows, in place (where z's n+1 is a power of two: in the
//              same pass as its forward transform, DR_SOLVE)
//   y inverse  T2 (transposed)                 -> T1's rows
//   x inverse  T1 (transposed)                 -> u's rows
// 2D with n+1 a power of two on both axes: x forward, y forward-divide-
// inverse, x inverse in one cooperative launch (dr2_kernel), which can also
// fold in the default path's checks.  The cuFFT route takes about fourteen
// passes in 3D
// (pre-processing, transform and post-processing per axis, copies).
//
// A row of n values is transformed in shared memory: DST-I of length n is the real FFT of its odd extension of
// length 2N (N = n+1), computed as a complex FFT of length N of the packed
// pairs w_m = z_2m + i z_2m+1 (the extension lives in shared memory only,
// never in global memory) and the usual split; X_k = -Im(Z_k)/2.  The
// complex FFT is a Stockham transform, in place: every thread loads its
// butterflies' values into registers, the row's threads synchronise, and
// the results go back.  N a power of two (dr_plan_pow2): radix-16 passes
// and a smaller last one, inlined (dr_pow2_fft), N/16 threads a row, in 3D
// a kernel per N (dr_kernel's CN: the row shape as constants).  Other
// N (dr_plan): radices 2, 4, 8, 16, 9, 27 and the odd primes to 19
// (513 = 27 x 19: two passes), each pass a function of its own (dr_pass):
// inlined, the kernel held the registers of every radix at once and
// spilled.  The lengths in DR_CONST_N have 3D kernels of their own: the
// plan's passes inlined in sequence with the length as a constant
// (dr_const_fft).  A row of up to 32 threads is one warp and synchronises
// as one.
// DST-I is its own inverse up to 2/N.
//
// The passes are bound by issued instructions (index arithmetic, shared
// memory traffic, twiddles), not by memory: bench/results has the times
// beside the copy bandwidth and the cuFFT pair.

// One row's transform: its length, the radices, threads per row and rows per
// block (powers of two, tpr * rpb = DR_T), the strides of a row in shared
// memory (ls complex values for the FFT, lx reals for the result) and the
// twiddles tw[q] = e^{-i pi q/N}, q < 2N.
template <class T> struct DrAxis {
    int n, N, np, tpr_log, rpb_log, ls, lx;
    int grp_log; // rows a group takes (at most rpb: dr2_kernel spreads few rows over more blocks)
    bool pow2;   // dr_plan_pow2's plan: N a power of two, the transform inlined (dr_pow2_fft)
    unsigned long long rad; // radix of pass p in bits 5p .. 5p+4
    const typename Cplx<T>::type *tw;
};


// The general pass, not inlined: each radix then gets its own registers
// (inlined, the kernel held those of all radices at once: 128 -> 216 in
// float, and spilled).
template <int R, class C>
__device__ __noinline__ void dr_pass(C *s, int N, int ns, int t, int tpr, const C *__restrict__ tw)
{
    row_pass<R, dr_g(R), false>(s, N, ns, t, tpr, tw);
}

// Forward complex FFT of the row s in place; every thread of the block calls
// it.  The passes run in the order dr_plan makes them.
template <int R, class T>
__device__ __forceinline__ void dr_passes(typename Cplx<T>::type *s, const DrAxis<T> &a, int t,
                                          const typename Cplx<T>::type *tw, int &ns, int &p)
{
#pragma unroll 1
    while (p < a.np && ((int)(a.rad >> (5 * p)) & 31) == R) {
        dr_pass<R>(s, a.N, ns, t, 1 << a.tpr_log, tw);
        ns *= R;
        ++p;
    }
}
template <class T>
__device__ __forceinline__ void dr_fft(typename Cplx<T>::type *s, const DrAxis<T> &a, int t,
                                       const typename Cplx<T>::type *tw)
{
    int ns = 1, p = 0;
    dr_passes<16>(s, a, t, tw, ns, p);
    dr_passes<8>(s, a, t, tw, ns, p);
    dr_passes<4>(s, a, t, tw, ns, p);
    dr_passes<2>(s, a, t, tw, ns, p);
    dr_passes<27>(s, a, t, tw, ns, p);
    dr_passes<9>(s, a, t, tw, ns, p);
    dr_passes<3>(s, a, t, tw, ns, p);
    dr_passes<5>(s, a, t, tw, ns, p);
    dr_passes<7>(s, a, t, tw, ns, p);
    dr_passes<11>(s, a, t, tw, ns, p);
    dr_passes<13>(s, a, t, tw, ns, p);
    dr_passes<17>(s, a, t, tw, ns, p);
    dr_passes<19>(s, a, t, tw, ns, p);
}

// The general plan's transform for a length N = CN known when compiling
// (dr_kernel's CN, DR_CONST_N): its passes inlined, each with its radix,
// sub-transform length and threads per row as constants, so that the
// index arithmetic folds.  Inlined in sequence, the passes' registers are
// the largest pass's (held at once, as in a loop over every radix, they
// spilled: dr_pass).
template <class T> __host__ __device__ constexpr bool dr_plan(int n, DrAxis<T> &a);
template <class T> __host__ __device__ constexpr DrAxis<T> dr_const_plan(int N)
{
    DrAxis<T> a{};
    dr_plan(N - 1, a);
    return a;
}
template <class T, int CN, int P = 0, int NS = 1>
__device__ __forceinline__ void dr_const_fft(typename Cplx<T>::type *s, int t, const typename Cplx<T>::type *tw)
{
    constexpr DrAxis<T> pl = dr_const_plan<T>(CN);
    if constexpr (P < pl.np) {
        constexpr int R = (int)(pl.rad >> (5 * P)) & 31;
        row_pass<R, dr_g(R), false>(s, CN, NS, t, 1 << pl.tpr_log, tw);
        dr_const_fft<T, CN, P + 1, NS * R>(s, t, tw);
    }
}

// z_j of the odd extension (length 2N) into the packed row: x_j at z_j and
// -x_j at z_{2N-j} (1 <= j <= n).
template <class T> __device__ __forceinline__ void dr_put(T *sr, int N, int j, T v)
{
    const int p = 2 * N - j;
    sr[2 * lf_pad(j >> 1) + (j & 1)] = v;
    sr[2 * lf_pad(p >> 1) + (p & 1)] = -v;
}
// ... and z_q read from the row x itself (x(i), 0 <= i < n): dr_put's
// values, for a first pass's loads (row_pass's Load).
template <class T, class X> __device__ __forceinline__ T dr_ext(const X &x, int N, int q)
{
    return q == 0 || q == N ? T(0) : q < N ? x(q - 1) : -x(2 * N - q - 1);
}
template <class T, class X> struct DrLoad {
    X x;
    int N;
    __device__ typename Cplx<T>::type operator()(int p) const
    {
        typename Cplx<T>::type c;
        c.x = dr_ext<T>(x, N, 2 * p);
        c.y = dr_ext<T>(x, N, 2 * p + 1);
        return c;
    }
};
template <class T, class X> __device__ __forceinline__ DrLoad<T, X> dr_load_from(const X &x, int N)
{
    return DrLoad<T, X>{x, N};
}
template <class T> __device__ __forceinline__ void dr_zeros(T *sr, int N)
{
    sr[0] = T(0);
    sr[2 * lf_pad(N >> 1) + (N & 1)] = T(0);
}
// X_k = -Im(Z_k)/2 (1 <= k <= n) from the complex FFT W of the packed row:
// Z_k = (W_k + conj W_{N-k})/2 - i e^{-i pi k/N} (W_k - conj W_{N-k})/2.
template <class C> __device__ __forceinline__ auto dr_split(const C *s, int N, int k, const C *__restrict__ tw)
    -> decltype(s[0].x)
{
    typedef decltype(s[0].x) Re;
    const C a = s[lf_pad(k)], b = s[lf_pad(N - k)], w = tw[k];
    return Re(-0.25) * ((a.y - b.y) - w.x * (a.x - b.x) + w.y * (a.y + b.y));
}

enum { DR_USER = 0, DR_ROWS = 1, DR_TRANS = 2 };
// What a pass does between its transforms: scale the spectrum, divide it by
// the eigenvalues, or divide and transform back in the same row (DR_SOLVE:
// the last axis's forward and inverse transforms in one pass).
enum { DR_SCALE = 0, DR_DIVIDE = 1, DR_SOLVE = 2 };

// What one row pass reads and writes.  Rows are numbered in the order of
// the input: for DR_USER row r is (y, z) = (r % ny, r / ny); DR_ROWS arrays
// hold row r at r * n; DR_TRANS arrays hold element i of row r at
// i * nrows + r.
template <class T> struct DrArgs {
    DrAxis<T> ax;
    const T *in;
    T *out;
    int64_t nrows;
    Grid<T> g;          // DR_USER
    const T *f, *u_in;  // DR_USER input: f plus the boundary terms
    T *u_out;           // DR_USER output
    T scale;            // applied to every output value (DR_DIVIDE, DR_SOLVE: in the division)
    const T *evA, *evB, *evK; // DR_DIVIDE, DR_SOLVE: eigenvalue of row r: evA[r % nA] + evB[r / nA] (evB may be
    int64_t nA;               // NULL), plus evK[k] for element k
};

// A value another block of the same launch may have written (the 2D
// kernel's phases, after a grid barrier): a plain load, never through the
// non-coherent cache (no __ldg, no const __restrict__ on these arrays).
template <class T> __device__ __forceinline__ T dr_load(const T *p) { return *p; }

// A group of rpb rows from row0, every thread of the block taking part, in
// three steps: dr_rows_in (the odd extensions; SCAN: the right-hand side's
// sums into acc; a DR_USER row's f loaded before its boundary terms are
// added), dr_rows_transform (the transform and what `mode` does)
// and dr_rows_out (DR_USER output only where `write`); the caller
// synchronises the block before the next group reuses smem.  A kernel calls
// dr_fft (the general plan's) from one place and outside any loop of its
// own: the passes are functions (dr_pass), and a second call site made
// ptxas compile the whole kernel to the calling convention's 32 registers
// with kilobytes of spills.  dr_pow2_fft, inlined, may be called twice.
template <class T> struct DrRow {
    typename Cplx<T>::type *rows, *s; // the group's rows; this thread's row
    T *xs, *x;                        // the results: the group's, this row's
    int q, t, here;                   // row in the group, thread in the row, rows present
    int64_t r;                        // this thread's row
};
template <class T> __device__ __forceinline__ DrRow<T> dr_row(const DrArgs<T> &A, int64_t row0, unsigned char *smem)
{
    const DrAxis<T> &ax = A.ax;
    DrRow<T> w;
    w.rows = (typename Cplx<T>::type *)smem;
    w.xs = (T *)(w.rows + (ax.ls << ax.rpb_log));
    w.q = threadIdx.x >> ax.tpr_log;
    w.t = threadIdx.x & ((1 << ax.tpr_log) - 1);
    w.r = row0 + w.q;
    w.here = (int)min((int64_t)1 << ax.grp_log, A.nrows - row0);
    w.s = w.rows + w.q * ax.ls;
    w.x = w.xs + w.q * ax.lx;
    return w;
}

// fn(qq, i) for element i of every row qq of the group: by the row's own
// threads, or (SPREAD: dr2_kernel's few rows a group) by all the block's
// threads, consecutive ones on consecutive elements, so that no thread
// waits on a chain of loads alone.
template <bool SPREAD, class T, class F>
__device__ __forceinline__ void dr_each(const DrAxis<T> &ax, const DrRow<T> &w, F fn)
{
    const int n = ax.n;
    if (SPREAD) {
        for (int e = threadIdx.x; e < (n << ax.grp_log); e += DR_T) {
            const int qq = e / n;
            fn(qq, e - qq * n);
        }
    } else {
        for (int i = w.t; i < n; i += 1 << ax.tpr_log) fn(w.q, i);
    }
}
// dr_zeros on every row of the group.
template <bool SPREAD, class T> __device__ __forceinline__ void dr_each_zeros(const DrAxis<T> &ax, const DrRow<T> &w)
{
    if (SPREAD) {
        for (int qq = threadIdx.x; qq < 1 << ax.grp_log; qq += DR_T) dr_zeros((T *)(w.rows + qq * ax.ls), ax.N);
    } else if (w.t == 0) {
        dr_zeros((T *)w.s, ax.N);
    }
}

// Element i of the right-hand side's row at b (y = jy, z = kz): f plus the
// boundary terms, which only the box's faces have (edge: the row lies on a
// y or z face).
template <class T>
__device__ __forceinline__ T dr_rhs(const DrArgs<T> &A, int64_t b, int i, int jy, int kz, bool edge)
{
    const Grid<T> &g = A.g;
    const bool face = edge || i == 0 || i == g.nx - 1;
    return A.f[b + i] + (face ? box_terms(g, A.u_in, b + i, i, jy, kz) : T(0));
}
template <class T> __device__ __forceinline__ bool dr_edge(const Grid<T> &g, int jy, int kz)
{
    return jy == 0 || jy == g.ny - 1 || kz == 0 || kz == g.nz - 1;
}

template <class T, int IN, bool SCAN, bool SPREAD>
__device__ __forceinline__ void dr_rows_in(const DrArgs<T> &A, int64_t row0, const DrRow<T> &w, Red3 &acc)
{
    const DrAxis<T> &ax = A.ax;
    const int n = ax.n, N = ax.N;
    if (IN == DR_TRANS) {
        for (int e = threadIdx.x; e < (n << ax.grp_log); e += DR_T) {
            const int qq = e & ((1 << ax.grp_log) - 1), i = e >> ax.grp_log;
            const T v = qq < w.here ? dr_load(A.in + (int64_t)i * A.nrows + row0 + qq) : T(0);
            dr_put((T *)(w.rows + qq * ax.ls), N, i + 1, v);
        }
    } else if (IN == DR_ROWS && !SPREAD) {
        const T *src = A.in + w.r * n;
        for (int i = w.t; i < n; i += 1 << ax.tpr_log) dr_put((T *)w.s, N, i + 1, w.q < w.here ? dr_load(src + i) : T(0));
    } else if (IN == DR_ROWS) {
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            const T v = qq < w.here ? dr_load(A.in + (row0 + qq) * n + i) : T(0);
            dr_put((T *)(w.rows + qq * ax.ls), N, i + 1, v);
        });
    } else if (!SPREAD) {
        // f first, then f plus the boundary terms where a face has some, by
        // the thread that put the element: a branch per element kept f's
        // loads waiting one at a time.
        const Grid<T> &g = A.g;
        const int jy = (int)(w.r % g.ny), kz = (int)(w.r / g.ny), tpr = 1 << ax.tpr_log;
        const int64_t b = g.base + jy * g.sy + (int64_t)kz * g.sz;
        const bool here = w.q < w.here;
        for (int i = w.t; i < n; i += tpr) dr_put((T *)w.s, N, i + 1, here ? A.f[b + i] : T(0));
        auto face = [&](int i) { dr_put((T *)w.s, N, i + 1, dr_rhs(A, b, i, jy, kz, true)); };
        if (here && dr_edge(g, jy, kz)) {
            for (int i = w.t; i < n; i += tpr) face(i);
        } else if (here) {
            if (w.t == 0) face(0);
            if (((n - 1) & (tpr - 1)) == w.t) face(n - 1);
        }
    } else {
        // (box_terms reads u's ghost layer only, which no phase writes:
        // the x inverse writes the interior; so its non-coherent loads see
        // data no block of this launch changes.)
        const Grid<T> &g = A.g;
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            T v = T(0);
            if (qq < w.here) {
                const int64_t r = row0 + qq;
                const int jy = (int)(r % g.ny), kz = (int)(r / g.ny);
                const int64_t b = g.base + jy * g.sy + (int64_t)kz * g.sz;
                const T fv = A.f[b + i], bt = box_terms(g, A.u_in, b + i, i, jy, kz);
                if (SCAN) { // as scan_rhs_kernel sums it
                    const double c = (double)fv + (double)bt;
                    accumulate(acc, c, c * c, fabs(c));
                }
                v = fv + bt;
            }
            dr_put((T *)(w.rows + qq * ax.ls), N, i + 1, v);
        });
    }
    dr_each_zeros<SPREAD>(ax, w);
    __syncthreads();
}

// The transform of a power-of-two plan (dr_plan_pow2): Stockham passes of
// radix 16 and a smaller last one, every one inlined (no calls: see DrRow);
// the first reads the row from load where one is given (not from s).
template <class T, class Load = FromRow>
__device__ __forceinline__ void dr_pow2_fft(typename Cplx<T>::type *s, const DrAxis<T> &a, int t, Load load = Load())
{
    const int N = a.N, tpr = 1 << a.tpr_log;
    row_pass<16, 1, true>(s, N, 1, t, tpr, a.tw, load); // (N >= 16: a first pass of radix 16)
    // (no loop: where N is a constant, dr_kernel's CN, each pass's ns is one too)
    if (N >= 256) row_pass<16, 1, true>(s, N, 16, t, tpr, a.tw);
    if (N >= 4096) row_pass<16, 1, true>(s, N, 256, t, tpr, a.tw);
    const int ns = N >= 4096 ? 4096 : N >= 256 ? 256 : 16, rest = N / ns;
    if (rest == 8) row_pass<8, 2, true>(s, N, ns, t, tpr, a.tw);
    else if (rest == 4) row_pass<4, 4, true>(s, N, ns, t, tpr, a.tw);
    else if (rest == 2) row_pass<2, 8, true>(s, N, ns, t, tpr, a.tw);
}

// The transform (POW2: dr_pow2_fft; CN: dr_const_fft; else dr_fft; SPREAD:
// the element loops spread over the block, dr_each); then the spectrum scaled by sc
// (DR_SCALE) or divided by the eigenvalues, A.scale in the division
// (DR_DIVIDE), each value to put(qq, i, v).  DR_SOLVE is dr_rows_solve's.
template <class T, bool POW2, bool SPREAD, int CN = 0, class Put, class Load = FromRow>
__device__ __forceinline__ void dr_rows_transform(const DrArgs<T> &A, int64_t row0, const DrRow<T> &w, int mode,
                                                  T sc, Put put, Load load = Load())
{
    const DrAxis<T> &ax = A.ax;
    const int N = ax.N;
    static_assert(POW2 || std::is_same<Load, FromRow>::value, "dr_rows_transform: dr_fft reads the row");
    if constexpr (POW2) dr_pow2_fft<T>(w.s, ax, w.t, load);
    else if constexpr (CN > 0) dr_const_fft<T, CN>(w.s, w.t, ax.tw);
    else dr_fft<T>(w.s, ax, w.t, ax.tw);
    if (mode == DR_SCALE) {
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            put(qq, i, dr_split(w.rows + qq * ax.ls, N, i + 1, ax.tw) * sc);
        });
    } else {
        // rows are (kx, ky) or kx: fewer than 2^24 (axes of at most DR_NMAX)
        const unsigned na = (unsigned)A.nA;
        auto lrow = [&](int qq) {
            const unsigned rr = (unsigned)min(row0 + qq, A.nrows - 1);
            return A.evA[rr % na] + (A.evB ? A.evB[rr / na] : T(0));
        };
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            const T l = lrow(qq);
            put(qq, i, dr_split(w.rows + qq * ax.ls, N, i + 1, ax.tw) * (A.scale / (l + A.evK[i])));
        });
    }
    __syncthreads();
}
// The transform's results as the next transform's input, in the same rows:
// their odd extension.
template <bool SPREAD, class T> __device__ __forceinline__ void dr_rows_again(const DrAxis<T> &ax, const DrRow<T> &w)
{
    dr_each<SPREAD>(ax, w, [&](int qq, int i) { dr_put((T *)(w.rows + qq * ax.ls), ax.N, i + 1, w.xs[qq * ax.lx + i]); });
    dr_each_zeros<SPREAD>(ax, w);
    __syncthreads();
}
// The pass's transforms by mode, DR_SOLVE as two; put(qq, i, v) takes the
// last one's results (DrKeep: into xs).  FromRow: the first transform's
// input is the row in shared memory (dr_rows_in); else load(p) reads it,
// and a second transform reads its input from xs the same way, with no
// dr_rows_again (a row's threads alone: not SPREAD).
template <class T> struct DrKeep {
    const DrAxis<T> &ax;
    const DrRow<T> &w;
    __device__ void operator()(int qq, int i, T v) const { w.xs[qq * ax.lx + i] = v; }
};
// DR_SOLVE (POW2 only: DST-I is its own inverse, its 2/N in the scale;
// the general plan's kernels refuse it, dr_kernel's static_assert: a
// second dr_fft call site would break the runtime plan's, and the constant
// plan's, holding both transforms' registers, ran slower than two passes):
// DR_DIVIDE, the results as input again, DR_SCALE by 1 -- two calls, not
// a loop of two rounds, which held twice the registers.
template <class T, bool POW2, bool SPREAD, int CN = 0, class Put, class Load = FromRow>
__device__ __forceinline__ void dr_rows_solve(const DrArgs<T> &A, int64_t row0, const DrRow<T> &w, int mode, Put put,
                                              Load load = Load())
{
    constexpr bool own = std::is_same<Load, FromRow>::value;
    static_assert(own || !SPREAD, "dr_rows_solve: loads are a row's threads'");
    const DrKeep<T> keep{A.ax, w};
    if constexpr (POW2 && own) { // (one call site for the first transform of every mode)
        const bool solve = mode == DR_SOLVE;
        dr_rows_transform<T, POW2, SPREAD, CN>(A, row0, w, solve ? DR_DIVIDE : mode, A.scale,
                                               [&](int qq, int i, T v) {
                                                   if (solve) keep(qq, i, v);
                                                   else put(qq, i, v);
                                               });
        if (solve) {
            dr_rows_again<SPREAD>(A.ax, w);
            dr_rows_transform<T, POW2, SPREAD, CN>(A, row0, w, DR_SCALE, T(1), put);
        }
    } else if constexpr (POW2) { // the first transform reads through load
        if (mode == DR_SOLVE) {
            dr_rows_transform<T, POW2, SPREAD>(A, row0, w, DR_DIVIDE, A.scale, keep, load);
            const T *x = w.x;
            auto xi = [x](int i) { return x[i]; };
            dr_rows_transform<T, POW2, SPREAD>(A, row0, w, DR_SCALE, T(1), put, dr_load_from<T>(xi, A.ax.N));
        } else {
            dr_rows_transform<T, POW2, SPREAD>(A, row0, w, mode, A.scale, put, load);
        }
    } else { // the general plan: one transform, no DR_SOLVE (dr_kernel's static_assert)
        dr_rows_transform<T, POW2, SPREAD, CN>(A, row0, w, mode, A.scale, put, load);
    }
}

template <class T, int OUT, bool SPREAD>
__device__ __forceinline__ void dr_rows_out(const DrArgs<T> &A, int64_t row0, const DrRow<T> &w, bool write)
{
    const DrAxis<T> &ax = A.ax;
    const int n = ax.n;
    if (OUT == DR_TRANS) {
        for (int e = threadIdx.x; e < (n << ax.grp_log); e += DR_T) {
            const int qq = e & ((1 << ax.grp_log) - 1), i = e >> ax.grp_log;
            if (qq < w.here) A.out[(int64_t)i * A.nrows + row0 + qq] = w.xs[qq * ax.lx + i];
        }
    } else if (!SPREAD) {
        if (w.q < w.here) {
            const int tpr = 1 << ax.tpr_log;
            if (OUT == DR_ROWS) {
                T *dst = A.out + w.r * n;
                for (int i = w.t; i < n; i += tpr) dst[i] = w.x[i];
            } else if (write) {
                const Grid<T> &g = A.g;
                const int64_t b = g.base + (w.r % g.ny) * g.sy + (w.r / g.ny) * g.sz;
                for (int i = w.t; i < n; i += tpr) A.u_out[b + i] = w.x[i];
            }
        }
    } else if (OUT == DR_ROWS) {
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            if (qq < w.here) A.out[(row0 + qq) * n + i] = w.xs[qq * ax.lx + i];
        });
    } else if (write) {
        const Grid<T> &g = A.g;
        dr_each<SPREAD>(ax, w, [&](int qq, int i) {
            if (qq < w.here) {
                const int64_t r = row0 + qq;
                A.u_out[g.base + (r % g.ny) * g.sy + (r / g.ny) * g.sz + i] = w.xs[qq * ax.lx + i];
            }
        });
    }
}

// One pass of the 3D route: a group of rows per block.  POW2 (the axis's
// plan is dr_plan_pow2's): the inlined transform, and the last axis's
// forward and inverse transforms in one pass (DR_SOLVE); CN: a general
// plan's length as a constant (dr_const_fft).
template <class T, int IN, int OUT, int MODE, bool POW2, int CN>
__device__ __forceinline__ void dr_pass_rows(const DrArgs<T> &A)
{
    extern __shared__ __align__(16) unsigned char dr_smem[];
    Red3 none{0, 0, 0};
    const int64_t row0 = (int64_t)blockIdx.x << A.ax.rpb_log;
    const DrRow<T> w = dr_row(A, row0, dr_smem);
    static_assert(POW2 || MODE != DR_SOLVE, "dr_kernel: DR_SOLVE needs the power-of-two transform");
    const Grid<T> &g = A.g;
    const bool here = w.q < w.here;
    auto run = [&](auto load) {
        if (OUT == DR_TRANS) {
            dr_rows_solve<T, POW2, false, CN>(A, row0, w, MODE, DrKeep<T>{A.ax, w}, load);
            dr_rows_out<T, OUT, false>(A, row0, w, true);
        } else { // a row's results straight from the split to its row in memory
            T *dst = OUT == DR_ROWS ? A.out + w.r * A.ax.n
                                    : A.u_out + g.base + (w.r % g.ny) * g.sy + (w.r / g.ny) * g.sz;
            dr_rows_solve<T, POW2, false, CN>(A, row0, w, MODE, [&](int, int i, T v) {
                if (here) dst[i] = v;
            }, load);
        }
    };
    if constexpr (POW2 && IN == DR_ROWS) { // the first radix pass reads the row from memory itself
        const T *src = A.in + w.r * A.ax.n;
        run(dr_load_from<T>([&](int i) { return here ? dr_load(src + i) : T(0); }, A.ax.N));
    } else {
        dr_rows_in<T, IN, false, false>(A, row0, w, none);
        run(FromRow());
    }
}
// CN > 0: the plan's N as a constant, its row shape (dr_pow2_shape,
// dr_const_plan) in a copy of the arguments, so that the index arithmetic
// folds; the runtime general plan reads the arguments as they are (a copy
// there only costs registers).
constexpr int dr_min_blocks(bool pow2, int cn, size_t word)
{
    return pow2 ? (word == 4 ? DR_POW2_BLOCKS : 0) : cn > 0 ? (word == 4 ? DR_CONST_BLOCKS_F : DR_CONST_BLOCKS_D) : 0;
}
template <class T, int IN, int OUT, int MODE, bool POW2, int CN = 0>
__global__ void __launch_bounds__(DR_T, dr_min_blocks(POW2, CN, sizeof(T))) dr_kernel(const DrArgs<T> A)
{
    if constexpr (CN > 0) {
        DrArgs<T> C = A;
        if constexpr (POW2) {
            dr_pow2_shape(__builtin_ctz(CN), C.ax);
        } else {
            constexpr DrAxis<T> pl = dr_const_plan<T>(CN);
            C.ax = pl;
            C.ax.tw = A.ax.tw;
        }
        dr_pass_rows<T, IN, OUT, MODE, POW2, CN>(C);
    } else {
        dr_pass_rows<T, IN, OUT, MODE, POW2, 0>(A);
    }
}

// The 3D route's kernels for its axes' plans: with the plan's N as a
// constant where it has kernels of its own (a power of two, dr_pow2_shape,
// or DR_CONST_N; faster than with N read from the plan, the passes being
// bound by issued instructions), the runtime general plan's otherwise.
// k[0] x forward, k[1] y forward, k[2] z (DR_SOLVE, or forward and
// divided), k[3] z inverse (general plans only, else null), k[4] y
// inverse, k[5] x inverse.
template <class T> using DrKernel = void (*)(DrArgs<T>);
template <class T, int IN, int OUT, int MODE, int LN = 4> DrKernel<T> dr_pow2_kernel(int ln)
{
    if constexpr (LN > 12) return nullptr; // (dr_plan_pow2: N <= 4096)
    else return ln == LN ? dr_kernel<T, IN, OUT, MODE, true, 1 << LN> : dr_pow2_kernel<T, IN, OUT, MODE, LN + 1>(ln);
}
template <class T, int IN, int OUT, int MODE, size_t I = 0> DrKernel<T> dr_const_kernel(int N)
{
    if constexpr (I >= sizeof(DR_CONST_N) / sizeof(DR_CONST_N[0])) return nullptr;
    else return N == DR_CONST_N[I] ? dr_kernel<T, IN, OUT, MODE, false, DR_CONST_N[I]>
                                   : dr_const_kernel<T, IN, OUT, MODE, I + 1>(N);
}
// The axis's kernel for a mode (DR_SOLVE: power-of-two plans only): its
// plan's N as a constant where it has kernels of its own, else the runtime
// plan's.
template <class T, int IN, int OUT, int MODE> DrKernel<T> dr_axis_kernel(const DrAxis<T> &a)
{
    if (a.pow2) return dr_pow2_kernel<T, IN, OUT, MODE>(a.tpr_log + 4);
    if constexpr (MODE == DR_SOLVE) {
        return nullptr;
    } else {
        DrKernel<T> k = dr_const_kernel<T, IN, OUT, MODE>(a.N);
        return k ? k : dr_kernel<T, IN, OUT, MODE, false>;
    }
}
template <class T, int IN, int OUT> DrKernel<T> dr_scale_kernel(const DrAxis<T> &a)
{
    return dr_axis_kernel<T, IN, OUT, DR_SCALE>(a);
}
template <class T> struct DrPasses {
    DrKernel<T> k[6];
    explicit DrPasses(const DrAxis<T> (&a)[3])
    {
        k[0] = dr_scale_kernel<T, DR_USER, DR_TRANS>(a[0]);
        k[1] = dr_scale_kernel<T, DR_ROWS, DR_TRANS>(a[1]);
        k[2] = a[2].pow2 ? dr_axis_kernel<T, DR_ROWS, DR_ROWS, DR_SOLVE>(a[2])
                         : dr_axis_kernel<T, DR_ROWS, DR_ROWS, DR_DIVIDE>(a[2]);
        k[3] = a[2].pow2 ? nullptr : dr_scale_kernel<T, DR_ROWS, DR_ROWS>(a[2]);
        k[4] = dr_scale_kernel<T, DR_TRANS, DR_ROWS>(a[1]);
        k[5] = dr_scale_kernel<T, DR_TRANS, DR_USER>(a[0]);
    }
};

// A total into res[at], res[at + 1], res[at + 2] (RES_SCAN, RES_NORM).
__device__ __forceinline__ void put_total(double *res, int at, const Red3 &t)
{
    res[at] = t.s0;
    res[at + 1] = t.s1;
    res[at + 2] = t.m;
}

// Whether the right-hand side's sums (s0, s1, max) let a solve write u: all
// finite, max |b| within RHS_MIN .. RHS_MAX (or 0) -- what pgpu_solve checks
// on the host before any other route touches u (Solver::check_range and
// the finite test).
__device__ __forceinline__ bool dr_data_ok(const Red3 &t)
{
    const bool range = !(isfinite(t.m) && t.m > RHS_MAX) && !(t.m > 0 && t.m < RHS_MIN);
    return range && isfinite(t.s0) && isfinite(t.s1);
}

// The 2D all-Dirichlet solve, n+1 a power of two on both axes
// (dr_plan_pow2), as one cooperative launch (every block resident,
// grid-wide barriers between the phases):
//   0 x forward   f's rows plus boundary terms -> T1[kx][y]     (CHECK: the scan's partials)
//   1 y solve     T1's rows: forward, divided, inverse, in place
//   2 x inverse   T1 (transposed) -> u's rows                    (CHECK: only if the data pass)
//   CHECK: the residual's partials, then block 0's totals into Reducer's
//   slots: res[RES_SCAN ..] the scan's (sum b, sum b^2, max |b|; written
//   before the x inverse), res[RES_NORM ..] the residual's.
// So a small grid is one launch, and with CHECK the default path's scan,
// its guard that non-finite data leave u untouched, and the report's
// residual are folded into it.  Where the device cannot launch it, each
// phase is a launch of its own (dr2_phase_kernel, no CHECK).
template <class T> struct Dr2Args {
    DrArgs<T> fwd, mid, inv; // the three phases
    double *part;            // CHECK: 3 doubles per block for the scan, then as many for the residual
    double *res;
};

// Phase ph over every group of rows, the grid's blocks G striding them.
template <class T, bool CHECK>
__device__ __forceinline__ void dr2_phase(const Dr2Args<T> &A, int ph, int64_t G, Red3 &acc, bool ok)
{
    extern __shared__ __align__(16) unsigned char dr_smem[];
    const DrArgs<T> &P = ph == 0 ? A.fwd : ph == 1 ? A.mid : A.inv;
    const int64_t gs = (int64_t)1 << P.ax.grp_log;
    for (int64_t r0 = blockIdx.x * gs; r0 < P.nrows; r0 += G * gs) {
        const DrRow<T> w = dr_row(P, r0, dr_smem);
        if (ph == 0) dr_rows_in<T, DR_USER, CHECK, true>(P, r0, w, acc);
        else if (ph == 1) dr_rows_in<T, DR_ROWS, false, true>(P, r0, w, acc);
        else dr_rows_in<T, DR_TRANS, false, true>(P, r0, w, acc);
        dr_rows_solve<T, true, true>(P, r0, w, ph == 1 ? DR_SOLVE : DR_SCALE, DrKeep<T>{P.ax, w});
        if (ph == 0) dr_rows_out<T, DR_TRANS, true>(P, r0, w, true);
        else if (ph == 1) dr_rows_out<T, DR_ROWS, true>(P, r0, w, true);
        else dr_rows_out<T, DR_USER, true>(P, r0, w, ok);
        __syncthreads();
    }
}

template <class T> __global__ void __launch_bounds__(DR_T) dr2_phase_kernel(const Dr2Args<T> A, int ph)
{
    Red3 none{0, 0, 0};
    dr2_phase<T, false>(A, ph, gridDim.x, none, true);
}

// The default path's checks folded into a one-launch solve (dr2_kernel,
// fdm2_kernel): every block sums the scan's partials (3 doubles per block
// at part) in the same order, so that all reach one verdict, dr_data_ok;
// block 0 puts the totals into res[RES_SCAN ..].
template <int NT> __device__ __forceinline__ bool fold_verdict(const double *part, int64_t G, double *res)
{
    __shared__ int ok_s;
    Red3 t{0, 0, 0};
    for (int64_t b = threadIdx.x; b < G; b += NT)
        t = red_combine(t, Red3{dr_load(part + 3 * b), dr_load(part + 3 * b + 1), dr_load(part + 3 * b + 2)});
    t = block_reduce(t);
    if (threadIdx.x == 0) {
        ok_s = dr_data_ok(t);
        if (blockIdx.x == 0) put_total(res, RES_SCAN, t);
    }
    __syncthreads();
    return ok_s != 0;
}

// ... and, once u is written (every block, after the verdict passed), the
// report's residual b - A u, formed in double (residual_kernel's form): its
// partials after the scan's, block 0's totals into res[RES_NORM ..].
template <class T, int NT>
__device__ __forceinline__ void fold_residual(cooperative_groups::grid_group &grid, const Grid<T> &g, const T *u,
                                              const T *f, double *part, int64_t G, double *res)
{
    grid.sync();
    Red3 racc{0, 0, 0};
    const int64_t npts = (int64_t)g.nx * g.ny;
    for (int64_t e = blockIdx.x * (int64_t)NT + threadIdx.x; e < npts; e += G * NT) {
        const int i = (int)(e % g.nx), j = (int)(e / g.nx);
        const int64_t p = g.base + j * g.sy + i;
        const double res = point_residual(g, u, f, p, i, j, 0);
        accumulate(racc, res, res * res, fabs(res));
    }
    write_partial(part + 3 * G, racc);
    grid.sync();
    if (blockIdx.x != 0) return;
    Red3 t{0, 0, 0};
    for (int64_t b = threadIdx.x; b < G; b += NT)
        t = red_combine(t, Red3{dr_load(part + 3 * (G + b)), dr_load(part + 3 * (G + b) + 1),
                                dr_load(part + 3 * (G + b) + 2)});
    t = block_reduce(t);
    if (threadIdx.x == 0) put_total(res, RES_NORM, t);
}

template <class T, bool CHECK>
__global__ void __launch_bounds__(DR_T) dr2_kernel(const Dr2Args<T> A)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const int64_t G = gridDim.x;
    Red3 acc{0, 0, 0};
    bool ok = true;
    // (a loop, so that the phases share one copy of the transform's code:
    // a block runs each phase's once, and it waits on instruction fetch)
#pragma unroll 1
    for (int ph = 0; ph < 3; ++ph) {
        if (CHECK && ph == 2) ok = fold_verdict<DR_T>(A.part, G, A.res);
        dr2_phase<T, CHECK>(A, ph, G, acc, ok);
        if (CHECK && ph == 0) write_partial(A.part, acc);
        if (ph < 2) grid.sync();
    }
    // (the verdict is the grid's: every block or none waits in fold_residual)
    if (CHECK && ok) fold_residual<T, DR_T>(grid, A.inv.g, A.inv.u_out, A.inv.f, A.part, G, A.res);
}

// Row strides in shared memory that put the rows of a warp's transposed
// accesses on different banks: B elements of T per 128 bytes, W = B / rpb
// each.
template <class T> __host__ __device__ constexpr void dr_strides(DrAxis<T> &a)
{
    const int B = 128 / (int)sizeof(T), W = B >> a.rpb_log;
    a.grp_log = a.rpb_log;
    a.ls = a.N + (a.N >> 4) + 1;
    while (W >= 2 && a.ls % W != W / 2) ++a.ls; // 2 ls = W times an odd number
    a.lx = a.n;
    while (W >= 1 && a.lx % (2 * W) != W) ++a.lx; // lx = W times an odd number
}

// The row plan for length n (N = n+1): radices (16s first, then 27, 9, 3 and
// the other odd primes, the order dr_fft runs them in), threads per row so
// that no thread holds more than dr_g(R) butterflies in a pass (at most 256
// threads), and the shared memory strides.  False where N has a prime factor
// above 19, exceeds DR_NMAX or would need more threads per row (20 such N up
// to 4097, e.g. 4095: radix 13 leaves 315 butterflies).
template <class T> __host__ __device__ constexpr bool dr_plan(int n, DrAxis<T> &a)
{
    a = DrAxis<T>{};
    a.n = n;
    a.N = n + 1;
    if (n < 1 || a.N > DR_NMAX) return false;
    int rest = a.N, np = 0;
    while (rest % 2 == 0 && np < DR_MAXP) {
        int R = 1;
        while (rest % 2 == 0 && R < 16) { R *= 2; rest /= 2; }
        a.rad |= (unsigned long long)R << (5 * np++);
    }
    const int primes[] = {27, 9, 3, 5, 7, 11, 13, 17, 19};
    for (int p : primes)
        while (rest % p == 0 && np < DR_MAXP) {
            a.rad |= (unsigned long long)p << (5 * np++);
            rest /= p;
        }
    if (rest != 1) return false;
    a.np = np;
    { // dr_fft runs the radices in this order and skips none
        const int order[] = {16, 8, 4, 2, 27, 9, 3, 5, 7, 11, 13, 17, 19};
        int p = 0;
        for (int R : order)
            while (p < np && (int)((a.rad >> (5 * p)) & 31) == R) ++p;
        if (p != np) return false;
    }
    int tl = 4; // 16 threads per row at least
    for (;; ++tl) {
        if (tl > 8) return false;
        bool ok = true;
        for (int p = 0; p < np; ++p) {
            const int R = (int)(a.rad >> (5 * p)) & 31, m = a.N / R;
            ok = ok && (m + (1 << tl) - 1) >> tl <= dr_g(R);
        }
        if (ok) break;
    }
    a.tpr_log = tl;
    a.rpb_log = 8 - tl;
    dr_strides(a);
    return true;
}
// The plan of the inlined transform (dr_pow2_fft): N a power of two from
// 16 to 4096, N/16 threads per row, each holding one radix-16 butterfly.
// The row shape of that plan for N = 2^ln (its kernels' CN = 2^ln: the same
// values as compile-time constants).
template <class T> __host__ __device__ constexpr void dr_pow2_shape(int ln, DrAxis<T> &a)
{
    a.N = 1 << ln;
    a.n = a.N - 1;
    a.tpr_log = ln - 4;
    a.rpb_log = 8 - a.tpr_log;
    a.pow2 = true;
    dr_strides(a);
}
template <class T> bool dr_plan_pow2(int n, DrAxis<T> &a)
{
    a = DrAxis<T>{};
    const int N = n + 1;
    if (N < 16 || N > 4096 || (N & (N - 1))) return false;
    int ln = 4;
    while ((1 << ln) < N) ++ln;
    dr_pow2_shape(ln, a);
    return true;
}
template <class T> size_t dr_smem_bytes(const DrAxis<T> &a)
{
    return ((size_t)a.ls * sizeof(typename Cplx<T>::type) + (size_t)a.lx * sizeof(T)) << a.rpb_log;
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 31 "src/poisson_gpu.cu"
#endif
// fft_fdm.h -- small 2D grids by fast diagonalisation: dense transforms in one launch (a grid barrier or a cluster)
#ifdef PGPU_SRC_LINES
#line 2 "src/fft_fdm.h"
#endif


namespace pgpu {

// A 2D grid of at most FDM_NMAX nodes a side, any faces: the operator is
// Ax (x) I + I (x) Ay, and each 1D operator is Q diag(lam) Q^T with Q
// orthonormal (sines, cosines or the real Fourier basis: fdm_basis), so the
// solution of A u = b, with u and b as ny x nx arrays U and B, is
//   U = Qy [ (Qy^T B Qx) / (lam_y[j] + lam_x[k]) ] Qx^T
// (the fast diagonalisation method of Lynch, Rice and Thomas, 1964) -- four
// dense products, as two phases of one cooperative launch (fdm2_kernel),
// each block taking rows j (strips of one row):
//   0  T1[j, :] = (Qy^T[j, :] B) Qx, divided by lam_y[j] + lam_x
//   1  u[j, :]  = (Qy[j, :] T1) Qx^T
// A row needs all of B (of T1): one grid barrier between the phases and none
// inside them.  At these sizes a solve is a handful of memory latencies, not
// arithmetic (2 (nx + ny) multiply-adds a point): every thread loads its
// FDM_KB values of both products of a row at once, and where the columns are
// fewer than the threads the sum over k is split into slices (fdm_mm).  A zero
// eigenvalue (both axes Neumann or periodic) drops its mode: u of mean zero,
// as the other routes leave it.  Sums run in double, in a fixed order.

template <class T> struct FdmArgs {
    Grid<T> g;          // the caller's layout of u and f
    const T *f, *u_in;  // b = f + the boundary terms (u's ghosts)
    T *u_out;           // written in phase 1 (with CHECK: only if the data pass)
    T *T1;              // ny x nx: the divided spectrum
    const T *P[2][2];   // phase ph: left factor (ny x ny) and right factor (nx x nx), row-major
    const T *lx, *ly;   // eigenvalues per axis
    int nx, ny;
    double *part, *res; // CHECK: fold_verdict's and fold_residual's
};

// A thread's part of a product out(c) = sum_k a(k) b(k, c), c < nc <= FDM_T:
// column c = t % nc, slice s = t / nc of the S slices of k, its range
// kb .. ke; its first FDM_KB values of a and b are loaded ahead (fdm_load),
// so that a row's loads from global memory all wait together.
struct FdmPart {
    int c, s, S, kb, ke;
};
__device__ __forceinline__ FdmPart fdm_part(int K, int nc)
{
    FdmPart p;
    p.S = max(1, min(FDM_T / nc, K));
    p.c = threadIdx.x % nc;
    p.s = threadIdx.x / nc;
    const int KS = (K + p.S - 1) / p.S;
    p.kb = p.s * KS;
    p.ke = p.s < p.S ? min(K, p.kb + KS) : p.kb;
    return p;
}
template <class GA, class GB>
__device__ __forceinline__ void fdm_load(const FdmPart &p, int k0, GA ga, GB gb, double (&a)[FDM_KB],
                                         double (&b)[FDM_KB])
{
#pragma unroll
    for (int i = 0; i < FDM_KB; ++i) {
        const bool in = k0 + i < p.ke;
        b[i] = in ? gb(k0 + i, p.c) : 0.0;
        a[i] = in ? ga(k0 + i) : 0.0;
    }
}
// out(c, the sum) for every column, a and b holding the first batch; the
// slices' sums added through sred (FDM_T doubles) in slice order.
template <class GA, class GB, class O>
__device__ __forceinline__ void fdm_mm(const FdmPart &p, int nc, double *sred, double (&a)[FDM_KB],
                                       double (&b)[FDM_KB], GA ga, GB gb, O out)
{
    double acc = 0;
    for (int k0 = p.kb; k0 < p.ke; k0 += FDM_KB) {
        if (k0 != p.kb) fdm_load(p, k0, ga, gb, a, b);
#pragma unroll
        for (int i = 0; i < FDM_KB; ++i) acc = fma(a[i], b[i], acc);
    }
    if (p.S == 1) {
        if (p.s == 0) out(p.c, acc);
        __syncthreads();
        return;
    }
    if (p.s < p.S) sred[p.s * nc + p.c] = acc;
    __syncthreads();
    if (threadIdx.x < nc) {
        double v = 0;
        for (int q = 0; q < p.S; ++q) v += sred[q * nc + threadIdx.x];
        out(threadIdx.x, v);
    }
    __syncthreads();
}

// Row j of phase ph: (P[ph][0] row j times X) times P[ph][1], X = b or T1.
// CHECK, phase 0: the scan's sums of b over row j (each block reads all of
// b; it sums its own rows).
template <class T, bool CHECK>
__device__ __forceinline__ void fdm_row(const FdmArgs<T> &A, int ph, int j, double *sC, double *sR, Red3 &acc,
                                        bool write)
{
    const int nx = A.nx, ny = A.ny;
    const Grid<T> &g = A.g;
    const T *Py = A.P[ph][0] + (int64_t)j * ny, *Px = A.P[ph][1];
    auto ga1 = [&](int k) { return (double)Py[k]; };
    auto gb1 = [&](int y, int x) -> double {
        if (ph) return (double)dr_load(A.T1 + (int64_t)y * nx + x);
        const int64_t p = g.base + (int64_t)y * g.sy + x;
        const T fv = A.f[p], bt = box_terms(g, A.u_in, p, x, y, 0);
        if (CHECK && y == j) { // as scan_rhs_kernel sums it
            const double c = (double)fv + (double)bt;
            accumulate(acc, c, c * c, fabs(c));
        }
        return (double)(fv + bt);
    };
    auto ga2 = [&](int k) { return sC[k]; };
    auto gb2 = [&](int x, int c) { return (double)Px[(int64_t)x * nx + c]; };
    const FdmPart p1 = fdm_part(ny, nx), p2 = fdm_part(nx, nx);
    double a1[FDM_KB], b1[FDM_KB], a2[FDM_KB], b2[FDM_KB];
    fdm_load(p1, p1.kb, ga1, gb1, a1, b1);
    fdm_load(p2, p2.kb, [](int) { return 0.0; }, gb2, a2, b2); // (a2: sC, once the first product is there)
    fdm_mm(p1, nx, sR, a1, b1, ga1, gb1, [&](int c, double v) { sC[c] = v; });
#pragma unroll
    for (int i = 0; i < FDM_KB; ++i) a2[i] = p2.kb + i < p2.ke ? sC[p2.kb + i] : 0.0;
    fdm_mm(p2, nx, sR, a2, b2, ga2, gb2, [&](int c, double v) {
        if (ph == 0) {
            const double d = (double)A.ly[j] + (double)A.lx[c];
            A.T1[(int64_t)j * nx + c] = d != 0 ? (T)(v / d) : T(0);
        } else if (write) {
            A.u_out[g.base + (int64_t)j * g.sy + c] = (T)v;
        }
    });
}

// Phase ph over every row, the grid's G blocks striding them.
template <class T, bool CHECK>
__device__ __forceinline__ void fdm_phase(const FdmArgs<T> &A, int ph, Red3 &acc, bool write)
{
    __shared__ double sC[FDM_NMAX], sR[FDM_T];
    for (int j = blockIdx.x; j < A.ny; j += gridDim.x) fdm_row<T, CHECK>(A, ph, j, sC, sR, acc, write);
}

// The solve in one cooperative launch; CHECK: the default path's checks
// folded in, as in dr2_kernel (fold_verdict, fold_residual).
template <class T, bool CHECK> __global__ void __launch_bounds__(FDM_T) fdm2_kernel(const FdmArgs<T> A)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const int64_t G = gridDim.x;
    Red3 acc{0, 0, 0};
    fdm_phase<T, CHECK>(A, 0, acc, true);
    if (CHECK) write_partial(A.part, acc);
    grid.sync();
    const bool ok = CHECK ? fold_verdict<FDM_T>(A.part, G, A.res) : true;
    fdm_phase<T, CHECK>(A, 1, acc, ok);
    if (CHECK && ok) fold_residual<T, FDM_T>(grid, A.g, A.u_out, A.f, A.part, G, A.res);
}

// Where the device refuses the cooperative launch: each phase a launch.
template <class T> __global__ void __launch_bounds__(FDM_T) fdm2_phase_kernel(const FdmArgs<T> A, int ph)
{
    Red3 none{0, 0, 0};
    fdm_phase<T, false>(A, ph, none, true);
}

// The same solve in one thread-block cluster, where the device has them
// (sm_90 on) and both sides are at most FDMC_NMAX: C blocks, block q owning
// the R rows j0 = q R .. of the products that need all rows, one exchange
// of the spectrum between the blocks through distributed shared memory:
//   0  D = Qy^T[rows, :] b          every block reads all of b
//   1  S = (D Qx) / (lam_y + lam_x)  pushed into every block's copy of S
//      (one cluster barrier)
//   2  W = Qy[rows, :] S
//   3  u[rows, :] = W Qx^T
// Each block holds the right factors and b as matrices (FDMC_NMAX doubles a
// row) and its rows of the left factors as [k][FDMC_RM] tables (FdmcTables,
// built on the host for the cluster's size), all in shared memory by
// asynchronous copies; thread (c, s) of a product sums column c over its
// slice s of k, the slices added in slice order (fdmc_reduce).  No grid
// barrier and no round trip through global memory: what a small solve
// waits on is the launch, one read of the data and the steps' barriers.
// CHECK folds in the default path's checks as fdm2_kernel does: every
// block sums the scan over all of b in one order, so that all reach one
// verdict; the residual's partials go to block 0, which adds them in block
// order.  Sums in double, in a fixed order.
struct FdmcTables {
    const double *LA, *LB; // per block, FDMC_LROWS x FDMC_RM: Qy^T's and Qy's rows j0 .. j0 + R (zero past them)
    const double *RX, *RXT; // Qx and Qx^T, nx rows of FDMC_NMAX (zero past nx)
    const double *lx, *ly;  // the eigenvalues
    int C, R;               // blocks, rows a block
};
constexpr size_t FDMC_SMEM = sizeof(double) * ((size_t)3 * FDMC_LROWS * FDMC_RM + (size_t)FDMC_T * FDMC_RM +
                                               (size_t)5 * FDMC_NMAX * FDMC_NMAX + 3 * FDMC_C);

// The launch of one cluster of C blocks.
static void fdmc_config(int C, cudaLaunchConfig_t &lc, cudaLaunchAttribute (&at)[1], cudaStream_t st)
{
    lc.gridDim = dim3((unsigned)C);
    lc.blockDim = dim3(FDMC_T);
    lc.dynamicSmemBytes = FDMC_SMEM;
    lc.stream = st;
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = (unsigned)C;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    lc.attrs = at;
    lc.numAttrs = 1;
}

__device__ __forceinline__ void fdmc_cluster_arrive_relaxed()
{
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void fdmc_cluster_wait() { asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory"); }

// The slices' sums of acc (thread (c, s), s < S) through red, added in slice
// order; out(r, c, v) by the threads of slices r, r - S, ... for r < nr.
template <class O>
__device__ __forceinline__ void fdmc_reduce(double *red, const double (&acc)[FDMC_RM], int nr, int nx, int S, int c,
                                            int s, O out)
{
    if (s < S)
#pragma unroll
        for (int r = 0; r < FDMC_RM; ++r)
            if (r < nr) red[(s * FDMC_RM + r) * nx + c] = acc[r];
    __syncthreads();
    if (s < S)
        for (int r = s; r < nr; r += S) {
            double v = red[r * nx + c];
            for (int q = 1; q < S; ++q) v += red[(q * FDMC_RM + r) * nx + c];
            out(r, v);
        }
    __syncthreads();
}

template <class T, bool CHECK>
__global__ void __launch_bounds__(FDMC_T, 1) fdmc_kernel(const FdmArgs<T> A, const FdmcTables X)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cl = cg::this_cluster();
    extern __shared__ __align__(16) double fdmc_smem[];
    constexpr int NM = FDMC_NMAX, RM = FDMC_RM, MS = NM * NM;
    double *sLA = fdmc_smem, *sLB = sLA + FDMC_LROWS * RM, *sD = sLB + FDMC_LROWS * RM;
    double *red = sD + FDMC_LROWS * RM, *sM = red + FDMC_T * RM, *sPart = sM + 4 * MS; // sM: b, Qx, S, Qx^T
    T *sF = (T *)(sPart + 3 * FDMC_C);                                                  // f as it comes
    __shared__ int ok_s;
    fdmc_cluster_arrive_relaxed(); // (every block runs before any writes into another's memory)
    const int b = (int)cl.block_rank(), C = X.C, R = X.R;
    const int nx = A.nx, ny = A.ny, t = threadIdx.x;
    const int j0 = b * R, nr = max(0, min(ny - j0, R));
    const int S = FDMC_T / nx, c = t % nx, s = t / nx;
    const int KSy = (ny + S - 1) / S, KSx = (nx + S - 1) / S;
    const int kby = s < S ? min(ny, s * KSy) : ny, cy = s < S ? min(ny, kby + KSy) - kby : 0;
    const int kbx = s < S ? min(nx, s * KSx) : nx, cx = s < S ? min(nx, kbx + KSx) - kbx : 0;
    const Grid<T> &g = A.g;
    constexpr int NW = FDMC_T / 32, NI = (NM + NW - 1) / NW, NJ = (NM + 31) / 32;
    const int w = t >> 5, l = t & 31;
    { // the tables and f, by asynchronous copies
        for (int y = w; y < ny; y += NW)
            for (int x = l; x < nx; x += 32)
                __pipeline_memcpy_async(sF + y * NM + x, A.f + g.base + (int64_t)y * g.sy + x, sizeof(T));
        const int nq = nx * NM / 2, nl = FDMC_LROWS * RM / 2;
        const double *la = X.LA + (size_t)b * FDMC_LROWS * RM, *lb = X.LB + (size_t)b * FDMC_LROWS * RM;
        for (int e = t; e < nq; e += FDMC_T) {
            __pipeline_memcpy_async(sM + MS + 2 * e, X.RX + 2 * e, 16);
            __pipeline_memcpy_async(sM + 3 * MS + 2 * e, X.RXT + 2 * e, 16);
        }
        for (int e = t; e < nl; e += FDMC_T) {
            __pipeline_memcpy_async(sLA + 2 * e, la + 2 * e, 16);
            __pipeline_memcpy_async(sLB + 2 * e, lb + 2 * e, 16);
        }
        __pipeline_commit();
    }
    for (int e = t; e < FDMC_LROWS * RM; e += FDMC_T) sD[e] = 0.0;
    // The boundary terms of the points on the box's edge, a thread each,
    // while the copies fly: rows 0 and ny - 1, then columns 0 and nx - 1.
    const int ne = (ny == 1 ? nx : 2 * nx) + max(0, ny - 2) * (nx == 1 ? 1 : 2);
    int ex[FDMC_EDGE], ey[FDMC_EDGE];
    T ebt[FDMC_EDGE];
#pragma unroll
    for (int q = 0; q < FDMC_EDGE; ++q) {
        const int e = t + q * FDMC_T;
        ex[q] = -1;
        if (e >= ne) continue;
        if (e < nx) ex[q] = e, ey[q] = 0;
        else if (ny > 1 && e < 2 * nx) ex[q] = e - nx, ey[q] = ny - 1;
        else {
            const int k = e - (ny == 1 ? nx : 2 * nx), side = nx == 1 ? 0 : k & 1;
            ex[q] = side ? nx - 1 : 0;
            ey[q] = 1 + (nx == 1 ? k : k >> 1);
        }
        ebt[q] = box_terms(g, A.u_in, g.base + (int64_t)ey[q] * g.sy + ex[q], ex[q], ey[q], 0);
    }
    __pipeline_wait_prior(0);
    __syncthreads();
    // b = f plus the boundary terms (all of b in every block): the inner
    // points a warp a row, then the edge's; the scan as scan_rhs_kernel
    // sums each point
    Red3 acc{0, 0, 0};
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
        for (int h = 0; h < NJ; ++h) {
            const int y = w + NW * i, x = l + 32 * h;
            if (y > 0 && y < ny - 1 && x > 0 && x < nx - 1) {
                const T fv = sF[y * NM + x];
                if (CHECK) accumulate(acc, (double)fv, (double)fv * (double)fv, fabs((double)fv));
                sM[y * NM + x] = (double)fv;
            }
        }
#pragma unroll
    for (int q = 0; q < FDMC_EDGE; ++q)
        if (ex[q] >= 0) {
            const T fv = sF[ey[q] * NM + ex[q]];
            if (CHECK) {
                const double cc = (double)fv + (double)ebt[q];
                accumulate(acc, cc, cc * cc, fabs(cc));
            }
            sM[ey[q] * NM + ex[q]] = (double)(fv + ebt[q]);
        }
    if (CHECK) { // the verdict, the same in every block
        acc = block_reduce(acc);
        if (t == 0) {
            ok_s = dr_data_ok(acc);
            if (b == 0) put_total(A.res, RES_SCAN, acc);
        }
    }
    __syncthreads();
    const bool ok = CHECK ? ok_s != 0 : true;
    fdmc_cluster_wait();
#pragma unroll 1
    for (int ph = 0; ph < 4; ++ph) {
        if (ph == 2) cl.sync(); // S from every block
        const double *L = ph == 0 ? sLA : ph == 2 ? sLB : sD;
        const int kb = ph & 1 ? kbx : kby, cnt = ph & 1 ? cx : cy;
        double sum[RM];
#pragma unroll
        for (int r = 0; r < RM; ++r) sum[r] = 0;
        const double *mp = sM + ph * MS + kb * NM + c, *lp = L + kb * RM;
#pragma unroll
        for (int i = 0; i < FDMC_KB; ++i) {
            const double m = i < cnt ? mp[i * NM] : 0.0;
#pragma unroll
            for (int r = 0; r < RM; ++r) sum[r] = fma(lp[i * RM + r], m, sum[r]);
        }
        fdmc_reduce(red, sum, nr, nx, S, c, s, [&](int r, double v) {
            if (ph == 0 || ph == 2) {
                sD[c * RM + r] = v;
            } else if (ph == 1) {
                const double d = X.ly[j0 + r] + X.lx[c], w = d != 0 ? v / d : 0.0;
                double *dst = sM + 2 * MS + (j0 + r) * NM + c;
                for (int q = 0; q < C; ++q) *cl.map_shared_rank(dst, q) = w;
            } else if (ok) {
                A.u_out[g.base + (int64_t)(j0 + r) * g.sy + c] = (T)v;
            }
        });
    }
    if (!CHECK || !ok) return;
    cl.sync(); // u written by every block
    // the report's residual b - A u on this block's rows (fold_residual's form)
    Red3 racc{0, 0, 0};
    for (int e = t; e < nr * nx; e += FDMC_T) {
        const int r = e / nx, i = e - r * nx, j = j0 + r;
        const int64_t p = g.base + (int64_t)j * g.sy + i;
        const double res = point_residual(g, (const T *)A.u_out, A.f, p, i, j, 0);
        accumulate(racc, res, res * res, fabs(res));
    }
    racc = block_reduce(racc);
    if (t == 0) {
        double *p0 = cl.map_shared_rank(sPart, 0);
        p0[3 * b] = racc.s0;
        p0[3 * b + 1] = racc.s1;
        p0[3 * b + 2] = racc.m;
    }
    cl.sync();
    if (b == 0 && t == 0) {
        Red3 v{0, 0, 0};
        for (int q = 0; q < C; ++q) v = red_combine(v, Red3{sPart[3 * q], sPart[3 * q + 1], sPart[3 * q + 2]});
        put_total(A.res, RES_NORM, v);
    }
#else
    __trap(); // (FftSolver::init_fdm takes this route only in code built for sm_90 on)
#endif
}

// The cluster's tables for faces of the basis q (fdm_basis's, per axis) and
// C blocks; empty where the grid is too large for the route.
static void fdmc_tables(const std::vector<double> (&q)[2], int64_t nx, int64_t ny, int C, std::vector<double> &la,
                        std::vector<double> &lb, std::vector<double> &rx, std::vector<double> &rxt)
{
    const int64_t R = (ny + C - 1) / C, L = FDMC_LROWS * FDMC_RM;
    la.assign((size_t)(FDMC_C * L), 0.0);
    lb.assign((size_t)(FDMC_C * L), 0.0);
    rx.assign((size_t)(nx * FDMC_NMAX), 0.0);
    rxt.assign((size_t)(nx * FDMC_NMAX), 0.0);
    for (int b = 0; b < C; ++b)
        for (int64_t r = 0; r < R && b * R + r < ny; ++r)
            for (int64_t k = 0; k < ny; ++k) {
                const int64_t j = b * R + r;
                la[(size_t)(b * L + k * FDMC_RM + r)] = q[1][(size_t)(k * ny + j)]; // Qy^T[j][k]
                lb[(size_t)(b * L + k * FDMC_RM + r)] = q[1][(size_t)(j * ny + k)]; // Qy[j][k]
            }
    for (int64_t i = 0; i < nx; ++i)
        for (int64_t k = 0; k < nx; ++k) {
            rx[(size_t)(i * FDMC_NMAX + k)] = q[0][(size_t)(i * nx + k)];  // Qx[i][k]
            rxt[(size_t)(i * FDMC_NMAX + k)] = q[0][(size_t)(k * nx + i)]; // Qx^T[i][k]
        }
}

// The 1D operator of n nodes with faces lo and hi as Q diag(lam) Q^T: Q's
// columns (q[i * n + k], orthonormal) and lam, the eigenvalues of the
// transforms of the same faces (fft_eigen), hence the same discretisation:
//   Dirichlet-Dirichlet  sin(pi (i+1)(k+1) / (n+1))
//   Neumann-Neumann      cos(pi k (i+1/2) / n)
//   Dirichlet-Neumann    sin(pi (2k+1)(i+1) / (2n+1)); Neumann-Dirichlet mirrored
//   periodic             1, then cos and sin of 2 pi m i / n for m = (k+1)/2
// (a node's Dirichlet ghost one spacing away, a Neumann face half a spacing).
static void fdm_basis(int lo, int hi, int64_t n, double h, std::vector<double> &q, std::vector<double> &lam)
{
    const double pi = M_PI;
    q.assign((size_t)(n * n), 0.0);
    lam.assign((size_t)n, 0.0);
    int kind = FFT_RHC;
    if (lo != PGPU_BC_PERIODIC) {
        kind = lo != hi ? (lo == PGPU_BC_DIRICHLET ? FFT_DN : FFT_ND) : lo == PGPU_BC_NEUMANN ? FFT_DCT2 : FFT_DST1;
    }
    for (int64_t k = 0; k < n; ++k) {
        lam[(size_t)k] = fft_eigen(kind, n, h, k);
        double norm = 0;
        for (int64_t i = 0; i < n; ++i) {
            const double di = (double)i, dk = (double)k, dn = (double)n;
            double v;
            if (kind == FFT_DST1) v = std::sin(pi * (di + 1) * (dk + 1) / (dn + 1));
            else if (kind == FFT_DCT2) v = std::cos(pi * dk * (di + 0.5) / dn);
            else if (kind == FFT_DN) v = std::sin(pi * (2 * dk + 1) * (di + 1) / (2 * dn + 1));
            else if (kind == FFT_ND) v = std::sin(pi * (2 * dk + 1) * (dn - di) / (2 * dn + 1));
            else if (k == 0) v = 1;
            else {
                const double m = (double)((k + 1) / 2), x = 2 * pi * std::fmod(m * di, dn) / dn;
                v = k & 1 ? std::cos(x) : std::sin(x);
            }
            q[(size_t)(i * n + k)] = v;
            norm += v * v;
        }
        const double s = 1 / std::sqrt(norm);
        for (int64_t i = 0; i < n; ++i) q[(size_t)(i * n + k)] *= s;
    }
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 32 "src/poisson_gpu.cu"
#endif
// fft_cufft.h -- the cuFFT route: per-axis DST / DCT / DFT pre- and post-processing
#ifdef PGPU_SRC_LINES
#line 2 "src/fft_cufft.h"
#endif


namespace pgpu {

// The solver works on a packed copy W (nx*ny*nz, no ghosts).  Each axis is
// diagonalised by its own transform (Dirichlet-Dirichlet: DST-I, Neumann-
// Neumann: DCT-II, Dirichlet-Neumann: a sine transform of odd length 2n+1,
// periodic: DFT), built on cuFFT real transforms of about the same length
// (except the all-Dirichlet 3D row kernels, fft_dirichlet.h); one axis (a
// mixed Dirichlet/Neumann one, else the slowest non-periodic one) is solved
// by tridiagonal systems instead.
// A transform along axis a reads W by lines along a and writes a scratch
// array in which lines along a are cuFFT batches: for a = 0 the lines are
// contiguous (c + len*b), otherwise line b's element c sits at b + B*c, so
// consecutive threads always touch consecutive addresses.

// A pass takes the lines b0 .. b0 + B - 1 of W (a chunk, FFT_CHUNK); the
// scratch holds those lines alone, line b of the chunk at its own place.
struct Lines {
    int a;              // the axis
    int n;              // its length in W
    int64_t nx, ny, nz; // W's extents
    int64_t P;          // W's plane stride (nx*ny, padded to even where cuFFT reads planes)
    int64_t B;          // number of lines (of this chunk)
    int64_t b0;         // the chunk's first line
    int small;          // every index of W and the scratch below 2^32: 32-bit divisions
};

__device__ __forceinline__ int64_t w_at(const Lines &L, int64_t b, int64_t c)
{
    b += L.b0;
    if (L.a == 2) return b + L.P * c;
    if (L.small) {
        const uint32_t u = (uint32_t)b, m = (uint32_t)(L.a == 0 ? L.ny : L.nx);
        const int64_t lo = u % m, hi = u / m;
        return L.a == 0 ? c + L.nx * lo + L.P * hi : lo + L.nx * c + L.P * hi;
    }
    if (L.a == 0) return c + L.nx * (b % L.ny) + L.P * (b / L.ny);
    return (b % L.nx) + L.nx * c + L.P * (b / L.nx);
}
__device__ __forceinline__ int64_t s_at(const Lines &L, int64_t b, int64_t c, int64_t len)
{
    return L.a == 0 ? c + len * b : b + L.B * c;
}
// Element t of a (B lines x len) scratch array -> (b, c), in memory order.
__device__ __forceinline__ void line_coords(const Lines &L, int64_t t, int64_t len, int64_t &b, int64_t &c)
{
    if (L.small) {
        const uint32_t u = (uint32_t)t, m = (uint32_t)(L.a == 0 ? len : L.B);
        const uint32_t q = u / m, r = u - q * m;
        if (L.a == 0) { c = r; b = q; }
        else { b = r; c = q; }
        return;
    }
    if (L.a == 0) { c = t % len; b = t / len; }
    else { b = t % L.B; c = t / L.B; }
}

// The first forward pass reads the right-hand side straight from the user's
// arrays (f plus boundary terms minus the mean), and the last inverse pass
// writes the solution straight into u: no separate copy passes.
template <class T> struct UserIO {
    Grid<T> g;
    const T *u_in, *f, *shift; // read == 1: the right-hand side comes from here
    T *u_out;                  // write == 1: the result goes here
    int read, write;
};

__device__ __forceinline__ void line_ijk(const Lines &L, int64_t b, int64_t c, int &i, int &j, int &k)
{
    b += L.b0;
    if (L.a == 0) { i = (int)c; j = (int)(b % L.ny); k = (int)(b / L.ny); }
    else if (L.a == 1) { i = (int)(b % L.nx); j = (int)c; k = (int)(b / L.nx); }
    else { i = (int)(b % L.nx); j = (int)(b / L.nx); k = (int)c; }
}

template <class T>
__device__ __forceinline__ T load_w(const Lines &L, const UserIO<T> &io, const T *__restrict__ W, int64_t b, int64_t c)
{
    if (!io.read) return W[w_at(L, b, c)];
    int i, j, k;
    line_ijk(L, b, c, i, j, k);
    const int64_t p = io.g.base + i + (int64_t)j * io.g.sy + (int64_t)k * io.g.sz;
    return io.f[p] + box_terms(io.g, io.u_in, p, i, j, k) - *io.shift;
}

template <class T>
__device__ __forceinline__ void store_w(const Lines &L, const UserIO<T> &io, T *__restrict__ W, int64_t b, int64_t c, T v)
{
    if (!io.write) { W[w_at(L, b, c)] = v; return; }
    int i, j, k;
    line_ijk(L, b, c, i, j, k);
    io.u_out[io.g.base + i + (int64_t)j * io.g.sy + (int64_t)k * io.g.sz] = v;
}


// W = f - shift + boundary terms over the interior (packed, x fastest; the
// shift first, so that a large mean does not round the boundary terms).
template <class T>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    fft_load_kernel(const Grid<T> g, const T *__restrict__ u, const T *__restrict__ f, const T *__restrict__ shiftp,
                    T *__restrict__ W, int64_t wp, int kchunk, int nyb, int nchunks)
{
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return;
    const int i = blockIdx.x * COL_BX + threadIdx.x, j = yb * COL_BY + threadIdx.y;
    if (i >= g.nx || j >= g.ny) return;
    const Shift<T> shift = load_shift(shiftp);
    const int k0 = zc * kchunk, k1 = min(k0 + kchunk, g.nz);
    for (int k = k0; k < k1; ++k) {
        const int64_t p = g.base + i + j * g.sy + (int64_t)k * g.sz;
        W[i + (int64_t)g.nx * j + wp * k] = shift.of(f[p]) + box_terms(g, u, p, i, j, k);
    }
}

// u interior = W.
template <class T>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    fft_store_kernel(const Grid<T> g, const T *__restrict__ W, int64_t wp, T *__restrict__ u, int kchunk, int nyb,
                     int nchunks)
{
    int yb, zc;
    if (!block_yz(nyb, nchunks, yb, zc)) return;
    const int i = blockIdx.x * COL_BX + threadIdx.x, j = yb * COL_BY + threadIdx.y;
    if (i >= g.nx || j >= g.ny) return;
    const int k0 = zc * kchunk, k1 = min(k0 + kchunk, g.nz);
    for (int k = k0; k < k1; ++k)
        u[g.base + i + j * g.sy + (int64_t)k * g.sz] = W[i + (int64_t)g.nx * j + wp * k];
}

// 16 bytes of T, the shared-memory reads of dense_axis_kernel (N values
// from p, 16-byte aligned where N is a multiple of a vector).
template <class T> struct Vec16;
template <> struct Vec16<float> { typedef float4 type; };
template <> struct Vec16<double> { typedef double2 type; };
template <class T, int N> __device__ __forceinline__ void lds16(const T *p, T *r)
{
    typedef typename Vec16<T>::type V;
    constexpr int E = (int)(sizeof(V) / sizeof(T)), NV = N % E ? 0 : N; // (else a run shorter than a vector)
#pragma unroll
    for (int i = 0; i < NV; i += E) {
        const V v = *reinterpret_cast<const V *>(p + i);
        memcpy(r + i, &v, sizeof(V));
    }
#pragma unroll
    for (int i = NV; i < N; ++i) r[i] = p[i];
}

// The dense transform of an axis (one whose cuFFT length has a large prime
// factor: DENSE_NMAX), out[k] = sum_c M[k][c] in[c] along every line, with
// M = Q^T forward and Q inverse (fdm_basis's orthonormal Q: no scale).  On
// a Dirichlet-Dirichlet or Neumann-Neumann axis Q's column k is even (k
// even) or odd (k odd) about the middle, so each direction takes half the
// products: forward (DENSE_FOLD) the terms x[c] +- x[n-1-c] feed the even
// and the odd modes; inverse (DENSE_PAIR) E[i] from the even modes and O[i]
// from the odd ones give x[i] = E + O and x[n-1-i] = E - O.
enum { DENSE_PLAIN = 0, DENSE_FOLD = 1, DENSE_PAIR = 2 };
// The matrices as the kernel reads them, row c of terms at m + c ld:
//  PLAIN  m: M^T, n x n.
//  FOLD   m: n x ld, ld = nep + no: terms c < ne are x[c] + x[n-1-c] (the
//         middle alone where n is odd), the rest x[c-ne] - x[n-1-(c-ne)];
//         rows r < ne are mode 2r, rows nep + r mode 2r + 1 (nep: ne
//         rounded up to a tile, so that a tile lies in one half).
//  PAIR   m: Q[i][2c] (c < ne), m2: Q[i][2c+1] (c < no), ld = ne.
// ne = (n + 1) / 2 even modes, no = n / 2 odd ones.
template <class T> struct DenseMat {
    const T *m, *m2;
    int ld, ne, nep;
};

// A thread's line: element c at p + c s, in W (packed) or, where the pass
// writes the solution (user), in u.
struct DenseLine {
    int64_t p, s;
};
template <class T>
__device__ __forceinline__ DenseLine dense_line(const Lines &L, const UserIO<T> &io, int64_t b, bool user)
{
    if (!user) return DenseLine{w_at(L, b, 0), L.a == 0 ? 1 : L.a == 1 ? L.nx : L.P};
    int i, j, k;
    line_ijk(L, b, 0, i, j, k);
    return DenseLine{io.g.base + i + (int64_t)j * io.g.sy + (int64_t)k * io.g.sz,
                     L.a == 0 ? 1 : L.a == 1 ? io.g.sy : io.g.sz};
}

// Block (x, y) forms lines x BN .. and a tile of rows y as a
// register-tiled product, DENSE_KC terms staged at a time, the next ones
// loaded into registers while the current are multiplied.  Thread (tx, ty)
// holds TM x TN sums -- rows rt TM/2 .. and BM/2 + rt TM/2 .. of the tile
// (PAIR: E and O of the same rows), lines lt TN/2 .. likewise, (rt, lt) =
// (ty, tx), or (tx, ty) on x lines, whose rows are contiguous in memory, so
// that a warp's stores fall close together -- and reads the staged tiles
// in 16-byte vectors.  It loads terms of one line (for x
// lines, contiguous, a run of them; else every (256/BN)-th term,
// consecutive threads on consecutive lines) and of one column of the
// matrix.  Reads W, writes Y (or u: io.write): never in place.
template <class T, int TM, int TN, int MODE>
__global__ void __launch_bounds__(DENSE_T, Tune<T>::F32 && MODE != DENSE_PAIR ? 2 : 1)
    dense_axis_kernel(const Lines L, const UserIO<T> io, const DenseMat<T> M, const T *__restrict__ W,
                      T *__restrict__ Y)
{
    constexpr int BM = 16 * TM, BN = 16 * TN, PAD = 16 / (int)sizeof(T), H = TM / 2;
    constexpr int KC = DENSE_KC, NA = KC * BM / DENSE_T, NB = KC * BN / DENSE_T;
    constexpr bool PAIR = MODE == DENSE_PAIR;
    static_assert(DENSE_T == 256 && NA * DENSE_T == KC * BM && NB * DENSE_T == KC * BN, "dense_axis_kernel: tiles");
    __shared__ __align__(16) T As[KC][BM + PAD];
    __shared__ __align__(16) T Bs[PAIR ? 2 : 1][KC][BN + PAD];
    const int n = L.n, ne = M.ne, no = n / 2, t = threadIdx.x, tx = t % 16, ty = t / 16;
    const int64_t b0 = (int64_t)blockIdx.x * BN;
    // The tile's rows and terms.
    const int r0 = blockIdx.y * (PAIR ? BM / 2 : BM);
    const bool odd = MODE == DENSE_FOLD && r0 >= M.nep;
    const int c_lo = odd ? ne : 0, c_hi = MODE == DENSE_PLAIN || odd ? n : ne;
    // This thread's loads: matrix column ka at terms ca + j 256/BM; line lb
    // at terms cb + j cs.
    const int ka = t % BM, ca = t / BM;
    const int lb = L.a == 0 ? t / (DENSE_T / BN) : t % BN;
    const int cb = L.a == 0 ? (t % (DENSE_T / BN)) * NB : t / BN, cs = L.a == 0 ? 1 : DENSE_T / BN;
    const T *mp;
    int a_rows, a_terms; // the column's valid rows (ka's bound) and terms
    if (PAIR) {
        const bool e = ka < BM / 2;
        mp = (e ? M.m : M.m2) + r0 + (e ? ka : ka - BM / 2);
        a_rows = r0 + (e ? ka : ka - BM / 2) < ne;
        a_terms = e ? ne : no;
    } else {
        mp = M.m + r0 + ka;
        a_rows = r0 + ka < M.ld;
        a_terms = n;
    }
    const bool b_ok = b0 + lb < L.B;
    const DenseLine dl = dense_line(L, io, b_ok ? b0 + lb : 0, false);
    const T *const wl = W + dl.p;
    // The sums' rows along the lanes on x lines (whose rows are contiguous
    // in memory), else their lines: the lanes' stores fall close together.
    const int rt = L.a == 0 ? tx : ty, lt = L.a == 0 ? ty : tx;
    T ra[NA], rb[PAIR ? 2 : 1][NB];
    auto fetch = [&](int c0) {
#pragma unroll
        for (int j = 0; j < NA; ++j) {
            const int c = c0 + ca + j * (DENSE_T / BM);
            ra[j] = a_rows && c < c_hi && c < a_terms ? __ldg(mp + (int64_t)c * M.ld) : T(0);
        }
#pragma unroll
        for (int j = 0; j < NB; ++j) {
            const int c = c0 + cb + j * cs;
            const bool in = b_ok && c < c_hi;
            if (MODE == DENSE_PLAIN) {
                rb[0][j] = in ? wl[(int64_t)c * dl.s] : T(0);
            } else if (MODE == DENSE_FOLD) {
                const int d = c < ne ? c : c - ne;
                T v = T(0);
                if (in) {
                    v = wl[(int64_t)d * dl.s];
                    if (d < no) {
                        const T w = wl[(int64_t)(n - 1 - d) * dl.s];
                        v = c < ne ? v + w : v - w;
                    }
                }
                rb[0][j] = v;
            } else {
                rb[0][j] = in ? wl[(int64_t)(2 * c) * dl.s] : T(0);
                rb[PAIR ? 1 : 0][j] = in && c < no ? wl[(int64_t)(2 * c + 1) * dl.s] : T(0);
            }
        }
    };
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
    fetch(c_lo);
    for (int c0 = c_lo; c0 < c_hi; c0 += KC) {
#pragma unroll
        for (int j = 0; j < NA; ++j) As[ca + j * (DENSE_T / BM)][ka] = ra[j];
#pragma unroll
        for (int h = 0; h < (PAIR ? 2 : 1); ++h)
#pragma unroll
            for (int j = 0; j < NB; ++j) Bs[h][cb + j * cs][lb] = rb[h][j];
        __syncthreads();
        if (c0 + KC < c_hi) fetch(c0 + KC);
#pragma unroll
        for (int c = 0; c < KC; ++c) {
            T a[TM], v[PAIR ? 2 : 1][TN];
            lds16<T, H>(&As[c][rt * H], a);
            lds16<T, H>(&As[c][BM / 2 + rt * H], a + H);
#pragma unroll
            for (int h = 0; h < (PAIR ? 2 : 1); ++h) {
                lds16<T, TN / 2>(&Bs[h][c][lt * (TN / 2)], v[h]);
                lds16<T, TN / 2>(&Bs[h][c][BN / 2 + lt * (TN / 2)], v[h] + TN / 2);
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], v[PAIR && i >= H ? 1 : 0][j], acc[i][j]);
        }
        __syncthreads();
    }
    // Out: each of the thread's lines, its rows.
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int64_t b = b0 + (j < TN / 2 ? lt * (TN / 2) + j : BN / 2 + lt * (TN / 2) + j - TN / 2);
        if (b >= L.B) continue;
        const DenseLine d = dense_line(L, io, b, io.write != 0);
        T *const y = io.write ? io.u_out : Y;
#pragma unroll
        for (int i = 0; i < (PAIR ? H : TM); ++i) {
            const int r = r0 + (i < H ? rt * H + i : BM / 2 + rt * H + i - H);
            if (PAIR) {
                const T e = acc[i][j], o = acc[H + i][j];
                if (r < no) {
                    y[d.p + (int64_t)r * d.s] = e + o;
                    y[d.p + (int64_t)(n - 1 - r) * d.s] = e - o;
                } else if (r < ne) {
                    y[d.p + (int64_t)r * d.s] = e;
                }
            } else {
                int k = r;
                if (MODE == DENSE_FOLD) k = r < M.nep ? (r < ne ? 2 * r : n) : (r - M.nep < no ? 2 * (r - M.nep) + 1 : n);
                if (k < n) y[d.p + (int64_t)k * d.s] = acc[i][j];
            }
        }
    }
}

// DST-I of length n through a real FFT of length M = n+1 (the same length, no
// odd extension): y_0 = 0, y_j = sin(pi j/M)(x_j + x_{M-j}) + (x_j - x_{M-j})/2
// (1-based x, x_M = 0); then with Y = FFT(y) = A - iB the transform is
// X_{2k} = B_k, X_{2k+1} = X_{2k-1} + A_k, X_1 = A_0/2.  DST-I is its own
// inverse up to 2/(n+1), so the same three passes serve both directions.
template <class T>
__global__ void dst1_pre_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ W, T *__restrict__ S)
{
    const int64_t M = L.n + 1;
    PGPU_GRID_STRIDE(t, L.B * M)
    {
        int64_t b, c;
        line_coords(L, t, M, b, c);
        T y = T(0);
        if (c > 0) {
            const T xj = load_w(L, io, W, b, c - 1);
            const T xm = load_w(L, io, W, b, M - c - 1);
            y = (T)sinpi((double)c / (double)M) * (xj + xm) + T(0.5) * (xj - xm);
        }
        S[s_at(L, b, c, M)] = y;
    }
}

// Lines along y or z: one thread per line walks the half spectrum carrying
// the running sum (consecutive threads read consecutive addresses).
template <class T>
__global__ void dst1_post_kernel(const Lines L, const UserIO<T> io, const typename Cplx<T>::type *__restrict__ C,
                                 T *__restrict__ W)
{
    const int64_t M = L.n + 1, H = M / 2 + 1;
    PGPU_GRID_STRIDE(b, L.B)
    {
        T odd = T(0);
#pragma unroll 8
        for (int64_t k = 0; k < H; ++k) {
            const typename Cplx<T>::type y = C[s_at(L, b, k, H)];
            if (k == 0) odd = T(0.5) * y.x;
            else odd += y.x;
            if (k > 0 && 2 * k <= L.n) store_w(L, io, W, b, 2 * k - 1, -y.y);
            if (2 * k + 1 <= L.n) store_w(L, io, W, b, 2 * k, odd);
        }
    }
}

// Lines along x (contiguous): one warp per line, 32 modes at a time, the
// running sum as a warp scan carried from chunk to chunk.
template <class T>
__global__ void dst1_post_x_kernel(const Lines L, const UserIO<T> io, const typename Cplx<T>::type *__restrict__ C,
                                   T *__restrict__ W)
{
    const int64_t M = L.n + 1, H = M / 2 + 1;
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t b = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; b < L.B; b += warps) {
        const typename Cplx<T>::type *line = C + b * H;
        T carry = T(0);
        for (int64_t base = 0; base < H; base += 32) {
            const int64_t k = base + lane;
            typename Cplx<T>::type y;
            y.x = y.y = T(0);
            if (k < H) y = line[k];
            T s = k == 0 ? T(0.5) * y.x : y.x; // inclusive scan of A'_k
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const T t = __shfl_up_sync(0xffffffffu, s, o);
                if (lane >= o) s += t;
            }
            s += carry;
            if (k > 0 && 2 * k <= L.n) store_w(L, io, W, b, 2 * k - 1, -y.y);
            if (k < H && 2 * k + 1 <= L.n) store_w(L, io, W, b, 2 * k, s);
            carry = __shfl_sync(0xffffffffu, s, 31);
        }
    }
}

// DST-I of length n from the real FFT of the odd extension of length 2M
// (z_j = x_j, z_{2M-j} = -x_j for 1 <= j <= n, z_0 = z_M = 0): X_k =
// -Im(Z_k) / 2, the same transform as above.  Twice the transform length,
// but every output comes straight from the FFT.  The running sum above adds
// up the FFT's rounding of every A_k into the odd outputs: in float the high
// modes of a smooth row, which a solve's residual weighs by k^2, came out
// many times their size (at n = 1300, 26 times), so float takes this form
// (Tune::dst_extension); in double the sum costs digits nobody sees.
template <class T>
__global__ void dst1x_pre_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ W, T *__restrict__ S)
{
    const int64_t M = L.n + 1, M2 = 2 * M;
    PGPU_GRID_STRIDE(t, L.B * M2)
    {
        int64_t b, c;
        line_coords(L, t, M2, b, c);
        T z = T(0);
        if (c > 0 && c < M) z = load_w(L, io, W, b, c - 1);
        else if (c > M) z = -load_w(L, io, W, b, M2 - c - 1);
        S[s_at(L, b, c, M2)] = z;
    }
}

template <class T>
__global__ void dst1x_post_kernel(const Lines L, const UserIO<T> io, const typename Cplx<T>::type *__restrict__ C,
                                  T *__restrict__ W)
{
    const int64_t H = L.n + 2; // the half spectrum of length 2M
    PGPU_GRID_STRIDE(t, L.B * L.n)
    {
        int64_t b, k;
        line_coords(L, t, L.n, b, k);
        store_w(L, io, W, b, k, T(-0.5) * C[s_at(L, b, k + 1, H)].y);
    }
}

// An axis with a Dirichlet face at one end and a Neumann face at the other
// (FFT_DN: Dirichlet low; FFT_ND, REV: Dirichlet high).  Counting the nodes
// j = 1..n from the Dirichlet face, its modes are sin(pi (2k+1) j / M),
// M = 2n + 1 (the Neumann face, half a spacing past node n, mirrors them).
// Forward: X_k = 2 sum_j x_j sin(pi (2k+1) j / M) = Im(Z_{n-k}), Z the real
// FFT of length M of z_0 = 0, z_j = (-1)^j x_j, z_{M-j} = -z_j (j <= n).
// Inverse: x_j = 2 sum_k X_k sin(pi (2k+1) j / M) = (-1)^j y_j, y the
// inverse real FFT of Y_0 = 0, Y_m = i X_{n-m}.  The two give M x.
template <class T, bool REV>
__global__ void dn_pre_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ W, T *__restrict__ S)
{
    const int64_t n = L.n, M = 2 * n + 1;
    PGPU_GRID_STRIDE(t, L.B * M)
    {
        int64_t b, c;
        line_coords(L, t, M, b, c);
        T z = T(0);
        if (c > 0) {
            const int64_t j = c <= n ? c : M - c;
            const T x = load_w(L, io, W, b, REV ? n - j : j - 1);
            z = ((j & 1) != 0) != (c > n) ? -x : x;
        }
        S[s_at(L, b, c, M)] = z;
    }
}

template <class T>
__global__ void dn_post_kernel(const Lines L, const typename Cplx<T>::type *__restrict__ C, T *__restrict__ W)
{
    const int64_t n = L.n, H = n + 1;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, k;
        line_coords(L, t, n, b, k);
        W[w_at(L, b, k)] = C[s_at(L, b, n - k, H)].y;
    }
}

template <class T>
__global__ void dn_inverse_pre_kernel(const Lines L, const T *__restrict__ W, typename Cplx<T>::type *__restrict__ C)
{
    const int64_t n = L.n, H = n + 1;
    PGPU_GRID_STRIDE(t, L.B * H)
    {
        int64_t b, m;
        line_coords(L, t, H, b, m);
        typename Cplx<T>::type y;
        y.x = T(0);
        y.y = m > 0 ? W[w_at(L, b, n - m)] : T(0);
        C[s_at(L, b, m, H)] = y;
    }
}

template <class T, bool REV>
__global__ void dn_inverse_post_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ S, T *__restrict__ W)
{
    const int64_t n = L.n, M = 2 * n + 1;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, c;
        line_coords(L, t, n, b, c);
        const int64_t j = REV ? n - c : c + 1;
        const T y = S[s_at(L, b, j, M)];
        store_w(L, io, W, b, c, (j & 1) ? -y : y);
    }
}

// DCT-II (X_k = sum_j x_j cos(pi k (2j+1) / 2n)) by Makhoul's reordering:
// v = (x_0, x_2, x_4, ..., x_5, x_3, x_1), V = FFT(v), X_k = Re(e^{-i pi k/2n} V_k).
// REORDER false: the lines as they are (FFT_RHC).
template <class T, bool REORDER>
__global__ void dct2_pre_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ W, T *__restrict__ S)
{
    const int64_t n = L.n;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, c;
        line_coords(L, t, n, b, c);
        const int64_t src = !REORDER ? c : c < (n + 1) / 2 ? 2 * c : 2 * n - 1 - 2 * c;
        S[s_at(L, b, c, n)] = load_w(L, io, W, b, src);
    }
}

template <class T>
__global__ void dct2_post_kernel(const Lines L, const typename Cplx<T>::type *__restrict__ C, T *__restrict__ W)
{
    const int64_t n = L.n, H = n / 2 + 1;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, k;
        line_coords(L, t, n, b, k);
        typename Cplx<T>::type v = C[s_at(L, b, k <= n / 2 ? k : n - k, H)];
        if (k > n / 2) v.y = -v.y; // V_k = conj(V_{n-k})
        double s, c;
        sincospi((double)k / (double)(2 * n), &s, &c);
        W[w_at(L, b, k)] = (T)c * v.x + (T)s * v.y; // Re(e^{-i pi k/2n} V_k)
    }
}

// Inverse DCT-II: V_k = e^{i pi k/2n} (X_k - i X_{n-k}) (X_n = 0) for k <= n/2,
// an inverse real FFT (scaled by 1/n elsewhere), then undo the reordering.
template <class T>
__global__ void dct3_pre_kernel(const Lines L, const T *__restrict__ W, typename Cplx<T>::type *__restrict__ C)
{
    const int64_t n = L.n, H = n / 2 + 1;
    PGPU_GRID_STRIDE(t, L.B * H)
    {
        int64_t b, k;
        line_coords(L, t, H, b, k);
        const T a = W[w_at(L, b, k)];
        const T m = k > 0 ? W[w_at(L, b, n - k)] : T(0);
        double s, c;
        sincospi((double)k / (double)(2 * n), &s, &c);
        typename Cplx<T>::type v;
        v.x = (T)c * a + (T)s * m; // (c + i s)(a - i m)
        v.y = (T)s * a - (T)c * m;
        C[s_at(L, b, k, H)] = v;
    }
}

template <class T, bool REORDER>
__global__ void dct3_post_kernel(const Lines L, const UserIO<T> io, const T *__restrict__ S, T *__restrict__ W)
{
    const int64_t n = L.n;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, c;
        line_coords(L, t, n, b, c); // c: position in W
        const int64_t src = !REORDER ? c : (c % 2 == 0) ? c / 2 : n - 1 - (c - 1) / 2;
        store_w(L, io, W, b, c, S[s_at(L, b, src, n)]);
    }
}

// The periodic DFT as a real transform (FFT_RHC): a line's half spectrum V
// in halfcomplex order, slot 0 = Re V_0, slot 2k - 1 = Re V_k, slot 2k =
// Im V_k (n even: slot n - 1 = Re V_{n/2}).  Each slot's basis function
// (cos or sin of mode k) is an eigenvector of the periodic second
// difference, so the slots of several axes multiply out as modes do.
template <class T>
__global__ void rhc_post_kernel(const Lines L, const typename Cplx<T>::type *__restrict__ C, T *__restrict__ W)
{
    const int64_t n = L.n, H = n / 2 + 1;
    PGPU_GRID_STRIDE(t, L.B * n)
    {
        int64_t b, j;
        line_coords(L, t, n, b, j);
        const typename Cplx<T>::type v = C[s_at(L, b, (j + 1) / 2, H)];
        W[w_at(L, b, j)] = (j == 0 || (j & 1)) ? v.x : v.y;
    }
}
// ... and back to the half spectrum (then cuFFT's C2R: n times the line).
template <class T>
__global__ void hcr_pre_kernel(const Lines L, const T *__restrict__ W, typename Cplx<T>::type *__restrict__ C)
{
    const int64_t n = L.n, H = n / 2 + 1;
    PGPU_GRID_STRIDE(t, L.B * H)
    {
        int64_t b, k;
        line_coords(L, t, H, b, k);
        typename Cplx<T>::type v;
        v.x = W[w_at(L, b, k == 0 ? 0 : 2 * k - 1)];
        v.y = k > 0 && 2 * k < n ? W[w_at(L, b, 2 * k)] : T(0);
        C[s_at(L, b, k, H)] = v;
    }
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 33 "src/poisson_gpu.cu"
#endif
// fft_lines.h -- line solves of the FFT solver's last axis (Thomas, cyclic reduction)
#ifdef PGPU_SRC_LINES
#line 2 "src/fft_lines.h"
#endif


namespace pgpu {

// One axis left: per line along it, solve (A_axis + lambda I) x = rhs by the
// Thomas algorithm, lambda being the other axes' eigenvalue sum.  cl / ch are
// the axis operator's coefficients (level-0 tables); the pivots go to P.  A
// singular line (Neumann at both ends, lambda = 0) is anchored at its last
// node; the solver removes the mean afterwards.  The elimination runs in
// double and keeps its pivots in double whatever the precision: a line of
// the lowest modes has a condition number of about (n / pi)^2, and in float
// its solution lost that many ulps (1.5e-4 of u at 256^3); the eliminated
// right-hand side goes back to Z in its own precision.
template <class V> struct Wide;
template <> struct Wide<float> { typedef double type; };
template <> struct Wide<double> { typedef double type; };
template <> struct Wide<float2> { typedef double2 type; };
template <> struct Wide<double2> { typedef double2 type; };
__device__ __forceinline__ double widen(float v) { return v; }
__device__ __forceinline__ double widen(double v) { return v; }
__device__ __forceinline__ double2 widen(float2 v) { return make_double2(v.x, v.y); }
__device__ __forceinline__ double2 widen(double2 v) { return v; }
template <class V> __device__ __forceinline__ V narrow(double v) { return V(v); }
template <class V> __device__ __forceinline__ V narrow(double2 v);
template <> __device__ __forceinline__ float2 narrow<float2>(double2 v) { return make_float2((float)v.x, (float)v.y); }
template <> __device__ __forceinline__ double2 narrow<double2>(double2 v) { return v; }

// The lines b0 .. b0 + nb - 1 (a chunk, FFT_CHUNK); the pivot of line
// b0 + t at node i in P[t + nb i].
template <class T, class V>
__global__ void tri_kernel(const Spectrum<T> sp, int axis, const T *__restrict__ cl, const T *__restrict__ ch,
                           int neumann_both, V *__restrict__ Z, double *__restrict__ P, int64_t b0, int64_t nb)
{
    typedef typename Wide<V>::type X;
    const int64_t e[3] = {sp.e0, sp.e1, sp.e2};
    const int64_t n = e[axis];
    const int64_t stride = axis == 0 ? 1 : (axis == 1 ? sp.e0 : sp.e0 * sp.e1);
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const T *ev[3] = {sp.ev0, sp.ev1, sp.ev2};
    PGPU_GRID_STRIDE(t, nb)
    {
        const int64_t b = b0 + t;
        int64_t idx[3];
        idx[a1] = b % e[a1];
        idx[a2] = b / e[a1];
        idx[axis] = 0;
        const double lam = (ev[a1] ? double(ev[a1][idx[a1]]) : 0.0) + (ev[a2] ? double(ev[a2][idx[a2]]) : 0.0);
        const int64_t p0 = idx[0] + sp.e0 * (idx[1] + sp.e1 * idx[2]);
        const bool anchor = neumann_both && !(lam > 0.0);
        // Forward elimination, then back substitution, each reading TRI_AHEAD
        // nodes' values before it uses them (the loads of a line are
        // independent; in order with the stores they were a latency each).
        double cprev = 0.0;
        X dprev;
        zero(dprev);
        for (int64_t i0 = 0; i0 < n; i0 += TRI_AHEAD) {
            V z[TRI_AHEAD];
#pragma unroll
            for (int q = 0; q < TRI_AHEAD; ++q)
                if (i0 + q < n) z[q] = Z[p0 + (i0 + q) * stride];
#pragma unroll
            for (int q = 0; q < TRI_AHEAD; ++q) {
                const int64_t i = i0 + q;
                if (i >= n) break;
                const int64_t p = p0 + i * stride;
                const double sub = i > 0 ? -double(cl[i]) : 0.0;
                const double sup = i < n - 1 ? -double(ch[i]) : 0.0;
                const double diag = (double(cl[i]) + double(ch[i])) + lam;
                X rhs = widen(z[q]);
                scale_by(rhs, double(sp.scale));
                if (anchor && i == n - 1) { // x_{n-1} = 0
                    P[t + nb * i] = 0.0;
                    zero(rhs);
                    Z[p] = narrow<V>(rhs);
                    break;
                }
                const double piv = diag - sub * cprev;
                axpy(rhs, -sub, dprev);
                scale_by(rhs, 1.0 / piv);
                cprev = sup / piv;
                P[t + nb * i] = cprev;
                Z[p] = narrow<V>(rhs);
                dprev = rhs;
            }
        }
        X xnext = widen(Z[p0 + (n - 1) * stride]);
        for (int64_t i0 = n - 2; i0 >= 0; i0 -= TRI_AHEAD) {
            V z[TRI_AHEAD];
            double c[TRI_AHEAD];
#pragma unroll
            for (int q = 0; q < TRI_AHEAD; ++q)
                if (i0 - q >= 0) {
                    z[q] = Z[p0 + (i0 - q) * stride];
                    c[q] = P[t + nb * (i0 - q)];
                }
#pragma unroll
            for (int q = 0; q < TRI_AHEAD; ++q) {
                const int64_t i = i0 - q;
                if (i < 0) break;
                X x = widen(z[q]);
                axpy(x, -c[q], xnext);
                Z[p0 + i * stride] = narrow<V>(x);
                xnext = x;
            }
        }
    }
}

// The same systems by parallel cyclic reduction, one block per line held in
// shared memory (n <= PCR_MAX): log2(n) steps, each eliminating the
// neighbours at distance s = 1, 2, 4, ...  Used when there are too few lines
// for one thread per line to fill the GPU (2D problems).  In double, as the
// Thomas kernel.
template <class T, class V>
__global__ void __launch_bounds__(PCR_MAX) pcr_kernel(const Spectrum<T> sp, int axis, const T *__restrict__ cl,
                                                       const T *__restrict__ ch, int neumann_both, V *__restrict__ Z)
{
    typedef typename Wide<V>::type X;
    __shared__ double sa[2][PCR_MAX], sb[2][PCR_MAX], sc[2][PCR_MAX];
    __shared__ X sd[2][PCR_MAX];
    const int64_t e[3] = {sp.e0, sp.e1, sp.e2};
    const int n = (int)e[axis];
    const int64_t stride = axis == 0 ? 1 : (axis == 1 ? sp.e0 : sp.e0 * sp.e1);
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const T *ev[3] = {sp.ev0, sp.ev1, sp.ev2};
    const int64_t b = blockIdx.x;
    int64_t idx[3];
    idx[a1] = b % e[a1];
    idx[a2] = b / e[a1];
    idx[axis] = 0;
    const double lam = (ev[a1] ? double(ev[a1][idx[a1]]) : 0.0) + (ev[a2] ? double(ev[a2][idx[a2]]) : 0.0);
    const int64_t p0 = idx[0] + sp.e0 * (idx[1] + sp.e1 * idx[2]);
    const bool anchor = neumann_both && !(lam > 0.0);
    const int i = threadIdx.x, P = blockDim.x;
    double a = 0.0, bb = 1.0, c = 0.0;
    X d;
    zero(d);
    if (i < n) {
        a = i > 0 ? -double(cl[i]) : 0.0;
        c = i < n - 1 ? -double(ch[i]) : 0.0;
        bb = (double(cl[i]) + double(ch[i])) + lam;
        d = widen(Z[p0 + i * stride]);
        scale_by(d, double(sp.scale));
        if (anchor && i == n - 1) { a = 0.0; bb = 1.0; c = 0.0; zero(d); }
    }
    int cur = 0;
    sa[0][i] = a; sb[0][i] = bb; sc[0][i] = c; sd[0][i] = d;
    __syncthreads();
    // Nearly singular lines (small lambda, Neumann at both ends) lose digits
    // in cyclic reduction: one thread runs the Thomas algorithm on them.
    const double dmax = double(cl[n / 2]) + double(ch[n / 2]);
    if (neumann_both && !(lam > 0.05 * dmax)) {
        if (i == 0) {
            for (int k = 1; k < n; ++k) { // forward elimination into sb, sd
                const double m = sa[0][k] / sb[0][k - 1];
                sb[0][k] -= m * sc[0][k - 1];
                X dk = sd[0][k];
                axpy(dk, -m, sd[0][k - 1]);
                sd[0][k] = dk;
            }
            X x = sd[0][n - 1];
            scale_by(x, 1.0 / sb[0][n - 1]);
            sd[0][n - 1] = x;
            for (int k = n - 2; k >= 0; --k) {
                X y = sd[0][k];
                axpy(y, -sc[0][k], x);
                scale_by(y, 1.0 / sb[0][k]);
                sd[0][k] = y;
                x = y;
            }
        }
        __syncthreads();
        if (i < n) Z[p0 + i * stride] = narrow<V>(sd[0][i]);
        return;
    }
    for (int s = 1; s < n; s <<= 1) {
        const bool lo = i - s >= 0, hi = i + s < P;
        const double k1 = lo ? a / sb[cur][i - s] : 0.0;
        const double k2 = hi ? c / sb[cur][i + s] : 0.0;
        const double na = lo ? -sa[cur][i - s] * k1 : 0.0;
        const double nc = hi ? -sc[cur][i + s] * k2 : 0.0;
        const double nb = bb - (lo ? sc[cur][i - s] * k1 : 0.0) - (hi ? sa[cur][i + s] * k2 : 0.0);
        X nd = d;
        if (lo) axpy(nd, -k1, sd[cur][i - s]);
        if (hi) axpy(nd, -k2, sd[cur][i + s]);
        a = na; bb = nb; c = nc; d = nd;
        cur ^= 1;
        sa[cur][i] = a; sb[cur][i] = bb; sc[cur][i] = c; sd[cur][i] = d;
        __syncthreads();
    }
    if (i < n) {
        scale_by(d, 1.0 / bb);
        Z[p0 + i * stride] = narrow<V>(d);
    }
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 34 "src/poisson_gpu.cu"
#endif
// fft.h -- the FFT direct solver: its plans, routes and FftSolver<T>
#ifdef PGPU_SRC_LINES
#line 2 "src/fft.h"
#endif







namespace pgpu {

// The one cooperative launch of a 2D route (dr2_kernel, fdm2_kernel) with
// `blocks` blocks; done where it ran.  Where the device refuses it for its
// size (fewer multiprocessors than it has, under MPS limits, say), blocks
// becomes 0: from now on the route runs its phases as launches of their
// own, and the default path its checks as steps of their own
// (folds_checks() turns false; a checked launch -- `checked` -- leaves the
// phases to that path).
static pgpu_status coop_launch(Env &env, const void *kern, int &blocks, int threads, void **args, size_t smem,
                               bool checked, bool &done)
{
    char *err = env.err;
    done = false;
    if (blocks > 0) {
        const cudaError_t e = cudaLaunchCooperativeKernel(kern, blocks, threads, args, smem, env.st);
        if (e == cudaSuccess) {
            PGPU_LAUNCHED();
            done = true;
            return PGPU_SUCCESS;
        }
        if (e != cudaErrorCooperativeLaunchTooLarge && e != cudaErrorNotSupported)
            return cuda_status(err, e, "cudaLaunchCooperativeKernel", PGPU_AT);
        (void)cudaGetLastError();
        blocks = 0;
        if (checked) {
            done = true; // nothing launched: the caller sees folds_checks() false
            return PGPU_SUCCESS;
        }
    }
    PGPU_RETURN_IF(checked, PGPU_ERROR_CUDA, "internal: the folded checks need the cooperative launch");
    return PGPU_SUCCESS;
}

// The transform of a non-periodic axis with faces lo and hi.
template <class T> static int fft_axis_kind(int lo, int hi)
{
    if (lo != hi) return lo == PGPU_BC_DIRICHLET ? FFT_DN : FFT_ND;
    if (lo == PGPU_BC_NEUMANN) return FFT_DCT2;
    return Tune<T>::dst_extension ? FFT_DST1X : FFT_DST1;
}
// The real transform's length for an axis of n nodes.
static int64_t fft_axis_len(int kind, int64_t n)
{
    return kind == FFT_DST1 ? n + 1 : kind == FFT_DST1X ? 2 * (n + 1) : fft_dn(kind) ? 2 * n + 1 : n;
}

template <class T> struct FftTypes;
template <> struct FftTypes<float> {
    static const cufftType R2C = CUFFT_R2C, C2R = CUFFT_C2R;
    static cufftResult r2c(cufftHandle p, float *i, float2 *o) { return cufftExecR2C(p, i, (cufftComplex *)o); }
    static cufftResult c2r(cufftHandle p, float2 *i, float *o) { return cufftExecC2R(p, (cufftComplex *)i, o); }
    static const cufftType C2C = CUFFT_C2C;
    static cufftResult c2c(cufftHandle p, float2 *d, int dir)
    {
        return cufftExecC2C(p, (cufftComplex *)d, (cufftComplex *)d, dir);
    }
};
template <> struct FftTypes<double> {
    static const cufftType R2C = CUFFT_D2Z, C2R = CUFFT_Z2D;
    static cufftResult r2c(cufftHandle p, double *i, double2 *o) { return cufftExecD2Z(p, i, (cufftDoubleComplex *)o); }
    static cufftResult c2r(cufftHandle p, double2 *i, double *o) { return cufftExecZ2D(p, (cufftDoubleComplex *)i, o); }
    static const cufftType C2C = CUFFT_Z2Z;
    static cufftResult c2c(cufftHandle p, double2 *d, int dir)
    {
        return cufftExecZ2Z(p, (cufftDoubleComplex *)d, (cufftDoubleComplex *)d, dir);
    }
};

// A cuFFT plan with the caller-owned work area (set later), bound to the
// stream; work grows to what the plan needs.  The work area is sized by
// cuFFT's size query (cufftGetSizeMany64 on a fresh handle: it plans and
// allocates nothing), which is all pgpu_workspace_size asks (env.mem.counting:
// no plan is made), so that the query and pgpu_create agree to the byte; the
// made plan's own figure counts too, should it ever be larger.
static pgpu_status make_plan(Env &env, std::vector<cufftHandle> &plans, cufftHandle &plan, size_t &work, int rank,
                             long long *n, long long *inembed, long long istride, long long idist, long long *onembed,
                             long long ostride, long long odist, cufftType type, long long batch)
{
    char *err = env.err;
    {
        cufftHandle q = 0;
        PGPU_CUFFT(cufftCreate(&q));
        size_t est = 0;
        const cufftResult r =
            cufftGetSizeMany64(q, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, &est);
        cufftDestroy(q);
        if (r != CUFFT_SUCCESS)
            return record(err, r == CUFFT_ALLOC_FAILED ? PGPU_ERROR_OUT_OF_MEMORY : PGPU_ERROR_CUDA,
                          "cufftGetSizeMany64 failed: %s [%s:%d]", cufft_name(r), PGPU_AT);
        work = std::max(work, est);
    }
    if (env.mem.counting) return PGPU_SUCCESS;
    const cudaStream_t st = env.st;
    PGPU_CUFFT(cufftCreate(&plan));
    plans.push_back(plan);
    PGPU_CUFFT(cufftSetAutoAllocation(plan, 0));
    size_t ws = 0;
    PGPU_CUFFT(cufftMakePlanMany64(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch, &ws));
    PGPU_CUFFT(cufftSetStream(plan, st));
    work = std::max(work, ws);
    return PGPU_SUCCESS;
}

// A real-to-real transform along one axis of a packed real array W: a
// pre-processing pass into the scratch S, a cuFFT real transform into C, a
// post-processing pass back into W (the first and last of a solve may read
// f and write u instead: UserIO).
struct FftAxis {
    int kind; // FFT_DST1, FFT_DST1X, FFT_DCT2, FFT_RHC, FFT_DN or FFT_ND
    Lines L;  // (L.B: the lines of a chunk)
    int64_t lines = 0;            // all lines, taken in chunks of L.B (FFT_CHUNK)
    cufftHandle r2c = 0, c2r = 0; // the plans of a chunk
    cufftHandle r2c_rest = 0, c2r_rest = 0; // ... and of the last one, where it is shorter
    // A dense axis (no plans): its matrices forward and inverse (DenseMat
    // of T), its modes (DENSE_PLAIN, or FOLD forward and PAIR inverse) and
    // its tile's rows (dense_axis_kernel's TM).
    const void *dm[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};
    int dld[2] = {0, 0}, dne = 0, dnep = 0, dsym = 0, dtm = 0;
};

// Axis a of a packed array of extents d (plane stride P), transform kind:
// all its lines (their chunk size L.B is the plan's).
static void fft_axis_lines(FftAxis &fa, int a, int kind, const int64_t d[3], int64_t P)
{
    fa.kind = kind;
    fa.L.a = a;
    fa.L.n = (int)d[a];
    fa.L.nx = d[0];
    fa.L.ny = d[1];
    fa.L.nz = d[2];
    fa.L.P = P;
    fa.L.b0 = 0;
    fa.lines = d[0] * d[1] * d[2] / d[a];
}

// Lines per chunk when each takes `elems` elements of scratch (the
// test hook fft_chunk_elems lowers the bound to exercise chunks on small grids).
static int64_t fft_chunk_elems = FFT_CHUNK;
static int64_t fft_chunk_lines(int64_t lines, int64_t elems)
{
    return lines * elems <= fft_chunk_elems ? lines : std::max<int64_t>(1, fft_chunk_elems / elems);
}
// The plans of axis a of a packed array of extents d (plane stride P);
// s_elems / c_elems grow to the real / complex scratch it needs, scale is
// multiplied by its inverse's normalisation.
template <class T>
static pgpu_status fft_axis_plan(Env &env, std::vector<cufftHandle> &plans, FftAxis &fa, int a, int kind,
                                 const int64_t d[3], int64_t P, size_t &work, int64_t &s_elems, int64_t &c_elems,
                                 double &scale)
{
    const int64_t n = d[a];
    fft_axis_lines(fa, a, kind, d, P);
    const long long len = fft_axis_len(kind, n);
    const long long half = len / 2 + 1;
    fa.L.B = fft_chunk_lines(fa.lines, len);
    fa.L.small = std::max<int64_t>(P * d[2], fa.L.B * len) < ((int64_t)1 << 32);
    // A chunk of B lines: contiguous along x, else line b at b, stride B.
    auto chunk_plans = [&](long long B, cufftHandle &r2c, cufftHandle &c2r) -> pgpu_status {
        long long nn[1] = {len}, ie[1] = {len}, oe[1] = {half};
        const long long is = a == 0 ? 1 : B, id = a == 0 ? len : 1;
        const long long os = a == 0 ? 1 : B, od = a == 0 ? half : 1;
        PGPU_FORWARD(make_plan(env, plans, r2c, work, 1, nn, ie, is, id, oe, os, od, FftTypes<T>::R2C, B));
        if (kind == FFT_DCT2 || kind == FFT_RHC || fft_dn(kind))
            PGPU_FORWARD(make_plan(env, plans, c2r, work, 1, nn, oe, os, od, ie, is, id, FftTypes<T>::C2R, B));
        return PGPU_SUCCESS;
    };
    PGPU_FORWARD(chunk_plans(fa.L.B, fa.r2c, fa.c2r));
    if (fa.lines % fa.L.B) PGPU_FORWARD(chunk_plans(fa.lines % fa.L.B, fa.r2c_rest, fa.c2r_rest));
    const int64_t B = fa.L.B;
    s_elems = std::max<int64_t>(s_elems, B * len);
    c_elems = std::max<int64_t>(c_elems, B * half);
    scale *= kind == FFT_DCT2 || kind == FFT_RHC ? 1.0 / (double)n
             : fft_dn(kind)                      ? 1.0 / (double)(2 * n + 1)
                                                 : 2.0 / (double)(n + 1);
    return PGPU_SUCCESS;
}

// Where W's lines lie as the plans read the scratch S -- x lines of a
// packed W, or z lines (line b at b, stride the plane) -- a transform in
// natural order (FFT_RHC) reads and writes W itself.
template <class T> static bool fft_in_place(const Lines &L, const UserIO<T> &io)
{
    return !io.read && !io.write && L.P == L.nx * L.ny && (L.a == 0 || L.a == 2);
}

// One chunk of lines L of the axis fa, by the plans r2c / c2r.
template <class T>
static pgpu_status fft_chunk_run(Env &env, const FftAxis &fa, const Lines &L, cufftHandle r2c, cufftHandle c2r,
                                 bool inverse, const UserIO<T> &io, T *W, T *S, typename Cplx<T>::type *C)
{
    char *err = env.err;
    const cudaStream_t st = env.st;
    const int sms = env.sms;
    const int64_t len = fft_axis_len(fa.kind, L.n);
    const bool whole = L.B == fa.lines; // in place needs the plans' layout of W: one chunk
    if (fft_dn(fa.kind)) {
        const bool rev = fa.kind == FFT_ND;
        if (!inverse) {
            if (rev) dn_pre_kernel<T, true><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
            else dn_pre_kernel<T, false><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
            PGPU_LAUNCHED();
            PGPU_CUFFT(FftTypes<T>::r2c(r2c, S, C));
            dn_post_kernel<T><<<grid_for(L.B * L.n, sms), 256, 0, st>>>(L, C, W);
            PGPU_LAUNCHED();
        } else {
            dn_inverse_pre_kernel<T><<<grid_for(L.B * (L.n + 1), sms), 256, 0, st>>>(L, W, C);
            PGPU_LAUNCHED();
            PGPU_CUFFT(FftTypes<T>::c2r(c2r, C, S));
            if (rev) dn_inverse_post_kernel<T, true><<<grid_for(L.B * L.n, sms), 256, 0, st>>>(L, io, S, W);
            else dn_inverse_post_kernel<T, false><<<grid_for(L.B * L.n, sms), 256, 0, st>>>(L, io, S, W);
            PGPU_LAUNCHED();
        }
    } else if (fa.kind == FFT_DST1X) {
        dst1x_pre_kernel<T><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
        PGPU_LAUNCHED();
        PGPU_CUFFT(FftTypes<T>::r2c(r2c, S, C));
        dst1x_post_kernel<T><<<grid_for(L.B * L.n, sms), 256, 0, st>>>(L, io, C, W);
        PGPU_LAUNCHED();
    } else if (fa.kind == FFT_DST1) {
        dst1_pre_kernel<T><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
        PGPU_LAUNCHED();
        PGPU_CUFFT(FftTypes<T>::r2c(r2c, S, C));
        if (L.a == 0) dst1_post_x_kernel<T><<<grid_for(L.B * 32, sms), 256, 0, st>>>(L, io, C, W);
        else dst1_post_kernel<T><<<grid_for(L.B, sms), 256, 0, st>>>(L, io, C, W);
        PGPU_LAUNCHED();
    } else if (!inverse) {
        const bool hc = fa.kind == FFT_RHC;
        if (hc && whole && fft_in_place(L, io)) {
            PGPU_CUFFT(FftTypes<T>::r2c(r2c, W, C));
        } else {
            if (hc) dct2_pre_kernel<T, false><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
            else dct2_pre_kernel<T, true><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, W, S);
            PGPU_LAUNCHED();
            PGPU_CUFFT(FftTypes<T>::r2c(r2c, S, C));
        }
        if (hc) rhc_post_kernel<T><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, C, W);
        else dct2_post_kernel<T><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, C, W);
        PGPU_LAUNCHED();
    } else {
        const bool hc = fa.kind == FFT_RHC;
        if (hc) hcr_pre_kernel<T><<<grid_for(L.B * (len / 2 + 1), sms), 256, 0, st>>>(L, W, C);
        else dct3_pre_kernel<T><<<grid_for(L.B * (len / 2 + 1), sms), 256, 0, st>>>(L, W, C);
        PGPU_LAUNCHED();
        if (hc && whole && fft_in_place(L, io)) {
            PGPU_CUFFT(FftTypes<T>::c2r(c2r, C, W));
        } else {
            PGPU_CUFFT(FftTypes<T>::c2r(c2r, C, S));
            if (hc) dct3_post_kernel<T, false><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, S, W);
            else dct3_post_kernel<T, true><<<grid_for(L.B * len, sms), 256, 0, st>>>(L, io, S, W);
            PGPU_LAUNCHED();
        }
    }
    return PGPU_SUCCESS;
}

// Axis fa of W, every chunk of its lines.
template <class T>
static pgpu_status fft_axis_run(Env &env, const FftAxis &fa, bool inverse, const UserIO<T> &io, T *W, T *S,
                                typename Cplx<T>::type *C)
{
    for (int64_t b0 = 0; b0 < fa.lines; b0 += fa.L.B) {
        Lines L = fa.L;
        L.b0 = b0;
        L.B = std::min(fa.L.B, fa.lines - b0);
        const bool rest = L.B < fa.L.B;
        PGPU_FORWARD(fft_chunk_run<T>(env, fa, L, rest ? fa.r2c_rest : fa.r2c, rest ? fa.c2r_rest : fa.c2r, inverse,
                                      io, W, S, C));
    }
    return PGPU_SUCCESS;
}

// The largest prime factor of m (m >= 1).
static int64_t fft_prime_max(int64_t m)
{
    int64_t p = 1;
    for (int64_t d = 2; d * d <= m; ++d)
        while (m % d == 0) {
            p = d;
            m /= d;
        }
    return m > 1 ? m : p;
}

// Whether an axis of n nodes and transform `kind` of a grid of N points is
// transformed by a dense product (config.h: DENSE_NMAX, DENSE_GRID_MAX).
static bool fft_dense_axis(int kind, int64_t n, int64_t N)
{
    return n <= DENSE_NMAX && N <= DENSE_GRID_MAX && fft_prime_max(fft_axis_len(kind, n)) > 7;
}

// A dense axis: its lines (all in one launch) and its matrices from
// fdm_basis for faces lo, hi and spacing h (DenseMat).
template <class T>
static pgpu_status fft_dense_plan(Env &env, FftAxis &fa, int a, int kind, int lo, int hi, double h, const int64_t d[3],
                                  int64_t P)
{
    const int64_t n = d[a];
    fft_axis_lines(fa, a, kind, d, P);
    fa.L.B = fa.lines;
    fa.L.small = P * d[2] < ((int64_t)1 << 32);
    std::vector<double> q, lam;
    fdm_basis(lo, hi, n, h, q, lam);
    const int64_t ne = (n + 1) / 2, no = n / 2;
    fa.dsym = lo == hi && lo != PGPU_BC_PERIODIC; // Q's columns even or odd about the middle
    fa.dtm = (fa.dsym ? ne : n) <= 16 * DENSE_TM_SMALL ? DENSE_TM_SMALL : DENSE_TM;
    const int64_t bm = 16 * fa.dtm;
    fa.dne = (int)ne;
    fa.dnep = (int)((ne + bm - 1) / bm * bm);
    auto Q = [&](int64_t i, int64_t k) { return q[(size_t)(i * n + k)]; };
    std::vector<T> m;
    size_t off[2][2] = {{0, 0}, {0, 0}};
    if (!fa.dsym) {
        fa.dld[0] = fa.dld[1] = (int)n;
        m.resize((size_t)(2 * n * n));
        off[1][0] = (size_t)(n * n);
        for (int64_t c = 0; c < n; ++c)
            for (int64_t k = 0; k < n; ++k) {
                m[(size_t)(c * n + k)] = (T)Q(c, k);         // forward: Q^T
                m[(size_t)(n * n + c * n + k)] = (T)Q(k, c); // inverse: Q
            }
    } else {
        const int64_t ld = fa.dnep + no;
        fa.dld[0] = (int)ld;
        fa.dld[1] = (int)ne;
        m.assign((size_t)(n * ld + ne * ne + no * ne), T(0));
        for (int64_t c = 0; c < ne; ++c) // forward, the even modes from x[c] + x[n-1-c]
            for (int64_t r = 0; r < ne; ++r) m[(size_t)(c * ld + r)] = (T)Q(c, 2 * r);
        for (int64_t c = 0; c < no; ++c) // ... the odd ones from x[c] - x[n-1-c]
            for (int64_t r = 0; r < no; ++r) m[(size_t)((ne + c) * ld + fa.dnep + r)] = (T)Q(c, 2 * r + 1);
        off[1][0] = (size_t)(n * ld);
        off[1][1] = off[1][0] + (size_t)(ne * ne);
        for (int64_t c = 0; c < ne; ++c) // inverse: E from the even modes,
            for (int64_t i = 0; i < ne; ++i) m[off[1][0] + (size_t)(c * ne + i)] = (T)Q(i, 2 * c);
        for (int64_t c = 0; c < no; ++c) // O from the odd ones
            for (int64_t i = 0; i < no; ++i) m[off[1][1] + (size_t)(c * ne + i)] = (T)Q(i, 2 * c + 1);
    }
    T *dm = nullptr;
    PGPU_FORWARD(env.upload(m, &dm, "FFT dense transforms"));
    for (int v = 0; v < 2; ++v)
        for (int w = 0; w < 2; ++w) fa.dm[v][w] = dm + off[v][w];
    return PGPU_SUCCESS;
}

template <class T, int TM, int MODE>
static void fft_dense_launch(Env &env, const FftAxis &fa, bool inverse, const UserIO<T> &io, const T *W, T *Y)
{
    constexpr int TN = Tune<T>::dense_tn, BM = 16 * TM, BN = 16 * TN;
    const int v = inverse ? 1 : 0;
    const DenseMat<T> M{(const T *)fa.dm[v][0], (const T *)fa.dm[v][1], fa.dld[v], fa.dne, fa.dnep};
    const int64_t rows = MODE == DENSE_PAIR ? (fa.dne + BM / 2 - 1) / (BM / 2) : (M.ld + BM - 1) / BM;
    const dim3 grid((unsigned)((fa.lines + BN - 1) / BN), (unsigned)rows);
    dense_axis_kernel<T, TM, TN, MODE><<<grid, DENSE_T, 0, env.st>>>(fa.L, io, M, W, Y);
}

// A dense axis fa from W into Y (or u: io.write).
template <class T>
static pgpu_status fft_dense_run(Env &env, const FftAxis &fa, bool inverse, const UserIO<T> &io, const T *W, T *Y)
{
    char *err = env.err;
    const int mode = !fa.dsym ? DENSE_PLAIN : inverse ? DENSE_PAIR : DENSE_FOLD;
    auto go = [&](auto tm) {
        constexpr int TM = decltype(tm)::value;
        if (mode == DENSE_PLAIN) fft_dense_launch<T, TM, DENSE_PLAIN>(env, fa, inverse, io, W, Y);
        else if (mode == DENSE_FOLD) fft_dense_launch<T, TM, DENSE_FOLD>(env, fa, inverse, io, W, Y);
        else fft_dense_launch<T, TM, DENSE_PAIR>(env, fa, inverse, io, W, Y);
    };
    if (fa.dtm == DENSE_TM) go(std::integral_constant<int, DENSE_TM>());
    else go(std::integral_constant<int, DENSE_TM_SMALL>());
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// The distributed solve's plan (dist.h builds and runs it): the layouts the
// data passes through -- each split along one axis over the ranks, every
// rank's range on it -- and the steps, in forward order: axis transforms
// in the layout where the axis is whole, moves between layouts, and the
// solve last.
// The all-periodic distributed route's plan (plan_dist_rows): the row
// kernels on each slab's planes in `chunks` chunks, chunk c of every rank's
// planes at zc0[r * (chunks + 1) + c]; the x modes split over the ranks
// (kxlo, kxn).  C holds this rank's spectrum, then its x modes on the other
// ranks' planes: block (rank q, chunk c) at C + roff[q * (chunks + 1) + c]
// (for this rank, its block of C's chunk), plane z's at ztab[2 z], C's
// length elems.
struct DistRows {
    int chunks = 0;
    std::vector<int64_t> zlo, zn, zc0, kxlo, kxn, roff, ztab;
    int64_t elems = 0;
};

template <class T> struct FftDist : DistRows {
    struct Layout {
        int s = 0;                  // the split axis
        std::vector<int64_t> lo, n; // every rank's first node and count on it
        int64_t d[3] = {1, 1, 1};   // this rank's extents (packed, x fastest)
        int64_t vol = 0;
    };
    enum { STEP_AXIS, STEP_MOVE, STEP_SOLVE };
    struct Step {
        int what = STEP_AXIS;
        int lay = 0, to = 0; // the layout it runs in (STEP_MOVE: from lay to `to`)
        FftAxis ax{};
    };
    std::vector<Layout> lay;
    std::vector<Step> steps;
    Spectrum<T> spec{};
    int tri = -1;                        // the axis solved by line solves (a mixed one), or -1
    const T *cl = nullptr, *ch = nullptr; // its global coefficients
    double *piv = nullptr;
    T *W = nullptr, *S = nullptr; // the data; scratch and send buffer
    typename Cplx<T>::type *C = nullptr; // complex scratch and receive buffer
    int64_t wp = 0;               // W's plane stride in layout 0
    // The all-periodic 3D route (init_dist_rows; its plan the base
    // DistRows): zt the plane table on the device; the moves go on the
    // stream cs, ordered against the solve's by the events ev.
    bool rows = false;
    int64_t *zt = nullptr;
    std::vector<std::pair<int64_t, cufftHandle>> yplans; // (planes, the y transforms of a chunk of that many)
    cudaStream_t cs = nullptr;
    std::vector<cudaEvent_t> ev;
    ~FftDist()
    {
        for (cudaEvent_t e : ev) cudaEventDestroy(e);
        if (cs) cudaStreamDestroy(cs);
    }
};

template <class T> class FftSolver {
  public:
    ~FftSolver()
    {
        for (cufftHandle p : plans) cufftDestroy(p);
    }
    pgpu_status init(Env &env, const pgpu_config &cfg, const Level<T> &L0);
    // u = the solution for f + boundary terms - *shift (a device pointer);
    // every launch on env.st, none waited for.
    pgpu_status run(T *u, const T *f, const T *shift);
    // A tridiagonal axis with Neumann faces at both ends leaves the constant
    // undetermined: the caller removes u's mean; and the shift must be the
    // mean of a singular right-hand side (the other routes drop the zero mode).
    bool line_solve() const { return tri >= 0; }
    // A solve whose default-path checks fold into its one launch (2D: the
    // dense transforms, fdm2_kernel, where the problem is not singular; the
    // all-Dirichlet rows, dr2_kernel): run_checked leaves the scan's and the
    // residual's totals in res[RES_SCAN ..] and res[RES_NORM ..] and u
    // untouched unless the data pass dr_data_ok.
    // (A device that refuses the launch turns folds_checks() false and
    // run_checked launches nothing.)
    bool folds_checks() const
    {
        return !dist && (rows_f ? (fdmc.C > 0 || fdm_blocks > 0) && !fdm_singular
                                : rows_d && cfg.nz == 1 && dr_blocks > 0);
    }
    pgpu_status run_checked(T *u, const T *f, double *res) { return rows_f ? run_fdm(u, f, res) : run_dr(u, f, res); }
    // The plans' stream (pgpu_set_stream).
    pgpu_status set_stream(char *err, cudaStream_t st)
    {
        for (cufftHandle p : plans) PGPU_CUFFT(cufftSetStream(p, st));
        return PGPU_SUCCESS;
    }

  private:
    typedef typename Cplx<T>::type C2;
    Env *env = nullptr;
    pgpu_config cfg{};
    const Level<T> *lv0 = nullptr; // the level-0 grid and launches
    std::vector<FftAxis> fax; // real-to-real axes, in forward order
    std::vector<cufftHandle> plans;
    int tri = -1;             // axis solved by tridiagonal systems
    bool tri_nn = false;      // ... with Neumann at both ends
    int pmask = 0;            // periodic axes
    cufftHandle p_r2c = 0, p_c2r = 0;
    int p_loops = 1;          // executions of the periodic plans (one per z plane in one case)
    int64_t wp = 0;           // W's plane stride
    int64_t p_in_step = 0, p_out_step = 0;
    bool rows_x = false;      // x by our row kernels, y and z by p_c2c (see lf_forward_kernel)
    bool rows_z = false;      // ... and z by lf_zsolve_kernel, y alone by p_c2c
    cufftHandle p_c2c = 0;
    C2 *lf_tw = nullptr, *lf_twz = nullptr; // e^{-i pi q/N}, q < 2N = nx (for z: 2 nz)
    size_t lf_smem = 0, lf_zsmem = 0;
    void lf_fits(int64_t nx, int64_t nz, bool &x, bool &z) const;
    pgpu_status lf_prepare(int64_t nx, int64_t nz);
    T *W = nullptr, *S = nullptr;
    double *piv = nullptr; // the tridiagonal lines' pivots, for a chunk of tri_chunk lines
    int64_t tri_chunk = 0;
    C2 *C = nullptr, *Z = nullptr;
    Spectrum<T> spec{};
    bool rows_d = false;            // all Dirichlet by dr_kernel (see there)
    DrAxis<T> dra[3] = {};          // the row plans of x, y, z
    T *T1 = nullptr, *T2 = nullptr; // its transposed spectra (2D: T1 alone)
    const T *dr_ev[3] = {};         // eigenvalues per axis
    T dr_scale = 1;
    int dr_blocks = 0;              // 2D: dr2_kernel's blocks (0: the device cannot launch it)
    size_t dr_smem = 0;             // ... and its shared memory
    double *dr_part = nullptr;      // ... and its partials
    pgpu_status init_dr();
    pgpu_status row_twiddles(int64_t m, C2 **d);
    pgpu_status run_dr(T *u, const T *f, double *res = nullptr);
    bool rows_f = false;      // 2D by dense transforms, fdm2_kernel (see there)
    bool fdm_singular = false; // ... with a zero eigenvalue (no Dirichlet face)
    FdmArgs<T> fdm{};         // ... its data
    int fdm_blocks = 0;       // ... and its blocks (0: the device cannot launch it)
    FdmcTables fdmc{};        // ... or its cluster (fdmc_kernel; C 0: none)
    pgpu_status init_fdm();
    pgpu_status init_fdmc(const std::vector<double> (&q)[2], const std::vector<double> (&lam)[2]);
    pgpu_status run_fdm(T *u, const T *f, double *res = nullptr);
    // The distributed mode (dist.h): transforms on slabs and pencils of
    // the global grid, transposed between them.
    std::unique_ptr<FftDist<T>> dist;
    pgpu_status init_dist();
    pgpu_status run_dist(T *u, const T *f, const T *shift);
    pgpu_status dist_move(int from, int to);
    pgpu_status init_dist_rows();
    pgpu_status run_dist_rows(T *u, const T *f, const T *shift);
    pgpu_status dist_swap(int c, bool back);
};

template <class T> pgpu_status FftSolver<T>::init(Env &en, const pgpu_config &c, const Level<T> &l0)
{
    env = &en;
    cfg = c;
    lv0 = &l0;
    if (en.dist && en.dist->ranks > 1) return init_dist(); // (one rank: the slab is the grid)
    char *err = en.err;
    const bool is3d = cfg.nz > 1;
    const int dims = is3d ? 3 : 2;
    const int64_t n[3] = {cfg.nx, cfg.ny, is3d ? cfg.nz : 1};
    const double h[3] = {cfg.hx, cfg.hy, cfg.hz};
    const int64_t N = n[0] * n[1] * n[2];
    int mixed = -1; // the last axis with a Dirichlet and a Neumann face (the others: FFT_DN / FFT_ND)
    for (int a = 0; a < dims; ++a) {
        const int lo = cfg.bc[2 * a], hi = cfg.bc[2 * a + 1];
        if (lo == PGPU_BC_PERIODIC) pmask |= 1 << a;
        else if (lo != hi) mixed = a;
    }
    const int all = is3d ? 7 : 3;
    // The all-Dirichlet row kernels, where the size fits them and their
    // shared memory the device, on 2D grids only past FDM_ROWS_MIN a side;
    // else on a 2D grid of at most FDM_NMAX a side the dense transforms
    // (before the all-periodic rows and cuFFT too: see config.h).
    if (is3d || std::max(cfg.nx, cfg.ny) > FDM_ROWS_MIN) PGPU_FORWARD(init_dr());
    if (!rows_d) PGPU_FORWARD(init_fdm());
    if (rows_d || rows_f) return PGPU_SUCCESS;
    if (pmask == all) lf_fits(cfg.nx, is3d ? cfg.nz : 0, rows_x, rows_z);
    if (pmask != all) {
        tri = mixed;
        for (int a = dims - 1; tri < 0 && a >= 0; --a)
            if (!((pmask >> a) & 1)) tri = a;
        tri_nn = cfg.bc[2 * tri] == PGPU_BC_NEUMANN && cfg.bc[2 * tri + 1] == PGPU_BC_NEUMANN;
    }
    // cuFFT reads W plane by plane when y is the only periodic axis of a 3D
    // problem: keep every plane aligned to the complex type.
    wp = n[0] * n[1];
    if (is3d && pmask == 2 && (wp & 1)) ++wp;
    const int64_t wsize = wp * n[2];
    size_t work = 0;
    int64_t s_elems = 0, c_elems = 1;
    double scale = 1;
    bool dense = false; // an axis by dense products
    const cufftType R2C = FftTypes<T>::R2C, C2R = FftTypes<T>::C2R;
    // Real-to-real axes.
    for (int a = 0; a < dims; ++a) {
        if (a == tri || ((pmask >> a) & 1)) continue;
        FftAxis fa;
        const int kind = fft_axis_kind<T>(cfg.bc[2 * a], cfg.bc[2 * a + 1]);
        if (fft_dense_axis(kind, n[a], N)) {
            PGPU_FORWARD(fft_dense_plan<T>(en, fa, a, kind, cfg.bc[2 * a], cfg.bc[2 * a + 1], h[a], n, wp));
            dense = true;
        } else {
            PGPU_FORWARD(fft_axis_plan<T>(en, plans, fa, a, kind, n, wp, work, s_elems, c_elems, scale));
        }
        fax.push_back(fa);
    }
    // Periodic axes: one real-to-complex transform over all of them; the
    // fastest of them is halved.
    int64_t e[3] = {n[0], n[1], n[2]};
    if (pmask) {
        int hx = 0;
        while (!((pmask >> hx) & 1)) ++hx;
        e[hx] = n[hx] / 2 + 1;
        for (int a = 0; a < dims; ++a)
            if ((pmask >> a) & 1) scale /= (double)n[a];
        const int64_t E = e[0] * e[1] * e[2];
        c_elems = std::max<int64_t>(c_elems, E);
        long long pn[3], ie[3], oe[3], is = 1, id = 1, os = 1, od = 1, batch = 1;
        int rank = 0;
        {
            switch (pmask) {
            case 1: // x
                rank = 1; pn[0] = n[0]; ie[0] = n[0]; oe[0] = e[0]; id = n[0]; od = e[0]; batch = n[1] * n[2]; break;
            case 2: // y: batches over x (stride 1); in 3D one execution per z plane
                rank = 1; pn[0] = n[1]; ie[0] = n[1]; oe[0] = e[1]; is = n[0]; os = n[0]; batch = n[0];
                p_loops = (int)n[2]; p_in_step = wp; p_out_step = n[0] * e[1]; break;
            case 4: // z
                rank = 1; pn[0] = n[2]; ie[0] = n[2]; oe[0] = e[2]; is = n[0] * n[1]; os = n[0] * e[1]; batch = n[0] * n[1]; break;
            case 3: // x, y (batched over z)
                rank = 2; pn[0] = n[1]; pn[1] = n[0]; ie[0] = n[1]; ie[1] = n[0]; oe[0] = n[1]; oe[1] = e[0];
                id = n[0] * n[1]; od = e[0] * n[1]; batch = n[2]; break;
            case 5: // x, z (batched over y)
                rank = 2; pn[0] = n[2]; pn[1] = n[0]; ie[0] = n[2]; ie[1] = n[0] * n[1]; oe[0] = n[2]; oe[1] = e[0] * n[1];
                id = n[0]; od = e[0]; batch = n[1]; break;
            case 6: // y, z (batched over x)
                rank = 2; pn[0] = n[2]; pn[1] = n[1]; ie[0] = n[2]; ie[1] = n[1]; oe[0] = n[2]; oe[1] = e[1];
                is = n[0]; os = n[0]; id = 1; od = 1; batch = n[0]; break;
            default: // all three, through W (strides cuFFT cannot express)
                rank = 3; pn[0] = n[2]; pn[1] = n[1]; pn[2] = n[0]; ie[0] = n[2]; ie[1] = n[1]; ie[2] = n[0];
                oe[0] = n[2]; oe[1] = n[1]; oe[2] = e[0]; id = N; od = E; batch = 1;
            }
        }
        if (rows_z) { // y alone: contiguous lines of C[kx][z][y]
            long long ny1[1] = {n[1]};
            PGPU_FORWARD(make_plan(en, plans, p_c2c, work, 1, ny1, ny1, 1, n[1], ny1, 1, n[1], FftTypes<T>::C2C,
                                   e[0] * n[2]));
        } else if (rows_x) { // y (and z) complex, C[kx][z][y]: one contiguous transform per x mode
            rank = is3d ? 2 : 1;
            pn[0] = is3d ? n[2] : n[1];
            pn[1] = n[1];
            const long long d = n[1] * n[2];
            PGPU_FORWARD(make_plan(en, plans, p_c2c, work, rank, pn, pn, 1, d, pn, 1, d, FftTypes<T>::C2C, e[0]));
        } else {
            PGPU_FORWARD(make_plan(en, plans, p_r2c, work, rank, pn, ie, is, id, oe, os, od, R2C, batch));
            PGPU_FORWARD(make_plan(en, plans, p_c2r, work, rank, pn, oe, os, od, ie, is, id, C2R, batch));
        }
    }
    // Eigenvalues per transformed axis (in the mode order of the spectral array).
    std::vector<T> ev;
    size_t eoff[3] = {0, 0, 0};
    for (int a = 0; a < dims; ++a) {
        eoff[a] = ev.size();
        if (a == tri) continue;
        const int kind = ((pmask >> a) & 1) ? FFT_DFT : fft_axis_kind<T>(cfg.bc[2 * a], cfg.bc[2 * a + 1]);
        for (int64_t k = 0; k < e[a]; ++k) ev.push_back((T)fft_eigen(kind, n[a], h[a], k));
    }
    T *d_ev = nullptr;
    PGPU_FORWARD(env->upload(ev, &d_ev, "FFT eigenvalues"));
    spec.e0 = e[0];
    spec.e1 = e[1];
    spec.e2 = e[2];
    spec.ev0 = tri == 0 ? nullptr : d_ev + eoff[0];
    spec.ev1 = tri == 1 ? nullptr : d_ev + eoff[1];
    spec.ev2 = (!is3d || tri == 2) ? nullptr : d_ev + eoff[2];
    spec.scale = (T)scale;
    if (rows_x) { // C[kx][z][y]: y fastest, then z, then the x modes
        spec.e0 = e[1];
        spec.ev0 = d_ev + eoff[1];
        spec.e1 = is3d ? e[2] : e[0];
        spec.ev1 = d_ev + eoff[is3d ? 2 : 0];
        spec.e2 = is3d ? e[0] : 1;
        spec.ev2 = is3d ? d_ev + eoff[0] : nullptr;
    }
    // Buffers: W (real data), S (real scratch; in double also the tridiagonal pivots),
    // C / Z (complex scratch and spectrum; one array serves both).
    if (tri >= 0) tri_chunk = fft_chunk_lines(e[0] * e[1] * e[2] / e[tri], e[tri]);
    const int64_t piv_elems = tri >= 0 ? tri_chunk * e[tri] : 0;
    // A dense axis writes the other of W and S (fft_dense_run): both hold the
    // packed grid, and the pivots have their own array.
    const int64_t w_size = dense ? std::max<int64_t>(wsize, std::max<int64_t>(s_elems, c_elems)) : wsize;
    if (!rows_x) PGPU_FORWARD(env->mem.alloc(err, (void **)&W, (size_t)w_size * sizeof(T), "FFT data"));
    if (!fax.empty() || tri >= 0) {
        int64_t s_size = dense ? w_size : std::max<int64_t>(s_elems, c_elems);
        if (sizeof(T) == sizeof(double) && !dense) s_size = std::max(s_size, piv_elems);
        PGPU_FORWARD(env->mem.alloc(err, (void **)&S, (size_t)s_size * sizeof(T), "FFT scratch"));
    }
    // The line solves' pivots, in double (see tri_kernel): S itself in double.
    if (tri >= 0) {
        if (sizeof(T) == sizeof(double) && !dense) piv = (double *)S;
        else PGPU_FORWARD(env->mem.alloc(err, (void **)&piv, (size_t)piv_elems * sizeof(double), "FFT line pivots"));
    }
    if (!fax.empty() || pmask)
        PGPU_FORWARD(env->mem.alloc(err, (void **)&C, (size_t)c_elems * sizeof(C2), "FFT spectrum"));
    Z = C;
    if (rows_x) PGPU_FORWARD(lf_prepare(n[0], rows_z ? n[2] : 0));
    void *wa = nullptr;
    if (work) {
        PGPU_FORWARD(env->mem.alloc(err, &wa, work, "cuFFT work area"));
        for (cufftHandle p : plans) PGPU_CUFFT(cufftSetWorkArea(p, wa)); // (no plans while counting)
    }
    return PGPU_SUCCESS;
}

// Whether the all-periodic row kernels take x rows of nx reals (x) and z
// lines of nz complex values (z; nz = 0: none) within the device's shared memory.
template <class T> void FftSolver<T>::lf_fits(int64_t nx, int64_t nz, bool &x, bool &z) const
{
    const size_t x_room = (size_t)env->optin - sizeof(int64_t) * LF_T; // less the static row starts
    x = nx >= LF_MIN && nx <= LF_MAX && (nx & (nx - 1)) == 0 && lf_smem_bytes<T>((int)nx, true) <= x_room;
    z = x && nz >= LF_ZMIN && nz <= LF_ZMAX && (nz & (nz - 1)) == 0 &&
        lf_smem_bytes<T>(2 * (int)nz, false) <= (size_t)env->optin;
}

// The row kernels' twiddles (row_twiddles: m = nx for x; 2 nz for z) and
// shared memory, for x rows of nx reals and (nz > 0) z lines of nz.
template <class T> pgpu_status FftSolver<T>::lf_prepare(int64_t nx, int64_t nz)
{
    Env &en = *env;
    char *err = en.err;
    const size_t x_room = (size_t)en.optin - sizeof(int64_t) * LF_T;
    PGPU_FORWARD(row_twiddles(nx, &lf_tw));
    lf_smem = lf_smem_bytes<T>((int)nx, true);
    const int most = (int)std::min(lf_smem_most<T>(true), x_room);
    PGPU_CUDA_SETUP(en, cudaFuncSetAttribute(lf_forward_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
    PGPU_CUDA_SETUP(en, cudaFuncSetAttribute(lf_inverse_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
    if (nz > 0) {
        PGPU_FORWARD(row_twiddles(2 * nz, &lf_twz));
        lf_zsmem = lf_smem_bytes<T>(2 * (int)nz, false);
        const int zmost = (int)std::min(lf_smem_most<T>(false), (size_t)en.optin);
        PGPU_CUDA_SETUP(en, cudaFuncSetAttribute(lf_zsolve_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, zmost));
    }
    return PGPU_SUCCESS;
}

// Twiddles of the row kernels: e^{-2 pi i q/m}, q < m (for a row FFT of
// length N, m = 2N: tw[q] = e^{-i pi q/N}).
template <class T> pgpu_status FftSolver<T>::row_twiddles(int64_t m, C2 **d)
{
    std::vector<C2> tw((size_t)m);
    for (int64_t q = 0; q < m; ++q) {
        const double a = -2.0 * M_PI * (double)q / (double)m;
        tw[(size_t)q].x = (T)std::cos(a);
        tw[(size_t)q].y = (T)std::sin(a);
    }
    return env->upload(tw, d, "FFT row twiddles");
}

// A 2D grid of at most FDM_NMAX nodes a side, any faces: fdm2_kernel.  Its
// data: the four factors (fdm_basis's Q and Q^T per axis, rounded to T),
// the eigenvalues, the spectrum T1 (N words) and the partials of one
// block per row.
template <class T> pgpu_status FftSolver<T>::init_fdm()
{
    char *err = env->err;
    if (cfg.nz != 1 || cfg.nx > FDM_NMAX || cfg.ny > FDM_NMAX) return PGPU_SUCCESS;
    const int64_t nx = cfg.nx, ny = cfg.ny;
    std::vector<double> q[2], lam[2];
    fdm_basis(cfg.bc[0], cfg.bc[1], nx, cfg.hx, q[0], lam[0]);
    fdm_basis(cfg.bc[2], cfg.bc[3], ny, cfg.hy, q[1], lam[1]);
    std::vector<T> d;
    size_t off[6];
    auto put = [&](int k, const std::vector<double> &m, int64_t n, bool tr) {
        off[k] = d.size();
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) d.push_back((T)(tr ? m[(size_t)(j * n + i)] : m[(size_t)(i * n + j)]));
    };
    put(0, q[1], ny, true);  // phase 0: Qy^T on the left,
    put(1, q[0], nx, false); // Qx on the right;
    put(2, q[1], ny, false); // phase 1: Qy on the left,
    put(3, q[0], nx, true);  // Qx^T on the right
    for (int a = 0; a < 2; ++a) {
        off[4 + a] = d.size();
        for (double v : lam[a]) d.push_back((T)v);
    }
    T *dd = nullptr;
    PGPU_FORWARD(env->upload(d, &dd, "FFT dense transforms"));
    rows_f = true;
    fdm_singular = lam[0][0] + lam[1][0] == 0;
    FdmArgs<T> &A = fdm;
    A.g = lv0->g;
    A.P[0][0] = dd + off[0];
    A.P[0][1] = dd + off[1];
    A.P[1][0] = dd + off[2];
    A.P[1][1] = dd + off[3];
    A.lx = dd + off[4];
    A.ly = dd + off[5];
    A.nx = (int)nx;
    A.ny = (int)ny;
    PGPU_FORWARD(env->mem.alloc(err, (void **)&A.T1, (size_t)(nx * ny) * sizeof(T), "FFT spectrum"));
    PGPU_FORWARD(env->mem.alloc(err, (void **)&A.part, (size_t)ny * 6 * sizeof(double), "FFT partials"));
    PGPU_FORWARD(init_fdmc(q, lam));
    if (env->mem.counting) return PGPU_SUCCESS;
    int coop = 0, per_sm = 0;
    PGPU_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, env->device));
    if (!coop) return PGPU_SUCCESS;
    const void *k2[2] = {(const void *)fdm2_kernel<T, true>, (const void *)fdm2_kernel<T, false>};
    for (int v = 0; v < 2; ++v) {
        int b = 0;
        PGPU_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k2[v], FDM_T, 0));
        per_sm = v ? std::min(per_sm, b) : b;
    }
    fdm_blocks = (int)std::min<int64_t>(ny, (int64_t)per_sm * env->sms);
    return PGPU_SUCCESS;
}

// The cluster route (fdmc_kernel) for grids of at most FDMC_NMAX a side:
// its tables (uploaded wherever the grid allows the route, so that the
// workspace does not depend on the device), then the route itself where
// the code runs as built for sm_90 on and one cluster of C blocks fits.
template <class T> pgpu_status FftSolver<T>::init_fdmc(const std::vector<double> (&q)[2], const std::vector<double> (&lam)[2])
{
    char *err = env->err;
    const int64_t nx = cfg.nx, ny = cfg.ny;
    if (nx > FDMC_NMAX || ny > FDMC_NMAX) return PGPU_SUCCESS;
    const int C = ny > 8 ? FDMC_C : 8;
    int use = 0;
    const void *kc[2] = {(const void *)fdmc_kernel<T, true>, (const void *)fdmc_kernel<T, false>};
    if (!env->mem.counting) {
        cudaFuncAttributes fa;
        PGPU_CUDA(cudaFuncGetAttributes(&fa, kc[0]));
        int major = 0, cluster = 0;
        PGPU_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, env->device));
        PGPU_CUDA(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, env->device));
        use = fa.ptxVersion >= 90 && major >= 9 && cluster && FDMC_SMEM <= (size_t)env->optin;
        for (int v = 0; v < 2 && use; ++v) {
            PGPU_CUDA(cudaFuncSetAttribute(kc[v], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)FDMC_SMEM));
            if (C > 8) PGPU_CUDA(cudaFuncSetAttribute(kc[v], cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
            cudaLaunchConfig_t lc = {};
            cudaLaunchAttribute at[1];
            fdmc_config(C, lc, at, env->st);
            int fits = 0;
            if (cudaOccupancyMaxActiveClusters(&fits, kc[v], &lc) != cudaSuccess) {
                (void)cudaGetLastError();
                fits = 0;
            }
            use = fits > 0;
        }
    }
    std::vector<double> la, lb, rx, rxt;
    fdmc_tables(q, nx, ny, C, la, lb, rx, rxt);
    double *d[6] = {};
    const std::vector<double> *h[6] = {&la, &lb, &rx, &rxt, &lam[0], &lam[1]};
    for (int k = 0; k < 6; ++k) PGPU_FORWARD(env->upload(*h[k], &d[k], "FFT cluster tables"));
    fdmc = FdmcTables{d[0], d[1], d[2], d[3], d[4], d[5], use ? C : 0, (int)((ny + C - 1) / C)};
    return PGPU_SUCCESS;
}

// One cooperative launch (with res: the default path's checks in it), or
// its two phases as launches of their own where the device cannot.
template <class T> pgpu_status FftSolver<T>::run_fdm(T *u, const T *f, double *res)
{
    char *err = env->err;
    const cudaStream_t st = env->st;
    FdmArgs<T> A = fdm;
    A.f = f;
    A.u_in = A.u_out = u;
    A.res = res;
    void *args[] = {&A};
    if (fdmc.C > 0) {
        cudaLaunchConfig_t lc = {};
        cudaLaunchAttribute at[1];
        fdmc_config(fdmc.C, lc, at, st);
        const cudaError_t e = res ? cudaLaunchKernelEx(&lc, fdmc_kernel<T, true>, A, fdmc)
                                  : cudaLaunchKernelEx(&lc, fdmc_kernel<T, false>, A, fdmc);
        if (e == cudaSuccess) return PGPU_SUCCESS;
        // refused for its size (MPS limits, say): the cooperative route from now on
        if (e != cudaErrorInvalidClusterSize &&
            e != cudaErrorNotSupported && e != cudaErrorLaunchOutOfResources)
            return cuda_status(err, e, "cudaLaunchKernelEx", PGPU_AT);
        (void)cudaGetLastError();
        fdmc.C = 0;
        if (res && fdm_blocks == 0) return PGPU_SUCCESS; // (folds_checks() false: solve()'s steps instead)
    }
    const void *kern = res ? (const void *)fdm2_kernel<T, true> : (const void *)fdm2_kernel<T, false>;
    bool done = false;
    PGPU_FORWARD(coop_launch(*env, kern, fdm_blocks, FDM_T, args, 0, res != nullptr, done));
    if (done) return PGPU_SUCCESS;
    for (int ph = 0; ph < 2; ++ph) {
        fdm2_phase_kernel<T><<<(unsigned)A.ny, FDM_T, 0, st>>>(A, ph);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

// All Dirichlet, every n+1 a product of primes up to 19 and its rows within
// the device's shared memory: the row kernels of dr_kernel take the solve
// (3D: five or six passes; 2D: dr2_kernel, one cooperative launch).
template <class T> pgpu_status FftSolver<T>::init_dr()
{
    char *err = env->err;
    const int optin = env->optin;
    const bool is3d = cfg.nz > 1;
    const int dims = is3d ? 3 : 2;
    for (int f = 0; f < 2 * dims; ++f)
        if (cfg.bc[f] != PGPU_BC_DIRICHLET) return PGPU_SUCCESS;
    const int64_t n[3] = {cfg.nx, cfg.ny, is3d ? cfg.nz : 1};
    const double h[3] = {cfg.hx, cfg.hy, cfg.hz};
    const int64_t N = n[0] * n[1] * n[2];
    // (2D: as separate passes the rows are too few to fill the device, and
    // cuFFT's route is faster; in one launch, dr2_kernel, a power of two's
    // transform runs inlined, dr_pow2_fft.)
    size_t smem = 0;
    for (int a = 0; a < dims; ++a) {
        // (3D: a power of two's transform inlined where its rows fit -- a
        // block holds 256 / (N/16) of them -- else the general one.)
        bool planned = dr_plan_pow2<T>((int)n[a], dra[a]) && dr_smem_bytes(dra[a]) <= (size_t)optin;
        if (!planned && is3d) planned = dr_plan<T>((int)n[a], dra[a]);
        if (n[a] >= DR_NMAX || !planned || dr_smem_bytes(dra[a]) > (size_t)optin) return PGPU_SUCCESS;
        if ((N / n[a] >> dra[a].rpb_log) >= INT_MAX) return PGPU_SUCCESS; // blocks of one launch
        smem = std::max(smem, dr_smem_bytes(dra[a]));
    }
    rows_d = true;
    std::vector<T> ev;
    size_t eoff[3];
    double scale = 1;
    for (int a = 0; a < dims; ++a) {
        eoff[a] = ev.size();
        for (int64_t k = 0; k < n[a]; ++k) ev.push_back((T)fft_eigen(FFT_DST1, n[a], h[a], k));
        C2 *tw = nullptr;
        PGPU_FORWARD(row_twiddles(2 * (int64_t)dra[a].N, &tw));
        dra[a].tw = tw;
        scale *= 2.0 / (double)dra[a].N;
    }
    T *d_ev = nullptr;
    PGPU_FORWARD(env->upload(ev, &d_ev, "FFT eigenvalues"));
    for (int a = 0; a < dims; ++a) dr_ev[a] = d_ev + eoff[a];
    dr_scale = (T)scale;
    PGPU_FORWARD(env->mem.alloc(err, (void **)&T1, (size_t)N * sizeof(T), "FFT spectrum"));
    // The limit is a property of the kernel: every solver sets the same one.
    if (is3d) {
        PGPU_FORWARD(env->mem.alloc(err, (void **)&T2, (size_t)N * sizeof(T), "FFT spectrum (second)"));
        for (auto k : DrPasses<T>(dra).k)
            if (k) PGPU_CUDA_SETUP(*env, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
        return PGPU_SUCCESS;
    }
    // 2D: groups of fewer rows than a block holds where the rows are too few
    // to give a quarter of the multiprocessors some (else one block would
    // take them all in series; more, smaller groups ran slower at 255^2 and
    // 511^2: each phase then waits for more blocks); the blocks of the
    // cooperative launch, at most one per group of its widest phase, and
    // their partials (two reductions).
    int64_t groups = 0;
    for (int a = 0; a < 2; ++a) {
        const int64_t rows = n[1 - a]; // x's rows are y's points and y's x's
        auto count = [&] { return (rows + (1 << dra[a].grp_log) - 1) >> dra[a].grp_log; };
        while (dra[a].grp_log > 0 && count() < std::max(1, env->sms / 4)) --dra[a].grp_log;
        groups = std::max(groups, count());
    }
    PGPU_FORWARD(env->mem.alloc(err, (void **)&dr_part, (size_t)groups * 6 * sizeof(double), "FFT partials"));
    PGPU_CUDA_SETUP(*env, cudaFuncSetAttribute(dr2_phase_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    if (env->mem.counting) return PGPU_SUCCESS;
    // The one launch, where the device offers cooperative launches and its
    // rows fit beside the kernel's static shared memory (the reductions').
    int coop = 0, per_sm = 0;
    PGPU_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, env->device));
    if (!coop) return PGPU_SUCCESS;
    const void *k2[2] = {(const void *)dr2_kernel<T, true>, (const void *)dr2_kernel<T, false>};
    for (int v = 0; v < 2; ++v) {
        cudaFuncAttributes fa;
        PGPU_CUDA(cudaFuncGetAttributes(&fa, k2[v]));
        const int room = optin - (int)fa.sharedSizeBytes;
        if (room < (int)smem) return PGPU_SUCCESS;
        PGPU_CUDA(cudaFuncSetAttribute(k2[v], cudaFuncAttributeMaxDynamicSharedMemorySize, room));
        int b = 0;
        PGPU_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k2[v], DR_T, smem));
        per_sm = v ? std::min(per_sm, b) : b;
    }
    if (per_sm > 0) dr_blocks = (int)std::min<int64_t>(groups, (int64_t)per_sm * env->sms);
    dr_smem = smem;
    return PGPU_SUCCESS;
}

// 3D: five row passes (z a power of two) or six; 2D: one cooperative launch (dr2_kernel), or its
// three phases as separate launches where the device cannot launch it.
// CHECK (2D, cooperative): the default path's scan and residual folded in,
// their totals in res (Reducer's slots RES_SCAN and RES_NORM).
template <class T> pgpu_status FftSolver<T>::run_dr(T *u, const T *f, double *res)
{
    char *err = env->err;
    const cudaStream_t st = env->st;
    const Grid<T> &g = lv0->g;
    const int64_t nx = g.nx, ny = g.ny, nz = g.nz;
    DrArgs<T> A{};
    A.g = g;
    A.f = f;
    A.u_in = u;
    A.u_out = u;
    A.scale = T(1);
    auto pass = [&](void (*kern)(DrArgs<T>), int axis, const T *in, T *out, int64_t nrows) -> pgpu_status {
        A.ax = dra[axis];
        A.in = in;
        A.out = out;
        A.nrows = nrows;
        const unsigned blocks = (unsigned)((nrows + (1 << A.ax.rpb_log) - 1) >> A.ax.rpb_log);
        kern<<<blocks, DR_T, dr_smem_bytes(A.ax), st>>>(A);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    };
    if (nz == 1) {
        Dr2Args<T> D{};
        D.fwd = D.mid = D.inv = A;
        D.fwd.ax = dra[0];
        D.fwd.out = T1;
        D.fwd.nrows = ny;
        D.mid.ax = dra[1];
        D.mid.in = D.mid.out = T1;
        D.mid.nrows = nx;
        D.mid.scale = dr_scale;
        D.mid.evA = dr_ev[0];
        D.mid.nA = nx;
        D.mid.evK = dr_ev[1];
        D.inv.ax = dra[0];
        D.inv.in = T1;
        D.inv.nrows = ny;
        D.part = dr_part;
        D.res = res;
        void *args[] = {&D};
        const void *kern = res ? (const void *)dr2_kernel<T, true> : (const void *)dr2_kernel<T, false>;
        bool done = false;
        PGPU_FORWARD(coop_launch(*env, kern, dr_blocks, DR_T, args, dr_smem, res != nullptr, done));
        if (done) return PGPU_SUCCESS;
        const int64_t rows[3] = {ny, nx, ny};
        for (int ph = 0; ph < 3; ++ph) {
            const int a = ph == 1 ? 1 : 0;
            const unsigned blocks = (unsigned)((rows[ph] + (1 << dra[a].grp_log) - 1) >> dra[a].grp_log);
            dr2_phase_kernel<T><<<blocks, DR_T, dr_smem_bytes(dra[a]), st>>>(D, ph);
            PGPU_LAUNCHED();
        }
        return PGPU_SUCCESS;
    }
    const DrPasses<T> K(dra);
    PGPU_FORWARD(pass(K.k[0], 0, nullptr, T1, ny * nz)); // T1[kx][z][y]
    PGPU_FORWARD(pass(K.k[1], 1, T1, T2, nx * nz));      // T2[ky][kx][z]
    A.scale = dr_scale; // in the division
    A.evA = dr_ev[0];
    A.nA = nx;
    A.evB = dr_ev[1];
    A.evK = dr_ev[2];
    PGPU_FORWARD(pass(K.k[2], 2, T2, T2, nx * ny)); // z: forward and divided (DR_SOLVE: and inverse)
    A.scale = T(1);
    if (K.k[3]) PGPU_FORWARD(pass(K.k[3], 2, T2, T2, nx * ny));
    PGPU_FORWARD(pass(K.k[4], 1, T2, T1, nx * nz));
    return pass(K.k[5], 0, T1, nullptr, ny * nz);
}

// Forward transforms, one solve per mode, inverse transforms: a fixed
// sequence of launches on the stream (capturable in a CUDA graph).  cuFFT
// needs its arrays aligned to the complex type, which the user's ghosted
// layout is not, hence the copies in and out of W.
template <class T> pgpu_status FftSolver<T>::run(T *u, const T *f, const T *d_shift)
{
    char *err = env->err;
    const cudaStream_t st = env->st;
    const int sms = env->sms;
    const Level<T> &L0 = *lv0;
    const int64_t E = spec.e0 * spec.e1 * spec.e2;
    const ColLaunch &c = L0.col;
    if (dist) return run_dist(u, f, d_shift);
    UserIO<T> none{L0.g, nullptr, nullptr, nullptr, nullptr, 0, 0};
    if (rows_f) return run_fdm(u, f);
    if (rows_d) return run_dr(u, f);
    UserIO<T> in = none, out = none;
    in.u_in = u; in.f = f; in.shift = d_shift; in.read = 1;
    out.u_out = u; out.write = 1;
    if (rows_x) {
        const LfShape sh = lf_shape(L0.g.nx, LF_T, Tune<T>::lf_vals);
        const unsigned blocks = (unsigned)((L0.g.ny * (int64_t)L0.g.nz + sh.lpb - 1) / sh.lpb);
        lf_forward_kernel<T><<<blocks, LF_T, lf_smem, st>>>(L0.g, f, d_shift, lf_tw, C);
        PGPU_LAUNCHED();
        PGPU_CUFFT(FftTypes<T>::c2c(p_c2c, C, CUFFT_FORWARD));
        if (rows_z) {
            const LfShape zs = lf_shape(2 * (int)spec.e1, LF_T, Tune<T>::lf_vals);
            const dim3 zg((unsigned)((spec.e0 + zs.lpb - 1) / zs.lpb), (unsigned)spec.e2);
            lf_zsolve_kernel<T><<<zg, LF_T, lf_zsmem, st>>>(spec, lf_twz, C, nullptr);
        } else {
            spectral_divide_kernel<T, C2><<<grid_for(E, sms), 256, 0, st>>>(spec, C);
        }
        PGPU_LAUNCHED();
        PGPU_CUFFT(FftTypes<T>::c2c(p_c2c, C, CUFFT_INVERSE));
        lf_inverse_kernel<T><<<blocks, LF_T, lf_smem, st>>>(L0.g, C, lf_tw, u);
        PGPU_LAUNCHED();
        return PGPU_SUCCESS;
    }
    const bool fused = !fax.empty(); // the outermost transforms read f and write u
    // The data's array: a dense axis writes the other of W and S, which then
    // swap (locally: every solve starts from W).
    T *w = W, *sx = S;
    auto axis = [&](size_t k, bool inverse, const UserIO<T> &io) -> pgpu_status {
        if (!fax[k].dm[0][0]) return fft_axis_run<T>(*env, fax[k], inverse, io, w, sx, C);
        PGPU_FORWARD(fft_dense_run<T>(*env, fax[k], inverse, io, w, sx));
        std::swap(w, sx);
        return PGPU_SUCCESS;
    };
    // (a dense first axis reads the right-hand side from W: its products
    // took 1.7 (float) to 2 (double) times as long reading f and the
    // boundary terms in place)
    const bool fused_in = fused && !fax[0].dm[0][0];
    if (!fused_in) {
        fft_load_kernel<T><<<c.grid, c.block, 0, st>>>(L0.g, u, f, d_shift, W, wp, c.kchunk, c.nyb, c.nchunks);
        PGPU_LAUNCHED();
    }
    for (size_t k = 0; k < fax.size(); ++k) PGPU_FORWARD(axis(k, false, k == 0 && fused_in ? in : none));
    if (pmask)
        for (int k = 0; k < p_loops; ++k) PGPU_CUFFT(FftTypes<T>::r2c(p_r2c, w + k * p_in_step, Z + k * p_out_step));
    if (tri >= 0) {
        const T *cl = tri == 0 ? L0.g.cxl : (tri == 1 ? L0.g.cyl : L0.g.czl);
        const T *ch = tri == 0 ? L0.g.cxh : (tri == 1 ? L0.g.cyh : L0.g.czh);
        const int64_t e[3] = {spec.e0, spec.e1, spec.e2};
        const int64_t lines = E / e[tri];
        if (e[tri] <= PCR_MAX && lines < PCR_MAX_LINES) { // few lines: a block per line
            int P = 32;
            while (P < e[tri]) P <<= 1;
            if (pmask) pcr_kernel<T, C2><<<(unsigned)lines, P, 0, st>>>(spec, tri, cl, ch, tri_nn, Z);
            else pcr_kernel<T, T><<<(unsigned)lines, P, 0, st>>>(spec, tri, cl, ch, tri_nn, w);
        } else {
            for (int64_t b0 = 0; b0 < lines; b0 += tri_chunk) {
                const int64_t nb = std::min(tri_chunk, lines - b0);
                const unsigned tb = (unsigned)std::min<int64_t>((nb + TRI_T - 1) / TRI_T, (int64_t)sms * 64);
                if (pmask) tri_kernel<T, C2><<<tb, TRI_T, 0, st>>>(spec, tri, cl, ch, tri_nn, Z, piv, b0, nb);
                else tri_kernel<T, T><<<tb, TRI_T, 0, st>>>(spec, tri, cl, ch, tri_nn, w, piv, b0, nb);
                if (b0 + nb < lines) PGPU_LAUNCHED();
            }
        }
    } else if (pmask) {
        spectral_divide_kernel<T, C2><<<grid_for(E, sms), 256, 0, st>>>(spec, Z);
    } else {
        spectral_divide_kernel<T, T><<<grid_for(E, sms), 256, 0, st>>>(spec, w);
    }
    PGPU_LAUNCHED();
    if (pmask)
        for (int k = 0; k < p_loops; ++k) PGPU_CUFFT(FftTypes<T>::c2r(p_c2r, Z + k * p_out_step, w + k * p_in_step));
    for (size_t k = fax.size(); k-- > 0;) PGPU_FORWARD(axis(k, true, k == 0 ? out : none));
    if (!fused) {
        fft_store_kernel<T><<<c.grid, c.block, 0, st>>>(L0.g, W, wp, u, c.kchunk, c.nyb, c.nchunks);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 35 "src/poisson_gpu.cu"
#endif
// graph.h -- replay of fixed launch sequences from CUDA graphs
#ifdef PGPU_SRC_LINES
#line 2 "src/graph.h"
#endif



namespace pgpu {

// Multigrid launches replay CUDA graphs: a multigrid pass is a few hundred
// launches, many on small levels, and a graph removes most of the gaps
// between them (FMG at 512^3: 7.95 -> 7.62 ms in float).  A sequence of
// launches with no host synchronisation inside -- a PGPU_FIXED solve, an FMG
// pass, a cycle -- is captured the first time it runs for a (u, f) pair, on
// a stream of the handle's (thread-local capture mode), and instantiated
// (host time, once); later runs with that pair only launch the graph.  The
// graphs of the last REPLAY_MAX (pair, sequence) keys are kept.  Where the
// caller's stream is itself being captured, the launches go there directly.
// A sequence must leave the host-side state (Level::cur) as it found it, so
// that its replay is the same sequence -- FMG passes and fixed solves end in
// u -- or the caller keys and restores it: a cycle of run_multigrid may end
// in level 0's other array (Multigrid::flip0), keyed by the array it starts
// in, and its kept `iterations` say where it ends.

class Replay {
  public:
    ~Replay()
    {
        for (Graph &p : graphs) cudaGraphExecDestroy(p.exec);
        if (cap_st) cudaStreamDestroy(cap_st);
    }
    pgpu_status init(Env &env)
    {
        char *err = env.err;
        PGPU_CUDA(cudaStreamCreateWithFlags(&cap_st, cudaStreamNonBlocking));
        return PGPU_SUCCESS;
    }
    // Runs launches() -- which puts its work on env.st and may set
    // `iterations` -- as the graph of (u, f, kind), on env.st.
    template <class F>
    pgpu_status run(Env &env, const void *u, const void *f, int kind, int &iterations, F &&launches)
    {
        char *err = env.err;
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        PGPU_CUDA(cudaStreamIsCapturing(env.st, &cs));
        if (cs != cudaStreamCaptureStatusNone || !cap_st) return launches();
        for (Graph &p : graphs)
            if (p.u == u && p.f == f && p.kind == kind) {
                p.used = ++clock;
                iterations = p.iterations;
                PGPU_CUDA(cudaGraphLaunch(p.exec, env.st));
                return PGPU_SUCCESS;
            }
        cudaError_t ce = cudaStreamBeginCapture(cap_st, cudaStreamCaptureModeThreadLocal);
        if (ce != cudaSuccess) return cuda_status(err, ce, "cudaStreamBeginCapture", PGPU_AT);
        const cudaStream_t user = env.st;
        env.st = cap_st;
        const pgpu_status s = launches();
        env.st = user;
        cudaGraph_t graph = nullptr;
        ce = cudaStreamEndCapture(cap_st, &graph);
        if (s != PGPU_SUCCESS || ce != cudaSuccess) {
            if (graph) cudaGraphDestroy(graph);
            if (s != PGPU_SUCCESS) return s;
            return cuda_status(err, ce, "cudaStreamEndCapture", PGPU_AT);
        }
        cudaGraphExec_t exec = nullptr;
        // (node priorities: the distributed FFT's moves keep their stream's)
        ce = cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagUseNodePriority);
        cudaGraphDestroy(graph);
        if (ce != cudaSuccess) return cuda_status(err, ce, "cudaGraphInstantiateWithFlags", PGPU_AT);
        if ((int)graphs.size() == REPLAY_MAX) { // the least recently used makes room
            size_t old = 0;
            for (size_t k = 1; k < graphs.size(); ++k)
                if (graphs[k].used < graphs[old].used) old = k;
            cudaGraphExecDestroy(graphs[old].exec);
            graphs.erase(graphs.begin() + (std::ptrdiff_t)old);
        }
        graphs.push_back(Graph{u, f, kind, exec, iterations, ++clock});
        PGPU_CUDA(cudaGraphLaunch(exec, env.st));
        return PGPU_SUCCESS;
    }

    // Forgets every graph (the levels' grids they hold changed).
    void clear()
    {
        for (Graph &p : graphs) cudaGraphExecDestroy(p.exec);
        graphs.clear();
    }

  private:
    struct Graph {
        const void *u, *f;
        int kind;
        cudaGraphExec_t exec;
        int iterations;
        unsigned long long used;
    };
    cudaStream_t cap_st = nullptr;
    std::vector<Graph> graphs;
    unsigned long long clock = 0;
};

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 36 "src/poisson_gpu.cu"
#endif
// krylov.h -- CG (classic, pipelined) and BiCGStab
#ifdef PGPU_SRC_LINES
#line 2 "src/krylov.h"
#endif




namespace pgpu {

// Conjugate gradients (classic, and the pipelined form of Ghysels and
// Vanroose) and BiCGStab on level 0, preconditioned by nothing, the
// diagonal, one multigrid cycle from zero (classic CG's first: an FMG
// pass), or the FFT solve of the box.
// Every scalar of the recurrences lives on the device: the last block of
// each reduction computes the coefficients that the next kernels read
// (krylov_scalars), so an iteration is a fixed sequence of launches without
// a host synchronisation -- replayed as a graph, capturable under
// PGPU_FIXED -- and the host reads the residual norm every check_interval
// iterations only.
//
// The vectors live in workspace with zero ghosts (the boundary data enter
// once, through the first residual) and are zero at every point that is not
// an unknown: the kernels skip those points, the FFT preconditioner's output
// is masked, and a new mask clears them (reset).
//
// The multigrid preconditioner is the standard cycle (post-smoothing in
// the colour order of pre-smoothing, pre = post by default), which is not
// symmetric, so classic CG takes the flexible coefficients
// (alpha = p.r / p.Ap, beta = -z.Ap / p.Ap: each new direction A-orthogonal
// to the last, Notay's FCG(1)): they equal the classic ones for a
// symmetric preconditioner and keep CG converging when it is not (nothing
// proves the general form's cycle symmetric either).  The symmetric cycle
// (post-smoothing in the reverse colour order) is a much weaker
// preconditioner with red-black smoothing: as a stationary iteration at
// 64^3, V(2,2) reduces the residual by 0.19 per cycle against 0.05 for the
// standard one, and CG around it takes 9 iterations to 1e-10 at 512^3
// against 7 for flexible CG around the standard cycle.  Pipelined CG, whose
// recurrences need a symmetric preconditioner, takes it, and so does
// classic CG where beta varies or a mask is set (Solver::symmetric_cycle;
// the bench's kr-box rows measure both cycles): on 10^6 jumps the standard cycle can
// grow the residual a thousandfold per cycle, and on masks it can be far
// from symmetric; flexible CG around it stalled on both (masks of pockets,
// held cells or thin walls: relative residual 1e-5 to 0.1 after 400
// iterations), where CG around the symmetric cycle converged (the
// symmetric cycle is positive definite whatever its stationary rate, as
// long as the restriction is the interpolation's adjoint and each coarse
// solve symmetric and positive: the smoothing part S + S^T - S^T A S plus a
// semi-definite coarse part).
// The flexible coefficients cost a read of r and of Ap more per iteration.
//
// Singular problems (no Dirichlet face; sealed pockets of a mask): in exact
// arithmetic the residual stays in the range of A (mean zero on each
// singular region) and a constant in a search direction changes neither
// A p nor a dot product with a residual.  Rounding moves the recursive
// residual's mean, and nothing in the recurrences takes it back: in float
// without a preconditioner it grew until r.r was its mean alone (CG ran to
// max_iterations and the constant in u swamped it).  So r's mean is taken
// out as the iterations go: on a singular box the last block of each sum of
// r keeps the mean (KS_RMEAN) and the next update of r subtracts it (no
// extra pass; what is left is one update's rounding, not the sum of all);
// on a mask's singular regions each region's mean is projected out after
// every iteration (Hierarchy::project, three passes: rare domains).  The
// preconditioner's input has its mean passed as the shift (the multigrid and
// FFT solves of a singular box expect a consistent right-hand side), and the
// solver removes the constant from u at the end as for every method.

// Scalar slots (doubles on the device).
enum {
    KS_RR = 0, // ||r||^2 of the recursively updated residual
    KS_BAD,    // non-zero: a breakdown; every coefficient is 0 from then on (u keeps the last good iterate)
    KS_ALPHA,
    KS_BETA,
    KS_OMEGA,
    KS_RHO,    // CG: r.z; BiCGStab: (r0, r); pipelined: gamma = r.u
    KS_PQ,     // CG: p.Ap
    KS_SUM,    // the sum of the preconditioner's next input (its mean times the points)
    KS_RMEAN,  // singular box: the mean of r, taken out of r by the next update (see krylov.h's head)
    KS_COUNT
};

// What the last block of a reduction does with its four sums v.
enum KrylovOp {
    KOP_STORE = 0,    // store the sums (the first stage of a folded reduction)
    KOP_RR,           // [r.r, sum r]: ||r||^2 and the preconditioner's shift
    KOP_SHIFT,        // [sum x]: the preconditioner's shift
    KOP_CG_START,     // [r.z]: rho, beta = 0
    KOP_CG_ALPHA,     // [p.Ap, -, -, p.r]: alpha
    KOP_CG_BETA,      // [r.z, z.Ap]: beta, rho
    KOP_PIPE_START,   // [r.u, w.u, r.r, sum w]: gamma, alpha = gamma / delta, beta = 0
    KOP_PIPE,         // [r.u, w.u, r.r, sum w]: gamma, alpha, beta
    KOP_PIPE0,        // [sum r, w.r, r.r, sum w]: as KOP_PIPE with u = r (no preconditioner)
    KOP_BI_START,     // [r.r, sum r]: rho = ||r||^2 (r0 = r), beta = 0
    KOP_BI_ALPHA,     // [-, r0.v]: alpha
    KOP_BI_S,         // [s.s, sum s]: ||s||^2, the shift
    KOP_BI_OMEGA,     // [-, s.t, t.t]: omega
    KOP_BI_RHO        // [r0.r, r.r, sum r]: rho, ||r||^2, beta
};

template <class T>
__device__ void krylov_scalars(int op, const double *v, double *s, T *shift, double npts, int singular, int flexible)
{
    if (op == KOP_RR || op == KOP_BI_START || op == KOP_BI_S) s[KS_RR] = v[0];
    if (op == KOP_PIPE_START || op == KOP_PIPE || op == KOP_PIPE0) s[KS_RR] = v[2];
    { // the ops that sum r: its mean, for the next update to take out
        const int at = op == KOP_RR || op == KOP_BI_START ? 1 : op == KOP_BI_RHO ? 2 : op == KOP_PIPE0 ? 0 : -1;
        if (at >= 0) s[KS_RMEAN] = singular ? v[at] / npts : 0.0;
    }
    if (shift) { // the ops that sum the preconditioner's next input: its mean
        const int at = op == KOP_SHIFT ? 0
                       : op == KOP_PIPE_START || op == KOP_PIPE || op == KOP_PIPE0 ? 3
                       : op == KOP_RR || op == KOP_BI_START || op == KOP_BI_S ? 1 : -1;
        if (at >= 0) {
            s[KS_SUM] = singular ? v[at] : 0.0;
            store_shift(shift, singular ? v[at] / npts : 0.0);
        }
    }
    auto good = [](double x) { return isfinite(x); };
    if (s[KS_BAD] != 0 || !good(v[0]) || !good(v[1]) || !good(v[2]) || !good(v[3])) { // frozen
        if (op != KOP_STORE && op != KOP_SHIFT && op != KOP_RR && op != KOP_BI_S) s[KS_BAD] = 1;
        s[KS_ALPHA] = s[KS_BETA] = s[KS_OMEGA] = 0;
        return;
    }
    // A denominator that is not positive where its numerator is not zero is a
    // breakdown; a zero numerator (the residual vanished) is not.
    auto ratio = [&](double num, double den, bool positive) {
        if (num == 0) return 0.0;
        if (!(positive ? den > 0 : den != 0) || !good(num / den)) {
            s[KS_BAD] = 1;
            return 0.0;
        }
        return num / den;
    };
    switch (op) {
    case KOP_CG_START:
        s[KS_RHO] = v[0];
        s[KS_BETA] = 0;
        break;
    case KOP_CG_ALPHA:
        s[KS_PQ] = v[0];
        s[KS_ALPHA] = ratio(flexible ? v[3] : s[KS_RHO], v[0], true);
        break;
    case KOP_CG_BETA:
        s[KS_BETA] = flexible ? ratio(-v[1], s[KS_PQ], true) : ratio(v[0], s[KS_RHO], false);
        s[KS_RHO] = v[0];
        break;
    case KOP_PIPE_START:
    case KOP_PIPE:
    case KOP_PIPE0: {
        const double gamma = op == KOP_PIPE0 ? v[2] : v[0], delta = v[1];
        const double beta = op == KOP_PIPE_START ? 0.0 : ratio(gamma, s[KS_RHO], false);
        const double den = op == KOP_PIPE_START ? delta : delta - (beta != 0 ? beta * gamma / s[KS_ALPHA] : 0.0);
        s[KS_BETA] = beta;
        s[KS_ALPHA] = ratio(gamma, den, true);
        s[KS_RHO] = gamma;
        break;
    }
    case KOP_BI_START:
        s[KS_RHO] = v[0];
        s[KS_BETA] = 0;
        s[KS_ALPHA] = s[KS_OMEGA] = 1;
        break;
    case KOP_BI_ALPHA: s[KS_ALPHA] = ratio(s[KS_RHO], v[1], false); break;
    case KOP_BI_OMEGA: s[KS_OMEGA] = ratio(v[1], v[2], true); break;
    case KOP_BI_RHO: {
        const double rho = v[0];
        s[KS_RR] = v[1];
        s[KS_BETA] = s[KS_OMEGA] != 0 ? ratio(rho, s[KS_RHO], false) * (s[KS_ALPHA] / s[KS_OMEGA]) : 0.0;
        if (s[KS_OMEGA] == 0 && v[1] > 0) s[KS_BAD] = 1; // stagnation: t.s = 0 with s != 0
        s[KS_RHO] = rho;
        break;
    }
    default: break;
    }
}

// Block b of the final pass adds partials [b seg, (b+1) seg) of nblocks:
// one block computes the scalars (op), many fold a long list first.
template <class T>
__global__ void __launch_bounds__(FINAL_THREADS) krylov_final_kernel(const double *__restrict__ partials, size_t nblocks,
                                                                     size_t seg, double *out, int op, double *s,
                                                                     T *shift, double npts, int singular, int flexible)
{
    Sum4 v{};
    const size_t end = min(nblocks, seg * (blockIdx.x + 1));
    for (size_t b = seg * blockIdx.x + threadIdx.x; b < end; b += blockDim.x)
#pragma unroll
        for (int q = 0; q < 4; ++q) v.v[q] += partials[4 * b + q];
    v = block_reduce(v);
    if (threadIdx.x != 0) return;
    if (op == KOP_STORE) {
#pragma unroll
        for (int q = 0; q < 4; ++q) out[4 * blockIdx.x + q] = v.v[q];
    } else {
        krylov_scalars<T>(op, v.v, s, shift, npts, singular, flexible);
    }
}

__device__ __forceinline__ void write_partial4(double *partials, Sum4 v)
{
    v = block_reduce(v);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        const size_t b = blockIdx.x + (size_t)gridDim.x * (blockIdx.y + (size_t)gridDim.y * blockIdx.z);
#pragma unroll
        for (int q = 0; q < 4; ++q) partials[4 * b + q] = v.v[q];
    }
}

// The arrays a Krylov kernel reads and writes (named as in the algorithms;
// each kernel uses a few) and the device scalars.
template <class T> struct KArgs {
    const T *in, *f, *shift, *partner; // the walked vector, f, its shift, a dot partner
    T *out, *x, *r, *u, *w, *z, *q, *s, *p, *v, *t, *ph, *sh, *r0;
    const double *sc;
};

// Kernels that need the operator walk a vector (column_walk, A = double):
enum KrylovWalk {
    KW_RESID = 0,  // out = f - shift - A in; sums [out.out, sum out]
    KW_APPLY,      // out = A in; sums [in.out, partner.out, out.out, partner.in]
    KW_JACOBI,     // out = in / diag; sums [in.out, out.q] (q may be NULL)
    KW_PIPE_START, // w = A u (in = u); sums [r.u, w.u, r.r, sum w]
    KW_PIPE,       // n = A m (in = m) and the pipelined updates; sums as above
    KW_PIPE0       // the same without a preconditioner (u = r, m = w, q = s): n = A w
                   // (in = w), the updates, w - alpha z into another buffer (out)
};

template <class T, int OP> struct KrylovEmit {
    static constexpr bool reads_f = OP == KW_RESID;
    KArgs<T> a;
    Sum4 acc;
    double alpha, beta, rmean;
    __device__ void uniform_diag(double, bool) {}
    __device__ void skip(int64_t, T) {} // not an unknown: stays 0
    __device__ void operator()(int64_t p, double centre, double rhs, double diag, bool)
    {
        if constexpr (OP == KW_RESID) {
            const T r = T(point_res(rhs, diag, centre));
            a.out[p] = r;
            acc.v[0] += (double)r * (double)r;
            acc.v[1] += (double)r;
        } else if constexpr (OP == KW_APPLY) {
            const T o = T(-point_res(rhs, diag, centre));
            a.out[p] = o;
            const double w = a.partner ? (double)a.partner[p] : 0.0;
            acc.v[0] += centre * (double)o;
            acc.v[1] += w * (double)o;
            acc.v[2] += (double)o * (double)o;
            acc.v[3] += w * centre;
        } else if constexpr (OP == KW_JACOBI) {
            const T z = diag > 0 ? T(centre / diag) : T(0); // (a fluid point walled in on every side)
            a.out[p] = z;
            acc.v[0] += centre * (double)z;
            if (a.q) acc.v[1] += (double)z * (double)a.q[p];
        } else if constexpr (OP == KW_PIPE_START) {
            const T w = T(-point_res(rhs, diag, centre));
            a.w[p] = w;
            const double r = (double)a.r[p];
            acc.v[0] += r * centre;
            acc.v[1] += (double)w * centre;
            acc.v[2] += r * r;
            acc.v[3] += (double)w;
        } else if constexpr (OP == KW_PIPE0) { // z = n + b z, s = w + b s, p = r + b p,
                                               // x += a p, r -= mean r + a s, out = w - a z
            const T n = T(-point_res(rhs, diag, centre)), w = T(centre), b = T(beta), al = T(alpha);
            T z = n, s = w, r = a.r[p] - T(rmean), pp = r;
            if (beta != 0) {
                z += b * a.z[p];
                s += b * a.s[p];
                pp += b * a.p[p];
            }
            a.z[p] = z;
            a.s[p] = s;
            a.p[p] = pp;
            T wn = w;
            if (alpha != 0) {
                a.x[p] += al * pp;
                r -= al * s;
                wn -= al * z;
            }
            if (alpha != 0 || rmean != 0) a.r[p] = r;
            a.out[p] = wn;
            acc.v[0] += (double)r;
            acc.v[1] += (double)wn * (double)r;
            acc.v[2] += (double)r * (double)r;
            acc.v[3] += (double)wn;
        } else { // KW_PIPE: z = n + b z, q = m + b q, s = w + b s, p = u + b p,
                 // x += a p, r -= a s, u -= a q, w -= a z
            const T n = T(-point_res(rhs, diag, centre)), m = T(centre), b = T(beta), al = T(alpha);
            T z = n, q = m, s = a.w[p], pp = a.u[p];
            if (beta != 0) {
                z += b * a.z[p];
                q += b * a.q[p];
                s += b * a.s[p];
                pp += b * a.p[p];
            }
            a.z[p] = z;
            a.q[p] = q;
            a.s[p] = s;
            a.p[p] = pp;
            T r = a.r[p], u = a.u[p], w = a.w[p];
            if (alpha != 0) {
                a.x[p] += al * pp;
                r -= al * s;
                u -= al * q;
                w -= al * z;
                a.r[p] = r;
                a.u[p] = u;
                a.w[p] = w;
            }
            acc.v[0] += (double)r * (double)u;
            acc.v[1] += (double)w * (double)u;
            acc.v[2] += (double)r * (double)r;
            acc.v[3] += (double)w;
        }
    }
};

template <class T, int OP, int MK>
__global__ void __launch_bounds__(WALK_THREADS, Tune<T>::norm_blocks)
    krylov_walk_kernel(const Grid<T> g, const KArgs<T> a, double *partials, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    KrylovEmit<T, OP> emit{a, Sum4{}, 0.0, 0.0, 0.0};
    if (OP == KW_PIPE || OP == KW_PIPE0) {
        emit.alpha = a.sc[KS_ALPHA];
        emit.beta = a.sc[KS_BETA];
    }
    if (OP == KW_PIPE0) emit.rmean = a.sc[KS_RMEAN];
    if (walk_thread(g.nx, g.ny, g.nz, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const Shift<T> shift = load_shift(a.shift);
        column_walk<T, double, Tune<T>::walk_group, MK>(g, a.in, a.f, i, j, k0, k1, shift, emit);
    }
    if (partials) write_partial4(partials, emit.acc);
}

// Pointwise kernels (column launches over the unknowns):
enum KrylovPoint {
    KP_CG_UPDATE = 0, // x += alpha p, r -= mean r + alpha q; sums [r.r, sum r]
    KP_DOT,           // sums [r.z, z.q] (q may be NULL)
    KP_CG_P,          // p = z + beta p
    KP_BI_P,          // p = r - mean r + beta (p - omega v); sums [sum p]
    KP_BI_S,          // s = r - mean r - alpha v (s may be r); sums [s.s, sum s]
    KP_BI_XR,         // x += alpha ph + omega sh, r = s - omega t; sums [r0.r, r.r, sum r]
    KP_COPY,          // out = in
    KP_MASK           // out = 0 where the point is not an unknown
};

template <class T, int OP>
__global__ void __launch_bounds__(COL_BX *COL_BY)
    krylov_point_kernel(const Grid<T> g, const KArgs<T> a, double *partials, int kchunk, int nyb, int nchunks)
{
    int i, j, k0, k1;
    Sum4 acc{};
    if (col_thread(g, kchunk, nyb, nchunks, i, j, k0, k1)) {
        const double *sc = a.sc;
        const T alpha = sc ? T(sc[KS_ALPHA]) : T(0), beta = sc ? T(sc[KS_BETA]) : T(0),
                omega = sc ? T(sc[KS_OMEGA]) : T(0), rmean = sc ? T(sc[KS_RMEAN]) : T(0);
        for (int k = k0; k < k1; ++k) {
            const int64_t p = at_point(g, i, j, k);
            if (!gen_fluid(g, p)) {
                if (OP == KP_MASK) a.out[p] = T(0);
                continue;
            }
            if constexpr (OP == KP_CG_UPDATE) {
                T r = a.r[p] - rmean;
                if (alpha != T(0)) {
                    a.x[p] += alpha * a.p[p];
                    r -= alpha * a.q[p];
                }
                if (alpha != T(0) || rmean != T(0)) a.r[p] = r;
                acc.v[0] += (double)r * (double)r;
                acc.v[1] += (double)r;
            } else if constexpr (OP == KP_DOT) {
                const double z = (double)a.z[p];
                acc.v[0] += (double)a.r[p] * z;
                if (a.q) acc.v[1] += z * (double)a.q[p];
            } else if constexpr (OP == KP_CG_P) {
                a.p[p] = beta != T(0) ? a.z[p] + beta * a.p[p] : a.z[p];
            } else if constexpr (OP == KP_BI_P) {
                const T r = a.r[p] - rmean;
                const T v = beta != T(0) ? r + beta * (a.p[p] - omega * a.v[p]) : r;
                a.p[p] = v;
                acc.v[0] += (double)v;
            } else if constexpr (OP == KP_BI_S) {
                const T r = a.r[p] - rmean;
                const T s = alpha != T(0) ? r - alpha * a.v[p] : r;
                a.s[p] = s;
                acc.v[0] += (double)s * (double)s;
                acc.v[1] += (double)s;
            } else if constexpr (OP == KP_BI_XR) {
                if (alpha != T(0)) a.x[p] += alpha * a.ph[p];
                T r = a.s[p];
                if (omega != T(0)) {
                    a.x[p] += omega * a.sh[p];
                    r -= omega * a.t[p];
                }
                a.r[p] = r;
                acc.v[0] += (double)a.r0[p] * (double)r;
                acc.v[1] += (double)r * (double)r;
                acc.v[2] += (double)r;
            } else if constexpr (OP == KP_COPY) {
                a.out[p] = a.in[p];
            }
        }
    }
    if (partials) write_partial4(partials, acc);
}

// PGPU_MIXED's float preconditioner: a float level 0 (zero ghosts) with its
// cycle or FFT.
struct FloatPrecond {
    Hierarchy<float> *h = nullptr;
    Multigrid<float> *mg = nullptr;
    FftSolver<float> *fft = nullptr;
    float *zero = nullptr; // a float 0 (the FFT's shift: the input is centred already)
};

// The Krylov method of a handle: its vectors, its reductions, its
// preconditioner (the handle's multigrid or FFT solver, on level 0; with
// PGPU_MIXED the float ones of `fp`).
template <class T> class Krylov {
  public:
    int method = 0, pre = PGPU_PRECOND_NONE;
    bool pipelined = false, flexible = false;
    FloatPrecond fp; // set by the handle for PGPU_MIXED

    ~Krylov()
    {
        if (h_s) cudaFreeHost(h_s);
        if (fork_ev) cudaEventDestroy(fork_ev);
        if (join_ev) cudaEventDestroy(join_ev);
        if (side) cudaStreamDestroy(side);
    }
    pgpu_status init(Env &e, Hierarchy<T> &hh, Multigrid<T> *m, FftSolver<T> *ff, Replay *r, Reducer *rd,
                     const pgpu_config &c);
    // Zeroes every vector (a new mask: points that were unknowns may not be).
    pgpu_status reset();
    // Solves A u = f - shift from u (level 0 must not be bound to anything
    // the caller still needs); cv, fixed, interval as for the other methods.
    pgpu_status run(T *u, const T *f, const T *shift, Convergence cv, bool fixed, int interval, pgpu_report &r);
    // The number of vectors (level-0 arrays) a method and preconditioner need.
    static int vectors(int method, bool pipelined, int pre)
    {
        if (method == PGPU_BICGSTAB) return pre == PGPU_PRECOND_NONE ? 5 : 7;
        if (pipelined) return pre == PGPU_PRECOND_NONE ? 6 : 8;
        return pre == PGPU_PRECOND_NONE ? 3 : 4;
    }

  private:
    Env *env = nullptr;
    Hierarchy<T> *h = nullptr;
    Multigrid<T> *mg = nullptr;
    FftSolver<T> *fft = nullptr;
    Replay *rp = nullptr;
    Reducer *red = nullptr; // the handle's (the true residual's norm)
    std::vector<T *> vec;
    double *d_part = nullptr, *d_s = nullptr, *h_s = nullptr;
    double *d_loc = nullptr; // distributed: the rank's four sums, all-reduced in place
    T *d_kshift = nullptr; // the preconditioner input's mean (singular problems)
    size_t nparts = 0;
    cudaStream_t side = nullptr; // the pipelined reduction's last block runs here, beside the preconditioner
    cudaEvent_t fork_ev = nullptr, join_ev = nullptr;
    T *x = nullptr;       // the iterate (the caller's u) of the current solve
    int par = 0;          // unpreconditioned pipelined CG: which buffer holds w
    bool fresh = false;   // classic CG: start() made the direction the next iteration steps along
    const T *fb = nullptr, *fshift = nullptr;

    KArgs<T> args() const
    {
        KArgs<T> a{};
        a.sc = d_s;
        return a;
    }
    const Level<T> &L() const { return h->lv[0]; }
    pgpu_status finish(size_t blocks, int op, cudaStream_t st);
    template <int OP> pgpu_status walk(const KArgs<T> &a, int op, cudaStream_t st = nullptr);
    template <int OP> pgpu_status point(const KArgs<T> &a, int op);
    // fmg: one FMG pass instead of the cycle (flexible CG's first direction)
    pgpu_status precond(T *out, const T *in, bool fmg = false);
    pgpu_status start();
    // tail: classic CG forms its next direction first (false right after
    // start(), which made the first)
    pgpu_status iterate(bool tail);
    pgpu_status step(bool tail);
    // The first preconditioner application is an FMG pass: flexible CG with
    // the standard cycle (no mask, no beta), on one GPU (the distributed FMG
    // as a correction solve is not yet run on several).  Not around the
    // symmetric cycle: the flexible coefficients keep each later direction
    // A-orthogonal to the last alone, and from an FMG direction CG stalled
    // on some random solid masks (test_mask replays them) that converge
    // from the cycle's own first direction.
    bool fmg_start() const { return flexible && pre == PGPU_PRECOND_VCYCLE && !env->dist && !h->gen.on(); }
    bool cg_projects() const { return method == PGPU_CG && h->gen.mask && h->gen.regions; }
};

template <class T>
pgpu_status Krylov<T>::init(Env &e, Hierarchy<T> &hh, Multigrid<T> *m, FftSolver<T> *ff, Replay *r, Reducer *rd,
                            const pgpu_config &c)
{
    env = &e;
    red = rd;
    h = &hh;
    mg = m;
    fft = ff;
    rp = r;
    char *err = e.err;
    method = (int)(c.flags & PGPU_METHOD_MASK);
    pipelined = (c.flags & PGPU_PIPELINED) != 0;
    pre = (int)c.preconditioner;
    const Level<T> &L0 = h->lv[0];
    const int nv = vectors(method, pipelined, pre);
    vec.assign(nv, nullptr);
    for (int k = 0; k < nv; ++k)
        PGPU_FORWARD(e.mem.alloc(err, (void **)&vec[k], (size_t)L0.elems * sizeof(T), "a Krylov vector"));
    nparts = std::max(blocks_of(L0.rwalk), blocks_of(L0.col));
    PGPU_FORWARD(e.mem.alloc(err, (void **)&d_part, (nparts + FOLD_BLOCKS) * 4 * sizeof(double), "Krylov partials"));
    PGPU_FORWARD(e.mem.alloc(err, (void **)&d_s, KS_COUNT * sizeof(double), "Krylov scalars"));
    if (e.dist) PGPU_FORWARD(e.mem.alloc(err, (void **)&d_loc, 4 * sizeof(double), "Krylov sums to all-reduce"));
    PGPU_FORWARD(e.mem.alloc(err, (void **)&d_kshift, 2 * sizeof(T), "the preconditioner's shift"));
    PGPU_CUDA_SETUP(e, cudaMallocHost((void **)&h_s, KS_COUNT * sizeof(double)));
    PGPU_CUDA_SETUP(e, cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    PGPU_CUDA_SETUP(e, cudaEventCreateWithFlags(&fork_ev, cudaEventDisableTiming));
    PGPU_CUDA_SETUP(e, cudaEventCreateWithFlags(&join_ev, cudaEventDisableTiming));
    PGPU_CUDA_SETUP(e, cudaMemsetAsync(d_kshift, 0, 2 * sizeof(T), e.st));
    PGPU_CUDA_SETUP(e, cudaMemsetAsync(d_s, 0, KS_COUNT * sizeof(double), e.st));
    for (T *v : vec) PGPU_CUDA_SETUP(e, cudaMemsetAsync(v, 0, (size_t)L0.elems * sizeof(T), e.st));
    return PGPU_SUCCESS;
}

template <class T> pgpu_status Krylov<T>::reset()
{
    char *err = env->err;
    for (T *v : vec) PGPU_CUDA(cudaMemsetAsync(v, 0, (size_t)L().elems * sizeof(T), env->st));
    return PGPU_SUCCESS;
}

// The last block of a reduction of `blocks` partials (folded first when
// they are many), on stream st.
// Distributed: the rank's four sums are all-reduced (on st: the pipelined
// form's all-reduction runs beside the preconditioner), then the scalars
// are formed from the global sums.
template <class T> pgpu_status Krylov<T>::finish(size_t blocks, int op, cudaStream_t st)
{
    char *err = env->err;
    const int singular = h->singular;
    PGPU_FORWARD(fold_then_last(
        env->err, d_part, nparts, 4, blocks,
        [&](unsigned n, size_t seg, const double *from, size_t b, double *to) {
            krylov_final_kernel<T><<<n, FINAL_THREADS, 0, st>>>(from, b, seg, to, KOP_STORE, d_s, nullptr, 0, 0, 0);
        },
        [&](const double *from, size_t b) {
            if (d_loc)
                krylov_final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(from, b, b, d_loc, KOP_STORE, d_s, nullptr, 0, 0, 0);
            else
                krylov_final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(from, b, b, nullptr, op, d_s, d_kshift, L().npts,
                                                                    singular, (int)flexible);
        }));
    if (!d_loc) return PGPU_SUCCESS;
    PGPU_FORWARD(dist_allreduce(*env, d_loc, 4, 0, st));
    krylov_final_kernel<T><<<1, FINAL_THREADS, 0, st>>>(d_loc, 1, 1, nullptr, op, d_s, d_kshift, L().npts, singular,
                                                        (int)flexible);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// A walk kernel, then (op != KOP_STORE) its reduction's last block; the
// reduction's last block goes to stream st when given (after an event).
template <class T> template <int OP> pgpu_status Krylov<T>::walk(const KArgs<T> &a, int op, cudaStream_t st)
{
    char *err = env->err;
    const Level<T> &l = L();
    if (OP != KW_JACOBI) PGPU_FORWARD(dist_halo(*env, l.g, const_cast<T *>(a.in))); // the walked vector's neighbours
    walk_masked(l.g, [&](auto mk) {
        launch(l.rwalk, 0, env->st, krylov_walk_kernel<T, OP, decltype(mk)::value>, l.g, a,
               op == KOP_STORE ? (double *)nullptr : d_part);
    });
    PGPU_LAUNCHED();
    if (op == KOP_STORE) return PGPU_SUCCESS;
    if (!st) return finish(blocks_of(l.rwalk), op, env->st);
    PGPU_CUDA(cudaEventRecord(fork_ev, env->st));
    PGPU_CUDA(cudaStreamWaitEvent(st, fork_ev, 0));
    PGPU_FORWARD(finish(blocks_of(l.rwalk), op, st));
    PGPU_CUDA(cudaEventRecord(join_ev, st));
    return PGPU_SUCCESS;
}

template <class T> template <int OP> pgpu_status Krylov<T>::point(const KArgs<T> &a, int op)
{
    char *err = env->err;
    const Level<T> &l = L();
    launch(l.col, 0, env->st, krylov_point_kernel<T, OP>, l.g, a, op == KOP_STORE ? (double *)nullptr : d_part);
    PGPU_LAUNCHED();
    return op == KOP_STORE ? PGPU_SUCCESS : finish(blocks_of(l.col), op, env->st);
}

// out = M in, for an input whose mean (singular problems) is in d_kshift.
template <class T> pgpu_status Krylov<T>::precond(T *out, const T *in, bool fmg)
{
    char *err = env->err;
    KArgs<T> a = args();
    a.in = in;
    a.out = out;
    if (fp.h) { // PGPU_MIXED: out = M_float (in - mean), rounded in, added out in double
        Level<float> &E = fp.h->lv[0];
        const double *mean_of = h->singular ? d_s + KS_SUM : nullptr;
        PGPU_FORWARD(axpby(*env, E.g, E.col, 0.0f, 1.0f, in, 0.0f, (const float *)nullptr, E.f, mean_of, L().npts));
        fp.h->bind(E.u, E.f, nullptr);
        PGPU_CUDA(cudaMemsetAsync(E.u, 0, (size_t)E.elems * sizeof(float), env->st));
        if (pre == PGPU_PRECOND_FFT) {
            PGPU_FORWARD(fp.fft->set_stream(err, env->st));
            PGPU_FORWARD(fp.fft->run(E.u, E.f, fp.zero));
        } else {
            PGPU_FORWARD(fmg ? fp.mg->fmg_pass() : fp.mg->cycle(0));
        }
        return axpby(*env, L().g, L().col, T(0), T(1), (const float *)E.u, T(0), (const T *)nullptr, out);
    }
    switch (pre) {
    case PGPU_PRECOND_NONE: return point<KP_COPY>(a, KOP_STORE);
    case PGPU_PRECOND_JACOBI: return walk<KW_JACOBI>(a, KOP_STORE);
    case PGPU_PRECOND_FFT:
        // (cuFFT's plans launch on the stream they are given: the one being
        // captured when an iteration becomes a graph)
        PGPU_FORWARD(fft->set_stream(err, env->st));
        PGPU_FORWARD(fft->run(out, in, d_kshift));
        return h->gen.mask ? point<KP_MASK>(a, KOP_STORE) : PGPU_SUCCESS;
    default: // one cycle (or FMG pass) from zero on the correction problem A out = in - shift
        h->bind(out, in, d_kshift);
        PGPU_CUDA(cudaMemsetAsync(out, 0, (size_t)L().elems * sizeof(T), env->st));
        PGPU_FORWARD(fmg ? mg->fmg_pass() : mg->cycle(0));
        // CG on a mask's singular regions: z (pipelined CG's u and m) loses
        // each region's mean, as r does (iterate), so the preconditioner
        // stays the symmetric P M P and the directions free of the null
        // space, whose constants made p.Ap rounding alone in float (a
        // breakdown; in pipelined CG too, with a single sealed pocket).
        return cg_projects() ? h->project(*env, out, out, 0, out) : PGPU_SUCCESS;
    }
}

// The residual of x and the first search directions (every launch on the
// stream, nothing waited for).
template <class T> pgpu_status Krylov<T>::start()
{
    KArgs<T> a = args();
    a.in = x;
    a.f = fb;
    a.shift = fshift;
    a.out = vec[0]; // r
    if (method == PGPU_BICGSTAB) {
        PGPU_FORWARD(walk<KW_RESID>(a, KOP_BI_START));
        KArgs<T> c = args();
        c.in = vec[0];
        c.out = vec[1]; // r0 = r
        return point<KP_COPY>(c, KOP_STORE);
    }
    PGPU_FORWARD(walk<KW_RESID>(a, KOP_RR));
    if (pipelined && pre == PGPU_PRECOND_NONE) { // w = A r into its first buffer; gamma, delta
        par = 0;
        KArgs<T> b = args();
        b.in = vec[0];
        b.r = vec[0];
        b.w = vec[1];
        return walk<KW_PIPE_START>(b, KOP_PIPE_START);
    }
    if (pipelined) { // u = M r, w = A u; gamma, delta
        T *r = vec[0], *u = vec[1], *w = vec[2];
        PGPU_FORWARD(precond(u, r));
        KArgs<T> b = args();
        b.in = u;
        b.r = r;
        b.w = w;
        PGPU_FORWARD(walk<KW_PIPE_START>(b, KOP_PIPE_START));
        return precond(vec[3], w); // m = M w
    }
    // z = M r, rho = r.z, p = z
    T *r = vec[0], *z = pre == PGPU_PRECOND_NONE ? vec[0] : vec[3], *p = vec[1];
    KArgs<T> b = args();
    b.in = r;
    b.r = r;
    b.z = z;
    b.out = z;
    if (pre == PGPU_PRECOND_JACOBI) {
        PGPU_FORWARD(walk<KW_JACOBI>(b, KOP_CG_START));
    } else {
        // Flexible CG's first direction may come from a stronger solve: one
        // FMG pass costs ~1.4 cycles and saved one to three iterations at
        // 512^3 (rough f: 7 -> 6 to 1e-10; smooth f: 5 -> 2 to 1e-6).
        if (pre != PGPU_PRECOND_NONE) PGPU_FORWARD(precond(z, r, fmg_start()));
        PGPU_FORWARD(point<KP_DOT>(b, KOP_CG_START));
    }
    b.p = p;
    return point<KP_CG_P>(b, KOP_STORE);
}

// One iteration; on a mask's singular regions r (vec[0] of every method)
// then loses each region's mean (the box's goes with the next update) --
// except in preconditioned pipelined CG, whose u = M r is a recurrence of
// its own that a shift of r would part from (M of a constant is not one);
// there the preconditioner's output loses it instead (precond), which
// changes no product with A and, r being in A's range, no dot product.
template <class T> pgpu_status Krylov<T>::iterate(bool tail)
{
    PGPU_FORWARD(step(tail));
    const bool own_u = pipelined && pre != PGPU_PRECOND_NONE;
    return h->gen.mask && h->gen.regions && !own_u ? h->project(*env, vec[0], vec[0], 0, vec[0]) : PGPU_SUCCESS;
}

template <class T> pgpu_status Krylov<T>::step(bool tail)
{
    char *err = env->err;
    if (method == PGPU_BICGSTAB) {
        // vec: r (s in place), r0, p, v, t, [ph, sh]
        T *r = vec[0], *r0 = vec[1], *p = vec[2], *v = vec[3], *t = vec[4];
        T *ph = pre == PGPU_PRECOND_NONE ? p : vec[5], *sh = pre == PGPU_PRECOND_NONE ? r : vec[6];
        KArgs<T> a = args();
        a.x = x; a.r = r; a.r0 = r0; a.p = p; a.v = v; a.t = t; a.ph = ph; a.sh = sh; a.s = r;
        PGPU_FORWARD(point<KP_BI_P>(a, KOP_SHIFT));                // p = r + beta (p - omega v)
        if (pre != PGPU_PRECOND_NONE) PGPU_FORWARD(precond(ph, p)); // ph = M p
        a.in = ph; a.out = v; a.partner = r0;
        PGPU_FORWARD(walk<KW_APPLY>(a, KOP_BI_ALPHA));             // v = A ph; alpha = rho / r0.v
        PGPU_FORWARD(point<KP_BI_S>(a, KOP_BI_S));                 // s = r - alpha v
        if (pre != PGPU_PRECOND_NONE) PGPU_FORWARD(precond(sh, r)); // sh = M s
        a.in = sh; a.out = t; a.partner = r;
        PGPU_FORWARD(walk<KW_APPLY>(a, KOP_BI_OMEGA));             // t = A sh; omega = t.s / t.t
        return point<KP_BI_XR>(a, KOP_BI_RHO);                     // x, r = s - omega t; rho, beta
    }
    if (pipelined && pre == PGPU_PRECOND_NONE) {
        // vec: r, w (two buffers), z, s, p.  One pass: n = A w and every
        // update; w's new values go to the other buffer (the walk reads
        // the old ones of the neighbours).  Nothing to overlap the
        // reduction's last block with.
        KArgs<T> a = args();
        a.in = vec[1 + par]; a.out = vec[2 - par]; a.x = x; a.r = vec[0]; a.z = vec[3]; a.s = vec[4]; a.p = vec[5];
        par ^= 1;
        return walk<KW_PIPE0>(a, KOP_PIPE0);
    }
    if (pipelined) {
        // vec: r, u, w, m, z, q, s, p.  One pass: n = A m and every update,
        // the next sums; then m = M w beside the sums' last block (which
        // the preconditioner needs first when the problem is singular: the
        // mean of w is its shift).
        T *w = vec[2], *m = vec[3];
        KArgs<T> a = args();
        a.in = m; a.x = x; a.r = vec[0]; a.u = vec[1]; a.w = w; a.z = vec[4]; a.q = vec[5]; a.s = vec[6]; a.p = vec[7];
        const bool overlap = !h->singular;
        PGPU_FORWARD(walk<KW_PIPE>(a, KOP_PIPE, overlap ? side : nullptr));
        PGPU_FORWARD(precond(m, w));
        if (overlap) PGPU_CUDA(cudaStreamWaitEvent(env->st, join_ev, 0));
        return PGPU_SUCCESS;
    }
    // vec: r, p, q, [z].  The next direction, then the step along it: the
    // convergence check after an iteration comes before the preconditioner
    // that a converged solve would not use (start() made the first one).
    T *r = vec[0], *p = vec[1], *q = vec[2], *z = pre == PGPU_PRECOND_NONE ? vec[0] : vec[3];
    KArgs<T> a = args();
    a.partner = flexible ? r : nullptr; a.x = x; a.r = r; a.p = p; a.q = q; a.z = z;
    if (tail) {
        if (pre == PGPU_PRECOND_JACOBI) {
            a.in = r; a.out = z;
            PGPU_FORWARD(walk<KW_JACOBI>(a, KOP_CG_BETA)); // z = r / diag; r.z, z.q
        } else {
            if (pre != PGPU_PRECOND_NONE) PGPU_FORWARD(precond(z, r));
            PGPU_FORWARD(point<KP_DOT>(a, KOP_CG_BETA)); // r.z, z.q; beta
        }
        PGPU_FORWARD(point<KP_CG_P>(a, KOP_STORE)); // p = z + beta p
    }
    a.in = p; a.out = q;
    PGPU_FORWARD(walk<KW_APPLY>(a, KOP_CG_ALPHA)); // q = A p; alpha
    return point<KP_CG_UPDATE>(a, KOP_RR);         // x += alpha p, r -= alpha q
}

// Krylov iterations on the problem A u = f - shift from u, checked every
// `interval` iterations (none with `fixed`).  When the recursive residual
// meets the tolerance, or a recurrence breaks down, the true residual is
// formed; where rounding made the two part (float vectors, pipelined CG's
// longer recurrences), the method restarts from the true residual while
// that keeps halving (at most KRYLOV_RESTARTS times).
template <class T>
pgpu_status Krylov<T>::run(T *u, const T *f, const T *shift, Convergence cv, bool fixed, int interval,
                           pgpu_report &r)
{
    char *err = env->err;
    x = u;
    fb = f;
    fshift = shift;
    Level<T> &l0 = h->lv[0];
    // The multigrid preconditioner solves on level 0 with zero ghosts: the
    // second iterate's ghosts, filled by solves of the caller's problem, are
    // cleared.
    if (pre == PGPU_PRECOND_VCYCLE && !fp.h)
        PGPU_FORWARD(frame(*env, l0.g, (const T *)nullptr, l0.t, l0.x, h->data_faces));
    PGPU_CUDA(cudaMemsetAsync(d_s, 0, KS_COUNT * sizeof(double), env->st));
    const char *what = method == PGPU_BICGSTAB ? "BiCGStab" : pipelined ? "pipelined CG" : "CG";
    // The flexible coefficients where the preconditioner is not symmetric
    // (krylov.h's head): the standard cycle, and PGPU_MIXED's rounding; and
    // around the symmetric cycle too, which is symmetric only to rounding
    // (on random solid cells the classic coefficients stalled more often).
    flexible = method == PGPU_CG && !pipelined && (fp.h || pre == PGPU_PRECOND_VCYCLE);
    int none = 0;
    const bool classic = method == PGPU_CG && !pipelined;
    auto start_ = [&]() {
        par = 0;
        fresh = classic;
        return rp->run(*env, u, f, REPLAY_KRYLOV_START, none, [&] { return start(); });
    };
    // (the graph of an iteration depends on the buffer parity of w, see
    // iterate, and for classic CG on whether a start made its direction)
    auto iterate_ = [&]() {
        const int kind = fresh ? REPLAY_KRYLOV_STEP : par ? REPLAY_KRYLOV_ITER_ODD : REPLAY_KRYLOV_ITER;
        const int was = par;
        const bool tail = !fresh;
        const pgpu_status st = rp->run(*env, u, f, kind, none, [&] { return iterate(tail); });
        par = was ^ (pipelined && pre == PGPU_PRECOND_NONE); // also where the graph was only launched
        fresh = false;
        return st;
    };
    auto true_norm = [&](double &rn, double &rmax) {
        h->bind(u, f, shift);
        return h->norm(*env, *red, rn, rmax);
    };
    PGPU_FORWARD(start_());
    int it = 0, restarts = 0;
    pgpu_status result = PGPU_SUCCESS;
    if (fixed) {
        for (; it < cv.max_it; ++it) PGPU_FORWARD(iterate_());
        h->bind(u, f, shift);
        r.iterations = it;
        return PGPU_SUCCESS;
    }
    // Float with tolerance 0: the recursive residual falls to FLOAT_CORRECTION
    // of ||b||, where the updates reach float's rounding of u; the true
    // residual of a float u cannot go much below float_residual_floor and
    // is accepted there.
    const bool own_stop = cv.own();
    if (own_stop) cv.tol = FLOAT_CORRECTION; // (judge's target: the recursive residual)
    const double accept = own_stop ? float_accept(cv) : cv.tol;
    double best = HUGE_VAL; // the true residual at the last restart
    // A restart from the true residual, where the last one gained (halved
    // the true residual) and restarts are left.
    auto restart = [&](double tn) -> pgpu_status {
        best = tn;
        ++restarts;
        PGPU_CUDA(cudaMemsetAsync(d_s, 0, KS_COUNT * sizeof(double), env->st));
        return start_();
    };
    for (;;) {
        const int n = std::min(interval, cv.max_it - it);
        for (int k = 0; k < n; ++k) PGPU_FORWARD(iterate_());
        it += n;
        PGPU_CUDA(cudaMemcpyAsync(h_s, d_s, KS_COUNT * sizeof(double), cudaMemcpyDeviceToHost, env->st));
        PGPU_CUDA(cudaStreamSynchronize(env->st));
        const double rn = std::sqrt(std::max(h_s[KS_RR], 0.0));
        bool stop = false;
        cv.judge(err, h_s[KS_RR] >= 0 ? rn : NAN, NAN, it, what, "iterations", r, stop, result);
        const bool met = stop && result == PGPU_SUCCESS;
        const bool bad = !met && h_s[KS_BAD] != 0 && result != PGPU_ERROR_BREAKDOWN;
        if (!met && !bad) {
            if (stop) break; // not converged, or the recursive residual broke down
            continue;
        }
        // The recursive residual met the tolerance, or a recurrence broke
        // down (rounding, in float): the true residual decides.
        double tn = 0, tmax = 0;
        PGPU_FORWARD(true_norm(tn, tmax));
        const double rel = cv.rhs_norm > 0 ? tn / cv.rhs_norm : tn;
        // (judge's message, where it stopped on max_iterations, goes with
        // the status it gave)
        if (rel <= accept) {
            result = PGPU_SUCCESS;
            err[0] = 0;
            break;
        }
        const bool gains = tn < 0.5 * best && restarts < KRYLOV_RESTARTS && it < cv.max_it;
        if (gains) {
            result = PGPU_SUCCESS;
            err[0] = 0;
            PGPU_FORWARD(restart(tn));
            continue;
        }
        if (own_stop && rel <= FLOAT_OWN_SLACK * accept) {
            // (float's own stop accepts where restarts no longer gain, up to
            // FLOAT_OWN_SLACK times its floor: the floor is the box's,
            // rough solutions, masks and beta raise it; a recurrence that
            // broke down there ends alike)
            result = PGPU_SUCCESS;
            err[0] = 0;
        } else if (bad) {
            result = record(err, PGPU_ERROR_BREAKDOWN,
                            "%s: breakdown after %d iterations (a denominator of the recurrences was zero, negative "
                            "or not finite: the operator or preconditioner is not %s); u holds the last good iterate",
                            what, it, method == PGPU_BICGSTAB ? "invertible on this residual" : "positive definite");
        } else {
            result = record(err, PGPU_ERROR_NOT_CONVERGED,
                            "%s: the recursive residual met the tolerance after %d iterations but the true relative "
                            "residual is %.3e (tolerance %.3e): rounding limits what this precision reaches",
                            what, it, rel, own_stop ? FLOAT_OWN_SLACK * accept : cv.tol);
        }
        break;
    }
    double tn = 0, tmax = 0;
    PGPU_FORWARD(true_norm(tn, tmax));
    cv.measured(tn, tmax, r);
    if (result == PGPU_ERROR_NOT_CONVERGED && std::isfinite(tn) &&
        (cv.rhs_norm > 0 ? tn / cv.rhs_norm : tn) <= (own_stop ? FLOAT_OWN_SLACK : 1.0) * accept) {
        // the recursive residual stalled above the true one
        result = PGPU_SUCCESS;
        err[0] = 0;
    }
    if (!std::isfinite(tn) && result == PGPU_SUCCESS)
        result = record(err, PGPU_ERROR_BREAKDOWN, "%s: the residual became %g", what, tn);
    r.iterations = it;
    return result;
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 37 "src/poisson_gpu.cu"
#endif
// dist.h -- several GPUs: halo exchange, all-reductions, the band kernels
#ifdef PGPU_SRC_LINES
#line 2 "src/dist.h"
#endif


namespace pgpu {

// Several GPUs: the global grid is split along its slowest axis (z in 3D, y
// in 2D) into slabs of whole planes, one per rank, each starting at an even
// plane so that the red-black colours are the global ones.  Each rank's
// handle is a single-GPU handle of its slab whose faces towards other ranks
// are Dirichlet faces of the interior spacing: the operator reads the
// ghost plane there as the neighbour's value with the interior coupling, so
// after a halo exchange (the neighbours' boundary planes into the ghost
// planes, grouped NCCL send/receive on the handle's stream) every stencil
// kernel computes the global operator unchanged.  Reductions all-reduce
// their totals (one ncclAllReduce per reduction) before the step that uses
// them, so every rank takes the same decisions from bit-identical numbers.
// The right-hand side's scan skips the interface faces (their ghosts hold
// no boundary data).  Multigrid (V-cycles, the Krylov methods' cycle) runs
// the global hierarchy: slabs of its fine levels, its coarse levels on every
// rank (dist_plan, below).  Red-black smoothing takes one exchange per pass
// of two iterations (or of the last single one) and redoes the planes next
// to each face and the ghost planes (dist_band_pass) on the levels where
// the split axis is z and every slab has 7 planes or more
// (dist_band_level): the ghost planes then hold the neighbours' new values
// (Multigrid::fresh).  Another level exchanges before each iteration and
// redoes the second colour at the faces after (dist_rb_interfaces).
// Where that plan does not exist (an odd periodic split axis), a Krylov
// method's cycle is the slab's own with zero values across the interfaces:
// block Jacobi over the ranks, still symmetric.

#ifdef PGPU_WITH_NCCL
// A message of a grouped exchange with the neighbours.
struct DistMsg {
    void *p;
    size_t n;
};

// One grouped exchange with the neighbours on the split axis: k messages
// each way per side (send[0] / recv[0]: the low neighbour, [1]: the high
// one), posted in the one order every rank uses -- to the high neighbour,
// from the low one, to the low one, from the high one -- so that a peer's
// sends match its receives (two ranks on a periodic axis are each other's
// low and high neighbour).  A side without a neighbour is skipped.
static pgpu_status dist_exchange(Env &env, ncclDataType_t ty, int k, const DistMsg *const send[2],
                                 const DistMsg *const recv[2])
{
    const Dist *d = env.dist;
    char *err = env.err;
    const int peer[2] = {d->lo_peer, d->hi_peer};
    const int order[4][2] = {{1, 0}, {0, 1}, {0, 0}, {1, 1}}; // (side, receive)
    ncclResult_t r = ncclGroupStart();
    for (int s = 0; s < 4; ++s) {
        const int side = order[s][0], rx = order[s][1];
        if (peer[side] < 0) continue;
        for (int m = 0; m < k && r == ncclSuccess; ++m) {
            const DistMsg &g = (rx ? recv : send)[side][m];
            r = rx ? ncclRecv(g.p, g.n, ty, peer[side], d->comm, env.st)
                   : ncclSend(g.p, g.n, ty, peer[side], d->comm, env.st);
        }
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    return PGPU_SUCCESS;
}

// Pack (unpack == 0) the first and last planes of the split axis into the
// send buffers, or unpack the receive buffers into the two ghost planes;
// lo / hi: which side has a neighbour; lines: the planes' ghost lines too.
// buf: send lo, send hi, receive lo, receive hi, `plane` values each.
template <class T>
__global__ void halo_kernel(const Grid<T> g, int axis, T *__restrict__ u, T *__restrict__ buf, int64_t plane,
                            int unpack, int lo, int hi, int lines)
{
    PGPU_GRID_STRIDE(e, plane)
    {
        const int64_t rx = g.nx + 2 * lines;
        const int64_t i = e % rx - lines, r = e / rx - (axis == 2 ? lines : 0);
        const int64_t first = axis == 2 ? g.base + i + r * g.sy : g.base + i;
        const int64_t step = axis == 2 ? g.sz : g.sy;
        const int64_t last = axis == 2 ? g.nz - 1 : g.ny - 1;
        if (!unpack) {
            if (lo) buf[e] = u[first];
            if (hi) buf[plane + e] = u[first + last * step];
        } else {
            if (lo) u[first - step] = buf[2 * plane + e];
            if (hi) u[first + (last + 1) * step] = buf[3 * plane + e];
        }
    }
}
#endif

template <class T> static pgpu_status dist_halo(Env &env, const Grid<T> &g, T *u, bool lines)
{
    Dist *d = env.dist;
    if (!d || (d->lo_peer < 0 && d->hi_peer < 0)) return PGPU_SUCCESS;
    char *err = env.err;
#ifdef PGPU_WITH_NCCL
    T *buf = (T *)d->halo;
    const int64_t w = lines ? 2 : 0;
    const int64_t n = d->axis == 2 ? (g.nx + w) * (g.ny + w) : g.nx + w; // (<= d->plane: level 0's)
    const int lo = d->lo_peer >= 0, hi = d->hi_peer >= 0;
    const unsigned blocks = grid_for(n, env.sms);
    halo_kernel<T><<<blocks, 256, 0, env.st>>>(g, d->axis, u, buf, n, 0, lo, hi, (int)lines);
    PGPU_LAUNCHED();
    const DistMsg s0{buf, (size_t)n}, s1{buf + n, (size_t)n}, r0{buf + 2 * n, (size_t)n}, r1{buf + 3 * n, (size_t)n};
    const DistMsg *const send[2] = {&s0, &s1}, *const recv[2] = {&r0, &r1};
    PGPU_FORWARD(dist_exchange(env, sizeof(T) == 8 ? ncclDouble : ncclFloat, 1, send, recv));
    halo_kernel<T><<<blocks, 256, 0, env.st>>>(g, d->axis, u, buf, n, 1, lo, hi, (int)lines);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
#else
    (void)g, (void)u, (void)lines;
    return record(err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
#endif
}

#ifdef PGPU_WITH_NCCL
// NCCL connects peers on their first exchange, which cannot happen inside
// a CUDA graph capture: one exchange of each kind the handle will make (a
// word to each neighbour, a broadcast from every rank, an all-reduction),
// at create time, outside any capture.  Synchronises.
static pgpu_status dist_connect(Env &env)
{
    Dist *d = env.dist;
    char *err = env.err;
    double *b = d->d_red;
    const DistMsg s{b, 1}, r0{b + 1, 1}, r1{b + 2, 1};
    const DistMsg *const send[2] = {&s, &s}, *const recv[2] = {&r0, &r1};
    PGPU_FORWARD(dist_exchange(env, ncclDouble, 1, send, recv));
    ncclResult_t r = ncclGroupStart();
    for (int q = 0; q < d->ranks && r == ncclSuccess; ++q) r = ncclBroadcast(b + 3, b + 3, 1, ncclDouble, q, d->comm, env.st);
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    PGPU_NCCL(ncclAllReduce(b, b, 4, ncclDouble, ncclSum, d->comm, env.st));
    PGPU_CUDA(cudaStreamSynchronize(env.st));
    return PGPU_SUCCESS;
}
#endif

static pgpu_status dist_allreduce(Env &env, double *d, int nsum, int nmax, cudaStream_t st)
{
    Dist *ds = env.dist;
    if (!ds) return PGPU_SUCCESS;
    char *err = env.err;
#ifdef PGPU_WITH_NCCL
    ncclResult_t r = ncclGroupStart();
    if (r == ncclSuccess && nsum) r = ncclAllReduce(d, d, (size_t)nsum, ncclDouble, ncclSum, ds->comm, st);
    if (r == ncclSuccess && nmax) r = ncclAllReduce(d + nsum, d + nsum, (size_t)nmax, ncclDouble, ncclMax, ds->comm, st);
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    return PGPU_SUCCESS;
#else
    (void)d, (void)nsum, (void)nmax, (void)st;
    return record(err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
#endif
}

// Red-black across an interface: the pass updated the second colour of the
// planes next to an interface from the first colour's OLD values across it
// (the ghost plane).  With the new ones exchanged into dst's ghosts, those
// points are updated again from their old values in src.  A neighbour of
// the same colour (across an odd periodic axis' seam: also the split axis'
// seam between the last rank and the first) is read as the pass read it,
// old, from src: no point read here is written.  glo / ghi: the index of
// the ghost planes' points in the box's frame, for their colour (-1 and n,
// or across the split axis' periodic seam N - 1 and -lo).
template <class T>
__global__ void rb_interface_kernel(const Grid<T> g, int axis, const T *__restrict__ src, T *__restrict__ dst,
                                    const T *__restrict__ f, const T *__restrict__ shiftp, T omega, int flip, int lo,
                                    int hi, int glo, int ghi)
{
    const int64_t n = axis == 2 ? (int64_t)g.nx * g.ny : (int64_t)g.nx;
    const int last = axis == 2 ? g.nz - 1 : g.ny - 1;
    const Shift<T> shift = load_shift(shiftp);
    PGPU_GRID_STRIDE(t, 2 * n)
    {
        const int side = t >= n;
        if (side ? !hi : !lo) continue;
        const int64_t e = t - side * n;
        const int i = (int)(e % g.nx);
        const int j = axis == 2 ? (int)(e / g.nx) : (side ? last : 0);
        const int k = axis == 2 ? (side ? last : 0) : 0;
        if ((i + j + k + flip) & 1) continue; // the first colour ((i + j + k + flip) odd, smooth.h): final
        const int64_t p = at_point(g, i, j, k);
        const ColXY<T> c = col_xy(g, i, j);
        const ColZ<T> z = col_z(g, k);
        // a neighbour's index along an axis of n points (periodic: wrapped; else the ghost's -1 or n)
        auto at = [](int m, int n, int per, int gl, int gh) {
            return m < 0 ? (per ? n - 1 : gl) : m >= n ? (per ? 0 : gh) : m;
        };
        auto v = [&](int64_t o, int ni, int nj, int nk) { return ((ni + nj + nk + flip) & 1) ? dst[p + o] : src[p + o]; };
        const int yl = axis == 1 ? glo : -1, yh = axis == 1 ? ghi : g.ny;
        const int kl = g.is3d ? at(k - 1, g.nz, g.pz, glo, ghi) : 1, kh = g.is3d ? at(k + 1, g.nz, g.pz, glo, ghi) : 1;
        const T nb = neighbours<T>(c.vxl, v(c.nxl, at(i - 1, g.nx, g.px, -1, g.nx), j, k), c.vxh,
                                   v(c.nxh, at(i + 1, g.nx, g.px, -1, g.nx), j, k), c.vyl,
                                   v(c.nyl, i, at(j - 1, g.ny, g.py, yl, yh), k), c.vyh,
                                   v(c.nyh, i, at(j + 1, g.ny, g.py, yl, yh), k), z.vzl, v(z.nzl, i, j, kl), z.vzh,
                                   v(z.nzh, i, j, kh));
        dst[p] = relax(src[p], shift.of(f[p]) + nb, c.dxy + z.dz, omega);
    }
}

// After one red-black pass of slab level l (src = L.other(), dst = L.iter()).
template <class T> static pgpu_status dist_rb_interfaces(Env &env, Level<T> &L, int l, T omega, int flip)
{
    Dist *d = env.dist;
    if (!d || (d->lo_peer < 0 && d->hi_peer < 0)) return PGPU_SUCCESS;
    char *err = env.err;
    PGPU_FORWARD(dist_halo(env, L.g, L.iter()));
    const int64_t N = d->lvN[l], lo = d->lva[l], n = d->axis == 2 ? L.g.nz : L.g.ny;
    // the ghost planes' nodes in the slab's frame, for their colours (flip
    // holds the slab's own shift; the periodic seam's is here)
    const int glo = lo == 0 && d->lo_peer >= 0 ? (int)(N - 1 - lo) : -1;
    const int ghi = lo + n == N && d->hi_peer >= 0 ? (int)-lo : (int)n;
    const int64_t plane = d->axis == 2 ? (int64_t)L.g.nx * L.g.ny : (int64_t)L.g.nx;
    rb_interface_kernel<T><<<grid_for(2 * plane, env.sms), 256, 0, env.st>>>(
        L.g, d->axis, (const T *)L.other(), L.iter(), (const T *)L.f, L.shift, omega, flip, d->lo_peer >= 0,
        d->hi_peer >= 0, glo, ghi);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}

// The bands of a slab's two interfaces (side 0: low, 1: high) for a pass of
// S half-steps, each 3 S planes in the level's storage layout: band plane b
// is the slab's plane k0[side] + b (the low band starts S + 1 planes below
// the slab, the high one ends S + 1 planes above it).  u[side][0]:
// the values before the pass (ghosts included), then the second
// iteration's; u[side][1]: the first iteration's (NULL where the side has
// no neighbour); f: the right-hand side; cl / ch: the couplings of the
// band's nodes along the split axis (the global axis' values: the
// neighbour's planes are not the slab's).
template <class T> struct BandArgs {
    T *u[2][2];
    const T *f[2];
    int k0[2];
    int S;
    T cl[2][DIST_BAND_L], ch[2][DIST_BAND_L];
};

// Half-step h (0 .. S - 1) of the band fix-up: the colour of half-step h
// (the first colour of an iteration at even h) on the band planes
// h + 1 .. 3 S - 2 - h (the planes it can get right shrink
// by one on each side per half-step), from iteration h / 2's old values
// into its new ones, read as the pass reads them (rbgs_kernel): the first
// colour's neighbours old, the second colour's first-colour neighbours new
// and same-colour ones (across an odd periodic seam) old; x / y ghosts from
// u[side][0].  out (the last half-step): both colours of the planes
// S .. 2 S - 1, the ones the pass got wrong and the ghost plane, written to
// the level's iterate.
template <class T>
__global__ void rb_band_kernel(const Grid<T> g, const BandArgs<T> a, const T *__restrict__ shiftp, T omega, int flip,
                               int h, T *__restrict__ out)
{
    const int S = a.S;
    const int b0 = h + 1, nb = 3 * S - 2 - 2 * h, it = h >> 1, second = h & 1;
    const int64_t plane = (int64_t)g.nx * g.ny, per_side = nb * plane;
    const int64_t org = ghost_origin(g), in0 = g.base - org - g.sz; // (0, 0) within a storage plane
    const Shift<T> shift = load_shift(shiftp);
    PGPU_GRID_STRIDE(t, 2 * per_side)
    {
        const int side = t >= per_side;
        const T *ghosts = a.u[side][0], *src = a.u[side][it];
        T *dst = a.u[side][it ^ 1];
        if (!dst) continue;
        const int64_t r = t - side * per_side, e = r % plane;
        const int b = b0 + (int)(r / plane), i = (int)(e % g.nx), j = (int)(e / g.nx);
        const int k = a.k0[side] + b, mine = (i + j + k + flip) & 1;
        const int64_t q = (int64_t)b * g.sz + in0 + i + (int64_t)j * g.sy;
        T v;
        if (mine == second) { // not this half-step's colour (the first colour: odd)
            if (!out) continue;
            v = dst[q];
        } else {
            const ColXY<T> c = col_xy(g, i, j);
            // a neighbour at offset o, index m on an axis of n points
            auto nb_at = [&](int64_t o, int m, int n, int per, int ni, int nj) -> T {
                if ((m < 0 || m >= n) && !per) return ghosts[q + o];
                const int other = ((ni + nj + k + flip) & 1) != mine;
                return other && second ? dst[q + o] : src[q + o];
            };
            const int xl = i > 0 ? i - 1 : g.nx - 1, xh = i < g.nx - 1 ? i + 1 : 0;
            const int yl = j > 0 ? j - 1 : g.ny - 1, yh = j < g.ny - 1 ? j + 1 : 0;
            const T cl = a.cl[side][b], ch = a.ch[side][b];
            const T nbs = neighbours<T>(c.vxl, nb_at(c.nxl, i - 1, g.nx, g.px, xl, j), c.vxh,
                                        nb_at(c.nxh, i + 1, g.nx, g.px, xh, j), c.vyl,
                                        nb_at(c.nyl, j - 1, g.ny, g.py, i, yl), c.vyh,
                                        nb_at(c.nyh, j + 1, g.ny, g.py, i, yh), cl,
                                        second ? dst[q - g.sz] : src[q - g.sz], ch,
                                        second ? dst[q + g.sz] : src[q + g.sz]);
            v = relax(src[q], shift.of(a.f[side][q]) + nbs, c.dxy + (cl + ch), omega);
            dst[q] = v;
        }
        if (out && b >= S && b <= 2 * S - 1) out[org + (int64_t)(k + 1) * g.sz + in0 + i + (int64_t)j * g.sy] = v;
    }
}

// S / 2 red-black iterations (S: DIST_BAND_S or half of it) on slab level
// l (d->band[l]) with one exchange: each neighbour's S + 1 planes of u and
// S of f next to the interface (grouped NCCL send/receive, straight from
// and into storage planes) into the band, the nearest into the ghost
// plane; the pass (two iterations: one paired pass where the level pairs,
// else two) with the ghosts held; then the band's half-steps redo the
// planes next to each interface and the ghost planes.
template <class T> static pgpu_status dist_band_pass(Env &env, Level<T> &L, int l, T omega, int flip, int S)
{
    Dist *d = env.dist;
    char *err = env.err;
#ifdef PGPU_WITH_NCCL
    constexpr int LB = DIST_BAND_L, SM = DIST_BAND_S;
    const Grid<T> &g = L.g;
    const int n = g.nz;
    const int64_t sz = g.sz, org = ghost_origin(g);
    const bool lo = d->lo_peer >= 0, hi = d->hi_peer >= 0;
    T *src = L.iter();
    const T *f = L.f;
    auto plane = [&](const T *a, int k) { return const_cast<T *>(a) + org + (int64_t)(k + 1) * sz; };
    T *bb = (T *)d->bandbuf;
    const int64_t bl = (int64_t)LB * d->band_sz; // one band (the largest level's planes)
    T *ub[2] = {bb, bb + bl}, *fb[2] = {bb + 2 * bl, bb + 3 * bl}, *ub1[2] = {bb + 4 * bl, bb + 5 * bl};
    const size_t nu = (size_t)((S + 1) * sz), nf = (size_t)(S * sz);
    const DistMsg s0[2] = {{plane(src, 0), nu}, {plane(f, 0), nf}},
                  s1[2] = {{plane(src, n - S - 1), nu}, {plane(f, n - S), nf}},
                  r0[2] = {{ub[0], nu}, {fb[0] + sz, nf}},
                  r1[2] = {{ub[1] + (2 * S - 1) * sz, nu}, {fb[1] + (2 * S - 1) * sz, nf}};
    const DistMsg *const send[2] = {s0, s1}, *const recv[2] = {r0, r1};
    PGPU_FORWARD(dist_exchange(env, sizeof(T) == 8 ? ncclDouble : ncclFloat, 2, send, recv));
    // The slab's own band planes (old values); the ghost planes' interior
    // points for the pass (their edges are the caller's).
    const size_t own = (size_t)((2 * S - 1) * sz) * sizeof(T), row = (size_t)g.sy * sizeof(T);
    const int64_t in0 = g.base - org - sz; // (0, 0) within a storage plane
    const cudaMemcpyKind dd = cudaMemcpyDeviceToDevice;
    auto ghost = [&](int k, const T *from) {
        return cudaMemcpy2DAsync(plane(src, k) + in0, row, from + in0, row, (size_t)g.nx * sizeof(T), (size_t)g.ny,
                                 dd, env.st);
    };
    if (lo) {
        PGPU_CUDA(cudaMemcpyAsync(ub[0] + (S + 1) * sz, plane(src, 0), own, dd, env.st));
        PGPU_CUDA(cudaMemcpyAsync(fb[0] + (S + 1) * sz, plane(f, 0), own, dd, env.st));
        PGPU_CUDA(ghost(-1, ub[0] + S * sz));
    }
    if (hi) {
        PGPU_CUDA(cudaMemcpyAsync(ub[1], plane(src, n - 2 * S + 1), own, dd, env.st));
        PGPU_CUDA(cudaMemcpyAsync(fb[1], plane(f, n - 2 * S + 1), own, dd, env.st));
        PGPU_CUDA(ghost(n, ub[1] + (2 * S - 1) * sz));
    }
    PGPU_FORWARD(smooth(env, L, false, S / 2, omega, flip)); // two iterations: paired where L.route.paired
    BandArgs<T> a;
    for (int side = 0; side < 2; ++side) {
        const bool has = side ? hi : lo;
        a.u[side][0] = has ? ub[side] : nullptr;
        a.u[side][1] = has ? ub1[side] : nullptr;
    }
    a.f[0] = fb[0];
    a.f[1] = fb[1];
    a.k0[0] = -(S + 1);
    a.k0[1] = n - 2 * S + 1;
    a.S = S;
    // The couplings are kept for the longest band: a shorter one is its
    // middle (SM - S planes in from the low band's start, 2 (SM - S) from
    // the high one's).
    const double *c = &d->bandc[(size_t)l * 4 * LB];
    const int off[2] = {SM - S, 2 * (SM - S)};
    for (int side = 0; side < 2; ++side)
        for (int b = 0; b < 3 * S; ++b) {
            a.cl[side][b] = (T)c[side * LB + off[side] + b];
            a.ch[side][b] = (T)c[(2 + side) * LB + off[side] + b];
        }
    const int64_t most = 2 * (int64_t)(3 * S - 2) * g.nx * g.ny;
    for (int h = 0; h < S; ++h) {
        rb_band_kernel<T><<<grid_for(most, env.sms), 256, 0, env.st>>>(g, a, L.shift, omega, flip, h,
                                                                       h == S - 1 ? L.iter() : nullptr);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
#else
    (void)d, (void)L, (void)l, (void)omega, (void)flip, (void)S;
    return record(err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
#endif
}

template <class T>
static pgpu_status dist_smooth(Env &env, Level<T> &L, int l, bool jacobi, int iters, T omega, int flip, bool *fresh)
{
    Dist *d = env.dist;
    if (fresh) *fresh = false;
    // The global colours: a slab starting at an odd node swaps the local ones.
    const int f = flip ^ (d ? (int)(d->lva[l] & 1) : 0);
    if (!d || (d->lo_peer < 0 && d->hi_peer < 0)) return smooth(env, L, jacobi, iters, omega, f); // one rank
    const bool band = !jacobi && d->bandbuf && l < (int)d->band.size() && d->band[l] && L.g.sz <= d->band_sz;
    for (int s = 0; s < iters;) {
        if (band) { // two iterations per pass, the last one alone
            const int two = iters - s >= 2;
            PGPU_FORWARD(dist_band_pass(env, L, l, omega, f, two ? DIST_BAND_S : DIST_BAND_S / 2));
            s += two ? 2 : 1;
            continue;
        }
        PGPU_FORWARD(dist_halo(env, L.g, L.iter()));
        PGPU_FORWARD(smooth(env, L, jacobi, 1, omega, f));
        if (!jacobi) PGPU_FORWARD(dist_rb_interfaces(env, L, l, omega, f));
        ++s;
    }
    if (fresh) *fresh = band && iters > 0; // the bands leave the neighbours' new values in the ghost planes
    return PGPU_SUCCESS;
}

// Each rank's own planes of a replicated level's f, broadcast to all;
// frame: the ghost planes too (from the owners of the first and last node).
template <class T> static pgpu_status dist_gather(Env &env, const Grid<T> &g, T *f, bool frame)
{
    Dist *d = env.dist;
    char *err = env.err;
#ifdef PGPU_WITH_NCCL
    const int64_t stride = d->axis == 2 ? g.sz : g.sy;
    const ncclDataType_t ty = sizeof(T) == 8 ? ncclDouble : ncclFloat;
    ncclResult_t r = ncclGroupStart();
    const int64_t N = d->axis == 2 ? g.nz : g.ny;
    for (int q = 0; q < d->ranks && r == ncclSuccess; ++q) {
        if (d->own_b[q] <= d->own_a[q]) continue; // (a rank may own no node of the level)
        const int64_t a = d->own_a[q] + 1 - (frame && d->own_a[q] == 0);
        const int64_t b = d->own_b[q] + 1 + (frame && d->own_b[q] == N);
        T *at = f + a * stride; // storage planes a .. b - 1
        const size_t count = (size_t)((b - a) * stride);
        if (count) r = ncclBroadcast(at, at, count, ty, q, d->comm, env.st);
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    return PGPU_SUCCESS;
#else
    (void)d, (void)g, (void)f, (void)frame;
    return record(err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
#endif
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 38 "src/poisson_gpu.cu"
#endif
// dist_plan.h -- several GPUs: the slab split of a hierarchy and the local configs
#ifdef PGPU_SRC_LINES
#line 2 "src/dist_plan.h"
#endif


namespace pgpu {

// The global hierarchy (the single-GPU one, host tables only), cut into
// slabs level by level while every rank keeps at least two nodes of the
// split axis, a level has DIST_REPLICATE_AT points or more, and the
// transfers reach at most one node across a slab's face (the halo depth);
// from the next level on every rank holds the whole global level.  A
// coarse node belongs to the rank that holds its heaviest child.  On the
// slab levels the split axis is the global axis restricted to the rank's
// nodes, a face towards another rank a Dirichlet face at the neighbour's
// node: its coupling is the global one.  The transfers are the global
// tables in the slab's indices: a restriction row or an interpolation tap
// one node beyond the slab reads the ghost plane (exchanged before).  The
// first replicated level gets the restriction rows of this rank's own
// coarse nodes only (the others' are broadcast).
constexpr double DIST_REPLICATE_AT = 131072; // points: below, a level's halo latency outweighs its work

static pgpu_status dist_split(const pgpu_config &g, int ranks, int rank, pgpu_box &b, char *err);

// Every rank's first node A[r] and end node B[r] along the split axis (level 0).
static pgpu_status dist_ranges(const pgpu_config &g, int ranks, int axis, std::vector<int64_t> &A,
                               std::vector<int64_t> &B, char *err)
{
    A.assign(ranks, 0);
    B.assign(ranks, 0);
    for (int r = 0; r < ranks; ++r) {
        pgpu_box b;
        PGPU_FORWARD(dist_split(g, ranks, r, b, err));
        A[r] = b.lo[axis];
        B[r] = b.lo[axis] + b.n[axis];
    }
    return PGPU_SUCCESS;
}

// Band passes (dist_band_pass) on level l where the split axis is z,
// every slab holds a band's own planes (2 S - 1) and a periodic seam keeps
// the colours (an even number of nodes): Dist::band[l] and the couplings
// of this rank's band nodes from G, the level's global split axis; A / B:
// every rank's first and end node on it.  (d.band / d.bandc sized.)
static void dist_band_level(Dist &d, int l, const Axis &G, const std::vector<int64_t> &A,
                            const std::vector<int64_t> &B)
{
    const int S = DIST_BAND_S, LB = DIST_BAND_L, R = d.ranks;
    const int64_t N = G.n;
    const bool per = G.lo == PGPU_BC_PERIODIC;
    bool ok = R > 1 && d.axis == 2 && !(per && (N & 1)) && (l > 0 || d.band_strides);
    for (int r = 0; r < R && ok; ++r) ok = B[r] - A[r] >= 2 * S - 1;
    d.band[l] = ok;
    if (!ok) return;
    const AxisCoef gc = axis_coef(G);
    const int64_t a = A[d.rank], n = B[d.rank] - a;
    for (int side = 0; side < 2; ++side)
        for (int b = 0; b < LB; ++b) {
            int64_t J = a + (side ? n - 2 * S + 1 + b : b - S - 1);
            if (per) J = ((J % N) + N) % N;
            if (J < 0 || J >= N) continue; // no neighbour on this side: not used
            d.bandc[((size_t)l * 4 + side) * LB + b] = gc.c_lo[J];
            d.bandc[((size_t)l * 4 + 2 + side) * LB + b] = gc.c_hi[J];
        }
}

static bool dist_plan(Dist &d, std::vector<HostLevel> &out, char *err)
{
    const pgpu_config &c = d.global;
    const int ax = d.axis, R = d.ranks;
    Axis fine[3];
    fine_axes(c, fine);
    std::vector<HostLevel> hg;
    if (!build_hierarchy(fine, hg)) {
        record(err, PGPU_ERROR_UNSUPPORTED, "multigrid: could not build a level hierarchy for this grid");
        return false;
    }
    const int nl = (int)hg.size();
    const bool per = c.bc[2 * ax] == PGPU_BC_PERIODIC && R > 1;
    // Level-0 ranges of every rank.
    std::vector<std::vector<int64_t>> A(1), B(1);
    if (dist_ranges(c, R, ax, A[0], B[0], err) != PGPU_SUCCESS) return false;
    // Index maps with a slab [a, b) of N nodes: a global node to the slab's
    // storage (1..n; 0 and n+1 the ghosts), -1 where it is further away.
    auto to_storage = [&](int64_t J, int64_t a, int64_t b, int64_t N) -> int64_t {
        if (J >= a && J < b) return J - a + 1;
        if (J == a - 1) return 0; // (J == -1: the wall below node 0)
        if (J == b) return b - a + 1;
        if (per && a == 0 && J == N - 1) return 0;
        if (per && b == N && J == 0) return b - a + 1;
        return -1;
    };
    // The owners of level l+1's nodes; false where they are not contiguous.
    auto owners = [&](int l, std::vector<int64_t> &a1, std::vector<int64_t> &b1) {
        const AxisTransfer &t = hg[l].tr[ax];
        const int64_t Nc = hg[l + 1].ax[ax].n;
        a1.assign(R, 0);
        b1.assign(R, 0);
        if (!t.coarsened) {
            a1 = A[l];
            b1 = B[l];
            return true;
        }
        int prev = 0;
        std::vector<bool> seen(R, false);
        for (int64_t J = 0; J < Nc; ++J) {
            int best = -1;
            for (int m = 0; m < t.rcnt[J]; ++m)
                if (best < 0 || t.rw[(size_t)J * MAX_CHILDREN + m] > t.rw[(size_t)J * MAX_CHILDREN + best]) best = m;
            if (best < 0) return false;
            const int64_t ch = t.ridx[(size_t)J * MAX_CHILDREN + best];
            int r = 0;
            while (r < R && !(ch >= A[l][r] && ch < B[l][r])) ++r;
            if (r == R || r < prev) return false;
            if (!seen[r]) { a1[r] = J; seen[r] = true; }
            b1[r] = J + 1;
            prev = r;
        }
        return true;
    };
    // The transfer l -> l+1 reaches at most one node beyond each slab.
    auto reachable = [&](int l, const std::vector<int64_t> &a1, const std::vector<int64_t> &b1, bool coarse_slab) {
        const AxisTransfer &t = hg[l].tr[ax];
        const int64_t N = hg[l].ax[ax].n, Nc = hg[l + 1].ax[ax].n;
        for (int r = 0; r < R; ++r) {
            for (int64_t J = a1[r]; J < b1[r]; ++J)
                for (int m = 0; m < (t.coarsened ? t.rcnt[J] : 0); ++m) {
                    const int64_t ch = t.ridx[(size_t)J * MAX_CHILDREN + m];
                    if (to_storage(ch, A[l][r], B[l][r], N) < 0) return false;
                }
            if (!coarse_slab) continue;
            for (int64_t i = A[l][r]; i < B[l][r]; ++i) {
                const int64_t P[2] = {t.p0[i], t.p1[i]};
                const double Q[2] = {t.q0[i], t.q1[i]};
                for (int q = 0; q < 2; ++q)
                    if (Q[q] != 0.0 && to_storage(P[q] - 1, a1[r], b1[r], Nc) < 0) return false;
            }
        }
        return true;
    };
    // Level l+1 from slab level l: another slab, else the replicated level;
    // where neither is reachable, level l is the replicated one instead.
    int nd = 1;
    std::vector<int64_t> a1, b1;
    for (int l = 0; l + 1 < nl; ++l) {
        if (!owners(l, a1, b1) || !reachable(l, a1, b1, false)) {
            if (l == 0) {
                record(err, PGPU_ERROR_UNSUPPORTED,
                       "distributed multigrid: the first coarsening of the split axis (%s) reaches further than one "
                       "plane across the ranks' faces (an odd periodic axis: make it even, or split fewer ways)",
                       ax == 2 ? "z" : "y");
                return false;
            }
            nd = l;
            A.resize(l + 1);
            B.resize(l + 1);
            break;
        }
        const HostLevel &C = hg[l + 1];
        const double npts = (double)C.ax[0].n * C.ax[1].n * C.ax[2].n;
        bool slab = l + 2 < nl && npts >= DIST_REPLICATE_AT; // the coarsest level is replicated
        // Two nodes per rank; three on an end rank at a wall that is not
        // Dirichlet (FMG's cubic taps there: its nodes and one ghost plane).
        for (int r = 0; r < R && slab; ++r) {
            const bool wall = !per && ((r == 0 && c.bc[2 * ax] != PGPU_BC_DIRICHLET) ||
                                       (r == R - 1 && c.bc[2 * ax + 1] != PGPU_BC_DIRICHLET));
            slab = b1[r] - a1[r] >= (wall ? 3 : 2);
        }
        slab = slab && reachable(l, a1, b1, true);
        A.push_back(a1);
        B.push_back(b1);
        nd = slab ? l + 2 : l + 1;
        if (!slab) break;
    }
    // The levels of this rank.
    const int me = d.rank;
    out = hg;
    d.levels = nd;
    d.lvN.assign(nd, 0);
    d.lva.assign(nd, 0);
    for (int l = 0; l < nd; ++l) {
        const Axis &G = hg[l].ax[ax];
        const int64_t a = A[l][me], b = B[l][me], N = G.n;
        d.lvN[l] = N;
        d.lva[l] = a;
        Axis &S = out[l].ax[ax];
        S.n = (int)(b - a);
        S.x.assign(G.x.begin() + a, G.x.begin() + b);
        S.w.assign(G.w.begin() + a, G.w.begin() + b);
        if (R > 1 && (a > 0 || per)) {
            S.lo = PGPU_BC_DIRICHLET;
            S.xlo = a > 0 ? G.x[a - 1] : G.x[N - 1] - G.L;
        }
        if (R > 1 && (b < N || per)) {
            S.hi = PGPU_BC_DIRICHLET;
            S.xhi = b < N ? G.x[b] : G.x[0] + G.L;
        }
        // The transfer to level l+1 in the slab's indices.
        const AxisTransfer &t = hg[l].tr[ax];
        AxisTransfer &u = out[l].tr[ax];
        const bool slab_c = l + 1 < nd;
        const int64_t Nc = hg[l + 1].ax[ax].n, ca = A[l + 1][me], cb = B[l + 1][me];
        auto tap = [&](int64_t P) { // a coarse storage index of the global tables, in the coarse level's storage
            if (!slab_c) return P;
            return to_storage(P - 1, ca, cb, Nc);
        };
        const int n = S.n;
        u.coarsened = t.coarsened;
        u.p0.assign(n, 0);
        u.p1.assign(n, 0);
        u.q0.assign(n, 0.0);
        u.q1.assign(n, 0.0);
        u.c4.assign((size_t)n * 4, 0);
        u.w4.assign((size_t)n * 4, 0.0);
        for (int i = 0; i < n; ++i) {
            const int64_t ig = a + i;
            int64_t p0 = tap(t.p0[ig]), p1 = tap(t.p1[ig]);
            if (p0 < 0) p0 = p1 >= 0 ? p1 : 0; // (weight 0: read, not used)
            if (p1 < 0) p1 = p0;
            u.p0[i] = (int)p0;
            u.p1[i] = (int)p1;
            u.q0[i] = t.q0[ig];
            u.q1[i] = t.q1[ig];
            for (int q = 0; q < 4; ++q) { // (FMG's taps; between two slab levels, redone below)
                const int64_t P = tap(t.c4[(size_t)ig * 4 + q]);
                u.c4[(size_t)i * 4 + q] = P >= 0 ? (int)P : (int)p0;
                u.w4[(size_t)i * 4 + q] = P >= 0 ? t.w4[(size_t)ig * 4 + q] : 0.0;
            }
        }
        // Restriction rows: this rank's coarse nodes, children in the slab's indices.
        const int64_t rows = slab_c ? cb - ca : Nc, first = slab_c ? ca : 0;
        u.rcnt.assign(rows, 0);
        u.ridx.assign((size_t)rows * MAX_CHILDREN, 0);
        u.rw.assign((size_t)rows * MAX_CHILDREN, 0.0);
        u.fw.assign((size_t)rows * MAX_CHILDREN, 0.0);
        for (int64_t I = 0; I < rows; ++I) {
            const int64_t J = first + I;
            if (J < ca || J >= cb) continue; // another rank's node (replicated level)
            if (!t.coarsened) { // identity: the node itself
                u.rcnt[I] = 1;
                u.ridx[(size_t)I * MAX_CHILDREN] = (int)(J - a);
                u.rw[(size_t)I * MAX_CHILDREN] = u.fw[(size_t)I * MAX_CHILDREN] = 1.0;
                continue;
            }
            u.rcnt[I] = t.rcnt[J];
            for (int m = 0; m < t.rcnt[J]; ++m) {
                const size_t k = (size_t)I * MAX_CHILDREN + m, kg = (size_t)J * MAX_CHILDREN + m;
                u.ridx[k] = (int)(to_storage(t.ridx[kg], a, b, N) - 1);
                u.rw[k] = t.rw[kg];
                u.fw[k] = t.fw[kg];
            }
        }
    }
    // FMG's cubic taps between two slab levels: through the four points
    // nearest each fine node among the coarse slab's nodes and its ghost
    // planes (the neighbours' nodes, or a wall), so that none lies beyond
    // the halo -- off-centre next to an interface, still cubic.
    for (int l = 0; l + 1 < nd; ++l) {
        if (!hg[l].tr[ax].coarsened) continue;
        AxisTransfer cub;
        cubic_interpolation(out[l].ax[ax], out[l + 1].ax[ax], cub);
        out[l].tr[ax].c4 = cub.c4;
        out[l].tr[ax].w4 = cub.w4;
    }
    d.own_a = A[nd];
    d.own_b = B[nd];
    d.band.assign(nd, 0);
    d.bandc.assign((size_t)nd * 4 * DIST_BAND_L, 0.0);
    for (int l = 0; l < nd; ++l) dist_band_level(d, l, hg[l].ax[ax], A[l], B[l]);
    return true;
}

static pgpu_status resolve_config(const pgpu_config *in, pgpu_config *c, char *err, Stop *rule = nullptr); // validate.h
static bool is_krylov(int m);                                                        // handle.h

// The box of `rank` among `ranks` for a resolved global config: pairs of
// planes of the split axis dealt out evenly, the last rank taking an odd
// axis' last plane.
static pgpu_status dist_split(const pgpu_config &g, int ranks, int rank, pgpu_box &b, char *err)
{
    PGPU_RETURN_IF(ranks < 1, PGPU_ERROR_INVALID_ARGUMENT, "ranks = %d: at least one", ranks);
    PGPU_RETURN_IF(rank < 0 || rank >= ranks, PGPU_ERROR_INVALID_ARGUMENT, "rank %d is not one of 0 .. %d", rank,
                   ranks - 1);
    const int axis = g.nz > 1 ? 2 : 1;
    const int64_t n[3] = {g.nx, g.ny, g.nz};
    const int64_t N = n[axis];
    PGPU_RETURN_IF(ranks > 1 && N < 2 * (int64_t)ranks, PGPU_ERROR_INVALID_ARGUMENT,
                   "%s = %lld cannot be split over %d ranks: each rank needs at least two planes (at most %lld "
                   "rank%s for this grid)", axis == 2 ? "nz" : "ny", (long long)N, ranks, (long long)(N / 2),
                   N / 2 == 1 ? "" : "s");
    const int64_t pairs = N / 2, q = pairs / ranks, rem = pairs % ranks;
    memset(&b, 0, sizeof b);
    for (int a = 0; a < 3; ++a) b.n[a] = n[a];
    b.lo[axis] = 2 * (rank * q + std::min<int64_t>(rank, rem));
    b.n[axis] = ranks == 1 ? N : 2 * (q + (rank < rem ? 1 : 0)) + (rank == ranks - 1 ? N % 2 : 0);
    b.rank = rank;
    b.ranks = ranks;
    return PGPU_SUCCESS;
}

// What the distributed mode serves (a resolved config).
static pgpu_status dist_supported(const pgpu_config &c, char *err)
{
    PGPU_RETURN_IF((c.flags & PGPU_PRECISION_MASK) == PGPU_MIXED, PGPU_ERROR_UNSUPPORTED,
                   "distributed: PGPU_MIXED is not served yet on several GPUs (use PGPU_DOUBLE or PGPU_FLOAT)");
    return PGPU_SUCCESS;
}

// The global config (defaults resolved once, from the global grid: every
// rank resolves the same values), the rank's box, its neighbours, and the
// config of its slab: the interface faces Dirichlet, the caller's strides
// for the local arrays; rule (where given): how the solves end, from the
// global config.
static pgpu_status dist_configs(const pgpu_config *user, int ranks, int rank, Dist &d, pgpu_config &local, char *err,
                                Stop *rule = nullptr)
{
    PGPU_FORWARD(resolve_config(user, &d.global, err, rule));
    PGPU_FORWARD(dist_supported(d.global, err));
    PGPU_FORWARD(dist_split(d.global, ranks, rank, d.box, err));
    const pgpu_config &g = d.global;
    d.rank = rank;
    d.ranks = ranks;
    d.axis = g.nz > 1 ? 2 : 1;
    const bool per = g.bc[2 * d.axis] == PGPU_BC_PERIODIC && ranks > 1;
    d.lo_peer = rank > 0 ? rank - 1 : per ? ranks - 1 : -1;
    d.hi_peer = rank < ranks - 1 ? rank + 1 : per ? 0 : -1;
    d.plane = d.axis == 2 ? (g.nx + 2) * (g.ny + 2) : g.nx + 2; // (with the ghost lines)
    d.lvN.assign(1, d.axis == 2 ? g.nz : g.ny);
    d.lva.assign(1, d.box.lo[d.axis]);
    { // level 0's bands (the stationary red-black method; dist_plan redoes them)
        Axis fine[3];
        fine_axes(g, fine);
        std::vector<int64_t> A, B;
        PGPU_FORWARD(dist_ranges(g, ranks, d.axis, A, B, err));
        d.band.assign(1, 0);
        d.bandc.assign(4 * DIST_BAND_L, 0.0);
        dist_band_level(d, 0, fine[d.axis], A, B);
    }
    pgpu_config raw = g;
    raw.nx = d.box.n[0];
    raw.ny = d.box.n[1];
    raw.nz = d.box.n[2];
    raw.stride_y = user->stride_y;
    raw.stride_z = user->stride_z;
    if (d.lo_peer >= 0) raw.bc[2 * d.axis] = PGPU_BC_DIRICHLET;
    if (d.hi_peer >= 0) raw.bc[2 * d.axis + 1] = PGPU_BC_DIRICHLET;
    return resolve_config(&raw, &local, err);
}

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 39 "src/poisson_gpu.cu"
#endif
// dist_fft.h -- several GPUs: the FFT over slabs
#ifdef PGPU_SRC_LINES
#line 2 "src/dist_fft.h"
#endif



namespace pgpu {

// Every axis by a real transform (FFT_RHC for a periodic one: its slots are
// eigenvectors as modes are), so that the data stay real and the
// transforms of one axis are independent of the others'.  The data start in
// the handle's slabs; an axis is transformed in a layout where it is whole;
// once only the split axis is left, a move (an all-to-all of boxes, grouped
// ncclSend / ncclRecv) splits the data along another axis.  The last
// mixed Dirichlet/Neumann axis is solved last by the line solves (tri_kernel),
// in a layout where it is whole; else the spectrum is divided.  The inverse
// runs the steps backwards.  3D: x and y on the slabs, a move to slabs of y
// (or x), z, the solve, back; 2D the same with x and y.

// The grid whose boundary terms the right-hand side takes: the faces
// between ranks hold no boundary data.
template <class T> static Grid<T> rhs_grid(const Env &env, Grid<T> g)
{
    if (!env.dist) return g;
    const Dist &d = *env.dist;
    int &lo = d.axis == 2 ? g.dzl : g.dyl, &hi = d.axis == 2 ? g.dzh : g.dyh;
    if (d.lo_peer >= 0) lo = 0;
    if (d.hi_peer >= 0) hi = 0;
    g.dirichlet &= ~((d.lo_peer >= 0 ? 1 << (2 * d.axis) : 0) | (d.hi_peer >= 0 ? 2 << (2 * d.axis) : 0));
    return g;
}

// A box of a packed array: the array's extents and the box's origin.
struct BoxAt {
    int64_t d0, d1;     // the array's x and y extents
    int64_t o0, o1, o2; // the box's first node
};
// dst's box = src's box, both of extents e0 x e1 x e2: rows (x) by the
// threads of a block, a row per (blockIdx.y, blockIdx.z) and stride.
template <class T>
__global__ void box_copy_kernel(const T *__restrict__ src, BoxAt s, T *__restrict__ dst, BoxAt t, int64_t e0,
                                int64_t e1, int64_t e2)
{
    for (int64_t k = blockIdx.z; k < e2; k += gridDim.z)
        for (int64_t j = blockIdx.y; j < e1; j += gridDim.y) {
            const T *a = src + s.o0 + s.d0 * ((s.o1 + j) + s.d1 * (s.o2 + k));
            T *b = dst + t.o0 + t.d0 * ((t.o1 + j) + t.d1 * (t.o2 + k));
            for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < e0; i += (int64_t)blockDim.x * gridDim.x)
                b[i] = a[i];
        }
}

// The all-periodic route's plan (init_dist_rows below) for rank me of R,
// host only (a CPU test checks it for every rank of many grids): the slabs'
// planes (zlo, zn), the chunks, the x modes' split (kxlo, kxn), the blocks'
// offsets (roff), the plane table (ztab: plane z's block at ztab[2 z], its
// mode stride at ztab[2 z + 1]) and C's length in complex elements (of
// complex_bytes each).  Every rank plans the same chunks.
inline pgpu_status plan_dist_rows(const pgpu_config &gc, int R, int me, int axis, size_t complex_bytes, DistRows &P,
                                  char *err)
{
    const int64_t ny = gc.ny, nz = gc.nz, kx = gc.nx / 2 + 1;
    {
        std::vector<int64_t> A, B;
        PGPU_FORWARD(dist_ranges(gc, R, axis, A, B, err));
        P.zlo = A;
        P.zn.resize(R);
        for (int r = 0; r < R; ++r) P.zn[r] = B[r] - A[r];
    }
    int64_t fewest = P.zn[0];
    for (int r = 0; r < R; ++r) fewest = std::min(fewest, P.zn[r]);
    const int64_t slab_bytes = kx * ny * (nz / R) * (int64_t)complex_bytes;
    const int K = P.chunks = (int)std::max<int64_t>(
        1, std::min<int64_t>(std::min<int64_t>(FFT_DIST_CHUNKS, fewest), slab_bytes / FFT_DIST_CHUNK_MIN));
    P.zc0.resize((size_t)R * (K + 1));
    for (int r = 0; r < R; ++r)
        for (int c = 0; c <= K; ++c) P.zc0[(size_t)r * (K + 1) + c] = c * P.zn[r] / K;
    P.kxlo.resize(R);
    P.kxn.resize(R);
    for (int r = 0; r < R; ++r) {
        P.kxlo[r] = r * kx / R;
        P.kxn[r] = (r + 1) * kx / R - P.kxlo[r];
    }
    // The blocks of this rank's x modes: its own planes' in C_c, the
    // others' after the spectrum in [q][c][kx][planes][y].
    const int64_t spectrum = kx * ny * P.zn[me];
    P.roff.assign((size_t)R * (K + 1), 0);
    P.ztab.assign((size_t)(2 * nz), 0);
    for (int q = 0; q < R; ++q)
        for (int c = 0; c < K; ++c) {
            const int64_t a = P.zc0[(size_t)q * (K + 1) + c], b = P.zc0[(size_t)q * (K + 1) + c + 1];
            const int64_t before = P.zlo[q] - (q > me ? P.zn[me] : 0); // the other ranks' planes before q's
            const int64_t off = q == me ? kx * ny * a + P.kxlo[me] * (b - a) * ny
                                        : spectrum + P.kxn[me] * ny * (before + a);
            P.roff[(size_t)q * (K + 1) + c] = off;
            for (int64_t z = a; z < b; ++z) {
                const int64_t g = P.zlo[q] + z;
                P.ztab[(size_t)(2 * g)] = off + (z - a) * ny;
                P.ztab[(size_t)(2 * g + 1)] = (b - a) * ny;
            }
        }
    P.elems = std::max<int64_t>(spectrum + P.kxn[me] * ny * (nz - P.zn[me]), 2 * R);
    return PGPU_SUCCESS;
}

#ifdef PGPU_WITH_NCCL
// NCCL connects two ranks on their first exchange, which cannot happen
// inside a graph capture: a word each way between every pair, now (S and
// R: device buffers of a word or more).
template <class T> static pgpu_status nccl_connect(Env &env, void *S, void *R)
{
    char *err = env.err;
    const Dist &d = *env.dist;
    const ncclDataType_t ty = sizeof(T) == 8 ? ncclDouble : ncclFloat;
    ncclResult_t r = ncclGroupStart();
    for (int q = 0; q < d.ranks && r == ncclSuccess; ++q) {
        if (q == d.rank) continue;
        r = ncclSend(S, 1, ty, q, d.comm, env.st);
        if (r == ncclSuccess) r = ncclRecv((T *)R + q, 1, ty, q, d.comm, env.st);
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    PGPU_CUDA(cudaStreamSynchronize(env.st));
    return PGPU_SUCCESS;
}

// All axes periodic in 3D with x and the global z within the row kernels
// (lf_fits): the single GPU's kernels on each slab, with one move each way
// (x split, z whole) in the middle.  Forward, per chunk of the slab's planes
// (chunk-major: chunk c's spectrum is C_c[kx][plane][y] at C + kx ny z0):
//   lf_forward_kernel  f's x rows        -> C_c
//   cuFFT              y lines of C_c, in place
//   move (stream cs)   C_c's block of each other rank's x modes -> that
//                      rank's C, beyond its spectrum
// then lf_zsolve_kernel on this rank's x modes, all planes (z forward,
// divide, z inverse; the table zt says where each plane's block lies: its
// own planes' stay in C_c), and backwards per chunk: the move back into
// C_c, the y lines, lf_inverse_kernel into u.  A chunk's move overlaps the
// next chunk's transforms (the moves' stream has the higher priority); the
// data move once each way.
template <class T> pgpu_status FftSolver<T>::init_dist_rows()
{
    char *err = env->err;
    const Dist &d = *env->dist;
    const pgpu_config &gc = d.global;
    const int R = d.ranks, me = d.rank;
    const int64_t nx = gc.nx, ny = gc.ny, nz = gc.nz, kx = nx / 2 + 1;
    dist.reset(new FftDist<T>());
    FftDist<T> &D = *dist;
    D.rows = true;
    PGPU_FORWARD(plan_dist_rows(gc, R, me, d.axis, sizeof(C2), D, err));
    const int K = D.chunks;
    PGPU_FORWARD(env->upload(D.ztab, &D.zt, "FFT plane table"));
    PGPU_FORWARD(lf_prepare(nx, nz));
    // The y transforms of a chunk: contiguous lines, kx x planes of them.
    size_t work = 0;
    for (int c = 0; c < K; ++c) {
        const int64_t p = D.zc0[(size_t)me * (K + 1) + c + 1] - D.zc0[(size_t)me * (K + 1) + c];
        bool have = false;
        for (auto &yp : D.yplans) have = have || yp.first == p;
        if (have) continue;
        long long n1[1] = {ny};
        cufftHandle h = 0;
        PGPU_FORWARD(make_plan(*env, plans, h, work, 1, n1, n1, 1, ny, n1, 1, ny, FftTypes<T>::C2C, kx * p));
        D.yplans.push_back(std::make_pair(p, h));
    }
    // Eigenvalues: y, z (all modes), x (this rank's).
    std::vector<T> ev;
    for (int64_t k = 0; k < ny; ++k) ev.push_back((T)fft_eigen(FFT_DFT, ny, gc.hy, k));
    for (int64_t k = 0; k < nz; ++k) ev.push_back((T)fft_eigen(FFT_DFT, nz, gc.hz, k));
    for (int64_t k = 0; k < kx; ++k) ev.push_back((T)fft_eigen(FFT_DFT, nx, gc.hx, k));
    T *d_ev = nullptr;
    PGPU_FORWARD(env->upload(ev, &d_ev, "FFT eigenvalues"));
    D.spec.e0 = ny;
    D.spec.ev0 = d_ev;
    D.spec.e1 = nz;
    D.spec.ev1 = d_ev + ny;
    D.spec.e2 = D.kxn[me];
    D.spec.ev2 = d_ev + ny + nz + D.kxlo[me];
    D.spec.scale = (T)(1.0 / ((double)nx * (double)ny * (double)nz));
    PGPU_FORWARD(env->mem.alloc(err, (void **)&D.C, (size_t)D.elems * sizeof(C2),
                                "FFT spectrum and z lines"));
    void *wa = nullptr;
    if (work) PGPU_FORWARD(env->mem.alloc(err, &wa, work, "cuFFT work area"));
    if (env->mem.counting) return PGPU_SUCCESS; // (no plans made)
    if (work)
        for (auto &yp : D.yplans) PGPU_CUFFT(cufftSetWorkArea(yp.second, wa));
    // The moves' stream at the highest priority: their kernels are scheduled
    // ahead of the next chunk's transforms, which they overlap.
    int least = 0, most = 0;
    PGPU_CUDA(cudaDeviceGetStreamPriorityRange(&least, &most));
    PGPU_CUDA(cudaStreamCreateWithPriority(&D.cs, cudaStreamNonBlocking, most));
    D.ev.resize((size_t)(2 * K + 2));
    for (cudaEvent_t &e : D.ev) PGPU_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return nccl_connect<T>(*env, D.C, D.C + R);
}

// Chunk c's move (on the stream cs): forward, C_c's block of rank q's x
// modes to q's block of this rank's chunk c; back, the reverse.  (This
// rank's own block stays where it is.)
template <class T> pgpu_status FftSolver<T>::dist_swap(int c, bool back)
{
    char *err = env->err;
    const Dist &d = *env->dist;
    FftDist<T> &D = *dist;
    const int R = d.ranks, me = d.rank, K = D.chunks;
    const int64_t ny = d.global.ny, kx = d.global.nx / 2 + 1;
    const int64_t z0 = D.zc0[(size_t)me * (K + 1) + c], zc = D.zc0[(size_t)me * (K + 1) + c + 1] - z0;
    C2 *Cc = D.C + kx * ny * z0;
    const ncclDataType_t ty = sizeof(T) == 8 ? ncclDouble : ncclFloat;
    ncclResult_t r = ncclGroupStart();
    for (int q = 0; q < R && r == ncclSuccess; ++q) {
        const int64_t qa = D.zc0[(size_t)q * (K + 1) + c], qc = D.zc0[(size_t)q * (K + 1) + c + 1] - qa;
        if (q == me) continue;
        C2 *mine = Cc + D.kxlo[q] * zc * ny;                    // C_c's block of q's modes
        C2 *theirs = D.C + D.roff[(size_t)q * (K + 1) + c];     // q's chunk c of this rank's modes
        const size_t nm = (size_t)(D.kxn[q] * zc * ny), nt = (size_t)(D.kxn[me] * qc * ny);
        if (back) {
            if (nt) r = ncclSend(theirs, 2 * nt, ty, q, d.comm, D.cs);
            if (r == ncclSuccess && nm) r = ncclRecv(mine, 2 * nm, ty, q, d.comm, D.cs);
        } else {
            if (nm) r = ncclSend(mine, 2 * nm, ty, q, d.comm, D.cs);
            if (r == ncclSuccess && nt) r = ncclRecv(theirs, 2 * nt, ty, q, d.comm, D.cs);
        }
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    return PGPU_SUCCESS;
}

template <class T> pgpu_status FftSolver<T>::run_dist_rows(T *u, const T *f, const T *d_shift)
{
    char *err = env->err;
    FftDist<T> &D = *dist;
    const Dist &d = *env->dist;
    const cudaStream_t st = env->st;
    const int K = D.chunks, me = d.rank;
    const int64_t ny = d.global.ny, kx = d.global.nx / 2 + 1;
    const Level<T> &L0 = *lv0;
    const LfShape sh = lf_shape(L0.g.nx, LF_T, Tune<T>::lf_vals);
    // Chunk c (a plane or more: chunks <= every slab's planes): its planes'
    // grid, its spectrum, its y transforms.
    auto chunk = [&](int c, Grid<T> &g, C2 *&Cc, cufftHandle &yp) {
        const int64_t z0 = D.zc0[(size_t)me * (K + 1) + c], zc = D.zc0[(size_t)me * (K + 1) + c + 1] - z0;
        g = L0.g;
        g.nz = (int)zc;
        g.base += z0 * g.sz;
        Cc = D.C + kx * ny * z0;
        for (auto &p : D.yplans)
            if (p.first == zc) yp = p.second;
    };
    for (int c = 0; c < K; ++c) {
        Grid<T> g;
        C2 *Cc;
        cufftHandle yp = 0;
        chunk(c, g, Cc, yp);
        const unsigned blocks = (unsigned)(((int64_t)g.ny * g.nz + sh.lpb - 1) / sh.lpb);
        lf_forward_kernel<T><<<blocks, LF_T, lf_smem, st>>>(g, f, d_shift, lf_tw, Cc);
        PGPU_LAUNCHED();
        PGPU_CUFFT(FftTypes<T>::c2c(yp, Cc, CUFFT_FORWARD));
        PGPU_CUDA(cudaEventRecord(D.ev[c], st));
        PGPU_CUDA(cudaStreamWaitEvent(D.cs, D.ev[c], 0));
        PGPU_FORWARD(dist_swap(c, false));
    }
    PGPU_CUDA(cudaEventRecord(D.ev[K], D.cs));
    PGPU_CUDA(cudaStreamWaitEvent(st, D.ev[K], 0));
    {
        const LfShape zs = lf_shape(2 * (int)D.spec.e1, LF_T, Tune<T>::lf_vals);
        const dim3 zg((unsigned)((D.spec.e0 + zs.lpb - 1) / zs.lpb), (unsigned)D.spec.e2);
        if (D.spec.e2 > 0) {
            lf_zsolve_kernel<T><<<zg, LF_T, lf_zsmem, st>>>(D.spec, lf_twz, D.C, D.zt);
            PGPU_LAUNCHED();
        }
    }
    PGPU_CUDA(cudaEventRecord(D.ev[K + 1], st));
    PGPU_CUDA(cudaStreamWaitEvent(D.cs, D.ev[K + 1], 0));
    for (int c = 0; c < K; ++c) {
        PGPU_FORWARD(dist_swap(c, true));
        PGPU_CUDA(cudaEventRecord(D.ev[K + 2 + c], D.cs));
        PGPU_CUDA(cudaStreamWaitEvent(st, D.ev[K + 2 + c], 0));
        Grid<T> g;
        C2 *Cc;
        cufftHandle yp = 0;
        chunk(c, g, Cc, yp);
        PGPU_CUFFT(FftTypes<T>::c2c(yp, Cc, CUFFT_INVERSE));
        const unsigned blocks = (unsigned)(((int64_t)g.ny * g.nz + sh.lpb - 1) / sh.lpb);
        lf_inverse_kernel<T><<<blocks, LF_T, lf_smem, st>>>(g, Cc, lf_tw, u);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

static dim3 box_grid(const int64_t e[3])
{
    return dim3((unsigned)std::min<int64_t>((e[0] + 255) / 256, 64), (unsigned)std::min<int64_t>(e[1], 65535),
                (unsigned)std::min<int64_t>(e[2], 65535));
}
template <class T> pgpu_status FftSolver<T>::init_dist()
{
    char *err = env->err;
    const Dist &d = *env->dist;
    const pgpu_config &gc = d.global;
    const int R = d.ranks, me = d.rank;
    const bool is3d = gc.nz > 1;
    const int dims = is3d ? 3 : 2;
    const int64_t N[3] = {gc.nx, gc.ny, is3d ? gc.nz : 1};
    const double hh[3] = {gc.hx, gc.hy, gc.hz};
    {
        bool all_p = is3d && d.axis == 2, x = false, z = false;
        for (int f = 0; f < 6; ++f) all_p = all_p && gc.bc[f] == PGPU_BC_PERIODIC;
        if (all_p) lf_fits(gc.nx, gc.nz, x, z);
        // The kernels' fit depends on each device's shared memory: the
        // ranks agree (the largest verdict), so that they take one route.
        double no = z && gc.nx / 2 + 1 >= R ? 0 : 1;
        if (all_p && !env->mem.counting) {
            PGPU_CUDA(cudaMemcpyAsync(d.d_red, &no, sizeof no, cudaMemcpyHostToDevice, env->st));
            PGPU_FORWARD(dist_allreduce(*env, d.d_red, 0, 1, env->st));
            PGPU_CUDA(cudaMemcpyAsync(&no, d.d_red, sizeof no, cudaMemcpyDeviceToHost, env->st));
            PGPU_CUDA(cudaStreamSynchronize(env->st));
        }
        if (no == 0) return init_dist_rows();
    }
    // The last axis with a Dirichlet and a Neumann face by line solves, the others by transforms.
    int kind[3] = {-1, -1, -1}, tri_ax = -1;
    for (int a = 0; a < dims; ++a)
        if (gc.bc[2 * a] != gc.bc[2 * a + 1]) tri_ax = a;
    for (int a = 0; a < dims; ++a) {
        const int lo = gc.bc[2 * a], hi = gc.bc[2 * a + 1];
        if (lo == PGPU_BC_PERIODIC) kind[a] = FFT_RHC;
        else if (a != tri_ax) kind[a] = fft_axis_kind<T>(lo, hi);
    }
    dist.reset(new FftDist<T>());
    FftDist<T> &D = *dist;
    typedef typename FftDist<T>::Layout Layout;
    typedef typename FftDist<T>::Step Step;
    D.tri = tri_ax;
    auto add_layout = [&](int s, const std::vector<int64_t> &lo, const std::vector<int64_t> &n) {
        Layout l;
        l.s = s;
        l.lo = lo;
        l.n = n;
        for (int a = 0; a < 3; ++a) l.d[a] = a == s ? n[me] : N[a];
        l.vol = l.d[0] * l.d[1] * l.d[2];
        D.lay.push_back(l);
        return (int)D.lay.size() - 1;
    };
    int cur;
    {
        std::vector<int64_t> A, B;
        PGPU_FORWARD(dist_ranges(gc, R, d.axis, A, B, err));
        for (int r = 0; r < R; ++r) B[r] -= A[r];
        cur = add_layout(d.axis, A, B);
    }
    // The axis to split along next: not `avoid`, not the line solves' where
    // another serves, at least a node per rank; the longest.
    auto split_for = [&](int avoid) {
        int best = -1;
        for (int a = 0; a < dims; ++a) {
            if (a == avoid || N[a] < R) continue;
            const bool ok = a != tri_ax, best_ok = best >= 0 && best != tri_ax;
            if (best < 0 || (ok && !best_ok) || (ok == best_ok && N[a] > N[best])) best = a;
        }
        return best;
    };
    auto move_to = [&](int s) -> pgpu_status {
        PGPU_RETURN_IF(s < 0, PGPU_ERROR_UNSUPPORTED,
                       "distributed FFT: no axis to transpose the data to (each needs at least %d nodes, one per "
                       "rank); use PGPU_FMG or PGPU_VCYCLE", R);
        std::vector<int64_t> lo(R), n(R);
        for (int r = 0; r < R; ++r) {
            lo[r] = r * N[s] / R;
            n[r] = (r + 1) * N[s] / R - lo[r];
        }
        Step st;
        st.what = FftDist<T>::STEP_MOVE;
        st.lay = cur;
        st.to = cur = add_layout(s, lo, n);
        D.steps.push_back(st);
        return PGPU_SUCCESS;
    };
    size_t work = 0;
    int64_t s_elems = 1, c_elems = 1;
    double scale = 1;
    bool done[3] = {false, false, false};
    for (;;) {
        for (int a = 0; a < dims; ++a) {
            if (kind[a] < 0 || done[a] || a == D.lay[cur].s) continue;
            Step st;
            st.what = FftDist<T>::STEP_AXIS;
            st.lay = cur;
            const Layout &l = D.lay[cur];
            PGPU_FORWARD(fft_axis_plan<T>(*env, plans, st.ax, a, kind[a], l.d, l.d[0] * l.d[1], work, s_elems, c_elems,
                                          scale));
            D.steps.push_back(st);
            done[a] = true;
        }
        int left = -1;
        for (int a = 0; a < dims; ++a)
            if (kind[a] >= 0 && !done[a]) left = a;
        if (left < 0) break;
        PGPU_FORWARD(move_to(split_for(left)));
    }
    if (tri_ax >= 0 && D.lay[cur].s == tri_ax) PGPU_FORWARD(move_to(split_for(tri_ax)));
    {
        Step st;
        st.what = FftDist<T>::STEP_SOLVE;
        st.lay = cur;
        D.steps.push_back(st);
    }
    // The eigenvalues (this rank's part of the split axis), the line solves' coefficients.
    const Layout &F = D.lay[cur];
    std::vector<T> ev;
    size_t eoff[3] = {0, 0, 0};
    for (int a = 0; a < dims; ++a) {
        eoff[a] = ev.size();
        if (a == tri_ax) continue;
        for (int64_t k = 0; k < N[a]; ++k) ev.push_back((T)fft_eigen(kind[a], N[a], hh[a], k));
    }
    T *d_ev = nullptr;
    PGPU_FORWARD(env->upload(ev, &d_ev, "FFT eigenvalues"));
    const T *evp[3];
    for (int a = 0; a < 3; ++a)
        evp[a] = a >= dims || a == tri_ax ? nullptr : d_ev + eoff[a] + (a == F.s ? F.lo[me] : 0);
    D.spec.e0 = F.d[0];
    D.spec.e1 = F.d[1];
    D.spec.e2 = F.d[2];
    D.spec.ev0 = evp[0];
    D.spec.ev1 = evp[1];
    D.spec.ev2 = evp[2];
    D.spec.scale = (T)scale;
    if (tri_ax >= 0) {
        const AxisCoef ac = axis_coef(fine_axis(N[tri_ax], hh[tri_ax], gc.bc[2 * tri_ax], gc.bc[2 * tri_ax + 1], true));
        const std::vector<T> lo(ac.c_lo.begin(), ac.c_lo.end()), hi(ac.c_hi.begin(), ac.c_hi.end());
        T *p = nullptr;
        PGPU_FORWARD(env->upload(lo, &p, "FFT line coefficients"));
        D.cl = p;
        PGPU_FORWARD(env->upload(hi, &p, "FFT line coefficients"));
        D.ch = p;
        PGPU_FORWARD(env->mem.alloc(err, (void **)&D.piv, (size_t)F.vol * sizeof(double), "FFT line pivots"));
    }
    // W: the data in any layout; S: the transforms' scratch and the moves'
    // send buffer; C: the complex scratch and the receive buffer.
    int64_t vmax = R;
    for (const Layout &l : D.lay) vmax = std::max(vmax, l.vol);
    D.wp = D.lay[0].d[0] * D.lay[0].d[1];
    PGPU_FORWARD(env->mem.alloc(err, (void **)&D.W, (size_t)vmax * sizeof(T), "FFT data"));
    PGPU_FORWARD(env->mem.alloc(err, (void **)&D.S, (size_t)std::max(s_elems, vmax) * sizeof(T), "FFT scratch"));
    PGPU_FORWARD(env->mem.alloc(err, (void **)&D.C, (size_t)std::max(c_elems, vmax / 2 + 1) * sizeof(C2),
                                "FFT spectrum"));
    void *wa = nullptr;
    if (work) {
        PGPU_FORWARD(env->mem.alloc(err, &wa, work, "cuFFT work area"));
        for (cufftHandle p : plans) PGPU_CUFFT(cufftSetWorkArea(p, wa));
    }
    if (env->mem.counting) return PGPU_SUCCESS;
    return nccl_connect<T>(*env, D.S, D.C);
}

// The data from layout `from` to layout `to`: each rank packs, per peer,
// the box of its part that the peer holds in `to` into S, the boxes travel
// (grouped send / receive), and each unpacks what it received into W.
template <class T> pgpu_status FftSolver<T>::dist_move(int from, int to)
{
    char *err = env->err;
    const Dist &d = *env->dist;
    FftDist<T> &D = *dist;
    const typename FftDist<T>::Layout &A = D.lay[from], &B = D.lay[to];
    const int R = d.ranks, me = d.rank, sa = A.s, sb = B.s;
    const cudaStream_t st = env->st;
    // Extents of the box rank `src` sends rank `dst`.
    auto extent = [&](int src, int dst, int64_t e[3]) {
        for (int a = 0; a < 3; ++a) e[a] = A.d[a]; // (the axes split in neither layout are whole)
        e[sa] = A.n[src];
        e[sb] = B.n[dst];
    };
    T *recv = (T *)D.C;
    int64_t soff = 0, roff = 0;
    std::vector<int64_t> so(R), ro(R), sn(R), rn(R);
    for (int q = 0; q < R; ++q) {
        int64_t e[3];
        extent(me, q, e);
        sn[q] = e[0] * e[1] * e[2];
        so[q] = soff;
        soff += sn[q];
        extent(q, me, e);
        rn[q] = e[0] * e[1] * e[2];
        ro[q] = roff;
        roff += rn[q];
    }
    for (int q = 0; q < R; ++q) { // pack
        if (!sn[q]) continue;
        int64_t e[3], o[3] = {0, 0, 0};
        extent(me, q, e);
        o[sb] = B.lo[q];
        box_copy_kernel<T><<<box_grid(e), 256, 0, st>>>(D.W, BoxAt{A.d[0], A.d[1], o[0], o[1], o[2]},
                                                                    D.S + so[q], BoxAt{e[0], e[1], 0, 0, 0}, e[0],
                                                                    e[1], e[2]);
        PGPU_LAUNCHED();
    }
    const ncclDataType_t ty = sizeof(T) == 8 ? ncclDouble : ncclFloat;
    ncclResult_t r = ncclGroupStart();
    for (int q = 0; q < R && r == ncclSuccess; ++q) {
        if (q == me) continue;
        if (sn[q]) r = ncclSend(D.S + so[q], (size_t)sn[q], ty, q, d.comm, st);
        if (r == ncclSuccess && rn[q]) r = ncclRecv(recv + ro[q], (size_t)rn[q], ty, q, d.comm, st);
    }
    const ncclResult_t r_end = ncclGroupEnd();
    PGPU_NCCL(r);
    PGPU_NCCL(r_end);
    for (int q = 0; q < R; ++q) { // unpack (this rank's own box straight from S)
        if (!rn[q]) continue;
        int64_t e[3], o[3] = {0, 0, 0};
        extent(q, me, e);
        o[sa] = A.lo[q];
        const T *src = q == me ? D.S + so[q] : recv + ro[q];
        box_copy_kernel<T><<<box_grid(e), 256, 0, st>>>(src, BoxAt{e[0], e[1], 0, 0, 0}, D.W,
                                                                    BoxAt{B.d[0], B.d[1], o[0], o[1], o[2]}, e[0],
                                                                    e[1], e[2]);
        PGPU_LAUNCHED();
    }
    return PGPU_SUCCESS;
}

template <class T> pgpu_status FftSolver<T>::run_dist(T *u, const T *f, const T *d_shift)
{
    char *err = env->err;
    FftDist<T> &D = *dist;
    if (D.rows) return run_dist_rows(u, f, d_shift);
    const cudaStream_t st = env->st;
    const Level<T> &L0 = *lv0;
    const ColLaunch &c = L0.col;
    const UserIO<T> none{L0.g, nullptr, nullptr, nullptr, nullptr, 0, 0};
    fft_load_kernel<T><<<c.grid, c.block, 0, st>>>(rhs_grid(*env, L0.g), u, f, d_shift, D.W, D.wp, c.kchunk, c.nyb,
                                                   c.nchunks);
    PGPU_LAUNCHED();
    typedef FftDist<T> FD;
    for (const typename FD::Step &s : D.steps) {
        if (s.what == FD::STEP_AXIS) {
            PGPU_FORWARD(fft_axis_run<T>(*env, s.ax, false, none, D.W, D.S, D.C));
        } else if (s.what == FD::STEP_MOVE) {
            PGPU_FORWARD(dist_move(s.lay, s.to));
        } else if (D.tri >= 0) {
            const int64_t e[3] = {D.spec.e0, D.spec.e1, D.spec.e2};
            const int64_t lines = e[0] * e[1] * e[2] / e[D.tri];
            tri_kernel<T, T><<<grid_for(lines, env->sms), 256, 0, st>>>(D.spec, D.tri, D.cl, D.ch, 0, D.W, D.piv, 0,
                                                                         lines);
            PGPU_LAUNCHED();
        } else {
            spectral_divide_kernel<T, T><<<grid_for(D.spec.e0 * D.spec.e1 * D.spec.e2, env->sms), 256, 0, st>>>(
                D.spec, D.W);
            PGPU_LAUNCHED();
        }
    }
    for (size_t k = D.steps.size(); k-- > 0;) {
        const typename FD::Step &s = D.steps[k];
        if (s.what == FD::STEP_AXIS) PGPU_FORWARD(fft_axis_run<T>(*env, s.ax, true, none, D.W, D.S, D.C));
        else if (s.what == FD::STEP_MOVE) PGPU_FORWARD(dist_move(s.to, s.lay));
    }
    fft_store_kernel<T><<<c.grid, c.block, 0, st>>>(L0.g, D.W, D.wp, u, c.kchunk, c.nyb, c.nchunks);
    PGPU_LAUNCHED();
    return PGPU_SUCCESS;
}
#else
template <class T> pgpu_status FftSolver<T>::init_dist()
{
    return record(env->err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
}
template <class T> pgpu_status FftSolver<T>::run_dist(T *, const T *, const T *)
{
    return record(env->err, PGPU_ERROR_UNSUPPORTED, "the distributed mode needs a build with NCCL");
}
// (dist_move, init_dist_rows, run_dist_rows and dist_swap are called from
// these two alone: never instantiated without NCCL.)
#endif

} // namespace pgpu
#ifdef PGPU_SRC_LINES
#line 40 "src/poisson_gpu.cu"
#endif
// handle.h -- the solver behind a handle: create, workspace, one solve
#ifdef PGPU_SRC_LINES
#line 2 "src/handle.h"
#endif




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
#ifdef PGPU_SRC_LINES
#line 41 "src/poisson_gpu.cu"
#endif
// validate.h -- the config: validation and defaults, in one place
#ifdef PGPU_SRC_LINES
#line 2 "src/validate.h"
#endif


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
#ifdef PGPU_SRC_LINES
#line 42 "src/poisson_gpu.cu"
#endif
// api.h -- the C API
#ifdef PGPU_SRC_LINES
#line 2 "src/api.h"
#endif



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
#ifdef PGPU_SRC_LINES
#line 43 "src/poisson_gpu.cu"
#endif
