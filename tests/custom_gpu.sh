#!/bin/sh
# tests/custom_gpu.sh -- user kernels (kernel "custom") on a real GPU: the
# two examples run and tune (the reference variant run on the GPU, every
# candidate compared with it), a planted wrong transpose is caught, a C++
# template entry is found, and args that do not match the kernel or an
# unknown entry are launch errors with their reason.  Prints what it ran.
# Then checks itself (PASS/FAIL, exit 1 on a failure): float16 and bfloat16
# axpy (tests/custom/axpy_*.json) against a reference kernel of its own
# (axpy_ref.cu: its own source, entry, #defines and grid) with a tolerance
# on y alone, against an exact .npy answer (the 2-byte buffers and scalar
# reach the kernel intact), a wrong kernel caught both ways, a reference
# launched one block short, GFLOP/s and % FP32 in every result; and the
# convolution example (its filter in __constant__ memory) checked against
# its reference variant, bit for bit, against an exact answer from .npy
# files, with planted bugs and constants that do not match the module, and
# tuned on a subset.  Last, the headers kforge export writes with their
# launchers (tests/custom_launch.cu): built with nvcc and run, each launch
# compared with the host (SKIP without a GPU or nvcc).
#
#   KFORGE=build/kforge sh tests/custom_gpu.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
ROOT=$(pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-custom-gpu.XXXXXX") || exit 2
export KFORGE_CACHE_DIR="$TMP/cache" KFORGE_DB="$TMP/db" LC_ALL=C
unset KFORGE_FAKE_GPU KFORGE_PLANT
step() { echo; echo "\$ $*"; t0=$(date +%s%N); "$@"; rc=$?; echo "(exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms)"; }
cd "$ROOT" || exit 2
step "$K" info
step "$K" run configs/custom/vector_add.json --set block_size_x=256 --set per_thread=1 --results "$TMP/va_run.jsonl"
step "$K" tune configs/custom/vector_add.json --results "$TMP/va_tune.jsonl"
step "$K" tune configs/custom/vector_add.json --results "$TMP/va_tune.jsonl" -q
step "$K" best --kernel configs/custom/vector_add.json --n 2^24
for s in "8192 8192" "16384 4096" "4096 16384"; do
    set -- $s
    step "$K" tune configs/custom/transpose.json --set width=$1 --set height=$2 --results "$TMP/tr_$1x$2.jsonl"
done
step "$K" best --kernel configs/custom/transpose.json --width 8192 --height 8192
# a wrong kernel: planted_bug = 1 leaves out[width-1][height-1] unwritten
sed 's/"pad": \[0, 1\]}/"pad": [0, 1], "planted_bug": [0, 1]}/' configs/custom/transpose.json >configs/custom/transpose_bug.json
step "$K" run configs/custom/transpose_bug.json --set tile_dim=32 --set block_rows=8 --set pad=1 --no-results --format jsonl
rm -f configs/custom/transpose_bug.json
# a C++ template entry, found by its lowered name; and one that only the
# name expression instantiates, with a template argument of the user's type
step "$K" run tests/custom/scale.json --no-results
step "$K" run tests/custom/apply.json --set n=1000003 --no-results
# args that do not match the kernel (a scalar left out), and an unknown entry
sed 's/{"name": "a", "scalar": "float32", "value": 3},//' tests/custom/scale.json >tests/custom/scale_args.json
step "$K" run tests/custom/scale_args.json --set block_size_x=128 --no-results --format jsonl
sed 's/"entry": "scale<float>"/"entry": "scale<half2>"/' tests/custom/scale.json >tests/custom/scale_entry.json
step "$K" run tests/custom/scale_entry.json --set block_size_x=128 --no-results --format jsonl
rm -f tests/custom/scale_args.json tests/custom/scale_entry.json

# --- self-checking: 2-byte floats, a reference kernel of its own, tolerances
# per buffer, flops (each PASS or FAIL; the script exits 1 on a FAIL) ---------
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
W="$TMP/w"
mkdir -p "$W" && cp tests/custom/axpy_half.cu tests/custom/axpy_ref.cu tests/custom/axpy_f16.json \
    tests/custom/axpy_bf16.json "$W"/ || exit 2
python3 - "$W" <<'PY'
import json, struct, sys
w = sys.argv[1]
def npy(path, code, fmt, vals):
    head = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (code, len(vals))
    head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
    with open(w + "/" + path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))
