/* duct-ft-bench: what fault tolerance costs when nothing fails (DUCT_FT=1):
 * DUCT_Comm_agree and DUCT_Comm_shrink on MPI_COMM_WORLD's duplicate, and a
 * 1 MiB DUCT_Allreduce with and without DUCT_FT's watch (run it twice).
 *
 *   duct-ft-bench [-n REPS]
 *
 * Prints, as the slowest rank saw them (MPI_Wtime; simulated time under the
 * simulation build): the setup of duct's context (the first allreduce),
 * DUCT_Comm_agree (mean of REPS), DUCT_Comm_shrink (one, with its new
 * communicator's duct context), and a 1 MiB allreduce (mean of REPS). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "duct/duct.h"

static double slowest(double t, MPI_Comm c) {
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, c);
  return m;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int reps = 10;
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i][0] == '-' && argv[i][1] == 'n') reps = atoi(argv[i + 1]);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int count = 131072;
  double* v = malloc(sizeof(double) * count);
  for (int i = 0; i < count; ++i) v[i] = rank + i;
  MPI_Barrier(comm);
  double t = MPI_Wtime();
  int rc = DUCT_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_SUM, comm);
  const double setup = slowest(MPI_Wtime() - t, MPI_COMM_WORLD);
  MPI_Barrier(comm);
  t = MPI_Wtime();
  for (int i = 0; i < reps && rc == MPI_SUCCESS; ++i) rc = DUCT_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_SUM, comm);
  const double allreduce = slowest(MPI_Wtime() - t, MPI_COMM_WORLD) / reps;
  double agree = -1, shrink = -1;
  int ft_rc = MPI_SUCCESS;
  if (rc == MPI_SUCCESS) {
    int flag = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (int i = 0; i < reps && ft_rc == MPI_SUCCESS; ++i) ft_rc = DUCT_Comm_agree(comm, &flag);
    agree = slowest(MPI_Wtime() - t, MPI_COMM_WORLD) / reps;
    MPI_Comm nc = MPI_COMM_NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    if (ft_rc == MPI_SUCCESS) ft_rc = DUCT_Comm_shrink(comm, &nc);
    shrink = slowest(MPI_Wtime() - t, MPI_COMM_WORLD);
    if (nc != MPI_COMM_NULL) MPI_Comm_free(&nc);
  }
  if (rank == 0) {
    printf("# duct-ft-bench: %d ranks, DUCT_FT=%s\n", size, getenv("DUCT_FT") ? getenv("DUCT_FT") : "0");
    printf("context setup (first 1 MiB allreduce): %10.1f us\n", setup * 1e6);
    printf("1 MiB allreduce (mean of %d):          %10.1f us\n", reps, allreduce * 1e6);
    if (ft_rc == MPI_SUCCESS) {
      printf("DUCT_Comm_agree (mean of %d):           %10.1f us\n", reps, agree * 1e6);
      printf("DUCT_Comm_shrink (with duct's context): %10.1f us\n", shrink * 1e6);
    } else {
      char msg[MPI_MAX_ERROR_STRING];
      int len = 0;
      MPI_Error_string(ft_rc, msg, &len);
      printf("DUCT_Comm_agree/shrink: not measured: %s\n", msg);
    }
  }
  free(v);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return rc == MPI_SUCCESS ? 0 : 1;
}
