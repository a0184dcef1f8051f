#!/usr/bin/env bash
# compare.sh OUTDIR BASEDIR [REPEATS] -- this tree's bench against another
# version of the library, in one run on one GPU.  BASEDIR holds the other
# version's poisson_gpu.cu and poisson_gpu.h.  Both libraries are compiled
# with nvcc (-O3, CUDA_ARCH, default 90) and linked with this tree's
# bench/bench.c; the two benches then run alternately, REPEATS times each
# (default 2: base, new, base, new), and the table gives per row the best
# median time of each and the ratio new / base.  Logs and CSVs go to OUTDIR.
# Extra arguments for the bench (e.g. --only multigrid) go in BENCH_ARGS.
set -u
if [ $# -lt 2 ]; then
    echo "usage: bench/compare.sh OUTDIR BASEDIR [REPEATS]" >&2
    exit 2
fi
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
BASE=$(cd "$2" && pwd)
REP=${3:-2}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ARCH=${CUDA_ARCH:-90}
command -v nvcc >/dev/null 2>&1 || PATH="/usr/local/cuda/bin:$PATH"

build() { # build NAME SRCDIR: OUT/NAME/bench
    mkdir -p "$OUT/$1"
    nvcc -O3 -arch=sm_$ARCH --expt-relaxed-constexpr -I"$2" -c "$2/poisson_gpu.cu" -o "$OUT/$1/pg.o" &&
        nvcc -O2 -I"$2" -c "$ROOT/bench/bench.c" -o "$OUT/$1/bench.o" &&
        nvcc -arch=sm_$ARCH "$OUT/$1/bench.o" "$OUT/$1/pg.o" -lcufft -o "$OUT/$1/bench"
}
build base "$BASE" >"$OUT/build-base.log" 2>&1 &
pb=$!
build new "$ROOT" >"$OUT/build-new.log" 2>&1
rn=$?
wait $pb
rb=$?
if [ $rb -ne 0 ] || [ $rn -ne 0 ]; then
    echo "compare: build failed (base $rb, new $rn)"
    tail -n 20 "$OUT/build-base.log" "$OUT/build-new.log"
    exit 1
fi
for r in $(seq 1 "$REP"); do
    for v in base new; do
        # shellcheck disable=SC2086
        "$OUT/$v/bench" ${BENCH_ARGS:-} --csv "$OUT/$v-$r.csv" >"$OUT/$v-$r.txt" 2>&1 ||
            echo "compare: $v run $r failed"
    done
done
python3 - "$OUT" "$REP" <<'PY'
import csv, sys
out, rep = sys.argv[1], int(sys.argv[2])

def load(v):
    best, order = {}, []
    for r in range(1, rep + 1):
        try:
            rows = list(csv.DictReader(open(f"{out}/{v}-{r}.csv")))
        except OSError:
            continue
        for row in rows:
            key = (row["scenario"], row["grid"], row["method"], row["precision"])
            if key not in best:
                order.append(key)
                best[key] = float("nan")
            try:
                t = float(row["time_ms"])
            except ValueError:
                continue
            if t == t and not (best[key] <= t):
                best[key] = t
    return best, order

b, order = load("base")
n, _ = load("new")
worst = 0.0
print("%-10s %-12s %-8s %-7s %11s %11s %8s" % ("scenario", "grid", "method", "prec", "base ms", "new ms", "new/base"))
for key in order:
    tb, tn = b.get(key, float("nan")), n.get(key, float("nan"))
    ratio = tn / tb if tb > 0 and tn > 0 else float("nan")
    if ratio == ratio:
        worst = max(worst, ratio)
    print("%-10s %-12s %-8s %-7s %11.4g %11.4g %8.3f" % (key + (tb, tn, ratio)))
print("largest ratio new/base: %.3f" % worst)
PY
