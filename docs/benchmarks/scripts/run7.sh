#!/usr/bin/env bash
# ../shared/gpu-evidence/CHECKLIST.md rows 1-7 in one call of the device tool
# (15 minutes of device time in all, one machine start), in the checklist's
# order; every step runs only while BUDGET seconds last, so the logs come
# back before the call's limit. Run on the GPU machine from the project root:
#   BUDGET=520 bash docs/benchmarks/scripts/run7.sh     (timeout_s 580)
# PLAN=2026-11-26 repeats the tests/gpu plan of that day's H200 run
# (docs/benchmarks/2026-11-26-gpu-checklist-h200.md): the whole of tests/gpu
# per run, 75 s each. The default plan, made after it: the collective suite
# on device buffers first (~[stream]; it never ran that day, because the
# first stream case hung), then the stream-ordered cases apart ([stream]),
# with shorter timeouts, and -S/-G once each under MPS before the rest.
#
# Binaries: .gpu-bin/ (built on the build machine with
#   meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release
# and copied with their build-tree layout: lib/, apps/, tests/gpu/, python/);
# they link Debian bookworm's Open MPI/UCX/hwloc, which .gpu-deps carries. If
# they do not load there, this builds build-gpu/ on the GPU machine instead.
# Carry: .gpu-deps (bundle, iproute2 debs in net/) and .gpu-bin.
RUN=run7 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"

# -- row 1: tests/gpu, MPS first (without it every other rank's GPU work is a context switch)
if mps_on; then
  if [ "$plan" = 2026-11-26 ]; then
    step 60 "row 1: tests/gpu under MPS" && {
      for a in "1 auto" "2 auto" "4 auto" "2 ucx" "4 ucx" "1 ucx"; do set -- $a
        step 40 "tests/gpu mps np=$1 $2" && gpu_tests mps "$1" "$2" 75; done; }
  else
    step 60 "row 1: tests/gpu under MPS" && {
      for a in "2 auto" "4 auto" "2 ucx" "1 auto"; do set -- $a
        step 40 "tests/gpu mps np=$1 $2" && gpu_tests mps "$1" "$2" 60; done
      for a in "1 auto" "2 auto" "4 auto" "2 ucx"; do set -- $a
        step 40 "tests/gpu mps np=$1 $2 [stream]" && gpu_tests mps "$1" "$2" 45 "[stream]"; done; }
    step 40 "row 2 (MPS): 8 B stream-ordered and graph replay" && for m in "" -S -G; do
      bench 30 2 -d cuda -b 8 -e 8 -n 0 -R 5 $m; done
    # The engine form of eager stream-ordered calls (DUCT_STREAM_ENGINE=1), never run before.
    export DUCT_STREAM_ENGINE=1; MR="$MR -x DUCT_STREAM_ENGINE"
    for np in 2 4; do step 40 "tests/gpu mps np=$np [stream], DUCT_STREAM_ENGINE=1" &&
      gpu_tests mps-engine "$np" auto 45 "[stream]"; done
    step 30 "-S with DUCT_STREAM_ENGINE=1" && bench 30 2 -d cuda -b 8 -e 64M -f 8 -n 10 -w 2 -S
    unset DUCT_STREAM_ENGINE; MR="$MR0 -x CUDA_MPS_PIPE_DIRECTORY"
    # Which mechanism hung the asynchronous protocol (DUCT_STREAM_ASYNC=1) on
    # 2026-11-26: with the test's copies into pinned memory (no pageable copy
    # holding the driver's memory lock), and at 1 rank (no IPC) with 32
    # hardware queues instead of 8 (a queue shared with duct's stream).
    export DUCT_STREAM_ASYNC=1 TEST_PINNED_GET=1; MR="$MR -x DUCT_STREAM_ASYNC -x TEST_PINNED_GET"
    step 40 "diagnostic: DUCT_STREAM_ASYNC=1, TEST_PINNED_GET=1, np=2" && gpu_tests mps-async-pinned 2 auto 40 "[stream]"
    unset TEST_PINNED_GET; export CUDA_DEVICE_MAX_CONNECTIONS=32; MR="$MR0 -x CUDA_MPS_PIPE_DIRECTORY -x DUCT_STREAM_ASYNC -x CUDA_DEVICE_MAX_CONNECTIONS"
    step 40 "diagnostic: DUCT_STREAM_ASYNC=1, CUDA_DEVICE_MAX_CONNECTIONS=32, np=1" && gpu_tests mps-async-conn32 1 auto 40 "[stream]"
    unset DUCT_STREAM_ASYNC CUDA_DEVICE_MAX_CONNECTIONS; MR="$MR0 -x CUDA_MPS_PIPE_DIRECTORY"
  fi
  # -- rows 4 and 5, and the allreduce table (MPS)
  step 40 "rows 4-5: 8 B allreduce (<= 12 us), MPI_CHAR 4 MiB (>= 10x faster than 7.9 ms), MPS" && {
    bench 60 2 -d cuda -b 8 -e 64M -f 8 -n 10 -w 2
    bench 40 2 -d cuda -t char -b 4M -e 4M -n 10 -w 2
    step 30 "np=4" && bench 60 4 -d cuda -b 8 -e 64M -f 8 -n 10 -w 2; }
  # -- message Specs on device buffers (reduce binomial: TreesReduce's device fence;
  #    recursive doubling: DoublingAllreduce; bcast binomial: TreesBcast), and row 6
  step 40 "row 6 / new Specs: forced algorithms on device buffers, MPS" && {
    for a in "reduce binomial 4" "allreduce recursive_doubling 3" "bcast binomial 4"; do set -- $a
      step 20 "$1 $2 np=$3" && bench 30 "$3" -d cuda -C "$1" -A "$2" -b 8 -e 64K -f 8 -n 5 -w 1 -m 0; done
    for a in ring shm recursive_doubling engine; do
      step 20 "allreduce -A $a 16K-8M np=2" && bench 30 2 -d cuda -A "$a" -b 16K -e 8M -f 8 -n 5 -w 1 -m 0; done; }
  mps_off
fi
# -- row 1 without MPS
step 40 "row 1: tests/gpu without MPS" && {
  for a in "2 auto" "2 ucx" "4 auto"; do set -- $a
    step 40 "tests/gpu nomps np=$1 $2" && gpu_tests nomps "$1" "$2" $([ "$plan" = 2026-11-26 ] && echo 90 || echo 75); done
  [ "$plan" = 2026-11-26 ] || { step 40 "tests/gpu nomps np=2 auto [stream]" && gpu_tests nomps 2 auto 45 "[stream]"; }; }
# -- row 2: stream-ordered and graph replay (starts its own MPS daemon)
step 70 "row 2: bench_stream_gpu.sh 2" && BUILD=$BIN timeout $([ "$plan" = 2026-11-26 ] && echo 150 || echo 120) bash mpi_launch_scripts/bench_stream_gpu.sh 2 2>&1
mps_off
step 60 "row 7: emulated cluster with the GPU" && cluster
# -- row 3: Python on CUDA tensors (torch DDP beside gloo)
step 45 "row 3: examples/ddp_bench.py --device cuda, 2 ranks, MPS" && ddp 60
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
