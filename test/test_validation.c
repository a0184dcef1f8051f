/* test_validation.c -- argument checking that needs no device.
 *
 * Every invalid argument of the "Status rules" is answered with
 * PGPU_ERROR_INVALID_ARGUMENT, *out == NULL and a message, before any CUDA
 * call: so the answer is the same with or without a GPU.  Valid configs
 * (edge cases included) are accepted: PGPU_ERROR_NO_DEVICE without a GPU,
 * a handle with one.  Also: pgpu_config_default's values, NULL handles,
 * and pgpu_last_error(NULL) being per thread.
 *
 * pgpu_workspace_size checks the config as pgpu_create does: each config
 * above is put to it too (the same status, *bytes = 0 and a message on
 * failure; without a GPU a valid config gives PGPU_ERROR_NO_DEVICE, with one
 * pgpu_create's status and a size > 0 on success), and its own NULL
 * arguments are refused.  test_workspace (gpu) compares the sizes with
 * pgpu_workspace_bytes, test_workspace_host (cpu) the sizing itself. */
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int have_device;

static const char *message_or_null(const char *m)
{
    return m ? m : "(null)";
}

/* pgpu_create must refuse cfg (which may be NULL) as invalid. */
static void expect_invalid(const char *what, const pgpu_config *cfg)
{
    static int sentinel;
    pgpu_solver *s = (pgpu_solver *)&sentinel; /* must be overwritten with NULL */
    const pgpu_status st = pgpu_create(cfg, &s);
    const char *msg = pgpu_last_error(NULL);
    CHECK(st == PGPU_ERROR_INVALID_ARGUMENT && s == NULL && msg && msg[0],
          "invalid %-40s -> %s, *out %s, \"%s\"", what, pgpu_status_string(st),
          s == NULL ? "NULL" : "not NULL", message_or_null(msg));
    if (st == PGPU_SUCCESS && s && s != (pgpu_solver *)&sentinel)
        pgpu_destroy(s);
    size_t bytes = 12345;
    const pgpu_status qs = pgpu_workspace_size(cfg, &bytes);
    msg = pgpu_last_error(NULL);
    CHECK(qs == PGPU_ERROR_INVALID_ARGUMENT && bytes == 0 && msg && msg[0],
          "        pgpu_workspace_size -> %s, bytes %zu, \"%s\"", pgpu_status_string(qs), bytes,
          message_or_null(msg));
}

/* pgpu_create must refuse cfg with PGPU_ERROR_UNSUPPORTED (a valid request
 * no method serves), whether or not a device exists. */
static void expect_unsupported(const char *what, const pgpu_config *cfg)
{
    pgpu_solver *s = NULL;
    const pgpu_status st = pgpu_create(cfg, &s);
    const char *msg = pgpu_last_error(NULL);
    CHECK(st == PGPU_ERROR_UNSUPPORTED && s == NULL && msg && msg[0], "unsupported %-36s -> %s, \"%s\"", what,
          pgpu_status_string(st), message_or_null(msg));
    pgpu_destroy(s);
    size_t bytes = 12345;
    const pgpu_status qs = pgpu_workspace_size(cfg, &bytes);
    msg = pgpu_last_error(NULL);
    CHECK(qs == PGPU_ERROR_UNSUPPORTED && bytes == 0 && msg && msg[0],
          "            pgpu_workspace_size -> %s, bytes %zu, \"%s\"", pgpu_status_string(qs), bytes,
          message_or_null(msg));
}

/* pgpu_create must accept cfg: NO_DEVICE without a GPU; with one, a handle
 * (or UNSUPPORTED from a method other than Jacobi and RBGS, which this
 * foundation step does not require). */