def bf16(x):  # exact for these values
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
n = 100003
x = [(i % 64) * 0.25 - 8 for i in range(n)]
y = [((i % 7) + 1) * 0.5 for i in range(n)]
ans = [0.75 * a + b for a, b in zip(x, y)]      # exact in float16 and bfloat16: no rounding anywhere
npy("x_f16.npy", "<f2", "e", x); npy("y_f16.npy", "<f2", "e", y); npy("ans_f16.npy", "<f2", "e", ans)
npy("x_bf16.npy", "<u2", "H", [bf16(v) for v in x]); npy("y_bf16.npy", "|V2", "H", [bf16(v) for v in y])
npy("ans_bf16.npy", "<u2", "H", [bf16(v) for v in ans])
for t in ("f16", "bf16"):
    c = json.load(open("%s/axpy_%s.json" % (w, t)))
    c["defaults"] = {"n": n}
    # the answer as files, compared with no tolerance at all
    e = json.loads(json.dumps(c))
    e["custom"]["args"][0]["fill"] = {"npy": "y_%s.npy" % t}
    e["custom"]["args"][0].pop("tolerance")
    e["custom"]["args"][1]["fill"] = {"npy": "x_%s.npy" % t}
    e["custom"]["reference"] = {"expected": {"y": "ans_%s.npy" % t}}
    json.dump(e, open("%s/exact_%s.json" % (w, t), "w"))
    e["custom"]["params"]["bug"] = [1]
    json.dump(e, open("%s/exact_bug_%s.json" % (w, t), "w"))
    # a wrong candidate against the reference kernel
    b = json.loads(json.dumps(c))
    b["custom"]["params"]["bug"] = [1]
    json.dump(b, open("%s/bug_%s.json" % (w, t), "w"))
    # a reference kernel launched one block short: its own grid is the one used
    r = json.loads(json.dumps(c))
    r["custom"]["reference"]["grid"] = ["(n + ref_block - 1) / ref_block - 1"]
    json.dump(r, open("%s/refshort_%s.json" % (w, t), "w"))
    # the same answer from a parameter set of the same source
    p = json.loads(json.dumps(c))
    p["custom"]["reference"] = {"params": {"block_size_x": 128, "per_thread": 1}}
    json.dump(p, open("%s/refparams_%s.json" % (w, t), "w"))
    # informational: without y's own tolerance (the config-wide one is 0)
    q = json.load(open("%s/axpy_%s.json" % (w, t)))
    q["custom"]["args"][0].pop("tolerance")
    json.dump(q, open("%s/notol_%s.json" % (w, t), "w"))
