/* poisson_gpu.h -- a GPU solver for the Poisson equation -Laplace(u) = f, and
 * -div(beta grad u) = f on masked domains, on structured 2D and 3D grids.
 * The whole public API, plain C99 (also C++).
 *
 * ============================================================================
 * QUICK START
 * ============================================================================
 *
 *     #include "poisson_gpu.h"
 *     #include <cuda_runtime.h>
 *     #include <stdio.h>
 *
 *     int64_t nx = 128, ny = 128, nz = 128;
 *     size_t n = (size_t)(nx + 2) * (ny + 2) * (nz + 2);  // one ghost layer per side
 *     double *d_u, *d_f;             // h_u, h_f: your host arrays of n values (THE PROBLEM)
 *     cudaMalloc((void **)&d_u, n * sizeof(double));
 *     cudaMalloc((void **)&d_f, n * sizeof(double));
 *     cudaMemcpy(d_u, h_u, n * sizeof(double), cudaMemcpyHostToDevice); // ghosts: boundary data
 *     cudaMemcpy(d_f, h_f, n * sizeof(double), cudaMemcpyHostToDevice); // right-hand side
 *
 *     // The box [0,1]^3, every face Dirichlet (bc NULL; else an array of six
 *     // pgpu_bc: x-, x+, y-, y+, z-, z+); h per axis from the length and the
 *     // faces (GEOMETRY); FMG, double.
 *     pgpu_config cfg = pgpu_config_domain(nx, ny, nz, 1.0, 1.0, 1.0, NULL);
 *     pgpu_solver *s = NULL;
 *     if (pgpu_create(&cfg, &s) != PGPU_SUCCESS) {         // allocates the solver's memory
 *         fprintf(stderr, "%s\n", pgpu_last_error(NULL));
 *         return 1;
 *     }
 *     pgpu_report rep;
 *     pgpu_status st = pgpu_solve(s, d_u, d_f, &rep);     // u's interior := the solution
 *     if (st != PGPU_SUCCESS)
 *         fprintf(stderr, "%s: %s\n", pgpu_status_string(st), pgpu_last_error(s));
 *     cudaMemcpy(h_u, d_u, n * sizeof(double), cudaMemcpyDeviceToHost);
 *     pgpu_destroy(s);                                     // solve many times before this
 *     cudaFree(d_u);
 *     cudaFree(d_f);
 *
 * (pgpu_solve_host(s, h_u, h_f, &rep) does the copies itself, for host
 * arrays.)  README.md's Quick start has a complete program.
 *
 * Build: compile poisson_gpu.cu with nvcc into your project and link cuFFT,
 * the CUDA runtime and, from a C linker, the C++ runtime (the implementation
 * is C++ inside) and libm.  /usr/local/cuda is the toolkit's usual place:
 * put yours; sm_90 is an H100's or H200's architecture: put your GPU's.
 *     nvcc -O3 -arch=sm_90 -c poisson_gpu.cu -o poisson_gpu.o
 *     gcc app.c poisson_gpu.o -o app -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcufft -lcudart -lstdc++ -lm
 * (nvcc or g++ as the linker add -lstdc++ -lm themselves.)  Or the
 * project's Meson build (also as a subproject: dependency('poisson_gpu')),
 * CMake (add_subdirectory or FetchContent, poisson_gpu::poisson_gpu), the
 * installed library (pkg-config poisson_gpu) or Python (pip install .):
 * README.md has every way in.
 *
 * ============================================================================
 * WHICH METHOD
 * ============================================================================
 *
 *  method (flags)         when to take it, and what it gives
 *  PGPU_FMG (the default) one accurate solve, any faces, masks: one pass
 *                         from no guess, below the discretisation error
 *                         (with a mask: the pass and two V-cycles, more
 *                         where those leave a relative residual above
 *                         1e-6 (METHODS AND DEFAULTS: tolerance), in
 *                         float V-cycles to float's own stop; with a
 *                         tolerance: V-cycles after it; where beta jumps
 *                         (its largest value over 10 times its smallest)
 *                         the pass is no accurate solve: V-cycles follow
 *                         it to a relative residual of 1e-8, in float to
 *                         float's own stop, and may stall short of it,
 *                         PGPU_ERROR_NOT_CONVERGED: take PGPU_CG there)
 *  PGPU_VCYCLE            a good initial guess (time stepping), or a
 *  (W: | PGPU_WCYCLE)     residual tolerance to meet: from your guess, a
 *                         steady reduction per cycle (about 0.05 or better
 *                         on most boxes; slower where odd periodic axes
 *                         cross)
 *  PGPU_FFT (direct)      many solves of a box (any faces), no mask, no
 *                         beta: exact up to rounding,
 *                         no iterations; the cheapest on periodic boxes
 *  PGPU_CG, PGPU_BICGSTAB beta jumps beside Neumann faces or across
 *  with the multigrid     periodic axes, masks where V-cycles are slow or
 *  preconditioner (the    diverge (inclusions, with or without a mask:
 *  default)               V-cycles converge too, MASKS AND VARIABLE
 *                         COEFFICIENTS):
 *                         the robust choice, which converges where V-cycles
 *                         alone stall or diverge; an iteration costs more
 *                         than a V-cycle.  With the
 *                         FFT preconditioner: a checked tolerance on a box
 *                         (KRYLOV METHODS)
 *  PGPU_JACOBI,           smoothing, teaching, comparison: a sweep runs
 *  PGPU_RBGS (SOR:        near the copy bandwidth, but the count grows with
 *  omega > 1)             n^2: small grids only
 *  Timings of each (per cycle, per solve, to a tolerance; float and double):
 *  README.md, Performance, and the bench's rows (bench/results/).  Masks
 *  and beta: every method but FFT takes them (one GPU, not with
 *  PGPU_MIXED); a solve on a mask or with a beta costs about 1.5 to 2 times
 *  the box's (MASKS below).
 *
 * What each method accepts (anything else: PGPU_ERROR_UNSUPPORTED, with the
 * reason in pgpu_last_error):
 *
 *  method            faces (THE PROBLEM, GEOMETRY)        mask, beta  precision             GPUs
 *  JACOBI, RBGS      every combination                    yes         float, double         1 or more (**)
 *  VCYCLE (W)        every combination                    yes (*)     float, double, mixed  1 or more (**)
 *  FMG               every combination                    yes (*)     float, double, mixed  1 or more (**)
 *  FFT               every combination                    no          float, double, mixed  1 or more (**)
 *  CG, BICGSTAB      every combination                    yes (*)     float, double, mixed  1 or more (**)
 *  (*) not with PGPU_MIXED.  (**) several GPUs: float and double, no mask
 *  or beta; V-cycles and FMG not across an odd periodic split axis
 *  (SEVERAL GPUS below).  PGPU_MIXED takes only the VCYCLE and FFT
 *  preconditioners.
 *  Every method: any size >= 1 per axis, 2D and 3D, anisotropic spacing
 *  (multigrid by semicoarsening), padded strides.
 *
 * Float, double or mixed (details under METHODS AND DEFAULTS):
 *  - PGPU_DOUBLE, the default: u and f in double, solved to the tolerance
 *    (by default a relative residual of 1e-10; FMG: one pass).
 *  - PGPU_FLOAT: the fast choice (half the bytes) when an error of about
 *    1e-6 of max |u| against the exact discrete solution is acceptable
 *    (FMG, V-cycles, CG, FFT on cubic cells): below the discretisation
 *    error of most grids.  Residuals and the Krylov methods' operator take
 *    the diagonal as the sum of the couplings in double.  Float Jacobi and
 *    RBGS relax with it rounded to float (2/hx^2 + 2/hy^2 + 2/hz^2):
 *    where the cells are not cubic that shifts their fixed point by up to
 *    about 3e-8 lambda_max / lambda_min of max |u|.
 *  - PGPU_MIXED: double arrays and double's accuracy (a relative residual
 *    of 1e-10 by default) at near float's speed, when the residual must go
 *    below ~1e-6.
 *  "Exact" for the FFT means exact up to the precision's rounding: in float
 *  the error above on cubic cells, more where the spacing is strongly
 *  anisotropic (up to about the (*) floor of METHODS AND DEFAULTS, a
 *  quarter of eps lambda_max / lambda_min), in double a relative residual
 *  below max(1e-12, 4 eps lambda_max / lambda_min) (the tests' bar).
 *
 * ============================================================================
 * THE PROBLEM
 * ============================================================================
 *
 * Second-order finite differences, 7-point stencil in 3D, 5-point when nz == 1:
 *     (2/hx^2 + 2/hy^2 + 2/hz^2) u(i,j,k) - sum of neighbours / h^2 = f(i,j,k)
 *
 * Layout.  u and f share one layout: nx*ny*nz interior points plus one ghost
 * layer on each side.  Element (i,j,k), 0 <= i <= nx+1, 0 <= j <= ny+1,
 * 0 <= k <= nz+1, lives at  i + j*stride_y + k*stride_z  (element strides;
 * stride 0 in the config means packed: stride_y = nx+2,
 * stride_z = (nx+2)*(ny+2)).  When nz == 1 the problem is 2D: the arrays hold
 * one plane of (nx+2) x (ny+2) elements, element (i,j) at i + j*stride_y, no z
 * ghosts, and stride_z is ignored.  Interior points are 1 <= i <= nx (likewise
 * j, k; k == 0 in 2D).  Padding between rows or planes is never read or
 * written.
 *
 * u's ghost layer holds the boundary data.  Its interior, on entry, is the
 * initial guess of the methods that iterate from one: JACOBI, RBGS, VCYCLE
 * (also with PGPU_MIXED), CG and BICGSTAB.  FMG (with or without a
 * tolerance, in every precision) and FFT ignore it: FMG builds its solution
 * from the coarsest level up, the FFT is direct.  (A mask's Dirichlet
 * points are data for every method: MASKS AND VARIABLE COEFFICIENTS.)  A
 * right-hand side that is zero gives u = 0 without an iteration (not with
 * PGPU_FIXED, which does not look).  On return the interior holds the
 * solution; the ghost layer is left as it was.
 * f is read only; its ghost layer is never read, nor are the edge and corner
 * ghosts of u (the stencil has no diagonal neighbours).  Axes hold at most
 * 2^31 - 256 points each.
 *
 * Boundaries, one type per face (bc[0..5] = x-, x+, y-, y+, z-, z+):
 *  - PGPU_BC_DIRICHLET: the ghost node is a boundary node at distance h whose
 *    value is read from u's ghost layer (any value).  With both faces
 *    Dirichlet the nodes sit at x = i*h, h = L/(n+1).
 *  - PGPU_BC_NEUMANN: the face lies half-way between the ghost and the first
 *    interior node; u's ghost holds the outward normal derivative du/dn at
 *    the face (0 for a wall), which moves to the right-hand side.  With both
 *    faces Neumann, h = L/n (cell-centred).
 *  - PGPU_BC_PERIODIC: the neighbour across the face is the opposite interior
 *    plane; both faces of the axis must say so; the ghost is not read.
 * A problem without any Dirichlet face is singular: the solver removes the
 * mean of the right-hand side (f plus the boundary terms), returns the
 * solution of mean zero and says so in the report (singular, rhs_mean).
 * The mean is taken out in two parts of u's precision, so that a mean
 * large against the rest of b (f = 1000 + a few units, in float) leaves
 * the FFT, Jacobi, the Krylov methods and the reported residuals only f's
 * own rounding, not the mean's in every point.  The tiled red-black
 * smoother (RBGS and the V-cycles on the fine level of uniform 3D grids
 * without a periodic axis) takes the first part only: there the residual
 * stays near half an ulp of the mean per point over rms(b) (about 3e-5
 * for f = 1540 + a few units in float).
 *
 * ============================================================================
 * GEOMETRY: WHERE THE NODES AND THE WALLS ARE
 * ============================================================================
 *
 * The unknowns of an axis are its nodes i = 1..n, h apart; the ghosts i = 0
 * and i = n+1 are one h further out.  Where a face's wall lies depends on
 * its type (L: the length between the axis' two walls, x- at 0):
 *
 *  face type   the wall lies                   the ghost holds      nodes when both faces have it
 *  DIRICHLET   on the ghost node, h from       u at the wall        x_i = i h, h = L/(n+1):
 *              node 1                                               vertex-centred
 *  NEUMANN     half-way between the ghost      du/dn at the wall,   x_i = (i - 1/2) h, h = L/n:
 *              and node 1, h/2 from node 1     outward (0: a wall)  cell-centred
 *  PERIODIC    nowhere: node n's neighbour     nothing (not read)   x_i = x_1 + (i - 1) h, h = L/n
 *              is node 1
 *  Dirichlet at x-, Neumann at x+: x_i = i h, h = L/(n + 1/2) (and mirrored).
 *
 * pgpu_config_domain(nx, ny, nz, lx, ly, lz, bc) and, for a config whose
 * faces you set, pgpu_config_set_domain(&cfg, lx, ly, lz) give each axis
 * the spacing of its faces in this table: L/(n+1), L/n or L/(n + 1/2).
 * pgpu_config_default sets h = 1/(n+1) whatever the faces (the unit box
 * between Dirichlet faces): after switching a face to Neumann or periodic
 * there, call pgpu_config_set_domain (or set h yourself), else that axis
 * is shorter than you meant (n/(n+1) long when periodic or Neumann at both
 * ends).
 *
 * So a vertex-centred code (unknowns on grid lines, boundary values on the
 * walls' nodes) sets Dirichlet faces exactly, and a cell-centred code
 * (unknowns at cell centres, walls on cell faces) sets Neumann faces
 * exactly: both second order.  The other two pairings put a wall h/2 from
 * where the code means it: a flux meant ON a node, and a value meant on a
 * cell face (the worked example next).
 *
 * Worked example: a cell-centred code with a wall VALUE.  n cells on
 * [0, L] along x, centres x_i = (i - 1/2) h, h = L/n; u = g at the wall
 * x = 0, half a cell from x_1.  The usual ghost-cell closure, ghost =
 * 2 g - u_1, depends on the unknown u_1: it is not boundary data, and no
 * face type takes it.  Three ways:
 *  (a) PGPU_BC_DIRICHLET with ghost = g.  The wall is then on the ghost
 *      node, at x = -h/2 instead of 0: an O(h) error (first order).  The
 *      same approximation as the p = 0 air cells of a graphics fluid's free
 *      surface; not for a second-order result.
 *  (b) Second order, on a vertex-centred grid: unknowns at x_i = i h, h = L/(n+1)
 *      (or L/(n + 1/2) with a Neumann face at x = L), ghost = g.  A
 *      different grid: cell data must be moved to it.
 *  (c) Second order on the cell-centred grid, with a mask and coefficients (MASKS
 *      AND VARIABLE COEFFICIENTS below): one more layer of cells beyond the
 *      wall (nx = n + 1: arrays of n + 3 along x; the code's cells 1..n are
 *      i = 2..n+1), the layer i = 1 PGPU_CELL_DIRICHLET with u = g there
 *      and beta = 1e6 there (beta = 1, or the code's beta, elsewhere).  The
 *      face between the layer and cell i = 2 then has the harmonic mean
 *      2 beta_w beta_f / (beta_w + beta_f) = 2 beta_f (to 1e-6): the flux
 *      beta_f (u - g) / (h/2) of a wall value half a cell away.  The x-
 *      face's type no longer matters (it borders only the layer).  Cost:
 *      the general form (dearer than the box's: WHICH METHOD; no FFT, no
 *      PGPU_MIXED).
 * test_geometry checks the observed orders: 0.8 to 1.3 for (a), 1.8 to 2.3
 * for (b) and (c).
 *
 * ============================================================================
 * METHODS AND DEFAULTS (0 in a config field means "the method's default")
 * ============================================================================
 *
 *  method         tolerance          max_iterations  omega       pre/post  check
 *  PGPU_JACOBI    1e-10 (float: *)   20000 sweeps    1.0         -         10
 *  PGPU_RBGS      1e-10 (float: *)   20000 iter.     1.0         -         10
 *  PGPU_VCYCLE    1e-10 (float: **)  100 cycles      1.3 (2D 1.2) 2 / 1    1
 *  PGPU_FMG       none: one pass     50 cycles       1.3 (2D 1.2) 2 / 1    1
 *  (multigrid omega: 1.2 in 3D and 1.15 in 2D when two or three periodic axes
 *  have an odd number of points, 3 or more)
 *  PGPU_FFT       (direct; exact to rounding: no tolerance, no iterations)
 *  PGPU_CG        1e-10 (float: ***) 200 iterations  as VCYCLE   2 / 2     1
 *  PGPU_BICGSTAB    (preconditioner PGPU_PRECOND_VCYCLE; with NONE or JACOBI:
 *                  20000 iterations, check every 10)
 *  PGPU_MIXED     1e-10              30 refinements  (as the method)
 *                 (CG and BICGSTAB: their iteration counts above)
 *  With PGPU_FIXED, max_iterations defaults to 1.
 *  (*) float: 1e-5, or what float rounding lets the residual reach on this
 *  grid if that is larger (a quarter of eps lambda_max / lambda_min; 2e-4 at
 *  128^3 Dirichlet).  pgpu_get_config shows the value in use.  That bound
 *  is an estimate: where JACOBI or RBGS with this tolerance stop making
 *  new lows of the residual for 16 checks within 16 times it (and within
 *  twice their low), that is float's limit there and the solve ends with
 *  PGPU_SUCCESS; a tolerance of your own that they do not reach (their
 *  updates can stop at several times the estimate) ends NOT_CONVERGED,
 *  even where it equals that value.
 *  On a singular problem in float the report is measured after the mean is
 *  taken out of u, which rounds u anew: it may lie above the tolerance by
 *  up to 16 times the (*) floor and the solve still PGPU_SUCCESS.
 *  (**) float V-cycles with tolerance 0 stop on the coarse-grid correction
 *  instead of the residual: when its RMS, times q / (1 - q) where it falls
 *  slowly by a factor q > 1/2 per check (what the cycles still have to
 *  add), falls to 2^-20 of u's, or stalls (falls by less than a fifth)
 *  below 8 times that (float's own rounding of u); on a singular problem
 *  the correction less its mean (a constant changes u only by a constant);
 *  a grid of one point stops after its one exact cycle; where the coarse
 *  levels carry no correction at all (a singular problem whose first coarse
 *  level is one node, a mask with no fluid coarse point) the residual
 *  decides, at the (*) tolerance, and the monitor sees residuals.  On the
 *  box the true residual confirms the stop on the correction: above 4
 *  times the (*) tolerance (the coarse levels see little of the error on
 *  some tiny grids) the cycles go on, checked on the residual, until it
 *  meets that tolerance or stops falling; stopped within those 4 times it
 *  is float's limit there (PGPU_SUCCESS; so too where the residual
 *  decides from the start), above them NOT_CONVERGED.
 *  With a mask or beta the true residual confirms either stop: above 16 times
 *  the (*) floor (at least 1.2e-4), or 16 times the floor of the u at hand
 *  where that is lower (a quarter of eps lambda_max ||u|| / ||b||,
 *  lambda_max = 4 / h^2 summed over the axes times beta's largest value,
 *  ||u|| measured where the stop is decided, its mean out first on a
 *  singular problem),
 *  the cycles go on, checked on the residual, until it meets the (*)
 *  tolerance (or that bound, where lower) or stops falling, and end
 *  PGPU_ERROR_NOT_CONVERGED where it stays above the bound (a mode the
 *  coarse levels barely correct, such as a pocket held by one Dirichlet
 *  cell, keeps the correction small while the error is not).  A mask with
 *  singular regions (each region's constant, which no cycle removes, stays
 *  in the correction) is checked on the residual from the start: the
 *  cycles go on while it falls and end where it falls by less than 5% per
 *  cycle within that bound, or less than twofold below 2^-20 at two checks
 *  in a row (at the first, u's rounding in the residual still hides an
 *  error the next cycle removes); above the bound at max_iterations,
 *  NOT_CONVERGED.  The residual of a float u cannot show the error left
 *  (its rounding alone gives a relative residual of ~eps lambda_max /
 *  lambda_min / 10); the correction can: the cycles stop, after a handful,
 *  at float's accuracy (WHICH METHOD).
 *  (***) float CG / BiCGStab with tolerance 0 stop when the recursive
 *  residual falls to 2^-20 of ||b|| and accept the true one down to float's
 *  floor (the (*) value); see KRYLOV METHODS.
 *
 *  - tolerance: stop when ||b - A u||_2 / ||b||_2 <= tolerance, where b is
 *    f plus the boundary terms (minus the mean for singular problems).  FMG
 *    with tolerance 0 returns after one FMG pass (discretisation accuracy;
 *    with a mask after the pass and two V-cycles, which report.iterations
 *    counts: the pass alone leaves an error of about 3e-3 of max |u| next
 *    to solid cells, which the two cycles take some three orders lower;
 *    where they leave more than a tenth of the pass's residual or a
 *    relative residual above 1e-6 -- the cycles converge slowly, stall or
 *    diverge on that mask, or it has modes of small eigenvalue (pockets
 *    joined by a narrow channel) whose error the residual hides --
 *    V-cycles go on to a relative residual of 1e-8, and a stall or
 *    divergence there ends in NOT_CONVERGED or BREAKDOWN; in float after the
 *    pass and the V-cycles of float's own stop, the (**) rule above,
 *    NOT_CONVERGED where they do not reach it);
 *    with a tolerance it goes on with V-cycles until it is met (at most
 *    max_iterations of them).  In double, V-cycles (FMG's too) whose
 *    residual takes less than a tenth off in 5 cycles within 4 times the
 *    floor of the u at hand (as in (**), with double's eps 2^-52) have met
 *    the rounding of u, where more cycles move neither the residual nor u:
 *    they end there in PGPU_ERROR_NOT_CONVERGED, not at max_iterations
 *    (strong beta jumps on fine grids; MASKS AND VARIABLE COEFFICIENTS).
 *  - check_interval: iterations between residual checks (each check costs
 *    about one sweep and one transfer of a few bytes to the host).
 *  - omega: Jacobi weight (0, 1] (below 1 damps the checkerboard mode, which
 *    float rounding excites); RBGS relaxation (0, 2), > 1 is SOR; multigrid
 *    smoother relaxation (0, 2).
 *  - RBGS colours: point (i,j,k) (1-based interior index, k = 1 in 2D) is red
 *    when i+j+k is even.  Red points are updated first, all at once from the
 *    old values, then black points from the new red values.
 *  - Precision.  PGPU_DOUBLE (default) or PGPU_FLOAT for u and f; residuals
 *    and norms are always formed in double, so float results are as
 *    accurate as float's rounding of u allows (WHICH METHOD gives the
 *    error against the exact discrete solution; the bench's 'precision'
 *    rows measure it).  PGPU_MIXED keeps u and f in double and solves with
 *    float cycles (or a float FFT) inside a refinement that forms the
 *    residual and corrects u in double: double's accuracy in less time
 *    than double (README.md, Performance); the report counts refinements
 *    and float cycles.  Jacobi and RBGS in float stop where every update is
 *    below half an ulp, about 0.07 eps lambda_max / lambda_min from the
 *    solution: small grids only (and no MIXED).  Which precision to take:
 *    WHICH METHOD.
 *
 * ============================================================================
 * ERRORS, STREAMS, THREADS, MEMORY
 * ============================================================================
 *
 *  - Every function returns a pgpu_status; nothing prints, exits or aborts.
 *    pgpu_last_error(s) says which argument or which CUDA call failed;
 *    pgpu_last_error(NULL) does so for the calls without a handle
 *    (pgpu_create, pgpu_create_distributed, pgpu_decompose,
 *    pgpu_workspace_size, pgpu_config_set_domain) on the calling thread.
 *    Each call clears the message it reports on entry, so read it right
 *    after the failure; a NULL handle, and a NULL output pointer of the
 *    pgpu_get_* calls, are refused without a message.  All arguments are
 *    checked before any device work.
 *  - PGPU_ERROR_NONFINITE_INPUT: f or the boundary data hold NaN/Inf; u is
 *    not touched.  (PGPU_FIXED skips that scan: NaN/Inf in the input then
 *    gives NaN/Inf in u, and the report cannot say.)  PGPU_ERROR_UNSUPPORTED
 *    when the right-hand side's largest magnitude (f and the boundary
 *    terms; before a mask's singular regions are projected) lies outside
 *    2^-400 .. 2^480 (about 3.9e-121 .. 3.1e144): its norm, and the
 *    residual norms a tolerance asks for, are sums of squares in double
 *    that would underflow or overflow; scale the data.  u is not touched
 *    (PGPU_FIXED skips this scan too).  PGPU_MIXED rounds residuals into
 *    float: its data should lie well inside float's range.
 *    PGPU_ERROR_NOT_CONVERGED: the tolerance not reached -- max_iterations
 *    ran out, or the method stopped where it no longer progresses (a stall
 *    the header names, double's rounding of u: pgpu_last_error says
 *    which); u and the report hold what was reached.  PGPU_ERROR_BREAKDOWN: NaN/Inf appeared in the
 *    residual, or it grew by 1e8 over its start.
 *  - All device memory is allocated in pgpu_create (pgpu_workspace_size
 *    says how much before, pgpu_workspace_bytes after; MEMORY below),
 *    except pgpu_solve_host's device copies of u and f, allocated on its
 *    first call, and the mask and coefficient data, allocated on the first
 *    pgpu_set_mask / pgpu_set_coefficients; all kept until pgpu_destroy.
 *    pgpu_solve allocates nothing.
 *  - All device work goes to cfg.stream (0: the legacy default stream), or
 *    to the stream given to pgpu_set_stream later (pgpu_set_mask also runs
 *    part of its build on a stream of its own, created on its first call,
 *    which waits for that stream and which that stream waits for before
 *    the call returns).  Handles may share a
 *    stream: their work is then ordered by it, as the calls were made (one
 *    handle's solve never overlaps the other's).  Handles on different
 *    streams may run at the same time.  The caller orders its own work
 *    with the solve's through the stream: its kernels that fill f before
 *    pgpu_solve, or read u after it, on the same stream need no other
 *    synchronisation.
 *    pgpu_solve waits for the stream only to read the residual norms the
 *    convergence checks and the report need.  With PGPU_FIXED it runs a fixed
 *    schedule with no host synchronisation at all, and can be captured into
 *    a CUDA graph.  A PGPU_FIXED multigrid solve (V/W-cycles, FMG) replays
 *    a CUDA graph of its own launches: the first solve with a given pair of
 *    u and f pointers captures it (on a stream of the handle's, in
 *    thread-local capture mode) and launches it on cfg.stream, later solves
 *    with that pair only launch it; the graphs of the last eight (pair,
 *    sequence) keys are kept until pgpu_destroy or the next
 *    pgpu_set_mask / pgpu_set_coefficients, which drop them (the next
 *    solve captures again; the default multigrid path replays its passes
 *    the same way).  The data is read when the graph runs, so new values
 *    in the same arrays are solved as usual.  While cfg.stream is
 *    being captured by the caller, the solve's launches go into the
 *    caller's graph instead.
 *  - One handle is used by one host thread at a time (a mutex around its
 *    calls is the caller's); different handles are independent, and any
 *    number of threads may each drive their own, on one stream or several.
 *    pgpu_last_error(NULL) is per thread.  The handle remembers the device
 *    current at pgpu_create and makes it current during each call
 *    (restoring the caller's afterwards): one handle per device for
 *    several GPUs.
 *  - Results on the same GPU, toolkit and stream are bit-identical from run
 *    to run (no floating-point atomics).
 *  - pgpu_set_monitor installs a callback called at each convergence check
 *    (iteration, residual norm, relative residual), on the calling thread.
 *  - Sizes up to what memory allows: all index arithmetic is 64-bit.
 *
 * ============================================================================
 * KRYLOV METHODS (PGPU_CG, PGPU_BICGSTAB)
 * ============================================================================
 *
 * Conjugate gradients and BiCGStab around a preconditioner
 * (cfg.preconditioner):
 *  - PGPU_PRECOND_VCYCLE (the default): one multigrid cycle from zero per
 *    application (2 pre- and 2 post-smoothing iterations by default; one of
 *    pre_smooth, post_smooth given, the other takes its value; PGPU_WCYCLE
 *    for W-cycles).  Unequal counts are taken as given; where the cycle
 *    must be symmetric (pipelined CG, classic CG on a mask or beta, below)
 *    keep them equal.  Otherwise the cycle is the standard one, not
 *    symmetric, and CG takes the flexible coefficients (beta = -z.Ap /
 *    p.Ap, alpha = p.r / p.Ap), which equal the classic ones for a
 *    symmetric preconditioner and do not need one: with red-black
 *    smoothing the symmetric cycle (post-smoothing in the reverse colour
 *    order) is a weaker preconditioner (more iterations to the same
 *    tolerance).  Pipelined CG, whose recurrences need a symmetric
 *    preconditioner, takes the symmetric cycle, and so does classic CG once
 *    pgpu_set_coefficients has set a beta or pgpu_set_mask a mask: around
 *    the standard cycle, which can diverge on 10^6 jumps and is far from
 *    symmetric on masks, it stalled (random solid cells with held ones on
 *    flat or anisotropic grids), around the symmetric one it converges (on
 *    such masks in tens to hundreds of iterations; on a smooth obstacle
 *    such as a solid sphere in about as many as around the standard
 *    cycle).  On a mask's singular regions the cycle's output then loses
 *    each region's mean, as the residual does.  Classic CG's first
 *    application (one GPU) is an FMG pass instead of a cycle: a little
 *    dearer than a cycle, and it saves iterations.
 *    On the box a few iterations reach 1e-10, about as many on every grid
 *    size (test_krylov bounds them at 12 on Dirichlet cubes from 64^3 to
 *    256^3).  The robust choice for beta jumps and masks: it converges where
 *    V-cycles alone diverge (1000:1 two-phase flow between Neumann faces,
 *    other jumps next to Neumann faces), though not on every grid: 10^6
 *    jumps beside a mask without a Dirichlet face can stall it, and
 *    BiCGStab around the cycle, too (PGPU_ERROR_NOT_CONVERGED, the
 *    report holding what was reached), an inclusion of 10^6 (a ball at
 *    256^3) stops short of a tight tolerance (1e-8: the rounding of the
 *    finest level's residual, MASKS AND VARIABLE COEFFICIENTS), masks of many
 *    small pockets or narrow channels need tens to hundreds of iterations,
 *    and solid cells drawn at random point by point, leaving several
 *    singular pockets (4 of 7 regions to 13 of 21), stalled it at 4e-3 to
 *    1e-2 where BiCGStab and V-cycles converged.
 *  - PGPU_PRECOND_FFT: the FFT solve of the box with the same faces,
 *    without mask or beta.  The exact inverse on the empty
 *    box: one iteration, one FFT solve (there faster to a tolerance than
 *    FMG then V-cycles); on masked domains it still helps where the mask
 *    is mostly fluid (a solid obstacle), not where Dirichlet cells or beta
 *    change the operator much.
 *  - PGPU_PRECOND_JACOBI (the diagonal), PGPU_PRECOND_NONE: iterations
 *    grow with the grid (n per axis); for small grids and comparison.  On
 *    beta jumps of 10^6 BiCGStab with them can diverge after thousands of
 *    iterations (its residual is not monotone; PGPU_ERROR_BREAKDOWN once it
 *    grows 1e8-fold, u holding that iterate).
 *  - PGPU_PIPELINED (CG only): the Ghysels-Vanroose form, one reduction per
 *    iteration computed in the same pass as all the vector updates and the
 *    operator (8 vectors instead of 4; 6 without a preconditioner); pays
 *    where latency dominates (small grids without a preconditioner), not
 *    where the preconditioner does (with the multigrid one an iteration
 *    costs about as much as classic CG's, and it needs the symmetric
 *    cycle, the weaker preconditioner: more iterations and more time than
 *    classic CG; README.md, Performance).  Its longer recurrences lose more
 *    to rounding: without the multigrid preconditioner (NONE or JACOBI) it
 *    may end in PGPU_ERROR_BREAKDOWN in float, and in double on beta jumps
 *    of 10^6 (after thousands of iterations); on masks with many singular
 *    pockets (in float one can suffice), on solid cells drawn at random
 *    point by point (in float breakdowns at relative residuals of 1e-2 to
 *    1e-1 on anisotropic grids; in double hundreds of iterations), or with
 *    beta jumps it can break down or stall with the multigrid one too (a
 *    10^6 ball: near 7e-7, where classic CG goes on).  Classic CG is the
 *    robust choice there.
 *  - The iterate is the caller's u (its interior is the initial guess); the
 *    other vectors are workspace (pgpu_workspace_bytes): CG 4 arrays of u's
 *    size (3 without a preconditioner), pipelined CG 8 (6), BiCGStab 7 (5).
 *  - Convergence is judged on the recursively updated residual (one number
 *    read by the host every check_interval iterations; nothing else waits
 *    for the device); when it meets the tolerance the true residual b - A u
 *    is formed, and where rounding made the two part the method restarts
 *    from the true residual (at most 3 times, while that halves it).  Float
 *    with tolerance 0 then accepts a true residual up to 16 times float's
 *    floor (the (*) value: the box's; rough solutions, masks and beta raise
 *    what float reaches); above that, and for an explicit tolerance above
 *    it, PGPU_ERROR_NOT_CONVERGED.  Where max_iterations ends the run
 *    while the true residual already meets that bound, the answer is
 *    PGPU_SUCCESS.  The report holds the true residual, `iterations`
 *    counts the Krylov iterations: classic CG applies its preconditioner
 *    once per iteration (the first before it, none after the one that
 *    converges), BiCGStab twice, pipelined CG once, a step ahead.
 *  - Singular problems (no Dirichlet face, sealed pockets of a mask): the
 *    residual's mean on each singular region, which rounding moves, is
 *    taken out as the iterations go (on a box with each update of r, no
 *    extra pass; on a mask's singular regions three passes per iteration,
 *    in preconditioned pipelined CG on the preconditioner's output instead),
 *    so the residual stays in the range of A; the result has mean zero on
 *    each singular region, as for every method.
 *  - PGPU_ERROR_BREAKDOWN: a denominator of the recurrences became zero,
 *    negative or not finite (an operator or preconditioner that is not
 *    positive definite, overflow, rounding); u keeps the last good iterate
 *    (the one before the breakdown, finite; where the recurrences drifted
 *    first -- float pipelined CG without a preconditioner -- its residual
 *    may exceed the initial guess's: the report gives it).
 *  - PGPU_FIXED: exactly max_iterations iterations, no host
 *    synchronisation, capturable.
 *  - PGPU_MIXED: double vectors (u, f and the Krylov vectors), a float
 *    preconditioner (the input rounded to float, one float cycle -- the
 *    first of classic CG an FMG pass -- or FFT, the result added back in
 *    double): double's accuracy in somewhat less time than double.  With
 *    PGPU_PRECOND_VCYCLE or PGPU_PRECOND_FFT (else UNSUPPORTED); no masks;
 *    not pipelined (UNSUPPORTED: a preconditioner that rounds is not the
 *    same symmetric operator every iteration; classic CG takes flexible
 *    coefficients for it).
 *  - When to take which: the box without mask or beta: PGPU_FFT itself
 *    (exact up to rounding) or, for a tolerance the solve checks, CG with
 *    the FFT preconditioner (FMG, with a tolerance FMG then V-cycles, is
 *    faster than MG-preconditioned CG there); beta jumps, masks where V-cycles are slow or
 *    diverge: CG (or BiCGStab) with the multigrid preconditioner.  The
 *    times of each: README.md, Performance (the bench's 'krylov' rows).
 *
 * ============================================================================
 * MEMORY
 * ============================================================================
 *
 * pgpu_workspace_size(&cfg, &bytes) says, before anything is allocated,
 * what pgpu_create(&cfg) will allocate on the current device: the same
 * build, counting instead of allocating, so the two agree to the byte.
 * In rough terms, with E = (nx+2)(ny+2)(nz+2) elements (2D: (nx+2)(ny+2)),
 * N = nx ny nz points and w = 4 (float) or 8 (double) bytes, beside u and
 * f, which are the caller's (Jacobi, RBGS and multigrid: the bounds
 * test_workspace_host checks, sizing for the SM counts and shared memory
 * of an H100, an A100 and an RTX 4090 with Dirichlet, Neumann, periodic
 * and mixed faces on cubes 63^3 to 255^3 and squares 511^2 and 1023^2;
 * the FFT's own buffers follow from its routes, cuFFT's work area from
 * cuFFT):
 *
 *  JACOBI, RBGS      E w (a second iterate), plus at most 4% (the reductions'
 *                    block partials, tables)
 *  VCYCLE, FMG       3D 1.4 to 1.65 E w, 2D 2.1 to 2.5 E w: level 0's second
 *                    iterate, three arrays per coarser level, the coarsest
 *                    level's dense inverse (at most N/4 words); more where
 *                    anisotropic spacing makes the levels shrink slower
 *  ... with MIXED    the float multigrid of the grid (half the double figure)
 *                    plus 2 E x 4 bytes (the correction's own u and f)
 *  FFT               our buffers: double N w (all periodic, nx a power of two
 *                    from 32 to 4096) to 3 N w, 5 N w with a transformed
 *                    Dirichlet-Neumann axis (where another axis mixes the
 *                    two as well: its sine transform doubles its length);
 *                    float N w to 7 N w (7: a Dirichlet-Dirichlet axis
 *                    through cuFFT, whose float sine transform doubles its
 *                    length, or a transformed Dirichlet-Neumann one); MIXED 2
 *                    to 5 N x 8 bytes;
 *                    all-Dirichlet 3D grids with each n+1 a product of primes
 *                    <= 19: 2 N w; all-Dirichlet 2D grids with each n+1 a
 *                    power of two from 16 to 4096 and a side past 64: N w;
 *                    other 2D grids of at most 128 a side, any faces: N w
 *                    plus (2 nx^2 + 2 ny^2 + nx + ny) w and 48 ny bytes
 *                    (dense transforms); at most 64 a side, (1032 nx +
 *                    8 ny) bytes and 80 KiB more (their tables for one
 *                    thread-block cluster).  Plus
 *                    cuFFT's work area wherever cuFFT is
 *                    used (sized by cuFFT; the query includes it).  Axes of
 *                    at most 384 nodes whose transform length has a prime
 *                    factor past 7 (n = 128, 256: n+1 = 129, 257) are dense
 *                    products instead on grids of at most 2^28 points: then
 *                    2 N w, the line solves' pivots (8 N bytes) and n^2 to
 *                    2 n^2 w a dense axis.  An axis
 *                    whose scratch would pass 2^26 elements takes its lines
 *                    in chunks: without a periodic axis a large grid then
 *                    needs N w (the packed grid) and a few arrays of 2^26
 *                    elements (float 1300^3: at most 1.3 N w, test_fft_big)
 *  CG, BICGSTAB      the preconditioner's (VCYCLE: as V-cycles, FFT: as FFT,
 *                    MIXED: the float ones) plus the Krylov vectors, k E w:
 *                    CG k = 4 (3 without a preconditioner), pipelined CG 8
 *                    (6), BiCGStab 7 (5)
 * Added later: pgpu_solve_host's copies of u and f (2 E w, on its first
 * call); the mask and coefficient data (MASKS AND VARIABLE COEFFICIENTS).
 * cuFFT, the CUDA runtime and the context take device memory of their own,
 * which no handle counts.
 *
 * ============================================================================
 * MASKS AND VARIABLE COEFFICIENTS
 * ============================================================================
 *
 * A handle solves -div(beta grad u) = f on a masked domain once
 * pgpu_set_mask and/or pgpu_set_coefficients gave it the data (both
 * optional; without them beta = 1 and every interior point is fluid).
 *
 *  - The mask: one byte per point, device memory, laid out as u (the same
 *    element strides and length; a mask byte at element index p belongs to
 *    u[p]); only interior entries are used.  PGPU_CELL_FLUID: an unknown.
 *    PGPU_CELL_DIRICHLET: the value in u there is held fixed and enters its
 *    fluid neighbours' equations (an air cell of a free surface).
 *    PGPU_CELL_SOLID: not part of the domain; the face between a fluid and a
 *    solid point is a zero-flux wall.  Solid and Dirichlet points of u
 *    keep their values, and the values at solid points of u and f never enter
 *    a result (they may hold anything, NaN included; some kernels load them
 *    with their neighbours and discard them, so they must be addressable).
 *  - beta: one value per interior point in the precision of u (ghosts not
 *    read), positive and finite at every interior point.  The coefficient
 *    of the face between two points is the harmonic mean
 *    2 beta_p beta_q / (beta_p + beta_q) (the choice for density jumps),
 *    formed without the product beta_p beta_q, to a few units in the last
 *    place wherever the couplings beta / h^2 are normal numbers; at a box
 *    face it is beta of the interior point.
 *  - The equation at a fluid point p, h per axis, over its six faces:
 *        sum over faces of  a_face (u_p - u_q) / h^2  = f_p
 *    where q is the neighbour across the face (the ghost on a Dirichlet box
 *    face, the wrapped point on a periodic axis) and a_face its coefficient;
 *    faces towards solid points are left out; a Neumann box face gives
 *    a_face g / h on the right (g: the ghost value, du/dn) instead.
 *  - Singular regions.  A connected fluid region (points joined through
 *    fluid-fluid faces, periodic wraps included) that touches no Dirichlet
 *    point and no Dirichlet box face determines u only up to a constant:
 *    the solver removes the mean of its right-hand side b (f plus the
 *    boundary terms) and returns the solution of mean zero on that region.
 *    The report counts such regions (projected); the regions are found on
 *    the GPU when the mask is set.  This holds for every method and also
 *    for PGPU_FIXED: even one Jacobi sweep removes each singular region's
 *    mean of b before it and the region's mean of u after it (the report
 *    then holds the residual of that u); float V-cycles and FMG also take
 *    the regions' means out of u at every check, so that u does not drift
 *    along the constants, which the cycles do not hold.  The means are
 *    summed in 128-bit fixed point scaled to the largest value (order-
 *    independent, so bit-identical from run to run): each value is
 *    quantised to 2^-62 of the largest (to 2^-1000 where the largest is
 *    below 2^-938).  Where b is constant on every singular region (one-
 *    point pockets, say) and zero elsewhere, what the projection leaves is
 *    its rounding: a b whose norm after it is at most 8 eps max|b|
 *    sqrt(npts) (eps of u's precision, max over the singular regions'
 *    points) is taken as zero, u = 0 on every fluid point and
 *    PGPU_SUCCESS after no iteration, the report holding the residual of
 *    that u (its relative residual about 1: rounding over rounding).
 *  - Methods: JACOBI, RBGS, VCYCLE (V and W), FMG, CG and BICGSTAB (every
 *    preconditioner; the FFT one ignores mask and beta) accept masks and
 *    coefficients, with or without PGPU_FIXED; FFT and PGPU_MIXED answer
 *    PGPU_ERROR_UNSUPPORTED.  Coarse levels take cell types after the
 *    seed's rule (a coarse point is Dirichlet where its central child is
 *    or where it is the heaviest parent of a Dirichlet point that no
 *    coarse Dirichlet point holds, else fluid where any child is; solid
 *    where its central child is and its fluid children fall apart) and
 *    face coefficients averaged over the coarse face; a face between a
 *    coarse fluid and a coarse Dirichlet point takes the distance from the
 *    fluid point to the fine Dirichlet points instead (lengths over face
 *    coefficients), so a free surface stays where it is on every level,
 *    and a face that a solid layer one cell thick closes across its whole
 *    width stays closed.  Where beta jumps (its largest value is more than
 *    10 times its smallest), with or without a mask, on a grid whose
 *    coarsened axes keep every other node (Dirichlet and Neumann faces;
 *    not a periodic axis; one GPU), the coarse levels follow the operator
 *    instead: each is the Galerkin product R A P of the level above (27
 *    coefficients a point, 9 in 2D; with a mask, of the operator on the
 *    fluid points: a face towards a Dirichlet point is a wall, and the
 *    prolongation is 0 where a point is not fluid), the prolongation
 *    weighs the coarse values by the fine level's couplings (BoxMG's rule)
 *    and the restriction is its adjoint, so that an inclusion's
 *    near-constant mode reaches the coarse levels and the cycles converge
 *    as fast on a jump of 1e6 as on 1e3 (the bench's 'ball' and
 *    'ball-mask' rows: a cycle there costs several geometric ones, and
 *    pgpu_set_coefficients, which builds the levels, about a quarter as much
 *    as the V-cycles to 1e-8).  The geometric coarse
 *    levels cannot follow a wall, so on a mask a cycle ends with two
 *    Gauss-Seidel iterations on the fluid points of the blocks (8^3
 *    points, 2D 16^2) that hold a fluid point next to a solid one, where
 *    the residual it leaves gathers (not in the symmetric cycle that CG
 *    takes, below).
 *  - How V-cycles fare (the rates per cycle measured on each kind of
 *    domain, and the method to take there: README.md's table under Masks
 *    and variable coefficients; the costs: the bench's 'masks' rows):
 *     + they converge at about the box's rate on most masks -- a solid
 *       obstacle, Dirichlet cells above a liquid (a free surface), fluid a
 *       solid layer seals from them -- and on a two-phase layer (1000:1)
 *       between Dirichlet faces;
 *     + more slowly between Neumann faces at even sizes, where solid cells
 *       cover a Dirichlet face, and where they stand in the fluid as walls
 *       one cell thick (in 3D the slower the larger the grid, slowest where
 *       such a wall meets an obstacle under a free surface);
 *     + very slowly, near 1 per cycle in 3D, where a single Dirichlet cell
 *       stands apart in the fluid (a reference cell in a closed tank or
 *       pocket, say: the coarse levels hold it on its heaviest parent
 *       alone); on a small pocket held by one Dirichlet cell (standing
 *       apart or beside the pocket's walls) V-cycles and FMG diverged, in
 *       double and float;
 *     + on an inclusion (a ball whose beta is 1e3 to 1e6 times its
 *       surroundings', with or without a mask beside it: the Galerkin
 *       levels above) they converge as fast on 1e6 as on 1e3 (the bench's
 *       'ball' and 'ball-mask' rows: 13 and 14 cycles to 1e-8 at 256^3,
 *       the mask a solid block and Dirichlet cells above a free surface)
 *       down to the residual that u's own
 *       rounding leaves, which grows with the jump and the grid (1e6 at
 *       256^3, in double: near 7e-7, a few times that of the exact discrete
 *       solution rounded to double), so a tighter tolerance ends in
 *       PGPU_ERROR_NOT_CONVERGED there, CG's too; u is then further from
 *       the exact discrete solution than double's rounding of it, by what
 *       that residual leaves in the inclusion's near-constant mode (the
 *       bench's 'ball' fmg rows: the distance from CG's u, relative to
 *       max |u|); in float that rounding is far
 *       larger (about 0.1 on a 1e3 ball): float ends NOT_CONVERGED though
 *       its u is good to float's rounding; take double.  Beside solid
 *       cells drawn at random point by point and a pocket held by one
 *       Dirichlet cell they diverged on 1e6 (PGPU_ERROR_BREAKDOWN; one 3D
 *       case in eight thousand random ones; CG around them converged);
 *     + they may stall (PGPU_ERROR_NOT_CONVERGED) on singular pockets with
 *       a varying beta, and stalled (near 1e-10 in double) or diverged
 *       where solid cells are drawn at random point by point (an eighth to
 *       nearly a third of the points; a few small 2D and thin 3D grids in
 *       ten thousand random cases);
 *     + they may diverge (PGPU_ERROR_BREAKDOWN) on strong jumps next to
 *       Neumann faces or across a periodic axis (two-phase beta of 1000:1 and
 *       10^6:1 on grids with a pair of periodic faces: the transfers that
 *       follow beta need coarse nodes on fine ones, which a periodic axis's
 *       coarse levels do not have); FMG with W-cycles diverged on a sealed
 *       2D pocket between Neumann faces, where V-cycles converge; V-cycles
 *       and FMG diverged, in double and float, on a 2D mask of blobs and
 *       walls one cell thick sealing two pockets, beside three Neumann
 *       faces (43 x 47; CG around the cycle converged there).  On a beta
 *       drawn at random from 0.1 to 10 point by point on strongly
 *       anisotropic grids (spacings 9:1 and 22:1) they converge where the
 *       coarse levels are Galerkin's (Dirichlet boxes: the bench's
 *       'beta-aniso' rows) and may diverge where they cannot be (a
 *       periodic axis, an even axis beside a Neumann face).
 *    CG with the multigrid preconditioner converged on each of these we
 *    replayed -- the inclusions, the lone Dirichlet cells and the pocket one
 *    of them holds, the random solid cells (BiCGStab too), the jumps next to
 *    Neumann faces and across periodic axes, two-phase flow, the random beta
 *    on the 9:1 grid -- but not on the random beta on the 22:1 grid; KRYLOV
 *    METHODS says where it stalls.  Float V-cycles' own stop (the (**) rule)
 *    needs coarse grids that carry the error: where a mask leaves no fluid
 *    coarse point it falls back to the residual, and Dirichlet cells scattered
 *    one by one inside the fluid keep the correction above float's rounding
 *    (PGPU_ERROR_NOT_CONVERGED; double converges there): set a tolerance.
 *    A cycle on a mask runs the box's kernels on the fine level, reading
 *    the mask byte, then the two Gauss-Seidel iterations beside the wall;
 *    with a beta the faces' coefficients: dearer than the box's cycle (the
 *    magnitude: WHICH METHOD).
 *  - Grids with a mask hold fewer than 2^31 - 1 interior points; a mask with
 *    more singular regions than an eighth of the points plus 64 is refused
 *    (PGPU_ERROR_UNSUPPORTED, the handle then has no mask).
 *  - Setting new data runs on the GPU in the handle's stream: the coarse
 *    levels' cell types and coefficients and the regions are rebuilt there.
 *    The first call allocates the workspace it needs (pgpu_workspace_bytes
 *    grows: two bytes (the mask and the next one, checked before it
 *    replaces the first), four bytes of labels, two bits, about 2.5 bytes
 *    of region sizes and sums (20 bytes for each of an eighth of the points
 *    plus 64 regions) and an array of u's precision per point for a mask;
 *    an array of u's precision per axis for beta (one more on 3D grids:
 *    beta's reciprocals, from which the smoother and the residual form the
 *    faces; in double, for a multigrid method on 3D grids of 2^22 points
 *    or more whose tiles suit it, one more: a third iterate for the finest
 *    level); two bytes and an array per axis per coarse point; where beta
 *    jumps, for a multigrid method or preconditioner, the Galerkin levels:
 *    27 values of u's precision per coarse point and about 3.4 more (the
 *    prolongation's weights) per point of a coarse level above a coarser
 *    one (9 and 2.25 in 2D; about 4.3 N w in 3D, 3.8 N w in 2D) and, for
 *    their build, the larger of two arrays of u's size and the
 *    prolongation weights from level 0 (3.4 N w, 2.25 N w in 2D));
 *    later calls allocate nothing.  The call
 *    waits for the stream to read whether the data are valid (and, for a
 *    mask, how many singular regions it has); on invalid
 *    data (a mask byte other than the three types, beta <= 0 or not
 *    finite, a mask without a fluid point) it returns
 *    PGPU_ERROR_INVALID_ARGUMENT and the handle keeps its previous data.
 *    The data are copied: the caller's arrays may be reused after the call.
 *
 * ============================================================================
 * SEVERAL GPUS (DISTRIBUTED MODE, NCCL)
 * ============================================================================
 *
 * One global grid split over several GPUs, built when the library is
 * compiled with PGPU_WITH_NCCL and linked with NCCL (Meson finds NCCL by
 * itself; README.md and doc/install.md say how).  pgpu_has_distributed()
 * says whether this build has it; without it pgpu_create_distributed
 * answers PGPU_ERROR_UNSUPPORTED and everything else is unchanged.
 *
 *  - Ranks.  The caller brings one NCCL communicator rank per GPU -- one
 *    process per GPU (ranks bootstrapped by MPI or anything else) or one
 *    process driving several GPUs from threads (ncclCommInitAll; what the
 *    tests run) -- and calls the library on each rank with that rank's
 *    device current (create checks it) and a stream of that device.  The
 *    communicator must outlive the handle, and nothing else may use it
 *    while a call of the handle runs.
 *  - The split.  Slabs of whole planes along the slowest axis (z in 3D, y
 *    in 2D), every rank at least two planes, each slab starting at an even
 *    plane; pgpu_decompose says which box a rank holds (no device needed)
 *    and pgpu_get_box asks a handle.  Each rank's u and f hold its box with
 *    one ghost layer, in the layout of THE PROBLEM for a grid of the box's
 *    size (the config's strides apply to the local arrays; 0 = packed).
 *    Ghosts on the global box's faces hold the boundary data as usual; the
 *    ghost planes towards another rank are the library's: a solve writes
 *    the neighbour's values there (f's are never read).
 *  - Calls.  pgpu_create_distributed(&global_cfg, comm, &s) on every rank
 *    with the same global config (sizes, spacing, faces, flags, tolerances;
 *    the stream and strides may differ).  Collective (every rank calls
 *    them together): pgpu_solve, pgpu_solve_host, pgpu_residual (which,
 *    like a solve, writes u's ghost planes between ranks).  Per rank:
 *    pgpu_set_stream, pgpu_set_monitor, pgpu_get_box, pgpu_get_config (the
 *    rank's local config: its box's sizes, Dirichlet faces towards the
 *    neighbours) and pgpu_destroy.  The report holds the global numbers,
 *    the same on every rank, except seconds (each rank's own events).
 *    pgpu_workspace_size does not size a rank (pgpu_workspace_bytes does,
 *    after create; beside the single-GPU figures a rank holds 4 halo
 *    planes and, where red-black smoothing has bands, 72 planes of its
 *    largest such level's storage: (nx+2)(ny+2) w bytes each, or stride_z
 *    w on level 0).  Arguments of a collective call are checked on each
 *    rank before it communicates: a rank whose call fails there (a NULL or
 *    wrong-device array) returns at once and the others wait for it --
 *    pass the same kind of arguments on every rank.
 *  - Agreement.  pgpu_create_distributed compares a fingerprint of the
 *    configs and every rank's verdict in one all-reduction before building,
 *    and the builds' outcome after: a config that differs between ranks,
 *    one refused anywhere, or a communicator with more ranks than the grid
 *    splits into fails on every rank (a rank that refused returns its own
 *    status and reason; the others the highest status among the ranks and
 *    "another rank's call failed").  What fails before that agreement
 *    returns on that rank alone while the others wait: NULL arguments, no
 *    CUDA device, a communicator NCCL cannot query.  cfg.stream must be a
 *    stream of the rank's device (the communicator's); that is not
 *    checked.  NCCL failures are PGPU_ERROR_CUDA.
 *  - Methods.  JACOBI, RBGS, VCYCLE (V and W), FMG (the default config's
 *    method), CG (classic and pipelined) and BICGSTAB with the NONE,
 *    JACOBI, VCYCLE and FFT preconditioners, FFT, float and double, every
 *    face combination the method takes on one GPU, PGPU_FIXED.  Not yet:
 *    PGPU_MIXED, masks and coefficients (PGPU_ERROR_UNSUPPORTED).
 *    Multigrid runs the single-GPU cycle of the global grid (fixed
 *    V-cycles give one GPU's result to rounding; test_dist compares
 *    them): the fine levels in slabs with halo exchanges, the coarse ones
 *    (below 2^17 points, or where the slabs would get thinner than two
 *    planes) on every rank.  FMG is one GPU's pass except that its cubic
 *    interpolation between two slab levels takes an off-centre window of
 *    four coarse nodes next to a face between ranks (still cubic): one
 *    pass's error against the exact discrete solution is one GPU's
 *    (test_dist allows 1.5 times it).  An odd periodic split axis (a
 *    coarse ring that is not nested) cannot be cut that way: VCYCLE and
 *    FMG answer PGPU_ERROR_UNSUPPORTED there, and a Krylov method's
 *    V-cycle preconditioner becomes each rank's own cycle on its slab
 *    (block Jacobi: several times the iterations).
 *  - FFT.  Every face set, as on one GPU.  All periodic in 3D with nx a
 *    power of two from 32 to 4096 and nz one from 16 to 2048: one GPU's
 *    kernels on each slab (x and y), the x modes split over the ranks by
 *    one all-to-all (grouped ncclSend / ncclRecv) each way, z and the
 *    solve where z is whole; the slab travels in chunks of planes on a
 *    stream of the handle's own, overlapped with the transforms of the
 *    next chunk, and the result equals one GPU's bit for bit.  Its buffers:
 *    about (2 - 1/ranks) n w per rank for a slab of n points.  Other face
 *    sets and sizes: real transforms along each axis (DST-I, DCT-II, the
 *    sine transform of a Dirichlet-Neumann axis, and the periodic DFT in
 *    halfcomplex order) and line solves along the last mixed axis: x and y
 *    on the slabs, one all-to-all of boxes to slabs of y (or x), z and
 *    the solve there, and back; 2D likewise (x, then y), four all-to-alls
 *    with a mixed x axis; results equal one GPU's FFT to rounding
 *    (test_dist compares them).  The axis split after a transpose needs
 *    at least one node per rank (else PGPU_ERROR_UNSUPPORTED).  One rank
 *    runs the single-GPU FFT.
 *  - Communication, on the handle's stream: each sweep or operator
 *    application exchanges the ghost planes with the neighbours (grouped
 *    ncclSend / ncclRecv).  Red-black smoothing (RBGS, and multigrid's on
 *    its slab levels) takes one exchange per two iterations (5 planes of u
 *    and 4 of f) or per single iteration (3 and 2), redoing the planes next
 *    to each face and the ghost planes (so the residual and the
 *    prolongation after it need no exchange), on the levels of a 3D grid
 *    where every slab has 7 planes or more (level 0: where every rank's
 *    strides are the same); a 2D grid or a thinner slab exchanges before
 *    each iteration and again before redoing the second colour at the
 *    faces.
 *    Each reduction (norms, the Krylov methods' dot products: one per
 *    iteration in the pipelined CG, beside the preconditioner) is one
 *    ncclAllReduce; the host reads a number only at the convergence
 *    checks.  Cycles and Krylov iterations are replayed as
 *    CUDA graphs with their NCCL calls (NCCL connects the peers at create,
 *    outside any capture); a PGPU_FIXED solve can be captured by the
 *    caller.  The all-periodic FFT's moves run on the handle's own stream,
 *    forked from and joined to the handle's by events: the solve still
 *    starts after and ends before the work around it on the handle's
 *    stream, and captures as one graph.  NVLink multicast is not needed.
 *  - Speed.  With the same grid per GPU (weak scaling) a solve takes a
 *    little more than one GPU's time for Jacobi, Krylov iterations and
 *    V-cycles, somewhat more for an FMG pass; one grid split over more
 *    GPUs (strong scaling) gains less than the GPUs' count.  The figures,
 *    and the largest grid solved, are the distributed bench's
 *    (bench/bench_dist --results, bench/results/<machine>-dist.md;
 *    README.md, Several GPUs and Performance).
 *
 * What it does not do: non-uniform spacing along an axis, higher-order
 * stencils.
 */
