#!/bin/sh
# tests/plot_suite.sh -- tools/plot.sh on synthetic results files: a case
# measured twice is drawn from its latest run (and a footnote says so), two
# devices are never merged, legends keep to 8 lines (the best variant of each
# algorithm) with names or short labels, log axes only where values span
# decades, heat maps in % of the best with the GPU and date in the title, the
# best cell marked and a colour scale that keeps a 2% spread nearly uniform;
# kforge against CUB and PyTorch from baseline files (CSV, cub_bench's JSON,
# ROW lines), a one-size sweep as grouped bars, the search's convergence from
# tune --format jsonl output and from tune results files; a custom kernel's
# results (transpose: its own parameters and a width x height shape, which
# the results lines name): heat maps and sweeps over its parameters at one
# shape (--n WxH), GB/s against the size that varies or the bytes moved, and
# a fake-GPU tune of configs/custom/transpose.json drawn end to end; a
# built-in family's lines with those fields drawn as without them.
# KFORGE_PLOT_KEEP=DIR copies the drawn PNGs there.
#
#   [KFORGE=build/kforge] sh tests/plot_suite.sh
#
# The data checks read `tools/plot.sh --print-data` (python3 only); the
# drawing checks need gnuplot, the end-to-end one kforge and NVRTC (each
# skipped without).  Works in a mktemp -d
# directory that is removed when every check passed and kept (and named)
# otherwise.  Prints PASS/FAIL/SKIP lines and "plot_suite: N passed, N failed".

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PLOT="$ROOT/tools/plot.sh"
KFORGE=${KFORGE:-$ROOT/build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
export LC_ALL=C

npass=0
nfail=0
nskip=0
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: plot suite: python3 not found"
    echo "plot_suite: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-plot-suite.XXXXXX") || exit 2
trap 'exit 130' INT TERM HUP

# row DEVICE TIME NAME ALGORITHM BLOCK EPT N STATUS GBPS: one results line
# (the keys plot.py reads; median_ms from GB/s and 4-byte elements)
row() {
    awk -v dev="$1" -v t="$2" -v name="$3" -v alg="$4" -v bs="$5" -v ept="$6" -v n="$7" -v st="$8" -v g="$9" \
        'BEGIN {
            ms = n * 4 / (g * 1e9) * 1e3
            printf "{\"kforge\":\"0.1.0\",\"run\":\"%s-1\",\"time\":\"%s\",\"device\":\"%s\",\"peak_gbps\":3352.32,", t, t, dev
            printf "\"name\":\"%s\",\"label\":\"%s/bs%d/ept%d/full/v1/auto/multi_kernel\",\"dtype\":\"float32\",", name, alg, bs, ept
            printf "\"op\":\"sum\",\"algorithm\":\"%s\",\"block_size\":%d,\"elements_per_thread\":%d,\"unroll\":\"full\",", alg, bs, ept
            printf "\"vector_width\":1,\"grid\":\"auto\",\"passes\":\"multi_kernel\",\"n\":%d,\"status\":\"%s\",", n, st
            printf "\"reps\":10,\"median_ms\":%.9g,\"gbps\":%.9g}\n", ms, g
        }'
}

H100="NVIDIA H100 80GB HBM3"
A100="NVIDIA A100-SXM4-80GB"
K=1024
M=1048576
G=1073741824

# Two devices.  On the H100, fast at 2^20 twice: the later run (11-22, 1400
# GB/s) comes first in the file and is slower than the earlier (11-20, 1500):
# the chart must show 1400.  broken at 2^20 was ok, then wrong: not shown.
write_two_devices() {
    {
        row "$H100" 2026-11-21T10:00:00Z fast shuffle 256 4 $K ok 10
        row "$H100" 2026-11-22T10:00:00Z fast shuffle 256 4 $M ok 1400
        row "$H100" 2026-11-21T10:00:00Z fast shuffle 256 4 $G ok 2900
        row "$H100" 2026-11-21T10:00:00Z reduce6 sequential 256 2 $K ok 8
        row "$H100" 2026-11-21T10:00:00Z reduce6 sequential 256 2 $M ok 900
        row "$H100" 2026-11-21T10:00:00Z reduce6 sequential 256 2 $G ok 2000
        row "$H100" 2026-11-20T10:00:00Z fast shuffle 256 4 $M ok 1500
        row "$H100" 2026-11-20T10:00:00Z broken shuffle 512 1 $M ok 1700
        row "$H100" 2026-11-22T11:00:00Z broken shuffle 512 1 $M wrong 1750
        row "$A100" 2026-11-19T09:00:00Z fast shuffle 256 4 $K ok 7
        row "$A100" 2026-11-19T09:00:00Z fast shuffle 256 4 $M ok 1000
        row "$A100" 2026-11-19T09:00:00Z fast shuffle 256 4 $G ok 1800
        row "$A100" 2026-11-19T09:00:00Z reduce6 sequential 256 2 $M ok 700
        row "$A100" 2026-11-19T09:00:00Z reduce6 sequential 256 2 $G ok 1300
    } >two.jsonl
}

# One device, 12 variants: 10 unnamed shuffle ones (the best is bs512/ept4),
# seq and atom; sizes 4096 and 8192 only.
write_many() {
    {
        g=100
        for bs in 64 128 256 512 1024; do
            for ept in 1 4; do
                g=$((g + 10))
                best=$g
                [ "$bs" = 512 ] && [ "$ept" = 4 ] && best=900
                row "$H100" 2026-11-22T10:00:00Z "" shuffle "$bs" "$ept" 4096 ok "$best"
                row "$H100" 2026-11-22T10:00:00Z "" shuffle "$bs" "$ept" 8192 ok "$((best + 50))"
            done
        done
        row "$H100" 2026-11-22T10:00:00Z seq sequential 256 2 4096 ok 300
        row "$H100" 2026-11-22T10:00:00Z seq sequential 256 2 8192 ok 320
        row "$H100" 2026-11-22T10:00:00Z atom atomic_shared 256 1 4096 ok 50
        row "$H100" 2026-11-22T10:00:00Z atom atomic_shared 256 1 8192 ok 60
    } >many.jsonl
}

die() {
    printf '%s\n' "$*"
    exit 1
}

skip() {
    printf '%s\n' "$*"
    exit 77
}

