#!/bin/sh
# rows_proto.sh -- builds tools/rows_proto.cu once per configuration (-D
# flags), checks every build on the correctness shapes, sweeps the timed
# shapes, runs the CUB and PyTorch baselines with the same method, and prints
# the table: per shape the best kforge configuration against the best CUB
# and PyTorch, then every correctness result.
#
#   sh tools/rows_proto.sh [OUTDIR]          (default rows-out)
#
# Environment:
#   NVCC (nvcc), ARCH (sm_90), BIN (build-rows: where the binaries go)
#   JOBS          parallel compiles (nproc)
#   CCCL_DIR      newer CCCL (>= 3.2) checkout/export with cub/, thrust/,
#                 libcudacxx/include: also builds the fixed-segment-size CUB
#                 baseline (rows_cub_fixed)
#   PHASES        any of: build check sweep base table (default: all)
#   QUICK=1       fewer configurations (one per map)
#   PYTHON        (python3) for tools/rows_torch.py; skipped without torch
#
# Outputs in OUTDIR: raw.log (every ROW line), err.log (stderr of every
# program), table.txt (the table printed last).
set -u
cd "$(dirname "$0")/.."
OUT=${1:-rows-out}
NVCC=${NVCC:-nvcc}
ARCH=${ARCH:-sm_90}
BIN=${BIN:-build-rows}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
PHASES=${PHASES:-build check sweep base table}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT" "$BIN"
RAW=$OUT/raw.log
ERR=$OUT/err.log
has() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }

# --- shapes -------------------------------------------------------------------
# Timed: 7 column counts at 2^26 and at 2^20 elements in all (row stride = cols).
# Tag letter per column count: a 4, b 32, c 128, d 1024, e 8192, f 65536, g 2^20.
shapes_for() { # TAGS -> --shape args for both totals
  s=""
  case $1 in *a*) s="$s --shape 2^24,4 --shape 2^18,4" ;; esac
  case $1 in *b*) s="$s --shape 2^21,32 --shape 2^15,32" ;; esac
  case $1 in *c*) s="$s --shape 2^19,128 --shape 2^13,128" ;; esac
  case $1 in *d*) s="$s --shape 2^16,1024 --shape 2^10,1024" ;; esac
  case $1 in *e*) s="$s --shape 2^13,8192 --shape 128,8192" ;; esac
  case $1 in *f*) s="$s --shape 2^10,65536 --shape 16,65536" ;; esac
  case $1 in *g*) s="$s --shape 64,2^20 --shape 1,2^20" ;; esac
  echo "$s"
}
# Correctness (not timed): rows=1, cols=1, cols=7 (VW=4 tail), a misaligned
# base, row stride cols+1 (misaligned rows), rows=70000 (> 65535) cols=3,
# long misaligned rows (split prefix/tail), aligned rows with a tail, and
# rows = 2^24+3 cols=2.
CHECK_SMALL="--check 1,1000 --check 1,1 --check 1000,1 --check 333,7 --check 1000,7,7,1 --check 513,64,65 \
--check 70000,3 --check 3,100003,100005,3 --check 5,4099,4099,2 --check 7,70001,70003,1 --check 1000,6,8 --check 77,37,40"
CHECK_BIG="--check 2^24+3,2"