#ifndef POISSON_GPU_H
#define POISSON_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PGPU_VERSION_MAJOR 0
#define PGPU_VERSION_MINOR 7
#define PGPU_VERSION_PATCH 0
/* One integer: major * 10000 + minor * 100 + patch. */
#define PGPU_VERSION (PGPU_VERSION_MAJOR * 10000 + PGPU_VERSION_MINOR * 100 + PGPU_VERSION_PATCH)

/* The version of the compiled library (compare with PGPU_VERSION). */
int pgpu_version(void);

typedef struct pgpu_solver pgpu_solver; /* opaque handle */

/* Status codes.  The values are stable and never renumbered. */
typedef enum pgpu_status {
    PGPU_SUCCESS = 0,
    PGPU_ERROR_INVALID_ARGUMENT = 1, /* NULL, bad size, bad flag mix, stride too small, overflow */
    PGPU_ERROR_UNSUPPORTED = 2,      /* a valid request this method or build cannot serve */
    PGPU_ERROR_OUT_OF_MEMORY = 3,
    PGPU_ERROR_CUDA = 4,             /* a CUDA, cuFFT or NCCL call failed */
    PGPU_ERROR_NO_DEVICE = 5,
    PGPU_ERROR_NOT_CONVERGED = 6,    /* max_iterations reached; the report holds what was reached */
    PGPU_ERROR_BREAKDOWN = 7,        /* NaN/Inf appeared or the iteration diverged */
    PGPU_ERROR_NONFINITE_INPUT = 8   /* f or the boundary data hold NaN/Inf; u untouched */
} pgpu_status;

