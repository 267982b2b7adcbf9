#!/usr/bin/env bash
# bench_reliability.sh [NP...]
#
# What the reliability features cost: DUCT_CHECK=0 against DUCT_CHECK=1 (one
# signature exchange per call) and DUCT_PEER_FAILURE=0 against =1 (UCX peer
# error handling), for allreduce at 8 B and 64 MiB. Each line is one
# duct-bench run (duct and MPI_Allreduce on the same buffers in the same
# run); the settings alternate, three runs each, because this machine's
# timings drift.
set -euo pipefail
source "$(dirname "$0")/common.sh"
duct_setup >/dev/null
[ $# -eq 0 ] && set -- 2 4
printf '%-22s %3s %9s %12s %12s\n' setting np size "duct(us)" "MPI(us)"
for np in "$@"; do
  for sz in 8 64M; do
    case $sz in 8) it=5000 ;; *) it=5 ;; esac
    for run in 1 2 3; do
      for setting in DUCT_CHECK=0 DUCT_CHECK=1 DUCT_PEER_FAILURE=0 DUCT_PEER_FAILURE=1; do
        # shellcheck disable=SC2046
        line=$(env "$setting" mpirun $(duct_mpirun_args "$np") -x "${setting%%=*}" -np "$np" \
                 "$DUCTBUILD/apps/duct-bench" -d host -b "$sz" -e "$sz" -n "$it" -w 3 2>/dev/null |
               grep -v '^#' | head -n 1)
        echo "$line" | awk -v s="$setting" -v np="$np" '{printf "%-22s %3s %9s %12s %12s\n", s, np, $1, $6, $14}'
      done
    done
  done
done