static void expect_valid(const char *what, const pgpu_config *cfg)
{
    pgpu_solver *s = NULL;
    const pgpu_status st = pgpu_create(cfg, &s);
    if (!have_device) {
        const char *msg = pgpu_last_error(NULL);
        CHECK(st == PGPU_ERROR_NO_DEVICE && s == NULL && msg && msg[0],
              "valid   %-40s -> %s (no device), \"%s\"", what, pgpu_status_string(st),
              message_or_null(msg));
    } else {
        const unsigned method = cfg->flags & PGPU_METHOD_MASK;
        const int basic = method == PGPU_JACOBI || method == PGPU_RBGS;
        CHECK(st == PGPU_SUCCESS || (!basic && st == PGPU_ERROR_UNSUPPORTED),
              "valid   %-40s -> %s", what, pgpu_status_string(st));
        CHECK((st == PGPU_SUCCESS) == (s != NULL), "        handle returned exactly on success");
    }
    pgpu_destroy(s);
    /* The query: the same answer as pgpu_create. */
    size_t bytes = 12345;
    const pgpu_status qs = pgpu_workspace_size(cfg, &bytes);
    if (!have_device) {
        CHECK(qs == PGPU_ERROR_NO_DEVICE && bytes == 0, "        pgpu_workspace_size -> %s (no device), bytes %zu",
              pgpu_status_string(qs), bytes);
    } else {
        CHECK(qs == st && (qs == PGPU_SUCCESS) == (bytes > 0),
              "        pgpu_workspace_size -> %s as pgpu_create, bytes %zu", pgpu_status_string(qs), bytes);
    }
}

/* A valid 3D base: RBGS, double, Dirichlet. */
static pgpu_config base3(void)
{
    pgpu_config c = pgpu_config_default(8, 6, 5);
    c.flags = PGPU_RBGS | PGPU_DOUBLE;
    return c;
}

static pgpu_config base2(void)
{
    pgpu_config c = pgpu_config_default(9, 7, 1);
    c.flags = PGPU_JACOBI | PGPU_FLOAT;
    return c;
}

