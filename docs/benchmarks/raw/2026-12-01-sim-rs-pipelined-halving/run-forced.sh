#!/bin/bash
# run.sh LABEL ALGO SEG DEPTH O(0|3) SIZES...
cd /work/main
O3="--cfg=smpi/os:0:3e-7:0 --cfg=smpi/ois:0:3e-7:0 --cfg=smpi/or:0:3e-7:0"
label=$1 algo=$2 seg=$3 depth=$4 o=$5 b=$6 e=$7
cfg=""; [ "$o" = 3 ] && cfg="$O3"
start=$(date +%s)
DUCT_SIM_CFG="$cfg" PH_SEG=$seg PH_DEPTH=$depth DUCT_SIM_REDUCE_BW=0 DUCT_SIM_SHARED_SCRATCH=1M \
  /usr/bin/time -f "maxrss %M KB" mpi_launch_scripts/duct-sim run -N ${NODES:-64} -ppn 8 -- -d host -n 1 -w 0 -I 0 -m 0 -c 0 -A $algo -C reduce_scatter -b $b -e $e -f 4 > /tmp/ph/$label.txt 2>&1
echo "$label wall $(( $(date +%s) - start )) s" >> /tmp/ph/$label.txt
