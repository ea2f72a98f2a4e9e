#!/bin/sh
# tests/engine_suite.sh -- end-to-end checks of the engine's structure and of
# the results file's promises (issues 9 and 11): one results module, case
# identity, per-command resume state, options per command, several configs
# in one run, the kernel-family registry.  Runs on the fake GPU
# (KFORGE_FAKE_GPU=1).  Prints PASS/FAIL lines and
# "engine_suite: N passed, N failed"; exits 1 if a check failed.
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-engine.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
# make check gives the suites that do not test the cache one cubin cache (KFORGE_TEST_CACHE)
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C
unset KFORGE_FAULT_INJECT KFORGE_PLANT
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$TMP" || exit 2
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
lines() { if [ -f "$1" ]; then grep -c . "$1"; else echo 0; fi; }

cat > a.json <<'J'
{"kernel": "reduce", "defaults": {"algorithm": "shuffle", "unroll": "full", "n": [1000, 5000]},
 "variants": [{"name": "a1", "block_size": 128}, {"name": "a2", "block_size": 256},
              {"name": "a3", "block_size": 512, "vector_width": 4}]}
J
cat > b.json <<'J'
{"kernel": "reduce", "algorithm": "sequential", "unroll": "last_warp", "block_size": [128, 256],
 "elements_per_thread": [1, 2], "n": [1000, 5000], "bench": {"seed": 777}}
J

# --- issue 9: several configs in one run --------------------------------
# Compiles still in flight from a.json once landed in b.json's state array
# (a heap overflow under ASan).  With some of a's cases already recorded and
# one compiler process, every case of both must come out right, once each.
"$KFORGE" run a.json --results r1.jsonl --set n=1000 --quiet > /dev/null 2>&1
"$KFORGE" run a.json b.json --results r1.jsonl --resume --jobs 1 --no-cache --format jsonl --quiet > o1.jsonl 2> e1.txt
rc=$?
n_ok=$(grep -c '"status":"ok"' o1.jsonl)
if [ $rc -eq 0 ] && [ "$n_ok" -eq 14 ] && [ "$(lines r1.jsonl)" -eq 14 ]; then
  ok "two configs, partly resumed, one compiler: 14 cases once each"
else
  bad "two configs" "rc=$rc ok=$n_ok lines=$(lines r1.jsonl) $(head -3 e1.txt)"
fi
# Each result records its own config's bench settings.
if grep '"name":"a1"' r1.jsonl | grep -q '"seed":42' && grep -q '"seed":777' r1.jsonl &&
   [ "$(grep -c '"seed":777' r1.jsonl)" -eq 8 ]; then
  ok "each config's results record its own bench settings"
else
  bad "bench per config" "$(grep -o '"seed":[0-9]*' r1.jsonl | sort | uniq -c | tr '\n' ' ')"
fi
# The same config twice is measured once.
"$KFORGE" run a.json a.json --results r2.jsonl --quiet > /dev/null 2> e2.txt
if [ "$(lines r2.jsonl)" -eq 6 ] && grep -q 'more than once' e2.txt; then
  ok "run a.json a.json measures each case once"
else
  bad "same config twice" "lines=$(lines r2.jsonl) $(cat e2.txt)"
fi

# --- issue 9: every command rejects options it does not take ------------
for cmdline in "info --compile" "info --set block_size=64" "info --no-resume" "gen a.json --results x" \
               "check a.json --device 1" "best --n 5 --set x=1" "axes --results x"; do
  # shellcheck disable=SC2086
  "$KFORGE" $cmdline > /dev/null 2> e3.txt
  rc=$?
  if [ $rc -eq 2 ] && grep -q 'not an option of\|unknown option\|unexpected argument' e3.txt; then
    ok "kforge $cmdline: refused (exit 2)"
  else
    bad "kforge $cmdline" "rc=$rc $(cat e3.txt)"
  fi
done

# --- the family registry and the parameter table ------------------------
if "$KFORGE" axes | grep -q '^reduce ' && "$KFORGE" axes reduce | grep -q 'warp_reduce' &&
   "$KFORGE" axes reduce --format json | grep -q '"name": "block_size"'; then
  ok "kforge axes lists families and the reduce table"
