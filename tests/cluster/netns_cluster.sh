#!/bin/bash
# netns_cluster.sh BUILD_DIR DUCT_FAULT: duct on a 2-node cluster of network namespaces
# (mpi_launch_scripts/netns-cluster.sh) with 2 rails (links) per node, 2
# ranks per node:
#   1. duct-info: intra-node pairs chose the intra-node channel (cma, or
#      cuda_ipc with GPUs) and inter-node pairs ucx over TCP on a veth link;
#      local rank l's UCX worker uses rail l (DUCT_NET_DEVICES=eth0,eth1,
#      a site's UCX_NET_DEVICES=eth0,eth1,lo alone, and the automatic
#      choice with neither set);
#   2. the whole MPI test suite (every collective and algorithm forced, the
#      split-rail ones included, errors), over the channels duct picks and
#      over the mpi channel (DUCT_CHANNEL=mpi);
#   3. the collective cases with 3 ranks on the 2 nodes (2 + 1: the
#      split-rail forms step aside for the other algorithms), and the
#      small-call path's cases on 2 x 2 and 2 + 1 (allreduce, bcast,
#      reduce, gather and scatter take it across nodes), a small bcast
#      its root skips (the others time out naming it), and duct-tune on
#      3 + 1 ranks (one node pins its ranks in turn, the other not);
#   4. duct-bench allreduce beside MPI_Allreduce, #wrong must be 0;
#   5. faults: every rank of node2 killed during 64 MiB allreduces, then
#      node2's eth1 taken down during them (both within DUCT_TIMEOUT + 2 s).
# Skipped (77) when not root or network namespaces are not available.
set -uo pipefail
build=$1 fault=$2
export NETNS_CLUSTER_ID=${NETNS_CLUSTER_ID:-$((150 + $$ % 50))}
source "$(dirname "$0")/cluster_up.sh"
cluster_up 2
mpi() { timeout 600 mpirun "${args[@]}" -np 4 -npernode 2 "$@"; }

