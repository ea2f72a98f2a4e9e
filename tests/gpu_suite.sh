#!/bin/sh
# gpu_suite.sh -- the GPU test suite.  Needs an NVIDIA GPU; elsewhere it
# prints a SKIP line and succeeds (CI has no GPU).
#
#   1. every seed variant, every dtype and op it supports, at odd and even sizes,
#      verified against the CPU reference (and a misaligned input pointer);
#   2. the single-pass and vectorised variants (configs/fast.json) the same way;
#   3. compute-sanitizer memcheck and racecheck on the seed variants;
#   4. a planted faulting kernel and a planted hanging kernel in a sweep: both
#      recorded as such, every other variant measured and recorded; SIGTERM to
#      the process group during the hang is an interruption (exit 130), not a fault.
#   5. a short tuning run whose best variant verifies;
#   6. planted coverage faults (KFORGE_PLANT) in real kernels, up to n =
#      2^31+5, 2^24+1 rows and 64 x 2^20: every one that changes the exact
#      answer caught; a tune never ranks a planted candidate.
#   7. the output check on the GPU (src/exec/outcheck.c) against the host's
#      (KFORGE_CHECK_ON_HOST=1): the same verdict, message and figures for
#      every case of a user's kernel with planted faults (tests/custom/noisy:
#      the reference's bits, within the tolerance, one element outside, a
#      NaN, an integer off by one, not the same bits twice) and of reduce
#      and row-wise variants, some with planted faults.
# GPU_STEPS="3 4 4b 5" runs only those steps (default: 1 2 2b 3 4 4b 5 6 7), and
# SANITIZER_TOOLS the compute-sanitizer tools of step 3 (default: memcheck
# racecheck): the whole suite takes about 10 minutes on an H100.
set -u
want() { case " ${GPU_STEPS:-1 2 2b 3 4 4b 5 6 7} " in *" $1 "*) return 0 ;; esac; return 1; }
KFORGE=${KFORGE:-build/kforge}
# Files go to $KFORGE_TEST_OUT (kept), else to a temporary directory that is
# removed when every test passed (or the suite was skipped) and kept (and
# named) when one failed.
if [ -n "${KFORGE_TEST_OUT:-}" ]; then
  OUT=$KFORGE_TEST_OUT; own_out=0
else
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/kforge-gpu-suite.XXXXXX") || exit 2; own_out=1
fi
keep_out=0
trap 'if [ $own_out = 1 ] && [ $keep_out = 0 ]; then rm -rf "$OUT"; fi' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$OUT"
pass=0; fail=0
ok()   { pass=$((pass+1)); echo "PASS: $1"; }
bad()  { fail=$((fail+1)); echo "FAIL: $1"; }

if ! why=$("$KFORGE" info 2>&1 >/dev/null); then
  echo "SKIP: GPU test suite: no usable GPU here ($(echo "$why" | head -n 1))"
  echo "GPU suite: 0 passed, 0 failed, 1 skipped"
  exit 0
fi
"$KFORGE" info

export KFORGE_CACHE_DIR="$OUT/cache"
quick='--set bench.repetitions=1 --set bench.warmup=0 --set bench.flush_l2=false --quiet'
all_types='--set dtype=["int32","uint32","int64","float32","float64"] --set op=["sum","min","max","prod","and","or","xor"]'
# atomic_global makes every thread hit one address; with compare-and-swap ops
# (float min/max, prod) that takes minutes at millions of elements.
small_atomic='constraints=algorithm!="atomic_global"||n<=65537'

# 1. seeds, all dtypes and ops, odd sizes
if want 1; then
if "$KFORGE" run configs/seeds.json $all_types --set "$small_atomic" --set 'n=[1,3,31,1000,65537,1000003,4194304]' $quick \
     --results "$OUT/seeds.jsonl" --no-resume --format csv > "$OUT/seeds.csv" 2> "$OUT/seeds.err"; then
  ok "seeds: every variant x dtype x op x size verified ($(($(wc -l < "$OUT/seeds.csv") - 1)) cases)"
else
  bad "seeds verification (exit $?): $(grep -v '^kforge: .*skipped' "$OUT/seeds.err" | head -n 5)"
fi

