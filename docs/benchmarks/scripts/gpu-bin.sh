#!/usr/bin/env bash
# gpu-bin.sh: on the build machine, before a device-tool call, build what
# run7.sh runs on the GPU (sm_90, release) and copy it into
# .gpu-bin/ with its build-tree layout (their RUNPATHs are $ORIGIN-relative),
# so the GPU machine spends no device time compiling. Carry .gpu-bin (and
# .gpu-deps from ../shared/gpu-evidence/prepare.sh).
# WITH_UCX_CUDA=1 also builds the CUDA-aware UCX (mpi_launch_scripts/
# build-ucx-cuda.sh, into /opt/ucx-cuda; about 15 minutes on 2 cores the
# first time) and duct against it, and copies both into .gpu-bin/ucx-cuda
# (prefix/ and the same layout as above): run7.sh then also runs the
# emulated cluster's device tests and allreduce with that UCX, device
# pointers handed to UCX directly.
set -euo pipefail
[ -d .git ] || { echo "gpu-bin.sh: run it in the project root" >&2; exit 1; }
grep -qx '/.gpu-bin/' .git/info/exclude 2>/dev/null || echo '/.gpu-bin/' >> .git/info/exclude
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release >/dev/null
ninja -C build-gpu tests/gpu/duct-gpu-tests tests/mpi/duct-ft-survive apps/duct-bench apps/duct-info apps/duct-tune lib/libduct-mpi.so.0.1.0
rm -rf .gpu-bin
mkdir -p .gpu-bin/lib .gpu-bin/apps .gpu-bin/tests/gpu .gpu-bin/tests/mpi
cp -a build-gpu/lib/libduct.so* build-gpu/lib/libduct-mpi.so* .gpu-bin/lib/
rm -rf .gpu-bin/lib/*.p
cp -a build-gpu/apps/duct-bench build-gpu/apps/duct-info build-gpu/apps/duct-tune .gpu-bin/apps/
cp -a build-gpu/tests/gpu/duct-gpu-tests .gpu-bin/tests/gpu/
cp -a build-gpu/tests/mpi/duct-ft-survive .gpu-bin/tests/mpi/
if [ "${WITH_UCX_CUDA:-0}" = 1 ]; then
  bash mpi_launch_scripts/build-ucx-cuda.sh /opt/ucx-cuda >/dev/null
  ninja -C build-ucx-cuda tests/gpu/duct-gpu-tests apps/duct-bench apps/duct-info >/dev/null
  u=.gpu-bin/ucx-cuda
  mkdir -p "$u/prefix" "$u/lib" "$u/apps" "$u/tests/gpu"
  cp -a /opt/ucx-cuda/lib /opt/ucx-cuda/bin "$u/prefix/"
  rm -rf "$u/prefix/lib/pkgconfig" "$u/prefix/lib/cmake" "$u"/prefix/lib/*.a "$u"/prefix/lib/*.la "$u"/prefix/lib/ucx/*.a "$u"/prefix/lib/ucx/*.la
  cp -a build-ucx-cuda/lib/libduct.so* "$u/lib/"
  rm -rf "$u"/lib/*.p
  cp -a build-ucx-cuda/apps/duct-bench build-ucx-cuda/apps/duct-info "$u/apps/"
  cp -a build-ucx-cuda/tests/gpu/duct-gpu-tests "$u/tests/gpu/"
  # No InfiniBand on the GPU machine; the device tool carries 64 MiB in all.
  rm -f "$u"/prefix/lib/ucx/libuct_ib.so* "$u"/prefix/lib/ucx/libuct_rdmacm.so*
fi
# Smaller to carry: symbols the dynamic linker does not need go.
find .gpu-bin -type f \( -name '*.so*' -o -perm -u+x \) -exec strip --strip-unneeded {} + 2>/dev/null || true
# iproute2 for run7.sh's emulated cluster, in case the GPU machine has no `ip`.
if [ -d .gpu-deps ] && ! ls .gpu-deps/net/iproute2_*.deb >/dev/null 2>&1; then
  mkdir -p .gpu-deps/net
  (cd .gpu-deps/net && apt-get download -q iproute2 libmnl0 libbpf1 libelf1 libcap2 libxtables12 libbsd0 libmd0 \
     >/dev/null 2>&1) || echo "gpu-bin.sh: could not download iproute2 into .gpu-deps/net (apt-get update first?)"
fi
git rev-parse HEAD > .gpu-bin/COMMIT
git diff --quiet HEAD -- lib include apps tests || echo "dirty" >> .gpu-bin/COMMIT
echo "gpu-bin.sh: .gpu-bin ready ($(du -sh .gpu-bin | cut -f1), $(tr '\n' ' ' < .gpu-bin/COMMIT))"
