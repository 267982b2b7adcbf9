# Sourced by the cluster tests: cluster_up NODES brings up NODES network
# namespaces with 2 rails each (mpi_launch_scripts/netns-cluster.sh, links
# unshaped unless NETNS_CLUSTER_RATE is set), takes them down on exit, and sets `args` to the mpirun options
# that launch on them. Skips the test (77) when not root or network
# namespaces are not available. NETNS_CLUSTER_ID keeps concurrent clusters
# apart (each test picks its own range).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cluster=$root/mpi_launch_scripts/netns-cluster.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_op=^avx
fail() { echo "FAIL: $*"; exit 1; }
cluster_up() {
  [ "$(id -u)" = 0 ] || { echo "not root: skipped"; exit 77; }
  if ! ip netns add duct-probe-$$ 2>/dev/null; then echo "cannot create network namespaces here: skipped"; exit 77; fi
  ip netns delete duct-probe-$$
  trap '"$cluster" down' EXIT
  "$cluster" --rails 2 up "$1" >/dev/null || fail "could not create the cluster"
  read -r -a args <<<"$("$cluster" args)"
}
