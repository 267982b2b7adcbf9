#!/bin/bash
# sim_app.sh OUTDIR: a user's C program (examples/sim_app.c: DUCT_* and MPI_*
# collectives on MPI_COMM_WORLD and a sub-communicator, results compared
# with the MPI library's) compiled with duct-sim cc and run on 3 simulated
# nodes of 4 ranks. 77 without SimGrid.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sim=$root/mpi_launch_scripts/duct-sim
command -v smpirun >/dev/null || { echo "SKIP: no smpirun (apt-get install libsimgrid-dev simgrid)"; exit 77; }
"$sim" build >/dev/null || exit 1
"$sim" cc "$root/examples/sim_app.c" -o "$1/sim_app.so" || exit 1
out=$("$sim" run -N 3 -ppn 4 -- "$1/sim_app.so" 4096 2>&1)
echo "$out" | grep -v '^\[' | tail -5
grep -q '^sim_app: OK' <<<"$out" || { echo "$out" | tail -30; exit 1; }
