#!/bin/sh
# export_suite.sh -- end-to-end tests of kforge export, multi-variant gen,
# --only, and best --list / --delete, on the synthetic GPU
# (KFORGE_FAKE_GPU=1: no GPU needed; NVRTC is, and nvcc for the compile
# tests, which say SKIP without it).
#
#   KFORGE=build/kforge sh tests/export_suite.sh
#
#   1. fake-GPU tunes fill a tuning database: float32 sum at six sizes,
#      from spaces of multi_kernel, atomic and last_block variants with every
#      grid kind, and int32 max;
#   2. kforge export writes a header; a C++ program that calls its API
#      (tools/export_example.cu, tools/export_check.cu) compiles against it
#      with nvcc for sm_90, two translation units that include it link, two
#      exported headers go in one file, and NVRTC compiles it (every kernel
#      name found in the cubin);
#   3. --deterministic, refusals (no dtype, nothing tuned, a family without
#      an export, an unwritable output);
#   4. kforge gen of several variants compiles as one file (nvcc, NVRTC),
#      --only for gen and run;
#   5. kforge best --list and --delete;
#   6. the row-wise family: fake-GPU tunes at three shapes, kforge export
#      --kernel reduce_rows; tools/export_rows_example.cu and
#      tools/export_rows_check.cu compile against the header with nvcc, two
#      translation units link, NVRTC compiles it; --deterministic; the
#      variant its dispatch chooses (run through tests/export_stub.cpp) is
#      the one kforge best gives, shape by shape;
#   7. bfloat16 and float16: headers whose API takes the 2-byte type and
#      writes the accumulator's (float, or double) or, with --acc-dtype
#      input, the 2-byte type, compiled with nvcc and NVRTC; kforge best by
#      --acc-dtype; the GPU tools that build against them (half_kforge.cu,
#      export_half_check.cu) and copy_rate.cu build;
#   8. the message of every export names a function its header defines.
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
ROOT=$(pwd)
CUDA=${CUDA:-/usr/local/cuda}
NVCC=$CUDA/bin/nvcc
if [ -n "${KFORGE_TEST_OUT:-}" ]; then
  OUT=$KFORGE_TEST_OUT; own_out=0
else
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/kforge-export-suite.XXXXXX") || exit 2; own_out=1
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
pass=0; fail=0; skip=0
ok()   { pass=$((pass+1)); echo "PASS: $1"; }
bad()  { fail=$((fail+1)); echo "FAIL: $1"; }
skip() { skip=$((skip+1)); echo "SKIP: $1"; }
have_nvcc() { [ -x "$NVCC" ]; }

if [ ! -x "$KFORGE" ]; then
  echo "FAIL: $KFORGE not built"; exit 1
fi
if ! "$KFORGE" --version | grep -q NVRTC; then
  echo "SKIP: export suite: NVRTC is not usable here"
  echo "export_suite: 0 passed, 0 failed"
  exit 0
fi

# 1. a tuning database from fake-GPU tunes: a different winner per size group
space() { # $1: sizes, $2: the variant spec
  cat <<EOF
{"kernel": "reduce",
 "defaults": {"dtype": "float32", "op": "sum", "algorithm": "shuffle", "unroll": "full", "n": $1},
 "bench": {"warmup": 1, "min_reps": 3, "max_time_s": 0.001},
 "variants": [$2]}
EOF
}
space '["2^10"]' '{"block_size": [64, 128], "elements_per_thread": [1, 2], "vector_width": 1,
  "passes": "multi_kernel", "grid": {"blocks_per_sm": 2}}' > s10.json
space '["2^13"]' '{"block_size": 128, "elements_per_thread": 2, "vector_width": [1, 2],
  "passes": "multi_kernel", "grid": "auto"}' > s13.json
space '["2^16"]' '{"block_size": [256, 512], "elements_per_thread": 2, "vector_width": 4,
  "passes": "atomic", "grid": "auto", "load": ["plain", "stream"]}' > s16.json
space '["2^20"]' '{"block_size": 512, "elements_per_thread": 4, "vector_width": 4,
  "passes": "atomic", "grid": {"waves": 1}, "load": "stream"}' > s20.json
space '["2^24"]' '{"block_size": [256, 1024], "elements_per_thread": 4, "vector_width": 4,
  "passes": "last_block", "grid": {"waves": 2}, "load": "ldg"}' > s24.json
space '["2^27"]' '{"block_size": 256, "elements_per_thread": 8, "vector_width": 2,
  "passes": "last_block", "grid": 4096}' > s27.json
space '["2^20"]' '{"block_size": 256, "elements_per_thread": 4, "vector_width": 4, "passes": ["atomic", "last_block"],
  "grid": "auto"}' | sed 's/"dtype": "float32", "op": "sum"/"dtype": "int32", "op": "max"/' > max.json
tuned=0
for s in s10 s13 s16 s20 s24 s27 max; do
  "$KFORGE" tune $s.json --results tune-$s.jsonl --quiet > /dev/null 2> et-$s.txt && tuned=$((tuned+1))
done
if [ $tuned -eq 7 ] && [ "$("$KFORGE" best --list --dtype float32 2> /dev/null | grep -c 'float32 sum')" -eq 6 ]; then
  ok "fake-GPU tunes filled the database: float32 sum at 6 sizes, int32 max"
else
  bad "tunes: $tuned of 7 ran: $(cat et-*.txt) $("$KFORGE" best --list 2>&1)"