else
  bad "axes" "$("$KFORGE" axes reduce 2>&1 | head -3)"
fi
"$KFORGE" axes nosuch > /dev/null 2> e4.txt
if [ $? -eq 2 ] && grep -q 'unknown kernel family' e4.txt; then ok "axes: unknown family, exit 2"; else bad "axes unknown" "$(cat e4.txt)"; fi
echo '{"kernel": "reduse", "n": 10}' > k.json
"$KFORGE" check k.json > /dev/null 2> e5.txt
if [ $? -eq 2 ] && grep -q 'did you mean "reduce"' e5.txt; then ok "unknown kernel: did you mean"; else bad "unknown kernel" "$(cat e5.txt)"; fi

# --- issue 11.1: a result that cannot be written stops the run ----------
if [ -w /dev/full ]; then
  "$KFORGE" run a.json --results /dev/full --quiet > /dev/null 2> e6.txt
  rc=$?
  if [ $rc -eq 4 ] && grep -q 'cannot append' e6.txt; then
    ok "results file on a full disk: exit 4 with a message"
  else
    bad "results /dev/full" "rc=$rc $(cat e6.txt)"
  fi
fi
echo x > dbfile
"$KFORGE" tune a.json --db dbfile/sub --results t.jsonl --quiet > /dev/null 2> e7.txt
rc=$?
if [ $rc -eq 4 ] && grep -q 'tuning database not updated' e7.txt; then
  ok "tune: a database that cannot be written is exit 4"
else
  bad "tune --db unwritable" "rc=$rc $(cat e7.txt)"
fi

# --- issue 11.3: resume takes a case only when its identity matches ------
"$KFORGE" run a.json --results r3.jsonl --quiet > /dev/null 2>&1
for set in bench.seed=7 bench.offset=3; do
  cp r3.jsonl r3s.jsonl
  "$KFORGE" run a.json --results r3s.jsonl --resume --set $set --format jsonl --quiet > o3.jsonl 2> e3.txt
  kv=$(echo "${set#bench.}" | sed 's/\(.*\)=\(.*\)/"\1":\2,/')
  if [ "$(lines r3s.jsonl)" -eq 12 ] && ! grep -q 'resumed' e3.txt && [ "$(grep -c "$kv" r3s.jsonl)" -eq 6 ]; then
    ok "resume with --set $set measures again (the input's seed and offset are part of a case)"
  else
    bad "resume identity $set" "lines=$(lines r3s.jsonl) $(cat e3.txt)"
  fi
done
"$KFORGE" run a.json --results r3.jsonl --resume --set bench.timeout_s=9 --quiet > /dev/null 2> e3t.txt
if [ "$(lines r3.jsonl)" -eq 6 ] && grep -q 'resumed: 6 cases' e3t.txt; then
  ok "resume with another watchdog takes every case (it changes no result)"
else
  bad "resume timeout" "lines=$(lines r3.jsonl) $(cat e3t.txt)"
fi
sed 's/fake-gpu (KFORGE_FAKE_GPU)/Other GPU/' r3.jsonl > r4.jsonl
"$KFORGE" run a.json --results r4.jsonl --resume --quiet > /dev/null 2> e4.txt
if [ "$(lines r4.jsonl)" -eq 12 ]; then
  ok "resume does not take cases of another GPU"
else
  bad "resume device" "lines=$(lines r4.jsonl) $(cat e4.txt)"
fi
# A config edit changes the command's identity.
printf '%s\n' '{"kernel": "reduce", "algorithm": "shuffle", "unroll": "full", "block_size": 256, "n": [1000, 2000, 3000, 4000, 5000, 6000]}' > c.json
KFORGE_FAULT_INJECT=crash@3 "$KFORGE" run c.json --results r5.jsonl --quiet > /dev/null 2>&1
setsid sh -c "KFORGE_FAULT_INJECT=hang@2 exec \"$KFORGE\" run c.json --results r5.jsonl --no-resume --quiet --timeout 60" > /dev/null 2>&1 &
p=$!
sleep 1.5
kill -INT $p 2> /dev/null
wait $p
# the same cases, the same path and options, one more blank in the file:
# another command, whose run starts afresh (with --resume it would take them)
cp r5.jsonl r5b.jsonl
cp r5.jsonl.state r5b.jsonl.state 2> /dev/null
sed -i 's/6000]/6000] /' c.json
"$KFORGE" run c.json --results r5.jsonl --quiet > /dev/null 2> e5.txt
"$KFORGE" run c.json --results r5b.jsonl --resume --quiet > /dev/null 2> e5b.txt
if ! grep -q 'resumed' e5.txt && grep -q 'resumed: [0-9]* case' e5b.txt; then
  ok "an edited config (one blank) is another command: nothing resumed without --resume"