/* Flags: one method, one precision, options; OR them together.  Each method
 * and each precision is a bit of its own, so a config that names two of either
 * is answered with PGPU_ERROR_INVALID_ARGUMENT.  A method or precision field
 * of 0 means the default (FMG, double).
 * Changed in 0.4: the values (0.3 numbered the methods 1..5 and the
 * precisions 0x10 / 0x20, so JACOBI | RBGS read as VCYCLE); code that uses
 * the names needs only a rebuild.
 * PGPU_FIXED skips the input scan that needs a host synchronisation: NaN/Inf
 * in f then gives NaN/Inf in u instead of PGPU_ERROR_NONFINITE_INPUT. */
enum {
    PGPU_JACOBI = 0x01, /* weighted Jacobi */
    PGPU_RBGS = 0x02,   /* red-black Gauss-Seidel; omega > 1 gives SOR */
    PGPU_VCYCLE = 0x04, /* geometric multigrid cycles (V, or W with PGPU_WCYCLE) */
    PGPU_FMG = 0x08,    /* full multigrid */
    PGPU_FFT = 0x10,    /* direct solve by fast transforms (cuFFT and our own) */
    PGPU_CG = 0x20,     /* preconditioned conjugate gradients (cfg.preconditioner) */
    PGPU_BICGSTAB = 0x40, /* preconditioned BiCGStab (right preconditioning) */
    PGPU_METHOD_MASK = 0xff,

