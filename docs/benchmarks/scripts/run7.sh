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
set -u
root=$(pwd); deps=$root/.gpu-deps; out=${OUT:-/tmp/out}; mkdir -p "$out" "$out/logs"
logs=$out/logs
exec > >(tee "$out/run7.log") 2>&1
t0=$(date +%s); budget=${BUDGET:-520}
left() { echo $(( budget - ($(date +%s) - t0) )); }
# step NEED TITLE: true when NEED seconds are left, else says it was skipped
step() { local l; l=$(left); if [ "$l" -lt "$1" ]; then echo "== SKIPPED ($l s left, needs $1): $2"; return 1; fi
         echo "== [$(( $(date +%s) - t0 )) s] $2"; }
source "$deps/activate.sh" "$deps" /opt/deps >/dev/null
export PATH=$PATH:/usr/local/nvidia/bin
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; date -u; uname -r
export OMPI_MCA_op=^avx   # the references run without Debian Open MPI's saturating AVX ops, as in tests/mpi/meson.build
MR0="mpirun --allow-run-as-root --oversubscribe -x OMPI_MCA_op"; MR=$MR0
strip() { sed 's/\x1b\[[0-9;]*m//g' "$1"; }

# -- binaries
BIN=$root/.gpu-bin
if ldd "$BIN/apps/duct-bench" | grep -q "not found" || ! timeout 30 "$BIN/apps/duct-info" > "$logs/duct-info.log" 2>&1; then
  echo "prebuilt binaries do not run here:"; ldd "$BIN/apps/duct-bench" | grep "not found"; tail -5 "$logs/duct-info.log"
  meson setup build-gpu -Dcuda=enabled -Dgpu_archs=90 -Dbuildtype=release > "$logs/setup.log" 2>&1 &&
    ninja -C build-gpu tests/gpu/duct-gpu-tests apps/duct-bench apps/duct-info lib/libduct-mpi.so.0.1.0 > "$logs/build.log" 2>&1 ||
    { tail -30 "$logs/setup.log" "$logs/build.log"; echo "BUILD FAILED"; }
  BIN=$root/build-gpu; mkdir -p "$BIN/python"
fi
echo "binaries built from $(cat "$root/.gpu-bin/COMMIT" 2>/dev/null)"; echo "binaries: $BIN ($(( $(date +%s) - t0 )) s)"; head -3 "$logs/duct-info.log"
B=$BIN/apps/duct-bench; T=$BIN/tests/gpu/duct-gpu-tests

