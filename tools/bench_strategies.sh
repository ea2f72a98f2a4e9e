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
#   H100=          kforge's own sweeps recorded on the H100 (tools/hub/h100,
#                  every candidate to the end): "ktconv transpose conv3312" by
#                  default, converted to T4 (python -m kforge.t4) for strat_bench;
#                  H100=none leaves them out.  The 11-size reduction and
#                  tune-rows files replay with kforge tune --simulate only.
#   KT=DIR         Kernel Tuner's source (a folder holding the kernel_tuner
#                  package and python-constraint; default $KERNEL_TUNER_PATH):
#                  tools/kt_strategies.py runs its strategies on the same files
#                  (the H100 ones as the cache file Kernel Tuner would have
#                  written, the configurations kforge skipped as failed)
#                  in its simulation mode and the table ends with kforge's
#                  default beside Kernel Tuner's best per budget; KT=none, or
#                  no Kernel Tuner importable, skips it (said so)
#   KT_SEEDS=5     seeds per cell for Kernel Tuner (its simulation is Python)
#   KT_STRATEGIES= a comma list (default: tools/kt_strategies.py's ten)
#   KT_JOBS=2      processes for Kernel Tuner's runs
#   KT_REUSE=1     keep OUT/kt.txt and OUT/kt.csv of an earlier run (same
#                  files, seeds and budgets) instead of running Kernel Tuner again
#   PYTHON=        the Python with numpy, scipy (and scikit-learn for
#                  bayes_opt): default /usr/bin/python3 if it is there
#
# The table ends with the real target's lines, measured on a GPU by make
# bench-real and kept in tools/hub/real_target.txt.
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

# kforge's own spaces recorded on the H100, as T4 (strat_bench reads Kernel Tuner and T4 files)
h100=""
PY_T4=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}
if [ "${H100:-}" != none ]; then
    mkdir -p "$OUT/h100"
    for n in ${H100:-ktconv transpose conv3312}; do
        src=$HERE/hub/h100/$n.jsonl.gz
        [ -f "$src" ] || { echo "bench_strategies: no $src" >&2; exit 2; }
        if [ ! -s "$OUT/h100/h100_$n.t4.json" ] || [ "$src" -nt "$OUT/h100/h100_$n.t4.json" ]; then
            gzip -dc "$src" > "$OUT/h100/$n.jsonl"
            PYTHONPATH=$ROOT/python "$PY_T4" -m kforge.t4 "$OUT/h100/$n.jsonl" -o "$OUT/h100/h100_$n.t4.json"
            rm -f "$OUT/h100/$n.jsonl"
        fi
        h100="$h100 $OUT/h100/h100_$n.t4.json"
    done
fi

strat=""
[ -n "${STRATEGIES:-}" ] && strat="--strategies $STRATEGIES"
{
    echo "# make bench-strategies, $(date -u +%Y-%m-%d), SEEDS=$SEEDS BUDGETS=$BUDGETS, kforge $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "# data: benchmark_hub cachefiles (Kernel Tuner cache files); MI250X, W6600, W7800: evaluation only;"
    echo "# h100_*: kforge's own sweeps recorded on the H100 (tools/hub/h100/README.md)"
    # shellcheck disable=SC2086
    "$STRAT_BENCH" --seeds "$SEEDS" --budgets "$BUDGETS" $strat --csv "$OUT/strategies.csv" $files $h100
} | tee "$OUT/table.txt"

# Kernel Tuner's strategies on the same files, and the two side by side
KT=${KT:-${KERNEL_TUNER_PATH:-}}
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}
if [ "${KT_REUSE:-0}" = 1 ] && [ -s "$OUT/kt.csv" ] && [ -s "$OUT/kt.txt" ]; then
    echo "bench_strategies: Kernel Tuner's rows reused from $OUT/kt.txt (KT_REUSE=1)" >&2
    cat "$OUT/kt.txt" >> "$OUT/table.txt"
