#!/bin/sh
# bench_half.sh -- bfloat16 and float16 reductions with float32 accumulation
# (issue 23): kforge, tuned on this GPU, beside PyTorch and CUB in one run,
# at the issue's sizes and shapes; one table.
#
#   1. per dtype: kforge tune configs/tune-reduce-half.json (random search
#      over the sizes 2^10..2^30 but the latency-bound ones --small, then an
#      exhaustive search at each of those (sizes written as in the list
#      above, 2^K), measured closer: at least 200
#      repetitions a candidate that is not abandoned, up to 1000 or 50 ms,
#      since a few microseconds are within a timer tick or two of each
#      other and the database keeps the fastest median it is given: use a
#      fresh --dir) and
#      configs/tune-rows.json with
#      vector_width 8 per shape (database in $DIR/db); kforge best per size;
#   2. ROUNDS rounds (--rounds, default 1), each per dtype: kforge run of
#      the best variants (median of >= 31
#      repetitions, L2 flushed before each), tools/half_cub.cu
#      (DeviceReduce::TransformReduce, DeviceSegmentedReduce::Reduce, float
#      accumulator) and tools/half_torch.py (x.sum(dtype=torch.float32),
#      x.sum(dim=1, dtype=torch.float32)): each the median of 31, L2 flushed,
#      CUDA events around the reduction only, every result checked;
#   3. in the same rounds, full reductions: kforge export of each dtype's
#      sum, built with nvcc
#      into tools/half_kforge.cu, which times the header by half_cub's own
#      loop (tools/half_time.h) on the same data: kforge and CUB by one
#      harness;
#   4. the table: each time the median over the rounds (the rounds take
#      turns, so a slow moment of the GPU does not fall on one tool only; at
#      a few microseconds one timer tick is 32 ns, about 1%; an even count
#      takes the lower of the two middle rounds), time and GB/s
#      (input bytes) of each, kforge's GB/s counting
#      its outputs too (rows), and its speedup over PyTorch and over CUB; for
#      full reductions also the header's time in CUB's loop and its speedup
#      over CUB there.
#
#   sh tools/bench_half.sh [--dtypes "bfloat16 float16"] [--budget 120] [--rbudget 80]
#                          [--small "2^10 2^12 2^14 2^16"] [--rounds 1] [--dir DIR]
# environment: KFORGE (build/kforge), NVCC (nvcc), PYTHON (python3); CCCL_DIR (a
#   CCCL checkout whose CUB headers come before the toolkit's, e.g. CUB 3.6) or
#   HALF_CUB (a tools/half_cub.cu binary built beforehand)
set -eu
KFORGE=${KFORGE:-build/kforge}
NVCC=${NVCC:-nvcc}
PYTHON=${PYTHON:-python3}
DTYPES="bfloat16 float16" BUDGET=120 RBUDGET=80 DIR=build/bench-half SMALL="2^10 2^12 2^14 2^16" ROUNDS=1
while [ $# -gt 0 ]; do
  case $1 in
    --dtypes) DTYPES=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --rbudget) RBUDGET=$2; shift 2 ;;
    --small) SMALL=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2
      case $ROUNDS in ''|*[!0-9]*|0) echo "bench_half.sh: --rounds takes a count of 1 or more, got '$ROUNDS'" >&2; exit 2 ;; esac ;;
    --dir) DIR=$2; shift 2 ;;
    *) sed -n '2,42p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
NS="2^10 2^12 2^14 2^16 2^18 2^20 2^22 2^24 2^26 2^28 2^30"
SHAPES="2097152,32 65536,1024 8192,8192 64,1048576"
cmdline="sh tools/bench_half.sh --dtypes \"$DTYPES\" --budget $BUDGET --rbudget $RBUDGET --small \"$SMALL\" --rounds $ROUNDS"
mkdir -p "$DIR"
export KFORGE_DB="$DIR/db"
CUB=${HALF_CUB:-$DIR/half_cub}
[ -x "$CUB" ] || "$NVCC" -O3 -std=c++17 -arch=sm_90 ${CCCL_DIR:+-I"$CCCL_DIR/cub" -I"$CCCL_DIR/thrust" -I"$CCCL_DIR/libcudacxx/include"} \
  tools/half_cub.cu -o "$CUB"
