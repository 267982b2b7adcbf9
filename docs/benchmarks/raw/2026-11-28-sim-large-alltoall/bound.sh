#!/bin/bash
# Large messages on 8 simulated nodes x 8 ranks, duct's rules beside SMPI's
# ompi table, for the bandwidth bound of issue 49's "2x the ompi selector
# at 16 MiB and up". From the repository root:
#   bash docs/benchmarks/raw/2026-11-28-sim-large-alltoall/bound.sh OUTDIR [COLLS] [SIZES]
# Timing-only: duct-bench -c 0 (buffers in SMPI's shared memory) and
# DUCT_SIM_SHARED_SCRATCH=1M (duct's scratch there too), so 64 ranks at
# 256 MiB fit; SMPI's own collectives still allocate their temporaries per
# rank. Same platform, model and settings as run.sh (no per-message cost,
# DUCT_SIM_REDUCE_BW=0: duct's reductions free, as SMPI's).
set -u
out=${1:?OUTDIR}
colls=${2:-"allgather reduce_scatter allreduce"}
sizes=${3:-"16M 64M 256M"}
mkdir -p "$out"
for c in $colls; do
  for b in $sizes; do
    f="$out/$c-8x8-$b-ompi.txt"
    t0=$(date +%s)
    DUCT_SIM_REDUCE_BW=0 DUCT_SIM_SHARED_SCRATCH=1M mpi_launch_scripts/duct-sim run -N 8 -ppn 8 -s ompi -- \
      -d host -n 1 -w 0 -c 0 -C "$c" -b "$b" -e "$b" > "$f" 2>&1
    echo "$c $b rc=$? $(( $(date +%s) - t0 )) s"
  done
done
