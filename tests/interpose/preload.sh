#!/bin/sh
# preload.sh c|python|f77|f90|f08 MPIRUN LIBDUCT_MPI [NP]
#
# An unmodified MPI program under LD_PRELOAD=libduct-mpi.so gives the same
# results as without it, and DUCT_LOG=info shows that duct served its
# collectives; DUCT_INTERPOSE=0 makes the library a pass-through.
#   c       tests/interpose/plain_mpi.c, compiled here with mpicc
#   python  tests/interpose/mpi4py_check.py with Debian's python3-mpi4py
#           (exit 77, skipped, when mpi4py is not installed)
#   f77 f90 tests/interpose/plain_mpi.F90 with `include 'mpif.h'`, `use mpi`
#   f08     or `use mpi_f08`, compiled with mpifort
#           (exit 77 when there is no mpifort or no Fortran MPI)
set -u
mode=$1 mpirun=$2 lib=$3 np=${4:-4}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

case $mode in
  c)
    command -v mpicc >/dev/null || { echo "mpicc not found"; exit 77; }
    mpicc -O2 -o "$work/prog" "$here/plain_mpi.c" || fail "mpicc failed"
    set -- "$work/prog" ;;
  f77|f90|f08)
    command -v mpifort >/dev/null || { echo "mpifort not found: skipped"; exit 77; }
    case $mode in
      # gfortran 10+ rejects mpif.h's untyped buffers without -fallow-argument-mismatch
      f77) mpifort -O2 -fallow-argument-mismatch -o "$work/prog" "$here/plain_mpi.F90" 2>/dev/null ||
             mpifort -O2 -o "$work/prog" "$here/plain_mpi.F90" ;;
      f90) mpifort -O2 -DUSE_MPI -o "$work/prog" "$here/plain_mpi.F90" ;;
      f08) mpifort -O2 -DUSE_MPI_F08 -o "$work/prog" "$here/plain_mpi.F90" ;;
    esac >"$work/build.log" 2>&1 || {
      cat "$work/build.log"
      # An MPI without Fortran bindings (or without the mpi_f08 module) is not a failure of duct.
      grep -qi "mpi_f08\|mpif.h\|Cannot open module\|No such file" "$work/build.log" && { echo "no Fortran MPI ($mode): skipped"; exit 77; }
      fail "mpifort failed"; }
    set -- "$work/prog" ;;
  python)
    # Debian's python3-mpi4py belongs to Debian's python3 (not a pyenv or venv one).
    py=python3
    [ -x /usr/bin/python3 ] && py=/usr/bin/python3
    "$py" -c "import mpi4py" 2>/dev/null || { echo "python3-mpi4py is not installed: skipped"; exit 77; }
    set -- "$py" "$here/mpi4py_check.py" ;;
  *) echo "usage: preload.sh c|python|f77|f90|f08 MPIRUN LIBDUCT_MPI [NP]"; exit 2 ;;
esac

run() {  # run NAME [VAR=VALUE...]: the program under mpirun with those variables exported
  name=$1; shift
  xs=""
  for kv in "$@"; do export "${kv?}"; xs="$xs -x ${kv%%=*}"; done
  # shellcheck disable=SC2086
  timeout 300 "$mpirun" -np "$np" $xs "$PROGRAM" $PROGRAM_ARGS >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  for kv in "$@"; do unset "${kv%%=*}"; done
  echo "== $name (exit $rc)"; cat "$work/$name.out"
  return $rc
}
PROGRAM=$1; shift; PROGRAM_ARGS="$*"

run plain || fail "the program fails without duct"
run preload "LD_PRELOAD=$lib" DUCT_LOG=info || { cat "$work/preload.err"; fail "the program fails with libduct-mpi preloaded"; }
run passthrough "LD_PRELOAD=$lib" DUCT_LOG=info DUCT_INTERPOSE=0 || fail "the program fails with DUCT_INTERPOSE=0"

# The same results: every check line and the digest (the CUDA query may differ;
# ranks print in any order).
for f in plain preload passthrough; do grep -v "^MPIX_Query_cuda_support" "$work/$f.out" | sort >"$work/$f.cmp"; done
diff "$work/plain.cmp" "$work/preload.cmp" || fail "results differ with libduct-mpi preloaded"
diff "$work/plain.cmp" "$work/passthrough.cmp" || fail "results differ with DUCT_INTERPOSE=0"
grep -q '^PASS$' "$work/preload.out" || fail "no PASS"

# duct served them, and said so.
echo "== what duct said (DUCT_LOG=info, first lines)"
grep -E 'libduct-mpi|MPI_[A-Za-z_]+ (on [0-9]+ ranks|is served by the MPI library)' "$work/preload.err" | sort -u | head -30
grep -q 'libduct-mpi loaded: MPI collectives are served by duct' "$work/preload.err" || fail "libduct-mpi did not announce itself"
if [ "$mode" = c ]; then
  for call in MPI_Allreduce MPI_Reduce MPI_Bcast MPI_Allgather MPI_Allgatherv MPI_Alltoall MPI_Alltoallv \
              MPI_Reduce_scatter_block MPI_Reduce_scatter MPI_Gather MPI_Scatter MPI_Barrier \
              MPI_Iallreduce MPI_Ibcast MPI_Ialltoall MPI_Ibarrier; do
    grep -q "$call on $np ranks\|$call on [0-9]* ranks" "$work/preload.err" || fail "no sign that duct served $call"
  done
  grep -q 'MPI_Allreduce is served by the MPI library (a user-defined op)' "$work/preload.err" ||
    fail "the user-defined op was not passed to the MPI library"
  cuda=$(sed -n 's/^MPIX_Query_cuda_support //p' "$work/preload.out")
  [ "$cuda" = "${EXPECT_CUDA:-$cuda}" ] || fail "MPIX_Query_cuda_support is $cuda"
  echo "MPIX_Query_cuda_support: $(sed -n 's/^MPIX_Query_cuda_support //p' "$work/plain.out") without, $cuda with libduct-mpi"
elif [ "$mode" = python ]; then
  grep -q 'MPI_Allreduce on [0-9]* ranks' "$work/preload.err" || fail "no sign that duct served MPI_Allreduce"
  grep -q 'MPI_Bcast on [0-9]* ranks' "$work/preload.err" || fail "no sign that duct served MPI_Bcast"
else
  # Fortran: every call through duct, the reductions natively (no "served by the MPI library").
  grep -q 'Fortran MPI collectives are served too' "$work/preload.err" || fail "the Fortran entry points were not used"
  for call in MPI_Allreduce MPI_Reduce MPI_Bcast MPI_Allgather MPI_Alltoall MPI_Gather MPI_Scatter MPI_Barrier; do
    grep -q "$call on [0-9]* ranks" "$work/preload.err" || fail "no sign that duct served the Fortran $call"
  done
  grep 'is served by the MPI library' "$work/preload.err" && fail "a Fortran reduction went to the MPI library"
fi
grep -q 'MPI_[A-Za-z_]* on [0-9]* ranks' "$work/passthrough.err" && fail "DUCT_INTERPOSE=0 still served calls"
echo PASS
