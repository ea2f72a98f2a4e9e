#!/bin/sh
# ab_bench.sh -- two kforge binaries on the same config, alternating rounds
# (A B, then B A, ...), same GPU, same method: the per-case median of the
# per-round medians of each, and their ratio.  Used to show that a change
# to the engine leaves kernel speed alone.
#
#   sh tools/ab_bench.sh OLD_KFORGE NEW_KFORGE CONFIG [ROUNDS] [-- --set ...]
#
# Prints one line per case (name, size, A ms, B ms, B/A speed ratio) and the
# worst ratio; raw JSON lines go to ${OUT:-build}/ab-{a,b}.jsonl.
set -eu
[ $# -ge 3 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
A=$1 B=$2 CONFIG=$3
ROUNDS=${4:-3}
shift 3; [ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
DIR=${OUT:-build}
mkdir -p "$DIR"
: > "$DIR/ab-a.jsonl"; : > "$DIR/ab-b.jsonl"
r=1
while [ $r -le "$ROUNDS" ]; do
  if [ $((r % 2)) = 1 ]; then order="a b"; else order="b a"; fi
  for w in $order; do
    if [ $w = a ]; then bin=$A; else bin=$B; fi
    # a case that fails (a watchdog timeout, say) is left out of the comparison, not the end of it
    "$bin" run "$CONFIG" "$@" --no-results --format jsonl --quiet >> "$DIR/ab-$w.jsonl" || true
  done
  r=$((r + 1))
done
python3 - "$DIR/ab-a.jsonl" "$DIR/ab-b.jsonl" <<'PY'
import json, sys, statistics
def load(p):
    d = {}
    for line in open(p):
        r = json.loads(line)
        if r.get("status") != "ok":
            continue
        key = (r.get("name") or r.get("label"), r.get("dtype"), r.get("op"), r.get("n", r.get("rows")), r.get("cols"))
        d.setdefault(key, []).append(r["median_ms"])
    return {k: statistics.median(v) for k, v in d.items()}
a, b = load(sys.argv[1]), load(sys.argv[2])
worst = None
print("%-24s %-8s %-5s %12s %10s %10s %8s" % ("name", "dtype", "op", "size", "A ms", "B ms", "A/B"))
for k in sorted(set(a) & set(b), key=lambda k: (k[3] or 0, str(k[0]))):
    ratio = a[k] / b[k]
    worst = ratio if worst is None else min(worst, ratio)
    print("%-24s %-8s %-5s %12s %10.5f %10.5f %8.3f" % (k[0], k[1], k[2], k[3], a[k], b[k], ratio))
missing = set(a) ^ set(b)
if missing:
    print("cases measured by only one binary:", len(missing))
print("worst A/B speed ratio (B as fast as A: 1.0; B 2%% slower: 0.98): %.3f" % (worst or 0))
PY
