#!/bin/sh
# tools/plot.sh -- PNG charts from kforge results files (JSON Lines), baseline
# measurements and tune output.
#
#   tools/plot.sh FILE... [--out DIR] [--chart LIST] [--heat X,Y] [--sweep X[,Y]] [--n N]
#                 [--filter KEY=VALUE]... [--print-data]
#
#   DIR/bandwidth.png    GB/s against n, one line per variant (its name, else the
#                        parts of its label that tell it apart), status ok rows
#                        only; at most 8 lines: with more variants, the best of
#                        each algorithm (no algorithms: the best 8; best = the
#                        highest mean fraction of the top GB/s over every n, 0
#                        where it has no ok result); the legend sits inside,
#                        top left.  A family of several sizes (width x height):
#                        against the one that varies, else against the bytes
#                        moved.  One chart per kernel family
#                        (bandwidth-KERNEL.png when a file holds several)
#   DIR/compare.png      kforge against the baselines: kforge's fastest variant at
#                        each n and each baseline tool (CUB, PyTorch, ...) as a
#                        labelled line of GB/s against n
#   DIR/heat.png         median time in % of the best cell's (100%: the best; a
#                        cell that takes 1.28x as long reads 128%) over
#                        parameters X and Y (default block_size,
#                        elements_per_thread where both vary, else the two
#                        that vary most) at size or shape N (default: the
#                        largest measured), the minimum over all other
#                        parameters, each cell annotated, the best (a verified
#                        result) framed; the colours run from 100% to the
#                        worst cell or 125%, whichever is higher: a 2% spread
#                        stays nearly one colour.  None where it would be one
#                        cell or fewer than two parameters vary (a message)
#   DIR/sweep.png        a one-size sweep: GB/s at size or shape N, a group of
#                        bars per value of X, a bar per value of Y (default: the axes
#                        that vary with the most values), each bar the fastest
#                        over the other parameters
#   DIR/convergence.png  the search's best objective so far against candidates
#                        evaluated, one line per run (kforge tune --format jsonl:
#                        its strategy and seed)
#
#   By default: bandwidth (for a family measured at one size only, sweep) and heat,
#   compare when a FILE holds baseline lines, convergence when a FILE holds
#   tune output.  Titles name the GPU, dtype and op, the heat map also the
#   date.  Axes are logarithmic where the values span two decades.  A case
#   measured several times (same device, variant and shape) is drawn from its
#   latest run, and a footnote says so.  Results of several devices are never
#   merged: each gets its own charts, DIR/bandwidth-DEVICE.png and so on.
#
#   FILE               any mix of: kforge results (run, tune; any family, a
#                      custom kernel's too: its lines name its parameters and
#                      sizes); baseline lines, JSON
#                      ({"tool":"cub","n":1048576,"gbps":412.8,...}: what
#                      tools/cub_bench.cu prints) or CSV with a header naming at
#                      least tool,n,gbps (optional: dtype, op, device, status,
#                      version, label), or ROW lines of tools/rows_torch.py and
#                      rows_cub (one-row shapes: a full reduction); kforge tune
#                      --format jsonl output
#   --n N              the size of the heat map and sweep: 2^20; for a family of
#                      several sizes a shape, 1024x512 (in the family's order)
#                      or width=1024,height=512
#   --chart LIST       the charts to draw: bandwidth,compare,heat,sweep,convergence
#                      (convergence from a tune results file: one line per run)
#   --out DIR          where the PNGs go (default: kforge-plots)
#   --filter KEY=VALUE keep only rows whose KEY equals VALUE (repeatable; all must
#                      hold): --filter dtype=float32 --filter n=2^20 --filter name=reduce6
#                      (baseline lines: only the filters on keys they have)
#   --print-data       draw nothing: print each chart's file, title, notes, axes
#                      and data (no gnuplot needed)
#
# Examples:
#   tools/plot.sh kforge-tune.jsonl    # kforge tune's results file (README, "A first session")
#   kforge run sweep.json --results sweep.jsonl && tools/plot.sh sweep.jsonl
#   tools/plot.sh sweep.jsonl --heat block_size,vector_width --n 2^24 --filter dtype=float32
#   tools/plot.sh best.jsonl baselines.csv --chart compare --filter dtype=float32 --filter op=sum
#   tools/plot.sh sweep.jsonl --sweep block_size,algorithm --n 2^20
#   tools/plot.sh transpose.jsonl --heat tile_dim,block_rows --n 8192x8192
#   for s in random local anneal; do kforge tune space.json --simulate sweep.jsonl \
#       --strategy $s --format jsonl; done > sim.jsonl && tools/plot.sh sim.jsonl
#
# Needs python3 (tools/plot.py extracts the data) and gnuplot with the
# pngcairo terminal (Debian: gnuplot-nox).  Exit status: 0; 1 gnuplot failed;
# 2 usage or nothing to plot (one variant at one size: nothing to compare).

