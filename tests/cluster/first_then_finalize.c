/* first_then_finalize: one duct reduce of 4 bytes on MPI_COMM_WORLD, the
 * first duct call there (so it creates the communicator's context), then
 * MPI_Finalize. A leaf of the reduce has almost nothing to do: it used to
 * finish the call and destroy its UCX worker in MPI_Finalize while a
 * slower rank of its node was still creating its endpoint to it, which
 * over UCX's shared-memory transports attaches the leaf's receive FIFO
 * ("mm ep failed to connect to remote FIFO": MPICH's coll/longuser on 2
 * emulated nodes, 7 of 12 runs). The context setup now ends with a barrier
 * across nodes. Exit 0 and "first_then_finalize: ok" at the root when the
 * sum is right. */
#include <duct/duct.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, sum = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = rank + 1;
  int rc = DUCT_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  int bad = rc != MPI_SUCCESS || (rank == 0 && sum != size * (size + 1) / 2);
  if (rank == 0) printf("first_then_finalize: %s (sum %d, expected %d)\n", bad ? "WRONG" : "ok", sum, size * (size + 1) / 2);
  MPI_Finalize();
  return bad;
}
