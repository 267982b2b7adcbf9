#!/usr/bin/env bash
set -u
root=$(pwd); deps=$root/.gpu-deps; out=${OUT:-/tmp/out}; mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1
source "$deps/activate.sh" "$deps" /opt/deps
export OMPI_MCA_op=^avx
MR="mpirun --allow-run-as-root --oversubscribe -x OMPI_MCA_op"
t0=$(date +%s)
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release > "$out/setup.log" 2>&1
ninja -C build-gpu > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo BUILD FAILED; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"; git log --oneline | head -1
gpu_tests() {  # label; channels...
  local label=$1; shift
  for ch in "$@"; do for np in 1 2 4; do
    s=$(date +%s)
    DUCT_CHANNEL=$ch TEST_WATCHDOG_S=170 timeout 180 $MR -np $np -x DUCT_CHANNEL -x TEST_WATCHDOG_S -x CUDA_MPS_PIPE_DIRECTORY \
      build-gpu/tests/gpu/duct-gpu-tests > "$out/gpu-$label-$ch-$np.log" 2>&1
    echo "tests/gpu $label np=$np channel=$ch: rc=$? $(( $(date +%s) - s )) s $(sed 's/\x1b\[[0-9;]*m//g' "$out/gpu-$label-$ch-$np.log" | grep -E '^(test cases|assertions)|^All tests passed' | sort -u | tr '\n' ' ')"
  done; done
}
gpu_tests nomps ${CHANNELS:-auto ucx}
for f in "$out"/gpu-*.log; do sed 's/\x1b\[[0-9;]*m//g' "$f" | grep -B3 -A12 "FAILED:" | head -40; done
echo "total $(( $(date +%s) - t0 )) s"
