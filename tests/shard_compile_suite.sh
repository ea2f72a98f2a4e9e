#!/bin/sh
# tests/shard_compile_suite.sh -- compiling where the CPUs are (issue 38):
# kforge check --compile --shard K/N fills a cubin cache without a GPU, and a
# tune on the (fake) GPU then measures from it, compiling nothing.
#
#   KFORGE=build/kforge sh tests/shard_compile_suite.sh
#
#   1. --shard K/N and the Slurm array variables: the shards' variants are
#      disjoint and together all of them; usage errors;
#   2. several writers at once into one cache directory (overlapping shards,
#      as jobs on several nodes of a shared file system), while a reader
#      looks: every .cubin it sees is whole; no temporary file is left;
#   3. a tune from that cache compiles nothing ("cubins: 0 compiled now"),
#      and finds what a tune with a cache of its own finds.
# Prints PASS/FAIL lines and "shard_compile_suite: N passed, N failed"; exits
# 1 if a check failed.
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-shardc.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "shard_compile_suite: files kept in $TMP"; fi' EXIT
trap 'exit 130' INT TERM HUP
# this suite tests the cache: one of its own, never KFORGE_TEST_CACHE
export KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C HOME="$TMP"
unset KFORGE_CACHE_DIR KFORGE_FAULT_INJECT KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MIXED KFORGE_FAKE_GPU_MS
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX
cd "$TMP" || exit 2
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }
# the variants a check --compile compiled (labels), sorted
compiled() { sed 's/  (cached)$//' "$1" | awk '$1 == "compiled" { print $NF }' | sort; }
# a tuning database without its dates
nodate() { grep -v '"date":' "$1"; }

if [ ! -x "$KFORGE" ]; then
  echo "FAIL: $KFORGE not built"; exit 1
fi
if ! "$KFORGE" --version | grep -q NVRTC; then
  echo "SKIP: shard_compile suite: NVRTC is not usable here"
  echo "shard_compile_suite: 0 passed, 0 failed"
  exit 0
fi

# 12 variants, 2 sizes
cat > sp.json <<'J'
{"kernel": "reduce", "defaults": {"dtype": "float32", "op": "sum", "n": [100000, "2^22"]},
 "bench": {"warmup": 1, "min_reps": 10, "max_time_s": 0.005},
 "variants": [{"algorithm": "shuffle", "unroll": "full", "block_size": [128, 256, 512],
               "elements_per_thread": [1, 4], "passes": ["multi_kernel", "last_block"]}]}
J
NVAR=12

# --- 1. shards --------------------------------------------------------------
"$KFORGE" check sp.json > all.txt 2>&1
nall=$(grep -c '^  -  *shuffle/' all.txt)
"$KFORGE" check --compile --shard 1/3 --cache-dir c1 sp.json > s1.txt 2> s1.err
r1=$?
SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_MAX=5 \
  "$KFORGE" check --compile --cache-dir c1 sp.json > s2.txt 2> s2.err
r2=$?
"$KFORGE" check --compile --shard=3/3 --cache-dir c1 sp.json > s3.txt 2> s3.err
r3=$?
n1=$(compiled s1.txt | wc -l) n2=$(compiled s2.txt | wc -l) n3=$(compiled s3.txt | wc -l)
if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ $r3 -eq 0 ] && [ "$nall" -eq $NVAR ] && [ "$n1" -eq 4 ] && [ "$n2" -eq 4 ] &&
   [ "$n3" -eq 4 ] && [ "$(cat s1.txt s2.txt s3.txt | compiled /dev/stdin | uniq | wc -l)" -eq $NVAR ] &&
   grep -q 'shard 2/3' s2.err && grep -q 'Slurm job array task 2 of 3' s2.err &&
   grep -q -- '--shard 1/3: 4 variants compiled now, 0 from the cubin cache, 0 failed' s1.err; then
  ok "--shard 1/3, the Slurm array's task 2 of 3, --shard=3/3: 4 variants each, disjoint, all $NVAR together"
else
  bad "shards" "rc=$r1/$r2/$r3 nall=$nall n=$n1/$n2/$n3 $(cat s1.err s2.err s3.err | head -5)"
fi
# the shard lists only its own variants
if [ "$(grep -c '^  -  *shuffle/' s1.txt)" -eq 4 ]; then
  ok "check --compile --shard lists only the shard's variants"
else
  bad "shard listing" "$(head -8 s1.txt)"
fi
"$KFORGE" check --compile --shard 1/3 --cache-dir c1 sp.json > again.txt 2> again.err
if [ $? -eq 0 ] && [ "$(grep -c '(cached)' again.txt)" -eq 4 ] &&
   grep -q '0 variants compiled now, 4 from the cubin cache' again.err; then
  ok "a shard compiled again comes from the cache"
else
  bad "shard again" "$(cat again.err)"
fi
"$KFORGE" check --shard 1/2 sp.json > u1.txt 2> u1.err
r=$?
"$KFORGE" check --compile --shard 3/2 sp.json > u2.txt 2> u2.err
r2=$?
SLURM_ARRAY_TASK_ID=x SLURM_ARRAY_TASK_COUNT=2 "$KFORGE" check --compile sp.json > u3.txt 2> u3.err
r3=$?
if [ $r -eq 2 ] && grep -q -- '--shard goes with --compile' u1.err && [ $r2 -eq 2 ] &&
   grep -q -- '--shard: expected K/N' u2.err && [ $r3 -eq 2 ] && grep -q 'not a number' u3.err; then
  ok "usage errors: --shard without --compile, --shard 3/2, a bad SLURM_ARRAY_TASK_ID (exit 2)"
