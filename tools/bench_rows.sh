#!/bin/sh
# bench_rows.sh -- row-wise reduction: kforge tuned per shape against CUB
# (cub::DeviceSegmentedReduce from the toolkit, and its fixed-size-segment
# API when CCCL_DIR points at CCCL >= 3.2 headers) and PyTorch x.sum(dim=1),
# all on one GPU in one run.
#
#   1. for every shape: kforge tune configs/tune-rows.json --set rows=R --set cols=C
#      (database in $DIR/db), then kforge best for that shape;
#   2. ROUNDS rounds, the order of the tools rotating every round: kforge run
#      of the best variant, tools/rows_cub (offsets; fixed), tools/rows_torch.py;
#   3. a table: per shape, each tool's median GB/s (median over rounds),
#      kforge's ratio to the best baseline, and kforge's GB/s counting the
#      output it writes too (what short rows are bound by).
#
#   sh tools/bench_rows.sh [--total "2^26 2^20"] [--cols "4 32 128 1024 8192 65536 2^20"]
#                          [--dtype float32] [--op sum] [--rounds 3] [--budget N] [--dir DIR]
# environment: KFORGE (build/kforge), NVCC, CCCL_DIR, PYTHON (python3), TUNE_CONFIG;
#   ROWS_CUB / ROWS_CUB_FIXED: prebuilt tools/rows_cub.cu binaries (offsets /
#   fixed-size segments, the latter built with -DKF_CCCL_FIXED against CCCL
#   >= 3.2), instead of building them here; ROWS_CUB=none leaves the
#   offsets baseline out (at cols 1..16 it takes seconds per repetition)
# Every tool verifies every row before it is timed; a wrong row is exit 2.
# The L2 is flushed before every repetition by all three (2 x L2 memset);
# GB/s = rows x cols x element size / median time.
set -eu
KFORGE=${KFORGE:-build/kforge}
NVCC=${NVCC:-nvcc}
PYTHON=${PYTHON:-python3}
TUNE_CONFIG=${TUNE_CONFIG:-configs/tune-rows.json}
TOTALS="2^26 2^20"
COLS="4 32 128 1024 8192 65536 2^20"
DTYPE=float32 OP=sum ROUNDS=3 BUDGET= DIR=build/bench-rows
while [ $# -gt 0 ]; do
  case $1 in
    --total) TOTALS=$2; shift 2 ;;
    --cols) COLS=$2; shift 2 ;;
    --dtype) DTYPE=$2; shift 2 ;;
    --op) OP=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --budget) BUDGET="--budget $2"; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    *) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
