#!/bin/sh
# test_slurm_array.sh SERVESIM: a real one-node Slurm cluster on this machine (munged, slurmctld, slurmd
# from Debian's munge and slurm-wlm, as root, no systemd, private ports and directories), a 4-task job
# array of a 12-configuration sweep through scripts/slurm/sweep_array.sh, merged, compared byte for byte
# with the unsplit sweep; then one part deleted and resumed (-r re-runs only that shard), compared again.
# Installs munge and slurm-wlm first when they are missing (scripts/deps.sh slurm; root). Stops every daemon
# it started, by pid. Exit 77 (CTest: skipped) with the reason where the daemons cannot run (not root, no
# packages); CI installs them (scripts/test.sh) and must not skip.
set -u
BIN=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "the Slurm daemons run as root here (no systemd); not root"
for c in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$c" >/dev/null 2>&1 && continue
  echo "$c not found: installing munge and slurm-wlm (scripts/deps.sh slurm)"
  "$ROOT/scripts/deps.sh" slurm || skip "could not install munge and slurm-wlm"
  command -v "$c" >/dev/null 2>&1 || skip "$c not found after installing munge and slurm-wlm"
done
t0=$(date +%s.%N)
D=$(mktemp -d /tmp/servesim_slurm.XXXXXX)
pids=""
stop() { # the daemons this test started: their pid files (read now: slurmd writes its own late)
  for f in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/munge/pid"; do
    [ -s "$f" ] && pids="$pids $(cat "$f")"
  done
  for p in $pids; do kill "$p" 2>/dev/null; done
  sleep 1
  for p in $pids; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$D"
}
trap stop EXIT
base=$((20000 + ($$ % 2000) * 4))
mkdir -p "$D/state" "$D/spool" "$D/log" "$D/munge" "$D/work"
dd if=/dev/urandom of="$D/munge/key" bs=1024 count=1 2>/dev/null
chmod 400 "$D/munge/key"
munged -f --key-file="$D/munge/key" --socket="$D/munge/sock" --pid-file="$D/munge/pid" \
  --log-file="$D/munge/log" --seed-file="$D/munge/seed" || skip "munged did not start ($(tail -2 "$D/munge/log" 2>/dev/null))"
sleep 1
mem=$(awk '/MemTotal/{print int($2 / 1024 * 0.8)}' /proc/meminfo)
cat >"$D/slurm.conf" <<CONF
ClusterName=servesimtest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
AuthInfo=socket=$D/munge/sock
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
NodeName=localhost NodeHostname=$(hostname) CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$D/slurm.conf"
slurmctld -f "$SLURM_CONF" -i || skip "slurmctld did not start ($(tail -3 "$D/log/slurmctld.log" 2>/dev/null))"
sleep 1
slurmd -f "$SLURM_CONF" || skip "slurmd did not start ($(tail -3 "$D/log/slurmd.log" 2>/dev/null))"
i=0
while :; do
  sinfo -h -o %t 2>/dev/null | grep -q idle && break
  i=$((i + 1))
  [ $i -lt 30 ] || skip "the node did not come up in 30 s: $(tail -3 "$D/log/slurmd.log" 2>/dev/null)"
  sleep 1
done
echo "one-node Slurm up in $i s (munged $(cat "$D/munge/pid"), slurmctld $(cat "$D/slurmctld.pid" 2>/dev/null))"

fail() { echo "FAIL: $*"; for f in "$D"/work/task_*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
A="--model llama-3.1-8b --gpu h100-sxm,h200 --tp 1,2 --request-rate 2,4,8 --num-prompts 60 --slo ttft_p99=2000"
# shellcheck disable=SC2086
"$BIN" sweep $A --csv "$D/full.csv" --json "$D/full.json" --quiet || fail "the unsplit sweep"
# shellcheck disable=SC2086
"$ROOT/scripts/slurm/sweep_array.sh" -n 4 -d "$D/work" -b "$BIN" -- $A || fail "the job array"
cmp "$D/full.csv" "$D/work/sweep.csv" || fail "merged CSV differs from the unsplit sweep's"
cmp "$D/full.json" "$D/work/sweep.json" || fail "merged JSON differs from the unsplit sweep's"
rm -f "$D/work/p3.part"
# shellcheck disable=SC2086
"$ROOT/scripts/slurm/sweep_array.sh" -r -n 4 -d "$D/work" -b "$BIN" -- $A >"$D/resume.out" || fail "the resumed array"
grep -q "shards 3 of 4" "$D/resume.out" || fail "resume ran other shards: $(cat "$D/resume.out")"
cmp "$D/full.csv" "$D/work/sweep.csv" || fail "resumed and merged CSV differs"
t1=$(date +%s.%N)
echo "PASS: 4-task array merged = unsplit sweep (CSV, JSON), resume re-ran only shard 3; $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s wall"
