/* duct-ft-survive: a loop of DUCT_Allreduce on MPI_COMM_WORLD (errors
 * returned) while ranks die; the survivors shrink and go on.
 *
 *   duct-ft-survive [-c COUNT] [-i ITERS] [-k R1,R2,...] [-a ITER] [-m US] [-s RANK] [-n AFTER] [-w MS] [-N] [-D]
 *                   [-L] [-d]
 *
 *   -c  doubles per allreduce (default 131072: 1 MiB)
 *   -i  iterations of the loop (default 200)
 *   -k  ranks that kill themselves (SIGKILL) at iteration -a; none: an
 *       outside killer (the netns test) does it
 *   -a  the iteration (default 20)
 *   -m  the ranks of -k die US microseconds after entering the call of
 *       iteration -a (from a helper thread, so inside the collective), not
 *       before it
 *   -s  a rank that dies during the shrink instead of shrinking (after
 *       sleeping 0-20 ms, chosen by its rank and the time)
 *   -n  after shrinking, this many allreduces on the survivors' communicator
 *       (default 10), each checked against MPI_Allreduce on the same inputs
 *       over the same communicator
 *   -w  milliseconds to wait before MPI_Finalize (default 0)
 *   -N  the loop's allreduces nonblocking (DUCT_Iallreduce + DUCT_Wait)
 *   -D  the loop on a duplicate of MPI_COMM_WORLD, shrunk and then freed
 *       (as torch's process group does), instead of MPI_COMM_WORLD
 *   -L  the ranks of -k do not die: the test cuts their node's links from
 *       outside (and writes the time to $FT_KILL_FILE); they go on until
 *       their call fails, write "rank R: cut off: error CLASS ..." to
 *       $FT_KILL_FILE.cut (their standard output goes to mpirun over the cut
 *       links) and sleep until they are stopped. -a is then unused.
 *   -d  device buffers (cudaMalloc on device 0, which all ranks share): the
 *       loop's input is copied in once; after the shrink each allreduce's
 *       input is copied in and its result copied out and compared, so a
 *       survivor's CUDA context must still work. Exit 77 (skipped) where
 *       this build has no CUDA or no device is usable.
 *
 * Every survivor prints
 *   rank R: error CLASS after I iterations, T s after the kill
 *   rank R: shrink to N ranks took T s
 *   rank R: PASS (N allreduces on the survivors exact)
 * where the kill time is the earliest kill time a victim wrote to
 * $FT_KILL_FILE (CLOCK_REALTIME, same machine or netns). Exit 0 on PASS,
 * 1 on a wrong result or an unexpected error. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "duct/duct.h"

#ifdef FT_CUDA
#include <cuda_runtime_api.h>
#endif

static double now_real(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char* class_name(int rc) {
  int cls = 0;
  MPI_Error_class(rc, &cls);
  static const struct {
    DUCT_Errclass e;
    const char* name;
  } names[] = {{DUCT_ERRCLASS_PEER_FAILED, "PEER_FAILED"}, {DUCT_ERRCLASS_REVOKED, "REVOKED"},
               {DUCT_ERRCLASS_TIMEOUT, "TIMEOUT"}, {DUCT_ERRCLASS_UCX, "UCX"}, {DUCT_ERRCLASS_MPI, "MPI"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (cls == DUCT_Error_class(names[i].e)) return names[i].name;
  return "OTHER";
}

static void record_kill(void) {
  const char* f = getenv("FT_KILL_FILE");
  if (!f) return;
  FILE* fp = fopen(f, "a");
  if (!fp) return;
  fprintf(fp, "%.6f\n", now_real());
  fclose(fp);
}

// A victim dies, writing the time first.
static void die(void) {
  record_kill();
  raise(SIGKILL);
}

static void* die_later(void* us) {
  usleep((useconds_t)(size_t)us);
  die();
  return NULL;
}

// With -d: a copy between host and device memory (either way) that has
// landed when it returns (cudaMemcpy from pageable memory may return before
// its DMA does). 0, after saying so, when CUDA fails.
static int copy_landed(int rank, void* dst, const void* src, size_t bytes) {
#ifdef FT_CUDA
  if (cudaMemcpy(dst, src, bytes, cudaMemcpyDefault) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess)
    return 1;
  printf("rank %d: FAIL: CUDA: %s\n", rank, cudaGetErrorString(cudaGetLastError()));
#else
  (void)dst, (void)src, (void)bytes;
  printf("rank %d: FAIL: this build has no CUDA\n", rank);
#endif
  return 0;
}

static double kill_time(void) {
  const char* f = getenv("FT_KILL_FILE");
  double t = 0, best = 0;
  FILE* fp = f ? fopen(f, "r") : NULL;
  if (!fp) return 0;
  while (fscanf(fp, "%lf", &t) == 1)
    if (best == 0 || t < best) best = t;
  fclose(fp);
  return best;
}

static int in_list(const char* list, int r) {
  if (!list) return 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char* t = strtok(buf, ","); t; t = strtok(NULL, ","))
    if (atoi(t) == r) return 1;
  return 0;
}

static void fill(double* v, int count, int rank, int iter) {
  for (int i = 0; i < count; ++i) v[i] = (double)((rank + 1) * 7 + iter * 3 + i % 97);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int count = 131072, iters = 200, at = 20, shrink_victim = -1, after = 10, linger_ms = 0, nonblocking = 0, dup = 0,
      cut = 0, device = 0, in_call_us = -1;
  const char* victims = NULL;
  int opt;
  while ((opt = getopt(argc, argv, "c:i:k:a:m:s:n:w:NDLd")) != -1) {
    switch (opt) {
      case 'c': count = atoi(optarg); break;
      case 'i': iters = atoi(optarg); break;
      case 'k': victims = optarg; break;
      case 'a': at = atoi(optarg); break;
      case 's': shrink_victim = atoi(optarg); break;
      case 'n': after = atoi(optarg); break;
      case 'w': linger_ms = atoi(optarg); break;
      case 'N': nonblocking = 1; break;
      case 'D': dup = 1; break;
      case 'L': cut = 1; break;
      case 'd': device = 1; break;
      case 'm': in_call_us = atoi(optarg); break;
      default: fprintf(stderr, "usage: see the source\n"); MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  MPI_Comm loop = MPI_COMM_WORLD;
  if (dup) {
    MPI_Comm_dup(MPI_COMM_WORLD, &loop);
    MPI_Comm_set_errhandler(loop, MPI_ERRORS_RETURN);
  }
  const size_t bytes = sizeof(double) * (size_t)count;
  double* in = malloc(bytes);
  double* out = malloc(bytes);
  double* ref = malloc(bytes);
  // What the collectives are given: the host buffers, or with -d device ones.
  double* cin = in;
  double* cout = out;
  if (device) {
#ifdef FT_CUDA
    int ok = cudaSetDevice(0) == cudaSuccess && cudaMalloc((void**)&cin, bytes) == cudaSuccess &&
             cudaMalloc((void**)&cout, bytes) == cudaSuccess;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
      if (rank == 0) printf("SKIP: no usable CUDA device (%s)\n", cudaGetErrorString(cudaGetLastError()));
      MPI_Finalize();
      return 77;
    }
#else
    if (rank == 0) printf("SKIP: -d: this build has no CUDA\n");
    MPI_Finalize();
    return 77;
#endif
  }
  int rc = MPI_SUCCESS, it = 0;
  for (it = 0; it < iters; ++it) {
    if (it == at && !cut && in_call_us < 0 && in_list(victims, rank)) die();
    if (it == 1) {  // duct's context is set up (the first call did it)
      printf("rank %d: loop started\n", rank);
      fflush(stdout);
    }
    if (!device || it == 0) fill(in, count, rank, it);
    if (device && it == 0) (void)copy_landed(rank, cin, in, bytes);
    if (it == at && !cut && in_call_us >= 0 && in_list(victims, rank)) {
      pthread_t t;
      pthread_create(&t, NULL, die_later, (void*)(size_t)in_call_us);
    }
    if (nonblocking) {
      MPI_Request req;
      rc = DUCT_Iallreduce(cin, cout, count, MPI_DOUBLE, MPI_SUM, loop, &req);
      if (rc == MPI_SUCCESS) rc = DUCT_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      rc = DUCT_Allreduce(cin, cout, count, MPI_DOUBLE, MPI_SUM, loop);
    }
    if (rc != MPI_SUCCESS) break;
  }
  const double t_err = now_real();
  // A victim that saw the failure of another victim first still dies (its
  // node is gone, whatever it saw); one cut off waits to be stopped.
  if (in_list(victims, rank) && cut && rc != MPI_SUCCESS) {
    char path[4096];
    snprintf(path, sizeof path, "%s.cut", getenv("FT_KILL_FILE") ? getenv("FT_KILL_FILE") : "/dev/null");
    FILE* fp = fopen(path, "a");
    if (fp) {
      fprintf(fp, "rank %d: cut off: error %s after %d iterations, %.3f s after the cut\n", rank, class_name(rc), it,
              t_err - kill_time());
      fclose(fp);
    }
    for (;;) pause();
  }
  if (in_list(victims, rank) && !cut) die();
  if (rc == MPI_SUCCESS) {
    printf("rank %d: no failure in %d iterations\n", rank, iters);
    fflush(stdout);
    MPI_Finalize();
    return 0;
  }
  const double killed = kill_time();
  printf("rank %d: error %s after %d iterations, %.3f s after the kill\n", rank, class_name(rc), it,
         killed > 0 ? t_err - killed : -1.0);
  fflush(stdout);

  if (rank == shrink_victim) {
    usleep((useconds_t)((rank * 7919 + (long)(now_real() * 1e6)) % 20000));
    die();
  }
  MPI_Comm nc = MPI_COMM_NULL;
  const double t0 = MPI_Wtime();
  rc = DUCT_Comm_shrink(loop, &nc);
  const double took = MPI_Wtime() - t0;
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    printf("rank %d: FAIL: DUCT_Comm_shrink: %s\n", rank, msg);
    fflush(stdout);
    return 1;
  }
  int nsize = 0, nrank = 0;
  MPI_Comm_size(nc, &nsize);
  MPI_Comm_rank(nc, &nrank);
  MPI_Group failed;
  DUCT_Comm_get_failed(loop, &failed);
  int nfailed = 0;
  MPI_Group_size(failed, &nfailed);
  if (failed != MPI_GROUP_EMPTY) MPI_Group_free(&failed);
  printf("rank %d: shrink to %d ranks took %.3f s (failed set of %d)\n", rank, nsize, took, nfailed);
  fflush(stdout);
  int bad = nsize + nfailed != size;
  for (int j = 0; j < after && !bad; ++j) {
    fill(in, count, nrank, 1000 + j);
    if (device && !copy_landed(rank, cin, in, bytes)) {
      bad = 1;
      break;
    }
    rc = DUCT_Allreduce(cin, cout, count, MPI_DOUBLE, MPI_SUM, nc);
    if (rc != MPI_SUCCESS) {
      char msg[MPI_MAX_ERROR_STRING];
      int len = 0;
      MPI_Error_string(rc, msg, &len);
      printf("rank %d: FAIL: allreduce %d on the survivors returned %s: %s\n", rank, j, class_name(rc), msg);
      bad = 1;
      break;
    }
    if (device && !copy_landed(rank, out, cout, bytes)) {
      bad = 1;
      break;
    }
    MPI_Allreduce(in, ref, count, MPI_DOUBLE, MPI_SUM, nc);
    if (memcmp(out, ref, sizeof(double) * (size_t)count) != 0) {
      printf("rank %d: FAIL: allreduce %d on the survivors differs from MPI_Allreduce\n", rank, j);
      bad = 1;
    }
  }
  if (!bad) printf("rank %d: PASS (%d allreduces on the survivors exact%s)\n", rank, after, device ? ", device buffers" : "");
  fflush(stdout);
  MPI_Comm_free(&nc);
  if (dup) MPI_Comm_free(&loop);
  if (linger_ms > 0) usleep((useconds_t)linger_ms * 1000);
#ifdef FT_CUDA
  if (device) {
    cudaFree(cin);
    cudaFree(cout);
  }
#endif
  free(in);
  free(out);
  free(ref);
  printf("rank %d: MPI_Finalize\n", rank);  // the tests tell a rank held in Open MPI's fence from a hung one
  fflush(stdout);
  MPI_Finalize();
  return bad;
}