# misaligned input pointer (offset 1 and 3 elements)
for off in 1 3; do
  if "$KFORGE" run configs/seeds.json configs/fast.json --set 'n=[1,5,1000003]' --set bench.offset=$off $quick \
       --no-results --format csv > "$OUT/off$off.csv" 2> "$OUT/off$off.err"; then
    ok "misaligned input (offset $off elements)"
  else
    bad "misaligned input (offset $off): $(head -n 5 "$OUT/off$off.err")"
  fi
done
fi

# 2. fast variants, all dtypes and ops
if want 2; then
if "$KFORGE" run configs/fast.json configs/best-h100.json $all_types --set 'n=[1,3,1000,1000003,16777216]' $quick \
     --no-results --format csv > "$OUT/fast.csv" 2> "$OUT/fast.err"; then
  ok "fast and best-h100 variants: every dtype x op x size verified ($(($(wc -l < "$OUT/fast.csv") - 1)) cases)"
else
  bad "fast variants verification: $(grep -v 'skipped' "$OUT/fast.err" | head -n 5)"
fi
fi

# 2b. row-wise reductions: every mapping at stress shapes (rows or cols of 1,
# cols not a multiple of the vector width, padded rows, > 65535 and > 2^24
# rows, a misaligned base), every dtype, the ops that differ in kind
if want 2b; then
rows_types='--set dtype=["int32","int64","float32","float64"] --set op=["sum","min","xor"]'
if "$KFORGE" run configs/rows-stress.json $rows_types --set 'rows=[1,3]' --set 'cols=[1,7,4099]' $quick \
     --no-results --format csv > "$OUT/rows.csv" 2> "$OUT/rows.err" &&
   "$KFORGE" run configs/rows-stress.json --set 'dtype=["int32","float32"]' --set 'op=["sum","max"]' \
     --set 'rows=[70001]' --set 'cols=[1,3,7,33]' $quick --no-results --format csv > "$OUT/rows1.csv" 2>> "$OUT/rows.err" &&
   "$KFORGE" run configs/rows.json --set 'dtype=["int32","float32","float64"]' --set 'op=["sum","max"]' \
     --set bench.offset=3 $quick --no-results --format csv > "$OUT/rows2.csv" 2>> "$OUT/rows.err" &&
   "$KFORGE" run configs/rows-stress.json --set 'rows=[16777217]' --set 'cols=[1,3]' \
     $quick --no-results --format csv > "$OUT/rows3.csv" 2>> "$OUT/rows.err"; then
  ok "reduce_rows: every mapping x dtype x op at stress shapes, misaligned, > 2^24 rows verified ($(cat "$OUT"/rows*.csv | grep -c ',ok,') cases)"
else
  bad "reduce_rows verification: $(grep -v '^  ' "$OUT/rows.err" | head -n 5)"
fi
fi

# 3. compute-sanitizer
if want 3; then
if command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in ${SANITIZER_TOOLS:-memcheck racecheck}; do
    if compute-sanitizer --tool $tool --error-exitcode 99 --target-processes all \
         "$KFORGE" run configs/seeds.json configs/fast.json --set 'n=[100003]' $quick --no-results \
         --timeout 600 > "$OUT/$tool.log" 2>&1 &&
       compute-sanitizer --tool $tool --error-exitcode 99 --target-processes all \
         "$KFORGE" run configs/rows-stress.json --set 'rows=[3,1000]' --set 'cols=[33,4099]' $quick --no-results \
         --timeout 600 >> "$OUT/$tool.log" 2>&1; then
      if grep -q "ERROR SUMMARY: 0 errors" "$OUT/$tool.log" || ! grep -q "ERROR SUMMARY" "$OUT/$tool.log"; then
        ok "compute-sanitizer $tool clean on the seed, fast and row-wise variants"
      else
        bad "compute-sanitizer $tool: $(grep -m3 'ERROR SUMMARY\|Error' "$OUT/$tool.log")"
      fi
    else
      bad "compute-sanitizer $tool found errors: $(grep -m5 -i 'error\|race\|hazard' "$OUT/$tool.log")"
    fi
  done
else
  echo "SKIP: compute-sanitizer not found"
fi
fi

