// The small-call path (lib/capi/small.hpp): blocking calls of predefined
// datatypes on host memory whose cached selection has a plain form (a
// shared-memory algorithm on one node, coll/shm_rounds.hpp; a message
// algorithm of allreduce, bcast, reduce, gather or scatter,
// coll/msg_rounds.hpp, across nodes) run that form instead of a Task. Each call here is made twice with
// the same arguments (the first may take the general path and cache the
// selection, the second takes the small-call path), and both results are
// compared with the MPI library's own collective on copies of the same
// input, at every count from 1 element to 64 KiB, every root, in place and
// not. This executable links duct's static layers, so it can read how many
// calls took the path (coll::small_calls). TEST_SMALL_EXPECT says what must
// have taken it, for the second call of every size up to 4 KiB:
//   1: every call (one node, no DUCT_CHECK: every collective's built-in
//      rules pick shm there);
//   2: every allreduce, bcast, reduce, gather and scatter (several nodes:
//      their built-in rules pick node-aware, binomial or linear forms
//      there), others unasserted;
//   0: none (DUCT_CHECK=1 turns the path off).
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "coll/collectives.hpp"
#include "duct/duct.h"
#include "testutil.hpp"

using namespace duct::test;

namespace {

using V = std::vector<std::int32_t>;

// 1 element to 64 KiB of int32; the path is asserted up to 4 KiB (every
// collective's built-in rules pick shm there on one node).
const int kCounts[] = {1, 3, 64, 1000, 1024, 4096, 16384};
constexpr std::size_t kAssertedBytes = 4096;

int expect_small() {
  const char* e = std::getenv("TEST_SMALL_EXPECT");
  return e ? std::atoi(e) : -1;  // -1: not asserted (see the top of the file)
}

V input(int rank, int count, int salt) {
  V v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = (salt * 131 + rank * 1009 + i * 7) % 20011 - 10000;
  return v;
}

// Run `call` (one duct collective filling `out`) twice, checking each result
// against `want` (this rank's expected result; empty: nothing to check) and
// that the second call took the small-call path when it must.
void twice(const std::string& what, std::size_t bytes, const V& want, const std::function<int(V& out)>& call) {
  for (int round = 0; round < 2; ++round) {
    V out;
    const std::uint64_t before = duct::coll::small_calls();
    int rc;
    {
      Pending p(what);
      rc = call(out);
    }
    const bool taken = duct::coll::small_calls() != before;
    INFO(what << " round " << round << " on rank " << rank());
    CHECK(rc == MPI_SUCCESS);
    if (!want.empty()) CHECK(out == want);
    const int e = expect_small();
    const bool across = what.rfind("allreduce", 0) == 0 || what.rfind("bcast", 0) == 0 ||
                        what.rfind("reduce ", 0) == 0 || what.rfind("gather", 0) == 0 || what.rfind("scatter", 0) == 0;
    if (round == 1 && (e == 1 || (e == 2 && across)) && bytes <= kAssertedBytes) CHECK(taken);
    if (e == 0) CHECK_FALSE(taken);
  }
}

std::string name(const char* coll, int count, int root, bool in_place) {
  return std::string(coll) + " count=" + std::to_string(count) + " root=" + std::to_string(root) +
         (in_place ? " in place" : "");
}

}  // namespace

