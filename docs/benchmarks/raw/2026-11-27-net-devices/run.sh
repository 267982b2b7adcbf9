#!/bin/bash
# 64 MiB, every collective, emulated 2x2 cluster, 2 rails at 1 Gbit/s, UCX_NET_DEVICES=eth0,eth1,lo exported
# by the cluster to every rank; DUCT_NET_DEVICES=auto (new: the list spread) against =ucx (the list whole per rank).
cd /work/main
export NETNS_CLUSTER_ID=211
C=mpi_launch_scripts/netns-cluster.sh
$C --rails 2 --rate 1gbit up 2 >/dev/null
read -r -a args <<<"$($C args)"
for rep in 1 2; do
for setting in auto ucx; do
  for coll in allreduce bcast reduce allgather reduce_scatter alltoall; do
    line=$(timeout 300 mpirun "${args[@]}" -np 4 -npernode 2 -x DUCT_NET_DEVICES=$setting build/apps/duct-bench -d host -C $coll -b 64M -e 64M -n 3 -w 1 -m 0 2>&1 | grep -E "^ +67108864" )
    echo "rep$rep $setting $coll $line"
  done
done
done
$C down