# --- configurations ---------------------------------------------------------------
# "TAGS FLAGS" (TAGS: the timed shapes it runs; '-' = correctness only),
# run in this order (DEADLINE skips the later timed ones, never the '-').
# Defaults: float32 sum, KF_VW=4, KF_LOAD=0, KF_BS=256, KF_EPT=1, KF_RPG=1.
configs() {
cat <<'EOF'
-   -DKF_ROWS_MAP=0 -DKF_RPG=2 -DKF_VW=1
-   -DKF_ROWS_MAP=0 -DKF_RPG=3 -DKF_VW=2 -DKF_EPT=2 -DKF_PIPE=1
-   -DKF_ROWS_MAP=1 -DKF_GROUP=2 -DKF_VW=2 -DKF_RPG=2
-   -DKF_ROWS_MAP=1 -DKF_GROUP=16 -DKF_VW=1 -DKF_EPT=3 -DKF_PIPE=1
-   -DKF_ROWS_MAP=2 -DKF_BS=64 -DKF_VW=2 -DKF_EPT=3 -DKF_RPG=2 -DKF_BLOCK_REDUCE=1
-   -DKF_ROWS_MAP=2 -DKF_BS=32 -DKF_VW=1 -DKF_RPG=2 -DKF_PIPE=1
-   -DKF_ROWS_MAP=3 -DKF_BS=32 -DKF_VW=2 -DKF_EPT=2 -DKF_SPLIT_COMBINE=1
-   -DKF_ROWS_MAP=3 -DKF_BS=64 -DKF_VW=1 -DKF_SPLIT_COMBINE=0
efg -DKF_ROWS_MAP=2 -DKF_BS=512 -DKF_EPT=4 -DKF_LOAD=3
ef  -DKF_ROWS_MAP=2 -DKF_BS=512 -DKF_EPT=4 -DKF_LOAD=2
ef  -DKF_ROWS_MAP=2 -DKF_BS=512 -DKF_EPT=8 -DKF_LOAD=3
ef  -DKF_ROWS_MAP=2 -DKF_BS=1024 -DKF_EPT=2 -DKF_LOAD=3
defg -DKF_ROWS_MAP=3 -DKF_BS=512 -DKF_EPT=4 -DKF_SPLIT_COMBINE=1 -DKF_LOAD=3
defg -DKF_ROWS_MAP=3 -DKF_BS=512 -DKF_EPT=4 -DKF_SPLIT_COMBINE=0 -DKF_LOAD=3
efg -DKF_ROWS_MAP=3 -DKF_BS=512 -DKF_EPT=4 -DKF_SPLIT_COMBINE=1 -DKF_LOAD=2
efg -DKF_ROWS_MAP=3 -DKF_BS=512 -DKF_EPT=4 -DKF_SPLIT_COMBINE=1 -DKF_LOAD=3 -DKF_MIN_BLOCKS=3
efg -DKF_ROWS_MAP=3 -DKF_BS=512 -DKF_EPT=8 -DKF_SPLIT_COMBINE=1 -DKF_LOAD=3
efg -DKF_ROWS_MAP=3 -DKF_BS=256 -DKF_EPT=8 -DKF_SPLIT_COMBINE=1 -DKF_LOAD=3
efg -DKF_ROWS_MAP=3 -DKF_BS=256 -DKF_EPT=4 -DKF_SPLIT_COMBINE=1 -DKF_LOAD=3
efg -DKF_ROWS_MAP=3 -DKF_BS=1024 -DKF_EPT=2 -DKF_SPLIT_COMBINE=1 -DKF_LOAD=3
efg -DKF_ROWS_MAP=3 -DKF_BS=1024 -DKF_EPT=4 -DKF_SPLIT_COMBINE=1 -DKF_LOAD=3
efg -DKF_ROWS_MAP=3 -DKF_BS=1024 -DKF_EPT=2 -DKF_SPLIT_COMBINE=0 -DKF_LOAD=3
efg -DKF_ROWS_MAP=3 -DKF_BS=512 -DKF_EPT=4 -DKF_SPLIT_COMBINE=1 -DKF_LOAD=3 -DKF_BLOCK_REDUCE=1
d   -DKF_ROWS_MAP=2 -DKF_BS=256 -DKF_EPT=1 -DKF_RPG=4 -DKF_LOAD=3
d   -DKF_ROWS_MAP=2 -DKF_BS=128 -DKF_EPT=2 -DKF_RPG=4 -DKF_LOAD=3
d   -DKF_ROWS_MAP=2 -DKF_BS=256 -DKF_EPT=2 -DKF_RPG=2 -DKF_LOAD=3
d   -DKF_ROWS_MAP=2 -DKF_BS=256 -DKF_EPT=1 -DKF_RPG=4 -DKF_LOAD=2
d   -DKF_ROWS_MAP=2 -DKF_BS=256 -DKF_EPT=1 -DKF_RPG=2 -DKF_LOAD=3 -DKF_PIPE=1
d   -DKF_ROWS_MAP=1 -DKF_GROUP=32 -DKF_EPT=8 -DKF_LOAD=3
d   -DKF_ROWS_MAP=1 -DKF_GROUP=32 -DKF_EPT=8 -DKF_RPG=2 -DKF_LOAD=3
d   -DKF_ROWS_MAP=1 -DKF_GROUP=32 -DKF_EPT=4 -DKF_LOAD=3 -DKF_PIPE=1
d   -DKF_ROWS_MAP=1 -DKF_GROUP=32 -DKF_EPT=8 -DKF_LOAD=3 -DKF_PIPE=1
c   -DKF_ROWS_MAP=1 -DKF_GROUP=32 -DKF_RPG=2 -DKF_LOAD=3
c   -DKF_ROWS_MAP=1 -DKF_GROUP=32 -DKF_RPG=4 -DKF_LOAD=3
c   -DKF_ROWS_MAP=1 -DKF_GROUP=16 -DKF_EPT=2 -DKF_RPG=2 -DKF_LOAD=3
c   -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_EPT=4 -DKF_RPG=2 -DKF_LOAD=3
c   -DKF_ROWS_MAP=1 -DKF_GROUP=32 -DKF_RPG=2 -DKF_LOAD=3 -DKF_PIPE=1
c   -DKF_ROWS_MAP=1 -DKF_GROUP=32 -DKF_RPG=1 -DKF_LOAD=3 -DKF_PIPE=1
c   -DKF_ROWS_MAP=1 -DKF_GROUP=16 -DKF_EPT=2 -DKF_RPG=1 -DKF_LOAD=3 -DKF_PIPE=1
c   -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_EPT=4 -DKF_RPG=1 -DKF_LOAD=3 -DKF_PIPE=1
b   -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_RPG=4 -DKF_LOAD=3
b   -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_RPG=4 -DKF_LOAD=3 -DKF_BS=128
b   -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_RPG=2 -DKF_LOAD=3
b   -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_RPG=4 -DKF_LOAD=2
b   -DKF_ROWS_MAP=1 -DKF_GROUP=4 -DKF_EPT=2 -DKF_RPG=4 -DKF_LOAD=3
b   -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_RPG=2 -DKF_LOAD=3 -DKF_PIPE=1
b   -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_RPG=4 -DKF_LOAD=3 -DKF_PIPE=1
b   -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_RPG=1 -DKF_LOAD=3 -DKF_PIPE=1
b   -DKF_ROWS_MAP=1 -DKF_GROUP=4 -DKF_EPT=2 -DKF_RPG=2 -DKF_LOAD=3 -DKF_PIPE=1
b   -DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_RPG=2 -DKF_LOAD=2 -DKF_PIPE=1
a   -DKF_ROWS_MAP=0 -DKF_RPG=2 -DKF_LOAD=3
a   -DKF_ROWS_MAP=0 -DKF_RPG=4 -DKF_LOAD=3
a   -DKF_ROWS_MAP=0 -DKF_RPG=4 -DKF_LOAD=2
a   -DKF_ROWS_MAP=0 -DKF_RPG=4 -DKF_LOAD=3 -DKF_BS=128
a   -DKF_ROWS_MAP=0 -DKF_RPG=2 -DKF_LOAD=3 -DKF_PIPE=1
a   -DKF_ROWS_MAP=0 -DKF_RPG=4 -DKF_LOAD=3 -DKF_PIPE=1
a   -DKF_ROWS_MAP=0 -DKF_RPG=2 -DKF_LOAD=2 -DKF_PIPE=1
a   -DKF_ROWS_MAP=0 -DKF_RPG=1 -DKF_LOAD=3 -DKF_PIPE=1
EOF
# other dtypes and ops: correctness only
for dt in "-DRP_DTYPE=1 -DKF_OP=0" "-DRP_DTYPE=0 -DKF_OP=2" "-DRP_DTYPE=2 -DKF_OP=0" "-DRP_DTYPE=1 -DKF_OP=1"; do
  for c in "-DKF_ROWS_MAP=0 -DKF_RPG=2" "-DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_RPG=2" "-DKF_ROWS_MAP=1 -DKF_GROUP=8 -DKF_RPG=2 -DKF_PIPE=1" \
           "-DKF_ROWS_MAP=1 -DKF_GROUP=32 -DKF_EPT=4" "-DKF_ROWS_MAP=2 -DKF_EPT=2 -DKF_RPG=2 -DKF_BLOCK_REDUCE=1" \
           "-DKF_ROWS_MAP=3 -DKF_BS=512 -DKF_EPT=4 -DKF_SPLIT_COMBINE=0" \
           "-DKF_ROWS_MAP=3 -DKF_BS=512 -DKF_EPT=4 -DKF_SPLIT_COMBINE=1"; do
    echo "- $dt $c"
  done
done
}