fi

# 2. export, and what compiles against it
H=kforge_reduce_float32_sum.cuh
"$KFORGE" export --dtype float32 --op sum -o $H > ex.out 2> ex.txt
rc=$?
if [ $rc -eq 0 ] && [ ! -s ex.out ] && grep -q 'size_t kforge_reduce_float32_sum_workspace(size_t n)' $H &&
   grep -q '^kforge_reduce_float32_sum(const float \*in, size_t n, float \*out, void \*workspace, size_t workspace_bytes, cudaStream_t stream)' $H &&
   grep -q 'Tuned on fake-gpu' $H && grep -q 'works, untuned' $H && grep -q '6 sizes tuned on fake-gpu' ex.txt &&
   grep -q 'NOT every variant is deterministic' ex.txt && [ "$(grep -c '^  n=' ex.txt)" -eq 6 ] &&
   grep -q 'n=16777216 .* deterministic' ex.txt; then
  ok "kforge export: a header for 6 sizes, and it says which variant serves each and whether it is deterministic"
else
  bad "kforge export: exit $rc: $(cat ex.txt)"
fi
kernels=$(grep -c '^// kernel k' $H)
passes=$(grep -o 'passes_[a-z_]*, "k' $H | sort -u | wc -l | tr -d ' ')
grids=$(grep -o 'grid_[a-z_]*, [0-9]*ull, passes' $H | sed 's/,.*//' | sort -u | wc -l | tr -d ' ')
if [ "$kernels" -ge 5 ] && [ "$passes" -eq 3 ] && [ "$grids" -eq 4 ]; then
  ok "the header holds $kernels kernels, every passes kind, $grids grid kinds"
else
  bad "header contents: $kernels kernels, $passes passes kinds, $grids grid kinds"
fi
if "$KFORGE" export --dtype float32 --op sum > stdout.cuh 2> /dev/null &&
   [ "$(sed '/^\/\/ Generated by/,+1d' stdout.cuh | md5sum)" = "$(sed '/^\/\/ Generated by/,+1d' $H | md5sum)" ]; then
  ok "without -o the header goes to stdout"
else
  bad "export to stdout differs from -o"
fi

if have_nvcc; then
  # compiled and linked apart: first.o is the first of the two translation
  # units below too
  if "$NVCC" -std=c++17 -O3 -arch=sm_90 -Xcompiler -Wall,-Wextra -I . -c "$ROOT/tools/export_example.cu" \
       -o first.o > nv1.txt 2>&1 && "$NVCC" -arch=sm_90 first.o -o example >> nv1.txt 2>&1 && [ ! -s nv1.txt ]; then
    ok "tools/export_example.cu compiles against the header with nvcc for sm_90, no warnings"
  else
    bad "export_example.cu: $(head -c 2000 nv1.txt)"
  fi
  if "$NVCC" -std=c++17 -O3 -arch=sm_90 -I . "$ROOT/tools/export_check.cu" -o export_check > nv2.txt 2>&1; then
    ok "tools/export_check.cu (the GPU check) compiles against the header"
  else
    bad "export_check.cu: $(head -c 2000 nv2.txt)"
  fi
  cat > second.cu <<'EOF'
#include "kforge_reduce_float32_sum.cuh"
cudaError_t second_sum(const float *in, size_t n, float *out, void *ws, size_t bytes)
{
    return kforge_reduce_float32_sum(in, n, out, ws, bytes, 0);
}
EOF
  if "$NVCC" -std=c++17 -arch=sm_90 -I . -c second.cu -o second.o > nv3.txt 2>&1 &&
     "$NVCC" -arch=sm_90 first.o second.o -o two >> nv3.txt 2>&1; then
    ok "two translation units that include the header link"
  else
    bad "two translation units: $(head -c 2000 nv3.txt)"
  fi
  if "$KFORGE" export --dtype int32 --op max -o kforge_reduce_int32_max.cuh 2> exm.txt; then
    cat > both.cu <<'EOF'
#include "kforge_reduce_float32_sum.cuh"
#include "kforge_reduce_int32_max.cuh"
int main()
{
    return (int)(kforge_reduce_float32_sum_workspace(1000) + kforge_reduce_int32_max_workspace(1000) == 0);
}
EOF
    if "$NVCC" -std=c++17 -arch=sm_90 -I . both.cu -o both > nv4.txt 2>&1; then
      ok "two exported headers (float32 sum, int32 max) in one file"
    else
      bad "two headers in one file: $(head -c 2000 nv4.txt)"
    fi
  else
    bad "export int32 max: $(cat exm.txt)"
  fi
else
  skip "nvcc not found at $NVCC: the header, the example and the check program are not compiled with it"
fi

cc -std=c11 "$ROOT/tests/nvrtc_compile.c" -I "$CUDA/include" -L "$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lnvrtc \
  -o nvrtc_compile 2> cc.txt
names=$(grep -o '^// kernel k[0-9]*' $H | sed 's|// kernel |kforge_reduce_float32_sum_|')
# shellcheck disable=SC2086
if ./nvrtc_compile $H sm_90 $names kforge_reduce_float32_sum_init > nvrtc.txt 2>&1; then
  ok "the header compiles with NVRTC for sm_90 ($(echo $names | wc -w) kernels and the identity kernel by name)"
else
  bad "NVRTC: $(cat cc.txt nvrtc.txt | head -c 2000)"
