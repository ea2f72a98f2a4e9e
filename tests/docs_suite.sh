#!/bin/sh
# tests/docs_suite.sh -- the user docs say what the code does:
#   - the README says what kforge is, and lists its sections (every link
#     resolving to a heading, every section listed), before its first command;
#   - the --help of tune, best and compare names exit status 4 (output or
#     database not written), tune's and the man page's and the README's 129
#     (SIGHUP), which a fake run hung up really exits with, resuming after;
#   - the man page's custom section is in subsections, and its limits are the
#     code's (each number read from the source, and a config one past a limit
#     refused with it).
#
#   [KFORGE=build/kforge] sh tests/docs_suite.sh
#
# Prints PASS/FAIL lines and "docs_suite: N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KFORGE=${KFORGE:-$ROOT/build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-docs.XXXXXX") || exit 2
trap 'exit 130' INT TERM HUP
export LC_ALL=C KFORGE_FAKE_GPU=1 KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$TMP/cache}" KFORGE_DB="$TMP/db"
unset KFORGE_PLANT KFORGE_DEVICES KFORGE_FAULT_INJECT
cd "$TMP" || exit 2
README="$ROOT/README.md"
MAN="$ROOT/man/kforge.1"
npass=0
nfail=0
ok() { echo "PASS $1"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); }

# --- the README's top ---------------------------------------------------------
first_cmd=$(grep -n '^```sh' "$README" | head -n 1 | cut -d: -f1)
what=$(grep -n '^kforge generates, compiles, checks, times and tunes GPU kernels' "$README" | head -n 1 | cut -d: -f1)
toc=$(grep -n '^Contents: ' "$README" | head -n 1 | cut -d: -f1)
if [ -n "$what" ] && [ -n "$toc" ] && [ "$what" -lt "$first_cmd" ] && [ "$toc" -lt "$first_cmd" ]; then
    ok "README: what kforge is (line $what) and its contents (line $toc) before the first command (line $first_cmd)"
else
    bad "README top" "what kforge is: line ${what:-none}, contents: line ${toc:-none}, first command: line $first_cmd"
fi
# the setup command and make check stay the first two
cmds=$(awk '/^```sh$/ { getline; print }' "$README" | head -n 2)
if printf '%s\n' "$cmds" | head -n 1 | grep -q 'apt-get install' && printf '%s\n' "$cmds" | sed -n 2p | grep -qx 'make check'; then
    ok "README: the set-up command and make check open it"
else
    bad "README commands" "$cmds"
fi
if python3 - "$README" >toc.txt 2>&1 <<'EOF'; then
import re, sys
text = open(sys.argv[1]).read()
heads = re.findall(r"^## (.+)$", text, re.M)
def anchor(h):
    return re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
line = next(l for l in text.splitlines() if l.startswith("Contents: "))
links = re.findall(r"\[([^]]+)\]\(#([^)]+)\)", line)
anchors = {anchor(h) for h in heads}
bad = [t for t, a in links if a not in anchors]
missing = [h for h in heads if anchor(h) not in {a for _, a in links}]
if bad or missing or len(links) < 10:
    sys.exit("links to no heading: %s; sections not listed: %s" % (bad, missing))
EOF
    ok "README: the contents list links every section"
else
    bad "README contents" "$(cat toc.txt)"
fi

# --- exit statuses ------------------------------------------------------------
for c in tune best compare; do
    if "$KFORGE" "$c" --help 2>&1 | tr '\n' ' ' | grep -Eq 'exit status: .*; 4 [a-z]'; then
        ok "$c --help names exit status 4"
    else
        bad "$c --help" "no exit status 4: $("$KFORGE" "$c" --help 2>&1 | grep -A3 'exit status')"
    fi
done
if "$KFORGE" tune --help 2>&1 | grep -q '129 hung up (SIGHUP)' && grep -q '^| 129 | hung up (SIGHUP' "$README" &&
    awk '/^\.SH EXIT STATUS/ { on = 1 } /^\.SH EXAMPLES/ { on = 0 } on' "$MAN" | grep -A1 '^\.B 129$' | grep -q SIGHUP; then
    ok "129 (SIGHUP) in tune --help, the README's table and the man page's EXIT STATUS"
else
    bad "129" "tune --help, README or man page lacks it"
