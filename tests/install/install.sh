#!/bin/bash
# install.sh BUILD_DIR MPIRUN CONSUMER_DIR: install duct from BUILD_DIR into
# a temporary DESTDIR, check what is there, run the installed duct-info and
# duct-run, then build the three consumer programs of CONSUMER_DIR outside
# the source tree (a Makefile with pkg-config, a CMake project with
# find_package(duct), a meson project with dependency('duct')) against the
# installed tree and run each at 2 ranks (each checks DUCT_Allreduce against
# MPI_Allreduce and the library version against duct.h's).
set -uo pipefail
build=$1 mpirun=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# meson test points LD_LIBRARY_PATH at the build tree: nothing may use it here.
unset LD_LIBRARY_PATH
fails=0
# Failures go to stderr too: a CI summary that shortens stdout still shows them.
fail() { echo "FAIL: $*"; echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

meson install -C "$build" --destdir "$tmp/dest" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; echo "FAIL: meson install"; exit 1; }
pc=$(find "$tmp/dest" -name duct.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no duct.pc installed"; exit 1; }
prefix=$(cd "$(dirname "$pc")/../../.." && pwd)
[ -d "$prefix/bin" ] || prefix=$(cd "$(dirname "$pc")/../.." && pwd)  # libdir = lib
echo "installed prefix (under DESTDIR): $prefix"

for f in bin/duct-info bin/duct-bench bin/duct-run include/duct/duct.h include/duct/duct.hpp \
         share/duct/slurm/duct-1node.sbatch share/duct/slurm/duct-multinode.sbatch \
         share/duct/slurm/bench-and-check.sh share/doc/duct/README.md share/doc/duct/env.md; do
  [ -e "$prefix/$f" ] || fail "missing $f"
done
libdir=$(dirname "$(dirname "$pc")")
for f in libduct.so libduct-mpi.so cmake/duct/ductConfig.cmake cmake/duct/ductConfigVersion.cmake; do
  [ -e "$libdir/$f" ] || fail "missing ${libdir#$prefix/}/$f"
done

# Installed binaries find libduct through their runpath.
loaded=$(ldd "$prefix/bin/duct-info" | awk '$1 ~ /^libduct\.so/ { print $3 }')
if [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$libdir/libduct.so")" ]; then
  ok "duct-info loads libduct from the prefix"
else ldd "$prefix/bin/duct-info"; fail "duct-info does not load libduct from the prefix"; fi
# EXPECT_UCX_LIBDIR (relocated.sh): libduct must load UCX from there, by
# its runpath, with no LD_LIBRARY_PATH.
if [ -n "${EXPECT_UCX_LIBDIR:-}" ]; then
  ucp=$(ldd "$libdir/libduct.so" | awk '$1 ~ /^libucp\.so/ { print $3 }')
  case $(readlink -f "$ucp") in "$(readlink -f "$EXPECT_UCX_LIBDIR")"/*) ok "libduct loads UCX from $EXPECT_UCX_LIBDIR" ;;
    *) readelf -d "$libdir/libduct.so" | grep -i path; fail "libduct loads UCX from '$ucp', not $EXPECT_UCX_LIBDIR" ;; esac
fi
v=$("$prefix/bin/duct-info" --version) && grep -q '^duct [0-9]*\.[0-9]*\.[0-9]*' <<<"$v" &&
  ok "duct-info --version: $v" || fail "duct-info --version: $v"
"$mpirun" -np 2 "$prefix/bin/duct-info" >"$tmp/info.log" 2>&1 && ok "mpirun -np 2 duct-info" ||
  { cat "$tmp/info.log" >&2; fail "mpirun -np 2 duct-info"; }
dry=$("$prefix/bin/duct-run" --dry-run -np 2 -- /bin/true 2>&1)
grep -q "duct-info: $prefix/bin/duct-info\$" <<<"$dry" && ok "duct-run uses the installed duct-info" ||
  { echo "$dry"; fail "duct-run --dry-run does not use the installed duct-info"; }
grep -q "mpirun .*-np 2 .*$prefix/bin/duct-run --rank -- /bin/true" <<<"$dry" && ok "duct-run --dry-run" ||
  { echo "$dry"; fail "duct-run --dry-run command line"; }
grep -q "^DUCT_PREFIX=\${DUCT_PREFIX:-/" "$prefix/share/duct/slurm/duct-1node.sbatch" &&
  ok "the installed batch scripts know the prefix" || fail "the installed batch scripts lack the prefix"

# The Python package (when meson found a Python): installed next to its
# interpreter's packages, loading the installed libduct (under DESTDIR,
# DUCT_LIBRARY points it there, as a relocated install would).
pkg=$(find "$tmp/dest" -path '*/duct/__init__.py' | head -n 1)
if [ -n "$pkg" ]; then
  cfg=$(dirname "$pkg")/_config.py
  want=${libdir#$tmp/dest}/libduct.so.
  grep -q "^LIBDUCT = '$want" "$cfg" && ok "the Python package loads ${want}*" ||
    { cat "$cfg"; fail "the Python package's libduct path is not $want*"; }
  py=/usr/bin/python3; [ -x "$py" ] || py=python3
  if "$py" -c "import mpi4py, numpy" 2>/dev/null; then
    # shellcheck disable=SC2016
    code='import numpy as np, duct; from mpi4py import MPI; x = np.full(5, MPI.COMM_WORLD.Get_rank() + 1.0); duct.allreduce(x); assert (x == 3).all(), x; print("python: PASS")'
    if PYTHONPATH="$(dirname "$(dirname "$pkg")")" DUCT_LIBRARY="$libdir/libduct.so" \
         "$mpirun" -np 2 -x PYTHONPATH -x DUCT_LIBRARY "$py" -c "$code" >"$tmp/py.log" 2>&1 &&
       [ "$(grep -o "python: PASS" "$tmp/py.log" | wc -l)" -eq 2 ]; then ok "the installed Python package at 2 ranks"
    else cat "$tmp/py.log" >&2; fail "the installed Python package at 2 ranks"; fi
  fi
fi

# The consumers, outside the source tree. CONSUMER_BUILD_ENV: NAME=VALUE
# words set while building them (relocated.sh points Open MPI's wrappers,
# which CMake's FindMPI asks, at a relocated prefix).
b() { env ${CONSUMER_BUILD_ENV:-} "$@"; }
cp -r "$src" "$tmp/consumer"
cd "$tmp/consumer" || exit 1
export PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
run_app() {  # run_app NAME EXE
  if "$mpirun" -np 2 "$2" "$1" >"$tmp/$1.log" 2>&1 && [ "$(grep -c "^$1: rank [01] of 2: PASS" "$tmp/$1.log")" -eq 2 ]; then
    ok "$1 at 2 ranks"
  else
    cat "$tmp/$1.log" >&2; fail "$1 at 2 ranks"
  fi
}
if b make -s app-make >"$tmp/make.log" 2>&1; then run_app pkg-config-make ./app-make
else cat "$tmp/make.log" >&2; fail "the Makefile consumer (pkg-config) does not build"; fi
if command -v cmake >/dev/null; then
  if b cmake -S . -B cm -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cmake.log" 2>&1 && b cmake --build cm >>"$tmp/cmake.log" 2>&1; then
    run_app cmake-find-package cm/app-cmake
  else cat "$tmp/cmake.log" >&2; fail "the CMake consumer (find_package) does not build"; fi
else
  fail "cmake not found (Debian package cmake)"
fi
if b meson setup ms >"$tmp/meson.log" 2>&1 && b ninja -C ms >>"$tmp/meson.log" 2>&1; then run_app meson-dependency ms/app-meson
else cat "$tmp/meson.log" >&2; fail "the meson consumer (dependency('duct')) does not build"; fi

[ $fails -eq 0 ] && echo "PASS: install and consume" || echo "FAILED: $fails check(s)"
[ $fails -eq 0 ]