TEST_CASE("small-call path: every collective against the MPI library", "[small]") {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  const int n = size(), me = rank();
  const std::size_t un = static_cast<std::size_t>(n);
  DUCT_Barrier(c);  // the context exists before the first measured call
  for (int count : kCounts) {
    const std::size_t uc = static_cast<std::size_t>(count), bytes = uc * 4;
    const V mine = input(me, count, 1);
    for (bool ip : {false, true}) {
      V want(uc);
      MPI_Allreduce(mine.data(), want.data(), count, MPI_INT32_T, MPI_SUM, c);
      twice(name("allreduce", count, 0, ip), bytes, want, [&](V& out) {
        out = ip ? mine : V(uc, -1);
        return DUCT_Allreduce(ip ? MPI_IN_PLACE : mine.data(), out.data(), count, MPI_INT32_T, MPI_SUM, c);
      });
      V rs_in = input(me, count * n, 2), rs_want(uc);
      MPI_Reduce_scatter_block(rs_in.data(), rs_want.data(), count, MPI_INT32_T, MPI_SUM, c);
      twice(name("reduce_scatter_block", count, 0, ip), bytes * un, rs_want, [&](V& out) {
        out = ip ? rs_in : V(uc, -1);
        int rc = DUCT_Reduce_scatter_block(ip ? MPI_IN_PLACE : rs_in.data(), out.data(), count, MPI_INT32_T, MPI_SUM, c);
        out.resize(uc);  // in place: the result is the first block
        return rc;
      });
      V ag_want(uc * un);
      MPI_Allgather(mine.data(), count, MPI_INT32_T, ag_want.data(), count, MPI_INT32_T, c);
      twice(name("allgather", count, 0, ip), bytes * un, ag_want, [&](V& out) {
        out.assign(uc * un, -1);
        if (ip) std::copy(mine.begin(), mine.end(), out.begin() + static_cast<std::ptrdiff_t>(uc * static_cast<std::size_t>(me)));
        return DUCT_Allgather(ip ? MPI_IN_PLACE : mine.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, c);
      });
      const V a2a_in = input(me, count * n, 3);
      V a2a_want(uc * un);
      MPI_Alltoall(a2a_in.data(), count, MPI_INT32_T, a2a_want.data(), count, MPI_INT32_T, c);
      twice(name("alltoall", count, 0, ip), bytes * un, a2a_want, [&](V& out) {
        out = ip ? a2a_in : V(uc * un, -1);
        return DUCT_Alltoall(ip ? MPI_IN_PLACE : a2a_in.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, c);
      });
    }
    for (int root = 0; root < n; ++root) {
      const bool is_root = me == root;
      V want = input(root, count, 4);
      twice(name("bcast", count, root, false), bytes, want, [&](V& out) {
        out = is_root ? want : V(uc, -1);
        return DUCT_Bcast(out.data(), count, MPI_INT32_T, root, c);
      });
      for (bool ip : {false, true}) {
        const bool root_ip = ip && is_root;  // MPI_IN_PLACE only at the root
        V r_want(is_root ? uc : 0);
        MPI_Reduce(mine.data(), is_root ? r_want.data() : nullptr, count, MPI_INT32_T, MPI_SUM, root, c);
        twice(name("reduce", count, root, ip), bytes, r_want, [&](V& out) {
          out = root_ip ? mine : V(is_root ? uc : 0);
          return DUCT_Reduce(root_ip ? MPI_IN_PLACE : mine.data(), is_root ? out.data() : nullptr, count, MPI_INT32_T,
                             MPI_SUM, root, c);
        });
        V g_want(is_root ? uc * un : 0);
        MPI_Gather(mine.data(), count, MPI_INT32_T, g_want.data(), count, MPI_INT32_T, root, c);
        twice(name("gather", count, root, ip), bytes * un, g_want, [&](V& out) {
          out.assign(is_root ? uc * un : 0, -1);
          if (root_ip) std::copy(mine.begin(), mine.end(), out.begin() + static_cast<std::ptrdiff_t>(uc * static_cast<std::size_t>(root)));
          return DUCT_Gather(root_ip ? MPI_IN_PLACE : mine.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T,
                             root, c);
        });
        const V s_in = is_root ? input(root, count * n, 5) : V();
        V s_want(uc);
        MPI_Scatter(s_in.data(), count, MPI_INT32_T, s_want.data(), count, MPI_INT32_T, root, c);
        twice(name("scatter", count, root, ip), bytes * un, s_want, [&](V& out) {
          out.assign(uc, -1);
          if (root_ip) {  // the root's block stays in its send buffer
            V keep = s_in;
            int rc = DUCT_Scatter(keep.data(), count, MPI_INT32_T, MPI_IN_PLACE, count, MPI_INT32_T, root, c);
            out.assign(keep.begin() + static_cast<std::ptrdiff_t>(uc * static_cast<std::size_t>(root)),
                       keep.begin() + static_cast<std::ptrdiff_t>(uc * static_cast<std::size_t>(root + 1)));
            return rc;
          }
          return DUCT_Scatter(s_in.data(), count, MPI_INT32_T, out.data(), count, MPI_INT32_T, root, c);
        });
      }
    }
  }
  twice("barrier", 0, V(), [&](V&) { return DUCT_Barrier(c); });
  MPI_Comm_free(&c);
}

