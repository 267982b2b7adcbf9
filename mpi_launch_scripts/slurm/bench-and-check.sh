#!/bin/bash
# bench-and-check.sh LAUNCH...: what both batch scripts run, under a
# launcher (`srun --mpi=pmix` or duct-run's mpirun): duct-info, duct-bench
# allreduce from 8 B to DUCTBENCH_MAX beside MPI_Allreduce, and a short
# correctness check of every collective (duct-bench checks every element
# against the exact answer). Prints "duct-slurm: #wrong total N" and fails
# unless N is 0.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The tools: an installed prefix (DUCT_PREFIX, or this script under
# PREFIX/share/duct/slurm), else the source tree's build directory.
prefix=${DUCT_PREFIX:-}
[ -z "$prefix" ] && [ -z "${DUCTBUILD:-}" ] && [ -x "$here/../../../bin/duct-info" ] && prefix=$(cd "$here/../../.." && pwd)
if [ -n "$prefix" ]; then
  info=$prefix/bin/duct-info benchx=$prefix/bin/duct-bench
else
  root=${DUCTDIR:-$(cd "$here/../.." && pwd)}
  build=${DUCTBUILD:-$root/build}
  info=$build/apps/duct-info benchx=$build/apps/duct-bench
fi
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

"$@" "$info" || failed=$((failed + 1))
bench "$@" "$benchx" -b 8 -e "$max" -f 8 -n 20 -w 5
for c in allreduce bcast reduce allgather reduce_scatter alltoall gather scatter; do
  bench "$@" "$benchx" -C "$c" -b 8 -e 1M -f 128 -n 3 -w 1 -m 0
done
echo "duct-slurm: #wrong total $wrong, failed runs $failed"
[ $wrong -eq 0 ] && [ $failed -eq 0 ]
