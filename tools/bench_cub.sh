#!/bin/sh
# bench_cub.sh -- kforge against CUB ("Beat CUB"), both timed the same way
# (seeded data, warm-up, L2 flushed before each repetition, one event pair
# per repetition around the whole reduction, same stopping rule; see
# tools/cub_bench.cu and tools/README-cub.md).
#
# For every case (default float32:sum int32:sum float32:max) and size, runs
# kforge and build/cub_bench alternately for R rounds (default 3; the order
# flips every round), keeps each tool's median of the per-round medians and
# prints a table and the issue's targets with PASS/FAIL:
#   ratio = CUB ms / kforge ms >= 1.00 everywhere; >= 1.15 at 2^18, 2^20,
#   2^22; kforge float32 sum at 2^30 >= 3100 GB/s.
# kforge's result for a round is its fastest "ok" variant of the config.
# Raw JSON lines of both tools go to build/bench-cub.jsonl (overwritten).
#
#   make bench-cub        (or: sh tools/bench_cub.sh [OPTIONS], from the repo root)
#
# options: --rounds R  --sizes "2^10 2^20 ..."  --cases "float32:sum int32:max ..."
#          --out FILE  --config FILE
# environment: KFORGE (build/kforge), KFORGE_BEST (configs/best-h100.json),
#   CUB_BENCH (a prebuilt binary; default build/cub_bench, rebuilt when
#   missing or older than tools/cub_bench.cu), NVCC, CUB_ARCH (sm_90),
#   PYTHON (python3), ROUNDS, SIZES, CASES, OUT.
# The bench settings of the config's "bench" object (seed, warmup, reps,
# max_time_s, max_noise, flush_l2) are given to cub_bench too.
# exit: 0 every target met; 1 a target missed; 2 a tool failed or gave a
# wrong answer, or results are missing; 130 interrupted.
set -eu

KFORGE=${KFORGE:-build/kforge}
CONFIG=${KFORGE_BEST:-configs/best-h100.json}
CUB_BENCH=${CUB_BENCH:-}
CUB_ARCH=${CUB_ARCH:-sm_90}
PYTHON=${PYTHON:-python3}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-build/bench-cub.jsonl}
SIZES=${SIZES:-"2^10 2^14 2^18 2^20 2^22 2^24 2^26 2^28 2^30"}
CASES=${CASES:-"float32:sum int32:sum float32:max"}

cmdline="$0${*:+ $*}"

die() {
    echo "bench_cub.sh: $*" >&2
    exit 2
}

usage() {
    sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//'
}

need_arg() {
    [ "$2" -ge 2 ] || die "$1 needs a value"
}

while [ $# -gt 0 ]; do
    case $1 in
    --rounds) need_arg "$1" $#; ROUNDS=$2; shift 2 ;;
    --rounds=*) ROUNDS=${1#*=}; shift ;;
    --sizes) need_arg "$1" $#; SIZES=$2; shift 2 ;;
    --sizes=*) SIZES=${1#*=}; shift ;;
    --cases) need_arg "$1" $#; CASES=$2; shift 2 ;;
    --cases=*) CASES=${1#*=}; shift ;;
    --out) need_arg "$1" $#; OUT=$2; shift 2 ;;
    --out=*) OUT=${1#*=}; shift ;;
    --config) need_arg "$1" $#; CONFIG=$2; shift 2 ;;
    --config=*) CONFIG=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done

case $ROUNDS in
'' | *[!0-9]* | 0) die "--rounds must be a positive integer, got '$ROUNDS'" ;;
esac
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (needed to read JSON)"
[ -f "$CONFIG" ] || die "no kforge config '$CONFIG' (set KFORGE_BEST or --config)"
[ -x "$KFORGE" ] || die "no kforge binary '$KFORGE' (run make, or set KFORGE)"

# Sizes: "2^k" or decimal -> decimal.
to_n() {
    case $1 in
    2^*)
        e_=${1#2^}
        case $e_ in '' | *[!0-9]*) die "bad size '$1'" ;; esac
        [ "$e_" -le 40 ] || die "size '$1' too large"
        echo $((1 << e_))
        ;;
    *[!0-9]* | '') die "bad size '$1' (decimal or 2^k)" ;;
    *) echo "$1" ;;
    esac
}
for s in $SIZES; do to_n "$s" >/dev/null; done
for c in $CASES; do
    case $c in
    *:*) ;;
    *) die "bad case '$c' (dtype:op, e.g. float32:sum)" ;;
    esac
done

