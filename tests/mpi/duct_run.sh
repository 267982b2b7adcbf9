#!/bin/sh
# duct_run.sh REPO BUILD: mpi_launch_scripts/duct-run launches a job, says
# what it chose for every rank, and exports DUCT_* settings to the ranks.
set -u
repo=$1 build=$2
out=$(DUCTINFO=$build/apps/duct-info DUCT_LOG=info "$repo/mpi_launch_scripts/duct-run" -np 2 --oversubscribe \
      DUCT_TIMEOUT=30 -- "$build/apps/duct-bench" -d host -b 8 -e 64K -f 64 -n 3 -w 1 2>&1)
rc=$?
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ $rc -eq 0 ] || fail "duct-run exited $rc"
echo "$out" | grep '^duct-run: mpirun -np 2 ' | grep -q -- '--oversubscribe' || fail "no --oversubscribe"
for v in DUCT_TIMEOUT DUCT_LOG; do echo "$out" | grep '^duct-run: mpirun' | grep -q -- "-x $v" || fail "$v not exported"; done
for r in 0 1; do
  echo "$out" | grep -q "^duct-run: rank $r (host .*, local rank $r):" || fail "no choice printed for rank $r"
done
echo "$out" | awk '!/^#/ && NF >= 13 && $1 ~ /^[0-9]+$/ { rows++; if ($9 != 0 || $13 != 0) bad = 1 } END { exit bad || rows == 0 }' ||
  fail "duct-bench rows missing or wrong"
# The per-rank step's inputs.
b=$("$build/apps/duct-info" --rank-binding 3)
echo "$b"
echo "$b" | grep -q '^DUCTRUN_GPU=' || fail "duct-info --rank-binding"
echo PASS
