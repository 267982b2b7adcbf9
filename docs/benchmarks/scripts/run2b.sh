#!/usr/bin/env bash
set -u
root=$(pwd); deps=$root/.gpu-deps; out=${OUT:-/tmp/out}; mkdir -p "$out"
exec > >(tee "$out/run2b.log") 2>&1
source "$deps/activate.sh" "$deps" /opt/deps
export OMPI_MCA_op=^avx
MR="mpirun --allow-run-as-root --oversubscribe -x OMPI_MCA_op"
t0=$(date +%s)
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release > "$out/setup.log" 2>&1
ninja -C build-gpu > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo BUILD FAILED; exit 1; }
B=build-gpu/apps/duct-bench
for np in 2 4; do for c in allreduce bcast reduce allgather reduce_scatter alltoall gather scatter; do
  echo "== $c np=$np 64 MiB nomps"; timeout 60 $MR -np $np $B -d cuda -C $c -b 64M -e 64M -n 5 -w 2 2>&1 | grep -v '^#'
done; done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog; mkdir -p /tmp/mps /tmp/mpslog
nvidia-cuda-mps-control -d && echo "MPS started"
MR="$MR -x CUDA_MPS_PIPE_DIRECTORY"
for np in 2 4; do echo "== allreduce np=$np MPS 8B-1G"; timeout 100 $MR -np $np $B -d cuda -b 8 -e 1G -f 8 -n 10 -w 2 2>&1 | grep -v '^#  '; done
for np in 2 4; do
  s=$(date +%s)
  DUCT_CHANNEL=auto TEST_WATCHDOG_S=110 timeout 120 $MR -np $np -x DUCT_CHANNEL -x TEST_WATCHDOG_S -x CUDA_MPS_PIPE_DIRECTORY build-gpu/tests/gpu/duct-gpu-tests > "$out/gpu-mps-auto-$np.log" 2>&1
  echo "tests/gpu mps np=$np channel=auto: rc=$? $(( $(date +%s) - s )) s $(sed 's/\x1b\[[0-9;]*m//g' "$out/gpu-mps-auto-$np.log" | grep -E '^(test cases|assertions)|^All tests passed' | sort -u | tr '\n' ' ')"
done
echo quit | nvidia-cuda-mps-control
echo "total $(( $(date +%s) - t0 )) s"
