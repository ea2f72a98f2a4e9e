#!/bin/sh
# tests/stale_suite.sh -- no stale result after an edit (issue 35, part 3;
# issue 34, item 11), on the fake GPU with real NVRTC: a user's kernel that
# includes "helper.h" beside its .cu compiles from any directory (the
# source's folder is NVRTC's include path, never the current directory's);
# after an edit of the header, of a header it includes, of a header named
# by a macro, or of the .cu itself, the cubin cache misses (check --compile
# and run compile again, and a header that no longer compiles fails), a
# resumed tune and --simulate leave the results of the older source and
# say how many, a results line and a database entry record the source's
# hash, the database takes the new source's entry even when it is no
# faster, and best and export warn about an entry of another source.
#
#   KFORGE=build/kforge sh tests/stale_suite.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-stale.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "stale_suite: files kept in $TMP"; fi' EXIT
export KFORGE_CACHE_DIR="$TMP/cache" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C HOME="$TMP"
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MS SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }
has() { grep -q -- "$2" "$1"; }

# A project folder: add.cu includes helper.h, which includes sub/inner.h;
# the config is the vector_add example's, 2 x 2 variants.
P=$TMP/proj
mkdir -p "$P/sub" "$TMP/elsewhere" || exit 2
cat >"$P/add.cu" <<'EOF'
#include "helper.h"
extern "C" __global__ void vector_add(float *c, const float *a, const float *b, int n)
{
    int i = blockIdx.x * (block_size_x * per_thread) + threadIdx.x;
    for (int k = 0; k < per_thread; k++, i += block_size_x)
        if (i < n)
            c[i] = SCALE * (a[i] + b[i]);
}
EOF
printf '#include "sub/inner.h"\n#define SCALE ONE\n' >"$P/helper.h"
printf '#define ONE 1.0f\n' >"$P/sub/inner.h"
sed -e 's/"vector_add.cu"/"add.cu"/' -e 's/\[64, 128, 256, 512, 1024\]/[128, 256]/' -e 's/\[1, 2, 4, 8\]/[1, 2]/' \
    -e 's/"2^24"/4096/' "$ROOT/configs/custom/vector_add.json" >"$P/add.json" || exit 2
# the current directory's helper.h must never be the one compiled
printf '#error the current directory'"'"'s helper.h was included\n' >"$TMP/elsewhere/helper.h"
cd "$TMP/elsewhere" || exit 2
CFG=../proj/add.json

# variant lines of check --compile that came from the cache
cached() { grep -c '^  compiled .*(cached)' "$1"; }

# --- 34.11: the header beside the .cu, from any directory -------------------
"$K" check --compile "$CFG" >c1.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^  compiled ' c1.txt)" = 4 ] && [ "$(cached c1.txt)" = 0 ]; then
    ok "check --compile from another directory: helper.h beside add.cu found, the cwd's helper.h not taken"
else bad "include beside the source" "exit $rc: $(grep -m3 -i 'error\|compiled' c1.txt)"; fi
"$K" check --compile "$CFG" >c2.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(cached c2.txt)" = 4 ]; then ok "unchanged: every variant from the cache"
else bad "cache hit when nothing changed" "exit $rc: $(head -3 c2.txt)"; fi

# --- the cubin cache covers every file the compile read ---------------------
printf '#include "sub/inner.h"\n#define SCALE (2 * ONE)\n' >"$P/helper.h"
"$K" check --compile "$CFG" >c3.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(cached c3.txt)" = 0 ]; then ok "helper.h edited: check --compile compiles every variant again"
else bad "header edit" "exit $rc: $(cached c3.txt) cached: $(head -3 c3.txt)"; fi
printf '#define ONE 1.0f\n#error inner.h edited\n' >"$P/sub/inner.h"
"$K" check --compile "$CFG" >c4.txt 2>&1; rc=$?
if [ $rc != 0 ] && has c4.txt 'inner.h edited'; then
    ok "a header it includes edited so that it cannot compile: the compile fails (no cubin of the old one)"
else bad "nested header edit" "exit $rc: $(head -3 c4.txt)"; fi
printf '#define ONE 1.0f\n' >"$P/sub/inner.h"
"$K" check --compile "$CFG" >c5.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(cached c5.txt)" = 4 ]; then ok "inner.h back as it was: the cubins of that text again (cached)"
else bad "nested header restored" "exit $rc: $(head -3 c5.txt)"; fi

# run: the results line says whether the cubin came from the cache
"$K" run "$CFG" --results r.jsonl >run1.txt 2>&1; rc1=$?
printf '#include "sub/inner.h"\n#define SCALE (3 * ONE)\n' >"$P/helper.h"
"$K" run "$CFG" --results r.jsonl >run2.txt 2>&1; rc2=$?
n_run2_cached=$(tail -n 4 r.jsonl | grep -c '"cached":true')
if [ $rc1 = 0 ] && [ $rc2 = 0 ] && [ "$(wc -l <r.jsonl)" = 8 ] && [ "$n_run2_cached" = 0 ]; then
    ok "run after a header edit: 4 of 4 compiled again (\"cached\": false)"