else
  bad "usage errors" "rc=$r/$r2/$r3 $(cat u1.err u2.err u3.err)"
fi
# a shard's slice in an array of one task is everything
SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=1 "$KFORGE" check --compile --cache-dir c1 sp.json > one.txt 2> one.err
if [ $? -eq 0 ] && [ "$(compiled one.txt | wc -l)" -eq $NVAR ]; then
  ok "an array of one task compiles every variant"
else
  bad "array of one" "$(cat one.err)"
fi

# --- 2. several writers at once -------------------------------------------
# Three writers (shards 1/2 and 2/2 and the whole space: every variant is
# written by two of them) into one directory, each with 2 compiler processes,
# while a reader checks every entry it sees: a .key's first line gives its
# cubin's length, and the .cubin beside it has exactly that length (NVRTC's
# output is the same for the same source); a .cubin without its .key yet is
# an ELF file, never empty.
mkdir cw
: > reader.bad
touch writing
(
  while [ -f writing ]; do
    for k in cw/*.key; do
      [ -f "$k" ] || continue
      read -r word len hash < "$k" || continue
      c=${k%.key}.cubin
      size=$(stat -c %s "$c" 2>/dev/null || echo missing)
      [ "$word" = cubin ] && [ "$size" = "$len" ] || echo "$k: header '$word $len', cubin $size bytes" >> reader.bad
    done
    for c in cw/*.cubin; do
      [ -f "$c" ] || continue
      magic=$(head -c 4 "$c" 2>/dev/null | od -An -c | tr -d ' ')
      [ "$magic" = '177ELF' ] || echo "$c: starts with '$magic'" >> reader.bad
    done
  done
) &
reader=$!
"$KFORGE" check --compile --shard 1/2 -j 2 --cache-dir cw sp.json > w1.txt 2> w1.err &
p1=$!
"$KFORGE" check --compile --shard 2/2 -j 2 --cache-dir cw sp.json > w2.txt 2> w2.err &
p2=$!
"$KFORGE" check --compile -j 2 --cache-dir cw sp.json > w3.txt 2> w3.err &
p3=$!
wait $p1; r1=$?
wait $p2; r2=$?
wait $p3; r3=$?
rm -f writing
wait $reader
nkey=$(ls cw | grep -c '\.key$') ncubin=$(ls cw | grep -c '\.cubin$') nother=$(ls -A cw | grep -vc '\.\(key\|cubin\)$')
# (and the output check's module, which the GPU workers would compile otherwise)
if [ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ $r3 -eq 0 ] && [ "$nkey" -eq $((NVAR + 1)) ] && [ "$ncubin" -eq $((NVAR + 1)) ] &&
   [ "$nother" -eq 0 ] && [ ! -s reader.bad ]; then
  ok "three writers at once into one cache (overlapping shards): $NVAR entries and the output check, whole to a reader, no temporary file left"
else
  bad "writers at once" "rc=$r1/$r2/$r3 keys=$nkey cubins=$ncubin other=$nother $(head -3 reader.bad) $(ls -A cw | grep -v '\.\(key\|cubin\)$' | head -3) $(cat w1.err w2.err w3.err | head -5)"
fi

# --- 3. the tune measures from the cache ----------------------------------
# (--between 0: the databases of the two tunes are compared, and a pass between names its results file)
"$KFORGE" tune sp.json --strategy exhaustive --between 0 --cache-dir cw --results t1.jsonl --db db1 > t1.txt 2> t1.err
r1=$?
"$KFORGE" tune sp.json --strategy exhaustive --between 0 --cache-dir own --results t2.jsonl --db db2 > t2.txt 2> t2.err
r2=$?
b1=$(grep '^best:' t1.txt) b2=$(grep '^best:' t2.txt)
if [ $r1 -eq 0 ] && grep -q "cubins: 0 compiled now, $NVAR from the cubin cache" t1.txt &&
   [ "$(grep -c '"cached":true' t1.jsonl)" -eq "$(grep -c . t1.jsonl)" ] && [ -n "$b1" ]; then
  ok "the tune on the fake GPU measures from the compile-only cache: 0 compiled, $NVAR cached, every case cached"
else
  bad "tune from the cache" "rc=$r1 $(grep cubins t1.txt) $(head -3 t1.err)"
fi
if [ $r2 -eq 0 ] && grep -q "cubins: $NVAR compiled now, 0 from the cubin cache" t2.txt && [ "$b1" = "$b2" ] &&
   [ "$(nodate db1/*.json)" = "$(nodate db2/*.json)" ]; then
  ok "a tune with a cache of its own compiles all $NVAR and finds the same best and database"
else
  bad "tune with its own cache" "rc=$r2 '$b1' '$b2' $(grep cubins t2.txt)"
fi
"$KFORGE" tune sp.json --strategy exhaustive --cache-dir cw --no-resume --results t3.jsonl --db db3 --format jsonl \
  > t3.jsonl.out 2> t3.err
if grep -q "\"cubins\": {\"compiled\": 0, \"cached\": $NVAR}" t3.jsonl.out; then
  ok "tune --format jsonl's summary counts the cubins"
else
  bad "jsonl cubins" "$(grep summary t3.jsonl.out | head -c 400)"
fi

echo "shard_compile_suite: $npass passed, $nfail failed"
[ $nfail -eq 0 ]