: > "$DIR/kforge.jsonl"; : > "$DIR/base.txt"
nargs= sargs=
for n in $NS; do nargs="$nargs --n $n"; done
for s in $SHAPES; do sargs="$sargs --shape $s"; done
t0=$(date +%s)
# the sizes the random search covers: those not in --small, as a JSON list
large=
for n in $NS; do
  small=0
  for s in $SMALL; do
    if [ "$s" = "$n" ]; then small=1; fi
  done
  if [ $small = 0 ]; then large="$large${large:+,}\"$n\""; fi
done
for dt in $DTYPES; do
  : > "$DIR/tune-$dt.txt"
  [ -z "$large" ] || "$KFORGE" tune configs/tune-reduce-half.json --set dtype="$dt" --set "n=[$large]" --strategy random \
    --budget "$BUDGET" --seed 1 --results "$DIR/tune.jsonl" --quiet >> "$DIR/tune-$dt.txt"
  for n in $SMALL; do
    "$KFORGE" tune configs/tune-reduce-half.json --set dtype="$dt" --set n="$n" --strategy exhaustive \
      --set bench.min_reps=200 --set bench.max_reps=1000 --set bench.max_time_s=0.05 \
      --results "$DIR/tune.jsonl" --quiet >> "$DIR/tune-$dt.txt"
  done
  for s in $SHAPES; do
    R=${s%,*} C=${s#*,}
    "$KFORGE" tune configs/tune-rows.json --set dtype="$dt" --set vector_width=8 --set rows="$R" --set cols="$C" \
      --strategy random --budget "$RBUDGET" --seed 1 --results "$DIR/tune.jsonl" --quiet >> "$DIR/tune-$dt.txt"
  done
done
t1=$(date +%s)
for dt in $DTYPES; do
  cfgs=
  for n in $NS; do
    f="$DIR/best-$dt-$(echo "$n" | tr '^' p).json"
    "$KFORGE" best --dtype "$dt" --n "$n" > "$f" 2> /dev/null && cfgs="$cfgs $f"
  done
  for s in $SHAPES; do
    f="$DIR/best-$dt-${s%,*}x${s#*,}.json"
    "$KFORGE" best --kernel reduce_rows --dtype "$dt" --rows "${s%,*}" --cols "${s#*,}" > "$f" 2> /dev/null &&
      cfgs="$cfgs $f"
  done
  echo "$cfgs" > "$DIR/cfgs-$dt"
  mkdir -p "$DIR/hdr-$dt"
  rm -f "$DIR/half_kforge_$dt"
  "$KFORGE" export --dtype "$dt" --op sum -o "$DIR/hdr-$dt/kforge_reduce_${dt}_sum.cuh" > /dev/null 2>> "$DIR/export.err" &&
    "$NVCC" -O3 -std=c++17 -arch=sm_90 -I "$DIR/hdr-$dt" tools/half_kforge.cu -o "$DIR/half_kforge_$dt" 2>> "$DIR/export.err" ||
    echo "bench_half.sh: the $dt header could not be exported or built (see $DIR/export.err): no one-loop column" >&2
done
r=0
while [ "$r" -lt "$ROUNDS" ]; do
  r=$((r + 1))
  for dt in $DTYPES; do
    cfgs=$(cat "$DIR/cfgs-$dt")
    # shellcheck disable=SC2086
    "$KFORGE" run $cfgs --set bench.min_reps=31 --no-results --format jsonl --quiet >> "$DIR/kforge.jsonl" || true
    # shellcheck disable=SC2086
    "$CUB" --dtype "$dt" $nargs $sargs >> "$DIR/base.txt" || true
    # shellcheck disable=SC2086
    "$PYTHON" tools/half_torch.py --dtype "$dt" $nargs $sargs >> "$DIR/base.txt" || true
    # shellcheck disable=SC2086
    [ ! -x "$DIR/half_kforge_$dt" ] || "$DIR/half_kforge_$dt" --dtype "$dt" $nargs >> "$DIR/base.txt" || true
  done
done
"$PYTHON" - "$DIR/kforge.jsonl" "$DIR/base.txt" "$cmdline" "$((t1 - t0))" <<'PY'
import json, sys
kf, base, dev, impls = {}, {}, "?", set()
# every round's record; the table takes the round of the median time
def median(recs, t):
    recs = sorted(recs, key=t)
    return recs[(len(recs) - 1) // 2]
for line in open(sys.argv[1]):
    r = json.loads(line)
    dev = r.get("device", dev)
    key = (r["dtype"], "full", str(r["n"])) if "n" in r else (r["dtype"], "rows", "%dx%d" % (r["rows"], r["cols"]))
    kf.setdefault(key, []).append(r)
for line in open(sys.argv[2]):
    if not line.startswith("CASE "):
        continue
    f = dict(x.split("=", 1) for x in line.split(" variant=")[0].split()[1:])
    impl = ("torch" if f["impl"].startswith("torch") else "header" if f["impl"] == "kforge-header"
            else f["impl"] if f["impl"].startswith("kforge") else "cub")
    impls.add(f["impl"])
    base.setdefault((f["dtype"], f["kind"], f["shape"], impl), []).append(f)
inf = float("inf")
kf = {k: median(v, lambda r: r["median_ms"] if r["status"] == "ok" else inf) for k, v in kf.items()}
base = {k: median(v, lambda f: float(f["us"]) if f.get("status") == "PASS" else inf) for k, v in base.items()}
print("# bfloat16/float16 -> float32 reductions on %s; %s; kforge tuning took %s s; baselines: %s"
      % (dev, sys.argv[3], sys.argv[4], ", ".join(sorted(impls))))
print("| dtype | shape | kforge | kforge GB/s | GB/s in + out | PyTorch | CUB | vs PyTorch | vs CUB | header, CUB's loop | vs CUB, one loop | kforge variant |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
osize = {"float32": 4, "float64": 8}
def us(f):
    return float(f["us"]) if f and f.get("status") == "PASS" else float("nan")
for key in sorted(kf, key=lambda k: (k[0], k[1], [int(x) for x in k[2].split("x")])):
    r = kf[key]
    t = r["median_ms"] * 1e3 if r["status"] == "ok" else float("nan")
    p, c, h = us(base.get(key + ("torch",))), us(base.get(key + ("cub",))), us(base.get(key + ("header",)))
    sh = key[2]
    if key[1] == "full":
        n = int(sh)
        sh = "n = 2^%d" % (n.bit_length() - 1) if n & (n - 1) == 0 else "n = %d" % n
    else:
        sh = "rows %s" % sh.replace("x", " x ")
    # rows: the float outputs are traffic too (one per row of cols 2-byte inputs)
    ratio = osize.get(r.get("acc_dtype"), 4) / (2.0 * r["cols"]) if key[1] == "rows" else 0
    one = ("%.2f us | %.2fx" % (h, c / h)) if h == h else "- | -"
    print("| %s | %s | %.2f us%s | %.0f | %.0f | %.2f us | %.2f us | %.2fx | %.2fx | %s | %s |" % (
        key[0], sh, t, "" if r["status"] == "ok" else " (" + r["status"] + ")", r.get("gbps") or 0,
        (r.get("gbps") or 0) * (1 + ratio), p, c, p / t, c / t, one, r.get("label", "")))
PY