# 4. a planted fault and a planted hang among good variants
if want 4; then
rm -f "$OUT/plant.jsonl"   # results files are appended to; count this run only
KFORGE_PLANT="fault@reduce3,hang@reduce5" "$KFORGE" run configs/seeds.json --set 'n=[1000003]' $quick \
    --timeout 5 --results "$OUT/plant.jsonl" --no-resume --format csv > "$OUT/plant.csv" 2> "$OUT/plant.err"
rc=$?
nok=$(grep -c '"status":"ok"\|"status": "ok"' "$OUT/plant.jsonl")
nfault=$(grep -c '"status":"fault"\|"status": "fault"' "$OUT/plant.jsonl")
ntime=$(grep -c '"status":"timeout"\|"status": "timeout"' "$OUT/plant.jsonl")
total=$(grep -c . "$OUT/plant.jsonl")
if [ $rc -eq 1 ] && [ "$nfault" -eq 1 ] && [ "$ntime" -eq 1 ] && [ "$nok" -eq $((total - 2)) ] && [ "$total" -ge 10 ]; then
  ok "planted fault and hang: 1 fault, 1 timeout, $nok others measured, exit 1"
else
  bad "planted fault and hang: exit $rc, $nfault fault, $ntime timeout, $nok ok of $total"
fi
fi

# 4b. SIGTERM to the whole process group (timeout, systemd, Slurm) while a
# planted kernel hangs on the GPU: exit 130, the hanging case is not recorded
# (neither fault nor timeout), and running the same command again measures it.
if want 4b; then
rm -f "$OUT/term.jsonl" "$OUT/term.jsonl".*
setsid env KFORGE_PLANT=hang@reduce5 "$KFORGE" run configs/seeds.json --set 'n=[1000003]' --only reduce4,reduce5 \
    --timeout 20 --results "$OUT/term.jsonl" > /dev/null 2> "$OUT/term.err" &
tpid=$!
i=0
while [ $i -lt 300 ] && ! grep -q '"name":"reduce4"' "$OUT/term.jsonl" 2> /dev/null; do sleep 0.1; i=$((i+1)); done
sleep 2   # reduce5's kernel is spinning now
kill -s TERM -- "-$tpid"
wait $tpid; rc=$?
n1=$(grep -c . "$OUT/term.jsonl")
nbad=$(grep -c '"status":"\(fault\|timeout\)"' "$OUT/term.jsonl")
"$KFORGE" run configs/seeds.json --set 'n=[1000003]' --only reduce4,reduce5 --timeout 20 \
    --results "$OUT/term.jsonl" > /dev/null 2>> "$OUT/term.err"
rc2=$?
n5=$(grep -c '"name":"reduce5".*"status":"ok"' "$OUT/term.jsonl")
if [ $rc -eq 130 ] && [ "$n1" -eq 1 ] && [ "$nbad" -eq 0 ] && [ $rc2 -eq 0 ] && [ "$n5" -eq 1 ]; then
  ok "group SIGTERM during a hanging kernel: exit 130, nothing recorded for it, the rerun measures it"
else
  bad "group SIGTERM during a hanging kernel: exit $rc ($n1 lines, $nbad fault/timeout), rerun exit $rc2, reduce5 ok $n5 times"
fi
fi

# 5. a short real tuning run; its best variant, exported by kforge best, verifies
if want 5; then
if "$KFORGE" tune configs/tune-reduce.json --strategy local --budget 40 --seed 1 --quiet --db "$OUT/db" \
     --results "$OUT/tune.jsonl" --no-resume > "$OUT/tune.out" 2> "$OUT/tune.err" &&
   "$KFORGE" best --db "$OUT/db" --dtype float32 --op sum --n 16777216 > "$OUT/best.json" 2>> "$OUT/tune.err" &&
   "$KFORGE" run "$OUT/best.json" --set bench.repetitions=5 --quiet --no-results --format csv > "$OUT/best.csv" \
     2>> "$OUT/tune.err" && grep -q ',ok,' "$OUT/best.csv"; then
  ok "tune (local, 40 evaluations) -> kforge best -> kforge run: the best variant verifies"
else
  bad "tuning run: $(tail -n 5 "$OUT/tune.err")"
fi
fi

