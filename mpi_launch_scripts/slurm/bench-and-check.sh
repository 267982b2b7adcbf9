#!/bin/bash
# bench-and-check.sh LAUNCH...: what both batch scripts run, under a
# launcher (`srun --mpi=pmix` or duct-run's mpirun): duct-info, duct-bench
# allreduce from 8 B to DUCTBENCH_MAX beside MPI_Allreduce, and a short
# correctness check of every collective (duct-bench checks every element
# against the exact answer). Prints "duct-slurm: #wrong total N" and fails
# unless N is 0.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${DUCTDIR:-$(cd "$here/../.." && pwd)}
build=${DUCTBUILD:-$root/build}
max=${DUCTBENCH_MAX:-256M}
wrong=0 failed=0

bench() {  # bench ARGS...: one duct-bench run; adds its #wrong to the total
  local out
  out=$("$@" 2>&1)
  local rc=$?
  echo "$out"
  [ $rc -eq 0 ] || { echo "duct-slurm: FAILED (exit $rc): $*"; failed=$((failed + 1)); }
  wrong=$((wrong + $(echo "$out" | awk '$1 ~ /^[0-9]+$/ && NF >= 13 { n += $9 + $13 } END { print n + 0 }')))
}

"$@" "$build/apps/duct-info" || failed=$((failed + 1))
bench "$@" "$build/apps/duct-bench" -b 8 -e "$max" -f 8 -n 20 -w 5
for c in allreduce bcast reduce allgather reduce_scatter alltoall gather scatter; do
  bench "$@" "$build/apps/duct-bench" -C "$c" -b 8 -e 1M -f 128 -n 3 -w 1 -m 0
done
echo "duct-slurm: #wrong total $wrong, failed runs $failed"
[ $wrong -eq 0 ] && [ $failed -eq 0 ]
