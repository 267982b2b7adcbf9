#!/bin/bash
# netns_tail_progress.sh BUILD_DIR TAIL_PROGRESS: on 2 nodes x 2 ranks, a
# rank that completed a collective and then waits in the MPI library (its
# own barrier, not duct's) must still hand over the tail of its last
# messages (tests/cluster/tail_progress.c): UCX's tcp transport completes a
# send while part of it may still sit in UCX's buffer, and before duct's
# worker was progressed from the MPI library's progress loop such rounds
# hung (12 runs in 12 on this cluster, each placement below); and a rank
# that sent with the MPI library just before a duct collective must see
# those messages leave while it waits in duct (with Open MPI's pml ucx over
# TCP: 4 runs in 4 hung before duct's waits ran its progress). Links shaped
# to 1 Gbit/s and socket buffers of 16 KiB (UCX_TCP_SNDBUF/RCVBUF) keep the
# sockets full when a round ends.
# Skipped (77) when not root or network namespaces are not available.
set -uo pipefail
build=$1 exe=$2
export NETNS_CLUSTER_ID=${NETNS_CLUSTER_ID:-$((200 + $$ % 50))}
export NETNS_CLUSTER_RATE=1gbit
source "$(dirname "$0")/cluster_up.sh"
cluster_up 2
# Open MPI's own messages over UCX too (its pml ucx takes TCP only when
# told to), where this Open MPI can: then the MPI library's sends linger
# as duct's do.
pmls=("--mca pml ob1")
if mpirun "${args[@]}" -np 2 --map-by node --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
     "$exe" 1 1 8 >/dev/null 2>&1; then
  pmls+=("--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any")
else
  echo "this Open MPI cannot use its pml ucx here: the MPI library's messages go over ob1 only"
fi
for pml in "${pmls[@]}"; do
  for placement in "-np 2 --map-by node" "-np 4 -npernode 2"; do
    # shellcheck disable=SC2086
    out=$(timeout 120 mpirun "${args[@]}" $placement $pml -x UCX_TCP_SNDBUF=16k -x UCX_TCP_RCVBUF=16k \
      "$exe" 150 200 4096 2>&1)
    rc=$?
    echo "[$placement $pml]"
    echo "$out" | grep -v '^\s*$' | tail -3
    [ $rc -ne 124 ] || fail "hung ($placement $pml): a rank kept its last message back"
    [ $rc -eq 0 ] && grep -q "tail_progress: .*: ok" <<<"$out" || fail "tail_progress failed ($placement $pml, rc $rc)"
  done
done
echo PASS