else bad "run after a header edit" "exits $rc1 $rc2, $n_run2_cached cached, $(wc -l <r.jsonl) lines"; fi
h1=$(head -n 1 r.jsonl | sed -n 's/.*"source_hash":"\([0-9a-f]*\)".*/\1/p')
h2=$(tail -n 1 r.jsonl | sed -n 's/.*"source_hash":"\([0-9a-f]*\)".*/\1/p')
if [ ${#h1} = 32 ] && [ ${#h2} = 32 ] && [ "$h1" != "$h2" ] && [ "$(grep -c "\"source_hash\":\"$h1\"" r.jsonl)" = 4 ]; then
    ok "each results line records the hash of the source and its headers; the edit changed it"
else bad "source_hash in the results line" "'$h1' '$h2'"; fi

# a header named by a macro cannot be followed: every file of the folder counts
sed -i 's/#include "helper.h"/#define HELPER_H "helper.h"\n#include HELPER_H/' "$P/add.cu"
"$K" check --compile "$CFG" >m1.txt 2>&1
printf '#include "sub/inner.h"\n#define SCALE (4 * ONE)\n' >"$P/helper.h"
"$K" check --compile "$CFG" >m2.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(cached m2.txt)" = 0 ]; then ok "#include of a macro: an edit of the folder's header compiles again"
else bad "macro include" "exit $rc: $(cached m2.txt) cached"; fi
sed -i -e '/#define HELPER_H/d' -e 's/#include HELPER_H/#include "helper.h"/' "$P/add.cu"

# --- resume, --simulate and the database leave the older source's results ---
"$K" tune "$CFG" --results t.jsonl >t1.txt 2>&1; rc=$?
h_t1=$(head -n 1 t.jsonl | sed -n 's/.*"source_hash":"\([0-9a-f]*\)".*/\1/p')
if [ $rc = 0 ] && has t1.txt 'measured now: 4 candidates' && grep -q "\"source_hash\": \"$h_t1\"" "$TMP"/db/*.json; then
    ok "tune: 4 measured; the database entry records the source hash"
else bad "first tune" "exit $rc: $(grep -m2 'measured now\|error' t1.txt)"; fi
"$K" tune "$CFG" --results t.jsonl >t2.txt 2>&1; rc=$?
if [ $rc = 0 ] && has t2.txt 'measured now: 0 candidates' && has t2.txt 'taken from t.jsonl: 4' && ! has t2.txt 'ignored'; then
    ok "tune again, nothing changed: 4 taken from the results file"
else bad "resume, nothing changed" "exit $rc: $(grep -m2 'measured now\|ignored' t2.txt)"; fi
printf '#include "sub/inner.h"\n#define SCALE (5 * ONE)\n' >"$P/helper.h"
"$K" best --kernel "$CFG" --n 4096 >b1.txt 2>b1.err; rc=$?
if [ $rc = 0 ] && has b1.err 'warning: this entry of the custom kernel vector_add was tuned with another source'; then
    ok "best after a header edit: warns that the entry was tuned with another source"
else bad "best warns" "exit $rc: $(head -3 b1.err)"; fi
"$K" export --kernel "$CFG" -o x.h >e1.txt 2>&1; rc=$?
if [ $rc = 0 ] && has e1.txt 'warning: 1 of the 1 shapes of the custom kernel vector_add were tuned with another source' &&
   ! has e1.txt 'launcher is left out' && has x.h 'kforge_vector_add_launch' && ! has x.h 'include-dir'; then
    ok "export from another directory after a header edit: warns (how many shapes), and the launcher compiles"
else bad "export warns" "exit $rc: $(head -3 e1.txt)"; fi
cp t.jsonl sim.jsonl
"$K" tune "$CFG" --results t.jsonl >t3.txt 2>&1; rc=$?
if [ $rc = 0 ] && has t3.txt 'ignored 4 results of an older source in t.jsonl' && has t3.txt 'measured now: 4 candidates' &&
   has t3.txt 'taken from t.jsonl: 0'; then
    ok "tune resumed after a header edit: the 4 recorded results ignored (and counted), 4 measured now"
else bad "resume after a header edit" "exit $rc: $(grep -m3 'measured now\|ignored' t3.txt)"; fi
"$K" best --kernel "$CFG" --n 4096 >b2.txt 2>b2.err; rc=$?
h_t3=$(tail -n 1 t.jsonl | sed -n 's/.*"source_hash":"\([0-9a-f]*\)".*/\1/p')
if [ $rc = 0 ] && ! has b2.err 'warning' && grep -q "\"source_hash\": \"$h_t3\"" "$TMP"/db/*.json &&
   [ "$h_t3" != "$h_t1" ]; then
    ok "the database takes the new source's entry though it is no faster; best no longer warns"
else bad "database entry of the new source" "exit $rc: $(head -2 b2.err)"; fi
"$K" tune "$CFG" --simulate sim.jsonl --no-db >s1.txt 2>&1; rc=$?
if has s1.txt 'ignored 4 results of an older source in sim.jsonl' && has s1.txt 'no result for any candidate'; then
    ok "tune --simulate from a sweep of the older source: its 4 results ignored, and said"
else bad "--simulate of an older source" "exit $rc: $(head -3 s1.txt)"; fi

# an edit of the .cu itself
sed -i 's/SCALE \* (a\[i\] + b\[i\])/SCALE * (b[i] + a[i])/' "$P/add.cu"
"$K" tune "$CFG" --results t.jsonl >t4.txt 2>&1; rc=$?
if [ $rc = 0 ] && has t4.txt 'ignored 8 results of an older source' && has t4.txt 'measured now: 4 candidates'; then
    ok "tune resumed after an edit of the .cu: the 8 results of the two older sources ignored, 4 measured now"
else bad "resume after a source edit" "exit $rc: $(grep -m3 'measured now\|ignored' t4.txt)"; fi
if [ "$(tail -n 4 t.jsonl | grep -c '"cached":true')" = 0 ]; then ok "... and compiled again"
else bad "source edit compiled again" "$(tail -n 4 t.jsonl | grep -c '"cached":true') cached"; fi

# merge (issue 35): lines of an older source are left out before the cases
# are de-duplicated and ranked, and counted, in a replay and when merge ranks
# from the results alone (its config not found from where merge runs).  An
# older line made the fastest must not be chosen; an older line first in the
# file must not hide the current one as its duplicate.
h_now=$(tail -n 1 t.jsonl | sed -n 's/.*"source_hash":"\([0-9a-f]*\)".*/\1/p')
{ grep '"block_size_x":128,"per_thread":1,' sim.jsonl | sed 's/"median_ms":[0-9.e-]*/"median_ms":1e-06/'; cat t.jsonl; } >mixed.jsonl
cd "$TMP" || exit 2
"$K" merge elsewhere/mixed.jsonl --kernel proj/add.json --db "$TMP/mdb" >mg1.txt 2>&1; rc=$?
if [ $rc = 0 ] && has mg1.txt 'ranked by the results alone' &&
   has mg1.txt 'ignored 9 results of an older source in elsewhere/mixed.jsonl' &&
   has mg1.txt '4 cases; 0 recorded more than once' && has mg1.txt 'best: block_size_x=256,per_thread=2' &&
   grep -q "\"source_hash\": \"$h_now\"" "$TMP"/mdb/*.json && ! grep -q "\"source_hash\": \"$h_t1\"" "$TMP"/mdb/*.json; then
    ok "merge ranking from the results alone: 9 lines of older sources ignored and counted, the older 'fastest' not chosen"
else bad "merge of older lines, ranked alone" "exit $rc: $(grep -m4 'ignored\|cases\|best' mg1.txt)"; fi
cd "$TMP/elsewhere" || exit 2
"$K" merge mixed.jsonl --kernel "$CFG" --no-db >mg2.txt 2>&1; rc=$?
if [ $rc = 0 ] && has mg2.txt 'ignored 9 results of an older source in mixed.jsonl' && ! has mg2.txt 'ranking from the results alone' &&
   has mg2.txt '4 of the space.s 4 candidates' && ! has mg2.txt 'kforge-merge-'; then
    ok "merge replaying the space: the same 9 ignored, said once and of the file given, and the current 4 replayed"
else bad "merge replay of older lines" "exit $rc: $(grep -m4 'ignored\|cases\|ranking' mg2.txt)"; fi
"$K" merge sim.jsonl --kernel "$CFG" --no-db >mg3.txt 2>&1; rc=$?
if [ $rc = 2 ] && has mg3.txt 'ignored 4 results of an older source in sim.jsonl' &&
   has mg3.txt 'no results of the current source in the files given'; then
    ok "merge of older lines only: exit 2, nothing of the current source, and said"
else bad "merge of older lines only" "exit $rc: $(head -3 mg3.txt)"; fi

# a results file of a kforge before the hash: a user's kernel's lines with
# none are not taken (the source they ran is not known)
tail -n 4 t.jsonl | sed 's/"source_hash":"[0-9a-f]*",//' >old.jsonl
"$K" tune "$CFG" --results old.jsonl --no-db >t5.txt 2>&1; rc=$?
if [ $rc = 0 ] && has t5.txt 'ignored 4 results of a user.s kernel in old.jsonl that record no source hash' &&
   has t5.txt 'measured now: 4 candidates'; then
    ok "older results file: lines with no source hash are read, not taken, and said"
else bad "lines with no hash" "exit $rc: $(grep -m3 'measured now\|ignored' t5.txt)"; fi

# --- the built-in families record no hash (their source is the binary's) ---
"$K" run "$ROOT/configs/fast.json" --set n=4096 --results builtin.jsonl >bi.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ -s builtin.jsonl ] && ! has builtin.jsonl 'source_hash'; then
    ok "built-in families' lines carry no source_hash (their templates are in the binary)"
else bad "built-in lines" "exit $rc: $(head -2 bi.txt)"; fi

echo "stale_suite: $npass passed, $nfail failed"
[ $nfail = 0 ]
