/* common.h -- what every test shares: counted checks, skipping without a
 * device, a random generator seeded afresh each run, precision helpers, and
 * a test problem that lives on the host (in double, for the reference) and
 * on the device (in the solver's precision).
 *
 * Exit codes follow Meson: 0 pass, 1 fail, 77 skipped.
 */
#ifndef PGPU_TEST_COMMON_H
#define PGPU_TEST_COMMON_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "poisson_gpu.h"
#include "reference.h"

#if defined(__GNUC__)
#define T_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define T_PRINTF(fmt, args)
#endif

/* ---- checks --------------------------------------------------------------- */

/* CHECK(condition, printf-style description): prints one line, "ok" or
 * "FAIL file:line", and counts it.  Evaluates to the condition (0 or 1). */
#define CHECK(cond, ...) t_check((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)
int t_check(int ok, const char *file, int line, const char *fmt, ...) T_PRINTF(4, 5);

/* Prints a line of information (indented, not counted). */
void t_note(const char *fmt, ...) T_PRINTF(1, 2);

/* Prints the summary and returns the exit code: 0 when every check passed. */
int t_finish(const char *test_name);

/* Exit codes. */
enum { T_EXIT_PASS = 0, T_EXIT_FAIL = 1, T_EXIT_SKIP = 77 };

/* ---- device ----------------------------------------------------------------- */

/* Number of CUDA devices; 0 when the runtime says none or fails. */
int t_device_count(void);

/* Exits with 77 (skipped) when there is no CUDA device. */
void t_require_device(const char *test_name);

/* Device memory: NULL (and a failed check) when CUDA fails. */
void *t_dev_alloc(size_t bytes);
void *t_dev_upload(const void *host, size_t bytes);
int t_dev_download(void *host, const void *dev, size_t bytes);
void t_dev_free(void *dev);

/* A config: sizes, spacing, boundary types as letters ("DDNNPP": D, N or P
 * per face x-, x+, y-, y+, z-, z+; missing letters are Dirichlet) and flags;
 * everything else default. */
pgpu_config t_config(int64_t nx, int64_t ny, int64_t nz, const char *bc_letters, double hx,
                     double hy, double hz, unsigned flags);

/* pgpu_create that reports a failure as a failed check (with the library's
 * message) and returns NULL. */
pgpu_solver *t_create(const pgpu_config *cfg, const char *what);

/* cudaDeviceSynchronize; a failed check (and 0) when the device reports an
 * error, e.g. from a kernel of the last call. */
int t_sync(const char *what);

/* ---- random numbers ----------------------------------------------------------- */

/* Seeds the generator from the time and the process id, or from the
 * environment variable PGPU_TEST_SEED, and prints the seed so that a failing
 * run can be repeated.  Called by the first t_rand*. */
uint64_t t_seed(void);
uint64_t t_rand_u64(void);
double t_rand(double lo, double hi); /* uniform in [lo, hi) */
/* Puts the generator at `state` (a draw the seed's run reached) and returns
 * where it was: a case found by one seed, replayed in every run. */
uint64_t t_rand_at(uint64_t state);

/* ---- precision ---------------------------------------------------------------- */

/* PGPU_FLOAT or PGPU_DOUBLE from a flags word (0 means double). */
unsigned t_precision(unsigned flags);
const char *t_precision_name(unsigned prec);
size_t t_word(unsigned prec);
double t_eps(unsigned prec);
/* v rounded to the precision (so that host and device see the same value). */
double t_round(unsigned prec, double v);
/* Typed arrays <-> double arrays, element by element (NaN stays NaN). */
void t_to_typed(unsigned prec, const double *src, void *dst, int64_t n);
void t_from_typed(unsigned prec, const void *src, double *dst, int64_t n);

/* Values written where nothing may be read: NaN for padding, f's ghosts and
 * periodic ghosts; a huge finite value for edge and corner ghosts (reading
 * one spoils the result without making it non-finite). */
#define T_POISON_NAN ((double)NAN)
#define T_POISON_FINITE 1.0e30

/* max(a, b), except that a NaN in either wins (so that it cannot hide). */
double t_max_nan(double a, double b);

/* ---- names for the log ------------------------------------------------------------ */

const char *t_method_name(unsigned flags);
/* The boundary types as letters, "DDNNPP" (4 letters in 2D); buf >= 7 chars. */
const char *t_bc_letters(const ref_grid *g, char *buf);

/* ---- a test problem ------------------------------------------------------------------ */

typedef struct t_problem {
    ref_grid g;         /* the layout (from the config given to t_problem_init) */
    unsigned prec;      /* PGPU_FLOAT or PGPU_DOUBLE */
    int64_t elems;      /* elements per array, padding included */
    size_t bytes;       /* bytes of one device array */
    double *u, *f;      /* host values in double; rounded to prec by t_problem_upload */
    void *u_sent;       /* the typed image of u as it was uploaded */
    void *d_u, *d_f;    /* device arrays, after t_problem_upload */
} t_problem;

/* Allocates the host arrays for cfg's layout and precision: u's interior and
 * Dirichlet/Neumann ghosts zero, f's interior zero; periodic ghosts, f's
 * ghosts, edge ghosts and padding poisoned.  0 on failure. */
int t_problem_init(t_problem *P, const pgpu_config *cfg);

/* Random f and initial u in [-1, 1), random ghost data on Dirichlet and
 * Neumann faces; periodic ghosts stay poisoned (NaN). */
void t_problem_randomize(t_problem *P);

/* Rounds u and f to the problem's precision, then copies them to the device.
 * 0 on failure. */
int t_problem_upload(t_problem *P);

/* Copies u back: into u_out (double, may be NULL) and into typed_out (the raw
 * image, may be NULL).  0 on failure. */
int t_problem_download(t_problem *P, double *u_out, void *typed_out);

/* One solve of P by s: upload, pgpu_solve (its status in *st, the report,
 * zeroed first, in *rep), synchronise (what names a failure) and download u
 * into u_out.  1 when all of that ran; s == NULL or a failed step gives 0
 * (a failed step is also a failed check). */
int t_problem_solve(t_problem *P, pgpu_solver *s, const char *what, pgpu_report *rep, pgpu_status *st,
                    double *u_out);

/* The number of elements of u outside the interior whose bits differ between
 * the uploaded image and typed (a downloaded image). */
int64_t t_problem_changed_outside(const t_problem *P, const void *typed);

void t_problem_free(t_problem *P);

/* A new host array of the problem's layout (double), a copy of src or zero. */
double *t_problem_array(const t_problem *P, const double *src);

/* One PGPU_FIXED solve of cfg (PGPU_JACOBI or PGPU_RBGS, `iterations`
 * iterations; cfg.max_iterations is ignored) on random data, checked against
 * the host reference: per interior point |gpu - ref| <= tol * bound (the
 * rounding bound of the reference's updates; tol = 8 FLT_EPSILON in float,
 * 1e-14 in double), the report, and everything outside the interior
 * unchanged bit for bit.  prepare, if not NULL, gets the new handle before
 * the solve.  name heads the log lines. */
void t_check_stationary(const pgpu_config *cfg, const char *name, int iterations,
                        void (*prepare)(pgpu_solver *s, void *ctx), void *ctx);

#endif /* PGPU_TEST_COMMON_H */
