#!/bin/sh
# verify_suite.sh -- the verification's detection power, on the synthetic
# GPU (KFORGE_FAKE_GPU=1: it applies each planted fault to its results the
# way the planted kernel does; tests/gpu_suite.sh step 6 runs the same faults
# in real kernels).
#
#   KFORGE=build/kforge sh tests/verify_suite.sh
#
#   1. every planted coverage fault (KFORGE_PLANT=KIND@*) x every dtype
#      (bfloat16 and float16 too, with 16-byte loads of 8 elements) x
#      sum, min, max, prod, xor x n in 1, 2, 3, 31, 4097, 2^20+3, 2^24+1
#      over four structurally different reduce variants (tests/faults/
#      reduce.json), and every fault x every row map at shapes with rows or
#      cols of 1, odd cols and row_stride > cols (tests/faults/rows.json):
#      every case where the fault changes the exact answer is `wrong`; the
#      cases where it cannot (an idempotent op: min, max; float prod between
#      two -1 factors) or has no place (no vector tail, one block) are
#      listed, and none is a sum, xor or integer product (a float product
#      is -1 but for a few powers of two: moving an element between two -1
#      factors, or doubling a block whose product is +1, cannot be seen);
#   2. the same configs without a planted fault: every case ok;
#   3. float32 sum at 2^24+1 with the last element dropped: wrong on the
#      exact data, and the message says the rounding bound alone would have
#      passed it;
#   4. a tune where every vector_width 4 candidate (the fake's fastest)
#      drops an element: none of them is best, the database holds none, and
#      the summary counts them failed;
#   5. bfloat16 and float16 results rounded to the input type (acc_dtype
#      input) at aligned sizes of whole tiles: a doubled or dropped block is
#      caught (data mirrored about the middle once hid the middle block).
# Three groups of these run at once (1 and 3 for reduce, 1 and 5 for rows, 2 and 4).
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
ROOT=$(pwd)
if [ -n "${KFORGE_TEST_OUT:-}" ]; then
  OUT=$KFORGE_TEST_OUT; own_out=0
else
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/kforge-verify-suite.XXXXXX") || exit 2; own_out=1
fi
keep_out=0
trap 'if [ $own_out = 1 ] && [ $keep_out = 0 ]; then rm -rf "$OUT"; fi' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$OUT"
cd "$OUT" || exit 1
export KFORGE_FAKE_GPU=1
# make check gives the suites that do not test the cache one cubin cache (KFORGE_TEST_CACHE)
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$OUT/cache}"
export KFORGE_DB="$OUT/db"
unset KFORGE_FAULT_INJECT KFORGE_PLANT
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "PASS: $1"; }
bad() { fail=$((fail+1)); echo "FAIL: $1"; }

if [ ! -x "$KFORGE" ]; then
  echo "FAIL: $KFORGE not built"; exit 1
fi
if ! "$KFORGE" --version | grep -q NVRTC; then
  echo "SKIP: verify suite: NVRTC is not usable here"
  echo "verify suite: 0 passed, 0 failed, 1 skipped"
  exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: verify suite: python3 is needed to read the results"
  echo "verify suite: 0 passed, 0 failed, 1 skipped"
  exit 0
fi

# tally FILE FAULT: tests/faults/tally.py (one line of counts, every miss)
tally() { python3 "$ROOT/tests/faults/tally.py" "$1" "$2"; }

# The steps run as three groups at once (reduce: 1 and 3; rows: 1; 2 and 4),
# which share no results file and no source to compile; each writes its
# PASS and FAIL lines to a file of its own, printed in that order at the end.

# 1. planted faults: faults FAMILY KIND...
faults() {
  fam=$1; shift
  for k in "$@"; do
    KFORGE_PLANT="$k@*" "$KFORGE" run "$ROOT/tests/faults/$fam.json" --results "$fam-$k.jsonl" --quiet \
      > "$fam-$k.out" 2> "$fam-$k.err"
    rc=$?
    err="$OUT/$fam-$k.err"
    if [ $fam = reduce ] && [ $rc = 1 ]; then
      # and at 2^24+1, from the one run of every fault (group_reduce)
      grep "\"planted\":\"$k\"" big.jsonl >> "$fam-$k.jsonl"
      rc=$big_rc err="$OUT/big.err"
    fi
    if [ $rc = 1 ] && tally "$fam-$k.jsonl" "$k"; then
      ok "$fam: planted $k caught wherever it changes the answer"
    else
      bad "$fam: planted $k (exit $rc; see $err)"
    fi
  done
}