echo "== duct-info on 2 nodes x 2 ranks"
info=$(mpi "$build/apps/duct-info") || fail "duct-info failed"
echo "$info" | sed -n '/rank(s) on/,/^DUCT_LOG/p' | grep -v '^DUCT_LOG'
grep -q '^# 4 rank(s) on 2 node(s)' <<<"$info" || fail "not 2 nodes"
# The channel of every pair, from each rank's "-> rank j kind" lines.
echo "$info" | awk '
  /^rank [0-9]/ { me = $2; host[me] = $4 }
  /^    -> rank/ { pair[me "," $3] = $0 }
  END {
    bad = 0
    for (k in pair) {
      split(k, ij, ","); i = ij[1]; j = ij[2]; line = pair[k]
      same = host[i] == host[j]
      if (same && line !~ /(cma|cuda_ipc)$/) { print "intra-node pair " i "-" j ": " line; bad++ }
      if (!same && line !~ /ucx \(.*tcp\/eth[01]/) { print "inter-node pair " i "-" j ": " line; bad++ }
    }
    exit bad > 0
  }' || fail "a pair chose the wrong channel (above)"
echo "channels: intra-node pairs cma/cuda_ipc, inter-node pairs ucx over tcp/eth0 or eth1"
# Each rank's rail: local rank l on eth<l>.
echo "$info" | awk '
  /^rank [0-9]/ { me = $2; local = $8 }
  /^    network devices:/ { dev[me] = $3; want[me] = "eth" local }
  END { bad = 0; n = 0
        for (r in want) { n++; if (dev[r] != want[r]) { print "rank " r ": devices " dev[r] ", want " want[r]; bad++ } }
        exit bad > 0 || n != 4 }' || fail "a rank is not on its rail (above)"
echo "rails: local rank 0 on eth0, local rank 1 on eth1"
# Without DUCT_NET_DEVICES and UCX_NET_DEVICES duct chooses by itself: no
# NIC on a PCI card here, two veth links of one speed, so the same rails.
auto=$(mpi -x DUCT_NET_DEVICES= -x UCX_NET_DEVICES= "$build/apps/duct-info") || fail "duct-info (automatic devices) failed"
echo "$auto" | grep "network devices:" | sort | uniq -c
echo "$auto" | awk '
  /^rank [0-9]/ { me = $2; local = $8 }
  /^    network devices:/ { dev[me] = $3; want[me] = "eth" local; why[me] = $0 }
  END { bad = 0; n = 0
        for (r in want) { n++; if (dev[r] != want[r] || why[r] !~ /virtual link/) { print "rank " r ": " why[r] ", want " want[r]; bad++ } }
        exit bad > 0 || n != 4 }' || fail "the automatic choice did not put local rank l on eth<l> (above)"
echo "automatic: local rank l on virtual link l"
# A site's UCX_NET_DEVICES list (the cluster exports eth0,eth1,lo to every
# rank) with DUCT_NET_DEVICES unset: the list is spread over the ranks as
# the rails are, not given whole to each (UCX would use one link of two).
site=$(mpi -x DUCT_NET_DEVICES=auto "$build/apps/duct-info") || fail "duct-info (UCX_NET_DEVICES list) failed"
echo "$site" | awk '
  /^rank [0-9]/ { me = $2; local = $8 }
  /^    network devices:/ { dev[me] = $3; want[me] = "eth" local; why[me] = $0 }
  END { bad = 0; n = 0
        for (r in want) { n++; if (dev[r] != want[r] || why[r] !~ /UCX_NET_DEVICES=.*listed device/) { print "rank " r ": " why[r] ", want " want[r]; bad++ } }
        exit bad > 0 || n != 4 }' || fail "UCX_NET_DEVICES=eth0,eth1,lo did not put local rank l on eth<l> (above)"
echo "UCX_NET_DEVICES list: local rank l on listed device l"

echo "== the MPI test suite on 2 nodes x 2 ranks"
mpi -x TEST_WATCHDOG_S=300 -x OMPI_MCA_op "$build/tests/mpi/duct-mpi-tests" >"$build/netns-suite.log" 2>&1
rc=$?
tail -n 5 "$build/netns-suite.log"
[ $rc -eq 0 ] || { grep -B2 -A12 FAILED "$build/netns-suite.log" | head -60; fail "the MPI suite failed on the cluster"; }

echo "== the MPI test suite on 2 nodes x 2 ranks over the mpi channel (DUCT_CHANNEL=mpi: no UCX in duct)"
mpi -x DUCT_CHANNEL=mpi -x TEST_WATCHDOG_S=300 -x OMPI_MCA_op "$build/tests/mpi/duct-mpi-tests" >"$build/netns-suite-mpi.log" 2>&1
rc=$?
tail -n 2 "$build/netns-suite-mpi.log"
[ $rc -eq 0 ] || { grep -B2 -A12 FAILED "$build/netns-suite-mpi.log" | head -60; fail "the MPI suite failed over the mpi channel on the cluster"; }

echo "== the collective cases with 3 ranks on 2 nodes (2 + 1)"
timeout 900 mpirun "${args[@]}" -np 3 --map-by node -x TEST_WATCHDOG_S=300 -x OMPI_MCA_op "$build/tests/mpi/duct-mpi-tests" \
  "[collectives]" >"$build/netns-uneven.log" 2>&1
rc=$?
tail -n 3 "$build/netns-uneven.log"
[ $rc -eq 0 ] || { grep -B2 -A12 FAILED "$build/netns-uneven.log" | head -60; fail "the collective cases failed on 3 ranks on 2 nodes"; }

echo "== the small-call path across nodes (allreduce, bcast, reduce, gather, scatter; tests/mpi/test_small_path.cpp), 2 x 2 and 2 + 1"
for layout in "-np 4 -npernode 2" "-np 3 --map-by node"; do
  # shellcheck disable=SC2086
  timeout 900 mpirun "${args[@]}" $layout -x TEST_SMALL_EXPECT=2 -x TEST_WATCHDOG_S=300 "$build/tests/mpi/duct-small-tests" \
    "[small]" >"$build/netns-small.log" 2>&1
  rc=$?
  tail -n 2 "$build/netns-small.log"
  [ $rc -eq 0 ] || { grep -B2 -A12 FAILED "$build/netns-small.log" | head -60; fail "the small-call path failed across nodes ($layout)"; }
done

echo "== a small bcast that its root skips, across nodes (DUCT_TIMEOUT=5, duct-fault hang-small-bcast)"
hs=$build/netns-hang-small.log
timeout 120 mpirun "${args[@]}" -np 4 -npernode 2 -x DUCT_TIMEOUT=5 "$fault" hang-small-bcast >"$hs" 2>&1
rc=$?
grep -E "bcast that rank 0 skips" "$hs" | cut -c1-200
[ $rc -eq 0 ] && [ "$(grep -c ': PASS$' "$hs")" -eq 4 ] ||
  { tail -20 "$hs"; fail "the ranks waiting for a skipped small bcast did not all time out naming it"; }
echo "skipped small bcast: the waiting ranks timed out naming DUCT_Bcast"

echo "== duct-tune with 3 + 1 ranks on 2 nodes (node1's 3 ranks share the CPUs, node2's one does not)"
# Every rank must judge the rounds alike and take every barrier, whether
# its own node pins its ranks in turn or not (a node that did not once
# left the others waiting).
hf=$build/netns-tune.hosts
printf 'node1 slots=3\nnode2 slots=1\n' >"$hf"
targs=()
for a in "${args[@]}"; do
  if [ "${prev:-}" = --hostfile ]; then targs+=("$hf"); else targs+=("$a"); fi
  prev=$a
done
rm -f "$build/netns-tune.rules"
timeout 300 mpirun "${targs[@]}" -np 4 "$build/apps/duct-tune" --quick -C bcast,scatter -e 4K \
  -o "$build/netns-tune.rules" >"$build/netns-tune.log" 2>&1 || { tail -20 "$build/netns-tune.log"; fail "duct-tune on 3 + 1 ranks failed"; }
grep '^# ranks:' "$build/netns-tune.rules"
grep -q '^# duct-tune shape: nodes n=4 (2 nodes, different ranks per node)$' "$build/netns-tune.rules" ||
  fail "duct-tune on 3 + 1 ranks wrote no section for its shape"
if [ "$(nproc)" -lt 3 ]; then
  grep -q '^# ranks: 3 placements of each node.s ranks' "$build/netns-tune.rules" || fail "node1's 3 ranks were not pinned in turn"
fi

echo "== the split-rail collectives on an odd count large enough to pipeline (9000004 bytes), roots 0 and 3"
for c in allreduce bcast reduce allgather reduce_scatter alltoall; do
  for r in 0 3; do
    out=$(mpi -x DUCT_LOG=info "$build/apps/duct-bench" -d host -C "$c" -r "$r" -b 9000004 -e 9000004 -n 2 -w 1 2>&1) ||
      { echo "$out" | tail -5; fail "duct-bench $c failed"; }
    grep -q "split_rail" <<<"$out" || fail "$c did not run split_rail"
    echo "$out" | awk '$1 ~ /^[0-9]+$/ && NF > 12 { rows++; if ($9 != 0 || ($13 != 0 && $13 != "-")) bad = 1 } END { exit bad || rows == 0 }' ||
      { echo "$out" | grep -v "^\[duct"; fail "duct-bench $c root $r found wrong elements"; }
  done
done
echo "split_rail allreduce, bcast, reduce, allgather, reduce_scatter, alltoall: 0 wrong"

echo "== duct-bench allreduce on 2 nodes x 2 ranks"
bench=$(mpi "$build/apps/duct-bench" -d host -b 8 -e 16M -f 8 -n 10 -w 2) || fail "duct-bench failed"
echo "$bench"
echo "$bench" | awk '$1 ~ /^[0-9]+$/ && NF > 12 { rows++; if ($9 != 0 || $13 != 0) bad = 1 } END { exit bad || rows == 0 }' ||
  fail "duct-bench found wrong elements"

# A node dies (every rank of node2 SIGKILLed at once, duct-fault kill-node)
# during 64 MiB allreduces: each rank of node1 must return PEER_FAILED or
# TIMEOUT within DUCT_TIMEOUT (5 s) + 2 s. --enable-recovery keeps mpirun
# from killing the survivors before they report. Open MPI 4.1's mpirun
# then does not exit once every rank is gone (its orteds in the namespaces
# stay up under recovery), so the test waits for the survivors' lines and
# for their processes to end, and then stops mpirun itself.
echo "== every rank of node2 killed during 64 MiB allreduces (DUCT_TIMEOUT=5)"
kn=$build/netns-killnode.log
timeout 120 mpirun "${args[@]}" -np 4 -npernode 2 -x DUCT_TIMEOUT=5 --mca orte_abort_on_non_zero_status 0 \
  --enable-recovery "$fault" kill-node >"$kn" 2>&1 &
job=$!
for _ in $(seq 60); do
  [ "$(grep -c 'kill-node: error .* s after the kill' "$kn")" -ge 2 ] && break
  kill -0 $job 2>/dev/null || break
  sleep 1
done
# The survivors stay 7 s after reporting (so that neither looks like a
# second failure to the other), then leave.
for _ in $(seq 20); do pgrep -x duct-fault >/dev/null || break; sleep 1; done
pgrep -x duct-fault >/dev/null && { pkill -9 -x duct-fault; fail "a rank of node1 did not exit 20 s after reporting"; }
kill $job 2>/dev/null; wait $job 2>/dev/null
grep -E "kill-node: |allreduce loop while" "$kn" | cut -c1-220
[ "$(grep -c 'warmed up (2 rank(s) to be killed' "$kn")" -eq 4 ] || { tail -20 "$kn"; fail "the ranks did not warm up, or not 2 victims"; }
[ "$(grep -c 'allreduce loop while a peer dies: \(PEER_FAILED\|TIMEOUT\)' "$kn")" -eq 2 ] ||
  { tail -20 "$kn"; fail "not both ranks of node1 reported PEER_FAILED or TIMEOUT"; }
awk '/kill-node: error .* s after the kill/ { n++; if ($5 + 0 > 7) bad = 1 } END { exit bad || n != 2 }' "$kn" ||
  fail "a survivor took longer than DUCT_TIMEOUT + 2 s to report"
echo "node2 killed: both ranks of node1 reported it within DUCT_TIMEOUT + 2 s"

# Last (it breaks the cluster): a link taken down during 64 MiB allreduces.
# Every rank must stop waiting within DUCT_TIMEOUT (5 s) with an error that
# says what it waited for, and the job must end (MPI_ERRORS_ARE_FATAL), not hang.
echo "== node2's eth1 taken down during 64 MiB allreduces (DUCT_TIMEOUT=5)"
ns2=$(awk '$1 == "node2" { print $2 }' "/run/duct-netns-$NETNS_CLUSTER_ID/map")
( sleep 4; ip -n "$ns2" link set eth1 down ) &
start=$(date +%s)
timeout 120 mpirun "${args[@]}" -np 4 -npernode 2 -x DUCT_TIMEOUT=5 "$build/apps/duct-bench" -d host -b 64M -e 64M \
  -n 100000 -w 1 -m 0 >"$build/netns-linkdown.log" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
wait
grep -E "no progress for|PEER_FAILED" "$build/netns-linkdown.log" | cut -c1-200 | head -4
[ $rc -ne 124 ] || fail "the job hung after the link went down"
[ $rc -ne 0 ] || fail "the job did not notice the link going down"
# (On a loaded machine the job may still be connecting at 4 s: then the
# error names the connection that could not be made, also a clear end: at
# the communicator's set-up, or at the first message to that rank.)
grep -q "no progress for 5.0 s (DUCT_TIMEOUT=5)\|PEER_FAILED\|is gone\|setting up the communicator: .*unreachable\|connecting to rank [0-9]* .*unreachable" \
  "$build/netns-linkdown.log" ||
  { tail -20 "$build/netns-linkdown.log"; fail "no timeout or peer-failure error after the link went down"; }
# The link went down at 4 s; DUCT_TIMEOUT 5 s, plus slack for mpirun's teardown on two cores.
[ "$took" -le 30 ] || fail "the job took $took s to end after the link went down at 4 s"
echo "link down at 4 s: the ranks reported it and the job ended after $took s"
echo PASS
