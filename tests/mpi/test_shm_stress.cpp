// Back-to-back small collectives with changing roots, sizes and kinds, each
// compared with the MPI library's own collective on copies of the same
// input. Small messages on one node take the shared-memory algorithms,
// whose rooted forms return before the other ranks have read (the root of
// bcast and scatter, the non-roots of reduce and gather): a slot reused too
// early, or a stale slot read as new, shows up here as a wrong element.
// The tiny form keeps every call at 4, 8 or 12 bytes, so that each rooted
// kind meets every other in every order at the sizes where ranks run
// furthest apart (the writer of an 8-byte call returns soonest). The rounds
// form takes up to 160 KB per rank, so that calls run in several rounds,
// the led ones (every rank filling slots ahead of its reads:
// coll/shm_rounds.hpp) among them, and adds an alltoall. The mixed form is
// bcasts and scatters from one root for 40 calls, the first of 160 KB per
// rank (several rounds), the others of 4-12 bytes: a call of several rounds
// uses the first kPipeSlots slots, which the one-round calls after it share
// (ShmArea::claim_need), and its readers may still be reading them when the
// root returns.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "duct/duct.h"
#include "testutil.hpp"

using namespace duct::test;

namespace {

// Input of `rank` in iteration `it`: distinct per rank, iteration and index.
std::vector<std::int32_t> input(int rank, int it, int count) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = (it * 131 + rank * 17 + i * 3) % 1000 - 500;
  return v;
}

// One call of iteration `it`: through duct (`duct`) or the MPI library.
// Returns its result on this rank (empty where the call gives none).
enum class Sizes { small, tiny, rounds, mixed };
// The collective of iteration `it` (0 bcast ... 6 barrier or alltoall) and its root.
int kind_of(int it, Sizes sizes) { return sizes == Sizes::mixed ? (it % 2 == 0 ? 0 : 3) : it % 7; }
int root_of(int it, int n, Sizes sizes) { return sizes == Sizes::mixed ? (it / 40) % n : (it / 7) % n; }
std::vector<std::int32_t> call(bool duct, MPI_Comm comm, int me, int n, int it, Sizes sizes) {
  // small: 4 B to 1.2 KiB per rank; tiny: 4, 8 and 12 B; rounds: 4 B to
  // 160 KB; mixed: 160 KB every 11th call, else 4, 8 or 12 B
  const int count = sizes == Sizes::tiny     ? (it % 5 == 4 ? 3 : 1 + it % 2)
                    : sizes == Sizes::rounds ? 1 + (it * 7919) % 40000
                    : sizes == Sizes::mixed  ? (it % 40 == 0 ? 40000 : 1 + it % 3)
                                             : 1 + (it * 7) % 300;
  const int root = root_of(it, n, sizes);
  const std::size_t c = static_cast<std::size_t>(count), nc = c * static_cast<std::size_t>(n);
  std::vector<std::int32_t> in = input(me, it, count);
  std::vector<std::int32_t> all;
  std::vector<std::int32_t> out;
  int rc = MPI_SUCCESS;
  switch (kind_of(it, sizes)) {
    case 0:  // bcast
      out = me == root ? in : std::vector<std::int32_t>(c, -1);
      rc = duct ? DUCT_Bcast(out.data(), count, MPI_INT32_T, root, comm)
                : MPI_Bcast(out.data(), count, MPI_INT32_T, root, comm);
      break;
    case 1:  // reduce
      out.assign(c, -1);
      rc = duct ? DUCT_Reduce(in.data(), out.data(), count, MPI_INT32_T, MPI_SUM, root, comm)
                : MPI_Reduce(in.data(), out.data(), count, MPI_INT32_T, MPI_SUM, root, comm);
      break;
    case 2:  // gather
      out.assign(nc, -1);
      rc = duct ? DUCT_Gather(in.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, root, comm)
                : MPI_Gather(in.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, root, comm);
      break;
    case 3:  // scatter
      for (int r = 0; r < n; ++r) {
        std::vector<std::int32_t> x = input(r, it, count);
        all.insert(all.end(), x.begin(), x.end());
      }
      out.assign(c, -1);
      rc = duct ? DUCT_Scatter(all.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, root, comm)
                : MPI_Scatter(all.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, root, comm);
      break;
    case 4:  // allreduce
      out.assign(c, -1);
      rc = duct ? DUCT_Allreduce(in.data(), out.data(), count, MPI_INT32_T, MPI_MAX, comm)
                : MPI_Allreduce(in.data(), out.data(), count, MPI_INT32_T, MPI_MAX, comm);
      break;
    case 5:  // allgather
      out.assign(nc, -1);
      rc = duct ? DUCT_Allgather(in.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, comm)
                : MPI_Allgather(in.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, comm);
      break;
    default:
      // Every 7th a barrier, every 14th nothing (rounds: an alltoall): two
      // rooted calls then meet with no synchronizing call between them.
      if (it % 14 == 6) {
        rc = duct ? DUCT_Barrier(comm) : MPI_Barrier(comm);
      } else if (sizes == Sizes::rounds) {
        for (int r = 0; r < n; ++r) {
          std::vector<std::int32_t> x = input(me * n + r, it, count);
          all.insert(all.end(), x.begin(), x.end());
        }
        out.assign(nc, -1);
        rc = duct ? DUCT_Alltoall(all.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, comm)
                  : MPI_Alltoall(all.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, comm);
      }
      break;
  }
  REQUIRE(rc == MPI_SUCCESS);
  return out;
}