REDUCE_FAULTS="drop_first drop_last drop_tail drop_block shift double_block"
group_reduce() {
  # 2^24+1 (every dtype and op) with two of the variants, every fault in one
  # run per dtype: their inputs and references, made once for every fault,
  # cost the most here, and one dtype's inputs (at most 0.8 GB) fit the
  # fake GPU's data (1 GiB) where every dtype's (2.9 GB) did not: the
  # inputs it dropped were made again for every variant.  Variant NAME's
  # copy for fault KIND is NAME.KIND, and only KIND is planted in it.
  # shellcheck disable=SC2086
  python3 - "$ROOT/tests/faults/reduce.json" $REDUCE_FAULTS > big.json 3> big.plant 4> big.dtypes <<'PY'
import json, os, sys
c = json.load(open(sys.argv[1]))
os.write(4, " ".join(c["defaults"]["dtype"]).encode())
two = [v for v in c["variants"] if v["name"] in ("v4_last_block", "v2_multi_grid")]
c["variants"] = [dict(v, name=v["name"] + "." + k) for k in sys.argv[2:] for v in two]
c["defaults"]["n"] = 16777217
json.dump(c, sys.stdout)
plant = ",".join(k + "@" + v["name"] for v in c["variants"] for k in [v["name"].split(".")[1]])
os.write(3, plant.encode())
PY
  big_rc=1
  for t in $(cat big.dtypes); do
    KFORGE_PLANT=$(cat big.plant) "$KFORGE" run big.json --set dtype=$t --results big.jsonl --quiet \
      >> big.out 2>> big.err
    rc=$?
    [ $rc = 1 ] || big_rc=$rc
  done
  faults reduce $REDUCE_FAULTS

  # 3. the rounding bound would have passed it; the exact check does not
  line=$(grep '"name":"v4_last_block.drop_last"' reduce-drop_last.jsonl | grep '"dtype":"float32"' | grep '"op":"sum"' |
         grep '"n":16777217')
  case $line in
    *'"status":"wrong"'*'the bound alone would have passed it'*'"acc_err":'*'"acc_bound":'*)
      ok "float32 sum at 2^24+1 minus one element: wrong on the exact data, within the rounding bound on the realistic" ;;
    *) bad "float32 sum at 2^24+1, last element dropped: $line" ;;
  esac
}

group_rows() {
  faults rows drop_first drop_last drop_tail drop_block shift skip_col row_shift

  # 5. results rounded to the 2-byte input (acc_dtype input), aligned input
  #    of 3, 3 and 5 tiles: no block's sum is 0 by construction (a mirror
  #    of the input about its middle made the middle tile's sum 0, and a
  #    doubled middle block went unseen)
  for k in double_block drop_block; do
    KFORGE_PLANT="$k@*" "$KFORGE" run "$ROOT/tests/faults/reduce.json" --only v8_accin_3tiles --set bench.offset=0 \
      --results "tiles-$k.jsonl" --quiet > /dev/null 2> "tiles-$k.err"
    rc=$?
    if [ $rc = 1 ] && tally "tiles-$k.jsonl" "$k"; then
      ok "acc_dtype input, aligned whole tiles: planted $k caught wherever it changes the answer"
    else
      bad "acc_dtype input, aligned whole tiles: planted $k (exit $rc; see $OUT/tiles-$k.err)"
    fi
  done
}

group_clean_tune() {
  # 2. no fault planted: every case right
  for fam in reduce rows; do
    "$KFORGE" run "$ROOT/tests/faults/$fam.json" --results "$fam-clean.jsonl" --quiet > /dev/null 2> "$fam-clean.err"
    rc=$?
    if [ $rc = 0 ] && ! grep -q '"status":"wrong"' "$fam-clean.jsonl" && ! grep -q '"planted"' "$fam-clean.jsonl"; then
      ok "$fam: every correct variant passes the exact check"
    else
      bad "$fam: correct variants failed (exit $rc)"
    fi
  done

  # 4. a tune never ranks a wrong kernel
  KFORGE_PLANT="drop_last@vector_width=4" "$KFORGE" tune "$ROOT/configs/tune-reduce.json" --set n=4097 \
    --strategy random --budget 120 --seed 5 --results tune.jsonl > tune.out 2> tune.err
  rc=$?
  failed=$(sed -n 's/.*failed candidates: \([0-9]*\).*/\1/p' tune.out)
  v4=$(grep -c '"vector_width":4' tune.jsonl)
  if [ $rc = 0 ] && grep -q '^best: ' tune.out && ! grep '^best: ' tune.out | grep -q '/v4/' &&
     ! grep -q '"vector_width": *4' db/*.json && [ "$v4" -gt 0 ] && [ "${failed:-0}" = "$v4" ]; then
    ok "tune: the $v4 planted candidates are counted failed and never best"
  else
    bad "tune with planted candidates (exit $rc, failed ${failed:-?} of $v4 planted)"
  fi
}

group_reduce > group-1-reduce.txt 2>&1 &
g1=$!
group_rows > group-2-rows.txt 2>&1 &
g2=$!
group_clean_tune > group-3-clean-tune.txt 2>&1
wait $g1
wait $g2
cat group-1-reduce.txt group-2-rows.txt group-3-clean-tune.txt
pass=$(cat group-*.txt | grep -c '^PASS:')
fail=$(cat group-*.txt | grep -c '^FAIL:')
[ $((pass + fail)) -eq 19 ] || bad "the three groups reported $((pass + fail)) of the 19 checks"
[ $fail = 0 ] || keep_out=1

echo "verify suite: $pass passed, $fail failed"
[ $fail = 0 ]
