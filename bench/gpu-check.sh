#!/usr/bin/env bash
# gpu-check.sh OUTDIR -- the whole check on a machine with a GPU:
#   build (release) -> test suites cpu + gpu -> compute-sanitizer memcheck and
#   racecheck on suite sanitize -> bench.
# NCCL is found as meson.build says (nccl=auto: e.g. the Python package
# nvidia.nccl of python3); then suite gpu holds the distributed test too,
# and the setup line of the summary says where NCCL came from.
# Every step's log goes to OUTDIR; the end of the output is a summary (one
# line per step) and the bench table.  Exits 1 if any step failed.
#
# Environment (all optional):
#   BUILD_DIR   build folder, relative to the repository root (build-gpu)
#   CUDA_ARCH   compute capability to build for (90)
#   T_BUILD, T_TEST, T_SANITIZER, T_BENCH   per-step time limits in seconds
#   GPU_CHECK_DEADLINE  seconds for the whole script (540; 0: none): later
#               steps keep a reserve (the bench 90 s) and are skipped when
#               no time is left, so the summary is always printed
#   GPU_CHECK_SKIP  steps not to run (of test memcheck racecheck bench),
#               e.g. 'test memcheck bench': a second run on the machine
#               that keeps the first one's build gives racecheck (about
#               150 s for the sanitize suite) the whole deadline
set -u

if [ $# -ne 1 ]; then
    echo "usage: bench/gpu-check.sh OUTDIR" >&2
    exit 2
fi
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2

BUILD=${BUILD_DIR:-build-gpu}
ARCH=${CUDA_ARCH:-90}
T_BUILD=${T_BUILD:-420}
T_TEST=${T_TEST:-300}
T_SANITIZER=${T_SANITIZER:-240}
T_BENCH=${T_BENCH:-300}
DEADLINE=${GPU_CHECK_DEADLINE:-540}
SKIP_STEPS=" ${GPU_CHECK_SKIP:-} "

# nvcc where meson can find it: PATH, else CUDA_PATH / CUDA_HOME / the default.
if ! command -v nvcc >/dev/null 2>&1; then
    for d in "${CUDA_PATH:-}" "${CUDA_HOME:-}" /usr/local/cuda; do
        if [ -n "$d" ] && [ -x "$d/bin/nvcc" ]; then
            PATH="$d/bin:$PATH"
            export PATH
            break
        fi
    done
fi

# The name of the architecture option, as meson_options.txt spells it.
ARCH_OPT=$(sed -n "s/^option('\([A-Za-z0-9_]*arch[A-Za-z0-9_]*\)'.*/\1/p" \
    meson_options.txt meson.options 2>/dev/null | head -n 1)
ARCH_OPT=${ARCH_OPT:-cuda_arch}

HAVE_TIMEOUT=0
command -v timeout >/dev/null 2>&1 && HAVE_TIMEOUT=1

NAMES=()
STATES=()
SECS=()
LOGS=()
FAILED=()

# step NAME LIMIT_S LOG CMD...: runs CMD (a shell function runs without a
# time limit), output to LOG; records and prints the outcome.
step() {
    local name=$1 limit=$2 log=$3
    shift 3
    local t0=$SECONDS rc state
    printf '== %-10s ... ' "$name"
    if declare -F "$1" >/dev/null || [ "$HAVE_TIMEOUT" = 0 ]; then
        "$@" >"$log" 2>&1
        rc=$?
    else
        timeout --kill-after=15 "$limit" "$@" >"$log" 2>&1
        rc=$?
    fi
    if [ "$rc" = 0 ]; then
        state=ok
    elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        state="TIMEOUT(${limit}s)"
        FAILED+=("$name")
    else
        state="FAIL(rc=$rc)"
        FAILED+=("$name")
    fi
    NAMES+=("$name")
    STATES+=("$state")
    SECS+=("$((SECONDS - t0))")
    LOGS+=("$log")
    printf '%s %ss\n' "$state" "$((SECONDS - t0))"
    return "$rc"
}

# limit DEFAULT RESERVE: the step's time limit, leaving RESERVE seconds for
# the steps after it before the deadline (0 or less: no time left).
limit() {
    if [ "$DEADLINE" -le 0 ]; then
        echo "$1"
        return
    fi
    local left=$((DEADLINE - SECONDS - $2))
    if [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}

# run_or_skip NAME DEFAULT RESERVE LOG CMD...: step, unless GPU_CHECK_SKIP
# names it (not a failure) or under 15 s are left.
run_or_skip() {
    local name=$1 lim
    case "$SKIP_STEPS" in
    *" $name "*)
        skip "$name" "GPU_CHECK_SKIP"
        return 1
        ;;
    esac
    lim=$(limit "$2" "$3")
    shift 3
    if [ "$lim" -lt 15 ]; then
        skip "$name" "deadline ${DEADLINE}s"
        FAILED+=("$name")
        return 1
    fi
    step "$name" "$lim" "$@"
}

skip() {
    NAMES+=("$1")
    STATES+=("skipped")
    SECS+=("0")
    LOGS+=("")
    printf '== %-10s ... skipped (%s)\n' "$1" "$2"
}

gpu_info() {
    nvidia-smi || return 1
    echo
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
        --format=csv
}

configure() {
    if [ -f "$BUILD/meson-private/coredata.dat" ]; then
        meson setup --reconfigure "$BUILD" --buildtype=release "-D$ARCH_OPT=$ARCH" ||
            meson setup --wipe "$BUILD" --buildtype=release "-D$ARCH_OPT=$ARCH"
    else
        meson setup "$BUILD" --buildtype=release "-D$ARCH_OPT=$ARCH"
    fi
}

# 'Ok 12, Fail 0, Skipped 3, Timeout 0' from a meson test log.
test_counts() {
    awk 'match($0, /^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout):[ \t]+[0-9]+/) {
             name = $0; sub(/:.*/, "", name); n = $NF
             if (n != 0 || name == "Ok" || name == "Fail" || name == "Skipped") {
                 printf "%s%s %s", sep, name, n; sep = ", "
             }
         }' "$1" 2>/dev/null
}

