#!/bin/bash
# Issue 49's scorecard: every collective on NODES simulated nodes x 8 ranks,
# 8 B-MAXBYTES (x8), duct's rules beside each of SMPI's three collective
# tables, all on the code of one commit.
# From the repository root (a built or buildable sim build):
#   bash docs/benchmarks/raw/2026-11-29-sim-scorecard/run.sh OUTDIR SELECTOR "COLLS" [MAXBYTES] [NODES]
# SELECTOR ompi: duct's out-of-place call (checked against the exact answer)
# and the ompi table in one run; mpich or mvapich2: that table's column
# alone (duct-bench -D 0), duct's calls not run again.
# Platform: duct-sim's rails platform, -N NODES -ppn 8 (one NIC per rank at
# 50 GBps and 1 us per link, an NVLink-class link per rank at 450 GBps and
# 0.5 us, two-level fat tree). Network model: SMPI's, latency and bandwidth
# factors neutralised (duct-sim's defaults); no host calibration; no
# per-message CPU cost (SMPI's default); DUCT_SIM_REDUCE_BW=0: duct's
# reductions free, as SMPI's are. duct-bench -n 1 -w 0 -I 0: one call per
# row, the slowest rank's time, after every rank leaves a common instant.
set -u
out=${1:?OUTDIR}
sel=${2:?SELECTOR}
colls=${3:?COLLS}
max=${4:-2M}
nodes=${5:-64}
mkdir -p "$out"
duct=1
[ "$sel" = ompi ] || duct=0
for c in $colls; do
  f="$out/$c-${nodes}x8-$sel.txt"
  t0=$(date +%s)
  DUCT_SIM_REDUCE_BW=0 mpi_launch_scripts/duct-sim run -N "$nodes" -ppn 8 -s "$sel" -- \
    -d host -n 1 -w 0 -I 0 -D "$duct" -C "$c" -b 8 -e "$max" -f 8 > "$f" 2>&1
  echo "$c $sel rc=$? $(( $(date +%s) - t0 )) s $(date +%T)"
done
