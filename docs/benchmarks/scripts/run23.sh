#!/usr/bin/env bash
# run23.sh: the fifth device-tool call of 2026-11-27 (session 29): run22
# showed the survivors' first allreduce after the shrink (2 ranks,
# DUCT_CHANNEL=ucx, 64 MiB device buffers, ring) waiting for a staged
# receive. Does the same allreduce stall without any failure? Does a larger
# bounce-buffer pool (DUCT_PIPELINE_DEPTH=32: 128 buffers) change it? The
# stalled transfer now says which stage it is in and how many bounce
# buffers are in use.
#   BUDGET=230 bash docs/benchmarks/scripts/run23.sh   (timeout_s 270)
RUN=run23 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
# ft: gpu-lib.sh (as it ran, then inline; run22-24 also printed only the ranks' FAIL lines)
export DUCT_CHANNEL=ucx DUCT_TIMEOUT=10
step 30 "no failure: 64 MiB device allreduce over ucx, np 2, 100 iterations" && bench 25 2 -d cuda -b 64M -e 64M -n 100 -w 3 -m 0
step 30 "no failure: 64 MiB device allreduce over ucx, np 4, 100 iterations" && bench 25 4 -d cuda -b 64M -e 64M -n 100 -w 3 -m 0
unset DUCT_CHANNEL DUCT_TIMEOUT
step 60 "device FT, ucx channel, 8 runs" && ft ucx 8 80 ucx -d -c 8388608
export DUCT_PIPELINE_DEPTH=32
step 60 "device FT, ucx channel, DUCT_PIPELINE_DEPTH=32, 8 runs" && ft ucx-depth32 8 80 ucx -d -c 8388608
unset DUCT_PIPELINE_DEPTH
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
