/* whitebox.cu -- the one build of the tests that reach the implementation's
 * internals (whitebox.h says how a unit is written).
 *
 *     test_whitebox NAME [args]     runs the unit NAME (exit status: its own,
 *                                   77 where it needs a device and has none)
 *     test_whitebox                 lists the units
 *
 * poisson_gpu.cu is compiled here once for all of them, with the library's
 * flags, instead of once per test. */
#include "whitebox.h"

#include "test_workspace_host.cu"
#include "test_dist_plan_host.cu"
#include "test_mask_plan_host.cu"
#include "multigrid/test_transfer_host.cu"
#include "multigrid/test_transfer.cu"
#include "multigrid/test_odi.cu"
#include "multigrid/test_odi_host.cu"
#include "multigrid/test_smoother.cu"
#include "multigrid/test_routes.cu"
#include "fft/test_fft_chunks.cu"

namespace {
struct Unit {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *what;
};
const Unit units[] = {
    {"workspace_host", wb_workspace_host::run, "the sizing of pgpu_workspace_size, devices described by hand"},
    {"dist_plan_host", wb_dist_plan_host::run, "the distributed multigrid plan of every rank, 2 to 8 ranks"},
    {"mask_plan_host", wb_mask_plan_host::run, "the coarse build's path tables of masks and coefficients"},
    {"mg_transfer_host", wb_mg_transfer_host::run, "the coarsening tables against the reference"},
    {"mg_transfer", wb_mg_transfer::run, "the transfer kernels against the host (device)"},
    {"mg_odi", wb_mg_odi::run, "the operator-dependent transfers against the host (device)"},
    {"odi_host", wb_odi_host::run, "where the operator-dependent transfers may run: the node map of 1D hierarchies"},
    {"mg_smoother", wb_mg_smoother::run, "red-black smoothing two iterations a pass (device; --short)"},
    {"mg_routes", wb_routes::run, "every route to a level's residual and its restriction, bit for bit (device)"},
    {"fft_chunks", wb_fft_chunks::run, "the FFT's lines in chunks against one chunk (device)"},
};
} // namespace

int main(int argc, char **argv)
{
    if (argc >= 2)
        for (const Unit &u : units)
            if (strcmp(argv[1], u.name) == 0) return u.run(argc - 1, argv + 1);
    fprintf(stderr, "usage: %s NAME [args]; the units:\n", argv[0]);
    for (const Unit &u : units) fprintf(stderr, "  %-18s %s\n", u.name, u.what);
    return 2;
}
