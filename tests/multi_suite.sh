#!/bin/sh
# tests/multi_suite.sh -- several GPUs and shards (issue 12), on fake devices
# (KFORGE_FAKE_GPU=N gives N of them; no GPU needed, NVRTC is):
#
#   KFORGE=build/kforge sh tests/multi_suite.sh
#
#   1. run --devices: every case once, on both devices, each result naming its
#      device (index, name, UUID); the same output order as on one device;
#      KFORGE_DEVICES; usage errors; the devices measure at the same time;
#   2. faults: a crash or hang costs only its case on its device; a device
#      whose worker keeps dying is dropped and its cases go to the other;
#      GPUs of two models: run uses both, tune refuses;
#   3. tune on two devices: the same candidates, best and search (seeded
#      strategies) as on one;
#   4. shards: --shard 1/2 and 2/2 of a tune, merged, give the candidates and
#      best of the unsharded tune; Slurm job array variables; run shards;
#      kforge merge de-duplicates and reports conflicts;
#   5. a custom kernel (configs/custom: transpose at two shapes, vector_add):
#      run and tune on two devices as on one, tune shards merged with --kernel
#      give the unsharded tune's cases, best and database entries; merge and
#      compare without --kernel say why they cannot read the lines.
# Prints PASS/FAIL lines and "multi_suite: N passed, N failed"; exits 1 if a
# check failed.
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-multi.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "multi_suite: files kept in $TMP"; fi' EXIT
trap 'exit 130' INT TERM HUP
# make check gives the suites that do not test the cache one cubin cache (KFORGE_TEST_CACHE)
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=2 LC_ALL=C
unset KFORGE_FAULT_INJECT KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MIXED KFORGE_FAKE_GPU_MS
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX
cd "$TMP" || exit 2
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }
lines() { if [ -f "$1" ]; then grep -c . "$1"; else echo 0; fi; }
# the cases of a results file: label and size, sorted
cases() { grep -o '"label":"[^"]*".*"n":[0-9]*' "$1" | sed 's/"kernel".*"n"/n/' | sort; }
# the summary line's value of a field (tune --format jsonl)
field() { sed -n "s/.*\"event\": \"summary\".*\"$2\": \([0-9.]*\).*/\1/p" "$1"; }
best() { sed -n 's/.*"best": {"objective_ms": [0-9.e-]*, "evaluation": [0-9]*, "label": "\([^"]*\)".*/\1/p' "$1"; }
now_ms() { date +%s%3N; }

if [ ! -x "$KFORGE" ]; then
  echo "FAIL: $KFORGE not built"; exit 1
fi
if ! "$KFORGE" --version | grep -q NVRTC; then
  echo "SKIP: multi suite: NVRTC is not usable here"
  echo "multi_suite: 0 passed, 0 failed"
  exit 0
fi

cat > r.json <<'J'
{"kernel": "reduce", "defaults": {"algorithm": "shuffle", "unroll": "full", "n": [1000, 100000, 3000000]},
 "variants": [{"name": "a", "block_size": 128}, {"name": "b", "block_size": 256},
              {"name": "c", "block_size": 512, "vector_width": 4}, {"name": "d", "block_size": 256, "passes": "atomic"},
              {"name": "e", "block_size": 1024, "elements_per_thread": 2}]}
J
cat > sp.json <<'J'
{"kernel": "reduce", "defaults": {"dtype": "float32", "op": "sum", "n": ["2^22"]},
 "bench": {"warmup": 1, "min_reps": 10, "max_time_s": 0.005},
 "variants": [{"algorithm": "shuffle", "unroll": "full", "block_size": [128, 256, 512],
               "elements_per_thread": [1, 2, 4], "vector_width": [1, 4],
               "passes": ["multi_kernel", "atomic", "last_block"]}]}
J
NCAND=54

# --- 1. run on several devices ---------------------------------------------
"$KFORGE" run r.json --devices all --results r1.jsonl --format jsonl > o1.jsonl 2> e1.txt
rc=$?
if [ $rc -eq 0 ] && [ "$(lines r1.jsonl)" -eq 15 ] && [ "$(cases r1.jsonl | uniq | wc -l)" -eq 15 ] &&
   grep -q '"device_index":0' r1.jsonl && grep -q '"device_index":1' r1.jsonl; then
  ok "run --devices all: 15 cases once each, on both devices"
else
  bad "run --devices all" "rc=$rc lines=$(lines r1.jsonl) $(head -3 e1.txt)"
