#!/bin/sh
# tests/compare_suite.sh -- end-to-end checks of issue 14 (what nvbench,
# Kernel Tuner and hyperfine do that kforge did not) without a GPU:
#   - kforge compare: matching by identity, ratio, significance, --fail-above
#     exit status, colour on a terminal, every output format; --match KEYS
#     (variant against variant, tuned configs size by size, ambiguity, what
#     differs), why nothing paired, --all, --no-header;
#   - --format md for run, tune and compare;
#   - NVML through the scripted fake library (tests/fake_nvml.c, loaded by the
#     fake GPU's worker through KFORGE_NVML_LIB): clocks, throttle reasons,
#     power and energy recorded in the results, warnings, the table's columns;
#     a machine without NVML (a note, not an error);
#   - kforge tune --objective energy|edp (measured and simulated);
#   - the progress line (cleared before warnings, failures, time left);
#   - the newcomer path: the README's first command as root and as a user,
#     its "without a GPU" commands, config messages, short options, names.
# Runs on the fake GPU (KFORGE_FAKE_GPU=1).  Prints PASS/FAIL lines and
# "compare_suite: N passed, N failed"; exits 1 if a check failed.
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
ROOT=$(pwd)
FAKE_NVML=$(dirname "$KFORGE")/tests/libfakenvml.so
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-compare.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
trap 'exit 141' PIPE # sh tests/compare_suite.sh | head: still clean up
# make check gives the suites that do not test the cache one cubin cache (KFORGE_TEST_CACHE)
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C
unset KFORGE_FAULT_INJECT KFORGE_PLANT KFORGE_NVML_LIB FAKE_NVML_SCRIPT NO_COLOR
cd "$TMP" || exit 2
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
has() { grep -q -- "$2" "$1"; }
count() { grep -c -- "$2" "$1"; }

cat > a.json <<'J'
{"kernel": "reduce", "defaults": {"algorithm": "shuffle", "unroll": "full", "n": [4096, "2^20"]},
 "variants": [{"name": "a1", "block_size": 128}, {"name": "a2", "block_size": 256},
              {"name": "a3", "block_size": 512, "vector_width": 4}]}
J

# scale NAME FACTOR IN OUT: the times of NAME's lines times FACTOR
scale() {
  awk -v name="\"name\":\"$1\"" -v f="$2" '
    index($0, name) == 0 { print; next }
    { s = $0; out = ""
      while (match(s, /"(median_ms|mean_ms|min_ms|max_ms|stddev_ms)":[0-9.eE+-]+/)) {
        kv = substr(s, RSTART, RLENGTH); c = index(kv, ":")
        out = out substr(s, 1, RSTART - 1) substr(kv, 1, c) (substr(kv, c + 1) * f)
        s = substr(s, RSTART + RLENGTH) }
      print out s }' "$3" > "$4"
}

# --- kforge compare -------------------------------------------------------
"$KFORGE" run a.json --results old.jsonl -q > /dev/null 2>&1
cp old.jsonl same.jsonl
"$KFORGE" compare old.jsonl same.jsonl > c1.txt 2> c1.err
rc=$?
if [ $rc -eq 0 ] && [ "$(count c1.txt ' same$')" -eq 6 ] && has c1.err "6 cases in both: 0 faster, 0 slower, 6 the same"; then
  ok "compare: identical files, 6 cases the same, exit 0"
else
  bad "compare identical" "rc=$rc $(cat c1.txt c1.err)"
fi

scale a2 1.25 old.jsonl slow.jsonl
scale a3 0.8 slow.jsonl mixed.jsonl
"$KFORGE" compare old.jsonl mixed.jsonl > c2.txt 2> c2.err
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c '^a2 .* 1\.250 .*+25\.0%.*slower$' c2.txt)" -eq 2 ] &&
   [ "$(grep -c '^a3 .* 0\.800 .*-20\.0%.*faster$' c2.txt)" -eq 2 ] && [ "$(count c2.txt ' same$')" -eq 2 ] &&
   has c2.err "2 faster, 2 slower, 2 the same"; then
  ok "compare: ratio, change and verdict per case (slower, faster, same)"
else
  bad "compare verdicts" "rc=$rc $(cat c2.txt c2.err)"
fi

"$KFORGE" compare old.jsonl mixed.jsonl --fail-above 5% > /dev/null 2> c3.err; rc1=$?
"$KFORGE" compare old.jsonl mixed.jsonl --fail-above 30 > /dev/null 2> c4.err; rc2=$?
"$KFORGE" compare old.jsonl same.jsonl --fail-above 0.5% > /dev/null 2>&1; rc3=$?
if [ $rc1 -eq 1 ] && has c3.err "2 cases got slower by more than 5%" && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ]; then
  ok "compare --fail-above: exit 1 beyond the threshold, 0 within it (5%, 30, 0.5%)"
else
  bad "compare --fail-above" "rc=$rc1/$rc2/$rc3 $(cat c3.err c4.err)"
fi

# a small difference within the noise is not significant: same, even with --fail-above 0
awk '{ gsub(/"stddev_ms":[0-9.eE+-]+/, "\"stddev_ms\":0.01"); print }' old.jsonl > noisy_old.jsonl
scale a1 1.001 noisy_old.jsonl noisy_new.jsonl
"$KFORGE" compare noisy_old.jsonl noisy_new.jsonl --fail-above 0 > c5.txt 2>&1; rc=$?
if [ $rc -eq 0 ] && [ "$(count c5.txt ' same$')" -eq 6 ]; then
  ok "compare: a change within both runs' noise is not significant"
else
  bad "compare noise" "rc=$rc $(cat c5.txt)"
fi

# a case that fails now is a regression; the latest line of a case counts
sed 's/"name":"a1","label"\(.*\)"status":"ok"/"name":"a1","label"\1"status":"fault"/' old.jsonl > fails.jsonl
cp old.jsonl latest.jsonl
scale a1 2 old.jsonl twice.jsonl
grep '"name":"a1"' twice.jsonl >> latest.jsonl
"$KFORGE" compare old.jsonl fails.jsonl --fail-above 5 > c6.txt 2>&1; rc1=$?
"$KFORGE" compare old.jsonl latest.jsonl > c7.txt 2>&1; rc2=$?
if [ $rc1 -eq 1 ] && [ "$(count c6.txt 'fails now (!)')" -eq 2 ] && [ $rc2 -eq 0 ] &&
   [ "$(grep -c '^a1 .* 2\.000 .*slower$' c7.txt)" -eq 2 ] && has c7.txt "6 cases in both"; then
  ok "compare: a case failing now is a regression; a case recorded twice counts by its latest line"
else
  bad "compare fails/latest" "rc=$rc1/$rc2 $(cat c6.txt c7.txt)"
