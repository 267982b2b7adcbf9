#!/bin/bash
# DUCT_MEASURE=1 (the measured choice between shm and cma, the default)
# against DUCT_MEASURE=0 (the built-in rules' fixed choice), each beside
# Open MPI on the same buffers in one mpirun (its defaults, and its FIFO
# setting --mca btl_vader_single_copy_mechanism none), for the five
# collectives the trial covers, 32 KiB-2 MiB (x2 steps), host buffers, 2 and
# 4 ranks, -R 3 (median of three blocks, taking turns inside each row); the
# two DUCT_MEASURE settings run one after the other for each case, the
# whole set three times. Run from the repository root, nothing else running:
#   bash docs/benchmarks/raw/2026-12-03-measured-choice/run.sh > docs/benchmarks/raw/2026-12-03-measured-choice/out.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
for rep in ${REPS:-1 2 3}; do
  for np in 2 4; do
    for c in allgather alltoall bcast gather scatter; do
      for setting in default fifo; do
        mca=()
        [ $setting = fifo ] && mca=(--mca btl_vader_single_copy_mechanism none)
        for m in 1 0; do
          echo "## rep $rep np $np $c $setting measure=$m $(date -u +%H:%M:%S)"
          mpirun "${mca[@]}" -np $np -x DUCT_MEASURE=$m build/apps/duct-bench -d host -C $c -b 32K -e 2M -f 2 -n 0 -w 2 -R 3 2>&1 | grep -E '^ +[0-9]+ '
        done
      done
    done
  done
done
