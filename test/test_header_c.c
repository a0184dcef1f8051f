/* test_header_c.c -- poisson_gpu.h compiles as strict C99 (-std=c99
 * -pedantic-errors: the build fails otherwise), is self-contained (included
 * first), and its constants and device-free functions behave as documented. */
#include "poisson_gpu.h"

#include "header_checks.h"

int main(void)
{
    return header_checks("test_header_c");
}
