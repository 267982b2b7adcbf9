// Stream-ordered collectives (duct/duct_stream.h) on a real GPU. Every case
// writes its input with a kernel that first spins for a while on the same
// stream, then enqueues the collective, then copies the result out on the
// stream: a collective that did not wait for the work before it, or work
// after it that did not wait for the collective, gives a wrong answer.
// References: the MPI library's own collective on host copies of the inputs.
#include <catch2/catch.hpp>
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "duct/duct_stream.h"
#include "stream_cases.hpp"
#include "stream_kernels.hpp"
#include "testutil.hpp"

using namespace duct;
using namespace duct::test;
namespace kg = duct::test::gpu;

namespace {

#define CU(call) REQUIRE((call) == cudaSuccess)

struct DevF {
  float* p = nullptr;
  std::size_t n = 0;
  explicit DevF(std::size_t n_) : n(n_) {
    CU(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(float)));
    CU(cudaMemset(p, 0, std::max<std::size_t>(n, 1) * sizeof(float)));
  }
  ~DevF() { cudaFree(p); }
  // The result, copied on `s` into pageable memory as applications do.
  // TEST_PINNED_GET=1 copies into pinned memory instead: a diagnostic for
  // DUCT_STREAM_ASYNC=1, whose protocol hung on an H200 while this copy
  // waited for the stream (docs/benchmarks/2026-11-26-gpu-checklist-h200.md).
  std::vector<float> get(cudaStream_t s) const {
    std::vector<float> h(n);
    if (n && pinned_staging()) {
      REQUIRE(n * sizeof(float) <= kStagingBytes);
      CU(cudaMemcpyAsync(pinned_staging(), p, n * sizeof(float), cudaMemcpyDeviceToHost, s));
      CU(cudaStreamSynchronize(s));
      std::memcpy(h.data(), pinned_staging(), n * sizeof(float));
      return h;
    }
    if (n) CU(cudaMemcpyAsync(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    return h;
  }
  // With TEST_PINNED_GET=1: a pinned buffer allocated at the start of each
  // case, before any stream-ordered call (allocating pinned memory while a
  // stream waits on duct would itself take the driver's memory lock).
  static constexpr std::size_t kStagingBytes = std::size_t{16} << 20;
  static float* pinned_staging() {
    static float* buf = [] {
      const char* v = std::getenv("TEST_PINNED_GET");
      float* b = nullptr;
      if (v && *v == '1' && cudaMallocHost(&b, kStagingBytes) != cudaSuccess) b = nullptr;
      return b;
    }();
    return buf;
  }
};

std::vector<float> host_input(std::size_t n, int salt) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = stream_value(rank(), i, salt);
  return v;
}

// Whether a capture must succeed here: the device engine serves the
// communicator (2 or more ranks, one node, CUDA IPC: the auto channel with
// the engine on), or DUCT_STREAM_ASYNC=1's protocol replays it.
bool capture_expected() {
  const char* as = std::getenv("DUCT_STREAM_ASYNC");
  if (as && *as == '1') return true;
  const char* ch = std::getenv("DUCT_CHANNEL");
  const char* en = std::getenv("DUCT_ENGINE");
  if (size() < 2 || (ch && *ch && std::strcmp(ch, "auto") != 0) || (en && *en == '0')) return false;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_size(node, &local);
  MPI_Comm_free(&node);
  return local == size();
}

// Whether a call's return code is a refusal (DUCT_ERRCLASS_NOT_SUPPORTED).
bool refused(int rc) {
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls == DUCT_Error_class(DUCT_ERRCLASS_NOT_SUPPORTED);
}

}  // namespace

TEST_CASE("every stream-ordered collective waits for the stream and is seen by later work", "[gpu][stream]") {
  if (suite_kind() != MemKind::device) return;
  (void)DevF::pinned_staging();
  cudaStream_t st;
  CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  for (std::size_t c : {std::size_t{1}, std::size_t{7}, std::size_t{65536 + 3}}) {
    for (StreamCase& k : stream_cases(MPI_COMM_WORLD, c, reinterpret_cast<struct CUstream_st*>(st))) {
      const int salt = static_cast<int>(c % 5) + 1;
      DevF s(k.send_n), r(k.recv_n);
      std::vector<float> hs = host_input(k.send_n, salt), hr(k.recv_n, 0.0f);
      // In place: the receive buffer is the input.
      const bool in_place = k.send_n == 0;
      if (in_place) hr = host_input(k.recv_n, salt);
      std::vector<float> expect = hr;
      k.mpi(hs.data(), expect.data());
      // The input exists only after a kernel that spins 2 ms first.
      kg::fill_late(in_place ? r.p : s.p, in_place ? r.n : s.n, rank(), salt, 2000, st);
      int rc;
      {
        Pending p("DUCT_" + k.name + "_stream count " + std::to_string(c));
        rc = k.duct(s.p, r.p);
      }
      CHECK(rc == MPI_SUCCESS);
      std::vector<float> got;
      {
        Pending p("cudaStreamSynchronize after DUCT_" + k.name + "_stream count " + std::to_string(c));
        got = r.get(st);
      }
      INFO(k.name << " count " << c);
      CHECK(got == expect);
    }
  }
  CHECK(DUCT_Barrier_stream(MPI_COMM_WORLD, reinterpret_cast<struct CUstream_st*>(st)) == MPI_SUCCESS);
  CU(cudaStreamSynchronize(st));
  CU(cudaStreamDestroy(st));
}

