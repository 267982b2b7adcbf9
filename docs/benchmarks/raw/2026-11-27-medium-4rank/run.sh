#!/bin/bash
# 4 ranks on the 2-core VM, host buffers: bcast and reduce at 16 KiB-2 MiB,
# each of duct's candidate algorithms forced and the built-in rules, taking
# turns, 3 rounds (issue 48: the 4-rank bcast and reduce gaps).
# Run from the repository root: bash docs/benchmarks/raw/2026-11-27-medium-4rank/run.sh > .../out.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
for round in 1 2 3; do
  for a in rules shm binomial scatter_allgather; do
    sel=(); [ "$a" != rules ] && sel=(-A "$a")
    echo "## round $round bcast $a"
    mpirun -np 4 build/apps/duct-bench -d host -C bcast "${sel[@]}" -b 16K -e 2M -f 2 -n 0 -w 2 -R 5 2>&1 | grep -E '^ +[0-9]+ '
  done
  for a in rules shm binomial reduce_scatter_gather; do
    sel=(); [ "$a" != rules ] && sel=(-A "$a")
    echo "## round $round reduce $a"
    mpirun -np 4 build/apps/duct-bench -d host -C reduce "${sel[@]}" -b 16K -e 2M -f 2 -n 0 -w 2 -R 5 2>&1 | grep -E '^ +[0-9]+ '
  done
done