# has FILE REGEX: FILE has a line matching the extended REGEX
has() {
    grep -Eq -- "$2" "$1" || die "no line matching '$2' in $1:
$(cat "$1")"
}

hasnot() {
    ! grep -Eq -- "$2" "$1" || die "a line matches '$2' in $1:
$(grep -E -- "$2" "$1")"
}

# the part of print-data output that belongs to chart $2
chart() {
    awk -v c="chart $2" '/^chart / { on = ($0 == c) } on' "$1"
}

# print_data FILE ARGS...: tools/plot.sh FILE --print-data ARGS > out, stderr > err; must exit 0
print_data() {
    f=$1
    shift
    sh "$PLOT" "$f" --print-data "$@" >out 2>err || die "plot.sh $f --print-data $*: exit $?: $(cat err)"
}

check() {
    name=$1
    fn=$2
    dir="$TMP/$name"
    mkdir -p "$dir"
    (cd "$dir" && write_two_devices && write_many && "$fn") >"$dir/log" 2>&1
    rc=$?
    case $rc in
    0)
        npass=$((npass + 1))
        echo "PASS $name"
        ;;
    77)
        nskip=$((nskip + 1))
        echo "SKIP $name: $(tail -n 1 "$dir/log")"
        ;;
    *)
        nfail=$((nfail + 1))
        echo "FAIL $name"
        sed 's/^/    /' "$dir/log"
        ;;
    esac
}

# ---------------------------------------------------------------------------

t_devices_apart() {
    print_data two.jsonl
    [ "$(grep -c '^chart bandwidth-' out)" = 2 ] || die "expected 2 bandwidth charts: $(cat out)"
    [ "$(grep -c '^chart heat-' out)" = 2 ] || die "expected 2 heat maps: $(cat out)"
    chart out bandwidth-nvidia-h100-80gb-hbm3.png >h100
    chart out bandwidth-nvidia-a100-sxm4-80gb.png >a100
    has h100 "title: .*float32 sum on $H100"
    has a100 "title: .*float32 sum on $A100"
    # each chart holds its own device's numbers only
    has h100 '^  series fast \| 2\^10=10 2\^20=1400 2\^30=2900$'
    has a100 '^  series fast \| 2\^10=7 2\^20=1000 2\^30=1800$'
    has a100 '^  series reduce6 \| 2\^20=700 2\^30=1300$'
    hasnot a100 '=1400|=2900|=900'
    hasnot h100 '=1000|=1800|=700'
}

t_latest_run() {
    print_data two.jsonl
    chart out bandwidth-nvidia-h100-80gb-hbm3.png >h100
    # the later run, although slower and earlier in the file
    has h100 '2\^20=1400'
    hasnot h100 '2\^20=1500'
    # broken: latest run wrong, so no line, though an earlier run was ok
    hasnot h100 'series broken'
    has h100 'note: 2 earlier measurements of a case \(same variant and n\) set aside: the latest run of each is shown'
    has h100 'note: 1 case not shown: the latest run failed'
    chart out bandwidth-nvidia-a100-sxm4-80gb.png >a100
    hasnot a100 'note:'
    # a filter that keeps one device: one chart, the plain file names
    print_data two.jsonl --filter "device=$A100"
    has out '^chart bandwidth.png$'
    has out '^chart heat.png$'
    [ "$(grep -c '^chart ' out)" = 2 ] || die "expected 2 charts: $(cat out)"
}

t_log_axes() {
    print_data two.jsonl
    chart out bandwidth-nvidia-h100-80gb-hbm3.png >h100
    has h100 '^  x: n, log, 2\^10\.\.2\^30$'
    has h100 '^  y: GB/s, log$'
    print_data many.jsonl
    has out '^  x: n, linear, 2\^12\.\.2\^13$'
    has out '^  y: GB/s, linear$'
}

t_legend_limit() {
    print_data many.jsonl
    chart out bandwidth.png >bw
    [ "$(grep -c '^  series ' bw)" = 3 ] || die "expected 3 series (one per algorithm): $(cat bw)"
    has bw 'note: 12 variants: the best of each algorithm is shown \(3 of 12;'
    # the best shuffle variant, by a short label: the label parts the shown series do not share
    has bw '^  series shuffle/bs512/ept4 \| 2\^12=900 2\^13=950$'
    has bw '^  series seq \| '
    has bw '^  series atom \| '
    # 10 variants of one algorithm and nothing else: still one line
    print_data many.jsonl --filter algorithm=shuffle
    [ "$(grep -c '^  series ' out)" = 1 ] || die "expected 1 series: $(cat out)"
    # 5 variants: every one, by short label (bs and ept: what differs)
    print_data many.jsonl --filter algorithm=shuffle --filter elements_per_thread=4
    [ "$(grep -c '^  series ' out)" = 5 ] || die "expected 5 series: $(cat out)"
    has out '^  series bs64 \| '
    has out '^  series bs1024 \| '
    hasnot out 'note: .*variants'
}

t_heat_percent() {
    print_data two.jsonl --heat block_size,elements_per_thread --n 2^30
    chart out heat-nvidia-h100-80gb-hbm3.png >heat
    # the title names what, where and when
    has heat "title: kforge: median time in % of the best at n = 2\\^30, float32 sum / $H100, 2026-11-21$"
    # fast (2900 GB/s) is the best; reduce6 (2000) takes 2900/2000 = 1.45x as
    # long: 145.0% of the best's time (a slower cell reads more, never less)
    has heat '^  cell block_size=256 elements_per_thread=4: 100\.0% '
    has heat '^  cell block_size=256 elements_per_thread=2: 145\.0% '
    has heat 'note: 100% = .* ms \(block_size = 256, elements_per_thread = 4, fast\)'
    chart out heat-nvidia-a100-sxm4-80gb.png >heat
    has heat "$A100, 2026-11-19"
    # at 2^10 the A100 has one variant: a heat map of one cell says nothing,
    # so it gets none, with a note (the H100 has two variants there)
    print_data two.jsonl --n 1024
    [ "$(grep -c '^chart heat' out)" = 1 ] || die "expected the H100's heat map only: $(cat out)"
    has out '^chart heat-nvidia-h100-80gb-hbm3.png$'
    has err "^plot: $A100: no heat map at n = 2\\^10: one variant only, nothing varies there$"
    sh "$PLOT" two.jsonl --print-data --n 2^40 >out 2>err && die "--n 2^40 should fail"
    has err 'no heat map could be drawn'
}

