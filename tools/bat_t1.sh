#!/bin/sh
# tools/bat_t1.sh -- BAT's benchmarks (github:NTNU-HPC-Lab/BAT) tuned from
# their T1 files, each writing T4 (issue 37): for every
# batbench/benchmarks/*/ *-CAFF.json, `kforge tune FILE --format t4` (with
# --budget N, default 200, the strategy kforge picks), then the T4 checked
# against tests/data/t4/results-schema.json and loaded by the Auto-Tuning
# Association's methodology reader (python/tests/methodology_reader.py, its
# source from $METHODOLOGY_REPO).  Prints one line per benchmark: candidates,
# verified, best, the commonest failure messages, or why it was refused (a
# T1 field kforge does not take: exit 2), and the benchmarks BAT ships
# without a T1 file.
#
#   sh tools/bat_t1.sh BAT [BUDGET]     BAT: a checkout, or a bare git mirror
set -u
BAT=${1:?usage: tools/bat_t1.sh BAT_CHECKOUT_OR_GIT_DIR [BUDGET]}
BUDGET=${2:-200}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K=${KFORGE:-$ROOT/build/kforge}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kforge-bat.XXXXXX")}
PY=${PYTHON:-}
for p in python3 /usr/bin/python3; do
    [ -z "$PY" ] && "$p" -c 'import numpy' >/dev/null 2>&1 && PY=$p
done
PY=${PY:-python3}
echo "bat_t1: work in $OUT"
if [ -d "$BAT/batbench" ]; then
    cp -r "$BAT/batbench/benchmarks/." "$OUT/" || exit 2
else
    for f in $(git --git-dir="$BAT" ls-tree -r --name-only HEAD batbench/benchmarks); do
        d="$OUT/${f#batbench/benchmarks/}"
        mkdir -p "$(dirname "$d")" && git --git-dir="$BAT" show "HEAD:$f" >"$d" || exit 2
    done
fi
for dir in "$OUT"/*/; do
    b=$(basename "$dir")
    [ "$b" = others ] && continue
    ls "$dir"*-CAFF.json >/dev/null 2>&1 && continue
    echo "$b: no T1 file in BAT (only $(cd "$dir" && ls | tr '\n' ' '))"
    # the other branches: a T1 file there, and which kernel it describes
    G=$BAT
    [ -d "$BAT/.git" ] && G=$BAT/.git
    for ref in $(git --git-dir="$G" for-each-ref --format='%(refname)' refs/heads refs/remotes 2>/dev/null); do
        for f in $(git --git-dir="$G" ls-tree -r --name-only "$ref" 2>/dev/null | grep "/$b/[^/]*-CAFF\.json$"); do
            k=$(git --git-dir="$G" show "$ref:$f" | "$PY" -c 'import json,sys; d=json.load(sys.stdin)["KernelSpecification"]; print("kernel %s in %s" % (d.get("KernelName"), d.get("KernelFile")))' 2>/dev/null)
            echo "$b:   on ${ref#refs/heads/}: $f, $k"
        done
    done
done
for t1 in "$OUT"/*/*-CAFF.json; do
    b=$(basename "$(dirname "$t1")")
    (cd "$(dirname "$t1")" && "$K" tune "$(basename "$t1")" --budget "$BUDGET" --no-db --results tune.jsonl \
        --format t4 >t4.json 2>tune.err)
    rc=$?
    if [ $rc != 0 ] && [ $rc != 1 ]; then
        echo "$b: exit $rc: $(grep -m1 'kforge' "$(dirname "$t1")/tune.err" | head -c 300)"
        continue
    fi
    PYTHONPATH="$ROOT/python/tests" "$PY" - "$(dirname "$t1")/t4.json" "$ROOT/tests/data/t4/results-schema.json" "$b" <<'PY'
import json, sys, schema_check
d = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
e = schema_check.validate(d, s)
for r in d["results"]:
    assert {"compilation", "benchmark", "framework", "search_algorithm", "validation"} <= set(r["times"]), r
    assert [m["name"] for m in r["measurements"]].count("time") == 1, r
ok = [r for r in d["results"] if r["invalidity"] == "correct"]
best = min(ok, key=lambda r: [m["value"] for m in r["measurements"] if m["name"] == "time"][0]) if ok else None
t = [m["value"] for m in best["measurements"] if m["name"] == "time"][0] if best else None
print("%s: %d candidates, %d verified, T4 %s; best %s ms %s" % (sys.argv[3], len(d["results"]), len(ok),
      "valid" if not e else "INVALID: %s" % e[:2], t, best["configuration"] if best else ""))
st = {}
for r in d["results"]:
    for m in r["measurements"]:
        if m["name"] == "message":
            st[m["value"]] = st.get(m["value"], 0) + 1
for msg, n in sorted(st.items(), key=lambda x: -x[1])[:2]:
    print("%s:   %d x %s" % (sys.argv[3], n, msg[:320]))
PY
    printf '%s: ' "$b"
    "$PY" "$ROOT/python/tests/methodology_reader.py" "$(dirname "$t1")/t4.json"
done
