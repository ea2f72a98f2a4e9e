#!/bin/sh
# tests/security_suite.sh -- hostile input against what kforge writes and
# reads (issue 34, items 1 to 4), on the fake GPU:
#   1. every string that reaches a custom kernel's exported header (the
#      database's device name, from the database or from a results file
#      through kforge merge; the command line; the config's names and
#      expressions) stays inside its comment: the header is preprocessed by
#      the C compiler and nvcc -E, and no #include of ours becomes active;
#   2. custom.entry and reference.entry take a name expression only;
#   3. export -o writes a FIFO (and a device, /dev/stdout) in place and
#      follows a symbolic link, keeping it; one to nothing is refused;
#   4. the files a config names lie in its folder (no absolute path, no ..,
#      no symbolic link out of it) unless KFORGE_ALLOW_OUTSIDE_FILES=1, and a
#      source must be named as one: a file that is not is never compiled, so
#      a compile error never quotes it.
#
#   KFORGE=build/kforge sh tests/security_suite.sh
set -u
K=${KFORGE:-build/kforge}
case $K in /*) ;; *) K=$(pwd)/$K ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CUDA=${CUDA:-/usr/local/cuda}
NVCC=$CUDA/bin/nvcc
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-security.XXXXXX") || exit 2
keep=0
trap 'if [ $keep = 0 ]; then rm -rf "$TMP"; else echo "security_suite: files kept in $TMP"; fi' EXIT
export KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}" KFORGE_DB="$TMP/db" KFORGE_FAKE_GPU=1 LC_ALL=C
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MS KFORGE_ALLOW_OUTSIDE_FILES SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT
cd "$TMP" || exit 2
npass=0
nfail=0
ok() { printf 'PASS %s\n' "$1"; npass=$((npass + 1)); }
bad() { printf 'FAIL %s: %s\n' "$1" "$2"; nfail=$((nfail + 1)); keep=1; }
has() { grep -q -- "$2" "$1"; }

# The hostile string of the issue: a newline, an #include, a comment opener.
EVIL='x
#include "evil.h"
//'
# evil.h stops any compile that includes it; every compile below can see it
printf '#error INJECTED: evil.h was included\n' > evil.h

cp "$ROOT"/configs/custom/vector_add.cu . || exit 2
# vector_add with a scalar whose name holds a comment closer and an
# #include (a name with a newline is refused: hostile_suite), and a grid
# whose text holds the hostile string (newlines are whitespace in expressions)
python3 - <<'PY' || exit 2
import json
evil = 'x\n#include "evil.h"\n//'
spec = {"source": "vector_add.cu", "entry": "vector_add", "name": "va",
        "params": {"block_size_x": [64, 128], "per_thread": [1, 2]}, "sizes": ["n"],
        "args": [{"name": "c", "dtype": "float32", "length": "n", "role": "out"},
                 {"name": "a", "dtype": "float32", "length": "n", "role": "in"},
                 {"name": "b", "dtype": "float32", "length": "n", "role": "in"},
                 {"name": "n */ int injected; /* x #include \"evil.h\" //", "scalar": "int32", "value": "n\n"}],
        "grid": ["(n + block_size_x * per_thread - 1)\n/ (block_size_x * per_thread)"]}
json.dump({"kernel": "custom", "custom": spec, "defaults": {"n": 4096},
           "bench": {"warmup": 1, "min_reps": 3, "max_time_s": 0.001}}, open("va.json", "w"), indent=1)
PY

# preprocess HEADER as C (cc -E) and as CUDA (nvcc -E, when there is one):
# prints what is wrong, and fails then
clean_header() {
    printf '#include "%s"\nint main(void) { return 0; }\n' "$1" > use_h.c
    if ! cc -std=c11 -E -I. use_h.c > pp_c.txt 2> pp_c.err; then
        echo "cc -E: $(head -3 pp_c.err)"; return 1
    fi
    if grep -q 'INJECTED\|evil' pp_c.txt pp_c.err; then echo "cc -E: evil.h included"; return 1; fi
    if ! cc -std=c11 -fsyntax-only -I. use_h.c 2> cc_syn.err; then echo "cc: $(head -3 cc_syn.err)"; return 1; fi
    if [ -x "$NVCC" ]; then
        cp use_h.c use_h.cu
        if ! "$NVCC" -std=c++17 -E -I. use_h.cu > pp_cu.txt 2> pp_cu.err; then
            echo "nvcc -E: $(head -3 pp_cu.err)"; return 1
        fi
        grep -q 'kforge_va_launch' pp_cu.txt || { echo "nvcc -E: no launcher in the header"; return 1; }
        if grep -q 'INJECTED\|injected\|evil' pp_cu.txt; then echo "nvcc -E: evil.h or the name's code is active"; return 1; fi
    fi
    return 0
}

"$K" tune va.json --results va.jsonl -q >tune.txt 2>&1 || { echo "tune failed: $(tail -3 tune.txt)"; exit 2; }
# --- 1a. the database's device name ----------------------------------------
python3 - "$EVIL" <<'PY' || exit 2
import glob, json, sys
for p in glob.glob("db/*.json"):
    d = json.load(open(p))
    d["device"] = sys.argv[1]
    for e in d["entries"]:
        e["device"]["name"] = sys.argv[1]
    json.dump(d, open(p, "w"), indent=1)
PY
"$K" export --kernel va.json -o h1.h >exp1.txt 2>&1; rc=$?
if [ $rc = 0 ] && has h1.h '//   tuned on x #include "evil.h" //' && why=$(clean_header h1.h) &&
   ! grep -q '^#include "evil.h"' exp1.txt; then
    ok "a device name of x\\n#include \"evil.h\"\\n// in the database stays on its comment line (cc -E, nvcc -E)"
else bad "device name from the database" "exit $rc: ${why:-$(head -4 h1.h)}"; fi

# best --list: one line per entry, whatever the database's device name holds
# (a newline, a terminal's escape sequence)
"$K" best --list --kernel va.json >list1.txt 2>list1.err; rc=$?
if [ $rc = 0 ] && [ "$(wc -l <list1.txt)" = 2 ] && has list1.txt '^x\\n#include "evil.h"\\n// ' &&
   ! grep -q '^#include' list1.txt; then
    ok "best --list: the hostile device name on its entry's one line, its newlines shown as \\n"
else bad "best --list of a hostile device name" "exit $rc: $(head -c 400 list1.txt)"; fi

# --- 1b. the same name in a results file, through kforge merge --------------
python3 - "$EVIL" <<'PY' || exit 2
import json, sys
with open("va.jsonl") as f, open("evil.jsonl", "w") as o:
    for line in f:
        d = json.loads(line)
        d["device"] = sys.argv[1]
        o.write(json.dumps(d) + "\n")
PY
"$K" merge evil.jsonl --kernel va.json --db db2 >merge.txt 2>&1; rc=$?
"$K" export --kernel va.json --db db2 --gpu "$EVIL" -o h2.h >exp2.txt 2>&1; rc2=$?
if [ $rc = 0 ] && [ $rc2 = 0 ] && has h2.h '//   tuned on x #include "evil.h" //' && why=$(clean_header h2.h); then
    ok "the same name in a results file, merged into a database, then exported: still a comment"
else bad "device name through merge" "exit $rc/$rc2: ${why:-$(head -3 merge.txt exp2.txt h2.h)}"; fi

# --- 1c. the command line (the --db path and -o file hold it too) ------------
mkdir "db3$EVIL" && cp db/*.json "db3$EVIL/" || exit 2
H3='h3
#include "evil.h"
.h'
"$K" export --kernel va.json --db "db3$EVIL" -o "$H3" >exp3.txt 2>&1; rc=$?
cp "$H3" h3.h 2>/dev/null
if [ $rc = 0 ] && has h3.h '^//   by: kforge export --kernel va.json --db db3x #include "evil.h" //' &&
   has h3.h '^#line [0-9]* "kforge export"$' && why=$(clean_header h3.h); then
    ok "a command line that holds the hostile string (--db, -o): one comment line, #line names no such file"
else bad "command line" "exit $rc: ${why:-$(grep -n 'by:\|#line' h3.h | head -3; head -3 exp3.txt)}"; fi

# --- 1d. the trigraph ??/ and */ in a comment --------------------------------
python3 - <<'PY' || exit 2
import glob, json
for p in glob.glob("db/*.json"):
    d = json.load(open(p))
    for e in d["entries"]:
        e["device"]["name"] = "gpu */ int injected; /* ??/"
    json.dump(d, open(p, "w"), indent=1)
