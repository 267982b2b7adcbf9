/* splitview (run13.sh): what each rank believes about its node before
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), which hangs on node1's ranks
 * of the H100 machine's emulated cluster at 2 ranks per node (run11/12):
 * host name, the launcher's local rank and size, IPC and network
 * namespaces, and the split's result (or nothing, if it hangs). No duct.
 * Build here: mpicc -O2 splitview.c -o .gpu-bin/apps/splitview */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char* env(const char* n) { const char* v = getenv(n); return v ? v : "-"; }

int main(int c, char** v) {
  MPI_Init(&c, &v);
  int r, n, len;
  char host[MPI_MAX_PROCESSOR_NAME], ipc[64] = "?", net[64] = "?";
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Get_processor_name(host, &len);
  ssize_t k = readlink("/proc/self/ns/ipc", ipc, sizeof ipc - 1);
  if (k > 0) ipc[k] = 0;
  k = readlink("/proc/self/ns/net", net, sizeof net - 1);
  if (k > 0) net[k] = 0;
  fprintf(stderr, "rank %d of %d: host %s pid %d local rank %s of %s, node rank %s, %s %s\n", r, n, host, (int)getpid(),
          env("OMPI_COMM_WORLD_LOCAL_RANK"), env("OMPI_COMM_WORLD_LOCAL_SIZE"), env("OMPI_COMM_WORLD_NODE_RANK"), ipc, net);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node);
  int lr, ls;
  MPI_Comm_rank(node, &lr);
  MPI_Comm_size(node, &ls);
  fprintf(stderr, "rank %d: split_type done: %d of %d\n", r, lr, ls);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
