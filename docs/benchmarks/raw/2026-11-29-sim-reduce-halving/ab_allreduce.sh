#!/bin/bash
# The split-rail allreduce forced (-A split_rail), before (BEFORE checkout)
# and after (AFTER), duct's time only. Usage: ab_allreduce.sh BEFORE AFTER N B E F
BEFORE=$1 AFTER=$2 N=$3 B=$4 E=$5 F=$6
for side in "$BEFORE" "$AFTER"; do
  echo "== $side N=$N ppn=8"
  (cd "$side" && DUCT_SIM_REDUCE_BW=0 mpi_launch_scripts/duct-sim run -N "$N" -ppn 8 -- -d host -n 1 -w 0 -I 0 -m 0 \
    -C allreduce -A split_rail -b "$B" -e "$E" -f "$F" 2>&1 | grep -E '^ +[0-9]|wrong elements')
done
