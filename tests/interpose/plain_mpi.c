/* plain_mpi: an MPI program that knows nothing of duct. It runs the
 * collectives duct interposes on known inputs (host memory, in place and
 * not, a derived datatype, a user-defined op, a split communicator), checks
 * every result against a value it computes itself, and prints one line per
 * check plus a digest of all results, so that a run with libduct-mpi
 * preloaded can be compared line by line with a run without it.
 * Exit status: 0 when every check passed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int MPIX_Query_cuda_support(void); /* Open MPI's mpi-ext.h */

static int rank, size, failures;
static unsigned long long digest = 1469598103934665603ull;

static void fold(const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i) {
    digest ^= b[i];
    digest *= 1099511628211ull;
  }
}

static void check(const char* what, int ok) {
  if (!ok) ++failures;
  if (rank == 0) printf("%-40s %s\n", what, ok ? "ok" : "WRONG");
}

static void user_max(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i)
    if (((int*)in)[i] > ((int*)inout)[i]) ((int*)inout)[i] = ((int*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = size, sum_ranks = n * (n - 1) / 2;
  enum { N = 1000 };
  int ok;

  /* MPI_Allreduce: ints and doubles, out of place and in place, large */
  static int ia[N], ib[N];
  for (int i = 0; i < N; ++i) ia[i] = rank + i;
  MPI_Allreduce(ia, ib, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < N; ++i) ok &= ib[i] == sum_ranks + n * i;
  check("MPI_Allreduce int sum", ok);
  fold(ib, sizeof ib);
  double d = rank * 0.5;
  MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  check("MPI_Allreduce double max in place", d == (n - 1) * 0.5);
  fold(&d, sizeof d);
  static float big[1 << 20];
  for (int i = 0; i < (1 << 20); ++i) big[i] = (float)(i % 7);
  MPI_Allreduce(MPI_IN_PLACE, big, 1 << 20, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < (1 << 20); ++i) ok &= big[i] == (float)(n * (i % 7));
  check("MPI_Allreduce 4 MiB float sum in place", ok);
  fold(big, sizeof big);

  /* a user-defined op: passed to the MPI library */
  MPI_Op mymax;
  MPI_Op_create(user_max, 1, &mymax);
  int r = rank * 3, rmax = -1;
  MPI_Allreduce(&r, &rmax, 1, MPI_INT, mymax, MPI_COMM_WORLD);
  check("MPI_Allreduce user op", rmax == (n - 1) * 3);
  MPI_Op_free(&mymax);

  /* MPI_Reduce */
  long lsum = 0, lin = rank + 1;
  MPI_Reduce(&lin, &lsum, 1, MPI_LONG, MPI_SUM, n - 1, MPI_COMM_WORLD);
  if (rank == n - 1) ok = lsum == (long)n * (n + 1) / 2; else ok = 1;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  check("MPI_Reduce long sum to the last rank", ok);

  /* MPI_Bcast: bytes and a derived datatype (every other int) */
  char msg[64] = {0};
  if (rank == 0) strcpy(msg, "hello from rank 0");
  MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, MPI_COMM_WORLD);
  check("MPI_Bcast chars", strcmp(msg, "hello from rank 0") == 0);
  fold(msg, sizeof msg);
  MPI_Datatype every_other;
  MPI_Type_vector(8, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int v[16];
  for (int i = 0; i < 16; ++i) v[i] = rank == 0 ? i : -1;
  MPI_Bcast(v, 1, every_other, 0, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < 16; ++i) ok &= v[i] == (i % 2 == 0 || rank == 0 ? i : -1);
  check("MPI_Bcast vector datatype", ok);
  fold(v, sizeof v);
  MPI_Type_free(&every_other);

  /* MPI_Allgather, MPI_Allgatherv, MPI_Alltoall, MPI_Alltoallv */
  int *all = malloc(sizeof(int) * 2 * n), *counts = malloc(sizeof(int) * n), *displs = malloc(sizeof(int) * n);
  int mine[2] = {rank, rank * rank};
  MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < n; ++i) ok &= all[2 * i] == i && all[2 * i + 1] == i * i;
  check("MPI_Allgather", ok);
  fold(all, sizeof(int) * 2 * n);
  for (int i = 0; i < n; ++i) {
    counts[i] = 1;
    displs[i] = n - 1 - i; /* reversed */
  }
  MPI_Allgatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < n; ++i) ok &= all[n - 1 - i] == i;
  check("MPI_Allgatherv reversed displacements", ok);
  int *sa = malloc(sizeof(int) * n), *ra = malloc(sizeof(int) * n);
  for (int i = 0; i < n; ++i) sa[i] = rank * 100 + i;
  MPI_Alltoall(sa, 1, MPI_INT, ra, 1, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < n; ++i) ok &= ra[i] == i * 100 + rank;
  check("MPI_Alltoall", ok);
  fold(ra, sizeof(int) * n);
  for (int i = 0; i < n; ++i) displs[i] = i;
  MPI_Alltoallv(sa, counts, displs, MPI_INT, ra, counts, displs, MPI_INT, MPI_COMM_WORLD);
  ok = 1;
  for (int i = 0; i < n; ++i) ok &= ra[i] == i * 100 + rank;
  check("MPI_Alltoallv", ok);

  /* MPI_Reduce_scatter_block, MPI_Reduce_scatter */
  int rs = -1;
  for (int i = 0; i < n; ++i) sa[i] = i + rank;
  MPI_Reduce_scatter_block(sa, &rs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check("MPI_Reduce_scatter_block", rs == n * rank + sum_ranks);
  rs = -1;
  MPI_Reduce_scatter(sa, &rs, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  ok = rs == n * rank + sum_ranks;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  check("MPI_Reduce_scatter", ok);

  /* MPI_Gather(v), MPI_Scatter(v), MPI_Barrier, on a split communicator */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int hr, hn;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hn);
  MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, half);
  ok = 1;
  if (hr == 0)
    for (int i = 0; i < hn; ++i) ok &= all[i] == 2 * i + rank % 2;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  check("MPI_Gather on a split communicator", ok);
  for (int i = 0; i < hn; ++i) {
    counts[i] = 1;
    displs[i] = i;
  }
  MPI_Gatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, 0, half);
  int back = -1;
  MPI_Scatter(all, 1, MPI_INT, &back, 1, MPI_INT, 0, half);
  ok = back == rank;
  MPI_Scatterv(all, counts, displs, MPI_INT, &back, 1, MPI_INT, 0, half);
  ok &= back == rank;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  check("MPI_Gatherv, MPI_Scatter, MPI_Scatterv", ok);
  MPI_Barrier(half);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&half);

  /* Nonblocking collectives, several outstanding, completed with MPI_Waitall
     and MPI_Wait in reverse order (they must progress under duct too). */
  {
    enum { NB = 3001 };
    int* x = malloc(NB * sizeof(int));
    int* y = malloc(NB * sizeof(int));
    int* z = malloc((size_t)n * 5 * sizeof(int));
    int* w = malloc((size_t)n * 5 * sizeof(int));
    char word[16] = "";
    for (int i = 0; i < NB; ++i) x[i] = rank * 3 + i % 11;
    for (int i = 0; i < n * 5; ++i) z[i] = rank * 1000 + i;
    if (rank == n - 1) strcpy(word, "nonblocking");
    MPI_Request q[4];
    MPI_Iallreduce(x, y, NB, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[0]);
    MPI_Ibcast(word, 16, MPI_CHAR, n - 1, MPI_COMM_WORLD, &q[1]);
    MPI_Ialltoall(z, 5, MPI_INT, w, 5, MPI_INT, MPI_COMM_WORLD, &q[2]);
    MPI_Ibarrier(MPI_COMM_WORLD, &q[3]);
    MPI_Wait(&q[3], MPI_STATUS_IGNORE);
    MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
    ok = strcmp(word, "nonblocking") == 0;
    for (int i = 0; i < NB; ++i) ok &= y[i] == 3 * sum_ranks + n * (i % 11);
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < 5; ++k) ok &= w[j * 5 + k] == j * 1000 + rank * 5 + k;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    check("MPI_Iallreduce, MPI_Ibcast, MPI_Ialltoall, MPI_Ibarrier", ok);
    free(x);
    free(y);
    free(z);
    free(w);
  }

  /* What the CUDA-awareness query says (differs with libduct-mpi). */
  int cuda = MPIX_Query_cuda_support();
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("digest %016llx\n", digest);
    printf("MPIX_Query_cuda_support %d\n", cuda);
    printf("%s\n", total == 0 ? "PASS" : "FAIL");
  }
  free(all);
  free(counts);
  free(displs);
  free(sa);
  free(ra);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
