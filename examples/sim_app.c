/* sim_app.c: a user's MPI program calling duct's collectives, as it runs on
 * a real cluster and under the simulation (mpi_launch_scripts/duct-sim):
 *
 *   mpi_launch_scripts/duct-sim cc examples/sim_app.c -o sim_app.so
 *   mpi_launch_scripts/duct-sim run -N 64 -ppn 8 -- ./sim_app.so [COUNT]
 *
 * (on a real cluster: mpicc examples/sim_app.c -lduct, then mpirun). On
 * MPI_COMM_WORLD and on a sub-communicator of every other rank, it calls
 * DUCT_Allreduce, DUCT_Bcast and DUCT_Allgather on COUNT doubles (default
 * 65536) and compares each result with the MPI library's collective on the
 * same input; prints the time of each duct call (MPI_Wtime: simulated time
 * under duct-sim) and "sim_app: OK" on rank 0, or "FAIL" and exit 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duct/duct.h"

static int check(const char* what, const double* got, const double* want, size_t n, MPI_Comm comm) {
  int bad = memcmp(got, want, n * sizeof(double)) != 0, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (any && rank == 0) printf("sim_app: FAIL: %s differs from the MPI library's\n", what);
  return any;
}

static double slowest(double t, MPI_Comm comm) {
  double m = t;
  MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
  return m;
}

static int run(MPI_Comm comm, const char* name, size_t count) {
  int rank = 0, size = 1, bad = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double* in = malloc(count * sizeof(double));
  double* out = malloc(count * sizeof(double));
  double* ref = malloc(count * sizeof(double));
  double* all = malloc((size_t)size * 64 * sizeof(double));
  double* all_ref = malloc((size_t)size * 64 * sizeof(double));
  for (size_t i = 0; i < count; ++i) in[i] = (double)(rank + 1) + (double)(i % 13);

  double t = MPI_Wtime();
  if (DUCT_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) bad = 1;
  const double t_allreduce = slowest(MPI_Wtime() - t, comm);
  MPI_Allreduce(in, ref, (int)count, MPI_DOUBLE, MPI_SUM, comm);
  bad |= check("DUCT_Allreduce", out, ref, count, comm);

  memcpy(out, in, count * sizeof(double));
  memcpy(ref, in, count * sizeof(double));
  const int root = size - 1;
  t = MPI_Wtime();
  if (DUCT_Bcast(out, (int)count, MPI_DOUBLE, root, comm) != MPI_SUCCESS) bad = 1;
  const double t_bcast = slowest(MPI_Wtime() - t, comm);
  MPI_Bcast(ref, (int)count, MPI_DOUBLE, root, comm);
  bad |= check("DUCT_Bcast", out, ref, count, comm);

  t = MPI_Wtime();
  if (DUCT_Allgather(in, 64, MPI_DOUBLE, all, 64, MPI_DOUBLE, comm) != MPI_SUCCESS) bad = 1;
  const double t_allgather = slowest(MPI_Wtime() - t, comm);
  MPI_Allgather(in, 64, MPI_DOUBLE, all_ref, 64, MPI_DOUBLE, comm);
  bad |= check("DUCT_Allgather", all, all_ref, (size_t)size * 64, comm);

  if (rank == 0)
    printf("sim_app: %s (%d ranks), %zu doubles: DUCT_Allreduce %.1f us, DUCT_Bcast %.1f us, "
           "DUCT_Allgather (64 doubles each) %.1f us\n",
           name, size, count, 1e6 * t_allreduce, 1e6 * t_bcast, 1e6 * t_allgather);
  free(in);
  free(out);
  free(ref);
  free(all);
  free(all_ref);
  return bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const size_t count = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 65536;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int bad = run(MPI_COMM_WORLD, "MPI_COMM_WORLD", count);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  bad |= run(half, rank % 2 ? "the odd ranks" : "the even ranks", count);
  MPI_Comm_free(&half);
  if (rank == 0 && !bad) printf("sim_app: OK\n");
  MPI_Finalize();
  return bad;
}