fi
u0=$(grep '"device_index":0' r1.jsonl | grep -o '"uuid":"GPU-[0-9a-f-]*"' | sort -u)
u1=$(grep '"device_index":1' r1.jsonl | grep -o '"uuid":"GPU-[0-9a-f-]*"' | sort -u)
if [ -n "$u0" ] && [ -n "$u1" ] && [ "$u0" != "$u1" ] && [ "$(echo "$u0" | wc -l)" -eq 1 ] &&
   [ "$(grep -c '"device":"fake-gpu (KFORGE_FAKE_GPU)"' r1.jsonl)" -eq 15 ]; then
  ok "each result names its device: index, name and its own UUID ($u0, $u1)"
else
  bad "device fields" "u0=$u0 u1=$u1"
fi
KFORGE_FAKE_GPU=1 "$KFORGE" run r.json --no-results --format jsonl > o0.jsonl 2> /dev/null
if [ "$(grep -o '"label":"[^"]*".*"n":[0-9]*' o0.jsonl | sed 's/"kernel".*"n"/n/')" = \
     "$(grep -o '"label":"[^"]*".*"n":[0-9]*' o1.jsonl | sed 's/"kernel".*"n"/n/')" ] &&
   grep -q 'cases measured per GPU: 0: [0-9]*, 1: [0-9]*' e1.txt; then
  ok "the output lists the cases in the same order as on one device"
else
  bad "output order" "$(diff o0.jsonl o1.jsonl | head -4)"
fi
KFORGE_DEVICES=1 "$KFORGE" run r.json --results r2.jsonl --quiet > /dev/null 2> e2.txt
KFORGE_DEVICES=all "$KFORGE" run r.json --device 0 --no-resume --results r3.jsonl --quiet > /dev/null 2>> e2.txt
if [ "$(grep -c '"device_index":1' r2.jsonl)" -eq 15 ] && [ "$(grep -c '"device_index":0' r3.jsonl)" -eq 15 ]; then
  ok "KFORGE_DEVICES picks the devices; --device overrides it"
else
  bad "KFORGE_DEVICES" "$(grep -o '"device_index":[0-9]' r2.jsonl r3.jsonl | sort | uniq -c | tr '\n' ' ') $(cat e2.txt)"
