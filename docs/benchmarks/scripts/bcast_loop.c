// bcast_loop N [reduce|allreduce|gather|scatter|gather_ip|scatter_ip]: N
// back-to-back MPI_Bcast calls of 8 bytes from rank 0 (or MPI_Reduce calls
// of 8 bytes to rank 0, MPI_Allreduce calls of 8 bytes, MPI_Gather or
// MPI_Scatter of 4 bytes per rank at root 0, _ip: MPI_IN_PLACE at the root)
// after 1000 warm-up calls; each rank prints its time per call and the user and
// system CPU time per call (getrusage) over the timed loop. Run it plain
// (Open MPI's own bcast) and with LD_PRELOAD=libduct-mpi.so (duct's), on
// the emulated cluster (docs/benchmarks/2026-11-26-small-calls-across-nodes.md).
// Under valgrind --tool=callgrind, the difference between two runs of
// different N divided by the difference in N is the instructions per call.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static double cpu(int sys) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  const struct timeval t = sys ? u.ru_stime : u.ru_utime;
  return t.tv_sec + t.tv_usec * 1e-6;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  const int n = argc > 1 ? atoi(argv[1]) : 50000;
  const int reduce = argc > 2 && strcmp(argv[2], "reduce") == 0;
  const int allreduce = argc > 2 && strcmp(argv[2], "allreduce") == 0;
  const int gather = argc > 2 && strncmp(argv[2], "gather", 6) == 0;
  const int scatter = argc > 2 && strncmp(argv[2], "scatter", 7) == 0;
  const int ip = argc > 2 && strstr(argv[2], "_ip") != NULL && r == 0;
  float b[2] = {1, 2}, out[2], all[1024] = {0};
#define CALL()                                                                                     \
  (allreduce ? MPI_Allreduce(b, out, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD)                         \
   : reduce  ? MPI_Reduce(b, out, 2, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD)                         \
   : gather  ? MPI_Gather(ip ? MPI_IN_PLACE : (void*)b, 1, MPI_FLOAT, all, 1, MPI_FLOAT, 0, MPI_COMM_WORLD) \
   : scatter ? MPI_Scatter(all, 1, MPI_FLOAT, ip ? MPI_IN_PLACE : (void*)out, 1, MPI_FLOAT, 0, MPI_COMM_WORLD) \
             : MPI_Bcast(b, 2, MPI_FLOAT, 0, MPI_COMM_WORLD))
  for (int i = 0; i < 1000; i++) CALL();
  MPI_Barrier(MPI_COMM_WORLD);
  const double u0 = cpu(0), s0 = cpu(1), t0 = MPI_Wtime();
  for (int i = 0; i < n; i++) CALL();
  const double t = MPI_Wtime() - t0, u = cpu(0) - u0, s = cpu(1) - s0;
  printf("rank %d %.3f us/call user %.3f sys %.3f us/call\n", r, t / n * 1e6, u / n * 1e6, s / n * 1e6);
  MPI_Finalize();
  return 0;
}
