#!/bin/sh
export LD_LIBRARY_PATH=$PWD/.carry/lib KFORGE_CACHE_DIR=/tmp/kc
K=$PWD/.carry/bin/kforge
nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv,noheader; nproc
s=$(date +%s.%N); $K check configs/tune-reduce.json --set n=2^28 --compile --arch sm_90 > /dev/null; echo "warm cache: $(echo "$(date +%s.%N) - $s" | bc) s"
for round in 1 2; do
  for dev in "--device 0" "--devices all"; do
    f=$OUT/t-$round-$(echo $dev | tr -d ' -').jsonl
    s=$(date +%s.%N)
    $K tune configs/tune-reduce.json --set n=2^28 --no-resume --no-db $dev --results $f --format jsonl > $f.out 2> $f.err
    rc=$?
    w=$(echo "$(date +%s.%N) - $s" | bc)
    echo "round $round $dev: rc=$rc wall=$w s lines=$(grep -c . $f) $(grep '"event": "summary"' $f.out | head -c 600)"
  done
done
