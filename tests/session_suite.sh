#!/bin/sh
# tests/session_suite.sh -- the measuring session's start and end on several
# fake GPUs (issue 38: what a tune pays once, before the first case and after
# the last), read from KFORGE_TRACE's phases:
#
#   KFORGE=build/kforge sh tests/session_suite.sh
#
#   1. compiling starts while the devices open: with devices that take 4 s to
#      open (KFORGE_FAKE_GPU_OPEN_MS) and compiles of 3 s and more
#      (KFORGE_COMPILE_DELAY_MS), an exhaustive tune's first cubin begins
#      compiling 2 s or more before the devices have opened (not after);
#      the pool says it started before them;
#   2. the pass between the tuned sizes measures on the search's workers:
#      the devices open once per tune, not once per pass, and the pass's
#      cases are all recorded;
#   3. kforge does not wait for its workers' end: with workers that take 6 s
#      to exit after their last case (KFORGE_FAKE_GPU_EXIT_MS: the driver's
#      teardown of a context that held gigabytes), the tune exits within 2 s
#      of its session's end, its results and database complete; a $(...)
#      around it does not wait for them either (the workers close their
#      standard streams first); and the workers do end;
#   4. the output check's module is compiled once per session, in its pool,
#      not by each worker: on 4 devices with one compiler process (so that
#      it is first), the pool compiles it and every worker finds it in the
#      session's cache (--cache-dir); after check --compile filled a cache,
#      a tune from it compiles neither a kernel nor the check (the compile
#      stored the check too).
# Prints PASS/FAIL lines and "session_suite: N passed, N failed"; exits 1 if
# a check failed.
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-session.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "session_suite: files kept in $TMP"; fi' EXIT
trap 'exit 130' INT TERM HUP
unset KFORGE_FAULT_INJECT KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MIXED KFORGE_FAKE_GPU_MS KFORGE_SHARED_INPUTS
unset KFORGE_FAKE_GPU_OPEN_MS KFORGE_FAKE_GPU_EXIT_MS KFORGE_COMPILE_DELAY_MS CUDA_VISIBLE_DEVICES
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX
export KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=2 LC_ALL=C HOME="$TMP" # no cubin cache of the user's
unset XDG_CACHE_HOME
cd "$TMP" || exit 2
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }
lines() { if [ -f "$1" ]; then grep -c . "$1"; else echo 0; fi; }
# the KFORGE_TRACE time (s) of the first line of a phase in file $1, or 999
at() { t=$(sed -n "s/^kforge: trace \([0-9.]*\) s \[[0-9]*\]: $2.*/\1/p" "$1" | head -1); echo "${t:-999}"; }
# whether a <= b (decimals)
le() { awk "BEGIN { exit !($1 <= $2) }"; }

if [ ! -x "$KFORGE" ]; then
  echo "FAIL: $KFORGE not built"; exit 1
fi
if ! "$KFORGE" --version | grep -q NVRTC; then
  echo "SKIP: session suite: NVRTC is not usable here"
  echo "session_suite: 0 passed, 0 failed"
  exit 0
fi

cat > s.json <<'J'
{"kernel": "reduce", "defaults": {"algorithm": "shuffle", "unroll": "full", "elements_per_thread": 4, "vector_width": 4,
                                  "n": [100000]},
 "variants": [{"block_size": [128, 256], "passes": ["atomic", "last_block"]}]}
J
# 4 candidates at one size (no pass between sizes)
ONE=
# 2 candidates at 3 sizes 16x apart: the default pass measures the leaders between them
THREE='--set n=[4096,65536,1048576] --set block_size=[256]'
tune() { # tune NAME ARGS...: a fresh cubin cache, traced; rc in NAME.rc
  name=$1; shift
  rm -rf "cache-$name"
  # shellcheck disable=SC2086 # the --set lists
  KFORGE_CACHE_DIR="$PWD/cache-$name" KFORGE_TRACE=1 "$KFORGE" tune s.json --devices 0-1 \
    --strategy exhaustive --abandon-above 0 --no-resume --results "$name.jsonl" "$@" > "$name.out" 2> "$name.err"
  echo $? > "$name.rc"
}

