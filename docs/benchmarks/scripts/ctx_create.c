/* ctx_create: the cost of creating duct's context for a communicator.
 * N cycles of MPI_Comm_dup + a first DUCT_Allreduce of 8 bytes on the new
 * communicator + MPI_Comm_free; rank 0 prints the time per cycle (the
 * slowest rank's). Usage: mpirun -np P ctx_create [N=1000] */
#include <duct/duct.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = argc > 1 ? atoi(argv[1]) : 1000;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double x = 1, y = 0;
  DUCT_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* runtime up */
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    DUCT_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
    MPI_Comm_free(&c);
  }
  double t = MPI_Wtime() - t0, tmax = 0;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%d cycles: %.1f us per cycle\n", n, 1e6 * tmax / n);
  MPI_Finalize();
  return 0;
}