fi
for args in "--devices 0,7:3:no GPU with index 7" "--devices x:2:expected 'all' or GPU indices" \
            "--devices 0,0:2:listed twice" "--device 0 --devices 1:2:not both" "--shard 3/2:2:1 <= K <= N" \
            "--shard 1:2:expected K/N"; do
  a=${args%%:*}; rest=${args#*:}; want=${rest%%:*}; msg=${rest#*:}
  # shellcheck disable=SC2086
  "$KFORGE" run r.json $a --no-results > /dev/null 2> e.txt
  rc=$?
  if [ $rc -eq "$want" ] && grep -q -- "$msg" e.txt; then
    ok "run $a: exit $want"
  else
    bad "run $a" "rc=$rc $(cat e.txt)"
  fi
done
KFORGE_DEVICES=bogus "$KFORGE" run r.json --no-results > /dev/null 2> e.txt
rc=$?
if [ $rc -eq 2 ] && grep -q 'KFORGE_DEVICES' e.txt; then
  ok "a bad KFORGE_DEVICES is a usage error naming it"
else
  bad "KFORGE_DEVICES=bogus" "rc=$rc $(cat e.txt)"
fi
# Two devices measure at the same time: with 60 ms a case, 15 cases take
# about 0.9 s on one device and 0.45 s on two.
t0=$(now_ms)
KFORGE_FAKE_GPU_MS=60 "$KFORGE" run r.json --device 0 --no-results --format csv > /dev/null 2>&1
t1=$(now_ms)
KFORGE_FAKE_GPU_MS=60 "$KFORGE" run r.json --devices 0,1 --no-results --format csv > /dev/null 2>&1
t2=$(now_ms)
one=$((t1 - t0)); two=$((t2 - t1))
if [ $((two * 10)) -lt $((one * 8)) ]; then
  ok "two devices measure in parallel (${one} ms on one, ${two} ms on two)"
else
  bad "parallel devices" "${one} ms on one, ${two} ms on two"
fi
# The devices open at the same time (cuInit and the context take most of a
# second each on a machine of several GPUs): with 600 ms to open a device,
# three devices start about as fast as one, also when the guess of how many
# "all" is (CUDA_VISIBLE_DEVICES here; the fake GPU ignores it otherwise) is
# too high.  One entry: one device.  An empty one tells nothing: the first
# worker counts, the others open after it.
echo '{"kernel": "reduce", "defaults": {"n": 1000}, "variants": [{"block_size": 128}]}' > one.json
"$KFORGE" check --compile one.json > /dev/null 2>&1
t0=$(now_ms)
KFORGE_FAKE_GPU=3 KFORGE_FAKE_GPU_OPEN_MS=600 "$KFORGE" run one.json --device 0 --no-results --format csv > /dev/null 2>&1
t1=$(now_ms)
one=$((t1 - t0))
for g in unset 0,1,2 0,1,2,3,4 0 empty; do
  t1=$(now_ms)
  if [ $g = empty ]; then
    CUDA_VISIBLE_DEVICES= KFORGE_FAKE_GPU=3 KFORGE_FAKE_GPU_OPEN_MS=600 "$KFORGE" run one.json --devices all \
      --results "open-$g.jsonl" --format csv > /dev/null 2> e.txt
  elif [ $g = unset ]; then
    KFORGE_FAKE_GPU=3 KFORGE_FAKE_GPU_OPEN_MS=600 "$KFORGE" run one.json --devices all --results "open-$g.jsonl" \
      --format csv > /dev/null 2> e.txt
  else
    CUDA_VISIBLE_DEVICES=$g KFORGE_FAKE_GPU=3 KFORGE_FAKE_GPU_OPEN_MS=600 "$KFORGE" run one.json --devices all \
      --results "open-$g.jsonl" --format csv > /dev/null 2> e.txt
  fi
  rc=$?
  t2=$(now_ms)
  all=$((t2 - t1))
  case $g in empty) lim=$((one + 900)) ;; *) lim=$((one + 400)) ;; esac
  case $g in
    0) devs=1; grep -q 'per GPU' e.txt && devs=x ;;
    *) devs=3; grep -q 'per GPU: 0: [0-9]*, 1: [0-9]*, 2: [0-9]*$' e.txt || devs=x ;;
  esac
  if [ $rc -eq 0 ] && [ $all -lt $lim ] && [ $devs != x ]; then
    ok "$devs device(s) open at once (guess ${g}): ${all} ms, one device ${one} ms"
  else
    bad "devices open at once (guess ${g})" "rc=$rc ${all} ms vs one device ${one} ms $(head -3 e.txt)"
  fi
done

# --- 2. faults, dead devices, two models ------------------------------------
KFORGE_FAULT_INJECT=crash@2 "$KFORGE" run r.json --devices all --results f1.jsonl --format csv > /dev/null 2> e.txt
rc=$?
if [ $rc -eq 1 ] && [ "$(grep -c '"status":"fault"' f1.jsonl)" -eq 1 ] &&
   [ "$(grep -c '"status":"ok"' f1.jsonl)" -eq 14 ]; then
  ok "a crash costs only its case (counted across devices: case 2)"
else
  bad "crash@2 on two devices" "rc=$rc $(grep -o '"status":"[a-z]*"' f1.jsonl | sort | uniq -c | tr '\n' ' ')"
fi
KFORGE_FAKE_GPU_MS=30 KFORGE_FAULT_INJECT=hang@3 "$KFORGE" run r.json --devices all --timeout 1 --results f2.jsonl \
  --format csv > /dev/null 2> e.txt
rc=$?
hung=$(grep '"status":"timeout"' f2.jsonl | grep -o '"device_index":[0-9]')
other=$(grep '"status":"ok"' f2.jsonl | grep -v "$hung" | grep -c .)
if [ $rc -eq 1 ] && [ "$(grep -c '"status":"timeout"' f2.jsonl)" -eq 1 ] && [ "$(lines f2.jsonl)" -eq 15 ] &&
   [ "$other" -ge 8 ]; then
  ok "a hang costs only its case; the other device went on meanwhile ($other cases)"
else
  bad "hang@3 on two devices" "rc=$rc other=$other $(grep -o '"status":"[a-z]*"' f2.jsonl | sort | uniq -c | tr '\n' ' ')"
fi
KFORGE_FAULT_INJECT=dead@1 "$KFORGE" run r.json --devices all --results f3.jsonl --format csv > /dev/null 2> e.txt
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c '"status":"ok"' f3.jsonl)" -eq 15 ] && ! grep -q '"device_index":1' f3.jsonl &&
   grep -q 'GPU 1 .*died on 3 cases in a row; dropping it' e.txt; then
  ok "a device whose worker keeps dying is dropped; its cases are measured on the other"
