#!/bin/sh
# tests/datashare_suite.sh -- several GPUs make each input once (issue 38,
# src/exec/datashare.h), on fake devices (KFORGE_FAKE_GPU=N):
#
#   KFORGE=build/kforge sh tests/datashare_suite.sh
#
#   1. a tune over 5 sizes on 4 devices makes each key's data (exact and
#      realistic) once in all, where every device made its own before;
#   2. its results are those of one device and of 4 devices without sharing
#      (KFORGE_SHARED_INPUTS=0), field for field but for the device, the
#      times spent and the run's stamp;
#   3. a region too small for the largest input (KFORGE_SHARED_INPUTS=1M:
#      1 MiB) makes it privately, with the same results;
#   4. planted faults give the same results with and without sharing (their
#      model writes into the inputs it keeps: had those been the region's,
#      another worker would read the changed element, and a fault at 2^22
#      "cannot change the answer"); so does run (data made as the cases
#      come, no tune's list ahead).
# Prints PASS/FAIL lines and "datashare_suite: N passed, N failed"; exits 1 if
# a check failed.
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-datashare.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "datashare_suite: files kept in $TMP"; fi' EXIT
trap 'exit 130' INT TERM HUP
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}" KFORGE_DB="$TMP/db" LC_ALL=C
unset KFORGE_FAULT_INJECT KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MIXED KFORGE_FAKE_GPU_MS KFORGE_SHARED_INPUTS
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX CUDA_VISIBLE_DEVICES
cd "$TMP" || exit 2
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }

if [ ! -x "$KFORGE" ]; then
  echo "FAIL: $KFORGE not built"; exit 1
fi
if ! "$KFORGE" --version | grep -q NVRTC; then
  echo "SKIP: datashare suite: NVRTC is not usable here"
  echo "datashare_suite: 0 passed, 0 failed"
  exit 0
fi
if ! command -v python3 > /dev/null; then
  echo "SKIP: datashare suite: no python3 to compare results files"
  echo "datashare_suite: 0 passed, 0 failed"
  exit 0
fi

# a results file's lines, each without the fields that name the device or
# time the work, sorted: what must not depend on the devices or on sharing (config: each tune's own between-sizes file)
cat > norm.py <<'P'
import json, sys
DROP = {"run", "config", "time", "host", "device_index", "uuid", "device", "cached", "compile_ms", "setup_ms", "verify_ms",
        "bench_ms", "resumed"}
out = []
for line in open(sys.argv[1]):
    if line.strip():
        d = json.loads(line)
        out.append(json.dumps({k: v for k, v in d.items() if k not in DROP}, sort_keys=True))
print("\n".join(sorted(out)))
P
norm() { python3 norm.py "$1"; }
# "data made" trace lines: how many, and how many distinct keys
made() { grep -c 'data made' "$1"; }
keys() { grep 'data made' "$1" | sed 's/.*key \([0-9a-f]*\).*/\1/' | sort -u | grep -c .; }

# float32 sum: exact and realistic data (tune --accuracy) at each size
cat > sp.json <<'J'
{"kernel": "reduce", "defaults": {"dtype": "float32", "op": "sum", "n": [1000]},
 "bench": {"warmup": 1, "min_reps": 10, "max_time_s": 0.005},
 "variants": [{"algorithm": "shuffle", "unroll": "full", "block_size": [128, 256, 512],
               "elements_per_thread": [1, 4], "vector_width": [1, 4], "passes": ["multi_kernel", "atomic"]}]}
J
SIZES='n=[1000,65536,1000003,4194304,8388608]'
EXTRA= # more options for tune
tune() { # tune NAME GPUS [env...]
  name=$1 g=$2; shift 2
  # shellcheck disable=SC2086 # EXTRA is a list of options
  env KFORGE_FAKE_GPU="$g" KFORGE_TRACE=1 "$@" "$KFORGE" tune sp.json --set "$SIZES" --strategy exhaustive \
    --abandon-above 0 --accuracy --devices all --no-db --no-resume -q --results "$name.jsonl" $EXTRA > "$name.out" 2> "$name.err"
}

