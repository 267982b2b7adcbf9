#!/usr/bin/env bash
# test.sh [meson test arguments...]
#
# Build duct if needed (with CUDA when nvcc is there) and run the whole test
# suite: unit tests, MPI tests at 1-5 ranks for every channel mode, fault
# scenarios (mismatch, hang, SIGUSR1, a killed rank), the preload library
# under a plain C program and mpi4py, a 2-node network-namespace cluster and
# a local SLURM cluster (both as root), GPU tests (skipped without a
# device); then the sanitizer suite from a clang build with
# AddressSanitizer and UBSan in build-san/ (argument fuzzer, communicator
# churn leak test, the MPI suite under ASan). Arguments go to the first
# `meson test` only (and skip the sanitizer suite). The last line is the
# summary CI reads:
#   N passed, N failed, N skipped
set -uo pipefail
source "$(dirname "$0")/common.sh"

duct_setup || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
# SLURM, munge, mpi4py, clang: the tests that need them skip themselves
# (exit 77) where they cannot be installed.
have_san=0
duct_install_test_deps && have_san=1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
meson test -C "$DUCTBUILD" --print-errorlogs "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

extra_skipped=0 extra_failed=0
if [ $# -eq 0 ]; then
  if [ $have_san = 0 ]; then
    extra_skipped=1
  elif ! duct_build_san; then
    duct_log "the sanitizer build failed"
    extra_failed=1 status=1
  else
    meson test -C "$DUCTBUILD_SAN" --print-errorlogs 2>&1 | tee -a "$log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  fi
fi

# Sum meson's Ok / Fail / Timeout / Unexpected Pass / Skipped over both runs.
sum() { awk -v k="$1" '$0 ~ "^"k":" { n += $NF } END { print n + 0 }' "$log"; }
ok=$(sum Ok)
fail=$(( $(sum Fail) + $(sum Timeout) + $(sum "Unexpected Pass") + extra_failed ))
skipped=$(( $(sum Skipped) + extra_skipped ))
echo "$ok passed, $fail failed, $skipped skipped"
[ "$status" -eq 0 ] && [ "$fail" -eq 0 ]
