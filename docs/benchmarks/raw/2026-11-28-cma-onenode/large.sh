#!/bin/bash
# 16 and 64 MiB at 2 and 4 ranks: cma against the message forms, forced (-A),
# in turn, three times. Lines of large.txt: rep np collective algorithm size duct_us mpi_us ratio
set -u
cd "$(dirname "$0")/../../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
out=docs/benchmarks/raw/2026-11-28-cma-onenode/large.txt
: > "$out"
run() {  # rep np coll algo
  mpirun -np $2 build/apps/duct-bench -d host -C $3 -A $4 -b 16M -e 64M -f 4 -n 0 -w 2 -R 3 2>&1 |
    grep -v '^#' | awk -v r=$1 -v np=$2 -v c=$3 -v v=$4 'NF>10 {print r, np, c, v, $1, $6, $14, $NF}' >> "$out"
}
for rep in 1 2 3; do
  for np in 2 4; do
    for a in cma ring; do run $rep $np allgather $a; done
    for a in cma pairwise; do run $rep $np alltoall $a; done
    for a in cma linear shm; do run $rep $np gather $a; done
  done
done