# 6. planted coverage faults in real kernels (tests/verify_suite.sh does the
# same on the fake GPU): every fault x dtype x op over tests/faults/*.json,
# and at n = 2^24+1, 2^30, 2^31+5 (float32 and int32 sums), 2^24+1 rows and
# 64 x 2^20: wherever the fault changes the exact answer the case is wrong.
# Then a tune where half the candidates (passes last_block) drop an element
# never picks one of them.
if want 6; then
for k in drop_first drop_last drop_tail drop_block shift double_block; do
  rm -f "$OUT/f-$k.jsonl"
  KFORGE_PLANT="$k@*" "$KFORGE" run tests/faults/reduce.json $quick --results "$OUT/f-$k.jsonl" \
      > /dev/null 2> "$OUT/f-$k.err"
  KFORGE_PLANT="$k@*" "$KFORGE" run tests/faults/reduce.json $quick --only v4_last_block,v2_multi_grid \
      --set 'dtype=["float32","int32"]' --set op=sum --set 'n=[16777217,1073741824,2147483653]' \
      --results "$OUT/f-$k.jsonl" > /dev/null 2>> "$OUT/f-$k.err"
  if python3 tests/faults/tally.py "$OUT/f-$k.jsonl" $k > "$OUT/f-$k.tally"; then
    ok "real kernels: planted $k caught wherever it changes the answer: $(cat "$OUT/f-$k.tally")"
  else
    bad "real kernels: planted $k: $(head -n 6 "$OUT/f-$k.tally")"
  fi
done
for k in drop_first drop_last drop_tail drop_block shift skip_col row_shift; do
  rm -f "$OUT/g-$k.jsonl"
  KFORGE_PLANT="$k@*" "$KFORGE" run tests/faults/rows.json $quick --results "$OUT/g-$k.jsonl" \
      > /dev/null 2> "$OUT/g-$k.err"
  KFORGE_PLANT="$k@*" "$KFORGE" run tests/faults/rows.json $quick --only block,split_last_block,thread \
      --set dtype=float32 --set op=sum --set 'rows=[16777217]' --set 'cols=[3]' --set row_stride=0 \
      --results "$OUT/g-$k.jsonl" > /dev/null 2>> "$OUT/g-$k.err"
  KFORGE_PLANT="$k@*" "$KFORGE" run tests/faults/rows.json $quick --only block,split_last_block \
      --set dtype=float32 --set op=sum --set 'rows=[64]' --set 'cols=[1048576]' --set row_stride=0 \
      --results "$OUT/g-$k.jsonl" > /dev/null 2>> "$OUT/g-$k.err"
  if python3 tests/faults/tally.py "$OUT/g-$k.jsonl" $k > "$OUT/g-$k.tally"; then
    ok "real row-wise kernels: planted $k caught wherever it changes the answer: $(cat "$OUT/g-$k.tally")"
  else
    bad "real row-wise kernels: planted $k: $(head -n 6 "$OUT/g-$k.tally")"
  fi
done
rm -f "$OUT/ft.jsonl"
KFORGE_PLANT="drop_last@passes=last_block" "$KFORGE" tune configs/tune-reduce.json --set n=16777217 --budget 120 \
    --strategy random --seed 2 --db "$OUT/fdb" --results "$OUT/ft.jsonl" > "$OUT/ft.out" 2> "$OUT/ft.err"