name_of() { # FLAGS -> binary name
  echo "$*" | sed -e 's/-D//g' -e 's/KF_ROWS_MAP=/m/' -e 's/KF_//g' -e 's/RP_DTYPE=/dt/' -e 's/ /./g' -e 's/=//g' | tr 'A-Z' 'a-z'
}

CONFIGS=$(configs)
if [ "${QUICK:-0}" = 1 ]; then
  CONFIGS=$(echo "$CONFIGS" | awk '$1 != "-"' | awk 'NR % 6 == 1')
fi

# --- build ------------------------------------------------------------------------
if has build; then
  echo "building $(echo "$CONFIGS" | wc -l) configurations + baselines in $BIN ($JOBS jobs)" >&2
  echo "$CONFIGS" | while read -r tags flags; do
    n=$(name_of $flags)
    [ -x "$BIN/rp_$n" ] && [ "$BIN/rp_$n" -nt tools/rows_proto.cu ] && [ "$BIN/rp_$n" -nt kernel_src/reduce_rows/reduce_rows.cuh ] &&
      [ "$BIN/rp_$n" -nt kernel_src/common.cuh ] && [ "$BIN/rp_$n" -nt tools/rows_bench.h ] && continue
    echo "$NVCC -O3 -std=c++17 -arch=$ARCH -cudart shared $flags tools/rows_proto.cu -o $BIN/rp_$n"
  done > "$BIN/build.cmds"
  [ -x "$BIN/rows_cub" ] && [ "$BIN/rows_cub" -nt tools/rows_cub.cu ] && [ "$BIN/rows_cub" -nt tools/rows_bench.h ] ||
    echo "$NVCC -O3 -std=c++17 -arch=$ARCH -cudart shared tools/rows_cub.cu -o $BIN/rows_cub" >> "$BIN/build.cmds"
  if [ -n "${CCCL_DIR:-}" ]; then
    [ -x "$BIN/rows_cub_fixed" ] && [ "$BIN/rows_cub_fixed" -nt tools/rows_cub.cu ] && [ "$BIN/rows_cub_fixed" -nt tools/rows_bench.h ] ||
      echo "$NVCC -O3 -std=c++17 -arch=$ARCH -cudart shared -DKF_CCCL_FIXED -I$CCCL_DIR/cub -I$CCCL_DIR/thrust -I$CCCL_DIR/libcudacxx/include tools/rows_cub.cu -o $BIN/rows_cub_fixed" >> "$BIN/build.cmds"
  fi
  if [ -s "$BIN/build.cmds" ]; then
    tr '\n' '\0' < "$BIN/build.cmds" | xargs -0 -P "$JOBS" -I{} sh -c '{} || echo "BUILD FAILED: {}" >&2'
  fi
