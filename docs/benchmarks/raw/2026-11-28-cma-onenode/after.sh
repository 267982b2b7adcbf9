#!/bin/bash
# The rules with the cma forms, beside Open MPI, one node, host buffers,
# 2 and 4 ranks, three repetitions (2026-11-28).
# Each line of after.txt: rep np collective size duct_us mpi_us ratio
set -u
cd "$(dirname "$0")/../../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
out=docs/benchmarks/raw/2026-11-28-cma-onenode/after.txt
: > "$out"
for rep in 1 2 3; do
  for np in 2 4; do
    for c in allgather alltoall scatter gather bcast; do
      mpirun -np $np build/apps/duct-bench -d host -C $c -b 64K -e 64M -f 4 -n 0 -w 2 -R 3 2>&1 |
        grep -v '^#' | awk -v r=$rep -v np=$np -v c=$c 'NF>10 {print r, np, c, $1, $6, $14, $NF}' >> "$out"
    done
  done
done