fi

# errors: a missing file, nothing in common, a third file, a bad threshold
"$KFORGE" compare old.jsonl nonexistent.jsonl > /dev/null 2> e1.txt; r1=$?
echo '{"not": "a result"}' > junk.jsonl
"$KFORGE" compare old.jsonl junk.jsonl > /dev/null 2> e2.txt; r2=$?
"$KFORGE" compare old.jsonl same.jsonl x.jsonl > /dev/null 2> e3.txt; r3=$?
"$KFORGE" compare old.jsonl same.jsonl --fail-above lots > /dev/null 2> e4.txt; r4=$?
if [ $r1 -eq 2 ] && has e1.txt "nonexistent.jsonl" && [ $r2 -eq 2 ] && has e2.txt "no case in common" &&
   [ $r3 -eq 2 ] && [ $r4 -eq 2 ] && has e4.txt "fail-above"; then
  ok "compare: usage errors and unreadable or unrelated files exit 2 with a message"
else
  bad "compare errors" "$r1 $r2 $r3 $r4 $(cat e1.txt e2.txt e3.txt e4.txt)"
fi

# --any-device: the same cases measured on another GPU
sed 's/"device":"fake-gpu (KFORGE_FAKE_GPU)"/"device":"other GPU"/' old.jsonl > other.jsonl
"$KFORGE" compare old.jsonl other.jsonl > /dev/null 2> d1.txt; r1=$?
"$KFORGE" compare old.jsonl other.jsonl --any-device > d2.txt 2>&1; r2=$?
if [ $r1 -eq 2 ] && has d1.txt "any-device" && [ $r2 -eq 0 ] && has d2.txt "6 cases in both"; then
  ok "compare --any-device matches across GPUs (and is suggested when nothing matches)"
else
  bad "compare --any-device" "$r1 $r2 $(cat d1.txt d2.txt)"
fi

# --match: one variant against another (block size 256 in one file, 512 in the other)
cat > v.json <<'J'
{"kernel": "reduce", "algorithm": "shuffle", "unroll": "full", "n": [4096, "2^20"], "block_size": 256}
J
"$KFORGE" run v.json --results b256.jsonl -q > /dev/null 2>&1
"$KFORGE" run v.json --set block_size=512 --results b512.jsonl -q > /dev/null 2>&1
"$KFORGE" compare b256.jsonl b512.jsonl > m0.txt 2> m0.err; r0=$?
"$KFORGE" compare b256.jsonl b512.jsonl --all > m1.txt 2> m1.err; r1=$?
"$KFORGE" compare b256.jsonl b512.jsonl --match n > m2.txt 2> m2.err; r2=$?
"$KFORGE" compare b256.jsonl b512.jsonl --match n --format jsonl > m3.txt 2> /dev/null; r3=$?
jm_ok=1
if command -v python3 > /dev/null 2>&1; then
  python3 -c '
import json
rows = [json.loads(l) for l in open("m3.txt")]
assert sorted(r["size"]["n"] for r in rows) == [4096, 1048576], rows
assert all(r["differs"] == [{"key": "block_size", "old": 256, "new": 512}] for r in rows), rows
assert all("bs256" in r["old"]["name"] and "bs512" in r["new"]["name"] for r in rows)
' || jm_ok=0
fi
if [ $r0 -eq 2 ] && [ ! -s m0.txt ] && has m0.err "the files differ in block_size (256 in b256.jsonl; 512 in b512.jsonl)" &&
   has m0.err "for example --match n$" && ! has m0.err "any-device" &&
   [ $r1 -eq 2 ] && [ "$(count m1.txt ' only old$')" -eq 2 ] && [ "$(count m1.txt ' only new$')" -eq 2 ] &&
   [ $r2 -eq 0 ] && [ "$(count m2.txt 'block_size 256 vs 512$')" -eq 2 ] && has m2.txt ' differs$' &&
   has m2.err "2 cases in both" && [ $r3 -eq 0 ] && [ $jm_ok = 1 ]; then
  ok "compare --match n: one variant against another, what differs shown; without it the differing keys and --match are named; --all lists the unpaired"
else
  bad "compare --match variants" "$r0 $r1 $r2 $r3 json=$jm_ok $(cat m0.err m1.txt m2.txt m2.err)"
fi

# --match n,dtype: two tuned configs size by size; --match name,n across GPUs
grep '"name":"a1"' old.jsonl > tuned1.jsonl
grep '"name":"a3"' old.jsonl > tuned3.jsonl
"$KFORGE" compare tuned1.jsonl tuned3.jsonl --match n,dtype > m4.txt 2> m4.err; r4=$?
"$KFORGE" compare old.jsonl other.jsonl --match name,n > m5.txt 2> m5.err; r5=$?
"$KFORGE" compare old.jsonl same.jsonl --match n > m6.txt 2> m6.err; r6=$?
if [ $r4 -eq 0 ] && [ "$(count m4.txt 'block_size 128 vs 512; vector_width 1 vs 4; name a1 vs a3$')" -eq 2 ] &&
   [ $r5 -eq 0 ] && [ "$(count m5.txt 'gpu fake-gpu (KFORGE_FAKE_GPU) vs other GPU$')" -eq 6 ] &&
   [ $r6 -eq 0 ] && has m6.err "6 cases in both: 0 faster, 0 slower, 6 the same" && ! has m6.err ambiguous; then
  ok "compare --match n,dtype pairs two tuned configs size by size; --match name,n pairs across GPUs; identical cases pair first"
else
  bad "compare --match keys" "$r4 $r5 $r6 $(cat m4.txt m4.err m5.err m6.err)"
fi

# --match ambiguous: three cases of one file have the same n as one of the other
"$KFORGE" compare old.jsonl b256.jsonl --match n > m7.txt 2> m7.err; r7=$?
"$KFORGE" compare old.jsonl b256.jsonl --match n --all > m8.txt 2> /dev/null; r8=$?
"$KFORGE" compare old.jsonl b256.jsonl --match n,block_size > m9.txt 2> m9.err; r9=$?
"$KFORGE" compare old.jsonl b256.jsonl --match nn > /dev/null 2> m10.err; r10=$?
"$KFORGE" compare old.jsonl b256.jsonl --match '' > /dev/null 2> m11.err; r11=$?
if [ $r7 -eq 2 ] && [ ! -s m7.txt ] &&
   [ "$(count m7.err 'ambiguous: 3 cases in old.jsonl and 1 in b256.jsonl have n=[0-9]*; they differ in block_size, vector_width, name; none of them paired (.*for example --match n,block_size)')" -eq 2 ] &&
   [ $r8 -eq 2 ] && [ "$(count m8.txt ' ambiguous$')" -eq 8 ] &&
   [ $r9 -eq 0 ] && [ "$(count m9.txt '^shuffle/bs256/.* same *name a2 vs shuffle/bs256/')" -eq 2 ] &&
   has m9.err "only in old.jsonl: 4, only in b256.jsonl: 0" &&
   [ $r10 -eq 2 ] && has m10.err "unknown key 'nn' (did you mean 'n'?)" && [ $r11 -eq 2 ] && has m11.err "expected keys"; then
  ok "compare --match: several cases with the same keys are ambiguous (said, listed by --all, not paired); a key more pairs them; unknown keys refused"
