/* Allgather of 64 KiB (32 KiB per rank) on 2 ranks with the send and receive
   buffers at every 64-byte page offset: median of 5 blocks of 200 calls. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <duct/duct.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int count = 8192; /* floats per rank */
  char* sb = aligned_alloc(4096, 4096 + count * 4);
  char* rb = aligned_alloc(4096, 4096 + (size_t)n * count * 4);
  memset(sb, 1, 4096 + count * 4); memset(rb, 0, 4096 + (size_t)n * count * 4);
  for (int off = 0; off < 4096; off += 64) {
    float* s = (float*)(sb + off); float* r = (float*)(rb + off);
    double best[5];
    for (int b = 0; b < 5; ++b) {
      DUCT_Allgather(s, count, MPI_FLOAT, r, count, MPI_FLOAT, MPI_COMM_WORLD);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < 200; ++i) DUCT_Allgather(s, count, MPI_FLOAT, r, count, MPI_FLOAT, MPI_COMM_WORLD);
      double t = (MPI_Wtime() - t0) / 200 * 1e6, mx;
      MPI_Allreduce(&t, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      best[b] = mx;
    }
    for (int i = 0; i < 5; ++i) for (int j = i + 1; j < 5; ++j) if (best[j] < best[i]) { double x = best[i]; best[i] = best[j]; best[j] = x; }
    if (rank == 0) printf("%4d %7.2f\n", off, best[2]);
  }
  MPI_Finalize();
}
