#!/bin/bash
# netns_split_rail.sh BUILD_DIR NODES: the split-rail collectives on a
# cluster of NODES network namespaces x 2 ranks, 2 rails per node, links
# unshaped. On more than two nodes the rooted forms (bcast, reduce) cross
# the rail as a chain of the nodes once the pipeline has enough segments
# (coll/common.hpp rail_chain) and as a binomial tree below that; both are
# run here, on odd byte counts (40004: two segments, a tree per segment;
# 600004 and 9000004: a chain of several, the last one short), with the
# root on the first, a middle and the last node; and the
# split-rail alltoall on the same sizes (nodes at every distance). Then the
# node-aware (hierarchical) forms that serve small messages across nodes,
# on 124 and 9604 bytes: bcast and reduce with the same roots (their network
# level is a binomial tree per rank of the root's node: on 5 nodes two
# trees of three nodes each), allreduce, allgather and reduce_scatter.
# duct-bench checks every element against the MPI library's own collective
# (#wrong must be 0). Skipped (77) when not root or network namespaces are not
# available.
set -uo pipefail
build=$1 nodes=$2
export NETNS_CLUSTER_ID=${NETNS_CLUSTER_ID:-$((100 + $$ % 50))}
source "$(dirname "$0")/cluster_up.sh"
cluster_up "$nodes"
np=$((2 * nodes))
last=$((np - 1)) middle=$(( (nodes / 2) * 2 + 1 ))
# run ALGO COLL ROOT BYTES: duct-bench, which must have chosen ALGO
# (DUCT_LOG=info), every element checked.
run() {
  local algo=$1 c=$2 r=$3 bytes=$4 out
  out=$(timeout 300 mpirun "${args[@]}" -np "$np" -npernode 2 -x DUCT_LOG=info "$build/apps/duct-bench" -d host \
    -C "$c" -r "$r" -b "$bytes" -e "$bytes" -n 2 -w 1 2>&1) || { echo "$out" | tail -5; fail "duct-bench $c failed"; }
  grep -q "$algo" <<<"$out" || fail "$c ($bytes bytes) did not run $algo"
  echo "$out" | awk '$1 ~ /^[0-9]+$/ && NF > 12 { rows++; if ($9 != 0 || ($13 != 0 && $13 != "-")) bad = 1 } END { exit bad || rows == 0 }' ||
    { echo "$out" | grep -v "^\[duct"; fail "duct-bench $c [$algo] root $r, $bytes bytes: wrong elements"; }
  echo "$c [$algo] root $r $bytes bytes: 0 wrong"
}
for c in bcast reduce allreduce allgather reduce_scatter alltoall; do
  roots="0 $middle $last"
  case $c in bcast|reduce) ;; *) roots=0 ;; esac
  for bytes in 40004 600004 9000004; do
    for r in $roots; do run split_rail "$c" "$r" "$bytes"; done
  done
done
for c in bcast reduce allreduce allgather reduce_scatter; do
  roots="0 $middle $last"
  case $c in bcast|reduce) ;; *) roots=0 ;; esac
  for bytes in 124 9604; do
    for r in $roots; do run hierarchical "$c" "$r" "$bytes"; done
  done
done
echo PASS
