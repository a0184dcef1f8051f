// src/poisson_gpu.cu -- the whole implementation of poisson_gpu.h, one
// translation unit made of the files of src/, one file a mechanism, each with
// its kernels together with their host-side planning, eligibility checks and
// launch code.  Each file includes the files it uses; this list gives the
// order in which src/amalgamate.py writes them into the shipped file.
// Precision is a template parameter everywhere; the C API dispatches once.
// doc/internals.md says how the pieces fit and why each kernel variant exists.
#include "config.h"         // every tunable, with what it trades
#include "errors.h"         // status and message; DeviceMem, Dist, Env
#include "launch.h"         // column and walk launches
#include "operator.h"       // the discrete operator at a point; the residual
#include "reduce.h"         // reductions, vector operations, Convergence
#include "smooth_kernels.h" // Jacobi's walk, red-black on any level
#include "smooth_tile.h"    // red-black tiled on uniform 3D levels
#include "smooth_beta.h"    // red-black of beta alone
#include "smooth.h"         // SmoothPlan and the smoothing passes
#include "transfer.h"       // coarsening an axis; the transfer tables
#include "restrict.h"       // restriction
#include "odi.h"            // operator-dependent transfers where beta jumps
#include "interpolate.h"    // interpolation; Transfer<T>
#include "general.h"        // masks and beta: tables, check, face fractions
#include "general_coarse.h" // masks and beta: the coarse levels' data
#include "regions.h"        // fluid regions, singular projection; General<T>
#include "level.h"          // Level<T>: its route (the kernels that serve it), its verbs
#include "hierarchy.h"      // the ghost frame, Hierarchy<T>
#include "general_levels.h" // the general form on every level
#include "coarse_solve.h"   // schedule, dense inverse, single-block executor
#include "multigrid.h"      // Multigrid<T>: cycles, FMG, stop rules
#include "stationary.h"     // Jacobi and red-black methods
#include "fft_rows.h"       // row-FFT core, all-periodic rows
#include "fft_dirichlet.h"  // all-Dirichlet rows (DST-I)
#include "fft_fdm.h"        // small 2D grids: dense transforms
#include "fft_cufft.h"      // the cuFFT route's pre- and post-processing
#include "fft_lines.h"      // line solves along the last axis
#include "fft.h"            // FftSolver<T>
#include "graph.h"          // CUDA-graph replay
#include "krylov.h"         // CG (classic, pipelined), BiCGStab
#include "dist.h"           // several GPUs: halos, all-reductions, bands
#include "dist_plan.h"      // several GPUs: the slab split, local configs
#include "dist_fft.h"       // several GPUs: the FFT over slabs
#include "handle.h"         // Solver<T>: create, workspace, one solve
#include "validate.h"       // config validation and defaults
#include "api.h"            // the C API
