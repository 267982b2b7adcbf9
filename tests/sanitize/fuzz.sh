#!/bin/sh
# fuzz.sh check|fuzz DUCT_FUZZ CORPUS SECONDS
#   check: run every seed of CORPUS once and compare its error class
#   fuzz:  fuzz for SECONDS starting from CORPUS (new inputs go to a
#          scratch directory, never into the source tree)
set -u
mode=$1 exe=$2 corpus=$3 seconds=$4
# A singleton MPI job: Open MPI refuses root unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
case $mode in
  check) exec "$exe" --check "$corpus"/* ;;
  fuzz)
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    # Leaks are the churn test's business (MPI keeps memory across inputs).
    "$exe" -max_total_time="$seconds" -timeout=20 -detect_leaks=0 -max_len=48 -print_final_stats=1 \
      -error_exitcode=1 -timeout_exitcode=1 \
      -artifact_prefix="$work/" "$work" "$corpus"
    rc=$?
    for f in "$work"/crash-* "$work"/timeout-* "$work"/oom-*; do
      [ -f "$f" ] && { echo "artifact $f:"; od -A d -t x1 "$f"; }
    done
    exit $rc ;;
esac
echo "usage: fuzz.sh check|fuzz DUCT_FUZZ CORPUS SECONDS"; exit 2