static void invalid_configs(void)
{
    pgpu_config c;
    const int64_t big = (int64_t)1 << 40;

    expect_invalid("cfg NULL", NULL);
    {
        c = base3();
        const pgpu_status st = pgpu_create(&c, NULL);
        const char *msg = pgpu_last_error(NULL);
        CHECK(st == PGPU_ERROR_INVALID_ARGUMENT && msg && msg[0], "invalid %-40s -> %s, \"%s\"",
              "out NULL", pgpu_status_string(st), message_or_null(msg));
    }

#define INVALID(what, base, change) \
    do {                            \
        c = base();                 \
        change;                     \
        expect_invalid(what, &c);   \
    } while (0)

    /* sizes */
    INVALID("nx = 0", base3, c.nx = 0);
    INVALID("ny = 0", base3, c.ny = 0);
    INVALID("nz = 0", base3, c.nz = 0);
    INVALID("nx = -1", base3, c.nx = -1);
    INVALID("ny = -5 (2D)", base2, c.ny = -5);
    INVALID("nz = -2", base3, c.nz = -2);

    /* spacing */
    INVALID("hx = 0", base3, c.hx = 0.0);
    INVALID("hy = -1", base3, c.hy = -1.0);
    INVALID("hz = 0 (3D)", base3, c.hz = 0.0);
    INVALID("hx = NaN", base3, c.hx = NAN);
    INVALID("hy = Inf", base3, c.hy = INFINITY);
    INVALID("hz = -Inf (3D)", base3, c.hz = -INFINITY);
    INVALID("hz = NaN (3D)", base3, c.hz = NAN);
    INVALID("hx = NaN (2D)", base2, c.hx = NAN);

    /* strides */
    INVALID("stride_y = nx+1", base3, c.stride_y = c.nx + 1);
    INVALID("stride_y = 1", base3, c.stride_y = 1);
    INVALID("stride_y = -1", base3, c.stride_y = -1);
    INVALID("stride_y = nx+1 (2D)", base2, c.stride_y = c.nx + 1);
    INVALID("stride_z = (nx+2)(ny+2)-1", base3, c.stride_z = (c.nx + 2) * (c.ny + 2) - 1);
    INVALID("stride_z = sy(ny+2)-1, padded sy", base3,
            (c.stride_y = c.nx + 5, c.stride_z = c.stride_y * (c.ny + 2) - 1));
    INVALID("stride_z = -1", base3, c.stride_z = -1);

    /* sizes whose products overflow 64 bits */
    INVALID("nx = ny = nz = 2^40", base3, (c.nx = big, c.ny = big, c.nz = big));
    INVALID("nx = 2^31 - 255 (one past an axis's limit)", base2, (c.nx = ((int64_t)1 << 31) - 255, c.ny = 1));
    INVALID("nz = 2^31 - 255", base3, (c.nx = c.ny = 1, c.nz = ((int64_t)1 << 31) - 255));
    INVALID("nx = ny = nz = 2^21 (over 2^63 elements)", base3,
            (c.nx = (int64_t)1 << 21, c.ny = (int64_t)1 << 21, c.nz = (int64_t)1 << 21));
    INVALID("nx = INT64_MAX", base3, c.nx = INT64_MAX);
    INVALID("nx = INT64_MAX - 1 (nx+2 overflows)", base3, c.nx = INT64_MAX - 1);
    INVALID("2D nx = ny = 2^32", base2, (c.nx = (int64_t)1 << 32, c.ny = (int64_t)1 << 32));
    INVALID("stride_y = INT64_MAX/2", base3, c.stride_y = INT64_MAX / 2);
    INVALID("stride_z = INT64_MAX/3", base3, c.stride_z = INT64_MAX / 3);

    /* flags: bits that name nothing */
    INVALID("flag bit 0x20 (no method)", base3, c.flags |= 0x20u);
    INVALID("flag bit 0x80 (no method)", base3, c.flags |= 0x80u);
    INVALID("flag bit 0x800 (no precision)", base3, c.flags |= 0x800u);
    INVALID("flag bit 0x4000", base3, c.flags |= 0x4000u);
    INVALID("flag bit 0x80000000", base3, c.flags |= 0x80000000u);
    /* every pair of methods and of precisions: one of each per config */
    {
        static const unsigned m[5] = {PGPU_JACOBI, PGPU_RBGS, PGPU_VCYCLE, PGPU_FMG, PGPU_FFT};
        static const unsigned p[3] = {PGPU_DOUBLE, PGPU_FLOAT, PGPU_MIXED};
        char what[64];
        for (int a = 0; a < 5; ++a)
            for (int b = a + 1; b < 5; ++b) {
                snprintf(what, sizeof what, "two methods 0x%x | 0x%x", m[a], m[b]);
                c = base3();
                c.flags = m[a] | m[b] | PGPU_DOUBLE;
                expect_invalid(what, &c);
            }
        for (int a = 0; a < 3; ++a)
            for (int b = a + 1; b < 3; ++b) {
                snprintf(what, sizeof what, "two precisions 0x%x | 0x%x", p[a], p[b]);
                c = base3();
                c.flags = PGPU_FMG | p[a] | p[b];
                expect_invalid(what, &c);
            }
        INVALID("all methods", base3, c.flags = PGPU_METHOD_MASK | PGPU_DOUBLE);
        INVALID("all precisions", base3, c.flags = PGPU_FMG | PGPU_DOUBLE | PGPU_FLOAT | PGPU_MIXED);
    }
    INVALID("WCYCLE with JACOBI", base3, c.flags = PGPU_JACOBI | PGPU_WCYCLE);
    INVALID("WCYCLE with RBGS", base3, c.flags = PGPU_RBGS | PGPU_WCYCLE);
    INVALID("WCYCLE with FFT", base3, c.flags = PGPU_FFT | PGPU_WCYCLE);

    /* boundary types */
    INVALID("bc[0] = 3", base3, (c.bc[0] = (pgpu_bc)3, c.bc[1] = (pgpu_bc)3));
    INVALID("bc[3] = -1", base3, c.bc[3] = (pgpu_bc)-1);
    INVALID("bc[5] = 7 (3D)", base3, c.bc[5] = (pgpu_bc)7);
    INVALID("bc[2] = 3 (2D)", base2, c.bc[2] = (pgpu_bc)3);
    INVALID("periodic x- only", base3, c.bc[PGPU_XMIN] = PGPU_BC_PERIODIC);
    INVALID("periodic x+ only", base3, c.bc[PGPU_XMAX] = PGPU_BC_PERIODIC);
    INVALID("periodic y- with Neumann y+", base3,
            (c.bc[PGPU_YMIN] = PGPU_BC_PERIODIC, c.bc[PGPU_YMAX] = PGPU_BC_NEUMANN));
    INVALID("periodic z+ only (3D)", base3, c.bc[PGPU_ZMAX] = PGPU_BC_PERIODIC);
    INVALID("periodic y+ only (2D)", base2, c.bc[PGPU_YMAX] = PGPU_BC_PERIODIC);

    /* numbers */
    INVALID("tolerance = -1e-12", base3, c.tolerance = -1e-12);
    INVALID("tolerance = NaN", base3, c.tolerance = NAN);
    INVALID("max_iterations = -1", base3, c.max_iterations = -1);
    INVALID("omega = NaN (RBGS)", base3, c.omega = NAN);
    INVALID("omega = -0.5 (RBGS)", base3, c.omega = -0.5);
    INVALID("omega = 2 (RBGS)", base3, c.omega = 2.0);
    INVALID("omega = 2.5 (RBGS)", base3, c.omega = 2.5);
    INVALID("omega = Inf (RBGS)", base3, c.omega = INFINITY);
    INVALID("omega = 1.0001 (JACOBI)", base2, c.omega = 1.0001);
    INVALID("omega = 1.5 (JACOBI)", base2, c.omega = 1.5);
    INVALID("omega = NaN (JACOBI)", base2, c.omega = NAN);
    INVALID("omega = 2 (VCYCLE)", base3, (c.flags = PGPU_VCYCLE, c.omega = 2.0));
    INVALID("omega = 2 (FMG)", base3, (c.flags = PGPU_FMG, c.omega = 2.0));
    INVALID("omega = -1 (FMG)", base3, (c.flags = PGPU_FMG, c.omega = -1.0));
    INVALID("pre_smooth = -1", base3, (c.flags = PGPU_VCYCLE, c.pre_smooth = -1));
    INVALID("post_smooth = -1", base3, (c.flags = PGPU_VCYCLE, c.post_smooth = -1));
    INVALID("check_interval = -1", base3, c.check_interval = -1);
    INVALID("check_interval = -1 (2D)", base2, c.check_interval = -1);
#undef INVALID
    c = base3();
    c.flags = PGPU_JACOBI | PGPU_MIXED;
    expect_unsupported("JACOBI | MIXED", &c);
    c.flags = PGPU_RBGS | PGPU_MIXED;
    expect_unsupported("RBGS | MIXED", &c);
    /* The message names what MIXED does serve, as the header does. */
    c = base3();
    c.flags = PGPU_JACOBI | PGPU_MIXED;
    pgpu_solver *s = NULL;
    pgpu_create(&c, &s);
    CHECK(strstr(pgpu_last_error(NULL), "PGPU_CG") && strstr(pgpu_last_error(NULL), "PGPU_BICGSTAB"),
          "the JACOBI | MIXED message names CG and BiCGStab: \"%s\"", pgpu_last_error(NULL));
}

