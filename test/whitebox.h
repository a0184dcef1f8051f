/* whitebox.h -- what every unit of the white-box build sees: the whole
 * implementation (poisson_gpu.cu, its internals in namespace pgpu) and the
 * test helpers.
 *
 * The tests that reach the internals (the coarsening tables, the smoothing
 * plans, the workspace sizing with a device described by hand, ...) are
 * units of one program, test_whitebox, compiled once with the library's
 * flags: whitebox.cu includes this header, then each unit; a unit is a
 * namespace of its own with a function run(argc, argv), and
 * `test_whitebox NAME [args]` runs one.  The other tests use the public API
 * and link the library.  A new white-box test is a unit file that includes
 * this header, opens its namespace and defines run(), plus a line in
 * whitebox.cu's table and a test() in meson.build. */
#ifndef PGPU_TEST_WHITEBOX_H
#define PGPU_TEST_WHITEBOX_H

#include "../poisson_gpu.cu"

extern "C" {
#include "common.h"
#include "mask_ref.h"
}
#include "multigrid/mg_reference.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#endif
