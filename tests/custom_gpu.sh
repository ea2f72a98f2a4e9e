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
# launched one block short, GFLOP/s and % FP32 in every result.
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
# a C++ template entry, found by its mangled name
step "$K" run tests/custom/scale.json --no-results
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
cp "$TMP"/*.jsonl "${OUT:-$TMP}/" 2>/dev/null
rm -rf "$TMP"
[ $nfail = 0 ]
