#!/bin/bash
# run.sh LABEL O(0|3) B E [extra duct-bench args]; env PH_* passed through; NODES
cd ${REPO:-/work/main}
O3="--cfg=smpi/os:0:3e-7:0 --cfg=smpi/ois:0:3e-7:0 --cfg=smpi/or:0:3e-7:0"
label=$1 o=$2 b=$3 e=$4; shift 4
cfg=""; [ "$o" = 3 ] && cfg="$O3"
start=$(date +%s)
echo "env: PH_SEG=$PH_SEG PH_DEPTH=$PH_DEPTH PH_HEAD=$PH_HEAD PH_TAIL=$PH_TAIL PR_SEG=$PR_SEG PR_DEPTH=$PR_DEPTH PR_HEAD=$PR_HEAD PR_TAIL=$PR_TAIL NODES=${NODES:-64} o=$o" > /tmp/ph2/$label.txt
DUCT_SIM_CFG="$cfg" DUCT_SIM_REDUCE_BW=0 DUCT_SIM_SHARED_SCRATCH=${SHS-1M} PH_SHOW=1 \
  mpi_launch_scripts/duct-sim run -N ${NODES:-64} -ppn 8 -- -d host -n 1 -w 0 -I 0 -m 0 -A ${ALGO:-pipelined_halving} -C ${COLL:-reduce_scatter} -b $b -e $e -f 4 "$@" >> /tmp/ph2/$label.txt 2>&1
echo "$label wall $(( $(date +%s) - start )) s" >> /tmp/ph2/$label.txt
