#!/usr/bin/env python3
"""How many compiles of poisson_gpu.cu a build makes.

    count_compiles.py BUILD_DIR SOURCE_ROOT

Reads the build's commands (ninja -t commands) and counts those whose source
file is poisson_gpu.cu or includes it (through #include "..." lines,
followed from file to file).  Prints each and the count.
"""
import os
import re
import shlex
import subprocess
import sys

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def reaches(path, target, seen):
    path = os.path.realpath(path)
    if path == target:
        return True
    if path in seen or not os.path.isfile(path):
        return False
    seen.add(path)
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return False
    return any(reaches(os.path.join(os.path.dirname(path), inc), target, seen) for inc in INC.findall(text))


def main(build, root):
    target = os.path.realpath(os.path.join(root, "poisson_gpu.cu"))
    cmds = subprocess.run(["ninja", "-C", build, "-t", "commands"], check=True, capture_output=True,
                          text=True).stdout.splitlines()
    hits = []
    for line in cmds:
        try:
            args = shlex.split(line)
        except ValueError:
            continue
        if not args or "nvcc" not in os.path.basename(args[0]) or "-c" not in args:
            continue
        srcs = [a for a in args if a.endswith((".cu", ".c", ".cpp")) and not a.startswith("-")]
        for s in srcs:
            p = s if os.path.isabs(s) else os.path.join(build, s)
            if reaches(p, target, set()):
                hits.append(s)
    for s in hits:
        print("compiles poisson_gpu.cu: " + s)
    print("%d compiles of poisson_gpu.cu" % len(hits))
    return len(hits)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    n = main(sys.argv[1], sys.argv[2])
    sys.exit(0 if n <= 2 else 1)
