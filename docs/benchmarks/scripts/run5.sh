#!/usr/bin/env bash
# 2026-11-22, third session: the device engine's completion through a done
# word the GPU writes into shared memory (DUCT_ENGINE_MEMOPS=1, new) against
# the CUDA event (=0), alternating, with and without MPS; tests/gpu on it.
set -u
root=$(pwd); deps=$root/.gpu-deps; out=${OUT:-/tmp/out}; mkdir -p "$out"
exec > >(tee "$out/run5.log") 2>&1
source "$deps/activate.sh" "$deps" /opt/deps
export OMPI_MCA_op=^avx
MR="mpirun --allow-run-as-root --oversubscribe -x OMPI_MCA_op -x DUCT_ENGINE_MEMOPS"
t0=$(date +%s)
git log --oneline | head -1
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release > "$out/setup.log" 2>&1
ninja -C build-gpu > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo BUILD FAILED; exit 1; }
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
cmp() {  # label
  for np in 2 4; do for rep in 1 2; do for m in 1 0; do
    echo "== $1 np=$np DUCT_ENGINE_MEMOPS=$m (rep $rep)"
    DUCT_ENGINE_MEMOPS=$m timeout 100 $MR -np $np $B -d cuda -b 8 -e 4K -f 8 -n 3000 -w 100 2>&1 | grep -v '^#'
  done; done; done
  echo "== $1 np=2 large"; timeout 100 $MR -np 2 $B -d cuda -b 64M -e 1G -f 16 -n 10 -w 3 2>&1 | grep -v '^#'
}
export DUCT_ENGINE_MEMOPS=1
gpu_tests nomps auto 2 4
cmp nomps
DUCT_ENGINE_MEMOPS=0 gpu_tests nomps-event auto 2
nvidia-cuda-mps-control -d && echo "MPS daemon started"
echo "== duct-run --mps with a daemon already up"
DUCTINFO=build-gpu/apps/duct-info timeout 60 mpi_launch_scripts/duct-run -np 2 --mps -- build-gpu/apps/duct-info --version
gpu_tests mps auto 1 2 4
cmp mps
echo quit | nvidia-cuda-mps-control
for f in "$out"/gpu-*.log; do sed 's/\x1b\[[0-9;]*m//g' "$f" | grep -B3 -A12 "FAILED:" | head -30; done
echo "total $(( $(date +%s) - t0 )) s"