else
  bad "config edit" "$(cat e5.txt e5b.txt)"
fi

# --- issue 11.4: concurrent commands keep each other's resume state -----
cat > d.json <<'J'
{"kernel": "reduce", "algorithm": "shuffle", "unroll": "full", "block_size": [64, 128, 256, 512], "n": [1000, 2000, 3000]}
J
setsid sh -c "KFORGE_FAULT_INJECT=hang@5 exec \"$KFORGE\" run d.json --results r6.jsonl --quiet --timeout 60" > /dev/null 2>&1 &
p=$!
sleep 1.5
"$KFORGE" run a.json --results r6.jsonl --quiet > /dev/null 2>&1   # another command completes meanwhile
kill -INT $p 2> /dev/null
wait $p
"$KFORGE" run d.json --results r6.jsonl --quiet > /dev/null 2> e6.txt
n_d=$(grep -c '"block_size":\(64\|128\|512\)' r6.jsonl)
if grep -q 'resumed: 4 cases' e6.txt; then
  ok "another command on the same file leaves the interrupted one's resume state"
else
  bad "concurrent resume state" "$(cat e6.txt) ($n_d)"
fi

# --- issue 11: a results file whose name is as long as a name can be ----
long=$(printf 'r%.0s' $(seq 1 249)).jsonl
"$KFORGE" run a.json --results "$long" --quiet > /dev/null 2> ln.err
rc=$?
if [ $rc -eq 0 ] && [ "$(lines "$long")" -eq 6 ] && ! ls -A | grep -q 'kforge-.*\.state'; then
  ok "a results file name of 255 characters: the resume state goes beside it"
else
  bad "long results name" "rc=$rc $(cat ln.err)"
fi

# --- the second family: reduce_rows ------------------------------------
if "$KFORGE" axes reduce_rows | grep -q 'rows_per_group' && "$KFORGE" axes reduce_rows | grep -q 'row_stride' &&
   "$KFORGE" axes reduce_rows --format json | grep -q '"name": "min_blocks", [^}]*"default": 0,' &&
   "$KFORGE" axes reduce_rows --format json | grep -q '"name": "rows", [^}]*"default": "required"' &&
   "$KFORGE" axes reduce_rows --format json | grep -q '"name": "row_stride", [^}]*"default": "optional"'; then
  ok "kforge axes reduce_rows: axes with their defaults (min_blocks 0), sizes required or optional"
else
  bad "axes reduce_rows" "$("$KFORGE" axes reduce_rows --format json 2>&1 | head -c 600)"
fi
printf '{"kernel": "reduce_rows", "rows": 64, "cols": 128,\n "min_blocks": {"range": [0, 2]}}\n' > mb.json
"$KFORGE" check mb.json > /dev/null 2> mb.err
if [ $? -eq 2 ] && grep -q 'mb.json: line 2: min_blocks: a range without "step" doubles from low, which needs low >= 1: give "step": 1' mb.err &&
   sed 's/2]}/2], "step": 1}/' mb.json | "$KFORGE" check - | grep -q '3 variants'; then
  ok "a range from 0 without a step says why and what to write"
else
  bad "range from 0" "$(cat mb.err)"
fi
"$KFORGE" run "$ROOT/configs/rows-stress.json" --set 'rows=[1,3]' --set 'cols=[1,7,33]' --results rows.jsonl --quiet \
  --format csv > rows.csv 2> rows.err
rc=$?
n_ok=$(grep -c ',ok,' rows.csv)
if [ $rc -eq 0 ] && [ "$n_ok" -gt 100 ] && grep -q '"kernel":"reduce_rows"' rows.jsonl && grep -q '"row_stride":4101' rows.jsonl; then
  ok "reduce_rows: stress shapes on the fake GPU ($n_ok cases), results carry kernel and sizes"
