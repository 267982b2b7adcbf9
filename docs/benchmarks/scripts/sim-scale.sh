#!/bin/bash
# sim-scale.sh OUTDIR NODES...: duct-bench under SimGrid SMPI at each NODES
# (one rank per simulated host, duct-sim platform N flat: 25 GBps, 1 us per
# host link), allreduce, reduce_scatter, allgather and bcast, 8 B to 16 MiB
# (x8), beside each of SMPI's three collective selectors (ompi, mpich,
# mvapich2): one duct-sim run per (collective, selector). Network model:
# SMPI with lat/bw factors 0:1; no host calibration; duct's reductions at
# DUCT_SIM_REDUCE_BW (10 GiB/s), SMPI's own reductions uncharged.
set -u
out=$1; shift
here=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$out"
for n in "$@"; do
  for c in allreduce reduce_scatter allgather bcast; do
    for sel in ompi mpich mvapich2; do
      f=$out/n$n-$c-$sel.txt
      echo "# duct-sim run -np $n -s $sel -- -d host -C $c -b 8 -e 16M -f 8 -n 2 -w 1" > "$f"
      /usr/bin/time -f "# real %e s" "$here/mpi_launch_scripts/duct-sim" run -np "$n" -s "$sel" -- \
        -d host -C "$c" -b 8 -e 16M -f 8 -n 2 -w 1 >> "$f" 2>&1
    done
  done
done