fi

# 3. --deterministic and refusals
"$KFORGE" export --dtype float32 --op sum --deterministic -o det.cuh 2> exd.txt
rc=$?
if [ $rc -eq 0 ] && grep -q 'DETERMINISTIC 1' det.cuh && ! grep -q 'passes_atomic, "k' det.cuh &&
   grep -q 'every variant is deterministic' exd.txt && ! grep -q 'not deterministic' exd.txt; then
  ok "export --deterministic: only deterministic variants, and it says so"
else
  bad "export --deterministic: exit $rc: $(cat exd.txt)"
fi
"$KFORGE" export --op sum > /dev/null 2> e1.txt; rc=$?
if [ $rc -eq 2 ] && grep -q 'dtype and --op are required' e1.txt; then
  ok "export without --dtype: exit 2"
else
  bad "export without --dtype: exit $rc: $(cat e1.txt)"
fi
"$KFORGE" export --dtype float64 --op prod > /dev/null 2> e2.txt; rc=$?
if [ $rc -eq 2 ] && grep -q 'nothing tuned for reduce float64 prod' e2.txt; then
  ok "export with nothing tuned: exit 2 with a message"
else
  bad "export, nothing tuned: exit $rc: $(cat e2.txt)"
fi
"$KFORGE" export --dtype float32 --op sum -o "$OUT/no/such/dir/h.cuh" 2> e3.txt; rc=$?
if [ $rc -eq 4 ]; then
  ok "export to an unwritable path: exit 4"
else
  bad "export, unwritable: exit $rc: $(cat e3.txt)"
fi
KFORGE_DB="$OUT/empty-db" "$KFORGE" export --dtype float32 --op sum > /dev/null 2> e4.txt; rc=$?
if [ $rc -eq 2 ] && grep -q 'empty' e4.txt; then
  ok "export from an empty database: exit 2"
else
  bad "export, empty database: exit $rc: $(cat e4.txt)"
fi
if "$KFORGE" axes 2> /dev/null | grep -q '^reduce_rows'; then
  "$KFORGE" export --kernel reduce_rows --dtype float32 --op sum > /dev/null 2> e5.txt; rc=$?
  if [ $rc -eq 2 ] && grep -q 'nothing tuned for reduce_rows float32 sum' e5.txt; then
    ok "export --kernel reduce_rows with nothing tuned for it: exit 2, says why"
  else
    bad "export --kernel reduce_rows: exit $rc: $(cat e5.txt)"
  fi
else
  "$KFORGE" export --kernel nosuch --dtype float32 --op sum > /dev/null 2> e5.txt; rc=$?
  if [ $rc -eq 2 ] && grep -q 'unknown kernel family' e5.txt; then
    ok "export --kernel of an unknown family: exit 2"
  else
    bad "export --kernel nosuch: exit $rc: $(cat e5.txt)"
  fi
fi

# 4. gen of several variants, --only
SEEDS=$ROOT/configs/seeds.json
"$KFORGE" gen "$SEEDS" > seeds.cu 2> eg.txt
nk=$(grep -c '^#define kf_reduce kf_reduce_' seeds.cu)
if [ "$nk" -ge 10 ] && [ "$(grep -c '^namespace kf_reduce_' seeds.cu)" -eq "$nk" ] &&
   grep -q '^#define kf_reduce kf_reduce_reduce6$' seeds.cu; then
  ok "gen of $nk variants: one file, kernels kf_reduce_<name>, each in its namespace"
else
  bad "gen of several variants: $(cat eg.txt)"
fi
if have_nvcc; then
  if "$NVCC" -std=c++17 -arch=sm_90 -c seeds.cu -o seeds.o > nv5.txt 2>&1; then
    ok "gen of several variants compiles with nvcc"
  else
    bad "gen output with nvcc: $(head -c 2000 nv5.txt)"
  fi
fi
names=$(sed -n 's/^#define kf_reduce \(kf_reduce_.*\)/\1/p' seeds.cu)
# shellcheck disable=SC2086
if ./nvrtc_compile seeds.cu sm_90 $names > nvrtc2.txt 2>&1; then
  ok "gen of several variants compiles with NVRTC, every kernel by name"
else
  bad "gen output with NVRTC: $(head -c 2000 nvrtc2.txt)"
fi
"$KFORGE" gen "$SEEDS" --only reduce5,reduce6 > two.cu 2> /dev/null
"$KFORGE" gen "$SEEDS" --only reduce6 > one.cu 2> /dev/null
if [ "$(grep -c '^#define kf_reduce kf_reduce_' two.cu)" -eq 2 ] && ! grep -q 'namespace' one.cu &&
   grep -q 'kf_reduce(const T \*in' one.cu && grep -q '^//   name                 reduce6$' one.cu; then
  ok "gen --only: two variants in one file; one variant exactly as kforge run compiles it"
else
  bad "gen --only: $(head -c 600 two.cu)"
fi
"$KFORGE" gen "$SEEDS" --only reduce7 > /dev/null 2> eo.txt; rc=$?
if [ $rc -eq 2 ] && grep -q "no variant is named 'reduce7' (did you mean" eo.txt; then
  ok "gen --only with an unknown name: exit 2 with the names"
else
  bad "gen --only reduce7: exit $rc: $(cat eo.txt)"
