#!/usr/bin/env bash
# run22.sh: the fourth device-tool call of 2026-11-27 (session 29): run21's
# device FT over DUCT_CHANNEL=ucx failed 2 of 12 runs with the survivors'
# first allreduce after the shrink returning TIMEOUT (and no warning):
# again with the error's text and DUCT_LOG=info for coll and channel.
#   BUDGET=200 bash docs/benchmarks/scripts/run22.sh   (timeout_s 240)
RUN=run22 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
# ft: gpu-lib.sh (as it ran, then inline; run22-24 also printed only the ranks' FAIL lines)
export DUCT_LOG=info DUCT_LOG_SUBSYS=coll,channel
step 60 "device FT, ucx channel, no MPS, 10 runs" && ft nomps-ucx 10 110 ucx -d -c 8388608
mps_on || echo "(everything below runs without MPS)"
step 50 "device FT, ucx channel, MPS, 10 runs" && ft mps-ucx 10 100 ucx -d -c 8388608
mps_off
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
