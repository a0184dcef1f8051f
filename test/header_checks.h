/* header_checks.h -- checks of poisson_gpu.h that need no device, written in
 * the common subset of C99 and C++ so that test_header_c.c and
 * test_header_cpp.cpp run the same checks after including the header in
 * their own language.  Include poisson_gpu.h before this file. */
#ifndef PGPU_TEST_HEADER_CHECKS_H
#define PGPU_TEST_HEADER_CHECKS_H

#include <stdio.h>
#include <string.h>

static int hc_checks, hc_failed;

static void hc_check(int ok, int line, const char *what)
{
    ++hc_checks;
    if (!ok)
        ++hc_failed;
    printf("%s  line %d: %s\n", ok ? "ok  " : "FAIL", line, what);
}
#define HC_CHECK(cond) hc_check((cond) ? 1 : 0, __LINE__, #cond)

static int header_checks(const char *name)
{
    /* The compiled library is the one this header describes, and the
     * version fields fit the one-integer form. */
    HC_CHECK(PGPU_VERSION_MINOR >= 0 && PGPU_VERSION_MINOR < 100 && PGPU_VERSION_PATCH >= 0 &&
             PGPU_VERSION_PATCH < 100);
    HC_CHECK(pgpu_version() == PGPU_VERSION);
    HC_CHECK(pgpu_version() / 10000 == PGPU_VERSION_MAJOR && pgpu_version() / 100 % 100 == PGPU_VERSION_MINOR);

    /* Status values are stable: user code may store or switch on them. */
    HC_CHECK(PGPU_SUCCESS == 0);
    HC_CHECK(PGPU_ERROR_INVALID_ARGUMENT == 1);
    HC_CHECK(PGPU_ERROR_UNSUPPORTED == 2);
    HC_CHECK(PGPU_ERROR_OUT_OF_MEMORY == 3);
    HC_CHECK(PGPU_ERROR_CUDA == 4);
    HC_CHECK(PGPU_ERROR_NO_DEVICE == 5);
    HC_CHECK(PGPU_ERROR_NOT_CONVERGED == 6);
    HC_CHECK(PGPU_ERROR_BREAKDOWN == 7);
    HC_CHECK(PGPU_ERROR_NONFINITE_INPUT == 8);

    /* Flag fields do not overlap, and every method and precision is one bit
     * of its field, so that two of either in one config can be told. */
    HC_CHECK((PGPU_METHOD_MASK & PGPU_PRECISION_MASK) == 0);
    {
        const unsigned m[5] = {PGPU_JACOBI, PGPU_RBGS, PGPU_VCYCLE, PGPU_FMG, PGPU_FFT};
        const unsigned p[3] = {PGPU_DOUBLE, PGPU_FLOAT, PGPU_MIXED};
        unsigned seen = 0;
        int ok = 1, a;
        for (a = 0; a < 5; ++a) {
            ok = ok && m[a] != 0 && (m[a] & (m[a] - 1)) == 0 && (m[a] & ~PGPU_METHOD_MASK) == 0 && !(seen & m[a]);
            seen |= m[a];
        }
        HC_CHECK(ok); /* methods: distinct single bits inside the method field */
        for (a = 0, ok = 1, seen = 0; a < 3; ++a) {
            ok = ok && p[a] != 0 && (p[a] & (p[a] - 1)) == 0 && (p[a] & ~PGPU_PRECISION_MASK) == 0 && !(seen & p[a]);
            seen |= p[a];
        }
        HC_CHECK(ok); /* precisions: distinct single bits inside the precision field */
    }
    HC_CHECK(((PGPU_WCYCLE | PGPU_FIXED) & (PGPU_METHOD_MASK | PGPU_PRECISION_MASK)) == 0);
    HC_CHECK((PGPU_WCYCLE & PGPU_FIXED) == 0);
    HC_CHECK(PGPU_BC_DIRICHLET == 0 && PGPU_BC_NEUMANN == 1 && PGPU_BC_PERIODIC == 2);
    HC_CHECK(PGPU_XMIN == 0 && PGPU_XMAX == 1 && PGPU_YMIN == 2 && PGPU_YMAX == 3 &&
             PGPU_ZMIN == 4 && PGPU_ZMAX == 5);

    /* Every status has its own fixed, non-empty string. */
    {
        const char *s[9];
        int st, other, ok_strings = 1, distinct = 1;
        for (st = 0; st <= 8; ++st) {
            s[st] = pgpu_status_string((pgpu_status)st);
            if (!s[st] || !s[st][0] || strcmp(s[st], "unknown status") == 0)
                ok_strings = 0;
            else
                printf("      status %d: \"%s\"\n", st, s[st]);
        }
        HC_CHECK(ok_strings);
        for (st = 0; ok_strings && st <= 8; ++st)
            for (other = 0; other < st; ++other)
                if (strcmp(s[st], s[other]) == 0)
                    distinct = 0;
        HC_CHECK(ok_strings && distinct);
    }
    HC_CHECK(strcmp(pgpu_status_string((pgpu_status)9), "unknown status") == 0);
    HC_CHECK(strcmp(pgpu_status_string((pgpu_status)-1), "unknown status") == 0);
    HC_CHECK(strcmp(pgpu_status_string((pgpu_status)1000), "unknown status") == 0);

    /* NULL handles are harmless: destroy is a no-op, queries answer. */
    pgpu_destroy(NULL);
    HC_CHECK(pgpu_last_error(NULL) != NULL);
    HC_CHECK(pgpu_workspace_bytes(NULL) == 0);
    {
        pgpu_config c;
        size_t bytes = 1;
        HC_CHECK(pgpu_get_config(NULL, &c) == PGPU_ERROR_INVALID_ARGUMENT);
        HC_CHECK(pgpu_workspace_size(NULL, &bytes) == PGPU_ERROR_INVALID_ARGUMENT && bytes == 0);
    }

    printf("%s: %d checks, %d failed%s\n", name, hc_checks, hc_failed, hc_failed ? "" : ": PASSED");
    return hc_failed ? 1 : 0;
}

#endif /* PGPU_TEST_HEADER_CHECKS_H */
