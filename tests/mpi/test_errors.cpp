// Bad input under MPI_ERRORS_RETURN: each case returns an error code of the
// right duct class whose MPI_Error_string names the call, the rank, the
// argument and the value; nothing crashes or hangs, and the communicator
// works afterwards.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "duct/duct.h"
#include "duct/duct.hpp"
#include "errcheck.hpp"
#include "testutil.hpp"

using namespace duct::test;


TEST_CASE("bad arguments return duct error classes with a message naming them", "[errors]") {
  ReturnComm rc;
  MPI_Comm c = rc.comm;
  std::vector<float> a(16, 1.0f), b(16, 0.0f);
  Pending p("error-case calls (each must return at once)");

  expect(classify(DUCT_Allreduce(nullptr, b.data(), 16, MPI_FLOAT, MPI_SUM, c)), DUCT_ERRCLASS_BUFFER,
         {"sendbuf = NULL", "count = 16"});
  expect(classify(DUCT_Allreduce(a.data(), nullptr, 16, MPI_FLOAT, MPI_SUM, c)), DUCT_ERRCLASS_BUFFER,
         {"recvbuf = NULL"});
  expect(classify(DUCT_Allreduce(a.data(), b.data(), -1, MPI_FLOAT, MPI_SUM, c)), DUCT_ERRCLASS_COUNT,
         {"count = -1 is negative"});
  expect(classify(DUCT_Allreduce_c(a.data(), b.data(), -5, MPI_FLOAT, MPI_SUM, c)), DUCT_ERRCLASS_COUNT,
         {"count = -5"}, "DUCT_Allreduce_c");
  expect(classify(DUCT_Allreduce(a.data(), b.data(), 16, MPI_DATATYPE_NULL, MPI_SUM, c)), DUCT_ERRCLASS_TYPE,
         {"datatype = MPI_DATATYPE_NULL"});
  expect(classify(DUCT_Allreduce(a.data(), b.data(), 16, MPI_FLOAT, MPI_OP_NULL, c)), DUCT_ERRCLASS_OP,
         {"op = MPI_OP_NULL"});
  expect(classify(DUCT_Allreduce(a.data(), b.data(), 16, MPI_FLOAT, MPI_BAND, c)), DUCT_ERRCLASS_OP_TYPE,
         {"MPI_BAND", "MPI_FLOAT"});
  expect(classify(DUCT_Allreduce(a.data(), b.data(), 16, MPI_C_BOOL, MPI_SUM, c)), DUCT_ERRCLASS_OP_TYPE,
         {"MPI_SUM", "MPI_C_BOOL"});
  expect(classify(DUCT_Allreduce(a.data(), MPI_IN_PLACE, 16, MPI_FLOAT, MPI_SUM, c)), DUCT_ERRCLASS_IN_PLACE,
         {"recvbuf = MPI_IN_PLACE"});
  expect(classify(DUCT_Allreduce(a.data(), a.data() + 4, 8, MPI_FLOAT, MPI_SUM, c)), DUCT_ERRCLASS_OVERLAP,
         {"overlap", "MPI_IN_PLACE"});
  expect(classify(DUCT_Allreduce(a.data(), a.data(), 16, MPI_FLOAT, MPI_SUM, c)), DUCT_ERRCLASS_OVERLAP,
         {"overlap"});

  // Nothing was written by the refused calls.
  CHECK(b == std::vector<float>(16, 0.0f));
  CHECK(a == std::vector<float>(16, 1.0f));

  // Null buffers with count 0 are fine, as in MPI.
  CHECK(DUCT_Allreduce(nullptr, nullptr, 0, MPI_FLOAT, MPI_SUM, c) == MPI_SUCCESS);

  // The communicator still works.
  CHECK(DUCT_Allreduce(a.data(), b.data(), 16, MPI_FLOAT, MPI_SUM, c) == MPI_SUCCESS);
  CHECK(b == std::vector<float>(16, static_cast<float>(size())));
}