PY
"$K" export --kernel va.json -o h4.h >exp4.txt 2>&1; rc=$?
if [ $rc = 0 ] && has h4.h 'gpu \* / int injected; /\* ? ?/' && why=$(clean_header h4.h) &&
   cc -std=c11 -trigraphs -Werror=trigraphs -fsyntax-only -I. use_h.c 2>tri.err; then
    ok "*/ and ??/ (a trigraph backslash in C) in a name are broken up in the header's comments"
else bad "*/ and ??/" "exit $rc: ${why:-$(grep -n injected h4.h | head -2; head -2 tri.err)}"; fi

# --- 1e. a damaged database entry: its variant is what its key says, and runs
# An entry keyed float32 sum whose variant is int32 max, or whose block
# cannot run, must not reach best's config or header, nor export's header.
"$K" tune "$ROOT/configs/tune-reduce.json" --set n=4096 --budget 2 --db dbr --results r1e.jsonl -q >/dev/null 2>&1
for dmg in key block; do
    rm -rf "dbr_$dmg" && cp -r dbr "dbr_$dmg" || exit 2
    python3 - "$dmg" "dbr_$dmg" <<'PY' || exit 2
import glob, json, sys
for p in glob.glob(sys.argv[2] + "/*.json"):
    d = json.load(open(p))
    for e in d["entries"]:
        if sys.argv[1] == "key":
            e["variant"]["dtype"], e["variant"]["op"] = "int32", "max"
        else:
            e["variant"]["block_size"] = 7
    json.dump(d, open(p, "w"), indent=1)
