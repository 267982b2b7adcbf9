#!/bin/bash
# netns_ddp_survive.sh BUILD_DIR PYTHON: examples/ddp_survive.py on 2 nodes x 2
# ranks of network namespaces: node2 dies at a random step, node1's ranks
# finish the training (tests/python/survive.sh, 2 runs). Skipped (77) when
# not root, without network namespaces, or without the Python packages.
set -uo pipefail
build=$1 py=$2
export NETNS_CLUSTER_ID=${NETNS_CLUSTER_ID:-$((130 + $$ % 10))}
source "$(dirname "$0")/cluster_up.sh"
cluster_up 2
export PYTHONPATH=$build/python OMP_NUM_THREADS=1
"$(dirname "$0")/../python/survive.sh" "$py" mpirun 4 2 "${args[@]}" -npernode 2
