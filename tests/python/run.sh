#!/bin/sh
# run.sh PYTHON MPIRUN NP SCRIPT [ARGS...]
#
# Run a Python test of duct's binding under mpirun at NP ranks, with the
# build tree's package on PYTHONPATH (set by meson). Exits 77 (skipped)
# with the reason when the interpreter lacks mpi4py or NumPy (or PyTorch,
# for scripts that need it: NEED_TORCH=1).
set -u
py=$1 mpirun=$2 np=$3; shift 3
"$py" -c "import mpi4py, numpy" 2>/dev/null ||
  { echo "$py has no mpi4py or NumPy (apt-get install python3-mpi4py python3-numpy): skipped"; exit 77; }
if [ "${NEED_TORCH:-0}" = 1 ]; then
  "$py" -c "import torch, torch.distributed" 2>/dev/null ||
    { echo "$py has no PyTorch (apt-get install python3-torch): skipped"; exit 77; }
fi
if [ "${NEED_SKLEARN:-0}" = 1 ]; then
  "$py" -c "import sklearn.datasets" 2>/dev/null ||
    { echo "$py has no scikit-learn (apt-get install python3-sklearn): skipped"; exit 77; }
fi
ft=""
[ -n "${DUCT_FT:-}" ] && ft="-x DUCT_FT"
# shellcheck disable=SC2086
exec timeout 900 "$mpirun" -np "$np" -x PYTHONPATH -x DUCT_CHECK $ft -x OMPI_MCA_op -x OMP_NUM_THREADS "$py" "$@"
