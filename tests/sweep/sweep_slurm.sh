#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Slurm job array `swaplab sweep emit --engine slurm` writes, run on a
# real Slurm: a private one-node cluster (slurmctld, slurmd and munged of
# Debian's slurm-wlm 22.05 and munge) started in a temporary directory, with
# its own slurm.conf (SLURM_CONF), state, spool, pid and log files, munge
# socket and key, and ports nobody listens on; torn down on any exit.
# `sbatch --test-only` accepts the script; `sbatch --wait` runs the array:
# task i ran line i + 1 of jobs.txt, every point has its result, and the
# merged table equals the one of a local `swaplab sweep -j 2` of the same
# spec in every column but the measured ones (wall-clock time); a second
# sbatch of the finished sweep runs no point again.
# Skips (77), saying why, without root, without the packages, or where a
# daemon cannot run here (the reason from its log).
# Usage: sweep_slurm.sh SWAPLAB SOURCE_DIR
set -euo pipefail
source "$(dirname "$0")/../lib/test_env.sh" "$@"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (slurmd runs the jobs as their user; SlurmUser=root)"
for b in slurmctld slurmd sbatch sinfo scancel munged mungekey python3; do
  command -v "$b" >/dev/null ||
    skip "no $b (Debian packages slurmctld slurmd slurm-client munge; scripts/setup installs them where it can)"
done
parallel --version 2>/dev/null | grep -q "GNU parallel" ||
  skip "GNU parallel is not installed (the local run to compare with; Debian package parallel)"

