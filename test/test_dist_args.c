/* The distributed mode's host side, without a device: the decomposition
 * (pgpu_decompose) tiles every global grid exactly, splits the slowest axis
 * (z in 3D, y in 2D) into even pieces where it can, and refuses what it
 * cannot split; pgpu_create_distributed and pgpu_get_box answer bad
 * arguments with a status (cpu suite). */
#include "poisson_gpu.h"

#include <stdio.h>
#include <string.h>

static int failures = 0, checks = 0;
#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        ++checks;                                                                                                     \
        if (!(cond)) {                                                                                                \
            ++failures;                                                                                               \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                               \
            printf(__VA_ARGS__);                                                                                      \
            printf("\n");                                                                                             \
        }                                                                                                             \
    } while (0)

/* Every rank's box for (nx, ny, nz) over `ranks`: together they tile the
 * grid, in rank order along the split axis, whole along the others. */
static void tiling(int64_t nx, int64_t ny, int64_t nz, int ranks)
{
    pgpu_config c = pgpu_config_default(nx, ny, nz);
    const int axis = nz > 1 ? 2 : 1;
    const int64_t n[3] = {nx, ny, nz};
    int64_t next = 0;
    for (int r = 0; r < ranks; ++r) {
        pgpu_box b;
        memset(&b, 0x5a, sizeof b);
        const pgpu_status st = pgpu_decompose(&c, ranks, r, &b);
        CHECK(st == PGPU_SUCCESS, "%lldx%lldx%lld over %d, rank %d: %s (%s)", (long long)nx, (long long)ny,
              (long long)nz, ranks, r, pgpu_status_string(st), pgpu_last_error(NULL));
        if (st != PGPU_SUCCESS) return;
        CHECK(b.rank == r && b.ranks == ranks, "rank %d/%d reported as %d/%d", r, ranks, b.rank, b.ranks);
        for (int a = 0; a < 3; ++a) {
            if (a == axis) continue;
            CHECK(b.lo[a] == 0 && b.n[a] == n[a], "axis %d not whole on rank %d: lo %lld n %lld", a, r,
                  (long long)b.lo[a], (long long)b.n[a]);
        }
        CHECK(b.lo[axis] == next, "rank %d starts at %lld, expected %lld", r, (long long)b.lo[axis], (long long)next);
        CHECK(b.n[axis] >= 2, "rank %d holds %lld planes", r, (long long)b.n[axis]);
        /* even pieces (red-black colours agree with the global ones), the
         * last rank takes an odd axis' extra plane */
        CHECK(b.lo[axis] % 2 == 0, "rank %d starts at an odd plane %lld", r, (long long)b.lo[axis]);
        if (r < ranks - 1) CHECK(b.n[axis] % 2 == 0, "rank %d holds an odd count %lld", r, (long long)b.n[axis]);
        next += b.n[axis];
    }
    CHECK(next == n[axis], "the boxes cover %lld of %lld planes", (long long)next, (long long)n[axis]);
}