# a file of two problems (float32 sum and int32 sum, the int32 kernels twice
# as fast): one heat map each, each in % of its own best -- never one map
# whose percentages compare two problems
t_heat_problems() {
    grep "$H100" two.jsonl > mixed.jsonl
    grep "$H100" two.jsonl | sed 's/"dtype":"float32"/"dtype":"int32"/; s/"median_ms":\([0-9.e+-]*\)/"median_ms":0.5e0*\1/' |
        awk '{ while (match($0, /0\.5e0\*[0-9.e+-]+/)) { v = substr($0, RSTART + 6, RLENGTH - 6) / 2
               $0 = substr($0, 1, RSTART - 1) sprintf("%.9g", v) substr($0, RSTART + RLENGTH) } print }' >> mixed.jsonl
    print_data mixed.jsonl --heat block_size,elements_per_thread --n 2^30
    [ "$(grep -c '^chart heat' out)" = 2 ] || die "expected a heat map per problem: $(grep '^chart' out)"
    chart out heat-reduce-float32-sum.png >heat
    has heat "title: kforge: median time in % of the best at n = 2\\^30, float32 sum / "
    has heat '^  cell block_size=256 elements_per_thread=2: 145\.0% '
    chart out heat-reduce-int32-sum.png >heat
    has heat "title: kforge: median time in % of the best at n = 2\\^30, int32 sum / "
    has heat '^  cell block_size=256 elements_per_thread=4: 100\.0% '
    has heat '^  cell block_size=256 elements_per_thread=2: 145\.0% '
}

t_usage() {
    sh "$PLOT" two.jsonl --print-data --heat block_size >out 2>err
    [ $? = 2 ] || die "--heat with one key: expected exit 2"
    sh "$PLOT" two.jsonl --print-data --filter status=nosuch >out 2>err
    [ $? = 2 ] || die "a filter nothing matches: expected exit 2"
    sh "$PLOT" two.jsonl --print-data --heat block_size,nosuch >out 2>err
    [ $? = 2 ] || die "unknown heat key: expected exit 2"
    has err "no result has the key 'nosuch'"
}

t_draw() {
    command -v gnuplot >/dev/null 2>&1 || skip "gnuplot not found"
    sh "$PLOT" two.jsonl --out plots >out 2>err || die "plot.sh: exit $?: $(cat err)"
    for f in bandwidth-nvidia-h100-80gb-hbm3 bandwidth-nvidia-a100-sxm4-80gb heat-nvidia-h100-80gb-hbm3 \
        heat-nvidia-a100-sxm4-80gb; do
        [ -s "plots/$f.png" ] || die "plots/$f.png missing: $(cat err)"
        [ "$(head -c 4 "plots/$f.png" | od -An -c | tr -d ' ')" = '211PNG' ] || die "$f.png is not a PNG"
        has out "^plots/$f.png$"
    done
    [ "$(find plots -type f | wc -l)" = 4 ] || die "expected 4 files: $(find plots -type f)"
    sh "$PLOT" many.jsonl --out p2 >out 2>err || die "plot.sh many: exit $?: $(cat err)"
    if [ ! -s p2/bandwidth.png ] || [ ! -s p2/heat.png ]; then
        die "many.jsonl: $(find p2 -type f)"
    fi
}

# ---------------------------------------------------------------------------
# kforge against the baselines, sweep bars, convergence

# baselines for the H100 float32 sum of two.jsonl: CSV (CUB three times at
# 2^20: the median of 1000, 1300 and 1100 is 1100), cub_bench's JSON line,
# ROW lines of rows_torch.py (a one-row shape is a full reduction; 64x1024
# is not)
write_baselines() {
    cat >base.csv <<'EOF'
# baselines measured with tools/bench_cub.sh and rows_torch.py
tool,n,gbps,dtype,op,device
cub,2^10,8,float32,sum,NVIDIA H100 80GB HBM3
cub,1048576,1000,float32,sum,NVIDIA H100 80GB HBM3
cub,2^20,1300,float32,sum,NVIDIA H100 80GB HBM3
cub,2^20,1100,float32,sum,NVIDIA H100 80GB HBM3
cub,2^30,2800,float32,sum,NVIDIA H100 80GB HBM3
cub,2^30,2700,float32,sum,NVIDIA H100 80GB HBM3
cub,2^30,9999,float32,max,NVIDIA H100 80GB HBM3
cub,2^30,2700,float32,sum,Some Other GPU
EOF
    printf '%s\n' '{"tool":"cub","cub_version":"3.0.1","device":"NVIDIA H100 80GB HBM3","name":"cub","dtype":"float32","op":"sum","n":1073741824,"status":"ok","median_ms":1.4,"gbps":3000}' >cub.jsonl
    cat >torch.txt <<'EOF'
ROW shape=1x1024 total=1024 dtype=float32 op=sum impl=torch2.11.0 cfg=torch2.11.0 status=PASS us=0.5 min_us=0.4 gbps=6.0 io_gbps=6.0 det=1
ROW shape=1x1048576 total=2^20 dtype=float32 op=sum impl=torch2.11.0 cfg=torch2.11.0 status=PASS us=5.0 min_us=4.9 gbps=900.0 io_gbps=900.0 det=1
ROW shape=64x1024 total=2^16 dtype=float32 op=sum impl=torch2.11.0 cfg=torch2.11.0 status=PASS us=5.0 min_us=4.9 gbps=50.0 io_gbps=50.0 det=1
EOF
}

