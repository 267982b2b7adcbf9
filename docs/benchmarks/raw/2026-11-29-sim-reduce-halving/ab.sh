#!/bin/bash
# The split-rail reduce before (BEFORE: a checkout of the commit before the
# rail halving, with its simulation build) and after (AFTER), and SMPI's
# mpich and mvapich2 tables, on the rails platform (duct-sim run: NIC
# 50 GBps 1 us per rank, NVLink-class 450 GBps 0.5 us in a node, SMPI
# network model with lat/bw factors 1, no calibration, reductions free:
# DUCT_SIM_REDUCE_BW=0). Usage: ab.sh BEFORE AFTER OUTDIR
set -u
BEFORE=$1 AFTER=$2 OUT=$3
mkdir -p "$OUT"
run() {  # DIR LABEL N B E F [duct-bench options]
  local dir=$1 label=$2 n=$3 b=$4 e=$5 f=$6; shift 6
  (cd "$dir" && DUCT_SIM_REDUCE_BW=0 mpi_launch_scripts/duct-sim run "${SEL[@]}" -N "$n" -ppn 8 -- \
    -d host -n 1 -w 0 -I 0 -C reduce -b "$b" -e "$e" -f "$f" "$@") > "$OUT/$label-${n}x8-$b-$e.txt" 2>&1
}
for spec in "8 256K 8M 2" "8 16M 64M 4" "16 256K 2M 2" "16 16M 16M 2" "32 256K 2M 2" "64 256K 2M 2" "128 2M 2M 2"; do
  set -- $spec
  SEL=(); run "$BEFORE" before "$@" -m 0
  SEL=(); run "$AFTER" after "$@" -m 0
done
for n in 8 16 64; do
  for s in mpich mvapich2; do SEL=(-s $s); run "$AFTER" "$s" "$n" 256K 2M 2 -D 0; done
done
