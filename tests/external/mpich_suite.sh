#!/bin/bash
# mpich_suite.sh MPICH_SRC OUT [DIR ...]
#
# Runs MPICH's own MPI test suite (test/mpi of an MPICH source tree; its
# tests are written against the MPI standard, not against MPICH) on the MPI
# library first on PATH, once as it is and once with every collective served
# by duct through LD_PRELOAD=libduct-mpi.so, and prints one line per test
# run: the result without duct, the result with it, the test, its ranks and
# arguments. A test that passes without duct and fails with it is a duct
# defect. Nothing of MPICH is copied into duct: this script builds the tests
# from the tree it is given, in OUT.
#
#   DIR      test directories under test/mpi (default: coll); each has a
#            testlist.in of "name ranks [arg=..] [env=..] [timeLimit=..]"
#   DUCT_MPI_LIB   libduct-mpi.so (default: build/lib/ beside this script's tree)
#   MAX_NP   skip lines with more ranks (default 11)
#   TIMEOUT  seconds a run may take where its line sets no timeLimit
#            (default 180; a hang is a failure)
#   DUCT_RUN_ENV   extra "VAR=value ..." exported to the duct runs only
#                  (e.g. "DUCT_TUNE=allreduce:0-inf:ring DUCT_CHECK=1")
#   ONLY     duct: run only with duct (the column without it prints "-")
#   MPIRUN_ARGS    more mpirun options for both runs, e.g. the emulated
#                  cluster's: MPIRUN_ARGS="$(netns-cluster.sh args) --map-by node"
#
# Results of 2026-11-26: docs/benchmarks/2026-11-26-mpich-suite.md.
# Get a tree without network access to GitHub: `apt-get source mpich` where
# Debian's source packages are reachable.
set -u
src=${1:?usage: mpich_suite.sh MPICH_SRC OUT [DIR ...]}
out=${2:?usage: mpich_suite.sh MPICH_SRC OUT [DIR ...]}
shift 2
[ $# -eq 0 ] && set -- coll
here=$(cd "$(dirname "$0")" && pwd)
lib=${DUCT_MPI_LIB:-$here/../../build/lib/libduct-mpi.so}
max_np=${MAX_NP:-11}
t=$src/test/mpi
[ -f "$t/include/mpitest.h" ] || { echo "no MPICH test suite at $t"; exit 2; }
[ -f "$lib" ] || { echo "no $lib (build duct first)"; exit 2; }
command -v mpicc >/dev/null || { echo "mpicc not found"; exit 2; }
mkdir -p "$out/inc" "$out/obj" "$out/lib"
# A copy of the libraries (libduct-mpi finds libduct beside itself): a
# rebuild during the run does not change what the runs load.
soname=$(readelf -d "$lib" | sed -n 's/.*NEEDED.*\[\(libduct\.so[^]]*\)\].*/\1/p')
cp -L "$lib" "$out/lib/libduct-mpi.so" && cp -L "$(dirname "$lib")/$soname" "$out/lib/$soname" || exit 2
lib=$out/lib/libduct-mpi.so

# The harness: MPICH's configure writes these two headers; the tests need
# only the plain POSIX answers (and an empty list of MPIX extensions).
cat >"$out/inc/mpitestconf.h" <<'EOF'
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDLIB_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF
: >"$out/inc/mtest_mpix.h"
: >"$out/inc/dtpoolsconf.h"
inc=(-I"$out/inc" -I"$t/include" -I"$t/dtpools/include")
cc() { mpicc -O1 -w "${inc[@]}" "$@"; }
for f in mtest mtest_common dtypes mtest_single mtest_thread run_mpitests; do
  [ -f "$out/obj/$f.o" ] || cc -c "$t/util/$f.c" -o "$out/obj/$f.o" || exit 2
done
# dtpools (the datatype pool some tests draw their buffers from) includes
# its configure header by a relative path: compile a copy beside it.
mkdir -p "$out/dtpools/include" "$out/dtpools/src"
cp "$t"/dtpools/include/*.h "$out/dtpools/include/" && cp "$out/inc/dtpoolsconf.h" "$out/dtpools/"
for f in "$t"/dtpools/src/*.c; do
  o=$out/obj/dtp_$(basename "$f" .c).o
  [ -f "$o" ] || mpicc -O1 -w -I"$out/dtpools/include" "${inc[@]}" -c "$f" -o "$o" || exit 2
done

lines() { grep -v '^#' "$t/$1/testlist.in" | sed 's/^@[a-z_]*@ *//' | awk 'NF'; }

build() {  # dir name -> binary path, or nothing
  local d=$1 name=$2 bin=$out/bin/$1/$2 main= th=$out/obj/mtest_single.o
  mkdir -p "$out/bin/$d"
  [ -x "$bin" ] && { echo "$bin"; return; }
  [ -f "$t/$d/$name.c" ] || return
  grep -q "int main" "$t/$d/$name.c" || main=$out/obj/run_mpitests.o
  grep -q "mpithreadtest\|MTest_Start_thread" "$t/$d/$name.c" && th=$out/obj/mtest_thread.o
  cc "$t/$d/$name.c" $main "$out"/obj/mtest.o "$out"/obj/mtest_common.o "$out"/obj/dtypes.o "$out"/obj/dtp_*.o "$th" \
    -lm -lpthread -o "$bin" 2>"$bin.log" && echo "$bin"
}

run() {  # mode bin np tl log args... ; prints PASS or FAIL(rc)
  local mode=$1 bin=$2 np=$3 tl=$4 log=$5
  shift 5
  local pre=()
  if [ "$mode" = duct ]; then
    pre=(-x LD_PRELOAD="$lib")
    for kv in ${DUCT_RUN_ENV:-}; do pre+=(-x "$kv"); done
  fi
  (cd "$(dirname "$log")" && timeout -k 5 "$tl" mpirun --allow-run-as-root --oversubscribe ${MPIRUN_ARGS:-} -np "$np" "${pre[@]}" \
    "${envs[@]}" "$bin" "$@") >"$log" 2>&1 </dev/null
  local rc=$?
  if [ $rc -eq 0 ] && grep -q "No Errors" "$log"; then echo PASS; else echo "FAIL($rc)"; fi
}

pass=0 fail=0 regress=0
for d in "$@"; do
  mkdir -p "$out/log/$d"
  # the coords files and the like that tests open from their directory
  cp "$t/$d"/*.txt "$out/log/$d/" 2>/dev/null
  while read -r name np rest; do
    [ "$np" -gt "$max_np" ] && { echo "skip  -     $d/$name $np (more than $max_np ranks)"; continue; }
    bin=$(build "$d" "$name")
    [ -n "$bin" ] || { echo "skip  -     $d/$name (does not build with this MPI: $out/bin/$d/$name.log)"; continue; }
    args=() envs=() tl=${TIMEOUT:-180}
    for w in $rest; do
      case $w in
        arg=*) args+=("${w#arg=}") ;;
        env=*) envs+=(-x "${w#env=}") ;;
        timeLimit=*) tl=${w#timeLimit=} ;;
      esac
    done
    [ "$tl" -gt 600 ] && tl=600
    tag=$name.$np$(printf '%s' "${args[*]:-}" | tr -c 'a-zA-Z0-9=' _)
    if [ "${ONLY:-}" = duct ]; then a=-; else a=$(run plain "$bin" "$np" "$tl" "$out/log/$d/$tag.plain" "${args[@]}"); fi
    b=$(run duct "$bin" "$np" "$tl" "$out/log/$d/$tag.duct" "${args[@]}")
    [ "$b" = PASS ] && pass=$((pass + 1)) || fail=$((fail + 1))
    [ "$b" != PASS ] && [ "$a" = PASS ] && regress=$((regress + 1))
    printf '%-9s %-9s %s/%s %s %s\n' "$a" "$b" "$d" "$name" "$np" "${args[*]:-}"
  done < <(lines "$d")
done
echo "with duct: $pass passed, $fail failed; $regress passed without duct and failed with it"
[ $regress -eq 0 ] && { [ "${ONLY:-}" != duct ] || [ $fail -eq 0 ]; }