t_compare() {
    write_baselines
    grep "$H100" two.jsonl >h100.jsonl
    sh "$PLOT" h100.jsonl base.csv torch.txt --print-data --chart compare >out 2>err || die "exit $?: $(cat err)"
    has out '^chart compare.png$'
    has out "title: kforge against CUB, PyTorch 2.11.0: float32 sum on $H100$"
    # kforge: the fastest variant at each n (fast at 2^20 is 1400 in its latest run)
    has out '^  series kforge \| 2\^10=10 2\^20=1400 2\^30=2900$'
    has out '^  kforge variants: 2\^10=fast 2\^20=fast 2\^30=fast$'
    # CUB: the median of its measurements at each n; float32 max and the other GPU left out
    has out '^  series CUB \| 2\^10=8 2\^20=1100 2\^30=2750$'
    has out '^  series PyTorch 2.11.0 \| 2\^10=6 2\^20=900$'
    has out 'note: baselines: the median of their measurements at each n \(up to 3\)'
    has out 'note: kforge / best baseline: 1\.05x to 1\.27x over 3 sizes'
    has out '^  x: n, log, 2\^10\.\.2\^30$'
    has err 'CUB measured on Some Other GPU, where the results have no kforge measurement: not compared'
    has err 'torch.txt: 1 ROW line of row-wise shapes set aside'
    # cub_bench's own JSON lines, its version in the label
    sh "$PLOT" h100.jsonl cub.jsonl --print-data --chart compare >out 2>err || die "exit $?: $(cat err)"
    has out '^  series CUB 3\.0\.1 \| 2\^30=3000$'
    # by default the comparison comes with the other charts when baselines are given
    print_data two.jsonl
    hasnot out '^chart compare'
    sh "$PLOT" two.jsonl base.csv --print-data >out 2>err || die "exit $?: $(cat err)"
    has out '^chart compare-nvidia-h100-80gb-hbm3.png$'
    # a filter on a kforge parameter keeps the baselines
    sh "$PLOT" h100.jsonl base.csv --print-data --chart compare --filter name=reduce6 >out 2>err || die "$(cat err)"
    has out '^  series kforge \| 2\^10=8 2\^20=900 2\^30=2000$'
    has out '^  series CUB \| '
    # no baselines: --chart compare says why
    sh "$PLOT" h100.jsonl --print-data --chart compare >out 2>err && die "compare without baselines should fail"
    has err 'chart compare: nothing to draw: no baseline'
}

t_heat_scale() {
    # a 3% spread: the colours run to 125% (not to the worst cell, 103%),
    # and the labels carry tenths
    {
        row "$H100" 2026-11-22T10:00:00Z "" shuffle 128 1 $M ok 1000
        row "$H100" 2026-11-22T10:00:00Z "" shuffle 128 2 $M ok 1010
        row "$H100" 2026-11-22T10:00:00Z "" shuffle 256 1 $M ok 1020
        row "$H100" 2026-11-22T10:00:00Z "" shuffle 256 2 $M ok 990
    } >flat.jsonl
    print_data flat.jsonl --chart heat
    has out '^  colour: 100%\.\.125% '
    has out '^  best: block_size=256 elements_per_thread=1 \(marked\)$'
    has out '^  cell block_size=256 elements_per_thread=2: 103\.0% '
    # a wide spread: the colours run to the worst cell
    print_data two.jsonl --filter "device=$H100" --n 2^30 --chart heat
    has out '^  colour: 100%\.\.145% '
}

t_sweep() {
    # one size, block_size x algorithm: bars grouped by block_size (3 values), one per algorithm
    {
        for bs in 128 256 512; do
            row "$H100" 2026-11-22T10:00:00Z "" shuffle "$bs" 4 $M ok "$((bs + 1000))"
            row "$H100" 2026-11-22T10:00:00Z "" sequential "$bs" 4 $M ok "$((bs + 500))"
            row "$H100" 2026-11-22T10:00:00Z "" sequential "$bs" 8 $M ok "$((bs + 600))"
        done
    } >one.jsonl
    print_data one.jsonl
    # one size: the sweep replaces bandwidth against n
    has out '^chart sweep.png$'
    hasnot out '^chart bandwidth'
    chart out sweep.png >sw
    has sw "title: kforge: GB/s at n = 2\\^20 by block_size and algorithm, float32 sum on $H100$"
    has sw '^  x: block_size: 128 256 512$'
    has sw '^  bars algorithm=shuffle \| 128=1128 256=1256 512=1512$'
    # each bar is the fastest over the rest: sequential with ept 8
    has sw '^  bars algorithm=sequential \| 128=728 256=856 512=1112$'
    has sw 'note: each bar is the fastest variant over elements_per_thread'
    # the axes by name, and --n
    print_data one.jsonl --sweep algorithm,elements_per_thread --n 2^20
    has out '^  x: algorithm: shuffle sequential$'
    has out '^  bars elements_per_thread=8 \| sequential=1112$'
    # several sizes: --chart sweep at the largest
    print_data many.jsonl --chart sweep --filter algorithm=shuffle
    has out 'GB/s at n = 2\^13 by block_size and elements_per_thread'
    sh "$PLOT" one.jsonl --print-data --sweep grid >out 2>err && die "--sweep grid should fail"
    has err 'grid does not vary'
}

# kforge tune --format jsonl output of two strategies (as with --simulate)
write_tune_output() {
    cat >sim.jsonl <<'EOF'
{"event": "improvement", "evaluation": 1, "objective_ms": 0.0060, "label": "a"}
{"event": "improvement", "evaluation": 4, "objective_ms": 0.0050, "label": "b"}
{"event": "improvement", "evaluation": 30, "objective_ms": 0.0041, "label": "c"}
{"event": "summary", "space": "configs/tune-reduce.json", "device": "fake-gpu (KFORGE_FAKE_GPU)", "objective": "time", "strategy": "random", "seed": 1, "candidates": 860, "budget": 100, "evaluations": 100, "simulated": true, "best": {"objective_ms": 0.0041, "evaluation": 30, "label": "c"}}
{"event": "improvement", "evaluation": 1, "objective_ms": 0.0055, "label": "d"}
{"event": "improvement", "evaluation": 9, "objective_ms": 0.0040, "label": "e"}
{"event": "summary", "space": "configs/tune-reduce.json", "device": "fake-gpu (KFORGE_FAKE_GPU)", "objective": "time", "strategy": "anneal", "seed": 3, "candidates": 860, "budget": 100, "evaluations": 100, "simulated": true, "best": {"objective_ms": 0.0040, "evaluation": 9, "label": "e"}}
EOF
}

