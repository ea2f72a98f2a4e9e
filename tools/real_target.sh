#!/bin/sh
# real_target.sh -- issue 36's real target on one GPU: the default search,
# truly cold, against the exhaustive optimum measured on the same machine
# (make bench-real KT=DIR).
#
#   sh tools/real_target.sh [--kt DIR] [--quick] [--seeds "1 2 3"] [--time S]
#                           [--only NAME[,NAME]] [--set NAME:KEY=VALUE]...
#                           [--ref-time S] [--compare-order NAME] [--dir DIR] [-j N]
#
# Three spaces:
#   ktconv    Kernel Tuner's examples/cuda/convolution.cu, unchanged, over its
#             360-candidate space (tools/hub/h100/ktconv.json, or DIR/conv.json
#             if there): --kt DIR holds convolution.cu (Apache-2.0, not in this
#             tree: a Kernel Tuner checkout's examples/cuda); left out without;
#   conv3312  configs/custom/convolution.json (3312 candidates);
#   reduce11  configs/tune-reduce.json at the 11 sizes 2^10, 2^12, ..., 2^30.
# For each: the default search (no --strategy: model) with --time S (15) and
# --between 0, once per seed, each truly cold (a fresh KFORGE_CACHE_DIR and a
# fresh CUDA_CACHE_PATH, the CUDA compute cache NVRTC 13 also fills); then the
# exhaustive search, cold too, for the optimum (its wall time is the cold
# exhaustive figure).  tools/real_target.py prints per seed and then one line
# per space: best/optimum (at the worst size of several), the same ratio with
# the default's best configuration timed in the exhaustive run, wall times,
# how many seeds came within 1%, and after how many seconds (when the results
# line that brought it arrived: the line count is sampled every 0.1 s).
#   --quick      seed 1 only (about 4 minutes on an H100/H200 host of 16 CPUs)
#   --seeds L    the default search's seeds (default "1 2 3")
#   --ref-time S cap the exhaustive search at S seconds (its line then says
#                how many candidates it measured; the optimum may be missed)
#   --set NAME:KEY=VALUE  passed to every tune of space NAME (a dry run on the
#                fake GPU over a few candidates: tests/real_target_suite.sh)
#   --compare-order NAME[,NAME]  for these spaces, seed 1 once more with
#                KFORGE_IN_ORDER=1 (cases sent in order behind slow compiles, as
#                before): its own line, not counted in the summary
#   -j N         compiler processes (default: every CPU)
# The tunes' output and results files stay in --dir (build/real-target).
# environment: KFORGE (build/kforge), PYTHON (python3)
set -eu
unset KFORGE_IN_ORDER   # --compare-order sets it for its own run
KFORGE=${KFORGE:-build/kforge}
PYTHON=${PYTHON:-python3}
KT='' ORDER='' SEEDS="1 2 3" TLIM=15 ONLY=ktconv,conv3312,reduce11 DIR=build/real-target REF='' JOBS=''
# shellcheck disable=SC2034 # read through eval (space)
SETS_ktconv='' SETS_conv3312='' SETS_reduce11=
usage() { sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --kt) KT=$2; shift 2 ;;
    --quick) SEEDS=1; shift ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --time) TLIM=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --ref-time) REF=$2; shift 2 ;;
    --compare-order) ORDER=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    --set)
      sp=${2%%:*} kv=${2#*:}
      case $sp in
        ktconv|conv3312|reduce11) ;;
        *) echo "real_target.sh: --set $2: expected NAME:KEY=VALUE with NAME ktconv, conv3312 or reduce11" >&2; exit 2 ;;
      esac
      eval "SETS_$sp=\"\$SETS_$sp \$kv\""
      shift 2 ;;
    *) usage ;;
  esac
done
for s in $SEEDS; do
  case $s in *[!0-9]*|'') echo "real_target.sh: --seeds '$SEEDS': expected numbers" >&2; exit 2 ;; esac