else
  bad "reduce_rows run" "rc=$rc ok=$n_ok $(head -3 rows.err)"
fi
echo '{"kernel": "reduce_rows", "map": "block", "rows": 10, "cols": 100, "row_stride": 99}' > rs.json
"$KFORGE" check rs.json > /dev/null 2> rs.err
if [ $? -eq 2 ] && grep -q 'row_stride 99 is below cols 100' rs.err; then ok "row_stride below cols: exit 2 naming both"; else bad "row_stride" "$(cat rs.err)"; fi
echo '{"kernel": "reduce_rows", "map": "group", "rows": 10, "cols": 100}' > rg.json
"$KFORGE" check rg.json > /dev/null 2> rg.err
if [ $? -eq 2 ] && grep -q 'map group needs group' rg.err; then ok "map group without group: exit 2"; else bad "map group" "$(cat rg.err)"; fi
# tuning per shape, and best for a shape (exact, then nearest)
"$KFORGE" tune "$ROOT/configs/tune-rows.json" --set rows=8192 --set cols=128 --strategy random --budget 12 --results tr.jsonl --quiet > tr.out 2> tr.err
rc1=$?
"$KFORGE" tune "$ROOT/configs/tune-rows.json" --set rows=64 --set cols=1048576 --strategy random --budget 12 --results tr.jsonl --quiet > /dev/null 2>> tr.err
rc2=$?
"$KFORGE" best --kernel reduce_rows --rows 8192 --cols 128 > b1.json 2> b1.err
rc3=$?
"$KFORGE" best --kernel reduce_rows --rows 9000 --cols 100 > b2.json 2> b2.err
rc4=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ] && [ $rc4 -eq 0 ] && grep -q '"rows": \[8192\]' b1.json &&
   grep -q 'nearest size, rows=8192 cols=128' b2.err && grep -q '"rows": \[9000\]' b2.json &&
   "$KFORGE" run b2.json --no-results --quiet > /dev/null 2>&1; then
  ok "reduce_rows: tune per shape, best exact and nearest shape, the best runs"
else
  bad "rows tune/best" "rc=$rc1 $rc2 $rc3 $rc4 $(cat tr.err b1.err b2.err | head -5)"
fi
if "$KFORGE" best --kernel reduce_rows --rows 64 --cols 1048576 2>&1 >/dev/null | grep -q 'variant'; then
  ok "best says whether the variant is deterministic"
else
  bad "best determinism note" "$("$KFORGE" best --kernel reduce_rows --rows 64 --cols 1048576 2>&1 | head -3)"
fi

# --- the first case starts before every variant is prepared --------------
# (sources and cache lookups of 860 variants took 0.15 s before any GPU
# had work); KFORGE_TRACE shows the order
cat > many.json <<'J'
{"kernel": "reduce", "defaults": {"algorithm": "shuffle", "unroll": "full", "n": 4096},
 "variants": [{"block_size": [64, 128, 256, 512, 1024], "elements_per_thread": [1, 2, 4, 8],
               "vector_width": [1, 2, 4], "passes": ["multi_kernel", "atomic", "last_block"]}]}
J
"$KFORGE" check --compile many.json > /dev/null 2>&1
KFORGE_TRACE=1 "$KFORGE" run many.json --no-results --format csv > many.csv 2> many.err
rc=$?
first=$(grep -n 'first case sent' many.err | head -1 | cut -d: -f1)
prep=$(grep -n 'variants prepared' many.err | head -1 | cut -d: -f1)
if [ $rc -eq 0 ] && [ -n "$first" ] && [ -n "$prep" ] && [ "$first" -lt "$prep" ] &&
   [ "$(grep -c ',ok,' many.csv)" -eq 180 ]; then
  ok "the first case is measured while the other variants are prepared (180 cases)"
else
  bad "first case before preparing all" "rc=$rc first=$first prep=$prep $(grep -c ',ok,' many.csv) $(head -3 many.err)"
fi

echo "engine_suite: $npass passed, $nfail failed"
[ $nfail -eq 0 ]
