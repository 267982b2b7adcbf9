#!/bin/bash
# Open MPI with its single copy off (vader's FIFO) beside duct's rules, 1-64 MiB,
# every collective, 2 and 4 ranks, one repetition.
# Lines of vader-none.txt: np collective size duct_us mpi_us ratio
set -u
cd "$(dirname "$0")/../../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
out=docs/benchmarks/raw/2026-11-28-cma-onenode/vader-none.txt
: > "$out"
for np in 2 4; do
  for c in allreduce bcast reduce allgather reduce_scatter alltoall gather scatter; do
    mpirun -np $np --mca btl_vader_single_copy_mechanism none build/apps/duct-bench -d host -C $c -b 1M -e 64M -f 4 -n 0 -w 2 -R 3 2>&1 |
      grep -v '^#' | awk -v np=$np -v c=$c 'NF>10 {print np, c, $1, $6, $14, $NF}' >> "$out"
  done
done
