#!/bin/bash
# The scatter on 64 simulated nodes x 8 ranks, issue 49: the node-aware form
# forced and the rules, beside SMPI's tables, at two per-message costs.
# From the repository root:
#   bash docs/benchmarks/raw/2026-11-28-sim-large-alltoall/scatter/run.sh OUTDIR
# hierarchical-*: -A hierarchical; rules-64x8-o3e-7-mvapich2.txt: the rules
# before the change (binomial below 64 KiB, linear from it); rules2-*: the
# rules after the first change (node-aware below 64 KiB, 619eb09); rules3-*:
# after the second (node-aware at every size; the same command, three of
# the runs). Platform and model as ../run.sh.
set -u
out=${1:?OUTDIR}
mkdir -p "$out"
one() {  # FILE COST SELECTOR duct-bench args...
  local f=$1 o=$2 s=$3; shift 3
  DUCT_SIM_REDUCE_BW=0 DUCT_SIM_CFG="--cfg=smpi/os:0:$o:0 --cfg=smpi/ois:0:$o:0 --cfg=smpi/or:0:$o:0" \
    mpi_launch_scripts/duct-sim run -N 64 -ppn 8 -s "$s" -- -d host -n 1 -w 0 -C scatter -b 4K -e 2M -f 8 "$@" > "$out/$f" 2>&1
  echo "$f rc=$?"
}
for o in 0 3e-7; do
  for s in mvapich2 ompi; do one "hierarchical-64x8-o$o-$s.txt" $o $s -A hierarchical; done
  for s in mvapich2 ompi mpich; do one "rules2-64x8-o$o-$s.txt" $o $s; done
done
