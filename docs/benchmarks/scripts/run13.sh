#!/usr/bin/env bash
# run13.sh: the next device-tool call (prepared 2026-11-26 after run9-12).
#   1. why Open MPI's MPI_Comm_split_type hangs on node1's ranks of the
#      emulated cluster at 2 ranks per node (run11/12): each rank's view
#      (splitview.c: host, local rank and size, namespaces), then the same
#      with --bind-to core and with PMIx's verbose output;
#   2. the emulated cluster with the GPU at 1 rank per node (which works
#      there): tests/gpu and the allreduce table, Debian's UCX (staged) and
#      the CUDA-aware one (device pointers to UCX);
#   2b. the cluster at 2 ranks per node with duct: since 2026-11-26 (evening)
#      duct's setup no longer calls MPI_Comm_split_type (nodes from host
#      names and boot ids), so whether duct now runs where Open MPI's split
#      hangs (last, if time is left);
#   3. issue 27: duct-tune --quick and --verify at 2, 8 and 16 ranks on the
#      16 cores; the 16-rank reduce under the built-in rules (shm_tree
#      below 8 KiB since 6c2b1f1) beside Open MPI.
# On the build machine first:
#   WITH_UCX_CUDA=1 bash docs/benchmarks/scripts/gpu-bin.sh
#   mpicc -O2 docs/benchmarks/scripts/splitview.c -o .gpu-bin/apps/splitview
# then carry .gpu-deps and .gpu-bin:
#   BUDGET=540 bash docs/benchmarks/scripts/run13.sh   (timeout_s 590)
RUN=run13 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
eval "$(sed -n '/^probe() {/,/^}/p' "$root/docs/benchmarks/scripts/run10.sh")"
SV=$BIN/apps/splitview

step 70 "cluster, 2 x 2: each rank's view before MPI_Comm_split_type" && cluster_up && {
  probe view 2 "$SV" --; strip "$logs/probe-view.log" | grep -E "rank [0-9]" | sort | head -8
  saved=("${args[@]}")
  args=("${args[@]/#none/core}")   # --bind-to none -> --bind-to core
  probe view-bind 2 "$SV" --; strip "$logs/probe-view-bind.log" | grep -E "split_type done" | sort
  args=("${saved[@]}" --mca pmix_base_verbose 5)
  probe view-pmix 2 "$SV" --; strip "$logs/probe-view-pmix.log" | grep -iE "locality|local_peers|node" | head -12
  args=("${saved[@]}")
  cluster_down; }
step 160 "cluster, 2 nodes x 1 rank, device buffers, both UCX builds" && PPN=1 CT=50 CB=30 CF=64 cluster

step 60 "issue 27: duct-tune --quick, 2 ranks" && tune 2 40 30
step 60 "issue 27: duct-tune --quick, 8 ranks" && tune 8 40 30
step 60 "issue 27: duct-tune --quick, 16 ranks" && tune 16 40 30
step 25 "issue 27: 16-rank reduce, built-in rules, beside Open MPI" &&
  timeout 20 $MR0 $BIND -np 16 "$B" -d host -C reduce -b 8 -e 64K -f 8 -n 0 -w 5 -R 3 2>&1 | grep -v '^#  '
step 100 "cluster, 2 x 2, device buffers: duct's setup without MPI_Comm_split_type" && PPN=2 CT=40 CB=25 CF=64 cluster
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
