#!/bin/sh
# export_check.sh -- the GPU check of kforge export (issue 13; row-wise:
# KERNEL=reduce_rows): tune on this GPU, export the header, build a program
# against it with nvcc, check it and time it next to kforge.
#
#   KFORGE=build/kforge sh tools/export_check.sh [OUTDIR]
#   KERNEL=reduce_rows KFORGE=build/kforge sh tools/export_check.sh [OUTDIR]
#
#   1. kforge tune SPACE at each size, one size at a time (the input of a
#      size is made once): reduce: SPACE default configs/best-h100.json
#      (the fast variants of issue 3), n = 2^SIZES (default 2^10, 2^12, ...,
#      2^30), with short bench settings; reduce_rows: SPACE default
#      configs/tune-rows.json with its own bench settings, at each ROWSxCOLS
#      of SHAPES (default 16384x4096 2097152x32 64x1048576: 2^26 elements,
#      256 MiB of float32, each), TUNE_ARGS passed on (say "--budget 150");
#   2. kforge export [--kernel reduce_rows] -> OUTDIR/kforge_<family>_<dtype>_<op>.cuh;
#   3. nvcc builds tools/export_check.cu (reduce_rows: tools/export_rows_check.cu)
#      against it (ARCH, default sm_90);
#   4. the check: reduce: the result at 30 sizes, odd ones and odd pointer
#      offsets among them, exactly right; reduce_rows: every row of 32
#      shapes (one row, one column, cols not a multiple of 4, row_stride >
#      cols, misaligned input, 65536 and 2^24 + 1 rows, zero rows or
#      columns, ...) exactly right, one workspace for all, and refusals;
#   5. ROUNDS (default 5) alternating rounds of kforge run (the full method)
#      on the variant `kforge best` gives at each of TIMES (reduce: exponents,
#      default 20 24 28; reduce_rows: shapes, default SHAPES; TIMES="" for
#      none) and the check program's --time at the same sizes; the median of
#      each side's per-round medians, and their ratio (target <= 1.03);
#   6. where cuobjdump is, whether the machine code of each timed variant is
#      the same in kforge's cubin (NVRTC) and in the check program (nvcc).
#
# Environment: KFORGE, KERNEL (reduce or reduce_rows), DTYPE/OP (default
# float32/sum; the check program is built for them), SPACE, SIZES, SHAPES,
# TUNE_ARGS, TIMES, ROUNDS, ARCH, NVCC, KFORGE_CACHE_DIR.  Everything goes to
# OUTDIR (default export-check): tune.jsonl, db/, db-list.txt, the header,
# export.txt, check.jsonl, kforge-times.csv, export-times.jsonl, summary.txt.
# Exit: 0 every check right and every ratio <= 1.03; 1 not; 2 a step failed.
set -u
KFORGE=${KFORGE:-build/kforge}
HERE=$(cd "$(dirname "$0")" && pwd)
KERNEL=${KERNEL:-reduce}
DTYPE=${DTYPE:-float32}
OP=${OP:-sum}
case $KERNEL in
  reduce)
    SPACE=${SPACE:-$HERE/../configs/best-h100.json}
    SIZES=${SIZES:-"10 12 14 16 18 20 22 24 26 28 30"}
    TIMES=${TIMES-"20 24 28"}
    CHECK=export_check ;;
  reduce_rows)
    SPACE=${SPACE:-$HERE/../configs/tune-rows.json}
    SHAPES=${SHAPES:-"16384x4096 2097152x32 64x1048576"}
    TIMES=${TIMES-$SHAPES}
    CHECK=export_rows_check ;;
  *) echo "export_check: KERNEL must be reduce or reduce_rows, not $KERNEL" >&2; exit 2 ;;
esac
TUNE_ARGS=${TUNE_ARGS:-}
ROUNDS=${ROUNDS:-5}
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
OUT=${1:-export-check}
mkdir -p "$OUT" || exit 2
export KFORGE_DB="$OUT/db"
export KFORGE_CACHE_DIR="${KFORGE_CACHE_DIR:-$OUT/cache}"
FN=kforge_${KERNEL}_${DTYPE}_${OP}
case $DTYPE in
  int32) T=int ;; uint32) T="unsigned int" ;; int64) T="long long" ;; float64) T=double ;; *) T=float ;;
esac
say() { echo "export_check: $*" | tee -a "$OUT/summary.txt"; }
die() { say "$*"; exit 2; }
: > "$OUT/summary.txt"

"$KFORGE" info > "$OUT/info.txt" 2>&1 || die "kforge info failed: $(cat "$OUT/info.txt")"
say "$(date -u +%Y-%m-%dT%H:%M:%SZ) $(grep -m1 -i 'name\|device' "$OUT/info.txt")"

