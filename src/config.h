// config.h -- every tunable of the library, with what it trades
#pragma once

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
