# Sourced by the fault-tolerance tests (tests/mpi/ft.sh,
# tests/cluster/netns_ft.sh, tests/python/survive.sh): waiting for a run's
# survivors, and what to print when one hangs.

# await_survivors OUT JOB N TRIES STEP: until OUT has N lines ': PASS' (or one
# ': FAIL'), JOB has ended, or TRIES x STEP seconds have passed.
await_survivors() {
  local out=$1 job=$2 n=$3 tries=$4 step=$5
  for _ in $(seq "$tries"); do
    [ "$(grep -ac ': PASS' "$out")" -ge "$n" ] && return 0
    grep -aq ': FAIL' "$out" && return 0
    kill -0 "$job" 2>/dev/null || return 0
    sleep "$step"
  done
}

# hang_report PGREP_ARGS...: the processes that pgrep finds are still there
# when they should have ended: gdb (when installed) prints every thread's
# stack here, and each process that has duct's SIGUSR1 handler prints its
# pending-operation dump to its stderr (which the run's log holds). Called before they are killed,
# so that a hang seen once in CI says where it was.
hang_report() {
  local pids pid caught
  pids=$(pgrep "$@") || return 0
  echo "== still running: $(echo $pids); their stacks:"
  for pid in $pids; do
    echo "-- pid $pid: $(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null | cut -c1-120)"
    command -v gdb >/dev/null || { echo "(gdb not installed: no stacks)"; continue; }
    timeout 30 gdb -p "$pid" -batch -nx -ex 'set pagination off' -ex 'thread apply all bt 25' 2>/dev/null |
      grep -E '^(Thread|#)' | cut -c1-200
  done
  # SIGUSR1 only where a handler is installed (SigCgt bit 9): by default it
  # ends the process.
  for pid in $pids; do
    caught=$(awk '/^SigCgt:/ { print $2 }' /proc/"$pid"/status 2>/dev/null)
    [ -n "$caught" ] && (( (16#$caught >> 9) & 1 )) && kill -USR1 "$pid" 2>/dev/null
  done
  sleep 1
}

# live NAME: the pids of processes named NAME that are not zombies (a
# killed victim stays one until its daemon reaps it).
live() {
  local pid
  for pid in $(pgrep -x "$1"); do
    [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = Z ] || echo "$pid"
  done
}

# slowest OUT: the slowest survivor's seconds from the kill to its error, and
# the slowest shrink, as "DET SHR" ('?' where none was printed).
slowest() {
  local det shr
  det=$(grep -ao '[0-9.]* s after the kill' "$1" | sort -n | tail -1 | cut -d' ' -f1)
  shr=$(grep -ao 'took [0-9.]* s' "$1" | awk '{ print $2 }' | sort -n | tail -1)
  echo "${det:-?} ${shr:-?}"
}