# --- 1. compiling while the devices open
# shellcheck disable=SC2086
KFORGE_FAKE_GPU_OPEN_MS=4000 KFORGE_COMPILE_DELAY_MS=3000 tune early $ONE --between 0 --no-db
first=$(at early.err 'first case sent') opened=$(at early.err 'every GPU worker has opened')
# when the first cubin's compile began: its end less its length (however
# long a loaded machine makes it)
began=$(sed -n 's/^kforge: trace \([0-9.]*\) s .*first cubin compiled (\([0-9]*\) ms.*/\1 \2/p' early.err |
        awk '{ printf "%.3f", $1 - $2 / 1000 }')
if [ "$(cat early.rc)" = 0 ] && [ "$(lines early.jsonl)" = 4 ] && [ -n "$began" ] && le "$began" "$opened - 2" &&
   grep -q 'trace .*compiler pool for sm_90 started before the devices opened' early.err; then
  ok "the first cubin's compile began at ${began} s, while the devices opened (4 s, open at ${opened} s); first case sent at ${first} s"
else
  bad "compile while the devices open" "rc=$(cat early.rc) lines=$(lines early.jsonl) first=$first opened=$opened $(grep -e trace -e kforge early.err | grep -v 'data made' | head -12)"
fi

# --- 2. the pass between sizes on the search's workers
# shellcheck disable=SC2086
KFORGE_FAKE_GPU_OPEN_MS=1000 tune between $THREE --no-db
started=$(grep -c 'trace .*GPU workers started' between.err)
npass_between=$(sed -n 's/^sizes between the tuned ones: .* \([0-9]*\) cases\{0,1\} (\([0-9]*\) measured now).*/\2/p' between.out)
nlines=$(lines between.jsonl)
if [ "$(cat between.rc)" = 0 ] && [ "$started" = 1 ] && grep -q "trace .*the search's GPU workers reused" between.err &&
   [ -n "$npass_between" ] && [ "$npass_between" -gt 0 ] && [ "$nlines" = $((6 + npass_between)) ]; then
  ok "the pass between sizes measures on the search's workers: the devices open once; 6 + $npass_between cases recorded"
else
  bad "between pass on the search's workers" "rc=$(cat between.rc) workers started $started times, between cases '$npass_between', lines $nlines; $(grep -e 'trace' between.err | grep -v 'data made' | head -20)"
fi

