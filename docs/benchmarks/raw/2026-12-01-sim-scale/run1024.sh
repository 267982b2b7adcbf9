#!/bin/bash
# 1024 simulated nodes x 8 ranks (8192 ranks): each collective at its
# smallest sizes, duct's rules (results checked against the exact answer)
# beside SMPI's logarithmic algorithms (-s log: binomial bcast, Bruck
# allgather, recursive-doubling allreduce and barrier; the selector tables'
# first small call maps the nodes with n^2 messages, hours at 8192 ranks).
# From the repository root, nothing else running (19 GB of memory), as root
# (vm.max_map_count), with the SimGrid that pkg-config finds:
#   bash docs/benchmarks/raw/2026-12-01-sim-scale/run1024.sh OUTDIR "COLL:SIZES ..."
# SIZES as duct-bench's -b,-e,-f, e.g. "bcast:8,8,8 allgather:32K,32K,2".
# Platform: duct-sim's rails platform (a NIC per rank at 50 GBps and 1 us a
# link, NVLink-class links at 450 GBps and 0.5 us); SMPI's network model,
# latency and bandwidth factors neutralised; no host calibration; no
# per-message cost; duct's reductions free (DUCT_SIM_REDUCE_BW=0).
set -u
out=${1:?OUTDIR}
mkdir -p "$out"
sysctl -q -w vm.max_map_count=262144
for spec in $2; do
  c=${spec%%:*} sizes=${spec#*:}
  IFS=, read -r b e f <<<"$sizes"
  t0=$(date +%s)
  DUCT_SIM_REDUCE_BW=0 mpi_launch_scripts/duct-sim run -s log -N 1024 -ppn 8 -- \
    -d host -n 1 -w 0 -I 0 -C "$c" -b "$b" -e "$e" -f "$f" > "$out/$c-1024x8.txt" 2>&1
  echo "$c rc=$? $(( $(date +%s) - t0 )) s $(date -u +%T)"
done
