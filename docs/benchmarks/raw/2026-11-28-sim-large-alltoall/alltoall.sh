#!/bin/bash
# The alltoall across nodes at 16 and 64 simulated nodes x 8 ranks, issue 49:
# duct's forms forced beside SMPI's ompi table, at two per-message CPU
# costs, and the rules after the change. From the repository root:
#   bash docs/benchmarks/raw/2026-11-28-sim-large-alltoall/alltoall.sh OUTDIR [PART]
# PART: small (512 B-64 KiB forced, 16 x 8), large (64 KiB-4 MiB forced,
# 16 x 8), rules (the rules, 512 B-32 KiB, 16 x 8 and 64 x 8), or all.
# Platform and model as run.sh; per-message cost none or 0.3 us on every
# send and receive (smpi/os, smpi/ois, smpi/or startup).
# Files: *-o0.txt / *-o3e-7.txt forced before split_rail was packed
# (split_rail-*.txt then sent every block alone); split_rail-*-packed.txt
# the same command after (packed: 16 x 8 at 512 B-32 KiB, `-b 512 -e 64K
# -f 4`, and 64 x 8 at 0.3 us from 2 KiB, stopped after its first row);
# bruck-rules/ the rules with Bruck from 16 ranks (commit 7849b73), rules-*
# the rules after the packed change. The pairwise and split_rail runs with
# no cost were stopped after 32 KiB and 1 KiB (minutes per row at 128 ranks).
set -u
out=${1:?OUTDIR}; part=${2:-all}
mkdir -p "$out"
one() {  # FILE COST NODES duct-bench args...
  local f=$1 o=$2 n=$3; shift 3
  DUCT_SIM_REDUCE_BW=0 DUCT_SIM_CFG="--cfg=smpi/os:0:$o:0 --cfg=smpi/ois:0:$o:0 --cfg=smpi/or:0:$o:0" \
    mpi_launch_scripts/duct-sim run -N "$n" -ppn 8 -s ompi -- -d host -n 1 -w 0 -C alltoall "$@" > "$out/$f" 2>&1
  echo "$f rc=$?"
}
if [ "$part" = all ] || [ "$part" = small ]; then
  for A in bruck pairwise split_rail; do one "$A-16x8-o0.txt" 0 16 -A $A -b 512 -e 64K -f 2; done
  for A in split_rail bruck; do one "$A-16x8-o3e-7.txt" 3e-7 16 -A $A -b 512 -e 32K -f 4; done
fi
if [ "$part" = all ] || [ "$part" = large ]; then
  for o in 0 3e-7; do for A in split_rail bruck pairwise; do one "$A-16x8-o$o-large.txt" $o 16 -A $A -b 64K -e 4M -f 4; done; done
fi
if [ "$part" = all ] || [ "$part" = rules ]; then
  for N in 16 64; do for o in 0 3e-7; do one "rules-${N}x8-o$o.txt" $o $N -b 512 -e 32K -f 4; done; done
fi
