#!/bin/sh
# fault.sh MPIRUN DUCT_FAULT SCENARIO: run one duct-fault scenario under
# mpirun with the environment it needs, and check what every rank printed.
set -u
mpirun=$1 exe=$2 scenario=$3
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
np=3
case $scenario in
  mismatch) env="DUCT_CHECK=1" ;;
  hang|hang-small|hang-small-bcast) env="DUCT_TIMEOUT=5" ;;
  dump|dump-small) env="DUCT_TIMEOUT=5" ;;
  kill)     env="DUCT_TIMEOUT=5" ;;
  first)    env="DUCT_TIMEOUT=5" ;;
  first-check) env="DUCT_TIMEOUT=5 DUCT_CHECK=1" ;;
  *) echo "unknown scenario $scenario"; exit 2 ;;
esac
xs=""
for kv in $env; do export "$kv"; xs="$xs -x ${kv%%=*}"; done
extra=""
# A rank that dies must not make mpirun kill the survivors before they report.
[ "$scenario" = kill ] && extra="--mca orte_abort_on_non_zero_status 0 --enable-recovery"
start=$(date +%s)
# shellcheck disable=SC2086
timeout 120 "$mpirun" -np $np $xs $extra "$exe" "$scenario" >"$out" 2>"$err"
rc=$?
took=$(( $(date +%s) - start ))
cat "$out"
echo "--- stderr ($scenario, mpirun exit $rc, $took s) ---"
grep -v "^\s*$" "$err" | head -40
fail() { echo "FAIL: $*"; exit 1; }
[ $rc -eq 124 ] && fail "the job hung (killed after 120 s)"
case $scenario in
  mismatch|hang|hang-small|hang-small-bcast|first-check)
    [ "$(grep -c ': PASS$' "$out")" -eq $np ] || fail "not every rank passed"
    [ $rc -eq 0 ] || fail "mpirun exited $rc" ;;
  dump|dump-small)
    [ "$(grep -c ': PASS$' "$out")" -eq $np ] || fail "not every rank passed"
    grep -q "duct: rank 1 (pid [0-9]*): pending for .* s: DUCT_Allreduce" "$err" || fail "no SIGUSR1 dump of rank 1's pending allreduce"
    grep -q "waiting for" "$err" || fail "the dump does not say what it waits for" ;;
  first)
    [ "$(grep -c ': PASS$' "$out")" -eq $np ] || fail "not every rank passed"
    [ $rc -eq 0 ] || fail "mpirun exited $rc"
    grep -q "duct: rank 1 (pid [0-9]*): pending for .* s: creating duct's context for communicator MPI_COMM_WORLD" "$err" ||
      fail "no SIGUSR1 dump of rank 1's context creation" ;;
  kill)
    survivors=$((np - 1))
    [ "$(grep -c 'allreduce loop while a peer dies: \(PEER_FAILED\|TIMEOUT\)' "$out")" -eq $survivors ] ||
      fail "not every survivor reported the failure"
    # Within DUCT_TIMEOUT (5 s) plus slack for a loaded machine.
    awk '/error .* s after the kill/ { if ($5 + 0 > 10) bad = 1 } END { exit bad }' "$out" ||
      fail "a survivor took longer than 10 s to report" ;;
esac
echo "PASS: $scenario"
