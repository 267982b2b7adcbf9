/* run10 control: Open MPI alone, 64 KiB host allreduce, no duct. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int c, char** v) {
  MPI_Init(&c, &v);
  int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);
  float* a = calloc(16384, 4); float* b = calloc(16384, 4);
  for (int i = 0; i < 20; ++i) MPI_Allreduce(a, b, 16384, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  if (r == 0) printf("mpionly: 20 allreduces of 64 KiB done\n");
  MPI_Finalize(); return 0;
}
