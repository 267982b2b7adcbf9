#!/usr/bin/env bash
# IPC cache trade-off: the device engine with every mapping reopened on each
# call (DUCT_IPC_CACHE_SIZE=1) against the default cache, same sizes.
set -u
root=$(pwd); deps=$root/.gpu-deps; out=${OUT:-/tmp/out}; mkdir -p "$out"
exec > >(tee "$out/run3.log") 2>&1
source "$deps/activate.sh" "$deps" /opt/deps
export OMPI_MCA_op=^avx
MR="mpirun --allow-run-as-root --oversubscribe -x OMPI_MCA_op"
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release > "$out/setup.log" 2>&1
ninja -C build-gpu > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; echo BUILD FAILED; exit 1; }
B=build-gpu/apps/duct-bench
for sz in 8 1M 64M 1G; do for cs in 256 1; do
  echo "== np=2 size=$sz DUCT_IPC_CACHE_SIZE=$cs"
  DUCT_IPC_CACHE_SIZE=$cs timeout 60 $MR -np 2 -x DUCT_IPC_CACHE_SIZE $B -d cuda -b $sz -e $sz -n 20 -w 3 2>&1 | grep -v '^#'
done; done
