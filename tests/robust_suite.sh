#!/bin/sh
# tests/robust_suite.sh -- what kforge does when its environment misbehaves
# (issue 11): corrupted cache entries, unusable cache directories, killed
# compiler workers, endless or oversized input (configs and results files),
# NUL bytes in results, results that cannot be written, SIGTERM to the
# process group and at every stage of a large space, non-finite options,
# write errors on stdout and closed pipes.
#
#   sh tests/robust_suite.sh                  # uses build/kforge
#   KFORGE=build-san/kforge sh tests/robust_suite.sh
#   sh tests/robust_suite.sh cache sigterm    # only the checks whose names contain these words
#
# Runs without a GPU (KFORGE_FAKE_GPU=1, see src/worker.h); NVRTC must be
# usable for the compile checks.  Every check runs in a fresh directory under
# one mktemp -d that is removed at the end.  Prints PASS/FAIL/SKIP lines and
# "robust_suite: N passed, N failed"; exits 1 if any check failed.

# The checks are called through check() by name, which shellcheck cannot follow.
# shellcheck disable=SC2317

set -u

KFORGE=${KFORGE:-build/kforge}
case $KFORGE in
/*) ;;
*) KFORGE=$(pwd)/$KFORGE ;;
esac
if [ ! -x "$KFORGE" ]; then
    echo "robust_suite: $KFORGE is not an executable (build it first, or set KFORGE)" >&2
    exit 2
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-robust.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
trap 'exit 141' PIPE # sh tests/robust_suite.sh | head: still clean up

export KFORGE_CACHE_DIR="$TMP/cache"
export KFORGE_DB="$TMP/tuning-db"
unset KFORGE_FAKE_GPU KFORGE_FAULT_INJECT KFORGE_PLANT
export LC_ALL=C

# A sanitizer build reserves terabytes of address space (no ulimit -v) and
# must come first in the library list (no LD_PRELOAD).
SANITIZED=0
grep -q __asan_init "$KFORGE" 2>/dev/null && SANITIZED=1

npass=0
nfail=0
nskip=0
failed_names=

# ---------------------------------------------------------------------------
# helpers (used inside the checks, which run in subshells)

die() {
    printf '%s\n' "$*"
    exit 1
}

skip() {
    printf '%s\n' "$*"
    exit 77
}

# expect_rc WANT CMD...: runs CMD with stdout > out, stderr > err.
expect_rc() {
    want=$1
    shift
    "$@" >out 2>err
    got=$?
    if [ "$got" != "$want" ]; then
        printf 'exit status %s, expected %s: %s\n--- stderr:\n' "$got" "$want" "$*"
        head -c 2000 err
        exit 1
    fi
}

# grep_in FILE PATTERN [what]: FILE must contain the extended regex PATTERN.
grep_in() {
    grep -Eq -- "$2" "$1" || {
        printf '%s does not match /%s/%s\n--- %s:\n' "$1" "$2" "${3:+ ($3)}" "$1"
        head -c 2000 "$1"
        exit 1
    }
}

lines() {
    if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi
}

# wait_lines FILE N SECONDS: waits until FILE has at least N lines.
wait_lines() {
    i=0
    while [ "$i" -lt $(($3 * 10)) ]; do
        [ "$(lines "$1")" -ge "$2" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# wait_pid PID SECONDS: waits for a background child; sets $wrc to its status.
# Kills it (and fails the check) if it is still running after SECONDS.
wait_pid() {
    i=0
    while kill -0 "$1" 2>/dev/null; do
        if [ "$i" -ge $(($2 * 10)) ]; then
            kill -KILL "$1" 2>/dev/null
            wait "$1" 2>/dev/null
            die "process $1 still running after $2 s: killed"
        fi
        sleep 0.1
        i=$((i + 1))
    done
    wait "$1"
    wrc=$?
}

# statuses FILE: "name n status" per line of a results file.
statuses() {
    sed -e 's/.*"name":"\([^"]*\)".*"n":\([0-9]*\).*"status":"\([a-z_]*\)".*/\1 \2 \3/' "$1"
}

