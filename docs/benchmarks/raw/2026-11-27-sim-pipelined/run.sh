#!/usr/bin/env bash
# The runs of ../../2026-11-27-sim-pipelined.md, in the order they ran
# (2026-11-27, build VM, SimGrid 3.32). Rails platform (duct-sim run -N
# NODES -ppn 8: NICs 50 GB/s 1 us, node links 450 GB/s 0.5 us), network
# model SMPI with lat-factor:0:1 and bw-factor:0:1, SMPI's default
# detached sends, the MPI column SMPI's ompi selector.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
out=docs/benchmarks/raw/2026-11-27-sim-pipelined
S=mpi_launch_scripts/duct-sim
B=(-d host -n 1 -w 0 -C allreduce)

# charge/: the reduction charge. smpi_execute_check.c (smpicc; one rank on
# a host of 100 Gf, smpi/simulate-computation:no) printed
#   "1ms->1.02e-08  0.5us->1e-08"                (as run)
#   "1ms->0.00100001  0.5us->1e-08"              (--cfg=smpi/host-speed:100Gf)
#   "1ms->0.00100001  0.5us->5.1e-07"            (and --cfg=smpi/cpu-threshold:0)
# ar8x8-before: commit 6a9eb8f (smpi_execute): the charge lost.
# ar8x8-charged: sim::compute at the library's default 10G (host).
# ar8x8-bw0: sim::compute, DUCT_SIM_REDUCE_BW=0; stopped after 256 KiB (the
# build directory was rebuilt under it), equal to ar8x8-before to 0.003 us:
# the idle poll's 50 ns, now charged, changes nothing there.
$S run -N 8 -ppn 8 -- "${B[@]}" -b 8 -e 16M -f 8 > $out/charge/ar8x8-before.txt
$S run -N 8 -ppn 8 -- "${B[@]}" -b 8 -e 16M -f 8 > $out/charge/ar8x8-charged.txt
DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -b 8 -e 16M -f 8 > $out/charge/ar8x8-bw0.txt

# sweep/: segment size and depth of pipelined_rabenseifner, from a build of
# that file that read them from DUCT_PR_SEGMENT (bytes) and DUCT_PR_DEPTH
# (segments in the node reduce-scatter at once), not committed; the
# committed constants are 512 KiB and 4. pr8x8-seg<S>-d<D>: 16 MiB only;
# pr8x8-sizes-*: 256 KiB-4 MiB; pr8x8-b-*: 1-16 MiB.
for s in 16777216 4194304 2097152 1048576 524288; do
  DUCT_PR_SEGMENT=$s DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -A pipelined_rabenseifner -b 16M -e 16M > $out/sweep/pr8x8-seg$s-d1.txt
done
for c in "2097152 2" "1048576 2" "1048576 3"; do set -- $c
  DUCT_PR_SEGMENT=$1 DUCT_PR_DEPTH=$2 DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -A pipelined_rabenseifner -b 16M -e 16M > $out/sweep/pr8x8-seg$1-d$2.txt
done
for c in "2097152 1" "1048576 2" "524288 2" "524288 4"; do set -- $c
  DUCT_PR_SEGMENT=$1 DUCT_PR_DEPTH=$2 DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -A pipelined_rabenseifner -b 256K -e 4M -f 4 > $out/sweep/pr8x8-sizes-seg$1-d$2.txt
done
for c in "524288 4" "262144 8" "131072 16"; do set -- $c
  DUCT_PR_SEGMENT=$1 DUCT_PR_DEPTH=$2 DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -A pipelined_rabenseifner -b 1M -e 16M -f 4 > $out/sweep/pr8x8-b-seg$1-d$2.txt
done

# The committed build: the rules' choice (pipelined_rabenseifner from 4 MiB)
# with reductions free, as SMPI's, and charged at duct-sim's 2800G beside
# Rabenseifner forced, charged too.
DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -- "${B[@]}" -b 1M -e 16M -f 4 > $out/ar8x8-rules-free.txt
DUCT_SIM_REDUCE_BW=0 $S run -N 16 -ppn 8 -- "${B[@]}" -b 4M -e 16M -f 4 > $out/ar16x8-rules-free.txt
$S run -N 8 -ppn 8 -- "${B[@]}" -b 1M -e 16M -f 4 > $out/ar8x8-rules-2800G.txt
$S run -N 8 -ppn 8 -- "${B[@]}" -A rabenseifner -b 1M -e 16M -f 4 > $out/ar8x8-rabenseifner-2800G.txt
DUCT_SIM_REDUCE_BW=0 $S run -N 64 -ppn 8 -- "${B[@]}" -b 4M -e 4M > $out/ar64x8-rules-free.txt
DUCT_SIM_REDUCE_BW=0 $S run -N 64 -ppn 8 -- "${B[@]}" -A rabenseifner -b 128K -e 128K > $out/ar64x8-rabenseifner-128k-free.txt
for sel in mpich mvapich2; do
  DUCT_SIM_REDUCE_BW=0 $S run -N 8 -ppn 8 -s $sel -- "${B[@]}" -b 1M -e 16M -f 4 > $out/ar8x8-rules-free-$sel.txt
done

# Correctness on real transports (UCX between two network namespaces, cma
# inside each): every element checked by duct-bench, 8 B-16 MiB.
mpi_launch_scripts/netns-cluster.sh --rails 2 run 2 -- -npernode 2 build/apps/duct-bench -d host -C allreduce \
  -A pipelined_rabenseifner -b 8 -e 64M -f 8 -n 3 -w 1 > $out/netns-2x2-check.txt
# Every collective checked on other layouts, the pipelined form forced too.
for n in 4x2 2x8 16x4; do $S check $n 256K; done > $out/check-4x2-2x8-16x4.txt 2>&1
