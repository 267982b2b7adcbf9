// duct-churn: create, use and free communicators thousands of times, on
// host memory, and check that nothing accumulates.
//  - Under AddressSanitizer (tests/sanitize): LeakSanitizer reports what was
//    never freed at exit; leaks.sh fails on any report with a duct frame.
//  - In the normal build (tests/mpi): the process's resident memory must
//    not grow between the first and the last thousand rounds, which catches
//    what LSan cannot see (handles duct keeps reachable but never frees:
//    communicators, windows, UCX state). ASan's allocator quarantines freed
//    memory, so RSS says nothing there and is not checked.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "duct/duct.h"

namespace {

long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

int g_rank = 0, g_size = 1, g_bad = 0;

void check(bool ok, const char* what, int iter) {
  if (!ok && g_bad++ < 10) std::printf("rank %d: iteration %d: %s failed\n", g_rank, iter, what);
}

// One round on a fresh communicator: a split, a dup of it, collectives of
// each kind (small and large), then both freed.
void round_on_new_comms(int iter) {
  MPI_Comm split, dup;
  MPI_Comm_split(MPI_COMM_WORLD, iter % 2 == 0 ? 0 : g_rank % 2, g_rank, &split);
  MPI_Comm_dup(split, &dup);
  int n = 0, me = 0;
  MPI_Comm_size(dup, &n);
  MPI_Comm_rank(dup, &me);
  std::vector<float> a(iter % 10 == 0 ? 65536 : 16, 1.0f), b(a.size());
  check(DUCT_Allreduce(a.data(), b.data(), static_cast<int>(a.size()), MPI_FLOAT, MPI_SUM, dup) == MPI_SUCCESS &&
            b.back() == static_cast<float>(n),
        "allreduce", iter);
  check(DUCT_Bcast(a.data(), static_cast<int>(a.size()), MPI_FLOAT, n - 1, split) == MPI_SUCCESS, "bcast", iter);
  std::vector<int> all(static_cast<std::size_t>(n) * 4), mine(4, me);
  check(DUCT_Allgather(mine.data(), 4, MPI_INT, all.data(), 4, MPI_INT, dup) == MPI_SUCCESS && all.back() == n - 1,
        "allgather", iter);
  std::vector<int> counts(static_cast<std::size_t>(n), 1), displs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) displs[static_cast<std::size_t>(i)] = i;
  std::vector<int> s(static_cast<std::size_t>(n), me), r(static_cast<std::size_t>(n));
  check(DUCT_Alltoallv(s.data(), counts.data(), displs.data(), MPI_INT, r.data(), counts.data(), displs.data(), MPI_INT,
                       split) == MPI_SUCCESS,
        "alltoallv", iter);
  check(DUCT_Barrier(dup) == MPI_SUCCESS, "barrier", iter);
  // A derived datatype made and freed every round (packed paths).
  MPI_Datatype vec;
  MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  std::vector<int> v(8, me);
  check(DUCT_Bcast(v.data(), 1, vec, 0, dup) == MPI_SUCCESS, "bcast of a vector type", iter);
  MPI_Type_free(&vec);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&split);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3000;
  const int window = rounds / 3;
  long rss_early = 0, rss_late = 0;
  for (int i = 0; i < rounds; ++i) {
    round_on_new_comms(i);
    if (i == window) rss_early = rss_kib();
  }
  rss_late = rss_kib();
  // Allow allocator slack, never growth per round: 2000 rounds leaking even
  // 1 KiB each would add 2 MiB.
  const long grew = rss_late - rss_early;
  std::printf("rank %d: %d rounds, %d communicators created and freed; RSS %ld KiB after round %d, %ld KiB at the "
              "end (%+ld KiB)\n", g_rank, rounds, 2 * rounds, rss_early, window, rss_late, grew);
#if defined(__SANITIZE_ADDRESS__)
  const bool measure = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  const bool measure = false;
#else
  const bool measure = true;
#endif
#else
  const bool measure = true;
#endif
  if (measure) check(grew < 1024, "RSS growth under 1 MiB", rounds);
  int bad = g_bad, all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (g_rank == 0) std::printf("%s\n", all_bad == 0 ? "PASS" : "FAIL");
  return all_bad == 0 ? 0 : 1;
}
