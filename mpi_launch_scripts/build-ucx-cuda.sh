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
# asks NVML for NVLink peers). They come with CUDA's cuda-nvml-dev component
# and the driver; the build machine's toolkit has neither and there is no
# driver. Debian ships them in its non-free component (libnvidia-ml-dev: the
# header of CUDA 11.8's NVML; libnvidia-ml1: the 535 driver's library). They
# are unpacked into NVML_HOME, a prefix of their own, not installed: the
# driver's packages would pull in its kernel module. On a machine with a
# driver the driver's own libnvidia-ml.so.1 is found first at run time.
NVML_HOME=${NVML_HOME:-}
find_nvml() {
  for d in "$NVML_HOME" "$CUDA_HOME" "$CUDA_HOME/targets/x86_64-linux" /usr /opt/nvml; do
    [ -n "$d" ] && [ -f "$d/include/nvml.h" ] && { echo "$d"; return 0; }
  done
  return 1
}
if [ ! -x "$PREFIX/bin/ucx_info" ] && ! find_nvml >/dev/null; then
  [ "$(id -u)" = 0 ] || { log "no nvml.h (CUDA's cuda-nvml-dev component) and not root to fetch Debian's"; exit 77; }
  NVML_HOME=${NVML_HOME:-/opt/nvml}
  log "no nvml.h under $CUDA_HOME: unpacking Debian non-free's libnvidia-ml-dev and libnvidia-ml1 into $NVML_HOME"
  src=/etc/apt/sources.list.d/duct-nonfree.sources
  cat >"$src" <<EOS
Types: deb
URIs: http://deb.debian.org/debian
Suites: $(. /etc/os-release; echo "$VERSION_CODENAME")
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
  # Only this list: the rest of the machine's apt state is left as it is.
  apt-get update -q -o Dir::Etc::sourcelist="$src" -o Dir::Etc::sourceparts=- \
    -o APT::Get::List-Cleanup=0 >/dev/null
  dl=$(mktemp -d)
  (cd "$dl" && apt-get download -q -o Dir::Etc::sourcelist="$src" -o Dir::Etc::sourceparts=- \
     libnvidia-ml-dev libnvidia-ml1 >/dev/null 2>&1) ||
    { log "apt-get download libnvidia-ml-dev libnvidia-ml1 failed (no non-free archive?)"; exit 77; }
  rm -f "$src"
  mkdir -p "$NVML_HOME/include" "$NVML_HOME/lib"
  for deb in "$dl"/*.deb; do dpkg -x "$deb" "$dl/x"; done
  cp "$dl/x/usr/include/nvml.h" "$NVML_HOME/include/"
  cp -P "$dl"/x/usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so* "$NVML_HOME/lib/"
  rm -rf "$dl"
fi
NVML_HOME=$(find_nvml || true)
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
  nvml_flags=()
  if [ -n "$NVML_HOME" ] && [ "$NVML_HOME" != /usr ]; then
    nvml_flags=(CPPFLAGS="-I$NVML_HOME/include" LDFLAGS="-L$NVML_HOME/lib -Wl,-rpath-link,$NVML_HOME/lib")
  fi
  : >"$work/make.log"
  ./configure "${nvml_flags[@]}" --prefix="$PREFIX" --with-cuda="$CUDA_HOME" --without-go --without-java --disable-doxygen-doc \
    --enable-mt --disable-logging --disable-debug --disable-assertions --disable-params-check \
    >"$work/configure.log" 2>&1 || { tail -30 "$work/configure.log"; exit 1; }
  grep -i "cuda" "$work/configure.log" | grep -i "support\|check" | tail -5 >&2 || true
  # The libraries, their modules and ucx_info only: UCX 1.13.1's test
  # programs (test/apps/test_cuda_hook.c) call cuCtxCreate with three
  # arguments, which CUDA 13 changed to four (cuCtxCreate_v4).
  ucx_dirs=(src/ucm src/ucs src/uct src/ucp src/tools/info)
  for d in "${ucx_dirs[@]}"; do
    make -C "$d" -j"${UCX_JOBS:-$(nproc)}" >>"$work/make.log" 2>&1 ||
      { grep -B5 -A5 "error" "$work/make.log" | head -60; log "make in $d failed ($work/make.log)"; exit 1; }
  done
  for d in "${ucx_dirs[@]}"; do make -C "$d" install >>"$work/install.log" 2>&1; done
  make install-pkgconfigDATA >>"$work/install.log" 2>&1  # ucx.pc
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
