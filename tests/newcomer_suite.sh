#!/bin/sh
# tests/newcomer_suite.sh -- a newcomer's first hour with kforge, scripted, on
# the fake GPU (KFORGE_FAKE_GPU=1), with documented commands only:
#   1. write a small JSON sweep config and `kforge run` it: the table
#      (--columns auto) has a column for the axis that varies and says the
#      rest once; --sort gbps puts the fastest first;
#   2. `kforge tune` a small space with --top 5 and read the top list;
#   3. plot the sweep, the tune results and kforge against a baseline file
#      with tools/plot.sh (SKIP, loudly, without python3 or gnuplot);
#   4. `kforge compare` two configs (one variant against another) with --match n;
#   5. append --format csv --no-header in a shell loop: one header in all;
#   6. the README's "A first session" commands, as written.
# Works in a mktemp -d directory under ${TMPDIR:-/tmp}, removed when every
# step passed and kept (and named) otherwise.  Prints PASS/FAIL/SKIP lines and
# "newcomer suite: N passed, M failed"; exits 1 if a step failed.
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PLOT="$ROOT/tools/plot.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-newcomer.XXXXXX") || exit 2
trap 'exit 130' INT TERM HUP
# make check gives the suites that do not test the cache one cubin cache (KFORGE_TEST_CACHE)
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C
unset KFORGE_FAULT_INJECT KFORGE_PLANT KFORGE_NVML_LIB NO_COLOR
cd "$TMP" || exit 2
npass=0
nfail=0
nskip=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() {
    echo "FAIL $1: $2"
    nfail=$((nfail + 1))
}
skip() { echo "SKIP $1: $2"; nskip=$((nskip + 1)); }
has() { grep -Eq -- "$2" "$1"; }

# --- 1. a sweep config, run, the table ----------------------------------------
cat >sweep.json <<'J'
{"kernel": "reduce",
 "defaults": {"algorithm": "shuffle", "unroll": "full", "n": "2^20"},
 "variants": [{"name": "mine", "block_size": [128, 256, 512]}]}
J
"$KFORGE" check sweep.json >check.txt 2>&1 || bad check "kforge check: exit $?: $(cat check.txt)"
"$KFORGE" run sweep.json --columns auto --results sweep.jsonl -q >run.txt 2>run.err
rc=$?
if [ $rc -ne 0 ]; then
    bad run "exit $rc: $(cat run.err)"
elif ! has run.txt '^block_size +status +time +noise +GB/s +% peak$'; then
    bad run "no block_size column: $(cat run.txt)"
elif ! has run.txt '^same in every row: name=mine .*algorithm=shuffle' || ! has run.txt 'n=1048576$'; then
    bad run "the fixed axes are not said once above the table: $(cat run.txt)"
elif [ "$(grep -Ec '^ +(128|256|512) +ok ' run.txt)" != 3 ]; then
    bad run "expected 3 ok rows: $(cat run.txt)"
elif [ "$(wc -l <sweep.jsonl)" != 3 ]; then
    bad run "expected 3 lines in sweep.jsonl"
else
    ok "run --columns auto"
fi

# the fastest first
"$KFORGE" run sweep.json --columns block_size,gbps --sort gbps --no-results -q >sorted.txt 2>&1
best=$(awk '$1 ~ /^[0-9]+$/ { print $1; exit }' sorted.txt)
bestg=$(awk '$1 ~ /^[0-9]+$/ { print $2; exit }' sorted.txt)
maxg=$(awk '$1 ~ /^[0-9]+$/ && $2 > m { m = $2 } END { print m }' sorted.txt)
if [ -n "$best" ] && [ "$bestg" = "$maxg" ] && has sorted.txt '^block_size +GB/s$'; then
    ok "run --sort gbps (best: block_size=$best)"
else
    bad "run --sort gbps" "$(cat sorted.txt)"
fi

# --- 2. tune a small space, the top 5 ---------------------------------------------
cat >space.json <<'J'
{"kernel": "reduce",
 "defaults": {"algorithm": "shuffle", "unroll": "full", "n": "2^20"},
 "variants": [{"block_size": [128, 256, 512], "elements_per_thread": [1, 2, 4], "vector_width": [1, 4]}]}
J
"$KFORGE" tune space.json --top 5 --results tune.jsonl -q >tune.txt 2>tune.err
rc=$?
ranks=$(awk '/^top 5 at n=1048576 of 18 candidates/ { on = 1; next } on && $1 ~ /^[0-9]+$/ { k++ } END { print k + 0 }' tune.txt)
if [ $rc -ne 0 ]; then
    bad tune "exit $rc: $(cat tune.err)"
elif ! has tune.txt '^best: shuffle/'; then
    bad tune "no best: $(cat tune.txt)"
elif ! has tune.txt '^top 5 at n=1048576 of 18 candidates that ran: [0-9]+ within 2% of the best, [0-9]+ within 10%'; then
    bad tune "no top 5 line: $(cat tune.txt)"
elif [ "$ranks" != 5 ]; then
    bad tune "expected 5 ranked candidates, got $ranks: $(cat tune.txt)"
elif ! has tune.txt '^ +1 +[0-9.]+ us +- +shuffle/' || ! has tune.txt '^ +2 +[0-9.]+ us +\+[0-9.]+% '; then
    bad tune "rank 1 (the best) and rank 2 (behind it, what differs): $(cat tune.txt)"
elif [ "$(wc -l <tune.jsonl)" != 18 ]; then
    bad tune "expected 18 lines in tune.jsonl"