# 1. each key made once on 4 devices
tune t4 4; rc=$?
m=$(made t4.err) k=$(keys t4.err)
if [ $rc = 0 ] && [ "$k" -ge 5 ] && [ "$m" = "$k" ] && ! grep -q 'data made.*private' t4.err; then
  ok "tune on 4 devices: each of the $k keys' data made once (in the shared region)"
else
  bad "tune on 4 devices, data made once" "rc=$rc made=$m keys=$k $(grep -v trace t4.err | head -3)"
fi
# realistic data too (the accuracy run of a float sum)
if grep -q 'data made.*realistic' t4.err && grep -q '"acc_err":[0-9]' t4.jsonl; then
  ok "the realistic data (accuracy) is shared too"
else
  bad "realistic data shared" "$(grep -c 'data made.*realistic' t4.err) realistic makes"
fi

# 2. the same results as one device, and as 4 devices making their own
tune t1 1; rc1=$?
tune t4p 4 KFORGE_SHARED_INPUTS=0; rc4=$?
norm t4.jsonl > n4; norm t1.jsonl > n1; norm t4p.jsonl > n4p
if [ $rc1 = 0 ] && [ $rc4 = 0 ] && [ -s n4 ] && cmp -s n4 n1 && cmp -s n4 n4p; then
  ok "the results of 4 devices sharing = 1 device = 4 devices each making its own ($(grep -c . n4) lines)"
else
  bad "results equal" "rc=$rc1/$rc4 $(diff n4 n1 | head -2 | cut -c1-300) $(diff n4 n4p | head -2 | cut -c1-300)"
fi
if [ "$(made t4p.err)" -gt "$(keys t4p.err)" ] && ! grep -q 'shared data: a region' t4p.err; then
  ok "KFORGE_SHARED_INPUTS=0: no region, each device makes its own ($(made t4p.err) makes of $(keys t4p.err) keys)"
else
  bad "KFORGE_SHARED_INPUTS=0" "made=$(made t4p.err) keys=$(keys t4p.err)"
fi

# 3. a region too small for the larger inputs: those are made privately
tune t4s 4 KFORGE_SHARED_INPUTS=1M; rc=$?
norm t4s.jsonl > n4s
if [ $rc = 0 ] && cmp -s n4s n4 && grep -q 'data made.*private' t4s.err && grep -q 'data made.*shared' t4s.err; then
  ok "a 1 MiB region: small keys shared, large ones made privately, the same results"
else
  bad "small region" "rc=$rc $(diff n4s n4 | head -2 | cut -c1-300)"
fi

# 5. data affinity (run.c): a case goes to a worker that holds its data, so
# each size's inputs are set up on few devices, not on every one; the same
# results.  Counted from the workers' "inputs made: key K" trace lines: the
# distinct (worker, exact data) pairs, against KFORGE_DATA_AFFINITY=0 (every
# case to whichever worker is free, as before).  Under --time (cases taken as
# their compiles finish) too.
pairs() { grep 'inputs made: key .*exact' "$1" | sed 's/.*\[\([0-9]*\)\].*key \([0-9a-f]*\).*/\1 \2/' | sort -u | grep -c .; }
tune t4n 4 KFORGE_DATA_AFFINITY=0; rcn=$?
norm t4n.jsonl > n4n
pa=$(pairs t4.err) pn=$(pairs t4n.err) k=$(grep 'inputs made: key .*exact' t4.err | sed 's/.*key \([0-9a-f]*\).*/\1/' | sort -u | grep -c .)
if [ $rcn = 0 ] && cmp -s n4n n4 && [ "$k" -ge 5 ] && [ "$pn" -ge $((3 * k)) ] && [ $((pa * 5)) -le $((pn * 4)) ] &&
   grep -q 'GPU [0-9] takes the data of key' t4.err && ! grep -q 'takes the data' t4n.err; then
  ok "data affinity: $k sizes' exact data set up $pa times on 4 devices (without it: $pn), the same results"
