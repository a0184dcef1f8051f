#!/bin/sh
# The wrapper of the memcheck, racecheck, initcheck and synccheck test setups
# where compute-sanitizer is not installed: every test reports "skipped"
# (exit 77) instead of running without the tool it was asked to run under.
echo "compute-sanitizer not found (it comes with the CUDA Toolkit, next to nvcc): skipped: $*"
exit 77
