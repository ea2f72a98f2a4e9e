#!/bin/sh
# tests/custom_suite.sh -- a user's own kernel (kernel "custom", issue 25)
# on the fake GPU: the examples of configs/custom/ (vector_add, transpose)
# and a C++ template entry (tests/custom/scale) go through check, check
# --compile (NVRTC needs no GPU), gen (the #defines and the #line before the
# user's file), run, tune with resume, best and the database; a planted
# unwritten output is caught; every bad input gets its message naming the
# file, the field and what was expected, and exit code 2 (a compile error
# is a variant's failure: exit 1, with NVRTC's log naming the user's file
# and line).  The fake GPU cannot run a user's kernel: it returns the
# reference outputs as the kernel's (tests/custom_gpu.sh runs them for real).
#
#   KFORGE=build/kforge sh tests/custom_suite.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-custom.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "custom_suite: files kept in $TMP"; fi' EXIT
export KFORGE_CACHE_DIR="$TMP/cache" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MS SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
cd "$TMP" || exit 2
cp "$ROOT"/configs/custom/vector_add.cu "$ROOT"/configs/custom/vector_add.json "$ROOT"/configs/custom/transpose.cu \
   "$ROOT"/configs/custom/transpose.json "$ROOT"/tests/custom/scale.cu "$ROOT"/tests/custom/scale.json \
   "$ROOT"/tests/custom/apply.cu "$ROOT"/tests/custom/apply.json \
   "$ROOT"/tests/custom/axpy_half.cu "$ROOT"/tests/custom/axpy_ref.cu "$ROOT"/tests/custom/axpy_f16.json \
   "$ROOT"/tests/custom/axpy_bf16.json "$ROOT"/configs/custom/convolution.cu "$ROOT"/configs/custom/convolution.json . \
   || exit 2
