#!/bin/sh
# serve_suite.sh -- issue 35: which variant serves a size.  Accuracy as a
# choice, and sizes between the tuned ones, on the synthetic GPU
# (KFORGE_FAKE_GPU=1).  The fake GPU computes results exactly, so the
# errors a real GPU gives are written into the results file by hand (an
# atomic float sum 8e-6, a tree 3e-8, as measured on the H100), and the
# rules are checked on them:
#
#   1. the results line carries acc_rel (|error| / sum |x_i|) with --accuracy;
#   2. tune --simulate --max-error: the candidate above the bound is never the
#      best, the summary counts it and shows the error column; without the
#      bound the fastest (atomic) is the best, and the summary names the
#      deterministic candidate best and export serve instead;
#   3. merge records acc_rel in the database; kforge best and export serve the
#      deterministic entry by default, --fastest the fastest, --max-error only
#      entries within the bound, and exit 2 with a message when none is;
#   4. tune --between 1: the leaders of neighbouring tuned sizes measured at the
#      log-spaced size between each pair, recorded in the database, so best
#      answers there exactly and export dispatches on them; run again, it
#      resumes;
#   5. the default of a tune of several sizes: one size measured between each
#      pair of neighbours more than 2x apart, in the results file and the
#      database ("between": true), its cost in the summary, and the per-range
#      table in the summary and the exported header (what was measured in
#      each range and which variant serves it, checked against the header's
#      dispatch table); --between 0 measures nothing between and the header
#      says which ranges were not measured; --simulate and shards measure
#      nothing between; a custom kernel of one size axis is measured between
#      its sizes, one of two says it is not.
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
ROOT=$(pwd)
if [ -n "${KFORGE_TEST_OUT:-}" ]; then
  OUT=$KFORGE_TEST_OUT; own_out=0
else
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/kforge-serve-suite.XXXXXX") || exit 2; own_out=1
fi
keep_out=0
trap 'if [ $own_out = 1 ] && [ $keep_out = 0 ]; then rm -rf "$OUT"; fi' EXIT
trap 'exit 130' INT TERM HUP
cd "$OUT" || exit 1
export KFORGE_FAKE_GPU=1
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$OUT/cache}"
export KFORGE_DB="$OUT/db"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "PASS: $1"; }
bad() { fail=$((fail+1)); echo "FAIL: $1"; keep_out=1; }
has() { grep -q -- "$2" "$1" && ok "$3" || { bad "$3"; sed 's/^/    /' "$1" | head -30; }; }
hasnt() { grep -q -- "$2" "$1" && { bad "$3"; sed 's/^/    /' "$1" | head -30; } || ok "$3"; }

cat > space.json <<'J'
{"kernel": "reduce", "dtype": "float32", "op": "sum", "algorithm": "shuffle", "block_size": 256,
 "elements_per_thread": 4, "vector_width": 4, "unroll": "full", "passes": ["atomic", "last_block"],
 "n": ["2^20"], "bench": {"warmup": 1, "min_reps": 5, "max_reps": 5}}
J
# --- 1. acc_rel in the results line ------------------------------------------------
"$KFORGE" tune space.json --no-db --accuracy --results r.jsonl -q > tune.txt 2>&1
n=$(grep -c '"acc_rel":' r.jsonl)
[ "$n" = 2 ] && ok "tune --accuracy: acc_rel on both results lines" || { bad "acc_rel on both lines (got $n)"; cat tune.txt; }
# the errors and times a real GPU gives (H100, issue 35): atomic faster, 270 x less accurate
python3 - <<'P'
import json
out = []
for l in open("r.jsonl"):
    d = json.loads(l)
    if d.get("passes") == "atomic":
        d["acc_rel"], d["median_ms"] = 8e-6, 0.0100
    else:
        d["acc_rel"], d["median_ms"] = 3e-8, 0.0104
    out.append(json.dumps(d))