write_configs() {
    cat >three.json <<'EOF'
{
  "kernel": "reduce",
  "defaults": {"dtype": "float32", "op": "sum", "block_size": 256, "n": ["2^10", "2^16"]},
  "variants": [
    {"name": "seq", "algorithm": "sequential", "elements_per_thread": 2, "unroll": "full"},
    {"name": "shfl", "algorithm": "shuffle", "elements_per_thread": 4, "unroll": "full"},
    {"name": "atom", "algorithm": "atomic_shared"}
  ]
}
EOF
    cat >one.json <<'EOF'
{"kernel": "reduce", "algorithm": "shuffle", "unroll": "full", "block_size": 256, "elements_per_thread": 2, "n": 4096}
EOF
    cat >sweep.json <<'EOF'
{
  "kernel": "reduce",
  "algorithm": "shuffle",
  "unroll": "full",
  "block_size": [64, 128, 256, 512],
  "elements_per_thread": [1, 2, 4],
  "n": ["2^10", "2^12", "2^14"]
}
EOF
}

# ---------------------------------------------------------------------------
# the runner

ONLY="$*"

selected() {
    [ -z "$ONLY" ] && return 0
    for w in $ONLY; do
        case $1 in *"$w"*) return 0 ;; esac
    done
    return 1
}

# check NAME FUNCTION: runs FUNCTION in a subshell in its own directory.
check() {
    selected "$1" || return 0
    d="$TMP/$1"
    mkdir -p "$d"
    (cd "$d" && write_configs && "$2") >"$d/.log" 2>&1
    rc=$?
    case $rc in
    0)
        npass=$((npass + 1))
        printf 'PASS %s\n' "$1"
        ;;
    77)
        nskip=$((nskip + 1))
        printf 'SKIP %s: %s\n' "$1" "$(tail -n 1 "$d/.log")"
        ;;
    *)
        nfail=$((nfail + 1))
        failed_names="$failed_names $1"
        printf 'FAIL %s\n' "$1"
        sed -e 's/^/    /' "$d/.log" | head -n 40
        ;;
    esac
}

# ---------------------------------------------------------------------------
# input without end or out of bounds (item 6)

# limit_memory: a failure to stop reading must not take the machine's memory.
limit_memory() {
    # dash and bash have ulimit -v; a shell without it just runs unlimited
    # shellcheck disable=SC3045
    [ "$SANITIZED" = 1 ] || ulimit -v 4194304 2>/dev/null || true
}

t_config_dev_zero() {
    t0=$(date +%s)
    (limit_memory && exec timeout -s KILL 30 "$KFORGE" check /dev/zero) >out 2>err
    rc=$?
    [ "$rc" = 2 ] || die "exit status $rc, expected 2: $(head -c 500 err)"
    [ $(($(date +%s) - t0)) -le 10 ] || die "took more than 10 s"
    grep_in err '/dev/zero: larger than the 16 MiB limit'
}

t_config_endless_stdin() {
    (limit_memory && yes | timeout -s KILL 30 "$KFORGE" check -) >out 2>err
    rc=$?
    [ "$rc" = 2 ] || die "exit status $rc, expected 2: $(head -c 500 err)"
    grep_in err '<stdin>: larger than the 16 MiB limit'
}

t_config_limit() {
    # a valid config padded with blanks to exactly 16 MiB is read; one byte more is not
    size=$(wc -c <one.json)
    { cat one.json; head -c $((16 * 1024 * 1024 - size)) /dev/zero | tr '\0' ' '; } >big.json
    [ "$(wc -c <big.json)" = 16777216 ] || die "big.json has the wrong size"
    expect_rc 0 "$KFORGE" check big.json
    grep_in out '1 variant, 1 case'
    printf ' ' >>big.json
    expect_rc 2 "$KFORGE" check big.json
    grep_in err 'big\.json: larger than the 16 MiB limit'
    expect_rc 2 "$KFORGE" check - <big.json
    grep_in err '<stdin>: larger than the 16 MiB limit'
}

t_config_directory() {
    mkdir cfgdir
    expect_rc 2 "$KFORGE" check cfgdir
    grep_in err 'cfgdir: is a directory'
    expect_rc 2 "$KFORGE" gen cfgdir
    grep_in err 'cfgdir: is a directory'
    expect_rc 2 "$KFORGE" check - <cfgdir
    grep_in err '<stdin>: is a directory'
}

