#!/bin/sh
# tools/kt_side_by_side.sh -- Kernel Tuner and kforge side by side on Kernel
# Tuner's CUDA examples (issue 37), on one GPU, each run truly cold: Kernel
# Tuner (its cupy backend, fresh CUPY_CACHE_DIR and CUDA_CACHE_PATH), then
# kforge's CLI (tools/kt_examples/NAME.json: the example's space and kernel
# file, unchanged) and kforge's Python front end (the example's .py run as
# it is, its "kernel_tuner" being kforge), each with a fresh kforge cache and
# CUDA_CACHE_PATH.  Kernel Tuner's search is stopped a number of seconds after
# its start-up (its own budget, TuningBudget: per example, see caps below, or
# CAP_SECONDS for all); where it stopped, kforge gets its number of
# candidates as a budget in the same (brute-force) order, so both measure
# the same candidates (the report counts those both measured and compares
# the bests on them).  kforge's --time is capped per example too, and the
# whole run stops starting steps after KT_SIDE_TOTAL seconds (default 400):
# about 7 minutes on one H200 with 16 CPUs.  Prints a table (candidates,
# wall time, candidates/s, best time, kforge's best / Kernel Tuner's on the
# same candidates, kforge's cand/s / Kernel Tuner's, verified) and the
# README's rows, and keeps every raw output in OUTDIR: NAME/{kt,cli,py}.json
# (the summaries), side.json (the caps and kforge's budget), kt-cache.json
# (Kernel Tuner's cache file, fresh each run: its results even when it
# raises), kt.out, cli.out, py.out (their output), cli-results.jsonl and
# py-results.jsonl (kforge's results lines), cli.stderr (the CLI's KFORGE_TRACE),
# compile.json (convolution, convolution_correct, pnpoly: NVRTC's time per cubin on
# this host, kforge check --compile with 1 process and one per CPU, cold; left
# out with KT_SIDE_NO_COMPILE=1), env.txt, report.txt.  The report ends with the
# floor per row: W >= max(S + G, N C_1 / P), cand/s / KT's <= KT's wall / W.
#
#   sh tools/kt_side_by_side.sh OUTDIR [CAP_SECONDS]
#   sh tools/kt_side_by_side.sh --prepare KT_REPO DEST   the examples' files from a Kernel Tuner
#                                                        checkout or bare git mirror into DEST
#
# Environment: KT_SITE (default .carry/ktsite: kernel_tuner and what it
# imports), KT_EXAMPLES (default $KT_SITE/kt_examples, made by --prepare),
# PYTHON (default python3: NumPy, CuPy), KFORGE (default build/kforge, made
# if missing), KT_SIDE_EXAMPLES (default: vector_add stencil matmul
# reduction convolution convolution_correct pnpoly), KFORGE_SIDE_TIME (kforge's --time for all).
# With KFORGE_FAKE_GPU=1 (no GPU) Kernel Tuner is left out: kforge's budget
# is KT_SIDE_BUDGET (default 12), or, where KT_SIDE_PLANT/NAME.json is a
# Kernel Tuner cache file, Kernel Tuner's results are read from it as if its
# search had been capped after KT_SIDE_PLANT_WALL seconds (default 20) and
# kforge gets its candidates: a dry run of kforge's parts and the report.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PY=${PYTHON:-python3}
if [ "${1:-}" = --prepare ]; then
    exec "$PY" "$HERE/kt_side_by_side.py" prepare "${2:?KT_REPO}" "${3:?DEST}"
fi
OUT=${1:?usage: tools/kt_side_by_side.sh OUTDIR [CAP_SECONDS]}
CAP_GIVEN=${2:-}
mkdir -p "$OUT" || exit 4
OUT=$(cd "$OUT" && pwd)
KTSITE=${KT_SITE:-$ROOT/.carry/ktsite}
EX=${KT_EXAMPLES:-$KTSITE/kt_examples}
K=${KFORGE:-$ROOT/build/kforge}
export KFORGE="$K"
T0=$(date +%s)
if [ ! -x "$K" ]; then
    echo "kt_side_by_side: building kforge (make -j)"
    make -C "$ROOT" -j"$(nproc)" >"$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 2; }
