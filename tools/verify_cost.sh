#!/bin/sh
# verify_cost.sh OLD NEW [ROUNDS] -- what verification costs per case, and
# what a tune costs, with two kforge binaries (before and after a change to
# verification) on the same GPU, alternately, ROUNDS times (default 2).
# Prints per binary, dtype and n the medians of the worker's setup_ms,
# verify_ms and bench_ms (results fields), and the tune's wall time.
#
#   sh tools/verify_cost.sh ./kforge-old ./kforge 2
set -u
OLD=$1; NEW=$2; ROUNDS=${3:-2}
OUT=${OUT:-$(mktemp -d)}
cfg=configs/fast.json
for i in $(seq 1 "$ROUNDS"); do
  for b in old new; do
    bin=$OLD; [ $b = new ] && bin=$NEW
    "$bin" run $cfg --set 'dtype=["float32","int32"]' --set 'n=[1048576,16777216,268435456]' --quiet \
      --results "$OUT/run-$b-$i.jsonl" --no-resume > /dev/null 2>&1
    t0=$(date +%s.%N)
    "$bin" tune configs/tune-reduce.json --set n=16777216 --budget 100 --strategy random --seed 1 --no-db \
      --results "$OUT/tune-$b-$i.jsonl" --no-resume --quiet > /dev/null 2>&1
    t1=$(date +%s.%N)
    echo "tune $b round $i: $(awk "BEGIN { print $t1 - $t0 }") s wall, 100 candidates at n=2^24"
  done
done
python3 - "$OUT" <<'PY'
import json, sys, glob, statistics, collections
out = sys.argv[1]
for kind in ("run", "tune"):
    t = collections.defaultdict(list)
    for f in glob.glob("%s/%s-*.jsonl" % (out, kind)):
        b = f.split("/")[-1].split("-")[1]
        for line in open(f):
            d = json.loads(line)
            if d["status"] != "ok": continue
            t[(b, d["dtype"], d["n"])].append((d["setup_ms"], d["verify_ms"], d["bench_ms"], d.get("median_ms", 0)))
    print("%s: median per case (ms)        setup   verify    bench   kernel" % kind)
    for k in sorted(t):
        v = t[k]
        print("  %-4s %-8s n=%-10d %8.2f %8.2f %8.2f %8.4f  (%d cases)" % (k + tuple(statistics.median(x[i] for x in v) for i in range(4)) + (len(v),)))
PY
