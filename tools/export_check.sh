#!/bin/sh
# export_check.sh -- the GPU check of kforge export (issue 13): tune on this
# GPU, export the header, build a program against it with nvcc, check it and
# time it next to kforge.
#
#   KFORGE=build/kforge sh tools/export_check.sh [OUTDIR]
#
#   1. kforge tune SPACE (default configs/best-h100.json: the fast variants
#      of issue 3) at each n = 2^10, 2^12, ..., 2^30, one size at a time (the
#      input of a size is made once), with short bench settings;
#   2. kforge export -> OUTDIR/kforge_reduce_<dtype>_<op>.cuh;
#   3. nvcc builds tools/export_check.cu against it (ARCH, default sm_90);
#   4. export_check: the result at 30 sizes, odd ones and odd pointer
#      offsets among them, exactly right;
#   5. ROUNDS (default 3) alternating rounds of kforge run (the full method)
#      on the variant `kforge best` gives at each of TIMES (default 2^20,
#      2^24, 2^28; TIMES="" for none) and export_check --time at the same
#      sizes; the median of each side's per-round medians, and their ratio
#      (target <= 1.03);
#   6. where cuobjdump is, whether the machine code of each timed variant is
#      the same in kforge's cubin (NVRTC) and in export_check (nvcc).
#
# Environment: KFORGE, DTYPE/OP (default float32/sum; export_check is built
# for them), SPACE, SIZES (exponents), TIMES, ROUNDS, ARCH, NVCC,
# KFORGE_CACHE_DIR.  Everything goes to OUTDIR (default export-check):
# tune.jsonl, db/, db-list.txt, the header, export.txt, check.jsonl,
# kforge-times.csv, export-times.jsonl, summary.txt.
# Exit: 0 every check right and every ratio <= 1.03; 1 not; 2 a step failed.
set -u
KFORGE=${KFORGE:-build/kforge}
HERE=$(cd "$(dirname "$0")" && pwd)
SPACE=${SPACE:-$HERE/../configs/best-h100.json}
DTYPE=${DTYPE:-float32}
OP=${OP:-sum}
SIZES=${SIZES:-"10 12 14 16 18 20 22 24 26 28 30"}
TIMES=${TIMES-"20 24 28"}
ROUNDS=${ROUNDS:-3}
ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
OUT=${1:-export-check}
mkdir -p "$OUT" || exit 2
export KFORGE_DB="$OUT/db"
export KFORGE_CACHE_DIR="${KFORGE_CACHE_DIR:-$OUT/cache}"
FN=kforge_reduce_${DTYPE}_${OP}
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
for k in $SIZES; do
  "$KFORGE" tune "$SPACE" --set dtype="$DTYPE" --set op="$OP" --set "n=2^$k" --set bench.warmup=2 \
    --set bench.max_time_s=0.02 --set bench.max_noise=0.01 --results "$OUT/tune.jsonl" --no-resume --quiet \
    > /dev/null 2>> "$OUT/tune.txt" || die "kforge tune at 2^$k failed: $(tail -5 "$OUT/tune.txt")"
done
"$KFORGE" best --list --dtype "$DTYPE" --op "$OP" > "$OUT/db-list.txt" 2>&1
say "tuned $DTYPE $OP at 2^{$SIZES} in $(( $(date +%s) - t0 )) s: $(grep -c "$DTYPE" "$OUT/db-list.txt") entries"

# 2. export; 3. build
H=$OUT/$FN.cuh
"$KFORGE" export --dtype "$DTYPE" --op "$OP" -o "$H" 2> "$OUT/export.txt" || die "export failed: $(cat "$OUT/export.txt")"
cat "$OUT/export.txt" >> "$OUT/summary.txt"
"$NVCC" -std=c++17 -O3 -arch="$ARCH" -I "$OUT" -DKFORGE_FN="$FN" -DKFORGE_T="$T" -DKFORGE_OP="$OP" \
  "$HERE/export_check.cu" -o "$OUT/export_check" > "$OUT/nvcc.txt" 2>&1 || die "nvcc failed: $(cat "$OUT/nvcc.txt")"
say "built export_check with $("$NVCC" --version | tail -1) for $ARCH"

# 4. correctness at 30 sizes
"$OUT/export_check" > "$OUT/check.jsonl" 2> "$OUT/check.txt"
rc=$?
nok=$(grep -c '"ok": true' "$OUT/check.jsonl")
nall=$(grep -c '"check"' "$OUT/check.jsonl")
say "correctness: $nok of $nall sizes right (exit $rc; n = 0 included)"
wrong=0
[ $rc -eq 0 ] && [ "$nok" -eq "$nall" ] || wrong=1