t_config_stdin_interrupted() {
    # kforge waits on a pipe that never delivers; SIGTERM ends the wait at once
    mkfifo fifo || skip "mkfifo failed"
    exec 3<>fifo
    "$KFORGE" check - <fifo >out 2>err &
    pid=$!
    sleep 0.5
    kill -TERM "$pid"
    wait_pid "$pid" 5
    exec 3>&-
    [ "$wrc" = 130 ] || die "exit status $wrc after SIGTERM, expected 130: $(cat err)"
    grep_in err '<stdin>: interrupted'
}

t_results_endless() {
    export KFORGE_CACHE_DIR="$PWD/cache" # cache-corrupt counts the shared cache's cubins
    # Results files are read by resume, tune --simulate, compare and merge: a
    # source without end, or without a results line, is refused at once
    # (exit 2), in constant memory, never read for ever.
    t0=$(date +%s)
    for cmd in "tune one.json --simulate /dev/zero" "compare /dev/zero one.json" "merge /dev/zero" \
        "compare /dev/full one.json"; do
        # shellcheck disable=SC2086
        (limit_memory && exec timeout -s KILL 30 env KFORGE_FAKE_GPU=1 "$KFORGE" $cmd) >out 2>err
        rc=$?
        [ "$rc" = 2 ] || die "kforge $cmd: exit status $rc, expected 2: $(head -c 500 err)"
        grep_in err '/dev/(zero|full): 16 MiB without a results line: not a results file' "kforge $cmd"
    done
    (limit_memory && yes | timeout -s KILL 30 "$KFORGE" compare /dev/stdin one.json) >out 2>err
    rc=$?
    [ "$rc" = 2 ] || die "yes | kforge compare /dev/stdin: exit status $rc, expected 2: $(head -c 500 err)"
    grep_in err '/dev/stdin: 16 MiB without a results line'
    [ $(($(date +%s) - t0)) -le 20 ] || die "took more than 20 s"
}

t_results_nul() {
    export KFORGE_CACHE_DIR="$PWD/cache" # cache-corrupt counts the shared cache's cubins
    # NUL bytes (blocks of them, as a crash can leave) are skipped and the
    # lines around them read: resume, compare and merge see every case
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --results r.jsonl
    [ "$(lines r.jsonl)" = 6 ] || die "expected 6 lines"
    {
        head -c 4096 /dev/zero
        sed -n 1p r.jsonl | head -c 40
        head -c 3 /dev/zero
        sed -n 1p r.jsonl | tail -c +41
        sed -n 2,3p r.jsonl
        head -c 100 /dev/zero
        echo
        sed -n '4,$p' r.jsonl
    } >nul.jsonl
    [ "$(tr -d '\000' <nul.jsonl | grep -c .)" = 6 ] || die "nul.jsonl was not made right"
    cp nul.jsonl before.jsonl
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --results nul.jsonl --resume
    grep_in err 'resumed: 6 cases taken from nul\.jsonl, 0 measured now'
    cmp -s nul.jsonl before.jsonl || die "a case was measured again"
    expect_rc 0 "$KFORGE" compare r.jsonl nul.jsonl
    grep_in err '6 cases in both'
    expect_rc 0 "$KFORGE" merge nul.jsonl --no-db
    grep_in err '6 cases'
}

t_results_unwritable() {
    export KFORGE_CACHE_DIR="$PWD/cache" # cache-corrupt counts the shared cache's cubins
    # a results file that cannot be written: run and tune stop with exit 4
    # and the file's name (a full disk, a directory where nothing is created)
    [ -w /dev/full ] || skip "no /dev/full"
    for where in /dev/full /proc/kforge-none/r.jsonl; do
        pat=$(printf '%s' "$where" | sed -e 's/[.[\*^$]/\\&/g')
        expect_rc 4 timeout -s KILL 60 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --results "$where" -q
        grep_in err "$pat" "run --results $where"
        expect_rc 4 timeout -s KILL 60 env KFORGE_FAKE_GPU=1 "$KFORGE" tune sweep.json --results "$where" --no-db -q
        grep_in err "$pat" "tune --results $where"
    done
    if [ "$(id -u)" != 0 ]; then
        mkdir ro && chmod 555 ro
        expect_rc 4 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --results ro/r.jsonl -q
        expect_rc 4 env KFORGE_FAKE_GPU=1 "$KFORGE" tune sweep.json --results ro/r.jsonl --no-db -q
        chmod 755 ro
    fi
    return 0
}

