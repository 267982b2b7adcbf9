#!/bin/bash
# survive.sh PYTHON MPIRUN NP RUNS [MPIRUN_OPTIONS...]: examples/ddp_survive.py
# under DUCT_FT=1, RUNS times: half of the ranks (the last node's, or the
# upper half on one node) die at a random step, the survivors shrink the
# process group and must finish with ddp_digits' accuracy and identical
# parameters (--check). Prints each run's failed step and recovery time.
# mpirun is stopped once the survivors have reported: Open MPI 4.1's
# mpirun may not exit after ranks died under --enable-recovery. Skipped (77)
# without mpi4py, NumPy, PyTorch or scikit-learn.
set -u
py=$1 mpirun=$2 np=$3 runs=$4; shift 4
here=$(cd "$(dirname "$0")" && pwd)
"$py" -c "import mpi4py, numpy, torch.distributed, sklearn.datasets" 2>/dev/null ||
  { echo "$py lacks mpi4py, NumPy, PyTorch or scikit-learn: skipped"; exit 77; }
source "$here/../lib/ft_runs.sh"
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for run in $(seq 1 "$runs"); do
  timeout 150 "$mpirun" "$@" -np "$np" --enable-recovery -x DUCT_FT=1 -x DUCT_TIMEOUT=5 -x PYTHONPATH \
    -x OMPI_MCA_op -x OMP_NUM_THREADS "$py" "$here/../../examples/ddp_survive.py" --epochs 10 --check >"$out" 2>&1 &
  job=$!
  for _ in $(seq 240); do
    grep -q '^check:' "$out" && break
    kill -0 $job 2>/dev/null || break
    sleep 0.5
  done
  sleep 2
  if kill -0 $job 2>/dev/null; then
    grep -q '^check:' "$out" || hang_report -f "^$py [^ ]*examples/ddp_survive.py" >>"$out"
    pkill -9 -f examples/ddp_survive.py
    kill $job 2>/dev/null
  fi
  wait $job 2>/dev/null
  grep -E "killed at step|failed on|failed at steps|recovery|accuracy|identical|^check" "$out" | cut -c1-220 | sed "s/^/run $run: /"
  grep -q '^check: passed' "$out" || { grep -v "PMIX ERROR" "$out" | tail -200; fail "run $run"; }
done
echo "PASS: $runs runs"