else
    ok "tune --top 5"
fi
# the best is in the database: kforge best gives it back
if "$KFORGE" best --dtype float32 --op sum --n 2^20 >best.json 2>best.err && has best.json '"block_size"'; then
    ok "best"
else
    bad best "$(cat best.err best.json)"
fi

# --- 3. plot ------------------------------------------------------------------------
if ! command -v python3 >/dev/null 2>&1; then
    skip plot "python3 not found: tools/plot.sh NOT TESTED"
elif ! command -v gnuplot >/dev/null 2>&1; then
    skip plot "gnuplot not found: tools/plot.sh NOT TESTED (apt-get install gnuplot-nox)"
else
    # a baseline measured elsewhere, as CSV
    printf 'tool,n,gbps\ncub,2^20,300\n' >base.csv
    if sh "$PLOT" sweep.jsonl --out plots >plot.txt 2>plot.err &&
        sh "$PLOT" tune.jsonl --out plots/tune --heat block_size,elements_per_thread >>plot.txt 2>>plot.err &&
        sh "$PLOT" tune.jsonl base.csv --chart compare --out plots >>plot.txt 2>>plot.err; then
        missing=
        for f in plots/sweep.png plots/tune/sweep.png plots/tune/heat.png plots/compare.png; do
            [ -s "$f" ] && has plot.txt "^$f\$" || missing="$missing $f"
        done
        if [ -z "$missing" ]; then
            ok plot
        else
            bad plot "missing:$missing: $(cat plot.txt plot.err)"
        fi
    else
        bad plot "exit $?: $(cat plot.err)"
    fi
fi

# --- 4. compare two configs --------------------------------------------------------
cat >a.json <<'J'
{"kernel": "reduce", "defaults": {"algorithm": "shuffle", "unroll": "full", "n": [4096, "2^20"]},
 "variants": [{"name": "a", "block_size": 256}]}
J
cat >b.json <<'J'
{"kernel": "reduce", "defaults": {"algorithm": "shuffle", "unroll": "full", "n": [4096, "2^20"]},
 "variants": [{"name": "b", "block_size": 512, "vector_width": 4}]}
J
"$KFORGE" run a.json --results a.jsonl -q >/dev/null 2>&1
"$KFORGE" run b.json --results b.jsonl -q >/dev/null 2>&1
"$KFORGE" compare a.jsonl b.jsonl >cmp0.txt 2>cmp0.err
"$KFORGE" compare a.jsonl b.jsonl --match n >cmp.txt 2>cmp.err
rc=$?
if [ $rc -ne 0 ]; then
    bad compare "exit $rc: $(cat cmp.err)"
elif ! has cmp0.err 'match n'; then
    bad compare "without --match, the message should name --match n: $(cat cmp0.txt cmp0.err)"
elif [ "$(grep -Ec '^b +float32 +sum +(4096|1048576) ' cmp.txt)" != 2 ]; then
    bad compare "expected a row per size: $(cat cmp.txt cmp.err)"
elif ! has cmp.txt 'block_size 256 vs 512' || ! has cmp.err '^kforge compare: 2 cases in both'; then
    bad compare "what differs, and the summary: $(cat cmp.txt cmp.err)"
else
    ok "compare --match n"
fi

# --- 5. CSV appended in a loop, one header -------------------------------------------
: >all.csv
first=1
for bs in 128 256 512; do
    if [ $first = 1 ]; then
        "$KFORGE" run sweep.json --set block_size=$bs --format csv --no-results -q >>all.csv 2>>csv.err
        first=0
    else
        "$KFORGE" run sweep.json --set block_size=$bs --format csv --no-header --no-results -q >>all.csv 2>>csv.err
    fi
done
head -n 1 all.csv >header.csv
if [ "$(wc -l <all.csv)" != 4 ]; then
    bad "csv loop" "expected a header and 3 rows: $(cat all.csv csv.err)"
elif [ "$(grep -cFx -f header.csv all.csv)" != 1 ]; then
    bad "csv loop" "the header appears more than once: $(cat all.csv)"
elif ! has header.csv 'block_size' || ! has all.csv ',512,'; then
    bad "csv loop" "$(cat all.csv)"
else
    ok "csv loop --no-header"
fi

# --- 6. the README's "A first session", command by command, as written -------
# (run from a copy of the tree's layout: build/kforge and configs/)
mkdir -p first/build && ln -s "$KFORGE" first/build/kforge && cp -r "$ROOT/configs" first/configs
n=0; failed=""
sed -n '/^## A first session/,/^## /p' "$ROOT/README.md" | sed -n '/^```sh/,/^```$/p' | grep '^build/' >first/steps.txt
while IFS= read -r line; do
    cmd=${line%%   #*}
    n=$((n + 1))
    (cd first && sh -c "$cmd" >>out.txt 2>&1) || failed="$failed [$cmd]"
done <first/steps.txt
if [ "$n" -ge 5 ] && [ -z "$failed" ]; then ok "README's first session: its $n commands run as written"
else bad "README's first session" "$n commands; failed:$failed"; fi

if [ "$nfail" -eq 0 ]; then
    cd / && rm -rf "$TMP"
else
    echo "newcomer suite: files kept in $TMP"
fi

if [ "$nskip" -gt 0 ]; then
    echo "newcomer suite: $npass passed, $nfail failed, $nskip skipped"
else
    echo "newcomer suite: $npass passed, $nfail failed"
fi
[ "$nfail" -eq 0 ]