else
  bad "data affinity" "rc=$rcn keys=$k pairs=$pa without=$pn $(diff n4n n4 | head -2 | cut -c1-300)"
fi
EXTRA="--time 120"
tune t4t 4; rc=$?
EXTRA=
norm t4t.jsonl > n4t
if [ $rc = 0 ] && cmp -s n4t n4 && [ "$(pairs t4t.err)" -lt "$pn" ]; then
  ok "data affinity under --time: the same results, data set up $(pairs t4t.err) times"
else
  bad "data affinity under --time" "rc=$rc pairs=$(pairs t4t.err) $(diff n4t n4 | head -2 | cut -c1-300)"
fi

# 6. the sizes tune's pass measures between the tuned ones: their data made
# ahead too, during the search, not after it (but for one a worker may still
# be making when a search of fake cases ends: 2 keys each, made after the
# search before)
endl=$(grep -n 'search ends' t4.err | head -1 | cut -d: -f1)
late=$(sed -n "${endl:-1},\$p" t4.err | grep -c 'data made')
nb=$(python3 -c 'import json,sys; print(len({json.loads(l)["n"] for l in open(sys.argv[1]) if l.strip()} - {1000,65536,1000003,4194304,8388608}))' t4.jsonl)
if [ -n "$endl" ] && [ "$(grep -c 'search ends' t4.err)" = 2 ] && [ "$nb" -ge 3 ] && [ "$late" -lt "$nb" ]; then
  ok "the $nb sizes between the tuned ones: their data made during the search ($late keys after it)"
else
  bad "between sizes made ahead" "search ends at line $endl, $nb sizes between, $late made after the search"
fi

# 7. at the end the region's pages are given back by a process kforge does
# not wait for (the last to unmap a region frees its pages: ~0.1 s a GiB),
# which ends as soon as kforge has unmapped it: gone (or a zombie for init
# to reap) within seconds, holding no descriptor of ours (kforge's output
# read through a pipe ends with kforge)
hp=$(sed -n 's/.*the region given back by process \([0-9]*\), not waited for.*/\1/p' t4.err)
st=gone
for _ in 1 2 3 4 5 6 7 8 9 10; do
  st=$(ps -o stat= -p "${hp:-1}" 2> /dev/null | tr -d ' ')
  case $st in ''|Z*) break ;; esac
  sleep 0.3
done
s0=$(date +%s)
piped=$(env KFORGE_FAKE_GPU=4 "$KFORGE" tune sp.json --set "$SIZES" --strategy exhaustive --abandon-above 0 --devices all \
  --no-db --no-resume --results tp.jsonl 2> /dev/null | wc -c)
s1=$(date +%s)
if [ -n "$hp" ] && case $st in ''|Z*) true ;; *) false ;; esac && [ "$piped" -gt 0 ] && [ $((s1 - s0)) -lt 60 ]; then
  ok "the region given back by process $hp, not waited for, which then ended ($st); kforge's output through a pipe ends with it"
else
  bad "region given back" "holder '$hp' state '$st' piped=$piped"
fi

# 4. planted faults: the model of a fault reads the inputs a worker keeps
for sh in 1 0; do
  KFORGE_SHARED_INPUTS=$sh KFORGE_PLANT='drop_first@*' KFORGE_FAKE_GPU=2 "$KFORGE" run sp.json --set "$SIZES" \
    --devices all --results p$sh.jsonl --quiet > /dev/null 2> p$sh.err
  echo $? > p$sh.rc
done
norm p1.jsonl > np1; norm p0.jsonl > np0
if [ "$(cat p1.rc)" = "$(cat p0.rc)" ] && [ -s np1 ] && cmp -s np1 np0 && grep -q '"planted":"drop_first"' p1.jsonl; then
  ok "run with a planted fault on 2 devices: the same results with and without sharing"
else
  bad "planted faults" "rc=$(cat p1.rc)/$(cat p0.rc) $(diff np1 np0 | head -2 | cut -c1-300) $(head -2 p1.err)"
fi

echo "datashare_suite: $npass passed, $nfail failed"
[ $nfail = 0 ]
