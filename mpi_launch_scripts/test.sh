#!/usr/bin/env bash
# test.sh [meson test arguments...]
#
# Build duct if needed (with CUDA when nvcc is there) and run the whole test
# suite: unit tests, MPI tests at 1-4 ranks for every channel mode, GPU
# tests (skipped without a device). The last line is the summary CI reads:
#   N passed, N failed, N skipped
set -uo pipefail
source "$(dirname "$0")/common.sh"

duct_setup || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }

log=$(mktemp)
meson test -C "$DUCT_BUILD" --print-errorlogs "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

count() { awk -v k="$1" '$1 == k":" { print $2; found = 1 } END { if (!found) print 0 }' "$log" | tail -n 1; }
ok=$(count Ok)
fail=$(( $(count Fail) + $(count Timeout) + $(awk '/^Unexpected Pass:/ { print $3 }' "$log" | tail -n 1 | grep . || echo 0) ))
skipped=$(count Skipped)
rm -f "$log"
echo "$ok passed, $fail failed, $skipped skipped"
[ "$status" -eq 0 ] && [ "$fail" -eq 0 ]