fi
"$KFORGE" run "$SEEDS" --only reduce6,shuffle --set n=2^20 --no-results --quiet --format csv > run.csv 2> er.txt
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c ',ok,' run.csv)" -eq 2 ] && grep -q ',reduce6,' run.csv && grep -q ',shuffle,' run.csv; then
  ok "run --only: only the variants named"
else
  bad "run --only: exit $rc: $(cat er.txt) $(head -c 400 run.csv)"
fi

# 5. best --list and --delete
"$KFORGE" best --list > list.txt 2> el.txt; rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c 'fake-gpu' list.txt)" -ge 7 ] && head -1 list.txt | grep -q 'median_ms' &&
   grep -q 'int32   max' list.txt && grep -q ' yes ' list.txt; then
  ok "best --list: every entry, with its determinism"
else
  bad "best --list: exit $rc: $(cat el.txt list.txt)"
fi
if [ "$("$KFORGE" best --list --op max 2> /dev/null | grep -c fake-gpu)" -ge 1 ] &&
   [ "$("$KFORGE" best --list --op max 2> /dev/null | grep -c 'float32')" -eq 0 ] &&
   [ "$("$KFORGE" best --list --n 2^20 2> /dev/null | grep -c 'n=1048576')" -ge 2 ]; then
  ok "best --list filters by op and size"
else
  bad "best --list filters: $("$KFORGE" best --list --op max 2>&1)"
fi
before=$(grep -c 'float32 sum' list.txt)
"$KFORGE" best --delete --dtype float32 --op sum --n 2^13 2> ed.txt; rc=$?
after=$("$KFORGE" best --list 2> /dev/null | grep -c 'float32 sum')
if [ $rc -eq 0 ] && grep -q 'deleted 1 entry' ed.txt && [ "$after" -eq $((before - 1)) ]; then
  ok "best --delete: the entry is gone, the others stay"
else
  bad "best --delete: exit $rc: $(cat ed.txt), $before -> $after entries"
fi
"$KFORGE" best --delete --dtype float32 --op sum --n 2^13 2> ed2.txt; rc=$?
"$KFORGE" best --delete --n 2^16 2> ed3.txt; rc3=$?
if [ $rc -eq 2 ] && grep -q 'nothing to delete' ed2.txt && [ $rc3 -eq 2 ] && grep -q 'needs --dtype and --op' ed3.txt; then
  ok "best --delete: nothing to delete, or no dtype and op -> exit 2"
else
  bad "best --delete refusals: $rc $(cat ed2.txt) / $rc3 $(cat ed3.txt)"
fi

# 6. the row-wise family
rows_space() { # $1 rows, $2 cols: a thread, group, block or split per row by the shape
  cat <<EOF
{"kernel": "reduce_rows",
 "defaults": {"dtype": "float32", "op": "sum", "vector_width": 4, "load": "ldg_prefetch", "rows": $1, "cols": $2},
 "bench": {"warmup": 1, "min_reps": 3, "max_time_s": 0.001},
 "variants": [
  {"map": "thread", "block_size": [128, 256], "constraints": ["cols <= 16"]},
  {"map": "group", "group": [4, 8], "block_size": 256, "grid": ["auto", {"waves": 2}],
   "constraints": ["cols <= 64", "rows > 64"]},
  {"map": "block", "block_size": [256, 512], "grid": ["auto", {"waves": 4}], "constraints": ["cols >= 512", "rows > 64"]},
  {"map": "split", "block_size": 256, "splits": [4, 16], "split_combine": "atomic", "grid": ["auto", {"waves": 1}],
   "constraints": ["rows <= 64"]},
  {"map": "split", "block_size": 512, "splits": 8, "split_combine": "last_block", "grid": {"waves": 1},
   "constraints": ["rows <= 64"]}
 ]}
EOF
}
tuned=0
for sh in 1024x4096 65536x8 16x65536; do
  rows_space "${sh%x*}" "${sh#*x}" > "rows-$sh.json"
  "$KFORGE" tune "rows-$sh.json" --results tune-rows.jsonl --quiet > /dev/null 2> "et-rows-$sh.txt" && tuned=$((tuned+1))
done
"$KFORGE" best --list --kernel reduce_rows > rlist.txt 2>&1
if [ $tuned -eq 3 ] && [ "$(grep -c 'reduce_rows float32 sum' rlist.txt)" -eq 4 ] && grep -q ' no  split[0-9]*/atomic' rlist.txt &&
   grep -q ' yes split8/last_block' rlist.txt; then
  ok "fake-GPU tunes of reduce_rows at 3 shapes: 4 entries (at 16 x 65536 the fastest, atomic, and the fastest deterministic)"
else
  bad "reduce_rows tunes: $tuned of 3 ran: $(cat et-rows-*.txt rlist.txt)"
fi
RH=kforge_reduce_rows_float32_sum.cuh
"$KFORGE" export --kernel reduce_rows --dtype float32 --op sum --fastest -o $RH > rex.out 2> rex.txt
rc=$?
if [ $rc -eq 0 ] && [ ! -s rex.out ] && grep -q '^static inline size_t kforge_reduce_rows_float32_sum_workspace(size_t rows)' $RH &&
   grep -q '^kforge_reduce_rows_float32_sum(const float \*in, size_t rows, size_t cols, size_t row_stride, float \*out, void \*workspace, size_t workspace_bytes,' $RH &&
   grep -q 'Tuned on fake-gpu' $RH && grep -q 'works, untuned' $RH && grep -q '3 shapes tuned on fake-gpu' rex.txt &&
   grep -q 'NOT every variant is deterministic' rex.txt && [ "$(grep -c '^  rows=' rex.txt)" -eq 3 ] &&
   grep -q 'combine_atomic, grid' $RH && grep -q 'any_workspace = true, any_atomic = true' $RH; then
  ok "kforge export --kernel reduce_rows --fastest: a header for 3 shapes, the atomic split among them"
