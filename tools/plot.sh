#!/bin/sh
# tools/plot.sh -- PNG charts from a kforge results file (JSON Lines).
#
#   tools/plot.sh RESULTS.jsonl [--out DIR] [--heat X,Y] [--n N] [--filter KEY=VALUE]...
#
#   DIR/bandwidth.png  GB/s against n (log2 axis), one line per variant (name, or
#                      label when unnamed); status ok rows only; the best median
#                      where a (variant, n) was measured more than once
#   DIR/heat.png       median time over parameters X and Y (default
#                      block_size,elements_per_thread) at size N (default: the
#                      largest measured), the minimum over all other parameters,
#                      each cell annotated
#
#   --out DIR          where the PNGs go (default: kforge-plots)
#   --filter KEY=VALUE keep only rows whose KEY equals VALUE (repeatable; all must
#                      hold): --filter dtype=float32 --filter n=2^20 --filter name=reduce6
#
# Examples:
#   kforge run sweep.json --results sweep.jsonl && tools/plot.sh sweep.jsonl
#   tools/plot.sh sweep.jsonl --heat block_size,vector_width --n 2^24 --filter dtype=float32
#
# Needs gnuplot (with the pngcairo terminal) and python3 (tools/plot.py extracts
# the data).  Exit status: 0; 1 gnuplot failed; 2 usage or nothing to plot.

set -u

usage() {
    sed -n '4,17p' "$0" | sed 's/^# \{0,1\}//'
}

die() {
    printf 'plot: %s\n' "$*" >&2
    exit 2
}

results=
out=kforge-plots
heat=
n=
# filters are passed through to plot.py as repeated "--filter KV" arguments
nfilters=0
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help)
        usage
        exit 0
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
command -v gnuplot >/dev/null 2>&1 || die "gnuplot not found (apt-get install gnuplot-nox)"

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kforge-plot.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$out" || die "cannot create '$out'"

# Rebuild the argument list for plot.py: results, options, then the filters.
set -- "$results" --work "$work" --out "$out"
[ -n "$heat" ] && set -- "$@" --heat "$heat"
[ -n "$n" ] && set -- "$@" --n "$n"
i=1
while [ "$i" -le "$nfilters" ]; do
    eval "set -- \"\$@\" --filter \"\$filter_$i\""
    i=$((i + 1))
done

python3 "$here/plot.py" "$@" || exit 2
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
