#!/bin/sh
# tests/fakegpu_suite.sh -- what the fake GPU (KFORGE_FAKE_GPU=1) checks of a
# user's kernel without a GPU, as the driver does on one: the entry must be in
# the cubin NVRTC made, with as many parameters as the config's arguments,
# each of the size its dtype takes; a config that gets one wrong is a
# launch_error in run and tune and never reaches the tuning database.  A
# case too large for the fake to check on the CPU says so: its result's
# message is "not verified (fake GPU, N outputs)", with a note on stderr.
# Each fault is planted in a copy of configs/custom/vector_add.json; the
# unchanged config must still pass (no false alarm).
#
#   [KFORGE=build/kforge] sh tests/fakegpu_suite.sh
#
# Works in a mktemp -d directory, removed when every check passed.  Prints
# PASS/FAIL/SKIP lines and "fakegpu_suite: N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KFORGE=${KFORGE:-$ROOT/build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-fakegpu.XXXXXX") || exit 2
trap 'exit 130' INT TERM HUP
export KFORGE_FAKE_GPU=1 KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}" KFORGE_DB="$TMP/db" LC_ALL=C
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAULT_INJECT
cd "$TMP" || exit 2
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }
has() { grep -Eq -- "$2" "$1"; }

if ! command -v python3 >/dev/null 2>&1 || ! "$KFORGE" --version 2>/dev/null | grep -q NVRTC; then
    echo "SKIP: fakegpu suite: python3 or NVRTC not usable here"
    echo "fakegpu_suite: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
cp "$ROOT/configs/custom/vector_add.cu" .
# variant NAME PYTHON: a copy of vector_add.json with the change PYTHON makes to c (the "custom" object)
variant() {
    python3 - "$ROOT/configs/custom/vector_add.json" "$1.json" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["custom"]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
EOF
}
variant good 'pass'
variant entry 'c["entry"] = "vector_addd"'
variant count 'c["args"] = c["args"][:3]'
variant extra 'c["args"].append({"name": "m", "scalar": "int32", "value": "n"})'
variant scalar 'c["args"][3]["scalar"] = "int64"'
SET="--set block_size_x=256 --set per_thread=1 --set n=4096"

# run: a launch_error that names what is wrong, exit 1; the good one is ok
check_run() {
    name=$1 want=$2
    "$KFORGE" run "$name.json" $SET --results "$name.jsonl" >"$name.out" 2>"$name.err"
    rc=$?
    if [ "$rc" = 1 ] && has "$name.jsonl" '"status":"launch_error"' && has "$name.err" "$want"; then
        ok "run $name: launch_error ($want)"
    else
        bad "run $name" "exit $rc: $(cat "$name.err" "$name.jsonl" | head -c 600)"
    fi
}
"$KFORGE" run good.json $SET --results good.jsonl >good.out 2>good.err
rc=$?
if [ "$rc" = 0 ] && has good.jsonl '"status":"ok","message":""'; then
    ok "run good: ok, no false alarm"
else
    bad "run good" "exit $rc: $(cat good.err good.jsonl | head -c 600)"
fi
check_run entry 'no kernel "vector_addd" in the module .*it defines: vector_add$'
check_run count 'do not match kernel vector_add: the config gives 3 \(args in count\.json\), the kernel takes 4'
check_run extra 'do not match kernel vector_add: the config gives 5 \(args in extra\.json\), the kernel takes 4'
check_run scalar "argument 3 \"n\" \\(an int64 scalar in scalar\\.json\\) is 8 bytes in the config, the kernel's parameter 3 takes 4: expected float32, int32 or uint32 there"

# tune: every candidate fails, nothing reaches the database
"$KFORGE" tune entry.json --set n=4096 --budget 4 --results tune-entry.jsonl >tune.out 2>tune.err
rc=$?
n_ok=$(grep -c '"status":"ok"' tune-entry.jsonl)
if [ "$rc" != 0 ] && [ "$n_ok" = 0 ] && ! grep -qs vector_addd "$KFORGE_DB"/* &&
    has tune-entry.jsonl '"status":"launch_error"'; then
    ok "tune with a wrong entry: no ok candidate, nothing in the database (exit $rc)"
else
    bad "tune entry" "exit $rc, $n_ok ok: $(head -c 600 tune.err)"
fi

# more outputs than the fake checks (2^22): ok, but said to be not verified
"$KFORGE" run good.json --set block_size_x=256 --set per_thread=1 --set n=2^23 --results big.jsonl >big.out 2>big.err
rc=$?
if [ "$rc" = 0 ] && has big.jsonl '"status":"ok","message":"not verified \(fake GPU, 8388608 outputs\)"' &&
    has big.err '^kforge: note: .*n=8388608: not verified \(fake GPU, 8388608 outputs\)'; then
    ok "2^23 outputs: not verified (fake GPU, 8388608 outputs), in the results and on stderr"
else
    bad "not verified" "exit $rc: $(cat big.err; head -c 600 big.jsonl)"
fi
# 2^22 outputs are checked: no such message
"$KFORGE" run good.json --set block_size_x=256 --set per_thread=1 --set n=2^22 --results mid.jsonl >mid.out 2>mid.err
if has mid.jsonl '"status":"ok","message":""' && ! has mid.err 'not verified'; then
    ok "2^22 outputs: verified"
else
    bad "2^22" "$(cat mid.err; head -c 600 mid.jsonl)"
fi

if [ "$nfail" -eq 0 ]; then
    cd / && rm -rf "$TMP"
else
    echo "fakegpu_suite: files kept in $TMP"
fi
echo "fakegpu_suite: $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
