#!/bin/sh
# tests/limits_suite.sh -- what kforge does at the limits of its machine
# (issue 34, "wrong results and lost work"): a cubin cache that cannot
# store (item 5), standard descriptors closed at the start (item 6), a
# file-size limit and a full disk under the results file and merge's
# --results (item 7), .npy fills that lie or never end (item 8), and the
# temporary file a killed database write leaves (item 10).
#
#   sh tests/limits_suite.sh                  # uses build/kforge
#   sh tests/limits_suite.sh npy fsize        # only the checks whose names contain these words
#
# Runs without a GPU (KFORGE_FAKE_GPU=1); NVRTC must be usable.  Every
# check runs in a fresh directory under one mktemp -d that is removed at the
# end.  The limits are real ones an unprivileged user can set: ulimit -f
# (RLIMIT_FSIZE: a write past it fails with EFBIG, as one on a full disk
# fails with ENOSPC) and /dev/full.  Prints PASS/FAIL/SKIP lines and
# "limits_suite: N passed, N failed"; exits 1 if any check failed.

# The checks are called through check() by name, which shellcheck cannot follow.
# shellcheck disable=SC2317,SC3045

set -u

KFORGE=${KFORGE:-build/kforge}
case $KFORGE in
/*) ;;
*) KFORGE=$(pwd)/$KFORGE ;;
esac
if [ ! -x "$KFORGE" ]; then
    echo "limits_suite: $KFORGE is not an executable (build it first, or set KFORGE)" >&2
    exit 2
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-limits.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
trap 'exit 141' PIPE

export KFORGE_DB="$TMP/tuning-db"
unset KFORGE_FAULT_INJECT KFORGE_PLANT
export KFORGE_FAKE_GPU=1
export LC_ALL=C

# A sanitizer build reserves terabytes of address space (no ulimit -v).
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

# whole_lines FILE: FILE is empty or ends in a newline, and every line is a
# JSON object (a results line cut short is not).
whole_lines() {
    [ -s "$1" ] || return 0
    [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || die "$1 ends in a partial line: $(tail -c 200 "$1")"
    if command -v python3 >/dev/null 2>&1; then
        python3 -c '
import json, sys
for n, l in enumerate(open(sys.argv[1]), 1):
    try:
        json.loads(l)
    except ValueError:
        sys.exit("%s:%d is not a whole line: %s" % (sys.argv[1], n, l[-120:]))
' "$1" || exit 1
    fi
}

# statuses FILE: the status of every line, counted ("17 ok").
statuses() {
    grep -o '"status":"[a-z_]*"' "$1" | sed -e 's/"status":"//; s/"//' | sort | uniq -c | tr -s ' ' | tr '\n' ';'
}

# all_ok FILE N: FILE has N lines, every one "ok".
all_ok() {
    [ "$(lines "$1")" = "$2" ] || die "$1 has $(lines "$1") lines, expected $2: $(statuses "$1")"
    [ "$(grep -c '"status":"ok"' "$1")" = "$2" ] || die "not every case of $1 is ok: $(statuses "$1")"
}

# no_failure FILE N: FILE has N lines, every one "ok" or "abandoned" (what a
# tune's race gives up on is slower, not failed).
no_failure() {
    [ "$(lines "$1")" = "$2" ] || die "$1 has $(lines "$1") lines, expected $2: $(statuses "$1")"
    [ "$(grep -Ec '"status":"(ok|abandoned)"' "$1")" = "$2" ] || die "a case of $1 failed: $(statuses "$1")"
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
    # (tunes of sweep.json pass --between 0: these tests count its lines and fill its files; the
    # sizes between the tuned ones are serve_suite's)
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

# check NAME FUNCTION: runs FUNCTION in a subshell in its own directory,
# with a cubin cache of its own there.
check() {
    selected "$1" || return 0
    d="$TMP/$1"
    mkdir -p "$d"
    (cd "$d" && export KFORGE_CACHE_DIR="$d/cache" && write_configs && "$2") >"$d/.log" 2>&1
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
# item 5: a cubin cache that cannot store a cubin

t_cache_full() {
    # ulimit -f 24 (12 KiB in dash's 512-byte blocks, 24 KiB in bash's): the
    # cache directory is usable (files can be created in it), but no cubin
    # and no .key of these kernels fits, as in a cache on a full disk.  No
    # candidate may fail for it: the cubins are used from memory (and the
    # fake GPU fails a case whose cubin it does not get).
    # The results go through a pipe (no file-size limit there) to a file
    # written by cat, outside the limit.
    { (ulimit -f 24 && exec "$KFORGE" tune sweep.json --between 0 --no-db --results /dev/fd/3 -q 3>&1 >/dev/null 2>err)
        echo $? >rc; } | cat >t.jsonl
    rc=$(cat rc)
    [ "$rc" = 0 ] || die "tune with a cache that cannot store: exit status $rc: $(head -c 1500 err)"
    no_failure t.jsonl 36
    grep -q 'compile_error' err && die "a candidate failed to compile: $(head -c 800 err)"
    [ "$(grep -c 'the cubin cache could not store a cubin' err)" = 1 ] ||
        die "expected one warning about the cache: $(head -c 1500 err)"
    grep_in err 'File too large'
    # nothing half-written is taken for a cubin later, and no false failure
    # is left to reuse: the same tune without the limit is all ok again
    expect_rc 0 "$KFORGE" tune sweep.json --between 0 --no-db --results t2.jsonl -q
    no_failure t2.jsonl 36
    grep -q 'could not store' err && die "the cache still could not store: $(head -c 800 err)"
    # a run measures from memory too, and check --compile says where the cubin is
    rm -rf cache
    { (ulimit -f 24 && exec "$KFORGE" run three.json --no-results --format jsonl -q 2>err); echo $? >rc; } | cat >r.jsonl
    rc=$(cat rc)
    [ "$rc" = 0 ] || die "run: exit status $rc: $(head -c 1500 err)"
    all_ok r.jsonl 6
    rm -rf cache
    (ulimit -f 24 && exec "$KFORGE" check --compile three.json) >out 2>err
    rc=$?
    [ "$rc" = 0 ] || die "check --compile: exit status $rc: $(head -c 1500 err)"
    [ "$(grep -c '^ *compiled ' out)" = 3 ] || die "check --compile did not compile all 3: $(head -c 800 out)"
    grep -q FAILED out && die "check --compile failed a kernel: $(head -c 800 out)"
    return 0
}

# ---------------------------------------------------------------------------
# item 6: standard descriptors closed at the start

t_std_closed() {
    # stdin and stdout closed: the output cannot be written (exit 4, stopped
    # after the first row), but no pipe of kforge's takes fd 0 or 1 and
    # reaches a worker: no case is recorded as a fault
    "$KFORGE" run three.json --format jsonl --results r.jsonl <&- >&- 2>err
    rc=$?
    [ "$rc" = 4 ] || die "run <&- >&-: exit status $rc, expected 4: $(head -c 1000 err)"
    grep_in err 'write error on standard output: Bad file descriptor'
    grep -Eq 'fault|GPU worker' err && die "a false fault: $(head -c 1000 err)"
    [ "$(lines r.jsonl)" -ge 1 ] || die "nothing recorded"
    all_ok r.jsonl "$(lines r.jsonl)"
    # the same command with stdout open resumes: every case ok
    expect_rc 0 "$KFORGE" run three.json --format jsonl --results r.jsonl
    grep_in err 'resumed: [0-9]+ cases? taken from r\.jsonl'
    all_ok r.jsonl 6
    # stdin alone, stderr alone, and all three closed
    expect_rc 0 "$KFORGE" run three.json --format jsonl --results s.jsonl <&-
    all_ok s.jsonl 6
    [ "$(lines out)" = 6 ] || die "stdout has $(lines out) rows, expected 6"
    "$KFORGE" run three.json --format jsonl --results e.jsonl >out 2>&-
    rc=$?
    [ "$rc" = 0 ] || die "run 2>&-: exit status $rc"
    all_ok e.jsonl 6
    "$KFORGE" tune sweep.json --between 0 --no-db --results a.jsonl -q <&- >&- 2>&-
    rc=$?
    [ "$rc" = 4 ] || [ "$rc" = 0 ] || die "tune <&- >&- 2>&-: exit status $rc"
    [ "$(lines a.jsonl)" -ge 1 ] || die "tune recorded nothing"
    no_failure a.jsonl "$(lines a.jsonl)"
    # reading a closed stdin is still an error of its own
    expect_rc 2 "$KFORGE" check - <&-
    grep_in err '<stdin>'
}

# ---------------------------------------------------------------------------
# item 7: a file-size limit and a full disk

t_fsize_results() {
    # ulimit -f 64: 32 KiB (dash) or 64 KiB (bash), both less than the 36
    # lines of the sweep.  kforge must not die of SIGXFSZ (exit 153, no
    # word): exit 4 naming the file and the reason, and no partial line.
    (ulimit -f 64 && exec "$KFORGE" tune sweep.json --between 0 --no-db --results t.jsonl -q) >out 2>err
    rc=$?
    [ "$rc" = 4 ] || die "tune under ulimit -f: exit status $rc, expected 4: $(head -c 1000 err)"
    grep_in err 't\.jsonl: cannot append a result: File too large'
    whole_lines t.jsonl
    n=$(lines t.jsonl)
    if [ "$n" -lt 1 ] || [ "$n" -ge 36 ]; then die "t.jsonl has $n lines"; fi
    no_failure t.jsonl "$n"
    # the same command without the limit resumes from there
    expect_rc 0 "$KFORGE" tune sweep.json --between 0 --no-db --results t.jsonl -q
    grep_in out 'taken from t\.jsonl: [1-9]'
    no_failure t.jsonl 36
    # run likewise
    (ulimit -f 4 && exec "$KFORGE" run three.json --results r.jsonl -q) >out 2>err
    rc=$?
    [ "$rc" = 4 ] || die "run under ulimit -f: exit status $rc, expected 4: $(head -c 1000 err)"
    grep_in err 'r\.jsonl: cannot append a result: File too large'
    whole_lines r.jsonl
    # stdout into a file under the limit: a write error, not a death
    (ulimit -f 1 && exec "$KFORGE" run three.json --no-results --format jsonl) >big.out 2>err
    rc=$?
    [ "$rc" = 4 ] || die "run >file under ulimit -f: exit status $rc, expected 4: $(head -c 1000 err)"
    grep_in err 'write error on standard output: File too large'
}

t_full_disk() {
    [ -w /dev/full ] || skip "no /dev/full"
    expect_rc 4 "$KFORGE" tune sweep.json --between 0 --no-db --results /dev/full -q
    grep_in err '/dev/full: cannot append a result: No space left on device'
    # the line written before stdout failed is whole (the results file is fine)
    "$KFORGE" run three.json --format jsonl --results r2.jsonl >/dev/full 2>err
    [ $? = 4 ] || die "run >/dev/full did not exit 4"
    whole_lines r2.jsonl
}

t_fsize_merge() {
    expect_rc 0 "$KFORGE" run three.json --results a.jsonl --format jsonl -q
    all_ok a.jsonl 6
    # merge --results F on a disk that fills up (ulimit -f 4: 2 KiB or 4 KiB,
    # less than the six lines): exit 4, and no F left behind that the same
    # command would then refuse as existing
    (ulimit -f 4 && exec "$KFORGE" merge a.jsonl --results m.jsonl --no-db -q) >out 2>err
    rc=$?
    [ "$rc" = 4 ] || die "merge under ulimit -f: exit status $rc, expected 4: $(head -c 1000 err)"
    grep_in err 'm\.jsonl: cannot append a result: File too large'
    [ -e m.jsonl ] && die "merge left m.jsonl ($(wc -c <m.jsonl) bytes)"
    expect_rc 0 "$KFORGE" merge a.jsonl --results m.jsonl --no-db -q
    all_ok m.jsonl 6
    # an existing F is still refused, and kept
    cp m.jsonl keep.jsonl
    expect_rc 4 "$KFORGE" merge a.jsonl --results m.jsonl --no-db -q
    grep_in err 'm\.jsonl exists'
    cmp -s m.jsonl keep.jsonl || die "merge changed an existing --results file"
    if [ -w /dev/full ]; then
        expect_rc 4 "$KFORGE" merge a.jsonl --results /dev/full --no-db -q
        [ -c /dev/full ] || die "/dev/full is no longer a device"
    fi
}

# merge --results F killed (kill -9, or SIGHUP's default action) while it
# writes F: no partial F is left, which the same command would refuse as
# existing; F appears whole or not at all
t_kill_merge() {
    command -v python3 >/dev/null 2>&1 || skip "python3 not found"
    expect_rc 0 "$KFORGE" run three.json --results a.jsonl --format jsonl -q
    python3 - <<'PY' || die "cannot make big.jsonl"
import json
lines = [json.loads(l) for l in open("a.jsonl")]
with open("big.jsonl", "w") as o:
    for i in range(500):
        for l in lines:  # 500 copies of the run's cases, each copy named apart
            d = dict(l)
            d["name"] = "copy%d" % i
            o.write(json.dumps(d, separators=(",", ":")) + "\n")
PY
    "$KFORGE" merge big.jsonl --results m.jsonl --no-db -q >out 2>err &
    pid=$!
    i=0
    while [ $i -lt 3000 ] && [ ! -s m.jsonl ] && [ -z "$(find . -maxdepth 1 -name 'm.jsonl.tmp.*' -size +0 2>/dev/null)" ]; do
        sleep 0.01
        i=$((i + 1))
    done
    kill -9 $pid 2>/dev/null
    wait $pid
    if [ -e m.jsonl ] && [ "$(lines m.jsonl)" != 3000 ]; then
        die "merge killed while writing left a partial m.jsonl ($(lines m.jsonl) of 3000 lines)"
    fi
    rm -f m.jsonl m.jsonl.tmp.*
    expect_rc 0 "$KFORGE" merge big.jsonl --results m.jsonl --no-db -q
    [ "$(lines m.jsonl)" = 3000 ] || die "m.jsonl has $(lines m.jsonl) lines, expected 3000"
    whole_lines m.jsonl
    [ -z "$(find . -maxdepth 1 -name 'm.jsonl.tmp.*')" ] || die "merge left its temporary file"
}

# ---------------------------------------------------------------------------
# item 8: .npy fills

# npy FILE HEADER N [nopad]: a float32 .npy file of N values with the header
# dict HEADER (padded to 64 bytes as np.save does, unless nopad; Python's
# backslash escapes in it are decoded).
npy() {
    python3 - "$@" <<'PY'
import struct, sys
path, head, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
head = head.encode("latin1").decode("unicode_escape")  # \033, \000: control characters
if len(sys.argv) < 5:
    head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
    f.write(struct.pack("<%df" % n, *[i * 0.5 for i in range(n)]))
PY
}

write_npy_config() {
    cat >scale.cu <<'EOF'
template <typename T>
__global__ void scale(T *y, const T *x, T a, int n)
{
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i];
}
template __global__ void scale<float>(float *, const float *, float, int);
EOF
    # npy_config NAME FILE [N]
    cat >cfg.in <<'EOF'
{"kernel": "custom",
 "custom": {"source": "scale.cu", "entry": "scale<float>", "params": {"block_size_x": [128]}, "sizes": ["n"],
  "args": [{"name": "y", "dtype": "float32", "length": "n", "role": "out"},
           {"name": "x", "dtype": "float32", "length": "n", "role": "in", "fill": {"npy": "@FILE@"}},
           {"name": "a", "scalar": "float32", "value": 3},
           {"name": "n", "scalar": "int32", "value": "n"}],
  "grid": ["(n + block_size_x - 1) / block_size_x"]},
 "defaults": {"n": @N@}}
EOF
}

npy_config() {
    sed -e "s|@FILE@|$2|; s|@N@|${3:-1000}|" cfg.in >"$1"
}

t_npy_header() {
    command -v python3 >/dev/null 2>&1 || skip "python3 not found"
    write_npy_config
    npy x.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), }" 1000
    npy_config good.json x.npy
    expect_rc 0 "$KFORGE" run good.json --no-results --format jsonl
    grep_in out '"status":"ok"'
    npy x2.npy "{'shape': (10, 100), 'fortran_order': False, 'descr': '<f4'}" 1000
    npy_config good2.json x2.npy
    expect_rc 0 "$KFORGE" check good2.json
    # headers that lie or are not NumPy's: each refused by check and run
    # with the file named and what is wrong
    npy lie.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427388154, 4), }" 1000
    npy lie2.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }" 1000
    npy lie3.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1001,), }" 1000
    npy neg.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (-1000,), }" 1000
    npy neg2.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (-10, -100), }" 1000
    npy extra.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), 'evil': 1, }" 1000
    npy twice.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), 'shape': (1000,), }" 1000
    npy nopad.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), }" 1000 nopad
    npy fortran.npy "{'descr': '<f4', 'fortran_order': True, 'shape': (1000,), }" 1000
    npy noshape.npy "{'descr': '<f4', 'fortran_order': False, }" 1000
    # control characters in its strings (a terminal's escape, a NUL): refused,
    # and never echoed to the terminal
    npy esc.npy "{'descr': '\033[31m<f4', 'fortran_order': False, 'shape': (1000,), }" 1000
    npy esckey.npy "{'\033]0;owned\007': '<f4', 'fortran_order': False, 'shape': (1000,), }" 1000
    npy nul.npy "{'descr': '<f4\000', 'fortran_order': False, 'shape': (1000,), }" 1000
    for f in lie lie2 lie3 neg neg2 extra twice nopad fortran noshape esc esckey nul; do
        npy_config "$f.json" "$f.npy"
        expect_rc 2 "$KFORGE" check "$f.json"
        grep_in err "$f\\.json: (line [0-9]+: )?custom\\.args\\[1\\] \\(x\\)\\.fill: $f\\.npy" "$f"
        expect_rc 2 "$KFORGE" run "$f.json" --no-results
    done
    grep_in lie.json 'lie\.npy'
    "$KFORGE" check lie.json 2>&1 | grep -Eq 'over 2\^36|more than 2\^36' || die "lie.npy: no word of the shape's size"
    "$KFORGE" check lie3.json 2>&1 | grep -q 'its shape gives 1001 elements' || die "lie3.npy: no word of the count"
    "$KFORGE" check neg.json 2>&1 | grep -q 'negative' || die "neg.npy: no word of the negative shape"
    "$KFORGE" check extra.json 2>&1 | grep -q "unknown key 'evil'" || die "extra.npy: no word of the key"
    "$KFORGE" check nopad.json 2>&1 | grep -q 'not padded' || die "nopad.npy: no word of the padding"
    for f in esc esckey; do
        if "$KFORGE" check $f.json 2>&1 | tr -d '\n' | LC_ALL=C grep -q '[[:cntrl:]]'; then
            die "$f.npy: a control character echoed"
        fi
    done
}

t_npy_special() {
    write_npy_config
    # /dev/zero and a pipe are refused at once, never read
    npy_config zero.json /dev/zero
    t0=$(date +%s)
    # (outside the config's folder: allowed for this test, so the file's kind is what refuses it)
    ([ "$SANITIZED" = 1 ] || ulimit -v 4194304 2>/dev/null
     KFORGE_ALLOW_OUTSIDE_FILES=1 exec timeout -s KILL 30 "$KFORGE" check zero.json) >out 2>err
    rc=$?
    [ "$rc" = 2 ] || die "check with /dev/zero: exit status $rc, expected 2: $(head -c 500 err)"
    [ $(($(date +%s) - t0)) -le 5 ] || die "took $(($(date +%s) - t0)) s"
    grep_in err '/dev/zero is not a regular file'
    mkfifo fifo || skip "mkfifo failed"
    npy_config fifo.json fifo
    expect_rc 2 timeout -s KILL 30 "$KFORGE" check fifo.json
    grep_in err 'fifo is not a regular file'
    mkdir dir.npy
    npy_config dir.json dir.npy
    expect_rc 2 "$KFORGE" check dir.json
}

t_npy_interrupt() {
    command -v python3 >/dev/null 2>&1 || skip "python3 not found"
    write_npy_config
    # a large legitimate file (sparse: 1 GiB of zeros) is read in pieces,
    # and SIGINT ends the read at once (exit 130)
    python3 - <<'PY' || skip "cannot make a sparse file"
import struct
n = 1 << 28
head = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
with open("big.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
    f.truncate(10 + len(head) + n * 4)
PY
    npy_config big.json big.npy 268435456
    "$KFORGE" check big.json >out 2>err &
    pid=$!
    sleep 1
    kill -0 "$pid" 2>/dev/null || { wait "$pid"; skip "the 1 GiB file was read within a second"; }
    kill -INT "$pid"
    i=0
    while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 30 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
        wait "$pid"
        die "kforge went on reading for 3 s after SIGINT"
    fi
    wait "$pid"
    rc=$?
    [ "$rc" = 130 ] || die "exit status $rc after SIGINT, expected 130: $(head -c 500 err)"
    grep_in err 'big\.npy: interrupted'
}

# ---------------------------------------------------------------------------
# item 10: the temporary file of a database write killed with SIGKILL

t_db_stale_tmp() {
    db=$PWD/db
    expect_rc 0 "$KFORGE" tune sweep.json --between 0 --db "$db" --results t.jsonl -q
    set -- "$db"/*.json
    if [ $# != 1 ] || [ ! -f "$1" ]; then die "no database file in $db"; fi
    f=$1
    # what a writer killed with SIGKILL leaves (the name kforge gives its
    # temporary file: the database's, .tmp. and its PID): a PID that is no
    # process now
    sh -c 'exit 0' &
    dead=$!
    wait "$dead"
    kill -0 "$dead" 2>/dev/null && skip "PID $dead was taken again at once"
    head -c 300000 /dev/zero >"$f.tmp.$dead"
    # not ours, or not dead: kept
    head -c 10 /dev/zero >"$f.tmp.$$"          # this shell: alive
    head -c 10 /dev/zero >"$f.tmp.${dead}x"    # not a PID
    head -c 10 /dev/zero >"$db/other.json.tmp.$dead"
    head -c 10 /dev/zero >"$db/notes.txt"
    mkdir "$f.tmp.1$dead"                      # a directory (and a PID likely free)
    # the next write of the database removes it
    expect_rc 0 "$KFORGE" tune sweep.json --between 0 --db "$db" --results t2.jsonl -q
    [ -e "$f.tmp.$dead" ] && die "the temporary file of a dead writer is still there"
    for k in "$f.tmp.$$" "$f.tmp.${dead}x" "$db/other.json.tmp.$dead" "$db/notes.txt" "$f.tmp.1$dead"; do
        [ -e "$k" ] || die "$k was removed"
    done
    expect_rc 0 "$KFORGE" best --db "$db" --list
    grep_in out 'shuffle'
    return 0
}

# ---------------------------------------------------------------------------

echo "limits_suite: $KFORGE"

check cache-full t_cache_full
check std-closed t_std_closed
check fsize-results t_fsize_results
check full-disk t_full_disk
check fsize-merge t_fsize_merge
check kill-merge t_kill_merge
check npy-header t_npy_header
check npy-special t_npy_special
check npy-interrupt t_npy_interrupt
check db-stale-tmp t_db_stale_tmp

[ "$nskip" -gt 0 ] && echo "limits_suite: $nskip skipped"
echo "limits_suite: $npass passed, $nfail failed"
if [ "$nfail" -gt 0 ]; then
    echo "limits_suite: failed:$failed_names"
    exit 1
fi
exit 0
