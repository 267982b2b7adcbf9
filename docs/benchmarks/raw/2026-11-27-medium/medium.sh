#!/bin/bash
# Medium messages on one node, host buffers: the cases issue 48 flagged, repeated 3 times, duct and Open MPI
# taking turns within each run (-R 5 blocks, medians).
cd /work/main
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
for rep in 1 2 3; do
 for np in 2 4; do
  for cs in "bcast 16K 1M" "allgather 8K 128K" "reduce 16K 256K"; do
   set -- $cs
   mpirun -np $np build/apps/duct-bench -d host -C $1 -b $2 -e $3 -f 2 -n 0 -w 2 -R 5 2>&1 | grep -E "^ +[0-9]" | awk -v r=$rep -v np=$np -v c=$1 '{print "rep" r, "np" np, c, $1, $6, $NF}'
  done
 done
done