int main(void)
{
    /* tiling over sizes that split evenly, unevenly and oddly */
    const int64_t sizes[] = {2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 64, 101, 127, 128, 257, 1000, 1023};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int ranks = 1; ranks <= 8; ++ranks) {
            if (sizes[s] < 2 * ranks) continue;
            tiling(5, 6, sizes[s], ranks);  /* 3D: z split */
            tiling(7, sizes[s], 1, ranks);  /* 2D: y split */
        }

    pgpu_config c = pgpu_config_default(16, 16, 16);
    pgpu_box b;
    /* bad arguments */
    CHECK(pgpu_decompose(NULL, 2, 0, &b) == PGPU_ERROR_INVALID_ARGUMENT, "NULL config accepted");
    CHECK(pgpu_decompose(&c, 2, 0, NULL) == PGPU_ERROR_INVALID_ARGUMENT, "NULL box accepted");
    CHECK(pgpu_decompose(&c, 0, 0, &b) == PGPU_ERROR_INVALID_ARGUMENT, "0 ranks accepted");
    CHECK(pgpu_decompose(&c, 2, 2, &b) == PGPU_ERROR_INVALID_ARGUMENT, "rank 2 of 2 accepted");
    CHECK(pgpu_decompose(&c, 2, -1, &b) == PGPU_ERROR_INVALID_ARGUMENT, "rank -1 accepted");
    /* 16 planes: at most 8 ranks */
    CHECK(pgpu_decompose(&c, 8, 7, &b) == PGPU_SUCCESS, "16 planes over 8 ranks refused");
    CHECK(pgpu_decompose(&c, 9, 0, &b) == PGPU_ERROR_INVALID_ARGUMENT, "16 planes over 9 ranks accepted");
    CHECK(strstr(pgpu_last_error(NULL), "plane") != NULL, "no reason given: '%s'", pgpu_last_error(NULL));
    /* 3 planes: one rank at most, said in the singular */
    pgpu_config thin = pgpu_config_default(16, 16, 3);
    CHECK(pgpu_decompose(&thin, 2, 0, &b) == PGPU_ERROR_INVALID_ARGUMENT, "3 planes over 2 ranks accepted");
    CHECK(strstr(pgpu_last_error(NULL), "at most 1 rank for") != NULL, "'%s'", pgpu_last_error(NULL));
    /* a bad config is refused as pgpu_create refuses it */
    pgpu_config bad = c;
    bad.hx = -1;
    CHECK(pgpu_decompose(&bad, 2, 0, &b) == PGPU_ERROR_INVALID_ARGUMENT, "negative hx accepted");
    /* what the distributed mode does not serve is refused here as well */
    pgpu_config mixed = c;
    mixed.flags = PGPU_VCYCLE | PGPU_MIXED;
    CHECK(pgpu_decompose(&mixed, 2, 0, &b) == PGPU_ERROR_UNSUPPORTED && strstr(pgpu_last_error(NULL), "MIXED"),
          "PGPU_MIXED: %s", pgpu_last_error(NULL));
    /* the local strides: 0 (packed for the local box) or at least the local row / plane */
    pgpu_config st = c;
    st.stride_y = 20;
    st.stride_z = 20 * 18;
    CHECK(pgpu_decompose(&st, 2, 1, &b) == PGPU_SUCCESS, "padded strides refused: %s", pgpu_last_error(NULL));

    /* pgpu_create_distributed: arguments first, then the build */
    pgpu_solver *s = (pgpu_solver *)&b; /* not NULL: must be cleared */
    CHECK(pgpu_create_distributed(NULL, NULL, &s) == PGPU_ERROR_INVALID_ARGUMENT && s == NULL,
          "NULL config accepted");
    CHECK(pgpu_create_distributed(&c, NULL, NULL) == PGPU_ERROR_INVALID_ARGUMENT, "NULL out accepted");
    s = (pgpu_solver *)&b;
    const pgpu_status nc = pgpu_create_distributed(&c, NULL, &s);
    CHECK(s == NULL, "out not cleared");
    if (pgpu_has_distributed()) {
        CHECK(nc == PGPU_ERROR_INVALID_ARGUMENT, "NULL communicator: %s", pgpu_status_string(nc));
    } else {
        CHECK(nc == PGPU_ERROR_UNSUPPORTED, "built without NCCL: %s", pgpu_status_string(nc));
        CHECK(strstr(pgpu_last_error(NULL), "NCCL") != NULL, "no reason given: '%s'", pgpu_last_error(NULL));
    }
    CHECK(pgpu_get_box(NULL, &b) == PGPU_ERROR_INVALID_ARGUMENT, "NULL handle accepted");

    printf("distributed mode %s; %d checks, %d failed\n", pgpu_has_distributed() ? "built" : "not built", checks,
           failures);
    return failures ? 1 : 0;
}
