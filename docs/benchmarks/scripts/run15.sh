#!/usr/bin/env bash
# run15.sh: the second device-tool call of 2026-11-27 (session 26), after
# run14 and the captured-call engine path (device barriers, coll/engine.hpp):
#   1. tests/gpu [stream] (now with the capture cases: every collective the
#      engine has, captured once, replayed 4 times with new data) at np
#      1/2/4 under MPS, the eager form and the engine form
#      (DUCT_STREAM_ENGINE=1); 10 runs in a row of the engine form at np 2;
#   2. graph replay (-G) of the 8 B allreduce against the blocking call
#      (target: 1.5x faster per call), np 2 and 4, MPS; -G from 8 B to 64 MiB;
#   3. DUCT_ENGINE_BLOCKS 1 and 4: run14 saw no change of the 64 MiB time
#      from 0 to 8 blocks;
#   4. without MPS: [stream] np 2 both forms, -G 8 B;
#   5. the collective suite over the mpi channel (run14: the IPC-churn test
#      asserted IPC use there; fixed).
# On the build machine first: bash docs/benchmarks/scripts/gpu-bin.sh
#   BUDGET=450 bash docs/benchmarks/scripts/run15.sh   (timeout_s 500)
RUN=run15 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
export DUCT_STREAM_ENGINE=0 DUCT_ENGINE_BLOCKS=0 DUCT_TIMEOUT=20
MR0="$MR0 -x DUCT_STREAM_ENGINE -x DUCT_ENGINE_BLOCKS -x DUCT_TIMEOUT"; MR=$MR0

mps_on || echo "(everything below runs without MPS)"
for np in 1 2 4; do
  step 30 "[stream] with captures, eager form, np $np, MPS" && gpu_tests mps $np auto 45 '[stream]'
done
for np in 2 4; do
  step 30 "[stream] with captures, engine form, np $np, MPS" && DUCT_STREAM_ENGINE=1 gpu_tests mps-engine $np auto 45 '[stream]'
done
step 40 "[stream], engine form, np 2, MPS: 10 runs in a row" && {
  ok=0; for i in 1 2 3 4 5 6 7 8 9 10; do
    DUCT_STREAM_ENGINE=1 TEST_WATCHDOG_S=25 timeout 30 $MR -np 2 -x TEST_WATCHDOG_S "$T" '[stream]' > "$logs/row10-$i.log" 2>&1 && ok=$((ok+1))
  done; echo "10 runs in a row: $ok passed"; }
step 40 "graph replay, 8 B allreduce, np 2 and 4, MPS" && for np in 2 4; do
  bench 20 $np -d cuda -b 8 -e 8 -n 0 -R 5
  bench 20 $np -d cuda -b 8 -e 8 -n 0 -R 5 -G
  DUCT_STREAM_ENGINE=1 bench 20 $np -d cuda -b 8 -e 8 -n 0 -R 5 -S
done
step 30 "graph replay, 8 B - 64 MiB, np 2, MPS" && bench 25 2 -d cuda -b 8 -e 64M -f 8 -n 0 -R 3 -G
step 40 "DUCT_ENGINE_BLOCKS 1 and 4, 64 MiB, np 2, MPS" && for nb in 1 4 0; do
  echo "DUCT_ENGINE_BLOCKS=$nb"; DUCT_ENGINE_BLOCKS=$nb bench 15 2 -d cuda -b 64M -e 64M -n 5 -w 1 -R 2 -m 0
  DUCT_ENGINE_BLOCKS=$nb DUCT_STREAM_ENGINE=1 bench 15 2 -d cuda -b 64M -e 64M -n 10 -w 2 -O 0 -S
done
step 30 "other collectives captured: -G 8 B - 2 MiB, np 4, MPS" && for c in bcast allgather reduce_scatter alltoall; do
  bench 15 4 -d cuda -C $c -b 8 -e 2M -f 64 -n 0 -R 2 -G; done
mps_off
step 30 "[stream] with captures, np 2, without MPS (eager, then engine form)" && {
  gpu_tests nomps 2 auto 45 '[stream]'; DUCT_STREAM_ENGINE=1 gpu_tests nomps-engine 2 auto 45 '[stream]'; }
step 25 "graph replay 8 B, np 2, without MPS" && bench 20 2 -d cuda -b 8 -e 8 -n 0 -R 3 -G
step 30 "collective suite, mpi channel, np 2, without MPS" && gpu_tests nomps 2 mpi 45
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
