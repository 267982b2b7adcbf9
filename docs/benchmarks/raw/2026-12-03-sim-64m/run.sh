#!/bin/bash
# 64 simulated nodes x 8 ranks (512 ranks), 64 MiB: duct's rules for the
# allreduce, allgather and reduce_scatter, timed (-c 0: every rank's buffers
# in SMPI's shared memory, not checked; duct's scratch of 1 MiB and more
# shared too), then the SMPI tables that fit in memory beside them (-D 0).
# From the repository root, after `mpi_launch_scripts/duct-sim build`,
# nothing else running:
#   bash docs/benchmarks/raw/2026-12-03-sim-64m/run.sh OUTDIR "SPEC ..."
# SPEC: COLL:duct (duct's rules, -m 0), COLL:ALGO (duct's ALGO forced),
# COLL:ompi|mpich|mvapich2 (that table alone, -D 0).
# Platform: duct-sim's rails platform (a NIC per rank at 50 GBps and 1 us a
# link, NVLink-class links at 450 GBps and 0.5 us); SMPI's network model,
# latency and bandwidth factors neutralised (duct-sim's defaults); no host
# calibration; no per-message cost; duct's reductions free
# (DUCT_SIM_REDUCE_BW=0), as SMPI's own are.
set -u
out=${1:?OUTDIR}
mkdir -p "$out"
sysctl -q -w vm.max_map_count=1048576  # SMPI maps each 1 MiB block of a shared buffer on its own
for spec in $2; do
  c=${spec%%:*} who=${spec#*:}
  case $who in
    ompi|mpich|mvapich2) sel=$who extra="-D 0" ;;
    duct) sel=ompi extra="-m 0" ;;
    *) sel=ompi extra="-m 0 -A $who" ;;
  esac
  f="$out/$c-64M-$who.txt"
  DUCT_SIM_REDUCE_BW=0 DUCT_SIM_SHARED_SCRATCH=1M timeout 900 /usr/bin/time -f "$c:$who wall %e s maxrss %M KB" \
    mpi_launch_scripts/duct-sim run -s "$sel" -N 64 -ppn 8 -- \
    -d host -n 1 -w 0 -I 0 -c 0 $extra -C "$c" -b 64M -e 64M > "$f" 2>&1
  echo "$c:$who rc=$? $(tail -1 "$f") $(date -u +%T)"
done