// Batches of duct calls back to back (no MPI call between them, so ranks
// drift apart as far as duct lets them), then the same calls through the
// MPI library, element by element.
void stress(MPI_Comm comm, int iterations, Sizes sizes) {
  int me = 0, n = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  Pending p("back-to-back shared-memory collectives");
  constexpr int kBatch = 64;
  long long wrong = 0;
  for (int it0 = 0; it0 < iterations && wrong == 0; it0 += kBatch) {
    std::vector<std::vector<std::int32_t>> got;
    for (int it = it0; it < it0 + kBatch; ++it) got.push_back(call(true, comm, me, n, it, sizes));
    for (int it = it0; it < it0 + kBatch; ++it) {
      std::vector<std::int32_t> want = call(false, comm, me, n, it, sizes);
      const std::vector<std::int32_t>& g = got[static_cast<std::size_t>(it - it0)];
      long long w = 0;
      for (std::size_t i = 0; i < want.size(); ++i) w += g[i] != want[i];
      if (w != 0)
        FAIL_CHECK("rank " << me << ": iteration " << it << " (kind " << kind_of(it, sizes) << ", root " << root_of(it, n, sizes) << "): "
                           << w << " wrong elements");
      wrong += w;
    }
  }
  long long total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
  CHECK(total == 0);
}

}  // namespace

TEST_CASE("back-to-back small collectives with changing roots match the MPI library", "[shm][stress]") {
  if (suite_kind() != MemKind::host) return;  // host inputs; tests/gpu covers device buffers
  SECTION("MPI_COMM_WORLD") { stress(MPI_COMM_WORLD, 3000, Sizes::small); }
  SECTION("MPI_COMM_WORLD, 4 to 12 bytes") { stress(MPI_COMM_WORLD, 3000, Sizes::tiny); }
  SECTION("MPI_COMM_WORLD, the reduces through the shm tree") {
    REQUIRE(DUCT_Tune("reduce:0-inf:shm_tree") == MPI_SUCCESS);
    stress(MPI_COMM_WORLD, 1500, Sizes::small);
    stress(MPI_COMM_WORLD, 1500, Sizes::tiny);
    REQUIRE(DUCT_Tune("") == MPI_SUCCESS);
  }
  SECTION("MPI_COMM_WORLD, the single-copy (cma) forms interleaved with shm") {
    // The cma forms share the slots and sequence numbers: a rank that
    // returns before its readers are done, or a slot claimed too early,
    // shows up as a wrong element of the next calls.
    REQUIRE(DUCT_Tune("bcast:0-400:shm,400-inf:cma;gather:0-1k:shm,1k-inf:cma;scatter:0-1k:shm,1k-inf:cma;"
                      "allgather:0-1k:shm,1k-inf:cma") == MPI_SUCCESS);
    stress(MPI_COMM_WORLD, 1500, Sizes::small);
    REQUIRE(DUCT_Tune("bcast:0-inf:cma;gather:0-inf:cma;scatter:0-inf:cma;allgather:0-inf:cma") == MPI_SUCCESS);
    stress(MPI_COMM_WORLD, 1500, Sizes::tiny);
    REQUIRE(DUCT_Tune("") == MPI_SUCCESS);
  }
  SECTION("MPI_COMM_WORLD, calls of several rounds through shm") {
    // Up to 160 KB per rank: most calls take several rounds, and those
    // whose every rank writes and reads (allreduce, allgather, alltoall,
    // the root of reduce and gather) fill slots ahead of their reads.
    REQUIRE(DUCT_Tune("allreduce:0-inf:shm;bcast:0-inf:shm;reduce:0-inf:shm;gather:0-inf:shm;scatter:0-inf:shm;"
                      "allgather:0-inf:shm;alltoall:0-inf:shm") == MPI_SUCCESS);
    stress(MPI_COMM_WORLD, 448, Sizes::rounds);
    stress(MPI_COMM_WORLD, 1536, Sizes::mixed);
    REQUIRE(DUCT_Tune("") == MPI_SUCCESS);
  }
  SECTION("a split communicator") {
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank() % 2, size() - rank(), &half);
    stress(half, 1500, Sizes::small);
    stress(half, 1500, Sizes::tiny);
    MPI_Comm_free(&half);
  }
}