else
  bad "compare --match ambiguous" "$r7 $r8 $r9 $r10 $r11 $(cat m7.err m8.txt m9.txt m9.err m10.err)"
fi

# --no-header: a shell loop appending CSV to one file has one header
rm -f loop.csv
for f in same.jsonl mixed.jsonl; do
  h=; [ -f loop.csv ] && h=--no-header
  "$KFORGE" compare old.jsonl $f --format csv $h >> loop.csv 2> /dev/null
done
"$KFORGE" compare old.jsonl same.jsonl --no-header > /dev/null 2> nh.err; rnh=$?
if [ "$(count loop.csv '^name,')" -eq 1 ] && [ "$(wc -l < loop.csv)" -eq 13 ] && head -1 loop.csv | grep -q ',differs$' &&
   [ $rnh -eq 2 ] && has nh.err "no-header goes with --format csv"; then
  ok "compare --format csv --no-header: one header in a file appended to in a loop (a table refuses it)"
else
  bad "compare --no-header" "$rnh $(cat loop.csv nh.err)"
fi

# formats; colour only on a terminal (and not with NO_COLOR)
"$KFORGE" compare old.jsonl mixed.jsonl --format md > f_md.txt 2>/dev/null
"$KFORGE" compare old.jsonl mixed.jsonl --format csv > f_csv.txt 2>/dev/null
"$KFORGE" compare old.jsonl mixed.jsonl --format jsonl > f_jsonl.txt 2>/dev/null
"$KFORGE" compare old.jsonl mixed.jsonl --format json > f_json.txt 2>/dev/null
json_ok=1
if command -v python3 > /dev/null 2>&1; then
  python3 -c '
import json, sys
rows = [json.loads(l) for l in open("f_jsonl.txt")]
arr = json.load(open("f_json.txt"))
assert len(rows) == 6 and rows == arr, "jsonl and json differ"
slow = [r for r in rows if r["verdict"] == "slower"]
assert len(slow) == 2 and all(abs(r["ratio"] - 1.25) < 1e-4 and r["p"] < 0.01 and r["significant"] for r in slow)
assert all(r["old"]["reps"] == 5 and r["new"]["status"] == "ok" for r in rows)
assert sorted(set(r["size"]["n"] for r in rows)) == [4096, 1048576], "size: numbers"
assert all(r["differs"] == [] for r in rows)
' || json_ok=0
fi
if head -1 f_md.txt | grep -q '^| name | dtype | op | size | old | new | ratio | change | p | verdict |$' &&
   sed -n 2p f_md.txt | grep -q '^|---|---|---|---:|' && [ "$(grep -c '^| a' f_md.txt)" -eq 6 ] &&
   head -1 f_csv.txt | grep -q '^name,dtype,op,size,old_ms,new_ms' && [ "$(wc -l < f_csv.txt)" -eq 7 ] &&
   [ $json_ok = 1 ]; then
  ok "compare --format md, csv, jsonl and json"
else
  bad "compare formats" "$(cat f_md.txt f_csv.txt | head -20)"
fi
if command -v script > /dev/null 2>&1; then
  TERM=xterm script -qec "$KFORGE compare old.jsonl mixed.jsonl" /dev/null > tty.txt 2>&1
  NO_COLOR=1 TERM=xterm script -qec "$KFORGE compare old.jsonl mixed.jsonl" /dev/null > tty_nc.txt 2>&1
  esc=$(printf '\033')
  if grep -q "${esc}\[31mslower" tty.txt && grep -q "${esc}\[32mfaster" tty.txt && ! grep -q "$esc" tty_nc.txt &&
     ! grep -q "$esc" c2.txt; then
    ok "compare colours verdicts on a terminal only (not in a pipe, not with NO_COLOR)"
  else
    bad "compare colour" "$(od -c tty.txt | head -5)"
  fi
else
  echo "SKIP compare colour: script(1) not found"
fi

# JSON numbers are numbers in every --format json and jsonl output of every command
# (versions -- cc, driver, nvrtc -- stay strings, as do gpu_value and ref_value: exact
# decimal texts of values wider than a double)
"$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set n=2^20 --budget 3 --strategy random --results tj.jsonl --no-db \
  --format jsonl -q > j_tune.jsonl 2> /dev/null
"$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set n=2^20 --budget 3 --strategy random --results tj.jsonl --no-db \
  --format json -q > j_tune.json 2> /dev/null
"$KFORGE" merge tj.jsonl --no-db --format json -q > j_merge.json 2> /dev/null
"$KFORGE" merge tj.jsonl --no-db --format jsonl -q > j_merge.jsonl 2> /dev/null
"$KFORGE" run v.json --no-results --format jsonl -q > j_run.jsonl 2> /dev/null
"$KFORGE" run v.json --no-results --format json -q > j_run.json 2> /dev/null
"$KFORGE" compare b256.jsonl b512.jsonl --match n --format json > j_cmp.json 2> /dev/null
"$KFORGE" compare b256.jsonl b512.jsonl --match n --format jsonl > j_cmp.jsonl 2> /dev/null
"$KFORGE" axes reduce --format json > j_axes.json
"$KFORGE" axes reduce_rows --format jsonl > j_axes2.jsonl
"$KFORGE" info --format json > j_info.json 2> /dev/null
"$KFORGE" axes --format json > j_fam.json
if command -v python3 > /dev/null 2>&1; then
  python3 - > jnum.txt 2>&1 <<'EOF2'
