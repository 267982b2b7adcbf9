#!/bin/sh
# expect_abort.sh MPIRUN PROGRAM: the job must fail and print duct's message.
out=$("$1" -np 2 "$2" 2>&1)
rc=$?
echo "$out"
if [ $rc -eq 0 ]; then echo "FAIL: the job exited 0"; exit 1; fi
case "$out" in *"not reached"*) echo "FAIL: the call returned under MPI_ERRORS_ARE_FATAL"; exit 1 ;; esac
case "$out" in
  *"DUCT_Allreduce on rank "*": count = -1 is negative"*) echo "ok: aborted with duct's message (exit $rc)"; exit 0 ;;
esac
echo "FAIL: duct's message is missing"
exit 1
