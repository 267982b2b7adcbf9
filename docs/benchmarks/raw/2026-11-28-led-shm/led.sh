#!/bin/bash
# Led shm rounds and aligned slot data (2026-11-28, after the change): every
# algorithm that matters at 256 KiB-64 MiB on one node, forced (-A), beside
# Open MPI with its defaults and with its single copy off (vader's FIFO),
# 2 and 4 ranks, host buffers, REPS repetitions.
# Lines of led.txt: rep np mpi_setting collective algorithm size duct_us mpi_us ratio
set -u
cd "$(dirname "$0")/../../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_op=^avx
out=${OUT:-docs/benchmarks/raw/2026-11-28-led-shm/led.txt}
REPS=${REPS:-1 2}
: > "$out"
for rep in $REPS; do
  for np in 2 4; do
    for ca in allgather:shm allgather:cma alltoall:shm alltoall:cma allreduce:shm allreduce:ring \
              reduce_scatter:shm reduce_scatter:ring reduce:shm reduce:reduce_scatter_gather scatter:shm scatter:cma bcast:shm bcast:cma; do
      c=${ca%%:*} a=${ca##*:}
      for setting in default none; do
        mca=""
        [ $setting = none ] && mca="--mca btl_vader_single_copy_mechanism none"
        mpirun -np $np $mca build/apps/duct-bench -d host -C $c -A $a -b 256K -e 64M -f 4 -n 0 -w 2 -R 3 2>&1 |
          grep -v '^#' | awk -v rep=$rep -v np=$np -v s=$setting -v c=$c -v a=$a 'NF>10 {print rep, np, s, c, a, $1, $6, $14, $NF}' >> "$out"
      done
    done
  done
done
