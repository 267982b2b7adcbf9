// Bad input to every collective, under MPI_ERRORS_RETURN: each case returns
// the specific duct error class, MPI_Error_string names the call, the rank,
// the argument and the value, the refused call writes nothing, and the
// communicator works afterwards.
//
// Every rank makes the same bad call, so every rank refuses it (a case only
// some ranks would refuse, such as a root-only argument, runs on one rank).
#include <catch2/catch.hpp>
#include <sys/mman.h>

#include <climits>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "duct/duct.h"
#include "errcheck.hpp"
#include "testutil.hpp"

using namespace duct::test;

namespace {

constexpr MPI_Count kHuge = MPI_Count{1} << 61;  // x 8 bytes: 2^64, beyond any address space

struct Case {
  const char* name;
  DUCT_Errclass cls;
  std::vector<std::string> words;
  const char* call;
  std::function<int(MPI_Comm)> fn;
  bool single_rank_only = false;  // refused by the root only: run where every rank is the root
};

}  // namespace

TEST_CASE("every collective refuses bad arguments with a specific class", "[errors][validation]") {
  ReturnComm rc;
  MPI_Comm c = rc.comm;
  const int n = size(), me = rank();
  std::vector<float> a(64, 1.0f), b(64, 0.0f);
  float* A = a.data();
  float* B = b.data();
  std::vector<int> cnt(static_cast<std::size_t>(n), 1), dsp(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) dsp[static_cast<std::size_t>(i)] = i;
  std::vector<int> negc = cnt;
  negc[0] = -3;
  std::vector<MPI_Count> hugec(static_cast<std::size_t>(n), 1);
  std::vector<MPI_Aint> hugedsp(static_cast<std::size_t>(n), 0), okdsp(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) okdsp[static_cast<std::size_t>(i)] = i;
  hugedsp[0] = static_cast<MPI_Aint>(kHuge);  // x extent 4 overflows
  std::vector<MPI_Count> sumc(static_cast<std::size_t>(n), LLONG_MAX / 2 + 1);  // sum overflows (n >= 2)

  MPI_Datatype uncommitted;
  MPI_Type_contiguous(2, MPI_FLOAT, &uncommitted);  // never committed

  const std::vector<Case> cases = {
      // ---- DUCT_Allreduce
      {"allreduce NULL sendbuf", DUCT_ERRCLASS_BUFFER, {"sendbuf = NULL", "count = 8"}, "DUCT_Allreduce",
       [&](MPI_Comm k) { return DUCT_Allreduce(nullptr, B, 8, MPI_FLOAT, MPI_SUM, k); }},
      {"allreduce NULL recvbuf", DUCT_ERRCLASS_BUFFER, {"recvbuf = NULL"}, "DUCT_Allreduce",
       [&](MPI_Comm k) { return DUCT_Allreduce(A, nullptr, 8, MPI_FLOAT, MPI_SUM, k); }},
      {"allreduce negative count", DUCT_ERRCLASS_COUNT, {"count = -1 is negative"}, "DUCT_Allreduce",
       [&](MPI_Comm k) { return DUCT_Allreduce(A, B, -1, MPI_FLOAT, MPI_SUM, k); }},
      {"allreduce_c overflowing count", DUCT_ERRCLASS_OVERFLOW, {"count = 2305843009213693952", "overflows"},
       "DUCT_Allreduce_c", [&](MPI_Comm k) { return DUCT_Allreduce_c(A, B, kHuge, MPI_DOUBLE, MPI_SUM, k); }},
      {"allreduce MPI_DATATYPE_NULL", DUCT_ERRCLASS_TYPE, {"datatype = MPI_DATATYPE_NULL"}, "DUCT_Allreduce",
       [&](MPI_Comm k) { return DUCT_Allreduce(A, B, 8, MPI_DATATYPE_NULL, MPI_SUM, k); }},
      {"allreduce uncommitted type", DUCT_ERRCLASS_UNCOMMITTED, {"datatype = ", "not a committed datatype"},
       "DUCT_Allreduce", [&](MPI_Comm k) { return DUCT_Allreduce(A, B, 4, uncommitted, MPI_SUM, k); }},
      {"allreduce MPI_OP_NULL", DUCT_ERRCLASS_OP, {"op = MPI_OP_NULL"}, "DUCT_Allreduce",
       [&](MPI_Comm k) { return DUCT_Allreduce(A, B, 8, MPI_FLOAT, MPI_OP_NULL, k); }},
      {"allreduce MPI_BAND on MPI_FLOAT", DUCT_ERRCLASS_OP_TYPE, {"op = MPI_BAND", "MPI_FLOAT"}, "DUCT_Allreduce",
       [&](MPI_Comm k) { return DUCT_Allreduce(A, B, 8, MPI_FLOAT, MPI_BAND, k); }},
      {"allreduce MPI_SUM on MPI_C_BOOL", DUCT_ERRCLASS_OP_TYPE, {"MPI_SUM", "MPI_C_BOOL"}, "DUCT_Allreduce",
       [&](MPI_Comm k) { return DUCT_Allreduce(A, B, 8, MPI_C_BOOL, MPI_SUM, k); }},
      {"allreduce recvbuf MPI_IN_PLACE", DUCT_ERRCLASS_IN_PLACE, {"recvbuf = MPI_IN_PLACE"}, "DUCT_Allreduce",
       [&](MPI_Comm k) { return DUCT_Allreduce(A, MPI_IN_PLACE, 8, MPI_FLOAT, MPI_SUM, k); }},
      {"allreduce overlapping buffers", DUCT_ERRCLASS_OVERLAP, {"overlap", "MPI_IN_PLACE"}, "DUCT_Allreduce",
       [&](MPI_Comm k) { return DUCT_Allreduce(A, A + 4, 8, MPI_FLOAT, MPI_SUM, k); }},

      // ---- DUCT_Reduce
      {"reduce root out of range", DUCT_ERRCLASS_ROOT, {"root = " + std::to_string(n), "not a rank"}, "DUCT_Reduce",
       [&](MPI_Comm k) { return DUCT_Reduce(A, B, 8, MPI_FLOAT, MPI_SUM, n, k); }},
      {"reduce negative root", DUCT_ERRCLASS_ROOT, {"root = -1"}, "DUCT_Reduce",
       [&](MPI_Comm k) { return DUCT_Reduce(A, B, 8, MPI_FLOAT, MPI_SUM, -1, k); }},
      {"reduce MPI_IN_PLACE for both buffers", DUCT_ERRCLASS_IN_PLACE, {"MPI_IN_PLACE"}, "DUCT_Reduce",
       [&](MPI_Comm k) { return DUCT_Reduce(MPI_IN_PLACE, MPI_IN_PLACE, 8, MPI_FLOAT, MPI_SUM, 0, k); }},
      {"reduce NULL sendbuf", DUCT_ERRCLASS_BUFFER, {"sendbuf = NULL"}, "DUCT_Reduce",
       [&](MPI_Comm k) { return DUCT_Reduce(nullptr, B, 8, MPI_FLOAT, MPI_SUM, 0, k); }},
      {"reduce MPI_BXOR on DUCT_BFLOAT16", DUCT_ERRCLASS_OP_TYPE, {"MPI_BXOR"}, "DUCT_Reduce",
       [&](MPI_Comm k) { return DUCT_Reduce(A, B, 8, DUCT_BFLOAT16, MPI_BXOR, 0, k); }},
      {"reduce_c overflowing count", DUCT_ERRCLASS_OVERFLOW, {"overflows"}, "DUCT_Reduce_c",
       [&](MPI_Comm k) { return DUCT_Reduce_c(A, B, kHuge, MPI_INT64_T, MPI_SUM, 0, k); }},
      {"reduce NULL recvbuf at the root", DUCT_ERRCLASS_BUFFER, {"recvbuf = NULL"}, "DUCT_Reduce",
       [&](MPI_Comm k) { return DUCT_Reduce(A, nullptr, 8, MPI_FLOAT, MPI_SUM, 0, k); }, true},

      // ---- DUCT_Reduce_scatter_block / DUCT_Reduce_scatter
      {"reduce_scatter_block negative count", DUCT_ERRCLASS_COUNT, {"recvcount = -2"}, "DUCT_Reduce_scatter_block",
       [&](MPI_Comm k) { return DUCT_Reduce_scatter_block(A, B, -2, MPI_FLOAT, MPI_SUM, k); }},
      {"reduce_scatter_block_c overflowing total", DUCT_ERRCLASS_OVERFLOW, {"overflow"},
       "DUCT_Reduce_scatter_block_c",
       [&](MPI_Comm k) { return DUCT_Reduce_scatter_block_c(A, B, LLONG_MAX / 2 + 1, MPI_FLOAT, MPI_SUM, k); }},
      {"reduce_scatter negative recvcounts", DUCT_ERRCLASS_COUNT, {"recvcounts[0] = -3 is negative"},
       "DUCT_Reduce_scatter", [&](MPI_Comm k) { return DUCT_Reduce_scatter(A, B, negc.data(), MPI_FLOAT, MPI_SUM, k); }},
      {"reduce_scatter MPI_LAND on MPI_DOUBLE", DUCT_ERRCLASS_OP_TYPE, {"MPI_LAND", "MPI_DOUBLE"},
       "DUCT_Reduce_scatter", [&](MPI_Comm k) { return DUCT_Reduce_scatter(A, B, cnt.data(), MPI_DOUBLE, MPI_LAND, k); }},
      {"reduce_scatter recvbuf MPI_IN_PLACE", DUCT_ERRCLASS_IN_PLACE, {"recvbuf = MPI_IN_PLACE"},
       "DUCT_Reduce_scatter_block",
       [&](MPI_Comm k) { return DUCT_Reduce_scatter_block(A, MPI_IN_PLACE, 1, MPI_FLOAT, MPI_SUM, k); }},

      // ---- DUCT_Bcast
      {"bcast NULL buffer", DUCT_ERRCLASS_BUFFER, {"buffer = NULL"}, "DUCT_Bcast",
       [&](MPI_Comm k) { return DUCT_Bcast(nullptr, 8, MPI_FLOAT, 0, k); }},
      {"bcast MPI_IN_PLACE buffer", DUCT_ERRCLASS_IN_PLACE, {"buffer = MPI_IN_PLACE"}, "DUCT_Bcast",
       [&](MPI_Comm k) { return DUCT_Bcast(MPI_IN_PLACE, 8, MPI_FLOAT, 0, k); }},
      {"bcast negative count", DUCT_ERRCLASS_COUNT, {"count = -7"}, "DUCT_Bcast",
       [&](MPI_Comm k) { return DUCT_Bcast(A, -7, MPI_FLOAT, 0, k); }},
      {"bcast root out of range", DUCT_ERRCLASS_ROOT, {"root = " + std::to_string(n + 3)}, "DUCT_Bcast",
       [&](MPI_Comm k) { return DUCT_Bcast(A, 8, MPI_FLOAT, n + 3, k); }},
      {"bcast uncommitted type", DUCT_ERRCLASS_UNCOMMITTED, {"not a committed datatype"}, "DUCT_Bcast",
       [&](MPI_Comm k) { return DUCT_Bcast(A, 2, uncommitted, 0, k); }},
      {"bcast MPI_DATATYPE_NULL", DUCT_ERRCLASS_TYPE, {"datatype = MPI_DATATYPE_NULL"}, "DUCT_Bcast",
       [&](MPI_Comm k) { return DUCT_Bcast(A, 2, MPI_DATATYPE_NULL, 0, k); }},
      {"bcast_c overflowing count", DUCT_ERRCLASS_OVERFLOW, {"count = 2305843009213693952"}, "DUCT_Bcast_c",
       [&](MPI_Comm k) { return DUCT_Bcast_c(A, kHuge, MPI_DOUBLE, 0, k); }},

      // ---- DUCT_Allgather / DUCT_Alltoall
      {"allgather recvbuf MPI_IN_PLACE", DUCT_ERRCLASS_IN_PLACE, {"recvbuf = MPI_IN_PLACE"}, "DUCT_Allgather",
       [&](MPI_Comm k) { return DUCT_Allgather(A, 1, MPI_FLOAT, MPI_IN_PLACE, 1, MPI_FLOAT, k); }},
      {"allgather send and receive sizes differ", DUCT_ERRCLASS_COUNT, {"8 bytes", "4 bytes"}, "DUCT_Allgather",
       [&](MPI_Comm k) { return DUCT_Allgather(A, 2, MPI_FLOAT, B, 1, MPI_FLOAT, k); }},
      {"allgather NULL recvbuf", DUCT_ERRCLASS_BUFFER, {"recvbuf = NULL"}, "DUCT_Allgather",
       [&](MPI_Comm k) { return DUCT_Allgather(A, 1, MPI_FLOAT, nullptr, 1, MPI_FLOAT, k); }},
      {"allgather MPI_DATATYPE_NULL sendtype", DUCT_ERRCLASS_TYPE, {"sendtype = MPI_DATATYPE_NULL"},
       "DUCT_Allgather", [&](MPI_Comm k) { return DUCT_Allgather(A, 1, MPI_DATATYPE_NULL, B, 1, MPI_FLOAT, k); }},
      {"allgather overlapping buffers", DUCT_ERRCLASS_OVERLAP, {"overlap"}, "DUCT_Allgather",
       [&](MPI_Comm k) { return DUCT_Allgather(B, 1, MPI_FLOAT, B, 1, MPI_FLOAT, k); }},
      {"allgather_c overflowing total", DUCT_ERRCLASS_OVERFLOW, {"recvcount", "overflows"}, "DUCT_Allgather_c",
       [&](MPI_Comm k) { return DUCT_Allgather_c(A, kHuge, MPI_DOUBLE, B, kHuge, MPI_DOUBLE, k); }},
      {"alltoall negative recvcount", DUCT_ERRCLASS_COUNT, {"recvcount = -1"}, "DUCT_Alltoall",
       [&](MPI_Comm k) { return DUCT_Alltoall(A, 1, MPI_FLOAT, B, -1, MPI_FLOAT, k); }},
      {"alltoall_c overflowing total", DUCT_ERRCLASS_OVERFLOW, {"overflow"}, "DUCT_Alltoall_c",
       [&](MPI_Comm k) { return DUCT_Alltoall_c(A, LLONG_MAX / 2 + 1, MPI_INT, B, LLONG_MAX / 2 + 1, MPI_INT, k); }},

      // ---- v-collectives
      {"allgatherv NULL recvcounts", DUCT_ERRCLASS_ARG, {"recvcounts = NULL"}, "DUCT_Allgatherv",
       [&](MPI_Comm k) { return DUCT_Allgatherv(A, 1, MPI_FLOAT, B, nullptr, dsp.data(), MPI_FLOAT, k); }},
      {"allgatherv negative recvcounts", DUCT_ERRCLASS_COUNT, {"recvcounts[0] = -3 is negative"}, "DUCT_Allgatherv",
       [&](MPI_Comm k) { return DUCT_Allgatherv(A, 1, MPI_FLOAT, B, negc.data(), dsp.data(), MPI_FLOAT, k); }},
      {"allgatherv_c overflowing displacement", DUCT_ERRCLASS_OVERFLOW, {"displs[0] = 2305843009213693952"},
       "DUCT_Allgatherv_c",
       [&](MPI_Comm k) { return DUCT_Allgatherv_c(A, 1, MPI_FLOAT, B, hugec.data(), hugedsp.data(), MPI_FLOAT, k); }},
      {"alltoallv NULL sdispls", DUCT_ERRCLASS_ARG, {"sdispls = NULL"}, "DUCT_Alltoallv",
       [&](MPI_Comm k) {
         return DUCT_Alltoallv(A, cnt.data(), nullptr, MPI_FLOAT, B, cnt.data(), dsp.data(), MPI_FLOAT, k);
       }},
      {"alltoallv negative sendcounts", DUCT_ERRCLASS_COUNT, {"sendcounts[0] = -3"}, "DUCT_Alltoallv",
       [&](MPI_Comm k) {
         return DUCT_Alltoallv(A, negc.data(), dsp.data(), MPI_FLOAT, B, cnt.data(), dsp.data(), MPI_FLOAT, k);
       }},
      {"alltoallv_c overflowing rdispls", DUCT_ERRCLASS_OVERFLOW, {"rdispls[0]"}, "DUCT_Alltoallv_c",
       [&](MPI_Comm k) {
         return DUCT_Alltoallv_c(A, hugec.data(), okdsp.data(), MPI_FLOAT, B, hugec.data(), hugedsp.data(), MPI_FLOAT,
                                 k);
       }},
      {"reduce_scatter_c recvcounts summing past MPI_Count", DUCT_ERRCLASS_OVERFLOW, {"overflows"},
       "DUCT_Reduce_scatter_c",
       [&](MPI_Comm k) { return DUCT_Reduce_scatter_c(A, B, sumc.data(), MPI_FLOAT, MPI_SUM, k); }},

      // ---- DUCT_Gather(v) / DUCT_Scatter(v)
      {"gather root out of range", DUCT_ERRCLASS_ROOT, {"root = -2"}, "DUCT_Gather",
       [&](MPI_Comm k) { return DUCT_Gather(A, 1, MPI_FLOAT, B, 1, MPI_FLOAT, -2, k); }},
      {"gather MPI_IN_PLACE everywhere", DUCT_ERRCLASS_IN_PLACE, {"MPI_IN_PLACE"}, "DUCT_Gather",
       [&](MPI_Comm k) { return DUCT_Gather(MPI_IN_PLACE, 1, MPI_FLOAT, MPI_IN_PLACE, 1, MPI_FLOAT, 0, k); }},
      {"gather negative sendcount", DUCT_ERRCLASS_COUNT, {"sendcount = -1"}, "DUCT_Gather",
       [&](MPI_Comm k) { return DUCT_Gather(A, -1, MPI_FLOAT, B, 1, MPI_FLOAT, 0, k); }},
      {"gatherv root out of range", DUCT_ERRCLASS_ROOT, {"root = " + std::to_string(n)}, "DUCT_Gatherv",
       [&](MPI_Comm k) { return DUCT_Gatherv(A, 1, MPI_FLOAT, B, cnt.data(), dsp.data(), MPI_FLOAT, n, k); }},
      {"gatherv_c overflowing displacement at the root", DUCT_ERRCLASS_OVERFLOW, {"displs[0]"}, "DUCT_Gatherv_c",
       [&](MPI_Comm k) {
         return DUCT_Gatherv_c(A, 1, MPI_FLOAT, B, hugec.data(), hugedsp.data(), MPI_FLOAT, 0, k);
       }, true},
      {"scatter MPI_IN_PLACE everywhere", DUCT_ERRCLASS_IN_PLACE, {"MPI_IN_PLACE"}, "DUCT_Scatter",
       [&](MPI_Comm k) { return DUCT_Scatter(MPI_IN_PLACE, 1, MPI_FLOAT, MPI_IN_PLACE, 1, MPI_FLOAT, 0, k); }},
      {"scatter root out of range", DUCT_ERRCLASS_ROOT, {"root = " + std::to_string(n)}, "DUCT_Scatter",
       [&](MPI_Comm k) { return DUCT_Scatter(A, 1, MPI_FLOAT, B, 1, MPI_FLOAT, n, k); }},
      {"scatter uncommitted recvtype", DUCT_ERRCLASS_UNCOMMITTED, {"recvtype = "}, "DUCT_Scatter",
       [&](MPI_Comm k) { return DUCT_Scatter(A, 2, MPI_FLOAT, B, 1, uncommitted, 0, k); }},
      {"scatterv NULL sendcounts at the root", DUCT_ERRCLASS_ARG, {"sendcounts = NULL"}, "DUCT_Scatterv",
       [&](MPI_Comm k) { return DUCT_Scatterv(A, nullptr, dsp.data(), MPI_FLOAT, B, 1, MPI_FLOAT, 0, k); }, true},
  };

  for (const Case& t : cases) {
    if (t.single_rank_only && n > 1) continue;
    SECTION(t.name) {
      std::fill(b.begin(), b.end(), -1.0f);
      Result r;
      {
        Pending p(std::string(t.name) + " (must return at once)");
        r = classify(t.fn(c));
      }
      expect(r, t.cls, t.words, t.call);
      CHECK(b == std::vector<float>(64, -1.0f));  // the refused call wrote nothing
      CHECK(a == std::vector<float>(64, 1.0f));
    }
  }
  MPI_Type_free(&uncommitted);

  // The communicator still works after all of that.
  {
    Pending p("DUCT_Allreduce after the refused calls");
    CHECK(DUCT_Allreduce(A, B, 16, MPI_FLOAT, MPI_SUM, c) == MPI_SUCCESS);
  }
  CHECK(b[15] == static_cast<float>(n));
  (void)me;
}