    PGPU_DOUBLE = 0x100, /* u and f in double */
    PGPU_FLOAT = 0x200,  /* u and f in float */
    PGPU_MIXED = 0x400,  /* u and f in double, solved by float cycles (or a float
                            FFT) inside a refinement that forms the residual and
                            corrects u in double: double's accuracy at near
                            float's speed.  VCYCLE, FMG and FFT; CG and BICGSTAB
                            with a float VCYCLE or FFT preconditioner; no mask
                            or beta, one GPU. */
    PGPU_PRECISION_MASK = 0xf00,

    PGPU_WCYCLE = 0x1000, /* multigrid: W-cycles instead of V-cycles
                             (VCYCLE, FMG, or a Krylov method's VCYCLE
                             preconditioner; else INVALID_ARGUMENT) */
    PGPU_FIXED = 0x2000,  /* fixed schedule: no convergence checks, no host
                             synchronisation, CUDA-graph capturable; iterative
                             methods run exactly max_iterations (default 1),
                             FMG one pass then max_iterations - 1 cycles,
                             MIXED max_iterations refinements; the report's
                             norms are NaN */
    PGPU_PIPELINED = 0x4000 /* PGPU_CG: the pipelined form (Ghysels-Vanroose):
                             one fused reduction per iteration, computed in
                             the same pass as the vector updates and finished
                             beside the preconditioner */
};

