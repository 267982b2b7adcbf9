#!/usr/bin/env bash
# gpu-bin.sh: on the build machine, before a device-tool call, build what
# run7.sh runs on the GPU (sm_90, release) and copy it into
# .gpu-bin/ with its build-tree layout (their RUNPATHs are $ORIGIN-relative),
# so the GPU machine spends no device time compiling. Carry .gpu-bin (and
# .gpu-deps from ../shared/gpu-evidence/prepare.sh).
set -euo pipefail
[ -d .git ] || { echo "gpu-bin.sh: run it in the project root" >&2; exit 1; }
grep -qx '/.gpu-bin/' .git/info/exclude 2>/dev/null || echo '/.gpu-bin/' >> .git/info/exclude
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release >/dev/null
ninja -C build-gpu tests/gpu/duct-gpu-tests apps/duct-bench apps/duct-info lib/libduct-mpi.so.0.1.0
rm -rf .gpu-bin
mkdir -p .gpu-bin/lib .gpu-bin/apps .gpu-bin/tests/gpu
cp -a build-gpu/lib/libduct.so* build-gpu/lib/libduct-mpi.so* .gpu-bin/lib/
rm -rf .gpu-bin/lib/*.p
cp -a build-gpu/apps/duct-bench build-gpu/apps/duct-info .gpu-bin/apps/
cp -a build-gpu/tests/gpu/duct-gpu-tests .gpu-bin/tests/gpu/
git rev-parse HEAD > .gpu-bin/COMMIT
git diff --quiet HEAD -- lib include apps tests || echo "dirty" >> .gpu-bin/COMMIT
echo "gpu-bin.sh: .gpu-bin ready ($(du -sh .gpu-bin | cut -f1), $(tr '\n' ' ' < .gpu-bin/COMMIT))"
