#!/bin/bash
# k-nomial trees across nodes (DUCT_TREE_RADIX), issue 49: the runs of
# docs/benchmarks/2026-11-28-sim-knomial.md. From the repository root:
#   bash docs/benchmarks/raw/2026-11-28-sim-knomial/run.sh OUTDIR [PART]
# PART: 64x8 (bcast and reduce, 8 B-4 KiB, radix 2/4/8 beside SMPI's ompi
# table, and radix 2/4 beside mpich's and mvapich2's), 64x1 (one rank per
# node, 8 B-256 KiB, radix 2 and 4, ompi), or all (default).
# Each at two per-message CPU costs: none (SMPI's default) and 0.3 us on
# every send and receive (smpi/os, smpi/ois, smpi/or startup; the value
# SimGrid's own MPICH test harness sets, teshsuite/smpi/mpich3-test/runtests).
# DUCT_SIM_REDUCE_BW=0: duct's reductions free, as SMPI's own are.
set -u
out=${1:?OUTDIR}; part=${2:-all}
mkdir -p "$out"
S=mpi_launch_scripts/duct-sim
one() {  # FILE RADIX OVERHEAD SELECTOR duct-sim-placement... -- bench args
  local f=$1 k=$2 o=$3 s=$4; shift 4
  DUCT_TREE_RADIX=$k DUCT_SIM_REDUCE_BW=0 \
    DUCT_SIM_CFG="--cfg=smpi/os:0:$o:0 --cfg=smpi/ois:0:$o:0 --cfg=smpi/or:0:$o:0" \
    $S run -s "$s" "$@" > "$out/$f" 2>&1
  echo "$f rc=$?"
}
for o in 0 3e-7; do
  for c in bcast reduce; do
    if [ "$part" = all ] || [ "$part" = 64x8 ]; then
      for k in 2 4 8; do
        for s in ompi mpich mvapich2; do
          [ $k = 8 ] && [ $s != ompi ] && continue
          one "$c-64x8-o$o-k$k-$s.txt" $k $o $s -N 64 -ppn 8 -- -d host -n 1 -w 0 -C $c -b 8 -e 4K -f 8
        done
      done
    fi
    if [ "$part" = all ] || [ "$part" = 64x1 ]; then
      for k in 2 4; do
        one "$c-64x1-o$o-k$k-ompi.txt" $k $o ompi -np 64 -- -d host -n 1 -w 0 -C $c -b 8 -e 256K -f 2
      done
    fi
  done
done