npass=0
nfail=0
nskip=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
skip() { echo "SKIP $1"; nskip=$((nskip + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }
has() { grep -q -- "$2" "$1"; }

# --- check: the space is every listed value (constraints applied) ---------
"$K" check vector_add.json >va_check.txt 2>&1; rc=$?
if [ $rc = 0 ] && has va_check.txt 'vector_add.json: 20 variants, 20 cases'; then ok "check: vector_add is 5 x 4 = 20 variants"
else bad "check vector_add" "exit $rc: $(head -2 va_check.txt)"; fi
"$K" check transpose.json >tr_check.txt 2>&1; rc=$?
if [ $rc = 0 ] && has tr_check.txt 'transpose.json: 390 variants, 390 cases' &&
   has tr_check.txt 'constraint "block_rows <= tile_dim" is false' &&
   has tr_check.txt '12 x block = 2048 threads (64 x 32 x 1), over the 1024 a block may have'; then
    ok "check: transpose is 432 combinations, 42 left out by the constraints of \"custom\""
else bad "check transpose" "exit $rc: $(head -3 tr_check.txt)"; fi

# --- axes: the family the config makes ------------------------------------
"$K" axes transpose.json >axes.txt 2>&1; rc=$?
if [ $rc = 0 ] && has axes.txt '^transpose -- a user' && has axes.txt '16, 32, 64' && has axes.txt '^  height '; then
    ok "axes transpose.json: its params with their listed values, and its sizes"
else bad "axes" "exit $rc: $(head -3 axes.txt)"; fi

# The transpose tests below use 36 of its 390 variants (CI compiles them all
# with NVRTC): no vector loads, no unrolling, tiles up to 64, pad 0 or 1.
TRSUB="--set vec=1 --set unroll=0 --set tile_dim=[16,32,64] --set pad=[0,1]"

# --- check --compile: NVRTC compiles every variant ------------------------
for c in vector_add:20 transpose:32 scale:2; do
    f=${c%%:*}
    want=${c#*:}
    sub=
    [ $f = transpose ] && sub=$TRSUB
    "$K" check $f.json $sub --compile >${f}_comp.txt 2>&1; rc=$?
    n=$(grep -c '^  compiled' ${f}_comp.txt)
    if [ $rc = 0 ] && [ "$n" = "$want" ]; then ok "check --compile: $f's $want variants compiled"
    else bad "check --compile $f" "exit $rc, $n compiled: $(tail -2 ${f}_comp.txt)"; fi
done

# --- a template entry the source never instantiates (apply<Twice>, a type of
# the user's own): NVRTC's name expression instantiates it, and its lowered
# name, kept beside each cubin, is what the worker looks up ------------------
"$K" check apply.json --compile >apply_comp.txt 2>&1; rc=$?
nn=$(cat "$KFORGE_CACHE_DIR"/*.names 2>/dev/null | grep -c "^apply<Twice>	_Z5applyI5TwiceEvPfPKfi$")
"$K" gen apply.json --set block_size_x=128 >apply_gen.txt 2>&1
if [ $rc = 0 ] && [ "$(grep -c '^  compiled' apply_comp.txt)" = 3 ] && [ "$nn" -ge 3 ] &&
   [ "$(grep -v "^$" apply_gen.txt | tail -1)" = "//!kforge name-expression apply<Twice>" ]; then
    ok "a template never instantiated in the source: apply<Twice> compiled, lowered _Z5applyI5TwiceEvPfPKfi kept"
else bad "name expression apply<Twice>" "exit $rc, $nn names: $(tail -2 apply_comp.txt; tail -1 apply_gen.txt)"; fi

# gen of several variants of a C++ entry: one translation unit, each copy in
# a namespace named after the entry made an identifier, the entry not renamed
"$K" gen apply.json >apply_multi.cu 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^namespace apply_Twice__v[0-2]_ns {$' apply_multi.cu)" = 3 ] &&
   ! grep -q '^#define apply<' apply_multi.cu &&
   { ! [ -x "${CUDA:-/usr/local/cuda}/bin/nvcc" ] ||
     "${CUDA:-/usr/local/cuda}/bin/nvcc" -arch=sm_90 -c -x cu apply_multi.cu -o apply_multi.o >apply_nvcc.txt 2>&1; }; then
    ok "gen of 3 variants of apply<Twice>: namespaces apply_Twice__v0_ns.. that compile as one unit"
else bad "gen of several C++ variants" "exit $rc: $(grep -n 'namespace\|define apply' apply_multi.cu | head -3; head -3 apply_nvcc.txt 2>/dev/null)"; fi

# --- gen: the #defines, then #line and the user's file ---------------------
"$K" gen transpose.json --set tile_dim=32 --set block_rows=8 --set pad=1 --set vec=1 --set unroll=0 >gen.txt 2>&1
if has gen.txt '^#define tile_dim 32$' && has gen.txt '^#define block_rows 8$' && has gen.txt '^#define pad 1$' &&
   has gen.txt '^#line 1 "transpose.cu"$' && has gen.txt 'extern "C" __global__ void transpose' &&
   [ "$(grep -n '^#line' gen.txt | cut -d: -f1)" -gt "$(grep -n '^#define pad' gen.txt | cut -d: -f1)" ]; then
    ok "gen: #define tile_dim 32 ... then #line 1 \"transpose.cu\" and the source"
else bad "gen" "$(head -12 gen.txt)"; fi

# --- run: every case verified; results keyed by the family's name ---------
"$K" run vector_add.json --results va.jsonl -q >va_run.txt 2>&1; rc=$?
n=$(grep -c '"status":"ok"' va.jsonl)
if [ $rc = 0 ] && [ "$n" = 20 ] && has va.jsonl '"kernel":"vector_add","block_size_x":64,"per_thread":1,"n":16777216'; then
    ok "run: vector_add's 20 cases ok, keyed kernel vector_add, block_size_x, per_thread, n"
else bad "run vector_add" "exit $rc, $n ok: $(tail -2 va_run.txt)"; fi
"$K" run scale.json --results scale.jsonl -q >scale_run.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '"status":"ok"' scale.jsonl)" = 2 ] && has scale.jsonl '"kernel":"scale_f32"'; then
    ok "run: a C++ template entry (scale<float>) named scale_f32"
else bad "run scale" "exit $rc: $(tail -2 scale_run.txt)"; fi

# --- tune, resume, database, best ------------------------------------------
"$K" tune transpose.json $TRSUB --results tune.jsonl -q --format jsonl >tune1.txt 2>&1; rc=$?
n1=$(grep -c . tune.jsonl)
"$K" tune transpose.json $TRSUB --results tune.jsonl -q --format jsonl >tune2.txt 2>&1; rc2=$?
n2=$(grep -c . tune.jsonl)
if [ $rc = 0 ] && [ $rc2 = 0 ] && [ "$n1" = 32 ] && [ "$n2" = 32 ] &&
   has tune1.txt '"label": "tile_dim=64,block_rows=8,pad=1,vec=1,unroll=0"' && has tune2.txt '"from_results": 32' &&
   has tune2.txt '"measured_cases": 0'; then
    ok "tune: the best of 32 transposes; run again, it resumes and measures nothing"
else bad "tune" "exit $rc/$rc2, $n1/$n2 lines: $(tail -2 tune1.txt | cut -c1-300)"; fi
if grep -q '"kernel": "transpose",' db/*.json && grep -q '"tile_dim": 64,' db/*.json; then
    ok "database: an entry for kernel transpose"
else bad "database" "$(head -c 400 db/*.json)"; fi
"$K" best --kernel transpose.json --width 8192 --height 8192 >best.txt 2>best.err; rc=$?
"$K" best --kernel transpose.json --width 4096 --height 4096 >near.txt 2>near.err; rc2=$?
if [ $rc = 0 ] && has best.txt '"block_rows": 8,' && has best.txt '"pad": 1,' && [ $rc2 = 0 ] &&
   has near.err 'using the one tuned for the nearest size, width=8192 height=8192'; then
    ok "best --kernel transpose.json: the tuned variant at 8192x8192, and the nearest for 4096x4096"
else bad "best" "exit $rc/$rc2: $(cat best.err near.err | head -3)"; fi

# --- export: the tuned parameter table and the nearest-shape lookup -----------
"$K" tune transpose.json $TRSUB --set width=4096 --set height=16384 --results tune2.jsonl -q >/dev/null 2>&1
"$K" export --kernel transpose.json -o transpose_tuned.h >export.txt 2>&1; rc=$?
cat >use_export.c <<'C'
#include <stdio.h>
#include "transpose_tuned.h"
int main(void)
{
    long long q[][2] = {{8192, 8192}, {4096, 16384}, {6000, 9000}, {3000, 20000}, {16384, 1024}, {100, 100000}};
    for (int i = 0; i < 6; i++) {
        const kforge_transpose_params *p = kforge_transpose_lookup(q[i][0], q[i][1]);
        printf("%lld %lld -> %lld %lld tile_dim=%lld block_rows=%lld pad=%lld\n", q[i][0], q[i][1], p->width,
               p->height, p->tile_dim, p->block_rows, p->pad);
    }
    return 0;
}
C
agree=yes
if [ $rc = 0 ] && cc -std=c11 -Wall -Wextra -Werror use_export.c -o use_export -lm 2>cc.txt && ./use_export >use.txt; then
    while read -r w h arrow tw th td br pd; do
        "$K" best --kernel transpose.json --width "$w" --height "$h" >b.json 2>b.err || agree="best failed at $w x $h"
        want="$w $h"
        if grep -q 'nearest size' b.err; then
            want=$(sed -n 's/.*nearest size, width=\([0-9]*\) height=\([0-9]*\).*/\1 \2/p' b.err)
        fi
        [ "$want" = "$tw $th" ] || agree="$w x $h: the header picks $tw x $th, best $want"
        grep -q "\"${td%%=*}\": ${td#*=}," b.json && grep -q "\"${br%%=*}\": ${br#*=}," b.json || agree="$w x $h: $td $br differ from best"
    done <use.txt
else agree="exit $rc: $(head -3 export.txt cc.txt)"; fi
if [ "$agree" = yes ] && has transpose_tuned.h 'tile_dim' && has export.txt '2 shapes tuned'; then
    ok "export --kernel transpose.json: a parameter table that compiles, whose lookup picks what kforge best picks at 6 shapes"
else bad "export" "$agree"; fi

# --- compare and merge know a custom kernel's results through --kernel ----
"$K" compare va.jsonl va.jsonl --kernel vector_add.json >cmp.txt 2>&1; rc=$?
"$K" compare va.jsonl va.jsonl >nocmp.txt 2>&1
"$K" merge va.jsonl --kernel vector_add.json --no-db >merge.txt 2>&1; rc2=$?
if [ $rc = 0 ] && ! has cmp.txt 'not results' && has cmp.txt 'block_size_x' && has nocmp.txt '20 lines of the kernel "vector_add", .*--kernel CONFIG' &&
   [ $rc2 = 0 ] && has merge.txt '20 cases'; then
    ok "compare and merge --kernel vector_add.json: the 20 cases matched and merged (without it: lines of an unknown kernel, and --kernel named)"
else bad "compare/merge" "exit $rc/$rc2: $(head -3 cmp.txt merge.txt)"; fi

# --- a planted unwritten output is caught (the fake GPU's model) ----------
KFORGE_PLANT='drop_last@*' "$K" run vector_add.json --set block_size_x=256 --set per_thread=2 --set n=1000 \
    --no-results --format jsonl >plant.txt 2>&1; rc=$?
if [ $rc = 1 ] && has plant.txt '"status":"wrong","message":"wrong result on the exact data: 1 of 1000 outputs wrong; worst at c\[999\]'; then
    ok "planted: the unwritten c[999] is caught (exit 1)"
else bad "planted" "exit $rc: $(cut -c1-300 plant.txt)"; fi
# the same over 2^21 + 3 outputs: compared in pieces on every CPU, the one
# wrong element (in the last piece) still counted once and named
KFORGE_PLANT='drop_last@*' "$K" run vector_add.json --set block_size_x=256 --set per_thread=2 --set n=2097155 \
    --no-results --format jsonl >plant2.txt 2>&1; rc=$?
if [ $rc = 1 ] && has plant2.txt '"message":"wrong result on the exact data: 1 of 2097155 outputs wrong; worst at c\[2097154\]'; then
    ok "planted: over 2^21 + 3 outputs compared in pieces, the unwritten c[2097154] is caught"
else bad "planted in pieces" "exit $rc: $(cut -c1-300 plant2.txt)"; fi

# --- bad input: the file, the field, what was expected; exit 2 ------------
# each: a name, a sed over vector_add.json (or a source), the message expected
# --- inputs and the answer from .npy files (Kernel Tuner's arguments and answer) --
python3 - <<'PY'
import struct
def npy(path, code, fmt, vals, shape=None):
    shape = shape or (len(vals),)
    head = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (code, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))
a = [i * 0.5 for i in range(1000)]
b = [1.0 - i * 0.25 for i in range(1000)]
npy("a.npy", "<f4", "f", a)
npy("b.npy", "<f4", "f", b, (10, 100))
npy("c.npy", "<f4", "f", [x + y for x, y in zip(a, b)])
npy("c64.npy", "<f8", "d", [x + y for x, y in zip(a, b)])
PY
sed -e 's|"fill": {"random": \[-1, 1\]}}, *$|XX|' vector_add.json | python3 -c '
import json, sys
c = json.load(open("vector_add.json"))
c["custom"]["args"][1]["fill"] = {"npy": "a.npy"}
c["custom"]["args"][2]["fill"] = {"npy": "b.npy"}
c["custom"]["reference"] = {"expected": {"c": "c.npy"}}
c["defaults"] = {"n": 1000}
json.dump(c, open("va_npy.json", "w"))
c["custom"]["reference"] = {"expected": {"c": "c64.npy"}}
json.dump(c, open("b_npy_dtype.json", "w"))
c["custom"]["reference"] = {"expected": {"a": "c.npy"}}
json.dump(c, open("b_npy_role.json", "w"))
'
"$K" run va_npy.json --set block_size_x=128 --set per_thread=2 --no-results --format jsonl >npy.txt 2>&1; rc=$?
KFORGE_PLANT='drop_last@*' "$K" run va_npy.json --set block_size_x=128 --set per_thread=2 --no-results \
    --format jsonl >npy_plant.txt 2>&1; rc2=$?
"$K" run va_npy.json --set block_size_x=128 --set per_thread=2 --set n=999 --no-results >npy_len.txt 2>&1; rc3=$?
if [ $rc = 0 ] && has npy.txt '"status":"ok"' && has npy.txt '"ref_value":"1"' && [ $rc2 = 1 ] &&
   has npy_plant.txt 'worst at c\[999\]: GPU [^,]*, reference 250.75' &&
   has npy_len.txt 'args\[0\] (c).length = 999 here, its .npy file holds 1000 elements'; then
    ok "npy: inputs and the answer from .npy files; a planted fault caught against it; a length that disagrees skipped"
else bad "npy" "exit $rc/$rc2/$rc3: $(head -c 300 npy.txt; head -c 300 npy_plant.txt; head -2 npy_len.txt)"; fi

# --- bfloat16 and float16 buffers and scalars ---------------------------------
# axpy_half.cu includes <cuda_fp16.h> and <cuda_bf16.h> (NVRTC searches the
# CUDA toolkit's include directory); values are rounded to nearest even
for f in axpy_f16 axpy_bf16; do
    "$K" check $f.json --compile >${f}_comp.txt 2>&1; rc=$?
    n=$(grep -c '^  compiled' ${f}_comp.txt)
    if [ $rc = 0 ] && [ "$n" = 4 ] && has ${f}_comp.txt "^  reference compiled  $f.reference ref_block=128"; then
        ok "check --compile: $f's 4 variants (2-byte float buffers and scalar) and its reference kernel compiled"
    else bad "check --compile $f" "exit $rc, $n compiled: $(tail -2 ${f}_comp.txt)"; fi
done
python3 - <<'PY'
import json, struct
def npy(path, code, fmt, vals):
    head = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (code, len(vals))
    head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))
def bf16(x):  # exact for these values: the upper half of the float's bits
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
x = [(i % 64) * 0.25 - 8 for i in range(1000)]       # exact in both 2-byte types
y = [(i % 7) * 0.5 for i in range(1000)]
ans = [0.75 * a + b for a, b in zip(x, y)]            # exact too: what axpy gives
npy("x_f16.npy", "<f2", "e", x); npy("y_f16.npy", "<f2", "e", y); npy("ans_f16.npy", "<f2", "e", ans)
npy("x_bf16.npy", "<u2", "H", [bf16(v) for v in x]); npy("y_bf16.npy", "|V2", "H", [bf16(v) for v in y])
npy("ans_bf16.npy", "<V2", "H", [bf16(v) for v in ans])
npy("x_f32.npy", "<f4", "f", x)
for t in ("f16", "bf16"):
    c = json.load(open("axpy_%s.json" % t))
    c["defaults"] = {"n": 1000}
    args = c["custom"]["args"]
    args[0]["fill"] = {"constant": 0.1}
    args[1]["fill"] = "zeros"
    json.dump(c, open("h_const_%s.json" % t, "w"))
    args[0]["fill"] = {"npy": "y_%s.npy" % t}
    args[1]["fill"] = {"npy": "x_%s.npy" % t}
    c["custom"]["reference"] = {"expected": {"y": "ans_%s.npy" % t}}
    json.dump(c, open("h_npy_%s.json" % t, "w"))
    args[1]["fill"] = {"npy": "x_f32.npy"}
    json.dump(c, open("b_h_npy_%s.json" % t, "w"))
PY
# a constant 0.1 rounds to 0.0999755859375 in float16, 0.10009765625 in bfloat16
# (the fake GPU returns an inout's input as the kernel's output)
"$K" run h_const_f16.json --set block_size_x=128 --set per_thread=1 --no-results --format jsonl >h16.txt 2>&1; rc=$?
"$K" run h_const_bf16.json --set block_size_x=128 --set per_thread=1 --no-results --format jsonl >hb16.txt 2>&1; rc2=$?
if [ $rc = 0 ] && [ $rc2 = 0 ] && has h16.txt '"status":"ok"' && has h16.txt '"gpu_value":"0.0999755859"' &&
   has hb16.txt '"status":"ok"' && has hb16.txt '"gpu_value":"0.100097656"'; then
    ok "float16 and bfloat16: a constant fill rounds to nearest (0.0999755859, 0.100097656)"
else bad "2-byte constant fill" "exit $rc/$rc2: $(head -c 400 h16.txt; head -c 400 hb16.txt)"; fi
# .npy of '<f2' for float16; bfloat16's bits as '<u2', '|V2' or '<V2'
"$K" run h_npy_f16.json --no-results --format jsonl >hn16.txt 2>&1; rc=$?
"$K" run h_npy_bf16.json --no-results --format jsonl >hnb16.txt 2>&1; rc2=$?
KFORGE_PLANT='drop_last@*' "$K" run h_npy_bf16.json --set block_size_x=128 --set per_thread=1 --no-results \
    --format jsonl >hnp.txt 2>&1; rc3=$?
if [ $rc = 0 ] && [ $rc2 = 0 ] && [ "$(grep -c '"status":"ok"' hn16.txt)" = 4 ] &&
   [ "$(grep -c '"status":"ok"' hnb16.txt)" = 4 ] && [ $rc3 = 1 ] &&
   has hnp.txt 'worst at y\[999\]: GPU [^,]*, reference 3.8125 '; then
    ok "2-byte .npy: float16 '<f2', bfloat16 '<u2', '|V2' and '<V2'; an unwritten y[999] caught against the answer (3.8125)"
else bad "2-byte npy" "exit $rc/$rc2/$rc3: $(head -c 300 hn16.txt; head -c 300 hnb16.txt; head -c 300 hnp.txt)"; fi

# --- flops: GFLOP/s and % of the device's FP32 peak ------------------------------
# axpy_f16.json gives "flops": "2 * n"; the fake device is an H100 SXM:
# 132 SMs x 1980 MHz x 128 FP32 lanes x 2 = 66908.16 GFLOP/s
"$K" run axpy_f16.json --set n=4096 --results fl.jsonl -q >fl1.txt 2>&1; rc=$?
"$K" run axpy_f16.json --set n=4096 --results fl.jsonl --resume >fl_table.txt 2>&1; rc2=$?  # read back
"$K" run vector_add.json --set n=4096 --set block_size_x=64 --set per_thread=1 --results flva.jsonl >flva.txt 2>&1
"$K" run axpy_f16.json --set n=4096 --no-results --format csv >fl.csv 2>/dev/null
python3 - fl.jsonl flva.jsonl >flcheck.txt 2>&1 <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 4, len(lines)
for o in lines:
    g = 2 * 4096 / (o["median_ms"] * 1e-3) / 1e9
    assert abs(o["gflops"] - g) <= 1e-9 * g, (o["gflops"], g)
    assert abs(o["pct_peak_flops"] - g / 66908.16 * 100) <= 1e-9 * g, o["pct_peak_flops"]
    assert o["peak_gflops"] == 66908.16, o["peak_gflops"]
va = json.loads(open(sys.argv[2]).readline())
assert "gflops" not in va and "pct_peak_flops" not in va and "peak_gflops" not in va, va
print("flops ok")
PY
if [ $rc = 0 ] && [ $rc2 = 0 ] && has flcheck.txt 'flops ok' && has fl_table.txt 'GB/s  % peak  GFLOP/s  % FP32$' &&
   has fl_table.txt '  4\.1     0\.0$' && has fl_table.txt 'FP32 peak 66908 GFLOP/s' && ! has flva.txt 'GFLOP/s' &&
   head -1 fl.csv | grep -q ',gbps,pct_peak,gflops,pct_peak_flops,'; then
    ok "flops: gflops = 2n / median, % of the FP32 peak 66908.16 (line, table, csv, read back); none for a kernel without flops"
else bad "flops" "exit $rc/$rc2: $(cat flcheck.txt; head -3 fl_table.txt flva.txt)"; fi
"$K" tune axpy_f16.json --set n=4096 --results flt.jsonl -q --format json >fltune.json 2>&1; rc=$?
"$K" best --kernel axpy_f16.json --n 4096 >flbest.txt 2>&1; rc2=$?
"$K" merge flt.jsonl --kernel axpy_f16.json --no-db >flmerge.txt 2>&1; rc3=$?
if [ $rc = 0 ] && grep -q '"gflops": [0-9]' fltune.json && grep -q '"kernel": "axpy_f16",' db/*.json &&
   grep -q '"gflops": [0-9]' db/*.json && [ $rc2 = 0 ] && has flbest.txt ' GFLOP/s, deterministic' && [ $rc3 = 0 ] &&
   has flmerge.txt 'GB/s  % peak    GFLOP/s    blocks'; then
    ok "flops: tune's summary, the database entry, best's description and merge carry GFLOP/s"
else bad "flops carried" "exit $rc/$rc2/$rc3: $(head -c 300 fltune.json; head -3 flbest.txt flmerge.txt)"; fi
if grep -q '"gflops"' db/*.json && ! python3 -c '
import json, glob, sys
for f in glob.glob("db/*.json"):
    for e in json.load(open(f))["entries"]:
        if e["kernel"] != "axpy_f16" and "gflops" in e:
            sys.exit(0)
sys.exit(1)'; then ok "flops: database entries of kernels without flops have no gflops"
else bad "flops in the database" "$(grep -c gflops db/*.json)"; fi

# --- a reference kernel of its own: another source, entry, params and launch ---
"$K" gen axpy_f16.json --reference >gref.txt 2>&1; rc=$?
"$K" gen vector_add.json --reference >gref_va.txt 2>&1; rc2=$?
"$K" gen va_npy.json --reference >gref_npy.txt 2>&1; rc3=$?
if [ $rc = 0 ] && has gref.txt '^#define ref_block 128$' && has gref.txt '^#line 1 "axpy_ref.cu"$' &&
   has gref.txt 'void axpy_ref_f16(' && ! has gref.txt '^//   block_size_x' && has gref.txt '^#define block_size_x 128$' &&
   [ $rc2 = 0 ] &&
   has gref_va.txt '^#define block_size_x 256$' && has gref_va.txt '^#define per_thread 1$' && [ $rc3 = 2 ] &&
   has gref_npy.txt 'va_npy.json: the vector_add family has no reference kernel'; then
    ok "gen --reference: axpy_ref.cu with its #define ref_block 128 (and Kernel Tuner's block_size_x, its own block); vector_add's parameter set; none for .npy answers (exit 2)"
else bad "gen --reference" "exit $rc/$rc2/$rc3: $(head -8 gref.txt; head -3 gref_va.txt gref_npy.txt)"; fi
"$K" run axpy_f16.json --set n=4096 --no-results --format jsonl >refrun.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '"status":"ok"' refrun.txt)" = 4 ] && has refrun.txt '"kernel":"axpy_f16"'; then
    ok "run: a custom kernel whose reference is a kernel of its own (the fake GPU runs neither)"
else bad "run with a reference kernel" "exit $rc: $(head -c 300 refrun.txt)"; fi
# the reference's lengths must be the candidates' (a name in both with other values)
python3 - <<'PY'
import json
c = json.load(open("axpy_f16.json"))
c["custom"]["params"]["pad"] = [0]
for a in c["custom"]["args"][:2]:
    a["length"] = "n + pad"
c["custom"]["reference"]["params"]["pad"] = 1
json.dump(c, open("ref_len.json", "w"))
PY
"$K" check ref_len.json >reflen.txt 2>&1; rc=$?
if has reflen.txt "reference: y's length is 1000004 for the reference kernel, 1000003 for this variant: both run on the same buffers"; then
    ok "a reference kernel whose buffers would be longer than the candidates': the cases are left out, with the reason"
else bad "reference lengths" "exit $rc: $(head -5 reflen.txt)"; fi
# a compile error in the reference's source: check --compile says so (exit 1)
sed 's/__float2half_rn(/__float2half_rn(no_such + /' axpy_ref.cu >axpy_ref_broken.cu
sed 's/"axpy_ref.cu"/"axpy_ref_broken.cu"/' axpy_f16.json >ref_broken.json
"$K" check ref_broken.json --compile >refbroken.txt 2>&1; rc=$?
if [ $rc = 1 ] && [ "$(grep -c '^  compiled' refbroken.txt)" = 4 ] &&
   has refbroken.txt '^  reference FAILED    axpy_f16.reference ref_block=128: .*identifier "no_such" is undefined'; then
    ok "check --compile: the reference kernel's compile error is reported (exit 1)"
else bad "reference compile error" "exit $rc: $(tail -3 refbroken.txt)"; fi

# --- per-buffer tolerances: a known error from the .npy answer --------------
# KFORGE_PLANT=shift (fake GPU): the first output's element 0 takes element
# 1's value; with va_npy.json's files c[0] = 1 and c[1] = 1.25: an error of
# 0.25, which vector_add's config-wide tolerance (rtol 0, atol 0) rejects
python3 - <<'PY'
import json
c = json.load(open("va_npy.json"))
c["custom"]["args"][0]["tolerance"] = {"atol": 0.3}
json.dump(c, open("tol_buf_accepts.json", "w"))
c["custom"]["args"][0]["tolerance"] = {"rtol": 0.25}
json.dump(c, open("tol_buf_rtol.json", "w"))
c["custom"]["tolerance"] = {"rtol": 0, "atol": 1}
c["custom"]["args"][0]["tolerance"] = {"atol": 0.1}
json.dump(c, open("tol_buf_rejects.json", "w"))
del c["custom"]["args"][0]["tolerance"]
json.dump(c, open("tol_global_accepts.json", "w"))
c = json.load(open("va_npy.json"))
c["custom"]["args"][1]["tolerance"] = {"atol": 1}
json.dump(c, open("b_tol_in.json", "w"))
c = json.load(open("va_npy.json"))
c["custom"]["args"][0]["tolerance"] = {"atoll": 1}
json.dump(c, open("b_tol_key.json", "w"))
c["custom"]["args"][0]["tolerance"] = {"atol": -1}
json.dump(c, open("b_tol_neg.json", "w"))
c["custom"]["args"][0]["tolerance"] = 0.1
json.dump(c, open("b_tol_num.json", "w"))
c = json.load(open("vector_add.json"))
for a in c["custom"]["args"][:3]:
    a["dtype"] = "int32"
    a.pop("fill", None)
c["custom"]["args"][0]["tolerance"] = {"atol": 1}
json.dump(c, open("b_tol_int.json", "w"))
PY
tolrun() { # config out: a shifted c[0] on the fake GPU
    KFORGE_PLANT='shift@*' "$K" run "$1" --set block_size_x=128 --set per_thread=2 --no-results --format jsonl >"$2" 2>&1
}
tolrun va_npy.json tol0.txt; rc0=$?
tolrun tol_buf_accepts.json tol1.txt; rc1=$?
tolrun tol_buf_rtol.json tol2.txt; rc2=$?
tolrun tol_global_accepts.json tol3.txt; rc3=$?
tolrun tol_buf_rejects.json tol4.txt; rc4=$?
if [ $rc0 = 1 ] && has tol0.txt 'worst at c\[0\]: GPU 1.25, reference 1 (|error| 0.25, tolerance 0)' &&
   [ $rc1 = 0 ] && has tol1.txt '"status":"ok"' && [ $rc2 = 0 ] && has tol2.txt '"status":"ok"'; then
    ok "tolerance: c's own {atol: 0.3} (or {rtol: 0.25} with the config's atol 0) accepts the 0.25 error the config's rejects"
else bad "buffer tolerance accepts" "exit $rc0/$rc1/$rc2: $(head -c 300 tol0.txt; head -c 300 tol1.txt; head -c 300 tol2.txt)"; fi
if [ $rc3 = 0 ] && has tol3.txt '"status":"ok"' && [ $rc4 = 1 ] &&
   has tol4.txt 'worst at c\[0\]: GPU 1.25, reference 1 (|error| 0.25, tolerance 0.1)'; then
    ok "tolerance: c's own {atol: 0.1} rejects the 0.25 error the config's {atol: 1} accepts"
else bad "buffer tolerance rejects" "exit $rc3/$rc4: $(head -c 300 tol3.txt; head -c 300 tol4.txt)"; fi

expect2() { # name config message (an error inside "custom" names its line too: "F: line N: custom...")
    "$K" check "$2" >bad.txt 2>&1; rc=$?
    if [ $rc = 2 ] && sed 's/: line [0-9]*: custom/: custom/' bad.txt | grep -qF -- "$3"; then ok "bad input: $1 (exit 2)"
    else bad "bad input: $1" "exit $rc: $(head -2 bad.txt)"; fi
}
expect2 ".npy of another dtype" b_npy_dtype.json "b_npy_dtype.json: custom.reference.expected.c: "
grep -q "holds '<f8' elements, the buffer is float32 ('<f4')" bad.txt || bad "npy dtype message" "$(head -2 bad.txt)"
expect2 ".npy of float32 for a float16 buffer" b_h_npy_f16.json \
    "b_h_npy_f16.json: custom.args[1] (x).fill: x_f32.npy holds '<f4' elements, the buffer is float16 ('<f2')"
expect2 ".npy of float32 for a bfloat16 buffer" b_h_npy_bf16.json \
    "holds '<f4' elements, the buffer is bfloat16 ('<u2', its bits as uint16, or '|V2')"
expect2 ".npy answer for an input" b_npy_role.json 'b_npy_role.json: custom.reference.expected.a: not an out or inout buffer of "args"'
expect2 "a tolerance on an input" b_tol_in.json \
    'b_tol_in.json: custom.args[1] (a).tolerance: only an out or inout buffer is compared: an input takes no tolerance'
expect2 "a tolerance on an integer buffer" b_tol_int.json \
    'b_tol_int.json: custom.args[0] (c).tolerance: a int32 buffer is compared exactly: only a float buffer takes a tolerance'
expect2 "an unknown tolerance key" b_tol_key.json \
    'b_tol_key.json: custom.args[0] (c).tolerance: unknown key "atoll" (did you mean "atol"?) (known: rtol, atol)'
expect2 "a negative atol" b_tol_neg.json 'b_tol_neg.json: custom.args[0] (c).tolerance.atol: expected a number >= 0, got -1'
expect2 "a tolerance that is a number" b_tol_num.json \
    'b_tol_num.json: custom.args[0] (c).tolerance: expected {"rtol": r, "atol": a} (|got - ref| <= atol + rtol |ref|), got 0.1'
python3 - <<'PY'
import json
def variant(name, **ref):
    c = json.load(open("axpy_f16.json"))
    r = c["custom"]["reference"]
    for k, v in ref.items():
        if v is None:
            r.pop(k, None)
        else:
            r[k] = v
    json.dump(c, open(name, "w"))
variant("b_ref_source.json", source="no_such_ref.cu")
variant("b_ref_entry.json", entry="axpy ref")
variant("b_ref_nogrid.json", grid=None)
variant("b_ref_gridparam.json", grid=["(n + block_size_x - 1) / block_size_x"])
variant("b_ref_noblock.json", block=None)
variant("b_ref_blocksize.json", block=["n"])
variant("b_ref_smem.json", smem="4096 / (ref_block - 128)")
variant("b_ref_key.json", sorce="x.cu")
variant("b_ref_parsize.json", params={"n": 1})
variant("b_ref_launch.json", source=None, entry=None, params={"block_size_x": 128, "per_thread": 1})
variant("b_ref_srcnum.json", source=7)
c = json.load(open("axpy_f16.json"))
c["custom"]["args"][2]["value"] = "per_thread * 0.25"
json.dump(c, open("b_ref_scalar.json", "w"))
PY
expect2 "a reference source that does not exist" b_ref_source.json \
    "b_ref_source.json: custom.reference.source: cannot read the reference kernel's source: no_such_ref.cu"
expect2 "a reference entry that is not a name" b_ref_entry.json \
    'b_ref_entry.json: custom.reference.entry: a character that is not part of a name expression: expected a kernel'"'"'s name as NVRTC takes it (a name expression): a C identifier, a qualified name or a template-id, e.g. "vector_add", "ns::kernel" or "scale<float, 4>" (template arguments: names, numbers, ::, *, &, +, -, parentheses, commas and spaces), got "axpy ref"'
expect2 "a reference kernel without a grid" b_ref_nogrid.json \
    'b_ref_nogrid.json: custom.reference.grid: missing: the reference kernel'"'"'s grid in blocks'
expect2 "a reference grid over the candidates' params" b_ref_gridparam.json \
    "b_ref_gridparam.json: custom.reference.grid[0]: '(n + block_size_x - 1) / block_size_x' at position 6: unknown name 'block_size_x'"
expect2 "a reference kernel without a block" b_ref_noblock.json \
    'b_ref_noblock.json: custom.reference.block: missing: give "block" or a reference param block_size_x'
expect2 "a reference block over a size" b_ref_blocksize.json \
    'b_ref_blocksize.json: custom.reference.block: the block may use reference.params only, not sizes'
expect2 "a reference smem that divides by zero" b_ref_smem.json \
    "b_ref_smem.json: custom.reference.smem: reference.smem: '4096 / (ref_block - 128)' at position 6: division by zero"
expect2 "an unknown reference key" b_ref_key.json \
    'b_ref_key.json: custom.reference: unknown key "sorce" (did you mean "source"?)'
expect2 "a reference param named like a size" b_ref_parsize.json \
    'b_ref_parsize.json: custom.reference.params.n: "n" is a size: a reference param needs a name of its own'
expect2 "a reference launch without a kernel of its own" b_ref_launch.json \
    'b_ref_launch.json: custom.reference.grid: a launch of its own goes with a kernel of its own: give the reference'"'"'s "source" and/or "entry"'
expect2 "a reference source that is not a string" b_ref_srcnum.json \
    "b_ref_srcnum.json: custom.reference.source: expected the reference kernel's .cu file, relative to the config"
expect2 "a scalar over the candidates' params" b_ref_scalar.json \
    "b_ref_scalar.json: custom.reference: args[2] (a).value: 'per_thread * 0.25' at position 1: unknown name 'per_thread'"
grep -q "the reference kernel's expressions may use the sizes and reference.params only" bad.txt ||
    bad "reference scalar message" "$(head -2 bad.txt)"
sed 's/"flops": "2 \* n"/"flops": "2 * nn"/' axpy_f16.json >b_flops.json
expect2 "an unknown name in flops" b_flops.json "b_flops.json: custom.flops: '2 * nn' at position 5: unknown name 'nn' (did you mean 'n'?)"
sed 's/"vector_add.cu"/"no_such.cu"/' vector_add.json >b_source.json
expect2 "missing source" b_source.json "b_source.json: custom.source: cannot read the kernel's source: no_such.cu"
sed 's/"12 \* n"/"12 * nn"/' vector_add.json >b_ident.json
expect2 "unknown name in an expression" b_ident.json "b_ident.json: custom.bytes: '12 * nn' at position 6: unknown name 'nn' (did you mean 'n'?)"
sed 's/"grid": \["(n + /"grid": ["(n + tile + /' vector_add.json >b_grid.json
expect2 "unknown param in the grid" b_grid.json "b_grid.json: custom.grid[0]: '(n + tile + "
sed 's/"name": "c", "dtype": "float32"/"name": "c", "dtype": "float8"/' vector_add.json >b_dtype.json
expect2 "bad dtype" b_dtype.json 'b_dtype.json: custom.args[0] (c).dtype: expected a dtype (int32, uint32, int64, float32, float64, bfloat16, float16, int8, uint8), got "float8"'
sed 's/"role": "out"/"role": "output"/' vector_add.json >b_role.json
expect2 "bad role" b_role.json 'b_role.json: custom.args[0] (c).role: expected a role (in, out or inout), got "output"'
grep -v '"entry"' vector_add.json >b_entry.json
expect2 "missing entry" b_entry.json 'b_entry.json: custom.entry: missing: a kernel'"'"'s name as NVRTC takes it (a name expression)'
python3 - <<'PY'
import json
c = json.load(open("vector_add.json"))
del c["custom"]["args"]
json.dump(c, open("b_args.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["args"][3] = {"name": "n", "scalar": "int32"}
json.dump(c, open("b_value.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["args"][1]["fill"] = {"random": [1]}
json.dump(c, open("b_fill.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["params"]["block_size_x"] = []
json.dump(c, open("b_param.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["reference"] = {"params": {"block_size": 64}}
json.dump(c, open("b_ref.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["sizes"] = ["n", "per_thread"]
json.dump(c, open("b_sizes.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["block"] = ["n"]
json.dump(c, open("b_block.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["smem"] = "1024 / (per_thread - 1)"
json.dump(c, open("b_smem.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["grdi"] = 1
json.dump(c, open("b_key.json", "w"))
c = json.load(open("vector_add.json"))
del c["custom"]
json.dump(c, open("b_nocustom.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["reference"] = {"block_size_x": 64}
json.dump(c, open("b_refobj.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["source"] = 'vector_add.cu"\n#include <evil>'
json.dump(c, open("b_path.json", "w"))
PY
expect2 "missing args" b_args.json 'b_args.json: custom.args: missing: the kernel'"'"'s arguments in order'
expect2 "a scalar without a value" b_value.json 'b_value.json: custom.args[3] (n).value: missing: a scalar needs a value'
expect2 "bad fill" b_fill.json 'b_fill.json: custom.args[1] (a).fill: expected {"random": [lo, hi]}, "zeros", "ones", "iota", {"constant": x} or {"npy": "file.npy"}, got {"random":[1]}'
expect2 "a param without values" b_param.json 'b_param.json: custom.params.block_size_x: expected at least one value'
expect2 "a reference param that is not a param" b_ref.json 'b_ref.json: custom.reference.params.block_size: not a parameter of "params"'
expect2 "a reference without params" b_refobj.json 'b_refobj.json: custom.reference: expected {"params": {...}}: a parameter set of the same source, {"source": "naive.cu", "entry": "naive", "grid": [...], ...}: a kernel of its own, or {"expected": {"OUTPUT": "file.npy"}}, got {"block_size_x":64}'
expect2 "a size named like a param" b_sizes.json 'b_sizes.json: custom.sizes[1]: "per_thread" is already a parameter or size'
expect2 "a block that uses a size" b_block.json 'b_block.json: custom.block: the block may use params only, not sizes'
expect2 "division by zero at load time" b_smem.json "b_smem.json: custom.smem: smem: '1024 / (per_thread - 1)' at position 6: division by zero"
expect2 "an unknown key, with a suggestion" b_key.json 'b_key.json: custom: unknown key "grdi" (did you mean "grid"?)'
expect2 "a source name that would break the #line" b_path.json 'b_path.json: custom.source: a file name without control characters, quotes or backslashes'
expect2 "kernel custom without its object" b_nocustom.json 'b_nocustom.json: custom: expected an object describing the kernel'

# --- a compile error: NVRTC's log names the user's file and line ----------
sed 's/c\[i\] = a\[i\] + b\[i\];/c[i] = a[i] + no_such_thing;/' vector_add.cu >broken.cu
sed 's/"vector_add.cu"/"broken.cu"/' vector_add.json >broken.json
"$K" run broken.json --set block_size_x=64 --set per_thread=1 --no-results >broken.txt 2>&1; rc=$?
if [ $rc = 1 ] && has broken.txt 'broken.cu(12): error: identifier "no_such_thing" is undefined' &&
   has broken.txt 'compile_error'; then
    ok "compile error: broken.cu(12) in NVRTC's log, the case compile_error (exit 1)"
else bad "compile error" "exit $rc: $(head -4 broken.txt)"; fi

# --- the same spec twice is one family; a different one under its name is an error
cp vector_add.json again.json
sed 's/"per_thread": \[1, 2, 4, 8\]/"per_thread": [1, 2]/' vector_add.json >other.json
"$K" run vector_add.json again.json --set n=1000 --no-results -q >same.txt 2>&1; rc=$?
"$K" run vector_add.json other.json --set n=1000 --no-results -q >clash.txt 2>&1; rc2=$?
if [ $rc = 0 ] && [ $rc2 = 2 ] &&
   has clash.txt 'custom.name: "vector_add" (vector_add.cu) is already the name of another custom kernel'; then
    ok "one name, one kernel: the same spec twice is one family; a different spec under the name is exit 2"
else bad "same name" "exit $rc/$rc2: $(head -2 same.txt clash.txt)"; fi

# --- example 3: a 2-D convolution with its filter in __constant__ memory ----
# ("constants": the module's d_filter, filled before any launch).  The whole
# space is 3312 variants; compiling them all takes minutes, so --compile,
# run, tune and export take a 16-variant subset (SUB) that still has both
# tilings, padding and the read-only loads.
SUB="--set block_size_x=[16,64] --set block_size_y=[4,16] --set tile_size_x=[1,2] --set tile_size_y=2 --set use_padding=[0,1] --set read_only=1 --set contiguous_x=0"
"$K" check convolution.json >cv_check.txt 2>&1; rc=$?
if [ $rc = 0 ] && has cv_check.txt 'convolution.json: 3312 variants, 3312 cases' &&
   has cv_check.txt 'threads (.*), over the 1024 a block may have' &&
   has cv_check.txt 'constraint "(block_size_x \* tile_size_x + 16 + use_padding) \* (block_size_y \* tile_size_y + 16) \* 4 <= 48 \* 1024" is false'; then
    ok "convolution: check gives 3312 variants (threads <= 1024, the shared tile <= 48 KiB)"
else bad "convolution check" "exit $rc: $(head -2 cv_check.txt)"; fi
"$K" check convolution.json --compile $SUB >cv_comp.txt 2>&1; rc=$?
n=$(grep -c '^  compiled' cv_comp.txt)
if [ $rc = 0 ] && [ "$n" = 16 ]; then ok "convolution: check --compile of a 16-variant subset, each compiled by NVRTC"
else bad "convolution check --compile" "exit $rc, $n compiled: $(tail -2 cv_comp.txt)"; fi
"$K" gen convolution.json --set block_size_x=32 --set block_size_y=4 --set tile_size_x=2 --set tile_size_y=4 \
    --set use_padding=1 --set read_only=0 --set contiguous_x=0 >cv_gen.txt 2>&1
if has cv_gen.txt '^#define tile_size_y 4$' && has cv_gen.txt '^#line 1 "convolution.cu"$' &&
   has cv_gen.txt '^__constant__ float d_filter\[FILTER_H \* FILTER_W\];'; then
    ok "convolution: gen writes the #defines before the source and its __constant__ d_filter"
else bad "convolution gen" "$(head -12 cv_gen.txt)"; fi
"$K" run convolution.json $SUB --results cv.jsonl -q >cv_run.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '"status":"ok"' cv.jsonl)" = 16 ] &&
   has cv.jsonl '"kernel":"convolution","block_size_x":16,"block_size_y":4,"tile_size_x":1,"tile_size_y":2,"use_padding":0,"read_only":1,"contiguous_x":0,"width":4096,"height":4096'; then
    ok "convolution: run of the subset at 4096 x 4096, 16 cases ok, keyed by the six params, width and height"
else bad "convolution run" "exit $rc: $(tail -2 cv_run.txt)"; fi
"$K" tune convolution.json $SUB --results cv_tune.jsonl -q --format jsonl >cv_tune1.txt 2>&1; rc=$?
"$K" tune convolution.json $SUB --results cv_tune.jsonl -q --format jsonl >cv_tune2.txt 2>&1; rc2=$?
if [ $rc = 0 ] && [ $rc2 = 0 ] && [ "$(grep -c . cv_tune.jsonl)" = 16 ] && has cv_tune2.txt '"from_results": 16' &&
   has cv_tune2.txt '"measured_cases": 0' && grep -q '"kernel": "convolution",' db/*.json; then
    ok "convolution: tune of the subset, resumed without measuring again, the best in the database"
else bad "convolution tune" "exit $rc/$rc2: $(tail -2 cv_tune1.txt | cut -c1-300)"; fi
"$K" export --kernel convolution.json -o convolution_tuned.h >cv_export.txt 2>&1; rc=$?
printf '#include "convolution_tuned.h"\nint main(void) { return kforge_convolution_lookup(4096, 4096)->tile_size_x > 0 ? 0 : 1; }\n' >cv_use.c
if [ $rc = 0 ] && has convolution_tuned.h 'long long tile_size_y;' &&
   cc -std=c11 -Wall -Wextra -Werror cv_use.c -o cv_use -lm 2>cv_cc.txt && ./cv_use; then
    ok "convolution: export --kernel writes the tuned table, which compiles and looks up 4096 x 4096"
else bad "convolution export" "exit $rc: $(head -3 cv_export.txt cv_cc.txt)"; fi
KFORGE_PLANT='drop_last@*' "$K" run convolution.json --set block_size_x=64 --set block_size_y=4 --set tile_size_x=2 \
    --set tile_size_y=2 --set use_padding=1 --set read_only=1 --set contiguous_x=0 --set width=200 --set height=77 --no-results \
    --format jsonl >cv_plant.txt 2>&1; rc=$?
if [ $rc = 1 ] && has cv_plant.txt '"status":"wrong","message":"wrong result on the exact data: 1 of 15400 outputs wrong; worst at output\[15399\]'; then
    ok "convolution: a planted unwritten output[15399] of 200 x 77 is caught (exit 1)"
else bad "convolution planted" "exit $rc: $(cut -c1-300 cv_plant.txt)"; fi
# the image, the filter (a constant) and the answer from .npy files: every
# value a multiple of 1/16, so the answer is exact (tests/custom/conv_npy.py)
CONV_JSON=convolution.json python3 "$ROOT"/tests/custom/conv_npy.py 100 37 cv_npy.json >cv_py.txt 2>&1
"$K" run cv_npy.json $SUB --no-results --format jsonl >cv_npy.txt 2>&1; rc=$?
KFORGE_PLANT='drop_last@*' "$K" run cv_npy.json --set block_size_x=16 --set block_size_y=4 --set tile_size_x=1 \
    --set tile_size_y=2 --set use_padding=0 --set read_only=1 --set contiguous_x=0 --no-results --format jsonl >cv_npy_plant.txt 2>&1; rc2=$?
"$K" run cv_npy.json $SUB --set width=101 --no-results >cv_npy_len.txt 2>&1; rc3=$?
want=$(python3 -c 'import struct; d = open("conv_out.npy", "rb").read(); print("%.9g" % struct.unpack("<f", d[-4:])[0])' 2>/dev/null)
if [ $rc = 0 ] && [ "$(grep -c '"status":"ok"' cv_npy.txt)" = 16 ] && [ $rc2 = 1 ] &&
   has cv_npy_plant.txt "worst at output\[3699\]: GPU [^,]*, reference $want" &&
   has cv_npy_len.txt 'args\[0\] (output).length = 3737 here, its .npy file holds 3700 elements'; then
    ok "convolution: image, filter constant and answer from .npy files; a planted fault caught against the answer ($want)"
else bad "convolution npy" "exit $rc/$rc2/$rc3: $(head -c 300 cv_npy.txt; head -c 300 cv_npy_plant.txt; head -2 cv_npy_len.txt)"; fi
# a constant's own .npy file whose length disagrees: that size is skipped, with the reason
python3 - <<'PY'
import json
c = json.load(open("cv_npy.json"))
c["custom"]["constants"][0]["length"] = "16 * 16"
c["custom"]["reference"] = {"params": {}}
c["custom"]["name"] = "convolution_short"
json.dump(c, open("cv_npy_short.json", "w"))
PY
"$K" run cv_npy_short.json --set block_size_x=16 --set block_size_y=4 --set tile_size_x=1 --set tile_size_y=2 \
    --set use_padding=0 --set read_only=1 --set contiguous_x=0 --no-results >cv_short.txt 2>&1; rc=$?
if has cv_short.txt 'constants\[0\] (d_filter).length = 256 here, its .npy file holds 289 elements'; then
    ok "convolution: a constant whose .npy file holds another length is skipped, with the reason"
else bad "constant npy length" "exit $rc: $(head -3 cv_short.txt)"; fi

# --- bad "constants": the file, the field, what was expected; exit 2 ------
python3 - <<'PY'
import json
def variant(name, f):
    c = json.load(open("convolution.json"))
    f(c["custom"])
    json.dump(c, open(name, "w"))
def k0(key, val):
    def f(k):
        if val is None:
            del k["constants"][0][key]
        else:
            k["constants"][0][key] = val
    return f
variant("bc_dtype.json", k0("dtype", "float8"))
variant("bc_length.json", k0("length", None))
variant("bc_param.json", k0("length", "17 * tile_size_x"))
variant("bc_ident.json", k0("length", "17 * filter"))
variant("bc_fill.json", k0("fill", {"random": [1]}))
variant("bc_name.json", k0("name", "d-filter"))
variant("bc_pname.json", k0("name", "tile_size_x"))
variant("bc_key.json", k0("lenght", "17"))
variant("bc_npy.json", k0("fill", {"npy": "no_such.npy"}))
def twice(k):
    k["constants"].append(dict(k["constants"][0]))
variant("bc_twice.json", twice)
def notlist(k):
    k["constants"] = {"name": "d_filter"}
variant("bc_list.json", notlist)
PY
expect2 "constants: a dtype kforge lacks" bc_dtype.json 'bc_dtype.json: custom.constants[0] (d_filter).dtype: expected a dtype (int32, uint32, int64, float32, float64, bfloat16, float16, int8, uint8), got "float8"'
expect2 "constants: no length" bc_length.json 'bc_length.json: custom.constants[0] (d_filter).length: missing: a constant needs a length in elements (an expression over sizes, e.g. "17 * 17")'
expect2 "constants: a length over a param" bc_param.json 'bc_param.json: custom.constants[0] (d_filter).length: a constant'"'"'s length may use sizes only, not params'
expect2 "constants: an unknown name in the length" bc_ident.json "bc_ident.json: custom.constants[0] (d_filter).length: '17 * filter' at position 6: unknown name 'filter'"
expect2 "constants: a bad fill" bc_fill.json 'bc_fill.json: custom.constants[0] (d_filter).fill: expected {"random": [lo, hi]}, "zeros", "ones", "iota", {"constant": x} or {"npy": "file.npy"}, got {"random":[1]}'
expect2 "constants: a name that is no C identifier" bc_name.json 'bc_name.json: custom.constants[0]: expected a "name": the variable'"'"'s name in the source, a C identifier (e.g. "d_filter"), got "d-filter"'
expect2 "constants: a param's name" bc_pname.json 'bc_pname.json: custom.constants[0] (tile_size_x): "tile_size_x" is a parameter'"'"'s name (#defined before the source)'
expect2 "constants: an unknown key, with a suggestion" bc_key.json 'bc_key.json: custom.constants[0] (d_filter): unknown key "lenght" (did you mean "length"?)'
expect2 "constants: a .npy file that is not there" bc_npy.json 'bc_npy.json: custom.constants[0] (d_filter).fill: cannot read the .npy file: no_such.npy'
expect2 "constants: the same name twice" bc_twice.json 'bc_twice.json: custom.constants[1] (d_filter): "d_filter" is already constants[0]'
expect2 "constants: not a list" bc_list.json 'bc_list.json: custom.constants: expected a list of up to 8 {"name", "dtype", "length", "fill"}'
# a parameter or size named as a key of every results line would write the
# key twice: refused by every command that loads the config
python3 - <<'PY'
import json
c = json.load(open("vector_add.json"))
c["custom"]["params"]["time"] = [1]
json.dump(c, open("b_key_param.json", "w"))
c = json.load(open("vector_add.json"))
c["custom"]["sizes"] = ["status"]
for a in c["custom"]["args"]:
    for k in ("length", "value"):
        if isinstance(a.get(k), str):
            a[k] = a[k].replace("n", "status")
c["custom"]["grid"] = [g.replace("n", "status") for g in c["custom"]["grid"]]
c["custom"]["bytes"] = c["custom"]["bytes"].replace("n", "status")
c.setdefault("defaults", {}).pop("n", None)
c["defaults"]["status"] = 1000
json.dump(c, open("b_key_size.json", "w"))
PY
expect2 "a parameter named time" b_key_param.json \
    'b_key_param.json: the parameter "time" of kernel vector_add has the name of a key every results line has'
"$K" tune b_key_param.json --results bk.jsonl >bk.txt 2>&1; rc=$?
if [ $rc = 2 ] && grep -qF 'the parameter "time" of kernel vector_add has the name of a key' bk.txt && [ ! -s bk.jsonl ]; then
    ok "bad input: tune refuses a parameter named time too (exit 2, nothing recorded)"
else bad "tune with a parameter named time" "exit $rc: $(head -2 bk.txt)"; fi
"$K" check b_key_size.json >bad.txt 2>&1; rc=$?
if [ $rc = 2 ] && grep -qF 'has the name of a key every results line has' bad.txt; then
    ok "bad input: a size named status (exit 2)"
else bad "bad input: a size named status" "exit $rc: $(head -2 bad.txt)"; fi

# --- export with a launcher: the kernel once per tuned parameter set -------
# tests/custom/export_launchers.sh tunes vector_add, transpose, convolution,
# scale (a C++ template entry) and once (an extern "C" __device__ helper) at
# shapes that get different parameter sets, and exports each
CUDA=${CUDA:-/usr/local/cuda}
NVCC=$CUDA/bin/nvcc
L="$TMP/launch"
sh "$ROOT/tests/custom/export_launchers.sh" "$K" "$L"
why=
for hs in vector_add:1 transpose:2 convolution:2 scale_f32:1; do
    h=${hs%:*}
    sets=$(grep -c "^// set [0-9]*: " "$L/${h}_tuned.h" 2>/dev/null)
    # the table's distinct parameter sets: each row less its sizes, time and determinism
    distinct=$(sed -n "/^static const kforge_${h}_params kforge_${h}_tuned/,/^};/p" "$L/${h}_tuned.h" | grep '^    {' |
               awk -F', ' -v ns=${hs#*:} '{ s = ""; for (i = ns + 1; i <= NF - 2; i++) s = s $i ","; print s }' |
               sort -u | wc -l)
    { [ "$(cat "$L/${h}_export.rc")" = 0 ] && [ "$sets" -ge 2 ] && [ "$sets" = "$distinct" ] &&
      has "$L/${h}_tuned.h" "^static inline cudaError_t kforge_${h}_launch(" &&
      has "$L/${h}_tuned.h" "^namespace kforge_${h}_v1 {" && ! has "$L/${h}_export.txt" 'left out' &&
      cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c "$L/${h}_tuned.h" 2>"$L/${h}_cc.txt"; } ||
        why="$why $h (exit $(cat "$L/${h}_export.rc"), $sets namespaces, $distinct distinct sets: $(head -c 300 "$L/${h}_export.txt" "$L/${h}_cc.txt"))"
done
if [ -z "$why" ] && has "$L/transpose_tuned.h" '^#define transpose kforge_transpose_v1_transpose$' &&
   has "$L/transpose_tuned.h" '^    case 0: /\* width=310 height=190 \*/$' &&
   has "$L/transpose_tuned.h" '^    case 1: /\* width=300 height=200 \*/$' &&
   has "$L/scale_f32_tuned.h" 'kforge_scale_f32_v1::scale<float><<<' && ! has "$L/scale_f32_tuned.h" '^#define scale' &&
   has "$L/convolution_tuned.h" 'cudaMemcpyToSymbolAsync(kforge_convolution_v0::d_filter, d_filter,' &&
   has "$L/convolution_tuned.h" 'float \*output, const float \*input, const float \*d_filter, cudaStream_t stream)'; then
    ok "export with a launcher: vector_add, transpose, convolution and scale<float> tuned to 2 or more parameter sets, one namespace each (extern \"C\" entries renamed), the table still plain C"
else bad "export with a launcher" "${why:-the header's namespaces or launcher: $(grep -n 'launch\|^#define\|case ' "$L/transpose_tuned.h" | head -5)}"; fi
# a source that cannot be included twice: the table alone, one line on stderr, exit 0
if [ "$(cat "$L/once_export.rc")" = 0 ] &&
   has "$L/once_export.txt" '^kforge export: the launcher is left out, the header holds the parameter table and lookup alone: the source does not compile once per tuned parameter set (2) in one translation unit (NVRTC, sm_90): once.cu(6): error: function "kforge_once_v0::once_add" has already been defined' &&
   [ "$(grep -c 'left out' "$L/once_export.txt")" = 1 ] && ! has "$L/once_tuned.h" 'namespace' &&
   ! has "$L/once_tuned.h" '_launch' && has "$L/once_tuned.h" '^//   the source does not compile once per tuned parameter set' &&
   has "$L/once_tuned.h" '^static inline const kforge_once_params \*kforge_once_lookup(long long n)$' &&
   cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c "$L/once_tuned.h" 2>"$L/once_cc.txt"; then
    ok "export of a source with an extern \"C\" __device__ helper: the table and lookup alone, why on stderr (NVRTC's first error), exit 0"
else bad "export without a launcher" "exit $(cat "$L/once_export.rc"): $(tail -2 "$L/once_export.txt"; head -c 300 "$L/once_cc.txt")"; fi
# a buffer of a dtype the kernel does not take (int32 for its float *c): the table alone, and the mismatch said
python3 -c '
import json
c = json.load(open("vector_add.json"))
c["custom"]["name"] = "va_int"
c["custom"]["args"][0]["dtype"] = "int32"
json.dump(c, open("'"$L"'/va_int.json", "w"))'
(cd "$L" && KFORGE_DB="$L/db" "$K" tune va_int.json --set n=1000 --set block_size_x=128 --set per_thread=1 -q \
    --results va_int.jsonl >/dev/null 2>&1; KFORGE_DB="$L/db" "$K" export --kernel va_int.json -o va_int_tuned.h \
    >/dev/null 2>va_int_export.txt; echo $? >va_int_export.rc)
if [ "$(cat "$L/va_int_export.rc")" = 0 ] && ! has "$L/va_int_tuned.h" 'kforge_va_int_launch(' &&
   has "$L/va_int_export.txt" "the launcher's arguments (the config's dtypes) do not match the kernel's parameters (NVRTC, sm_90): .*argument types are: (void (\*)(float \*, const float \*, const float \*, int), int \*, float \*, float \*, const int)"; then
    ok "export of a kernel whose parameters do not take the config's dtypes: the table alone, the types said (exit 0)"
else bad "export with mismatched dtypes" "exit $(cat "$L/va_int_export.rc"): $(tail -1 "$L/va_int_export.txt")"; fi
if [ -x "$NVCC" ]; then
    # one program calls the four launchers (built, not run: no GPU here; tests/custom_gpu.sh runs it)
    if (cd "$L" && "$NVCC" -std=c++17 -O2 -arch=sm_90 -Xcompiler -Wall,-Wextra -I . -c "$ROOT/tests/custom_launch.cu" \
            -o custom_launch.o >nv_launch.txt 2>&1) && [ ! -s "$L/nv_launch.txt" ]; then
        ok "tests/custom_launch.cu compiles against the four headers with nvcc for sm_90, no warnings"
    else bad "custom_launch.cu with nvcc" "$(head -c 1500 "$L/nv_launch.txt")"; fi
    # the launchers on a stand-in CUDA runtime: each launch is kforge best's parameter set at that shape, with the
    # config's grid, block, shared memory, args and constants worked out at it
    if (cd "$L" && "$NVCC" -std=c++17 -O2 -arch=sm_90 -cudart none -I . "$ROOT/tests/custom_launch_plan.cu" \
            "$ROOT/tests/custom_launch_stub.cpp" -o plan >nv_plan.txt 2>&1); then
        (cd "$L" && python3 - "$K" >plan_check.txt 2>&1 <<'PY'
import json, math, re, struct, subprocess, sys
K = sys.argv[1]
kernels = {"vector_add": ("vector_add", "vector_add.json"), "transpose": ("transpose", "transpose.json"),
           "convolution": ("convolution", "convolution.json"), "scale": ("scale_f32", "scale.json")}
calls = [("vector_add", 1000), ("vector_add", 1000000), ("vector_add", 1), ("vector_add", 31623),
         ("vector_add", 5000000), ("transpose", 300, 200), ("transpose", 310, 190), ("transpose", 1000, 3000),
         ("transpose", 1, 1), ("transpose", 5000, 70), ("transpose", 640, 2049), ("convolution", 100, 37),
         ("convolution", 300, 200), ("convolution", 1, 1), ("convolution", 17, 300), ("convolution", 1000, 3),
         ("scale", 1000), ("scale", 100000), ("scale", 1), ("scale", 77777), ("transpose", 0, 3), ("vector_add", -5)]
out = subprocess.run(["./plan"] + [str(x) for c in calls for x in c], capture_output=True, text=True).stdout
groups, cur = [], []
for line in out.splitlines():
    cur.append(line)
    if line.startswith("call "):
        groups.append(cur)
        cur = []
assert len(groups) == len(calls), out
def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]
fns = {"min": min, "max": max, "log2": math.log2, "pow2": lambda k: 2.0 ** k}
def ev(text, env):
    return float(eval(text.replace("&&", " and ").replace("||", " or "), dict(fns), env))
sets = {}
for k, (name, _) in kernels.items():
    cur, sets[k] = None, {}
    for line in open(name + "_tuned.h"):
        m = re.match(r"namespace kforge_%s_v(\d+) \{" % name, line)
        if m:
            cur = int(m.group(1))
            sets[k][cur] = {}
        elif line.startswith("#line 1 "):
            cur = None
        elif cur is not None and line.startswith("#define "):
            _, p, v = line.split()
            if p in json.load(open(kernels[k][1]))["custom"]["params"]:  # not Kernel Tuner's macros
                sets[k][cur][p] = int(v)
bad = []
for c, lines in zip(calls, groups):
    k, sizes = c[0], c[1:]
    name, cfg = kernels[k]
    conf = json.load(open(cfg))["custom"]
    sn = conf["sizes"]
    what = "%s %s" % (k, " ".join(map(str, sizes)))
    if min(sizes) < 1:
        if lines != ["call %s -> 1" % what]:
            bad.append("%s: want only cudaErrorInvalidValue, got %s" % (what, lines))
        continue
    opts = sum([["--" + s, str(v)] for s, v in zip(sn, sizes)], [])
    best = json.loads(subprocess.run([K, "best", "--db", "db", "--kernel", cfg] + opts, capture_output=True, text=True).stdout)
    P = {p: best[p] for p in conf["params"]}
    env = dict(P)
    env.update(zip(sn, sizes))
    env = {a: float(b) for a, b in env.items()}
    blk = conf.get("block") or [b for b in ("block_size_x", "block_size_y", "block_size_z") if b in P]
    g = [math.floor(ev(e, env)) for e in conf["grid"]] + [1] * (3 - len(conf["grid"]))
    b = [math.floor(ev(e, env)) for e in blk] + [1] * (3 - len(blk))
    smem = math.floor(ev(str(conf["smem"]), env)) if "smem" in conf else 0
    launched = [l for l in lines if l.startswith("launch ")]
    v = int(launched[0].split()[2][1:]) if len(launched) == 1 else -1
    if v not in sets[k] or sets[k][v] != P:
        bad.append("%s: launched set v%d %s, kforge best gives %s" % (what, v, sets[k].get(v), P))
        continue
    args, nb = [], 0
    for a in conf["args"]:
        if "scalar" in a:
            x = ev(str(a["value"]), env)
            args.append("%d" % int(x) if a["scalar"] == "int32" else "%.9g" % f32(x))
        else:
            nb += 1
            args.append("p%d" % nb)
    want = []
    if smem > 48 * 1024:
        want.append("attribute %s v%d 8 %d" % (name, v, smem))
    for q in conf.get("constants", []):
        want.append("constant %s v%d %s %d filter 0 1 s7" % (name, v, q["name"], math.floor(ev(q["length"], env)) * 4))
    want.append("launch %s v%d grid %d %d %d block %d %d %d smem %d s7 args %s" % (name, v, *g, *b, smem, " ".join(args)))
    want.append("call %s -> 0" % what)
    if lines != want:
        bad.append("%s: got %s, want %s" % (what, lines, want))
print("\n".join(bad) if bad else "plan ok: %d calls" % len(calls))
PY
        )
        if has "$L/plan_check.txt" "^plan ok: 22 calls$" && has "$L/transpose_tuned.h" 'cudaFuncSetAttribute(kforge_transpose_v1::'; then
            ok "the launchers on a stand-in CUDA runtime: 20 calls launch kforge best's parameter set with the config's grid, block, shared memory (opting in above 48 KiB), args and __constant__ copy; sizes below 1 refused"
        else bad "the launchers' plan" "$(head -c 1500 "$L/plan_check.txt")"; fi
    else bad "custom_launch_plan.cu with nvcc" "$(head -c 1500 "$L/nv_plan.txt")"; fi
else
    skip "nvcc not found at $NVCC: the launchers are not compiled"
fi

echo "custom_suite: $npass passed, $nfail failed, $nskip skipped"
[ $nfail = 0 ]
