#!/bin/sh
# tests/check_one.sh -- runs one test binary or suite for `make check` and
# prints one line about it: the outcome, the name, what passed, failed and
# was skipped, and the seconds it took (wall, and CPU of everything it ran).
# The whole output goes to LOGDIR/NAME.log; below the line come the suite's
# SKIP lines (a GPU suite on a machine without a GPU says so, never passing
# silently) and, when it failed, its FAIL lines and the end of its log.
#
#   sh tests/check_one.sh NAME LOGDIR COMMAND [ARG...]
#
# The counts come from the last summary the command prints: a shell suite's
# "... N passed, M failed[, K skipped]", a Check binary's "Checks: N,
# Failures: F, Errors: E", fuzz_replay's "N inputs replayed"; a command that
# prints none counts as one check (passed when it exits 0).  The outcome is
# FAIL when the command exits nonzero or anything failed, SKIP when nothing
# passed and something was skipped, else ok.  Exits 1 on FAIL, else 0.
set -u
name=$1 logdir=$2
shift 2
log=$logdir/$name.log
mkdir -p "$logdir" || exit 2

# times: the shell's CPU time, then its children's; in this shell, not in a
# subshell (whose children's time starts at 0), so through a file
t=$logdir/.$name.times
t0=$(date +%s.%N)
times >"$t"
"$@" >"$log" 2>&1 </dev/null
rc=$?
times >>"$t"
t1=$(date +%s.%N)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
# the children's user + sys, "1m2.5s 0m0.3s" each, at the end less at the start
cpu=$(awk '
    function s(x,  m) { m = x; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", x); sub(/s$/, "", x); return m * 60 + x }
    NR == 2 { c0 = s($1) + s($2) }
    NR == 4 { c1 = s($1) + s($2) }
    END { printf "%.1f", c1 - c0 }' "$t")
rm -f "$t"

# the counts from the log's last summary
counts=$(awk '
    /[0-9]+ passed, [0-9]+ failed/ {
        p = $0; sub(/ passed,.*/, "", p); sub(/.* /, "", p)
        f = $0; sub(/ failed.*/, "", f); sub(/.* /, "", f)
        k = 0
        if ($0 ~ /[0-9]+ skipped/) { k = $0; sub(/ skipped.*/, "", k); sub(/.* /, "", k) }
        c = p " " f " " k
    }
    /Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+/ {
        n = $0; sub(/.*Checks: /, "", n); sub(/,.*/, "", n)
        f = $0; sub(/.*Failures: /, "", f); sub(/,.*/, "", f)
        e = $0; sub(/.*Errors: /, "", e); sub(/[^0-9].*/, "", e)
        c = (n - f - e) " " (f + e) " 0"
    }
    /^fuzz_replay: [0-9]+ inputs? replayed/ { c = $2 " 0 0" }
    END { print c }' "$log")
if [ -n "$counts" ]; then
    set -- $counts
    npass=$1 nfail=$2 nskip=$3
elif [ $rc = 0 ]; then
    npass=1 nfail=0 nskip=0
else
    npass=0 nfail=1 nskip=0
fi

if [ $rc != 0 ] || [ "$nfail" != 0 ]; then
    what=FAIL
    # a command that failed without counting a failure still counts as one
    [ "$nfail" = 0 ] && nfail=1
elif [ "$npass" = 0 ] && [ "$nskip" != 0 ]; then
    what=SKIP
else
    what=ok
fi

out=$(printf '%-4s %-16s %4s passed %3s failed %3s skipped %7s s  (cpu %s s)' "$what" "$name" "$npass" "$nfail" \
    "$nskip" "$secs" "$cpu")
# the SKIP lines always; on failure the FAIL lines and the log's tail
extra=$(grep -E '^ *SKIP' "$log" | head -n 20 | sed 's/^/     /')
if [ $what = FAIL ]; then
    fails=$(grep -E '^ *(FAIL|not ok|MISSED)|:[0-9]+:[FE]:' "$log" | head -n 40 | sed 's/^/     /')
    [ $rc != 0 ] && fails="$fails${fails:+
}     exit status $rc"
    tail=$(tail -n 25 "$log" | sed 's/^/     | /')
    extra="$extra${extra:+
}$fails
     --- the last 25 lines of $log:
$tail"
fi
# one write, so that the lines of suites finishing together do not mix
if [ -n "$extra" ]; then
    printf '%s\n%s\n' "$out" "$extra"
else
    printf '%s\n' "$out"
fi
[ $what != FAIL ]
