#!/usr/bin/env bash
# build-ucx-cuda.sh [PREFIX]: a CUDA-aware UCX in a prefix of its own, as HPC
# sites keep one beside the system's (modules, Spack), built from Debian's
# own UCX source package with --with-cuda; then duct built against it in
# build-ucx-cuda/ (every file takes UCX's headers from meson's ucx
# dependency, found through PKG_CONFIG_PATH).
#
#   PREFIX       where UCX goes (default /opt/ucx-cuda)
#   CUDA_HOME    the CUDA toolkit (default /usr/local/cuda)
#   UCX_JOBS     make -j (default: the number of cores)
#
# Needs root for apt-get (a deb-src entry is added beside the machine's
# apt sources, then `apt-get source ucx` and its build dependencies). Without
# a GPU the build still works: UCX then reports CUDA memory support only
# where a driver is loaded, and duct behaves as with Debian's UCX (its host
# suite passes against this build). On a GPU machine, carry PREFIX and
# build-ucx-cuda/ (or rebuild there) for the direct device path.
set -euo pipefail
PREFIX=${1:-/opt/ucx-cuda}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work=${UCX_SRC_DIR:-/var/tmp/duct-ucx-src}
log() { printf '[build-ucx-cuda] %s\n' "$*" >&2; }

[ -x "$CUDA_HOME/bin/nvcc" ] || { log "no CUDA toolkit at $CUDA_HOME"; exit 77; }
# UCX's --with-cuda needs NVML's header and library (its cuda_ipc transport
# asks NVML for NVLink peers): CUDA's cuda-nvml-dev component, which the
# build machine's toolkit lacks and Debian's main archive does not carry.
if [ ! -x "$PREFIX/bin/ucx_info" ] && [ ! -f "$CUDA_HOME/include/nvml.h" ] &&
   [ ! -f "$CUDA_HOME/targets/x86_64-linux/include/nvml.h" ]; then
  log "no nvml.h under $CUDA_HOME (install CUDA's cuda-nvml-dev component): UCX $(
    ls -d "$work"/ucx-*/ 2>/dev/null | head -1 | xargs -r basename) cannot be configured --with-cuda"
  exit 77
fi
if [ ! -x "$PREFIX/bin/ucx_info" ]; then
  [ "$(id -u)" = 0 ] || { log "needs root (apt-get source, build-dep)"; exit 77; }
  # deb-src beside the existing apt sources (deb822 or one-line format).
  if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >/etc/apt/sources.list.d/duct-src.sources
    else
      sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/duct-src.list
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends dpkg-dev >/dev/null
  apt-get build-dep -y -q ucx >/dev/null
  mkdir -p "$work"
  cd "$work"
  [ -d "$(ls -d ucx-*/ 2>/dev/null | head -1)" ] || apt-get source -q ucx >/dev/null
  src=$(ls -d "$work"/ucx-*/ | head -1)
  cd "$src"
  log "building $(basename "$src") with CUDA ($CUDA_HOME) into $PREFIX"
  [ -x configure ] || ./autogen.sh >/dev/null
  ./configure --prefix="$PREFIX" --with-cuda="$CUDA_HOME" --without-go --without-java --disable-doxygen-doc \
    --enable-mt --disable-logging --disable-debug --disable-assertions --disable-params-check \
    >"$work/configure.log" 2>&1 || { tail -30 "$work/configure.log"; exit 1; }
  grep -i "cuda" "$work/configure.log" | grep -i "support\|check" | tail -5 >&2 || true
  make -j"${UCX_JOBS:-$(nproc)}" >"$work/make.log" 2>&1 || { grep -B5 -A5 "error" "$work/make.log" | head -60; exit 1; }
  make install >"$work/install.log" 2>&1
fi
"$PREFIX/bin/ucx_info" -v | head -3 >&2
ls "$PREFIX/lib/ucx" | grep -i cuda >&2 || log "warning: no CUDA transport modules in $PREFIX/lib/ucx"

# duct against it.
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$CUDA_HOME/bin:$PATH"
build=$root/build-ucx-cuda
[ -f "$build/build.ninja" ] || meson setup "$build" "$root" -Dcuda=enabled >/dev/null
ninja -C "$build" >/dev/null
grep -q "$PREFIX" "$build/meson-info/intro-dependencies.json" && log "duct in $build uses UCX from $PREFIX" ||
  { log "duct in $build did not pick up $PREFIX"; exit 1; }
echo "$build"