// The C++ layer's own argument check (spans of different lengths) reports
// through the same path as the C calls: a duct COUNT error naming both
// lengths, raised on the communicator's handler, nothing written, and the
// communicator usable afterwards.
TEST_CASE("duct::allreduce with spans of different lengths gives a COUNT error naming both", "[errors]") {
  ReturnComm rc;
  std::vector<float> a(16, 1.0f), b(12, 0.0f);
  Pending p("duct::allreduce with mismatched spans (must return at once)");
  expect(classify(duct::allreduce(std::span<const float>(a), std::span<float>(b), MPI_SUM, rc.comm)),
         DUCT_ERRCLASS_COUNT, {"send has 16 elements but recv has 12"}, "duct::allreduce");
  CHECK(b == std::vector<float>(12, 0.0f));
  CHECK(DUCT_Report_count_mismatch("x", 3, 3, rc.comm) == MPI_SUCCESS);
  expect(classify(DUCT_Report_count_mismatch(nullptr, 0, 7, rc.comm)), DUCT_ERRCLASS_COUNT,
         {"send has 0 elements but recv has 7"}, "duct");
  std::vector<float> c(16, 0.0f);
  CHECK(duct::allreduce(std::span<const float>(a), std::span<float>(c), MPI_SUM, rc.comm) == MPI_SUCCESS);
  CHECK(c == std::vector<float>(16, static_cast<float>(size())));
}

// Ranks in different collectives on one node (a program's bug, or a rank
// whose call returned early with an argument error, as MPICH's
// errors/coll/scatterlength makes the root's): the shared-memory slots
// carry the call beside its sequence number, so a rank that waits finds
// another call's word and returns Errc::mismatch naming both, instead of
// reading that call's data as its own or waiting forever. (DUCT_CHECK=1
// compares the calls before they start: then every rank gets the error.)
TEST_CASE("ranks in different collectives on one node get a mismatch error, not each other's data", "[errors]") {
  if (size() < 2) return;
  // Only a communicator on one node has the slots (across nodes the calls
  // are messages, and a rank in the other call may just wait).
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int on_node = 0, everywhere = 0;
  MPI_Comm_size(node, &on_node);
  MPI_Comm_free(&node);
  MPI_Allreduce(&on_node, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (everywhere != size()) return;
  ReturnComm rc;
  REQUIRE(DUCT_Tune("bcast:0-inf:shm;allreduce:0-inf:shm") == MPI_SUCCESS);
  std::vector<float> a(2, 1.0f), b(2, -1.0f);
  Result r;
  {
    Pending p("rank 0 in DUCT_Bcast, the others in DUCT_Allreduce");
    r = classify(rank() == 0 ? DUCT_Bcast(a.data(), 2, MPI_FLOAT, 0, rc.comm)
                             : DUCT_Allreduce(a.data(), b.data(), 2, MPI_FLOAT, MPI_SUM, rc.comm));
  }
  const char* env = std::getenv("DUCT_CHECK");
  const bool checked = env && std::string(env) == "1";
  if (rank() == 0 && !checked) {
    CHECK(r.rc == MPI_SUCCESS);  // the root of a bcast writes its slot and returns, as an eager send
  } else if (rank() == 0) {
    expect(r, DUCT_ERRCLASS_MISMATCH, {"DUCT_Allreduce"}, "DUCT_Bcast");
  } else if (checked) {
    expect(r, DUCT_ERRCLASS_MISMATCH, {"DUCT_Allreduce", "DUCT_Bcast"});
    CHECK(b == std::vector<float>(2, -1.0f));
  } else {
    expect(r, DUCT_ERRCLASS_MISMATCH, {"rank 0's shared-memory slot", "as bcast with root 0", "as allreduce"});
    CHECK(b == std::vector<float>(2, -1.0f));  // nothing of the bcast taken as the allreduce's result
  }
  REQUIRE(DUCT_Tune("") == MPI_SUCCESS);
}

TEST_CASE("MPI_COMM_NULL is reported through MPI_COMM_WORLD's error handler", "[errors]") {
  // MPI-3.1 §8.3: errors without a communicator go to MPI_COMM_WORLD (Open MPI 4).
  MPI_Errhandler old;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &old);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::vector<float> a(4, 1.0f), b(4);
  Result r;
  {
    Pending p("DUCT_Allreduce on MPI_COMM_NULL");
    r = classify(DUCT_Allreduce(a.data(), b.data(), 4, MPI_FLOAT, MPI_SUM, MPI_COMM_NULL));
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, old);
  MPI_Errhandler_free(&old);
  expect(r, DUCT_ERRCLASS_COMM, {"comm = MPI_COMM_NULL"});
}

TEST_CASE("every duct error class is registered with a distinct MPI class and a text", "[errors]") {
  std::vector<int> seen;
  for (int e = DUCT_ERRCLASS_ARG; e <= DUCT_ERRCLASS_REVOKED; ++e) {
    int cls = DUCT_Error_class(static_cast<DUCT_Errclass>(e));
    CHECK(cls > MPI_ERR_LASTCODE);
    CHECK(std::find(seen.begin(), seen.end(), cls) == seen.end());
    seen.push_back(cls);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(cls, text, &len);
    CHECK(std::string(text, static_cast<size_t>(len)).rfind("duct: ", 0) == 0);
  }
}
