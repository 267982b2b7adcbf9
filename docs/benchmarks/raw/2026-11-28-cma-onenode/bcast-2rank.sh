#!/bin/bash
# The 2-rank bcast, 256 KiB-64 MiB: shm and cma forced in turn, beside Open MPI
# with its default and with its single copy off, twice.
# Lines of bcast-2rank.txt: rep openmpi algorithm size duct_us mpi_us ratio
set -u
cd "$(dirname "$0")/../../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
out=docs/benchmarks/raw/2026-11-28-cma-onenode/bcast-2rank.txt
: > "$out"
for rep in 1 2; do
  for m in default none; do
    X=(); [ $m = none ] && X=(--mca btl_vader_single_copy_mechanism none)
    for a in shm cma; do
      mpirun -np 2 "${X[@]}" build/apps/duct-bench -d host -C bcast -A $a -b 256K -e 64M -f 4 -n 0 -w 2 -R 3 2>&1 |
        grep -v '^#' | awk -v r=$rep -v m=$m -v a=$a 'NF>10 {print r, m, a, $1, $6, $14, $NF}' >> "$out"
    done
  done
done