static void valid_configs(void)
{
    pgpu_config c;

#define VALID(what, base, change) \
    do {                          \
        c = base();               \
        change;                   \
        expect_valid(what, &c);   \
    } while (0)

    VALID("3D RBGS double", base3, (void)0);
    VALID("2D JACOBI float", base2, (void)0);
    VALID("1x1x1", base3, (c.nx = 1, c.ny = 1, c.nz = 1));
    VALID("1x1 (2D)", base2, (c.nx = 1, c.ny = 1));
    VALID("2D hz = 0 (unused)", base2, c.hz = 0.0);
    VALID("2D hz = NaN (unused)", base2, c.hz = NAN);
    VALID("2D stride_z = 1 (unused)", base2, c.stride_z = 1);
    VALID("stride_y = nx+2 exactly", base3, c.stride_y = c.nx + 2);
    VALID("stride_z = (nx+2)(ny+2) exactly", base3, c.stride_z = (c.nx + 2) * (c.ny + 2));
    VALID("padded strides", base3, (c.stride_y = c.nx + 7, c.stride_z = c.stride_y * (c.ny + 2) + 3));
    VALID("2D padded stride_y", base2, c.stride_y = c.nx + 4);
    VALID("JACOBI omega = 1 exactly", base2, c.omega = 1.0);
    VALID("JACOBI omega = 0.5", base2, c.omega = 0.5);
    VALID("RBGS omega = 1.99", base3, c.omega = 1.99);
    VALID("RBGS FIXED max_iterations = 7", base3, (c.flags |= PGPU_FIXED, c.max_iterations = 7));
    VALID("JACOBI FIXED", base2, c.flags |= PGPU_FIXED);
    VALID("tolerance 1e-3, check_interval 1", base3, (c.tolerance = 1e-3, c.check_interval = 1));
    VALID("all periodic", base3,
          (c.bc[0] = c.bc[1] = c.bc[2] = c.bc[3] = c.bc[4] = c.bc[5] = PGPU_BC_PERIODIC));
    VALID("all Neumann", base3,
          (c.bc[0] = c.bc[1] = c.bc[2] = c.bc[3] = c.bc[4] = c.bc[5] = PGPU_BC_NEUMANN));
    VALID("mixed D N / P P / N D", base3,
          (c.bc[0] = PGPU_BC_DIRICHLET, c.bc[1] = PGPU_BC_NEUMANN, c.bc[2] = PGPU_BC_PERIODIC,
           c.bc[3] = PGPU_BC_PERIODIC, c.bc[4] = PGPU_BC_NEUMANN, c.bc[5] = PGPU_BC_DIRICHLET));
    VALID("2D periodic x, Neumann y", base2,
          (c.bc[0] = c.bc[1] = PGPU_BC_PERIODIC, c.bc[2] = c.bc[3] = PGPU_BC_NEUMANN));
    VALID("flags 0 (FMG, double)", base3, c.flags = 0);
    VALID("precision only (FLOAT)", base3, c.flags = PGPU_FLOAT);
    VALID("VCYCLE | WCYCLE, omega 1.5", base3, (c.flags = PGPU_VCYCLE | PGPU_WCYCLE, c.omega = 1.5));
    VALID("FMG | WCYCLE | FLOAT", base3, c.flags = PGPU_FMG | PGPU_WCYCLE | PGPU_FLOAT);
    VALID("VCYCLE pre 3 post 2", base3, (c.flags = PGPU_VCYCLE, c.pre_smooth = 3, c.post_smooth = 2));
    VALID("FFT", base3, c.flags = PGPU_FFT);
    VALID("VCYCLE | MIXED", base3, c.flags = PGPU_VCYCLE | PGPU_MIXED);
    VALID("FMG | MIXED | FIXED", base3, c.flags = PGPU_FMG | PGPU_MIXED | PGPU_FIXED);
    VALID("FFT | MIXED", base3, c.flags = PGPU_FFT | PGPU_MIXED);
    VALID("FFT, one mixed axis", base3, (c.flags = PGPU_FFT, c.bc[PGPU_YMAX] = PGPU_BC_NEUMANN));
    VALID("FFT float, three mixed axes", base3,
          (c.flags = PGPU_FFT | PGPU_FLOAT, c.bc[PGPU_XMAX] = c.bc[PGPU_YMIN] = c.bc[PGPU_ZMAX] = PGPU_BC_NEUMANN));
    VALID("CG, FFT preconditioner, three mixed axes", base3,
          (c.flags = PGPU_CG, c.preconditioner = PGPU_PRECOND_FFT,
           c.bc[PGPU_XMAX] = c.bc[PGPU_YMIN] = c.bc[PGPU_ZMAX] = PGPU_BC_NEUMANN));
    VALID("2D FFT | MIXED, two mixed axes", base2,
          (c.flags = PGPU_FFT | PGPU_MIXED, c.bc[PGPU_XMIN] = c.bc[PGPU_YMAX] = PGPU_BC_NEUMANN));
    VALID("CG, VCYCLE preconditioner, three mixed axes", base3,
          (c.flags = PGPU_CG, c.bc[PGPU_XMAX] = c.bc[PGPU_YMAX] = c.bc[PGPU_ZMAX] = PGPU_BC_NEUMANN));
    VALID("precision only (MIXED)", base3, c.flags = PGPU_MIXED);
#undef VALID
}