// MPI forbids a send argument to share memory with the receive argument
// unless through MPI_IN_PLACE (MPI-4.1 section 2.3); MPICH's test suite
// (errors/coll/noalias*) calls the rooted collectives so at the root alone
// and expects an error rather than a collective the other ranks never join.
TEST_CASE("send and receive arguments that share memory are refused; blocks between the other's are not",
          "[errors][validation]") {
  const int n = size(), me = rank();
  const auto un = static_cast<std::size_t>(n);
  SECTION("rooted calls, refused at the root without a message (a communicator of one rank)") {
    ReturnComm self(MPI_COMM_SELF);
    std::vector<float> x(8, 1.0f);
    std::vector<int> one{2}, zero{0};
    struct Bad {
      const char* call;
      std::function<int()> fn;
    };
    const std::vector<Bad> bad = {
        {"DUCT_Gather", [&] { return DUCT_Gather(x.data(), 2, MPI_FLOAT, x.data(), 2, MPI_FLOAT, 0, self.comm); }},
        {"DUCT_Gather", [&] { return DUCT_Gather(x.data() + 1, 2, MPI_FLOAT, x.data(), 2, MPI_FLOAT, 0, self.comm); }},
        {"DUCT_Gatherv",
         [&] { return DUCT_Gatherv(x.data(), 2, MPI_FLOAT, x.data(), one.data(), zero.data(), MPI_FLOAT, 0, self.comm); }},
        {"DUCT_Scatter", [&] { return DUCT_Scatter(x.data(), 2, MPI_FLOAT, x.data(), 2, MPI_FLOAT, 0, self.comm); }},
        {"DUCT_Scatterv",
         [&] { return DUCT_Scatterv(x.data(), one.data(), zero.data(), MPI_FLOAT, x.data() + 1, 2, MPI_FLOAT, 0, self.comm); }},
    };
    for (const Bad& t : bad) {
      Result r;
      {
        Pending p(std::string(t.call) + " with aliased buffers (must return at once)");
        r = classify(t.fn());
      }
      expect(r, DUCT_ERRCLASS_OVERLAP, {"overlap", "at the root", "MPI_IN_PLACE"}, t.call, 0);
      CHECK(x == std::vector<float>(8, 1.0f));
    }
    // A block in a gap between the receive blocks is no alias: gatherv's
    // only block at x[2..3], the send block at x[0..1].
    std::vector<int> at2{2};
    x = {5, 6, 0, 0, 0, 0, 0, 0};
    CHECK(DUCT_Gatherv(x.data(), 2, MPI_FLOAT, x.data(), one.data(), at2.data(), MPI_FLOAT, 0, self.comm) == MPI_SUCCESS);
    CHECK(x == std::vector<float>{5, 6, 5, 6, 0, 0, 0, 0});
  }
  SECTION("allgatherv and alltoallv, refused on every rank") {
    ReturnComm rc;
    std::vector<int> cnt(un, 1), dsp(un);
    for (int i = 0; i < n; ++i) dsp[static_cast<std::size_t>(i)] = 2 * i;
    std::vector<float> r(2 * un + 1, -1.0f);
    const std::vector<float> before = r;
    Result res;
    {
      Pending p("DUCT_Allgatherv from a receive block (must return at once)");
      res = classify(DUCT_Allgatherv(&r[2 * static_cast<std::size_t>(me)], 1, MPI_FLOAT, r.data(), cnt.data(),
                                     dsp.data(), MPI_FLOAT, rc.comm));
    }
    expect(res, DUCT_ERRCLASS_OVERLAP, {"overlap", "MPI_IN_PLACE"}, "DUCT_Allgatherv");
    {
      Pending p("DUCT_Alltoallv with one array for both (must return at once)");
      res = classify(DUCT_Alltoallv(r.data(), cnt.data(), dsp.data(), MPI_FLOAT, r.data(), cnt.data(), dsp.data(),
                                    MPI_FLOAT, rc.comm));
    }
    expect(res, DUCT_ERRCLASS_OVERLAP, {"overlap"}, "DUCT_Alltoallv");
    CHECK(r == before);
    // Sent from the odd element after this rank's block, received into the
    // even ones: interleaved, not aliased.
    r[2 * static_cast<std::size_t>(me) + 1] = static_cast<float>(me + 10);
    {
      Pending p("DUCT_Allgatherv from a gap between the receive blocks");
      CHECK(DUCT_Allgatherv(&r[2 * static_cast<std::size_t>(me) + 1], 1, MPI_FLOAT, r.data(), cnt.data(), dsp.data(),
                            MPI_FLOAT, rc.comm) == MPI_SUCCESS);
    }
    for (int i = 0; i < n; ++i) CHECK(r[2 * static_cast<std::size_t>(i)] == static_cast<float>(i + 10));
  }
}