PY
cnt() { grep -c "\"status\":\"$2\"" "$1"; }
for t in f16 bf16; do
    "$K" check "$W/axpy_$t.json" --compile >"$W/comp_$t.txt" 2>&1; rc=$?
    if [ $rc = 0 ] && grep -q "^  reference compiled  axpy_$t.reference ref_block=128" "$W/comp_$t.txt"; then
        ok "$t: check --compile compiles the 4 variants and the reference kernel (axpy_ref.cu)"
    else bad "$t: check --compile" "exit $rc: $(tail -3 "$W/comp_$t.txt")"; fi
    "$K" run "$W/axpy_$t.json" --no-results --format jsonl >"$W/run_$t.txt" 2>"$W/run_$t.err"; rc=$?
    if [ $rc = 0 ] && [ "$(cnt "$W/run_$t.txt" ok)" = 4 ] &&
       python3 -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; sys.exit(0 if all(o["gflops"] > 0 and o["pct_peak_flops"] > 0 and o["peak_gflops"] > 0 for o in l) else 1)' "$W/run_$t.txt"; then
        ok "$t: 4 candidates verified against the reference kernel of its own (float, then rounded; y's tolerance), with GFLOP/s and % FP32"
    else bad "$t: run against the reference kernel" "exit $rc: $(head -c 600 "$W/run_$t.txt"; tail -3 "$W/run_$t.err")"; fi
    "$K" run "$W/exact_$t.json" --no-results --format jsonl >"$W/exact_$t.txt" 2>&1; rc=$?
    if [ $rc = 0 ] && [ "$(cnt "$W/exact_$t.txt" ok)" = 4 ]; then
        ok "$t: buffers and the scalar a = 0.75 reach the kernel as $t: the .npy answer matched exactly (tolerance 0)"
    else bad "$t: exact .npy answer" "exit $rc: $(head -c 600 "$W/exact_$t.txt")"; fi
    "$K" run "$W/exact_bug_$t.json" --no-results --format jsonl >"$W/exact_bug_$t.txt" 2>&1; rc=$?
    if [ $rc = 1 ] && [ "$(cnt "$W/exact_bug_$t.txt" wrong)" = 4 ] &&
       grep -q 'worst at y\[0\]: GPU -6, reference -5.5 ' "$W/exact_bug_$t.txt"; then
        ok "$t: a kernel that forgets + y at y[0] is caught against the .npy answer (GPU -6, reference -5.5)"
    else bad "$t: wrong kernel vs .npy" "exit $rc: $(head -c 600 "$W/exact_bug_$t.txt")"; fi
    "$K" run "$W/bug_$t.json" --no-results --format jsonl >"$W/bug_$t.txt" 2>&1; rc=$?
    if [ $rc = 1 ] && [ "$(cnt "$W/bug_$t.txt" wrong)" = 4 ] && grep -q 'worst at y\[0\]' "$W/bug_$t.txt"; then
        ok "$t: the same wrong kernel is caught against the reference kernel of its own"
    else bad "$t: wrong kernel vs the reference kernel" "exit $rc: $(head -c 600 "$W/bug_$t.txt")"; fi
    "$K" run "$W/refshort_$t.json" --no-results --format jsonl >"$W/refshort_$t.txt" 2>&1; rc=$?
    if [ $rc = 1 ] && [ "$(cnt "$W/refshort_$t.txt" wrong)" = 4 ]; then
        ok "$t: a reference kernel launched one block short (its own grid) makes every candidate disagree with it"
    else bad "$t: the reference's own grid" "exit $rc: $(head -c 600 "$W/refshort_$t.txt")"; fi
    "$K" run "$W/refparams_$t.json" --no-results --format jsonl >"$W/refparams_$t.txt" 2>&1; rc=$?
    if [ $rc = 0 ] && [ "$(cnt "$W/refparams_$t.txt" ok)" = 4 ]; then
        ok "$t: a parameter set of the same source as the reference still works"
    else bad "$t: reference params" "exit $rc: $(head -c 600 "$W/refparams_$t.txt")"; fi
