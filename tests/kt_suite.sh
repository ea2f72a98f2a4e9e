#!/bin/sh
# tests/kt_suite.sh -- Kernel Tuner's conventions for a custom kernel
# (issue 37) on the fake GPU: tests/custom/stencil.cu, a stencil that
# writes only the interior of its grid, compiled by NVRTC with the macros
# Kernel Tuner defines (kernel_tuner, block_size_z 1, grid_size_* where the
# grid is over params), "compiler_options" fixed and tunable (the kernel
# #errors when one does not arrive), ceil() in the grid; bad options
# refused with exit 2; an output with "check": false.  The leave-alone
# check itself needs a GPU run (tests/kt_gpu.sh); its logic is test_leave.
#
#   KFORGE=build/kforge sh tests/kt_suite.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-kt.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "kt_suite: files kept in $TMP"; fi' EXIT
export KFORGE_CACHE_DIR="$TMP/cache" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MS SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
cd "$TMP" || exit 2
cp "$ROOT"/tests/custom/stencil.cu "$ROOT"/tests/custom/stencil.json . || exit 2
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }
has() { grep -q -- "$2" "$1"; }
# edit FILE PYTHON: the config as c (the "custom" object as u), changed and written to FILE
edit() {
    python3 - "$1" "$2" <<'PY'
import json, sys
import os
c = json.load(open(os.environ.get("FROM", "stencil.json"))); u = c["custom"]
exec(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PY
}

# --- the macros, the options, ceil(): NVRTC compiles all 18 ---------------
"$K" check stencil.json --compile >comp.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^  compiled ' comp.txt)" = 18 ] && has comp.txt 'reference compiled'; then
    ok "check --compile: 18 variants with kernel_tuner, block_size_z, -DSTENCIL_OPT=1 and the tunable -DSTENCIL_FIVE"
else bad "check --compile stencil" "exit $rc: $(tail -5 comp.txt)"; fi
"$K" gen stencil.json --set block_size_x=32 --set block_size_y=2 --set scale_div=1 --set planted_bug=0 >gen.txt 2>&1
if has gen.txt '^#define kernel_tuner 1$' && has gen.txt '^#define block_size_z 1$' && has gen.txt '^#define grid_size_z 1$' &&
   ! has gen.txt 'grid_size_x' && has gen.txt '^//!kforge nvrtc-option -DSTENCIL_FIVE$' &&
   has gen.txt '^//!kforge nvrtc-option -use_fast_math$'; then
    ok "gen: Kernel Tuner's macros, no grid_size_x for a grid over the sizes, the options that hold"
else bad "gen macros" "$(head -30 gen.txt)"; fi
"$K" gen stencil.json --set block_size_x=32 --set block_size_y=2 --set scale_div=0 --set planted_bug=0 >gen0.txt 2>&1
if ! has gen0.txt 'nvrtc-option -DSTENCIL_FIVE' && has gen0.txt 'nvrtc-option -DSTENCIL_OPT=1'; then
    ok "gen: a tunable option is left out where its \"when\" is false"
else bad "gen when" "$(head -30 gen0.txt)"; fi
edit grid.json 'u["grid"] = ["ceil(1000 / block_size_x)", "37"]; u["params"]["block_size_z"] = [1]'
"$K" gen grid.json --set block_size_x=64 --set block_size_y=1 --set scale_div=0 --set planted_bug=0 >gen2.txt 2>&1
if has gen2.txt '^#define grid_size_x 16$' && has gen2.txt '^#define grid_size_y 37$' &&
   [ "$(grep -c 'define block_size_z' gen2.txt)" = 1 ]; then
    ok "gen: grid_size_x = ceil(1000 / 64) = 16 where the grid is over params; a param block_size_z is not defined twice"
else bad "gen grid_size" "$(head -30 gen2.txt)"; fi
edit noopt.json 'del u["compiler_options"]'
"$K" check noopt.json --compile --set scale_div=0 >noopt.txt 2>&1; rc=$?
if [ $rc = 1 ] && has noopt.txt 'did not reach NVRTC'; then
    ok "without its compiler options the kernel does not compile (the options really reach NVRTC)"
else bad "no options" "exit $rc: $(tail -5 noopt.txt)"; fi

# --- bad compiler options: exit 2, the field and what was expected ---------
i=0
for o in '"-I/etc"' '"-Xptxas=-v"' '"-DX=a b"' '"-DX=$(id)"' '"-maxrregcount={nope}"' '"-maxrregcount=abc"' \
         '{"option": "-ftz=true", "when": "width > 1"}' '{"option": "-ftz=true", "bogus": 1}' '42' \
         '"-DX\\n#include <evil>"'; do
    i=$((i + 1))
    edit bad$i.json "u['compiler_options'] = [json.loads('''$o''')]"
    "$K" check bad$i.json >bad$i.txt 2>&1; rc=$?
    if [ $rc = 2 ] && has bad$i.txt 'bad'$i'.json' && has bad$i.txt 'custom.compiler_options\[0\]'; then
        ok "compiler option $o refused: $(head -c 150 bad$i.txt)"
    else bad "compiler option $o" "exit $rc: $(head -3 bad$i.txt)"; fi
done

# --- run: verified on the fake GPU ----------------------------------------
"$K" run stencil.json --set planted_bug=0 --format json >run.json 2>run.err; rc=$?
n=$(grep -c '"status":"ok"' run.json)
if [ $rc = 0 ] && [ "$n" = 18 ]; then ok "run: 18 stencil variants verified"
else bad "run stencil" "exit $rc, $n ok: $(tail -3 run.err)"; fi

# --- "check": false: Kernel Tuner's None in answer ------------------------
edit unchecked.json 'u["args"].insert(0, {"name": "scratch", "dtype": "float32", "length": "width", "role": "out", "check": False}); u["params"]["planted_bug"] = [0]'
sed 's/float \*x_new, const/float *scratch, float *x_new, const/' stencil.cu >s2.cu && mv s2.cu stencil.cu
"$K" run unchecked.json --set block_size_x=32 --set block_size_y=1 --set scale_div=0 >unc.txt 2>&1; rc=$?
if [ $rc = 0 ]; then ok "an output with \"check\": false runs (it is not compared)"
else bad "check false" "exit $rc: $(tail -3 unc.txt)"; fi
KFORGE_PLANT=drop_last@block_size_x=32 "$K" run unchecked.json --set block_size_x=32 --set block_size_y=1 \
    --set scale_div=0 >uncp.txt 2>&1; rc=$?
if [ $rc = 1 ] && has uncp.txt 'x_new\[36999\]'; then
    ok "a planted unwritten output is aimed at the first compared output (x_new), not the unchecked one, and caught"
else bad "plant with check false" "exit $rc: $(tail -3 uncp.txt)"; fi
j=0
for e in 'u["args"][1]["check"] = "no"' 'u["args"][2]["check"] = False' \
         'u["args"][0]["tolerance"] = {"atol": 1}' 'u["args"][0]["role"] = "in"'; do
    j=$((j + 1))
    FROM=unchecked.json edit unc$j.json "$e"
    "$K" check unc$j.json >unc$j.txt 2>&1; rc=$?
    if [ $rc = 2 ] && has unc$j.txt 'custom.args\[' ; then ok "refused: $e: $(head -c 160 unc$j.txt)"
    else bad "check false refusal $e" "exit $rc: $(head -3 unc$j.txt)"; fi
done

echo "kt_suite: $npass passed, $nfail failed"
[ $nfail = 0 ]