t_resume_whole_file() {
    export KFORGE_CACHE_DIR="$PWD/cache"
    # --resume takes the whole file's cases when no interrupted run of the
    # same command left its place: an interruption of that run must not
    # forget them (the state kept its offset at the file's end, and the
    # next --resume measured them again: stress_suite's "80 lines, 40
    # distinct" under make check's load)
    cat >a.json <<'J'
{"kernel": "reduce", "dtype": "float32", "op": "sum", "algorithm": "shuffle", "block_size": [128, 256], "n": 1024}
J
    cat >b.json <<'J'
{"kernel": "reduce", "dtype": "float32", "op": "sum", "algorithm": "shuffle", "block_size": [128, 256, 512, 1024], "n": 1024}
J
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run a.json --results r.jsonl -q
    [ "$(grep -c . r.jsonl)" = 2 ] || die "a.json: $(grep -c . r.jsonl) lines, expected 2"
    KFORGE_FAKE_GPU=1 KFORGE_FAKE_GPU_MS=3000 "$KFORGE" run b.json --results r.jsonl --resume -q >out 2>err &
    pid=$!
    sleep 1.5
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    [ "$rc" = 130 ] || die "b.json interrupted: exit status $rc, expected 130: $(cat err)"
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run b.json --results r.jsonl --resume -q
    n=$(grep -c . r.jsonl)
    u=$(grep -o '"block_size":[0-9]*' r.jsonl | sort -u | wc -l)
    [ "$n" = 4 ] && [ "$u" = 4 ] || die "after the interrupted --resume and the same command again: $n lines, $u block sizes, expected 4 and 4 (each case once)"
}

t_results_read_interrupted() {
    # a results file that is a pipe with nothing to say yet: SIGTERM ends
    # the wait at once (exit 130), in each command that reads results
    mkfifo fifo || skip "mkfifo failed"
    exec 3<>fifo
    for cmd in "compare fifo one.json" "merge fifo" "tune one.json --simulate fifo"; do
        # shellcheck disable=SC2086
        KFORGE_FAKE_GPU=1 "$KFORGE" $cmd >out 2>err &
        pid=$!
        sleep 0.5
        kill -TERM "$pid"
        wait_pid "$pid" 5
        [ "$wrc" = 130 ] || die "kforge $cmd: exit status $wrc after SIGTERM, expected 130: $(cat err)"
        grep_in err 'fifo: interrupted' "kforge $cmd"
    done
    exec 3>&-
}

# now_ms: milliseconds (GNU date)
now_ms() {
    date +%s%3N
}

t_signal_stages() {
    export KFORGE_CACHE_DIR="$PWD/cache" # cache-corrupt counts the shared cache's cubins
    # A space of 294912 variants: SIGTERM at any moment of check, run and
    # tune (expanding the space, building the candidates and the search's
    # neighbours, resuming, compiling, measuring) is answered within a second.
    case $(now_ms) in *N*) skip "date +%N not supported" ;; esac
    cat >large.json <<'EOF'
{"kernel": "reduce", "algorithm": ["shuffle", "sequential"], "unroll": ["none", "full"],
 "block_size": {"range": [32, 1024], "step": "pow2"}, "elements_per_thread": {"range": [1, 256], "step": 1},
 "vector_width": [1, 2, 4], "load": ["plain", "ldg", "stream", "ldg_prefetch"], "warp_reduce": ["shared", "shuffle"],
 "layout": ["block", "grid"], "accumulator": ["register", "shared"], "n": 4096}