TEST_CASE("small-call path: the same bits as the general path", "[small]") {
  // Float sums depend on the order of the additions: the small-call path
  // (blocking) and the general path (the nonblocking form, same algorithm
  // as a Task) must reduce in the same order (allreduce, and reduce).
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  for (int count : {1, 5, 300, 4000}) {
    std::vector<float> in(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) in[static_cast<std::size_t>(i)] = std::ldexp(1.0f + 0.37f * static_cast<float>(rank() + i), (rank() * 7 + i) % 40 - 20);
    std::vector<float> blocking(in.size()), general(in.size());
    for (int round = 0; round < 2; ++round) CHECK(DUCT_Allreduce(in.data(), blocking.data(), count, MPI_FLOAT, MPI_SUM, c) == MPI_SUCCESS);
    MPI_Request r;
    CHECK(DUCT_Iallreduce(in.data(), general.data(), count, MPI_FLOAT, MPI_SUM, c, &r) == MPI_SUCCESS);
    CHECK(DUCT_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    INFO("count " << count);
    CHECK(std::memcmp(blocking.data(), general.data(), in.size() * sizeof(float)) == 0);
    // The same for reduce, at the last rank (across nodes: a message form),
    // with the built-in rules and through the shm tree (one node).
    const int root = size() - 1;
    for (const char* rule : {"", "reduce:0-inf:shm_tree"}) {
      REQUIRE(DUCT_Tune(rule) == MPI_SUCCESS);
      INFO("rules '" << rule << "'");
      std::vector<float> rb(in.size()), rg(in.size());
      for (int round = 0; round < 2; ++round)
        CHECK(DUCT_Reduce(in.data(), rb.data(), count, MPI_FLOAT, MPI_SUM, root, c) == MPI_SUCCESS);
      CHECK(DUCT_Ireduce(in.data(), rg.data(), count, MPI_FLOAT, MPI_SUM, root, c, &r) == MPI_SUCCESS);
      CHECK(DUCT_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
      if (rank() == root) CHECK(std::memcmp(rb.data(), rg.data(), in.size() * sizeof(float)) == 0);
    }
    REQUIRE(DUCT_Tune("") == MPI_SUCCESS);
  }
  MPI_Comm_free(&c);
}

TEST_CASE("small-call path: blocking calls wait for the nonblocking ones before them", "[small]") {
  // MPI orders a communicator's blocking and nonblocking collectives
  // together: a small blocking call made while a nonblocking one is pending
  // goes through the general path, which finishes the pending one first.
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  const int n = size();
  const int big = 1 << 16;
  std::vector<float> a(big, 1.0f), b(big, 0.0f);
  for (int it = 0; it < 20; ++it) {
    std::int32_t x = rank() + it, sum = 0, bc = rank() == it % n ? 1000 + it : -1;
    MPI_Request r;
    // The other ranks start late, so rank 0's allreduce is still pending
    // when it makes its blocking calls.
    if (rank() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    CHECK(DUCT_Iallreduce(a.data(), b.data(), big, MPI_FLOAT, MPI_SUM, c, &r) == MPI_SUCCESS);
    const std::uint64_t before = duct::coll::small_calls();
    CHECK(DUCT_Bcast(&bc, 1, MPI_INT32_T, it % n, c) == MPI_SUCCESS);
    if (rank() == 0 && expect_small() != -1) CHECK(duct::coll::small_calls() == before);  // a call was pending
    CHECK(DUCT_Allreduce(&x, &sum, 1, MPI_INT32_T, MPI_SUM, c) == MPI_SUCCESS);
    CHECK(DUCT_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(bc == 1000 + it);
    CHECK(sum == n * (n - 1) / 2 + n * it);
    CHECK(b[0] == static_cast<float>(n));
    CHECK(b[big - 1] == static_cast<float>(n));
    // A nonblocking call started after small blocking ones sees their order too.
    std::int32_t y = 0;
    if (rank() == 0) y = 7 + it;
    CHECK(DUCT_Bcast(&y, 1, MPI_INT32_T, 0, c) == MPI_SUCCESS);
    std::int32_t z = 0;
    CHECK(DUCT_Iallreduce(&y, &z, 1, MPI_INT32_T, MPI_SUM, c, &r) == MPI_SUCCESS);
    CHECK(DUCT_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(z == n * (7 + it));
  }
  MPI_Comm_free(&c);
}

TEST_CASE("small-call path: bad arguments still get the general path's errors", "[small]") {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  std::int32_t x = 1, y = 0;
  // Prime the cache for 4-byte calls, then pass what the small-call path
  // must not take: every rank makes the same bad call, so none waits.
  CHECK(DUCT_Allreduce(&x, &y, 1, MPI_INT32_T, MPI_SUM, c) == MPI_SUCCESS);
  CHECK(DUCT_Allreduce(&x, &y, 1, MPI_INT32_T, MPI_SUM, c) == MPI_SUCCESS);
  int cls = 0;
  MPI_Error_class(DUCT_Allreduce(&x, nullptr, 1, MPI_INT32_T, MPI_SUM, c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_BUFFER));
  MPI_Error_class(DUCT_Allreduce(&x, &x, 1, MPI_INT32_T, MPI_SUM, c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_OVERLAP));
  MPI_Error_class(DUCT_Bcast(&x, 1, MPI_INT32_T, size(), c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_ROOT));
  MPI_Error_class(DUCT_Allreduce(&x, &y, 1, MPI_INT32_T, MPI_OP_NULL, c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_OP));
  // The communicator still works, through either path.
  for (int round = 0; round < 2; ++round) {
    y = 0;
    CHECK(DUCT_Allreduce(&x, &y, 1, MPI_INT32_T, MPI_SUM, c) == MPI_SUCCESS);
    CHECK(y == size());
  }
  MPI_Comm_free(&c);
}

TEST_CASE("small-call path: calls that move nothing", "[small]") {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  const int n = size(), me = rank();
  std::int32_t x = 1, y = 0;
  CHECK(DUCT_Allreduce(&x, &y, 1, MPI_INT32_T, MPI_SUM, c) == MPI_SUCCESS);  // the context is known
  // Count 0 at every rank: success, and no buffer is touched (sentinels),
  // in place or not, at every root; NULL buffers are fine with count 0.
  V s(static_cast<std::size_t>(n), 7), r(static_cast<std::size_t>(n), 9);
  const V s0 = s, r0 = r;
  for (int root = 0; root < n; ++root) {
    const bool at_root = me == root;
    INFO("root " << root << " rank " << me);
    CHECK(DUCT_Allreduce(s.data(), r.data(), 0, MPI_INT32_T, MPI_SUM, c) == MPI_SUCCESS);
    CHECK(DUCT_Allreduce(MPI_IN_PLACE, r.data(), 0, MPI_INT32_T, MPI_MAX, c) == MPI_SUCCESS);
    CHECK(DUCT_Allreduce(nullptr, nullptr, 0, MPI_FLOAT, MPI_SUM, c) == MPI_SUCCESS);
    CHECK(DUCT_Reduce(s.data(), r.data(), 0, MPI_INT32_T, MPI_SUM, root, c) == MPI_SUCCESS);
    CHECK(DUCT_Reduce(at_root ? MPI_IN_PLACE : s.data(), r.data(), 0, MPI_INT32_T, MPI_SUM, root, c) == MPI_SUCCESS);
    CHECK(DUCT_Reduce_scatter_block(s.data(), r.data(), 0, MPI_INT32_T, MPI_SUM, c) == MPI_SUCCESS);
    CHECK(DUCT_Bcast(r.data(), 0, MPI_INT32_T, root, c) == MPI_SUCCESS);
    CHECK(DUCT_Allgather(s.data(), 0, MPI_INT32_T, r.data(), 0, MPI_INT32_T, c) == MPI_SUCCESS);
    CHECK(DUCT_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r.data(), 0, MPI_INT32_T, c) == MPI_SUCCESS);
    CHECK(DUCT_Alltoall(s.data(), 0, MPI_INT32_T, r.data(), 0, MPI_INT32_T, c) == MPI_SUCCESS);
    CHECK(DUCT_Gather(s.data(), 0, MPI_INT32_T, r.data(), 0, MPI_INT32_T, root, c) == MPI_SUCCESS);
    CHECK(DUCT_Gather(at_root ? MPI_IN_PLACE : s.data(), 0, MPI_INT32_T, r.data(), 0, MPI_INT32_T, root, c) ==
          MPI_SUCCESS);
    CHECK(DUCT_Scatter(s.data(), 0, MPI_INT32_T, r.data(), 0, MPI_INT32_T, root, c) == MPI_SUCCESS);
    CHECK(DUCT_Scatter(s.data(), 0, MPI_INT32_T, at_root ? MPI_IN_PLACE : r.data(), 0, MPI_INT32_T, root, c) ==
          MPI_SUCCESS);
  }
  CHECK(s == s0);
  CHECK(r == r0);
  // What the general path refuses at count 0, refused the same way (every
  // rank makes the same bad call, so none waits).
  int cls = 0;
  MPI_Error_class(DUCT_Allreduce(&x, MPI_IN_PLACE, 0, MPI_INT32_T, MPI_SUM, c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_IN_PLACE));
  MPI_Error_class(DUCT_Allreduce(&x, &y, 0, MPI_INT32_T, MPI_OP_NULL, c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_OP));
  MPI_Error_class(DUCT_Allreduce(&x, &y, 0, MPI_DATATYPE_NULL, MPI_SUM, c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_TYPE));
  MPI_Error_class(DUCT_Bcast(&x, 0, MPI_INT32_T, n, c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_ROOT));
  MPI_Error_class(DUCT_Reduce(&x, &y, 0, MPI_INT32_T, MPI_SUM, -1, c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_ROOT));
  // sendbuf = MPI_IN_PLACE off the root, recvbuf = MPI_IN_PLACE at it
  MPI_Error_class(DUCT_Gather(MPI_IN_PLACE, 0, MPI_INT32_T, me == n - 1 ? MPI_IN_PLACE : &y, 0, MPI_INT32_T, n - 1, c),
                  &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_IN_PLACE));
  MPI_Error_class(DUCT_Scatter(me == 0 ? MPI_IN_PLACE : &x, 0, MPI_INT32_T, MPI_IN_PLACE, 0, MPI_INT32_T, 0, c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_IN_PLACE));
  MPI_Error_class(DUCT_Allgather(&x, 0, MPI_INT32_T, &y, 0, MPI_DATATYPE_NULL, c), &cls);
  CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_TYPE));
  // The communicator still works.
  y = 0;
  CHECK(DUCT_Allreduce(&x, &y, 1, MPI_INT32_T, MPI_SUM, c) == MPI_SUCCESS);
  CHECK(y == n);
  MPI_Comm_free(&c);
}