/* Preconditioners of PGPU_CG and PGPU_BICGSTAB (pgpu_config.preconditioner;
 * 0 = PGPU_PRECOND_VCYCLE). */
typedef enum pgpu_preconditioner {
    PGPU_PRECOND_DEFAULT = 0,
    PGPU_PRECOND_NONE = 1,
    PGPU_PRECOND_JACOBI = 2, /* the operator's diagonal */
    PGPU_PRECOND_VCYCLE = 3, /* one multigrid cycle from zero (V, or W with PGPU_WCYCLE);
                                classic CG's first application on one GPU
                                without mask or beta: one FMG pass */
    PGPU_PRECOND_FFT = 4     /* the FFT solve of the box without mask or beta */
} pgpu_preconditioner;

typedef enum pgpu_bc {
    PGPU_BC_DIRICHLET = 0,
    PGPU_BC_NEUMANN = 1,
    PGPU_BC_PERIODIC = 2
} pgpu_bc;

/* Faces, as indices into pgpu_config.bc. */
enum { PGPU_XMIN = 0, PGPU_XMAX = 1, PGPU_YMIN = 2, PGPU_YMAX = 3, PGPU_ZMIN = 4, PGPU_ZMAX = 5 };

/* cudaStream_t without including the CUDA headers (it is this pointer type). */
struct CUstream_st;

