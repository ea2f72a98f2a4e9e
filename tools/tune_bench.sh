#!/bin/sh
# tune_bench.sh -- how long tuning takes, and where the time goes (make bench-tune).
#
#   sh tools/tune_bench.sh [--part reduce|rows|shapes|custom|all] [--set KEY=VALUE]...
#                          [--dir DIR]
#
#   reduce  exhaustive configs/tune-reduce.json over the 11 sizes 2^10..2^30,
#           float32 sum, with a fresh (cold) cubin cache;
#   rows    exhaustive configs/tune-rows.json at 16777216 x 2 and 2 x 16777216;
#   shapes  tune-rows.json at each of make bench-rows' 14 shapes (2^26 and 2^20
#           elements, cols 4, 32, 128, 1024, 8192, 65536, 2^20), one after another;
#   custom  the transpose (8192 x 8192) and 2-D convolution examples, exhaustive,
#           first with a cold cache and then again with a warm one (--no-resume);
#   all     every part (the default).
# --set is passed to every kforge tune (e.g. --set bench.max_median_ci=0 to time
# the stopping rule without the median's confidence interval: the "before").
# For each tune it prints the wall time, the candidates per second and the
# per-shape phase table of tools/tune_phases.py (setup, verify, timing, and the
# median per-case overhead beyond the timed kernel runs).  Needs a GPU.
# environment: KFORGE (build/kforge), PYTHON (python3)
set -eu
KFORGE=${KFORGE:-build/kforge}
PYTHON=${PYTHON:-python3}
PART=all DIR=build/bench-tune SETS=
while [ $# -gt 0 ]; do
  case $1 in
    --part) PART=$2; shift 2 ;;
    --set) SETS="$SETS --set $2"; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
mkdir -p "$DIR"
now() { date +%s.%N; }
# tune NAME CACHE CONFIG ARGS...: one timed tune, its summary lines and phases
tune() {
  name=$1 cache=$2 cfg=$3; shift 3
  res="$DIR/$name.jsonl"
  rm -f "$res"
  s=$(now)
  # shellcheck disable=SC2086 # SETS is a list of options
  # NVRTC 13 also fills the CUDA compute cache (~/.nv/ComputeCache): a cold
  # tune gets a fresh one beside its fresh cubin cache, a warm one reuses both
  KFORGE_CACHE_DIR="$cache" CUDA_CACHE_PATH="$cache.nv" "$KFORGE" tune "$cfg" "$@" $SETS --no-db --no-resume -q --results "$res" \
    > "$DIR/$name.txt" 2>&1 || { echo "$name: kforge tune failed:"; tail -5 "$DIR/$name.txt"; return 1; }
  e=$(now)
  wall=$(awk "BEGIN{printf \"%.2f\", $e - $s}")
  cands=$(sed -n 's/.* \([0-9][0-9]*\) of [0-9]* candidates evaluated.*/\1/p' "$DIR/$name.txt" | head -1)
  echo "== $name: $wall s wall, ${cands:-?} candidates ($(awk "BEGIN{printf \"%.1f\", ${cands:-0} / $wall}")/s)"
  echo "   kforge tune $cfg $* $SETS"
  grep "where the time went" "$DIR/$name.txt" | sed 's/^ */   /'
  "$PYTHON" tools/tune_phases.py "$res" --wall "$wall" | sed 's/^/   /'
}
fresh() { d="$DIR/cache-$1"; rm -rf "$d" "$d.nv"; mkdir -p "$d" "$d.nv"; echo "$d"; }
case $PART in reduce|all)
  tune reduce-11 "$(fresh reduce)" configs/tune-reduce.json \
    --set 'n=["2^10","2^12","2^14","2^16","2^18","2^20","2^22","2^24","2^26","2^28","2^30"]' ;;
esac
case $PART in rows|all)
  c=$(fresh rows)
  tune rows-16777216x2 "$c" configs/tune-rows.json --set 'rows=[16777216]' --set 'cols=[2]'
  tune rows-2x16777216 "$c" configs/tune-rows.json --set 'rows=[2]' --set 'cols=[16777216]' ;;
esac
case $PART in shapes|all)
  c=$(fresh shapes)
  s0=$(now)
  for t in 26 20; do
    for cl in 2 5 7 10 13 16 20; do
      [ "$cl" -le "$t" ] || continue
      tune "shape-2^$((t - cl))x2^$cl" "$c" configs/tune-rows.json --set "rows=[$((1 << (t - cl)))]" \
        --set "cols=[$((1 << cl))]"
    done
  done
  echo "== 14 shapes: $(awk "BEGIN{printf \"%.1f\", $(now) - $s0}") s in all" ;;
esac
case $PART in custom|all)
  c=$(fresh custom)
  tune transpose-cold "$c" configs/custom/transpose.json --strategy exhaustive
  tune transpose-warm "$c" configs/custom/transpose.json --strategy exhaustive
  tune convolution-cold "$c" configs/custom/convolution.json --strategy exhaustive
  tune convolution-warm "$c" configs/custom/convolution.json --strategy exhaustive ;;
esac
