#!/bin/sh
# multigpu_bench.sh -- issue 38's two targets on one GPU host, every tune truly
# cold (a fresh cubin cache and a fresh CUDA_CACHE_PATH each):
#
#   sh tools/multigpu_bench.sh [--quick] [--gpus "1 2 4"] [--ab] [--no-repeat] [--no-conv] [--no-reduce]
#                              [--conv CONFIG] [--dir DIR]
#
#   reduce  kforge tune configs/tune-reduce.json over the 11 sizes 2^10..2^30,
#           exhaustive, --abandon-above 0, on 1, 2 and 4 GPUs (--devices 0,
#           0,1, 0-3); then 1 GPU again (the run-to-run noise; --no-repeat
#           skips it); with --ab, 4 GPUs again with KFORGE_DATA_AFFINITY=0
#           (each case to whichever GPU is free: every GPU sets up every
#           size's inputs, as before the data affinity) and with
#           KFORGE_SHARED_INPUTS=0 (each worker makes its own inputs, as
#           before the shared data).
#           For each: wall time, the worker's setup phase (the results'
#           setup_ms summed over every GPU), when the first case was sent and
#           the search ended (KFORGE_TRACE), the speed-up over 1 GPU, and
#           how many sizes' inputs each GPU set up (the workers' "inputs
#           made" trace lines: exact data, search and pass between sizes), and
#           whether the best candidate at every size agrees with 1 GPU's: the
#           same one, or a tie within the noise: each run's best within the
#           other's by the size's run-to-run spread (the two 1-GPU runs: the
#           90th percentile of |a - b| / min(a, b) over the candidates within
#           10% of that size's best; 2% at least, or 2% without the repeat),
#           in either run's own medians.  The spread per size is printed, and
#           how often 1 GPU agrees with itself.  Target: 4 GPUs >= 3.6x.
#   conv    Kernel Tuner's convolution (CONFIG, default .carry/ktconv/conv.json:
#           360 candidates), exhaustive: a cold 1-GPU tune; then the compile
#           farm, simulated as 2 processes with half the CPUs each (taskset):
#           kforge check --compile --shard 1/2 and 2/2 at once into a fresh
#           cache; then a 1-GPU tune from that cache.  Prints the ratio of the
#           tune step to the cold tune (target <= 25%) and checks that the tune
#           compiled nothing.
# --quick: a dry run on 4 fake GPUs (KFORGE_FAKE_GPU=4; no GPU needed) over a
# small part of each space, to check the script itself.
# Expected wall time on nvidia-h100-x4: about 6 minutes (reduce ~4 min: 1 GPU
# ~70 s twice, 2 GPUs ~40 s, 4 GPUs ~20 s; --ab: 4 without the data affinity
# and 4 without sharing, ~25 s each; conv ~2 min).
# Writes everything under DIR (build/bench-multigpu): NAME.jsonl results,
# NAME.txt summaries, NAME.err traces.
# environment: KFORGE (build/kforge), PYTHON (python3)
set -eu
KFORGE=${KFORGE:-build/kforge}
PYTHON=${PYTHON:-python3}
QUICK=0 GPUS="1 2 4" AB=0 REPEAT=1 DO_CONV=1 DO_REDUCE=1 CONV=.carry/ktconv/conv.json DIR=build/bench-multigpu
usage() { sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --quick) QUICK=1; shift ;;
    --gpus) [ $# -ge 2 ] || usage; GPUS=$2; shift 2 ;;
    --no-ab) AB=0; shift ;;
    --ab) AB=1; shift ;;
    --no-repeat) REPEAT=0; shift ;;
    --no-conv) DO_CONV=0; shift ;;
    --no-reduce) DO_REDUCE=0; shift ;;
    --conv) [ $# -ge 2 ] || usage; CONV=$2; shift 2 ;;
    --dir) [ $# -ge 2 ] || usage; DIR=$2; shift 2 ;;
    *) usage ;;
  esac
