#!/usr/bin/env bash
# run17.sh (run twice: the second time after the fix below) the fourth device-tool call of 2026-11-27 (session 26): run16's
# [stream] runs aborted in the new capture test itself (it passed
# MPI_COMM_WORLD, whose error handler is fatal, to a refused gatherv
# capture); the test now uses a duplicate with MPI_ERRORS_RETURN.
# Second run: a refused capture (gatherv) had marked the stream side's
# context failed, so the barrier after it failed (class NOT_SUPPORTED): fixed.
#   [stream] np 1/2/4 MPS, engine form np 2/4, 10 in a row np 2, np 2 without MPS.
#   BUDGET=200 bash docs/benchmarks/scripts/run17.sh   (timeout_s 230)
RUN=run17 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
export DUCT_STREAM_ENGINE=0 DUCT_TIMEOUT=20
MR0="$MR0 -x DUCT_STREAM_ENGINE -x DUCT_TIMEOUT"; MR=$MR0
mps_on || echo "(everything below runs without MPS)"
for np in 1 2 4; do step 20 "[stream] np $np, MPS" && gpu_tests mps $np auto 40 '[stream]'; done
for np in 2 4; do step 20 "[stream] engine form np $np, MPS" && DUCT_STREAM_ENGINE=1 gpu_tests mps-engine $np auto 40 '[stream]'; done
step 50 "[stream] np 2, MPS: 10 runs in a row" && {
  ok=0; for i in 1 2 3 4 5 6 7 8 9 10; do
    TEST_WATCHDOG_S=25 timeout 30 $MR -np 2 -x TEST_WATCHDOG_S "$T" '[stream]' > "$logs/row10-$i.log" 2>&1 && ok=$((ok+1))
  done; echo "10 runs in a row: $ok passed"; }
mps_off
step 30 "[stream] np 2 without MPS" && gpu_tests nomps 2 auto 60 '[stream]'
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