done
mkdir -p "$DIR"
pid=
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; fi; exit 130' INT TERM HUP
now() { date +%s.%N; }
# run NAME TAG CONFIG SETS ARGS...: one cold tune; sets WALL; its output in DIR/NAME.TAG.*
run() {
  name=$1 tag=$2 cfg=$3 sets=$4; shift 4
  c="$DIR/cache-$name.$tag"
  rm -rf "$c" "$c.nv" "$DIR/$name.$tag.jsonl"
  mkdir -p "$c" "$c.nv"
  set -f
  # shellcheck disable=SC2086,SC2046 # sets is a list of KEY=VALUE words
  set -- "$@" $(for kv in $sets; do printf ' --set %s' "$kv"; done)
  set +f
  [ -z "$JOBS" ] || set -- "$@" -j "$JOBS"
  r="$DIR/$name.$tag.jsonl"
  s=$(now)
  rc=0
  KFORGE_CACHE_DIR="$c" CUDA_CACHE_PATH="$c.nv" "$KFORGE" tune "$cfg" "$@" --between 0 --no-db --no-resume -q \
    --results "$r" > "$DIR/$name.$tag.txt" 2> "$DIR/$name.$tag.err" &
  pid=$!
  # when each results line arrived (every 0.1 s: lines so far), for the
  # time to within 1% of the optimum
  echo "start $s" > "$DIR/$name.$tag.times"
  while kill -0 "$pid" 2>/dev/null; do
    n=0
    [ ! -f "$r" ] || n=$(wc -l < "$r")
    echo "$(now) $n" >> "$DIR/$name.$tag.times"
    sleep 0.1
  done
  wait "$pid" || rc=$?
  pid=
  WALL=$(awk -v a="$s" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
  echo "kforge tune $cfg $* (cold): exit $rc, $WALL s" >> "$DIR/commands.txt"
  rm -rf "$c" "$c.nv"   # thousands of cubins: the next tune is cold anyway
  # exit 1: a candidate failed or the time limit stopped the search; both expected
  if [ $rc -gt 1 ]; then
    echo "real $name: kforge tune $tag failed (exit $rc):" >&2
    tail -5 "$DIR/$name.$tag.err" >&2
    return 1
  fi
}
# space NAME CONFIG: the default search per seed, then the exhaustive
space() {
  name=$1 cfg=$2
  eval "sets=\$SETS_$name"
  runs=
  for seed in $SEEDS; do
    run "$name" "s$seed" "$cfg" "$sets" --time "$TLIM" --seed "$seed" || return 0
    runs="$runs $DIR/$name.s$seed.jsonl:$WALL:$seed"
  done
  inorder=
  case ,$ORDER, in *,$name,*)
    seed=${SEEDS%% *}
    export KFORGE_IN_ORDER=1
    irc=0
    run "$name" "s$seed-inorder" "$cfg" "$sets" --time "$TLIM" --seed "$seed" || irc=1
    unset KFORGE_IN_ORDER
    [ $irc = 0 ] || return 0
    inorder="$DIR/$name.s$seed-inorder.jsonl:$WALL:$seed" ;;
  esac
  if [ -n "$REF" ]; then
    run "$name" exhaustive "$cfg" "$sets" --strategy exhaustive --time "$REF" || return 0
  else
    run "$name" exhaustive "$cfg" "$sets" --strategy exhaustive || return 0
  fi
  grep -h "candidates evaluated" "$DIR/$name.exhaustive.txt" | sed 's/^/  exhaustive: /' || true
  # shellcheck disable=SC2086 # runs is a list of FILE:WALL:SEED words
  "$PYTHON" tools/real_target.py "$name" "$DIR/$name.exhaustive.jsonl" "$WALL" $runs --time "$TLIM" |
    tee -a "$DIR/lines.txt"
  if [ -n "$inorder" ]; then
    "$PYTHON" tools/real_target.py "$name" "$DIR/$name.exhaustive.jsonl" "$WALL" "$inorder" --time "$TLIM" |
      sed -n "s/^  $name seed /  $name in order (KFORGE_IN_ORDER=1, as before), seed /p" | tee -a "$DIR/lines.txt"
  fi
}
: > "$DIR/lines.txt"
: > "$DIR/commands.txt"
dev=$("$KFORGE" info 2>/dev/null | sed -n 's/^ *\(device\|GPU [0-9]*\)[: ]*//p' | head -1 || true)
echo "real target: $(date -u +%Y-%m-%dT%H:%MZ), ${dev:-GPU ?}, $(nproc) CPUs${JOBS:+ (-j $JOBS)}, kforge $(git rev-parse --short HEAD 2>/dev/null || echo ?)" |
  tee -a "$DIR/lines.txt"
case ,$ONLY, in *,ktconv,*)
  if [ -n "$KT" ] && [ -f "$KT/convolution.cu" ]; then
    # the kernel unchanged, beside its space (DIR/conv.json, else tools/hub's)
    rm -rf "$DIR/ktconv"
    mkdir -p "$DIR/ktconv"
    cp "$KT/convolution.cu" "$DIR/ktconv/"
    if [ -f "$KT/conv.json" ]; then cp "$KT/conv.json" "$DIR/ktconv/"; else cp tools/hub/h100/ktconv.json "$DIR/ktconv/conv.json"; fi
    space ktconv "$DIR/ktconv/conv.json"
  else
    echo "real ktconv: left out: no --kt DIR holding Kernel Tuner's examples/cuda/convolution.cu" | tee -a "$DIR/lines.txt"
  fi ;;
esac
case ,$ONLY, in *,conv3312,*) space conv3312 configs/custom/convolution.json ;; esac
case ,$ONLY, in *,reduce11,*)
  SETS_reduce11="n=[\"2^10\",\"2^12\",\"2^14\",\"2^16\",\"2^18\",\"2^20\",\"2^22\",\"2^24\",\"2^26\",\"2^28\",\"2^30\"] $SETS_reduce11"
  space reduce11 configs/tune-reduce.json ;;
esac
echo "== the lines (also in $DIR/lines.txt):"
grep '^real' "$DIR/lines.txt"
