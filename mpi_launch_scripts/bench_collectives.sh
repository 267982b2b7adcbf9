#!/usr/bin/env bash
# bench_collectives.sh [NP...]
#
# duct vs the MPI library for every collective at 8 B, 64 KiB and 16 MiB,
# each line one duct-bench run (duct and MPI on the same buffers, same run).
# Prints: collective, ranks, size, duct time, MPI time, ratio (MPI/duct:
# above 1 means duct is faster), #wrong of duct.
set -euo pipefail
source "$(dirname "$0")/common.sh"
duct_setup >/dev/null
[ $# -eq 0 ] && set -- 2 4
printf '%-15s %3s %9s %12s %12s %7s %6s\n' collective np size "duct(us)" "MPI(us)" "ratio" "#wrong"
for np in "$@"; do
  for c in allreduce bcast reduce allgather reduce_scatter alltoall gather scatter barrier; do
    for sz in 8 64K 16M; do
      [ "$c" = barrier ] && [ "$sz" != 8 ] && continue
      case $sz in 8) it=2000 ;; 64K) it=300 ;; *) it=10 ;; esac
      # shellcheck disable=SC2046
      line=$(mpirun $(duct_mpirun_args "$np") -np "$np" "$DUCTBUILD/apps/duct-bench" -C "$c" -b "$sz" -e "$sz" \
               -n "$it" -w 3 2>/dev/null | grep -v '^#' | head -n 1)
      echo "$line" | awk -v c="$c" -v np="$np" '{printf "%-15s %3s %9s %12s %12s %7s %6s\n", c, np, $1, $6, $14, $18, $9}'
    done
  done
done
