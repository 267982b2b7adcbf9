// The stream-ordered forms (duct/duct_stream.h) on any machine: argument
// errors are raised at call time exactly as by the blocking form, what the
// stream forms do not take is refused with a message that says so, and
// without a CUDA device every form fails cleanly, saying why, and leaves
// the communicator working. (Their results on a GPU: tests/gpu/test_stream.cpp.)
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "duct/duct_stream.h"
#include "errcheck.hpp"
#include "stream_cases.hpp"
#include "testutil.hpp"

using namespace duct::test;

namespace {
// The legacy default stream: a valid stream on a GPU machine.
struct CUstream_st* const kDefault = nullptr;

bool emulated() {
  const char* e = std::getenv("DUCT_STREAM_EMULATE");
  return e && std::strcmp(e, "1") == 0;
}

void add_one(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int i = 0; i < *len; ++i) static_cast<float*>(inout)[i] += static_cast<float*>(in)[i] + 1.0f;
}
}  // namespace

TEST_CASE("stream-ordered calls check their arguments as the blocking ones do", "[errors][stream]") {
  ReturnComm rc;
  MPI_Comm c = rc.comm;
  std::vector<float> a(16, 1.0f), b(16, 0.0f);
  Pending p("stream-ordered error-case calls (each must return at once)");

  expect(classify(DUCT_Allreduce_stream(a.data(), b.data(), -1, MPI_FLOAT, MPI_SUM, c, kDefault)), DUCT_ERRCLASS_COUNT,
         {"count = -1 is negative"}, "DUCT_Allreduce_stream");
  expect(classify(DUCT_Allreduce_stream(a.data(), b.data(), 16, MPI_FLOAT, MPI_BAND, c, kDefault)),
         DUCT_ERRCLASS_OP_TYPE, {"MPI_BAND", "MPI_FLOAT"}, "DUCT_Allreduce_stream");
  expect(classify(DUCT_Bcast_stream(a.data(), 16, MPI_FLOAT, size(), c, kDefault)), DUCT_ERRCLASS_ROOT,
         {"root = " + std::to_string(size())}, "DUCT_Bcast_stream");
  expect(classify(DUCT_Allgather_stream_c(a.data(), -2, MPI_FLOAT, b.data(), 1, MPI_FLOAT, c, kDefault)),
         DUCT_ERRCLASS_COUNT, {"sendcount = -2"}, "DUCT_Allgather_stream_c");
  expect(classify(DUCT_Reduce_scatter_stream(a.data(), b.data(), nullptr, MPI_FLOAT, MPI_SUM, c, kDefault)),
         DUCT_ERRCLASS_ARG, {"recvcounts = NULL"}, "DUCT_Reduce_scatter_stream");

  // A datatype duct would pack on the host at call time: refused.
  MPI_Datatype strided;
  MPI_Type_vector(4, 1, 2, MPI_FLOAT, &strided);
  MPI_Type_commit(&strided);
  expect(classify(DUCT_Bcast_stream(a.data(), 1, strided, 0, c, kDefault)), DUCT_ERRCLASS_NOT_SUPPORTED,
         {"datatype", "not contiguous", "nonblocking form"}, "DUCT_Bcast_stream");
  MPI_Type_free(&strided);
  // A user-defined op: the MPI library would reduce it on host copies now.
  MPI_Op op;
  MPI_Op_create(&add_one, 1, &op);
  expect(classify(DUCT_Allreduce_stream(a.data(), b.data(), 16, MPI_FLOAT, op, c, kDefault)),
         DUCT_ERRCLASS_NOT_SUPPORTED, {"stream-ordered forms", "predefined"}, "DUCT_Allreduce_stream");
  MPI_Op_free(&op);

  // Nothing was written by the refused calls; a call with nothing to move
  // enqueues nothing and succeeds, with or without a device.
  CHECK(b == std::vector<float>(16, 0.0f));
  CHECK(DUCT_Allreduce_stream(nullptr, nullptr, 0, MPI_FLOAT, MPI_SUM, c, kDefault) == MPI_SUCCESS);
  CHECK(DUCT_Allreduce(a.data(), b.data(), 16, MPI_FLOAT, MPI_SUM, c) == MPI_SUCCESS);
  CHECK(b == std::vector<float>(16, static_cast<float>(size())));
}