import json, re, sys
num = re.compile(r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$|^[0-9]+(x[0-9]+)+(/[0-9]+)?$")
keep = {"cc", "driver", "nvrtc", "gpu_value", "ref_value"}
bad = []
def walk(v, where):
    if isinstance(v, dict):
        for k, x in v.items():
            if k not in keep:
                walk(x, where + "." + k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk(x, where + "[%d]" % i)
    elif isinstance(v, str) and num.match(v):
        bad.append("%s = %r" % (where, v))
files = "j_tune.jsonl j_tune.json j_merge.json j_merge.jsonl j_run.jsonl j_run.json j_cmp.json j_cmp.jsonl j_axes.json j_axes2.jsonl j_info.json j_fam.json".split()
docs = 0
for f in files:
    text = open(f).read()
    assert text.strip(), f + " is empty"
    try:
        vals = [json.loads(text)]
    except ValueError:
        vals = [json.loads(l) for l in text.splitlines() if l.strip()]
    for v in vals:
        walk(v, f)
        docs += 1
summary = [json.loads(l) for l in open("j_tune.jsonl")][-1]
assert summary["n"] == [1048576] and summary["best"]["sizes"][0]["size"] == {"n": 1048576}, summary["n"]
axes = {a["name"]: a["default"] for a in json.load(open("j_axes.json"))["axes"]}
assert axes["block_size"] == 256 and axes["dtype"] == "float32" and axes["grid"] == "auto", axes
if bad:
    sys.exit("numbers written as strings:\n" + "\n".join(bad[:20]))
print(docs)
EOF2
  if [ $? -eq 0 ]; then
    ok "JSON: numbers are numbers in run, tune, merge, compare, axes and info (json and jsonl; $(cat jnum.txt) documents)"
  else
    bad "JSON numbers" "$(cat jnum.txt)"
  fi
fi

# --- --format md ------------------------------------------------------------
"$KFORGE" run a.json --no-results --format md --speedup > md.txt 2>/dev/null; r1=$?
"$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set n=2^20 --budget 5 --strategy random --no-db --results t_md.jsonl \
  --format md -q > tmd.txt 2>/dev/null; r2=$?
"$KFORGE" axes --format md > /dev/null 2> ax.txt; r3=$?
# (what every row shares said once above the table; a column for each axis that varies)
if [ $r1 -eq 0 ] && head -1 md.txt | grep -q '^Same in every row: kernel=reduce dtype=float32 op=sum ' &&
   sed -n 3p md.txt | grep -q '^| name | block_size | vector_width | size | status | time | noise | GB/s | % peak | step | cumul. |$' &&
   sed -n 4p md.txt | grep -q '^|---|---:|---:|---:|---|---:|' && [ "$(grep -c '^| a[123] |' md.txt)" -eq 6 ] &&
   [ $r2 -eq 0 ] && grep -q '^| size | median | GB/s | % peak | blocks | launches |$' tmd.txt &&
   grep -q '^Best: `' tmd.txt && [ $r3 -eq 2 ] && has ax.txt "allowed: table, csv, jsonl, json)"; then
  ok "--format md: Markdown tables from run and tune (axes refuses it)"
else
  bad "md" "$r1 $r2 $r3 $(cat md.txt tmd.txt ax.txt | head -30)"
fi

# --- NVML through the fake library -------------------------------------------
if [ -f "$FAKE_NVML" ]; then
  KFORGE_NVML_LIB=$FAKE_NVML FAKE_NVML_SCRIPT="sm=1980;mem=2619;max_sm=1980;temp=51;power=300000;energy+=500;reasons=0" \
    "$KFORGE" run a.json --results n1.jsonl > n1.txt 2> n1.err; r1=$?
  if [ $r1 -eq 0 ] && [ "$(count n1.jsonl '"nvml":true,"nvml_note":"","sm_mhz_min":1980,"sm_mhz_max":1980,"sm_mhz_limit":1980,"mem_mhz":2619,"temp_c":51,"power_w":300,"throttled":false,"throttle_reasons":"none"')" -eq 6 ] &&
     [ "$(count n1.jsonl '"energy_j":null')" -eq 6 ] && ! has n1.err warning && has n1.txt 'SM MHz' && ! has n1.txt '!'; then
    ok "NVML: clocks, temperature, power and reasons in every result; no warning at full clock"
  else
    bad "NVML steady" "$r1 $(cat n1.err; head -c 600 n1.jsonl)"
  fi

  KFORGE_NVML_LIB=$FAKE_NVML FAKE_NVML_SCRIPT="sm=1980,1410;max_sm=1980;reasons=0,4" \
    "$KFORGE" run a.json --results n2.jsonl > n2.txt 2> n2.err; r1=$?
  if [ $r1 -eq 0 ] && [ "$(count n2.jsonl '"sm_mhz_min":1410,.*"throttled":true,"throttle_reasons":"sw power cap"')" -eq 6 ] &&
     [ "$(count n2.err '^kforge: warning: a[123] n=[0-9]* ran throttled (sw power cap); SM clock 1410 MHz, maximum 1980 MHz$')" -eq 6 ] &&
     [ "$(count n2.txt '1410!')" -eq 6 ] && has n2.txt '^! ran throttled'; then
    ok "NVML: a throttled case is recorded, warned about on stderr and marked in the table"
  else
    bad "NVML throttled" "$r1 $(cat n2.err n2.txt)"
  fi

  KFORGE_NVML_LIB=$FAKE_NVML FAKE_NVML_SCRIPT="sm=1755;max_sm=1980;reasons=0" \
    "$KFORGE" run a.json --no-results --set n=4096 > /dev/null 2> n3.err
  if [ "$(count n3.err 'ran below its maximum clock: SM clock 1755 MHz, maximum 1980 MHz')" -eq 3 ]; then
    ok "NVML: a case below its maximum clock without a reason is warned about"
  else
    bad "NVML below max" "$(cat n3.err)"
  fi

  KFORGE_NVML_LIB=$FAKE_NVML FAKE_NVML_SCRIPT="sm=1980;max_sm=1980;reasons=0;power=250000;energy+=500" \
    "$KFORGE" run a.json --results n4.jsonl --set bench.energy=true --format md > n4.txt 2> n4.err; r1=$?
  e_ok=1
  if command -v python3 > /dev/null 2>&1; then
    python3 -c '
import json
for l in open("n4.jsonl"):
    r = json.loads(l)
    runs = r["energy_runs"]
    assert r["bench"]["energy"] is True
    assert runs * r["median_ms"] / 1e3 >= 1.0, "window shorter than 1 s"
    assert abs(r["energy_j"] * runs - 0.5) < 1e-9, (r["energy_j"], runs)
    assert r["energy_window_s"] >= 1.0 and abs(r["power_w"] - 0.5 / r["energy_window_s"]) < 1e-9
    bytes_ = r["gbps"] * 1e9 * r["median_ms"] / 1e3
    assert abs(r["gb_per_j"] - bytes_ / 1e9 / r["energy_j"]) < 1e-6 * r["gb_per_j"]
' || e_ok=0
  fi
  if [ $r1 -eq 0 ] && [ $e_ok = 1 ] && [ "$(count n4.jsonl '"energy_j":[0-9]')" -eq 6 ] &&
     grep -q '^| name .*| SM MHz | energy | GB/J |$' n4.txt; then
    ok "NVML: bench.energy gives energy per run over a >= 1 s window (energy / runs), GB/J and power"
  else
    bad "NVML energy" "$r1 $(cat n4.err n4.txt; head -c 800 n4.jsonl)"
  fi

  # resume: an energy run is not the same case as a plain one
  KFORGE_NVML_LIB=$FAKE_NVML FAKE_NVML_SCRIPT="energy+=500" "$KFORGE" run a.json --results n4.jsonl --set bench.energy=true \
    --resume -q > /dev/null 2>&1
  "$KFORGE" run a.json --results n4.jsonl --resume -q > /dev/null 2>&1
  if [ "$(wc -l < n4.jsonl)" -eq 12 ]; then
    ok "NVML: bench.energy is part of the case identity (6 energy + 6 plain lines)"
  else
    bad "energy identity" "$(wc -l < n4.jsonl) lines"
  fi
else
  echo "SKIP NVML checks: $FAKE_NVML not built (make check builds it)"
fi

KFORGE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$KFORGE" run a.json --results nn.jsonl > nn.txt 2> nn.err; r1=$?
if [ $r1 -eq 0 ] && [ "$(count nn.err 'note: NVML not available')" -eq 1 ] &&
   [ "$(count nn.jsonl '"nvml":false,"nvml_note":"NVML not available: cannot load /nonexistent/libnvidia-ml.so.1')" -eq 6 ] &&
   ! has nn.txt 'SM MHz'; then
  ok "no NVML: one note on stderr, the reason in every result, exit 0"
else
  bad "no NVML" "$r1 $(cat nn.err)"
fi

# --- tune --objective ------------------------------------------------------------
SPACE=$ROOT/configs/tune-reduce.json
if [ -f "$FAKE_NVML" ]; then
  KFORGE_NVML_LIB=$FAKE_NVML FAKE_NVML_SCRIPT="energy+=500" "$KFORGE" tune "$SPACE" --set n=2^20 --objective energy \
    --strategy random --budget 8 --results te.jsonl --format jsonl -q > te.txt 2> te.err; r1=$?
  KFORGE_NVML_LIB=$FAKE_NVML FAKE_NVML_SCRIPT="energy+=500" "$KFORGE" tune "$SPACE" --set n=2^20 --objective edp \
    --strategy random --budget 8 --results te.jsonl -q > tp.txt 2> tp.err; r2=$?
  if [ $r1 -eq 0 ] && grep -q '"event": "summary".*"objective": "energy".*"best": {"objective_j": ' te.txt &&
     grep -q '"energy_j": ' te.txt && [ "$(count te.jsonl '"energy":true')" -eq 8 ] &&
     [ $r2 -eq 0 ] && has tp.txt 'objective .* (energy x median time)' && [ ! -d "$KFORGE_DB" ]; then
    ok "tune --objective energy and edp: measured with bench.energy, ranked by energy, database untouched"
  else
    bad "tune objective" "$r1 $r2 $(cat te.txt te.err tp.txt tp.err | head -30)"
  fi
fi
"$KFORGE" tune "$SPACE" --set n=2^20 --objective energy --strategy random --budget 3 --results tn.jsonl -q \
  > /dev/null 2> tn.err; r1=$?
"$KFORGE" tune "$SPACE" --objective watts > /dev/null 2> tw.err; r2=$?
if [ $r1 -eq 1 ] && has tn.err "objective energy needs the energy of each run" && [ $r2 -eq 2 ] &&
   has tw.err "allowed: time, energy, edp"; then
  ok "tune --objective energy without energy figures fails and says why; unknown objectives are refused"
else
  bad "tune objective errors" "$r1 $r2 $(cat tn.err tw.err)"
fi

# simulated: a sweep where the fastest candidate is not the most efficient
cat > sp.json <<'J'
{"kernel": "reduce", "algorithm": "shuffle", "unroll": "full", "block_size": [128, 256, 512], "n": 1048576,
 "bench": {"energy": true}}
J
"$KFORGE" tune sp.json --strategy exhaustive --abandon-above 0 --results sweep.jsonl --no-db -q > /dev/null 2>&1
awk '{ e = index($0, "\"block_size\":128,") ? 3e-6 : index($0, "\"block_size\":256,") ? 1e-6 : 2e-6
       t = index($0, "\"block_size\":512,") ? 0.001 : 0.002
       gsub(/"energy_j":null/, "\"energy_j\":" e); gsub(/"median_ms":[0-9.eE+-]+/, "\"median_ms\":" t); print }' \
  sweep.jsonl > sim.jsonl
"$KFORGE" tune sp.json --simulate sim.jsonl --format jsonl > s1.txt 2>&1
"$KFORGE" tune sp.json --simulate sim.jsonl --objective energy --format jsonl > s2.txt 2>&1
"$KFORGE" tune sp.json --simulate sim.jsonl --objective edp --format jsonl > s3.txt 2>&1
if grep -q '"best": {"objective_ms": 0.001,.*"block_size": 512' s1.txt &&
   grep -q '"best": {"objective_j": 1e-06,.*"block_size": 256' s2.txt &&
   grep -q '"best": {"objective_j_ms": 2e-09,.*"block_size": 256' s3.txt; then
  ok "tune --simulate: time picks the fastest (512), energy and edp the most efficient (256)"
else
  bad "simulated objectives" "$(cat s1.txt s2.txt s3.txt)"
fi

# --- the progress line ----------------------------------------------------------
if command -v script > /dev/null 2>&1 && [ -f "$FAKE_NVML" ]; then
  KFORGE_NVML_LIB=$FAKE_NVML FAKE_NVML_SCRIPT="sm=1500;max_sm=1980;reasons=0,4" KFORGE_FAULT_INJECT=crash@2 TERM=xterm \
    script -qec "$KFORGE run a.json --no-results > /dev/null" /dev/null > prog.txt 2>&1
  # every message starts on a cleared line: after "\r\033[K" or a newline
  esc=$(printf '\033')
  bad_lines=$(tr '\r' '\n' < prog.txt | sed "s/^${esc}\[K//" | grep -c '.kforge: ')
  if [ "$bad_lines" -eq 0 ] && grep -q 'measured | 1 failed |' prog.txt && grep -q 's left\]' prog.txt &&
     grep -q 'kforge: warning: a1' prog.txt && grep -q 'fault: GPU worker died' prog.txt; then
    ok "progress line: cleared before every warning and failure; shows failures and the time left"
  else
    bad "progress" "$(od -c prog.txt | head -20)"
  fi
  # tune's progress line, the same way: warnings and failures on cleared lines, failures and time left shown
  KFORGE_FAKE_GPU_MS=20 KFORGE_NVML_LIB=$FAKE_NVML FAKE_NVML_SCRIPT="sm=1500;max_sm=1980;reasons=0,4" \
    KFORGE_FAULT_INJECT=crash@2 TERM=xterm script -qec "$KFORGE tune $ROOT/configs/tune-reduce.json --set n=4096 \
    --strategy random --budget 12 --results tprog.jsonl --no-db > /dev/null" /dev/null > tprog.txt 2>&1
  bad_lines=$(tr '\r' '\n' < tprog.txt | sed "s/^${esc}\[K//" | grep -c '.kforge\( tune\)\{0,1\}: ')
  if [ "$bad_lines" -eq 0 ] && grep -q 'evaluated | 1 failed | best ' tprog.txt && grep -q 's left\]' tprog.txt &&
     grep -q 'kforge: warning: .* ran throttled (sw power cap)' tprog.txt &&
     grep -q 'kforge tune: .* n=4096: fault: GPU worker died' tprog.txt; then
    ok "tune's progress line: cleared before every warning and failure; shows failures and the time left"
  else
    bad "tune progress" "$(tr '\r' '\n' < tprog.txt | head -20)"
  fi
else
  echo "SKIP progress line: script(1) or the fake NVML not available"
fi

# --- newcomer path ----------------------------------------------------------------
# The README's first command, as root (no sudo installed) and as a user (sudo).
first=$(awk '/^```sh$/ { getline; print; exit }' "$ROOT/README.md")
mkdir -p stub/bin stub/build
for t in apt-get make sudo; do
  printf '#!/bin/sh\necho "%s $*" >> "$LOG"\n%s\n' "$t" "$( [ $t = sudo ] && echo 'exec "$@"' )" > stub/bin/$t
done
printf '#!/bin/sh\necho "kforge $*" >> "$LOG"\n' > stub/build/kforge
printf '#!/bin/sh\necho "$ID_U"\n' > stub/bin/id
chmod +x stub/bin/* stub/build/kforge
# PATH holds the stubs only: no real sudo or apt-get can be reached
SH=$(command -v sh)
rm -f stub/bin/sudo
(cd stub && LOG=$TMP/root.log ID_U=0 PATH="$TMP/stub/bin" "$SH" -c "$first") > /dev/null 2>&1
r1=$?
printf '#!/bin/sh\necho "sudo $*" >> "$LOG"\nexec "$@"\n' > stub/bin/sudo; chmod +x stub/bin/sudo
(cd stub && LOG=$TMP/user.log ID_U=1000 PATH="$TMP/stub/bin" "$SH" -c "$first") > /dev/null 2>&1
r2=$?
# what tools/plot.sh needs comes with it (python3, and gnuplot with pngcairo: gnuplot-nox)
if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && ! grep -q '^sudo' root.log && grep -q '^apt-get install -y .*libcjson-dev' root.log &&
   grep -q '^apt-get install -y .* python3\( \|$\)' root.log && grep -q '^apt-get install -y .* gnuplot-nox\( \|$\)' root.log &&
   grep -q '^apt-get update' root.log &&
   grep -q '^kforge run configs/seeds.json' root.log && grep -q '^sudo apt-get install' user.log &&
   grep -q '^kforge run' user.log; then
  ok "README's first command: works as root without sudo and as a user with it"
else
  bad "README first command" "$r1 $r2 [$first] $(cat root.log user.log 2>/dev/null)"
fi

# .gitignore covers what kforge and the tools write by default where they run:
# the results files of run, tune and make bench (with their .state files
# while a run is in progress) and tools/plot.sh's charts.
if command -v git > /dev/null 2>&1 && git -C "$ROOT" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  d_run=$("$KFORGE" run --help | sed -n 's/.*(default: \([^)]*\.jsonl\)).*/\1/p')
  d_tune=$("$KFORGE" tune --help | sed -n 's/.*(default \([^)]*\.jsonl\)).*/\1/p')
  d_bench=$(sed -n 's/.*--results \([^ ]*\.jsonl\).*/\1/p' "$ROOT/tools/bench.sh" | head -1)
  d_plot=$(sed -n 's/^out=\(.*\)$/\1/p' "$ROOT/tools/plot.sh")
  gi_bad=
  for f in "$d_run" "$d_run.state" "$d_tune" "$d_tune.state" "$d_bench" "$d_bench.state" "$d_plot/bandwidth.png"; do
    case $f in .state | /* | "") gi_bad="$gi_bad [default not found: '$f']"; continue ;; esac
    git -C "$ROOT" check-ignore -q --no-index "$f" || gi_bad="$gi_bad $f"
  done
  if [ -z "$gi_bad" ]; then
    ok ".gitignore covers the default results files ($d_run, $d_tune, $d_bench, their .state) and $d_plot/"
  else
    bad ".gitignore" "not ignored:$gi_bad"
  fi
else
  echo "SKIP .gitignore: not in a git work tree"
fi

# make install puts in place everything the man page's EXAMPLES use.
BUILD_DIR=$(dirname "$KFORGE")
if make -s -C "$ROOT" install DESTDIR="$TMP/inst" PREFIX=/usr BUILD="$BUILD_DIR" -o "$BUILD_DIR/kforge" \
     > inst.out 2>&1; then
  share=$TMP/inst/usr/share/kforge
  miss=
  for f in $(sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$ROOT/man/kforge.1" | sed 's/\\-/-/g' |
             grep -o '\(configs\|tools\)/[A-Za-z0-9_.-]\+' | sort -u); do
    [ -f "$share/$f" ] || miss="$miss $f"
  done
  for f in bin/kforge share/man/man1/kforge.1 share/bash-completion/completions/kforge; do
    [ -f "$TMP/inst/usr/$f" ] || miss="$miss $f"
  done
  # the installed plot.sh finds its plot.py
  (cd "$TMP" && sh "$share/tools/plot.sh" "$TMP/old.jsonl" --print-data > inst_plot.txt 2>&1) || miss="$miss (plot.sh: $(head -c 200 "$TMP/inst_plot.txt"))"
  if [ -z "$miss" ]; then
    ok "make install: the binary, man page, completion and every config and tool the man page's EXAMPLES use"
  else
    bad "make install" "missing:$miss"
  fi
else
  bad "make install" "$(cat inst.out)"
fi

# The README says how to try kforge without a GPU, and its commands work.
sed -n '/^## Try it without a GPU/,/^## /p' "$ROOT/README.md" > nogpu.md
cp -r "$ROOT/configs" .
nogpu_ok=1
if grep -q 'KFORGE_FAKE_GPU=1' nogpu.md; then
  awk '/^```sh$/ { on = 1; next } /^```$/ { on = 0 } on' nogpu.md | grep -v '^make' | grep -v '^ *#' |
    sed "s|build/kforge|$KFORGE|g" > nogpu.sh
  (env -u KFORGE_FAKE_GPU sh -e nogpu.sh) > nogpu.out 2>&1 || nogpu_ok=0
  [ -s nogpu.sh ] || nogpu_ok=0
else
  nogpu_ok=0
fi
if [ $nogpu_ok = 1 ]; then
  ok "README: a 'Try it without a GPU' section with KFORGE_FAKE_GPU=1 whose commands work"
else
  bad "README without a GPU" "$(cat nogpu.sh nogpu.out 2>/dev/null | tail -20)"
fi

# The README's feature comparison.
if grep -q '^| .*| kforge | hyperfine | nvbench | Kernel Tuner |$' "$ROOT/README.md" &&
   ! grep -q 'Any variant key may hold a list or a range' "$ROOT/README.md"; then
  ok "README: a features table against hyperfine, nvbench and Kernel Tuner"
else
  bad "README table" "missing table header or the old range sentence"
fi

# The README's statement about ranges names exactly the keys that take one:
# every axis and size of every family is tried with a one-value range.
if command -v python3 > /dev/null 2>&1; then
  KFORGE="$KFORGE" python3 - "$ROOT/README.md" > ranges.txt 2>&1 <<'EOF'
import json, os, re, subprocess, sys
kf = os.environ["KFORGE"]
takes, refuses = set(), set()
for fam in ["reduce", "reduce_rows"]:
    d = json.loads(subprocess.run([kf, "axes", fam, "--format", "json"], capture_output=True, text=True).stdout)
    base = {"kernel": fam, "n": 4096} if fam == "reduce" else {"kernel": fam, "rows": 4, "cols": 8}
    for p in d["axes"] + d["sizes"]:
        name = p["name"]
        val = base.get(name, 8 if name == "row_stride" else None)
        if val is None:
            val = p["default"]
        if not isinstance(val, int):
            val = 1   # an enumerated key: any number will do, a range must be refused
        cfg = dict(base)
        cfg[name] = {"range": [val, val], "step": 1}
        r = subprocess.run([kf, "check", "-"], input=json.dumps(cfg), capture_output=True, text=True)
        (takes if r.returncode == 0 else refuses).add(name)
        if r.returncode != 0 and name not in r.stderr:
            sys.exit("%s %s: refused without naming it: %s" % (fam, name, r.stderr))
readme = open(sys.argv[1]).read()
m = re.search(r"The integer keys that take any value in a span.*?may also hold a range(.*?)take lists only", readme, re.S)
if not m:
    sys.exit("no range sentence in the README")
named = set(re.findall(r"`([a-z_]+)`", m.group(0).split("may also hold a range")[0])) - {"reduce", "reduce_rows"}
listed = set(re.findall(r"`([a-z_]+)`", m.group(1)))
if named != takes:
    sys.exit("README names %s as taking ranges; the code: %s" % (sorted(named), sorted(takes)))
if takes & refuses or not listed <= refuses:
    sys.exit("README says %s take lists only; the code refuses a range for %s" % (sorted(listed), sorted(refuses)))
print("ranges:", sorted(takes))
EOF
  if [ $? -eq 0 ]; then
    ok "README: the keys said to take ranges are exactly those the code takes them for ($(cat ranges.txt))"
  else
    bad "README ranges" "$(cat ranges.txt)"
  fi
fi

# Config messages.
printf '{"algorithm": "shuffle",\n "block_size": 256,\n "n": 1024,\n}\n' > tc.json
printf '{"n": 1024,\n "variants": [\n  {"name": "x",\n   "grid": "foo"}]}\n' > tv.json
"$KFORGE" check tc.json > /dev/null 2> m1.txt
"$KFORGE" check tv.json > /dev/null 2> m2.txt
"$KFORGE" check "$ROOT/configs/fast.json" --set 'n=[1000,2^20]' > /dev/null 2> m3.txt; r3=$?
"$KFORGE" run "$ROOT/configs/fast.json" --set op=xor --no-results > /dev/null 2> m4.txt; r4=$?
if [ "$(cat m1.txt)" = "kforge: tc.json: line 3, column 11: trailing comma (JSON allows no comma before '}')" ] &&
   has m2.txt '^kforge: tv.json: line 4: variants\[0\].grid: expected "auto"' && [ $r3 -eq 2 ] &&
   has m3.txt "--set 'n=\[1000,\"2^20\"\]'" && [ $r4 -eq 2 ] &&
   has m4.txt 'op xor is bitwise: it needs an integer dtype, got float32 (with --set op=xor: add --set dtype=int32'; then
  ok "messages: trailing comma on its own line, a value's line, --set quoting, --set op=xor names the --set"
else
  bad "messages" "$(cat m1.txt m2.txt m3.txt m4.txt)"
fi

# Unquoted, n=[1000,2^20] is a shell pattern: with a file "n=1" here the shell
# passes n=1, and kforge says what most likely happened.
mkdir -p globdir && : > globdir/n=1
(cd globdir && "$KFORGE" check "$ROOT/configs/fast.json" --set n=[1000,2^20] > /dev/null 2> ../g1.txt)
(cd globdir && "$KFORGE" check "$ROOT/configs/fast.json" --set 'n=[1000,"2^20"]' > /dev/null 2> ../g2.txt)
if grep -q "^kforge: warning: --set n=1: a file of that name is in this directory: .*quote it: --set 'n=\[...\]'" g1.txt &&
   ! grep -q warning g2.txt; then
  ok "--set n=[1000,2^20] unquoted, expanded by the shell to a file's name: a warning says to quote it"
else
  bad "--set glob" "$(cat g1.txt g2.txt)"
fi

# Short options: the parser takes what the help and man page say.
"$KFORGE" run a.json -j2 -q --no-results > /dev/null 2> so1.txt; r1=$?
"$KFORGE" run a.json -j 2 --quiet --no-results > /dev/null 2>&1; r2=$?
"$KFORGE" tune "$SPACE" --set n=4096 --budget 2 --strategy random -j2 -q --no-db --results so.jsonl > /dev/null 2>&1; r3=$?
"$KFORGE" check --compile -j2 a.json > /dev/null 2>&1; r4=$?
man_ok=1
for o in '\\-j' '\\-q'; do grep -q "$o" "$ROOT/man/kforge.1" || man_ok=0; done
"$KFORGE" run --help > h1.txt; "$KFORGE" tune --help > h2.txt
if [ $r1 -eq 0 ] && [ ! -s so1.txt ] && [ $r2 -eq 0 ] && [ $r3 -eq 0 ] && [ $r4 -eq 0 ] && [ $man_ok = 1 ] &&
   has h1.txt '^  -j N, --jobs N' && has h1.txt '^  -q, --quiet' && has h2.txt '^  -j N, --jobs N' &&
   grep -q -- '-j -q\|-q -j\|--jobs -j' "$ROOT/completion/kforge.bash"; then
  ok "short options -j2, -j 2 and -q: accepted by run, tune and check, listed in help, man page and completion"
else
  bad "short options" "$r1 $r2 $r3 $r4 man=$man_ok $(cat so1.txt)"
fi

# Completion: the new command, its options and values, -j/-q from the help.
if command -v bash > /dev/null 2>&1; then
  mkdir -p cbin && ln -sf "$KFORGE" cbin/kforge && : > r1.jsonl
  PATH="$TMP/cbin:$PATH" bash -s "$ROOT/completion/kforge.bash" > comp.out 2>&1 <<'EOF'
source "$1" || exit 1
comp() {
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _kforge kforge "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf '%s\n' "${COMPREPLY[*]}" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//'
}
fail=0
want() { local exp=$1; shift; local got; got=$(comp "$@"); [[ $got == "$exp" ]] || { echo "'$*': got '$got'"; fail=1; }; }
has() { local exp=$1; shift; [[ " $(comp "$@") " == *" $exp "* ]] || { echo "'$*': no '$exp' in '$(comp "$@")'"; fail=1; }; }
want "compare" kforge comp
has --fail-above kforge compare --
has --any-device kforge compare --
has --match kforge compare --
has --no-header kforge compare --
has --no-header kforge run --
has --quiet kforge merge --
has --gpu kforge export --
want "n,dtype" kforge compare a b --match n,dt
has bench.seed kforge compare a b --match bench.s
want "sm_75" kforge check --arch sm_7
want "csv json jsonl md table" kforge compare a b --format ''
want "json jsonl md table" kforge tune s.json --format ''
want "edp energy time" kforge tune s.json --objective ''
has --objective kforge tune --
has -j kforge run -
has --jobs kforge run --
has -q kforge tune -
has --quiet kforge tune --
want "r1.jsonl" kforge compare r
has bench.energy= kforge run --set bench.e
exit $fail
EOF
  if [ $? -eq 0 ]; then
    ok "bash completion: compare (--match and its keys, --no-header), --objective, md, -j/-q, --arch from sm_75"
  else
    bad "completion" "$(cat comp.out)"
  fi
fi

# Docs match the program: the man page's section of each command names every
# option its --help lists; a config's description gives its candidate count as
# kforge check counts it; the man page and README name no compute capability
# below the oldest NVRTC compiles for.
man_bad=
for c in run gen check info tune best export axes merge compare; do
  awk -v c="$c" '/^\.SS "kforge /{ on = index($0, "kforge " c " ") || index($0, "kforge " c "\"") } /^\.SH /{ on = 0 } on' \
    "$ROOT/man/kforge.1" > sec.txt
  for o in $("$KFORGE" $c --help | grep -E '^  -' | sed -E 's/^  (([^ ]| [^ ])*).*/\1/' |
             grep -oE -- '(^| )--?[a-zA-Z][a-zA-Z0-9_-]*' | tr -d ' ' | sort -u); do
    m=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
    grep -q -- "$m" sec.txt || man_bad="$man_bad $c:$o"
  done
done
cnt_bad=
for f in "$ROOT"/configs/*.json; do
  said=$(sed -n 's/.*"description": "[^"]*[^0-9]\([0-9][0-9]*\) candidates.*/\1/p' "$f")
  [ -n "$said" ] || continue
  got=$("$KFORGE" check "$f" 2> /dev/null | head -1 | sed -n 's/.*: \([0-9]*\) variants.*/\1/p')
  [ "$said" = "$got" ] || cnt_bad="$cnt_bad $(basename "$f"): says $said, has $got;"
done
min_arch=$("$KFORGE" check --compile --arch sm_72 v.json > /dev/null 2>&1 && echo 72 || echo 75)
if [ -z "$man_bad" ] && [ -z "$cnt_bad" ] && [ "$min_arch" = 75 ] &&
   ! grep -q 'capability 7\.0' "$ROOT/README.md" "$ROOT/man/kforge.1" &&
   grep -q '"description": "[^"]*860 candidates' "$ROOT/configs/tune-reduce.json"; then
  ok "docs: every option of every command in its man section (merge --quiet too), candidate counts as check counts them, no cc 7.0"
else
  bad "docs" "options missing from the man page:$man_bad; counts:$cnt_bad; oldest arch sm_$min_arch"
fi

# info --format json and a results line write the device alike (driver "13.0", ...)
"$KFORGE" info --format json > info.json 2> info.err
if command -v python3 > /dev/null 2>&1 && python3 -c '
import json
i = json.load(open("info.json"))
r = json.loads(open("old.jsonl").readline())
pairs = [("name", "device"), ("cc", "cc"), ("sms", "sms"), ("l2_bytes", "l2_bytes"), ("peak_gbps", "peak_gbps"),
         ("driver", "driver"), ("nvrtc", "nvrtc")]
bad = [(a, i[a], r[b]) for a, b in pairs if i[a] != r[b]]
assert not bad, bad
assert i["driver"] == "13.0", i["driver"]
' 2> info.err; then
  ok "info --format json and the results write the device alike (driver \"13.0\", peak, cc, SMs, L2, NVRTC)"
else
  bad "info vs results" "$(cat info.json info.err)"
fi

# best takes a size as every option does: 2^24, 1<<24, 16777216
KFORGE_DB="$TMP/db-best" "$KFORGE" tune "$SPACE" --set n=2^24 --strategy random --budget 3 --results tb.jsonl -q \
  > /dev/null 2>&1
nb=0
for n in '2^24' '1<<24' 16777216; do
  KFORGE_DB="$TMP/db-best" "$KFORGE" best --n "$n" > "best$nb.json" 2> /dev/null && grep -q '"n": \[16777216\]' "best$nb.json" &&
    ! grep -q nearest "best$nb.json" && nb=$((nb + 1))
done
if [ $nb -eq 3 ] && cmp -s best0.json best1.json && cmp -s best0.json best2.json; then
  ok "best --n 2^24, --n '1<<24' and --n 16777216 name the same size"
else
  bad "best --n" "$nb of 3"
fi

# name is never empty in results
cat > unnamed.json <<'J'
{"algorithm": "shuffle", "unroll": "full", "block_size": [128, 256], "n": 4096}
J
"$KFORGE" run unnamed.json --results un.jsonl -q > /dev/null 2>&1
"$KFORGE" run unnamed.json --results un.jsonl --resume -q > /dev/null 2> un.err
if [ "$(count un.jsonl '"name":"shuffle/bs')" -eq 2 ] && ! has un.jsonl '"name":""' && [ "$(wc -l < un.jsonl)" -eq 2 ]; then
  ok "results: an unnamed variant is named by its label, and resumes as the same case"
else
  bad "names" "$(cat un.err; head -c 400 un.jsonl)"
fi

echo "compare_suite: $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
