#!/bin/sh
# leaks.sh MPIRUN ARGS...: run an MPI job under LeakSanitizer and fail if a
# leak report has a frame in duct (a duct:: function or lib/<layer>/ source).
# The MPI library's and UCX's own leftovers are reported too, often from
# components already unloaded ("<unknown module>"), and are not duct's.
set -u
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$@" 2>"$err"
rc=$?
grep -v -e '^\s*#' -e 'leak of' -e '^$' -e 'SUMMARY: AddressSanitizer' -e 'LeakSanitizer: detected' \
  -e '^=\+$' "$err" | head -40
awk '
  /^(Direct|Indirect) leak/ { block = $0; inblock = 1; next }
  inblock && /^$/ { if (ours) { print block; bad++ } inblock = 0; ours = 0; next }
  inblock { block = block "\n" $0; if ($0 ~ / in duct::| in DUCT_|\/lib\/(core|reduce|memory|channel|select|coll|capi)\//) ours = 1 }
  END { if (inblock && ours) { print block; bad++ } exit bad > 0 }
' "$err"
ours=$?
total=$(grep -c '^\(Direct\|Indirect\) leak' "$err")
if [ $ours -ne 0 ]; then echo "FAIL: leak reports with duct frames (above)"; exit 1; fi
echo "leak reports: $total, none from duct"
# The job itself must pass (LeakSanitizer's exit code is set to 0 below).
[ $rc -eq 0 ] || { echo "FAIL: the job exited $rc"; exit 1; }
echo PASS
