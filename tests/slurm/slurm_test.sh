#!/bin/bash
# slurm_test.sh REPO BUILD_DIR: a one-machine SLURM cluster from Debian's
# slurm-wlm and munge, started for this test and stopped afterwards whatever
# happens: munged on a private socket, slurmctld and slurmd with a
# configuration generated for this machine (private ports, spool and state
# directories, no cgroups). Each batch script of mpi_launch_scripts/slurm is
# submitted with sbatch --wait; its output must end with "#wrong total 0".
# Skipped (77) when not root or slurm-wlm / munge are not installed.
set -uo pipefail
repo=$1 build=$2
[ "$(id -u)" = 0 ] || { echo "not root: skipped"; exit 77; }
for p in munged slurmctld slurmd sbatch sinfo; do
  command -v "$p" >/dev/null || { echo "$p not found (apt-get install slurm-wlm munge): skipped"; exit 77; }
done
[ -r /etc/munge/munge.key ] || { echo "no /etc/munge/munge.key: skipped"; exit 77; }

work=$(mktemp -d /tmp/duct-slurm.XXXXXX)
chmod 755 "$work"
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
port=$((20000 + $$ % 10000))
export SLURM_CONF=$work/slurm.conf

stop() {
  scancel --quiet --user=root 2>/dev/null || true
  for d in slurmd slurmctld; do
    [ -f "$work/$d.pid" ] && kill "$(cat "$work/$d.pid")" 2>/dev/null
  done
  sleep 1
  for d in slurmd slurmctld munged; do
    [ -f "$work/$d.pid" ] && kill -9 "$(cat "$work/$d.pid")" 2>/dev/null
  done
  rm -rf "$work"
}
trap stop EXIT
fail() {
  echo "FAIL: $*"
  for log in slurmctld.log slurmd.log munged.log; do echo "--- $log"; tail -n 20 "$work/$log" 2>/dev/null; done
  exit 1
}

# munge on a private socket (a system munged, if any, is left alone).
munged --force --socket="$work/munge.sock" --pid-file="$work/munged.pid" --log-file="$work/munged.log" \
  --seed-file="$work/munge.seed" --key-file=/etc/munge/munge.key || fail "munged did not start"

mkdir -p "$work/spool" "$work/state"
cat >"$SLURM_CONF" <<CONF
ClusterName=ducttest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$work/munge.sock
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF

slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
# A deadline, not a count of tries: one sinfo can itself take seconds when
# something does not resolve.
deadline=$((SECONDS + 60)) state=
while [ $SECONDS -lt $deadline ]; do
  state=$(timeout 10 sinfo -h -n "$host" -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || fail "the node is not idle after 60 s (state: ${state:-none})"
sinfo

rc=0
export DUCTDIR=$repo DUCTBUILD=$build OMPI_MCA_op=^avx DUCTBENCH_MAX=16M
for script in duct-1node duct-multinode; do
  echo "=== sbatch $script.sbatch"
  # This machine has 2 cores: 2 ranks on its one node; the scripts' other
  # lines stay as a cluster user would submit them.
  timeout 900 sbatch --wait --nodes=1 --ntasks-per-node=2 --chdir="$work" --output="$work/$script.out" \
    --export=ALL "$repo/mpi_launch_scripts/slurm/$script.sbatch"
  st=$?
  cat "$work/$script.out"
  if [ $st -ne 0 ]; then echo "FAIL: $script exited $st"; rc=1; continue; fi
  grep -q "duct-slurm: #wrong total 0, failed runs 0" "$work/$script.out" || { echo "FAIL: $script: no '#wrong total 0'"; rc=1; }
done
[ $rc -eq 0 ] || fail "a batch script failed"
echo PASS
