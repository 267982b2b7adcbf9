#!/usr/bin/env bash
# run21.sh: the third device-tool call of 2026-11-27 (session 29). run20's
# device FT over DUCT_CHANNEL=ucx failed its first run (both survivors
# shrank, neither passed; the log's tail was UCX's warnings): again, with
# ft.sh now printing every rank's lines, under MPS and without, and host
# buffers over ucx beside it.
#   BUDGET=240 bash docs/benchmarks/scripts/run21.sh   (timeout_s 280)
RUN=run21 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
# ft: gpu-lib.sh (as it ran, then inline; run22-24 also printed only the ranks' FAIL lines)
mps_on || echo "(everything below runs without MPS)"
step 40 "device FT, ucx channel, MPS, 6 runs" && ft mps-ucx 6 90 ucx -d -c 8388608
step 30 "host FT, ucx channel, 4 runs" && ft host-ucx 4 60 ucx
mps_off
step 40 "device FT, ucx channel, no MPS, 6 runs" && ft nomps-ucx 6 90 ucx -d -c 8388608
step 40 "device FT, ucx channel, no MPS, 1 MiB" && ft nomps-ucx-small 3 60 ucx -d
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
