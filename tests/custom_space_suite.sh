#!/bin/sh
# tests/custom_space_suite.sh -- a custom kernel's space and its messages
# (issue 34, items 9 and 14), on the fake GPU: each launch value that cannot
# be is refused at check time with the value itself (block, shared memory,
# grid, bytes, an int32 scalar); a block over 1024 threads is never
# compiled; check counts the combinations that cannot run by reason (-v lists
# each); a compile failure is cached like a cubin; --set gives a param a value
# its list lacks; an error inside "custom" names its line; "skipped:" is said
# once.
#
#   KFORGE=build/kforge sh tests/custom_space_suite.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-cspace.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "custom_space_suite: files kept in $TMP"; fi' EXIT
# its own cubin cache: the failure cache is looked at
export KFORGE_CACHE_DIR="$TMP/cache" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MS KFORGE_ALLOW_OUTSIDE_FILES SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
cd "$TMP" || exit 2
cp "$ROOT"/configs/custom/vector_add.cu "$ROOT"/configs/custom/vector_add.json "$ROOT"/configs/custom/transpose.cu \
   "$ROOT"/configs/custom/transpose.json . || exit 2
npass=0
nfail=0
ok() { printf 'PASS %s\n' "$1"; npass=$((npass + 1)); }
bad() { printf 'FAIL %s: %s\n' "$1" "$2"; nfail=$((nfail + 1)); keep=1; }
has() { grep -q -- "$2" "$1"; }

# vector_add.json with keys of "custom" replaced: mk OUT KEY=JSON...
mk() {
    python3 - "$@" <<'PY' || exit 2
import json, sys
d = json.load(open("vector_add.json"))
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    d["custom"][k] = json.loads(v)
json.dump(d, open(sys.argv[1], "w"), indent=2)
PY
}

# --- item 9: the value itself, at check time --------------------------------
value_case() { # NAME EXPECT KEY=JSON...
    name=$1 want=$2
    shift 2
    mk v.json "$@"
    "$K" check v.json --set n=1000 >v.txt 2>&1; rc=$?
    if [ $rc = 2 ] && grep -qF -- "$want" v.txt; then ok "check: $name: $want"
    else bad "$name" "exit $rc: $(head -c 400 v.txt)"; fi
}
value_case '"block": ["0"]' 'block[0] = 0 is outside 1..1024' 'block=["0"]'
value_case '"smem": "pow2(40)"' 'smem = 1099511627776 bytes is over 2^30' 'smem="pow2(40)"'
value_case '"smem": "0 - 1"' 'smem = -1 bytes is below 0' 'smem="0 - 1"'
value_case '"grid": ["0 - n"]' 'n=1000: grid[0] = -1000 is outside 1..2147483647' 'grid=["0 - n"]'
value_case '"bytes": "0 - n"' 'n=1000: bytes = -1000 is below 0' 'bytes="0 - n"'
value_case 'an int32 scalar of pow2(40)' \
    "args[3] (n).value = 1099511627776 is outside int32's range -2147483648..2147483647" \
    'args=[{"name": "c", "dtype": "float32", "length": "n", "role": "out"}, {"name": "a", "dtype": "float32", "length": "n", "role": "in"}, {"name": "b", "dtype": "float32", "length": "n", "role": "in"}, {"name": "n", "scalar": "int32", "value": "pow2(40)"}]'
cp vector_add.cu "$(printf 'va\377.cu')" || exit 2
mk v.json
python3 - <<'PY' || exit 2
import json
d = json.load(open("v.json"))
d["custom"]["source"] = b"va\xff.cu".decode("latin-1")  # JSON cannot hold the byte: write it raw below
t = json.dumps(d).replace("va\\u00ff.cu", "va@@.cu").encode()
open("v.json", "wb").write(t.replace(b"va@@.cu", b"va\xff.cu"))
PY
"$K" check v.json >v.txt 2>&1; rc=$?
if [ $rc = 2 ] && has v.txt 'custom.source: the file name is not valid UTF-8'; then
    ok "a source file name that is not UTF-8: exit 2, said so (not NVRTC's 'no lowered name')"
else bad "non-UTF-8 source name" "exit $rc: $(head -c 300 v.txt)"; fi

# --- item 14: a block over 1024 threads is never compiled -------------------
mk b.json 'params={"block_size_x": [512, 2048], "per_thread": [1]}' 'reference={"params": {"block_size_x": 512, "per_thread": 1}}'
"$K" check b.json --compile --set n=1000 >b.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^  compiled' b.txt)" = 1 ] && ! grep -q 'block_size_x=2048.*compiled' b.txt &&
   has b.txt 'block_size_x=2048,per_thread=1: block\[0\] = 2048 is outside 1..1024'; then
    ok "check --compile: block_size_x=2048 is a combination that cannot run, not compiled"
