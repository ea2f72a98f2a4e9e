#!/bin/sh
# tests/kt_suite.sh -- Kernel Tuner's conventions for a custom kernel
# (issue 37) on the fake GPU: tests/custom/stencil.cu, a stencil that
# writes only the interior of its grid, compiled by NVRTC with the macros
# Kernel Tuner defines (kernel_tuner, block_size_z 1, grid_size_* where the
# grid is over params), "compiler_options" fixed and tunable (the kernel
# #errors when one does not arrive), ceil() in the grid; bad options
# refused with exit 2; an output with "check": false; --format t4 of run
# and tune, valid against the T4 schema (tests/data/t4); T1 in: a T1 file
# (tests/custom/t1_saxpy.json) checked, compiled and run, and bad T1 fields
# refused naming the file, the field and what was expected; "size_macros"
# (the sizes as macros, a case at another size skipped).  The leave-alone
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
cp "$ROOT"/tests/custom/stencil.cu "$ROOT"/tests/custom/stencil.json "$ROOT"/tests/custom/t1_saxpy.cu \
   "$ROOT"/tests/custom/t1_saxpy.json . || exit 2
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

# --- "size_macros": the sizes as macros, at the one value compiled for ------
printf '#if !defined(width) || width != 1000 || height != 37\n#error "size_macros did not reach the kernel"\n#endif\n' >sm.cu
sed 's/int width, int height)/int w_arg, int h_arg)/' stencil.cu >>sm.cu   # the body's width and height: the macros
edit sm.json 'u["source"] = "sm.cu"; u["size_macros"] = {"width": 1000, "height": 37}; u["params"]["scale_div"] = [0]'
"$K" gen sm.json --set block_size_x=32 --set block_size_y=1 >smg.txt 2>&1
"$K" run sm.json --set block_size_x=32 --set block_size_y='[1,2]' --no-results >smr.txt 2>&1; rc=$?
"$K" run sm.json --set block_size_x=32 --set block_size_y=1 --set width=512 --no-results >sms.txt 2>&1; rc2=$?
if has smg.txt '^#define width 1000$' && has smg.txt '^#define height 37$' && [ $rc = 0 ] &&
   [ "$(grep -c ' ok ' smr.txt)" = 2 ] && [ $rc2 != 0 ] && has sms.txt 'width = 512 here, the kernel is compiled for width = 1000 (custom.size_macros)'; then
    ok "size_macros: width and height #defined, the kernel compiles and verifies; a case at another width is skipped, naming the key"
else bad "size_macros" "exit $rc/$rc2: $(grep define smg.txt | head -5; tail -3 smr.txt sms.txt)"; fi
"$K" run stencil.json --set block_size_x=32 --set block_size_y=1 --set scale_div=0 --no-results >smn.txt 2>&1
"$K" gen stencil.json --set block_size_x=32 --set block_size_y=1 --set scale_div=0 >smn.txt 2>&1
if ! grep -q '^#define width' smn.txt; then ok "without size_macros no size is #defined"
else bad "no size_macros" "$(grep define smn.txt)"; fi
j=0
for e in 'u["size_macros"] = {"depth": 3}|custom.size_macros.depth: not one of the "sizes" (width, height)' \
         'u["size_macros"] = {"width": 0}|custom.size_macros.width: expected the integer' \
         'u["size_macros"] = {"width": "1000"}|custom.size_macros.width: expected the integer' \
         'u["size_macros"] = ["width"]|custom.size_macros: expected an object'; do
    j=$((j + 1))
    edit smbad$j.json "${e%%|*}"
    "$K" check smbad$j.json >smbad$j.txt 2>&1; rc=$?
    if [ $rc = 2 ] && grep -qF -- "${e#*|}" smbad$j.txt && has smbad$j.txt "smbad$j.json"; then
        ok "size_macros refused (exit 2): $(head -c 160 smbad$j.txt)"
    else bad "size_macros refusal ${e%%|*}" "exit $rc: $(head -3 smbad$j.txt)"; fi
