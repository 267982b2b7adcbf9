#!/usr/bin/env bash
# demo.sh [NP] [duct-bench options...]
#
# Build duct if needed, show what duct sees (duct-info), then run duct-bench
# allreduce on NP ranks of this machine (default 4): on GPU buffers when a
# CUDA device is usable, on host buffers otherwise, side by side with the MPI
# library on the same buffers. Every row must show #wrong 0.
set -euo pipefail
source "$(dirname "$0")/common.sh"

NP=${1:-4}
shift || true
duct_setup

BENCH_ARGS=("$@")
[ ${#BENCH_ARGS[@]} -eq 0 ] && BENCH_ARGS=(-b 8 -e 64M -f 4 -n 20 -w 5 -c 1 -d auto -t float -o sum)

# shellcheck disable=SC2046
mpirun $(duct_mpirun_args "$NP") -np "$NP" "$DUCTBUILD/apps/duct-info" | sed -n '1,/^# ranks and their channels/p' | head -n 40
echo
cmd=(mpirun $(duct_mpirun_args "$NP") -np "$NP" "$DUCTBUILD/apps/duct-bench" "${BENCH_ARGS[@]}")
echo "+ ${cmd[*]}"
exec "${cmd[@]}"
