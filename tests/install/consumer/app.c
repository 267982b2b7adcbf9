/* A program that uses an installed duct: DUCT_Allreduce of a double vector
 * (a count not divisible by the number of ranks; out of place with MPI_SUM,
 * in place with MPI_MAX) checked element by element against MPI_Allreduce
 * of the same data, and the version it was compiled against checked against
 * the library's. Prints "<name>: rank R of N: PASS|FAIL" and exits 1 on FAIL. */
#include <duct/duct.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *name = argc > 1 ? argv[1] : "consumer";
  int major = -1, minor = -1, patch = -1;
  DUCT_Get_version(&major, &minor, &patch);
  if (major != DUCT_VERSION_MAJOR || minor != DUCT_VERSION_MINOR || patch != DUCT_VERSION_PATCH) {
    printf("%s: rank %d: library version %d.%d.%d, duct.h %d.%d.%d\n", name, rank, major, minor, patch,
           DUCT_VERSION_MAJOR, DUCT_VERSION_MINOR, DUCT_VERSION_PATCH);
    bad = 1;
  }
  const int n = 100003;
  double *a = malloc(n * sizeof *a), *d = malloc(n * sizeof *d), *m = malloc(n * sizeof *m);
  for (int i = 0; i < n; ++i) a[i] = (double)((i * 7 + rank * 13) % 101) - 50.0;
  if (DUCT_Allreduce(a, d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) bad = 1;
  MPI_Allreduce(a, m, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (memcmp(d, m, n * sizeof *d) != 0) bad = 1;
  memcpy(d, a, n * sizeof *d);
  memcpy(m, a, n * sizeof *m);
  if (DUCT_Allreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) bad = 1;
  MPI_Allreduce(MPI_IN_PLACE, m, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (memcmp(d, m, n * sizeof *d) != 0) bad = 1;
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  printf("%s: rank %d of %d: %s (duct %s)\n", name, rank, size, any ? "FAIL" : "PASS", DUCT_Version_string());
  free(a);
  free(d);
  free(m);
  MPI_Finalize();
  return any ? 1 : 0;
}