fi
# what they say: a run hung up exits 129 and the same command resumes
KFORGE_FAKE_GPU_MS=200 "$KFORGE" run "$ROOT/configs/fast.json" --results hup.jsonl >hup.out 2>hup.err &
pid=$!
i=0
while [ "$(cat hup.jsonl 2>/dev/null | grep -c .)" -lt 2 ] && [ $i -lt 300 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill -HUP $pid
wait $pid
rc=$?
n1=$(grep -c . hup.jsonl)
KFORGE_FAKE_GPU_MS=1 "$KFORGE" run "$ROOT/configs/fast.json" --results hup.jsonl >hup2.out 2>hup2.err
rc2=$?
if [ $rc = 129 ] && [ "$n1" -ge 2 ] && [ $rc2 = 0 ] && grep -q "resumed: $n1 cases taken from hup.jsonl" hup2.err &&
    [ "$(grep -c . hup.jsonl)" = 15 ]; then
    ok "SIGHUP: exit 129 after $n1 cases, and the same command resumes"
else
    bad "SIGHUP" "exit $rc after $n1 lines, then $rc2: $(cat hup.err hup2.err)"
fi

# --- the man page's custom section ---------------------------------------------
sec=$(awk '/^\.SS "Your own kernels/ { on = 1; next } /^\.SS / { on = 0 } on' "$MAN")
longest=$(printf '%s\n' "$sec" | awk '/^\.(PP|TP|SS|IP)/ { if (n > m) m = n; n = 0; next } { n++ } END { if (n > m) m = n; print m }')
if [ "$longest" -le 40 ] && printf '%s\n' "$sec" | grep -q '^\.I Limits$'; then
    ok "man: the custom section in parts (longest paragraph $longest source lines), with its limits"
else
    bad "man custom section" "longest paragraph $longest source lines"
fi
# each limit as the code has it
num() { sed -n "s/$2/\\1/p" "$ROOT/$1" | head -n 1; }
p=$(num src/core/kforge.h '^#define KF_MAX_PARAMS \([0-9]*\).*')
v=$(num src/families/custom/spec.c '^#define MAX_VALUES \([0-9]*\).*')
a=$(num src/families/custom/custom_internal.h '^#define MAX_ARGS \([0-9]*\).*')
m=$(num src/families/custom/spec.c '.*kf_read_file_max([a-z_>-]*, \([0-9]*\)u << 20.*')
e=$(num src/families/custom/custom.c '.*a buffer holds 1\.\.2^\([0-9]*\) elements.*')
k=$(num src/core/family.h '^#define KF_MAX_CONSTANTS \([0-9]*\).*')
lim=$(printf '%s\n' "$sec" | sed -n '/^\.I Limits$/,$p' | tr '\n' ' ')
missing=
for want in "At most $p parameters" "at most $v values" "At most $a;" "1..2^$e elements" "At most $m MiB" \
    "At most $k, each"; do
    case $lim in *"$want"*) ;; *) missing="$missing [$want]" ;; esac
done
if [ -n "$p$v$a$m$e$k" ] && [ -z "$missing" ]; then
    ok "man: the limits are the code's ($p params, $v values, $a args, $m MiB source, 2^$e elements, $k constants)"
else
    bad "man limits" "not in the man page:$missing (code: $p $v $a $m $e $k)"
fi
# and a config one past a limit is refused with it
python3 - "$ROOT/configs/custom/vector_add.json" "$a" >args.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["custom"]["source"] = "vector_add.cu"   # beside the config: a config's files lie in its folder
d["custom"]["args"] += [{"name": "s%d" % i, "scalar": "int32", "value": "1"}
                        for i in range(int(sys.argv[2]) + 1 - len(d["custom"]["args"]))]
print(json.dumps(d))
EOF
cp "$ROOT/configs/custom/vector_add.cu" .
if ! "$KFORGE" check args.json >args.out 2>&1 && grep -q "at most $a arguments" args.out; then
    ok "a config of $((a + 1)) args is refused: at most $a arguments"
else
    bad "args limit" "$(cat args.out)"
fi

if [ "$nfail" -eq 0 ]; then
    cd / && rm -rf "$TMP"
else
    echo "docs_suite: files kept in $TMP"
fi
echo "docs_suite: $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
