#!/bin/sh
# The `bench` run target: runs the benchmark; its "no CUDA device" (exit 77)
# is a skip, not a failure of `ninja bench`.
"$@"
rc=$?
if [ "$rc" = 77 ]; then
    echo "bench: skipped (no CUDA device)"
    exit 0
fi
exit "$rc"
