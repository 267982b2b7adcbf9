#!/bin/bash
cd /work/main
export NETNS_CLUSTER_ID=213
C=mpi_launch_scripts/netns-cluster.sh
$C --rails 2 --rate 1gbit up 2 >/dev/null
read -r -a args <<<"$($C args)"
for setting in auto ucx auto; do
  for coll in allreduce bcast reduce allgather reduce_scatter alltoall gather scatter; do
    line=$(timeout 300 mpirun "${args[@]}" -np 4 -npernode 2 -x DUCT_NET_DEVICES=$setting build/apps/duct-bench -d host -C $coll -b 64M -e 64M -n 3 -w 1 -m 0 2>&1 | grep -E "^ +67108864" )
    echo "$setting $coll $line"
  done
done
$C down
