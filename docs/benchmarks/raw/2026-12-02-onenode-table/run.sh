#!/bin/bash
# Issue 48's one-node table on the current code, against both of Open MPI's
# settings: its defaults (coll/tuned, the vader BTL with CMA single copy)
# and its documented alternative for shared memory without single copy
# (--mca btl_vader_single_copy_mechanism none: the FIFO's copy-in/copy-out).
# Every collective 8 B to 16 MiB (x8 steps) and 64 MiB, host buffers, duct
# beside the MPI library on the same buffers in one mpirun, taking turns
# inside each row (-R 3: the median of three blocks each), at 2 and 4
# ranks; the whole set three times (rep 1-3). Run from the repository root,
# nothing else running:
#   bash docs/benchmarks/raw/2026-11-29-onenode-table/run.sh > docs/benchmarks/raw/2026-11-29-onenode-table/out.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
for rep in ${REPS:-1 2 3}; do
  for np in 2 4; do
    for c in allreduce bcast reduce allgather reduce_scatter alltoall gather scatter barrier; do
      for setting in default fifo; do
        mca=()
        [ $setting = fifo ] && mca=(--mca btl_vader_single_copy_mechanism none)
        echo "## rep $rep np $np $c $setting $(date -u +%H:%M:%S)"
        mpirun "${mca[@]}" -np $np build/apps/duct-bench -d host -C $c -b 8 -e 16M -f 8 -n 0 -w 2 -R 3 2>&1 | grep -E '^ +[0-9]+ '
        [ $c = barrier ] || mpirun "${mca[@]}" -np $np build/apps/duct-bench -d host -C $c -b 64M -e 64M -n 0 -w 2 -R 3 2>&1 | grep -E '^ +[0-9]+ '
      done
    done
  done
done