done
[ -x "$KFORGE" ] || { echo "multigpu_bench: $KFORGE is not built (make -j)"; exit 2; }
command -v "$PYTHON" > /dev/null || { echo "multigpu_bench: needs $PYTHON"; exit 2; }
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
unset KFORGE_SHARED_INPUTS KFORGE_DATA_AFFINITY KFORGE_DEVICES KFORGE_FAULT_INJECT KFORGE_PLANT
export KFORGE_DB="$DIR/db"
SIZES='n=["2^10","2^12","2^14","2^16","2^18","2^20","2^22","2^24","2^26","2^28","2^30"]'
REDUCE_SETS=
CONV_SETS=
if [ $QUICK = 1 ]; then
  export KFORGE_FAKE_GPU=4 KFORGE_FAKE_GPU_MS=1
  REDUCE_SETS="--set block_size=[256] --set vector_width=[4] --set elements_per_thread=[4]"
  CONV_SETS="--set block_size_x=[32] --set tile_size_y=[1]"
  echo "== --quick: 4 fake GPUs (KFORGE_FAKE_GPU=4), a small part of each space: times mean nothing"
else
  ngpu=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU' || true)
  echo "== $(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | sort | uniq -c | sed 's/^ *//' | tr '\n' ' ')($ngpu GPUs), $(nproc) CPUs, $(uname -n)"
  kept=
  for g in $GPUS; do
    if [ "$g" -le "${ngpu:-0}" ]; then kept="$kept $g"; else echo "   (no run on $g GPUs: $ngpu here)"; fi
  done
  GPUS=$kept
  [ -n "$GPUS" ] || { echo "multigpu_bench: no GPU"; exit 3; }
fi
"$KFORGE" --version > /dev/null # its libraries in the page cache before the first timed run
now() { date +%s.%N; }
sub() { awk "BEGIN{printf \"%.1f\", $1 - $2}"; }
fresh() { d="$DIR/cache-$1"; rm -rf "$d" "$d.nv"; mkdir -p "$d" "$d.nv"; echo "$d"; }
devlist() { case $1 in 1) echo 0 ;; *) echo "0-$(($1 - 1))" ;; esac; }
# the KFORGE_TRACE time of a phase line, or ?
at() { sed -n "s/^kforge: trace \([0-9.]*\) s \[[0-9]*\]: $2.*/\1/p" "$1" | head -1 | grep . || echo '?'; }

# tune NAME CACHE CONFIG ARGS...: one timed tune; its wall time in NAME.wall
tune() {
  name=$1 cache=$2 cfg=$3; shift 3
  rm -f "$DIR/$name.jsonl"
  s=$(now)
  if ! KFORGE_CACHE_DIR="$cache" CUDA_CACHE_PATH="$cache.nv" KFORGE_TRACE=1 "$KFORGE" tune "$cfg" "$@" \
       --strategy exhaustive --no-db --no-resume -q --results "$DIR/$name.jsonl" > "$DIR/$name.txt" 2> "$DIR/$name.err"; then
    echo "multigpu_bench: $name: kforge tune failed:"; grep -v '^kforge: trace' "$DIR/$name.err" | tail -5
    exit 1
  fi
  sub "$(now)" "$s" > "$DIR/$name.wall"
}

cat > "$DIR/analyze.py" <<'P'
"""The reduce runs side by side: wall, setup, speed-up, best per size, with
the run-to-run spread per size from two runs on 1 GPU (REPEAT=NAME|PATH in
the environment: the second 1-GPU run)."""
import json, os, sys
TIE = 0.02
def load(path):
    best, med, ok, n, setup = {}, {}, 0, 0, 0.0
    for line in open(path):
        if not line.strip():
            continue
        d = json.loads(line)
        n += 1
        setup += (d.get("setup_ms") or 0) / 1e3
        if d.get("status") != "ok":
            continue
        ok += 1
        size = d.get("n")
        med[(d["label"], size)] = d["median_ms"]
        if size not in best or d["median_ms"] < best[size][1]:
            best[size] = (d["label"], d["median_ms"])
    return best, med, ok, n, setup
def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0
runs = []
for arg in sys.argv[1:]:
    name, path, wall, first, end = arg.split("|")
    runs.append((name, float(wall), first, end) + load(path))