TEST_CASE("a pointer that is not mapped in this process is refused (DUCT_CHECK=1)", "[errors][validation]") {
  // Without a CUDA device duct checks pointers only under DUCT_CHECK=1
  // (with one it checks every host-looking pointer: another process's
  // device pointer looks like that).
  const char* check = std::getenv("DUCT_CHECK");
  if (!check || std::string(check) != "1") {
    SUCCEED("runs in the DUCT_CHECK=1 job");
    return;
  }
  ReturnComm rc;
  void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(page != MAP_FAILED);
  std::vector<float> b(8, -1.0f);
  Result r;
  {
    Pending p("DUCT_Allreduce from an unmapped page");
    r = classify(DUCT_Allreduce(page, b.data(), 8, MPI_FLOAT, MPI_SUM, rc.comm));
  }
  expect(r, DUCT_ERRCLASS_UNMAPPED, {"sendbuf = ", "neither memory of this process"}, "DUCT_Allreduce");
  {
    Pending p("DUCT_Bcast into an unmapped page");
    r = classify(DUCT_Bcast(page, 8, MPI_FLOAT, 0, rc.comm));
  }
  expect(r, DUCT_ERRCLASS_UNMAPPED, {"buffer = "}, "DUCT_Bcast");
  CHECK(b == std::vector<float>(8, -1.0f));
  munmap(page, 4096);
}
