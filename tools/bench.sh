#!/bin/sh
# bench.sh -- the seeds' table on the GPU: every kernel of configs/seeds.json at
# the seeds' sizes (2^22 and 2^25 elements), float32 sum, L2 flushed before
# each repetition, every launch timed; time, bandwidth, % of peak, step and
# cumulative speedup.  Full results in bench-seeds.jsonl.
#   make bench            (or: sh tools/bench.sh [extra kforge options])
set -eu
KFORGE=${KFORGE:-build/kforge}
"$KFORGE" info
echo
date -u +"date: %Y-%m-%dT%H:%M:%SZ"
echo "command: $KFORGE run configs/seeds.json --speedup --results bench-seeds.jsonl --no-resume $*"
echo
"$KFORGE" run configs/seeds.json --speedup --results bench-seeds.jsonl --no-resume "$@"