base = runs[0]
# the run-to-run spread of each size: the base run against the repeat, over
# the candidates within 10% of the size's best
spread = {}
rep = os.environ.get("REPEAT")
if rep:
    rname, rpath = rep.split("|")
    rbest, rmed = load(rpath)[:2]
    for size, (lab, m) in base[4].items():
        rel = [abs(a - rmed[k]) / min(a, rmed[k]) for k, a in base[5].items()
               if k[1] == size and k in rmed and a <= m * 1.10 and min(a, rmed[k]) > 0]
        spread[size] = max(TIE, quantile(rel, 0.9))
def tie_of(size):
    return spread.get(size, TIE)
print("%-22s %7s %8s %8s %9s %9s %7s %6s  %s" % ("run", "wall s", "speed-up", "setup s", "1st case", "search", "cases",
                                                "ok", "best agrees with " + base[0]))
for name, wall, first, end, best, med, ok, n, setup in runs:
    agree, ties, differ = 0, 0, []
    for size, (lab, m) in sorted(base[4].items()):
        if size not in best:
            differ.append("n=%s: none" % size)
            continue
        lab2, m2 = best[size]
        tie = tie_of(size)
        if lab2 == lab:
            agree += 1
        elif (med.get((lab, size), 1e30) <= m2 * (1 + tie)) or (base[5].get((lab2, size), 1e30) <= m * (1 + tie)):
            ties += 1
        else:
            differ.append("n=%s: %s %.4g ms vs %s %.4g ms (spread %.1f%%)" % (size, lab2, m2, lab, m, 100 * tie))
    verdict = "yes, %d same%s" % (agree, ", %d ties within the noise" % ties if ties else "") \
        if not differ else "NO: " + "; ".join(differ)
    print("%-22s %7.1f %7.2fx %8.1f %8ss %8ss %7d %6d  %s" % (name, wall, base[1] / wall, setup, first, end, n, ok,
                                                             verdict))
if spread:
    print("   run-to-run spread on 1 GPU (%s against %s), per size: %s" % (
        base[0], rname, ", ".join("%s %.1f%%" % (k, 100 * v) for k, v in sorted(spread.items()))))
else:
    print("   run-to-run spread not measured (--no-repeat): ties within %d%%" % (100 * TIE))
P