typedef struct pgpu_config {
    int64_t nx, ny, nz;         /* interior points per axis (>= 1); nz == 1 is 2D */
    double hx, hy, hz;          /* node spacing (> 0); hz unused in 2D */
    int64_t stride_y, stride_z; /* element strides, ghosts included; 0 = packed */
    unsigned flags;             /* method | precision | options */
    pgpu_bc bc[6];              /* x-, x+, y-, y+, z-, z+ (z faces ignored in 2D) */
    double tolerance;           /* relative residual; 0 = method default */
    int max_iterations;         /* 0 = method default */
    double omega;               /* Jacobi weight / SOR factor / smoother relaxation; 0 = default */
    int pre_smooth, post_smooth;/* multigrid smoothing iterations, 0 .. 64; 0 = default */
    int check_interval;         /* iterations between residual checks; 0 = default */
    struct CUstream_st *stream; /* a cudaStream_t; 0 = default stream */
    pgpu_preconditioner preconditioner; /* PGPU_CG, PGPU_BICGSTAB only
                                           (else INVALID_ARGUMENT); 0 = default */
} pgpu_config;

typedef struct pgpu_report {
    int iterations;           /* sweeps (JACOBI), iterations (RBGS, CG, BICGSTAB), cycles
                                 (VCYCLE; FMG: after its pass), 0 (FFT); VCYCLE and FMG
                                 with PGPU_MIXED: the float V-cycles inside the
                                 refinements (not the first refinement's float FMG
                                 pass); FFT with it: 0 (its solves are the
                                 refinements) */
    double residual_norm;     /* ||b - A u||_2 over interior points */
    double residual_max;      /* max |b - A u| */
    double relative_residual; /* residual_norm / rhs_norm (residual_norm when rhs_norm == 0) */
    double rhs_norm;          /* ||b||_2: f plus boundary terms, mean removed when singular */
    double seconds;           /* device time of the solve (CUDA events); NaN with PGPU_FIXED */
    pgpu_status status;       /* the value pgpu_solve returned */
    int singular;             /* 1: the problem, or with a mask one of its regions, is singular
                                 (no Dirichlet face or point reached); the mean of b was
                                 removed there and u has mean 0 there */
    double rhs_mean;          /* the mean removed from b (0 when not singular; with a mask
                                 and several singular regions, and with PGPU_FIXED where
                                 singular, NaN: not read back) */
    int refinements;          /* PGPU_MIXED with VCYCLE, FMG or FFT: refinement steps
                                 (residual and correction in double); `iterations` counts
                                 the float cycles inside them.  0 otherwise (CG and
                                 BICGSTAB under PGPU_MIXED count Krylov iterations) */
    int projected;            /* singular regions whose mean of b was removed (the box
                                 without a Dirichlet face: 1) */
} pgpu_report;

