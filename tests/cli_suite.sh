#!/bin/sh
# tests/cli_suite.sh -- end-to-end checks of the kforge command line: exit
# codes, stdout/stderr separation, formats, --set, stdin configs, worker
# crashes and hangs, SIGINT/SIGTERM and resume, truncated and shared results
# files, check/gen, and tools/plot.sh.
#
#   sh tests/cli_suite.sh                  # uses build/kforge
#   KFORGE=build-san/kforge sh tests/cli_suite.sh
#   sh tests/cli_suite.sh crash hang       # only the checks whose names contain these words
#
# Runs without a GPU: measurements use the synthetic device (KFORGE_FAKE_GPU=1,
# see src/exec/worker.h); NVRTC must be usable for the compile checks.  Every check
# runs in a fresh directory under one mktemp -d that is removed at the end;
# the cubin cache (KFORGE_CACHE_DIR) lives there too.  Prints PASS/FAIL/SKIP
# lines and a summary; exits 1 if any check failed.

# The checks are called through check() by name, which shellcheck cannot follow.
# shellcheck disable=SC2317

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in
/*) ;;
*) KFORGE=$(pwd)/$KFORGE ;;
esac
if [ ! -x "$KFORGE" ]; then
    echo "cli_suite: $KFORGE is not an executable (build it first, or set KFORGE)" >&2
    exit 2
fi
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-cli.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

export KFORGE_CACHE_DIR="$TMP/cache"
export KFORGE_DB="$TMP/tuning-db"
unset KFORGE_FAKE_GPU KFORGE_FAULT_INJECT KFORGE_PLANT
export LC_ALL=C

ESC=$(printf '\033')
HAVE_PY=0
command -v python3 >/dev/null 2>&1 && HAVE_PY=1
# Does this machine have a GPU kforge can use?  (Decides how "no GPU" is provoked.)
HAVE_GPU=0
"$KFORGE" info >/dev/null 2>&1 && HAVE_GPU=1

npass=0
nfail=0
nskip=0
failed_names=

# ---------------------------------------------------------------------------
# helpers (used inside the checks, which run in subshells)

# Ends the check with a failure message.
die() {
    printf '%s\n' "$*"
    exit 1
}

# Ends the check as skipped, with the reason.
skip() {
    printf '%s\n' "$*"
    exit 77
}

need_py() {
    [ "$HAVE_PY" = 1 ] || skip "python3 not found"
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

# jsonl_ok FILE [BROKEN]: every line of FILE parses as a JSON object, except
# exactly BROKEN lines (default 0).
jsonl_ok() {
    python3 - "$1" "${2:-0}" <<'EOF' || exit 1
import json, sys
path, allowed = sys.argv[1], int(sys.argv[2])
bad = 0
with open(path, encoding="utf-8") as f:
    for i, line in enumerate(f, 1):
        try:
            if not isinstance(json.loads(line), dict):
                raise ValueError("not an object")
        except ValueError as e:
            bad += 1
            if bad > allowed:
                print("%s:%d: not JSON (%s): %.120s" % (path, i, e, line))
if bad != allowed:
    print("%s: %d unparseable lines, expected %d" % (path, bad, allowed))
    sys.exit(1)
EOF
}

# field FILE KEY: prints KEY of every line of a JSON Lines file, one per line.
field() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    v = d
    for k in sys.argv[2].split("."):
        v = v.get(k) if isinstance(v, dict) else None
    print(json.dumps(v) if isinstance(v, (dict, list)) else v)
EOF
}

lines() {
    wc -l <"$1" | tr -d ' '
}

# wait_lines FILE N SECONDS: waits until FILE has at least N lines.
wait_lines() {
    i=0
    while [ "$i" -lt $(($3 * 10)) ]; do
        if [ -f "$1" ] && [ "$(lines "$1")" -ge "$2" ]; then
            return 0
        fi
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

# Small configs.  sweep.json: 4 block sizes x 3 elements per thread x 3 sizes = 36 cases.
write_configs() {
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
# exit codes

t_version() {
    expect_rc 0 "$KFORGE" --version
    grep_in out '^kforge [0-9]+\.[0-9]+'
}

help_of() {
    expect_rc 0 "$KFORGE" "$1" --help
    grep_in out 'usage: kforge'
    [ -s err ] && die "--help wrote to stderr: $(head -n 3 err)"
    return 0
}
t_help_main() {
    expect_rc 0 "$KFORGE" --help
    grep_in out 'usage: kforge COMMAND'
}
t_help_run() { help_of run; }
t_help_gen() { help_of gen; }
t_help_check() { help_of check; }
t_help_info() { help_of info; }
t_help_tune() {
    "$KFORGE" tune --help >out 2>err
    grep -q 'not implemented' err && skip "kforge tune is not implemented yet"
    help_of tune
}
t_help_best() {
    "$KFORGE" best --help >out 2>err
    grep -q 'not implemented' err && skip "kforge best is not implemented yet"
    help_of best
}

t_unknown_command() {
    expect_rc 2 "$KFORGE" rnu three.json
    grep_in err "unknown command 'rnu'"
    grep_in err "did you mean 'run'"
}

t_unknown_option() {
    expect_rc 2 "$KFORGE" run --formt csv three.json
    grep_in err "unknown option '--formt'"
    grep_in err "did you mean '--format'"
    [ -s out ] && die "usage error printed to stdout"
    return 0
}

t_bad_config() {
    # a misspelt key in a variant: the file, the field path and a suggestion
    cat >bad.json <<'EOF'
{"n": 1024, "variants": [{"block_size": 256}, {"blok_size": 128}]}
EOF
    expect_rc 2 "$KFORGE" check bad.json
    grep_in err 'bad\.json: variants\[1\]\.blok_size' "file and field"
    grep_in err 'block_size' "suggestion"
    # a value out of its list
    printf '{"dtype": "float8", "n": 1024}\n' >bad2.json
    expect_rc 2 "$KFORGE" run bad2.json
    grep_in err 'bad2\.json: dtype' "file and field"
    grep_in err 'float32' "allowed values"
    # malformed JSON: line and column
    printf '{\n  "n": [1024,\n' >bad3.json
    expect_rc 2 "$KFORGE" gen bad3.json
    grep_in err 'bad3\.json: malformed JSON at line [0-9]+, column [0-9]+'
}

t_missing_file() {
    expect_rc 2 "$KFORGE" run nonexistent.json
    grep_in err 'nonexistent\.json'
    expect_rc 2 "$KFORGE" check nonexistent.json
    expect_rc 2 "$KFORGE" gen nonexistent.json
}

t_no_gpu() {
    if [ "$HAVE_GPU" = 1 ]; then
        # a GPU is here: provoke "no usable GPU" with a device that does not exist
        expect_rc 3 "$KFORGE" run three.json --device 63 --no-results
    else
        expect_rc 3 "$KFORGE" run three.json --no-results
        grep_in err 'driver|GPU|libcuda' "a clear message"
        # what to do instead: the fake GPU, and the commands that need none
        grep_in err 'without a GPU, KFORGE_FAKE_GPU=1 runs every command on a synthetic device' "the fake GPU named"
        grep_in err 'need no GPU at all: gen, check, check --compile, axes, compare, merge, best and export .*tune --simulate'
        for c in info "tune three.json --budget 2 --no-db --results t.jsonl"; do
            # shellcheck disable=SC2086
            expect_rc 3 "$KFORGE" $c
            grep_in err 'KFORGE_FAKE_GPU=1 runs every command' "kforge $c names the fake GPU"
        done
        # not when the fake GPU is in use and the device is what is missing
        expect_rc 3 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --no-results --device 5
        grep -q 'KFORGE_FAKE_GPU=1 runs' err && die "the fake GPU suggested while it is in use: $(cat err)"
    fi
    [ -s out ] && die "no-GPU failure wrote to stdout: $(head -n 3 out)"
    [ -f kforge-results.jsonl ] && die "a results file was created without a GPU"
    return 0
}

t_no_gpu_check_gen() {
    # no KFORGE_FAKE_GPU: check and gen never need a GPU
    expect_rc 0 "$KFORGE" check three.json
    grep_in out '3 variants, 6 cases'
    expect_rc 0 "$KFORGE" gen three.json
    grep_in out 'extern "C"'
}

t_no_gpu_commands() {
    # every command the no-GPU message names works without one (results and a
    # tuning database made on the fake GPU first)
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --results r.jsonl -q
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" tune sweep.json --set n=4096 --budget 4 --results t.jsonl -q
    expect_rc 0 env -u KFORGE_FAKE_GPU "$KFORGE" check --compile --arch sm_90 three.json
    expect_rc 0 env -u KFORGE_FAKE_GPU "$KFORGE" axes reduce
    expect_rc 0 env -u KFORGE_FAKE_GPU "$KFORGE" compare r.jsonl r.jsonl
    expect_rc 0 env -u KFORGE_FAKE_GPU "$KFORGE" merge t.jsonl --no-db
    expect_rc 0 env -u KFORGE_FAKE_GPU "$KFORGE" best --n 4096
    grep_in out '"block_size"'
    expect_rc 0 env -u KFORGE_FAKE_GPU "$KFORGE" export --dtype float32 --op sum -o x.cuh
    grep_in x.cuh 'kforge_reduce_float32_sum'
    expect_rc 0 env -u KFORGE_FAKE_GPU "$KFORGE" tune sweep.json --set n=4096 --simulate t.jsonl --budget 4
    # --gpu picks the GPU in best and export; --device-model is the same (an older name)
    expect_rc 0 env -u KFORGE_FAKE_GPU "$KFORGE" export --dtype float32 --op sum --gpu 'fake-gpu (KFORGE_FAKE_GPU)'
    cp out gpu.cuh
    expect_rc 0 env -u KFORGE_FAKE_GPU "$KFORGE" export --dtype float32 --op sum --device-model 'fake-gpu (KFORGE_FAKE_GPU)'
    # the same header but for the command line and the date it records
    grep -v 'kforge export\|T[0-9][0-9]:[0-9][0-9]' gpu.cuh >a.cuh
    grep -v 'kforge export\|T[0-9][0-9]:[0-9][0-9]' out >b.cuh
    cmp -s a.cuh b.cuh || die "export --gpu and --device-model give different headers: $(diff a.cuh b.cuh | head -5)"
    expect_rc 0 env -u KFORGE_FAKE_GPU "$KFORGE" best --n 4096 --device-model 'fake-gpu (KFORGE_FAKE_GPU)'
    expect_rc 2 env -u KFORGE_FAKE_GPU "$KFORGE" best --n 4096 --gpu 'no such GPU'
    return 0
}

# ---------------------------------------------------------------------------
# streams and formats

t_jsonl_stdout() {
    need_py
    # one case crashes, so there is a message to print: it must go to stderr
    expect_rc 1 env KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=crash@2 "$KFORGE" run three.json --format jsonl --no-results
    [ "$(lines out)" = 6 ] || die "expected 6 JSON lines on stdout, got $(lines out)"
    jsonl_ok out
    grep_in err 'fault' "the failure is reported on stderr"
    grep -q '^{' err && die "JSON on stderr: $(grep '^{' err | head -n 1)"
    return 0
}

t_csv() {
    need_py
    expect_rc 1 env KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=crash@3 "$KFORGE" run three.json --format csv --no-results
    python3 - <<'EOF' || exit 1
import csv, sys
rows = list(csv.reader(open("out", newline="")))
head = rows[0]
for k in ("name", "block_size", "n", "status", "median_ms", "gbps"):
    if k not in head:
        sys.exit("header lacks %s: %s" % (k, head))
if len(rows) != 7:
    sys.exit("expected a header and 6 rows, got %d rows" % len(rows))
for i, r in enumerate(rows[1:], 2):
    if len(r) != len(head):
        sys.exit("row %d has %d fields, the header %d" % (i, len(r), len(head)))
st = [r[head.index("status")] for r in rows[1:]]
if st.count("fault") != 1 or st.count("ok") != 5:
    sys.exit("statuses: %s" % st)
EOF
}

t_csv_no_header() {
    # a shell loop appending CSV to one file: one header line
    for bs in 128 256; do
        h=
        [ -s all.csv ] && h=--no-header
        KFORGE_FAKE_GPU=1 "$KFORGE" run one.json --set block_size=$bs --format csv $h --no-results -q >>all.csv ||
            die "run --format csv $h failed"
    done
    [ "$(grep -c '^kforge,' all.csv)" = 1 ] || die "expected one header line: $(cut -c1-60 all.csv)"
    [ "$(lines all.csv)" = 3 ] || die "expected a header and 2 rows, got $(lines all.csv) lines"
    grep -q ',128,' all.csv && grep -q ',256,' all.csv || die "a block size is missing: $(cut -c1-120 all.csv)"
    # --no-header is for csv only; axes csv (no header) takes it
    expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" run one.json --no-header --no-results
    grep_in err 'no-header goes with --format csv'
    expect_rc 0 "$KFORGE" axes reduce --format csv --no-header
    grep_in out '^reduce,dtype,'
    # rows of several families in one file: the core columns (all but the
    # family's parameters and sizes, which come last) line up
    KFORGE_FAKE_GPU=1 "$KFORGE" run "$ROOT/configs/custom/vector_add.json" --set block_size_x=256 --set per_thread=1 \
        --set n=4096 --format csv --no-header --no-results -q >>all.csv || die "vector_add csv failed"
    need_py
    python3 - all.csv <<'EOF' || exit 1
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = rows[0]
core = head.index("bench.energy") + 1
for r in rows[1:]:
    got = dict(zip(head[:core], r[:core]))
    if got["status"] != "ok" or got["kernel"] not in ("reduce", "vector_add") or not float(got["median_ms"]) > 0:
        sys.exit("core columns misaligned: %s" % got)
if rows[-1][head.index("kernel")] != "vector_add":
    sys.exit("no vector_add row: %s" % rows[-1])
EOF
    "$KFORGE" run --help | grep -q -- '--no-header' || die "run --help does not name --no-header"
    grep -q 'no\\-header' "$ROOT/man/kforge.1" || die "the man page does not name --no-header"
    grep -q -- '--no-header' "$ROOT/README.md" || die "the README does not name --no-header"
}

t_broken_pipe_no_results() {
    # the reader goes away: with --no-results there is nothing to resume
    # from; with a results file, the same command resumes
    KFORGE_FAKE_GPU=1 KFORGE_FAKE_GPU_MS=30 "$KFORGE" run sweep.json --no-results --format csv 2>err1 | head -n 2 >/dev/null
    grep_in err1 'standard output closed after [0-9]+ of 36 cases; the cases measured were printed; with --no-results there is no results file to resume from'
    grep -q 'run the same command to resume' err1 && die "--no-results: told to resume: $(cat err1)"
    KFORGE_FAKE_GPU=1 KFORGE_FAKE_GPU_MS=30 "$KFORGE" run sweep.json --results r.jsonl --format csv 2>err2 | head -n 2 >/dev/null
    grep_in err2 'standard output closed after [0-9]+ of 36 cases; results are in r\.jsonl; run the same command to resume'
    return 0
}

t_no_color() {
    # not a terminal: no escape sequences, whatever the format
    for fmt in table csv jsonl json; do
        KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=crash@1 "$KFORGE" run three.json --format "$fmt" --no-results >out 2>err
        if grep -q "$ESC" out err; then
            die "escape characters with --format $fmt and no terminal"
        fi
    done
    # a terminal (script(1) from util-linux gives one): colour unless NO_COLOR
    if script -qec true /dev/null >/dev/null 2>&1; then
        KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=crash@1 NO_COLOR=1 \
            script -qec "'$KFORGE' run three.json --no-results" /dev/null >tty.out 2>&1
        grep -q "$ESC" tty.out && die "escape characters on a terminal with NO_COLOR set"
        KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=crash@1 \
            script -qec "'$KFORGE' run three.json --no-results" /dev/null >tty2.out 2>&1
        grep -q "$ESC" tty2.out || die "no colour on a terminal without NO_COLOR (is the NO_COLOR test meaningful?)"
        grep_in tty.out 'fault'
    fi
    return 0
}

# ---------------------------------------------------------------------------
# tables that show what varies: --columns, --sort, rows streamed on a terminal

sweep_config() {
    cat >sweep.json <<'EOF'
{"name": "mine", "kernel": "reduce", "dtype": "float32", "op": "sum", "n": 1048576, "block_size": [128, 256, 512]}
EOF
}

# The rows of a text table in out (between the rule and the device line).
table_rows() {
    sed -n '/^---/,/^device/p' "$1" | sed '1d;$d'
}

t_table_columns() {
    sweep_config
    # piped (to a file, to less), without an option: what varies shows, as
    # on a terminal, so no two rows read alike
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results
    grep_in out '^same in every row: name=mine kernel=reduce dtype=float32 op=sum '
    grep_in out '^block_size +status +time +noise +GB/s +% peak$'
    [ "$(table_rows out | sort | uniq | wc -l)" = 3 ] || die "rows that read alike: $(cat out)"
    # the issue's named sweep, piped: its two rows differ in block_size
    echo '{"kernel": "reduce", "variants": [{"name": "mine", "algorithm": "shuffle", "block_size": [128, 512]}],
           "n": "2^20"}' >named.json
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run named.json --no-results
    [ "$(table_rows out | awk '{print $1}' | tr '\n' ' ')" = "128 512 " ] || die "named sweep, piped: $(cat out)"
    # a custom kernel's table has no dtype or op column (its family has none)
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run "$ROOT/configs/custom/vector_add.json" --set 'per_thread=[1,2]' \
        --set block_size_x=256 --set n=4096 --no-results
    grep_in out '^per_thread +status +time'
    grep -Eq 'dtype|  -  +-  ' out && die "a custom kernel's table shows dtype or op: $(cat out)"
    # --columns and --sort take a custom kernel's parameters
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run "$ROOT/configs/custom/vector_add.json" --set 'per_thread=[1,2]' \
        --set block_size_x=256 --set n=4096 --no-results --columns per_thread,block_size_x,time --sort=-per_thread
    grep_in out '^per_thread +block_size_x +time$'
    [ "$(table_rows out | awk '{printf "%s ", $1}')" = "2 1 " ] || die "--sort -per_thread: $(cat out)"
    # --columns auto: the axis that varies, the rest said once above the table
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --columns auto
    grep_in out '^same in every row: name=mine kernel=reduce dtype=float32 op=sum '
    grep_in out ' n=1048576$'
    grep -q 'block_size=' out && die "the varying axis is in the constants line"
    grep_in out '^block_size +status +time +noise +GB/s +% peak$'
    [ "$(grep -cE '^ +(128|256|512)  ok  ' out)" = 3 ] || die "rows: $(cat out)"
    # md too
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --columns auto --format md
    grep_in out '^Same in every row: name=mine '
    grep_in out '^\| block_size \| status \| time \| noise \| GB/s \| % peak \|$'
    grep_in out '^\| 512 \| ok \| '
    # a list, sorted by bandwidth (the most first) and by the axis, reversed
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --columns block_size,gbps --sort gbps
    grep_in out '^block_size +GB/s$'
    table_rows out | awk '{print $2}' >gbps.txt
    [ "$(lines gbps.txt)" = 3 ] || die "rows: $(cat out)"
    sort -rn gbps.txt | cmp -s - gbps.txt || die "not by GB/s, the most first: $(cat gbps.txt)"
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --columns block_size,time --sort=-block_size
    [ "$(table_rows out | awk '{printf "%s ", $1}')" = "512 256 128 " ] || die "--sort -block_size: $(cat out)"
    # usage errors
    expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --columns block_sise
    grep_in err "unknown column 'block_sise' \(did you mean 'block_size'\?\)"
    expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --sort speed
    grep_in err "--sort: unknown column 'speed'"
    expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --columns auto --format csv
    grep_in err "--columns: with --format csv, a list of CSV columns"
    expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --columns name,speed --format csv
    grep_in err "'speed' is not a CSV column"
    expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --columns name --format jsonl
    grep_in err "--columns shapes the table and md formats and picks csv's columns, not jsonl"
    expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --sort gbps --format csv
    grep_in err "--sort shapes the table and md formats, not csv"
    # --format csv --columns: those CSV columns, in that order
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --no-results --format csv \
        --columns block_size,status,bench.seed,n
    grep_in out '^block_size,status,bench.seed,n$'
    [ "$(grep -cE '^(128|256|512),ok,42,1048576$' out)" = 3 ] || die "csv --columns: $(cat out)"
    expect_rc 2 env KFORGE_FAKE_GPU=1 "$KFORGE" gen sweep.json --columns auto
    grep_in err "--columns is not an option of 'kforge gen'"
}

t_table_stream() {
    need_py
    script -qec true /dev/null >/dev/null 2>&1 || skip "script(1) not found"
    sweep_config
    # on a terminal: the varying axis by default, each row as its case
    # finishes (a progress line with the best so far drawn below it, then
    # cleared for the next row), the device line at the end
    # (NO_COLOR would turn the progress line off)
    KFORGE_FAKE_GPU=1 TERM=xterm script -qec "'$KFORGE' run sweep.json --no-results" /dev/null >tty.out 2>&1
    tr -d '\r' <tty.out | sed "s/${ESC}\[[0-9;]*[mK]//g" >tty.txt
    grep_in tty.txt 'same in every row: name=mine kernel=reduce'
    grep_in tty.txt '^block_size +status +time'
    python3 - tty.txt <<'EOF' || exit 1
import re, sys
t = open(sys.argv[1]).read()
rows = [m.start() for m in re.finditer(r" +(128|256|512)  ok  ", t)]
prog = [m.start() for m in re.finditer(r"\[(\d)/3 measured [^]]*\| best [0-9.]+ GB/s: block_size=(128|256|512) \|[^]]*\]", t)]
if len(rows) != 3:
    sys.exit("expected 3 rows: %r" % t)
# a progress line after the first row, before the next: streamed
if not prog or not (rows[0] < prog[0] < rows[1] < rows[2]):
    sys.exit("rows %s, progress lines %s: not streamed: %r" % (rows, prog, t))
if t.rfind("device: ") < rows[2]:
    sys.exit("no device line after the rows: %r" % t)
EOF
    # --sort on a terminal: one table at the end, sorted
    KFORGE_FAKE_GPU=1 NO_COLOR=1 TERM=xterm script -qec "'$KFORGE' run sweep.json --no-results --sort -block_size" \
        /dev/null >tty2.out 2>&1
    tr -d '\r' <tty2.out | sed "s/${ESC}\[K//g" | grep -E '^ +(128|256|512)  ok' | awk '{printf "%s ", $1}' >order.txt
    [ "$(cat order.txt)" = "512 256 128 " ] || die "sorted on a terminal: $(cat order.txt)"
}

# ---------------------------------------------------------------------------
# configs from stdin and --set

t_stdin() {
    need_py
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run - --format jsonl --no-results <three.json
    [ "$(lines out)" = 6 ] || die "expected 6 results from stdin config, got $(lines out)"
    jsonl_ok out
    expect_rc 0 "$KFORGE" check - <three.json
    grep_in out '<stdin>: 3 variants'
    expect_rc 0 "$KFORGE" gen - <one.json
    grep_in out 'block_size +256'
}

t_set_block_size() {
    need_py
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --set block_size=128 --format jsonl --no-results
    [ "$(lines out)" = 6 ] || die "expected 6 results, got $(lines out)"
    [ "$(field out block_size | sort -u)" = 128 ] || die "block_size values: $(field out block_size | sort -u | tr '\n' ' ')"
}

t_set_n() {
    need_py
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --set n=2^12 --format jsonl --no-results
    [ "$(lines out)" = 3 ] || die "expected 3 results (one size), got $(lines out)"
    [ "$(field out n | sort -u)" = 4096 ] || die "n values: $(field out n | sort -u | tr '\n' ' ')"
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --set 'n=[1024,"2^11"]' --format jsonl --no-results
    [ "$(field out n | sort -u | tr '\n' ' ')" = "1024 2048 " ] || die "list n: $(field out n | sort -u | tr '\n' ' ')"
}

t_set_seed() {
    need_py
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --set bench.seed=7 --format jsonl --no-results
    [ "$(field out bench.seed | sort -u)" = 7 ] || die "bench.seed values: $(field out bench.seed | sort -u | tr '\n' ' ')"
}

t_set_unknown() {
    expect_rc 2 "$KFORGE" check three.json --set blok_size=128
    grep_in err 'blok_size'
    grep_in err 'did you mean block_size'
    expect_rc 2 "$KFORGE" check three.json --set bench.sed=7
    grep_in err 'did you mean bench\.seed'
    expect_rc 2 "$KFORGE" check three.json --set block_size=100
    grep_in err '100'
}

# ---------------------------------------------------------------------------
# worker crashes and hangs

# statuses FILE: "name n status" per line, sorted by the order in the file
statuses() {
    python3 - "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    print(d["name"] or d["label"], d["n"], d["status"])
EOF
}

t_crash() {
    need_py
    expect_rc 1 env KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=crash@2 "$KFORGE" run three.json --results r.jsonl --format jsonl
    [ "$(lines r.jsonl)" = 6 ] || die "results file has $(lines r.jsonl) lines, expected 6"
    jsonl_ok r.jsonl
    statuses r.jsonl >st
    # cases run size-major in config order: the 2nd is shfl at n=1024
    [ "$(sed -n 2p st)" = "shfl 1024 fault" ] || die "2nd case: $(sed -n 2p st)"
    [ "$(grep -c ' ok$' st)" = 5 ] || die "expected 5 ok: $(cat st)"
    grep_in err 'fault'
    [ -f r.jsonl.state ] && die "state file left after a complete run"
    return 0
}

t_hang() {
    need_py
    t0=$(date +%s)
    expect_rc 1 env KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=hang@3 "$KFORGE" run three.json --results r.jsonl --timeout 2 --format jsonl
    t1=$(date +%s)
    [ $((t1 - t0)) -le 15 ] || die "took $((t1 - t0)) s with --timeout 2"
    [ "$(lines r.jsonl)" = 6 ] || die "results file has $(lines r.jsonl) lines, expected 6"
    statuses r.jsonl >st
    [ "$(sed -n 3p st)" = "atom 1024 timeout" ] || die "3rd case: $(sed -n 3p st)"
    [ "$(grep -c ' ok$' st)" = 5 ] || die "expected 5 ok: $(cat st)"
}

# ---------------------------------------------------------------------------
# interruption and resume

# interrupt SIGNAL: hang at case 10 of sweep.json, send SIGNAL, then resume.
interrupt() {
    need_py
    KFORGE_FAKE_GPU=1 KFORGE_FAULT_INJECT=hang@10 "$KFORGE" run sweep.json --results r.jsonl --timeout 300 \
        --format jsonl >out 2>err &
    pid=$!
    wait_lines r.jsonl 9 60 || {
        kill -KILL "$pid"
        die "9 results did not appear within 60 s"
    }
    sleep 0.5 # the 10th case is in flight (and hangs)
    kill -"$1" "$pid"
    wait_pid "$pid" 20
    [ "$wrc" = 130 ] || die "exit status $wrc after SIG$1, expected 130"
    grep_in err 'resume' "a message about resuming"
    [ "$(lines r.jsonl)" = 9 ] || die "results file has $(lines r.jsonl) lines after SIG$1, expected 9"
    jsonl_ok r.jsonl
    [ -f r.jsonl.state ] || die "no r.jsonl.state after the interruption"
    first=$(field r.jsonl run | sort -u)
    # the same command again (without the injected hang) resumes
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --results r.jsonl --timeout 300 --format jsonl
    grep_in err 'resumed: 9 cases taken from r\.jsonl, 27 measured now'
    [ "$(lines r.jsonl)" = 36 ] || die "results file has $(lines r.jsonl) lines after resuming, expected 36"
    jsonl_ok r.jsonl
    [ "$(field r.jsonl run | sort -u | wc -l | tr -d ' ')" = 2 ] || die "expected 2 run ids"
    [ "$(field r.jsonl run | grep -c "^$first\$")" = 9 ] || die "the first run does not own 9 lines"
    [ "$(lines out)" = 36 ] || die "stdout of the resumed run has $(lines out) rows, expected 36"
    python3 - <<'EOF' || exit 1
import json, sys
keys = set()
for line in open("r.jsonl"):
    d = json.loads(line)
    k = (d["block_size"], d["elements_per_thread"], d["n"])
    if k in keys:
        sys.exit("case measured twice: %s" % (k,))
    keys.add(k)
if len(keys) != 36:
    sys.exit("%d distinct cases" % len(keys))
EOF
    [ -f r.jsonl.state ] && die "state file left after the resumed run completed"
    return 0
}
t_sigint() { interrupt INT; }
t_sigterm() { interrupt TERM; }

t_truncated() {
    need_py
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --results r.jsonl --format jsonl
    [ "$(lines r.jsonl)" = 6 ] || die "expected 6 lines"
    # cut the last line in half (as a crash in the middle of a write would)
    python3 - <<'EOF'
data = open("r.jsonl", "rb").read().rstrip(b"\n").split(b"\n")
last = data[-1]
open("r.jsonl", "wb").write(b"\n".join(data[:-1]) + b"\n" + last[: len(last) // 2])
EOF
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --results r.jsonl --resume --format jsonl
    grep_in err 'resumed: 5 cases taken from r\.jsonl, 1 measured now'
    # 5 good lines, the broken half line, the re-measured case
    [ "$(lines r.jsonl)" = 7 ] || die "expected 7 lines, got $(lines r.jsonl)"
    jsonl_ok r.jsonl 1
    [ "$(sed -n 7p r.jsonl | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["name"], d["n"])')" = "atom 65536" ] ||
        die "the re-measured case is not the cut one"
}

t_concurrent() {
    need_py
    KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --results shared.jsonl --set bench.seed=1 --format csv >o1 2>e1 &
    p1=$!
    KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --results shared.jsonl --set bench.seed=2 --format csv >o2 2>e2 &
    p2=$!
    KFORGE_FAKE_GPU=1 "$KFORGE" run three.json --results shared.jsonl --format csv >o3 2>e3 &
    p3=$!
    wait_pid "$p1" 120
    r1=$wrc
    wait_pid "$p2" 120
    r2=$wrc
    wait_pid "$p3" 120
    [ "$r1$r2$wrc" = 000 ] || die "exit statuses $r1 $r2 $wrc: $(cat e1 e2 e3)"
    [ "$(lines shared.jsonl)" = 78 ] || die "expected 36+36+6 lines, got $(lines shared.jsonl)"
    jsonl_ok shared.jsonl
    [ "$(field shared.jsonl run | sort -u | wc -l | tr -d ' ')" = 3 ] || die "expected 3 run ids"
}

# ---------------------------------------------------------------------------
# check and gen

t_check_lists() {
    cat >skips.json <<'EOF'
{"algorithm": ["sequential", "atomic_global"], "unroll": ["none", "full"], "block_size": 256, "n": 4096}
EOF
    expect_rc 0 "$KFORGE" check three.json skips.json
    grep_in out 'three\.json: 3 variants, 6 cases'
    grep_in out '^  seq +sequential/bs256/ept2/full'
    grep_in out '^  atom +atomic_shared/bs256'
    grep_in out 'n = 1024 65536'
    grep_in out 'skips\.json: 3 variants, 3 cases'
    grep_in err 'skipped 1 combination'
    grep_in err 'atomic_global.*unroll must be none'
}

t_check_compile() {
    expect_rc 0 "$KFORGE" check --compile --arch sm_90 three.json
    [ "$(grep -c '^  compiled ' out)" = 3 ] || die "expected 3 compiled lines: $(cat out)"
    # again: from the cache
    expect_rc 0 "$KFORGE" check --compile --arch sm_90 three.json
    [ "$(grep -c '(cached)' out)" = 3 ] || die "expected 3 cached: $(cat out)"
}

t_compile_failure() {
    # Configs are validated, so a generated kernel does not fail to compile on
    # a supported arch; but __reduce_*_sync exists only from sm_80, so the
    # warp_intrinsic variant fails to compile for sm_75 while the float32 one
    # compiles.  (Every int32/uint32 variant fails there: reduce.cuh defines
    # kf_warp_intrinsic for all of them.)
    cat >intr.json <<'EOF'
{"unroll": "full", "block_size": 256, "n": 4096,
 "variants": [{"name": "intr", "dtype": "int32", "algorithm": "warp_intrinsic"},
              {"name": "shfl", "dtype": "float32", "algorithm": "shuffle"}]}
EOF
    expect_rc 1 "$KFORGE" check --compile --arch sm_75 intr.json
    grep_in out 'FAILED +intr'
    grep_in out 'compiled +shfl'
    grep_in err '__reduce_add_sync'
}

t_gen_comment() {
    expect_rc 0 "$KFORGE" gen one.json
    # the comment block at the top names every parameter
    sed -n '/^[^/]/q;p' out >comment.txt
    for k in name grid dtype op algorithm block_size elements_per_thread unroll vector_width passes layout \
        accumulator warp_reduce load; do
        grep -Eq "^//   $k " comment.txt || die "the opening comment does not name $k"
    done
    grep_in comment.txt 'block_size +256'
    expect_rc 0 "$KFORGE" gen three.json
    [ "$(grep -c '^// ===== variant' out)" = 3 ] || die "expected 3 variants"
}

t_gen_nvcc() {
    [ -x "$NVCC" ] || skip "no nvcc at $NVCC"
    expect_rc 0 "$KFORGE" gen one.json
    "$NVCC" -arch=sm_90 -cubin -x cu - -o one.cubin <out >nvcc.log 2>&1 || die "nvcc failed: $(head -n 20 nvcc.log)"
    [ -s one.cubin ] || die "no cubin"
    for v in seq shfl atom; do
        "$KFORGE" gen three.json >all.cu 2>/dev/null
        # one variant at a time: split at the variant headers
        awk -v want="$v" '/^\/\/ ===== variant/ { on = ($4 == want) } on' all.cu >"$v.cu"
        [ -s "$v.cu" ] || die "variant $v not found in gen output"
        "$NVCC" -arch=sm_90 -cubin -x cu "$v.cu" -o "$v.cubin" >nvcc.log 2>&1 || die "nvcc $v: $(head -n 20 nvcc.log)"
    done
}

t_oom() {
    need_py
    # The fake GPU (src/exec/worker.c: fake_case) has no out-of-memory path: it
    # reduces at most 2^22 elements on the CPU whatever n is.  So without a GPU
    # this only checks that a size beyond the device's memory (2^36 float64 =
    # 512 GiB) is measured without a crash; with a GPU it must be out_of_memory.
    cfg='{"dtype": "float64", "algorithm": "shuffle", "unroll": "full", "n": ["2^36", 1024]}'
    if [ "$HAVE_GPU" = 1 ]; then
        printf '%s\n' "$cfg" >huge.json
        expect_rc 1 "$KFORGE" run huge.json --format jsonl --results r.jsonl
        statuses r.jsonl | sort >st
        grep -q '68719476736 out_of_memory' st || die "n=2^36: $(cat st)"
        grep -q '1024 ok' st || die "n=1024 after the OOM: $(cat st)"
    else
        printf '%s\n' "$cfg" >huge.json
        KFORGE_FAKE_GPU=1 "$KFORGE" run huge.json --format jsonl --results r.jsonl >out 2>err
        rc=$?
        [ "$rc" = 0 ] || [ "$rc" = 1 ] || die "exit status $rc for a huge n"
        [ "$(lines r.jsonl)" = 2 ] || die "expected 2 results"
        skip "fake GPU cannot run out of memory (no OOM simulation in worker.c); huge n ran without a crash"
    fi
}

# ---------------------------------------------------------------------------
# tools/plot.sh

t_plot() {
    command -v gnuplot >/dev/null 2>&1 || skip "gnuplot not found"
    need_py
    expect_rc 0 env KFORGE_FAKE_GPU=1 "$KFORGE" run sweep.json --results r.jsonl --quiet --format csv
    expect_rc 0 sh "$ROOT/tools/plot.sh" r.jsonl --out plots --heat block_size,elements_per_thread --n 4096
    for f in plots/bandwidth.png plots/heat.png; do
        [ -s "$f" ] || die "$f missing or empty: $(cat err)"
        [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '211PNG' ] || die "$f is not a PNG"
    done
    expect_rc 0 sh "$ROOT/tools/plot.sh" r.jsonl --out p2 --filter block_size=256
    [ -s p2/bandwidth.png ] || die "no bandwidth.png with --filter"
    expect_rc 2 sh "$ROOT/tools/plot.sh" r.jsonl --heat block_size
    expect_rc 2 sh "$ROOT/tools/plot.sh" r.jsonl --filter status=nosuch
}

# ---------------------------------------------------------------------------
# completion/kforge.bash, driven the way bash drives it (COMP_WORDS split at
# '=' as the default COMP_WORDBREAKS does)

t_completion() {
    command -v bash >/dev/null 2>&1 || skip "bash not found"
    mkdir -p cfgs bin && : >cfgs/a.json && : >cfgs/b.txt
    ln -s "$KFORGE" bin/kforge
    PATH="$PWD/bin:$PATH" bash -s "$ROOT/completion/kforge.bash" >comp.out 2>&1 <<'EOF'
source "$1" || exit 1
complete -p kforge | grep -q -- '-F _kforge kforge' || { echo "not registered"; exit 1; }
comp() { # the words of the line, the cursor at the end of the last
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _kforge kforge "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf '%s\n' "${COMPREPLY[*]}"
}
fail=0
want() { # want EXPECTED WORD...: the completions (sorted, space separated)
    local exp=$1 got
    shift
    got=$(comp "$@" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')
    if [[ $got != "$exp" ]]; then
        echo "'$*': got '$got', want '$exp'"
        fail=1
    fi
}
has() { # has EXPECTED WORD...: the completions include EXPECTED
    local exp=$1
    shift
    [[ " $(comp "$@") " == *" $exp "* ]] || { echo "'$*': no '$exp' in '$(comp "$@")'"; fail=1; }
}
want "check" kforge ch
has tune kforge ''
has --version kforge --
has --speedup kforge run --
has --resume kforge run --
has --compile kforge check --
has --arch kforge check --
want "csv json jsonl md table" kforge run --format ''
has --columns kforge run --
has --sort kforge run --
has --top kforge tune s.json --
want "block_size" kforge run --columns block_s
want "time,block_size" kforge run --columns time,block_s
has gbps kforge run --sort ''
want "json table" kforge info --format ''
want "anneal exhaustive genetic local model random" kforge tune s.json --strategy ''
has block_size= kforge run --set ''
has n= kforge run --set ''
has bench.seed= kforge run --set bench.
want "bfloat16 float16 float32 float64 int32 int64 uint32" kforge run --set dtype =
want "float16 float32 float64" kforge run --set dtype = fl
want "dtype=float16 dtype=float32 dtype=float64" kforge run --set dtype=fl
want "shuffle" kforge gen x.json --set algorithm = sh
want "last_block" kforge run --set passes = la
want "and max min or prod sum xor" kforge best --op ''
want "cfgs/a.json" kforge run cfgs/
want "sm_90" kforge check --compile --arch sm_9
exit $fail
EOF
    rc=$?
    [ "$rc" = 0 ] || die "$(cat comp.out)"
}

# ---------------------------------------------------------------------------

echo "cli_suite: $KFORGE (GPU: $([ "$HAVE_GPU" = 1 ] && echo yes || echo no, using KFORGE_FAKE_GPU=1 for runs))"

check version t_version
check help-main t_help_main
check help-run t_help_run
check help-gen t_help_gen
check help-check t_help_check
check help-info t_help_info
check help-tune t_help_tune
check help-best t_help_best
check unknown-command t_unknown_command
check unknown-option t_unknown_option
check bad-config t_bad_config
check missing-file t_missing_file
check no-gpu-run-exit3 t_no_gpu
check no-gpu-check-gen t_no_gpu_check_gen
check no-gpu-commands t_no_gpu_commands
check jsonl-stdout t_jsonl_stdout
check csv t_csv
check csv-no-header t_csv_no_header
check broken-pipe-no-results t_broken_pipe_no_results
check no-color t_no_color
check table-columns t_table_columns
check table-stream t_table_stream
check stdin-config t_stdin
check set-block-size t_set_block_size
check set-n t_set_n
check set-bench-seed t_set_seed
check set-unknown-key t_set_unknown
check worker-crash t_crash
check worker-hang t_hang
check sigint-resume t_sigint
check sigterm-resume t_sigterm
check truncated-results t_truncated
check concurrent-writers t_concurrent
check check-lists t_check_lists
check check-compile t_check_compile
check compile-failure t_compile_failure
check gen-comment t_gen_comment
check gen-nvcc t_gen_nvcc
check out-of-memory t_oom
check plot t_plot
check bash-completion t_completion

echo "cli_suite: $npass passed, $nfail failed, $nskip skipped"
if [ "$nfail" -gt 0 ]; then
    echo "cli_suite: failed:$failed_names"
    exit 1
fi
exit 0