else bad "block over 1024" "exit $rc: $(head -c 500 b.txt)"; fi
"$K" tune b.json --set n=1000 --budget 5 --results bt.jsonl -q >bt.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c . bt.jsonl)" = 1 ] && ! grep -q '"block_size_x":2048' bt.jsonl; then
    ok "tune: no budget spent on block_size_x=2048"
else bad "tune with a block over 1024" "exit $rc: $(head -c 300 bt.txt)"; fi

# --- item 14: check counts what cannot run by reason; -v lists each --------
"$K" check transpose.json >t.txt 2>t.err; rc=$?
"$K" check -v transpose.json >tv.txt 2>tv.err; rc2=$?
n=$(grep -c '^  ' t.err)
if [ $rc = 0 ] && [ $rc2 = 0 ] && has t.err 'skipped 42 combinations that cannot run, by reason (kforge check -v lists each):' &&
   has t.err '^      18 x constraint "block_rows <= tile_dim" is false (the first: tile_dim=16,block_rows=32,' &&
   [ "$n" -le 6 ] && [ "$(grep -c '^  tile_dim=' tv.err)" = 42 ]; then
    ok "check: 42 combinations that cannot run in $n lines by reason; check -v lists the 42"
else bad "check's skipped lines" "exit $rc/$rc2, $n lines: $(head -c 600 t.err)"; fi

# --- item 14: a compile failure is cached ------------------------------------
{ printf '#if per_thread == 2\n#error planted\n#endif\n'; cat vector_add.cu; } > broken.cu
mk broken.json 'source="broken.cu"' 'params={"block_size_x": [64], "per_thread": [1, 2]}' \
    'reference={"params": {"block_size_x": 64, "per_thread": 1}}'
"$K" run broken.json --set n=1000 --no-results >r1.txt 2>&1; rc=$?
nf=$(ls "$KFORGE_CACHE_DIR" | grep -c '\.fail$')
"$K" run broken.json --set n=1000 --no-results >r2.txt 2>&1; rc2=$?
if [ $rc = 1 ] && [ $rc2 = 1 ] && [ "$nf" = 1 ] && ! has r1.txt 'as before: the cached failure' &&
   has r2.txt 'as before: the cached failure .*\.fail' && has r2.txt 'broken.cu(2): catastrophic error: #error directive: planted'; then
    ok "a compile failure is kept in the cache (<key>.fail) and given again, with its log, without compiling"
else bad "failure cache" "exit $rc/$rc2, $nf .fail: $(head -c 500 r2.txt)"; fi
"$K" run broken.json --set n=1000 --no-results --no-cache >r3.txt 2>&1
if ! has r3.txt 'cached failure'; then ok "--no-cache compiles again"
else bad "--no-cache" "$(head -c 300 r3.txt)"; fi

# --- item 14: "skipped:" once --------------------------------------------
mk s.json 'smem=300000'
"$K" run s.json --set n=1000 --set block_size_x=64 --set per_thread=1 --no-results >s.txt 2>&1
if has s.txt 'n=1000: skipped: 300000 bytes of shared memory' && ! has s.txt 'skipped: skipped:'; then
    ok "a launch the device refuses: \"skipped: 300000 bytes ...\", said once"
else bad "skipped: skipped:" "$(grep skipped s.txt | head -2)"; fi

# --- item 14: --set gives a one-value param another value --------------------
mk one.json 'params={"block_size_x": [64, 128], "per_thread": [2]}' 'reference={"params": {"block_size_x": 64, "per_thread": 2}}'
"$K" run one.json --set n=1000 --set per_thread=4 --set block_size_x=96 --format jsonl --no-results >one.txt 2>&1; rc=$?
if [ $rc = 0 ] && has one.txt '"block_size_x":96,"per_thread":4,.*"status":"ok"'; then
    ok "--set per_thread=4 on a param listed as [2] (and block_size_x=96, not listed): run"
else bad "--set a one-value param" "exit $rc: $(head -c 300 one.txt)"; fi

# --- item 14: an error inside "custom" names its line ----------------------
mk l.json 'args=[{"name": "c", "dtype": "float32", "length": "n", "role": "out"}, {"name": "a", "dtype": "float33", "length": "n", "role": "in"}]'
"$K" check l.json >l.txt 2>&1; rc=$?
line=$(grep -n '"float33"' l.json | cut -d: -f1)
if [ $rc = 2 ] && has l.txt "l.json: line $line: custom.args\[1\] (a).dtype: expected a dtype"; then
    ok "an error inside \"custom\" names its line ($line)"
else bad "line of an error inside custom" "exit $rc, want line $line: $(head -c 300 l.txt)"; fi

