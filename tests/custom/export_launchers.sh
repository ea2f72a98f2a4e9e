#!/bin/sh
# tests/custom/export_launchers.sh -- tunes custom kernels on the fake GPU
# (KFORGE_FAKE_GPU=1) so that each has several tuned shapes with DIFFERENT
# parameter sets (each shape tuned over one variant, where the fake GPU's
# time model alone would pick one variant everywhere), and exports each
# with its launcher into DIR: vector_add_tuned.h, transpose_tuned.h (one
# set over 48 KiB of dynamic shared memory, two shapes that share a set),
# convolution_tuned.h (a __constant__), scale_f32_tuned.h (a C++ template
# entry) and once_tuned.h (a source that cannot be included twice: the
# table alone).  Each export's stderr in DIR/NAME_export.txt, its exit
# status in DIR/NAME_export.rc.  tests/custom_suite.sh compiles
# tests/custom_launch.cu against the headers; tests/custom_gpu.sh runs it.
#
#   sh tests/custom/export_launchers.sh KFORGE DIR
#
# KFORGE_CACHE_DIR is kept (the caller's cubin cache); the database is DIR/db.
set -u
K=$1
DIR=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$DIR" || exit 2
cp "$ROOT"/configs/custom/vector_add.cu "$ROOT"/configs/custom/vector_add.json "$ROOT"/configs/custom/transpose.cu \
   "$ROOT"/configs/custom/transpose.json "$ROOT"/configs/custom/convolution.cu "$ROOT"/configs/custom/convolution.json \
   "$ROOT"/tests/custom/scale.cu "$ROOT"/tests/custom/scale.json "$ROOT"/tests/custom/once.cu \
   "$ROOT"/tests/custom/once.json "$DIR"/ || exit 2
cd "$DIR" || exit 2
export KFORGE_DB="$DIR/db" KFORGE_FAKE_GPU=1
unset KFORGE_PLANT KFORGE_DEVICES
# tune CONFIG SETTINGS...: one shape, one variant
tune() { c=$1; shift; "$K" tune "$c" "$@" --results tune.jsonl -q >>tune.txt 2>&1 || echo "tune $c $*: failed" >>tune.txt; }
tune vector_add.json --set n=1000 --set block_size_x=128 --set per_thread=1
tune vector_add.json --set n=1000000 --set block_size_x=256 --set per_thread=4
T="--set vec=1 --set unroll=0"
tune transpose.json --set width=300 --set height=200 --set tile_dim=16 --set block_rows=8 --set pad=1 $T
tune transpose.json --set width=310 --set height=190 --set tile_dim=16 --set block_rows=8 --set pad=1 $T
tune transpose.json --set width=1000 --set height=3000 --set tile_dim=128 --set block_rows=8 --set pad=1 $T
C="--set tile_size_y=2 --set read_only=1 --set contiguous_x=0"
tune convolution.json --set width=100 --set height=37 --set block_size_x=16 --set block_size_y=4 --set tile_size_x=1 \
    --set use_padding=0 $C
tune convolution.json --set width=300 --set height=200 --set block_size_x=64 --set block_size_y=4 --set tile_size_x=2 \
    --set use_padding=1 $C
tune scale.json --set n=1000 --set block_size_x=128
tune scale.json --set n=100000 --set block_size_x=256
tune once.json --set n=1000 --set block_size_x=128 --set per_thread=1
tune once.json --set n=100000 --set block_size_x=256 --set per_thread=4
for c in vector_add transpose convolution scale once; do
    name=$c
    [ $c = scale ] && name=scale_f32
    "$K" export --kernel $c.json -o ${name}_tuned.h >/dev/null 2>${name}_export.txt
    echo $? >${name}_export.rc
done
