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
# rank, of another node, dies while the others shrink. MODE link: the node's
# processes live on, but its links (eth0, eth1) are set down 0.2-1.5 s into
# the loop; its ranks are then silent, and the survivors must exclude them
# (DUCT_FT_TIMEOUT=2 in the agreement); the cut node's ranks must see an
# error too (duct-ft-survive -L). Afterwards they (and
# survivors that Open MPI's MPI_Finalize holds in its fence with the cut
# node's daemon) are stopped, and the links come up again.
#
# Open MPI 4.1's mpirun does not exit after a node's ranks died under
# --enable-recovery (its orteds in the namespaces stay up), and survivors may
# stay in MPI_Finalize's fence; so each run waits up to 3 s for the
# survivors' processes to end, counts those held after printing
# "MPI_Finalize", and then stops them and mpirun itself. Any other process
# still there fails the run, with its stack (tests/lib/ft_runs.sh).
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
rails() { for dev in eth0 eth1; do ip netns exec "$ns" ip link set "$dev" "$1"; done; }  # the cut node's rails up/down
cut_lines() { cat "$kf.cut" 2>/dev/null | grep -c 'cut off'; }
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
  [ "$mode" = link ] && extra=(-L -i 1000000)
  kf=$build/netns-ft-kill-$$.txt
  rm -f "$kf" "$kf.cut"
  out=$build/netns-ft-run.log
  timeout 120 mpirun "${args[@]}" -np $np -npernode 2 -x DUCT_FT=1 -x DUCT_TIMEOUT=5 -x DUCT_FT_TIMEOUT=2 \
    -x FT_KILL_FILE="$kf" --mca orte_abort_on_non_zero_status 0 --enable-recovery \
    "$exe" -k "$victims" -a $at "${extra[@]}" >"$out" 2>&1 &
  job=$!
  ns=duct$NETNS_CLUSTER_ID-node$((node + 1))
  if [ "$mode" = link ]; then
    for _ in $(seq 100); do [ "$(grep -ac 'loop started' "$out")" -ge $np ] && break; sleep 0.2; done
    sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.2 + 1.3 * r / 32767 }')"
    date +%s.%N >"$kf"
    rails down
  fi
  await_survivors "$out" $job $survivors 60 0.5
  for _ in $(seq 6); do [ -n "$(live duct-ft-survive)" ] || break; sleep 0.5; done
  lingering=$(live duct-ft-survive | wc -l)
  finalize_stuck=0 cut=0
  if [ "$mode" = link ]; then
    # The cut node's ranks must have seen an error too, and then wait to be
    # stopped (they write to a file: their output went over the cut links).
    for _ in $(seq 40); do [ "$(cut_lines)" -ge 2 ] && break; sleep 0.5; done
    cut=$(cut_lines)
    cat "$kf.cut" >>"$out" 2>/dev/null
    [ "$cut" -eq 2 ] && lingering=$((lingering - 2))
  fi
  # Survivors that passed and entered MPI_Finalize may be held in its fence
  # (Open MPI's runtime after it lost a node's daemon), not in duct.
  if [ "$(grep -ac ': PASS' "$out")" -eq $survivors ] && [ "$lingering" -le "$(grep -ac ': MPI_Finalize' "$out")" ]; then
    finalize_stuck=$lingering lingering=0
  fi
  [ "$lingering" -ne 0 ] && hang_report -x duct-ft-survive >>"$out"
  pkill -9 -x duct-ft-survive 2>/dev/null
  # (-9 for a link run: mpirun waits for the cut node's daemon; the job is
  # `timeout`, which passes no SIGKILL on, so its child first)
  if [ "$mode" = link ]; then pkill -9 -P $job 2>/dev/null; kill -9 $job 2>/dev/null; else kill $job 2>/dev/null; fi
  wait $job 2>/dev/null
  if [ "$mode" = link ]; then
    rails up
    ip netns pids "$ns" | xargs -r kill -9 2>/dev/null  # its orted, cut off from mpirun
  fi
  { echo "== run $run: node $((node + 1)) (ranks $victims) killed at iteration $at ${extra[*]}"; grep -a '^rank' "$out"; } >>"$log"
  pass=$(grep -ac ': PASS' "$out")
  read -r det shr < <(slowest "$out")
  if [ "$mode" = link ]; then
    what="node $((node + 1))'s links cut: $pass/$survivors survivors passed, $cut cut-off rank(s) saw an error"
  else
    what="node $((node + 1)) killed at iteration $at ${extra[*]}: $pass/$survivors survivors passed"
  fi
  echo "run $run: $what, error after $det s, shrink $shr s; $finalize_stuck survivor(s) held in Open MPI's MPI_Finalize"
  if [ "$pass" -ne $survivors ] || [ "$lingering" -ne 0 ]; then
    grep -av PMIX "$out" | tail -150
    fail "run $run: $pass of $survivors survivors passed, $lingering process(es) still running"
  fi
  awk -v d="${det/\?/99}" 'BEGIN { exit !(d + 0 <= 7) }' || fail "run $run: a survivor took ${det} s to see the failure"
  dets+=("$det") shrinks+=("${shr/\?/0}")
done
summ() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { printf "min %.3f median %.3f max %.3f s", v[1], v[int((NR + 1) / 2)], v[NR] }'; }
echo "SUMMARY $nodes nodes x 2 ranks, $mode, $runs runs: kill to every survivor's error $(summ "${dets[@]}"); shrink $(summ "${shrinks[@]}")"
