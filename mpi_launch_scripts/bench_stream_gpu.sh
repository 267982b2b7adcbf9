#!/bin/bash
# The overlap issue's GPU measurements, in one run on a GPU machine (after
# a build; BUILD names it, default build-gpu as .gpu-deps/gpu-run.sh makes):
#   1. 8 B device allreduce on 2 ranks: blocking, stream-ordered (-S) and
#      graph replay (-G), without and with MPS;
#   2. 64 MiB device allreduce overlapped with a GPU kernel as long as the
#      blocking call (-O 0), without and with MPS.
# Usage: bash mpi_launch_scripts/bench_stream_gpu.sh [NP]   (NP default 2)
set -u
np=${1:-2}
build=${BUILD:-build-gpu}
MR="mpirun --allow-run-as-root --oversubscribe -x OMPI_MCA_op=^avx"
B=$build/apps/duct-bench
run_all() {
  for mode in "" -S -G; do
    echo "== 8 B allreduce, $np ranks, $1, mode '${mode:-blocking}'"
    timeout 120 $MR -np "$np" $B -d cuda -b 8 -e 8 -n 0 -R 5 $mode 2>&1 | grep -v '^#  '
  done
  echo "== 64 MiB allreduce overlapped with a GPU kernel (-O 0), $np ranks, $1"
  timeout 200 $MR -np "$np" $B -d cuda -b 64M -e 64M -n 5 -w 2 -O 0 2>&1 | grep -v '^#  '
}
run_all "no MPS"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
mkdir -p /tmp/mps /tmp/mpslog
if nvidia-cuda-mps-control -d; then
  MR="$MR -x CUDA_MPS_PIPE_DIRECTORY"
  run_all "MPS"
  echo quit | nvidia-cuda-mps-control
else
  echo "MPS: cannot start the control daemon"
fi