static void config_default(int64_t nx, int64_t ny, int64_t nz)
{
    const pgpu_config c = pgpu_config_default(nx, ny, nz);
    int zero_rest = c.stride_y == 0 && c.stride_z == 0 && c.tolerance == 0.0 &&
                    c.max_iterations == 0 && c.omega == 0.0 && c.pre_smooth == 0 &&
                    c.post_smooth == 0 && c.check_interval == 0 && c.stream == NULL;
    int dirichlet = 1;
    for (int f = 0; f < 6; ++f)
        dirichlet = dirichlet && c.bc[f] == PGPU_BC_DIRICHLET;

    CHECK(c.nx == nx && c.ny == ny && c.nz == nz, "default %lldx%lldx%lld: sizes", (long long)nx,
          (long long)ny, (long long)nz);
    CHECK(c.hx == 1.0 / (double)(nx + 1) && c.hy == 1.0 / (double)(ny + 1) &&
              (nz == 1 || c.hz == 1.0 / (double)(nz + 1)),
          "default: h = 1/(n+1): hx %.17g hy %.17g hz %.17g", c.hx, c.hy, c.hz);
    CHECK(c.flags == (PGPU_FMG | PGPU_DOUBLE), "default: flags 0x%x == FMG|DOUBLE", c.flags);
    CHECK(dirichlet, "default: all faces Dirichlet");
    CHECK(zero_rest, "default: strides, tolerance, iterations, omega, smoothing, check, stream 0");
    expect_valid("the default config", &c);
}