TEST_CASE("many stream-ordered collectives outstanding, on two communicators and two streams", "[gpu][stream]") {
  if (suite_kind() != MemKind::device) return;
  (void)DevF::pinned_staging();
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size() - rank(), &b);  // reversed rank order
  cudaStream_t s1, s2;
  CU(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CU(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  constexpr int kOps = 12;
  const std::size_t c = 4099;
  std::vector<std::unique_ptr<DevF>> in, out;
  std::vector<std::vector<float>> expect;
  for (int i = 0; i < kOps; ++i) {
    in.push_back(std::make_unique<DevF>(c));
    out.push_back(std::make_unique<DevF>(c));
    MPI_Comm comm = i % 2 ? b : a;
    std::vector<float> h = host_input(c, i), e(c);
    MPI_Allreduce(h.data(), e.data(), static_cast<int>(c), MPI_FLOAT, MPI_SUM, comm);
    expect.push_back(e);
  }
  {
    Pending p("12 stream-ordered allreduces enqueued on two streams and two communicators");
    for (int i = 0; i < kOps; ++i) {
      // Alternate streams every 3 calls: a call on the other stream must not overtake.
      cudaStream_t st = (i / 3) % 2 ? s2 : s1;
      kg::fill_late(in[static_cast<std::size_t>(i)]->p, c, rank(), i, i % 3 == 0 ? 1000 : 0, st);
      CHECK(DUCT_Allreduce_stream(in[static_cast<std::size_t>(i)]->p, out[static_cast<std::size_t>(i)]->p,
                                  static_cast<int>(c), MPI_FLOAT, MPI_SUM, i % 2 ? b : a,
                                  reinterpret_cast<struct CUstream_st*>(st)) == MPI_SUCCESS);
    }
  }
  {
    Pending p("synchronizing the two streams");
    CU(cudaStreamSynchronize(s1));
    CU(cudaStreamSynchronize(s2));
  }
  for (int i = 0; i < kOps; ++i) {
    INFO("op " << i);
    CHECK(out[static_cast<std::size_t>(i)]->get(s1) == expect[static_cast<std::size_t>(i)]);
  }
  // A blocking collective on the same communicators is not held up by the
  // stream side, and frees wait for it.
  std::vector<float> x(8, 1.0f), y(8);
  CHECK(DUCT_Allreduce(x.data(), y.data(), 8, MPI_FLOAT, MPI_SUM, a) == MPI_SUCCESS);
  CHECK(y[0] == static_cast<float>(size()));
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  CU(cudaStreamDestroy(s1));
  CU(cudaStreamDestroy(s2));
}

TEST_CASE("host buffers in stream order", "[gpu][stream]") {
  if (suite_kind() != MemKind::device) return;
  (void)DevF::pinned_staging();
  cudaStream_t st;
  CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  auto* cs = reinterpret_cast<struct CUstream_st*>(st);
  const std::size_t c = 70001;
  float *hin, *hout;
  CU(cudaMallocHost(&hin, c * sizeof(float)));
  CU(cudaMallocHost(&hout, c * sizeof(float)));
  std::memset(hin, 0, c * sizeof(float));
  std::memset(hout, 0, c * sizeof(float));
  DevF d(c);
  std::vector<float> h = host_input(c, 3), expect(c);
  MPI_Allreduce(h.data(), expect.data(), static_cast<int>(c), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  // Input: device kernel (late), then D2H into pinned host memory, all on the stream.
  kg::fill_late(d.p, c, rank(), 3, 2000, st);
  CU(cudaMemcpyAsync(hin, d.p, c * sizeof(float), cudaMemcpyDeviceToHost, st));
  {
    Pending p("DUCT_Allreduce_stream on pinned host buffers");
    CHECK(DUCT_Allreduce_stream(hin, hout, static_cast<int>(c), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, cs) == MPI_SUCCESS);
  }
  // Later work sees the result: copy it back to the device on the stream.
  DevF back(c);
  CU(cudaMemcpyAsync(back.p, hout, c * sizeof(float), cudaMemcpyHostToDevice, st));
  CHECK(back.get(st) == expect);
  // Pageable memory (read on the host once the stream is done).
  std::vector<float> pageable = h, expect2(c);
  MPI_Allreduce(h.data(), expect2.data(), static_cast<int>(c), MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  {
    Pending p("DUCT_Allreduce_stream in place on pageable host memory");
    CHECK(DUCT_Allreduce_stream(MPI_IN_PLACE, pageable.data(), static_cast<int>(c), MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD,
                                cs) == MPI_SUCCESS);
    CU(cudaStreamSynchronize(st));
  }
  CHECK(pageable == expect2);
  CU(cudaFreeHost(hin));
  CU(cudaFreeHost(hout));
  CU(cudaStreamDestroy(st));
}

TEST_CASE("a captured stream-ordered allreduce replays 100 times with the right result", "[gpu][stream][graph]") {
  if (suite_kind() != MemKind::device) return;
  (void)DevF::pinned_staging();
  constexpr int kReplays = 100;
  const std::size_t c = 4099;
  cudaStream_t st;
  CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  DevF in(c), out(c), history(c * kReplays);
  int* counter = nullptr;
  CU(cudaMalloc(&counter, sizeof(int)));
  CU(cudaMemset(counter, 0, sizeof(int)));
  // Ranks capture at different times: capturing must not wait for the GPU
  // or for the other ranks' captures.
  if (rank() == 0) usleep(300 * 1000);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  // Capture is refused (DUCT_ERRCLASS_NOT_SUPPORTED, the capture left valid)
  // where the device engine does not serve the communicator (one rank,
  // several nodes, no CUDA IPC), unless DUCT_STREAM_ASYNC=1.
  const bool async = capture_expected();
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  {
    Pending p("capturing a stream-ordered allreduce");
    CU(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    kg::fill_from_counter(in.p, c, rank(), counter, st);
    int rc = DUCT_Allreduce_stream(in.p, out.p, static_cast<int>(c), MPI_FLOAT, MPI_SUM, comm,
                                   reinterpret_cast<struct CUstream_st*>(st));
    kg::record_and_bump(history.p, out.p, c, counter, st);
    CU(cudaStreamEndCapture(st, &graph));
    if (!async) {
      CHECK(refused(rc));
      CU(cudaGraphDestroy(graph));
      CU(cudaFree(counter));
      CU(cudaStreamDestroy(st));
      MPI_Comm_free(&comm);
      return;
    }
    CHECK(rc == MPI_SUCCESS);
    CU(cudaGraphInstantiate(&exec, graph, 0));
  }
  {
    Pending p("100 graph launches");
    for (int i = 0; i < kReplays; ++i) CU(cudaGraphLaunch(exec, st));
    CU(cudaStreamSynchronize(st));
  }
  std::vector<float> got = history.get(st);
  int bad = 0;
  for (int i = 0; i < kReplays; ++i) {
    std::vector<float> h = host_input(c, i), e(c);
    MPI_Allreduce(h.data(), e.data(), static_cast<int>(c), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (!std::equal(e.begin(), e.end(), got.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(i) * c)))
      ++bad;
  }
  CHECK(bad == 0);
  CU(cudaGraphExecDestroy(exec));
  CU(cudaGraphDestroy(graph));
  CU(cudaFree(counter));
  CU(cudaStreamDestroy(st));
  MPI_Comm_free(&comm);
}

// Issue 29: what a stream-ordered call takes (a datatype, a communicator)
// may be freed after the call and before the stream reaches it: the call
// reads the datatype's size at the call, and the communicator's stream side
// lives until MPI_Comm_free has waited for its stream-ordered calls.
TEST_CASE("a datatype and a communicator freed before the stream reaches the call", "[gpu][stream]") {
  if (suite_kind() != MemKind::device) return;
  (void)DevF::pinned_staging();
  cudaStream_t st;
  CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const std::size_t c = 65536 + 3;
  const int n = size();
  for (int contiguous_derived : {0, 1}) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Datatype t;
    // One element of t is three floats (a derived type), or one float (a duplicate of MPI_FLOAT).
    const std::size_t per = contiguous_derived ? 3 : 1;
    if (contiguous_derived)
      MPI_Type_contiguous(3, MPI_FLOAT, &t);
    else
      MPI_Type_dup(MPI_FLOAT, &t);
    MPI_Type_commit(&t);
    DevF s(c * per), r(c * per * static_cast<std::size_t>(n));
    std::vector<float> hs = host_input(c * per, 9), expect(c * per * static_cast<std::size_t>(n));
    MPI_Allgather(hs.data(), static_cast<int>(c * per), MPI_FLOAT, expect.data(), static_cast<int>(c * per), MPI_FLOAT,
                  MPI_COMM_WORLD);
    kg::fill_late(s.p, s.n, rank(), 9, 20000, st);  // the stream reaches the call 20 ms later
    int rc;
    {
      Pending p("DUCT_Allgather_stream with its datatype and communicator freed after the call");
      rc = DUCT_Allgather_stream(s.p, static_cast<int>(c), t, r.p, static_cast<int>(c), t, comm,
                                 reinterpret_cast<struct CUstream_st*>(st));
      MPI_Type_free(&t);
      MPI_Comm_free(&comm);  // waits for the stream-ordered call
    }
    CHECK(rc == MPI_SUCCESS);
    CHECK(comm == MPI_COMM_NULL);
    INFO((contiguous_derived ? "MPI_Type_contiguous(3, MPI_FLOAT)" : "MPI_Type_dup(MPI_FLOAT)"));
    CHECK(r.get(st) == expect);
  }
  CU(cudaStreamDestroy(st));
}

// Every stream-ordered collective (each root, in place and not, as
// stream_cases lists them) captured alone into a graph, then replayed with
// new input in the same buffers: each replay's result against the MPI
// library's collective on host copies of that input.
TEST_CASE("every captured stream-ordered collective replays with new data", "[gpu][stream][graph]") {
  if (suite_kind() != MemKind::device) return;
  const bool expected_here = capture_expected();
  cudaStream_t st;
  CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  // Refusals come back as error codes (MPI_COMM_WORLD's handler is fatal).
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  for (std::size_t c : {std::size_t{1}, std::size_t{4099}}) {
    for (StreamCase& k : stream_cases(comm, c, reinterpret_cast<struct CUstream_st*>(st))) {
      INFO(k.name << " count " << c);
      // The engine has no gatherv, scatterv or alltoallv: refused (as
      // everywhere without the engine) unless DUCT_STREAM_ASYNC=1.
      const char* as = std::getenv("DUCT_STREAM_ASYNC");
      const bool engine_has = (as && *as == '1') || (k.name != "gatherv" && k.name != "scatterv" && k.name != "alltoallv");
      const bool expected = expected_here && engine_has;
      DevF s(k.send_n), r(k.recv_n);
      const bool in_place = k.send_n == 0;
      cudaGraph_t graph = nullptr;
      int rc;
      {
        Pending p("capturing DUCT_" + k.name + "_stream count " + std::to_string(c));
        CU(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        rc = k.duct(s.p, r.p);
        CU(cudaStreamEndCapture(st, &graph));
      }
      if (!expected) {
        CHECK(refused(rc));
        CU(cudaGraphDestroy(graph));
        continue;
      }
      REQUIRE(rc == MPI_SUCCESS);
      cudaGraphExec_t exec;
      CU(cudaGraphInstantiate(&exec, graph, 0));
      for (int replay = 0; replay < 4; ++replay) {
        const int salt = 11 + replay;
        std::vector<float> hs = host_input(k.send_n, salt), hr(k.recv_n, -1.0f);
        if (in_place) hr = host_input(k.recv_n, salt);
        std::vector<float> expect = hr;
        k.mpi(hs.data(), expect.data());
        if (k.send_n) CU(cudaMemcpy(s.p, hs.data(), k.send_n * sizeof(float), cudaMemcpyHostToDevice));
        if (k.recv_n) CU(cudaMemcpy(r.p, hr.data(), k.recv_n * sizeof(float), cudaMemcpyHostToDevice));
        // cudaMemcpy from pageable memory may return before its DMA lands
        // (CUDA's "API synchronization behavior"); without this a peer's
        // replay wrote into r.p before this rank's -1s did (run19, H200,
        // 4 ranks, MPS: allgather replay 3 came back with -1s in it).
        CU(cudaDeviceSynchronize());
        // Every rank's new input is in place before any rank replays.
        MPI_Barrier(MPI_COMM_WORLD);
        {
          Pending p("replay " + std::to_string(replay) + " of DUCT_" + k.name + "_stream");
          CU(cudaGraphLaunch(exec, st));
          CU(cudaStreamSynchronize(st));
        }
        INFO("replay " << replay);
        CHECK(r.get(st) == expect);
        // No rank overwrites its buffers for the next replay while a peer's
        // replay may still read them.
        MPI_Barrier(MPI_COMM_WORLD);
      }
      CU(cudaGraphExecDestroy(exec));
      CU(cudaGraphDestroy(graph));
    }
  }
  MPI_Comm_free(&comm);
  CU(cudaStreamDestroy(st));
}
