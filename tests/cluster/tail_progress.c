/* tail_progress ROUNDS CALLS BYTES: a rank that completed a collective and
 * then waits in the MPI library must still hand over its last messages.
 *
 * UCX's tcp transport completes a send once its data is in the endpoint's
 * send buffer; what the socket did not take leaves at a later
 * ucp_worker_progress. In every round each rank runs CALLS gathers (the
 * non-roots' sends complete at once, so they run ahead of the root),
 * broadcasts and scatters of BYTES per rank on duct, then the MPI library's
 * own barrier (PMPI_Barrier: not duct). A rank whose last message of the
 * round is still partly in UCX's buffer waits in that barrier while its peer
 * waits in the collective for the rest: a deadlock unless duct's worker is
 * progressed from the MPI library's progress loop (coll::progress_outside).
 * Then the other direction: the round's root sends CALLS messages to every
 * other rank with the MPI library (MPI_Send), the others receive them, and
 * all enter a duct allreduce. Where the MPI library's own sends complete
 * with data in its buffers (Open MPI's UCX over TCP), the root spins in
 * duct while a receiver waits for the rest in MPI_Recv: a deadlock unless
 * duct's waits run the MPI library's progress (coll::poke_mpi).
 * Run across nodes with small socket buffers (UCX_TCP_SNDBUF/RCVBUF) so
 * that sockets are full when a round ends; the script gives it a time limit.
 * Every result is checked; exit 0 and "tail_progress: ok" when all match.
 */
#include <duct/duct.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char value(int rank, int round, long i) { return (unsigned char)(rank * 31 + round * 7 + i); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? atoi(argv[1]) : 100;
  const int calls = argc > 2 ? atoi(argv[2]) : 200;
  const long bytes = argc > 3 ? atol(argv[3]) : 4096;
  unsigned char* in = malloc((size_t)bytes * (size_t)size);
  unsigned char* out = malloc((size_t)bytes * (size_t)size);
  long wrong = 0;
  for (int r = 0; r < rounds; ++r) {
    const int root = r % size;
    for (long i = 0; i < bytes * size; ++i) in[i] = value(rank, r, i);
    for (int c = 0; c < calls; ++c) {
      if (DUCT_Gather(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == root)
      for (int q = 0; q < size; ++q)
        for (long i = 0; i < bytes; ++i) wrong += out[q * bytes + i] != value(q, r, i);
    /* The root's sends complete at once here: the root runs ahead. */
    for (int c = 0; c < calls; ++c) {
      for (long i = 0; i < bytes; ++i) out[i] = rank == root ? value(root, r, i + c) : 0;
      if (DUCT_Bcast(out, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
      for (long i = 0; i < bytes; ++i) wrong += out[i] != value(root, r, i + c);
    }
    for (int c = 0; c < calls; ++c) {
      if (DUCT_Scatter(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
      for (long i = 0; i < bytes; ++i) wrong += out[i] != value(root, r, rank * bytes + i);
    }
    for (int c = 0; c < calls; ++c) {
      if (rank == root) {
        for (long i = 0; i < bytes; ++i) out[i] = value(root, r, i + c);
        for (int q = 0; q < size; ++q)
          if (q != root) MPI_Send(out, (int)bytes, MPI_BYTE, q, c, MPI_COMM_WORLD);
      } else {
        MPI_Recv(out, (int)bytes, MPI_BYTE, root, c, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (long i = 0; i < bytes; ++i) wrong += out[i] != value(root, r, i + c);
      }
    }
    long mine = rank + r, sum = 0;
    if (DUCT_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 2);
    wrong += sum != (long)size * (size - 1) / 2 + (long)size * r;
    PMPI_Barrier(MPI_COMM_WORLD);
  }
  long all = 0;
  PMPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("tail_progress: %d rounds of %d gathers, bcasts and scatters of %ld bytes per rank on %d ranks, then as "
           "many MPI_Sends from the root and a duct allreduce, each round ending in the MPI library's barrier: %s "
           "(%ld wrong)\n",
           rounds, calls, bytes, size, all ? "WRONG" : "ok", all);
  free(in);
  free(out);
  MPI_Finalize();
  return all != 0;
}
