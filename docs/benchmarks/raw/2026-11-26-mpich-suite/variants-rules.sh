#!/bin/bash
# Runs the MPICH coll suite under the preload with forced algorithm families.
T1='allreduce:0-inf:recursive_doubling;bcast:0-inf:binomial;reduce:0-inf:binomial;allgather:0-inf:bruck;allgatherv:0-inf:bruck;reduce_scatter_block:0-inf:recursive_halving;reduce_scatter:0-inf:recursive_halving;alltoall:0-inf:bruck;gather:0-inf:binomial;scatter:0-inf:binomial;barrier:0-inf:dissemination'
T2='allreduce:0-inf:ring;bcast:0-inf:scatter_allgather;reduce:0-inf:reduce_scatter_gather;allgather:0-inf:ring;allgatherv:0-inf:ring;reduce_scatter_block:0-inf:pairwise;reduce_scatter:0-inf:pairwise;alltoall:0-inf:pairwise;gather:0-inf:linear;scatter:0-inf:linear'
T3='allreduce:0-inf:rabenseifner;bcast:0-inf:pipelined_chain;allgather:0-inf:recursive_doubling;reduce_scatter_block:0-inf:ring;reduce_scatter:0-inf:ring'
T4='reduce:0-inf:shm_tree'
for v in "$@"; do
  case $v in
    t1) export DUCT_TUNE="$T1";; t2) export DUCT_TUNE="$T2";; t3) export DUCT_TUNE="$T3";; t4) export DUCT_TUNE="$T4";;
    check) export DUCT_CHECK=1;;
    ucx) export DUCT_CHANNEL=ucx DUCT_TUNE="$T2";;
  esac
  /tmp/mt/runall.sh duct /tmp/mt/out-$v "" > /tmp/mt/$v.txt 2>&1
  unset DUCT_TUNE DUCT_CHECK DUCT_CHANNEL
done
