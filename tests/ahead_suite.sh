#!/bin/sh
# tests/ahead_suite.sh -- compiling ahead (tune.c compile_ahead, run.c
# run_session_ahead, rtc.c's ahead queue), on the fake GPU with real NVRTC:
# the model strategy's next candidates are compiled by compiler processes a
# batch leaves idle.  The search is the same with and without it (the same
# candidates evaluated, the same best), candidates are compiled ahead, and
# a candidate compiled ahead that fails to compile is said once if the
# search measures it and never if it does not.  And --time ends a search
# whose compiles outlast it.  Under --time cases go to the GPU as their
# compiles finish, not in order behind a slow one: tune's results, best and
# resume equal those of the run in order (KFORGE_IN_ORDER=1); without a
# deadline (run) the order stays.
#
#   KFORGE=build/kforge sh tests/ahead_suite.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-ahead.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "ahead_suite: files kept in $TMP"; fi' EXIT
export KFORGE_FAKE_GPU=1 LC_ALL=C HOME="$TMP"
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MS KFORGE_NO_AHEAD KFORGE_TRACE SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }

# 96 candidates; those with per_thread 3 and broken 1 do not compile
cd "$TMP" || exit 2
cat > k.cu <<'EOF'
#if broken && per_thread == 3
#error broken compile failure
#endif
extern "C" __global__ void scale(float *c, const float *a, int n)
{
    int i = blockIdx.x * (block_size_x * per_thread) + threadIdx.x;
#pragma unroll
    for (int k = 0; k < per_thread; k++, i += block_size_x)
        if (i < n)
            c[i] = a[i] * 2.0f + (shift ? 0.0f : 0.0f);
}
EOF
cat > k.json <<'EOF'
{
  "kernel": "custom",
  "custom": {
    "source": "k.cu",
    "entry": "scale",
    "params": {"block_size_x": [32, 64, 128, 256, 512, 1024], "per_thread": [1, 2, 3, 4],
               "broken": [0, 1], "shift": [0, 1]},
    "sizes": ["n"],
    "args": [
      {"name": "c", "dtype": "float32", "length": "n", "role": "out"},
      {"name": "a", "dtype": "float32", "length": "n", "role": "in", "fill": {"random": [-1, 1]}},
      {"name": "n", "scalar": "int32", "value": "n"}
    ],
    "grid": ["(n + block_size_x * per_thread - 1) / (block_size_x * per_thread)"],
    "reference": {"params": {"block_size_x": 256, "per_thread": 1, "broken": 0, "shift": 0}},
    "tolerance": {"rtol": 1e-6, "atol": 0}
  },
  "defaults": {"n": 4096}
}
EOF

# the same search with and without compiling ahead (two compiler processes,
# the model strategy's batches of 4 leave them idle)
for mode in ahead none; do
  rm -rf cache.$mode
  if [ $mode = none ]; then na=KFORGE_NO_AHEAD=1; else na=KFORGE_TRACE=1; fi
  env $na KFORGE_TRACE=1 KFORGE_CACHE_DIR=$TMP/cache.$mode "$K" tune k.json --strategy model --budget 30 \
    -j 2 --no-db --no-resume -q --results r.$mode.jsonl --format json > s.$mode.json 2> e.$mode.txt
  echo $? > rc.$mode
done
labels() { sed -n 's/.*"label": *"\([^"]*\)".*/\1/p' "$1" | sort; }
best() { sed -n 's/.*"best": {[^}]*"label": "\([^"]*\)".*/\1/p' "$1"; }
if [ "$(cat rc.ahead)" = 0 ] && [ "$(cat rc.none)" = 0 ] && [ "$(labels r.ahead.jsonl)" = "$(labels r.none.jsonl)" ] &&
   [ "$(labels r.ahead.jsonl | wc -l)" -ge 30 ] && [ -n "$(best s.ahead.json)" ] &&
   [ "$(best s.ahead.json)" = "$(best s.none.json)" ]; then
  ok "the same 30 candidates evaluated and the same best with compiling ahead and without"
else
  bad "same search" "rc $(cat rc.ahead)/$(cat rc.none); $(labels r.ahead.jsonl | wc -l) lines; best '$(best s.ahead.json)' / '$(best s.none.json)'; $(tail -3 e.ahead.txt)"
fi
if grep -q 'candidates\{0,1\} compiled ahead' e.ahead.txt && ! grep -q 'compiled ahead' e.none.txt; then
  ok "candidates are compiled ahead (KFORGE_TRACE), none with KFORGE_NO_AHEAD=1"