EOF
    t0=$(now_ms)
    expect_rc 0 "$KFORGE" check large.json
    grep_in out '294912 variants'
    # a guard against a pathological expansion (seconds alone; make check
    # runs suites side by side on 2 cores, so the bound leaves room)
    [ $(($(now_ms) - t0)) -le 30000 ] || die "check of 294912 variants took $(($(now_ms) - t0)) ms"
    # gen would make gigabytes of source: refused, with what to do
    (limit_memory && exec timeout -s KILL 30 "$KFORGE" gen large.json) >out 2>err
    rc=$?
    [ "$rc" = 2 ] || die "gen large.json: exit status $rc, expected 2"
    grep_in err 'large\.json: 294912 variants; gen writes at most 10000 in one file: pick some with --only'
    kforge_exe=$(readlink -f "$KFORGE")
    for cmd in "check large.json" "check --compile large.json" "run large.json --no-results -q" \
        "tune large.json --strategy local --budget 3 --results t.jsonl --no-db -q" \
        "tune large.json --strategy random --budget 3 --results t.jsonl --no-db -q"; do
        for delay in 0.05 0.3 0.6 0.9 1.2; do
            rm -f t.jsonl t.jsonl.state
            # shellcheck disable=SC2086
            KFORGE_FAKE_GPU=1 "$KFORGE" $cmd >out 2>err &
            pid=$!
            # the delay counts from kforge's start: before its exec the
            # background job is still a forked shell, which SIGTERM kills
            # (143, with err not yet truncated: the last command's text),
            # and until ld.so has loaded its libraries (NVRTC's is large:
            # tens of ms when make check's jobs share 2 cores) kforge has
            # no handler yet; so it starts once SigCgt shows SIGTERM (bit 15)
            while kill -0 "$pid" 2>/dev/null; do
                if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$kforge_exe" ]; then
                    cgt=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
                    [ -n "$cgt" ] && [ $(( 0x$cgt & 0x4000 )) -ne 0 ] && break
                fi
                sleep 0.01
            done
            sleep "$delay"
            t1=$(now_ms)
            kill -TERM "$pid" 2>/dev/null
            wait "$pid"
            rc=$?
            dt=$(($(now_ms) - t1))
            case $rc in
            130) [ "$dt" -le 1000 ] || die "kforge $cmd: SIGTERM after $delay s answered in $dt ms" ;;
            0 | 1) ;; # it had finished
            *) die "kforge $cmd: exit status $rc after SIGTERM at $delay s: $(head -c 300 err)" ;;
            esac
        done
    done
}

# ---------------------------------------------------------------------------
# the cubin cache (items 8 and 9)

# is_elf FILE
is_elf() {
    [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]
}

