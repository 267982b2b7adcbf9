#!/usr/bin/env bash
# gpu-lib.sh: what the device-tool scripts (run7.sh, run8.sh) share, sourced
# by them on the GPU machine from the project root: the budget and its steps
# (step NEED TITLE runs only while NEED seconds of BUDGET are left), the
# carried bundle (.gpu-deps) and binaries (.gpu-bin, else a build on the
# spot), gpu_tests / bench / mps_on / mps_off, and cluster (the emulated
# 2 x 2 cluster on that machine, device buffers, Debian's UCX and the
# CUDA-aware one). RUN names the log ($OUT/$RUN.log).
set -u
root=$(pwd); deps=$root/.gpu-deps; out=${OUT:-/tmp/out}; mkdir -p "$out" "$out/logs"
logs=$out/logs
exec > >(tee "$out/${RUN:-run}.log") 2>&1
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
    ninja -C build-gpu tests/gpu/duct-gpu-tests apps/duct-bench apps/duct-info apps/duct-tune lib/libduct-mpi.so.0.1.0 > "$logs/build.log" 2>&1 ||
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
# tune NP [QUICK_S VERIFY_S]: duct-tune --quick on host buffers at NP ranks,
# one hardware thread each (so no placements), rules into $out/tune-npNP.rules,
# then its --verify (if 40 s of the budget are left); timeouts default
# 150 and 90 s.
TUNE=$BIN/apps/duct-tune
BIND="--map-by hwthread --bind-to hwthread"
tune() {
  local s=$(date +%s) r=$out/tune-np$1.rules
  timeout "${2:-150}" $MR0 $BIND -np "$1" "$TUNE" --quick -d host -o "$r" > "$logs/tune-np$1.log" 2>&1
  echo "duct-tune --quick np=$1: rc=$? $(( $(date +%s) - s )) s"; grep -v '^#  ' "$logs/tune-np$1.log" | tail -15
  step 40 "duct-tune --verify np=$1" && { s=$(date +%s)
    timeout "${3:-90}" $MR0 $BIND -np "$1" "$TUNE" --verify "$r" -d host > "$logs/verify-np$1.log" 2>&1
    echo "duct-tune --verify np=$1: rc=$? $(( $(date +%s) - s )) s"; tail -25 "$logs/verify-np$1.log"; }
}

