#!/usr/bin/env python3
"""Writes the shipped poisson_gpu.cu from the files of src/ (SQLite's
amalgamation): src/poisson_gpu.cu first, each `#include "name"` of a file in
src/ replaced by that file (once; its dependencies first, as it includes
them), `#pragma once` dropped, and `#line` directives that name the src/
file and line, active where PGPU_SRC_LINES is defined.  They are off by
default because nvcc writes the file a #line names into its dependency list
(-MD): in a project that has no src/, every build would then see a missing
input and compile poisson_gpu.cu again.

    python3 src/amalgamate.py          write poisson_gpu.cu
    python3 src/amalgamate.py --check  exit 1 when poisson_gpu.cu differs
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, 'poisson_gpu.cu')
INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')

BANNER = """\
// poisson_gpu.cu -- GENERATED FILE, do not edit.  The implementation of
// poisson_gpu.h in one file: compile it into your project beside the header
// (README.md).  It is made by src/amalgamate.py from the files of src/ (with
// -DPGPU_SRC_LINES, #line directives name them): edit those and run the
// script; CI fails when this file differs from the script's output.

"""


def amalgamate():
    out = [BANNER]
    done = set()

    def line_is(n, rel):
        # The #endif takes line n - 1 (>= 1), so the next line is line n.
        out.append('#ifdef PGPU_SRC_LINES\n#line %d "%s"\n#endif\n' % (n - 1, rel))

    def emit(name):
        done.add(name)
        rel = 'src/' + name
        with open(os.path.join(HERE, name)) as f:
            lines = f.read().splitlines()
        for n, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if m and os.path.isfile(os.path.join(HERE, m.group(1))):
                if m.group(1) in done:
                    out.append('\n')
                else:
                    emit(m.group(1))
                    line_is(n + 1, rel)
            elif line.strip() == '#pragma once':
                line_is(n + 1, rel)
            else:
                out.append(line + '\n')

    emit('poisson_gpu.cu')
    return ''.join(out)


def main():
    text = amalgamate()
    if sys.argv[1:] == ['--check']:
        with open(OUT) as f:
            if f.read() != text:
                sys.stderr.write('poisson_gpu.cu differs from what src/amalgamate.py writes: '
                                 'edit src/ and run python3 src/amalgamate.py\n')
                return 1
        return 0
    if sys.argv[1:]:
        sys.stderr.write(__doc__)
        return 2
    with open(OUT, 'w') as f:
        f.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
