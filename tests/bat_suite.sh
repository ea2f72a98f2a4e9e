#!/bin/sh
# tests/bat_suite.sh -- BAT's benchmarks (github:NTNU-HPC-Lab/BAT) from their
# T1 files on the fake GPU (issue 37), by tools/bat_t1.sh with a budget of 2:
# GEMM, nbody and convolution tune, their T4 is valid against the schema and
# loads in the Auto-Tuning Association's methodology reader
# (python/tests/methodology_reader.py); the others are refused with the
# reason named: MD5Hash's int8 argument (a dtype kforge lacks), hotspot's
# 22 million combinations (over kforge's limit of 10 million before
# constraints), TRIAD's and pnpoly's arguments that do not match their kernels
# (TRIAD declares double, its kernel takes float; pnpoly passes vertex_xy
# where the kernel takes int n), and dedisp and expdist have no T1 file.
# (The fake GPU compares outputs up to 4 Mi elements: GEMM's and
# convolution's 16 Mi are run, not compared, here; on a GPU they are.)
# BAT from $BAT_REPO (a checkout or a bare git mirror; default the mirror
# /work/.mirror/NTNU-HPC-Lab+BAT/repo), the reader from $METHODOLOGY_REPO: SKIP
# without them.
#
#   KFORGE=build/kforge sh tests/bat_suite.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BAT=${BAT_REPO:-/work/.mirror/NTNU-HPC-Lab+BAT/repo}
if [ ! -d "$BAT" ]; then
    echo "SKIP bat_suite: BAT not found (set BAT_REPO to a checkout or git mirror of github:NTNU-HPC-Lab/BAT)"
    echo "bat_suite: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-bat.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "bat_suite: files kept in $TMP"; fi' EXIT
export KFORGE_CACHE_DIR="$TMP/cache" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MS SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
OUT=$TMP/work KFORGE=$K sh "$ROOT/tools/bat_t1.sh" "$BAT" 2 >"$TMP/bat.txt" 2>&1
npass=0
nfail=0
nskip=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }
line() { grep "^$1: $2" "$TMP/bat.txt" | head -1; }
for b in GEMM nbody convolution; do
    if line "$b" '2 candidates, 2 verified, T4 valid' | grep -q .; then
        ok "$b: tuned from its T1 file, 2 verified, T4 valid against the schema"
    else bad "$b" "$(grep "^$b" "$TMP/bat.txt" | head -3)"; fi
    r=$(line "$b" '\(methodology reader\|SKIP\|REFUSED\)')
    case $r in
    *"SKIP methodology reader"*) echo "SKIP $b: $r"; nskip=$((nskip + 1)) ;;
    *"methodology reader: 2 results, 2 valid, best "[0-9]*) ok "$b: its T4 loads in the methodology reader ($r)" ;;
    *) bad "$b methodology reader" "$r" ;;
    esac
done
for e in 'MD5Hash|exit 2: kforge: MD5Hash-CAFF.json: T1 KernelSpecification.Arguments\[8\] (foundKey): Type: expected' \
         'hotspot|exit 2: kforge: hotspot-CAFF.json: the lists describe more than 10000000 combinations' \
         'TRIAD|  2 x the arguments do not match kernel triad: argument 3 is 8 bytes in the config, the kernel.s parameter 3 takes 4' \
         'pnpoly|  2 x the arguments do not match kernel cn_pnpoly: argument 2 is 8 bytes in the config, the kernel.s parameter 2 takes 4' \
         'dedisp|no T1 file in BAT' 'expdist|no T1 file in BAT'; do
    b=${e%%|*}
    if grep -q "^$b: *${e#*|}" "$TMP/bat.txt"; then ok "$b refused, the reason named: $(grep -m1 "^$b: *${e#*|}" "$TMP/bat.txt" | head -c 170)"
    else bad "$b" "$(grep "^$b" "$TMP/bat.txt" | head -3)"; fi
done
echo "bat_suite: $npass passed, $nfail failed, $nskip skipped"
[ $nfail = 0 ]
