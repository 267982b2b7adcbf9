#!/bin/bash
# relocated.sh SOURCE_DIR MPIRUN CONSUMER_DIR: duct built, installed and
# consumed where MPI and UCX come from prefixes of their own, as at an HPC
# site (modules, Spack), and not from /usr.
#
# UCX's headers, libraries and .pc files are copied to $sites/ucx; Open
# MPI's headers, wrapper data and .pc files to $sites/ompi (laid out as its
# own prefix: OPAL_PREFIX points its compiler wrappers there; its libraries
# are linked from the system). In a private mount namespace the system's
# UCX and Open MPI headers (/usr/include/{ucp,ucs,uct,ucm},
# /usr/lib/x86_64-linux-gnu/openmpi/include) and their .pc files are hidden,
# so any file that takes headers from the wrong place fails to compile.
# There duct is configured with PKG_CONFIG_PATH naming the two prefixes
# (CUDA off, no tests: the point is the include and library paths), built,
# installed into a DESTDIR, and the three consumers of install.sh are built
# against it and run at 2 ranks. Needs root and unshare(1); exit 77 without.
set -uo pipefail
src=$1 mpirun=$2 consumer=$3
[ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null || { echo "SKIP: needs root and unshare -m"; exit 77; }
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
syslib=/usr/lib/$arch
[ -d /usr/include/ucp ] && [ -f "$syslib/pkgconfig/ompi-c.pc" ] && [ -f "$syslib/pkgconfig/ucx.pc" ] ||
  { echo "SKIP: needs Debian's libucx-dev and libopenmpi-dev to copy from"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sites=$tmp/sites

# UCX in $sites/ucx.
mkdir -p "$sites/ucx/include" "$sites/ucx/lib/pkgconfig"
cp -a /usr/include/ucp /usr/include/ucs /usr/include/uct /usr/include/ucm "$sites/ucx/include/"
cp -a "$syslib"/libucp.so* "$syslib"/libucs.so* "$syslib"/libuct.so* "$syslib"/libucm.so* "$sites/ucx/lib/"
[ -d "$syslib/ucx" ] && cp -a "$syslib/ucx" "$sites/ucx/lib/"
for pc in "$syslib"/pkgconfig/ucx*.pc; do
  sed -e "s|^prefix *=.*|prefix=$sites/ucx|" -e 's|^libdir *=.*|libdir=${prefix}/lib|' \
      -e 's|^includedir *=.*|includedir=${prefix}/include|' "$pc" >"$sites/ucx/lib/pkgconfig/$(basename "$pc")"
done
# Open MPI in $sites/ompi, mirroring its own layout under the prefix.
om=$sites/ompi/lib/$arch/openmpi
mkdir -p "$om/lib" "$sites/ompi/lib/pkgconfig" "$sites/ompi/share"
cp -a "$syslib/openmpi/include" "$om/"
ln -s "$syslib/openmpi/lib"/* "$om/lib/"
cp -a /usr/share/openmpi "$sites/ompi/share/"
for pc in "$syslib"/pkgconfig/ompi*.pc "$syslib"/pkgconfig/mpi*.pc; do
  sed -e "s|^prefix *=.*|prefix=$sites/ompi|" "$pc" >"$sites/ompi/lib/pkgconfig/$(basename "$pc")"
done

cat >"$tmp/inside.sh" <<INSIDE
set -uo pipefail
mount --make-rprivate /
for d in /usr/include/ucp /usr/include/ucs /usr/include/uct /usr/include/ucm $syslib/openmpi/include; do
  mount -t tmpfs none "\$d" || exit 1
done
: >"$tmp/empty.pc"
for pc in $syslib/pkgconfig/ucx*.pc $syslib/pkgconfig/ompi*.pc $syslib/pkgconfig/mpi*.pc; do
  mount --bind "$tmp/empty.pc" "\$pc" || exit 1
done
echo "hidden: \$(ls /usr/include/ucp | wc -l) files in /usr/include/ucp, \$(ls $syslib/openmpi/include | wc -l) in Open MPI's include"
export PKG_CONFIG_PATH=$sites/ucx/lib/pkgconfig:$sites/ompi/lib/pkgconfig
echo "ucx: \$(pkg-config --cflags ucx); MPI: \$(pkg-config --cflags ompi-c)"
s=\$(date +%s)
meson setup "$tmp/build" "$src" --prefix=/opt/duct-site -Dcuda=disabled -Dtests=false -Dlto=disabled \
  >"$tmp/setup.log" 2>&1 || { tail -30 "$tmp/setup.log" >&2; echo "FAIL: meson setup" >&2; exit 1; }
ninja -C "$tmp/build" >"$tmp/build.log" 2>&1 || { grep -B2 -A8 -m3 "error" "$tmp/build.log" >&2; echo "FAIL: duct does not build" >&2; exit 1; }
echo "ok: duct built against the relocated MPI and UCX in \$((\$(date +%s) - s)) s"
# The installed tree and its consumers (OPAL_PREFIX: Open MPI's wrappers,
# which CMake's FindMPI asks, then read the relocated prefix).
EXPECT_UCX_LIBDIR=$sites/ucx/lib CONSUMER_BUILD_ENV="OPAL_PREFIX=$sites/ompi" bash "$src/tests/install/install.sh" "$tmp/build" "$mpirun" "$consumer"
INSIDE
unshare -m bash "$tmp/inside.sh"
