#!/bin/sh
# tools/plot.sh -- PNG charts from a kforge results file (JSON Lines).
#
#   tools/plot.sh RESULTS.jsonl [--out DIR] [--heat X,Y] [--n N] [--filter KEY=VALUE]... [--print-data]
#
#   DIR/bandwidth.png  GB/s against n, one line per variant (its name, else the
#                      parts of its label that tell it apart), status ok rows
#                      only; at most 8 lines: with more variants, the best of
#                      each algorithm
#   DIR/heat.png       median time in % of the best cell over parameters X and Y
#                      (default block_size,elements_per_thread) at size N
#                      (default: the largest measured), the minimum over all
#                      other parameters, each cell annotated
#
#   Titles name the GPU, dtype and op, the heat map also the date.  Axes are
#   logarithmic where the values span two decades.  A case measured several
#   times (same device, variant and n) is drawn from its latest run, and a
#   footnote says so.  Results of several devices are never merged: each gets
#   its own charts, DIR/bandwidth-DEVICE.png and DIR/heat-DEVICE.png.
#
#   --out DIR          where the PNGs go (default: kforge-plots)
#   --filter KEY=VALUE keep only rows whose KEY equals VALUE (repeatable; all must
#                      hold): --filter dtype=float32 --filter n=2^20 --filter name=reduce6
#   --print-data       draw nothing: print each chart's file, title, notes, axes
#                      and data (no gnuplot needed)
#
# Examples:
#   kforge run sweep.json --results sweep.jsonl && tools/plot.sh sweep.jsonl
#   tools/plot.sh sweep.jsonl --heat block_size,vector_width --n 2^24 --filter dtype=float32
#
# Needs python3 (tools/plot.py extracts the data) and gnuplot with the
# pngcairo terminal (Debian: gnuplot-nox).  Exit status: 0; 1 gnuplot failed;
# 2 usage or nothing to plot.

set -u

usage() {
    sed -n '4,30p' "$0" | sed 's/^# \{0,1\}//'
}

die() {
    printf 'plot: %s\n' "$*" >&2
    exit 2
}

results=
out=kforge-plots
heat=
n=
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
    --out | --heat | --n | --filter)
        [ $# -ge 2 ] || die "$1 needs a value"
        case $1 in
        --out) out=$2 ;;
        --heat) heat=$2 ;;
        --n) n=$2 ;;
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
    --out=* | --heat=* | --n=* | --filter=*)
        opt=${1%%=*}
        val=${1#*=}
        shift
        set -- "$opt" "$val" "$@"
        ;;
    -*)
        die "unknown option '$1' (see tools/plot.sh --help)"
        ;;
    *)
        [ -z "$results" ] || die "one results file only (got '$results' and '$1')"
        results=$1
        shift
        ;;
    esac
done
[ -n "$results" ] || {
    usage >&2
    exit 2
}
[ -r "$results" ] || die "cannot read '$results'"
command -v python3 >/dev/null 2>&1 || die "python3 not found"
here=$(cd "$(dirname "$0")" && pwd)

# Rebuild the argument list for plot.py: results, options, then the filters.
set -- "$results" --out "$out"
[ -n "$heat" ] && set -- "$@" --heat "$heat"
[ -n "$n" ] && set -- "$@" --n "$n"
i=1
while [ "$i" -le "$nfilters" ]; do
    eval "set -- \"\$@\" --filter \"\$filter_$i\""
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