open("real.jsonl", "w").write("\n".join(out) + "\n")
P
# --- 2. tune --simulate with and without --max-error -------------------------------
"$KFORGE" tune space.json --simulate real.jsonl > free.txt 2>&1
has free.txt "best: .*atomic" "no bound: the fastest (atomic) is the best"
has free.txt "kforge best and export serve by default" "the summary names what best and export serve instead"
has free.txt "last_block, +4.0%, error 3e-08 (the best's 8e-06)" "... the deterministic candidate, how far behind, both errors"
"$KFORGE" tune space.json --simulate real.jsonl --max-error 1e-6 > bound.txt 2>&1
has bound.txt "best: .*last_block" "--max-error 1e-6: the atomic candidate (8e-6) is never the best"
has bound.txt "above --max-error 1e-06: 1 candidates" "the summary counts the candidate above the bound"
has bound.txt " error" "the best's table has an error column"
hasnt bound.txt "failed candidates: 1" "a candidate above the bound is not counted as failed"
"$KFORGE" tune space.json --simulate real.jsonl --max-error 2 > usage.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "expected a relative error between 0 and 1" usage.txt && ok "--max-error 2: exit 2, says what is expected" || bad "--max-error 2 (rc $rc)"
# --- 3. the database, best and export -----------------------------------------------
"$KFORGE" merge real.jsonl --results merged.jsonl > merge.txt 2>&1 || { bad "merge"; cat merge.txt; }
grep -q '"acc_rel": *8e-06' db/*.json && grep -q '"acc_rel": *3e-08' db/*.json && ok "the database records acc_rel of both entries" || { bad "acc_rel in the database"; cat db/*.json | head -40; }
"$KFORGE" best --n 2^20 > best.json 2> best.err
has best.json '"passes": "last_block"' "best (default): the deterministic entry, slower as it is"
has best.err "relative error 3e-08" "best says the error it measured"
"$KFORGE" best --n 2^20 --fastest > fast.json 2>/dev/null
has fast.json '"passes": "atomic"' "best --fastest: the fastest"
"$KFORGE" best --n 2^20 --fastest --max-error 1e-6 > fb.json 2>/dev/null
has fb.json '"passes": "last_block"' "best --fastest --max-error 1e-6: only entries within the bound"
"$KFORGE" best --n 2^20 --max-error 1e-9 > none.json 2> none.err; rc=$?
[ $rc = 2 ] && ok "best --max-error 1e-9: nothing within it, exit 2" || bad "best --max-error 1e-9 (rc $rc)"
has none.err "that --max-error 1e-09 allows" "... and the message names the bound"
"$KFORGE" best --n 2^20 --fastest --deterministic > /dev/null 2> both.err; rc=$?
[ $rc = 2 ] && grep -q "choose one" both.err && ok "--fastest with --deterministic: exit 2" || bad "--fastest --deterministic (rc $rc)"
"$KFORGE" export --dtype float32 --op sum -o h.cuh 2> exp.err
has exp.err "last_block" "export (default): the deterministic variant"
hasnt exp.err "atomic" "export (default): not the atomic one"
has exp.err "every variant is deterministic" "export says every variant is deterministic"
"$KFORGE" export --dtype float32 --op sum --fastest -o hf.cuh 2> expf.err
has expf.err "atomic" "export --fastest: the atomic variant"
"$KFORGE" export --dtype float32 --op sum --max-error 1e-9 -o hn.cuh 2> expn.err; rc=$?
[ $rc = 2 ] && [ ! -e hn.cuh ] && ok "export --max-error 1e-9: exit 2, nothing written" || bad "export --max-error 1e-9 (rc $rc)"
has expn.err "has a measured relative error within 1e-09" "... and says why"

# --- 4. tune --between ------------------------------------------------------------
export KFORGE_DB="$OUT/db2"
"$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set 'n=["2^10","2^14","2^18"]' --budget 30 --between 1 \
  --results b.jsonl -q > between.txt 2>&1; rc=$?
[ $rc = 0 ] && ok "tune --between 1: exit 0" || { bad "tune --between 1 (rc $rc)"; cat between.txt; }
has between.txt "--between 1: the leaders of each tuned size at 2 sizes between them" "the summary says what is measured between"
has b.jsonl.between.json '"n": \[4096, 65536\]' "the sizes between: 2^12 and 2^16 (log-spaced)"
hasnt b.jsonl.between.json '"name"' "the candidates are the search's variants (unnamed as there): the same variants at more sizes"
"$KFORGE" best --n 4096 > b4096.json 2> b4096.err; rc=$?
[ $rc = 0 ] && ok "best --n 4096 after --between: exit 0" || { bad "best --n 4096 (rc $rc)"; cat b4096.err; }
hasnt b4096.err "no entry for" "best --n 4096: an entry measured there, not the nearest tuned size's"
"$KFORGE" export --dtype float32 --op sum -o hb.cuh 2> hb.err
has hb.err "5 sizes tuned" "export: the 3 tuned sizes and the 2 between"
"$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set 'n=["2^10","2^14","2^18"]' --budget 30 --between 1 \
  --results b.jsonl -q > between2.txt 2>&1
n=$(grep -c "measured now: 0 candidates" between2.txt)
[ "$n" = 2 ] && ok "the same command again: both searches resume, nothing measured" || { bad "resume of --between ($n)"; cat between2.txt; }
"$KFORGE" tune space.json --between 99 > b99.txt 2>&1; rc=$?
[ $rc = 2 ] && grep -q "expected a number of sizes 0..16" b99.txt && ok "--between 99: exit 2" || bad "--between 99 (rc $rc)"

# --- 5. sizes between the tuned ones by default -----------------------------------
export KFORGE_DB="$OUT/db3"
N4='n=["2^10","2^14","2^15","2^19"]'
"$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set dtype=float32 --set op=max --set "$N4" --budget 20 \
  --results d.jsonl > def.txt 2> def.err; rc=$?
[ $rc = 0 ] && ok "default tune of 4 sizes: exit 0" || { bad "default tune (rc $rc)"; cat def.err; }
has d.jsonl.between.json '"n": \[4096, 131072\]' "by default: 2^12 between 2^10 and 2^14, 2^17 between 2^15 and 2^19, none between 2^14 and 2^15 (2x apart)"
has def.txt "sizes between the tuned ones (the default; --between 0: none)" "the summary says the between pass is the default"
has def.txt "sizes between the tuned ones: [0-9]* candidates (the leaders) at 2 sizes, [0-9]* cases ([0-9]* measured now) in [0-9.]* s: [0-9]*% of the search's" "the summary says what the between pass cost"
n=$(grep -c '"n":4096,' d.jsonl); [ "$n" -ge 1 ] && ok "the results file holds the cases at 2^12 ($n)" || bad "no case at 2^12 in d.jsonl"
python3 - "$KFORGE_DB" > dbbetween.txt <<'P'
import json, glob, sys
for f in glob.glob(sys.argv[1] + "/*.json"):
    for e in json.load(open(f))["entries"]:
        print(e["n"], "between" if e.get("between") else "tuned")
P
has dbbetween.txt "^4096 between" "the database marks the entry at 2^12 as measured between"
has dbbetween.txt "^131072 between" "... and the one at 2^17"
has dbbetween.txt "^16384 tuned" "... and the tuned sizes as tuned"
hasnt dbbetween.txt "^1024 between" "... never a tuned size as between"
has def.txt "^per range of n, what was measured" "the summary prints the per-range table"
has def.txt "2^12 (between)" "... with the size measured between"
has def.txt "every range measured" "... and says every range was measured"
"$KFORGE" export --dtype float32 --op max -o hd.cuh 2> hd.err; rc=$?
[ $rc = 0 ] && ok "export after the default tune: exit 0" || { bad "export (rc $rc)"; cat hd.err; }
has hd.cuh "^// What was measured, per range of n" "the header says per range what was measured"
has hd.err "n=4096 .*(measured between tuned sizes)" "export's message names the sizes measured between"
# every measured size stands in exactly one range, with the label the dispatch table serves it with,
# and its kind (tuned, between) as the database records it
python3 - hd.cuh dbbetween.txt > ranges.txt <<'P'
import re, sys
h = open(sys.argv[1]).read().split("\n")
kind = {int(n): k for n, k in (l.split() for l in open(sys.argv[2]) if l.strip())}
disp, cur = {}, None  # size -> label, from the dispatch table
for l in h:
    m = re.match(r"//   n +\d+ \.\. +\S+ +k\d+ +(\S+)$", l)
    if m: cur = m.group(1); continue
    m = re.match(r"//   +(?:tuned|measured between the tuned sizes) at n = 2\^(\d+):", l)
    if m and cur: disp[1 << int(m.group(1))] = cur; cur = None
seen = {}
i = h.index(next(l for l in h if l.startswith("// What was measured, per range")))
for l in h[i + 1:]:
    if not l.startswith("//   "): break
    m = re.match(r"//   (.*): measured at (.*) -> (\S+)", l)
    if not m: print("BAD line", l); continue
    for p in m.group(2).split(", "):
        e, k = re.match(r"2\^(\d+) \((\w+)\)", p).groups()
        seen[1 << int(e)] = (k, m.group(3))
bad = 0
for n, lab in disp.items():
    if n not in seen: print("MISSING", n); bad = 1
    elif seen[n][1] != lab: print("LABEL", n, seen[n][1], lab); bad = 1
    elif seen[n][0] != kind.get(n): print("KIND", n, seen[n][0], kind.get(n)); bad = 1
print("ranges ok" if not bad and len(seen) == len(disp) == 6 else "ranges BAD %d %d" % (len(seen), len(disp)))
P
has ranges.txt "^ranges ok" "the header's per-range lines: each of the 6 measured sizes once, its kind and the variant the dispatch table serves"
"$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set dtype=float32 --set op=max --set "$N4" --budget 20 \
  --results d.jsonl > def2.txt 2> def2.err
n=$(grep -c "measured now: 0 candidates" def2.txt)
[ "$n" = 2 ] && ok "the default tune again: both searches resume, nothing measured" || { bad "resume of the default ($n)"; cat def2.txt; }
# --between 0: the behaviour before: nothing between, and the header says where nothing was measured
export KFORGE_DB="$OUT/db4"
"$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set dtype=float32 --set op=max --set "$N4" --budget 20 \
  --between 0 --results z.jsonl > zero.txt 2> zero.err; rc=$?
[ $rc = 0 ] && [ ! -e z.jsonl.between.json ] && ok "--between 0: exit 0, no between config" || bad "--between 0 (rc $rc)"
hasnt zero.txt "sizes between the tuned ones" "--between 0: no between pass"
n=$(grep -c '"n":4096,' z.jsonl); [ "$n" = 0 ] && ok "--between 0: no case at 2^12" || bad "--between 0 measured at 2^12 ($n)"
has zero.txt "2 pairs of neighbouring tuned sizes more than 2x apart, nothing measured between" "--between 0: the summary counts the ranges not measured"
"$KFORGE" export --dtype float32 --op max -o hz.cuh 2> hz.err
has hz.err "4 sizes tuned" "--between 0: export of the 4 tuned sizes"
has hz.cuh "nearest tuned size, not measured in between (.*2^10 .. 2^14" "--between 0: the header says 2^10 .. 2^14 was not measured"
has hz.cuh "2^15 .. 2^19" "... nor 2^15 .. 2^19"
hasnt hz.cuh "2^14 .. 2^15" "... but 2^14 .. 2^15 (2x apart) is not a gap"
# results through a pipe: the config between cannot be written beside them; the search stands (exit 0)
{ "$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set dtype=float32 --set op=max --set "$N4" --budget 10 \
  --no-db --results /dev/fd/3 3>&1 >/dev/null 2>pipe.err; echo $? > pipe.rc; } | cat > p.jsonl
[ "$(cat pipe.rc)" = 0 ] && [ "$(grep -c . p.jsonl)" -ge 40 ] && ok "results into a pipe: exit 0, the search's lines" ||
  { bad "results into a pipe (rc $(cat pipe.rc))"; cat pipe.err; }
has pipe.err "the sizes between the tuned ones are not measured: .*between.json" "... and it says the sizes between were not measured, and why"
# --simulate and a shard measure nothing between
"$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set dtype=float32 --set op=max --set "$N4" --budget 10 \
  --simulate z.jsonl > sim.txt 2>&1
hasnt sim.txt "sizes between the tuned ones (the default" "--simulate: no between pass"
"$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set dtype=float32 --set op=max --set "$N4" --budget 10 \
  --strategy random --shard 1/2 --no-db --results s.jsonl > shard.txt 2>&1
hasnt shard.txt "sizes between the tuned ones (the default" "--shard 1/2: no between pass"
has shard.txt "not measured in a shard" "... and it says why"
# custom kernels: one size axis measured between, two not
export KFORGE_DB="$OUT/db5"
"$KFORGE" tune "$ROOT/configs/custom/vector_add.json" --set 'n=["2^10","2^16"]' --budget 4 \
  --results c.jsonl > cust.txt 2> cust.err; rc=$?
[ $rc = 0 ] && ok "custom kernel of one size axis: exit 0" || { bad "custom tune (rc $rc)"; cat cust.err; }
has c.jsonl.between.json '"n": \[8192\]' "custom kernel: 2^13 measured between 2^10 and 2^16"
"$KFORGE" export --kernel "$ROOT/configs/custom/vector_add.json" -o hc.h 2> hc.err
has hc.h "^// What was measured, per range of n" "custom header: the per-range lines"
has hc.h "2^13 (between)" "... with the size measured between"
"$KFORGE" tune "$ROOT/configs/custom/transpose.json" --set 'width=[256,1024]' --set height=512 --budget 4 \
  --no-db --results t.jsonl > tr.txt 2>&1
has tr.txt "not measured for a custom kernel with several size axes" "custom kernel of two size axes: says the sizes between are not measured"

echo "serve suite: $pass passed, $fail failed"
[ $fail = 0 ]