TEST_CASE("without a CUDA device every stream-ordered form says why and the communicator still works",
          "[errors][stream]") {
  if (DUCT_Query_cuda_support()) return;  // tests/gpu covers the forms on a device
  if (emulated()) return;                 // the emulated stream needs none
  ReturnComm rc;
  MPI_Comm c = rc.comm;
  const int n = size();
  std::vector<float> a(16 * static_cast<std::size_t>(n), 1.0f), b(16 * static_cast<std::size_t>(n), 0.0f);
  std::vector<int> counts(static_cast<std::size_t>(n), 1), displs(static_cast<std::size_t>(n));
  std::vector<MPI_Count> ccounts(static_cast<std::size_t>(n), 1);
  std::vector<MPI_Aint> cdispls(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) displs[static_cast<std::size_t>(i)] = i, cdispls[static_cast<std::size_t>(i)] = i;
  float* s = a.data();
  float* r = b.data();
  const int* cn = counts.data();
  const int* ds = displs.data();
  const MPI_Count* ccn = ccounts.data();
  const MPI_Aint* cds = cdispls.data();
  const MPI_Datatype F = MPI_FLOAT;
  struct CUstream_st* st = kDefault;
  const std::vector<std::pair<std::string, std::function<int()>>> forms = {
      {"DUCT_Allreduce_stream", [&] { return DUCT_Allreduce_stream(s, r, 4, F, MPI_SUM, c, st); }},
      {"DUCT_Allreduce_stream_c", [&] { return DUCT_Allreduce_stream_c(s, r, 4, F, MPI_SUM, c, st); }},
      {"DUCT_Reduce_stream", [&] { return DUCT_Reduce_stream(s, r, 4, F, MPI_SUM, 0, c, st); }},
      {"DUCT_Reduce_stream_c", [&] { return DUCT_Reduce_stream_c(s, r, 4, F, MPI_SUM, 0, c, st); }},
      {"DUCT_Reduce_scatter_block_stream", [&] { return DUCT_Reduce_scatter_block_stream(s, r, 1, F, MPI_SUM, c, st); }},
      {"DUCT_Reduce_scatter_block_stream_c",
       [&] { return DUCT_Reduce_scatter_block_stream_c(s, r, 1, F, MPI_SUM, c, st); }},
      {"DUCT_Reduce_scatter_stream", [&] { return DUCT_Reduce_scatter_stream(s, r, cn, F, MPI_SUM, c, st); }},
      {"DUCT_Reduce_scatter_stream_c", [&] { return DUCT_Reduce_scatter_stream_c(s, r, ccn, F, MPI_SUM, c, st); }},
      {"DUCT_Bcast_stream", [&] { return DUCT_Bcast_stream(r, 4, F, 0, c, st); }},
      {"DUCT_Bcast_stream_c", [&] { return DUCT_Bcast_stream_c(r, 4, F, 0, c, st); }},
      {"DUCT_Allgather_stream", [&] { return DUCT_Allgather_stream(s, 1, F, r, 1, F, c, st); }},
      {"DUCT_Allgather_stream_c", [&] { return DUCT_Allgather_stream_c(s, 1, F, r, 1, F, c, st); }},
      {"DUCT_Allgatherv_stream", [&] { return DUCT_Allgatherv_stream(s, 1, F, r, cn, ds, F, c, st); }},
      {"DUCT_Allgatherv_stream_c", [&] { return DUCT_Allgatherv_stream_c(s, 1, F, r, ccn, cds, F, c, st); }},
      {"DUCT_Alltoall_stream", [&] { return DUCT_Alltoall_stream(s, 1, F, r, 1, F, c, st); }},
      {"DUCT_Alltoall_stream_c", [&] { return DUCT_Alltoall_stream_c(s, 1, F, r, 1, F, c, st); }},
      {"DUCT_Alltoallv_stream", [&] { return DUCT_Alltoallv_stream(s, cn, ds, F, r, cn, ds, F, c, st); }},
      {"DUCT_Alltoallv_stream_c", [&] { return DUCT_Alltoallv_stream_c(s, ccn, cds, F, r, ccn, cds, F, c, st); }},
      {"DUCT_Gather_stream", [&] { return DUCT_Gather_stream(s, 1, F, r, 1, F, 0, c, st); }},
      {"DUCT_Gather_stream_c", [&] { return DUCT_Gather_stream_c(s, 1, F, r, 1, F, 0, c, st); }},
      {"DUCT_Gatherv_stream", [&] { return DUCT_Gatherv_stream(s, 1, F, r, cn, ds, F, 0, c, st); }},
      {"DUCT_Gatherv_stream_c", [&] { return DUCT_Gatherv_stream_c(s, 1, F, r, ccn, cds, F, 0, c, st); }},
      {"DUCT_Scatter_stream", [&] { return DUCT_Scatter_stream(s, 1, F, r, 1, F, 0, c, st); }},
      {"DUCT_Scatter_stream_c", [&] { return DUCT_Scatter_stream_c(s, 1, F, r, 1, F, 0, c, st); }},
      {"DUCT_Scatterv_stream", [&] { return DUCT_Scatterv_stream(s, cn, ds, F, r, 1, F, 0, c, st); }},
      {"DUCT_Scatterv_stream_c", [&] { return DUCT_Scatterv_stream_c(s, ccn, cds, F, r, 1, F, 0, c, st); }},
      {"DUCT_Barrier_stream", [&] { return DUCT_Barrier_stream(c, st); }},
  };
  for (const auto& [name, call] : forms) {
    Pending p(name + " without a CUDA device");
    expect(classify(call()), DUCT_ERRCLASS_NOT_SUPPORTED, {"need a CUDA device"}, name);
  }
  CHECK(b == std::vector<float>(b.size(), 0.0f));  // nothing was written
  CHECK(DUCT_Allreduce(a.data(), b.data(), 16, MPI_FLOAT, MPI_SUM, c) == MPI_SUCCESS);
  CHECK(b[0] == static_cast<float>(n));
}