else
  bad "dead@1" "rc=$rc $(grep -o '"status":"[a-z]*"' f3.jsonl | sort | uniq -c | tr '\n' ' ') $(cat e.txt)"
fi
# the other model's cubins first: else, on a loaded machine, the two devices
# of the first model finish all 15 cases before sm_80's compiles are done
"$KFORGE" check r.json --compile --arch sm_80 > /dev/null 2>&1
KFORGE_FAKE_GPU=3 KFORGE_FAKE_GPU_MIXED=1 KFORGE_FAKE_GPU_MS=20 "$KFORGE" run r.json --devices all --results m1.jsonl \
  --format csv > /dev/null 2> e.txt
rc=$?
if [ $rc -eq 0 ] && [ "$(lines m1.jsonl)" -eq 15 ] && grep -q '"device":"fake-gpu-b (KFORGE_FAKE_GPU)".*"cc":"8.0"' m1.jsonl &&
   grep -q '"device":"fake-gpu (KFORGE_FAKE_GPU)".*"cc":"9.0"' m1.jsonl; then
  ok "run on two GPU models: both measure, each line with its own model's facts"
else
  bad "run on two models" "rc=$rc $(grep -o '"device":"[^"]*"' m1.jsonl | sort | uniq -c | tr '\n' ' ') $(head -3 e.txt)"
fi
KFORGE_FAKE_GPU_MIXED=1 "$KFORGE" tune sp.json --devices all --results m2.jsonl > /dev/null 2> e.txt
rc=$?
if [ $rc -eq 2 ] && grep -q 'do not compare' e.txt && [ "$(lines m2.jsonl)" -eq 0 ]; then
  ok "tune on two GPU models is refused (exit 2, explained)"
else
  bad "tune on two models" "rc=$rc $(cat e.txt)"
fi

# --- 3. tune on two devices ---------------------------------------------------
"$KFORGE" tune --abandon-above 0 sp.json --device 0 --results t1.jsonl --format jsonl > s1.jsonl 2> e1.txt
rc1=$?
"$KFORGE" tune --abandon-above 0 sp.json --devices all --results t2.jsonl --format jsonl > s2.jsonl 2> e2.txt
rc2=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(field s2.jsonl evaluations)" = $NCAND ] &&
   [ "$(lines t2.jsonl)" -eq $NCAND ] && [ "$(cases t2.jsonl | uniq | wc -l)" -eq $NCAND ] &&
   [ "$(cases t1.jsonl)" = "$(cases t2.jsonl)" ] && [ "$(field s2.jsonl gpus)" = 2 ] &&
   grep -q '"device_index":1' t2.jsonl; then
  ok "exhaustive tune on two devices: every candidate exactly once, the same ones as on one"
else
  bad "exhaustive on two devices" "rc=$rc1/$rc2 lines=$(lines t2.jsonl) $(head -3 e2.txt)"
fi
if [ -n "$(best s1.jsonl)" ] && [ "$(best s1.jsonl)" = "$(best s2.jsonl)" ]; then
  ok "the same best on one and two devices ($(best s1.jsonl))"
else
  bad "best on two devices" "'$(best s1.jsonl)' vs '$(best s2.jsonl)'"
fi
# (a guided search abandons nothing here: which candidates a race abandons
# depends on the best measured so far, so on how the devices interleave,
# and an abandoned candidate steers the search by its partial figures)
for st in genetic local anneal model; do
  KFORGE_FAKE_GPU_MS=2 "$KFORGE" tune sp.json --strategy $st --budget 25 --seed 9 --device 0 --no-resume \
    --abandon-above 0 --results g1.jsonl --no-db > g1.txt 2>&1
  KFORGE_FAKE_GPU_MS=2 "$KFORGE" tune sp.json --strategy $st --budget 25 --seed 9 --devices all --no-resume \
    --abandon-above 0 \
    --results g2.jsonl --no-db > g2.txt 2>&1
  if grep -q '^best: ' g1.txt && [ "$(grep '^best:\|new best at' g1.txt)" = "$(grep '^best:\|new best at' g2.txt)" ] &&
     [ "$(cases g1.jsonl)" = "$(cases g2.jsonl)" ]; then
    ok "$st --seed 9: the same search on one and two devices"
  else
    bad "$st on two devices" "$(grep 'best' g1.txt g2.txt | head -4)"
  fi
  rm -f g1.jsonl g2.jsonl
done

# --- 4. shards and merge ------------------------------------------------------
# (these tunes abandon nothing: which candidates a race abandons depends on
# the best so far, so on the order of the search; they compare every record)
"$KFORGE" tune --abandon-above 0 sp.json --shard 1/2 --results h1.jsonl --format jsonl > hs1.jsonl 2> e1.txt
rc1=$?
"$KFORGE" tune --abandon-above 0 sp.json --shard 2/2 --results h2.jsonl --format jsonl > hs2.jsonl 2> e2.txt
rc2=$?
n1=$(lines h1.jsonl); n2=$(lines h2.jsonl)
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $((n1 + n2)) -eq $NCAND ] && [ $((n1 - n2)) -le 1 ] && [ $((n2 - n1)) -le 1 ] &&
   [ -z "$(cases h1.jsonl | comm -12 - "$(cases h2.jsonl > h2.cases; echo h2.cases)")" ] &&
   [ "$(cat h1.jsonl h2.jsonl > h12.jsonl; cases h12.jsonl)" = "$(cases t1.jsonl)" ]; then
  ok "--shard 1/2 and 2/2: balanced ($n1 + $n2), disjoint, together the unsharded tune's candidates"
