#!/usr/bin/env bash
# run8b.sh: the second device call of 2026-11-26's run8 session (21 s, on
# the machine run8.sh left warm): which datatype case aborted tests/gpu
# (np 1, and np 2 under DUCT_LOG=debug and MALLOC_CHECK_=3), the collective
# suite without [datatype], and why the emulated cluster did not start
# (its hostfile, the OMPI_MCA_* settings, mpirun --display-allocation).
RUN=run8b source docs/benchmarks/scripts/gpu-lib.sh
if mps_on; then
  step 40 "datatype case np=1" && gpu_tests mps-dt 1 auto 30 "[datatype]"
  export DUCT_LOG=debug MALLOC_CHECK_=3; MR="$MR -x DUCT_LOG -x MALLOC_CHECK_"
  step 40 "datatype case np=2 DUCT_LOG=debug" && gpu_tests mps-dt-dbg 2 auto 30 "complex, long double, pair and logical types equal the MPI library's reductions"
  unset DUCT_LOG MALLOC_CHECK_; MR="$MR0 -x CUDA_MPS_PIPE_DIRECTORY"
  step 60 "suite without [datatype] np=2" && gpu_tests mps-nodt 2 auto 60 "~[stream]~[datatype]"
  mps_off
fi
step 60 "cluster diag" && {
  command -v ip >/dev/null || { mkdir -p /opt/net; for f in "$deps"/net/*.deb; do dpkg -x "$f" /opt/net; done
    export PATH=$PATH:/opt/net/bin:/opt/net/sbin:/opt/net/usr/bin:/opt/net/usr/sbin
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/opt/net/lib/x86_64-linux-gnu:/opt/net/usr/lib/x86_64-linux-gnu; }
  export NETNS_CLUSTER_ID=41
  mpi_launch_scripts/netns-cluster.sh --rails 2 --rate 1gbit up 2
  eval "args=($(mpi_launch_scripts/netns-cluster.sh args))"
  cat /run/duct-netns-41/hostfile; env | grep ^OMPI_; getent hosts node1 node2; hostname
  timeout 20 mpirun "${args[@]}" --display-allocation -np 4 -npernode 2 hostname 2>&1 | head -30
  timeout 20 mpirun "${args[@]}" -np 4 --host node1:2,node2:2 hostname 2>&1 | head -10
  mpi_launch_scripts/netns-cluster.sh down
}
echo "total $(( $(date +%s) - t0 )) s"
