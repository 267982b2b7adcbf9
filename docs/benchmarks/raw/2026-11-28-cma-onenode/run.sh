#!/bin/bash
# The single-copy (cma) forms against the rules before them, one node, host
# buffers, 2 and 4 ranks, two repetitions alternating (2026-11-28).
# Each line of out.txt: rep np collective variant size duct_us mpi_us ratio
set -u
cd "$(dirname "$0")/../../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
out=${OUT:-docs/benchmarks/raw/2026-11-28-cma-onenode/out.txt}
: > "$out"
for rep in 1 2; do
  for np in 2 4; do
    for c in ${COLLS:-allgather alltoall scatter gather bcast}; do
      for v in rules cma; do
        A=(); [ $v = cma ] && A=(-A cma)
        mpirun -np $np build/apps/duct-bench -d host -C $c "${A[@]}" -b ${LO:-32K} -e ${HI:-16M} -f 4 -n 0 -w 2 -R 3 2>&1 |
          grep -v '^#' | awk -v r=$rep -v np=$np -v c=$c -v v=$v 'NF>10 {print r, np, c, v, $1, $6, ($14=="-"? $14 : $14), $NF}' >> "$out"
      done
    done
  done
done
