#!/usr/bin/env bash
# 2026-11-22, third session: native MPI_CHAR/MPI_AINT/MPI_COUNT on device
# buffers (tests/gpu np 2 and 4), and the OSU-style MPI_CHAR allreduce of
# 4 MiB through libduct-mpi, with and without MPS (osu_char.c).
set -u
root=$(pwd); deps=$root/.gpu-deps; out=${OUT:-/tmp/out}; mkdir -p "$out"
exec > >(tee "$out/run6.log") 2>&1
source "$deps/activate.sh" "$deps" /opt/deps
export OMPI_MCA_op=^avx
MR="mpirun --allow-run-as-root --oversubscribe -x OMPI_MCA_op"
t0=$(date +%s); git log --oneline | head -1
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release > "$out/setup.log" 2>&1
ninja -C build-gpu > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo BUILD FAILED; exit 1; }
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
mpicc -O2 docs/benchmarks/scripts/osu_char.c -I"$cuda/include" -L"$cuda/lib64" -lcudart -o build-gpu/osu_char || echo "osu_char: build failed"
echo "built in $(( $(date +%s) - t0 )) s"
for np in 2 4; do
  s=$(date +%s)
  TEST_WATCHDOG_S=170 timeout 180 $MR -np $np -x TEST_WATCHDOG_S build-gpu/tests/gpu/duct-gpu-tests > "$out/gpu-$np.log" 2>&1
  echo "tests/gpu np=$np: rc=$? $(( $(date +%s) - s )) s $(sed 's/\x1b\[[0-9;]*m//g' "$out/gpu-$np.log" | grep -E '^(test cases|assertions)|^All tests passed' | sort -u | tr '\n' ' ')"
done
osu() { for np in 2 4; do timeout 120 $MR -np $np -x LD_PRELOAD=$root/build-gpu/lib/libduct-mpi.so -x DUCT_LOG \
          build-gpu/osu_char $((4 << 20)) 100 2>&1 | grep -E 'osu_char|wrong|MPI_Allreduce on'; done; }
echo "== no MPS"; DUCT_LOG=info osu
nvidia-cuda-mps-control -d && echo "MPS daemon started"
echo "== MPS"; DUCT_LOG=info osu
echo quit | nvidia-cuda-mps-control
for f in "$out"/gpu-*.log; do sed 's/\x1b\[[0-9;]*m//g' "$f" | grep -B3 -A12 "FAILED:" | head -30; done
echo "total $(( $(date +%s) - t0 )) s"
