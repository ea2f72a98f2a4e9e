#!/bin/sh
# tests/custom_gpu.sh -- user kernels (kernel "custom") on a real GPU: the
# two examples run and tune (the reference variant run on the GPU, every
# candidate compared with it), a planted wrong transpose is caught, a C++
# template entry is found, and args that do not match the kernel or an
# unknown entry are launch errors with their reason.  Prints what it ran.
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
cp "$TMP"/*.jsonl "${OUT:-$TMP}/" 2>/dev/null
rm -rf "$TMP"
