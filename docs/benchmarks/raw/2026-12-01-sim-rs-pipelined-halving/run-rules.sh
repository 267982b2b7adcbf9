#!/bin/bash
# run.sh LABEL NODES O(0|3) SIZES(b e f) [duct-bench args...]
cd /work/main
O3="--cfg=smpi/os:0:3e-7:0 --cfg=smpi/ois:0:3e-7:0 --cfg=smpi/or:0:3e-7:0"
label=$1 nodes=$2 o=$3 b=$4 e=$5 f=$6; shift 6
cfg=""; [ "$o" = 3 ] && cfg="$O3"
start=$(date +%s)
echo "# DUCT_SIM_CFG=\"$cfg\" DUCT_SIM_REDUCE_BW=0 DUCT_SIM_SHARED_SCRATCH=1M mpi_launch_scripts/duct-sim run -N $nodes -ppn 8 -- -d host -n 1 -w 0 -I 0 -m 0 -C reduce_scatter -b $b -e $e -f $f $*" > /tmp/ph2/$label.txt
DUCT_SIM_CFG="$cfg" DUCT_SIM_REDUCE_BW=0 DUCT_SIM_SHARED_SCRATCH=1M \
  mpi_launch_scripts/duct-sim run -N $nodes -ppn 8 -- -d host -n 1 -w 0 -I 0 -m 0 -C reduce_scatter -b $b -e $e -f $f "$@" >> /tmp/ph2/$label.txt 2>&1
echo "$label wall $(( $(date +%s) - start )) s" >> /tmp/ph2/$label.txt
