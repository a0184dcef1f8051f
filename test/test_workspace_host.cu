/* test_workspace_host.cu -- the sizing behind pgpu_workspace_size, with no
 * device (a unit of the white-box build, to describe the device by hand: its SM
 * count and opt-in shared memory, as an H100, an A100 and an RTX 4090 give
 * them).
 *
 * The sizing runs the build of a handle with DeviceMem counting: every
 * allocation counted, no other device call made (PGPU_CUDA_SETUP).  Without a
 * GPU any device call it made would fail, so a sizing that succeeds here
 * shows that the create path routes its device calls correctly (all methods
 * but the FFT's cuFFT routes, whose work area cuFFT sizes on a device;
 * test_workspace compares the whole with pgpu_workspace_bytes on a GPU).
 * And the sizes follow the memory formulas of the header's MEMORY section:
 *  - Jacobi, RBGS: one array of u's size, plus at most 4% (the block
 *    partials of the reductions, the coefficient tables);
 *  - V-cycles, FMG: 3D cubes 1.4 to 1.65, 2D squares 2.1 to 2.5 arrays of
 *    u's size (level 0's second iterate, three arrays per coarse level, the
 *    coarsest level's dense inverse of at most a quarter word per point);
 *  - float 0.49 to 0.52 of double; PGPU_MIXED = float multigrid + two float
 *    arrays (the correction problem's own iterate and right-hand side);
 *  - the FFT's all-Dirichlet row route: two arrays of nx*ny*nz values, plus
 *    at most 3%;
 *  - the same answer twice; a config the method refuses is refused.
 */
#include "whitebox.h"