done

# --- loop_unroll_factor: 0 leaves its "#pragma unroll NAME" out, as in Kernel Tuner ---
cat >unr.cu <<'CU'
__global__ void k(float *x, int n) {
    float s = 0;
    #pragma unroll loop_unroll_factor_0
    for (int i = threadIdx.x; i < n; i += 32) s += x[i];
      # pragma  unroll  loop_unroll_factor_1
    for (int i = threadIdx.x; i < n; i += 32) s += 2 * x[i];
    #pragma unroll loop_unroll_factor_00
    for (int i = 0; i < 4; i++) s += i;
#if __LINE__ != 9
#error "the source's lines moved"
#endif
    x[threadIdx.x] = s;
}
CU
cat >unr.json <<'JS'
{"kernel": "custom", "custom": {"source": "unr.cu", "entry": "k",
 "params": {"loop_unroll_factor_0": [0, 8], "loop_unroll_factor_1": [0, 2], "loop_unroll_factor_00": [4], "block_size_x": [32]},
 "sizes": ["n"], "args": [{"name": "x", "dtype": "float32", "length": "n", "role": "inout"},
 {"name": "n", "scalar": "int32", "value": "n"}], "grid": ["1"], "block": ["block_size_x"]}, "defaults": {"n": "1000"}}
JS
"$K" gen unr.json --set loop_unroll_factor_0=0 --set loop_unroll_factor_1=2 >unr0.txt 2>&1
"$K" gen unr.json --set loop_unroll_factor_0=8 --set loop_unroll_factor_1=0 >unr8.txt 2>&1
"$K" check unr.json --compile >unrc.txt 2>&1; rc=$?
if has unr0.txt '^// (kforge: #pragma unroll loop_unroll_factor_0 left out' && ! has unr0.txt '#pragma unroll loop_unroll_factor_0$' &&
   has unr0.txt 'pragma  unroll  loop_unroll_factor_1' && has unr0.txt '#pragma unroll loop_unroll_factor_00' &&
   has unr8.txt '    #pragma unroll loop_unroll_factor_0$' && has unr8.txt '^// (kforge: #pragma unroll loop_unroll_factor_1 left out' &&
   [ $rc = 0 ] && [ "$(grep -c '^  compiled ' unrc.txt)" = 4 ]; then
    ok "loop_unroll_factor params at 0 leave their #pragma unroll line out (blank: the lines keep their numbers); other values stay"
else bad "loop_unroll_factor" "exit $rc: $(grep -n 'unroll' unr0.txt unr8.txt | head; tail -3 unrc.txt)"; fi

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

# --- --format t4: the T4 results format, valid against its schema ---------
t4check() { # FILE N: N results, valid against tests/data/t4/results-schema.json; prints the invalidities
    PYTHONPATH="$ROOT/python/tests" python3 - "$1" "$2" "$ROOT/tests/data/t4/results-schema.json" <<'PY'
import collections, json, sys, schema_check
d = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[3]))
e = schema_check.validate(d, s)
n = len(d["results"])
if e or n != int(sys.argv[2]):
    print("invalid: %d results, %s" % (n, e[:3])); sys.exit(1)
for r in d["results"]:
    if [m["name"] for m in r["measurements"]].count("time") != 1: print("no time:", r); sys.exit(1)
print(" ".join("%s=%d" % kv for kv in sorted(collections.Counter(r["invalidity"] for r in d["results"]).items())))
PY
}
KFORGE_PLANT=drop_last@block_size_x=64 "$K" run stencil.json --results t4run.jsonl --format t4 >run.t4 2>t4.err; rc=$?
if [ $rc = 1 ] && t4check run.t4 18 >t4c.txt && has t4c.txt '^correct=12 correctness=6$'; then
    ok "run --format t4: 18 results valid against the T4 schema, the 6 planted ones invalidity correctness"