done
# informational: y's own tolerance against the config-wide 0 (the candidates'
# single rounding and the reference's float-then-round may differ in the last bit)
step "$K" run "$W/notol_f16.json" --no-results
step "$K" run "$W/notol_bf16.json" --no-results
(cd "$W" && tar czf "${OUT:-$TMP}/custom_gpu_checks.tgz" ./*.txt ./*.json) 2>/dev/null
echo "custom_gpu: $npass passed, $nfail failed"

# --- example 3: the 2-D convolution, its 17 x 17 filter in __constant__ ----
# memory (the config's "constants", written with cuModuleGetGlobal before any
# launch).  Self-checking: each check prints PASS or FAIL, and the script
# exits 1 if one failed.  Copies of the config live in $TMP/cv.
cfail=0
verdict() { # description, then a command that must succeed
    d=$1; shift
    if "$@"; then echo "PASS convolution: $d"; else echo "FAIL convolution: $d"; cfail=$((cfail + 1)); fi
}
lines() { grep -c "$2" "$1" 2>/dev/null || true; }
CV=$TMP/cv
mkdir -p "$CV" && cp configs/custom/convolution.cu configs/custom/convolution.json tests/custom/conv_npy.py "$CV"/
cvjson() { # name, python statements on k (the "custom" object): a variant of the config in $CV
    python3 -c 'import json, sys
c = json.load(open(sys.argv[1])); k = c["custom"]
exec(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"), indent=1)' "$CV/convolution.json" "$CV/$1" "$2"
}
# 1. 80 variants (both tilings, padding, read-only loads, blocks of 32 to
# 1024 threads) at 4096 x 4096, each checked against the reference variant
# (16 x 16, tile 1 x 1) run on the GPU; the filter must have been written
# (an unwritten one makes every output 0, reference too)
SUB="--set block_size_x=[16,64,128] --set block_size_y=[2,8] --set tile_size_x=[1,4] --set tile_size_y=[2,4] --set use_padding=[0,1] --set read_only=[0,1]"
step "$K" run "$CV/convolution.json" $SUB --results "$TMP/cv_run.jsonl" -q
n=$(grep -c '"status"' "$TMP/cv_run.jsonl"); nok=$(lines "$TMP/cv_run.jsonl" '"status":"ok"')
verdict "$nok of $n variants at 4096 x 4096 equal the reference variant's outputs (rtol 1e-6)" [ "$n" -ge 24 -a "$nok" = "$n" ]
ref=$(sed -n 's/.*"ref_value":"\([^"]*\)".*/\1/p' "$TMP/cv_run.jsonl" | head -1)
if [ -n "$ref" ]; then
    verdict "the filter was written: output[0] is $ref (289 taps of [0,1) x [0,1): about 72, 0 if d_filter were never set)" \
        awk -v x="$ref" 'BEGIN { exit !(x > 30 && x < 120) }'
else echo "SKIP convolution: no ref_value recorded (step 3's exact answer shows the filter written)"; fi
# 2. the same variants with tolerance 0: every variant sums each output's
# taps in the same order, so all give the reference's bits exactly
cvjson cv_exact.json 'k["tolerance"] = {"rtol": 0, "atol": 0}'
step "$K" run "$CV/cv_exact.json" $SUB --no-results --format jsonl -q >"$TMP/cv_exact.txt"
verdict "bit for bit: $(lines "$TMP/cv_exact.txt" '"status":"ok"') of $n ok with rtol 0 and atol 0" \
    [ "$(lines "$TMP/cv_exact.txt" '"status":"ok"')" = "$n" ]
# 3. against an answer computed independently (tests/custom/conv_npy.py:
# multiples of 1/16, so the answer is exact): image, filter (the constant)
# and answer from .npy files, at sizes that leave partial tiles
for wh in "100 37" "160 96"; do
    set -- $wh
    (cd "$CV" && CONV_JSON=convolution.json python3 conv_npy.py "$1" "$2" cv_npy_$1.json)
    step "$K" run "$CV/cv_npy_$1.json" $SUB --no-results --format jsonl -q >"$TMP/cv_npy_$1.txt"
    verdict "$(lines "$TMP/cv_npy_$1.txt" '"status":"ok"') of $n variants give conv_npy.py's exact answer at $1 x $2" \
        [ "$(lines "$TMP/cv_npy_$1.txt" '"status":"ok"')" = "$n" ]
done
# 4. planted bugs (planted_bug in the source): 1 never writes the last
# output, 2 reads the filter transposed; the reference keeps planted_bug = 0
cvjson cv_bug.json 'k["params"]["planted_bug"] = [0, 1, 2]'
step "$K" run "$CV/cv_bug.json" --set block_size_x=32 --set block_size_y=8 --set tile_size_x=2 --set tile_size_y=2 \
    --set use_padding=1 --set read_only=0 --no-results --format jsonl >"$TMP/cv_bug.txt"
verdict "planted_bug=0 ok, 1 (output[16777215] unwritten) and 2 (filter transposed) wrong" sh -c "
    grep -q '\"planted_bug\":0,.*\"status\":\"ok\"' '$TMP/cv_bug.txt' &&
    grep -q '\"planted_bug\":1,.*\"status\":\"wrong\".*1 of 16777216 outputs wrong; worst at output\[16777215\]' '$TMP/cv_bug.txt' &&
    grep -q '\"planted_bug\":2,.*\"status\":\"wrong\"' '$TMP/cv_bug.txt'"
# 5. constants that do not match the module: a launch error naming them
cvjson cv_name.json 'k["constants"][0]["name"] = "d_filtr"'
step "$K" run "$CV/cv_name.json" --set block_size_x=32 --set block_size_y=8 --set tile_size_x=2 --set tile_size_y=2 \
    --set use_padding=1 --set read_only=0 --no-results --format jsonl >"$TMP/cv_name.txt"
verdict "an unknown constant is a launch_error naming it" \
    grep -q '"status":"launch_error","message":"constant \\"d_filtr\\": no __constant__ or __device__ variable of that name in the module' "$TMP/cv_name.txt"
cvjson cv_size.json 'k["constants"][0]["length"] = "18 * 17"'
step "$K" run "$CV/cv_size.json" --set block_size_x=32 --set block_size_y=8 --set tile_size_x=2 --set tile_size_y=2 \
    --set use_padding=1 --set read_only=0 --no-results --format jsonl >"$TMP/cv_size.txt"
verdict "a constant longer than the module's variable is a launch_error with both sizes" \
    grep -q "constant \\\\\"d_filter\\\\\": the module's variable is 1156 bytes, the config describes 1224 (306 float32)" "$TMP/cv_size.txt"
# 6. a tune of a subset (every candidate checked), resumed, and the best
TSUB="--set block_size_x=[32,64,128] --set block_size_y=[2,4,8] --set tile_size_x=[1,2,4] --set tile_size_y=[2,4,8] --set use_padding=[0,1] --set read_only=0"
step "$K" tune configs/custom/convolution.json $TSUB --results "$TMP/cv_tune.jsonl"
rc1=$rc
step "$K" tune configs/custom/convolution.json $TSUB --results "$TMP/cv_tune.jsonl" -q --format jsonl >"$TMP/cv_tune2.txt"
step "$K" best --kernel configs/custom/convolution.json --width 4096 --height 4096
verdict "tune of $(grep -c . "$TMP/cv_tune.jsonl") candidates: a best found, resumed without measuring again" \
    sh -c "[ $rc1 = 0 ] && grep -q '\"measured_cases\": 0' '$TMP/cv_tune2.txt'"
echo "convolution checks: $cfail failed"

# --- exported headers with their launchers, run (tests/custom_launch.cu) ----
# vector_add, transpose, convolution and scale<float> tuned on the fake GPU
# at shapes that get different parameter sets (so that each launcher picks
# between namespaces; tests/custom/export_launchers.sh), exported, built
# with nvcc for this GPU, and every tuned shape and a few between them run
# through the launchers and compared with the host
CUDA=${CUDA:-/usr/local/cuda}
if ! "$K" info >/dev/null 2>&1; then
    echo "SKIP custom_launch: no GPU (kforge info fails)"
elif [ ! -x "$CUDA/bin/nvcc" ]; then
    echo "SKIP custom_launch: nvcc not found at $CUDA/bin/nvcc"
else
    LH="$TMP/launch"
    sh tests/custom/export_launchers.sh "$K" "$LH"
    step "$CUDA/bin/nvcc" -std=c++17 -O2 -arch=native -I "$LH" tests/custom_launch.cu -o "$LH/custom_launch"
    step "$LH/custom_launch"
    if [ $rc = 0 ] && [ "$(cat "$LH"/*_export.rc | tr -d '\n')" = 00000 ]; then
        ok "custom_launch: the exported launchers of vector_add, transpose, convolution and scale<float> compute what the host does"
    else bad "custom_launch" "exit $rc; exports: $(cat "$LH"/*_export.rc | tr '\n' ' ')"; fi
fi

cp "$TMP"/*.jsonl "${OUT:-$TMP}/" 2>/dev/null
rm -rf "$TMP"
[ $nfail = 0 ] && [ "$cfail" = 0 ]
