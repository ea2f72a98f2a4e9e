#!/bin/sh
# tests/real_target_suite.sh -- tools/real_target.sh (issue 36's real target)
# without a GPU:
#   - real_target.py on made-up results files: best/optimum at the worst size,
#     the same configuration timed in the exhaustive run, "within 1%" counted
#     per seed (a seed 3% off is caught, an abandoned or failed line is no
#     optimum, a size the default never measured fails it);
#   - the tool end to end on the fake GPU over 2 candidates of
#     configs/custom/convolution.json: the default search and the exhaustive,
#     each cold, the in-order comparison (--compare-order), the summary line;
#     Kernel Tuner's space left out, saying so, without --kt.
#
#   [KFORGE=build/kforge] sh tests/real_target_suite.sh
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KFORGE=${KFORGE:-$ROOT/build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
PY=${PYTHON:-python3}
if ! command -v "$PY" > /dev/null 2>&1; then
  echo "SKIP real_target_suite: no python3"
  echo "real_target_suite: 0 passed, 0 failed, 1 skipped"
  exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-real.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "real_target_suite: files kept in $TMP"; fi' EXIT
export LC_ALL=C KFORGE_FAKE_GPU=1 HOME="$TMP"
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAULT_INJECT KFORGE_IN_ORDER KFORGE_COMPILE_DELAY_MS
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }

# line LABEL N STATUS MEDIAN: a results line at size n=N
line() { printf '{"label":"%s","sizes":["n"],"n":%s,"status":"%s","median_ms":%s}\n' "$1" "$2" "$3" "$4"; }
{
  line a 1024 ok 1.00; line b 1024 ok 1.005; line c 1024 ok 1.03; line d 1024 abandoned 0.5
  line e 1024 compile_error 0.1
  line a 4096 ok 2.00; line b 4096 ok 2.01; line c 4096 ok 2.00
} > "$TMP/exh.jsonl"
{ line b 1024 ok 1.004; line b 4096 ok 2.008; line e 1024 compile_error 0.1; } > "$TMP/s1.jsonl"   # within 1%
printf 'start 100.0\n100.5 0\n101.0 1\n101.5 3\n' > "$TMP/s1.times"   # its lines' arrival: the 2nd by 101.5
{ line c 1024 ok 1.031; line c 4096 ok 1.998; } > "$TMP/s2.jsonl"   # 3% off at 1024: caught
{ line a 1024 ok 1.0; } > "$TMP/s3.jsonl"                           # 4096 never measured
out=$("$PY" "$ROOT/tools/real_target.py" t "$TMP/exh.jsonl" 30.0 "$TMP/s1.jsonl:15.2:1" "$TMP/s2.jsonl:15.1:2" \
      "$TMP/s3.jsonl:15.3:3" --time 15 2>&1)
sum=$(printf '%s\n' "$out" | grep '^real t:')
case $sum in
  "real t: 5 candidates, exhaustive 30.0 s (2 sizes, best 1 ms at 1024 to 2 ms at 4096); default --time 15, seeds 1,2,3: best/optimum 1.004 1.031 none (worst size), wall 15.2 15.1 15.3 s; within 1%: 1 of 3, after 1.5 - - s")
    ok "the summary line: worst size per seed (1.004, a seed 3% off, a size missed), 1 of 3 within 1%, the time it got there" ;;
  *) bad "summary line" "$out" ;;
esac
s1=$(printf '%s\n' "$out" | grep '^  t seed 1:')
case $s1 in
  *"2 candidates measured in 15.2 s; best/optimum 1.004 (worst of 2 sizes, geometric mean 1.004); its configuration in the exhaustive run: 1.005 (worst size); within 1%: yes (after 1.5 s)")
    ok "per seed: best/optimum, geometric mean, the same configuration in the exhaustive run" ;;
  *) bad "seed line" "$s1" ;;
esac
if printf '%s\n' "$out" | grep -q '^  t seed 3: .*no result at 4096.*within 1%: no'; then
  ok "a size the default search never measured fails the seed"
else
  bad "missing size" "$out"
fi

# end to end on the fake GPU: 2 candidates of the 3312-candidate convolution
cd "$ROOT" || exit 2
sets="--set conv3312:width=[256] --set conv3312:height=[256] --set conv3312:block_size_x=[32]
      --set conv3312:block_size_y=[4] --set conv3312:tile_size_x=[1,2] --set conv3312:tile_size_y=[1]
      --set conv3312:use_padding=[0] --set conv3312:read_only=[0] --set conv3312:contiguous_x=[0]"
# shellcheck disable=SC2086 # sets is a list of options
KFORGE="$KFORGE" sh tools/real_target.sh --only ktconv,conv3312 --quick --time 60 --compare-order conv3312 -j 2 \
  --dir "$TMP/rt" $sets > "$TMP/rt.txt" 2>&1
rc=$?
L="$TMP/rt/lines.txt"
if [ $rc = 0 ] && grep -q '^real conv3312: 2 candidates, exhaustive [0-9.]* s (best [0-9.e-]* ms); default --time 60, seed 1: best/optimum 1.000, wall [0-9.]* s; within 1%: 1 of 1, after [0-9.]* s$' "$L" &&
   grep -q '^  conv3312 in order (KFORGE_IN_ORDER=1, as before), seed 1: 2 candidates measured' "$L" &&
   grep -q "^real ktconv: left out: no --kt DIR" "$L" && grep -q '^real target: .*fake-gpu' "$L" &&
   [ "$(grep -c '(cold): exit [01],' "$TMP/rt/commands.txt")" = 3 ] && ! ls -d "$TMP"/rt/cache-* > /dev/null 2>&1; then
  ok "the tool on the fake GPU: default, in order and exhaustive, each cold, and the summary line"
else
  bad "tool end to end" "exit $rc: $(tail -8 "$TMP/rt.txt")"
fi
# bad input: a --set of an unknown space, seeds not numbers
if ! sh tools/real_target.sh --set nope:x=1 > "$TMP/b1.txt" 2>&1 && grep -q 'expected NAME:KEY=VALUE' "$TMP/b1.txt" &&
   ! sh tools/real_target.sh --seeds "1 x" > "$TMP/b2.txt" 2>&1 && grep -q 'expected numbers' "$TMP/b2.txt"; then
  ok "bad options refused with a message"
else
  bad "bad options" "$(cat "$TMP/b1.txt" "$TMP/b2.txt")"
fi

echo "real_target_suite: $npass passed, $nfail failed"
[ $nfail = 0 ]