else bad "run --format t4" "exit $rc: $(cat t4c.txt; tail -2 t4.err)"; fi
"$K" tune stencil.json --results t4tune.jsonl --no-db --format t4 -q >tune.t4 2>t4.err; rc=$?
"$K" tune stencil.json --results t4tune.jsonl --no-db --format t4 -q >tune2.t4 2>t4.err; rc2=$?
if [ $rc = 0 ] && [ $rc2 = 0 ] && t4check tune.t4 18 >t4c.txt && t4check tune2.t4 18 >>t4c.txt &&
   [ "$(grep -c '"schema_version"' tune.t4)" = 1 ] && ! grep -q 'best' tune.t4; then
    ok "tune --format t4: only the T4 document on stdout, 18 results, and again when every candidate is resumed"
else bad "tune --format t4" "exit $rc/$rc2: $(cat t4c.txt; tail -2 t4.err)"; fi
"$K" run stencil.json --no-results --format t4 >nr.txt 2>&1; rc=$?
"$K" compare --format t4 t4run.jsonl >cmp.txt 2>&1; rc2=$?
if [ $rc = 2 ] && has nr.txt 'not with --no-results' && [ $rc2 = 2 ] && has cmp.txt "unknown format 't4'"; then
    ok "--format t4 is refused with --no-results and by commands other than run and tune (exit 2)"
else bad "t4 refusals" "exit $rc/$rc2: $(head -2 nr.txt cmp.txt)"; fi

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

# --- T1 in: a T1 file is a config --------------------------------------------
"$K" check t1_saxpy.json --compile >t1c.txt 2>&1; rc=$?
if [ $rc = 0 ] && has t1c.txt 't1_saxpy.json: 11 variants' && [ "$(grep -c '^  compiled ' t1c.txt)" = 11 ] &&
   has t1c.txt 'reference compiled  saxpy BLOCK_SIZE=64,WORK=1'; then
    ok "T1: Values as Python (+, range, a comprehension), Conditions (and, not, //): 11 variants compiled with its CompilerOptions; the reference is the Default"
else bad "T1 check" "exit $rc: $(head -3 t1c.txt)"; fi
"$K" gen t1_saxpy.json --set BLOCK_SIZE=32 --set WORK=2 >t1g.txt 2>&1
if has t1g.txt '^#define grid_size_x 157$' && has t1g.txt '^#define block_size_x 32$'; then
    ok "T1: GlobalSizeType OpenCL: the grid is ceil((10000 // 2) / 32) = 157 blocks of LocalSize"
else bad "T1 grid" "$(grep define t1g.txt)"; fi
"$K" run t1_saxpy.json --results t1.jsonl --format t4 >t1.t4 2>t1.err; rc=$?
if [ $rc = 0 ] && t4check t1.t4 11 >t1t.txt && has t1t.txt '^correct=11$'; then
    ok "T1 in, T4 out: run verifies the 11 and writes valid T4"
else bad "T1 run" "exit $rc: $(cat t1t.txt; tail -3 t1.err)"; fi
# BAT's MemType Constant: the argument is passed at its place and also copied into the __constant__
# variable of its name (batbench's Arguments list every argument, constants too)
sed -e 's/float a, int n)/float a, const float *coef_arg, int n)/' -e 's/a \* x\[i + k\]/a * coef[0] * x[i + k]/' \
    -e 's/^extern "C"/__constant__ float coef[4];\nextern "C"/' t1_saxpy.cu >t1_cmem.cu
python3 - <<'PY'
import json
d = json.load(open("t1_saxpy.json"))
k = d["KernelSpecification"]; k["KernelFile"] = "t1_cmem.cu"
k["Arguments"].insert(3, {"Name": "coef", "Type": "float", "Size": 4, "MemoryType": "Vector", "AccessType": "ReadOnly",
                          "MemType": "Constant", "FillType": "Constant", "FillValue": 1.0})
