#!/bin/sh
# tests/bat_suite.sh -- BAT's benchmarks (github:NTNU-HPC-Lab/BAT) from their
# T1 files on the fake GPU (issue 37), by tools/bat_t1.sh with a budget of 2:
# GEMM, nbody, convolution, hotspot (22 million combinations before its
# Conditions, enumerated with each checked as soon as its parameters are
# bound) and MD5Hash (an int8 buffer) tune, their T4 is valid against the schema and
# loads in the Auto-Tuning Association's methodology reader
# (python/tests/methodology_reader.py); the others are refused with the
# reason named: TRIAD's and pnpoly's arguments that do not match their kernels
# (TRIAD declares double, its kernel takes float; pnpoly passes vertex_xy
# where the kernel takes int n: BAT's defects, see the README), and dedisp
# and expdist have no T1 file (expdist's on BAT's other branches is
# hotspot's).  Without BAT: a huge space with few valid combinations, and
# int8/uint8 buffers, fills and scalars.
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
for b in GEMM nbody convolution hotspot MD5Hash; do
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
for e in 'TRIAD|  2 x the arguments do not match kernel triad: argument 3 "s" (a float64 scalar in TRIAD-CAFF.json) is 8 bytes in the config, the kernel.s parameter 3 takes 4: expected float32, int32 or uint32 there' \
         'pnpoly|  2 x the arguments do not match kernel cn_pnpoly: argument 2 "vertex_xy" (a buffer of float32 in pnpoly-CAFF.json) is 8 bytes in the config, the kernel.s parameter 2 takes 4: expected float32, int32 or uint32 there' \
         'dedisp|no T1 file in BAT' 'expdist|no T1 file in BAT'; do
    b=${e%%|*}
    if grep -q "^$b: *${e#*|}" "$TMP/bat.txt"; then ok "$b refused, the reason named: $(grep -m1 "^$b: *${e#*|}" "$TMP/bat.txt" | head -c 170)"
    else bad "$b" "$(grep "^$b" "$TMP/bat.txt" | head -3)"; fi
done
# expdist: the only expdist T1 file in BAT (branches dev and kernelbackend; master dropped it) is
# hotspot's, renamed: its kernel is calculate_temp in hotspot_kernel.cu
G=$BAT
[ -d "$BAT/.git" ] && G=$BAT/.git
if git --git-dir="$G" rev-parse -q --verify refs/heads/dev >/dev/null 2>&1; then
    if grep -q '^expdist:   on dev: batbench/benchmarks/expdist/expdist-CAFF.json, kernel calculate_temp in hotspot_kernel.cu' "$TMP/bat.txt"; then
        ok "expdist: the T1 file on BAT's other branches named, and that it is hotspot's kernel"
    else bad "expdist's other branches" "$(grep '^expdist' "$TMP/bat.txt" | head -3)"; fi
fi
# A space whose raw product is huge (2*10^9) and whose valid set is small (12): the constraints
# are checked as soon as their parameters are bound, so the product is never walked (hotspot's
# 22 million are the same case); without a constraint over the first parameters it is refused.
H=$TMP/huge
mkdir -p "$H"
printf '%s\n' '__global__ void k(float *out, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = A + B + C; }' >"$H/k.cu"
cat >"$H/huge.json" <<'EOF2'
{"kernel": "custom",
 "custom": {"source": "k.cu", "entry": "k",
  "params": {"A": {"range": [1, 1000]}, "B": {"range": [1, 1000]}, "ONE": [1], "C": {"range": [1, 1000]}, "block_size_x": [32, 64]},
  "constraints": ["A <= 2", "B == A * ONE", "C <= 3"],
  "sizes": ["n"],
  "args": [{"name": "out", "dtype": "float32", "length": "n", "role": "out"}, {"name": "n", "scalar": "int32", "value": "n"}],
  "grid": ["ceil(n / block_size_x)"], "block": ["block_size_x"]},
 "defaults": {"n": "1024"}}
EOF2
t0=$(date +%s)
(cd "$H" && "$K" check huge.json) >"$H/out.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q '^huge.json: 12 variants, 12 cases' "$H/out.txt" &&
   grep -q 'the constraints left out 1999999988 combinations as they were enumerated' "$H/out.txt" &&
   [ $(($(date +%s) - t0)) -lt 60 ]; then
    ok "a space of 2*10^9 combinations, 12 valid: enumerated with the constraints checked as their parameters are bound ($(($(date +%s) - t0)) s)"
else bad "huge space" "rc=$rc $(head -3 "$H/out.txt")"; fi
sed 's/"constraints": \["A <= 2", "B == A \* ONE", "C <= 3"\]/"constraints": ["block_size_x < 64"]/' "$H/huge.json" >"$H/last.json"
(cd "$H" && "$K" check last.json) >"$H/out2.txt" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q 'last.json: the lists describe more than 10000000 combinations; narrow them or add constraints over the first parameters' "$H/out2.txt"; then
    ok "a huge space whose one constraint needs the last parameter is refused (exit 2, saying why)"
else bad "huge space, constraint on the last parameter" "rc=$rc $(head -3 "$H/out2.txt")"; fi
# int8 and uint8 (MD5Hash's foundKey is int8): buffers from a fill and from a .npy file ('|i1'),
# a uint8 scalar, checked against their ranges
B=$TMP/bytes
mkdir -p "$B"
printf '%s\n' '__global__ void k(signed char *x, const unsigned char *y, unsigned char s, int n) {' \
    '    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = (signed char)(y[i] + s); }' >"$B/k.cu"
bytes_cfg() {  # $1: x's fill, $2: y's fill, $3: s's value
    cat <<EOF2
{"kernel": "custom",
 "custom": {"source": "k.cu", "entry": "k", "params": {"block_size_x": [32, 64]}, "sizes": ["n"],
  "args": [{"name": "x", "dtype": "int8", "length": "n", "role": "out", "fill": $1},
           {"name": "y", "dtype": "uint8", "length": "n", "role": "in", "fill": $2},
           {"name": "s", "scalar": "uint8", "value": "$3"}, {"name": "n", "scalar": "int32", "value": "n"}],
  "grid": ["ceil(n / block_size_x)"], "block": ["block_size_x"]},
 "defaults": {"n": "1000"}}
EOF2
}
"${PYTHON:-python3}" -c 'import numpy, sys; numpy.save(sys.argv[1], (numpy.arange(1000) % 250).astype(numpy.uint8))' "$B/y.npy" 2>/dev/null ||
    /usr/bin/python3 -c 'import numpy, sys; numpy.save(sys.argv[1], (numpy.arange(1000) % 250).astype(numpy.uint8))' "$B/y.npy"
bytes_cfg '{"constant": -7}' '{"npy": "y.npy"}' 5 >"$B/ok.json"
(cd "$B" && "$K" run ok.json --results r.jsonl) >"$B/ok.txt" 2>&1
rc=$?
if [ $rc = 0 ] && [ "$(grep -c '"status":"ok"' "$B/r.jsonl" 2>/dev/null)" = 2 ]; then
    ok "int8 and uint8 buffers (a constant fill, a '|u1' .npy file) and a uint8 scalar: 2 candidates ok"
else bad "int8 and uint8" "rc=$rc $(grep -m2 kforge "$B/ok.txt")"; fi
bytes_cfg '{"constant": 300}' '{"random": [0, 255]}' 5 >"$B/c300.json"
(cd "$B" && "$K" check c300.json) >"$B/c300.txt" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "c300.json: line 3: custom.args\[0\] (x).fill: a buffer of int8 takes a constant that is an integer -128..127, got" "$B/c300.txt"; then
    ok "an int8 fill of 300 refused (exit 2, the field and the range named)"
else bad "int8 fill 300" "rc=$rc $(head -2 "$B/c300.txt")"; fi
bytes_cfg '"zeros"' '{"random": [-1, 255]}' 5 >"$B/rneg.json"
(cd "$B" && "$K" check rneg.json) >"$B/rneg.txt" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "custom.args\[1\] (y).fill: a buffer of uint8 takes a random range within 0..255" "$B/rneg.txt"; then
    ok "a uint8 random fill from -1 refused (exit 2)"
else bad "uint8 random -1" "rc=$rc $(head -2 "$B/rneg.txt")"; fi
bytes_cfg '"zeros"' '"ones"' 300 >"$B/s300.json"
(cd "$B" && "$K" check s300.json) >"$B/s300.txt" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "args\[2\] (s).value = 300 is outside uint8's range 0..255" "$B/s300.txt"; then
    ok "a uint8 scalar of 300 refused, its range named"
else bad "uint8 scalar 300" "rc=$rc $(head -3 "$B/s300.txt")"; fi
sed 's/"dtype": "uint8", "length": "n", "role": "in"/"dtype": "float32", "length": "n", "role": "in"/' "$B/ok.json" >"$B/f32.json"
(cd "$B" && "$K" check f32.json) >"$B/f32.txt" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "holds '|u1' elements, the buffer is float32" "$B/f32.txt"; then
    ok "a '|u1' .npy file for a float32 buffer refused"
else bad "|u1 for float32" "rc=$rc $(head -2 "$B/f32.txt")"; fi
echo "bat_suite: $npass passed, $nfail failed, $nskip skipped"
[ $nfail = 0 ]
