#!/bin/sh
# bench_strategies.sh -- kforge's search strategies on recorded spaces, no GPU
# (make bench-strategies).
#
# The spaces: benchmark_hub's convolution and dedispersion (MIT,
# github.com/AutoTuningAssociation/benchmark_hub, cachefiles/<kernel>_milo/
# <GPU>.json.gz: Kernel Tuner cache files, every configuration of the space
# measured once), on the NVIDIA A100, A4000 and A6000 and, for evaluation
# only (no strategy's settings were chosen on them), the AMD MI250X, W6600
# and W7800.  Every strategy searches each space at budgets of 1, 2, 5, 10
# and 20% of it, with SEEDS seeds; tools/strat_bench.c prints the mean
# optimum/best per budget and the score against random sampling (Willemsen
# et al.), and this script draws the curves.
#
#   HUB=DIR        the benchmark_hub files: a git repository (bare or not) or
#                  a folder holding <kernel>_<GPU>.json.gz; default: a mirror at
#                  /work/.mirror/AutoTuningAssociation+benchmark_hub/repo, else
#                  `git clone --depth 1` of it into OUT (network)
#   SEEDS=20       seeds per cell
#   BUDGETS=1,2,5,10,20
#   STRATEGIES=    a comma list (default: every strategy but exhaustive)
#   SPACES=        "convolution dedispersion"
#   GPUS=          "A100 A4000 A6000 MI250X W6600 W7800"
#   OUT=DIR        where the table (table.txt), the CSV and the curves go
#                  (default build/bench-strategies)
#   STRAT_BENCH=   the strat_bench binary (make builds build/strat_bench)
#
# Needs: gzip; gnuplot for the curves (skipped, said so, without it).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
OUT=${OUT:-$ROOT/build/bench-strategies}
SEEDS=${SEEDS:-20}
BUDGETS=${BUDGETS:-1,2,5,10,20}
SPACES=${SPACES:-convolution dedispersion}
GPUS=${GPUS:-A100 A4000 A6000 MI250X W6600 W7800}
STRAT_BENCH=${STRAT_BENCH:-$ROOT/build/strat_bench}
HUB=${HUB:-/work/.mirror/AutoTuningAssociation+benchmark_hub/repo}

[ -x "$STRAT_BENCH" ] || { echo "bench_strategies: $STRAT_BENCH not built (make build/strat_bench)" >&2; exit 2; }
mkdir -p "$OUT/data"

# the files: from a folder, a git repository, or a shallow clone
fetch() { # kernel gpu -> path
    f="$OUT/data/$1_$2.json.gz"
    if [ ! -s "$f" ]; then
        if [ -f "$HUB/$1_$2.json.gz" ]; then
            cp "$HUB/$1_$2.json.gz" "$f"
        elif [ -f "$HUB/cachefiles/$1_milo/$2.json.gz" ]; then
            cp "$HUB/cachefiles/$1_milo/$2.json.gz" "$f"
        elif git --git-dir="$HUB" rev-parse --verify -q HEAD >/dev/null 2>&1 ||
             git -C "$HUB" rev-parse --verify -q HEAD >/dev/null 2>&1; then
            gd=$HUB; [ -d "$HUB/.git" ] && gd=$HUB/.git
            git --git-dir="$gd" show "HEAD:cachefiles/$1_milo/$2.json.gz" > "$f.tmp" && mv "$f.tmp" "$f"
        else
            if [ ! -d "$OUT/benchmark_hub" ]; then
                echo "bench_strategies: no benchmark_hub at $HUB: cloning it into $OUT/benchmark_hub" >&2
                git clone -q --depth 1 https://github.com/AutoTuningAssociation/benchmark_hub "$OUT/benchmark_hub"
            fi
            HUB=$OUT/benchmark_hub
            cp "$HUB/cachefiles/$1_milo/$2.json.gz" "$f"
        fi
    fi
    echo "$f"
}

files=""
for k in $SPACES; do
    for g in $GPUS; do
        files="$files $(fetch "$k" "$g")"
    done
done

strat=""
[ -n "${STRATEGIES:-}" ] && strat="--strategies $STRATEGIES"
{
    echo "# make bench-strategies, $(date -u +%Y-%m-%d), SEEDS=$SEEDS BUDGETS=$BUDGETS, kforge $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "# data: benchmark_hub cachefiles (Kernel Tuner cache files); MI250X, W6600, W7800: evaluation only"
    # shellcheck disable=SC2086
    "$STRAT_BENCH" --seeds "$SEEDS" --budgets "$BUDGETS" $strat --csv "$OUT/strategies.csv" $files
} | tee "$OUT/table.txt"

# the curves: mean optimum/best against the budget, one chart per space
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "bench_strategies: gnuplot not found: no curves (the data is in $OUT/strategies.csv)" >&2
    exit 0
fi
for f in $files; do
    b=$(basename "$f")
    name=${b%.json.gz}
    names=$(awk -F, -v s="$b" 'NR > 1 && $1 == s && !seen[$2]++ {print $2}' "$OUT/strategies.csv")
    plot=""
    for s in $names; do
        awk -F, -v s="$b" -v t="$s" 'NR > 1 && $1 == s && $2 == t {print $3, $5}' "$OUT/strategies.csv" \
            > "$OUT/data/$name.$s.dat"
        plot="$plot${plot:+, }'$OUT/data/$name.$s.dat' using 1:2 with linespoints title '$s'"
    done
    awk -F, -v s="$b" 'NR > 1 && $1 == s && !seen[$3]++ {print $3, $7}' "$OUT/strategies.csv" \
        > "$OUT/data/$name.random-expected.dat"
    plot="$plot, '$OUT/data/$name.random-expected.dat' using 1:2 with lines dashtype 2 title 'random (expected)'"
    gnuplot <<EOF
set terminal pngcairo size 800,500
set output '$OUT/$name.png'
set title '$name: mean optimum/best ($SEEDS seeds)' noenhanced
set xlabel 'budget, % of the space'
set ylabel 'optimum / best found'
set logscale x
set key bottom right
set grid
plot $plot
EOF
done
echo "bench_strategies: curves in $OUT/*.png, data in $OUT/strategies.csv, table in $OUT/table.txt"
