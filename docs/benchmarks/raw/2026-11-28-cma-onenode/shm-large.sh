#!/bin/bash
# Does shm keep its lead past the rules' shm limits? shm against cma, forced (-A),
# in turn, twice. Lines of shm-large.txt: rep np collective algorithm size duct_us mpi_us ratio
set -u
cd "$(dirname "$0")/../../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
out=docs/benchmarks/raw/2026-11-28-cma-onenode/shm-large.txt
: > "$out"
run() {  # rep np coll algo lo hi
  mpirun -np $2 build/apps/duct-bench -d host -C $3 -A $4 -b $5 -e $6 -f 4 -n 0 -w 2 -R 3 2>&1 |
    grep -v '^#' | awk -v r=$1 -v np=$2 -v c=$3 -v v=$4 'NF>10 {print r, np, c, v, $1, $6, $14, $NF}' >> "$out"
}
for rep in 1 2; do
  for np in 2 4; do
    for a in shm cma; do run $rep $np bcast $a 16M 64M; done
    for a in shm cma; do run $rep $np allgather $a 1M 16M; done
    for a in shm cma; do run $rep $np alltoall $a 1M 16M; done
  done
done
