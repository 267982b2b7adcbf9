#!/bin/bash
# A/B of two builds of libduct on one node, host buffers (2026-11-29):
# LIBA and LIBB are directories holding a libduct.so.0.1 each (copies of
# build/lib/libduct.so.0.1.0 built with the two versions); duct-bench (the
# same binary) loads one or the other through LD_LIBRARY_PATH. Runs the
# small sizes (8 B-32 KiB) at 4 and 2 ranks twice, then 64 KiB-16 MiB at 2
# and 4 ranks once; duct out of place and Open MPI (its defaults, coll/tuned,
# vader with CMA) take turns in three blocks per row (-R 3), medians printed.
# The build VM has 2 cores: 4 ranks are oversubscribed (duct then yields
# while it waits, as Open MPI does). Nothing else may run meanwhile: the
# session's SimGrid runs were stopped (SIGSTOP) during it.
#   bash ab.sh /tmp/k8 /tmp/kp > final.txt ; python3 table.py final.txt
set -u
A=${1:?LIBA}; B=${2:?LIBB}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
for rep in 1 2; do
 for np in 4 2; do
  for k in "$A" "$B"; do
   for c in bcast reduce gather scatter allreduce allgather alltoall reduce_scatter; do
    echo "== small np$np-rep$rep $(basename $k) $c"
    LD_LIBRARY_PATH=$k timeout 120 mpirun -np $np -x LD_LIBRARY_PATH build/apps/duct-bench -d host -C $c -b 8 -e 32K -f 8 -n 0 -w 2 -R 3 -I 0 2>&1 | grep -v "^#"
   done
  done
 done
done
for np in 2 4; do
 for k in "$A" "$B"; do
  for c in bcast reduce allgather allreduce gather scatter alltoall reduce_scatter; do
   echo "== large np$np $(basename $k) $c"
   LD_LIBRARY_PATH=$k timeout 200 mpirun -np $np -x LD_LIBRARY_PATH build/apps/duct-bench -d host -C $c -b 64K -e 16M -f 4 -n 0 -w 2 -R 3 -I 0 2>&1 | grep -v "^#"
  done
 done
done