# 5. timing, alternating rounds (TIMES="" or ROUNDS=0: none)
if [ -z "$TIMES" ] || [ "$ROUNDS" -lt 1 ]; then
  [ $wrong -eq 0 ] && { say "PASS (correctness only)"; exit 0; }
  say "FAIL"
  exit 1
fi
for k in $TIMES; do
  "$KFORGE" best --dtype "$DTYPE" --op "$OP" --n "2^$k" > "$OUT/best-$k.json" 2>> "$OUT/best.txt" ||
    die "kforge best --n 2^$k failed"
done
tlist=$(for k in $TIMES; do printf '2^%s,' "$k"; done | sed 's/,$//')
: > "$OUT/kforge-times.csv"
: > "$OUT/export-times.jsonl"
r=0
while [ $r -lt "$ROUNDS" ]; do
  r=$((r + 1))
  # shellcheck disable=SC2046
  "$KFORGE" run $(for k in $TIMES; do echo "$OUT/best-$k.json"; done) --no-results --quiet --format csv \
    >> "$OUT/kforge-times.csv" 2>> "$OUT/run.txt" || die "kforge run failed: $(tail -5 "$OUT/run.txt")"
  "$OUT/export_check" --no-check --time "$tlist" >> "$OUT/export-times.jsonl" 2>> "$OUT/time.txt" ||
    die "export_check --time failed: $(tail -5 "$OUT/time.txt")"
done
slow=0
for k in $TIMES; do
  n=$(awk -v k="$k" 'BEGIN { printf "%.0f", 2 ^ k }')
  # kforge: the median_ms column of the rows at n; export_check: its lines at n
  km=$(awk -F, -v n="$n" 'NR == 1 || $0 ~ /^kforge,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
         $col["n"] == n && $col["status"] == "ok" { print $col["median_ms"] }' "$OUT/kforge-times.csv" |
       sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  kl=$(awk -F, -v n="$n" 'NR == 1 || $0 ~ /^kforge,/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
         $col["n"] == n { print $col["label"]; exit }' "$OUT/kforge-times.csv")
  em=$(sed -n "s/.*\"time\": $n, \"median_ms\": \([0-9.]*\).*/\1/p" "$OUT/export-times.jsonl" |
       sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  el=$(sed -n "s/.*\"time\": $n, .*\"variant\": \"k[0-9]* \([^,]*\),.*/\1/p" "$OUT/export-times.jsonl" | head -1)
  ratio=$(awk -v a="$em" -v b="$km" 'BEGIN { printf "%.4f", (b > 0) ? a / b : 99 }')
  verdict=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.03) ? "within 3%" : "SLOWER than 3%" }')
  [ "$verdict" = "within 3%" ] || slow=1
  [ "$kl" = "$el" ] || say "note: at 2^$k kforge ran $kl, the header $el"
  say "2^$k: kforge $km ms, exported header $em ms, ratio $ratio ($verdict; median of $ROUNDS rounds; $el)"
  grep -q "\"time\": $n, .*\"ok\": true" "$OUT/export-times.jsonl" || { wrong=1; say "2^$k: wrong after timing"; }
done
# 6. the machine code: kforge's cubin of each timed variant against the
# same kernel in export_check (opcodes and operands, addresses left out)
if command -v cuobjdump > /dev/null 2>&1; then
  sass() { sed -n 's|^ */\*[0-9a-f]\{4\}\*/ *\([^;]*\);.*|\1|p'; }
  for k in $TIMES; do
    rm -rf "$OUT/sass-cache"
    KFORGE_CACHE_DIR="$OUT/sass-cache" "$KFORGE" check --compile --arch "$ARCH" "$OUT/best-$k.json" > /dev/null 2>&1
    cuobjdump -sass "$OUT"/sass-cache/*.cubin 2> /dev/null | sass > "$OUT/sass-kforge-$k.txt"
    n=$(awk -v k="$k" 'BEGIN { printf "%.0f", 2 ^ k }')
    ki=$(sed -n "s/.*\"time\": $n, .*\"variant\": \"\(k[0-9]*\) .*/\1/p" "$OUT/export-times.jsonl" | head -1)
    cuobjdump -sass "$OUT/export_check" 2> /dev/null |
      awk -v f="${FN}_${ki}_ns" '/Function :/ { on = index($0, f) > 0 } on' | sass > "$OUT/sass-header-$k.txt"
    a=$(wc -l < "$OUT/sass-kforge-$k.txt"); b=$(wc -l < "$OUT/sass-header-$k.txt")
    d=$(diff "$OUT/sass-kforge-$k.txt" "$OUT/sass-header-$k.txt" | grep -c '^[<>]')
    say "2^$k: machine code: kforge $a instructions, header ($ki) $b, $d lines differ"
  done
fi
[ $wrong -eq 0 ] && [ $slow -eq 0 ] && { say "PASS"; exit 0; }
say "FAIL"
exit 1
