#!/bin/sh
# regress_suite.sh -- the built-in families behave as they did: a seeded tune
# of configs/tune-reduce.json and configs/tune-rows.json on the fake GPU gives
# the same cases and outcomes, the same tuning database entries and
# byte-identical exported headers (dates aside) as the golden copies in
# tests/golden/, written by the binary before the engine's interface was
# opened up (issue 22).  A deliberate change of behaviour regenerates them:
#   REGEN=1 KFORGE=build/kforge sh tests/regress_suite.sh
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$PWD/$KFORGE ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
G=$HERE/golden
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0 npass=0 nfail=0
# make check gives the suites that do not test the cache one cubin cache (KFORGE_TEST_CACHE)
export KFORGE_FAKE_GPU=1 KFORGE_CACHE_DIR=${KFORGE_TEST_CACHE:-$T/cache}
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_DB

norm() { python3 "$G/normalize.py" "$@"; }
same() { # name file-made-now
    if [ "${REGEN:-0}" = 1 ]; then cp "$2" "$G/$1"; echo "regenerated tests/golden/$1"; return; fi
    if cmp -s "$2" "$G/$1"; then echo "ok   $1"; npass=$((npass + 1))
    else echo "FAIL $1 differs from tests/golden/$1:"; diff "$G/$1" "$2" | head -20; fail=1; nfail=$((nfail + 1)); fi
}

cd "$T" || exit 1
must() { # what command...: runs it, fails the suite unless it exits 0
    what=$1; shift
    "$@" >out.txt 2>&1 || { echo "FAIL $what: exit $?"; tail -3 out.txt; fail=1; nfail=$((nfail + 1)); }
}
must "tune reduce" "$KFORGE" tune "$HERE/../configs/tune-reduce.json" --strategy random --budget 40 \
    --seed 3 --set 'n=["2^12","2^20"]' --between 0 --results reduce.jsonl --db db -q
must "tune rows 4096x32" "$KFORGE" tune "$HERE/../configs/tune-rows.json" --strategy random \
    --budget 30 --seed 5 --set rows=4096 --set cols=32 --results rows.jsonl --db db -q
must "tune rows 64x16384" "$KFORGE" tune "$HERE/../configs/tune-rows.json" --strategy random \
    --budget 30 --seed 5 --set rows=64 --set cols=16384 --results rows.jsonl --db db -q
must "export reduce" "$KFORGE" export --dtype float32 --op sum --db db -o reduce.cuh
must "export reduce_rows" "$KFORGE" export --kernel reduce_rows --dtype float32 --op sum --db db -o rows.cuh
[ $fail = 0 ] || { echo "regress suite: $npass passed, $nfail failed"; exit 1; }

norm results reduce.jsonl > reduce.results; same tune-reduce.results reduce.results
norm results rows.jsonl > rows.results; same tune-rows.results rows.results
norm db db/*.json > db.norm; same tune.db db.norm
norm header reduce.cuh > reduce.h; same export-reduce.cuh reduce.h
norm header rows.cuh > rows.h; same export-rows.cuh rows.h
echo "regress suite: $npass passed, $nfail failed"
exit $fail
