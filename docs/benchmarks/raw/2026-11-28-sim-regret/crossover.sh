#!/bin/bash
# Follow-up to run.sh: two algorithms forced at sizes between the regret
# table's rows, on several node counts (8 ranks per node), same platform and
# settings as run.sh. From the repository root:
#   bash docs/benchmarks/raw/2026-11-28-sim-regret/crossover.sh OUTDIR JOBS
# JOBS: lines "collective algorithm nodes smallest largest factor"
# ("rules": no -A). P simulations at a time (default 2).
set -u
out=${1:?OUTDIR}
jobs=${2:?JOBS}
mkdir -p "$out"
one() {
  local c=$1 a=$2 n=$3 b=$4 e=$5 f=$6
  local file="$out/x-$c-$a-${n}x8-$b-$e.txt" force=() try rc t0
  [ "$a" = rules ] || force=(-A "$a")
  for try in 1 2 3; do  # two runs starting at once can collide in SMPI's copies of the library
    t0=$(date +%s)
    DUCT_SIM_REDUCE_BW=0 timeout 1200 mpi_launch_scripts/duct-sim run -N "$n" -ppn 8 -- \
      -d host -n 1 -w 0 -m 0 -C "$c" "${force[@]}" -b "$b" -e "$e" -f "$f" > "$file" 2>&1
    rc=$?
    [ $rc -ne 0 ] && [ $(( $(date +%s) - t0 )) -lt 15 ] && { sleep $((RANDOM % 20 + 5)); continue; }
    break
  done
  echo "$c $a ${n}x8 $b-$e rc=$rc $(( $(date +%s) - t0 )) s"
}
export -f one
export out
xargs -P "${P:-2}" -L 1 bash -c 'one "$@"' _ < "$jobs"