PY
    "$K" best --n 4096 --db "dbr_$dmg" >b1e.json 2>b1e.err; rc=$?
    "$K" best --n 4096 --db "dbr_$dmg" --header >b1e.h 2>/dev/null; rc2=$?
    "$K" export --dtype float32 --op sum --db "dbr_$dmg" -o x1e.h >x1e.txt 2>&1; rc3=$?
    case $dmg in key) want='its dtype is int32, the entry.s key float32: a damaged entry' ;;
                 block) want='a variant that cannot run: block_size 7' ;; esac
    if [ $rc = 2 ] && [ $rc2 = 2 ] && [ $rc3 = 2 ] && has b1e.err "entries\[0\].variant: $want" && ! [ -s b1e.json ] &&
       ! [ -s b1e.h ] && ! [ -e x1e.h ]; then
        ok "a database entry damaged ($dmg): best, best --header and export refuse it, naming the entry"
    else bad "damaged entry ($dmg)" "exit $rc/$rc2/$rc3: $(head -c 300 b1e.err) $(grep -m2 'dtype\|op\|BLOCK' b1e.json b1e.h)"; fi
    rm -f x1e.h
done

# --- 2. custom.entry and reference.entry: a name expression only -------------
entry_case() { # NAME FIELD VALUE(python literal) EXPECT
    python3 - "$2" "$3" <<'PY' || exit 2
import json, sys
d = json.load(open("va.json"))
field, val = sys.argv[1], eval(sys.argv[2])
if field == "entry":
    d["custom"]["entry"] = val
else:
    d["custom"]["reference"] = {"entry": val, "grid": ["n"], "block": [1]}
json.dump(d, open("entry.json", "w"))
PY
    "$K" gen entry.json --set block_size_x=64 --set per_thread=1 >entry.out 2>&1; rc=$?
    if [ $rc = 2 ] && has entry.out "entry.json: custom.$2: $4" && has entry.out 'expected a kernel.s name as NVRTC takes it' &&
       ! grep -q '^#define INJ' entry.out; then
        ok "$1: exit 2, custom.$2: $4"
    else bad "$1" "exit $rc: $(head -c 400 entry.out)"; fi
}
entry_case "entry with a newline and a #define" entry "'vector_add\\n#define INJ 1 //'" 'a control character or a non-ASCII byte'
entry_case "entry with a ; in it" entry "'vector_add; int x'" 'a character that is not part of a name expression'
entry_case "reference.entry with a newline inside <>" reference.entry "'naive<float\\n#define INJ 1\\n>'" \
    'a control character or a non-ASCII byte'