# ddp TIMEOUT: checklist row 3, examples/ddp_bench.py on CUDA tensors at
# 2 ranks under MPS, DDP on gloo beside DDP on duct (python/duct from the
# working tree, libduct from $BIN).
ddp() {
  rm -rf /tmp/pyduct; mkdir -p /tmp/pyduct/duct; cp python/duct/*.py /tmp/pyduct/duct/
  echo "LIBDUCT = '$BIN/lib/libduct.so.0.1.0'" > /tmp/pyduct/duct/_config.py
  mps_on; PYTHONPATH=/tmp/pyduct timeout "$1" $MR -np 2 -x PYTHONPATH python3 examples/ddp_bench.py --device cuda --steps 10 2>&1 | tail -25
  mps_off
}
mps_off() { echo quit | nvidia-cuda-mps-control 2>/dev/null; sleep 1; unset CUDA_MPS_PIPE_DIRECTORY; MR=$MR0; }

# -- row 7: the emulated cluster on this machine, device buffers (Debian's UCX: staged)
# cluster_up [RAILS]: the emulated cluster (2 nodes, RAILS links at 1 Gbit/s
# each, default 2) on this machine; sets args (mpirun's options for it).
# cluster_down: takes it down.
cluster_up() {
  plm_saved=${OMPI_MCA_plm-}
  # activate.sh sets OMPI_MCA_plm=isolated (one node, no remote launch); the
  # cluster's nodes are launched through netns-rsh.
  unset OMPI_MCA_plm
  command -v ip >/dev/null || { mkdir -p /opt/net; for f in "$deps"/net/*.deb; do dpkg -x "$f" /opt/net; done
    export PATH=$PATH:/opt/net/bin:/opt/net/sbin:/opt/net/usr/bin:/opt/net/usr/sbin
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/opt/net/lib/x86_64-linux-gnu:/opt/net/usr/lib/x86_64-linux-gnu; }
  command -v ip unshare tc
  ip netns add duct-probe && ip netns del duct-probe || { echo "no network namespaces here"; return 1; }
  export NETNS_CLUSTER_ID=41
  mpi_launch_scripts/netns-cluster.sh --rails "${1:-2}" --rate 1gbit up 2 || { echo "cluster up failed"; return 1; }
  eval "args=($(mpi_launch_scripts/netns-cluster.sh args))"
}
cluster_down() {
  mpi_launch_scripts/netns-cluster.sh down
  [ -z "${plm_saved:-}" ] || export OMPI_MCA_plm=$plm_saved
}

# cluster: tests/gpu and allreduce on device buffers on the emulated 2 x 2
# cluster, Debian's UCX, then the CUDA-aware one (gpu-bin.sh WITH_UCX_CUDA=1).
# CT, CB: timeouts (s) of its tests/gpu runs and its duct-bench runs; CF: duct-bench's size factor;
# PPN: ranks per node (default 2; on the H100 machine Open MPI's own
# MPI_Comm_split_type hangs at 2, see docs/benchmarks/2026-11-26-gpu-run9-h100.md)
cluster() {
  local CT=${CT:-90} CB=${CB:-90} CF=${CF:-8} ppn=${PPN:-2}
  cluster_up || return
  local s=$(date +%s)
  TEST_WATCHDOG_S=$(( CT - 10 )) timeout "$CT" mpirun "${args[@]}" -x OMPI_MCA_op -x TEST_WATCHDOG_S -np $(( 2 * ppn )) -npernode "$ppn" "$T" "~[stream]" \
    > "$logs/gpu-cluster-2x2.log" 2>&1
  echo "tests/gpu on 2 nodes x $ppn ranks: rc=$? $(( $(date +%s) - s )) s $(strip "$logs/gpu-cluster-2x2.log" | grep -E '^(test cases|assertions)|^All tests passed' | sort -u | tr '\n' ' ')"
  strip "$logs/gpu-cluster-2x2.log" | grep -B3 -A12 "FAILED:" | head -30
  step 30 "allreduce, device buffers, 2 nodes x $ppn ranks, 2 rails at 1 Gbit/s (bound 0.25 GB/s algbw)" &&
    timeout "$CB" mpirun "${args[@]}" -x OMPI_MCA_op -np $(( 2 * ppn )) -npernode "$ppn" "$B" -d cuda -b 8 -e 64M -f "$CF" -n 3 -w 1 2>&1 | grep -v '^#  '
  # The CUDA-aware UCX (gpu-bin.sh WITH_UCX_CUDA=1): device pointers to UCX directly.
  local u=$root/.gpu-bin/ucx-cuda
  if [ -x "$u/apps/duct-bench" ]; then
    local lp=$u/prefix/lib:${LD_LIBRARY_PATH:-}
    "$u/prefix/bin/ucx_info" -d 2>/dev/null | grep -i "transport: *cuda" | sort -u
    LD_LIBRARY_PATH=$lp timeout 30 "$u/apps/duct-info" 2>&1 | grep -E "^# (UCX|duct)"
    step 40 "tests/gpu on 2 nodes x $ppn ranks, CUDA-aware UCX" && {
      s=$(date +%s)
      LD_LIBRARY_PATH=$lp TEST_WATCHDOG_S=$(( CT - 10 )) timeout "$CT" mpirun "${args[@]}" -x LD_LIBRARY_PATH -x OMPI_MCA_op -x TEST_WATCHDOG_S \
        -np $(( 2 * ppn )) -npernode "$ppn" "$u/tests/gpu/duct-gpu-tests" "~[stream]" > "$logs/gpu-cluster-2x2-ucx-cuda.log" 2>&1
      echo "tests/gpu on 2 nodes x $ppn ranks, CUDA-aware UCX: rc=$? $(( $(date +%s) - s )) s $(strip "$logs/gpu-cluster-2x2-ucx-cuda.log" | grep -E '^(test cases|assertions)|^All tests passed' | sort -u | tr '\n' ' ')"; }
    step 30 "allreduce, device buffers, 2 x $ppn, CUDA-aware UCX" &&
      LD_LIBRARY_PATH=$lp timeout "$CB" mpirun "${args[@]}" -x LD_LIBRARY_PATH -x OMPI_MCA_op -np $(( 2 * ppn )) -npernode "$ppn" \
        "$u/apps/duct-bench" -d cuda -b 8 -e 64M -f "$CF" -n 3 -w 1 2>&1 | grep -v '^#  '
  fi
  cluster_down
}

# ft LABEL RUNS TIMEOUT CHANNEL [ARGS...]: issue 50's tests/mpi/ft.sh at 4
# ranks with duct-ft-survive from $BIN (ARGS to it, e.g. -d -c 8388608),
# the victims dying 0-2 ms into a call; prints each run's line and, on a
# failure, every rank's FAIL line. (run21-24.sh)
ft() {
  local s=$(date +%s) l=$1 n=$2 to=$3 ch=$4; shift 4
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  FT_IN_CALL_MAX_US=2000 timeout "$to" bash tests/mpi/ft.sh "$(command -v mpirun)" "$BIN/tests/mpi/duct-ft-survive" 4 "$n" \
    "$ch" "$@" > "$logs/ft-$l.log" 2>&1
  echo "issue 50 FT $l ($ch $*): rc=$? $(( $(date +%s) - s )) s"; grep -aE '^(run |PASS|FAIL|SKIP)' "$logs/ft-$l.log"
  grep -aq '^FAIL' "$logs/ft-$l.log" && grep -a '^rank .*FAIL' "$logs/ft-$l.log" | cut -c1-900
}
