#!/bin/bash
# The regret table at 64 simulated nodes x 8 ranks (issue 49): duct's rules
# and every duct algorithm that serves several nodes, forced, one collective
# at a time, 8 B-2 MiB (x8). From the repository root, with the sim build:
#   bash docs/benchmarks/raw/2026-11-28-sim-regret/run.sh OUTDIR [JOBS] [NODES]
# PAR: simulations at once (default 2). JOBS: a file of "collective algorithm" lines ("rules": no -A), default
# the list below. Two simulations at a time (the VM has 2 cores); each is
# stopped after 20 minutes of real time (its rows so far are kept).
# Platform: duct-sim's rails platform (-N NODES -ppn 8; one NIC per rank at
# 50 GBps and 1 us, an NVLink-class link per rank at 450 GBps and 0.5 us,
# two-level fat tree). Network model: SMPI's, latency and bandwidth factors
# neutralised (duct-sim's defaults). No per-message CPU cost unless
# DUCT_SIM_CFG sets one. DUCT_SIM_REDUCE_BW=0: reductions free, as in the
# tables' runs. duct-bench -n 1 -w 0 -m 0: one call per row, the slowest
# rank's time, results checked, no MPI baseline.
set -u
out=${1:?OUTDIR}
jobs=${2:-}
nodes=${3:-64}
mkdir -p "$out"
if [ -z "$jobs" ]; then
  jobs=$out/jobs.txt
  cat > "$jobs" <<'J'
bcast rules
bcast binomial
bcast hierarchical
bcast split_rail
bcast scatter_allgather
bcast pipelined_chain
reduce rules
reduce binomial
reduce hierarchical
reduce split_rail
reduce rabenseifner
allreduce rules
allreduce recursive_doubling
allreduce hierarchical
allreduce split_rail
allreduce rabenseifner
allreduce pipelined_rabenseifner
allgather rules
allgather bruck
allgather recursive_doubling
allgather hierarchical
allgather split_rail
reduce_scatter rules
reduce_scatter recursive_halving
reduce_scatter hierarchical
reduce_scatter split_rail
reduce_scatter pipelined_pairwise
scatter rules
scatter binomial
scatter linear
scatter hierarchical
gather rules
gather binomial
gather linear
alltoall rules
alltoall bruck
alltoall split_rail
J
fi
one() {
  local c=$1 a=$2 f="$out/$1-$2-${nodes}x8.txt" t0
  local force=()
  [ "$a" = rules ] || force=(-A "$a")
  local try rc
  for try in 1 2 3; do  # two runs starting at once can collide in SMPI's copies of the library
    t0=$(date +%s)
    DUCT_SIM_REDUCE_BW=0 timeout 1200 mpi_launch_scripts/duct-sim run -N "$nodes" -ppn 8 -- \
      -d host -n 1 -w 0 -m 0 -C "$c" "${force[@]}" -b 8 -e 2M -f 8 > "$f" 2>&1
    rc=$?
    [ $rc -ne 0 ] && [ $(( $(date +%s) - t0 )) -lt 15 ] && { sleep $((RANDOM % 20 + 5)); continue; }
    break
  done
  echo "$c $a rc=$rc $(( $(date +%s) - t0 )) s"
}
export -f one
export out nodes
xargs -P "${PAR:-2}" -L 1 bash -c 'one "$0" "$1"' < "$jobs"
