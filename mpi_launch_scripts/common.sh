# Shared by demo.sh and test.sh (sourced, not run).
#
# duct_setup: make sure the build tools and libraries are there (installing
# Debian packages with apt-get when run as root, or saying what to install
# otherwise), then configure and build duct into $DUCTBUILD (default
# <repo>/build). On a machine without a package manager (a GPU host using
# ../shared/gpu-deps), the tools found on PATH are used as they are.

DUCTDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DUCTBUILD=${DUCTBUILD:-$DUCTDIR/build}

# Debian packages duct needs to build and test.
DUCT_PACKAGES="build-essential pkg-config meson ninja-build openmpi-bin libopenmpi-dev libucx-dev ucx-utils \
libhwloc-dev catch2 cmake"

# Extra packages for the whole test suite (test.sh): clang with libFuzzer and
# the sanitizer runtimes (sanitizer suite), SLURM and munge (the batch
# scripts under a local SLURM cluster), mpi4py (the preload library under
# Python), iproute2 (the network-namespace cluster), gfortran (the preload
# library under Fortran programs), NumPy, PyTorch and scikit-learn (duct's
# Python package, its torch backend and DDP hook, the digits example),
# matplotlib (duct-plot), SimGrid's SMPI (the simulation build's check), gdb
# (the stacks of a fault-tolerance run that hangs, tests/lib/ft_runs.sh).
DUCT_TEST_PACKAGES="clang libclang-rt-dev slurm-wlm munge python3-mpi4py iproute2 gfortran python3-numpy libsimgrid-dev simgrid \
python3-torch python3-sklearn python3-matplotlib gdb"

duct_log() { printf '[duct] %s\n' "$*" >&2; }

duct_have_deps() {
  command -v mpicxx >/dev/null && command -v mpirun >/dev/null && command -v meson >/dev/null &&
    command -v ninja >/dev/null && command -v pkg-config >/dev/null &&
    pkg-config --exists ucx hwloc 2>/dev/null &&
    { [ -f /usr/include/catch2/catch.hpp ] || printf '#include <catch2/catch.hpp>\n' |
        ${CXX:-c++} -x c++ -fsyntax-only - >/dev/null 2>&1; }
}

# Install Debian packages when root with apt-get; otherwise say what to run.
duct_apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    duct_log "installing Debian packages: $*"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "$@" >/dev/null ||
      { duct_log "apt-get install failed"; return 1; }
  else
    duct_log "as root run: apt-get install -y $*"
    return 1
  fi
}

duct_install_deps() {
  if duct_have_deps; then return 0; fi
  # shellcheck disable=SC2086
  duct_apt_install $DUCT_PACKAGES || { duct_log "missing build dependencies"; return 1; }
  duct_have_deps || { duct_log "dependencies still missing after installing"; return 1; }
}

# CUDA: built whenever nvcc is there (/usr/local/cuda/bin is searched), so the
# device code always compiles; "no GPU" is then a run-time condition.
# duct_cuda_path must run in the calling shell (not in $(...)) so that the
# PATH it sets reaches meson.
duct_cuda_path() {
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    case ":$PATH:" in *:/usr/local/cuda/bin:*) ;; *) export PATH="/usr/local/cuda/bin:$PATH" ;; esac
  fi
}
duct_cuda_option() {
  duct_cuda_path
  if command -v nvcc >/dev/null; then echo "-Dcuda=enabled"; else
    duct_log "nvcc not found: building without CUDA (host paths only)"
    echo "-Dcuda=disabled"
  fi
}

duct_build() {
  local cuda
  duct_cuda_path
  cuda=$(duct_cuda_option)
  if [ ! -f "$DUCTBUILD/build.ninja" ]; then
    duct_log "configuring $DUCTBUILD ($cuda)"
    meson setup "$DUCTBUILD" "$DUCTDIR" "$cuda" >"$DUCTDIR/.meson-setup.log" 2>&1 ||
      { cat "$DUCTDIR/.meson-setup.log" >&2; return 1; }
  fi
  duct_log "building (ninja -C $DUCTBUILD)"
  ninja -C "$DUCTBUILD" >/dev/null || ninja -C "$DUCTBUILD"
}

duct_setup() { duct_install_deps && duct_build; }

# The sanitizer suite's compiler: clang++ that links libFuzzer and ASan.
duct_have_san() {
  command -v clang++ >/dev/null &&
    printf 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }\n' |
      clang++ -x c++ -fsanitize=fuzzer,address -o /dev/null - >/dev/null 2>&1
}

duct_have_test_deps() {
  duct_have_san && command -v slurmctld >/dev/null && command -v munged >/dev/null && command -v ip >/dev/null && command -v gdb >/dev/null &&
    /usr/bin/python3 -c "import mpi4py, numpy, torch, sklearn, matplotlib" 2>/dev/null
}

# Install what the test suite needs beyond the build; succeeds when the
# sanitizer suite can be built (the other tests skip themselves, exit 77,
# when their tools are missing).
duct_install_test_deps() {
  if ! duct_have_test_deps; then
    # shellcheck disable=SC2086
    duct_apt_install $DUCT_TEST_PACKAGES || true
  fi
  duct_have_san || { duct_log "no clang with libFuzzer/ASan: the sanitizer suite is skipped (apt-get install $DUCT_TEST_PACKAGES)"; return 1; }
}

# The sanitizer build (clang, ASan + UBSan, no CUDA): build-san/.
DUCTBUILD_SAN=${DUCTBUILD_SAN:-$DUCTDIR/build-san}
duct_build_san() {
  if [ ! -f "$DUCTBUILD_SAN/build.ninja" ]; then
    duct_log "configuring $DUCTBUILD_SAN (clang, AddressSanitizer + UBSan, sanitizer suite)"
    CC=clang CXX=clang++ meson setup "$DUCTBUILD_SAN" "$DUCTDIR" -Dcuda=disabled -Dsanitize_suite=true \
      -Db_sanitize=address,undefined -Db_lundef=false -Db_lto=false -Dlto=disabled -Dbuildtype=debugoptimized \
      >"$DUCTDIR/.meson-setup-san.log" 2>&1 || { cat "$DUCTDIR/.meson-setup-san.log" >&2; return 1; }
  fi
  duct_log "building (ninja -C $DUCTBUILD_SAN)"
  ninja -C "$DUCTBUILD_SAN" >/dev/null || ninja -C "$DUCTBUILD_SAN"
}

# mpirun arguments: root needs --allow-run-as-root; more ranks than cores
# need --oversubscribe.
duct_mpirun_args() {
  local np=$1 args=""
  [ "$(id -u)" = 0 ] && args="$args --allow-run-as-root"
  [ "$np" -gt "$(nproc)" ] && args="$args --oversubscribe"
  echo "$args"
}
