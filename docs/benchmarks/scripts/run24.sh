#!/usr/bin/env bash
# run24.sh: the last device-tool call of 2026-11-27 (session 29), after the
# fix to staged ucx sends (a send takes a bounce buffer only at its turn on
# the pair, and sends hold at most half of the pool): run23's stalls again.
#   BUDGET=150 bash docs/benchmarks/scripts/run24.sh   (timeout_s 180)
RUN=run24 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
# ft: gpu-lib.sh (as it ran, then inline; run22-24 also printed only the ranks' FAIL lines)
export DUCT_CHANNEL=ucx DUCT_TIMEOUT=10
for np in 4 2; do step 20 "64 MiB device allreduce over ucx, np $np, 10 iterations" && bench 30 $np -d cuda -b 64M -e 64M -n 10 -w 2 -m 0; done
unset DUCT_CHANNEL DUCT_TIMEOUT
step 50 "device FT, ucx channel, 10 runs" && ft ucx 10 70 ucx -d -c 8388608
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