# The lines of failed tests (at most 15).
test_failures() {
    grep -E '^ *[0-9]+/[0-9]+ .*[[:space:]](FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS|INTERRUPT)([[:space:]]|$)' "$1" \
        2>/dev/null | head -n 15 | sed 's/^ */      /'
}

{
    echo "gpu-check: $(date -u '+%Y-%m-%d %H:%M:%S UTC') in $ROOT, out $OUT"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo none)$(
        [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && echo ' (dirty)')"
    echo "meson $(meson --version 2>/dev/null || echo missing), ninja $(ninja --version 2>/dev/null || echo missing), -D$ARCH_OPT=$ARCH"
} | tee "$OUT/env.txt"
(command -v nvcc && nvcc --version) >"$OUT/nvcc.txt" 2>&1

step gpu-info 60 "$OUT/nvidia-smi.txt" gpu_info
step setup 180 "$OUT/setup.log" configure
setup_rc=$?
if [ "$setup_rc" = 0 ]; then
    run_or_skip build "$T_BUILD" 180 "$OUT/build.log" ninja -C "$BUILD"
    build_rc=$?
else
    skip build "setup failed"
    build_rc=1
fi

if [ "$build_rc" = 0 ]; then
    run_or_skip test "$T_TEST" 150 "$OUT/test.log" \
        meson test -C "$BUILD" --suite cpu --suite gpu --print-errorlogs
    cp "$BUILD/meson-logs/testlog.txt" "$OUT/testlog.txt" 2>/dev/null
    run_or_skip memcheck "$T_SANITIZER" 120 "$OUT/memcheck.log" \
        meson test -C "$BUILD" --setup memcheck --suite sanitize --print-errorlogs
    cp "$BUILD/meson-logs/testlog-memcheck.txt" "$OUT/testlog-memcheck.txt" 2>/dev/null
    run_or_skip racecheck "$T_SANITIZER" 90 "$OUT/racecheck.log" \
        meson test -C "$BUILD" --setup racecheck --suite sanitize --print-errorlogs
    cp "$BUILD/meson-logs/testlog-racecheck.txt" "$OUT/testlog-racecheck.txt" 2>/dev/null
    run_or_skip bench "$T_BENCH" 5 "$OUT/bench.txt" "$BUILD/bench/bench" --csv "$OUT/bench.csv" \
        --results "$OUT/results.md"
else
    for s in test memcheck racecheck bench; do
        skip "$s" "no build"
    done
fi

# ---- summary ----------------------------------------------------------------
echo
echo "==== gpu-check summary ($(head -n 2 "$OUT/env.txt" | tail -n 1)) ===="
for i in "${!NAMES[@]}"; do
    name=${NAMES[$i]}
    log=${LOGS[$i]}
    extra=""
    case $name in
    gpu-info)
        extra=$(sed -n '/^name, driver_version/{n;p;}' "$log" 2>/dev/null | head -n 1) ;;
    setup)
        extra=$(grep -m 1 -o 'distributed mode (NCCL): .*' "$log" 2>/dev/null | cut -c1-160) ;;
    test | memcheck | racecheck)
        extra=$(test_counts "$log") ;;
    bench)
        [ -f "$OUT/bench.csv" ] && extra="$(($(wc -l <"$OUT/bench.csv") - 1)) rows" ;;
    esac
    printf '%-10s %-16s %5ss  %s\n' "$name" "${STATES[$i]}" "${SECS[$i]}" "$extra"
    if [ "${STATES[$i]}" != ok ] && [ -n "$log" ] && [ -f "$log" ]; then
        case $name in
        test | memcheck | racecheck)
            test_failures "$log"
            grep -m 3 -E 'Test setup .*not found|Unknown test setup|No tests defined|No suitable tests' "$log" |
                sed 's/^/      /'
            # the failed checks themselves and the seeds that replay them
            # (the summary may be all of the output that comes back)
            grep -m 12 -E '^FAIL  |random seed|PGPU_TEST_SEED' "$log" | cut -c1-300 | sed 's/^/      /' ;;
        build | setup)
            grep -E '(^|[[:space:]])(error|ERROR)[: ]|FAILED:|undefined reference' "$log" |
                head -n 20 | cut -c1-200 | sed 's/^/      /' ;;
        *)
            tail -n 8 "$log" | cut -c1-200 | sed 's/^/      /' ;;
        esac
    fi
done
echo "logs: $OUT"

if [ -s "$OUT/bench.txt" ]; then
    echo
    echo "==== bench ===="
    tail -n 100 "$OUT/bench.txt" | cut -c1-240
fi

echo
if [ ${#FAILED[@]} -gt 0 ]; then
    echo "gpu-check: FAILED: ${FAILED[*]}"
    exit 1
fi
echo "gpu-check: all steps passed"
exit 0
