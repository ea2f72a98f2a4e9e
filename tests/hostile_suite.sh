#!/bin/sh
# tests/hostile_suite.sh -- the third hostile pass of issue 34 (see
# docs/hostile-pass.md), on the fake GPU with real NVRTC:
#   a. control characters in a config's names and expressions: refused in
#      argument names, shown as escapes (\n, \x1b) in every message, never
#      raw;
#   b. compiler_options values: -maxrregcount out of 1..255, fixed or at a
#      param's value, is exit 2 naming the value; one under a "when" leaves
#      the variant out with the reason;
#   c. stdout's reader gone (| head): exit 141, no error message (one
#      line says where the results are), the results file whole, --resume
#      goes on;
#   d. merge leaves out results lines that contradict themselves, counted
#      and said;
#   e. read-only folders under the results file, the database and the
#      cubin cache: a clear message, exit 4 (results, database) or 2 (cache),
#      nothing lost.  Run as an unprivileged user (setpriv) when the suite
#      runs as root; SKIP when none can be used.
#
#   KFORGE=build/kforge sh tests/hostile_suite.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-hostile.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"; else echo "hostile_suite: files kept in $TMP"; fi' EXIT
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MS KFORGE_ALLOW_OUTSIDE_FILES SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
cd "$TMP" || exit 2
npass=0
nfail=0
nskip=0
ok() { printf 'PASS %s\n' "$1"; npass=$((npass + 1)); }
bad() { printf 'FAIL %s: %s\n' "$1" "$2"; nfail=$((nfail + 1)); keep=1; }
skip() { printf 'SKIP: %s\n' "$1"; nskip=$((nskip + 1)); }
has() { grep -q -- "$2" "$1"; }
ESC=$(printf '\033')
BEL=$(printf '\007')
# whether file $1 holds a raw control character other than the newline
raw_ctl() { LC_ALL=C tr -d '\n' <"$1" | LC_ALL=C grep -q '[[:cntrl:]]'; }

cp "$ROOT"/configs/custom/vector_add.cu . || exit 2
# mk NAME PYTHON: vector_add's config (small) changed by PYTHON on c (its "custom")
mk() {
    python3 - "$1" "$2" <<'EOF' || exit 2
import json, sys
c = {"source": "vector_add.cu", "entry": "vector_add",
     "params": {"block_size_x": [64, 128], "per_thread": [1, 2]}, "sizes": ["n"],
     "args": [{"name": "c", "dtype": "float32", "length": "n", "role": "out"},
              {"name": "a", "dtype": "float32", "length": "n", "role": "in"},
              {"name": "b", "dtype": "float32", "length": "n", "role": "in"},
              {"name": "n", "scalar": "int32", "value": "n"}],
     "grid": ["(n + block_size_x * per_thread - 1) / (block_size_x * per_thread)"],
     "tolerance": {"rtol": 0, "atol": 0}, "bytes": "12 * n"}
exec(sys.argv[2])
json.dump({"kernel": "custom", "custom": c, "defaults": {"n": ["2^10", "2^11", "2^12"]}}, open(sys.argv[1], "w"))
EOF
}

# --- a. control characters in names and expressions ---------------------------
mk a1.json 'c["args"][1]["name"] = "a\x1b[31mRED\nX"'
"$K" check a1.json >a1.out 2>&1; rc=$?
if [ $rc = 2 ] && has a1.out 'a1.json: custom.args\[1\]: expected a "name": a string .* without control characters' &&
   ! raw_ctl a1.out; then
    ok "an argument name with ESC and a newline: exit 2, file, field and what is expected"
else bad "argument name with control characters" "exit $rc: $(od -c a1.out | head -5)"; fi
for t in 'grid:c["grid"] = ["(n + \x1b[2J block_size_x"]' \
         'length:c["args"][1]["length"] = "n\n+zz"' \
         'constraint:c["constraints"] = ["block_size_x\x07 > 0"]' \
         'param:c["params"]["block\nsize\x1b"] = [1]' \
         'bytes:c["bytes"] = "12 * n\x1b]0;title\x07"'; do
    what=${t%%:*}
    mk a2.json "${t#*:}"
    "$K" check a2.json >a2.out 2>&1; rc=$?
    if [ $rc = 2 ] && has a2.out 'a2.json: custom\.' && ! raw_ctl a2.out && has a2.out '\\x1b\|\\x07\|\\n'; then
        ok "a control character in $what: exit 2, shown as an escape, never raw"
    else bad "control character in $what" "exit $rc: $(od -c a2.out | head -6)"; fi
