#!/usr/bin/env bash
# Node-aware order for recursive halving and doubling (2026-11-27): every
# run of ../../2026-11-27-sim-node-aware.md, in the order they ran (a file
# already there is skipped). Rails platform, SimGrid 3.32
# (network/model SMPI, smpi/lat-factor:0:1, smpi/bw-factor:0:1: duct-sim's
# defaults), SMPI's default detached sends; the MPI column is SMPI's ompi
# selector unless the file name says otherwise.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
out=docs/benchmarks/raw/2026-11-27-sim-node-aware
sim=mpi_launch_scripts/duct-sim
one() {  # FILE NODES SELECTOR BENCH-ARGS...
  local f=$1 N=$2 s=$3; shift 3
  [ -s "$out/$f.txt" ] && return 0
  local t0=$SECONDS
  $sim run -N "$N" -ppn 8 -s "$s" -- -d host -n 1 -w 0 "$@" >"$out/$f.txt" 2>"$out/$f.err"
  echo "# real time: $((SECONDS - t0)) s (rc $?)" >>"$out/$f.txt"
  echo "$f: $((SECONDS - t0)) s"
}
for N in 16 64; do
  e=16M; [ "$N" = 64 ] && e=4M
  one "rs-${N}x8-recursive_halving" $N ompi -C reduce_scatter -A recursive_halving -b 16K -e $e -f 4
  one "ar-${N}x8-rabenseifner" $N ompi -C allreduce -A rabenseifner -b 16K -e $e -f 4
  one "ag-${N}x8-recursive_doubling" $N ompi -C allgather -A recursive_doubling -b 16K -e $e -f 4
done
# split_rail, which the rules gave these sizes before, beside the same
# ompi column (16 x 8 only: split_rail's rail rings at 64 x 8 take longer
# than this session has, 2026-11-27-sim-allgather-scale.md).
one "rs-16x8-split_rail" 16 ompi -C reduce_scatter -A split_rail -b 1M -e 16M -f 4
one "ar-16x8-split_rail" 16 ompi -C allreduce -A split_rail -b 256K -e 16M -f 4
one "ag-16x8-split_rail" 16 ompi -C allgather -A split_rail -b 1M -e 16M -f 4
# 8 x 8 (64 ranks): the same forms, and split_rail, which the rules give
# from 512 KiB there.
one "rs-8x8-recursive_halving" 8 ompi -C reduce_scatter -A recursive_halving -b 16K -e 16M -f 4
one "rs-8x8-split_rail" 8 ompi -C reduce_scatter -A split_rail -b 256K -e 16M -f 4
one "ar-8x8-rabenseifner" 8 ompi -C allreduce -A rabenseifner -b 16K -e 16M -f 4
one "ar-8x8-split_rail" 8 ompi -C allreduce -A split_rail -b 16K -e 16M -f 4
one "ag-8x8-recursive_doubling" 8 ompi -C allgather -A recursive_doubling -b 16K -e 16M -f 4
one "ag-8x8-split_rail" 8 ompi -C allgather -A split_rail -b 256K -e 16M -f 4
# split_rail's allreduce at 64 x 8 from 128 KiB, without the MPI column
# (-m 0: SMPI's ompi times for these sizes are in ar-64x8-rabenseifner.txt).
one "ar-64x8-split_rail" 64 ompi -C allreduce -A split_rail -b 128K -e 4M -f 2 -m 0
# Recursive doubling's allreduce at 8 x 8 where the rules gave split_rail.
one "ar-8x8-recursive_doubling" 8 ompi -C allreduce -A recursive_doubling -b 16K -e 256K -f 2
# Small allreduce and allgather at 64 x 8: recursive doubling forced and
# the rules (the hierarchical form) beside SMPI's three tables.
for s in ompi mpich mvapich2; do
  one "ar-64x8-small-recursive_doubling-$s" 64 $s -C allreduce -A recursive_doubling -b 8 -e 8K -f 8
  one "ar-64x8-small-hierarchical-$s" 64 $s -C allreduce -A hierarchical -b 8 -e 8K -f 8
  one "ag-64x8-small-recursive_doubling-$s" 64 $s -C allgather -A recursive_doubling -b 4K -e 32K -f 2
  one "ag-64x8-small-hierarchical-$s" 64 $s -C allgather -A hierarchical -b 4K -e 32K -f 2
done