else
  bad "compiled ahead" "$(grep -c 'compiled ahead' e.ahead.txt) / $(grep -c 'compiled ahead' e.none.txt)"
fi
# a failure to compile is said once per failed candidate measured, never for one only compiled ahead
said=$(grep -c 'failed to compile' e.ahead.txt)
failed=$(grep -c '"status": *"compile_error"' r.ahead.jsonl)
if [ "$failed" -ge 1 ] && [ "$said" = "$failed" ] && [ "$said" = "$(grep -c 'failed to compile' e.none.txt)" ]; then
  ok "compile failures: said $said times, once per failed candidate measured ($failed), as without compiling ahead"
else
  bad "compile failures said" "said $said, failed measured $failed, without ahead said $(grep -c 'failed to compile' e.none.txt)"
fi

# --time while compiles outlast it (KFORGE_COMPILE_DELAY_MS, a test hook:
# every compile takes 4 s): the search ends at the time limit, not when the
# first compile is done (before: 8 s, the reference's compile and then the
# first candidate's), and says why nothing was measured
rm -rf cache.t
t0=$(date +%s.%N)
env KFORGE_COMPILE_DELAY_MS=4000 KFORGE_CACHE_DIR=$TMP/cache.t "$K" tune k.json --strategy exhaustive --time 1 -j 1 \
  --no-db --no-resume --results r.t.jsonl > s.t.txt 2> e.t.txt
rc=$?
el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
if [ $rc = 1 ] && awk -v e="$el" 'BEGIN { exit !(e < 3.5) }' && grep -q 'stopped: time limit' s.t.txt &&
   grep -q 'no candidate was measured within --time 1 s' s.t.txt && [ ! -s r.t.jsonl ]; then
  ok "--time 1 with compiles of 4 s: stopped after $el s (exit 1, 'no candidate was measured within --time'), nothing recorded"
else
  bad "--time during compiles" "exit $rc after $el s: $(cat s.t.txt e.t.txt | tail -5)"
fi

# Under --time, cases go to the GPU as their compiles finish, not in order
# behind a slow one (run.c next_case).  Four candidates, the first
# (per_thread 4) slow to compile (KFORGE_COMPILE_DELAY_MS with a text: only
# sources that hold it): the others are measured while it compiles (before:
# the results file began with it, as the GPU waited), and the results, the
# best and a resumed search equal those of the run in order
# (KFORGE_IN_ORDER=1).
four="--set block_size_x=[64] --set per_thread=[4,1,2,3] --set broken=[0] --set shift=[0]"
slow='#define per_thread 4:8000,0'
lm() { sed -n 's/.*"label":"\([^"]*\)".*"status":"\([a-z_]*\)".*"median_ms":\([0-9.e+-]*\).*/\1 \2 \3/p' "$1"; }
for mode in ready inorder; do
  rm -rf cache.$mode
  if [ $mode = inorder ]; then io=KFORGE_IN_ORDER=1; else io=KFORGE_IN_ORDER=0; fi
  # shellcheck disable=SC2086 # four is a list of options
  env $io KFORGE_COMPILE_DELAY_MS="$slow" KFORGE_CACHE_DIR=$TMP/cache.$mode "$K" tune k.json $four \
    --strategy exhaustive --abandon-above 0 --time 600 -j 2 --no-db --no-resume -q --results r.$mode.jsonl \
    --format json > s.$mode.json 2> e.$mode.txt
  echo $? > rc.$mode
done
first() { lm "$1" | head -1 | cut -d' ' -f1; }
if [ "$(cat rc.ready)" = 0 ] && [ "$(lm r.ready.jsonl | wc -l)" = 4 ] &&
   [ "$(first r.ready.jsonl)" != "block_size_x=64,per_thread=4,broken=0,shift=0" ] &&
   [ "$(first r.inorder.jsonl)" = "block_size_x=64,per_thread=4,broken=0,shift=0" ]; then
  ok "a slow compile holds only its own case: $(lm r.ready.jsonl | grep -vc per_thread=4 | tr -d ' ') measured before it (in order: none)"
else
  bad "dispatch by readiness" "rc $(cat rc.ready); lines: $(lm r.ready.jsonl | cut -d' ' -f1 | tr '\n' ' '); in order: $(first r.inorder.jsonl)"