// ---- DUCT_STREAM_EMULATE=1: the machinery behind the stream forms, on host buffers ----

namespace {

void run_cases(MPI_Comm w, std::size_t c, int salt) {
  int me = 0;
  MPI_Comm_rank(w, &me);
  for (StreamCase& k : stream_cases(w, c, nullptr)) {
    const bool in_place = k.send_n == 0;
    std::vector<float> s(k.send_n), r(k.recv_n, 0.0f);
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = stream_value(me, i, salt);
    if (in_place)
      for (std::size_t i = 0; i < r.size(); ++i) r[i] = stream_value(me, i, salt);
    std::vector<float> expect = r;
    k.mpi(s.data(), expect.data());
    int rc;
    {
      Pending p("DUCT_" + k.name + "_stream (emulated stream) count " + std::to_string(c));
      rc = k.duct(s.data(), r.data());
    }
    INFO(k.name << " count " << c);
    CHECK(rc == MPI_SUCCESS);
    CHECK(r == expect);
  }
}

}  // namespace

TEST_CASE("emulated stream: every stream-ordered collective matches the MPI library", "[stream-emu]") {
  if (!emulated()) return;
  for (std::size_t c : {std::size_t{1}, std::size_t{7}, std::size_t{100003}}) run_cases(MPI_COMM_WORLD, c, static_cast<int>(c % 11));
  // A sub-communicator in reversed rank order, freed afterwards (its stream side goes with it).
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size() - rank(), &rev);
  run_cases(rev, 1000, 3);
  MPI_Comm_free(&rev);
}

TEST_CASE("emulated stream: stream-ordered calls interleave with blocking and nonblocking ones", "[stream-emu]") {
  if (!emulated()) return;
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  const float n = static_cast<float>(size());
  bool all_ok = true;
  for (int i = 0; i < 300; ++i) {
    float a = static_cast<float>(i + rank()), b = 0, x = 0, y = 0, u = 1, v = 0;
    MPI_Request q;
    all_ok = all_ok && DUCT_Iallreduce(&u, &v, 1, MPI_FLOAT, MPI_SUM, c, &q) == MPI_SUCCESS;
    all_ok = all_ok && DUCT_Allreduce_stream(&a, &b, 1, MPI_FLOAT, MPI_SUM, c, nullptr) == MPI_SUCCESS;
    all_ok = all_ok && DUCT_Allreduce(&a, &x, 1, MPI_FLOAT, MPI_MAX, c) == MPI_SUCCESS;
    all_ok = all_ok && DUCT_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS;
    all_ok = all_ok && DUCT_Bcast_stream(&y, i % 2 ? 0 : 1, MPI_FLOAT, 0, c, nullptr) == MPI_SUCCESS;
    const float sum = n * static_cast<float>(i) + n * (n - 1) / 2;
    all_ok = all_ok && b == sum && x == static_cast<float>(i + size() - 1) && v == n;
  }
  CHECK(all_ok);
  MPI_Comm_free(&c);
}

// Issue 29: a stream-ordered call keeps no datatype (only contiguous ones are
// taken, for their size at the call) and its communicator's stream side
// lives until MPI_Comm_free has waited for it: both may be freed right
// after the call. (On a GPU, where the stream reaches the call later:
// tests/gpu/test_stream.cpp.)
TEST_CASE("emulated stream: a datatype and a communicator freed right after the call", "[stream-emu]") {
  if (!emulated()) return;
  const int n = size();
  const std::size_t c = 4099;
  for (int contiguous_derived : {0, 1}) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Datatype t;
    const std::size_t per = contiguous_derived ? 3 : 1;
    if (contiguous_derived)
      MPI_Type_contiguous(3, MPI_FLOAT, &t);
    else
      MPI_Type_dup(MPI_FLOAT, &t);
    MPI_Type_commit(&t);
    std::vector<float> s(c * per), r(c * per * static_cast<std::size_t>(n), 0.0f), expect(r.size());
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = stream_value(rank(), i, 4);
    MPI_Allgather(s.data(), static_cast<int>(s.size()), MPI_FLOAT, expect.data(), static_cast<int>(s.size()), MPI_FLOAT,
                  MPI_COMM_WORLD);
    int rc;
    {
      Pending p("DUCT_Allgather_stream, then its datatype and communicator freed");
      rc = DUCT_Allgather_stream(s.data(), static_cast<int>(c), t, r.data(), static_cast<int>(c), t, comm, kDefault);
      MPI_Type_free(&t);
      MPI_Comm_free(&comm);
    }
    INFO((contiguous_derived ? "MPI_Type_contiguous(3, MPI_FLOAT)" : "MPI_Type_dup(MPI_FLOAT)"));
    CHECK(rc == MPI_SUCCESS);
    CHECK(r == expect);
  }
}
