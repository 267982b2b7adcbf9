#!/bin/bash
# duct's rules after the change (no -A) beside Open MPI with its defaults and
# with its single copy off, 4-128 KiB (where vader leaves its eager path), 2
# and 4 ranks, host buffers, two repetitions: rules.sh with other sizes.
# Lines of mid.txt: rep np mpi_setting collective rules size duct_us mpi_us ratio
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$here/mid.txt} REPS=${REPS:-1 2} SIZES="-b 4K -e 128K -f 2" exec "$here/rules.sh"