if [ $DO_REDUCE = 1 ]; then
  echo "== reduce: configs/tune-reduce.json, 11 sizes 2^10..2^30, exhaustive, --abandon-above 0, each run cold"
  args=
  for g in $GPUS; do
    name=reduce-${g}gpu
    # shellcheck disable=SC2086 # REDUCE_SETS is a list of options
    tune "$name" "$(fresh "$name")" configs/tune-reduce.json --set "$SIZES" $REDUCE_SETS --abandon-above 0 \
      --devices "$(devlist "$g")"
    echo "   $g GPU(s): $(cat "$DIR/$name.wall") s"
    args="$args $name|$DIR/$name.jsonl|$(cat "$DIR/$name.wall")|$(at "$DIR/$name.err" 'first case sent')|$(at "$DIR/$name.err" 'search ends')"
  done
  last=$(echo "$GPUS" | awk '{print $NF}')
  first=$(echo "$GPUS" | awk '{print $1}')
  rep=
  if [ $REPEAT = 1 ] && [ "$first" = 1 ]; then
    name=reduce-1gpu-again
    # shellcheck disable=SC2086
    tune "$name" "$(fresh "$name")" configs/tune-reduce.json --set "$SIZES" $REDUCE_SETS --abandon-above 0 --devices 0
    echo "   1 GPU(s) again: $(cat "$DIR/$name.wall") s"
    args="$args $name|$DIR/$name.jsonl|$(cat "$DIR/$name.wall")|$(at "$DIR/$name.err" 'first case sent')|$(at "$DIR/$name.err" 'search ends')"
    rep="$name|$DIR/$name.jsonl"
  fi
  if [ $AB = 1 ] && [ "$last" -gt 1 ]; then
    name=reduce-${last}gpu-noaff
    # shellcheck disable=SC2086
    KFORGE_DATA_AFFINITY=0 tune "$name" "$(fresh "$name")" configs/tune-reduce.json --set "$SIZES" $REDUCE_SETS \
      --abandon-above 0 --devices "$(devlist "$last")"
    echo "   $last GPUs, KFORGE_DATA_AFFINITY=0: $(cat "$DIR/$name.wall") s"
    args="$args $name|$DIR/$name.jsonl|$(cat "$DIR/$name.wall")|$(at "$DIR/$name.err" 'first case sent')|$(at "$DIR/$name.err" 'search ends')"
    name=reduce-${last}gpu-noshare
    # shellcheck disable=SC2086
    KFORGE_SHARED_INPUTS=0 tune "$name" "$(fresh "$name")" configs/tune-reduce.json --set "$SIZES" $REDUCE_SETS \
      --abandon-above 0 --devices "$(devlist "$last")"
    echo "   $last GPUs, KFORGE_SHARED_INPUTS=0: $(cat "$DIR/$name.wall") s"
    args="$args $name|$DIR/$name.jsonl|$(cat "$DIR/$name.wall")|$(at "$DIR/$name.err" 'first case sent')|$(at "$DIR/$name.err" 'search ends')"
  fi
  # shellcheck disable=SC2086 # one argument per run
  REPEAT="$rep" "$PYTHON" "$DIR/analyze.py" $args
  runs=
  for g in $GPUS; do runs="$runs reduce-${g}gpu"; done
  [ $AB = 1 ] && [ "$last" -gt 1 ] && runs="$runs reduce-${last}gpu-noaff reduce-${last}gpu-noshare"
  for r in $runs; do
    # exact data set up per worker: distinct keys in its "inputs made" trace lines
    echo "   $r: sizes set up per GPU (exact data, search and between): $(grep 'inputs made: key .*exact' "$DIR/$r.err" |
      sed 's/.*\[\([0-9]*\)\].*key \([0-9a-f]*\).*/\1 \2/' | sort -u | awk '{c[$1]++} END {s = ""; for (p in c) s = s (s == "" ? "" : " ") c[p]; printf "%s", s}')" \
      "of $(grep 'inputs made: key .*exact' "$DIR/$r.err" | sed 's/.*key \([0-9a-f]*\).*/\1/' | sort -u | grep -c .);" \
      "data taken over (KFORGE_TRACE): $(grep -c 'takes the data of key.*held by another' "$DIR/$r.err")"
  done
  for g in $GPUS; do
    e="$DIR/reduce-${g}gpu.err"
    echo "   $g GPU(s): $(grep -h 'where the time went' "$DIR/reduce-${g}gpu.txt" | sed 's/^ *//')"
    echo "     start-up (KFORGE_TRACE, s): compiling from $(at "$e" 'compiler pool for'), devices open" \
         "$(at "$e" 'every GPU worker has opened'), first cubin $(at "$e" 'first cubin compiled') ($(sed -n \
         's/^kforge: trace .*first cubin compiled (\([0-9]*\) ms.*/\1/p' "$e" | head -1) ms), first case sent" \
         "$(at "$e" 'first case sent'), received $(at "$e" 'worker 0: first case received'), output check" \
         "ready $(at "$e" 'output check on the GPU ready'), first case done $(at "$e" 'worker 0: first case done'), every" \
         "input made ahead $(sed -n 's/^kforge: trace \([0-9.]*\) s .*this worker.s part made ahead.*/\1/p' "$e" | tail -1);" \
         "search ends $(at "$e" 'search ends'), between-sizes pass ends $(sed -n 's/^kforge: trace \([0-9.]*\) s .*: search ends.*/\1/p' \
         "$e" | sed -n 2p), workers gone $(at "$e" 'GPU workers gone'), exit $(at "$e" 'exit')"
  done
  if [ "$last" = 4 ]; then
    w1=$(cat "$DIR/reduce-1gpu.wall" 2> /dev/null || echo 0) w4=$(cat "$DIR/reduce-4gpu.wall")
    if [ "$w1" != 0 ]; then
      awk "BEGIN{s = $w1 / $w4; printf \"   target: 4 GPUs >= 3.6x over 1: %.2fx, %s\n\", s, (s >= 3.6) ? \"MET\" : \"NOT MET\"}"
    fi
  fi
