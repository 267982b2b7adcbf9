#!/bin/bash
# duct's rules after the change (no -A) beside Open MPI with its defaults and
# with its single copy off, 256 KiB-64 MiB (SIZES), 2 and 4 ranks, host buffers.
# Lines of rules.txt: rep np mpi_setting collective rules size duct_us mpi_us ratio
set -u
cd "$(dirname "$0")/../../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
out=${OUT:-docs/benchmarks/raw/2026-11-28-led-shm/rules.txt}
REPS=${REPS:-1}
SIZES=${SIZES:--b 256K -e 64M -f 4}
: > "$out"
for rep in $REPS; do
  for np in 2 4; do
    for c in allreduce bcast reduce allgather reduce_scatter alltoall gather scatter; do
      for setting in default none; do
        mca=""
        [ $setting = none ] && mca="--mca btl_vader_single_copy_mechanism none"
        mpirun -np $np $mca build/apps/duct-bench -d host -C $c $SIZES -n 0 -w 2 -R 3 2>&1 |
          grep -v '^#' | awk -v rep=$rep -v np=$np -v s=$setting -v c=$c 'NF>10 {print rep, np, s, c, "rules", $1, $6, $14, $NF}' >> "$out"
      done
    done
  done
done