else
  bad "shards" "rc=$rc1/$rc2 $n1 + $n2 $(head -3 e2.txt)"
fi
"$KFORGE" merge h1.jsonl h2.jsonl --results merged.jsonl --db mdb --format jsonl > ms.jsonl 2> em.txt
rc=$?
if [ $rc -eq 0 ] && [ "$(best ms.jsonl)" = "$(best s1.jsonl)" ] && [ "$(field ms.jsonl candidates)" = $NCAND ] &&
   [ "$(lines merged.jsonl)" -eq $NCAND ] && [ "$(cases merged.jsonl)" = "$(cases t1.jsonl)" ] &&
   grep -q '"merged_files": 2' ms.jsonl && grep -q "\"label\": \"$(best s1.jsonl)\"" ms.jsonl; then
  ok "kforge merge of the two shards: the unsharded tune's candidates and best ($(best ms.jsonl))"
else
  bad "merge of shards" "rc=$rc best='$(best ms.jsonl)' vs '$(best s1.jsonl)' $(cat em.txt)"
fi
if ls mdb/*.json > /dev/null 2>&1 && grep -q '"how": "kforge merge of 2 results files' mdb/*.json; then
  ok "kforge merge updates the tuning database"
else
  bad "merge --db" "$(ls mdb 2>&1) $(cat em.txt)"
fi
# a tune and a merge of its shards record identical database entries (date
# and how aside), deterministic ones included: one module decides "best"
cp "$ROOT/configs/tune-reduce.json" tr.json
dbnorm() { python3 "$ROOT/tests/golden/normalize.py" db "$1"/*.json; }
# (--between 0: a shard measures nothing between the tuned sizes, so neither does the tune compared)
"$KFORGE" tune tr.json --strategy random --budget 24 --seed 3 --set 'n=["2^12","2^20"]' --device 0 \
  --between 0 --results w.jsonl --db wdb -q > /dev/null 2> e.txt
rc0=$?
for k in 1 2; do
  "$KFORGE" tune tr.json --strategy random --budget 24 --seed 3 --set 'n=["2^12","2^20"]' --device 0 \
    --shard $k/2 --results w$k.jsonl --no-db -q > /dev/null 2>> e.txt
done
"$KFORGE" merge w1.jsonl w2.jsonl --db wmdb -q > /dev/null 2>> e.txt
rc=$?
if [ $rc0 -eq 0 ] && [ $rc -eq 0 ] && [ -n "$(dbnorm wdb 2> /dev/null)" ] && [ "$(dbnorm wdb)" = "$(dbnorm wmdb)" ]; then
  ok "tune and merge of its two shards: identical database entries (date and how aside)"
else
  bad "tune vs merge database" "rc=$rc0/$rc $(dbnorm wdb 2>&1 | diff - "$(dbnorm wmdb > wm.norm 2>&1; echo wm.norm)" | head -8) $(head -3 e.txt)"
fi
"$KFORGE" merge h1.jsonl h2.jsonl --results merged.jsonl > /dev/null 2> e.txt
rc=$?
if [ $rc -eq 4 ] && grep -q 'exists' e.txt; then
  ok "merge --results refuses to overwrite a file"
else
  bad "merge --results existing" "rc=$rc $(cat e.txt)"
fi
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=1 \
  "$KFORGE" tune sp.json --results sl.jsonl --no-db > /dev/null 2> e.txt
if grep -q 'Slurm job array task 2 of 2.*shard 2/2' e.txt && [ "$(cases sl.jsonl)" = "$(cases h2.jsonl)" ]; then
  ok "SLURM_ARRAY_TASK_ID/COUNT/MIN/MAX: announced, the same slice as --shard 2/2"
else
  bad "Slurm variables" "$(cat e.txt)"
fi
SLURM_ARRAY_TASK_ID=8 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=12 \
  "$KFORGE" run r.json --no-results --format csv > /dev/null 2> e.txt
SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=5 \
  "$KFORGE" run r.json --no-results --format csv > /dev/null 2>> e.txt
rc=$?
if grep -q 'shard 3/4' e.txt && [ $rc -eq 2 ] && grep -q 'not evenly spaced' e.txt; then
  ok "a stepped job array (0-12:4) gives shard 3/4; uneven task ids are refused"
else
  bad "Slurm steps" "rc=$rc $(cat e.txt)"
fi
SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=1 \
  "$KFORGE" run r.json --shard 1/1 --results sall.jsonl --format csv > /dev/null 2> e.txt
if [ "$(lines sall.jsonl)" -eq 15 ] && ! grep -q 'Slurm' e.txt; then
  ok "--shard 1/1 overrides the job array: everything"
else
  bad "--shard 1/1" "$(lines sall.jsonl) $(cat e.txt)"
fi
"$KFORGE" tune sp.json --strategy random --budget 20 --seed 4 --results q.jsonl --no-db > /dev/null 2>&1
"$KFORGE" tune sp.json --strategy random --budget 20 --seed 4 --shard 1/2 --results q1.jsonl --no-db > /dev/null 2>&1
"$KFORGE" tune sp.json --strategy random --budget 20 --seed 4 --shard 2/2 --results q2.jsonl --no-db > /dev/null 2>&1
if [ "$(lines q1.jsonl)" -eq 10 ] && [ "$(lines q2.jsonl)" -eq 10 ] &&
   [ "$(cat q1.jsonl q2.jsonl > q12.jsonl; cases q12.jsonl)" = "$(cases q.jsonl)" ]; then
  ok "random search, budget 20, in two shards: 10 + 10, the unsharded search's candidates"
else
  bad "random shards" "$(lines q1.jsonl) + $(lines q2.jsonl) vs $(lines q.jsonl)"
fi
"$KFORGE" tune sp.json --strategy genetic --shard 1/2 --results x.jsonl > /dev/null 2> e.txt
rc=$?
if [ $rc -eq 2 ] && grep -q 'exhaustive and random searches only' e.txt && [ "$(lines x.jsonl)" -eq 0 ]; then
  ok "a guided search refuses --shard (exit 2) and suggests --devices"
else
  bad "genetic --shard" "rc=$rc $(cat e.txt)"
fi
for k in 1 2 3; do
  "$KFORGE" run r.json --shard $k/3 --results rs$k.jsonl --format csv > /dev/null 2> e$k.txt
done
if [ "$(lines rs1.jsonl)" -eq 5 ] && [ "$(lines rs2.jsonl)" -eq 5 ] && [ "$(lines rs3.jsonl)" -eq 5 ] &&
   [ "$(cat rs1.jsonl rs2.jsonl rs3.jsonl > rs.jsonl; cases rs.jsonl)" = "$(cases r1.jsonl)" ] &&
   grep -q -- '--shard 2/3: 5 of 15 cases' e2.txt; then
  ok "run --shard K/3: three slices of 5, together every case"
else
  bad "run shards" "$(lines rs1.jsonl) $(lines rs2.jsonl) $(lines rs3.jsonl) $(cat e2.txt)"
fi
"$KFORGE" merge rs1.jsonl rs2.jsonl rs3.jsonl rs2.jsonl --no-db > mr.txt 2> e.txt
rc=$?
if [ $rc -eq 0 ] && grep -q '15 cases; 5 recorded more than once kept once; 0 conflicts' e.txt && grep -q '^best: ' mr.txt; then
  ok "merge of run shards (one given twice): 15 cases, duplicates kept once, a best"
else
  bad "merge of run shards" "rc=$rc $(cat e.txt mr.txt | head -5)"
fi
sed '1s/"status":"ok"/"status":"wrong"/' rs1.jsonl > bad1.jsonl
"$KFORGE" merge rs1.jsonl bad1.jsonl rs2.jsonl rs3.jsonl --no-db --results mc.jsonl > /dev/null 2> e.txt
if grep -q 'conflict: .*ok in rs1.jsonl (line 1), wrong in bad1.jsonl (line 1); keeping the wrong' e.txt &&
   [ "$(grep -c '"status":"wrong"' mc.jsonl)" -eq 1 ] && [ "$(lines mc.jsonl)" -eq 15 ]; then
  ok "merge reports a conflict (ok and wrong) and keeps the failure"
else
  bad "merge conflict" "$(cat e.txt)"
fi
"$KFORGE" merge > /dev/null 2> e.txt
rc1=$?
"$KFORGE" merge missing.jsonl > /dev/null 2>> e.txt
rc2=$?
if [ $rc1 -eq 2 ] && [ $rc2 -eq 2 ] && grep -q 'missing.jsonl' e.txt; then
  ok "merge without files, or of a missing file: exit 2"
else
  bad "merge usage" "rc=$rc1/$rc2 $(cat e.txt)"
fi

# --- 5. a custom kernel: several devices and shards as for the built-in families
# (configs/custom: transpose over two width x height shapes, vector_add)
TR="$ROOT/configs/custom/transpose.json"
VA="$ROOT/configs/custom/vector_add.json"
SHAPES="--set width=[256,1024] --set height=512"
# a custom kernel's cases: label, every parameter and size, status; sorted
ccases() { grep -o '"label":"[^"]*".*"status":"[a-z_]*"' "$1" | sed 's/"kernel":"[^"]*",//' | sort; }
# shellcheck disable=SC2086
"$KFORGE" run "$TR" $SHAPES --set tile_dim=32 --device 0 --results c0.jsonl --format csv > /dev/null 2> e0.txt
rc0=$?
# shellcheck disable=SC2086
"$KFORGE" run "$TR" $SHAPES --set tile_dim=32 --devices all --results c1.jsonl --format csv > /dev/null 2> e1.txt
rc1=$?
nc=$(lines c0.jsonl)
if [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && [ "$nc" -gt 50 ] && [ "$(lines c1.jsonl)" -eq "$nc" ] &&
   [ "$(ccases c1.jsonl | uniq | wc -l)" -eq "$nc" ] && [ "$(ccases c0.jsonl)" = "$(ccases c1.jsonl)" ] &&
   grep -q '"device_index":0' c1.jsonl && grep -q '"device_index":1' c1.jsonl &&
   [ "$(grep -c '"status":"ok"' c1.jsonl)" -eq "$nc" ]; then
  ok "custom kernel (transpose, 2 shapes): run --devices all measures the $nc cases of one device once each, on both"
else
  bad "custom run --devices" "rc=$rc0/$rc1 $nc vs $(lines c1.jsonl) $(head -3 e1.txt)"
fi
CS="$SHAPES --strategy random --budget 30 --seed 4"
# shellcheck disable=SC2086
"$KFORGE" tune --abandon-above 0 "$TR" $CS --device 0 --results ct0.jsonl --db cdb0 --format jsonl > cs0.jsonl 2> e0.txt
rc0=$?
# shellcheck disable=SC2086
"$KFORGE" tune --abandon-above 0 "$TR" $CS --devices all --results ct1.jsonl --db cdb1 --format jsonl > cs1.jsonl 2> e1.txt
rc1=$?
if [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && [ "$(lines ct0.jsonl)" -eq 60 ] && [ -n "$(best cs0.jsonl)" ] &&
   [ "$(ccases ct0.jsonl)" = "$(ccases ct1.jsonl)" ] && [ "$(best cs0.jsonl)" = "$(best cs1.jsonl)" ] &&
   grep -q '"device_index":1' ct1.jsonl && [ "$(dbnorm cdb0)" = "$(dbnorm cdb1)" ]; then
  ok "custom kernel: tune on two devices, the candidates, best and database entries of one ($(best cs0.jsonl))"
else
  bad "custom tune --devices" "rc=$rc0/$rc1 $(lines ct0.jsonl) '$(best cs0.jsonl)' vs '$(best cs1.jsonl)' $(head -3 e1.txt)"
fi
rcs=0
for k in 1 2; do
  # shellcheck disable=SC2086
  "$KFORGE" tune --abandon-above 0 "$TR" $CS --shard $k/2 --device 0 --results cth$k.jsonl --no-db -q > /dev/null 2> e$k.txt || rcs=$?
done
cat cth1.jsonl cth2.jsonl > cth.jsonl
if [ $rcs -eq 0 ] && [ "$(lines cth1.jsonl)" -eq 30 ] && [ "$(lines cth2.jsonl)" -eq 30 ] &&
   [ -z "$(ccases cth1.jsonl | comm -12 - "$(ccases cth2.jsonl > cth2.cases; echo cth2.cases)")" ] &&
   [ "$(ccases cth.jsonl)" = "$(ccases ct0.jsonl)" ]; then
  ok "custom kernel: tune --shard 1/2 and 2/2: 15 + 15 candidates at 2 shapes, disjoint, together the unsharded tune's"
else
  bad "custom shards" "rc=$rcs $(lines cth1.jsonl) + $(lines cth2.jsonl) $(head -3 e2.txt)"
fi
"$KFORGE" merge cth1.jsonl cth2.jsonl --kernel "$TR" --results cmerged.jsonl --db cmdb --format jsonl > cms.jsonl 2> em.txt
rc=$?
if [ $rc -eq 0 ] && [ "$(best cms.jsonl)" = "$(best cs0.jsonl)" ] && [ "$(ccases cmerged.jsonl)" = "$(ccases ct0.jsonl)" ] &&
   [ -n "$(dbnorm cmdb 2> /dev/null)" ] && [ "$(dbnorm cmdb)" = "$(dbnorm cdb0)" ]; then
  ok "custom kernel: kforge merge --kernel of the shards: the unsharded tune's cases, best and database entries"
else
  bad "custom merge" "rc=$rc '$(best cms.jsonl)' vs '$(best cs0.jsonl)' $(dbnorm cmdb 2>&1 | diff - "$(dbnorm cdb0 > c0.norm 2>&1; echo c0.norm)" | head -8) $(cat em.txt)"
fi
# without --kernel the lines' family is unknown: merge and compare say which, and how to read them
"$KFORGE" merge cth1.jsonl cth2.jsonl --no-db > /dev/null 2> em.txt
rc=$?
"$KFORGE" compare cth1.jsonl cth2.jsonl > /dev/null 2> ec.txt
if [ $rc -eq 2 ] &&
   grep -q 'cth2.jsonl: 30 lines of the kernel "transpose", which no config given here describes: .*--kernel CONFIG' em.txt &&
   grep -q 'cth1.jsonl: 30 lines of the kernel "transpose", which no config given here describes, skipped: .*--kernel CONFIG' ec.txt &&
   ! grep -q 'not results' ec.txt; then
  ok "custom kernel: merge and compare without --kernel name the kernel of the lines they cannot read, and --kernel CONFIG"
else
  bad "custom merge without --kernel" "rc=$rc $(cat em.txt ec.txt)"
fi
# exhaustive: every candidate of vector_add once, in three shards
"$KFORGE" tune --abandon-above 0 "$VA" --set 'n=[4096,100000]' --device 0 --between 0 --results cv.jsonl --db cvdb -q \
  > /dev/null 2> e0.txt
rcs=$?
for k in 1 2 3; do
  "$KFORGE" tune --abandon-above 0 "$VA" --set 'n=[4096,100000]' --shard $k/3 --devices all --results cv$k.jsonl --no-db -q \
    > /dev/null 2> e$k.txt || rcs=$?
done
"$KFORGE" merge cv1.jsonl cv2.jsonl cv3.jsonl --kernel "$VA" --db cvmdb -q > /dev/null 2> em.txt || rcs=$?
if [ $rcs -eq 0 ] && [ "$(lines cv.jsonl)" -eq 40 ] &&
   [ "$(cat cv1.jsonl cv2.jsonl cv3.jsonl > cv123.jsonl; ccases cv123.jsonl)" = "$(ccases cv.jsonl)" ] &&
   [ -n "$(dbnorm cvdb 2> /dev/null)" ] && [ "$(dbnorm cvdb)" = "$(dbnorm cvmdb)" ]; then
  ok "custom kernel: vector_add exhaustive in 3 shards on 2 devices, merged: the 20 candidates and database entries of one tune"
else
  bad "custom exhaustive shards" "rc=$rcs $(lines cv.jsonl) $(cat e1.txt e2.txt e3.txt em.txt | head -5)"
fi

echo "multi_suite: $npass passed, $nfail failed"
[ $nfail -eq 0 ]