set -u

usage() {
    sed -n '4,/^# 2 usage/p' "$0" | sed 's/^# \{0,1\}//'
}

die() {
    printf 'plot: %s\n' "$*" >&2
    exit 2
}

nres=0
out=kforge-plots
heat=
n=
sweep=
chart=
print_data=
# filters are passed through to plot.py as repeated "--filter KV" arguments
nfilters=0
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help)
        usage
        exit 0
        ;;
    --print-data)
        print_data=1
        shift
        ;;
    --out | --heat | --n | --filter | --sweep | --chart)
        [ $# -ge 2 ] || die "$1 needs a value"
        case $1 in
        --out) out=$2 ;;
        --heat) heat=$2 ;;
        --n) n=$2 ;;
        --sweep) sweep=$2 ;;
        --chart) chart=$2 ;;
        --filter)
            case $2 in
            *=*) ;;
            *) die "--filter: expected KEY=VALUE, got '$2'" ;;
            esac
            nfilters=$((nfilters + 1))
            eval "filter_$nfilters=\$2"
            ;;
        esac
        shift 2
        ;;
    --out=* | --heat=* | --n=* | --filter=* | --sweep=* | --chart=*)
        opt=${1%%=*}
        val=${1#*=}
        shift
        set -- "$opt" "$val" "$@"
        ;;
    -*)
        die "unknown option '$1' (see tools/plot.sh --help)"
        ;;
    *)
        [ -r "$1" ] || die "cannot read '$1'"
        nres=$((nres + 1))
        eval "res_$nres=\$1"
        shift
        ;;
    esac
done
[ "$nres" -gt 0 ] || {
    usage >&2
    exit 2
}
command -v python3 >/dev/null 2>&1 || die "python3 not found"
here=$(cd "$(dirname "$0")" && pwd)

# Rebuild the argument list for plot.py: options, the filters, then the files.
set -- --out "$out"
[ -n "$heat" ] && set -- "$@" --heat "$heat"
[ -n "$n" ] && set -- "$@" --n "$n"
[ -n "$sweep" ] && set -- "$@" --sweep "$sweep"
[ -n "$chart" ] && set -- "$@" --chart "$chart"
i=1
while [ "$i" -le "$nfilters" ]; do
    eval "set -- \"\$@\" --filter \"\$filter_$i\""
    i=$((i + 1))
done
i=1
while [ "$i" -le "$nres" ]; do
    eval "set -- \"\$@\" \"\$res_$i\""
    i=$((i + 1))
done
if [ -n "$print_data" ]; then
    exec python3 "$here/plot.py" "$@" --print-data
fi

command -v gnuplot >/dev/null 2>&1 || die "gnuplot not found (apt-get install gnuplot-nox)"
work=$(mktemp -d "${TMPDIR:-/tmp}/kforge-plot.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$out" || die "cannot create '$out'"

python3 "$here/plot.py" "$@" --work "$work" || exit 2
gnuplot "$work/plot.gp" 2>"$work/gnuplot.log" || {
    cat "$work/gnuplot.log" >&2
    echo "plot: gnuplot failed" >&2
    exit 1
}
# gnuplot reports some problems (an empty data file, say) as warnings only
if [ -s "$work/gnuplot.log" ]; then
    sed 's/^/plot: gnuplot: /' "$work/gnuplot.log" >&2
fi
while IFS= read -r f; do
    [ -s "$f" ] || {
        echo "plot: $f was not written" >&2
        exit 1
    }
    echo "$f"
done <"$work/outputs"
