#!/bin/bash
# sweep.sh O SIZE "DIRECT SEG DEPTH FIRST TAIL" ...: run.sh for each layout
# (the sweep build, REPO and DUCT_SIM_BUILD set), two at a time; prints
# one line per layout: the layout and the slowest rank's time, us. B1, B2:
# two build directories of the sweep build (one per run at a time; each
# run also gets its own TMPDIR: SMPI copies the privatized library there).
here=$(cd "$(dirname "$0")" && pwd)
o=$1 size=$2; shift 2
run1() {
  set -- $1
  local label=s${NODES:-64}-o$o-$size-d$1-s$2-k$3-f$4-t$5
  PR_DIRECT=$1 PR_SEG=$2 PR_DEPTH=$3 PR_FIRST=$4 PR_TAIL=$5 "$here/run.sh" "$label" "$o" "$size" "$size" ${EXTRA}
  echo "$* $(awk '$1 ~ /^[0-9]+$/ && NF > 8 {print $6, $9}' "$here/$label.txt")"
}
while [ $# -gt 0 ]; do
  TMPDIR=/tmp/slot1 DUCT_SIM_BUILD=$B1 run1 "$1" & p1=$!
  if [ $# -gt 1 ]; then TMPDIR=/tmp/slot2 DUCT_SIM_BUILD=$B2 run1 "$2" & p2=$!; wait $p2; shift; fi
  wait $p1; shift
done
