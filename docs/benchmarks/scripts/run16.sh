#!/usr/bin/env bash
# run16.sh: the third device-tool call of 2026-11-27 (session 26), after
# run15: captured calls now wait on device-memory flag pages (CUDA IPC)
# instead of host-mapped words, a small captured allreduce or reduce is one
# kernel of one block (barrier, reduction, barrier), the IPC cache keeps a
# graph's mappings apart from calls' pins (run15: a buffer freed and
# allocated again after its graph was destroyed made the next capture fail),
# and a refused capture leaves the communicator usable.
#   1. tests/gpu [stream] (capture cases included) np 1/2/4 MPS, engine form
#      np 2, and 10 runs in a row at np 2;
#   2. -G against blocking, 8 B, np 2 and 4; -G 8 B - 64 MiB np 2; the other
#      collectives captured at np 4; MPS;
#   3. the collective suite (~[stream]) np 2 and 4 under MPS (the engine's
#      registration changed);
#   4. without MPS: [stream] np 2 and -G 8 B.
#   BUDGET=400 bash docs/benchmarks/scripts/run16.sh   (timeout_s 450)
RUN=run16 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
export DUCT_STREAM_ENGINE=0 DUCT_TIMEOUT=20
MR0="$MR0 -x DUCT_STREAM_ENGINE -x DUCT_TIMEOUT"; MR=$MR0
show_fail() { strip "$1" | grep -E -B2 -A8 "FAILED|error|WATCHDOG" | head -40; }
mps_on || echo "(everything below runs without MPS)"
for np in 1 2 4; do
  step 30 "[stream] np $np, MPS" && gpu_tests mps $np auto 45 '[stream]'
done
step 30 "[stream] engine form np 2, MPS" && DUCT_STREAM_ENGINE=1 gpu_tests mps-engine 2 auto 45 '[stream]'
step 60 "[stream] np 2, MPS: 10 runs in a row" && {
  ok=0; for i in 1 2 3 4 5 6 7 8 9 10; do
    TEST_WATCHDOG_S=25 timeout 30 $MR -np 2 -x TEST_WATCHDOG_S "$T" '[stream]' > "$logs/row10-$i.log" 2>&1 && ok=$((ok+1))
  done; echo "10 runs in a row: $ok passed"; [ $ok -lt 10 ] && show_fail "$logs/row10-1.log"; }
step 40 "graph replay against blocking, 8 B, np 2 and 4, MPS" && for np in 2 4; do
  bench 20 $np -d cuda -b 8 -e 8 -n 0 -R 5
  bench 20 $np -d cuda -b 8 -e 8 -n 0 -R 5 -G
done
step 30 "graph replay 8 B - 64 MiB, np 2, MPS" && bench 25 2 -d cuda -b 8 -e 64M -f 8 -n 0 -R 3 -G
step 40 "other collectives captured, np 4, MPS" && for c in bcast reduce allgather reduce_scatter alltoall gather scatter barrier; do
  bench 12 4 -d cuda -C $c -b 8 -e 2M -f 512 -n 0 -R 2 -G; done
step 40 "collective suite np 2 and 4, MPS" && { gpu_tests mps 2 auto 45; gpu_tests mps 4 auto 60; }
mps_off
step 30 "[stream] np 2 without MPS" && gpu_tests nomps 2 auto 45 '[stream]'
step 20 "graph replay 8 B, np 2, without MPS" && bench 15 2 -d cuda -b 8 -e 8 -n 0 -R 3 -G
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
