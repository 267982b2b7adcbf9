#!/bin/bash
# run.sh LABEL O(0|3) B E [duct-bench options]: one pipelined_rabenseifner
# allreduce run of duct-bench under duct-sim, output in $OUT/LABEL.txt
# (default: this directory). REPO: the source tree whose duct-sim runs
# (default: this checkout; the sweep used a worktree with sweep.patch and
# its own DUCT_SIM_BUILD). NODES (default 64) nodes x 8 ranks; SHS:
# DUCT_SIM_SHARED_SCRATCH (default 1M: timing only, pair with -c 0; SHS=0 to
# check results); ALGO overrides the forced algorithm; PR_* are the sweep
# build's, ignored by the committed code.
here=$(cd "$(dirname "$0")" && pwd)
cd "${REPO:-$here/../../../..}" || exit 1
out=${OUT:-$here}
O3="--cfg=smpi/os:0:3e-7:0 --cfg=smpi/ois:0:3e-7:0 --cfg=smpi/or:0:3e-7:0"
label=$1 o=$2 b=$3 e=$4; shift 4
cfg=""; [ "$o" = 3 ] && cfg="$O3"
start=$(date +%s)
echo "env: PR_DIRECT=$PR_DIRECT PR_SEG=$PR_SEG PR_DEPTH=$PR_DEPTH PR_FIRST=$PR_FIRST NODES=${NODES:-64} o=$o repo=$(pwd) $(git rev-parse --short HEAD)" > "$out/$label.txt"
DUCT_SIM_CFG="$cfg" DUCT_SIM_REDUCE_BW=0 DUCT_SIM_SHARED_SCRATCH=${SHS-1M} \
  mpi_launch_scripts/duct-sim run -N "${NODES:-64}" -ppn 8 -- -d host -n 1 -w 0 -I 0 -m 0 \
  -A "${ALGO:-pipelined_rabenseifner}" -C allreduce -b "$b" -e "$e" -f 4 "$@" >> "$out/$label.txt" 2>&1
echo "$label wall $(( $(date +%s) - start )) s" >> "$out/$label.txt"