C=$W/cluster
mkdir -p "$C/state" "$C/spool"
chmod 755 "$W" "$C"  # munged wants its socket's directory searchable by all
export SLURM_CONF=$C/slurm.conf
# Every process of this cluster has SLURM_CONF=$C/slurm.conf in its
# environment (the daemons, slurmstepd, the job scripts and the points):
# cleanup ends those, by pid, and munged by its pid file; nothing else.
ours() {
  grep -lzxF "SLURM_CONF=$C/slurm.conf" /proc/[0-9]*/environ 2>/dev/null |
    sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' | grep -vx "$$" || true
}
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
cleanup() { # run on exit by test_env.sh, before W is removed
  set +e
  alive "$C/slurmctld.pid" && timeout 10 scancel --quiet --full --signal=KILL \
    --jobname=swaplab-slurm_test >/dev/null 2>&1
  local pids
  pids=$(ours)
  [ -n "$pids" ] && kill $pids 2>/dev/null
  local munged
  munged=$(cat "$C/munged.pid" 2>/dev/null)
  [ -n "$munged" ] && kill "$munged" 2>/dev/null
  for _ in $(seq 50); do
    [ -z "$(ours)" ] && ! { [ -n "$munged" ] && kill -0 "$munged" 2>/dev/null; } && break
    sleep 0.1
  done
  pids=$(ours)
  [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
  [ -n "$munged" ] && kill -KILL "$munged" 2>/dev/null
}
# A daemon that does not come up: its log says why; that is this
# machine's limit, not swaplab's (the test then skips, quoting it).
cannot() { # WHAT LOG...
  local what=$1
  shift
  echo "--- logs"
  tail -n 15 "$@" 2>/dev/null
  skip "$what cannot run here: $(grep -hiE 'error|fatal' "$@" 2>/dev/null | grep -viE 'pmix|MPI:|MailProg|state file|backup state|No such file' | tail -1)"
}

# munge: its own key and socket.
mungekey -c -k "$C/munge.key" >/dev/null 2>&1 || fail "mungekey"
munged --socket="$C/munge.sock" --key-file="$C/munge.key" --pid-file="$C/munged.pid" \
  --log-file="$C/munged.log" --seed-file="$C/munged.seed" 2>>"$C/munged.log" ||
  cannot munged "$C/munged.log"
for _ in $(seq 50); do [ -S "$C/munge.sock" ] && break; sleep 0.1; done
munge -S "$C/munge.sock" -n 2>/dev/null | unmunge -S "$C/munge.sock" >/dev/null 2>&1 ||
  cannot munged "$C/munged.log"

# Two ports nobody listens on, the node's CPUs as slurmd sees them.
read -r P1 P2 < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
CPUS=$(slurmd -C 2>/dev/null | sed -n 's/.* CPUs=\([0-9]*\).*/\1/p')
[ -n "$CPUS" ] || CPUS=1
HOST=$(hostname -s)  # slurmctld runs only where SlurmctldHost names this host
cat >"$SLURM_CONF" <<EOF
ClusterName=swaplabtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$P1
SlurmdPort=$P2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$C/munge.sock
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool
SlurmctldPidFile=$C/slurmctld.pid
SlurmdPidFile=$C/slurmd.pid
SlurmctldLogFile=$C/slurmctld.log
SlurmdLogFile=$C/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
NodeName=swaplab1 NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=swaplab Nodes=swaplab1 Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -i 2>>"$C/slurmctld.log" || cannot slurmctld "$C/slurmctld.log"
slurmd -N swaplab1 2>>"$C/slurmd.log" || cannot slurmd "$C/slurmd.log"
# Up within a minute, or a daemon gone: its log says why (a client call
# without a controller retries for a minute: each has a timeout).
state=
start=$SECONDS
while [ "$state" != idle ]; do
  if [ $((SECONDS - start)) -ge 3 ]; then
    alive "$C/slurmctld.pid" || cannot slurmctld "$C/slurmctld.log"
    alive "$C/slurmd.pid" || cannot slurmd "$C/slurmd.log"
  fi
  [ $((SECONDS - start)) -lt 60 ] ||
    cannot "the node (state '${state:-none}')" "$C/slurmctld.log" "$C/slurmd.log"
  sleep 0.2
  state=$(timeout 5 sinfo -h -n swaplab1 -o %T 2>/dev/null || true)
done

# The sweep: 2 hole sizes × 2 seeds.
cat >"$W/spec.json" <<'JSON'
{
  "name": "slurm test",
  "base": "BASE",
  "axes": [
    {"name": "hole", "path": "/aging/0/hole", "values": ["16K", "64K"]},
    {"name": "seed", "seed": true, "values": [1, 2]}
  ],
  "derived": [{"name": "bios gain", "ratio": ["rfc/bios", "base/bios"]}]
}
JSON
sed -i "s|BASE|$2/tests/sweep/data/holes.json|" "$W/spec.json"
N=4
"$S" sweep "$W/spec.json" --out "$W/local" -j 2 2>"$W/err" || fail "local sweep: $(cat "$W/err")"

D=$W/slurm
"$S" sweep "$W/spec.json" --out "$D" --prepare 2>/dev/null
"$S" sweep emit --engine slurm "$D" >/dev/null
sed -i 's/^#SBATCH --job-name=.*/#SBATCH --job-name=swaplab-slurm_test/' "$D/sweep.sbatch"
cd "$W"
timeout 60 sbatch --test-only "$D/sweep.sbatch" 2>"$W/test-only" ||
  fail "sbatch --test-only: $(cat "$W/test-only")"
grep -q "to start at" "$W/test-only" || fail "sbatch --test-only: $(cat "$W/test-only")"
ls "$D/points" | grep -q . && fail "--test-only ran a point"
timeout 240 sbatch --wait --parsable "$D/sweep.sbatch" >"$W/job" 2>"$W/sbatch.err" ||
  fail "sbatch --wait: $(cat "$W/sbatch.err"; tail -5 "$C/slurmd.log"; cat "$D"/slurm/*.out)"
job=$(cut -d';' -f1 "$W/job")

# One task per point: task i's output names line i + 1 of jobs.txt, and
# every point has its result.
for i in $(seq 0 $((N - 1))); do
  out=$D/slurm/${job}_$i.out
  [ -f "$out" ] || fail "no output of task $i ($out)"
  id=$(sed -n "$((i + 1))p" "$D/jobs.txt")
  grep -qx "task $i: point $id (line $((i + 1)) of jobs.txt)" "$out" ||
    fail "task $i: $(cat "$out"), expected point $id"
  [ -f "$D/points/$id.json" ] || fail "point $id (task $i) has no result"
done
[ ! -e "$D/slurm/${job}_$N.out" ] || fail "a task past the last point ran"
[ "$(ls "$D/points" | grep -c '\.json$')" = "$N" ] || fail "points/: $(ls "$D/points")"

# The merged tables are equal but in the measured (wall-clock) columns.
"$S" sweep merge "$W/local" >/dev/null
"$S" sweep merge "$D" >/dev/null
# A metric's kind is the one `swaplab run --json` gives it.
"$S" run "$2/tests/sweep/data/holes.json" --structural --json >"$W/kinds.json" 2>/dev/null
python3 - "$W/local/merged.json" "$D/merged.json" "$W/kinds.json" <<'PY' || fail "merged tables differ"
import json, sys
a, b, run = (json.load(open(p)) for p in sys.argv[1:4])
measured = {f"{v['label']}/{n}" for sc in run["scenarios"] for v in sc["variants"]
            for n, m in v["metrics"].items() if m["kind"] == "measured"}
for k in ("axes", "columns", "points", "done"):
    assert a[k] == b[k], (k, a[k], b[k])
assert a["done"] == a["points"] == len(a["rows"]), a["done"]
same = 0
for ra, rb in zip(a["rows"], b["rows"]):
    assert ra["id"] == rb["id"] and ra["axes"] == rb["axes"], (ra["id"], rb["id"])
    for c in a["columns"]:
        if c not in measured:
            assert ra["values"][c] == rb["values"][c], (ra["id"], c, ra["values"][c], rb["values"][c])
            same += ra["values"][c] is not None
print(f"slurm: {len(a['rows'])} rows, {same} values equal to the local run's "
      f"({len(measured)} measured columns not compared)")
PY

# A second sbatch of the finished sweep runs no point again.
ls -i "$D/points" | sort >"$W/inodes"
timeout 240 sbatch --wait --parsable "$D/sweep.sbatch" >"$W/job2" 2>"$W/sbatch.err" ||
  fail "second sbatch --wait: $(cat "$W/sbatch.err")"
job2=$(cut -d';' -f1 "$W/job2")
[ "$(cat "$D/slurm/${job2}"_*.out | grep -c 'already done')" = "$N" ] ||
  fail "second sbatch: $(cat "$D/slurm/${job2}"_*.out)"
ls -i "$D/points" | sort | cmp -s - "$W/inodes" || fail "the second sbatch rewrote a result"
echo "sweep slurm: ok (sbatch --test-only, then $N array tasks of job $job on a private slurmctld/slurmd)"