fi
if [ "$(cat rc.inorder)" = 0 ] && [ "$(lm r.ready.jsonl | sort)" = "$(lm r.inorder.jsonl | sort)" ] &&
   [ -n "$(best s.ready.json)" ] && [ "$(best s.ready.json)" = "$(best s.inorder.json)" ]; then
  ok "the same results (label, status, median) and best as the run in order"
else
  bad "same results as in order" "$(lm r.ready.jsonl | sort | tr '\n' ' ') / $(lm r.inorder.jsonl | sort | tr '\n' ' ')"
fi
# resume from the first two lines the out-of-order run wrote
head -2 r.ready.jsonl > r.resume.jsonl
# shellcheck disable=SC2086
env KFORGE_COMPILE_DELAY_MS="$slow" KFORGE_CACHE_DIR=$TMP/cache.resume "$K" tune k.json $four \
  --strategy exhaustive --abandon-above 0 --time 600 -j 2 --no-db -q --results r.resume.jsonl --format json \
  > s.resume.json 2> e.resume.txt
rc=$?
if [ $rc = 0 ] && [ "$(lm r.resume.jsonl | sort)" = "$(lm r.inorder.jsonl | sort)" ] &&
   grep -q '"from_results": *2,' s.resume.json && [ "$(best s.resume.json)" = "$(best s.inorder.json)" ]; then
  ok "resumed from the first 2 lines of the out-of-order file: 2 measured now, the same 4 results and best"
else
  bad "resume after out-of-order" "rc $rc; $(lm r.resume.jsonl | wc -l) lines; $(grep -o '"from_results": *[0-9]*' s.resume.json); $(tail -2 e.resume.txt)"
