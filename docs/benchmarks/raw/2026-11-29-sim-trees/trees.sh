#!/bin/bash
# The node leaders' tree of the node-aware gather and scatter against the
# flat form (and the binomial and linear gathers) on the rails platform,
# N nodes x 8 ranks, 4 KiB-2 MiB in all (x8), with no and with 0.3 us of
# CPU per send and receive. From the repository root, with the sim build:
#   bash docs/benchmarks/raw/2026-11-29-sim-trees/trees.sh OUTDIR "COLL NODES FORM COST" ...
# FORM: flat (DUCT_NODE_TREE_RADIX=1), a radix k (DUCT_NODE_TREE_RADIX=k),
# binomial or linear (forced); COST: 0 or 3 (0.3 us). One at a time (a
# duct-sim run rebuilds its build directory when a source changed; two
# starting at once can collide in SMPI's copies of the library).
# The runs of 2026-11-29 set the radix through an experimental variable of
# the same code (DUCT_NODE_TREE_MAX=inf with DUCT_TREE_RADIX=k, or
# DUCT_NODE_TREE_MAX=0 for flat), replaced by DUCT_NODE_TREE_RADIX before
# the commit; the schedules are the same.
set -u
out=${1:?OUTDIR}; shift
mkdir -p "$out"
C3="--cfg=smpi/os:0:3e-7:0 --cfg=smpi/ois:0:3e-7:0 --cfg=smpi/or:0:3e-7:0"
for job in "$@"; do
  read -r c N form cost <<<"$job"
  A=hierarchical r=$form cfg=""
  case $form in flat) r=1 ;; binomial|linear) A=$form; r=0 ;; esac
  [ "$cost" = 3 ] && cfg=$C3
  f=$out/$c-$form-c$cost-${N}x8.txt
  DUCT_SIM_CFG="$cfg" DUCT_NODE_TREE_RADIX=$r DUCT_SIM_REDUCE_BW=0 timeout 1500 \
    mpi_launch_scripts/duct-sim run -N "$N" -ppn 8 -- -d host -n 1 -w 0 -m 0 -C "$c" -A "$A" -b 4K -e 2M -f 8 > "$f" 2>&1
  echo "$job rc=$?"
done
