#!/usr/bin/env bash
# netns-cluster.sh: a cluster of N "nodes" on this machine, each a network
# namespace with its own hostname, joined by one bridge per rail, so that
# MPI and UCX traffic between nodes really crosses a network (TCP over veth
# links) and MPI_COMM_TYPE_SHARED splits ranks by node. Needs root (ip netns).
#
#   netns-cluster.sh [OPTIONS] run N -- MPIRUN_ARGS...
#       create the nodes, run `mpirun -np ... MPIRUN_ARGS` across them with
#       the settings below, and remove everything afterwards, whatever
#       happens (a trap). Ranks are placed by node: `--map-by node` or
#       `-npernode K` in MPIRUN_ARGS choose how.
#   netns-cluster.sh [OPTIONS] up N   create and leave them (prints the settings)
#   netns-cluster.sh args      the mpirun arguments for the cluster that is up
#   netns-cluster.sh down      remove what `up` created
#   netns-cluster.sh link-bytes  bytes each node's links have sent so far
#       ("node<i> eth<r> <tx bytes>" per line): read before and after a run
#       to see how a collective spread its traffic over the rails
#
# Options (also as environment variables), for `up` and `run`:
#   --rails K   (NETNS_CLUSTER_RAILS, default 1) K links per node, eth0..eth<K-1>;
#               link r of every node is on bridge r with its own subnet, as
#               in a rail-optimized fabric (NCCL's and UCC's split-rail
#               algorithms are built for it: the ranks with local index r of
#               every node talk over rail r). Every node has an address on
#               every rail, so any rank still reaches any other.
#   --rate R    (NETNS_CLUSTER_RATE, default unshaped) every link shaped to R
#               (tc tbf, e.g. 1gbit) in both directions: on this machine a
#               veth link moves several GB/s, as fast as the node's own
#               memory, while a real cluster's network is an order of
#               magnitude slower than its nodes. Shaped, the network and not
#               the cores is the bottleneck, as there.
#
# Layout: bridge duct-br<id>r<r> with 10.<77+r>.<id>.1/24 in the root
# namespace; node i is namespace duct<id>-node<i> with veth `eth<r>` at
# 10.<77+r>.<id>.(10+i), and `mgmt` at 10.76.<id>.(10+i) on bridge
# duct-br<id>m (the management network: mpirun and its daemons), loopback up; each process mpirun starts there gets hostname
# node<i> (a UTS namespace) and the node's own IPC namespace, so UCX sees
# other nodes as unreachable by shared memory and uses TCP over the links.
# mpirun runs in the root namespace and starts one orted per node through
# an rsh agent (netns-rsh) that enters the node's namespaces. Settings:
#   --hostfile            node1 slots=S ... (S = NETNS_CLUSTER_SLOTS, default 64)
#   --mca plm_rsh_agent   netns-rsh
#   --mca oob_tcp_if_include  the management network's subnet
#   --mca btl_tcp_if_include  rail 0's subnet
#   -x UCX_NET_DEVICES=eth0,...,eth<K-1>,lo  the MPI library's UCX on every
#                         rail (UCX splits large messages over them)
#   -x DUCT_NET_DEVICES=eth0,...,eth<K-1>  with K > 1: the rails, which duct
#                         spreads its ranks over (local rank l on eth<l mod K>)
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
rails=${NETNS_CLUSTER_RAILS:-1}
rate=${NETNS_CLUSTER_RATE:-}
while [ $# -gt 0 ]; do
  case $1 in
    --rails) rails=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    *) break ;;
  esac
done
bridge() { echo "duct-br${id}r$1"; }   # rail r's bridge
subnet() { echo "10.$((77 + $1)).$id"; }  # rail r's /24
mgmt_bridge="duct-br${id}m" mgmt_subnet="10.76.$id"  # the management network

log() { printf '[netns-cluster] %s\n' "$*" >&2; }

need_root() {
  [ "$(id -u)" = 0 ] || { log "needs root (ip netns, veth, bridge)"; exit 77; }
  command -v ip >/dev/null && command -v unshare >/dev/null || { log "needs iproute2 and util-linux (unshare)"; exit 77; }
}

down() {
  local n k
  n=$(cat "$state/nodes" 2>/dev/null || echo 0)
  k=$(cat "$state/rails" 2>/dev/null || echo 1)
  for i in $(seq 1 "$n"); do
    local ns=$prefix$i
    if ip netns list | grep -qw "$ns"; then
      # Processes left inside (orted, ranks) go first.
      for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
      ip netns delete "$ns" 2>/dev/null || true
    fi
    for r in $(seq 0 $((k - 1))); do ip link delete "d${id}n${i}r$r" 2>/dev/null || true; done
    ip link delete "d${id}n${i}m" 2>/dev/null || true
  done
  for r in $(seq 0 $((k - 1))); do ip link delete "$(bridge "$r")" 2>/dev/null || true; done
  ip link delete "$mgmt_bridge" 2>/dev/null || true
  rm -rf "$state"
}

