#!/bin/sh
# tune_bench.sh -- how quickly each tuning strategy finds the optimum of
# configs/tune-reduce.json on this GPU (issue 4).  For the GPU machine:
#
#   make && sh tools/tune_bench.sh [OUTDIR]
#
#   1. an exhaustive sweep of the space at n = 2^24 with a fresh cubin cache:
#      its wall time (NVRTC compiles everything);
#   2. the same sweep again with the warm cache, --no-resume, into another
#      results file: its wall time (measurement only);
#   3. each strategy with seeds 1..10 in --simulate mode on the sweep of 1:
#      the evaluations it needs to get within 2% of the sweep's optimum
#      (median over the seeds, and as % of the space) and the wall time that
#      many evaluations take at the sweep's rate (warm and cold cache).
#
# Prints a markdown table on stdout; the files stay in OUTDIR.
# Environment: KFORGE (default build/kforge), CONFIG (default
# configs/tune-reduce.json), SEEDS (default "1 2 ... 10"), SIZE (default 2^24).
set -eu
KFORGE=${KFORGE:-build/kforge}
CONFIG=${CONFIG:-configs/tune-reduce.json}
SEEDS=${SEEDS:-"1 2 3 4 5 6 7 8 9 10"}
SIZE=${SIZE:-2^24}
OUT=${1:-$(mktemp -d /tmp/kforge-tune-bench.XXXXXX)}
mkdir -p "$OUT"
common="--set n=$SIZE --no-db --quiet --format jsonl"

now() { date +%s.%N; }
# a numeric field of the jsonl summary line
field() { sed -n "s/.*\"event\": \"summary\".*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1"; }
best_of() { sed -n 's/.*"best": {"objective_ms": \([0-9.e+-]*\).*/\1/p' "$1"; }
label_of() { sed -n 's/.*"best": {[^}]*"label": "\([^"]*\)".*/\1/p' "$1"; }
# first evaluation whose best is within 2% of $2 (from the improvement lines of $1), or NA
evals_to() {
  awk -v opt="$2" '
    /"event": "improvement"/ && !done {
      e = $0; sub(/.*"evaluation": /, "", e); sub(/,.*/, "", e)
      o = $0; sub(/.*"objective_ms": /, "", o); sub(/,.*/, "", o)
      if (o + 0 <= opt * 1.02) { print e; done = 1 }
    }
    END { if (!done) print "NA" }' "$1"
}
# median of the numbers on stdin (NA counts as the whole space: $1)
median() { sed "s/NA/$1/" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minmax() { sed "s/NA/$1/" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }
secs() { awk -v t="$1" 'BEGIN { if (t >= 120) printf "%.1f min", t / 60; else printf "%.1f s", t }'; }

echo "kforge tune benchmark: $CONFIG at n = $SIZE, files in $OUT" >&2
"$KFORGE" info >&2 || { echo "tune_bench.sh: no usable GPU" >&2; exit 3; }

# 1. cold cache
rm -rf "$OUT/cache" "$OUT/sweep.jsonl" "$OUT/sweep-warm.jsonl"
t0=$(now)
# shellcheck disable=SC2086
"$KFORGE" tune "$CONFIG" $common --strategy exhaustive --cache-dir "$OUT/cache" --results "$OUT/sweep.jsonl" \
  > "$OUT/sweep.out"
t1=$(now)
cold=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
# 2. warm cache
# shellcheck disable=SC2086
"$KFORGE" tune "$CONFIG" $common --strategy exhaustive --cache-dir "$OUT/cache" --results "$OUT/sweep-warm.jsonl" \
  --no-resume > "$OUT/sweep-warm.out"
t2=$(now)
warm=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')

N=$(field "$OUT/sweep.out" candidates)
failed=$(field "$OUT/sweep.out" failed_candidates)
opt=$(best_of "$OUT/sweep.out")
opt_warm=$(best_of "$OUT/sweep-warm.out")
lab=$(label_of "$OUT/sweep.out")
lab_warm=$(label_of "$OUT/sweep-warm.out")

echo "## kforge tune: strategies on $CONFIG, n = $SIZE"
echo
echo "- device: $(sed -n 's/.*"device": "\([^"]*\)".*/\1/p' "$OUT/sweep.out")"
echo "- space: $N candidates ($failed fail to compile, launch or verify)"
echo "- exhaustive sweep, cold cubin cache: $(secs "$cold"); warm cache (--no-resume): $(secs "$warm")"
echo "- optimum: $opt ms, $lab (the warm sweep's: $opt_warm ms, $lab_warm)"
echo "- evaluations to get within 2% of the optimum, over seeds $(echo "$SEEDS" | tr ' ' ','); the wall times"
echo "  are those evaluations at the sweeps' average rate (a search also pays for its compile misses,"
echo "  so the cold-cache column is the realistic one for a first tuning run)"
echo
echo "| strategy | evaluations to 2% (median) | % of space | range over seeds | est. wall, warm cache | est. wall, cold cache |"
echo "|---|---:|---:|---:|---:|---:|"
for s in exhaustive random local anneal genetic; do
  : > "$OUT/evals-$s.txt"
  for seed in $SEEDS; do
    # shellcheck disable=SC2086
    "$KFORGE" tune "$CONFIG" $common --simulate "$OUT/sweep.jsonl" --strategy $s --seed "$seed" --budget "$N" \
      > "$OUT/sim-$s-$seed.jsonl"
    evals_to "$OUT/sim-$s-$seed.jsonl" "$opt" >> "$OUT/evals-$s.txt"
    [ $s = exhaustive ] && break # the same every seed
  done
  med=$(median "$N" < "$OUT/evals-$s.txt")
  range=$(minmax "$N" < "$OUT/evals-$s.txt")
  awk -v s="$s" -v m="$med" -v r="$range" -v n="$N" -v w="$warm" -v c="$cold" 'BEGIN {
    ew = m / n * w; ec = m / n * c
    printf "| %s | %g | %.1f%% | %s | %s | %s |\n", s, m, 100 * m / n, r,
      (ew >= 120 ? sprintf("%.1f min", ew / 60) : sprintf("%.1f s", ew)),
      (ec >= 120 ? sprintf("%.1f min", ec / 60) : sprintf("%.1f s", ec)) }'
done
