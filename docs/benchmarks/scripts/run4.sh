#!/usr/bin/env bash
# 2026-11-22, third session: tests/gpu on the nonblocking context creation,
# duct-info's MPS report, duct-run --mps, and where an 8-byte device
# allreduce spends its time (lat_floor.cu) with and without MPS.
set -u
root=$(pwd); deps=$root/.gpu-deps; out=${OUT:-/tmp/out}; mkdir -p "$out"
exec > >(tee "$out/run4.log") 2>&1
source "$deps/activate.sh" "$deps" /opt/deps
export OMPI_MCA_op=^avx
MR="mpirun --allow-run-as-root --oversubscribe -x OMPI_MCA_op"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline | head -1
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release > "$out/setup.log" 2>&1
ninja -C build-gpu > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo BUILD FAILED; exit 1; }
nvcc -O2 -arch=sm_90 docs/benchmarks/scripts/lat_floor.cu $(pkg-config --cflags --libs ompi-c) -lcuda -o build-gpu/lat_floor || echo "lat_floor: build failed"
echo "built in $(( $(date +%s) - t0 )) s"
B=build-gpu/apps/duct-bench
gpu_tests() {  # label channel nps...
  local label=$1 ch=$2; shift 2
  for np in "$@"; do
    s=$(date +%s)
    DUCT_CHANNEL=$ch TEST_WATCHDOG_S=170 timeout 180 $MR -np $np -x DUCT_CHANNEL -x TEST_WATCHDOG_S \
      build-gpu/tests/gpu/duct-gpu-tests > "$out/gpu-$label-$ch-$np.log" 2>&1
    echo "tests/gpu $label np=$np channel=$ch: rc=$? $(( $(date +%s) - s )) s $(sed 's/\x1b\[[0-9;]*m//g' "$out/gpu-$label-$ch-$np.log" | grep -E '^(test cases|assertions)|^All tests passed' | sort -u | tr '\n' ' ')"
  done
}
small() { timeout 120 $MR -np 2 $B -d cuda -b 8 -e 4K -f 8 -n 3000 -w 100 2>&1 | grep -v '^#  '; }
echo "== duct-info np=2, no MPS"; timeout 60 $MR -np 2 build-gpu/apps/duct-info 2>&1 | grep -E '^# (GPU|CUDA)|^rank'
gpu_tests nomps auto 1 2 4
gpu_tests nomps ucx 2
echo "== lat_floor, no MPS"; timeout 120 $MR -np 2 build-gpu/lat_floor
echo "== 8 B - 4 KiB allreduce, no MPS"; small
echo "== duct-run --mps (starts and stops a daemon)"
DUCTINFO=build-gpu/apps/duct-info timeout 120 mpi_launch_scripts/duct-run -np 2 --mps -- $B -d cuda -b 8 -e 4K -f 8 -n 3000 -w 100 2>&1 | grep -v '^#  '
sleep 2; pgrep -a nvidia-cuda-mps && echo "MPS daemon still running (wrong)" || echo "no MPS daemon left (right)"
nvidia-cuda-mps-control -d && echo "MPS daemon started"
echo "== duct-info np=2, MPS"; timeout 60 $MR -np 2 build-gpu/apps/duct-info 2>&1 | grep -E '^# (GPU|CUDA)|^rank'
echo "== duct-run --mps with a daemon already up"
DUCTINFO=build-gpu/apps/duct-info timeout 60 mpi_launch_scripts/duct-run -np 2 --mps -- build-gpu/apps/duct-info --version
pgrep -x nvidia-cuda-mps-control >/dev/null && echo "daemon left running (right)"
echo "== lat_floor, MPS"; timeout 120 $MR -np 2 build-gpu/lat_floor
echo "== 8 B - 4 KiB allreduce, MPS"; small
gpu_tests mps auto 2 4
gpu_tests mps ucx 1 2 4
echo quit | nvidia-cuda-mps-control
for f in "$out"/gpu-*.log; do sed 's/\x1b\[[0-9;]*m//g' "$f" | grep -B3 -A12 "FAILED:" | head -30; done
echo "total $(( $(date +%s) - t0 )) s"