# shape DEV [NS]: tc tbf at $rate on DEV's egress (inside namespace NS if given).
shape() {
  [ -n "$rate" ] || return 0
  local tcx=(tc)
  [ $# -ge 2 ] && tcx=(ip netns exec "$2" tc)
  # burst: at least one 64 KiB TSO segment plus room for 1 ms at the rate.
  "${tcx[@]}" qdisc replace dev "$1" root tbf rate "$rate" burst 256kb latency 50ms
}

up() {
  local n=$1
  need_root
  [ -z "$rate" ] || command -v tc >/dev/null || { log "--rate needs tc (iproute2)"; exit 77; }
  mkdir -p "$state"
  echo "$n" >"$state/nodes"
  echo "$rails" >"$state/rails"
  echo "${rate:-unshaped}" >"$state/rate"
  for r in $(seq 0 $((rails - 1))); do
    ip link add "$(bridge "$r")" type bridge
    ip addr add "$(subnet "$r").1/24" dev "$(bridge "$r")"
    ip link set "$(bridge "$r")" up
  done
  ip link add "$mgmt_bridge" type bridge
  ip addr add "$mgmt_subnet.1/24" dev "$mgmt_bridge"
  ip link set "$mgmt_bridge" up
  for i in $(seq 1 "$n"); do
    local ns=$prefix$i
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # The management network (mpirun and its daemons), apart from the rails,
    # as on a real cluster: a test that sets a node's rails down keeps the
    # job's launcher connected. Never shaped, never used for data.
    ip link add "d${id}n${i}m" type veth peer name "p${id}n${i}m"
    ip link set "p${id}n${i}m" netns "$ns"
    ip -n "$ns" link set "p${id}n${i}m" name mgmt
    ip -n "$ns" addr add "$mgmt_subnet.$((10 + i))/24" dev mgmt
    ip -n "$ns" link set mgmt up
    ip link set "d${id}n${i}m" master "$mgmt_bridge"
    ip link set "d${id}n${i}m" up
    for r in $(seq 0 $((rails - 1))); do
      local veth=d${id}n${i}r$r peer=p${id}n${i}r$r
      ip link add "$veth" type veth peer name "$peer"
      ip link set "$peer" netns "$ns"
      ip -n "$ns" link set "$peer" name "eth$r"
      ip -n "$ns" addr add "$(subnet "$r").$((10 + i))/24" dev "eth$r"
      ip -n "$ns" link set "eth$r" up
      ip link set "$veth" master "$(bridge "$r")"
      ip link set "$veth" up
      # Both directions of the link: the node's sending side and the bridge's.
      shape "eth$r" "$ns"
      shape "$veth"
    done
    # A node has an address on every rail, so any rank reaches any other:
    # a pair of ranks on different rails talks over the link on the
    # destination's subnet (as a multi-NIC host does), and the replies come
    # back on another: no reverse-path filter may drop them.
    ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
    for r in $(seq 0 $((rails - 1))); do ip netns exec "$ns" sysctl -qw "net.ipv4.conf.eth$r.rp_filter=0"; done
    echo "node$i slots=${NETNS_CLUSTER_SLOTS:-64}" >>"$state/hostfile"
    echo "node$i $ns" >>"$state/map"
  done
  # The agent finds the namespace of a node name here.
  cp "$here/netns-rsh" "$state/netns-rsh"
  log "$n nodes up: $(tr '\n' ' ' <"$state/map")($rails rail(s), $(subnet 0).0/24..., links ${rate:-unshaped})"
}

mpirun_args() {
  local root_args="" k devs ucx
  [ "$(id -u)" = 0 ] && root_args="--allow-run-as-root"
  k=$(cat "$state/rails" 2>/dev/null || echo 1)
  devs=""
  devs=$(seq 0 $((k - 1)) | sed 's/^/eth/' | paste -sd,)
  ucx="-x UCX_NET_DEVICES=$devs,lo"
  [ "$k" -gt 1 ] && ucx="$ucx -x DUCT_NET_DEVICES=$devs"
  # --bind-to none: every node's orted sees all of this machine's cores and
  # would bind its first rank to core 0, all nodes' ranks on one core.
  echo "$root_args --oversubscribe --bind-to none --hostfile $state/hostfile --mca plm_rsh_agent $state/netns-rsh" \
       "--mca oob_tcp_if_include $mgmt_subnet.0/24 --mca btl_tcp_if_include $(subnet 0).0/24" \
       "$ucx -x DUCT_YIELD=yield --mca mpi_yield_when_idle 1"
}

case "${1:-}" in
  up)
    [ $# -ge 2 ] || { echo "usage: $0 up N"; exit 2; }
    down
    up "$2"
    echo "mpirun $(mpirun_args) ..." ;;
  down) down ;;
  args) mpirun_args ;;
  link-bytes)
    [ -f "$state/map" ] || { log "no cluster is up (NETNS_CLUSTER_ID=$id)"; exit 2; }
    while read -r node ns; do
      for dev in $(ip -n "$ns" -o link show | awk -F': ' '$2 ~ /^eth[0-9]+@/ { sub(/@.*/, "", $2); print $2 }'); do
        echo "$node $dev $(ip netns exec "$ns" cat "/sys/class/net/$dev/statistics/tx_bytes")"
      done
    done <"$state/map" ;;
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
  *) sed -n '2,55p' "$0"; exit 2 ;;
esac