done
# a constraint that holds a newline (whitespace) is taken; its text in the
# "cannot run" list is shown escaped, on one line per combination
mk a3.json 'c["constraints"] = ["block_size_x > 64 \n"]'
"$K" check -v a3.json >a3.out 2>&1; rc=$?
if [ $rc = 0 ] && has a3.out 'constraint "block_size_x > 64 \\n" is false' && ! raw_ctl a3.out; then
    ok "a constraint's newline in check -v's list: shown as \\n"
else bad "constraint newline in check -v" "exit $rc: $(head -c 400 a3.out)"; fi

# --- b. compiler_options values ----------------------------------------------
for t in 'huge:["-maxrregcount=99999999999999999999"]:"-maxrregcount=99999999999999999999" is not an option' \
         'zero:["-maxrregcount=0"]:"-maxrregcount=0" is not an option' \
         'tunable:["-maxrregcount={r}"]:with r = 300 gives "-maxrregcount=300"'; do
    what=${t%%:*} rest=${t#*:}
    opt=${rest%%:*} want=${rest#*:}
    mk b1.json "c['compiler_options'] = $opt; c['params']['r'] = [32, 64, 300]"
    "$K" check b1.json >b1.out 2>&1; rc=$?
    if [ $rc = 2 ] && has b1.out "b1.json: custom.compiler_options\[0\]: .*$want" &&
       has b1.out '-maxrregcount=N (N: 1 to 255)'; then
        ok "compiler_options, $what -maxrregcount: exit 2 at check time, naming the value and the range"
    else bad "compiler_options $what" "exit $rc: $(head -c 400 b1.out)"; fi
done
mk b2.json "c['compiler_options'] = [{'option': '-maxrregcount={r}', 'when': 'r > 0'}]; c['params']['r'] = [0, 32, 300]"
"$K" check b2.json >b2.out 2>&1; rc=$?
if [ $rc = 0 ] && has b2.out 'r=300: compiler_options\[0\] "-maxrregcount={r}" gives "-maxrregcount=300"' &&
   has b2.out '8 variants'; then
    ok "a tunable option under \"when\": the variant whose value is out of range left out, with the reason"
else bad "compiler_options with when" "exit $rc: $(head -c 500 b2.out)"; fi
"$K" gen b2.json --set r=300 >b2g.out 2>&1; rc=$?
if [ $rc != 0 ] && ! has b2g.out 'nvrtc-option -maxrregcount=300'; then
    ok "--set r=300 cannot bring the value back past the check (exit $rc)"
else bad "--set r=300" "exit $rc: $(head -c 300 b2g.out)"; fi

# --- c. stdout's reader gone -------------------------------------------------
mk c1.json 'c["params"] = {"block_size_x": [32, 64, 128, 256, 512], "per_thread": [1, 2, 4, 8]}'
{ "$K" run c1.json --format jsonl --results c1.jsonl 2>c1.err; echo $? >c1.rc; } | head -1 >c1.head
rc=$(cat c1.rc)
n1=$(wc -l <c1.jsonl)
if [ "$rc" = 141 ] && ! has c1.err 'write error\|Broken pipe' && [ "$(wc -l <c1.err)" = 1 ] &&
   has c1.err "standard output closed after $n1 of 60 cases; results are in c1.jsonl; run the same command to resume" &&
   [ "$(wc -l <c1.head)" = 1 ] && [ "$n1" -ge 1 ] && [ "$n1" -lt 60 ] &&
   python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' c1.jsonl; then
    ok "run --format jsonl | head -1: exit 141, no error message (where the results are, once), $n1 whole lines in the results file"
else bad "run | head -1" "exit $rc, $n1 lines: $(head -c 300 c1.err)"; fi
"$K" run c1.json --format jsonl --results c1.jsonl --resume >c1b.out 2>c1b.err; rc=$?
n2=$(python3 -c 'import json,sys; print(len({(d["block_size_x"], d["per_thread"], d["n"]) for d in map(json.loads, open(sys.argv[1]))}))' c1.jsonl)
if [ $rc = 0 ] && [ "$(wc -l <c1.jsonl)" = 60 ] && [ "$n2" = 60 ] && has c1b.err "resumed: $n1 cases taken"; then
    ok "--resume after | head: the $((60 - n1)) cases left measured, none twice"
else bad "resume after | head" "exit $rc, $(wc -l <c1.jsonl) lines, $n2 distinct: $(head -c 300 c1b.err)"; fi
# a write error that is not a gone reader is still exit 4 with its reason
"$K" run c1.json --set n=1024 --format jsonl --no-results >/dev/full 2>c2.err; rc=$?
if [ $rc = 4 ] && has c2.err 'write error on standard output: No space left on device'; then
    ok "stdout on a full device: still exit 4 with the reason"
else bad "stdout on /dev/full" "exit $rc: $(head -c 300 c2.err)"; fi

# --- d. merge and results lines that contradict themselves --------------------
mk d.json 'pass'
"$K" run d.json --set n=4096 --results d.jsonl --format jsonl >/dev/null 2>d.err || bad "d: run" "$(cat d.err)"
python3 - <<'EOF' || exit 2
import json
L = [json.loads(l) for l in open('d.jsonl')]
def w(name, f):
    ls = [dict(x) for x in L]
    f(ls[0])
    open(name, 'w').write(''.join(json.dumps(x) + '\n' for x in ls))
w('d_label.jsonl', lambda x: x.__setitem__('label', 'block_size_x=128,per_thread=2'))
w('d_name.jsonl', lambda x: x.__setitem__('name', 'a\x1b[2Jb'))
w('d_neg.jsonl', lambda x: x.__setitem__('median_ms', -1))
w('d_zero.jsonl', lambda x: (x.__setitem__('median_ms', 0), x.__setitem__('min_ms', 0)))
w('d_err.jsonl', lambda x: x.__setitem__('abs_err', -5))
w('d_hash.jsonl', lambda x: x.__setitem__('source_hash', 'zz' + x['source_hash'][2:]))
w('d_block.jsonl', lambda x: (x.__setitem__('block_size_x', 2048), x.__setitem__('label', 'block_size_x=2048,per_thread=1'),
                              x.__setitem__('name', 'block_size_x=2048,per_thread=1')))
w('d_reps.jsonl', lambda x: x.__setitem__('reps', 0))
EOF
"$K" merge --kernel d.json d.jsonl --no-db >d0.out 2>d0.err; rc=$?
if [ $rc = 0 ] && has d0.err '1 file: 4 cases' && ! has d0.err damaged; then
    ok "merge of kforge's own lines: nothing called damaged"
else bad "merge of good lines" "exit $rc: $(head -c 300 d0.err)"; fi
for t in 'label:its "label" is not its parameters' 'name:its "name" is neither its label' \
         'neg:its "median_ms" is -1' 'zero:status ok with a median_ms of 0' \
         'err:its "abs_err" is -5' \
         'block:a variant that cannot run: block' 'reps:status ok with 0 reps'; do
    what=${t%%:*} want=${t#*:}
    "$K" merge --kernel d.json "d_$what.jsonl" --no-db --format jsonl >d1.out 2>d1.err; rc=$?
    if [ $rc = 0 ] && has d1.err "d_$what.jsonl: 1 damaged line left out (line 1: $want" &&
       has d1.err '1 file: 3 cases' && ! raw_ctl d1.err; then
        ok "merge leaves out a forged line ($what), counted and said"
    else bad "merge of a forged line ($what)" "exit $rc: $(head -c 400 d1.err)"; fi
done
# a source_hash of the wrong shape is no hash of this source: left out as older
"$K" merge --kernel d.json d_hash.jsonl --no-db --format jsonl >d3.out 2>d3.err; rc=$?
if [ $rc = 0 ] && has d3.err 'ignored 1 result of an older source in d_hash.jsonl' && has d3.err '1 file: 3 cases'; then
    ok "merge leaves out a line whose source_hash is not one (counted with the older sources)"
else bad "merge of a forged source_hash" "exit $rc: $(head -c 300 d3.err)"; fi
# the forged best never reaches the database
"$K" merge --kernel d.json d_neg.jsonl --db "$TMP/ddb" >/dev/null 2>d2.err; rc=$?
if [ $rc = 0 ] && ! grep -rq '"median_ms": -1' "$TMP/ddb" && grep -rq median_ms "$TMP/ddb"; then
    ok "the forged line's time (-1 ms) never reaches the database"
else bad "forged time in the database" "exit $rc: $(head -c 300 d2.err)"; fi

# --- f. the fresh pass: export's options, planted files in the database
# and the cubin cache ------------------------------------------------------------
mk f.json 'pass'
"$K" tune f.json --set n=4096 --budget 2 --results f.jsonl --db "$TMP/fdb" >/dev/null 2>f0.err || bad "f: tune" "$(cat f0.err)"
"$K" export --kernel f.json --db "$TMP/fdb" --gpu "$(printf 'a\033[2Jb\nc')" >f1.out 2>f1.err; rc=$?
if [ $rc = 2 ] && has f1.err 'nothing tuned for vector_add on a\\x1b\[2Jb\\nc in' && ! raw_ctl f1.err; then
    ok "export --gpu with ESC and a newline: exit 2, the name shown escaped"
else bad "export --gpu with control characters" "exit $rc: $(od -c f1.err | head -4)"; fi
"$K" export --kernel f.json --db "$TMP/fdb" -o '' >f2.out 2>f2.err; rc=$?
if [ $rc = 2 ] && has f2.err '-o: expected a file name, got an empty one' && [ -z "$(ls -a | grep '^\.tmp')" ]; then
    ok "export -o '': exit 2, no temporary file left"
else bad "export -o ''" "exit $rc: $(cat f2.err)"; fi
"$K" export --kernel f.json --db "$TMP/fdb" -o - >f3.out 2>f3.err; rc=$?
if [ $rc = 0 ] && has f3.out 'kforge_vector_add_launch' && [ ! -e ./- ]; then
    ok "export -o -: the header on standard output, no file named -"
else bad "export -o -" "exit $rc: $(head -c 300 f3.err)"; fi
db1=$(ls "$TMP"/fdb/*.json | head -1)
for plant in fifo zero; do
    rm -rf "$TMP/fdb2" && mkdir "$TMP/fdb2"
    case $plant in fifo) mkfifo "$TMP/fdb2/$(basename "$db1")" ;; zero) ln -s /dev/zero "$TMP/fdb2/$(basename "$db1")" ;; esac
    ( ulimit -v 4000000 2>/dev/null; exec timeout 20 "$K" export --kernel f.json --db "$TMP/fdb2" ) >f4.out 2>f4.err; rc=$?
    if [ $rc = 2 ] && has f4.err 'not a regular file'; then
        ok "a database file that is a $plant: refused at once (exit 2), never read"
    else bad "database file that is a $plant" "exit $rc: $(head -c 300 f4.err)"; fi
done
# the cubin cache: an entry's .key a FIFO, its .cubin /dev/zero, its names a FIFO
export KFORGE_CACHE_DIR="$TMP/fcache"
"$K" run f.json --set n=1024 --set block_size_x=64 --set per_thread=1 --no-results >/dev/null 2>&1
# the run's own entry (the output check's module may be there too, compiled
# ahead on an idle process or not, whichever the timing)
key=$(grep -l 'generated vector_add kernel' "$TMP"/fcache/*.key | head -1)
for plant in key cubin names; do
    b=${key%.key}
    case $plant in
    key) rm -f "$b.key" && mkfifo "$b.key" ;;
    cubin) rm -f "$b.cubin" && ln -s /dev/zero "$b.cubin" ;;
    names) rm -f "$b.names" && mkfifo "$b.names" ;;
    esac
    timeout 30 "$K" run f.json --set n=1024 --set block_size_x=64 --set per_thread=1 --no-results --format jsonl >f5.out 2>f5.err; rc=$?
    if [ $rc = 0 ] && has f5.out '"status":"ok"' && [ -f "$b.key" ] && [ -f "$b.cubin" ] && [ ! -L "$b.cubin" ]; then
        ok "a cache entry whose .$plant is planted (FIFO, /dev/zero): compiled again and stored, no hang"
    else bad "cache entry with a planted .$plant" "exit $rc: $(head -c 300 f5.err)"; fi
done
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}"

# --- g. the fresh pass: fills and scalars a buffer's type cannot hold --------
cat > ib.cu <<'EOF'
#include <cuda_fp16.h>
extern "C" __global__ void copy_i(int *c, const int *a, int n)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i]; }
extern "C" __global__ void scal(float *c, const float *a, __half s, int n)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] * __half2float(s); }
EOF
# mkg NAME DTYPE FILL: copy_i over DTYPE buffers, the input's fill FILL (JSON)
mkg() {
    python3 - "$@" <<'EOF' || exit 2
import json, sys
name, dt, fill = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
c = {"source": "ib.cu", "entry": "copy_i", "params": {"block_size_x": [64]}, "sizes": ["n"],
     "args": [{"name": "c", "dtype": dt, "length": "n", "role": "out"},
              {"name": "a", "dtype": dt, "length": "n", "role": "in", "fill": fill},
              {"name": "n", "scalar": "int32", "value": "n"}],
     "grid": ["(n + 63) / 64"], "tolerance": {"rtol": 0, "atol": 0}}
json.dump({"kernel": "custom", "custom": c, "defaults": {"n": 1024}}, open(name, "w"))
EOF
}
for t in 'int32|{"random": [-1e300, 1e300]}|int32 values for a fill lie in \[-2147483648, 2147483647\]' \
         'int64|{"random": [0, 1e19]}|the integers a double holds exactly' \
         'int32|{"constant": 1e10}|int32 values for a fill lie in' \
         'int32|{"constant": 3.5}|int32 values are integers' \
         'uint32|{"constant": -1}|uint32 values for a fill lie in \[0, 4294967295\]' \
         'float16|{"random": [0, 1e6]}|float16 values for a fill lie in \[-65504, 65504\]' \
         'float64|{"random": [-1.7e308, 1.7e308]}|width must be finite'; do
    dt=${t%%|*} rest=${t#*|}
    fill=${rest%%|*} want=${rest#*|}
    mkg g1.json "$dt" "$fill"
    timeout 60 "$K" run g1.json --results g1.jsonl >g1.out 2>&1; rc=$?
    if [ $rc = 2 ] && has g1.out "g1.json: custom.args\[1\] (a).fill: .*$want" && [ ! -s g1.jsonl ]; then
        ok "a $dt fill of $fill: exit 2 before anything runs, naming the range"
    else bad "$dt fill $fill" "exit $rc: $(head -c 300 g1.out)"; fi
    rm -f g1.jsonl g1.jsonl.state
done
mkg g2.json int32 '{"random": [-100, 100]}'
"$K" run g2.json --no-results --format jsonl >g2.out 2>&1; rc=$?
if [ $rc = 0 ] && has g2.out '"status":"ok"'; then ok "an int32 fill within its range still runs"
else bad "int32 fill within range" "exit $rc: $(head -c 300 g2.out)"; fi
for v in 1e6 70000; do
    python3 - "$v" <<'EOF' || exit 2
import json, sys
c = {"source": "ib.cu", "entry": "scal", "params": {"block_size_x": [64]}, "sizes": ["n"],
     "args": [{"name": "c", "dtype": "float32", "length": "n", "role": "out"},
              {"name": "a", "dtype": "float32", "length": "n", "role": "in"},
              {"name": "s", "scalar": "float16", "value": sys.argv[1]},
              {"name": "n", "scalar": "int32", "value": "n"}],
     "grid": ["(n + 63) / 64"], "tolerance": {"rtol": 0, "atol": 0}}
json.dump({"kernel": "custom", "custom": c, "defaults": {"n": 1024}}, open("g3.json", "w"))
EOF
    "$K" run g3.json --no-results --format jsonl >g3.out 2>&1; rc=$?
    if [ $rc = 2 ] && has g3.out "args\[2\] (s).value = .* is not a finite float16 (its largest: 65504)"; then
        ok "a float16 scalar of $v: refused, not passed on as infinity"
    else bad "float16 scalar $v" "exit $rc: $(head -c 300 g3.out)"; fi
done
# an empty .npy is refused saying so
python3 - <<'EOF' || exit 2
h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }"
h += b' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + b'\n'
open('empty.npy', 'wb').write(b'\x93NUMPY\x01\x00' + len(h).to_bytes(2, 'little') + h)
EOF
mkg g4.json float32 '{"npy": "empty.npy"}'
"$K" check g4.json >g4.out 2>&1; rc=$?
if [ $rc = 2 ] && has g4.out 'empty.npy: its shape gives no elements (a buffer needs at least one)'; then
    ok "an .npy of shape (0,): exit 2, saying it holds no elements"
else bad "empty .npy" "exit $rc: $(head -c 300 g4.out)"; fi

# a module constant longer than its variable, or than constant memory
cat > cst.cu <<'EOF'
__constant__ float d_f[16];
extern "C" __global__ void k(float *c, int n)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = d_f[i % 16]; }
EOF
for t in '17|1|launch_error|constant \\"d_f\\": the module.s variable is 64 bytes, the config describes 68' \
         '16385|2|no combination|65540 bytes, over the 64 KiB of a GPU.s constant memory' \
         '1073741824|2|no combination|over the 64 KiB'; do
    len=${t%%|*} rest=${t#*|}
    want_rc=${rest%%|*} rest=${rest#*|}
    what=${rest%%|*} want=${rest#*|}
    python3 - "$len" <<'EOF' || exit 2
import json, sys
c = {"source": "cst.cu", "entry": "k", "params": {"block_size_x": [64]}, "sizes": ["n"],
     "args": [{"name": "c", "dtype": "float32", "length": "n", "role": "out"},
              {"name": "n", "scalar": "int32", "value": "n"}],
     "constants": [{"name": "d_f", "dtype": "float32", "length": sys.argv[1]}],
     "grid": ["(n + 63) / 64"], "tolerance": {"rtol": 0, "atol": 0}}
json.dump({"kernel": "custom", "custom": c, "defaults": {"n": 1024}}, open("h1.json", "w"))
EOF
    timeout 60 "$K" run h1.json --no-results --format jsonl >h1.out 2>&1; rc=$?
    if [ $rc = "$want_rc" ] && has h1.out "$what" && has h1.out "$want"; then
        ok "a constant of $len elements for a float[16]: exit $rc, $what"
    else bad "constant of $len elements" "exit $rc: $(head -c 400 h1.out)"; fi
done
python3 - <<'EOF' || exit 2
import json
d = json.load(open("h1.json"))
d["custom"]["constants"][0]["length"] = "16"
json.dump(d, open("h2.json", "w"))
EOF
"$K" run h2.json --no-results --format jsonl >h2.out 2>&1; rc=$?
if [ $rc = 0 ] && has h2.out '"status":"ok"'; then ok "a constant of the variable's 16 elements runs"
else bad "constant of 16 elements" "exit $rc: $(head -c 300 h2.out)"; fi

# --- e. read-only folders ------------------------------------------------------
# root ignores permissions: run kforge as nobody when the suite runs as root
AS=
if [ "$(id -u)" = 0 ]; then
    if command -v setpriv >/dev/null 2>&1 && setpriv --reuid=65534 --regid=65534 --clear-groups "$K" --version >/dev/null 2>&1; then
        AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
    else AS=none; fi
fi
if [ "$AS" = none ]; then
    skip "read-only folders: running as root and setpriv cannot drop to nobody (65534)"
else
    E=$TMP/e
    mkdir -p "$E/w" "$E/ro" && cp vector_add.cu d.json "$E/" && chmod 755 "$TMP" "$E" && chmod 777 "$E/w" &&
        chmod 644 "$E/d.json" "$E/vector_add.cu" || exit 2
    # a database and a cache made by a first tune, then their folders read-only
    (cd "$E" && HOME=$E/w KFORGE_CACHE_DIR=$E/ro/cache KFORGE_DB=$E/ro/db "$K" tune d.json --budget 4 \
        --results ro/t.jsonl >/dev/null 2>e0.err) || bad "e: first tune" "$(cat "$E/e0.err")"
    chmod -R a-w "$E/ro"
    nt=$(wc -l <"$E/ro/t.jsonl")
    sum0=$(cat "$E"/ro/db/*.json | cksum)
    run_as() { (cd "$E" && HOME=$E/w TMPDIR=$E/w $AS env "$@"); }
    run_as KFORGE_CACHE_DIR="$E/w/cache" KFORGE_DB="$E/w/db" "$K" run d.json --results ro/new.jsonl >e1.out 2>e1.err; rc=$?
    if [ $rc = 4 ] && has e1.err 'ro/new.jsonl.*Permission denied' && [ ! -e "$E/ro/new.jsonl" ]; then
        ok "results file in a read-only folder: exit 4, naming the file and the reason"
    else bad "results in a read-only folder" "exit $rc: $(head -c 300 e1.err)"; fi
    run_as KFORGE_CACHE_DIR="$E/w/cache" KFORGE_DB="$E/w/db" "$K" tune d.json --budget 4 --results ro/t.jsonl >e2.out 2>e2.err; rc=$?
    if [ $rc = 4 ] && has e2.err 'ro/t.jsonl: cannot open the results file: Permission denied' &&
       [ "$(wc -l <"$E/ro/t.jsonl")" = "$nt" ]; then
        ok "a read-only results file to resume: exit 4, its $nt lines intact"
    else bad "read-only results file" "exit $rc: $(head -c 300 e2.err)"; fi
    run_as KFORGE_CACHE_DIR="$E/w/cache" KFORGE_DB="$E/ro/db" "$K" tune d.json --budget 4 --results w/t3.jsonl >e3.out 2>e3.err; rc=$?
    if [ $rc = 4 ] && has e3.err 'tuning database not updated: .*Permission denied' &&
       [ "$(wc -l <"$E/w/t3.jsonl")" -ge 4 ] && [ "$(cat "$E"/ro/db/*.json | cksum)" = "$sum0" ]; then
        ok "a database in a read-only folder: exit 4 after the tune, the results kept, the database unchanged"
    else bad "database in a read-only folder" "exit $rc: $(head -c 300 e3.err)"; fi
    run_as KFORGE_CACHE_DIR="$E/w/cache" KFORGE_DB="$E/ro/db" "$K" export --kernel d.json -o ro/x.h >e4.out 2>e4.err; rc=$?
    if [ $rc = 4 ] && has e4.err 'ro/x.h: cannot write: .*its folder does not take it.*Permission denied' &&
       [ -z "$(ls "$E/ro" | grep x.h)" ]; then
        ok "export -o into a read-only folder: exit 4, naming the target, no temp file left"
    else bad "export into a read-only folder" "exit $rc: $(head -c 300 e4.err)"; fi
    run_as KFORGE_CACHE_DIR="$E/ro/cache" KFORGE_DB="$E/w/db" "$K" run d.json --results w/r5.jsonl >e5.out 2>e5.err; rc=$?
    if [ $rc = 2 ] && has e5.err 'cubin cache directory unusable: .*Permission denied (choose another with --cache-dir' &&
       [ ! -s "$E/w/r5.jsonl" ]; then
        ok "a read-only cubin cache: exit 2 before anything runs, saying how to choose another"
    else bad "read-only cubin cache" "exit $rc: $(head -c 300 e5.err)"; fi
    run_as KFORGE_CACHE_DIR="$E/ro/cache" KFORGE_DB="$E/w/db" "$K" run d.json --no-cache --results w/r6.jsonl >e6.out 2>e6.err; rc=$?
    if [ $rc = 0 ] && [ "$(wc -l <"$E/w/r6.jsonl")" = 12 ]; then
        ok "--no-cache runs beside a read-only cache"
    else bad "--no-cache beside a read-only cache" "exit $rc: $(head -c 300 e6.err)"; fi
    chmod -R u+w "$E/ro"
fi

echo "hostile_suite: $npass passed, $nfail failed, $nskip skipped"
[ $nfail = 0 ]