elif [ "$KT" != none ]; then
    rm -f "$OUT/kt.csv"
    pairs=""
    for f in $files; do
        b=$(basename "$f")
        pairs="$pairs $f=$HERE/hub/${b%%_*}_milo.json"
    done
    # kforge's H100 spaces: the T4 file with its config's restrictions
    for f in $h100; do
        case $(basename "$f") in
            h100_ktconv.t4.json) pairs="$pairs $f=$HERE/hub/h100/ktconv.json" ;;
            h100_transpose.t4.json) pairs="$pairs $f=$ROOT/configs/custom/transpose.json" ;;
            h100_conv3312.t4.json) pairs="$pairs $f=$ROOT/configs/custom/convolution.json" ;;
        esac
    done
    ktstrat=""
    [ -n "${KT_STRATEGIES:-}" ] && ktstrat="--strategies $KT_STRATEGIES"
    # shellcheck disable=SC2086
    ${KT:+env KERNEL_TUNER_PATH="$KT"} "$PYTHON" "$HERE/kt_strategies.py" --seeds "${KT_SEEDS:-5}" \
        --budgets "$BUDGETS" --jobs "${KT_JOBS:-2}" $ktstrat --csv "$OUT/kt.csv" $pairs > "$OUT/kt.txt.tmp"
    mv "$OUT/kt.txt.tmp" "$OUT/kt.txt"
    cat "$OUT/kt.txt"
    cat "$OUT/kt.txt" >> "$OUT/table.txt"
else
    rm -f "$OUT/kt.csv"
fi
if [ -s "$OUT/kt.csv" ]; then
    {
        echo
        echo "kforge's default (model) beside Kernel Tuner's best strategy per budget: mean optimum/best, score against random"
        echo "(kforge: $SEEDS seeds; Kernel Tuner: ${KT_SEEDS:-5} seeds; random: expected)"
        awk -F, '
            FNR == 1 { next }
            FILENAME ~ /kt.csv$/ { k = $1 SUBSEP $3
                if (!(k in kr) || $5 > kr[k]) { kr[k] = $5; kn[k] = $2 }
                if (!(k in ks) || $8 > ks[k]) { ks[k] = $8; ksn[k] = $2 }
                next }
            $2 == "model" { k = $1 SUBSEP $3; mr[k] = $5; ms[k] = $8; rr[k] = $7
                if (!seen[$1]++) order[++n] = $1; if (!bs[$3]++) pct[++np] = $3 }
            END {
                for (i = 1; i <= n; i++) {
                    printf "\n%s\n  %-6s %8s %8s  %-28s %-28s %8s\n", order[i], "budget", "model", "score",
                        "KT best optimum/best", "KT best score", "random"
                    for (j = 1; j <= np; j++) {
                        k = order[i] SUBSEP pct[j]
                        printf "  %5s%% %8.3f %8.3f  %-28s %-28s %8.3f\n", pct[j], mr[k], ms[k],
                            (k in kr) ? sprintf("%.3f %s", kr[k], kn[k]) : "-",
                            (k in ks) ? sprintf("%.3f %s", ks[k], ksn[k]) : "-", rr[k]
                    }
                }
            }' "$OUT/strategies.csv" "$OUT/kt.csv"
    } | tee -a "$OUT/table.txt"
fi

# the real target (issue 36) needs a GPU: the lines make bench-real
# (tools/real_target.sh) printed there, kept in tools/hub/real_target.txt
{
    echo
    if [ -f "$HERE/hub/real_target.txt" ]; then
        echo "The real target, measured on a GPU (the default search --time 15, truly cold, against the exhaustive optimum; tools/hub/real_target.txt):"
        grep '^real' "$HERE/hub/real_target.txt"
    else
        echo "The real target (a GPU): not recorded yet; make bench-real KT=DIR prints its lines (tools/real_target.sh), kept in tools/hub/real_target.txt"
    fi
} | tee -a "$OUT/table.txt"

# the curves: mean optimum/best against the budget, one chart per space
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "bench_strategies: gnuplot not found: no curves (the data is in $OUT/strategies.csv)" >&2
    exit 0
fi
for f in $files $h100; do
    b=$(basename "$f")
    name=${b%.json.gz}
    name=${name%.t4.json}
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
