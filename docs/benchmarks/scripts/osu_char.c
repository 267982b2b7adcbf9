/* osu_char: what the OSU micro-benchmarks' CUDA allreduce does by default
 * (MPI_CHAR, MPI_SUM, device buffers), timed under LD_PRELOAD=libduct-mpi.so,
 * beside the same reduction staged through host memory by hand (cudaMemcpy to
 * host, PMPI_Allreduce, cudaMemcpy back: what duct's fallback did for MPI_CHAR
 * before it was native). Checks the result.
 *   mpicc -O2 osu_char.c -I$CUDA/include -L$CUDA/lib64 -lcudart -o osu_char
 *   mpirun -np 2 -x LD_PRELOAD=build/lib/libduct-mpi.so ./osu_char [bytes] [iters] */
#include <cuda_runtime.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  size_t bytes = argc > 1 ? strtoull(argv[1], 0, 0) : (4u << 20);
  int iters = argc > 2 ? atoi(argv[2]) : 100;
  char *s, *r, *h = malloc(bytes), *hr = malloc(bytes);
  cudaMalloc((void**)&s, bytes);
  cudaMalloc((void**)&r, bytes);
  for (size_t i = 0; i < bytes; ++i) h[i] = (char)((i + rank) % 7);
  cudaMemcpy(s, h, bytes, cudaMemcpyHostToDevice);
  double best[2] = {0, 0};
  for (int mode = 0; mode < 2; ++mode) {
    for (int it = -10; it < iters; ++it) {
      if (it == 0) { MPI_Barrier(MPI_COMM_WORLD); best[mode] = MPI_Wtime(); }
      if (mode == 0) {
        MPI_Allreduce(s, r, (int)bytes, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
      } else {
        cudaMemcpy(h, s, bytes, cudaMemcpyDeviceToHost);
        PMPI_Allreduce(h, hr, (int)bytes, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
        cudaMemcpy(r, hr, bytes, cudaMemcpyHostToDevice);
      }
    }
    best[mode] = (MPI_Wtime() - best[mode]) / iters * 1e6;
    cudaMemcpy(hr, r, bytes, cudaMemcpyDeviceToHost);
    long wrong = 0;
    for (size_t i = 0; i < bytes; ++i) {
      int want = 0;
      for (int q = 0; q < n; ++q) want += (int)((i + q) % 7);
      wrong += hr[i] != (char)want;
    }
    if (wrong) printf("rank %d: %s: %ld wrong bytes\n", rank, mode ? "staged" : "MPI_Allreduce", wrong);
  }
  if (rank == 0)
    printf("osu_char %zu bytes, %d ranks: MPI_Allreduce(MPI_CHAR, device) %.1f us, host-staged %.1f us, %.1fx\n",
           bytes, n, best[0], best[1], best[1] / best[0]);
  MPI_Finalize();
  return 0;
}