fi
[ -f "$EX/convolution.cu" ] || { echo "kt_side_by_side: no examples in $EX (run --prepare)"; exit 2; }
fake=${KFORGE_FAKE_GPU:-}
{
    date -u; nvidia-smi 2>&1 | head -15; "$K" info 2>&1 | head -12
    "$PY" -c 'import numpy; print("numpy", numpy.__version__)'
    "$PY" -c 'import cupy; print("cupy", cupy.__version__)'
    PYTHONPATH=$KTSITE "$PY" -c 'import kernel_tuner; print("kernel_tuner", kernel_tuner.__file__)'
} >"$OUT/env.txt" 2>&1
TMPB=$(mktemp -d "${TMPDIR:-/tmp}/kt-side.XXXXXX") || exit 4
trap 'rm -rf "$TMPB"' EXIT
# Per example: Kernel Tuner's cap on its search (s) and kforge's --time (s), so that the whole run
# fits in about 7 minutes on one H200 (16 CPUs); CAP, when given, replaces Kernel Tuner's caps.
caps() {
    case $1 in
    vector_add) echo 10 30 ;;
    stencil) echo 15 30 ;;
    matmul) echo 25 40 ;;
    convolution) echo 20 45 ;;
    convolution_correct) echo 20 40 ;;
    pnpoly) echo 20 45 ;;
    reduction) echo 20 40 ;;
    *) echo 20 40 ;;
    esac
}
TOTAL=${KT_SIDE_TOTAL:-400}
late() {  # past the whole run's limit: the rest is left out, and said so
    if [ $(($(date +%s) - T0)) -ge "$TOTAL" ]; then
        echo "   left out: $(($(date +%s) - T0)) s in, past KT_SIDE_TOTAL=$TOTAL s"
        return 0
    fi
    return 1
}
for name in ${KT_SIDE_EXAMPLES:-vector_add stencil matmul reduction convolution convolution_correct pnpoly}; do
    d=$OUT/$name
    mkdir -p "$d"
    set -- $(caps "$name")
    KCAP=${CAP_GIVEN:-$1}
    KFT=${KFORGE_SIDE_TIME:-$2}
    case $name in
    pnpoly | reduction) ;;
    *) if [ ! -f "$EX/$name.py" ]; then
        echo "== $name: left out: no $name.py in $EX (prepare it again: --prepare KT_REPO $EX)"
        continue
    fi ;;
    esac
    W=$TMPB/$name
    mkdir -p "$W/kt" "$W/cli" "$W/py"
    for w in kt cli py; do cp "$EX"/* "$W/$w/"; done
    N=0
    late && break
    if [ -z "$fake" ]; then
        C=$TMPB/cache-kt-$name
        mkdir -p "$C"
        echo "== $name: Kernel Tuner, its search capped at $KCAP s ($(($(date +%s) - T0)) s in)"
        CUDA_CACHE_PATH=$C/cuda CUPY_CACHE_DIR=$C/cupy PYTHONPATH=$KTSITE timeout -k 5 $((KCAP + 60)) \
            "$PY" "$HERE/kt_side_by_side.py" kt "$name" "$W/kt" "$KCAP" "$d/kt.json" >"$d/kt.out" 2>&1
        echo "   exit $?: $(tail -1 "$d/kt.out" | head -c 300)"
    elif [ -f "${KT_SIDE_PLANT:-/nonexistent}/$name.json" ]; then
        # the dry run: Kernel Tuner's results from a planted cache file, as if it had been capped
        cp "$KT_SIDE_PLANT/$name.json" "$d/kt-cache.json"
        echo "== $name: Kernel Tuner's results from the planted $KT_SIDE_PLANT/$name.json (fake GPU)"
        "$PY" "$HERE/kt_side_by_side.py" kt-cache "$name" "$d/kt-cache.json" "${KT_SIDE_PLANT_WALL:-20}" 1 \
            "$d/kt.json" >"$d/kt.out" 2>&1
        echo "   exit $?: $(tail -1 "$d/kt.out" | head -c 300)"
    else
        N=${KT_SIDE_BUDGET:-12}
    fi
    if [ -f "$d/kt.json" ]; then
        N=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["candidates"] if d["capped"] else 0)' \
            "$d/kt.json" 2>/dev/null || echo 0)
    fi
    printf '{"kt_cap": %s, "kforge_time": %s, "budget": %s, "cpus": %s}\n' "$KCAP" "$KFT" "$N" "$(nproc)" >"$d/side.json"
    late && break
    C=$TMPB/cache-cli-$name
    mkdir -p "$C"
    echo "== $name: kforge CLI, budget ${N} (0: all), --time $KFT ($(($(date +%s) - T0)) s in)"
    CUDA_CACHE_PATH=$C/cuda KFORGE_CACHE_DIR=$C/kforge KFORGE_DB=$C/db KFORGE_SIDE_TIME=$KFT KFORGE_TRACE=1 \
        timeout -k 5 $((KFT + 40)) \
        "$PY" "$HERE/kt_side_by_side.py" cli "$name" "$W/cli" "$N" "$d/cli.json" "$HERE/kt_examples/$name.json" \
        >"$d/cli.out" 2>&1
    echo "   exit $?: $(tail -1 "$d/cli.out" | head -c 300)"
    cp "$W/cli/cli-results.jsonl" "$d/" 2>/dev/null
    late && break
    C=$TMPB/cache-py-$name
    mkdir -p "$C"
    echo "== $name: kforge Python, budget ${N}, --time $KFT ($(($(date +%s) - T0)) s in)"
    CUDA_CACHE_PATH=$C/cuda KFORGE_CACHE_DIR=$C/kforge KFORGE_DB=$C/db KFORGE_SIDE_TIME=$KFT \
        timeout -k 5 $((KFT + 40)) \
        "$PY" "$HERE/kt_side_by_side.py" kforge-py "$name" "$W/py" "$N" "$d/py.json" >"$d/py.out" 2>&1
    echo "   exit $?: $(tail -1 "$d/py.out" | head -c 300)"
    # NVRTC's rate on this host for the example's kernel (the bound's c_P), where the report needs it
    if [ -z "${KT_SIDE_NO_COMPILE:-}" ] && [ $(($(date +%s) - T0)) -lt "$TOTAL" ]; then
        "$PY" "$HERE/kt_side_by_side.py" compile "$name" "$W/cli" "$d/compile.json" >"$d/compile.out" 2>&1 &&
            [ -s "$d/compile.json" ] && "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("   NVRTC on this host: " + "; ".join("-j %s: %s cubins, %s s each%s" % (
    d[k].get("jobs"), d[k].get("cubins"), "%.3f" % d[k]["s_per_cubin"] if d[k].get("s_per_cubin") else "-",
    " (" + d[k]["error"][-80:].strip() + ")" if d[k].get("error") else "") for k in ("one", "pool") if k in d))' \
            "$d/compile.json"
    fi
    rm -rf "$W" "$TMPB"/cache-*
done
echo "== run_kernel on the GPU: vector_add's outputs come back ($(($(date +%s) - T0)) s in)"
C=$TMPB/cache-rk
mkdir -p "$C"
CUDA_CACHE_PATH=$C/cuda KFORGE_CACHE_DIR=$C/kforge PYTHONPATH=$ROOT/python "$PY" - >"$OUT/run_kernel.txt" 2>&1 <<'PYEOF'
import numpy, kforge
src = """__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) { c[i] = a[i] + b[i]; } }"""
n = 100000
a = numpy.random.randn(n).astype(numpy.float32); b = numpy.random.randn(n).astype(numpy.float32)
c = numpy.zeros_like(a)
r = kforge.run_kernel("vector_add", src, n, [c, a, b, numpy.int32(n)], {"block_size_x": 128})
print("run_kernel:", "PASS" if numpy.allclose(r[0], a + b) and numpy.array_equal(r[1], a) and r[3] == n
      else "FAIL %s %s" % (r[0][:4], (a + b)[:4]))
PYEOF
if [ -n "$fake" ]; then echo "run_kernel: not checked on the fake GPU (it runs nothing): $(tail -1 "$OUT/run_kernel.txt")"
else tail -1 "$OUT/run_kernel.txt"; fi
"$PY" "$HERE/kt_side_by_side.py" report "$OUT" | tee "$OUT/report.txt"
echo "kt_side_by_side: $(($(date +%s) - T0)) s; raw output in $OUT"
