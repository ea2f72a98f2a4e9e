#!/bin/sh
# tests/family_suite.sh -- a family made outside src/families/ (issue 22):
# build/tests/kforge-tile registers the test family of tests/family_tile/
# (y = a * x + b tiled in 2-D: two inputs of different dtypes, one output,
# no dtype or op axis, a 2-D launch with dynamic shared memory, its kernel
# read from a file at run time) and runs the kforge command line.  On the
# fake GPU it goes through axes, check, gen, run, tune with resume, best
# and merge; launches beyond the device's limits are skipped with their reason;
# a planted unwritten output is caught and named.
#
#   KFORGE_TILE=build/tests/kforge-tile sh tests/family_suite.sh
set -u
TILE=${KFORGE_TILE:-build/tests/kforge-tile}
case $TILE in /*) ;; *) TILE=$(pwd)/$TILE ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
CFG=$HERE/family_tile/tile.json
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-family.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "family_suite: files kept in $TMP"; fi' EXIT
export KFORGE_CACHE_DIR="$TMP/cache" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MS SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
cd "$TMP" || exit 2
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }
has() { grep -q -- "$2" "$1"; }

# --- the family is there, with its own axes and no dtype or op ----------
"$TILE" axes tile_axpb >axes.txt 2>&1
if has axes.txt tile_x && has axes.txt rows_per_thread && ! has axes.txt dtype; then ok "axes: the family's own table"
else bad "axes" "$(head -3 axes.txt)"; fi

# --- check --compile and gen ---------------------------------------------
"$TILE" check "$CFG" --compile >check.txt 2>&1; rc=$?
n=$(grep -c '^  compiled' check.txt)
if [ $rc = 0 ] && [ "$n" = 48 ]; then ok "check --compile: 48 variants compiled by NVRTC"
else bad "check --compile" "exit $rc, $n compiled: $(tail -2 check.txt)"; fi
"$TILE" gen "$CFG" --set tile_x=64 --set tile_y=4 --set rows_per_thread=2 >gen.txt 2>&1
if has gen.txt '#define KF_TILE_X 64' && has gen.txt 'kf_tile_axpb' && has gen.txt 'extern __shared__'; then
    ok "gen: the #defines and the kernel read from tile.cuh"
else bad "gen" "$(head -5 gen.txt)"; fi

# --- run: every variant verified on the fake GPU --------------------------
"$TILE" run "$CFG" --results run.jsonl -q >run.txt 2>&1; rc=$?
n=$(grep -c '"status":"ok"' run.jsonl)
if [ $rc = 0 ] && [ "$n" = 48 ] && has run.jsonl '"kernel":"tile_axpb","tile_x":' && ! has run.jsonl '"dtype"'; then
    ok "run: 48 cases ok, results keyed by the family's own axes"
else bad "run" "exit $rc, $n ok: $(tail -2 run.txt)"; fi

# --- launches beyond the limits: skipped with the reason, never run -------
cat >limits.json <<'JSON'
{"kernel": "tile_axpb", "defaults": {"cols": 256},
 "variants": [{"name": "big_block", "tile_x": 64, "tile_y": 32, "rows": 64},
              {"name": "tall_grid", "tile_x": 32, "tile_y": 1, "rows_per_thread": 1, "rows": "2^20"},
              {"name": "fine", "tile_x": 32, "tile_y": 8, "rows": 64},
              {"name": "opt_in", "tile_x": 32, "tile_y": 8, "rows": 64, "extra_smem": 200},
              {"name": "too_much_smem", "tile_x": 32, "tile_y": 8, "rows": 64, "extra_smem": 240}]}
JSON
"$TILE" run limits.json --results limits.jsonl --format jsonl >limits.txt 2>&1; rc=$?
if [ $rc = 0 ] && grep -q '"name":"big_block".*"status":"skipped","message":"skipped: a block of 2048 threads (64x32x1)' limits.jsonl &&
   grep -q '"name":"tall_grid".*"status":"skipped","message":"skipped: grid.y = 1048576 is outside 1..65535' limits.jsonl &&
   grep -q '"name":"too_much_smem".*"status":"skipped","message":"skipped: 245888 bytes of shared memory per block' limits.jsonl &&
   grep -q '"name":"fine".*"status":"ok"' limits.jsonl && grep -q '"name":"opt_in".*"status":"ok"' limits.jsonl; then
    ok "limits: 2048 threads, a grid.y of 2^20 and 240 KiB of shared memory skipped with their reasons (exit 0); 200 KiB runs"
else bad "limits" "exit $rc: $(cut -c1-300 limits.txt)"; fi

# --- resumed skips are still not failures: the same exit as the first run --
"$TILE" run limits.json --results limits.jsonl --resume -q >limits-resume.txt 2>&1; rc=$?
if [ $rc = 0 ] && has limits-resume.txt 'resumed: 5 cases taken from limits.jsonl, 0 measured now'; then
    ok "limits resumed: the skipped cases taken from the results file, exit 0 as the first run"
else bad "limits resumed" "exit $rc: $(tail -2 limits-resume.txt)"; fi

# --- a planted unwritten output is caught, and named ----------------------
KFORGE_PLANT='drop_last@*' "$TILE" run "$CFG" --set tile_x=64 --set tile_y=4 --set rows_per_thread=2 --no-results \
    --format jsonl >plant.txt 2>&1; rc=$?
if [ $rc = 1 ] && grep -q '"status":"wrong","message":"wrong result on the exact data: 1 of 60000 outputs wrong; worst at y\[299\]\[199\]' plant.txt; then
    ok "planted: the unwritten y[299][199] is caught (exit 1)"
else bad "planted" "exit $rc: $(cut -c1-300 plant.txt)"; fi

# --- tune, then resume: nothing measured twice ----------------------------
"$TILE" tune "$CFG" --results tune.jsonl -q --format jsonl >tune1.txt 2>&1; rc=$?
n1=$(grep -c . tune.jsonl)
"$TILE" tune "$CFG" --results tune.jsonl -q --format jsonl >tune2.txt 2>&1; rc2=$?
n2=$(grep -c . tune.jsonl)
if [ $rc = 0 ] && [ $rc2 = 0 ] && [ "$n1" = 48 ] && [ "$n2" = 48 ] && has tune1.txt '"label": "tile64x4/r2"' &&
   has tune2.txt '"label": "tile64x4/r2"'; then
    ok "tune: the best of 48 (tile64x4/r2); run again, it resumes and measures nothing"
else bad "tune" "exit $rc/$rc2, $n1/$n2 lines: $(tail -2 tune1.txt)"; fi
if grep -q '"kernel": "tile_axpb",' db/*.json && grep -q '"tile_y": 4,' db/*.json && ! grep -q '"dtype"' db/*.json; then
    ok "database: the entry is keyed by kernel and shape alone"
else bad "database" "$(head -c 400 db/*.json)"; fi

# --- best: by the family's own sizes, the nearest when not tuned ---------
"$TILE" best --kernel tile_axpb --rows 300 --cols 200 >best.txt 2>best.err; rc=$?
"$TILE" best --kernel tile_axpb --rows 600 --cols 200 >near.txt 2>near.err; rc2=$?
if [ $rc = 0 ] && grep -q '"tile_x": 64,' best.txt && grep -q '"rows_per_thread": 2,' best.txt && [ $rc2 = 0 ] &&
   grep -q 'using the one tuned for the nearest size, rows=300 cols=200' near.err; then
    ok "best: the tuned variant at 300x200, and the nearest for 600x200"
else bad "best" "exit $rc/$rc2: $(cat best.err near.err | head -3)"; fi

# --- merge of two shards: the same database entry as the tune -------------
"$TILE" tune "$CFG" --shard 1/2 --results s1.jsonl -q --no-db >/dev/null 2>&1
"$TILE" tune "$CFG" --shard 2/2 --results s2.jsonl -q --no-db >/dev/null 2>&1
"$TILE" merge s1.jsonl s2.jsonl --db merged -q >merge.txt 2>&1; rc=$?
python3 "$HERE/golden/normalize.py" db db/*.json >tune.db
python3 "$HERE/golden/normalize.py" db merged/*.json >merge.db
if [ $rc = 0 ] && cmp -s tune.db merge.db; then ok "merge: two shards give the tune's database entry (date and how aside)"
else bad "merge" "exit $rc: $(diff tune.db merge.db | head -5)"; fi

echo "family_suite: $npass passed, $nfail failed"
[ $nfail = 0 ]