t_cache_corrupt() {
    expect_rc 0 "$KFORGE" check --compile one.json
    grep -q 'cached' out && die "first compile said cached"
    # the variant's cubin (check --compile stores the output check's module too)
    set --
    for c in "$KFORGE_CACHE_DIR"/*.cubin; do
        [ -f "$c" ] && ! grep -q kf_differ "$c" && set -- "$@" "$c"
    done
    [ $# = 1 ] || die "$# cubins of the variant in the cache, expected 1"
    [ -f "$1" ] || die "no cubin in the cache"
    cubin=$1
    cp "$cubin" good.cubin
    # garbage, a truncated ELF, one byte changed: each is a miss, recompiled and replaced
    for how in garbage truncated flipped; do
        case $how in
        garbage) echo garbage >"$cubin" ;;
        truncated) head -c 200 good.cubin >"$cubin" ;;
        flipped)
            size=$(wc -c <good.cubin)
            { head -c $((size - 1)) good.cubin; printf 'X'; } >"$cubin"
            ;;
        esac
        expect_rc 0 "$KFORGE" check --compile one.json
        grep_in out 'compiled ' "$how"
        grep -q 'cached' out && die "a $how cubin was a cache hit"
        is_elf "$cubin" || die "the $how cubin was not replaced"
        cmp -s "$cubin" good.cubin || die "the $how cubin was replaced by different bytes"
        expect_rc 0 "$KFORGE" check --compile one.json
        grep_in out '\(cached\)' "after the $how entry was replaced"
    done
    # the same through run: the GPU worker never gets the damaged file
    echo garbage >"$cubin"
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run one.json --format jsonl --no-results
    grep_in out '"cached":false'
    is_elf "$cubin" || die "run did not replace the cubin"
}

# expect_bad_cache DIR: check --compile, run and tune refuse the cache
# directory DIR before any work, with exit status 2 and a message naming it.
expect_bad_cache() {
    pat=$(printf '%s' "$1" | sed -e 's/[.[\*^$]/\\&/g')
    expect_rc 2 env KFORGE_CACHE_DIR="$1" "$KFORGE" check --compile one.json
    grep_in err "cubin cache directory unusable: $pat" "check --compile"
    grep -q 'FAILED' out && die "check --compile compiled into $1"
    expect_rc 2 env KFORGE_CACHE_DIR="$1" KFORGE_FAKE_GPU=1 "$KFORGE" run one.json --results r.jsonl
    grep_in err "cubin cache directory unusable: $pat" "run"
    [ "$(lines r.jsonl)" = 0 ] || die "run recorded results with an unusable cache: $(head -c 300 r.jsonl)"
    expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" run one.json --no-results --cache-dir "$1"
    grep_in err "cubin cache directory unusable: $pat" "run --cache-dir"
    expect_rc 2 env KFORGE_CACHE_DIR="$1" KFORGE_FAKE_GPU=1 "$KFORGE" tune one.json --no-db --results t.jsonl
    grep_in err "cubin cache directory unusable: $pat" "tune"
    [ "$(lines t.jsonl)" = 0 ] || die "tune recorded results with an unusable cache"
}

t_cache_dir_file() {
    echo not a directory >file
    expect_bad_cache "$PWD/file"
    grep_in err 'not a directory'
    expect_bad_cache "$PWD/file/sub"
}

t_cache_dir_unwritable() {
    # /proc: no new directories and no files there, even for root
    expect_bad_cache /proc/kfc
    expect_bad_cache /proc
    if [ "$(id -u)" != 0 ]; then
        mkdir ro && chmod 555 ro
        expect_bad_cache "$PWD/ro"
        grep_in err 'Permission denied'
        chmod 755 ro
    fi
    return 0
}

# ---------------------------------------------------------------------------
# SIGTERM to the process group (item 2, item 11)

# no_fault FILE: FILE has no fault, timeout or compile_error line.
no_fault() {
    if grep -Eq '"status":"(fault|timeout|compile_error)"' "$1"; then
        printf '%s records a failure for an interrupted case:\n' "$1"
        grep -E '"status":"(fault|timeout|compile_error)"' "$1" | head -c 600
        exit 1
    fi
}

# resumes_clean: the same command again measures the rest, all ok.
resumes_clean() {
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --results h.jsonl --timeout 300 --format jsonl
    grep_in err 'resumed: 1 case taken from h\.jsonl, 5 measured now'
    [ "$(lines h.jsonl)" = 6 ] || die "h.jsonl has $(lines h.jsonl) lines after resuming, expected 6"
    [ "$(grep -c '"status":"ok"' h.jsonl)" = 6 ] || die "not every case ok: $(statuses h.jsonl)"
}

t_sigterm_group() {
    command -v setsid >/dev/null 2>&1 || skip "setsid not found"
    # what timeout(1), systemd and Slurm do: SIGTERM to every process of the group
    setsid env KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=hang@2 "$KFORGE" run three.json --results h.jsonl \
        --timeout 300 --format jsonl >out 2>err &
    pid=$!
    wait_lines h.jsonl 1 60 || {
        kill -KILL "$pid"
        die "the first result did not appear within 60 s"
    }
    sleep 0.5 # the 2nd case is in flight (and hangs)
    kill -TERM "-$pid"
    wait_pid "$pid" 20
    [ "$wrc" = 130 ] || die "exit status $wrc after SIGTERM to the group, expected 130: $(cat err)"
    [ "$(lines h.jsonl)" = 1 ] || die "h.jsonl has $(lines h.jsonl) lines, expected 1: $(statuses h.jsonl)"
    no_fault h.jsonl
    resumes_clean
}

t_sigterm_workers_first() {
    command -v pgrep >/dev/null 2>&1 || skip "pgrep not found"
    # The group's signal can reach the workers before kforge itself: a worker
    # must not die of it (and be recorded as a GPU fault or a compile error).
    KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=hang@2 "$KFORGE" run three.json --results h.jsonl \
        --timeout 300 --format jsonl >out 2>err &
    pid=$!
    wait_lines h.jsonl 1 60 || {
        kill -KILL "$pid"
        die "the first result did not appear within 60 s"
    }
    sleep 0.5
    kids=$(pgrep -P "$pid")
    [ -n "$kids" ] || die "kforge has no worker processes"
    for k in $kids; do
        kill -TERM "$k" 2>/dev/null
    done
    sleep 1
    kill -0 "$pid" 2>/dev/null || die "kforge ended when its workers got SIGTERM: $(cat err)"
    [ "$(lines h.jsonl)" = 1 ] || die "a result was recorded after SIGTERM to the workers: $(statuses h.jsonl)"
    kill -TERM "$pid"
    wait_pid "$pid" 20
    [ "$wrc" = 130 ] || die "exit status $wrc after SIGTERM, expected 130: $(cat err)"
    [ "$(lines h.jsonl)" = 1 ] || die "h.jsonl has $(lines h.jsonl) lines, expected 1: $(statuses h.jsonl)"
    no_fault h.jsonl
    resumes_clean
}

t_sigterm_early() {
    [ "$SANITIZED" = 1 ] && skip "LD_PRELOAD does not mix with a sanitizer build"
    command -v cc >/dev/null 2>&1 || skip "no C compiler for the preloaded library"
    # A SIGTERM while the shared libraries initialise (NVRTC's take
    # milliseconds), before main: sent from a preloaded library's constructor.
    cat >early.c <<'EOF'
#include <signal.h>
#include <unistd.h>
__attribute__((constructor)) static void early_sigterm(void) { kill(getpid(), SIGTERM); }
EOF
    cc -shared -fPIC -o early.so early.c || skip "cannot build the preloaded library"
    expect_rc 130 env LD_PRELOAD="$PWD/early.so" KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --results h.jsonl
    [ "$(lines h.jsonl)" = 0 ] || die "cases were measured after SIGTERM"
}

# ---------------------------------------------------------------------------
# options (item 11)

t_timeout_range() {
    for t in nan NaN inf -inf infinity 1e9 86401 -1 0x1p99; do
        expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" run one.json --no-results --timeout="$t"
        grep_in err "--timeout: expected seconds 0\.\.86400" "--timeout $t"
        expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" tune one.json --no-db --results t.jsonl --timeout "$t"
    done
    [ "$(lines t.jsonl)" = 0 ] || die "tune measured with a bad --timeout"
    for t in 0 2.5; do
        expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run one.json --no-results --timeout "$t"
    done
    expect_rc 2 "$KFORGE" check one.json --timeout 5   # check measures nothing: not its option
    grep_in err "not an option of 'kforge check'"
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run one.json --no-results --timeout 86400
}

t_fake_device() {
    # the fake GPU is device 0 and the only one, as a machine with one GPU
    expect_rc 3 env KFORGE_FAKE_GPU=1 "$KFORGE" run one.json --device 5 --results r.jsonl
    grep_in err 'no GPU with index 5 \(KFORGE_FAKE_GPU provides 1 device\)'
    [ "$(lines r.jsonl)" = 0 ] || die "a result was recorded for a device that does not exist"
    expect_rc 3 env KFORGE_FAKE_GPU=1 "$KFORGE" info --device 1
    grep_in err 'no GPU with index 1'
    expect_rc 3 env KFORGE_FAKE_GPU=1 "$KFORGE" tune one.json --no-db --results t.jsonl --device 1
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" info --device 0
    grep_in out 'fake-gpu'
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run one.json --device 0 --no-results
}

# ---------------------------------------------------------------------------
# write errors on stdout (item 10)

t_stdout_full() {
    [ -w /dev/full ] || skip "no /dev/full"
    for cmd in "gen one.json" "check one.json" "--help" "--version" "run --help"; do
        # shellcheck disable=SC2086
        "$KFORGE" $cmd >/dev/full 2>err
        rc=$?
        [ "$rc" = 4 ] || die "kforge $cmd >/dev/full: exit status $rc, expected 4"
        grep_in err '^kforge: write error on standard output' "kforge $cmd"
    done
}

t_stdout_full_run() {
    [ -w /dev/full ] || skip "no /dev/full"
    for fmt in table csv jsonl json; do
        KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --format "$fmt" --results r.jsonl --no-resume >/dev/full 2>err
        rc=$?
        [ "$rc" = 4 ] || die "run --format $fmt >/dev/full: exit status $rc, expected 4: $(cat err)"
        grep_in err 'write error on standard output' "run --format $fmt"
        [ "$(lines r.jsonl)" -ge 1 ] || die "nothing on disk"
        rm -f r.jsonl r.jsonl.state
    done
    KFORGE_FAKE_GPU=1 "$KFORGE" info >/dev/full 2>err
    [ $? = 4 ] || die "info >/dev/full did not exit 4"
}

t_stdout_closed() {
    "$KFORGE" check one.json >&- 2>err
    rc=$?
    [ "$rc" = 4 ] || die "check with stdout closed: exit status $rc, expected 4"
    grep_in err 'write error on standard output: Bad file descriptor'
    # nothing written, nothing lost
    "$KFORGE" check nonexistent.json >&- 2>err
    [ $? = 2 ] || die "exit status"
    grep -q 'standard output' err && die "a failure that wrote nothing blamed stdout: $(cat err)"
    return 0
}

t_stdout_pipe_closed() {
    # the reader goes away after one row: kforge stops after the case in
    # flight (not all 36), with what was measured on disk, and says where
    t0=$(date +%s)
    { KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=hang@3 "$KFORGE" run sweep.json --format jsonl --results r.jsonl \
        --timeout 2 2>err; echo $? >rc; } | head -n 1 >first
    [ $(($(date +%s) - t0)) -le 20 ] || die "took $(($(date +%s) - t0)) s"
    [ "$(lines first)" = 1 ] || die "head got no row"
    # as grep or jq under set -o pipefail: 141 (SIGPIPE), no error message,
    # only where the results are (hostile_suite)
    [ "$(cat rc)" = 141 ] || die "exit status $(cat rc), expected 141: $(cat err)"
    grep_in err 'standard output closed after [0-9]+ of 36 cases; results are in r\.jsonl; run the same command to resume'
    grep -q 'write error' err && die "an error message for a reader that left: $(cat err)"
    n=$(lines r.jsonl)
    if [ "$n" -lt 1 ] || [ "$n" -gt 4 ]; then
        die "$n cases measured after the pipe closed at the first"
    fi
    # the same command again resumes from there (exit 1 if the hung case was recorded as a timeout)
    want=0
    grep -q '"status":"timeout"' r.jsonl && want=1
    expect_rc "$want" env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --format jsonl --results r.jsonl --timeout 2
    grep_in err "resumed: $n cases? taken from r\.jsonl"
    [ "$(lines r.jsonl)" = 36 ] || die "r.jsonl has $(lines r.jsonl) lines after resuming, expected 36"
}

# ---------------------------------------------------------------------------

echo "robust_suite: $KFORGE"

check config-dev-zero t_config_dev_zero
check config-endless-stdin t_config_endless_stdin
check config-limit t_config_limit
check config-directory t_config_directory
check config-stdin-interrupted t_config_stdin_interrupted
check results-endless t_results_endless
check results-nul t_results_nul
check results-unwritable t_results_unwritable
check results-read-interrupted t_results_read_interrupted
check resume-whole-file t_resume_whole_file
check signal-stages t_signal_stages
check cache-corrupt t_cache_corrupt
check cache-dir-file t_cache_dir_file
check cache-dir-unwritable t_cache_dir_unwritable
check sigterm-group t_sigterm_group
check sigterm-workers-first t_sigterm_workers_first
check sigterm-early t_sigterm_early
check timeout-range t_timeout_range
check fake-device t_fake_device
check stdout-full t_stdout_full
check stdout-full-run t_stdout_full_run
check stdout-closed t_stdout_closed
check stdout-pipe-closed t_stdout_pipe_closed

[ "$nskip" -gt 0 ] && echo "robust_suite: $nskip skipped"
echo "robust_suite: $npass passed, $nfail failed"
if [ "$nfail" -gt 0 ]; then
    echo "robust_suite: failed:$failed_names"
    exit 1
fi
exit 0
