#!/bin/sh
# nb_lifetimes.sh MPIRUN PLAIN_EXE DIRECT_EXE LIBDUCT_MPI NP
#
# Issue 29's cases (tests/interpose/nb_lifetimes.c): nonblocking
# collectives on intercommunicators with the groups arriving at different
# times, and nonblocking collectives whose datatype, user op or communicator
# is freed before MPI_Wait. The program is run
#   plain           the MPI library alone (the reference)
#   preload         LD_PRELOAD=libduct-mpi.so (MPI_I* served by duct)
#   preload-check   the same with DUCT_CHECK=1
#   direct          built with -DDUCT_DIRECT: DUCT_I* and DUCT_Wait
#   direct-check    the same with DUCT_CHECK=1
# Every run must pass its own checks (values computed in the program) and
# print the same lines and digest as the plain run.
set -u
mpirun=$1 plain=$2 direct=$3 lib=$4 np=${5:-4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

run() {  # run NAME EXE ARG [VAR=VALUE...]
  name=$1 exe=$2 arg=$3; shift 3
  xs=""
  for kv in "$@"; do export "${kv?}"; xs="$xs -x ${kv%%=*}"; done
  # shellcheck disable=SC2086
  timeout 300 "$mpirun" -np "$np" $xs "$exe" $arg >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  for kv in "$@"; do unset "${kv%%=*}"; done
  echo "== $name (exit $rc)"
  cat "$work/$name.out"
  if [ $rc -ne 0 ]; then tail -40 "$work/$name.err"; fi
  return $rc
}

run plain "$plain" "" || fail "the program fails without duct"
run preload "$plain" --duct "LD_PRELOAD=$lib" DUCT_LOG=info || fail "the program fails with libduct-mpi preloaded"
run preload-check "$plain" --duct "LD_PRELOAD=$lib" DUCT_CHECK=1 || fail "the program fails preloaded with DUCT_CHECK=1"
run direct "$direct" --duct DUCT_LOG=info || fail "the program fails on duct's DUCT_I* calls"
run direct-check "$direct" --duct DUCT_CHECK=1 || fail "the program fails on duct's DUCT_I* calls with DUCT_CHECK=1"
# Lines marked [duct] are cases the MPI library alone fails (freeing the
# communicator of a pending MPI_Iallreduce crashes Open MPI 4.1): each run
# passed them (PASS), and they are left out of the comparison.
for f in preload preload-check direct direct-check; do
  grep -v ' \[duct\]$' "$work/$f.out" >"$work/$f.cmp"
  diff "$work/plain.out" "$work/$f.cmp" >/dev/null || { diff "$work/plain.out" "$work/$f.cmp"; fail "$f differs from the MPI library"; }
  grep -q '^PASS$' "$work/$f.out" || fail "$f did not pass"
  grep -q ' \[duct\]$' "$work/$f.out" || fail "$f ran none of the cases the MPI library alone fails"
done
# duct served the calls (the intercommunicator ones by handing them to the MPI library).
grep -q 'MPI_Iallgather on [0-9]* ranks' "$work/preload.err" || fail "no sign that duct served MPI_Iallgather"
grep -q 'DUCT_Iscatterv on [0-9]* ranks' "$work/direct.err" || fail "no sign that duct served DUCT_Iscatterv"
grep -q 'MPI_Ibarrier is served by the MPI library (intercommunicator)' "$work/preload.err" ||
  fail "the intercommunicator MPI_Ibarrier was not handed to the MPI library"
echo PASS