t_convergence() {
    write_tune_output
    print_data sim.jsonl
    [ "$(grep -c '^chart ' out)" = 1 ] || die "expected the convergence chart only: $(cat out)"
    has out '^chart convergence.png$'
    has out 'title: kforge tune: best so far against candidates evaluated, tune-reduce.json on fake-gpu'
    has out '^  x: candidates evaluated, log, 1\.\.100$'
    has out '^  y: best objective so far \(µs\)$'
    has out '^  series random seed 1 \(simulated\) \| 1=6 4=5 30=4\.1 end=100$'
    has out '^  series anneal seed 3 \(simulated\) \| 1=5\.5 9=4 end=100$'
    has out 'note: dashed: 2% above the best found by any run \(4 µs\)'
    # from a tune results file: one line per run, candidates in the order of the file
    {
        row "$H100" 2026-11-22T10:00:00Z "" shuffle 128 1 $M ok 500
        row "$H100" 2026-11-22T10:00:00Z "" shuffle 256 1 $M ok 400
        row "$H100" 2026-11-22T10:00:00Z "" shuffle 512 1 $M ok 800
        row "$H100" 2026-11-22T10:00:00Z "" shuffle 64 1 $M wrong 900
        row "$H100" 2026-11-22T11:00:00Z "" shuffle 512 4 $M ok 1000
        row "$H100" 2026-11-22T11:00:00Z "" shuffle 256 4 $M ok 700
    } >tune.jsonl
    print_data tune.jsonl --chart convergence
    [ "$(grep -c '^  series ' out)" = 2 ] || die "expected a line per run: $(cat out)"
    # 2^20 float32 at 500 GB/s is 8.389 us
    has out '^  series run 10:00:00 \| 1=8\.389 3=5\.243 end=4$'
    has out '^  series run 11:00:00 \| 1=4\.194 end=2$'
    has out 'note: from results files: one line per run'
    # several files: the file names tell the runs apart
    cp sim.jsonl sim2.jsonl
    sh "$PLOT" sim.jsonl sim2.jsonl --print-data >out 2>err || die "$(cat err)"
    has out '^  series anneal seed 3 \(simulated\) \[sim2\.jsonl\] \| '
}