/* The unit cube (or square when nz == 1) with Dirichlet faces: h = 1/(n+1)
 * per axis, packed strides, PGPU_FMG | PGPU_DOUBLE, all else 0 (defaults).
 * Changing a face to Neumann or periodic does not change h: use
 * pgpu_config_domain, or pgpu_config_set_domain after setting the faces. */
pgpu_config pgpu_config_default(int64_t nx, int64_t ny, int64_t nz);

/* The box [0, lx] x [0, ly] x [0, lz] (lz unused when nz == 1) with the
 * faces bc (x-, x+, y-, y+, z-, z+; NULL: every face Dirichlet), the rest as
 * pgpu_config_default.  Each axis' h follows from its length and its two
 * faces (GEOMETRY): L/(n+1) between Dirichlet faces, L/n between Neumann
 * faces and for a periodic axis, L/(n+1/2) from a Dirichlet to a Neumann
 * face.  Lengths are not checked here: one that is not positive and finite
 * gives an h that pgpu_create refuses. */
pgpu_config pgpu_config_domain(int64_t nx, int64_t ny, int64_t nz, double lx, double ly, double lz,
                               const pgpu_bc bc[6]);

/* Sets cfg's hx, hy, hz (hz only when nz > 1) from the box's lengths and
 * cfg's sizes and faces, as pgpu_config_domain does: call it after changing
 * faces.  PGPU_ERROR_INVALID_ARGUMENT (cfg unchanged, the reason in
 * pgpu_last_error(NULL)) for a NULL cfg, a size below 1, a length that is
 * not positive and finite, a face that is not a pgpu_bc, or periodic on one
 * face of an axis only. */