else
  bad "kforge export --kernel reduce_rows: exit $rc: $(cat rex.txt)"
fi
"$KFORGE" export --kernel reduce_rows --dtype float32 --op sum --deterministic -o rdet.cuh 2> rexd.txt
rc=$?
if [ $rc -eq 0 ] && grep -q 'ROWS_FLOAT32_SUM_DETERMINISTIC 1' rdet.cuh && ! grep -q 'combine_atomic, grid' rdet.cuh &&
   grep -q 'map_split, 0ull, 0ull, [0-9]*, 8, combine_last_block' rdet.cuh && grep -q 'every variant is deterministic' rexd.txt &&
   ! grep -q 'not deterministic' rexd.txt; then
  ok "export --kernel reduce_rows --deterministic: the last-block split, no atomic one"
else
  bad "export --kernel reduce_rows --deterministic: exit $rc: $(cat rexd.txt)"
fi
"$KFORGE" export --kernel reduce_rows --dtype float32 --op sum -o rdef.cuh 2> rexdef.txt
rc=$?
if [ $rc -eq 0 ] && ! grep -q 'combine_atomic, grid' rdef.cuh && grep -q 'combine_last_block' rdef.cuh &&
   grep -q 'every variant is deterministic' rexdef.txt; then
  ok "export --kernel reduce_rows (default): each shape's fastest deterministic variant, the last-block split (issue 35)"
else
  bad "export --kernel reduce_rows default: exit $rc: $(cat rexdef.txt)"
fi
rnames=$(grep -o '^// kernel k[0-9]*' $RH | sed 's|// kernel |kforge_reduce_rows_float32_sum_|')
# shellcheck disable=SC2086
if ./nvrtc_compile $RH sm_90 $rnames kforge_reduce_rows_float32_sum_fill > rnvrtc.txt 2>&1 &&
   ./nvrtc_compile rdet.cuh sm_90 kforge_reduce_rows_float32_sum_k0 >> rnvrtc.txt 2>&1; then
  ok "the row-wise headers compile with NVRTC for sm_90 ($(echo $rnames | wc -w) kernels and the fill kernel by name)"
else
  bad "NVRTC, row-wise: $(head -c 2000 rnvrtc.txt)"
fi
if have_nvcc; then
  # compiled and linked apart: rfirst.o is the first of the two translation
  # units below too
  if "$NVCC" -std=c++17 -O3 -arch=sm_90 -Xcompiler -Wall,-Wextra -I . -c "$ROOT/tools/export_rows_example.cu" \
       -o rfirst.o > rnv1.txt 2>&1 && "$NVCC" -arch=sm_90 rfirst.o -o rows_example >> rnv1.txt 2>&1 &&
     [ ! -s rnv1.txt ]; then
    ok "tools/export_rows_example.cu compiles against the row-wise header with nvcc for sm_90, no warnings"
  else
    bad "export_rows_example.cu: $(head -c 2000 rnv1.txt)"
  fi
  if "$NVCC" -std=c++17 -O3 -arch=sm_90 -Xcompiler -Wall,-Wextra -I . "$ROOT/tools/export_rows_check.cu" \
       -o export_rows_check > rnv2.txt 2>&1 && [ ! -s rnv2.txt ]; then
    ok "tools/export_rows_check.cu (the GPU check) compiles against the row-wise header, no warnings"
  else
    bad "export_rows_check.cu: $(head -c 2000 rnv2.txt)"
  fi
  cat > rsecond.cu <<'EOF'