t_draw_more() {
    command -v gnuplot >/dev/null 2>&1 || skip "gnuplot not found"
    write_baselines
    write_tune_output
    grep "$H100" two.jsonl >h100.jsonl
    {
        for bs in 128 256 512; do
            row "$H100" 2026-11-22T10:00:00Z "" shuffle "$bs" 4 $M ok "$((bs + 1000))"
            row "$H100" 2026-11-22T10:00:00Z "" sequential "$bs" 4 $M ok "$((bs + 500))"
        done
    } >one.jsonl
    sh "$PLOT" h100.jsonl base.csv torch.txt --chart compare --out plots >out 2>err || die "compare: $(cat err)"
    sh "$PLOT" one.jsonl --out plots >>out 2>err || die "sweep: $(cat err)"
    sh "$PLOT" sim.jsonl --out plots >>out 2>err || die "convergence: $(cat err)"
    for f in compare sweep heat convergence; do
        [ -s "plots/$f.png" ] || die "plots/$f.png missing: $(cat out err)"
        [ "$(head -c 4 "plots/$f.png" | od -An -c | tr -d ' ')" = '211PNG' ] || die "$f.png is not a PNG"
        # a drawn chart, not an empty canvas: over 10 kB
        [ "$(wc -c <"plots/$f.png")" -gt 10000 ] || die "$f.png is only $(wc -c <"plots/$f.png") bytes"
        has out "^plots/$f.png$"
    done
    hasnot err 'warning'
    # KFORGE_PLOT_KEEP=DIR keeps a copy of the PNGs, to look at
    if [ -n "${KFORGE_PLOT_KEEP:-}" ]; then
        mkdir -p "$KFORGE_PLOT_KEEP" && cp plots/*.png "$KFORGE_PLOT_KEEP"/
    fi
}

# ---------------------------------------------------------------------------
# A custom kernel: its own parameters and sizes, named by the results lines

# crow TIME TILE_DIM BLOCK_ROWS PAD WIDTH HEIGHT GBPS: one results line of the
# custom kernel transpose as kforge writes it ("axes" and "sizes" name which
# fields are its parameters and which its sizes; median_ms from GB/s and the
# 8 bytes moved per element)
crow() {
    awk -v t="$1" -v td="$2" -v br="$3" -v pad="$4" -v w="$5" -v h="$6" -v g="$7" -v dev="$H100" \
        'BEGIN {
            ms = 8 * w * h / (g * 1e9) * 1e3
            nm = sprintf("tile_dim=%d,block_rows=%d,pad=%d", td, br, pad)
            printf "{\"kforge\":\"0.1.0\",\"run\":\"%s-1\",\"time\":\"%s\",\"device\":\"%s\",\"peak_gbps\":3352.32,", t, t, dev
            printf "\"name\":\"%s\",\"label\":\"%s\",\"kernel\":\"transpose\",", nm, nm
            printf "\"tile_dim\":%d,\"block_rows\":%d,\"pad\":%d,\"width\":%d,\"height\":%d,", td, br, pad, w, h
            printf "\"axes\":[\"tile_dim\",\"block_rows\",\"pad\"],\"sizes\":[\"width\",\"height\"],"
            printf "\"status\":\"ok\",\"reps\":10,\"median_ms\":%.9g,\"gbps\":%.9g}\n", ms, g
        }'
}

# 18 variants (tile_dim 16 32 64 x block_rows 2 4 8 x pad 0 1) at 1024 x 512
# and 2048 x 512: GB/s = BASE + 100 per tile_dim step + 10 per block_rows
# step + 5 with pad, BASE 500 at width 1024, 1000 at 2048
write_custom() {
    for w in 1024 2048; do
        base=$((w / 2 - 12))
        [ "$w" = 2048 ] && base=1000
        [ "$w" = 1024 ] && base=500
        i=0
        for td in 16 32 64; do
            j=0
            for br in 2 4 8; do
                for pad in 0 1; do
                    crow 2026-11-22T10:00:00Z "$td" "$br" "$pad" "$w" 512 $((base + 100 * i + 10 * j + 5 * pad))
                done
                j=$((j + 1))
            done
            i=$((i + 1))
        done
    done >custom.jsonl
}

t_custom_heat() {
    write_custom
    # tile_dim against block_rows at the largest shape: each cell the fastest pad (1)
    print_data custom.jsonl --chart heat --heat tile_dim,block_rows
    has out '^chart heat.png$'
    has out "title: kforge: median time in % of the best at width = 2\^11, height = 512, transpose / $H100, 2026-11-22$"
    has out '^  x: tile_dim: 16 32 64$'
    has out '^  y: block_rows: 2 4 8$'
    # 1225 GB/s is the best; tile_dim 16, block_rows 2, pad 1: 1005 GB/s, 121.9%
    has out '^  cell tile_dim=64 block_rows=8: 100\.0% '
    has out '^  cell tile_dim=16 block_rows=2: 121\.9% '
    has out '^  best: tile_dim=64 block_rows=8 \(marked\)$'
    has out 'note: 100% = .* \(tile_dim = 64, block_rows = 8, tile_dim=64,block_rows=8,pad=1\)'
    [ "$(grep -c '^  cell ' out)" = 9 ] || die "expected 9 cells: $(cat out)"
    # the other shape: WxH in the family's order of sizes, or the sizes by name
    for shape in 1024x512 2^10x512 width=1024,height=512 height=512,width=1024 width=1024; do
        print_data custom.jsonl --chart heat --heat tile_dim,block_rows --n "$shape"
        has out 'at width = 2\^10, height = 512, transpose'
        # 725 / 505
        has out '^  cell tile_dim=16 block_rows=2: 143\.6% '
    done
    # without --heat: the two parameters with the most values (pad has two)
    print_data custom.jsonl --chart heat
    has out '^  x: tile_dim: 16 32 64$'
    has out '^  y: block_rows: 2 4 8$'
    # a shape not measured, or a size where the family has two
    for shape in 1024x1024 1024 width=4096; do
        sh "$PLOT" custom.jsonl --print-data --chart heat --n "$shape" >out 2>err && die "--n $shape should fail"
        has err 'no ok result at .*\(shapes: 1024x512 2048x512\), so no heat map'
        has err "no heat map could be drawn"
    done
    sh "$PLOT" custom.jsonl --print-data --heat tile_dim,nosuch >out 2>err && die "--heat tile_dim,nosuch should fail"
    has err "no result has the key 'nosuch' \(keys: tile_dim, block_rows, pad, name\)"
}

t_custom_sweep() {
    write_custom
    # one shape: the sweep instead of GB/s against size, and the heat map
    grep '"width":1024' custom.jsonl >one.jsonl
    print_data one.jsonl
    has out '^chart sweep.png$'
    has out '^chart heat.png$'
    hasnot out '^chart bandwidth'
    chart out sweep.png >sw
    has sw "title: kforge: GB/s at width = 2\^10, height = 512 by tile_dim and block_rows, transpose on $H100$"
    has sw '^  x: tile_dim: 16 32 64$'
    has sw '^  bars: block_rows$'
    has sw '^  bars block_rows=2 \| 16=505 32=605 64=705$'
    has sw '^  bars block_rows=8 \| 16=525 32=625 64=725$'
    has sw 'note: each bar is the fastest variant over pad$'
    # the axes by name, at a shape given as WxH
    print_data custom.jsonl --sweep pad,tile_dim --n 2048x512
    has out "GB/s at width = 2\^11, height = 512 by pad and tile_dim, transpose on "
    has out '^  x: pad: 0 1$'
    has out '^  bars tile_dim=64 \| 0=1220 1=1225$'
    has out 'note: each bar is the fastest variant over block_rows$'
    sh "$PLOT" one.jsonl --print-data --sweep width >out 2>err && die "--sweep width should fail"
    has err "'width' is a size, and the chart is drawn at one shape \(--n\): name parameters \(tile_dim, block_rows, pad\)"
}

t_custom_bandwidth() {
    write_custom
    # two widths at one height: GB/s against width
    print_data custom.jsonl --chart bandwidth
    has out "title: kforge: bandwidth against width, transpose on $H100$"
    has out '^  x: width, linear, 2\^10\.\.2\^11$'
    has out 'note: height = 512 in every case$'
    has out 'note: 18 variants: the best 8 are shown \(best = highest mean fraction of the top GB/s over every width, 0 where it has no ok result\)'
    [ "$(grep -c '^  series ' out)" = 8 ] || die "expected 8 series: $(cat out)"
    has out '^  series tile_dim=64,block_rows=8,pad=1 \| 2\^10=725 2\^11=1225$'
    hasnot out 'note: .*earlier measurement'
    # shapes that differ in width and height: against the bytes moved;
    # 512 x 1024 moves the bytes of 1024 x 512: the faster point is drawn
    {
        crow 2026-11-22T10:00:00Z 32 4 1 1024 512 600
        crow 2026-11-22T10:00:00Z 32 4 1 512 1024 650
        crow 2026-11-22T10:00:00Z 32 4 1 2048 512 900
    } >bytes.jsonl
    print_data bytes.jsonl --chart bandwidth
    has out "title: kforge: bandwidth against bytes moved, transpose on "
    has out '^  x: bytes moved, linear, 2\^22\.\.2\^23$'
    has out '^  series tile_dim=32,block_rows=4,pad=1 \| 2\^22=650 2\^23=900$'
    has out 'note: 1 case moved as many bytes as another shape of their variant: the faster is shown'
    # a case measured twice at one shape is a repeat; at two shapes it is not
    crow 2026-11-21T10:00:00Z 32 4 1 2048 512 800 >>bytes.jsonl
    print_data bytes.jsonl --chart bandwidth
    has out 'note: 1 earlier measurement of a case \(same variant and shape\) set aside'
    has out '2\^23=900$'
}

# the built-in families' lines as kforge writes them now, with "axes" and
# "sizes" (and acc_dtype), draw as those written before
t_builtin_fields() {
    sed 's/"n":/"acc_dtype":"auto","n":/; s/,"status":/,"axes":["dtype","op","acc_dtype","algorithm","block_size","elements_per_thread","unroll","vector_width","grid","passes","layout","accumulator","warp_reduce","load"],"sizes":["n"],"status":/; s/"name":/"kernel":"reduce","name":/' \
        two.jsonl >two-fields.jsonl
    grep -q '"sizes":\["n"\]' two-fields.jsonl || die "sed: $(head -1 two-fields.jsonl)"
    print_data two.jsonl
    mv out before
    print_data two-fields.jsonl
    diff before out >diff.txt || die "the charts differ with axes and sizes: $(cat diff.txt)"
    for f in many.jsonl; do
        sed 's/,"status":/,"axes":["dtype","op","acc_dtype","algorithm","block_size","elements_per_thread","unroll","vector_width","grid","passes","layout","accumulator","warp_reduce","load"],"sizes":["n"],"status":/' \
            "$f" >fields.jsonl
        for args in "" "--chart sweep --filter algorithm=shuffle" "--chart heat --n 4096"; do
            # shellcheck disable=SC2086
            print_data "$f" $args
            mv out before
            # shellcheck disable=SC2086
            print_data fields.jsonl $args
            diff before out >diff.txt || die "$f $args: the charts differ with axes and sizes: $(cat diff.txt)"
        done
    done
}

t_custom_draw() {
    command -v gnuplot >/dev/null 2>&1 || skip "gnuplot not found"
    write_custom
    sh "$PLOT" custom.jsonl --chart heat,sweep --heat tile_dim,block_rows --sweep tile_dim,block_rows --out plots \
        >out 2>err || die "plot.sh: exit $?: $(cat err)"
    for f in heat sweep; do
        [ -s "plots/$f.png" ] || die "plots/$f.png missing: $(cat out err)"
        [ "$(head -c 4 "plots/$f.png" | od -An -c | tr -d ' ')" = '211PNG' ] || die "$f.png is not a PNG"
        [ "$(wc -c <"plots/$f.png")" -gt 10000 ] || die "$f.png is only $(wc -c <"plots/$f.png") bytes"
        has out "^plots/$f.png$"
    done
    sh "$PLOT" custom.jsonl --chart bandwidth --out plots >>out 2>err || die "bandwidth: $(cat err)"
    [ "$(wc -c <plots/bandwidth.png)" -gt 10000 ] || die "bandwidth.png is only $(wc -c <plots/bandwidth.png) bytes"
    hasnot err 'warning'
    if [ -n "${KFORGE_PLOT_KEEP:-}" ]; then
        mkdir -p "$KFORGE_PLOT_KEEP" && for f in heat sweep bandwidth; do cp "plots/$f.png" "$KFORGE_PLOT_KEEP/custom-$f.png"; done
    fi
}

# end to end: a fake-GPU tune of configs/custom/transpose.json, drawn
t_custom_kforge() {
    [ -x "$KFORGE" ] || skip "$KFORGE not built"
    "$KFORGE" --version 2>/dev/null | grep -q NVRTC || skip "NVRTC is not usable here"
    export KFORGE_FAKE_GPU=1 KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$PWD/cache}" KFORGE_DB="$PWD/db"
    unset KFORGE_PLANT KFORGE_DEVICES
    "$KFORGE" tune "$ROOT/configs/custom/transpose.json" --strategy random --budget 40 --abandon-above 0 --set width=1024 \
        --set height=512 --results tr.jsonl --no-db -q >tune.out 2>&1 || die "kforge tune: exit $?: $(cat tune.out)"
    [ "$(grep -c '"status":"ok"' tr.jsonl)" -ge 30 ] || die "few ok results: $(grep -c . tr.jsonl)"
    print_data tr.jsonl --heat tile_dim,block_rows --sweep block_rows,tile_dim --chart heat,sweep
    chart out heat.png >heat
    has heat "title: kforge: median time in % of the best at width = 2\^10, height = 512, transpose / fake-gpu"
    has heat '^  x: tile_dim: [0-9 ]+$'
    has heat '^  y: block_rows: [0-9 ]+$'
    has heat '^  cell tile_dim=[0-9]+ block_rows=[0-9]+: 100\.0% '
    chart out sweep.png >sw
    has sw "title: kforge: GB/s at width = 2\^10, height = 512 by block_rows and tile_dim, transpose on fake-gpu"
    has sw '^  x: block_rows: [0-9 ]+$'
    has sw '^  bars tile_dim=[0-9]+ \| [0-9]+=[0-9.]+'
    has sw 'note: each bar is the fastest variant over pad, vec, unroll$'
    command -v gnuplot >/dev/null 2>&1 || skip "gnuplot not found (the data checks passed)"
    sh "$PLOT" tr.jsonl --heat tile_dim,block_rows --sweep block_rows,tile_dim --chart heat,sweep --out plots \
        >out 2>err || die "plot.sh: exit $?: $(cat err)"
    for f in heat sweep; do
        [ "$(head -c 4 "plots/$f.png" | od -An -c | tr -d ' ')" = '211PNG' ] || die "$f.png is not a PNG: $(cat err)"
        [ "$(wc -c <"plots/$f.png")" -gt 10000 ] || die "$f.png is only $(wc -c <"plots/$f.png") bytes"
    done
}

# a tune that abandons (the race, on by default) leaves no holes in the heat
# map or the sweep: the abandoned candidates' first repetitions fill them,
# with a note; the cells are those of a tune that abandons nothing
t_abandoned_cells() {
    [ -x "$KFORGE" ] || skip "$KFORGE not built"
    "$KFORGE" --version 2>/dev/null | grep -q NVRTC || skip "NVRTC is not usable here"
    export KFORGE_FAKE_GPU=1 KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$PWD/cache}" KFORGE_DB="$PWD/db"
    unset KFORGE_PLANT KFORGE_DEVICES
    for k in 2 0; do
        "$KFORGE" tune "$ROOT/configs/custom/transpose.json" --strategy random --budget 40 --abandon-above $k \
            --set width=1024 --set height=512 --results tr$k.jsonl --no-db -q >tune.out 2>&1 ||
            die "kforge tune --abandon-above $k: exit $?: $(cat tune.out)"
    done
    na=$(grep -c '"status":"abandoned"' tr2.jsonl)
    [ "$na" -ge 5 ] || die "only $na abandoned: the test needs a race"
    print_data tr2.jsonl --heat tile_dim,block_rows --chart heat
    chart out heat.png >h2
    print_data tr0.jsonl --heat tile_dim,block_rows --chart heat
    chart out heat.png >h0
    has h2 "note: $na of the measurements are of candidates a tune abandoned"
    [ "$(grep -c '^  cell ' h2)" = "$(grep -c '^  cell ' h0)" ] ||
        die "cells: $(grep -c '^  cell ' h2) with the race, $(grep -c '^  cell ' h0) without"
    has h2 '^  cell tile_dim=[0-9]+ block_rows=[0-9]+: 100\.0% '
}

# one variant: at one size nothing can be charted (exit 2, saying so and
# what was measured); at two sizes the bandwidth chart, but no heat map of
# one cell
t_one_variant() {
    row "$H100" 2026-11-22T10:00:00Z only shuffle 256 4 $M ok 1000 >one.jsonl
    sh "$PLOT" one.jsonl --print-data >out 2>err && die "one variant at one size should fail: $(cat out)"
    has err "one variant at one size \(n = 2\^20, only: .* ms, 1000 GB/s\): nothing to chart"
    row "$H100" 2026-11-22T10:00:00Z only shuffle 256 4 $G ok 2000 >>one.jsonl
    print_data one.jsonl
    has out '^chart bandwidth.png$'
    hasnot out '^chart heat'
    has err 'no heat map at n = 2\^30: one variant only'
    sh "$PLOT" one.jsonl --print-data --chart heat --heat block_size,elements_per_thread >out 2>err &&
        die "a heat map of one cell should be refused: $(cat out)"
    has err 'block_size and elements_per_thread have one value each there'
    # two variants that differ in algorithm only: the heat map's default
    # (block_size by elements_per_thread) would be one cell: the axes that vary
    row "$H100" 2026-11-22T10:00:00Z other sequential 256 4 $G ok 1600 >>one.jsonl
    row "$H100" 2026-11-22T10:00:00Z other2 sequential 256 8 $G ok 1500 >>one.jsonl
    print_data one.jsonl --chart heat
    has out '^  x: algorithm: shuffle sequential$'
    has out '^  y: elements_per_thread: 4 8$'
}

# the README's "A first session", then its chart example: the file it reads
# is one the session wrote; reduce and vector_add (a custom kernel) are never
# in one chart; no title says "None"; the bandwidth chart's line for the
# tuned algorithm is at the top GB/s at every size, and no heat cell is
# faster than its best (100%)
t_first_session() {
    [ -x "$KFORGE" ] || skip "$KFORGE not built"
    "$KFORGE" --version 2>/dev/null | grep -q NVRTC || skip "NVRTC is not usable here"
    export KFORGE_FAKE_GPU=1 KFORGE_CACHE_DIR="${KFORGE_TEST_CACHE:-$PWD/cache}" KFORGE_DB="$PWD/db"
    unset KFORGE_PLANT KFORGE_DEVICES
    mkdir -p build && ln -s "$KFORGE" build/kforge && cp -r "$ROOT/configs" configs
    sed -n '/^## A first session/,/^## /p' "$ROOT/README.md" | sed -n '/^```sh/,/^```$/p' | grep '^build/' >steps.txt
    [ "$(wc -l <steps.txt)" -ge 5 ] || die "the README's first session: $(cat steps.txt)"
    while IFS= read -r line; do
        sh -c "${line%%   #*}" >>session.out 2>&1 || die "[$line]: $(tail -n 20 session.out)"
    done <steps.txt
    ex=$(sed -n '/^## Charts/,/^## /p' "$ROOT/README.md" | grep -m 1 '^tools/plot.sh ')
    [ -n "$ex" ] || die "no tools/plot.sh example in the README's Charts section"
    ex=${ex%%   #*}
    # the files it reads: the arguments that are not options nor their values
    set -- ${ex#tools/plot.sh }
    while [ $# -gt 0 ]; do
        case $1 in
        --out | --chart | --heat | --n | --filter | --sweep) shift 2 ;;
        -*) shift ;;
        *) [ -s "$1" ] || die "the README's chart example reads $1, which its first session does not write: $ex"
           shift ;;
        esac
    done
    sh -c "sh $ROOT/${ex%% --out*} --print-data" >out 2>err || die "[$ex]: exit $?: $(cat err)"
    hasnot out '^  title: .*None'
    has out '^chart bandwidth-reduce.png$'
    chart out bandwidth-reduce.png >bw
    has bw '^  title: kforge: bandwidth against n, float32 sum on fake-gpu'
    hasnot bw 'per_thread'
    # the top GB/s of the reduce results at each n, as the series would print it
    top=$(python3 -c '
import json, sys
top = {}
for l in open("kforge-tune.jsonl"):
    d = json.loads(l)
    if d.get("kernel") == "reduce" and d.get("status") == "ok":
        top[d["n"]] = max(top.get(d["n"], 0), d["gbps"])
print(" ".join("2^%d=%.6g" % (n.bit_length() - 1, g) for n, g in sorted(top.items())))')
    has bw "^  series .* \| $(printf '%s' "$top" | sed 's/[].^$*+?(){}|[\\]/\\&/g')\$"
    for c in $(sed -n 's/^chart \(heat.*\)/\1/p' out); do
        chart out "$c" >h
        has h '^  cell .*: 100\.0% '
        hasnot h '^  cell .*: [0-9]\.[0-9]% |^  cell .*: [0-9][0-9]\.[0-9]% '
    done
    grep -q '^chart .*vector-add' out || die "no chart of vector_add: $(grep '^chart' out)"
}

check devices-apart t_devices_apart
check latest-run t_latest_run
check log-axes t_log_axes
check legend-limit t_legend_limit
check heat-percent t_heat_percent
check heat-problems t_heat_problems
check usage t_usage
check draw t_draw
check compare t_compare
check heat-scale t_heat_scale
check sweep t_sweep
check convergence t_convergence
check draw-more t_draw_more
check custom-heat t_custom_heat
check custom-sweep t_custom_sweep
check custom-bandwidth t_custom_bandwidth
check builtin-fields t_builtin_fields
check custom-draw t_custom_draw
check custom-kforge t_custom_kforge
check abandoned-cells t_abandoned_cells
check one-variant t_one_variant
check first-session t_first_session

if [ "$nfail" -eq 0 ]; then
    rm -rf "$TMP"
else
    echo "plot_suite: files kept in $TMP"
fi
if [ "$nskip" -gt 0 ]; then
    echo "plot_suite: $npass passed, $nfail failed, $nskip skipped"
else
    echo "plot_suite: $npass passed, $nfail failed"
fi
[ "$nfail" -eq 0 ]