json.dump(d, open("t1_cmem.json", "w"))
PY
"$K" run t1_cmem.json --set BLOCK_SIZE=32 --set WORK=1 --results t1cm.jsonl >t1cm.txt 2>&1; rc=$?
if [ $rc = 0 ] && grep -q '"status":"ok"' t1cm.jsonl; then
    ok "T1 MemType Constant: the argument at its place (4 kernel parameters) and the __constant__ variable, as BAT passes it"
else bad "T1 MemType Constant" "exit $rc: $(tail -3 t1cm.txt)"; fi

i=0
for e in 'd["KernelSpecification"]["Language"] = "OpenCL"|KernelSpecification.Language: kforge runs CUDA kernels' \
         'd["Foo"] = 1|T1 Foo: not supported by kforge (the supported fields here: KernelSpecification, ConfigurationSpace, General' \
         'd["KernelSpecification"]["Arguments"][0]["Type"] = "int16"|Arguments\[0\] (y): Type: expected float, double' \
         'd["KernelSpecification"]["Arguments"][1]["FillType"] = "File"|Arguments\[1\] (x): FillType: expected Constant, Random or Generator' \
         'd["KernelSpecification"]["Arguments"][0]["DataSource"] = "2*i"|Arguments\[0\] (y): DataSource: the only Generator' \
         'd["KernelSpecification"]["Arguments"][1]["AccessType"] = "Write"|Arguments\[1\] (x): AccessType: expected ReadOnly' \
         'd["KernelSpecification"]["Arguments"][1]["Texture"] = 1|Arguments\[1\] (x).Texture: not supported' \
         'd["KernelSpecification"]["GlobalSizeType"] = "SYCL"|KernelSpecification.GlobalSizeType: expected "CUDA"' \
         'd["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "range(4"|TuningParameters\[0\] (BLOCK_SIZE): Values: expected a list' \
         'd["ConfigurationSpace"]["TuningParameters"][1]["Type"] = "float"|TuningParameters\[1\] (WORK): Type: kforge.s parameters are integers' \
         'del d["KernelSpecification"]["KernelName"]|KernelSpecification.KernelName: expected'; do
    i=$((i + 1))
    python3 - "$i" "${e%%|*}" <<'PY'
import json, sys
d = json.load(open("t1_saxpy.json"))
exec(sys.argv[2])
json.dump(d, open("t1bad%s.json" % sys.argv[1], "w"))
PY
    "$K" check t1bad$i.json >t1bad$i.txt 2>&1; rc=$?
    if [ $rc = 2 ] && has t1bad$i.txt "^kforge: t1bad$i.json: T1 " && grep -q -- "${e#*|}" t1bad$i.txt; then
        ok "T1 refused (exit 2, the file, the field, what was expected): $(head -c 170 t1bad$i.txt)"
    else bad "T1 refusal ${e%%|*}" "exit $rc: $(head -2 t1bad$i.txt)"; fi
done

# No "reference": the first parameter set in the params' order that meets the
# constraints (Kernel Tuner's matmul, run without answer: the first values,
# block_size_x 16 with block_size_y 1 and tile_size_y 1, break its restriction
# and the reference faulted on the GPU, failing every candidate)
cat > mmref.cu <<'EOF2'
extern "C" __global__ void mm(float *c, const float *a, int n)
{
    __shared__ float s[block_size_y * tile_size_y][block_size_x];
    int i = blockIdx.x * block_size_x + threadIdx.x;
    s[threadIdx.y][threadIdx.x] = i < n ? a[i] : 0.0f;
    __syncthreads();
    if (i < n && threadIdx.y == 0)
        c[i] = s[0][threadIdx.x] * tile_size_x;
}
EOF2
cat > mmref.json <<'EOF2'
{"kernel": "custom",
 "custom": {"source": "mmref.cu", "entry": "mm",
  "params": {"block_size_x": [16, 32], "block_size_y": [1, 2, 4, 8], "tile_size_x": [1, 2], "tile_size_y": [1, 2, 4]},
  "sizes": ["n"],
  "args": [{"name": "c", "dtype": "float32", "length": "n", "role": "out"},
           {"name": "a", "dtype": "float32", "length": "n", "role": "in"},
           {"name": "n", "scalar": "int32", "value": "n"}],
  "grid": ["ceil(n / block_size_x)"], "block": ["block_size_x", "block_size_y"],
  "constraints": ["block_size_x == block_size_y * tile_size_y"]},
 "defaults": {"n": "1000"}}
