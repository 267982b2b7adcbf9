#!/usr/bin/env bash
# run11.sh (2026-11-26, after run10.sh): Open MPI alone (splitonly.c, no duct):
# does MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) return on the GPU machine's
# emulated cluster at 2 ranks per node (and 1)? BUDGET=150, timeout_s 120.
RUN=run11 source docs/benchmarks/scripts/gpu-lib.sh
eval "$(sed -n '/^probe() {/,/^}/p' docs/benchmarks/scripts/run10.sh)"
S=$BIN/apps/splitonly   # docs/benchmarks/scripts/splitonly.c, built here: mpicc -O2 splitonly.c -o .gpu-bin/apps/splitonly
cluster_up && {
  probe split 2 "$S" --; strip $logs/probe-split.log | grep rank | head
  probe split-ob1 2 "$S" OMPI_MCA_pml=ob1 --; strip $logs/probe-split-ob1.log | grep rank | head
  probe split-1ppn 1 "$S" --; strip $logs/probe-split-1ppn.log | grep rank | head
  cluster_down; }
tar -C "$out" -czf "$out/logs.tgz" logs
