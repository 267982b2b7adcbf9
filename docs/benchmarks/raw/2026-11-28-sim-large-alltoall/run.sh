#!/bin/bash
# Every collective on 64 simulated nodes x 8 ranks, duct's rules beside each
# of SMPI's three collective tables (ompi, mpich, mvapich2), issue 49.
# From the repository root (a built or buildable sim build):
#   bash docs/benchmarks/raw/2026-11-28-sim-large-alltoall/run.sh OUTDIR [COLLS] [SELECTORS] [MAXBYTES] [NODES]
# Platform: duct-sim's rails platform, -N NODES -ppn 8 (default 64 nodes;
# the alltoall ran on 16: at 512 ranks each call is 261,632 messages, which
# SMPI 3.32 handles too slowly for one session), one NIC per rank at
# 50 GBps and 1 us per link, an NVLink-class link per rank at 450 GBps and
# 0.5 us, two-level fat tree). Network model: SMPI's, latency and bandwidth
# factors neutralised (duct-sim's defaults). No per-message CPU cost
# (SMPI's default). DUCT_SIM_REDUCE_BW=0: duct's reductions free, as SMPI's.
# duct-bench -n 1 -w 0: one call per row, the slowest rank's time.
set -u
out=${1:?OUTDIR}
colls=${2:-"allreduce bcast reduce allgather reduce_scatter alltoall gather scatter"}
sels=${3:-"ompi mpich mvapich2"}
max=${4:-2M}
nodes=${5:-64}
mkdir -p "$out"
for c in $colls; do
  for s in $sels; do
    f="$out/$c-${nodes}x8-$s.txt"
    t0=$(date +%s)
    DUCT_SIM_REDUCE_BW=0 mpi_launch_scripts/duct-sim run -N "$nodes" -ppn 8 -s "$s" -- \
      -d host -n 1 -w 0 -C "$c" -b 8 -e "$max" -f 8 > "$f" 2>&1
    echo "$c $s rc=$? $(( $(date +%s) - t0 )) s"
  done
done
