/* results.h -- the head of the Markdown page a bench run writes with
 * --results FILE (bench.c, bench_dist.c): a title, where the page comes
 * from, the date, the command line (without --results and --csv and their
 * files) and the library's version.  The caller writes the rest. */
#ifndef PGPU_BENCH_RESULTS_H
#define PGPU_BENCH_RESULTS_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "poisson_gpu.h"

/* The page, opened and headed; NULL (with a message on stderr) where it
 * cannot be opened.  prog: the program's name, which is also its source's. */
static FILE *results_open(const char *path, const char *title, const char *prog, int argc, char **argv)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s\n", prog, path);
        return NULL;
    }
    time_t now = time(NULL);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
    fprintf(f, "# %s\n\nWritten by `bench/%s.c` (bench/gpu-check.sh runs the bench), not by hand: every "
               "performance figure the documentation quotes comes from a page like this one.\n\n",
            title, prog);
    fprintf(f, "- run: %s, `%s", day, prog);
    for (int i = 1; i < argc; i++) {
        const int file_opt = !strcmp(argv[i], "--results") || !strcmp(argv[i], "--csv");
        if (file_opt) {
            ++i; /* and its file */
            continue;
        }
        fprintf(f, " %s", argv[i]);
    }
    const int v = pgpu_version();
    fprintf(f, "`\n- poisson_gpu %d.%d.%d\n", v / 10000, v / 100 % 100, v % 100);
    return f;
}

#endif