# 1. tune, one size at a time
t0=$(date +%s)
if [ "$KERNEL" = reduce ]; then
  for k in $SIZES; do
    # shellcheck disable=SC2086
    "$KFORGE" tune "$SPACE" --set dtype="$DTYPE" --set op="$OP" --set "n=2^$k" --set bench.warmup=2 \
      --set bench.max_time_s=0.02 --set bench.max_noise=0.01 --results "$OUT/tune.jsonl" --no-resume --quiet \
      $TUNE_ARGS > /dev/null 2>> "$OUT/tune.txt" || die "kforge tune at 2^$k failed: $(tail -5 "$OUT/tune.txt")"
  done
  tuned="2^{$SIZES}"
else
  for sh in $SHAPES; do
    # shellcheck disable=SC2086
    "$KFORGE" tune "$SPACE" --set dtype="$DTYPE" --set op="$OP" --set "rows=${sh%x*}" --set "cols=${sh#*x}" \
      --results "$OUT/tune.jsonl" --no-resume --quiet $TUNE_ARGS > /dev/null 2>> "$OUT/tune.txt" ||
      die "kforge tune at $sh failed: $(tail -5 "$OUT/tune.txt")"
  done
  tuned="$SHAPES"
fi
"$KFORGE" best --list --kernel "$KERNEL" --dtype "$DTYPE" --op "$OP" > "$OUT/db-list.txt" 2>&1
say "tuned $KERNEL $DTYPE $OP at $tuned in $(( $(date +%s) - t0 )) s: $(grep -c "$DTYPE" "$OUT/db-list.txt") entries"

# 2. export; 3. build
H=$OUT/$FN.cuh
"$KFORGE" export --kernel "$KERNEL" --dtype "$DTYPE" --op "$OP" -o "$H" 2> "$OUT/export.txt" ||
  die "export failed: $(cat "$OUT/export.txt")"
cat "$OUT/export.txt" >> "$OUT/summary.txt"
"$NVCC" -std=c++17 -O3 -arch="$ARCH" -I "$OUT" -DKFORGE_FN="$FN" -DKFORGE_T="$T" -DKFORGE_OP="$OP" \
  "$HERE/$CHECK.cu" -o "$OUT/$CHECK" > "$OUT/nvcc.txt" 2>&1 || die "nvcc failed: $(cat "$OUT/nvcc.txt")"
say "built $CHECK with $("$NVCC" --version | tail -1) for $ARCH"

# 4. correctness
"$OUT/$CHECK" > "$OUT/check.jsonl" 2> "$OUT/check.txt"
rc=$?
nok=$(grep -c '"check".*"ok": true' "$OUT/check.jsonl")
nall=$(grep -c '"check"' "$OUT/check.jsonl")
wrong=0
if [ "$KERNEL" = reduce ]; then
  say "correctness: $nok of $nall sizes right (exit $rc; n = 0 included)"
else
  grep -q '"refusals": true' "$OUT/check.jsonl" || wrong=1
  say "correctness: $nok of $nall shapes right, every row (exit $rc); refusals $(grep -o '"refusals": [a-z]*' "$OUT/check.jsonl")"
  grep '"ok": false' "$OUT/check.jsonl" | head -5 | while read -r l; do say "wrong: $l"; done
fi
[ $rc -eq 0 ] && [ "$nok" -eq "$nall" ] || wrong=1

# 5. timing, alternating rounds (TIMES="" or ROUNDS=0: none)
if [ -z "$TIMES" ] || [ "$ROUNDS" -lt 1 ]; then
  [ $wrong -eq 0 ] && { say "PASS (correctness only)"; exit 0; }
  say "FAIL"
  exit 1
