#!/bin/bash
# netns_tail_progress.sh BUILD_DIR TAIL_PROGRESS: on 2 nodes x 2 ranks, a
# rank that completed a collective and then waits in the MPI library (its
# own barrier, not duct's) must still hand over the tail of its last
# messages (tests/cluster/tail_progress.c): UCX's tcp transport completes a
# send while part of it may still sit in UCX's buffer, and before duct's
# worker was progressed from the MPI library's progress loop such rounds
# hung (12 runs in 12 on this cluster, each placement below). Links shaped
# to 1 Gbit/s and socket buffers of 16 KiB (UCX_TCP_SNDBUF/RCVBUF) keep the
# sockets full when a round ends.
# Skipped (77) when not root or network namespaces are not available.
set -uo pipefail
build=$1 exe=$2
export NETNS_CLUSTER_ID=${NETNS_CLUSTER_ID:-$((200 + $$ % 50))}
export NETNS_CLUSTER_RATE=1gbit
source "$(dirname "$0")/cluster_up.sh"
cluster_up 2
for placement in "-np 2 --map-by node" "-np 4 -npernode 2"; do
  # shellcheck disable=SC2086
  out=$(timeout 120 mpirun "${args[@]}" $placement -x UCX_TCP_SNDBUF=16k -x UCX_TCP_RCVBUF=16k \
    "$exe" 150 200 4096 2>&1)
  rc=$?
  echo "$out" | grep -v '^\s*$' | tail -3
  [ $rc -ne 124 ] || fail "hung ($placement): a rank waiting in the MPI library kept its last message back"
  [ $rc -eq 0 ] && echo "$out" | grep -q "tail_progress: .*: ok" || fail "tail_progress failed ($placement, rc $rc)"
done
echo PASS
