#!/bin/sh
# tests/slurm_suite.sh -- a real Slurm (issue 38): a single-node cluster of
# Debian's slurm-wlm and munge, started here in a temporary folder, runs the
# recipes of tools/ on the fake GPU:
#
#   KFORGE=build/kforge sh tests/slurm_suite.sh
#
#   1. the compile-only array (tools/slurm-compile.sbatch: kforge check
#      --compile, a shard per task) fills a cubin cache;
#   2. the tune array (tools/slurm-tune.sbatch), submitted with
#      --dependency=afterok on it, measures from that cache and compiles
#      nothing;
#   3. the merge, with --dependency=afterok on the tune array: its database
#      and summary equal those of an unsharded tune;
#   4. a task of a tune array cancelled (scancel JOBID_K) mid-way resumes
#      where it stopped when submitted again (KFORGE_RUN=JOBID), and the merge
#      again equals the unsharded tune.
#
# The cluster is its own: munged with its own key and socket, slurmctld and
# slurmd on ports free at run time, their state, spool and logs in the
# temporary folder, which is removed at the end; the daemons, and whatever
# job is left, are stopped at the end whatever happens (trap).  Needs root
# (as CI runs), the binaries (apt-get install slurm-wlm munge) and python3;
# where the cluster cannot start, prints "SKIP: <reason>" and passes.
# Prints PASS/FAIL lines and "slurm_suite: N passed, N failed[, N skipped]";
# exits 1 if a check failed.
set -u
KFORGE=${KFORGE:-build/kforge}
case $KFORGE in /*) ;; *) KFORGE=$(pwd)/$KFORGE ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
npass=0
nfail=0
keep=0
T0=$(date +%s)
ok() { echo "PASS $1 ($(($(date +%s) - T0)) s)"; npass=$((npass + 1)); }
bad() { echo "FAIL $1: $2"; nfail=$((nfail + 1)); keep=1; }
skip() {
  echo "SKIP: slurm suite: $1"
  echo "slurm_suite: $npass passed, $nfail failed, 1 skipped"
  exit 0
}

if [ ! -x "$KFORGE" ]; then
  echo "FAIL: $KFORGE not built"; exit 1
fi
[ "$(id -u)" -eq 0 ] || skip "not root (slurmd runs jobs as their user: the suite needs root, as CI runs)"
for b in munged slurmctld slurmd sbatch squeue scancel scontrol sinfo; do
  command -v "$b" > /dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin command -v "$b" > /dev/null 2>&1 ||
    skip "$b not found (apt-get install slurm-wlm munge)"
done
PATH=$PATH:/usr/sbin:/sbin
command -v python3 > /dev/null 2>&1 || skip "python3 not found (it picks free ports)"
"$KFORGE" --version | grep -q NVRTC || skip "NVRTC is not usable here"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-slurm.XXXXXX") || exit 2
# unix sockets (munge's, slurmd's) take paths of at most 107 bytes
CL=$TMP/c
if [ ${#TMP} -gt 60 ]; then
  CL=$(mktemp -d /tmp/kforge-slurm.XXXXXX) || exit 2
fi
CONF=$CL/slurm.conf
# every process of this cluster carries this marker: what the end stops
MARK="KFORGE_SLURM_SUITE=$CL"
pids=""
cleanup() {
  if [ -f "$CONF" ] && [ -n "$pids" ]; then
    env SLURM_CONF="$CONF" scancel --quiet -u "$(id -un)" > /dev/null 2>&1
    i=0
    while [ $i -lt 40 ] && [ -n "$(env SLURM_CONF="$CONF" squeue -h 2>/dev/null)" ]; do
      sleep 0.25; i=$((i + 1))
    done
  fi
  for p in $pids; do kill "$p" 2> /dev/null; done
  for p in $pids; do
    i=0
    while [ $i -lt 40 ] && kill -0 "$p" 2> /dev/null; do sleep 0.25; i=$((i + 1)); done
    kill -9 "$p" 2> /dev/null
  done
  # job steps and jobs left behind (slurmstepd outlives slurmd): by the marker
  for e in $(grep -lzxF "$MARK" /proc/[0-9]*/environ 2> /dev/null); do
    p=${e#/proc/}; p=${p%/environ}
    [ "$p" = $$ ] || kill -9 "$p" 2> /dev/null
  done
  if [ $keep = 0 ]; then
    rm -rf "$TMP" "$CL"
  else
    echo "slurm_suite: files kept in $TMP (cluster: $CL)"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# --- the cluster ------------------------------------------------------------
mkdir -p "$CL/munge" "$CL/state" "$CL/spool" "$CL/log" || exit 2
chmod 700 "$CL" "$CL/munge"
dd if=/dev/urandom of="$CL/munge/munge.key" bs=1024 count=1 2> /dev/null && chmod 400 "$CL/munge/munge.key"
env "$MARK" munged -F --force --socket="$CL/munge/sock" --key-file="$CL/munge/munge.key" \
  --log-file="$CL/log/munged.log" --pid-file="$CL/munge/pid" --seed-file="$CL/munge/seed" \
  > "$CL/log/munged.out" 2>&1 &
pids="$!"
i=0
while [ $i -lt 40 ] && [ ! -S "$CL/munge/sock" ]; do sleep 0.25; i=$((i + 1)); done
[ -S "$CL/munge/sock" ] || skip "munged did not start: $(tail -3 "$CL/log/munged.out" | tr '\n' ' ')"
set -- $(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
CTLD_PORT=$1 SLURMD_PORT=$2
HOST=$(hostname -s 2> /dev/null || hostname)
cat > "$CONF" <<EOF
ClusterName=kforgetest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$CL/munge/sock
StateSaveLocation=$CL/state
SlurmdSpoolDir=$CL/spool
SlurmctldPidFile=$CL/slurmctld.pid
SlurmdPidFile=$CL/slurmd.pid
SlurmctldLogFile=$CL/log/slurmctld.log
SlurmdLogFile=$CL/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MinJobAge=600
InactiveLimit=0
NodeName=kfnode NodeHostname=$HOST NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=cpu Nodes=kfnode Default=YES MaxTime=INFINITE State=UP
EOF
env "$MARK" SLURM_CONF="$CONF" slurmctld -D -c -f "$CONF" > "$CL/log/slurmctld.out" 2>&1 &
pids="$! $pids"
env "$MARK" SLURM_CONF="$CONF" slurmd -D -N kfnode -f "$CONF" > "$CL/log/slurmd.out" 2>&1 &
pids="$! $pids"
sl() { env "$MARK" SLURM_CONF="$CONF" "$@"; }
i=0
while [ $i -lt 80 ] && [ "$(sl sinfo -h -o %T 2> /dev/null)" != idle ]; do sleep 0.25; i=$((i + 1)); done
if [ "$(sl sinfo -h -o %T 2> /dev/null)" != idle ]; then
  skip "the single-node Slurm did not come up in 20 s: $(grep -h error "$CL/log/slurmctld.out" "$CL/log/slurmd.out" 2> /dev/null | grep -v -e pmix -e MPI -e 'state file' -e 'Trying backup' | tail -3 | tr '\n' ' ')"
fi
ok "a single-node Slurm (slurmctld port $CTLD_PORT, slurmd port $SLURMD_PORT, munge socket of its own) is up"

# --- the jobs -----------------------------------------------------------------
W=$TMP/work
mkdir -p "$W" && cd "$W" || exit 2
# every job gets this environment (sbatch exports it): the fake GPU, kforge,
# one cubin cache for the compile and tune arrays
export KFORGE KFORGE_FAKE_GPU=1 KFORGE_CACHE_DIR="$W/cache" KFORGE_DB="$W/tdb" HOME="$W" LC_ALL=C
unset KFORGE_FAULT_INJECT KFORGE_PLANT KFORGE_DEVICES KFORGE_FAKE_GPU_MIXED KFORGE_FAKE_GPU_MS KFORGE_RUN
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX SLURM_ARRAY_JOB_ID
# 8 candidates at 2 sizes; no abandoning, so that shards and the whole
# search measure the same cases
cat > sp.json <<'J'
{"kernel": "reduce", "defaults": {"dtype": "float32", "op": "sum", "n": [100000, "2^22"]},
 "bench": {"warmup": 1, "min_reps": 10, "max_time_s": 0.005},
 "variants": [{"algorithm": "shuffle", "unroll": "full", "block_size": [128, 256],
               "elements_per_thread": [1, 4], "passes": ["multi_kernel", "last_block"]}]}
J
NCAND=8
PER_SHARD=8 # cases: 4 candidates at 2 sizes
TUNE_ARGS="--abandon-above 0"
# this node has no GPU gres and 4 CPUs: the recipes' #SBATCH lines overridden
SB="sbatch --parsable --gres=none --cpus-per-task=1 --time=10"
# waits until none of the jobs given is pending or running (4 minutes at most)
wait_jobs() {
  i=0
  while [ $i -lt 960 ] && [ -n "$(sl squeue -h -j "$1" 2> /dev/null)" ]; do sleep 0.25; i=$((i + 1)); done
}
# a job's (or array task's) state, from slurmctld
state() { sl scontrol show job "$1" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
dbnorm() { python3 "$ROOT/tests/golden/normalize.py" db "$1"/*.json; }
# a summary without the lines of how it was measured (line 1, then from "best:")
summary() { head -1 "$1"; sed -n '/^best:/,$p' "$1"; }
lines() { if [ -f "$1" ]; then grep -c . "$1"; else echo 0; fi; }

# 1-3: compile array, then the tune array after it, then the merge after that
cj=$(sl $SB --array=0-1 "$ROOT/tools/slurm-compile.sbatch" sp.json 2> sb1.err)
tj=$(sl $SB --array=0-1 --dependency=afterok:$cj "$ROOT/tools/slurm-tune.sbatch" sp.json $TUNE_ARGS 2> sb2.err)
mj=$(sl $SB --dependency=afterok:$tj --output=merge-%j.log --error=merge-%j.err \
  --wrap "\"$KFORGE\" merge kforge-tune-$tj-*.jsonl --results merged.jsonl --db mdb" 2> sb3.err)
if [ -z "$cj" ] || [ -z "$tj" ] || [ -z "$mj" ]; then
  bad "sbatch" "$(cat sb1.err sb2.err sb3.err)"
else
  wait_jobs "$cj,$tj,$mj"
  c0=kforge-compile-$cj-0.log c1=kforge-compile-$cj-1.log
  if [ "$(state "$cj")" = COMPLETED ] && grep -q 'shard 1/2' "$c0" && grep -q 'shard 2/2' "$c1" &&
     grep -q 'Slurm job array task 1 of 2' "$c0" &&
     [ "$(cat "$c0" "$c1" | grep -c '^  compiled  ')" -eq $NCAND ] &&
     [ "$(ls cache | grep -c '\.cubin$')" -eq $((NCAND + 1)) ]; then # and the output check's
    ok "compile-only array (2 tasks): shards 1/2 and 2/2, $NCAND variants compiled into one cache"
  else
    bad "compile array" "state=$(state "$cj") $(ls) $(cat "$c0" "$c1" 2> /dev/null | grep -v '^  ' | head -6)"
  fi
  t0=kforge-tune-$tj-0.log t1=kforge-tune-$tj-1.log
  n0=$(lines "kforge-tune-$tj-0.jsonl") n1=$(lines "kforge-tune-$tj-1.jsonl")
  if [ "$(state "$tj")" = COMPLETED ] && grep -q 'shard 1/2' "$t0" && grep -q 'shard 2/2' "$t1" &&
     [ $((n0 + n1)) -eq $((NCAND * 2)) ] && grep -q 'cubins: 0 compiled now' "$t0" &&
     grep -q 'cubins: 0 compiled now' "$t1"; then
    ok "tune array after the compile array (afterok): shards 1/2 and 2/2, $n0 + $n1 cases, every cubin from the cache"
  else
    bad "tune array" "state=$(state "$tj") cases=$n0+$n1 $(grep -h -e shard -e cubins -e kforge "$t0" "$t1" 2> /dev/null | head -6)"
  fi
  # the unsharded tune, outside Slurm, from the same cache
  "$KFORGE" tune sp.json --strategy exhaustive $TUNE_ARGS --between 0 --results u.jsonl --db udb > u.txt 2> u.err ||
    bad "the unsharded tune" "$(tail -3 u.err)"
  ml=merge-$mj.log
  if [ "$(state "$mj")" = COMPLETED ] && [ "$(lines merged.jsonl)" -eq $((NCAND * 2)) ] &&
     [ -n "$(summary u.txt | grep '^best:')" ] && [ "$(summary u.txt)" = "$(summary "$ml")" ]; then
    ok "merge after the tune array (afterok): the unsharded tune's summary"
  else
    bad "merge summary" "state=$(state "$mj") lines=$(lines merged.jsonl) $(summary u.txt > us.txt; summary "$ml" | diff us.txt - | head -6)"
  fi
  dbnorm udb > u.norm 2>&1
  dbnorm mdb > m.norm 2>&1
  if [ -s u.norm ] && cmp -s u.norm m.norm; then
    ok "the merged database equals the unsharded tune's (date and how aside)"
  else
    bad "merged database" "$(diff u.norm m.norm | head -6)"
  fi
fi

# 4. a task cancelled mid-way, submitted again, resumes
rm -rf mdb
export KFORGE_FAKE_GPU_MS=500 # 8 cases a shard: about 4 s
rj=$(sl $SB --array=0-1 "$ROOT/tools/slurm-tune.sbatch" sp.json $TUNE_ARGS 2> sb4.err)
unset KFORGE_FAKE_GPU_MS
if [ -z "$rj" ]; then
  bad "sbatch (to cancel)" "$(cat sb4.err)"
else
  f1=kforge-tune-$rj-1.jsonl
  i=0
  while [ $i -lt 480 ] && [ "$(lines "$f1")" -lt 4 ]; do sleep 0.25; i=$((i + 1)); done
  sl scancel "${rj}_1"
  wait_jobs "$rj"
  done1=$(lines "$f1")
  st1=$(state "${rj}_1")
  if [ "$st1" = CANCELLED ] && [ "$done1" -ge 4 ] && [ "$done1" -lt $PER_SHARD ]; then
    ok "scancel ${rj}_1 stopped the task with $done1 of its $PER_SHARD cases done"
  else
    bad "scancel" "state=$st1 cases=$done1 $(tail -3 "kforge-tune-$rj-1.log" 2> /dev/null)"
  fi
  aj=$(sl $SB --array=1 --export=ALL,KFORGE_RUN=$rj "$ROOT/tools/slurm-tune.sbatch" sp.json $TUNE_ARGS 2> sb5.err)
  mj2=$(sl $SB --dependency=afterok:${rj}_0:$aj --output=merge-%j.log --error=merge-%j.err \
    --wrap "\"$KFORGE\" merge kforge-tune-$rj-*.jsonl --results merged2.jsonl --db mdb" 2> sb6.err)
  if [ -z "$aj" ] || [ -z "$mj2" ]; then
    bad "sbatch (again)" "$(cat sb5.err sb6.err)"
  else
    wait_jobs "$aj,$mj2"
    al=kforge-tune-$aj-1.log
    taken=$(sed -n "s/.*taken from $f1: \([0-9]*\).*/\1/p" "$al")
    if [ "$(state "$aj")" = COMPLETED ] && grep -q 'shard 2/2' "$al" && [ "${taken:-0}" -ge 1 ] &&
       [ "$(lines "$f1")" -eq $PER_SHARD ] && [ ! -f "kforge-tune-$aj-1.jsonl" ]; then
      ok "submitted again (--array=1, KFORGE_RUN=$rj): shard 2/2 resumed from its file ($taken candidates taken, $PER_SHARD cases in all)"
    else
      bad "resume" "state=$(state "$aj") taken=$taken cases=$(lines "$f1") $(grep -h -e shard -e taken -e error -e usage "$al" 2> /dev/null | head -4)"
    fi
    dbnorm mdb > m2.norm 2>&1
    if [ "$(state "$mj2")" = COMPLETED ] && [ "$(summary u.txt)" = "$(summary "merge-$mj2.log")" ] &&
       [ -s u.norm ] && cmp -s u.norm m2.norm; then
      ok "the merge of the resumed array equals the unsharded tune (summary and database)"
    else
      bad "merge after resume" "state=$(state "$mj2") $(summary u.txt > us.txt; summary "merge-$mj2.log" | diff us.txt - | head -6)"
    fi
  fi
fi

echo "slurm_suite: $npass passed, $nfail failed"
[ $nfail -eq 0 ]