pow() { case $1 in 2^*) echo $((1 << ${1#2^})) ;; *) echo "$1" ;; esac; }
mkdir -p "$DIR"
cmdline="$0 --total \"$TOTALS\" --cols \"$COLS\" --dtype $DTYPE --op $OP --rounds $ROUNDS $BUDGET"
CUB=${ROWS_CUB:-$DIR/rows_cub}
[ "$CUB" = none ] || [ -x "$CUB" ] || "$NVCC" -O3 -std=c++17 -arch=sm_90 tools/rows_cub.cu -o "$CUB"
CUBF=${ROWS_CUB_FIXED:-}
if [ -z "$CUBF" ] && [ -n "${CCCL_DIR:-}" ]; then
  CUBF="$DIR/rows_cub_fixed"
  [ -x "$CUBF" ] || "$NVCC" -O3 -std=c++17 -arch=sm_90 -DKF_CCCL_FIXED -I"$CCCL_DIR/cub" -I"$CCCL_DIR/thrust" \
    -I"$CCCL_DIR/libcudacxx/include" tools/rows_cub.cu -o "$CUBF"
fi
shapes=
for t in $TOTALS; do
  for c in $COLS; do
    T=$(pow "$t"); C=$(pow "$c")
    [ "$C" -le "$T" ] || continue
    shapes="$shapes $((T / C)),$C"
  done
done
: > "$DIR/kforge.jsonl"; : > "$DIR/base.txt"; : > "$DIR/base.err"
export KFORGE_DB="$DIR/db"
t0=$(date +%s)
for s in $shapes; do
  R=${s%,*} C=${s#*,}
  # shellcheck disable=SC2086
  "$KFORGE" tune "$TUNE_CONFIG" --set rows=$R --set cols=$C --set dtype=$DTYPE --set op=$OP $BUDGET \
    --results "$DIR/tune.jsonl" --quiet > /dev/null
  "$KFORGE" best --kernel reduce_rows --dtype "$DTYPE" --op "$OP" --rows "$R" --cols "$C" > "$DIR/best-$R-$C.json" \
    2> /dev/null
done
t1=$(date +%s)
# one process per tool per round, every shape in it; the order rotates
cfgs= cubargs=
for s in $shapes; do cfgs="$cfgs $DIR/best-${s%,*}-${s#*,}.json"; cubargs="$cubargs --shape $s"; done
k() { # shellcheck disable=SC2086
      "$KFORGE" run $cfgs --set 'bench.min_reps=30' --no-results --format jsonl --quiet >> "$DIR/kforge.jsonl"; }
# A baseline that fails leaves its column empty (a wrong row is counted by
# the table below); why it failed is in $DIR/base.err, and said here.
said() { echo "bench_rows.sh: $1 exited $2 (its column stays empty; see $DIR/base.err)" >&2; }
c() { # shellcheck disable=SC2086
      [ "$CUB" = none ] || "$CUB" --dtype "$DTYPE" --op "$OP" $cubargs >> "$DIR/base.txt" 2>> "$DIR/base.err" ||
        said "$CUB" $?
      [ -z "$CUBF" ] || "$CUBF" --dtype "$DTYPE" --op "$OP" $cubargs >> "$DIR/base.txt" 2>> "$DIR/base.err" ||
        said "$CUBF" $?; }
p() { # shellcheck disable=SC2086
      "$PYTHON" tools/rows_torch.py --dtype "$DTYPE" --op "$OP" $cubargs >> "$DIR/base.txt" 2>> "$DIR/base.err" ||
        said tools/rows_torch.py $?; }
r=1
while [ $r -le "$ROUNDS" ]; do
  case $((r % 3)) in 1) k; c; p ;; 2) c; p; k ;; 0) p; k; c ;; esac
  r=$((r + 1))
done
"$PYTHON" - "$DIR/kforge.jsonl" "$DIR/base.txt" "$cmdline" "$((t1 - t0))" <<'PY'
import json, re, statistics, sys
kf, base, out_ratio = {}, {}, {}
size = {"int32": 4, "uint32": 4, "float32": 4, "int64": 8, "float64": 8, "bfloat16": 2, "float16": 2}
bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r["rows"], r["cols"])
    if r["status"] != "ok":
        bad += 1
        continue
    kf.setdefault(key, []).append(r["gbps"])
    dev = r.get("device", "?")
    # bytes written per byte read: one accumulator per row of cols inputs
    acc = r.get("acc_dtype", "auto")
    out_ratio[key] = size.get(acc, size[r["dtype"]]) / (r["cols"] * size[r["dtype"]])
for line in open(sys.argv[2]):
    if not line.startswith("ROW "):
        continue
    f = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
    m = re.match(r"(\d+)x(\d+)$", f["shape"])
    if not m:
        continue
    if f.get("status") != "PASS":
        bad += 1
        continue
    impl = re.sub(r"cub\d+", "cub", f["impl"])
    base.setdefault((int(m.group(1)), int(m.group(2))), {}).setdefault(impl, []).append(float(f["gbps"]))
impls = sorted({i for v in base.values() for i in v})
print("# row-wise %s, %s; command: %s; kforge tuning took %s s" % (sys.argv[3].split("--dtype ")[1].split(" --rounds")[0], dev, sys.argv[3], sys.argv[4]))
print("| " + " | ".join(["rows x cols", "total", "kforge GB/s"] + impls + ["kforge / best baseline",
                                                                        "kforge GB/s in + out"]) + " |")
print("|---|---|---:|" + "---:|" * len(impls) + "---:|---:|")
for key in sorted(kf, key=lambda k: (-(k[0] * k[1]), k[1])):
    k = statistics.median(kf[key])
    b = {i: statistics.median(v) for i, v in base.get(key, {}).items()}
    best = max(b.values()) if b else float("nan")
    tot = key[0] * key[1]
    t = "2^%d" % (tot.bit_length() - 1) if tot & (tot - 1) == 0 else str(tot)
    cells = ["%d x %d" % key, t, "%.0f" % k] + ["%.0f" % b[i] if i in b else "-" for i in impls]
    print("| " + " | ".join(cells + ["%.2f" % (k / best) if b else "-", "%.0f" % (k * (1 + out_ratio[key]))]) + " |")
if bad:
    print("FAILED or wrong: %d measurements" % bad)
    sys.exit(2)
PY