# --- 3. no wait for the workers' end
# shellcheck disable=SC2086
KFORGE_FAKE_GPU_EXIT_MS=6000 tune slowexit $THREE
ends=$(at slowexit.err 'session ends') exit_at=$(at slowexit.err 'exit ')
gap=$(awk "BEGIN { printf \"%.2f\", $exit_at - $ends }")
db=$(ls db/*.json 2> /dev/null | head -1)
if [ "$(cat slowexit.rc)" = 0 ] && le "$gap" 2 && [ "$(lines slowexit.jsonl)" = "$nlines" ] && [ -n "$db" ] &&
   grep -q '"between": true' "$db"; then
  ok "kforge exits ${gap} s after its session ends though its workers take 6 s; results ($nlines lines) and database complete"
else
  bad "exit without waiting for the workers" "rc=$(cat slowexit.rc) gap=$gap lines=$(lines slowexit.jsonl)/$nlines db='$db' $(grep -e trace slowexit.err | grep -v 'data made' | tail -6)"
fi
# the worker processes end all the same
pids=$(sed -n 's/^kforge: trace [0-9.]* s \[\([0-9]*\)\]: worker [0-9]*: device open.*/\1/p' slowexit.err)
left=
for i in $(seq 1 40); do
  left=
  for p in $pids; do kill -0 "$p" 2> /dev/null && left="$left $p"; done
  [ -z "$left" ] && break
  sleep 0.5
done
if [ -n "$pids" ] && [ -z "$left" ]; then
  ok "the workers (pids $(echo $pids | tr '\n' ' ')) end on their own after kforge"
else
  bad "workers left" "pids '$pids', still there: '$left'"
fi
# a shell's $(...) sees the end of kforge's output without waiting for the workers
rm -rf cache-sub
s=$(date +%s%N)
# shellcheck disable=SC2086
out=$(KFORGE_CACHE_DIR="$PWD/cache-sub" KFORGE_FAKE_GPU_EXIT_MS=6000 KFORGE_TRACE=1 "$KFORGE" tune s.json \
      --devices 0-1 --strategy exhaustive --no-resume --no-db --between 0 --results sub.jsonl $ONE 2> sub.err)
rc=$?
el=$(( ($(date +%s%N) - s) / 1000000 ))
# after kforge's own exit (its trace's time), the $(...) waited this long
after=$(awk -v el="$el" -v ex="$(at sub.err 'exit ')" 'BEGIN { printf "%d", el - 1000 * ex }')
gap=$(awk "BEGIN { printf \"%.2f\", $(at sub.err 'exit ') - $(at sub.err 'session ends') }")
if [ $rc = 0 ] && echo "$out" | grep -q '^best:' && le "$gap" 2 && [ "$after" -lt 5500 ]; then
  ok "\$(kforge tune ...) returns ${el} ms after it began, ${after} ms after kforge's exit (${gap} s after its session), not after the workers' 6 s end"
else
  bad "\$(...) waits for the workers" "rc=$rc ${el} ms in all, ${after} ms after kforge's exit, ${gap} s after its session; $(echo "$out" | tail -3)"
fi

# --- 4. the output check compiled once per session
rm -rf oc-cache
KFORGE_FAKE_GPU=4 KFORGE_TRACE=1 "$KFORGE" tune s.json --devices 0-3 -j 1 --cache-dir "$PWD/oc-cache" --no-db \
  --no-resume --results oc.jsonl > oc.out 2> oc.err
rc=$?
inpool=$(grep -c 'trace .*output check compiled in the pool for sm_90' oc.err)
here=$(grep -c 'trace .*output check not in the cache' oc.err)
fromcache=$(grep -c 'trace .*output check from the cache' oc.err)
workers=$(grep -c 'trace .*first case received' oc.err)
if [ $rc = 0 ] && [ "$inpool" = 1 ] && [ "$here" = 0 ] && [ "$workers" -ge 1 ] && [ "$fromcache" = "$workers" ]; then
  ok "the output check is compiled once, in the pool; the $workers worker(s) that measured found it in the session's cache"
else
  bad "output check once per session" "rc=$rc in the pool $inpool, in a worker $here, from the cache $fromcache of $workers; $(grep -e 'output check' -e kforge: oc.err | grep -v 'data made' | head -8)"
fi
rm -rf farm
"$KFORGE" check --compile --arch sm_90 -j 2 --cache-dir "$PWD/farm" s.json > farm.out 2>&1
KFORGE_TRACE=1 "$KFORGE" tune s.json --devices 0-1 --cache-dir "$PWD/farm" --no-db --no-resume --results fw.jsonl \
  > fw.out 2> fw.err
rc=$?
if [ $rc = 0 ] && grep -q 'cubins: 0 compiled now, 4 from the cubin cache' fw.out &&
   ! grep -q 'output check compiled' fw.err && ! grep -q 'output check not in the cache' fw.err &&
   grep -q 'output check from the cache' fw.err; then
  ok "after check --compile, a tune from its cache compiles neither a kernel nor the output check"
else
  bad "compile farm and the output check" "rc=$rc $(grep cubins fw.out) $(grep 'output check' fw.err | head -3) $(tail -2 farm.out)"
fi

echo "session_suite: $npass passed, $nfail failed"
[ "$nfail" = 0 ]
