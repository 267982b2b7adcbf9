#!/bin/bash
# netns_ft.sh BUILD_DIR NODES RUNS [MODE]: surviving a lost node on a cluster
# of network namespaces (2 ranks per node, 2 rails), DUCT_FT=1.
#
# Each run: a loop of 1 MiB DUCT_Allreduce on MPI_COMM_WORLD (errors
# returned); every rank of one node, chosen at random (node1 included),
# kills itself with SIGKILL at a random iteration (duct-ft-survive -k). Every
# survivor must return an error within DUCT_TIMEOUT (5 s) + 2 s,
# DUCT_Comm_shrink must give each a communicator of the survivors, and 10
# allreduces on it must equal MPI_Allreduce's. MODE shrink-kill: one more
# rank, of another node, dies while the others shrink.
#
# Open MPI 4.1's mpirun does not exit after a node's ranks died under
# --enable-recovery (its orteds in the namespaces stay up), so each run waits
# for the survivors' processes to end and then stops mpirun itself.
# Prints per run the slowest survivor's time from the kill to its error and
# the slowest shrink, and a summary line. Skipped (77) when not root or
# network namespaces are not available.
set -uo pipefail
build=$1 nodes=$2 runs=$3 mode=${4:-kill}
export NETNS_CLUSTER_ID=${NETNS_CLUSTER_ID:-$((100 + nodes * 10 + $$ % 10))}
source "$(dirname "$0")/cluster_up.sh"
source "$(dirname "$0")/../lib/ft_runs.sh"
cluster_up "$nodes"
exe=$build/tests/mpi/duct-ft-survive
np=$((2 * nodes))
log=$build/netns-ft-$nodes-$mode.log
: >"$log"
dets=() shrinks=()
for run in $(seq 1 "$runs"); do
  node=$((RANDOM % nodes))              # 0-based: its ranks are 2*node, 2*node+1
  at=$((5 + RANDOM % 30))
  victims="$((2 * node)),$((2 * node + 1))"
  extra=() survivors=$((np - 2))
  if [ "$mode" = shrink-kill ]; then
    other=$(( (node + 1 + RANDOM % (nodes - 1)) % nodes ))
    extra=(-s $((2 * other + RANDOM % 2)))
    survivors=$((np - 3))
  fi
  kf=$build/netns-ft-kill-$$.txt
  rm -f "$kf"
  out=$build/netns-ft-run.log
  timeout 120 mpirun "${args[@]}" -np $np -npernode 2 -x DUCT_FT=1 -x DUCT_TIMEOUT=5 -x FT_KILL_FILE="$kf" \
    --mca orte_abort_on_non_zero_status 0 --enable-recovery "$exe" -k "$victims" -a $at "${extra[@]}" >"$out" 2>&1 &
  job=$!
  await_survivors "$out" $job $survivors 60 0.5
  for _ in $(seq 40); do pgrep -x duct-ft-surviv >/dev/null || break; sleep 0.5; done
  lingering=$(pgrep -x duct-ft-surviv | wc -l)
  [ "$lingering" -ne 0 ] && hang_report -x duct-ft-surviv >>"$out"
  pkill -9 -x duct-ft-surviv 2>/dev/null
  kill $job 2>/dev/null; wait $job 2>/dev/null
  { echo "== run $run: node $((node + 1)) (ranks $victims) killed at iteration $at ${extra[*]}"; grep '^rank' "$out"; } >>"$log"
  pass=$(grep -c ': PASS' "$out")
  read -r det shr < <(slowest "$out")
  echo "run $run: node $((node + 1)) killed at iteration $at ${extra[*]}: $pass/$survivors survivors passed, error after $det s, shrink $shr s"
  if [ "$pass" -ne $survivors ] || [ "$lingering" -ne 0 ]; then
    grep -v PMIX "$out" | tail -150
    fail "run $run: $pass of $survivors survivors passed, $lingering process(es) still running"
  fi
  awk -v d="${det/\?/99}" 'BEGIN { exit !(d + 0 <= 7) }' || fail "run $run: a survivor took ${det} s to see the failure"
  dets+=("$det") shrinks+=("${shr/\?/0}")
done
summ() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { printf "min %.3f median %.3f max %.3f s", v[1], v[int((NR + 1) / 2)], v[NR] }'; }
echo "SUMMARY $nodes nodes x 2 ranks, $mode, $runs runs: kill to every survivor's error $(summ "${dets[@]}"); shrink $(summ "${shrinks[@]}")"