fi
# the reference variant (block_size_x 256, per_thread 1: none of the four)
# is compiled ahead into the cubin cache at the search's start, so the GPU
# worker does not compile it after the first case's own compile (the fake
# GPU computes references on the host: before, no cubin of it was made);
# KFORGE_NO_AHEAD=1 leaves it to the worker
refs() { grep -l '^#define block_size_x 256$' "$1"/*.key 2>/dev/null | wc -l | tr -d ' '; }
for mode in ahead none; do
  rm -rf cache.ref$mode
  if [ $mode = none ]; then na=KFORGE_NO_AHEAD=1; else na=KFORGE_NO_AHEAD=0; fi
  # shellcheck disable=SC2086
  # (6 compiler processes, so one is idle from the start for the ahead job
  # beside the four candidates and the output check, and cases of 300 ms, so
  # the search does not end before it under make check's load)
  env $na KFORGE_TRACE=1 KFORGE_FAKE_GPU_MS=300 KFORGE_CACHE_DIR=$TMP/cache.ref$mode "$K" tune k.json $four --strategy exhaustive -j 6 \
    --no-db --no-resume -q --results r.ref$mode.jsonl > s.ref$mode.txt 2> e.ref$mode.txt
  echo $? > rc.ref$mode
done
if [ "$(cat rc.refahead)" = 0 ] && [ "$(refs cache.refahead)" = 1 ] && [ "$(refs cache.refnone)" = 0 ] &&
   grep -q 'the reference variant is compiled ahead' e.refahead.txt && [ "$(lm r.refahead.jsonl | wc -l)" = 4 ]; then
  ok "the reference variant compiled ahead into the cubin cache at the start (none with KFORGE_NO_AHEAD=1)"
else
  bad "reference ahead" "rc $(cat rc.refahead); reference cubins $(refs cache.refahead) / $(refs cache.refnone); $(tail -2 e.refahead.txt)"
fi

# without a deadline (kforge run here; tune without --time) cases keep their
# order, so that the abandon thresholds, and the results, do not depend on
# the order compiles finish in
for mode in ready inorder; do
  rm -rf cache.r$mode
  if [ $mode = inorder ]; then io=KFORGE_IN_ORDER=1; else io=KFORGE_IN_ORDER=0; fi
  # shellcheck disable=SC2086
  env $io KFORGE_COMPILE_DELAY_MS="$slow" KFORGE_CACHE_DIR=$TMP/cache.r$mode "$K" run k.json $four -j 2 \
    --no-resume --results rr.$mode.jsonl --format csv --columns name,status,median_ms > t.$mode.csv 2> re.$mode.txt
  echo $? > rrc.$mode
done
if [ "$(cat rrc.ready)" = 0 ] && [ "$(cat rrc.inorder)" = 0 ] && [ "$(wc -l < t.ready.csv)" = 5 ] &&
   cmp -s t.ready.csv t.inorder.csv && [ "$(first rr.ready.jsonl)" = "block_size_x=64,per_thread=4,broken=0,shift=0" ] &&
   [ "$(lm rr.ready.jsonl)" = "$(lm rr.inorder.jsonl)" ]; then
  ok "kforge run (no deadline): the cases in their order, behind the slow compile, as with KFORGE_IN_ORDER=1"
else
  bad "run out of order" "rc $(cat rrc.ready)/$(cat rrc.inorder); $(diff t.ready.csv t.inorder.csv | head -5); first $(first rr.ready.jsonl); $(tail -2 re.ready.txt)"
fi

# --time shorter than the slow compile: the ready ones are measured (before:
# none, the GPU waited for the first)
rm -rf cache.t2
# shellcheck disable=SC2086
env KFORGE_COMPILE_DELAY_MS='#define per_thread 4:30000,0' KFORGE_CACHE_DIR=$TMP/cache.t2 "$K" tune k.json $four \
  --strategy exhaustive --abandon-above 0 --time 6 -j 2 --no-db --no-resume -q --results r.t2.jsonl > s.t2.txt 2> e.t2.txt
rc=$?
n=$(lm r.t2.jsonl | wc -l | tr -d ' ')
if [ $rc = 1 ] && [ "$n" -ge 1 ] && ! grep -q per_thread=4 r.t2.jsonl; then
  ok "--time 6 with the first candidate's compile of 30 s: $n others measured"
else
  bad "--time with a slow first compile" "exit $rc, $n measured: $(cat s.t2.txt e.t2.txt | tail -3)"
fi

# the compiler pool's default size is the CPUs kforge may run on (its affinity:
# taskset, a Slurm job's cpuset), not every CPU of the host
if command -v taskset > /dev/null 2>&1; then
  rm -rf cache.aff
  KFORGE_TRACE=1 KFORGE_CACHE_DIR=$TMP/cache.aff taskset -c 0 "$K" run k.json --set block_size_x=32 --set per_thread=1 \
    --set shift=0 --set broken=0 -q > /dev/null 2> e.aff.txt
  if grep -q 'compiler pools started: 1 compile processes each' e.aff.txt; then
    ok "taskset -c 0: a pool of 1 compile process"
  else
    bad "the pool's size under taskset -c 0" "$(grep 'compiler pools' e.aff.txt)"
  fi
else
  echo "SKIP: the pool's size under an affinity mask (no taskset)"
fi

# the compiler pool's ramp: with 8 processes, the first 4 take jobs at once and
# the rest after the first reply or a second (compiles of 1.5 s here: the
# second); KFORGE_COMPILE_RAMP=0 opens all at once
for ramp in 4 0; do
  rm -rf cache.ramp
  KFORGE_COMPILE_RAMP=$ramp KFORGE_COMPILE_DELAY_MS=1500 KFORGE_TRACE=1 KFORGE_CACHE_DIR=$TMP/cache.ramp "$K" tune k.json \
    --set per_thread=1 --set shift=0 --set broken=0 --strategy exhaustive -j 8 --no-db --no-resume -q \
    --results r.ramp$ramp.jsonl > /dev/null 2> e.ramp$ramp.txt
  n=$(grep -c . r.ramp$ramp.jsonl)
  t=$(sed -n 's/.*trace \([0-9.]*\) s .*all 8 processes take jobs (a second since the first job).*/\1/p' e.ramp$ramp.txt)
  if [ $ramp = 4 ] && [ -n "$t" ] && [ "$n" -ge 6 ]; then
    ok "ramp: 4 of 8 compile processes first, all 8 at $t s, $n candidates measured"
  elif [ $ramp = 0 ] && [ -z "$t" ] && ! grep -q 'take jobs' e.ramp0.txt && [ "$n" -ge 6 ]; then
    ok "KFORGE_COMPILE_RAMP=0: all 8 at once, $n candidates measured"
  else
    bad "the compiler pool's ramp ($ramp)" "$n lines; $(grep -E 'take jobs|compile processes' e.ramp$ramp.txt)"
  fi
done

# The model under --time asks as compiler processes free and is told as
# results come (tune.c measure_stream, run.c run_session_stream): a compile
# of 6 s (every per_thread 4) holds up only its own process.  With batches
# (KFORGE_STREAM=0) the first batch of 10 random candidates holds one, so
# the search waits for it; the stream measures many more in the same 8 s,
# never a candidate twice, and the summary counts what the file holds.  A
# resumed stream takes the file's candidates instead of measuring them.
slow6='#define per_thread 4:6000,100'
for mode in 1 0; do
  rm -rf cache.st$mode
  KFORGE_STREAM=$mode KFORGE_COMPILE_DELAY_MS="$slow6" KFORGE_TRACE=1 KFORGE_CACHE_DIR=$TMP/cache.st$mode "$K" tune k.json \
    --strategy model --seed 1 --time 8 -j 4 --no-db --no-resume --results r.st$mode.jsonl > s.st$mode.txt 2> e.st$mode.txt
  echo $? > rc.st$mode
done
labels() { sed -n 's/.*"label":"\([^"]*\)".*/\1/p' "$1"; }
n1=$(labels r.st1.jsonl | wc -l | tr -d ' ')
u1=$(labels r.st1.jsonl | sort -u | wc -l | tr -d ' ')
n0=$(labels r.st0.jsonl | wc -l | tr -d ' ')
ev1=$(sed -n 's/^strategy model (seed 1): \([0-9]*\) of 96 candidates evaluated.*/\1/p' s.st1.txt)
if [ "$(cat rc.st1)" = 0 ] && [ "$n1" = "$u1" ] && [ "$ev1" = "$n1" ] && [ "$n1" -ge $((n0 + 8)) ] && [ "$n0" -le 14 ] &&
   grep -q 'the model asks as compiler processes free' e.st1.txt && ! grep -q 'stream' e.st0.txt; then
  ok "model under --time 8 with 6 s compiles: $n1 candidates measured as a stream (each once), $n0 in batches"
else
  bad "the model's stream" "rc $(cat rc.st1), $n1 lines ($u1 distinct), summary $ev1; batches $n0; $(tail -2 e.st1.txt)"
fi
cp r.st1.jsonl r.st1r.jsonl
KFORGE_COMPILE_DELAY_MS="$slow6" KFORGE_CACHE_DIR=$TMP/cache.st1 "$K" tune k.json --strategy model --seed 1 --time 4 -j 4 \
  --no-db --results r.st1r.jsonl > s.st1r.txt 2> e.st1r.txt
taken=$(sed -n 's/.*taken from r.st1r.jsonl: \([0-9]*\).*/\1/p' s.st1r.txt)
if [ -n "$taken" ] && [ "$taken" -ge 1 ] && [ "$(labels r.st1r.jsonl | sort | uniq -d | wc -l)" = 0 ]; then
  ok "a resumed stream takes $taken candidates from its results file and measures none of them again"
else
  bad "resumed stream" "taken '$taken'; repeated: $(labels r.st1r.jsonl | sort | uniq -d | head -3 | tr '\n' ' '); $(sed -n 2,3p s.st1r.txt)"
fi
# without --time the model keeps its batches (a seed gives one search)
KFORGE_TRACE=1 KFORGE_CACHE_DIR=$TMP/cache.st1 "$K" tune k.json --strategy model --seed 1 --budget 20 -j 4 --no-db \
  --no-resume -q --results r.st2.jsonl > /dev/null 2> e.st2.txt
if ! grep -q 'stream' e.st2.txt && [ "$(labels r.st2.jsonl | wc -l | tr -d ' ')" = 20 ]; then
  ok "without --time the model asks in batches"
else
  bad "batches without --time" "$(grep stream e.st2.txt | head -2)"
fi

# The stream on the simulated clock (--simulate with -j N: N compiler
# processes, each candidate its recorded compile and run time on one): a
# recorded space of 256 (a Kernel Tuner cache file made here) whose
# candidates with c = 3 take 12 s to compile and the rest 1 s.  Under
# --time 12 on 8 processes the stream evaluates far more than the batches
# (each waits for its slowest), the same seed gives the same search, and
# it finds the optimum at least as often.
cat > sim.cu <<'EOF'
extern "C" __global__ void simk(float *out) { out[0] = a + b + c + d; }
EOF
cat > sim.json <<'EOF'
{"kernel": "custom",
 "custom": {"name": "sim", "source": "sim.cu", "entry": "simk",
            "params": {"a": [0, 1, 2, 3], "b": [0, 1, 2, 3], "c": [0, 1, 2, 3], "d": [0, 1, 2, 3]},
            "sizes": ["n"], "args": [{"name": "out", "dtype": "float32", "length": "n", "role": "out"}],
            "block": ["32"], "grid": ["1"]},
 "defaults": {"n": 64}}
EOF
python3 -c '
import json, itertools
cache = {}
for a, b, c, d in itertools.product(range(4), repeat=4):
    t = 1.0 + abs(a - 2) + 0.5 * abs(b - 1) + 0.3 * abs(c - 1) + 0.2 * abs(d - 3) + ((a * 7 + b * 5 + c * 3 + d) % 5) * 0.1
    cache["%d,%d,%d,%d" % (a, b, c, d)] = {"a": a, "b": b, "c": c, "d": d, "time": t, "times": [t, t],
        "compile_time": 12000.0 if c == 3 else 1000.0, "verification_time": 0, "benchmark_time": 50.0,
        "framework_time": 0, "strategy_time": 0}
json.dump({"device_name": "Test GPU", "kernel_name": "simk", "problem_size": [64],
           "tune_params_keys": ["a", "b", "c", "d"],
           "tune_params": {k: [0, 1, 2, 3] for k in "abcd"}, "objective": "time", "cache": cache},
          open("sim_kt.json", "w"))
'
simrun() { # mode seed -> "evaluations best_ms"
  KFORGE_STREAM=$1 "$K" tune sim.json --simulate sim_kt.json --strategy model --time 12 -j 8 --seed "$2" --no-db \
    --format json 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["evaluations"], d["best"]["objective_ms"])'
}
s_ev=0 b_ev=0 s_opt=0 b_opt=0 same=yes
for seed in 1 2 3 4 5 6; do
  r=$(simrun 1 $seed)
  [ "$(simrun 1 $seed)" = "$r" ] || same=no
  set -- $r 0 0
  s_ev=$((s_ev + $1))
  [ "$2" = 1 ] && s_opt=$((s_opt + 1))
  set -- $(simrun 0 $seed) 0 0
  b_ev=$((b_ev + $1))
  [ "$2" = 1 ] && b_opt=$((b_opt + 1))