EOF2
"$K" check --compile mmref.json > mmref.txt 2>&1
if grep -q 'reference compiled  mm block_size_x=16,block_size_y=4,tile_size_x=1,tile_size_y=4' mmref.txt; then
  ok "no reference given: the first parameter set that meets the constraints (16, 4, 1, 4)"
else
  bad "the default reference meets the constraints" "$(grep reference mmref.txt)"
fi

# --- arguments that do not match the kernel: the file, the argument and what its parameter takes ---
# (BAT's TRIAD and pnpoly T1 files give such arguments: the message named neither file nor argument)
mkdir -p argm
printf '%s\n' '__global__ void k(float *out, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = 1.0f; }' >argm/k.cu
cat >argm/argm.json <<'EOF2'
{"kernel": "custom",
 "custom": {"source": "k.cu", "entry": "k", "params": {"block_size_x": [32, 64]}, "sizes": ["n"],
  "args": [{"name": "out", "dtype": "float32", "length": "n", "role": "out"},
           {"name": "count", "scalar": "int64", "value": "n"}],
  "grid": ["ceil(n / block_size_x)"], "block": ["block_size_x"]},
 "defaults": {"n": "1000"}}
EOF2
FROM=argm/argm.json edit argm/argc.json 'u["args"][1]["scalar"] = "int32"; u["args"].append({"name": "extra", "scalar": "int32", "value": "1"})'
"$K" run argm/argm.json --results argm.jsonl -q >argm.out 2>&1; rc=$?
"$K" run argm/argc.json --results argc.jsonl -q >argc.out 2>&1; rc2=$?
if [ $rc = 1 ] && [ $rc2 = 1 ] &&
   has argm.jsonl 'the arguments do not match kernel k: argument 1 \\"count\\" (an int64 scalar in argm.json) is 8 bytes in the config, the kernel.s parameter 1 takes 4: expected float32, int32 or uint32 there' &&
   has argc.jsonl 'the arguments do not match kernel k: the config gives 3 (args in argc.json), the kernel takes 2'; then
    ok "arguments that do not match the kernel: the file, the argument's name and type, what the parameter takes"
else bad "argument mismatch message" "exit $rc/$rc2: $(grep -o '"message":"[^"]*"' argm.jsonl argc.jsonl | head -2)"; fi

# --- the space expanded once: a device of 1024 threads a block changes none of the checks ---
# (Kernel Tuner's convolution example describes 3.1 million combinations: each expansion took
# seconds, and tune expanded it again when the devices opened)
"$K" tune stencil.json --no-db --results once.jsonl -q --format json >once.out 2>/dev/null; rc1=$?
KFORGE_TRACE=1 "$K" tune stencil.json --no-db --results once2.jsonl -q --format json >once2.out 2>once.trace; rc=$?
n=$(grep -c 'space expanded' once.trace)
if [ $rc = 1 ] && [ $rc1 = 1 ] && [ "$n" = 1 ] && has once.trace 'space expanded: 18 variants, 18 cases, 0 skipped' &&
   [ "$(grep -o '"status":"[a-z_]*"' once.jsonl | sort | uniq -c)" = "$(grep -o '"status":"[a-z_]*"' once2.jsonl | sort | uniq -c)" ] &&
   [ "$(grep -c . once2.jsonl)" = 18 ]; then
    ok "tune expands the space once when the device's limits are those it was checked with (18 candidates, the same results)"
else bad "space expanded once" "exit $rc1/$rc, $n expansions: $(grep 'space expanded' once.trace | head -3)"; fi

echo "kt_suite: $npass passed, $nfail failed"
[ $nfail = 0 ]