rc=$?
planted=$(grep -c '"passes":"last_block"' "$OUT/ft.jsonl")
wrongs=$(grep '"passes":"last_block"' "$OUT/ft.jsonl" | grep -c '"status":"wrong"')
if [ $rc -eq 0 ] && [ "$planted" -gt 0 ] && [ "$wrongs" -eq "$planted" ] && grep -q '^best: ' "$OUT/ft.out" &&
   ! grep '^best: ' "$OUT/ft.out" | grep -q 'last_block' && ! grep -q '"passes": *"last_block"' "$OUT"/fdb/*.json; then
  ok "tune: the $planted planted candidates (of $(grep -c . "$OUT/ft.jsonl")) all wrong, none best"
else
  bad "tune with planted candidates: exit $rc, $wrongs of $planted wrong; $(grep '^best: ' "$OUT/ft.out")"
fi
fi

# 7. the output check on the GPU gives what the host's gives
if want 7; then
rm -f "$OUT"/oc_*.jsonl
for mode in gpu host; do
  if [ $mode = host ]; then KFORGE_CHECK_ON_HOST=1; else KFORGE_CHECK_ON_HOST=0; fi
  export KFORGE_CHECK_ON_HOST
  "$KFORGE" run tests/custom/noisy.json $quick --results "$OUT/oc_$mode.jsonl" --no-resume >/dev/null 2>"$OUT/oc_$mode.err"
  "$KFORGE" run configs/fast.json --set 'n=[1000003,16777216]' --set 'dtype=["int32","float32"]' $quick \
      --results "$OUT/oc_$mode.jsonl" >/dev/null 2>>"$OUT/oc_$mode.err"
  "$KFORGE" run tests/faults/rows.json --set 'dtype=["float32","int32"]' --set op=sum --set 'rows=[16777217,4099]' \
      --set 'cols=[3]' --set row_stride=0 $quick --results "$OUT/oc_$mode.jsonl" >/dev/null 2>>"$OUT/oc_$mode.err"
  KFORGE_PLANT="drop_last@*" "$KFORGE" run tests/faults/reduce.json --only v4_last_block,v2_multi_grid \
      --set 'dtype=["float32","int32"]' --set op=sum --set 'n=[1000003]' $quick \
      --results "$OUT/oc_$mode.jsonl" >/dev/null 2>>"$OUT/oc_$mode.err"
  KFORGE_PLANT="row_shift@*" "$KFORGE" run tests/faults/rows.json --set dtype=float32 --set op=sum \
      --set 'rows=[4099]' --set 'cols=[1000]' --set row_stride=0 $quick \
      --results "$OUT/oc_$mode.jsonl" >/dev/null 2>>"$OUT/oc_$mode.err"
done
unset KFORGE_CHECK_ON_HOST
if why=$(python3 - "$OUT/oc_gpu.jsonl" "$OUT/oc_host.jsonl" 2>&1 <<'PY'
import json, sys
def load(p):
    d = {}
    for line in open(p):
        r = json.loads(line)
        k = (r.get("kernel"), r.get("label"), r.get("n"), r.get("rows"), r.get("cols"), r.get("dtype"), r.get("op"), r.get("planted"))
        d[k] = r
    return d
g, h = load(sys.argv[1]), load(sys.argv[2])
if set(g) != set(h) or len(g) < 20:
    sys.exit("different cases: %d on the GPU, %d on the host" % (len(g), len(h)))
for k in g:
    # a planted fault may race (a row written to the next by two blocks): its
    # verdict must agree, its counts need not
    fields = ("status",) if k[7] else ("status", "message", "gpu_value", "ref_value", "abs_err", "tolerance", "worst_at")
    for f in fields:
        if g[k].get(f) != h[k].get(f):
            sys.exit("%s: %s %r on the GPU, %r on the host" % (k, f, g[k].get(f), h[k].get(f)))
noisy = {r["fault"]: r for k, r in g.items() if k[0] == "noisy"}
want = {0: "ok", 1: "ok", 2: "wrong", 3: "wrong", 4: "wrong", 5: "wrong"}
for f, st in want.items():
    if noisy.get(f, {}).get("status") != st:
        sys.exit("noisy fault=%d: %s, expected %s" % (f, noisy.get(f, {}).get("status"), st))
if not (noisy[0]["abs_err"] == 0 and noisy[1]["abs_err"] > 0 and "y[999996]" in noisy[2]["message"]
        and "deterministic" in noisy[5]["message"]):
    sys.exit("noisy: figures %r %r, messages %r %r" % (noisy[0]["abs_err"], noisy[1]["abs_err"], noisy[2]["message"], noisy[5]["message"]))
wrong = sum(r["status"] == "wrong" for r in g.values())
print("%d cases, %d wrong" % (len(g), wrong))
PY
); then
  ok "output check on the GPU: the host's verdicts and figures in every case ($why)"
else
  bad "output check on the GPU: $why"
fi
fi

if [ $fail -gt 0 ] || [ $own_out = 0 ]; then
  keep_out=1
  echo "GPU suite: files kept in $OUT"
fi
echo "GPU suite: $pass passed, $fail failed"
[ $fail -eq 0 ]
