#!/bin/sh
# tests/kt_gpu.sh -- outputs a kernel leaves alone, on a GPU (issue 37):
# tests/custom/stencil.cu writes only the interior of a 1000 x 37 grid, so
# its reference variant leaves the 2070 border elements of x_new.  Every
# variant must verify; the planted bugs of the source must be wrong: 1
# writes a border element (x_new[3]: "it changes 1 of the 2070 elements
# ... that the reference leaves"), 2 leaves the interior x_new[2002]
# unwritten (the poison still shows it).  A fill other than zeros ("ones")
# is the answer at the border.  An output with "check": false is not
# compared.  Needs a GPU (exit 3 without one); tests/kt_suite.sh is the
# fake GPU's part, test_leave the logic.
#
#   KFORGE=build/kforge sh tests/kt_gpu.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-ktgpu.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
export KFORGE_CACHE_DIR="$TMP/cache" KFORGE_DB="$TMP/db" LC_ALL=C
unset KFORGE_FAKE_GPU KFORGE_PLANT
cd "$TMP" && cp "$HERE"/custom/stencil.cu "$HERE"/custom/stencil.json . || exit 2
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
has() { grep -q -- "$2" "$1"; }
edit() {
    python3 - "$1" "$2" <<'PY'
import json, sys
c = json.load(open("stencil.json")); u = c["custom"]
exec(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PY
}
"$K" info >info.txt 2>&1 || { echo "SKIP kt_gpu: no GPU ($(head -1 info.txt))"; exit 3; }

"$K" run stencil.json --format json >run.json 2>run.err; rc=$?
n=$(grep -c '"status":"ok"' run.json)
if [ $rc = 0 ] && [ "$n" = 18 ] && has run.err 'leaves 2070 of the 37000 elements of x_new'; then
    ok "18 stencil variants verified; the reference leaves the 2070 border elements, and says so"
else bad "stencil run" "exit $rc, $n ok: $(tail -3 run.err) $(grep -v '"ok"' run.json | head -c 600)"; fi

edit bugs.json 'u["params"]["planted_bug"] = [1, 2]; u["params"]["block_size_y"] = [1]; u["params"]["scale_div"] = [0]; u["params"]["block_size_x"] = [64]'
"$K" run bugs.json --format json >bugs.json.out 2>bugs.err; rc=$?
if [ $rc = 1 ] && grep '"planted_bug":1' bugs.json.out | grep -q 'it changes 1 of the 2070 elements of x_new that the reference leaves at their first contents (first at x_new\[3\])'; then
    ok "planted_bug 1 (writes a border element) is wrong, and the message says it changes an element the reference leaves"
else bad "planted_bug 1" "exit $rc: $(head -c 800 bugs.json.out)"; fi
if grep '"planted_bug":2' bugs.json.out | grep -q '"status":"wrong"' && grep '"planted_bug":2' bugs.json.out | grep -q 'x_new\[2002\]'; then
    ok "planted_bug 2 (an interior element unwritten) is wrong at x_new[2002]: the poison still catches it"
else bad "planted_bug 2" "$(grep '"planted_bug":2' bugs.json.out | head -c 800)"; fi

edit ones.json 'u["args"][0]["fill"] = "ones"'
"$K" run ones.json --set block_size_x=64 --set block_size_y=2 >ones.txt 2>&1; rc=$?
if [ $rc = 0 ]; then ok "x_new filled with ones: the border's answer is its fill"
else bad "fill ones" "exit $rc: $(tail -3 ones.txt)"; fi

echo "kt_gpu: $npass passed, $nfail failed"
[ $nfail = 0 ]