fi
# Per timed item (reduce: an exponent k; reduce_rows: ROWSxCOLS): its name,
# kforge best for it, the check program's --time argument, kforge's CSV rows
# and the check program's JSON lines for it.
name_of() { if [ "$KERNEL" = reduce ]; then echo "2^$1"; else echo "$1"; fi; }
best_of() {
  if [ "$KERNEL" = reduce ]; then
    "$KFORGE" best --dtype "$DTYPE" --op "$OP" --n "2^$1"
  else
    "$KFORGE" best --kernel reduce_rows --dtype "$DTYPE" --op "$OP" --rows "${1%x*}" --cols "${1#*x}"
  fi
}
csv_rows() { # $1 item, $2 the column to print; rows with status ok only if $3
  if [ "$KERNEL" = reduce ]; then
    a=n; av=$(awk -v k="$1" 'BEGIN { printf "%.0f", 2 ^ k }'); b=n; bv=$av
  else
    a=rows; av=${1%x*}; b=cols; bv=${1#*x}
  fi
  awk -F, -v a="$a" -v av="$av" -v b="$b" -v bv="$bv" -v c="$2" -v ok="${3:-}" \
    'NR == 1 || $0 ~ /^kforge,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
     $col[a] == av && $col[b] == bv && (ok == "" || $col["status"] == "ok") { print $col[c] }' "$OUT/kforge-times.csv"
}
json_key() {
  if [ "$KERNEL" = reduce ]; then
    echo "\"time\": $(awk -v k="$1" 'BEGIN { printf "%.0f", 2 ^ k }'),"
  else
    echo "\"time\": \"$1\","
  fi
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for k in $TIMES; do
  best_of "$k" > "$OUT/best-$k.json" 2>> "$OUT/best.txt" || die "kforge best for $(name_of "$k") failed"
done
tlist=$(for k in $TIMES; do printf '%s,' "$(name_of "$k")"; done | sed 's/,$//')
: > "$OUT/kforge-times.csv"
: > "$OUT/export-times.jsonl"
r=0
while [ $r -lt "$ROUNDS" ]; do
  r=$((r + 1))
  # shellcheck disable=SC2046
  "$KFORGE" run $(for k in $TIMES; do echo "$OUT/best-$k.json"; done) --no-results --quiet --format csv \
    >> "$OUT/kforge-times.csv" 2>> "$OUT/run.txt" || die "kforge run failed: $(tail -5 "$OUT/run.txt")"
  "$OUT/$CHECK" --no-check --time "$tlist" >> "$OUT/export-times.jsonl" 2>> "$OUT/time.txt" ||
    die "$CHECK --time failed: $(tail -5 "$OUT/time.txt")"
done
slow=0
for k in $TIMES; do
  nm=$(name_of "$k")
  key=$(json_key "$k")
  km=$(csv_rows "$k" median_ms ok | median)
  kl=$(csv_rows "$k" label | head -1)
  em=$(grep -F "$key" "$OUT/export-times.jsonl" | sed -n 's/.*"median_ms": \([0-9.]*\).*/\1/p' | median)
  el=$(grep -F "$key" "$OUT/export-times.jsonl" | sed -n 's/.*"variant": "k[0-9]* \([^,]*\),.*/\1/p' | head -1)
  ratio=$(awk -v a="$em" -v b="$km" 'BEGIN { printf "%.4f", (b > 0) ? a / b : 99 }')
  verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.03) ? "within 3%" : "SLOWER than 3%" }')
  [ "$verdict" = "within 3%" ] || slow=1
  [ "$kl" = "$el" ] || say "note: at $nm kforge ran $kl, the header $el"
  say "$nm: kforge $km ms, exported header $em ms, ratio $ratio ($verdict; median of $ROUNDS rounds; $el)"
  grep -F "$key" "$OUT/export-times.jsonl" | grep -q '"ok": true' || { wrong=1; say "$nm: wrong after timing"; }
done
# 6. the machine code: kforge's cubin of each timed variant against the
# same kernel in the check program (opcodes and operands, addresses left out)
if command -v cuobjdump > /dev/null 2>&1; then
  sass() { sed -n 's|^ */\*[0-9a-f]\{4\}\*/ *\([^;]*\);.*|\1|p'; }
  for k in $TIMES; do
    rm -rf "$OUT/sass-cache"
    KFORGE_CACHE_DIR="$OUT/sass-cache" "$KFORGE" check --compile --arch "$ARCH" "$OUT/best-$k.json" > /dev/null 2>&1
    cuobjdump -sass "$OUT"/sass-cache/*.cubin 2> /dev/null | sass > "$OUT/sass-kforge-$k.txt"
    ki=$(grep -F "$(json_key "$k")" "$OUT/export-times.jsonl" | sed -n 's/.*"variant": "\(k[0-9]*\) .*/\1/p' | head -1)
    cuobjdump -sass "$OUT/$CHECK" 2> /dev/null |
      awk -v f="${FN}_${ki}_ns" '/Function :/ { on = index($0, f) > 0 } on' | sass > "$OUT/sass-header-$k.txt"
    a=$(wc -l < "$OUT/sass-kforge-$k.txt"); b=$(wc -l < "$OUT/sass-header-$k.txt")
    d=$(diff "$OUT/sass-kforge-$k.txt" "$OUT/sass-header-$k.txt" | grep -c '^[<>]')
    say "$(name_of "$k"): machine code: kforge $a instructions, header ($ki) $b, $d lines differ"
  done
fi
[ $wrong -eq 0 ] && [ $slow -eq 0 ] && { say "PASS"; exit 0; }
say "FAIL"
exit 1