fi

# --- check and sweep ------------------------------------------------------------------
START=$(date +%s)
DEADLINE=${DEADLINE:-0} # seconds from the start after which no new kforge build is run (0: none)
late() { [ "$DEADLINE" -gt 0 ] && [ $(( $(date +%s) - START )) -ge "$DEADLINE" ]; }
run() { # logs ROW lines to RAW, the rest to ERR; 300 s at most per program
  timeout 300 "$@" >> "$RAW" 2>> "$ERR"
  rc=$?
  [ $rc -eq 0 ] || echo "rc=$rc: $*" >> "$ERR"
}
if has check || has sweep; then
  echo "$CONFIGS" | while read -r tags flags; do
    b=$BIN/rp_$(name_of $flags)
    [ -x "$b" ] || { echo "ROW shape=- impl=kforge cfg=$(name_of $flags) status=NOBUILD" >> "$RAW"; continue; }
    if [ "$tags" != "-" ] && late; then echo "deadline: skipped $b" >> "$ERR"; continue; fi
    case "$flags" in *ROWS_MAP=3*) sp="0,1,3,7,1000" ;; *) sp=0 ;; esac
    has check && run "$b" $CHECK_SMALL --waves 0,1 --splits "$sp"
    if has sweep && [ "$tags" != "-" ]; then
      case "$flags" in *ROWS_MAP=3*) run "$b" $(shapes_for "$tags") --waves 0,1,2 --splits 0,1,2,4,8,16,32,64,128 ;;
                       *) run "$b" $(shapes_for "$tags") --waves 0,1,2,4,8 ;; esac
    fi
  done
fi

# --- baselines ----------------------------------------------------------------------
ALL=$(shapes_for abcdefg)
if has base; then
  for b in "$BIN/rows_cub" "$BIN/rows_cub_fixed"; do
    [ -x "$b" ] && run "$b" --op sum,max $ALL
  done
  if "$PYTHON" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    run "$PYTHON" tools/rows_torch.py --op sum,max $ALL
  else
    echo "PyTorch with CUDA not found: torch baseline skipped" >&2
  fi
fi

# rows = 2^24+3: one build per map and dtype (the '-' builds and the first of each map)
if has check; then
  echo "$CONFIGS" | awk '$1 == "-" || !seen[$2]++' | while read -r tags flags; do
    b=$BIN/rp_$(name_of $flags)
    [ -x "$b" ] && run "$b" $CHECK_BIG --waves 0,1 --splits 0,2
  done