# --- build cub_bench -----------------------------------------------------
if [ -z "$CUB_BENCH" ]; then
    CUB_BENCH=build/cub_bench
    if [ ! -x "$CUB_BENCH" ] || [ -n "$(find tools/cub_bench.cu -newer "$CUB_BENCH" 2>/dev/null)" ]; then
        [ -f tools/cub_bench.cu ] || die "tools/cub_bench.cu not found: run from the repository root"
        if [ -z "${NVCC:-}" ]; then
            NVCC=$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
        fi
        mkdir -p build
        echo "bench_cub.sh: building $CUB_BENCH ($NVCC -O3 -std=c++17 -arch=$CUB_ARCH)" >&2
        "$NVCC" -O3 -std=c++17 -arch="$CUB_ARCH" tools/cub_bench.cu -o "$CUB_BENCH.tmp" ||
            die "building $CUB_BENCH failed"
        mv "$CUB_BENCH.tmp" "$CUB_BENCH"
    fi
fi
[ -x "$CUB_BENCH" ] || die "no cub_bench binary '$CUB_BENCH'"

# --- the config's bench settings, for cub_bench --------------------------
cub_args=$("$PYTHON" - "$CONFIG" <<'EOF'
import json, sys
try:
    with open(sys.argv[1]) as f:
        cfg = json.load(f)
except Exception as e:
    sys.exit("bench_cub.sh: cannot read %s: %s" % (sys.argv[1], e))
b = cfg.get("bench") or {}
args = []
ints = {"warmup": "--warmup", "min_reps": "--min-reps", "max_reps": "--max-reps", "seed": "--seed"}
floats = {"max_time_s": "--max-time", "max_noise": "--max-noise"}
if "repetitions" in b:
    args += ["--min-reps", str(int(b["repetitions"])), "--max-reps", str(int(b["repetitions"]))]
for k, o in ints.items():
    if k in b:
        args += [o, str(int(b[k]))]
for k, o in floats.items():
    if k in b:
        args += [o, repr(float(b[k]))]
if b.get("flush_l2") is False:
    args.append("--no-flush")
if b.get("offset", 0):
    print("bench_cub.sh: warning: the config sets bench.offset=%s; cub_bench has no offset" % b["offset"],
          file=sys.stderr)
print(" ".join(args))
EOF
) || exit 2

mkdir -p "$(dirname "$OUT")"
: >"$OUT"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_cub.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
: >"$work/runs"

# --- header ------------------------------------------------------------------
gpu="unknown (nvidia-smi not found)"
if command -v nvidia-smi >/dev/null 2>&1; then
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0 2>/dev/null || echo "unknown (nvidia-smi failed)")
fi
echo "GPU:     $gpu"
date -u +"date:    %Y-%m-%dT%H:%M:%SZ"
echo "command: $cmdline"
echo "kforge:  $KFORGE run $CONFIG --set dtype=D --set op=O --set n=N --format jsonl --no-results --quiet"
echo "cub:     $CUB_BENCH --dtype D --op O --n N${cub_args:+ $cub_args}"
echo "rounds:  $ROUNDS (tools alternate, order flips each round; median of per-round medians)"
echo "raw:     $OUT"
echo

# --- measure -------------------------------------------------------------------
total=0
for c in $CASES; do for s in $SIZES; do total=$((total + 2 * ROUNDS)); done; done
k=0

