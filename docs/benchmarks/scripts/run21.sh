#!/usr/bin/env bash
# run21.sh: the third device-tool call of 2026-11-27 (session 29). run20's
# device FT over DUCT_CHANNEL=ucx failed its first run (both survivors
# shrank, neither passed; the log's tail was UCX's warnings): again, with
# ft.sh now printing every rank's lines, under MPS and without, and host
# buffers over ucx beside it.
#   BUDGET=240 bash docs/benchmarks/scripts/run21.sh   (timeout_s 280)
RUN=run21 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FT=$BIN/tests/mpi/duct-ft-survive
ft() {  # label runs timeout channel [args...]
  local s=$(date +%s) l=$1 n=$2 to=$3 ch=$4; shift 4
  FT_IN_CALL_MAX_US=2000 timeout "$to" bash tests/mpi/ft.sh "$(command -v mpirun)" "$FT" 4 "$n" "$ch" "$@" \
    > "$logs/ft-$l.log" 2>&1
  echo "issue 50 FT $l ($ch $*): rc=$? $(( $(date +%s) - s )) s"; grep -aE '^(run |PASS|FAIL|SKIP)' "$logs/ft-$l.log"
  grep -aq '^FAIL' "$logs/ft-$l.log" && grep -av "mpool.c" "$logs/ft-$l.log" | grep -av '^run ' | tail -40
}
mps_on || echo "(everything below runs without MPS)"
step 40 "device FT, ucx channel, MPS, 6 runs" && ft mps-ucx 6 90 ucx -d -c 8388608
step 30 "host FT, ucx channel, 4 runs" && ft host-ucx 4 60 ucx
mps_off
step 40 "device FT, ucx channel, no MPS, 6 runs" && ft nomps-ucx 6 90 ucx -d -c 8388608
step 40 "device FT, ucx channel, no MPS, 1 MiB" && ft nomps-ucx-small 3 60 ucx -d
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
