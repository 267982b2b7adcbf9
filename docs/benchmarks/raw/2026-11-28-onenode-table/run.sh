#!/bin/bash
# Issue 48's one-node table again (2026-11-28): the 2026-11-27 script, the
# whole set three times (rep 1-3). Run from the repository root, nothing
# else running:
#   bash docs/benchmarks/raw/2026-11-28-onenode-table/run.sh > docs/benchmarks/raw/2026-11-28-onenode-table/out.txt
REPS="1 2 3" exec bash "$(dirname "$0")/../2026-11-27-onenode-table/run.sh"
