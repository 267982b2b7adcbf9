#!/usr/bin/env bash
# netns-cluster.sh: a cluster of N "nodes" on this machine, each a network
# namespace with its own hostname, joined by a bridge, so that MPI and UCX
# traffic between nodes really crosses a network (TCP over veth links) and
# MPI_COMM_TYPE_SHARED splits ranks by node. Needs root (ip netns).
#
#   netns-cluster.sh run N -- MPIRUN_ARGS...
#       create the nodes, run `mpirun -np ... MPIRUN_ARGS` across them with
#       the settings below, and remove everything afterwards, whatever
#       happens (a trap). Ranks are placed by node: `--map-by node` or
#       `-npernode K` in MPIRUN_ARGS choose how.
#   netns-cluster.sh up N      create and leave them (prints the settings)
#   netns-cluster.sh args      the mpirun arguments for the cluster that is up
#   netns-cluster.sh down      remove what `up` created
#
# Layout: bridge duct-br<id> with 10.77.<id>.1/24 in the root namespace; node
# i is namespace duct<id>-node<i> with veth `eth0` at 10.77.<id>.(10+i),
# loopback up; each process mpirun starts there gets hostname node<i> (a UTS
# namespace) and the node's own IPC namespace, so UCX sees other nodes as
# unreachable by shared memory and uses TCP over the veth link.
# mpirun runs in the root namespace and starts one orted per node through
# an rsh agent (netns-rsh) that enters the node's namespaces. Settings:
#   --hostfile            node1 slots=S ... (S = NETNS_CLUSTER_SLOTS, default 64)
#   --mca plm_rsh_agent   netns-rsh
#   --mca oob_tcp_if_include / btl_tcp_if_include  the cluster subnet
#   -x UCX_NET_DEVICES=eth0,lo  UCX between nodes over the veth link
#   --bind-to none        the nodes share this machine's cores, so ranks
#   -x DUCT_YIELD=yield, --mca mpi_yield_when_idle 1   give the core away
#                         while waiting (each node alone would not see that
#                         it is oversubscribed; spinning ranks then wait for
#                         the scheduler's 4 ms time slices)
# NETNS_CLUSTER_ID (0-255, default 77 + pid % 100) keeps concurrent clusters
# apart; set it to use up / args / down from separate commands.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
id=${NETNS_CLUSTER_ID:-$((77 + $$ % 100))}
state=/run/duct-netns-$id
prefix=duct$id-node
bridge=duct-br$id
subnet=10.77.$id

log() { printf '[netns-cluster] %s\n' "$*" >&2; }

need_root() {
  [ "$(id -u)" = 0 ] || { log "needs root (ip netns, veth, bridge)"; exit 77; }
  command -v ip >/dev/null && command -v unshare >/dev/null || { log "needs iproute2 and util-linux (unshare)"; exit 77; }
}

down() {
  local n
  n=$(cat "$state/nodes" 2>/dev/null || echo 0)
  for i in $(seq 1 "$n"); do
    local ns=$prefix$i
    if ip netns list | grep -qw "$ns"; then
      # Processes left inside (orted, ranks) go first.
      for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
      ip netns delete "$ns" 2>/dev/null || true
    fi
    ip link delete "d${id}n$i" 2>/dev/null || true
  done
  ip link delete "$bridge" 2>/dev/null || true
  rm -rf "$state"
}

up() {
  local n=$1
  need_root
  mkdir -p "$state"
  echo "$n" >"$state/nodes"
  ip link add "$bridge" type bridge
  ip addr add "$subnet.1/24" dev "$bridge"
  ip link set "$bridge" up
  for i in $(seq 1 "$n"); do
    local ns=$prefix$i veth=d${id}n$i
    ip netns add "$ns"
    ip link add "$veth" type veth peer name "p${id}n$i"
    ip link set "p${id}n$i" netns "$ns"
    ip -n "$ns" link set "p${id}n$i" name eth0
    ip -n "$ns" addr add "$subnet.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip link set "$veth" master "$bridge"
    ip link set "$veth" up
    echo "node$i slots=${NETNS_CLUSTER_SLOTS:-64}" >>"$state/hostfile"
    echo "node$i $ns" >>"$state/map"
  done
  # The agent finds the namespace of a node name here.
  cp "$here/netns-rsh" "$state/netns-rsh"
  log "$n nodes up: $(tr '\n' ' ' <"$state/map")(bridge $bridge, $subnet.0/24)"
}

mpirun_args() {
  local root_args=""
  [ "$(id -u)" = 0 ] && root_args="--allow-run-as-root"
  # --bind-to none: every node's orted sees all of this machine's cores and
  # would bind its first rank to core 0, all nodes' ranks on one core.
  echo "$root_args --oversubscribe --bind-to none --hostfile $state/hostfile --mca plm_rsh_agent $state/netns-rsh" \
       "--mca oob_tcp_if_include $subnet.0/24 --mca btl_tcp_if_include $subnet.0/24" \
       "-x UCX_NET_DEVICES=eth0,lo -x DUCT_YIELD=yield --mca mpi_yield_when_idle 1"
}

case "${1:-}" in
  up)
    [ $# -ge 2 ] || { echo "usage: $0 up N"; exit 2; }
    down
    up "$2"
    echo "mpirun $(mpirun_args) ..." ;;
  down) down ;;
  args) mpirun_args ;;
  run)
    [ $# -ge 3 ] && [ "$3" = "--" ] || { echo "usage: $0 run N -- MPIRUN_ARGS..."; exit 2; }
    n=$2
    shift 3
    need_root
    trap down EXIT
    trap 'exit 130' INT TERM
    down
    up "$n"
    # shellcheck disable=SC2046
    mpirun $(mpirun_args) "$@" ;;
  *) sed -n '2,30p' "$0"; exit 2 ;;
esac
