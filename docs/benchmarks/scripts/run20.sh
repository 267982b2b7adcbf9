#!/usr/bin/env bash
# run20.sh: the second device-tool call of 2026-11-27 (session 29), after
# run19: (1) tests/gpu [stream] at 4 ranks under MPS again, 8 times, after
# the fix to the captured-replay test (its pageable cudaMemcpy could land
# after a peer's replay had written the buffer); (2) issue 50 on device
# buffers, more runs (MPS, no MPS, and DUCT_CHANNEL=ucx); (3) checklist
# row 4, duct-tune --quick / --verify at 8 ranks, if time is left.
#   BUDGET=420 bash docs/benchmarks/scripts/run20.sh   (timeout_s 480)
RUN=run20 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FT=$BIN/tests/mpi/duct-ft-survive
ft() {  # label runs timeout channel
  local s=$(date +%s)
  FT_IN_CALL_MAX_US=2000 timeout "$3" bash tests/mpi/ft.sh "$(command -v mpirun)" "$FT" 4 "$2" "$4" -d -c 8388608 \
    > "$logs/ft-$1.log" 2>&1
  echo "issue 50 device FT $1 ($4): rc=$? $(( $(date +%s) - s )) s"; grep -aE '^(run |PASS|FAIL|SKIP)' "$logs/ft-$1.log"
  grep -aq '^FAIL' "$logs/ft-$1.log" && tail -60 "$logs/ft-$1.log"
}
mps_on || echo "(everything below runs without MPS)"
step 40 "[stream] np 4, MPS, 8 runs" && {
  ok=0; for i in 1 2 3 4 5 6 7 8; do
    TEST_WATCHDOG_S=25 timeout 30 $MR -np 4 -x TEST_WATCHDOG_S "$T" '[stream]' > "$logs/stream4-$i.log" 2>&1 && ok=$((ok+1)) ||
      { echo "run $i failed:"; strip "$logs/stream4-$i.log" | grep -A3 -B3 "FAILED:" | grep -v "^  [0-9 .f,-]*$" | head -20; }
  done; echo "[stream] np 4 MPS: $ok of 8 passed"; }
step 10 "[stream] np 2, MPS" && gpu_tests mps 2 auto 30 '[stream]'
step 70 "issue 50: device FT, 4 ranks, MPS, 16 runs" && ft mps 16 150 auto
step 40 "issue 50: device FT, 4 ranks, MPS, ucx channel, 6 runs" && ft mps-ucx 6 90 ucx
mps_off
step 50 "issue 50: device FT, 4 ranks, no MPS, 10 runs" && ft nomps 10 120 auto
step 200 "row 4: duct-tune at 8 ranks" && tune 8 150 90
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