/* pgpu_config_domain and pgpu_config_set_domain: h from the length and the
 * two faces of each axis (the header's GEOMETRY). */
static double cells(int64_t n, pgpu_bc lo, pgpu_bc hi)
{
    return (double)n + 0.5 * ((lo == PGPU_BC_DIRICHLET) + (hi == PGPU_BC_DIRICHLET));
}

static void domain_configs(void)
{
    const pgpu_bc D = PGPU_BC_DIRICHLET, N = PGPU_BC_NEUMANN, P = PGPU_BC_PERIODIC;
    const pgpu_bc sets[][6] = {{D, D, D, D, D, D}, {N, N, P, P, D, N}, {N, D, N, N, P, P}, {P, P, P, P, P, P}};
    const int64_t sizes[][3] = {{8, 6, 5}, {1, 1, 1}, {100, 3, 1}, {7, 9, 1}, {31, 17, 64}};
    for (size_t b = 0; b < sizeof sets / sizeof sets[0]; ++b)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
            const int64_t *n = sizes[k];
            const pgpu_bc *bc = sets[b];
            const double L[3] = {2.5, 0.75, 3.0};
            pgpu_config c = pgpu_config_domain(n[0], n[1], n[2], L[0], L[1], L[2], bc);
            const pgpu_config d = pgpu_config_default(n[0], n[1], n[2]);
            int same_rest = c.flags == d.flags && c.stride_y == 0 && c.stride_z == 0 && c.tolerance == 0 &&
                            c.max_iterations == 0 && c.omega == 0 && c.stream == NULL;
            int faces = 1;
            for (int f = 0; f < 6; ++f) faces = faces && c.bc[f] == bc[f];
            const double hx = L[0] / cells(n[0], bc[0], bc[1]), hy = L[1] / cells(n[1], bc[2], bc[3]),
                         hz = L[2] / cells(n[2], bc[4], bc[5]);
            CHECK(faces && same_rest && c.nx == n[0] && c.ny == n[1] && c.nz == n[2] && c.hx == hx && c.hy == hy &&
                      (n[2] == 1 || c.hz == hz),
                  "pgpu_config_domain %lldx%lldx%lld, faces set %zu: h %.17g %.17g %.17g, want %.17g %.17g %.17g",
                  (long long)n[0], (long long)n[1], (long long)n[2], b, c.hx, c.hy, c.hz, hx, hy, hz);
            /* The setter: the same spacing from the default config once the
             * faces are set; and for a face changed afterwards. */
            pgpu_config e = pgpu_config_default(n[0], n[1], n[2]);
            for (int f = 0; f < 6; ++f) e.bc[f] = bc[f];
            pgpu_status st = pgpu_config_set_domain(&e, L[0], L[1], L[2]);
            CHECK(st == PGPU_SUCCESS && e.hx == hx && e.hy == hy && (n[2] == 1 || e.hz == hz),
                  "pgpu_config_set_domain, faces set %zu -> %s, h %.17g %.17g %.17g", b, pgpu_status_string(st),
                  e.hx, e.hy, e.hz);
            if (bc[0] != P) {
                e.bc[0] = e.bc[0] == D ? N : D;
                st = pgpu_config_set_domain(&e, L[0], L[1], L[2]);
                CHECK(st == PGPU_SUCCESS && e.hx == L[0] / cells(n[0], e.bc[0], e.bc[1]),
                      "pgpu_config_set_domain after x- changed -> %s, hx %.17g", pgpu_status_string(st), e.hx);
            }
            expect_valid("pgpu_config_domain's config", &c);
        }
    /* The setter's refusals leave the config as it was. */
    const struct {
        const char *what, *word;
        int64_t n;
        double lx;
        pgpu_bc x0, x1;
    } bad[] = {{"length 0", "lx", 8, 0.0, D, D},
               {"length NaN", "lx", 8, NAN, D, D},
               {"length -1", "lx", 8, -1.0, N, N},
               {"length Inf", "lx", 8, INFINITY, D, N},
               {"nx = 0", "grid size", 0, 1.0, D, D},
               {"periodic on x- only", "periodic", 8, 1.0, P, D},
               {"bc 7", "pgpu_bc", 8, 1.0, (pgpu_bc)7, D}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        pgpu_config c = pgpu_config_default(bad[k].n, 6, 5);
        c.bc[0] = bad[k].x0;
        c.bc[1] = bad[k].x1;
        const pgpu_config before = c;
        const pgpu_status st = pgpu_config_set_domain(&c, bad[k].lx, 1.0, 1.0);
        CHECK(st == PGPU_ERROR_INVALID_ARGUMENT && memcmp(&c, &before, sizeof c) == 0 &&
                  strstr(pgpu_last_error(NULL), bad[k].word),
              "pgpu_config_set_domain, %s -> %s, \"%s\"", bad[k].what, pgpu_status_string(st),
              pgpu_last_error(NULL));
    }
    CHECK(pgpu_config_set_domain(NULL, 1, 1, 1) == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_config_set_domain(NULL)");
    /* pgpu_config_domain does not check: a bad length reaches pgpu_create,
     * which refuses it naming the spacing. */
    pgpu_config c = pgpu_config_domain(8, 6, 5, -1.0, 1.0, 1.0, NULL);
    expect_invalid("pgpu_config_domain with lx = -1", &c);
    CHECK(strstr(pgpu_last_error(NULL), "hx") != NULL, "the message names hx: \"%s\"", pgpu_last_error(NULL));
}

