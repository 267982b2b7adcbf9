#!/usr/bin/env bash
# run12.sh (2026-11-26, after run11.sh): the same split_type probe with
# Open MPI's shared-memory transports out of the way (ob1 over tcp only;
# UCX over tcp only). BUDGET=100, timeout_s 80.
RUN=run12 source docs/benchmarks/scripts/gpu-lib.sh
eval "$(sed -n '/^probe() {/,/^}/p' docs/benchmarks/scripts/run10.sh)"
S=$BIN/apps/splitonly   # docs/benchmarks/scripts/splitonly.c, built here: mpicc -O2 splitonly.c -o .gpu-bin/apps/splitonly
cluster_up && {
  probe split-tcp 2 "$S" OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp --; strip $logs/probe-split-tcp.log | grep "done" | head
  probe split-ucxtcp 2 "$S" UCX_TLS=tcp,self --; strip $logs/probe-split-ucxtcp.log | grep "done" | head
  ls -la /dev/shm | head; cat /run/duct-netns-41/netns-rsh | head -20
  cluster_down; }