entry_case "entry of 300 characters (not \"missing\")" entry "'k' * 300" 'it is 256 characters or more (at most 255)'
entry_case "entry ::k" entry "'::vector_add'" 'it starts with ::'
taken=yes
for e in 'vector_add' 'scale<float, 4>' 'ns::k<(2 + 1) * 4, unsigned int>' 'k<a<b>>::f'; do
    python3 -c "
import json, sys
d = json.load(open('va.json')); d['custom']['entry'] = sys.argv[1]; d['custom']['name'] = 'va'
json.dump(d, open('entry.json', 'w'))" "$e"
    "$K" check entry.json >entry.out 2>&1 || taken="$e refused: $(head -c 300 entry.out)"
done
if [ "$taken" = yes ]; then ok "entries vector_add, scale<float, 4>, ns::k<(2 + 1) * 4, unsigned int>, k<a<b>>::f are taken"
else bad "name expressions" "$taken"; fi

# --- 3. export -o: a FIFO in place, a symbolic link followed -----------------
mkfifo out.fifo || exit 2
timeout 60 cat out.fifo > from_fifo.h & # the FIFO replaced by a file would leave it waiting
reader=$!
"$K" export --kernel va.json -o out.fifo >fifo.txt 2>&1; rc=$?
wait $reader
if [ $rc = 0 ] && [ -p out.fifo ] && has from_fifo.h '^#define KFORGE_CUSTOM_VA_H'; then
    ok "export -o FIFO: the header goes through the FIFO, which stays a FIFO"
else bad "export -o FIFO" "exit $rc, $(ls -l out.fifo): $(head -2 fifo.txt)"; fi
mkdir -p inc && echo old > inc/target.h && ln -s inc/target.h link.h || exit 2
"$K" export --kernel va.json -o link.h >link.txt 2>&1; rc=$?
if [ $rc = 0 ] && [ -L link.h ] && [ "$(readlink link.h)" = inc/target.h ] && has inc/target.h '^#define KFORGE_CUSTOM_VA_H' &&
   ! [ -e link.h.tmp.* ] && ! ls inc | grep -q tmp; then
    ok "export -o SYMLINK: the file it points to is written, the link kept"
else bad "export -o symlink" "exit $rc, $(ls -l link.h): $(head -2 link.txt)"; fi
ln -s nowhere.h dangling.h || exit 2
"$K" export --kernel va.json -o dangling.h >dang.txt 2>&1; rc=$?
if [ $rc = 4 ] && [ -L dangling.h ] && ! [ -e nowhere.h ] && has dang.txt 'dangling.h: a symbolic link to nothing'; then
    ok "export -o a link to nothing: exit 4, the link left as it was"
else bad "export -o dangling link" "exit $rc: $(head -2 dang.txt)"; fi
echo "// kept" > appended.h
"$K" export --kernel va.json -o /dev/stdout >>appended.h 2>std.txt; rc=$?
if [ $rc = 0 ] && [ "$(head -1 appended.h)" = "// kept" ] && has appended.h '^#define KFORGE_CUSTOM_VA_H'; then
    ok "export -o /dev/stdout writes to the descriptor (appended by >>), not a file put in its place"
