#!/usr/bin/env bash
set -u
root=$(pwd); deps=$root/.gpu-deps; out=${OUT:-/tmp/out}; mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1
source "$deps/activate.sh" "$deps" /opt/deps
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u; which nvcc gcc g++; nproc
export OMPI_MCA_op=^avx
MR="mpirun --allow-run-as-root --oversubscribe -x OMPI_MCA_op"
t0=$(date +%s)
meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release > "$out/setup.log" 2>&1 &&
  ninja -C build-gpu > "$out/build.log" 2>&1 || { tail -40 "$out/setup.log" "$out/build.log"; echo BUILD FAILED; exit 1; }
grep -E "LTO|CUDA " "$out/setup.log"; echo "built in $(( $(date +%s) - t0 )) s"
B=build-gpu/apps/duct-bench
timeout 60 $MR -np 2 -x DUCT_LOG=info $B -d cuda -b 8 -e 1M -f 1024 -n 2 -w 1 2>&1 | grep -E "engine|wrong|error" | head -20
for np in 2 4; do echo "== allreduce np=$np nomps"; timeout 120 $MR -np $np $B -d cuda -b 8 -e 1G -f 8 -n 10 -w 3 2>&1 | grep -v '^#  '; done
for c in bcast reduce allgather reduce_scatter alltoall gather scatter; do echo "== $c np=2"; timeout 60 $MR -np 2 $B -d cuda -C $c -b 8 -e 64M -f 64 -n 5 -w 2 2>&1 | grep -v '^#  ' | grep -v "^# *(" ; done
echo "== tests/gpu np=2 auto"; DUCT_CHANNEL=auto TEST_WATCHDOG_S=140 timeout 150 $MR -np 2 -x DUCT_CHANNEL -x TEST_WATCHDOG_S build-gpu/tests/gpu/duct-gpu-tests > "$out/gpu-2.log" 2>&1; echo "rc=$?"; sed 's/\x1b\[[0-9;]*m//g' "$out/gpu-2.log" | grep -E "^(test cases|assertions)|passed|FAILED|error" | head -20
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog; mkdir -p /tmp/mps /tmp/mpslog
nvidia-cuda-mps-control -d && echo "MPS started"
MR="$MR -x CUDA_MPS_PIPE_DIRECTORY"
for np in 2 4; do echo "== allreduce np=$np MPS"; timeout 100 $MR -np $np $B -d cuda -b 8 -e 256M -f 8 -n 20 -w 3 2>&1 | grep -v '^#  '; done
echo quit | nvidia-cuda-mps-control
echo "total $(( $(date +%s) - t0 )) s"
