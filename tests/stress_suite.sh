#!/bin/sh
# tests/stress_suite.sh -- kforge under fire, as a job scheduler treats it
# (issue 11): SIGINT, SIGTERM and SIGKILL, to the process or to its whole
# group, at random moments of `run` and `tune` on the fake GPU, each time
# followed by the same command again.  At the end every case is recorded
# exactly once, none that was interrupted is recorded as failed, and the
# tune's answer equals an uninterrupted tune's.
#
#   sh tests/stress_suite.sh          (KFORGE, STRESS_ROUNDS=50, STRESS_SEED)
# Prints PASS/FAIL lines and "stress_suite: N passed, N failed".
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
ROUNDS=${STRESS_ROUNDS:-50}
SEED=${STRESS_SEED:-$(date +%s)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-stress.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
# make check gives the suites that do not test the cache one cubin cache (KFORGE_TEST_CACHE)
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 KFORGE_FAKE_GPU_MS=12 LC_ALL=C
unset KFORGE_FAULT_INJECT KFORGE_PLANT
cd "$TMP" || exit 2
npass=0 nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
echo "stress_suite: seed $SEED (STRESS_SEED=$SEED repeats this run), $ROUNDS interruptions"

cat > r.json <<'J'
{"kernel": "reduce", "algorithm": "shuffle", "unroll": "full", "block_size": [64, 128, 256, 512, 1024],
 "n": [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000]}
J
cat > t.json <<'J'
{"kernel": "reduce", "algorithm": "shuffle", "unroll": "full", "block_size": [64, 128, 256, 512, 1024],
 "elements_per_thread": [1, 2, 4, 8], "vector_width": [1, 4], "n": 100000}
J
"$KFORGE" check --compile r.json t.json > /dev/null 2>&1   # warm the cubin cache: the rounds measure, not compile

# random numbers from awk, seeded: "sig target delay_ms" per round
awk -v s="$SEED" -v n="$ROUNDS" 'BEGIN { srand(s); split("INT TERM KILL", S, " ");
  for (i = 0; i < n; i++) printf "%s %s %d\n", S[int(rand() * 3) + 1], rand() < 0.5 ? "proc" : "group", 40 + int(rand() * 500) }' > plan.txt

i=0
while read -r sig target delay; do
  i=$((i + 1))
  if [ $((i % 2)) = 1 ]; then cmd="run r.json --results run.jsonl --resume --quiet"; else cmd="tune t.json --strategy random --seed 3 --budget 30 --results tune.jsonl --quiet --no-db"; fi
  # shellcheck disable=SC2086
  setsid "$KFORGE" $cmd > /dev/null 2> "err$i.txt" &
  pid=$!
  sleep "$(awk -v d="$delay" 'BEGIN { printf "%.3f", d / 1000 }')"
  if [ "$target" = group ]; then kill -s "$sig" -- "-$pid" 2> /dev/null; else kill -s "$sig" "$pid" 2> /dev/null; fi
  wait "$pid"
  rc=$?
  case "$sig:$rc" in
    KILL:137 | *:0 | INT:130 | TERM:130 | *:1) ;;
    *) bad "round $i ($sig to the $target after ${delay} ms)" "exit $rc: $(head -c 300 "err$i.txt")" ;;
  esac
done < plan.txt
# Processes a SIGKILL left behind (a worker whose parent died) must be gone.
sleep 0.5
left=$(pgrep -f "$KFORGE (run r.json|tune t.json)" 2> /dev/null | wc -l)
[ "$left" -eq 0 ] && ok "no process left behind after $ROUNDS interruptions" || bad "processes left" "$left"

# The same commands to completion.
"$KFORGE" run r.json --results run.jsonl --resume --quiet > /dev/null 2> fin1.txt
rc1=$?
"$KFORGE" tune t.json --strategy random --seed 3 --budget 30 --results tune.jsonl --quiet --no-db --format jsonl > tune_fin.jsonl 2> fin2.txt
rc2=$?
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && ok "the same commands complete afterwards" || bad "completion" "$rc1 $rc2 $(cat fin1.txt fin2.txt | head -5)"

# Every case once; no interrupted case recorded as a failure.
lines=$(grep -c . run.jsonl)
uniq=$(grep -o '"name":"[^"]*","label":"[^"]*".*"n":[0-9]*' run.jsonl | sed 's/"message".*//' | sort -u | wc -l)
nok=$(grep -c '"status":"ok"' run.jsonl)
[ "$lines" -eq 40 ] && [ "$nok" -eq 40 ] && ok "run: 40 cases recorded exactly once, all ok" ||
  bad "run records" "$lines lines, $uniq distinct, $nok ok; $(grep -v '"status":"ok"' run.jsonl | head -c 300)"
tok=$(grep -c '"status":"\(ok\|abandoned\)"' tune.jsonl)
tl=$(grep -c . tune.jsonl)
[ "$tl" -eq 30 ] && [ "$tok" -eq 30 ] && ok "tune: 30 candidates recorded exactly once, all verified (ok or abandoned)" ||
  bad "tune records" "$tl lines, $tok ok; $(grep -v '"status":"ok"' tune.jsonl | head -c 300)"

# The interrupted and resumed search ends where an uninterrupted one does.
mkdir clean && cd clean || exit 2
"$KFORGE" tune ../t.json --strategy random --seed 3 --budget 30 --results tune.jsonl --quiet --no-db --format jsonl > fin.jsonl 2> /dev/null
cd .. || exit 2
b1=$(grep '"event": "summary"' tune_fin.jsonl | grep -o '"best": {[^}]*"label": "[^"]*"' | grep -o '"label": "[^"]*"')
b2=$(grep '"event": "summary"' clean/fin.jsonl | grep -o '"best": {[^}]*"label": "[^"]*"' | grep -o '"label": "[^"]*"')
[ -n "$b1" ] && [ "$b1" = "$b2" ] && ok "tune: the same best as an uninterrupted tune ($b1)" || bad "tune best" "[$b1] vs [$b2]"

echo "stress_suite: $npass passed, $nfail failed"
[ $nfail -eq 0 ]