pgpu_status pgpu_config_set_domain(pgpu_config *cfg, double lx, double ly, double lz);

/* Checks cfg, allocates every device buffer and plan, and returns a handle in
 * *out (NULL on failure).  PGPU_ERROR_INVALID_ARGUMENT for a bad config,
 * PGPU_ERROR_UNSUPPORTED when the method cannot serve it, PGPU_ERROR_NO_DEVICE
 * when no CUDA device is present, PGPU_ERROR_OUT_OF_MEMORY. */
pgpu_status pgpu_create(const pgpu_config *cfg, pgpu_solver **out);

/* Solves with device pointers u (in/out) and f (in), laid out as the config
 * says; report may be NULL.  Returns the report's status. */
pgpu_status pgpu_solve(pgpu_solver *s, void *u, const void *f, pgpu_report *report);

/* As pgpu_solve, with u and f in host memory (copied to and from the device;
 * synchronous). */
pgpu_status pgpu_solve_host(pgpu_solver *s, void *u, const void *f, pgpu_report *report);

/* *rel_norm = ||b - A u||_2 / ||b||_2 for device arrays u and f (the
 * absolute norm when ||b|| == 0).  PGPU_ERROR_NONFINITE_INPUT when f or the
 * boundary data are not finite, PGPU_ERROR_UNSUPPORTED when b lies outside
 * the range pgpu_solve takes (ERRORS above). */
pgpu_status pgpu_residual(pgpu_solver *s, const void *u, const void *f, double *rel_norm);

/* The config the handle uses, with every default resolved. */
pgpu_status pgpu_get_config(const pgpu_solver *s, pgpu_config *out);

/* Device memory held by the handle, in bytes (0 for NULL). */
size_t pgpu_workspace_bytes(const pgpu_solver *s);

/* *bytes = the device memory pgpu_create(cfg) would allocate on the current
 * device, without allocating any: the same build as pgpu_create's, counting
 * instead of allocating, so that it equals pgpu_workspace_bytes of the
 * handle pgpu_create(cfg) returns on that device, to the byte.  Not counted:
 * what later calls add (pgpu_solve_host's two arrays, pgpu_set_mask and
 * pgpu_set_coefficients: see MEMORY above).  Needs a CUDA device: the sizes
 * depend on its multiprocessor count and shared memory, and for PGPU_FFT on
 * cuFFT's work area for it (asked with cufftGetSizeMany64, which plans and
 * allocates nothing).  The config is checked as pgpu_create checks it:
 * PGPU_ERROR_INVALID_ARGUMENT, PGPU_ERROR_UNSUPPORTED (detail in
 * pgpu_last_error(NULL)), PGPU_ERROR_NO_DEVICE; *bytes = 0 on failure. */
pgpu_status pgpu_workspace_size(const pgpu_config *cfg, size_t *bytes);

/* The stream the handle's work goes to (cfg.stream at create; 0 = the
 * default stream).  pgpu_set_stream changes it for later calls; the new
 * stream is ordered after everything the handle queued on the old one (an
 * event, no host wait).  Graphs the handle captured stay valid. */
pgpu_status pgpu_set_stream(pgpu_solver *s, struct CUstream_st *stream);
pgpu_status pgpu_get_stream(const pgpu_solver *s, struct CUstream_st **stream);

/* A progress callback, called on the calling thread at every convergence
 * check of a solve (never with PGPU_FIXED, never for the FFT alone or a
 * one-pass FMG; PGPU_FFT | PGPU_MIXED calls it once per refinement):
 * `iteration` as the report counts it (PGPU_MIXED: refinements),
 * the residual norm and the relative residual.  Float V-cycles under the
 * default tolerance check the coarse-grid correction instead: residual_norm
 * is NaN there and relative_residual the correction's RMS relative to u's
 * (with a mask or beta, the residual checks that may follow that stop are
 * residuals).
 * The callback must not call into the same handle. */
typedef void (*pgpu_monitor)(void *user, int iteration, double residual_norm, double relative_residual);

/* Installs fn (NULL: none) with its user pointer for later solves. */
pgpu_status pgpu_set_monitor(pgpu_solver *s, pgpu_monitor fn, void *user);

/* Cell types of a mask (see MASKS AND VARIABLE COEFFICIENTS above). */
enum { PGPU_CELL_FLUID = 0, PGPU_CELL_DIRICHLET = 1, PGPU_CELL_SOLID = 2 };

/* Sets the cell-type mask (device memory, one byte per point, laid out as
 * u); NULL removes it (every point fluid).  PGPU_ERROR_UNSUPPORTED for
 * PGPU_FFT, PGPU_MIXED and several-GPU handles. */
pgpu_status pgpu_set_mask(pgpu_solver *s, const uint8_t *mask);

/* Sets beta of -div(beta grad u) = f (device memory, laid out as u, in the
 * precision of u); NULL removes it (beta = 1).  PGPU_ERROR_UNSUPPORTED for
 * PGPU_FFT, PGPU_MIXED and several-GPU handles. */
pgpu_status pgpu_set_coefficients(pgpu_solver *s, const void *beta);

/* ---- Several GPUs (see SEVERAL GPUS above; added in 0.7) ---- */

/* nccl.h's communicator type is `struct ncclComm *` (ncclComm_t): named here
 * without including nccl.h. */
struct ncclComm;

/* The part of the global grid a rank holds.  Along each axis a, the local
 * interior points are the global interior points lo[a] .. lo[a] + n[a] - 1
 * (0-based); the local arrays hold n[0] x n[1] x n[2] interior points plus
 * one ghost layer, laid out as THE PROBLEM says for a grid of that size
 * (the config's strides, 0 = packed for the local box). */
typedef struct pgpu_box {
    int64_t lo[3]; /* first global interior index per axis (0-based) */
    int64_t n[3];  /* interior points per axis */
    int rank;      /* this rank, 0 .. ranks - 1 */
    int ranks;     /* the communicator's size */
} pgpu_box;

/* 1 when the library was built with NCCL (PGPU_WITH_NCCL), else 0. */
int pgpu_has_distributed(void);

/* The box rank `rank` of `ranks` holds for the global config (no device, no
 * communicator: for planning and allocation).  PGPU_ERROR_INVALID_ARGUMENT
 * for a bad rank, a grid too short along the split axis (every rank needs
 * two planes) or a config pgpu_create refuses so (and that config's other
 * statuses, e.g. PGPU_ERROR_UNSUPPORTED); detail in pgpu_last_error(NULL).
 * What needs the method's plan is checked by pgpu_create_distributed alone:
 * multigrid across an odd periodic split axis, an FFT axis with fewer
 * nodes than ranks (a box here is no promise that they are served). */
pgpu_status pgpu_decompose(const pgpu_config *global, int ranks, int rank, pgpu_box *box);

/* Collective over comm: every rank calls it with the same global config
 * (sizes, spacing, faces, flags, tolerances) and its own stream, on the
 * device the communicator's rank uses.  Each rank's handle then solves the
 * global problem with pgpu_solve on its local box's arrays (every rank
 * calls pgpu_solve together).  A config that differs between ranks, or
 * one this rank count cannot split, fails on every rank with the same
 * status.  PGPU_ERROR_UNSUPPORTED when built without NCCL, and for methods
 * the distributed mode does not serve (see SEVERAL GPUS). */
pgpu_status pgpu_create_distributed(const pgpu_config *global, struct ncclComm *comm, pgpu_solver **out);

/* The local box of a handle (a single-GPU handle: the whole grid, rank 0 of
 * 1). */
pgpu_status pgpu_get_box(const pgpu_solver *s, pgpu_box *box);

/* Frees everything; NULL is a no-op. */
void pgpu_destroy(pgpu_solver *s);

/* A fixed English string for a status ("unknown status" for other values). */
const char *pgpu_status_string(pgpu_status st);

/* The detail behind the last call on s, if it failed ("" when none: each
 * call clears it on entry); with s == NULL, the same for the last of the
 * calls without a handle (pgpu_create, pgpu_create_distributed,
 * pgpu_decompose, pgpu_workspace_size, pgpu_config_set_domain) on this
 * thread. */
const char *pgpu_last_error(const pgpu_solver *s);

/* ---- API ends here. ---- */

#ifdef __cplusplus
}
#endif

#endif /* POISSON_GPU_H */
