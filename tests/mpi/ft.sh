#!/bin/bash
# ft.sh MPIRUN EXE NP RUNS [CHANNEL [ARGS...]]: surviving dead ranks on one node
# (DUCT_FT=1, duct-ft-survive). Each run kills two ranks at random (or one,
# and a third during the shrink, every other run) at a random iteration of
# a loop of 1 MiB allreduces; every survivor must report the error within
# DUCT_TIMEOUT (5 s) + 2 s, shrink, and pass 10 allreduces checked against
# MPI_Allreduce. mpirun should end with the survivors; Open MPI 4.1.4's
# MPI_Finalize under --enable-recovery sometimes waits forever in its PMIx
# fence for the dead ranks (1 in 20 runs of a plain MPI program that kills
# two of 4 ranks and finalizes, no duct in it): such a run counts as passed
# when every survivor passed first, and is reported.
# ARGS go to duct-ft-survive (e.g. -d -c 8388608: 64 MiB device buffers).
# With FT_IN_CALL_MAX_US set, the victims die a random 0..FT_IN_CALL_MAX_US
# microseconds after entering the call of their iteration (-m), not before
# it. A run in which duct-ft-survive says SKIP (no device) exits 77.
set -uo pipefail
mpirun=$1 exe=$2 np=$3 runs=$4 channel=${5:-auto}
shift $(($# < 5 ? $# : 5))
extra=("$@")
source "$(dirname "$0")/../lib/ft_runs.sh"
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp) kf=$(mktemp) stuck=0
trap 'rm -f "$out" "$kf"' EXIT
for run in $(seq 1 "$runs"); do
  a=$((RANDOM % np)) b=$(( (a + 1 + RANDOM % (np - 1)) % np ))
  at=$((3 + RANDOM % 30))
  if [ $((run % 2)) -eq 0 ] && [ "$np" -ge 4 ]; then
    what=(-k "$a" -s "$b") survivors=$((np - 2))
  else
    what=(-k "$a,$b") survivors=$((np - 2))
  fi
  [ -n "${FT_IN_CALL_MAX_US:-}" ] && what+=(-m $((RANDOM % (FT_IN_CALL_MAX_US + 1))))
  : >"$kf"
  timeout 60 "$mpirun" -np "$np" --enable-recovery -x DUCT_FT=1 \
    -x DUCT_TIMEOUT=5 -x DUCT_CHANNEL="$channel" -x FT_KILL_FILE="$kf" "$exe" -a $at "${what[@]}" "${extra[@]}" >"$out" 2>&1 &
  job=$!
  # Until every survivor passed (or one failed), then 5 s more for mpirun.
  await_survivors "$out" $job $survivors 100 0.3
  for _ in $(seq 50); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
  rc=0 pass=$(grep -ac ': PASS' "$out")
  if kill -0 $job 2>/dev/null; then
    rc=124
    [ "$pass" -ne "$survivors" ] && hang_report -x duct-ft-survive >>"$out"
    pkill -9 -x duct-ft-survive 2>/dev/null
    kill $job 2>/dev/null
  fi
  wait $job 2>/dev/null
  grep -aq '^SKIP' "$out" && { grep -a '^SKIP' "$out"; exit 77; }
  read -r det shr < <(slowest "$out")
  echo "run $run: ${what[*]} at iteration $at: $pass/$survivors passed, error after $det s, shrink $shr s, $([ $rc -eq 124 ] && echo 'mpirun stuck in MPI_Finalize' || echo 'mpirun ended')"
  [ $rc -eq 124 ] && stuck=$((stuck + 1))
  if [ "$pass" -ne "$survivors" ]; then
    # Every rank's own lines first (UCX's warnings about descriptors a
    # dead peer left can fill the tail), then the rest.
    grep -a '^rank ' "$out"
    grep -av "PMIX ERROR\|mpool.c" "$out" | tail -150
    fail "run $run"
  fi
  awk -v d="${det/\?/99}" 'BEGIN { exit !(d + 0 <= 7) }' || fail "run $run: a survivor took $det s to see the failure"
done
echo "PASS: $runs runs at $np ranks ($channel); mpirun stuck in Open MPI's MPI_Finalize after $stuck of them"