else bad "export -o /dev/stdout" "exit $rc: $(head -2 appended.h std.txt)"; fi
"$K" export --kernel va.json -o inc >dir.txt 2>&1; rc=$?
if [ $rc = 4 ] && [ -d inc ] && has dir.txt 'inc: is a directory'; then ok "export -o DIR: exit 4, is a directory"
else bad "export -o dir" "exit $rc: $(head -2 dir.txt)"; fi

# --- 4. the files a config names -------------------------------------------
mkdir -p cfg/sub outside && cp vector_add.cu cfg/ && cp vector_add.cu outside/kernel.cu || exit 2
printf 'root:SECRET-HASH:0:0:root\n' > outside/secret.txt
printf 'root:SECRET-HASH:0:0:root\n' > cfg/secret.txt
printf 'x\0SECRET-HASH\n' > cfg/nul.cu
ln -s "$TMP/outside/kernel.cu" cfg/link_out.cu
ln -s vector_add.cu cfg/link_in.cu
src_case() { # NAME SOURCE EXPECT [ENV]
    sed "s#\"vector_add.cu\"#\"$2\"#" va.json > cfg/src.json
    env ${4:-KFORGE_ALLOW_OUTSIDE_FILES=} "$K" run cfg/src.json --set n=64 --set block_size_x=64 --set per_thread=1 \
        --no-results -q >src.out 2>&1; rc=$?
    if [ -z "$3" ]; then
        if [ $rc = 0 ]; then ok "$1: taken"; else bad "$1" "exit $rc: $(head -c 300 src.out)"; fi
    elif [ $rc = 2 ] && has src.out "src.json: line [0-9]*: custom.source: .*$3" && ! grep -q SECRET src.out; then
        ok "$1: exit 2, $3"
    else bad "$1" "exit $rc: $(head -c 400 src.out)"; fi
}
src_case "source ../outside/kernel.cu" ../outside/kernel.cu 'a path with a .. component'
src_case "source sub/../vector_add.cu" sub/../vector_add.cu 'a path with a .. component'
src_case "source as an absolute path" "$TMP/outside/kernel.cu" 'an absolute path: files a config names lie in its folder'
src_case "source a symbolic link out of the folder" link_out.cu 'leads (through a symbolic link) to .*, outside the config'
src_case "source a file that is not named as a CUDA source" secret.txt 'is not named as a CUDA source'
src_case "source with a NUL byte" nul.cu 'is not a text file'
src_case "source a symbolic link within the folder" link_in.cu ''
src_case "source outside with KFORGE_ALLOW_OUTSIDE_FILES=1" ../outside/kernel.cu '' KFORGE_ALLOW_OUTSIDE_FILES=1
src_case "secret.txt with KFORGE_ALLOW_OUTSIDE_FILES=1 still no source" secret.txt 'is not named as a CUDA source' \
    KFORGE_ALLOW_OUTSIDE_FILES=1
# a reference kernel's source and a .npy file follow the same rule
python3 - <<'PY' || exit 2
import json
d = json.load(open("va.json"))
d["custom"]["reference"] = {"source": "../outside/kernel.cu", "entry": "vector_add", "grid": ["n"], "block": [1]}
json.dump(d, open("cfg/ref.json", "w"))
d = json.load(open("va.json"))
d["custom"]["args"][1]["fill"] = {"npy": "/etc/passwd"}
json.dump(d, open("cfg/npy.json", "w"))
PY
"$K" check cfg/ref.json >ref.out 2>&1; rc=$?
"$K" check cfg/npy.json >npy.out 2>&1; rc2=$?
if [ $rc = 2 ] && has ref.out 'custom.reference.source: "../outside/kernel.cu" is a path with a .. component' &&
   [ $rc2 = 2 ] && has npy.out 'custom.args\[1\] (a).fill: "/etc/passwd" is an absolute path'; then
    ok "reference.source and a .npy fill: the same rule"
else bad "reference.source and .npy" "exit $rc/$rc2: $(head -c 300 ref.out; head -c 300 npy.out)"; fi

echo "security_suite: $npass passed, $nfail failed"
[ $nfail = 0 ]