#include "kforge_reduce_rows_float32_sum.cuh"
#include "kforge_reduce_float32_sum.cuh"
cudaError_t second_rows(const float *in, size_t rows, size_t cols, float *out, void *ws, size_t bytes)
{
    return kforge_reduce_rows_float32_sum(in, rows, cols, 0, out, ws, bytes, 0);
}
EOF
  if "$NVCC" -std=c++17 -arch=sm_90 -I . -c rsecond.cu -o rsecond.o > rnv3.txt 2>&1 &&
     "$NVCC" -arch=sm_90 rfirst.o rsecond.o -o rtwo >> rnv3.txt 2>&1; then
    ok "two translation units that include the row-wise header (one with the reduce header too) link"
  else
    bad "row-wise, two translation units: $(head -c 2000 rnv3.txt)"
  fi
  # the dispatch against kforge best, shape by shape, dense and strided
  shapes="1x1 3x100 100x100 16x65536 17x65535 64x16384 40x40000 300x300 1024x4096 2000x2000/2100 5000x64 65536x8
          100000x2 1000000x1 8x1000000 256x65536/70000 70000x7/9 4096x512"
  for h in $RH rdet.cuh; do
    "$NVCC" -std=c++17 -arch=sm_90 -cudart none -I . -DKFORGE_HEADER="\"$h\"" -DKFORGE_FN=kforge_reduce_rows_float32_sum \
      -DKFORGE_T=float "$ROOT/tests/export_rows_harness.cu" "$ROOT/tests/export_stub.cpp" -o "harness-$h" \
      >> rnv4.txt 2>&1
  done
  if [ -x "harness-$RH" ] && [ -x harness-rdet.cuh ]; then
    mism=0; n=0
    for det in "" --deterministic; do
      h=$RH; [ -n "$det" ] && h=rdet.cuh
      # shellcheck disable=SC2086
      "./harness-$h" $shapes > "dispatch$det.txt"
      for sh in $shapes; do
        r=${sh%%x*}; rest=${sh#*x}; c=${rest%/*}; s=0; opt=
        if [ "$rest" != "$c" ]; then s=${rest#*/}; opt="--row_stride $s"; fi
        # shellcheck disable=SC2086
        want=$("$KFORGE" best --kernel reduce_rows --rows "$r" --cols "$c" $opt ${det:---fastest} 2> /dev/null |
               sed -n 's/.*variant for float32 sum at \(.*\) on fake-gpu.*/\1/p')
        got=$(grep "^call $r $c $s variant" "dispatch$det.txt" | head -1 | sed -n 's/.*tuned at \(.*\) on fake-gpu.*/\1/p')
        n=$((n+1))
        if [ -z "$want" ] || [ "$want" != "$got" ]; then
          mism=$((mism+1)); echo "  $sh$det: kforge best: '$want', the header: '$got'"
        fi
      done
    done
    if [ $mism -eq 0 ] && ! grep -q '^rc [^0]' dispatch.txt dispatch--deterministic.txt; then
      ok "the header's dispatch chooses what kforge best gives at all $n shapes (dense, strided, --deterministic)"
    else
      bad "dispatch: $mism of $n shapes differ from kforge best"
    fi
  else
    bad "the row-wise dispatch harness: $(head -c 2000 rnv4.txt)"
  fi
else
  skip "nvcc not found at $NVCC: the row-wise header and its programs are not compiled with it"
fi

# 7. bfloat16 and float16 (issue 23): the API takes const __nv_bfloat16 * /
#    const __half * and writes the accumulator's type (float; double with
#    --acc-dtype float64; with --acc-dtype input the input's type, rounded
#    once), one program calls both families' headers (nvcc), NVRTC compiles
#    them, kforge best finds them by --acc-dtype.
cat > hb.json <<EOF
{"kernel": "reduce", "defaults": {"dtype": "bfloat16", "op": "sum", "algorithm": "shuffle", "unroll": "full"},
 "bench": {"warmup": 1, "min_reps": 3, "max_time_s": 0.001},
 "tune": {"n": ["2^10", "2^16", "2^24"]},
 "variants": [{"block_size": [128, 256], "elements_per_thread": [1, 2], "vector_width": [2, 8],
   "passes": ["multi_kernel", "atomic", "last_block"], "grid": ["auto", {"waves": 1}]}]}
EOF
cat > hr.json <<EOF
{"kernel": "reduce_rows", "defaults": {"dtype": "float16", "op": "max", "vector_width": 8, "load": "ldg_prefetch"},
 "bench": {"warmup": 1, "min_reps": 3, "max_time_s": 0.001},
 "variants": [{"map": "group", "group": [4, 8], "block_size": 128},
              {"map": "split", "block_size": 256, "splits": [2, 8], "split_combine": ["atomic", "last_block"]}]}
EOF
# (--between 0: the header of the 3 tuned sizes alone; the sizes between them are serve_suite's)
"$KFORGE" tune hb.json --between 0 --results th.jsonl --quiet > /dev/null 2> eth.txt &&
  sed 's/"op": "sum"/"op": "sum", "acc_dtype": "float64"/; s/"2^10", "2^16", "2^24"/"2^20"/' hb.json > hd.json &&
  "$KFORGE" tune hd.json --results th.jsonl --quiet > /dev/null 2>> eth.txt &&
  "$KFORGE" tune hr.json --set rows=4096 --set cols=32 --results th.jsonl --quiet > /dev/null 2>> eth.txt &&
  "$KFORGE" tune hr.json --set rows=16 --set cols=65536 --results th.jsonl --quiet > /dev/null 2>> eth.txt &&
  sed 's/"op": "sum"/"op": "sum", "acc_dtype": "input"/; s/"2^10", "2^16", "2^24"/"2^20"/' hb.json > hi.json &&
  "$KFORGE" tune hi.json --results th.jsonl --quiet > /dev/null 2>> eth.txt &&
  sed 's/"op": "max"/"op": "sum", "acc_dtype": "input"/' hr.json > hri.json &&
  "$KFORGE" tune hri.json --set rows=16 --set cols=65536 --results th.jsonl --quiet > /dev/null 2>> eth.txt; rc=$?
HB=kforge_reduce_bfloat16_sum.cuh HD=kforge_reduce_bfloat16_sum_acc_float64.cuh HR=kforge_reduce_rows_float16_max.cuh
HI=kforge_reduce_bfloat16_sum_acc_input.cuh HRI=kforge_reduce_rows_float16_sum_acc_input.cuh
if [ $rc -eq 0 ] && "$KFORGE" export --dtype bfloat16 --op sum -o $HB 2> exh.txt &&
   "$KFORGE" export --dtype bfloat16 --acc-dtype float64 --op sum -o $HD 2>> exh.txt &&
   "$KFORGE" export --kernel reduce_rows --dtype float16 --op max -o $HR 2>> exh.txt &&
   "$KFORGE" export --dtype bfloat16 --acc-dtype input --op sum -o $HI 2>> exh.txt &&
   "$KFORGE" export --kernel reduce_rows --dtype float16 --acc-dtype input --op sum -o $HRI 2>> exh.txt &&
   grep -q '^kforge_reduce_bfloat16_sum_acc_input(const __nv_bfloat16 \*in, size_t n, __nv_bfloat16 \*out' $HI &&
   grep -q '^kforge_reduce_rows_float16_sum_acc_input(const __half \*in, size_t rows, size_t cols, size_t row_stride, __half \*out' $HRI &&
   grep -q '^kforge_reduce_bfloat16_sum(const __nv_bfloat16 \*in, size_t n, float \*out, void \*workspace' $HB &&
   grep -q '^kforge_reduce_bfloat16_sum_acc_float64(const __nv_bfloat16 \*in, size_t n, double \*out' $HD &&
   grep -q '^kforge_reduce_rows_float16_max(const __half \*in, size_t rows, size_t cols, size_t row_stride, float \*out' $HR &&
   grep -q '#include <cuda_bf16.h>' $HB && grep -q '#include <cuda_fp16.h>' $HR && grep -q '3 sizes tuned' exh.txt; then
  ok "export of bfloat16 sum (float and double accumulators, and rounded to bfloat16) and float16 max and sum rows: the API takes the 2-byte type, writes the accumulator's or the input's"
else
  bad "export of the 2-byte types: exit $rc: $(cat eth.txt exh.txt | head -c 2000)"
fi
if "$KFORGE" best --dtype bfloat16 --n 2^24 2> bh.txt | grep -q '"acc_dtype": "float32"' &&
   "$KFORGE" best --dtype bfloat16 --acc-dtype float64 --n 2^20 2>> bh.txt | grep -q '"acc_dtype": "float64"' &&
   "$KFORGE" best --dtype bfloat16 --acc-dtype input --n 2^20 2>> bh.txt | grep -q '"acc_dtype": "input"' &&
   ! "$KFORGE" best --dtype float16 --n 2^20 > /dev/null 2>> bh.txt; then
  ok "kforge best finds bfloat16 by accumulator (auto is float32), and nothing for float16 sum"
else
  bad "best for the 2-byte types: $(head -c 2000 bh.txt)"
fi
if have_nvcc; then
  cat > use_half.cu <<EOF
#include "$HB"
#include "$HD"
#include "$HR"
#include "$HI"
#include "$HRI"
int main()
{
    size_t n = 1 << 20, rows = 64, cols = 1 << 14;
    size_t b1 = kforge_reduce_bfloat16_sum_workspace(n), b2 = kforge_reduce_bfloat16_sum_acc_float64_workspace(n);
    size_t b3 = kforge_reduce_rows_float16_max_workspace(rows);
    __nv_bfloat16 *x; __half *h; float *o; double *d; void *w;
    if (cudaMalloc(&x, n * sizeof *x) || cudaMalloc(&h, rows * cols * sizeof *h) || cudaMalloc(&o, rows * sizeof *o) ||
        cudaMalloc(&d, sizeof *d) || cudaMalloc(&w, b1 + b2 + b3))
        return 1;
    return kforge_reduce_bfloat16_sum_workspace_init(w, b1, 0) || kforge_reduce_bfloat16_sum(x, n, o, w, b1, 0) ||
           kforge_reduce_bfloat16_sum_acc_float64_workspace_init(w, b2, 0) ||
           kforge_reduce_bfloat16_sum_acc_float64(x, n, d, w, b2, 0) ||
           kforge_reduce_rows_float16_max_workspace_init(w, b3, 0) ||
           kforge_reduce_rows_float16_max(h, rows, cols, 0, o, w, b3, 0) ||
           kforge_reduce_bfloat16_sum_acc_input_workspace_init(w, b1, 0) ||
           kforge_reduce_bfloat16_sum_acc_input(x, n, x, w, b1, 0) ||
           kforge_reduce_rows_float16_sum_acc_input_workspace_init(w, b3, 0) ||
           kforge_reduce_rows_float16_sum_acc_input(h, rows, cols, 0, h, w, b3, 0) ||
           kforge_reduce_rows_float16_sum_acc_input(h, rows, 0, 0, h, w, b3, 0);
}
EOF
  if "$NVCC" -std=c++17 -arch=sm_90 -Xcompiler -Wall,-Wextra -I . use_half.cu -o use_half > nvh.txt 2>&1 &&
     ! grep -q -i warning nvh.txt; then
    ok "a program calling the bfloat16 and float16 headers compiles and links with nvcc for sm_90, no warnings"
  else
    bad "nvcc, 2-byte headers: $(head -c 2000 nvh.txt)"
  fi
  # the GPU tools that build against these headers (run on a GPU by tools/bench_half.sh and by hand)
  if "$NVCC" -O3 -std=c++17 -arch=sm_90 -I . "$ROOT/tools/half_kforge.cu" -o half_kforge > nvt.txt 2>&1 &&
     "$NVCC" -O3 -std=c++17 -arch=sm_90 -I . "$ROOT/tools/export_half_check.cu" -o ehc > nvt.txt 2>&1 &&
     "$NVCC" -O3 -std=c++17 -arch=sm_90 -DKF_ACC_INPUT -I . "$ROOT/tools/export_half_check.cu" -o ehc_in >> nvt.txt 2>&1 &&
     "$NVCC" -O3 -std=c++17 -arch=sm_90 "$ROOT/tools/copy_rate.cu" -o copy_rate >> nvt.txt 2>&1; then
    ok "tools/half_kforge.cu and tools/export_half_check.cu (float32 and bfloat16 results) build against the headers; tools/copy_rate.cu builds"
  else
    bad "nvcc, the half tools: $(head -c 2000 nvt.txt)"
  fi
else
  skip "nvcc not found at $NVCC: the bfloat16 and float16 headers are not compiled with it"
fi
hnames=$(grep -o '^// kernel k[0-9]*' $HB | sed 's|// kernel |kforge_reduce_bfloat16_sum_|')
rhnames=$(grep -o '^// kernel k[0-9]*' $HR | sed 's|// kernel |kforge_reduce_rows_float16_max_|')
inames=$(grep -o '^// kernel k[0-9]*' $HI | sed 's|// kernel |kforge_reduce_bfloat16_sum_acc_input_|')
rinames=$(grep -o '^// kernel k[0-9]*' $HRI | sed 's|// kernel |kforge_reduce_rows_float16_sum_acc_input_|')
# shellcheck disable=SC2086
if ./nvrtc_compile $HB sm_90 $hnames kforge_reduce_bfloat16_sum_init > hnvrtc.txt 2>&1 &&
   ./nvrtc_compile $HR sm_90 $rhnames kforge_reduce_rows_float16_max_fill >> hnvrtc.txt 2>&1 &&
   ./nvrtc_compile $HI sm_90 $inames kforge_reduce_bfloat16_sum_acc_input_init >> hnvrtc.txt 2>&1 &&
   ./nvrtc_compile $HRI sm_90 $rinames kforge_reduce_rows_float16_sum_acc_input_fill \
     kforge_reduce_rows_float16_sum_acc_input_fill_out >> hnvrtc.txt 2>&1; then
  ok "the bfloat16 and float16 headers compile with NVRTC for sm_90 (no cuda_bf16.h needed there)"
else
  bad "NVRTC, 2-byte headers: $(head -c 2000 hnvrtc.txt)"
fi

# 8. the message names the API as the header spells it: for every dtype and
#    accumulator here, each "kforge export: NAME -> FILE" line names a
#    function FILE defines (bfloat16 in float32 is kforge_reduce_bfloat16_sum,
#    not _sum_float32), and a custom kernel's its _lookup
api_named() { # ERR: prints what does not hold, and fails then
  sed -n 's/^kforge export: \([^ ]*\) -> \([^:]*\): .*/\1 \2/p' "$1" > api.txt
  [ -s api.txt ] || { echo "no 'kforge export: NAME -> FILE' line in $1: $(cat "$1")"; return 1; }
  while read -r name file; do
    grep -Eq "(^|[ *])$name\(" "$file" || { echo "$file defines no $name: $(grep '^kforge export:' "$1")"; return 1; }
  done < api.txt
}
: > exa.txt
for k in "reduce float32 sum" "reduce int32 max" "reduce bfloat16 sum float32" "reduce bfloat16 sum float64" \
         "reduce_rows float16 max float32"; do
  # shellcheck disable=SC2086
  set -- $k
  "$KFORGE" export --kernel "$1" --dtype "$2" --op "$3" ${4:+--acc-dtype "$4"} -o "api-$1-$2-$3${4:+-$4}.cuh" \
    2>> exa.txt || echo "kforge export --kernel $1 --dtype $2 --op $3 ${4:+--acc-dtype $4}: exit $?" >> exa.txt
done
cp "$ROOT/configs/custom/vector_add.cu" . # a config's files lie in its folder
cat > va.json <<EOF
{"kernel": "custom", "custom": {"source": "vector_add.cu", "entry": "vector_add",
  "params": {"block_size_x": [64, 128], "per_thread": [1, 2]}, "sizes": ["n"],
  "args": [{"name": "c", "dtype": "float32", "length": "n", "role": "out"},
           {"name": "a", "dtype": "float32", "length": "n", "role": "in"},
           {"name": "b", "dtype": "float32", "length": "n", "role": "in"},
           {"name": "n", "scalar": "int32", "value": "n"}],
  "grid": ["(n + block_size_x * per_thread - 1) / (block_size_x * per_thread)"]},
 "bench": {"warmup": 1, "min_reps": 3, "max_time_s": 0.001}, "defaults": {"n": 4096}}
EOF
"$KFORGE" tune va.json --results va.jsonl --quiet > /dev/null 2>> exa.txt &&
  "$KFORGE" export --kernel va.json -o api-vector_add.h 2>> exa.txt
if [ $? -eq 0 ] && ! grep -q ': exit' exa.txt && [ "$(grep -c '^kforge export: .* -> ' exa.txt)" -eq 6 ] &&
   why=$(api_named exa.txt); then
  ok "the export message names what each header defines (kforge_reduce_bfloat16_sum, ..._acc_float64, kforge_reduce_rows_float16_max, kforge_vector_add_lookup, ...)"
else
  bad "export message and header disagree: ${why:-$(head -c 2000 exa.txt)}"
fi

if [ $fail -gt 0 ] || [ $own_out = 0 ]; then
  keep_out=1
  echo "export suite: files kept in $OUT"
fi
echo "export_suite: $pass passed, $fail failed"
[ $fail -eq 0 ]
