#!/usr/bin/env bash
# run10.sh (2026-11-26, third session of the day with a GPU): run9.sh showed
# that on the GPU machine's emulated cluster every run with 2 ranks per node
# hangs before duct's context exists, host buffers too, with DUCT_TIMEOUT=15
# silent (so not in one of duct's setup waits), while 1 rank per node works.
# This call says where the ranks are:
#   probe: 2 nodes x 2 ranks; after 12 s each rank's threads (wchan, kernel
#   stack) and SIGUSR1 (duct prints the interrupted thread's stack);
#   Open MPI alone as the control; duct with UCX's shared-memory transports
#   off, and with tcp alone; then tests/gpu on the cluster with the variant
#   that worked, the no-MPS suite, the 16-rank reduce shm vs shm_tree.
#   BUDGET=290 bash docs/benchmarks/scripts/run10.sh   (carry .gpu-deps .gpu-bin; timeout_s 320)
RUN=run10 source "$(dirname "${BASH_SOURCE[0]}")/gpu-lib.sh"
CTL=$BIN/apps/mpionly   # docs/benchmarks/scripts/mpionly.c: mpicc -O2 mpionly.c -o .gpu-bin/apps/mpionly

probe() {  # label ppn program env... -- program args...
  local label=$1 ppn=$2 prog=$3 name envs=() f=$logs/probe-$1.log s=$(date +%s) mp rc
  name=$(basename "$prog"); shift 3
  while [ "$1" != -- ]; do envs+=(-x "$1"); shift; done; shift
  DUCT_LOG=debug timeout 40 mpirun "${args[@]}" --tag-output -x OMPI_MCA_op -x DUCT_LOG "${envs[@]}" \
    -np $(( 2 * ppn )) -npernode "$ppn" "$prog" "$@" > "$f" 2>&1 &
  mp=$!
  for _ in $(seq 12); do sleep 1; kill -0 "$mp" 2>/dev/null || break; done
  if kill -0 "$mp" 2>/dev/null; then
    for p in $(pgrep -x "$name"); do
      echo "-- pid $p"
      for t in /proc/"$p"/task/*; do echo "   tid ${t##*/} $(cat "$t"/comm) wchan=$(cat "$t"/wchan 2>/dev/null)"; done
      head -12 /proc/"$p"/task/"$p"/stack 2>/dev/null | sed 's/^/   k: /'
    done > "$f.procs" 2>&1
    pkill -USR1 -x "$name"; sleep 2
    kill "$mp" 2>/dev/null; sleep 1; pkill -9 -x "$name"
  fi
  wait "$mp"; rc=$?
  echo "probe $label: rc=$rc $(( $(date +%s) - s )) s"
  strip "$f" | grep -E "<stdout>: +[0-9]+ |mpionly|error|rror:|TIMEOUT|no collective" | cut -c1-220 | head -8
  [ -f "$f.procs" ] && grep -c "wchan" "$f.procs" | sed 's/^/   threads: /'
  return $rc
}

step 120 "cluster, 2 nodes x 2 ranks: where the ranks wait" && cluster_up && {
  probe mpionly 2 "$CTL" --
  probe host 2 "$B" -- -d host -b 64K -e 64K -n 2 -w 1 -m 0
  probe host-noshm 2 "$B" UCX_TLS=^sysv,posix -- -d host -b 64K -e 64K -n 2 -w 1 -m 0 && ok=noshm
  probe host-tcp 2 "$B" UCX_TLS=tcp,self -- -d host -b 64K -e 64K -n 2 -w 1 -m 0 && ok=${ok:-tcp}
  probe cuda-noshm 2 "$B" UCX_TLS=^sysv,posix -- -d cuda -b 64K -e 64K -n 2 -w 1 -m 0
  if [ -n "${ok:-}" ] && step 60 "tests/gpu on 2 nodes x 2 ranks, UCX_TLS=$([ "$ok" = noshm ] && echo ^sysv,posix || echo tcp,self)"; then
    tl=$([ "$ok" = noshm ] && echo ^sysv,posix || echo tcp,self); s=$(date +%s)
    UCX_TLS=$tl TEST_WATCHDOG_S=45 timeout 55 mpirun "${args[@]}" -x UCX_TLS -x OMPI_MCA_op -x TEST_WATCHDOG_S -np 4 -npernode 2 "$T" "~[stream]" \
      > "$logs/gpu-cluster-2x2-$ok.log" 2>&1
    echo "tests/gpu 2x2 UCX_TLS=$tl: rc=$? $(( $(date +%s) - s )) s $(strip "$logs/gpu-cluster-2x2-$ok.log" | grep -E '^(test cases|assertions)|^All tests passed' | sort -u | tr '\n' ' ')"
    strip "$logs/gpu-cluster-2x2-$ok.log" | grep -E -B3 -A8 "FAILED:|WATCHDOG" | head -20
  fi
  cluster_down; }
step 50 "collective suite, np=2, without MPS" && gpu_tests nomps 2 auto 45
step 35 "issue 27: reduce at 16 ranks, shm against shm_tree" && for A in shm shm_tree; do
  echo "-- reduce -A $A"; timeout 12 $MR0 $BIND -np 16 "$B" -d host -C reduce -A $A -b 8 -e 4K -f 8 -n 0 -w 5 -R 3 2>&1 | grep -v '^#'
done
echo "total $(( $(date +%s) - t0 )) s"
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