/* Without a device the status detail says so in the user's words first. */
static void no_device_message(void)
{
    if (have_device) return;
    pgpu_config c = base3();
    pgpu_solver *s = NULL;
    const pgpu_status st = pgpu_create(&c, &s);
    const char *msg = pgpu_last_error(NULL);
    CHECK(st == PGPU_ERROR_NO_DEVICE && strncmp(msg, "no CUDA device: ", 16) == 0,
          "no device: %s, \"%s\" starts with \"no CUDA device: \"", pgpu_status_string(st), msg);
}

static void null_handles(void)
{
    double u[27] = {0}, f[27] = {0}, rel = -1.0;
    pgpu_report rep;
    pgpu_config c;
    CHECK(pgpu_solve(NULL, u, f, &rep) == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_solve(NULL, ...)");
    CHECK(pgpu_solve(NULL, u, f, NULL) == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_solve(NULL, ..., NULL report)");
    CHECK(pgpu_solve_host(NULL, u, f, &rep) == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_solve_host(NULL, ...)");
    CHECK(pgpu_residual(NULL, u, f, &rel) == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_residual(NULL, ...)");
    CHECK(pgpu_get_config(NULL, &c) == PGPU_ERROR_INVALID_ARGUMENT, "pgpu_get_config(NULL, ...)");
    CHECK(pgpu_workspace_bytes(NULL) == 0, "pgpu_workspace_bytes(NULL) == 0");
    {
        const pgpu_config c8 = pgpu_config_default(8, 8, 8);
        size_t bytes = 12345;
        pgpu_status st = pgpu_workspace_size(NULL, &bytes);
        CHECK(st == PGPU_ERROR_INVALID_ARGUMENT && bytes == 0 && strstr(pgpu_last_error(NULL), "cfg"),
              "pgpu_workspace_size(NULL, &bytes) -> %s, bytes %zu, \"%s\"", pgpu_status_string(st), bytes,
              pgpu_last_error(NULL));
        st = pgpu_workspace_size(&c8, NULL);
        CHECK(st == PGPU_ERROR_INVALID_ARGUMENT && strstr(pgpu_last_error(NULL), "bytes"),
              "pgpu_workspace_size(&cfg, NULL) -> %s, \"%s\"", pgpu_status_string(st), pgpu_last_error(NULL));
    }
    pgpu_destroy(NULL);
    CHECK(pgpu_last_error(NULL) != NULL, "pgpu_last_error(NULL) is a string");
}

/* pgpu_last_error(NULL) belongs to the calling thread. */
static void *other_thread(void *arg)
{
    char *seen = arg; /* [0..255]: message before; [256..511]: after a failure */
    const char *before = pgpu_last_error(NULL);
    snprintf(seen, 256, "%s", before ? before : "(null)");
    pgpu_solver *s = NULL;
    pgpu_config c = base3();
    c.nx = 0;
    pgpu_create(&c, &s);
    const char *after = pgpu_last_error(NULL);
    snprintf(seen + 256, 256, "%s", after ? after : "");
    return NULL;
}

static void per_thread_error(void)
{
    pgpu_solver *s = NULL;
    char mine[256], seen[512];
    pgpu_create(NULL, &s); /* a failure on this thread */
    snprintf(mine, sizeof mine, "%s", pgpu_last_error(NULL));

    pthread_t th;
    if (!CHECK(pthread_create(&th, NULL, other_thread, seen) == 0, "pthread_create"))
        return;
    pthread_join(th, NULL);
    CHECK(seen[0] == '\0', "a new thread's pgpu_last_error(NULL) is \"\" (saw \"%s\")", seen);
    CHECK(seen[256] != '\0', "the thread's own failure sets its message (\"%s\")", seen + 256);
    CHECK(strcmp(pgpu_last_error(NULL), mine) == 0,
          "this thread's message is unchanged by the other's failure (\"%s\")", pgpu_last_error(NULL));
}

int main(void)
{
    /* Before any failure, there is no message. */
    const char *first = pgpu_last_error(NULL);
    CHECK(first && first[0] == '\0', "pgpu_last_error(NULL) is \"\" before any failure (\"%s\")",
          message_or_null(first));

    have_device = t_device_count() > 0;
    t_note("CUDA devices: %d", t_device_count());

    invalid_configs();
    valid_configs();
    config_default(8, 6, 5);
    config_default(1, 1, 1);
    config_default(100, 3, 1);
    config_default(7, 9, 1);
    domain_configs();
    no_device_message();
    null_handles();
    per_thread_error();
    return t_finish("test_validation");
}