fi

# --- table ----------------------------------------------------------------------------
if has table; then
  awk '
    NR == FNR {  # first pass: builds with any wrong result are never ranked
      if ($1 == "ROW" && kv($0, "impl") == "kforge" && kv($0, "status") != "PASS")
        failcfg[kv($0, "dtype") "/" kv($0, "op") "/" kv($0, "cfg")] = 1
      next
    }
    function kv(line, key,   i, n, f, p) {
      n = split(line, f, " ")
      for (i = 1; i <= n; i++) { p = index(f[i], "="); if (substr(f[i], 1, p - 1) == key) return substr(f[i], p + 1) }
      return ""
    }
    /^ROW / {
      st = kv($0, "status"); impl = kv($0, "impl"); sh = kv($0, "shape"); op = kv($0, "op"); dt = kv($0, "dtype")
      g = kv($0, "gbps") + 0
      if (impl == "kforge") {
        cfg = kv($0, "cfg"); ckey = dt "/" op "/" cfg; ck[ckey] = 1
        if (st == "PASS") pass[ckey]++; else { fail[ckey]++; bad[++nbad] = $0 }
        if (st == "PASS" && g > 0 && dt == "float32" && op == "sum" && !(ckey in failcfg)) {
          key = sh
          if (!(key in shp)) { shp[key] = 1; order[++ns] = key; tot[key] = kv($0, "total") }
          if (g > best[key]) { best[key] = g; bus[key] = kv($0, "us"); bcfg[key] = cfg " w" kv($0, "waves") " s" kv($0, "splits"); bdet[key] = kv($0, "det"); bio[key] = kv($0, "io_gbps") }
        }
      } else {
        if (st != "PASS") bad[++nbad] = $0
        key = sh SUBSEP op SUBSEP impl
        if (st == "PASS" && dt == "float32") { bg[key] = g; bu[key] = kv($0, "us") }
        if (op == "sum" && st == "PASS" && g > cubbest[sh] && impl ~ /^cub/) { cubbest[sh] = g; cubimpl[sh] = impl }
        if (op == "sum" && st == "PASS" && impl ~ /^torch/) { tbest[sh] = g; timpl[sh] = impl }
        if (op == "max" && st == "PASS") { mx[sh SUBSEP impl] = g; mximpl[impl] = 1 }
        if (!(sh in shp) && st == "PASS") { shp[sh] = 1; order[++ns] = sh; tot[sh] = kv($0, "total") }
      }
    }
    END {
      printf "float32 sum; GB/s = rows*cols*4 / median (io: + rows*4 written); L2 flushed, events, median of 50\n"
      printf "%-14s %-6s %8s %8s %8s %-46s %3s | %8s %-22s | %8s | %5s %6s\n", "shape", "total", "kforge", "io", "us", "best kforge config (w=waves s=splits)", "det", "CUB", "impl", "torch", "xCUB", "xtorch"
      for (i = 1; i <= ns; i++) {
        k = order[i]
        r1 = cubbest[k] > 0 && best[k] > 0 ? sprintf("%.2f", best[k] / cubbest[k]) : "-"
        r2 = tbest[k] > 0 && best[k] > 0 ? sprintf("%.2f", best[k] / tbest[k]) : "-"
        printf "%-14s %-6s %8.1f %8s %8s %-46s %3s | %8.1f %-22s | %8.1f | %5s %6s\n", k, tot[k], best[k], bio[k], bus[k], bcfg[k], bdet[k], cubbest[k], cubimpl[k], tbest[k], r1, r2
      }
      printf "\nbaselines, every impl (GB/s; sum / max):\n"
      for (key in bg) { split(key, p, SUBSEP); line[p[1] " " p[3]] = line[p[1] " " p[3]] sprintf(" %s=%.1f(%sus)", p[2], bg[key], bu[key]) }
      n = 0; for (l in line) keys[++n] = l
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (keys[j] < keys[i]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
      for (i = 1; i <= n; i++) printf "  %-40s %s\n", keys[i], line[keys[i]]
      nc = 0; np = 0; nf = 0
      for (c in ck) { nc++; if (c in fail) nf++; else np++ }
      printf "\ncorrectness: %d kforge builds, %d all PASS, %d with a FAIL; PASS lines %d\n", nc, np, nf, 0 + sumpass()
      for (i = 1; i <= nbad; i++) print "  FAIL: " bad[i]
    }
    function sumpass(   c, s) { s = 0; for (c in pass) s += pass[c]; return s }
  ' "$RAW" "$RAW" | tee "$OUT/table.txt"
fi
