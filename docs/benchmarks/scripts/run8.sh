#!/usr/bin/env bash
# run8.sh: the device-tool call of 2026-11-26 (the second that day) (one machine start, about
# 9 minutes of commands), in the order of what has never run on a GPU:
#   1. checklist row 1, the device code since the H200 run of 2026-11-26:
#      the collective suite on device buffers (tests/gpu ~[stream]), the
#      eager stream-ordered calls that complete in the call and the capture
#      refusal ([stream]), and the engine form (DUCT_STREAM_ENGINE=1), MPS;
#      then row 2's 8 B -S / -G and the engine form's -S sizes;
#   2. issue 25: the emulated cluster on that machine, 2 nodes x 2 ranks,
#      device buffers, Debian's UCX (staged) and the CUDA-aware build;
#   3. issue 27: duct-tune --quick on host buffers at 16 and 8 ranks (one
#      core each), its --verify, and the small host calls at 16 ranks beside
#      Open MPI (the 16-core table);
#   4. what is left of row 1 (np 4 [stream], ucx, without MPS) and row 3.
# Every step runs only while BUDGET seconds last (gpu-lib.sh). From the
# project root on the GPU machine, after scripts/gpu-bin.sh here
# (WITH_UCX_CUDA=1) and ../shared/gpu-evidence/prepare.sh:
#   BUDGET=540 bash docs/benchmarks/scripts/run8.sh   (carry .gpu-deps .gpu-bin; timeout_s 590)
RUN=run8 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"

if mps_on; then
  step 60 "row 1: collective suite on device buffers, np=2, MPS" && gpu_tests mps 2 auto 60
  step 40 "row 1: [stream] np=2, MPS (eager calls complete in the call; capture refused)" && gpu_tests mps 2 auto 40 "[stream]"
  export DUCT_STREAM_ENGINE=1; MR="$MR -x DUCT_STREAM_ENGINE"
  step 40 "row 1: [stream] np=2, MPS, DUCT_STREAM_ENGINE=1" && gpu_tests mps-engine 2 auto 40 "[stream]"
  step 25 "-S 8 B-64 MiB, DUCT_STREAM_ENGINE=1" && bench 25 2 -d cuda -b 8 -e 64M -f 64 -n 10 -w 2 -S
  unset DUCT_STREAM_ENGINE; MR="$MR0 -x CUDA_MPS_PIPE_DIRECTORY"
  step 40 "row 2 (MPS): 8 B blocking, -S (eager), -G (refused without DUCT_STREAM_ASYNC)" && for m in "" -S -G; do
    bench 15 2 -d cuda -b 8 -e 8 -n 0 -R 3 $m; done
  step 60 "row 1: collective suite on device buffers, np=4, MPS" && gpu_tests mps 4 auto 60
  mps_off
fi

step 100 "row 7 / issue 25: emulated cluster with the GPU" && CT=60 CB=40 CF=64 cluster

# Issue 27 on 16 cores (gpu-lib.sh tune): one hardware thread per rank, so
# duct-tune needs no placements; host buffers.
lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|Model name)"
step 90 "issue 27: duct-tune --quick, 16 ranks, host buffers" && tune 16
step 60 "issue 27: small host calls, 16 ranks, beside Open MPI" && for c in allreduce bcast reduce allgather reduce_scatter alltoall gather scatter barrier; do
  step 10 "$c" && MR="$MR0 $BIND" bench 20 16 -d host -C "$c" -b 8 -e 4K -f 8 -n 0 -R 3; done
step 90 "issue 27: duct-tune --quick, 8 ranks, host buffers" && tune 8

if mps_on; then
  step 40 "row 1: [stream] np=4, MPS" && gpu_tests mps 4 auto 40 "[stream]"
  step 60 "row 1: collective suite, np=2, ucx, MPS" && gpu_tests mps 2 ucx 60
  mps_off
fi
step 60 "row 1: collective suite, np=2, without MPS" && gpu_tests nomps 2 auto 60
step 45 "row 3: examples/ddp_bench.py --device cuda, 2 ranks, MPS" && ddp 40
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