done
if [ $s_ev -ge $((2 * b_ev)) ] && [ $s_opt -ge $b_opt ] && [ $s_opt -ge 3 ] && [ $same = yes ]; then
  ok "simulated stream on 8 processes, --time 12: $s_ev evaluations over 6 seeds against $b_ev in batches, the optimum in $s_opt against $b_opt; reproducible"
else
  bad "simulated stream" "stream $s_ev evaluations ($s_opt optimum), batches $b_ev ($b_opt); same seed, same search: $same"
fi
# the compiler processes beside GPU workers run 10 nice steps lower, so that
# the GPUs' side (a device's context made, inputs copied on every CPU, the
# session's loop) goes first when both want the CPUs; check --compile's,
# beside no GPU, do not
base=$(ps -o ni= -p $$ | tr -d ' ')
want=$((base + 10 > 19 ? 19 : base + 10))
kids_ni() { ps -e -o ppid=,ni= | awk -v p="$1" '$1 == p { print $2 }' | sort | uniq -c | awk '{ printf "%s at %s; ", $1, $2 }'; }
rm -rf cache.nice
KFORGE_COMPILE_DELAY_MS=4000 KFORGE_COMPILE_RAMP=0 KFORGE_CACHE_DIR=$TMP/cache.nice "$K" tune k.json --set per_thread=1 \
  --set shift=0 --set broken=0 --strategy exhaustive -j 4 --no-db --no-resume -q --results r.nice.jsonl > /dev/null 2>&1 &
pid=$!
sleep 2
tn=$(kids_ni $pid)
wait $pid
rm -rf cache.nice
KFORGE_COMPILE_DELAY_MS=4000 KFORGE_COMPILE_RAMP=0 "$K" check --compile k.json --set per_thread=1 --set shift=0 \
  --set broken=0 -j 4 --cache-dir "$TMP/cache.nice" > /dev/null 2>&1 &
pid=$!
sleep 2
cn=$(kids_ni $pid)
wait $pid
case "$tn|$cn" in
  *"4 at $want; "*"|4 at $base; ") ok "compiler processes beside the GPU worker at nice $want ($tn), check --compile's at $base ($cn)" ;;
  *) bad "compiler processes' niceness" "tune's children: $tn check --compile's: $cn (want 4 at $want, then 4 at $base)" ;;
esac

echo "ahead_suite: $npass passed, $nfail failed"
[ $nfail = 0 ]