namespace wb_workspace_host {

struct DeviceDesc {
    const char *name;
    int sms, optin;
};
static const DeviceDesc devices[] = {{"H100", 132, 232448}, {"A100", 108, 166912}, {"RTX 4090", 128, 101376}};

// The bytes pgpu_create would allocate for cfg on device d (0 on failure,
// with the status in *st).
static size_t sized(const pgpu_config &cfg, const DeviceDesc &d, pgpu_status *st, char *msg = nullptr)
{
    char err[pgpu::ERR_LEN] = {0};
    pgpu_config c;
    *st = pgpu::resolve_config(&cfg, &c, err);
    size_t bytes = 0;
    if (*st == PGPU_SUCCESS) *st = pgpu::count_workspace(c, err, &bytes, d.sms, d.optin);
    if (msg) snprintf(msg, pgpu::ERR_LEN, "%s", err);
    return *st == PGPU_SUCCESS ? bytes : 0;
}

static pgpu_config make(int64_t nx, int64_t ny, int64_t nz, const char *bc, unsigned flags)
{
    return t_config(nx, ny, nz, bc, 1.0 / (double)(nx + 1), 1.0 / (double)(ny + 1),
                    nz > 1 ? 1.0 / (double)(nz + 1) : 1.0, flags);
}

static double elems(const pgpu_config &c)
{
    return (double)(c.nx + 2) * (double)(c.ny + 2) * (c.nz > 1 ? (double)(c.nz + 2) : 1.0);
}

int run(int, char **)
{
    char what[160];
    const struct {
        int64_t nx, ny, nz;
    } sizes[] = {{63, 63, 63}, {127, 127, 127}, {255, 255, 255}, {100, 80, 60}, {511, 511, 1}, {1023, 1023, 1}};
    const char *bcs[] = {"DDDDDD", "NNNNNN", "PPPPPP", "DNPPNN"};
    for (const DeviceDesc &d : devices)
        for (const auto &z : sizes)
            for (const char *bc : bcs) {
                const bool is3d = z.nz > 1;
                pgpu_status st;
                // Jacobi and RBGS: u's second array, plus little.
                for (unsigned m : {PGPU_JACOBI, PGPU_RBGS})
                    for (unsigned p : {PGPU_FLOAT, PGPU_DOUBLE}) {
                        const pgpu_config c = make(z.nx, z.ny, z.nz, bc, m | p);
                        const size_t b = sized(c, d, &st);
                        const double one = elems(c) * (p == PGPU_FLOAT ? 4 : 8);
                        snprintf(what, sizeof what, "%s %lldx%lldx%lld %s %s %s", d.name, (long long)z.nx,
                                 (long long)z.ny, (long long)z.nz, bc, t_method_name(m), t_precision_name(p));
                        CHECK(st == PGPU_SUCCESS && b >= one && b <= one * 1.04, "%-44s %zu bytes = %.4f arrays",
                              what, b, b / one);
                    }
                // Multigrid: the ratio to one array; float half of double;
                // mixed = float + two float arrays.
                for (unsigned m : {PGPU_VCYCLE, PGPU_FMG}) {
                    const pgpu_config cd = make(z.nx, z.ny, z.nz, bc, m | PGPU_DOUBLE);
                    const pgpu_config cf = make(z.nx, z.ny, z.nz, bc, m | PGPU_FLOAT);
                    const pgpu_config cm = make(z.nx, z.ny, z.nz, bc, m | PGPU_MIXED);
                    pgpu_status sd, sf, sm;
                    const size_t bd = sized(cd, d, &sd), bf = sized(cf, d, &sf), bm = sized(cm, d, &sm);
                    const double one = elems(cd) * 8;
                    const bool cube = z.nx == z.ny && (!is3d || z.ny == z.nz);
                    const double lo = is3d ? 1.4 : 2.1, hi = is3d ? 1.65 : 2.5;
                    snprintf(what, sizeof what, "%s %lldx%lldx%lld %s %s", d.name, (long long)z.nx, (long long)z.ny,
                             (long long)z.nz, bc, t_method_name(m));
                    CHECK(sd == PGPU_SUCCESS && sf == PGPU_SUCCESS && sm == PGPU_SUCCESS,
                          "%-44s sized in double, float, mixed", what);
                    CHECK(!cube || (bd >= lo * one && bd <= hi * one), "%-44s double %zu bytes = %.3f arrays%s",
                          what, bd, bd / one, cube ? "" : " (not a cube: no bound)");
                    CHECK(bf >= 0.49 * bd && bf <= 0.52 * bd, "%-44s float %zu = %.4f of double", what, bf,
                          (double)bf / (double)bd);
                    const double two = 2 * elems(cd) * 4;
                    CHECK(bm >= bf + two && bm <= bf + 1.01 * two, "%-44s mixed %zu = float + %.4f float arrays",
                          what, bm, (double)(bm - bf) / (two / 2));
                    CHECK(sized(cd, d, &st) == bd, "%-44s the same size twice", what);
                }
            }
    // The FFT's all-Dirichlet row route (3D, n + 1 a product of primes <= 19)
    // needs no cuFFT: two spectra of nx*ny*nz values.
    for (const DeviceDesc &d : devices)
        for (unsigned p : {PGPU_FLOAT, PGPU_DOUBLE}) {
            const pgpu_config c = make(63, 47, 31, "DDDDDD", PGPU_FFT | p);
            pgpu_status st;
            const size_t b = sized(c, d, &st);
            const double two = 2.0 * 63 * 47 * 31 * (p == PGPU_FLOAT ? 4 : 8);
            CHECK(st == PGPU_SUCCESS && b >= two && b <= 1.03 * two, "%s 63x47x31 Dirichlet FFT %s: %zu bytes = %.4f x 2N",
                  d.name, t_precision_name(p), b, b / two);
        }
    // Refused as pgpu_create refuses it.
    {
        char msg[pgpu::ERR_LEN];
        pgpu_status st;
        const size_t b = sized(make(16, 16, 16, "DDDDDD", PGPU_JACOBI | PGPU_MIXED), devices[0], &st, msg);
        CHECK(st == PGPU_ERROR_UNSUPPORTED && b == 0 && strstr(msg, "MIXED"),
              "Jacobi in PGPU_MIXED: %s, \"%s\"", pgpu_status_string(st), msg);
        const size_t b2 = sized(make(0, 16, 16, "", PGPU_FMG), devices[0], &st, msg);
        CHECK(st == PGPU_ERROR_INVALID_ARGUMENT && b2 == 0, "nx = 0: %s, \"%s\"", pgpu_status_string(st), msg);
    }
    return t_finish("test_workspace_host");
}

} // namespace wb_workspace_host
