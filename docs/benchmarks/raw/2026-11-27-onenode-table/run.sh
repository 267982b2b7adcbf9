#!/bin/bash
# Issue 48's one-node table: every collective, 8 B to 64 MiB (x8 steps, and
# 64 MiB), host buffers, duct beside Open MPI 4.1.4 (its defaults) on the
# same buffers, taking turns inside each row (-R 3: the median of three
# blocks each), at 2 and 4 ranks, the whole set twice (rep 1, rep 2).
# Run from the repository root, nothing else running:
#   bash docs/benchmarks/raw/2026-11-27-onenode-table/run.sh > docs/benchmarks/raw/2026-11-27-onenode-table/out.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
for rep in ${REPS:-1 2}; do
  for np in 2 4; do
    for c in allreduce bcast reduce allgather reduce_scatter alltoall gather scatter barrier; do
      echo "## rep $rep np $np $c $(date -u +%H:%M:%S)"
      mpirun -np $np build/apps/duct-bench -d host -C $c -b 8 -e 16M -f 8 -n 0 -w 2 -R 3 2>&1 | grep -E '^ +[0-9]+ '
      [ $c = barrier ] || mpirun -np $np build/apps/duct-bench -d host -C $c -b 64M -e 64M -n 0 -w 2 -R 3 2>&1 | grep -E '^ +[0-9]+ '
    done
  done
done
