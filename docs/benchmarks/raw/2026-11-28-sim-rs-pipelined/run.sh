#!/usr/bin/env bash
# The runs of ../../2026-11-28-sim-rs-pipelined.md (issue 49), in the order
# they ran (2026-11-28, build VM, SimGrid 3.32). From the repository root.
# Rails platform (duct-sim run -N NODES -ppn 8: NICs 50 GB/s 1 us, node
# links 450 GB/s 0.5 us), network model SMPI with lat-factor:0:1 and
# bw-factor:0:1, SMPI's default detached sends, the MPI column SMPI's ompi
# selector. DUCT_SIM_REDUCE_BW=0: duct's reductions free, as SMPI's are
# (pp-8x8-2800G-16M: charged at the rails platform's default, 2800G).
# "o3-": a CPU cost of 0.3 us on every send and receive (smpi/os, ois, or:
# the value SimGrid's own MPICH test harness sets); the others none.
set -u
out=docs/benchmarks/raw/2026-11-28-sim-rs-pipelined
S=mpi_launch_scripts/duct-sim
B=(-d host -n 1 -w 0 -C reduce_scatter)
O="--cfg=smpi/os:0:3e-7:0 --cfg=smpi/ois:0:3e-7:0 --cfg=smpi/or:0:3e-7:0"
mkdir -p $out/sweep

# sweep/: 16 MiB on 8 x 8, forced. pp8x8-ownfirst: the first build, which
# took its node's own segments first (256 KiB-16 MiB). sw-SEG-INFLIGHT: a
# build that read the segment size and the bytes in flight in the node
# level from DUCT_PP_SEG and DUCT_PP_INFLIGHT (not committed; committed:
# 512 KiB and 2 MiB). probe-*: the committed build on a platform with
# instant node links (fastnvl: the NIC side alone), with crosstraffic off
# too (nocross), or with instant NICs (fastnic: the node side alone).
DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 256K -e 16M -f 4 > $out/sweep/pp8x8-ownfirst.txt
for c in "524288 2097152" "262144 2097152" "524288 8388608" "1048576 4194304" "131072 2097152" \
         "524288 1048576" "524288 1572864" "262144 524288" "524288 524288"; do set -- $c
  DUCT_PP_SEG=$1 DUCT_PP_INFLIGHT=$2 DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 16M -e 16M > $out/sweep/sw-$1-$2.txt
done
P=(-A pipelined_pairwise -b 16M -e 16M)
DUCT_SIM_NVL_BW=45000GBps DUCT_SIM_NVL_LAT=0.01us DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" "${P[@]}" > $out/sweep/probe-fastnvl.txt
DUCT_SIM_NIC_BW=5000GBps DUCT_SIM_NIC_LAT=0.01us DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" "${P[@]}" > $out/sweep/probe-fastnic.txt
DUCT_SIM_CFG="--cfg=network/crosstraffic:0" DUCT_SIM_NVL_BW=45000GBps DUCT_SIM_NVL_LAT=0.01us DUCT_SIM_REDUCE_BW=0 \
  $S run -N 8 -ppn 8 -- "${B[@]}" "${P[@]}" > $out/sweep/probe-fastnvl-nocross.txt

# The committed form, forced, and the rules before the change (from a build
# with the old rules: recursive halving, hierarchical below 16 KiB; split_rail
# on 12 x 8). pp-16x8-free: the 16 MiB row was killed for memory (a 12 x 8
# run beside it). A 64 x 8 run (16 KiB-4 MiB) was stopped after 20 minutes
# of real time without its first row.
DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 16K -e 16M -f 4 > $out/pp-8x8-free.txt
DUCT_SIM_REDUCE_BW=0 $S run -N 16 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 16K -e 16M -f 4 > $out/pp-16x8-free.txt
$S run -N 8 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 16M -e 16M > $out/pp-8x8-2800G-16M.txt
DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 256 -e 16K -f 4 > $out/pp-8x8-small-free.txt
DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -b 256 -e 16K -f 4 > $out/rules-before-8x8-small-free.txt
DUCT_SIM_REDUCE_BW=0 $S run -N 12 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 16K -e 16M -f 4 > $out/pp-12x8-free.txt
DUCT_SIM_REDUCE_BW=0 $S run -N 12 -ppn 8 -- "${B[@]}" -b 16K -e 16M -f 4 > $out/rules-before-12x8-free.txt

# 0.3 us per send and receive.
export DUCT_SIM_REDUCE_BW=0
DUCT_SIM_CFG="$O" $S run -N 8 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 256 -e 16M -f 4 > $out/o3-pp-8x8.txt
DUCT_SIM_CFG="$O" $S run -N 8 -ppn 8 -- "${B[@]}" -A hierarchical -b 256 -e 4K -f 4 > $out/o3-hier-8x8.txt
DUCT_SIM_CFG="$O" $S run -N 8 -ppn 8 -- "${B[@]}" -A recursive_halving -b 16K -e 16M -f 4 > $out/o3-rh-8x8.txt
DUCT_SIM_CFG="$O" $S run -N 12 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 1M -e 16M -f 4 > $out/o3-pp-12x8.txt
DUCT_SIM_CFG="$O" $S run -N 12 -ppn 8 -- "${B[@]}" -A split_rail -b 1M -e 16M -f 4 > $out/o3-split_rail-12x8.txt
DUCT_SIM_CFG="$O" $S run -N 16 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 1M -e 4M -f 4 > $out/o3-pp-16x8.txt
DUCT_SIM_CFG="$O" $S run -N 16 -ppn 8 -- "${B[@]}" -A recursive_halving -b 1M -e 4M -f 4 > $out/o3-rh-16x8.txt

# After the rules change: the rules (pipelined_pairwise from 4 MiB on 64
# ranks) beside SMPI's mvapich2 and mpich tables, and 16 x 8 at 16 MiB
# alone (no cost).
for s in mvapich2 mpich; do
  $S run -s $s -N 8 -ppn 8 -- "${B[@]}" -b 4M -e 16M -f 4 > $out/rules-8x8-$s.txt
done
$S run -N 16 -ppn 8 -- "${B[@]}" -A pipelined_pairwise -b 16M -e 16M > $out/pp-16x8-16M-free.txt
