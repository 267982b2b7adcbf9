#!/bin/bash
# The edges of the cma ranges: each candidate forced (-A), in turn, twice.
# Each line of edges.txt: rep np collective algorithm size duct_us mpi_us ratio
set -u
cd "$(dirname "$0")/../../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
out=docs/benchmarks/raw/2026-11-28-cma-onenode/edges.txt
: > "$out"
run() {  # rep np coll algo lo hi
  mpirun -np $2 build/apps/duct-bench -d host -C $3 -A $4 -b $5 -e $6 -f 2 -n 0 -w 2 -R 3 2>&1 |
    grep -v '^#' | awk -v r=$1 -v np=$2 -v c=$3 -v v=$4 'NF>10 {print r, np, c, v, $1, $6, $14, $NF}' >> "$out"
}
for rep in 1 2; do
  for a in shm ring cma; do run $rep 2 allgather $a 64K 128K; done
  for a in shm binomial cma; do run $rep 2 bcast $a 64K 128K; done
  for a in shm pairwise cma; do run $rep 2 alltoall $a 128K 256K; done
  for a in shm linear cma; do run $rep 2 scatter $a 128K 256K; done
  for a in shm pairwise cma; do run $rep 4 alltoall $a 128K 256K; done
  for a in shm linear cma; do run $rep 4 scatter $a 128K 256K; done
  for a in shm ring cma; do run $rep 4 allgather $a 256K 512K; done
done