fi

if [ $DO_CONV = 1 ]; then
  if [ ! -f "$CONV" ]; then
    echo "== conv: $CONV not found (copy Kernel Tuner's convolution there, or --conv CONFIG; --no-conv skips it)"
    exit 2
  fi
  echo "== conv: $CONV, exhaustive, 1 GPU: cold, then from a cache two CPU-only compile jobs filled"
  # shellcheck disable=SC2086 # CONV_SETS is a list of options
  tune conv-cold "$(fresh conv-cold)" "$CONV" $CONV_SETS --devices 0
  cpus=$(nproc)
  half=$((cpus / 2))
  [ "$half" -ge 1 ] || half=1
  farm=$(fresh conv-farm)
  s=$(now)
  for k in 1 2; do
    if [ "$cpus" -ge 2 ] && command -v taskset > /dev/null; then
      if [ $k = 1 ]; then pin="taskset -c 0-$((half - 1))"; else pin="taskset -c $half-$((cpus - 1))"; fi
    else
      pin=
    fi
    # shellcheck disable=SC2086 # pin and CONV_SETS are lists of words
    KFORGE_CACHE_DIR="$farm" CUDA_CACHE_PATH="$farm.nv" $pin "$KFORGE" check --compile --shard $k/2 -j "$half" \
      --cache-dir "$farm" $CONV_SETS "$CONV" > "$DIR/conv-shard$k.txt" 2>&1 &
    eval "pid$k=\$!"
  done
  rc=0 rc2=0
  # shellcheck disable=SC2154 # pid1 and pid2 are set by eval
  wait "$pid1" || rc=$?
  wait "$pid2" || rc2=$?
  # exit 1: some candidates do not compile (Kernel Tuner's convolution has 16 that use too much shared memory)
  for r in $rc $rc2; do
    [ "$r" -le 1 ] || { echo "multigpu_bench: a compile shard failed (exit $r):"; tail -n 3 "$DIR"/conv-shard*.txt; exit 1; }
  done
  farm_s=$(sub "$(now)" "$s")
  # shellcheck disable=SC2086
  tune conv-warm "$farm" "$CONV" $CONV_SETS --devices 0
  cold=$(cat "$DIR/conv-cold.wall") warm=$(cat "$DIR/conv-warm.wall")
  echo "   cold 1-GPU tune:                       $cold s  ($(grep -h 'cubins:' "$DIR/conv-cold.txt" | sed 's/^ *//'))"
  echo "   compile shards 1/2 + 2/2 at once:      $farm_s s  (2 processes, $half CPUs each, taskset)"
  echo "   1-GPU tune from the shards' cache:     $warm s  ($(grep -h 'cubins:' "$DIR/conv-warm.txt" | sed 's/^ *//'))"
  awk "BEGIN{r = 100 * $warm / $cold; printf \"   tune step / cold tune: %.1f%% (target <= 25%%): %s\n\", r, (r <= 25) ? \"MET\" : \"NOT MET\"}"
  if ! grep -q 'cubins: 0 compiled now' "$DIR/conv-warm.txt"; then
    echo "   WARNING: the tune compiled cubins the shards should have made (another arch, kforge or --set?)"
  fi
  "$PYTHON" - "$DIR/conv-cold.jsonl" "$DIR/conv-warm.jsonl" <<'P'
import json, sys
def best(p):
    b = None
    for line in open(p):
        if line.strip():
            d = json.loads(line)
            if d.get("status") == "ok" and (b is None or d["median_ms"] < b[1]):
                b = (d["label"], d["median_ms"])
    return b
a, b = best(sys.argv[1]), best(sys.argv[2])
print("   best: cold %s %.4g ms; from the farm's cache %s %.4g ms" % (a[0], a[1], b[0], b[1]))
P
fi
echo "== files in $DIR"