plan=${PLAN:-default}
gpu_tests() {  # label np channel timeout [Catch2 test spec; default: ~[stream], or all with PLAN=2026-11-26]
  local s l spec; s=$(date +%s); spec=${5-~[stream]}; [ "$plan" = 2026-11-26 ] && spec=
  l="$1-$3-$2${5:+-stream}"
  DUCT_CHANNEL=$3 TEST_WATCHDOG_S=$(( $4 - 10 )) timeout "$4" $MR -np "$2" -x DUCT_CHANNEL -x TEST_WATCHDOG_S \
    "$T" ${spec:+"$spec"} > "$logs/gpu-$l.log" 2>&1
  echo "tests/gpu $1 np=$2 channel=$3 ${spec:-all}: rc=$? $(( $(date +%s) - s )) s $(strip "$logs/gpu-$l.log" | grep -E '^(test cases|assertions)|^All tests passed' | sort -u | tr '\n' ' ')"
  strip "$logs/gpu-$l.log" | grep -E -B3 -A12 "FAILED:|WATCHDOG" | head -30
}
bench() {  # timeout np args...
  local to=$1 np=$2; shift 2
  echo "-- duct-bench np=$np $*"
  timeout "$to" $MR -np "$np" "$B" "$@" 2>&1 | grep -v '^#  '
}
mps_on() {
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog; mkdir -p /tmp/mps /tmp/mpslog
  if nvidia-cuda-mps-control -d; then echo "MPS daemon started"; MR="$MR0 -x CUDA_MPS_PIPE_DIRECTORY"; return 0; fi
  echo "MPS: cannot start the control daemon"; unset CUDA_MPS_PIPE_DIRECTORY; return 1
}
mps_off() { echo quit | nvidia-cuda-mps-control 2>/dev/null; sleep 1; unset CUDA_MPS_PIPE_DIRECTORY; MR=$MR0; }

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
# -- row 7: the emulated cluster on this machine, device buffers (Debian's UCX: staged)
cluster() {
  command -v ip >/dev/null || { mkdir -p /opt/net; for f in "$deps"/net/*.deb; do dpkg -x "$f" /opt/net; done
    export PATH=$PATH:/opt/net/bin:/opt/net/sbin:/opt/net/usr/bin:/opt/net/usr/sbin
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/opt/net/lib/x86_64-linux-gnu:/opt/net/usr/lib/x86_64-linux-gnu; }
  command -v ip unshare tc
  ip netns add duct-probe && ip netns del duct-probe || { echo "no network namespaces here"; return; }
  export NETNS_CLUSTER_ID=41
  mpi_launch_scripts/netns-cluster.sh --rails 2 --rate 1gbit up 2 || { echo "cluster up failed"; return; }
  eval "args=($(mpi_launch_scripts/netns-cluster.sh args))"
  local s=$(date +%s)
  TEST_WATCHDOG_S=80 timeout 90 mpirun "${args[@]}" -x OMPI_MCA_op -x TEST_WATCHDOG_S -np 4 -npernode 2 "$T" "~[stream]" \
    > "$logs/gpu-cluster-2x2.log" 2>&1
  echo "tests/gpu on 2 nodes x 2 ranks: rc=$? $(( $(date +%s) - s )) s $(strip "$logs/gpu-cluster-2x2.log" | grep -E '^(test cases|assertions)|^All tests passed' | sort -u | tr '\n' ' ')"
  strip "$logs/gpu-cluster-2x2.log" | grep -B3 -A12 "FAILED:" | head -30
  step 30 "allreduce, device buffers, 2 nodes x 2 ranks, 2 rails at 1 Gbit/s (bound 0.25 GB/s algbw)" &&
    timeout 90 mpirun "${args[@]}" -x OMPI_MCA_op -np 4 -npernode 2 "$B" -d cuda -b 8 -e 64M -f 8 -n 3 -w 1 2>&1 | grep -v '^#  '
  # The CUDA-aware UCX (gpu-bin.sh WITH_UCX_CUDA=1): device pointers to UCX directly.
  local u=$root/.gpu-bin/ucx-cuda
  if [ -x "$u/apps/duct-bench" ]; then
    local lp=$u/prefix/lib:${LD_LIBRARY_PATH:-}
    "$u/prefix/bin/ucx_info" -d 2>/dev/null | grep -i "transport: *cuda" | sort -u
    LD_LIBRARY_PATH=$lp timeout 30 "$u/apps/duct-info" 2>&1 | grep -E "^# (UCX|duct)"
    step 40 "tests/gpu on 2 nodes x 2 ranks, CUDA-aware UCX" && {
      s=$(date +%s)
      LD_LIBRARY_PATH=$lp TEST_WATCHDOG_S=70 timeout 80 mpirun "${args[@]}" -x LD_LIBRARY_PATH -x OMPI_MCA_op -x TEST_WATCHDOG_S \
        -np 4 -npernode 2 "$u/tests/gpu/duct-gpu-tests" "~[stream]" > "$logs/gpu-cluster-2x2-ucx-cuda.log" 2>&1
      echo "tests/gpu on 2 nodes x 2 ranks, CUDA-aware UCX: rc=$? $(( $(date +%s) - s )) s $(strip "$logs/gpu-cluster-2x2-ucx-cuda.log" | grep -E '^(test cases|assertions)|^All tests passed' | sort -u | tr '\n' ' ')"; }
    step 30 "allreduce, device buffers, 2x2, CUDA-aware UCX" &&
      LD_LIBRARY_PATH=$lp timeout 90 mpirun "${args[@]}" -x LD_LIBRARY_PATH -x OMPI_MCA_op -np 4 -npernode 2 \
        "$u/apps/duct-bench" -d cuda -b 8 -e 64M -f 8 -n 3 -w 1 2>&1 | grep -v '^#  '
  fi
  mpi_launch_scripts/netns-cluster.sh down
}
step 60 "row 7: emulated cluster with the GPU" && cluster
# -- row 3: Python on CUDA tensors (torch DDP beside gloo)
step 45 "row 3: examples/ddp_bench.py --device cuda, 2 ranks, MPS" && {
  rm -rf /tmp/pyduct; mkdir -p /tmp/pyduct/duct; cp python/duct/*.py /tmp/pyduct/duct/
  echo "LIBDUCT = '$BIN/lib/libduct.so.0.1.0'" > /tmp/pyduct/duct/_config.py
  mps_on; PYTHONPATH=/tmp/pyduct timeout 60 $MR -np 2 -x PYTHONPATH python3 examples/ddp_bench.py --device cuda --steps 10 2>&1 | tail -25
  mps_off; }
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
