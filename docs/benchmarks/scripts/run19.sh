#!/usr/bin/env bash
# run19.sh: the device-tool call of 2026-11-27 (session 29). Checklist row 1
# (tests/gpu since the engine review b3bdc81, the mpi channel's fallback and
# issue 50's FT changes; none has run on a GPU) and row 5, issue 50 on
# device buffers: tests/mpi/ft.sh with duct-ft-survive -d (64 MiB device
# allreduces on the one-GPU engine path; two of 4 ranks killed 0-2 ms into
# a call or during the shrink; survivors error, shrink, and pass 10 device
# allreduces checked against MPI_Allreduce on host copies).
#   BUDGET=420 bash docs/benchmarks/scripts/run19.sh   (timeout_s 480)
RUN=run19 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FT=$BIN/tests/mpi/duct-ft-survive
ft() {  # label runs timeout [extra env]
  local s=$(date +%s)
  FT_IN_CALL_MAX_US=2000 timeout "$3" bash tests/mpi/ft.sh "$(command -v mpirun)" "$FT" 4 "$2" auto -d -c 8388608 \
    > "$logs/ft-$1.log" 2>&1
  echo "issue 50 device FT $1: rc=$? $(( $(date +%s) - s )) s"; grep -aE '^(run |PASS|FAIL|SKIP)' "$logs/ft-$1.log"
  grep -aq '^FAIL' "$logs/ft-$1.log" && tail -60 "$logs/ft-$1.log"
}
mps_on || echo "(everything below runs without MPS)"
for np in 2 4; do step 25 "row 1: collective suite np $np, MPS" && gpu_tests mps $np auto 60; done
step 60 "issue 50: device FT, 4 ranks, MPS, 6 runs" && ft mps 6 150
step 20 "row 1: collective suite np 1, MPS" && gpu_tests mps 1 auto 40
step 25 "row 1: collective suite np 2, ucx, MPS" && gpu_tests mps 2 ucx 60
step 25 "row 1: collective suite np 2, mpi, MPS" && gpu_tests mps 2 mpi 60
for np in 2 4; do step 15 "row 1: [stream] np $np, MPS" && gpu_tests mps $np auto 30 '[stream]'; done
step 15 "row 1: [stream] engine form np 2, MPS" && DUCT_STREAM_ENGINE=1 MR="$MR -x DUCT_STREAM_ENGINE" gpu_tests mps-engine 2 auto 30 '[stream]'
mps_off
step 60 "issue 50: device FT, 4 ranks, no MPS, 4 runs" && ft nomps 4 120
step 25 "row 1: collective suite np 2, no MPS" && gpu_tests nomps 2 auto 60
step 25 "row 1: collective suite np 4, no MPS" && gpu_tests nomps 4 auto 60
step 25 "row 1: collective suite np 2, ucx, no MPS" && gpu_tests nomps 2 ucx 60
step 25 "device allreduce np 4, no MPS" && bench 60 4 -d cuda -b 8 -e 256M -f 16 -n 10 -w 3
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
