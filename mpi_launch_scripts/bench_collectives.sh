#!/usr/bin/env bash
# bench_collectives.sh [--raw DIR] [NP...]
#
# duct vs the MPI library for every collective at every size from 8 B to
# 32 MiB by factors of 4, and 64 MiB: for each collective one duct-bench run
# (duct and the MPI library on the same buffers in the same processes). Each
# size is timed in ROUNDS blocks of about 0.1 s each (duct-bench -n 0),
# duct out-of-place, duct in-place and the MPI library taking turns, and
# the median block of each is printed: alternating blocks keep a machine
# whose speed drifts from favouring either side.
#
# Prints: collective, ranks, size (nccl-tests' size: the largest buffer of
# one rank), duct time, MPI time, ratio (MPI/duct: above 1 means duct is
# faster), #wrong of duct. Ends with the slowest ratio of each rank count
# (rows whose blocks round to 0 bytes left out).
#
# --raw DIR: also keep each duct-bench run's whole output, as
# DIR/<collective>-np<NP>.txt, for duct-plot (apps/duct-plot.py).
#
# Environment: ROUNDS (default 5), COLLS (default every collective),
# MAXSIZE (default 64M), BENCH_ARGS (extra duct-bench options, e.g. -d host).
set -euo pipefail
source "$(dirname "$0")/common.sh"
raw=""
if [ "${1:-}" = --raw ]; then raw=${2:?--raw needs a directory}; shift 2; mkdir -p "$raw"; raw=$(cd "$raw" && pwd); fi
duct_setup >/dev/null
[ $# -eq 0 ] && set -- 2
ROUNDS=${ROUNDS:-5}
COLLS=${COLLS:-"allreduce bcast reduce allgather reduce_scatter alltoall gather scatter barrier"}
MAXSIZE=${MAXSIZE:-64M}
printf '%-15s %3s %9s %12s %12s %7s %6s\n' collective np size "duct(us)" "MPI(us)" "ratio" "#wrong"
summary=()
for np in "$@"; do
  worst=""
  for c in $COLLS; do
    [ -z "$raw" ] || : >"$raw/$c-np$np.txt"
    runs=("-b 8 -e 32M -f 4")
    [ "$MAXSIZE" != 32M ] && runs+=("-b $MAXSIZE -e $MAXSIZE")
    [ "$c" = barrier ] && runs=("-b 8 -e 8")
    for r in "${runs[@]}"; do
      # shellcheck disable=SC2086,SC2046
      mpirun $(duct_mpirun_args "$np") -np "$np" "$DUCTBUILD/apps/duct-bench" -C "$c" $r -n 0 -w 5 -R "$ROUNDS" \
        ${BENCH_ARGS:-} 2>/dev/null | { if [ -n "$raw" ]; then tee -a "$raw/$c-np$np.txt"; else cat; fi; } | grep -v '^#' |
        awk -v c="$c" -v np="$np" 'NF >= 18 {printf "%-15s %3s %9s %12s %12s %7s %6s\n", c, np, $1, $6, $14, $18, $9}'
    done
  done | tee /tmp/bench_collectives.$$
  worst=$(awk '$6 > 0 && ($3 > 0 || $1 == "barrier") {print $6, $1, $3}' /tmp/bench_collectives.$$ | sort -g | head -n 1)
  summary+=("np $np: slowest ratio $worst")
  rm -f /tmp/bench_collectives.$$
done
printf '# %s\n' "${summary[@]}"
