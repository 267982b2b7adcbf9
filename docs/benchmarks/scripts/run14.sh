#!/usr/bin/env bash
# run14.sh: the device-tool call of 2026-11-27 (session 26), in one call.
#   1. checklist row 1: tests/gpu's collective suite (~[stream]) at np 2 and
#      4 under MPS, np 2 over ucx and over the mpi channel (new since the
#      last GPU run), np 2 without MPS: the POSIX shm segment, the engine's
#      split (Engine without Context) and the mpi channel's staging;
#   2. issue 51: tests/gpu [stream] at np 1/2/4 (eager calls complete in the
#      call) and at np 2/4 with DUCT_STREAM_ENGINE=1 (the engine form), MPS;
#   3. issue 51: 8 B allreduce blocking, -S (eager), -S with the engine form,
#      -G (DUCT_STREAM_ASYNC=1, short timeout: it hung before), MPS;
#   4. issue 51: 64 MiB allreduce beside a GPU kernel as long as the call:
#      -O 0 (nonblocking), -S -O 0 (stream-ordered, both forms), with
#      DUCT_ENGINE_BLOCKS 0/32/16/8, MPS; and the blocking 64 MiB allreduce's
#      bandwidth with the same block caps;
#   5. without MPS: the 8 B -S engine form, and -S -O 0 with the engine;
#   6. torch DDP at 2 ranks (checklist row 3 of the old list), if time is left.
# On the build machine first: bash docs/benchmarks/scripts/gpu-bin.sh
# then carry .gpu-deps and .gpu-bin:
#   BUDGET=530 bash docs/benchmarks/scripts/run14.sh   (timeout_s 580)
RUN=run14 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
export DUCT_STREAM_ENGINE=0 DUCT_ENGINE_BLOCKS=0 DUCT_STREAM_ASYNC=0 DUCT_TIMEOUT=20
MR0="$MR0 -x DUCT_STREAM_ENGINE -x DUCT_ENGINE_BLOCKS -x DUCT_STREAM_ASYNC -x DUCT_TIMEOUT"; MR=$MR0

mps_on || echo "(everything below runs without MPS)"
step 30 "row 1: collective suite, np 2, MPS" && gpu_tests mps 2 auto 60
step 40 "row 1: collective suite, np 4, MPS" && gpu_tests mps 4 auto 75
step 30 "row 1: collective suite, np 2, ucx, MPS" && gpu_tests mps 2 ucx 60
step 30 "row 1: collective suite, np 2, mpi channel, MPS" && gpu_tests mps 2 mpi 70
step 30 "issue 51: [stream], eager, np 1, MPS" && gpu_tests mps 1 auto 40 '[stream]'
step 30 "issue 51: [stream], eager, np 2, MPS" && gpu_tests mps 2 auto 45 '[stream]'
step 30 "issue 51: [stream], engine form, np 2, MPS" && DUCT_STREAM_ENGINE=1 gpu_tests mps-engine 2 auto 45 '[stream]'
step 30 "issue 51: [stream], engine form, np 4, MPS" && DUCT_STREAM_ENGINE=1 gpu_tests mps-engine 4 auto 50 '[stream]'
step 40 "issue 51: 8 B allreduce, 2 ranks, MPS" && {
  bench 25 2 -d cuda -b 8 -e 8 -n 0 -R 5
  bench 25 2 -d cuda -b 8 -e 8 -n 0 -R 5 -S
  DUCT_STREAM_ENGINE=1 bench 25 2 -d cuda -b 8 -e 8 -n 0 -R 5 -S
  DUCT_STREAM_ENGINE=1 bench 25 2 -d cuda -b 8 -e 2M -f 8 -n 0 -R 3 -S; }
step 50 "issue 51: 64 MiB beside a GPU kernel, 2 ranks, MPS" && {
  bench 25 2 -d cuda -b 64M -e 64M -n 10 -w 2 -O 0
  bench 25 2 -d cuda -b 64M -e 64M -n 10 -w 2 -O 0 -S
  for nb in 0 32 16 8; do DUCT_ENGINE_BLOCKS=$nb DUCT_STREAM_ENGINE=1 bench 25 2 -d cuda -b 64M -e 64M -n 10 -w 2 -O 0 -S; done; }
step 40 "issue 51: blocking 64 MiB / 1 GiB allreduce under DUCT_ENGINE_BLOCKS, 2 ranks, MPS" && {
  for nb in 0 32 16 8; do echo "DUCT_ENGINE_BLOCKS=$nb"; DUCT_ENGINE_BLOCKS=$nb bench 20 2 -d cuda -b 64M -e 256M -f 4 -n 5 -w 1 -R 2 -m 0; done; }
step 25 "issue 51: graph replay (-G, DUCT_STREAM_ASYNC=1), 8 B, 2 ranks, MPS" &&
  DUCT_STREAM_ASYNC=1 bench 20 2 -d cuda -b 8 -e 8 -n 0 -R 3 -G
mps_off
step 30 "row 1: collective suite, np 2, without MPS" && gpu_tests nomps 2 auto 60
step 30 "issue 51 without MPS: 8 B -S engine form; 64 MiB -S -O 0 engine" && {
  DUCT_STREAM_ENGINE=1 bench 20 2 -d cuda -b 8 -e 8 -n 0 -R 3 -S
  DUCT_STREAM_ENGINE=1 bench 25 2 -d cuda -b 64M -e 64M -n 5 -w 1 -O 0 -S; }
step 60 "torch DDP, CUDA tensors, 2 ranks, MPS" && ddp 55
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