# run_one TOOL CASE N ROUND
run_one() {
    k=$((k + 1))
    dtype=${2%%:*}
    op=${2#*:}
    o="$work/$k.out"
    e="$work/$k.err"
    printf 'bench_cub.sh: [%d/%d] %-6s %s n=%s round %s\n' "$k" "$total" "$1" "$2" "$3" "$4" >&2
    rc=0
    if [ "$1" = kforge ]; then
        "$KFORGE" run "$CONFIG" --set "dtype=$dtype" --set "op=$op" --set "n=$3" \
            --format jsonl --no-results --quiet >"$o" 2>"$e" || rc=$?
    else
        # shellcheck disable=SC2086 # cub_args: numbers and options, split on purpose
        "$CUB_BENCH" --dtype "$dtype" --op "$op" --n "$3" $cub_args >"$o" 2>"$e" || rc=$?
    fi
    cat "$o" >>"$OUT"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$rc" "$o" "$e" >>"$work/runs"
    if [ "$rc" -ne 0 ]; then
        echo "bench_cub.sh: $1 $2 n=$3 exited with $rc:" >&2
        tail -n 5 "$e" >&2
    fi
}

for c in $CASES; do
    for s in $SIZES; do
        n=$(to_n "$s")
        r=1
        while [ "$r" -le "$ROUNDS" ]; do
            if [ $((r % 2)) -eq 1 ]; then
                run_one kforge "$c" "$n" "$r"
                run_one cub "$c" "$n" "$r"
            else
                run_one cub "$c" "$n" "$r"
                run_one kforge "$c" "$n" "$r"
            fi
            r=$((r + 1))
        done
    done
done

# --- table and targets ---------------------------------------------------------
rc=0
"$PYTHON" - "$work/runs" "$CASES" "$SIZES" <<'EOF' || rc=$?
import json, math, statistics, sys
from collections import Counter

runs_file, cases, sizes = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
ESIZE = {"int32": 4, "uint32": 4, "int64": 8, "float32": 4, "float64": 8}

def to_n(s):
    return 1 << int(s[2:]) if s.startswith("2^") else int(s)

def label_n(n):
    return "2^%d" % (n.bit_length() - 1) if n > 0 and n & (n - 1) == 0 else str(n)

def num(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None

# per (tool, case, n): list of per-round results
res = {}
benches = {}      # (case, n) -> tool -> the bench settings it reported
BENCH_KEYS = ("warmup", "min_reps", "max_reps", "max_time_s", "max_noise", "flush_l2", "seed")
problems = []     # no usable result: the comparison is incomplete
notes = []        # a usable result, but something else went wrong (e.g. a variant not "ok")
device = cub_version = None
peak = None
for line in open(runs_file):
    tool, case, n, rnd, rc, out, err = line.rstrip("\n").split("\t")
    n, rc = int(n), int(rc)
    dtype, op = case.split(":", 1)
    recs = []
    bad_lines = 0
    for l in open(out):
        l = l.strip()
        if not l:
            continue
        try:
            recs.append(json.loads(l))
        except ValueError:
            bad_lines += 1
    ok = [j for j in recs if j.get("status") == "ok" and num(j.get("median_ms")) and j.get("median_ms") > 0
          and j.get("n") == n and j.get("dtype", dtype) == dtype and j.get("op", op) == op]
    for j in recs:
        if device is None and j.get("device"):
            device = j["device"]
        if peak is None and num(j.get("peak_gbps")) and j["peak_gbps"] > 0:
            peak = j["peak_gbps"]
        if tool == "cub" and j.get("cub_version"):
            cub_version = j["cub_version"]
    key = (tool, case, n)
    if not ok:
        msg = open(err).read().strip().splitlines()
        statuses = Counter(j.get("status", "?") for j in recs)
        why = ", ".join("%d %s" % (v, s) for s, v in statuses.items()) or "no result lines"
        if bad_lines:
            why += ", %d unparsable lines" % bad_lines
        problems.append("%s %s n=%s round %s: exit %d, %s%s" % (
            tool, case, label_n(n), rnd, rc, why, (": " + msg[-1]) if msg else ""))
        res.setdefault(key, [])
        continue
    notok = Counter(j.get("status", "?") for j in recs if j.get("status") != "ok")
    if rc != 0 or notok or bad_lines:
        why = ", ".join("%d %s" % (v, s) for s, v in notok.items())
        if bad_lines:
            why += (", " if why else "") + "%d unparsable lines" % bad_lines
        notes.append("%s %s n=%s round %s: exit %d, %d ok%s" % (
            tool, case, label_n(n), rnd, rc, len(ok), (", " + why) if why else ""))
    best = min(ok, key=lambda j: j["median_ms"])
    if peak is None and num(best.get("pct_peak")) and best.get("pct_peak") > 0 and num(best.get("gbps")):
        peak = best["gbps"] / best["pct_peak"] * 100
    name = best.get("name") or best.get("label") or tool
    if isinstance(best.get("bench"), dict):
        bset = {k: v for k, v in best["bench"].items() if k in BENCH_KEYS}
        benches.setdefault((case, n), {}).setdefault(tool, bset)
    res.setdefault(key, []).append((best["median_ms"], name))

for (case, n), by_tool in sorted(benches.items()):
    a, b = by_tool.get("kforge"), by_tool.get("cub")
    if a is not None and b is not None:
        diff = ["%s: kforge %s, cub %s" % (k, a.get(k), b.get(k)) for k in BENCH_KEYS
                if k in a and k in b and a[k] != b[k]]
        if diff:
            notes.append("%s n=%s: bench settings differ (%s)" % (case, label_n(n), "; ".join(diff)))

def summary(tool, case, n):
    rounds = res.get((tool, case, n)) or []
    if not rounds:
        return None
    ms = statistics.median([r[0] for r in rounds])
    names = Counter(r[1] for r in rounds).most_common()
    dtype = case.split(":", 1)[0]
    gbps = n * ESIZE.get(dtype, 4) / ms / 1e6
    pct = gbps / peak * 100 if peak else None
    return {"ms": ms, "gbps": gbps, "pct": pct, "name": names[0][0], "rounds": len(rounds)}

def f(x, fmt):
    return fmt % x if x is not None else "-"

T115 = {1 << 18, 1 << 20, 1 << 22}
hdr = ("case", "n", "kforge ms", "CUB ms", "kforge GB/s", "CUB GB/s", "kforge %pk", "CUB %pk", "ratio", "target",
       "kforge variant")
rows = []
all_ratios, t115_ratios = [], []
big = None
missing = 0
for case in cases:
    for s in sizes:
        n = to_n(s)
        kf, cb = summary("kforge", case, n), summary("cub", case, n)
        ratio = cb["ms"] / kf["ms"] if kf and cb else None
        need = 1.15 if n in T115 else 1.00
        if ratio is None:
            missing += 1
            mark = "MISSING"
        else:
            mark = "ok" if ratio >= need else "MISS<%.2f" % need
        all_ratios.append((ratio, case, n))
        if n in T115:
            t115_ratios.append((ratio, case, n))
        if case == "float32:sum" and n == 1 << 30:
            big = kf["gbps"] if kf else float("nan")
        rows.append((case, label_n(n), f(kf and kf["ms"], "%.5f"), f(cb and cb["ms"], "%.5f"),
                     f(kf and kf["gbps"], "%.1f"), f(cb and cb["gbps"], "%.1f"),
                     f(kf and kf["pct"], "%.1f"), f(cb and cb["pct"], "%.1f"),
                     f(ratio, "%.3f"), mark, kf["name"] if kf else "-"))

print("device: %s   peak: %s GB/s   CUB: %s" % (device or "?", f(peak, "%.1f"), cub_version or "?"))
w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(len(hdr))]
left = {0, 1, 9, 10}
def line(r):
    return "  ".join(str(v).ljust(w[i]) if i in left else str(v).rjust(w[i]) for i, v in enumerate(r)).rstrip()
print(line(hdr))
print("  ".join("-" * x for x in w))
for r in rows:
    print(line(r))
print()

def worst(lst):
    have = [x for x in lst if x[0] is not None]
    gaps = len(lst) - len(have)
    if not have:
        return None, gaps
    return min(have, key=lambda x: x[0]), gaps

verdicts = []
def target(text, lst, need):
    if not lst:
        verdicts.append("SKIP")
        print("  %-42s SKIP (not measured)" % text)
        return
    w_, gaps = worst(lst)
    okk = w_ is not None and gaps == 0 and w_[0] >= need
    verdicts.append("PASS" if okk else "FAIL")
    detail = "lowest %.3f at %s %s" % (w_[0], w_[1], label_n(w_[2])) if w_ else "no data"
    if gaps:
        detail += "; %d missing" % gaps
    print("  %-42s %s (%s)" % (text, "PASS" if okk else "FAIL", detail))

print("targets:")
target("ratio >= 1.00 at every case and n:", all_ratios, 1.00)
target("ratio >= 1.15 at 2^18, 2^20, 2^22:", t115_ratios, 1.15)
if big is None:
    verdicts.append("SKIP")
    print("  %-42s SKIP (not measured)" % "kforge float32:sum 2^30 >= 3100 GB/s:")
else:
    okk = big == big and big >= 3100
    verdicts.append("PASS" if okk else "FAIL")
    print("  %-42s %s (%s GB/s)" % ("kforge float32:sum 2^30 >= 3100 GB/s:", "PASS" if okk else "FAIL",
                                     "%.1f" % big if big == big else "no data"))
if notes:
    print()
    print("notes (%d):" % len(notes))
    for p in notes:
        print("  " + p)
if problems:
    print()
    print("problems (%d):" % len(problems))
    for p in problems:
        print("  " + p)
overall = "FAIL" if "FAIL" in verdicts else ("INCOMPLETE" if "SKIP" in verdicts else "PASS")
print()
print("overall: %s" % overall)
sys.exit(2 if problems or missing else (1 if overall == "FAIL" else 0))
EOF
exit "$rc"
