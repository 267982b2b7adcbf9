#!/bin/bash
cd /work/main
for s in mpich mvapich2; do
  ( time mpi_launch_scripts/duct-sim run -N 64 -ppn 8 -s $s -- -C allreduce -b 8 -e 1M -f 8 -n 2 -w 1 ) > /tmp/rails/allreduce-64x8-$s.txt 2>&1
done
for a in recursive_doubling rabenseifner hierarchical split_rail ring; do
  ( time mpi_launch_scripts/duct-sim run -N 64 -ppn 8 -- -C allreduce -A $a -b 8 -e 1M -f 8 -n 2 -w 1 -m 0 ) > /tmp/rails/allreduce-64x8-A-$a.txt 2>&1
done
for c in reduce reduce_scatter; do
  ( time mpi_launch_scripts/duct-sim run -N 64 -ppn 8 -- -C $c -b 8 -e 1M -f 8 -n 2 -w 1 ) > /tmp/rails/$c-64x8-ompi.txt 2>&1
done
echo done > /tmp/rails/DONE
