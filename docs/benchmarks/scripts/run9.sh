#!/usr/bin/env bash
# run9.sh: the next device-tool call (prepared 2026-11-26, after run8*.sh):
#   1. the device-buffer suites that the MPI_LONG_DOUBLE_INT heap overrun
#      cut short on 2026-11-26 (fixed since): [datatype] at np 1, the
#      collective suite at np 2 and 4 (MPS), np 2 over ucx, np 2 without MPS;
#   2. the emulated-cluster hang on device buffers (2 nodes x 2 ranks, every
#      rank in its first 64 KiB allreduce for 65 s, both UCX builds): each
#      algorithm forced at one size, with DUCT_TIMEOUT=15 so that duct's
#      error names what each rank waited for, and DUCT_LOG=info; then the
#      cluster's full step (tests/gpu and the allreduce table);
#   3. duct-tune --quick at 2 ranks on 16 cores and --verify of each file;
#      the 16-rank reduce through shm and through shm_tree.
# From the project root on the GPU machine, after scripts/gpu-bin.sh here
# (WITH_UCX_CUDA=1) and ../shared/gpu-evidence/prepare.sh:
#   BUDGET=540 bash docs/benchmarks/scripts/run9.sh   (carry .gpu-deps .gpu-bin; timeout_s 590)
RUN=run9 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"

if mps_on; then
  step 30 "[datatype] np=1, MPS" && gpu_tests mps-dt 1 auto 30 "[datatype]"
  step 60 "collective suite on device buffers, np=2, MPS" && gpu_tests mps 2 auto 60
  step 60 "collective suite on device buffers, np=4, MPS" && gpu_tests mps 4 auto 60
  step 60 "collective suite, np=2, ucx, MPS" && gpu_tests mps 2 ucx 60
  mps_off
fi

# One forced algorithm at one size on the cluster: duct's own timeout error
# (the wait it was in, per rank) instead of the test's watchdog.
diag() {  # label npernode env... -- duct-bench args...
  local label=$1 ppn=$2 s=$(date +%s) envs=()
  shift 2
  while [ "$1" != -- ]; do envs+=(-x "$1"); shift; done; shift
  DUCT_TIMEOUT=15 DUCT_LOG=info timeout 45 mpirun "${args[@]}" -x OMPI_MCA_op -x DUCT_TIMEOUT -x DUCT_LOG "${envs[@]}" \
    -np $(( 2 * ppn )) -npernode "$ppn" "$B" -n 2 -w 1 -m 0 "$@" > "$logs/diag-$label.log" 2>&1
  echo "diag $label: rc=$? $(( $(date +%s) - s )) s"
  strip "$logs/diag-$label.log" | grep -E "^ +[0-9]|error|timed out|TIMEOUT|waiting|because" | cut -c1-300 | head -12
}
step 90 "cluster hang on device buffers: which level" && cluster_up && {
  diag host-64k 2 -- -d host -b 64K -e 64K   # the control: host buffers on this machine's cluster
  diag ring-64k 2 -- -d cuda -A ring -b 64K -e 64K
  diag hier-8 2 -- -d cuda -A hierarchical -b 8 -e 8
  diag split-64k 2 -- -d cuda -A split_rail -b 64K -e 64K
  diag split-64k-ucx 2 DUCT_CHANNEL=ucx -- -d cuda -A split_rail -b 64K -e 64K
  diag ring-64k-1ppn 1 -- -d cuda -A ring -b 64K -e 64K
  # Under MPS (the ranks' kernels and copies may then run at once; /tmp,
  # where its pipe is, is shared with the namespaces).
  mps_on && { diag split-64k-mps 2 CUDA_MPS_PIPE_DIRECTORY=/tmp/mps -- -d cuda -A split_rail -b 64K -e 64K; mps_off; }
  cluster_down; }
step 100 "row 7 / issue 25: emulated cluster with the GPU" && CT=60 CB=40 CF=64 cluster

step 60 "issue 27: duct-tune --quick, 2 ranks, host buffers" && tune 2 60 45
# The 16-rank rooted reduce of 8 B-4 KiB was 0.38-0.40x of Open MPI with the
# flat shm reduce (run8); shm_tree (a 4-ary tree over the slots, not in the
# built-in rules) beside it, Open MPI in the same runs.
step 45 "issue 27: reduce at 16 ranks, shm against shm_tree" && for A in shm shm_tree shm shm_tree; do
  echo "-- reduce -A $A"; timeout 20 $MR0 $BIND -np 16 "$B" -d host -C reduce -A $A -b 8 -e 4K -f 8 -n 0 -w 5 -R 3 2>&1 | grep -v '^#'
done
step 60 "collective suite, np=2, without MPS" && gpu_tests nomps 2 auto 60
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