# --- item 14: best --list names a custom kernel's entries; --kernel NAME says what to give
"$K" tune vector_add.json --set n=1000 --set block_size_x=[64,128] --set per_thread=1 --results va.jsonl -q >/dev/null 2>&1
"$K" best --list >bl.txt 2>bl.err; rc=$?
"$K" best --kernel vector_add --n 1000 >bk.txt 2>bk.err; rc2=$?
if [ $rc = 0 ] && has bl.err 'and 1 entry of kernels made from a config (kernel "custom"): vector_add (1); kforge best --list --kernel CONFIG lists them' &&
   [ $rc2 = 2 ] && has bk.err 'kforge best: --kernel vector_add: a kernel made from a config (kernel "custom"; the database has 1 entry of it): give its config'; then
    ok "best --list names vector_add's entry; best --kernel vector_add asks for its config"
else bad "best --list / --kernel NAME" "exit $rc/$rc2: $(cat bl.err bk.err | head -c 400)"; fi

# --- item 14: kforge run takes best --kernel's output, and runs that variant ---
# A project of its own: the source and an input's .npy in folders of it.
# best's config describes the kernel again, its files named relative to the
# folder the config is written to (that of standard output's file).
mkdir -p bp/src bp/data bp/out deep elsewhere || exit 2
cp vector_add.cu bp/src/va.cu || exit 2
python3 - <<'PY' || exit 2
import json, struct
h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), }"
h += " " * (63 - (10 + len(h)) % 64) + "\n"
open("bp/data/a.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()
                                  + struct.pack("<1000f", *[i % 7 for i in range(1000)]))
d = json.load(open("vector_add.json"))
d["custom"]["source"] = "src/va.cu"
d["custom"]["args"][1]["fill"] = {"npy": "data/a.npy"}
d["custom"]["params"] = {"block_size_x": [64, 128, 256], "per_thread": [1, 2]}
json.dump(d, open("bp/va.json", "w"), indent=2)
PY
"$K" tune bp/va.json --set n=1000 --results bp.jsonl -q >/dev/null 2>&1
"$K" best --kernel bp/va.json --n 1000 >best.json 2>best.err; rc=$?
"$K" run best.json --format jsonl --no-results >br.txt 2>&1; rc2=$?
want=$(python3 -c 'import json; d = json.load(open("best.json")); print("\"block_size_x\":%d,\"per_thread\":%d," % (d["block_size_x"], d["per_thread"]))' 2>/dev/null)
if [ $rc = 0 ] && [ $rc2 = 0 ] && [ -n "$want" ] && [ "$(grep -c '"status"' br.txt)" = 1 ] &&
   has br.txt "\"kernel\":\"vector_add\",$want\"n\":1000,.*\"status\":\"ok\"" && has best.json '"source": "bp/src/va.cu"' &&
   has best.json '"npy": "bp/data/a.npy"' && ! has best.err 'outside'; then
    ok "best --kernel CONFIG > best.json; kforge run best.json runs the best variant ($want n=1000), ok"
else bad "run best.json of a custom kernel" "exit $rc/$rc2: $(head -c 400 best.err) $(head -c 400 br.txt)"; fi
cd elsewhere || exit 2
"$K" best --kernel ../bp/va.json --n 1000 >../bp/out/b.json 2>b.err; rc=$?
"$K" run ../bp/out/b.json --format jsonl --no-results >b.txt 2>&1; rc2=$?
if [ $rc = 0 ] && [ $rc2 = 2 ] && has ../bp/out/b.json '"source": "../src/va.cu"' &&
   has b.err 'the config names files outside .*/bp/out (the folder it is written to)' &&
   has b.txt 'custom.source: "../src/va.cu" is a path with a .. component' &&
   KFORGE_ALLOW_OUTSIDE_FILES=1 "$K" run ../bp/out/b.json --format jsonl --no-results 2>&1 | grep -q "$want\"n\":1000,.*\"status\":\"ok\""; then
    ok "best written from another folder into one beside the source: names resolve from where it is written; outside it is said, and runs with KFORGE_ALLOW_OUTSIDE_FILES=1"
else bad "best.json in another folder" "exit $rc/$rc2: $(head -c 300 b.err) $(head -c 300 b.txt)"; fi
"$K" best --kernel ../bp/va.json --n 1000 >../bp/b2.json 2>/dev/null; rc=$?
"$K" run ../bp/b2.json --format jsonl --no-results >b2.txt 2>&1; rc2=$?
if [ $rc = 0 ] && [ $rc2 = 0 ] && has ../bp/b2.json '"source": "src/va.cu"' && has b2.txt "$want\"n\":1000,.*\"status\":\"ok\""; then
    ok "best written into the config's folder from elsewhere: run from elsewhere too"
else bad "best.json beside the config" "exit $rc/$rc2: $(head -c 300 b2.txt)"; fi
cd "$TMP" || exit 2

echo "custom_space_suite: $npass passed, $nfail failed"
[ $nfail = 0 ]
