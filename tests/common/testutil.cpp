#define CATCH_CONFIG_RUNNER
#include "testutil.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "duct/duct.h"

namespace duct::test {

namespace {
MemKind g_kind = MemKind::host;
int g_rank = 0, g_size = 1;

std::mutex g_mutex;
std::string g_pending;
std::chrono::steady_clock::time_point g_deadline;
bool g_armed = false;
std::atomic<bool> g_stop{false};
int g_timeout_s = 120;

void watchdog() {
  while (!g_stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_armed && std::chrono::steady_clock::now() > g_deadline) {
      std::fprintf(stderr, "\nWATCHDOG: rank %d of %d: '%s' did not return within %d s: aborting the job\n", g_rank,
                   g_size, g_pending.c_str(), g_timeout_s);
      std::fflush(stderr);
      std::_Exit(124);
    }
  }
}
}  // namespace

MemKind suite_kind() { return g_kind; }
int rank() { return g_rank; }
int size() { return g_size; }

Pending::Pending(std::string what) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_pending = std::move(what);
  g_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(g_timeout_s);
  g_armed = true;
}

Pending::~Pending() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_armed = false;
}

Buf::Buf(std::size_t bytes, MemKind kind) : bytes_(bytes), kind_(kind) {
  if (kind == MemKind::device) {
    Status st = memory::cuda::alloc_device(bytes ? bytes : 1, &p_);
    if (!st) {
      std::fprintf(stderr, "rank %d: %s\n", g_rank, st.message().c_str());
      std::abort();
    }
  } else {
    p_ = std::malloc(bytes ? bytes : 1);
  }
}

Buf::~Buf() {
  if (kind_ == MemKind::device)
    memory::cuda::free_device(p_);
  else
    std::free(p_);
}

void Buf::upload(const void* host) {
  if (bytes_ == 0) return;
  if (kind_ == MemKind::device)
    (void)memory::cuda::copy(p_, host, bytes_);
  else
    std::memcpy(p_, host, bytes_);
}

void Buf::fill(unsigned char byte) {
  std::vector<unsigned char> h(bytes_, byte);
  upload(h.data());
}

std::vector<unsigned char> Buf::download() const {
  std::vector<unsigned char> h(bytes_);
  if (bytes_ == 0) return h;
  if (kind_ == MemKind::device)
    (void)memory::cuda::copy(h.data(), p_, bytes_);
  else
    std::memcpy(h.data(), p_, bytes_);
  return h;
}

int mpi_main(int argc, char** argv, MemKind kind) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_kind = kind;
  if (const char* t = std::getenv("TEST_WATCHDOG_S")) g_timeout_s = std::atoi(t) > 0 ? std::atoi(t) : 120;

  if (kind == MemKind::device) {
    int have = DUCT_Query_cuda_support(), all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
      if (g_rank == 0)
        std::printf("SKIP: no usable CUDA device on every rank (rank 0: %s)\n",
                    have ? "has one" : memory::cuda::unavailable_reason().c_str());
      MPI_Finalize();
      return 77;
    }
  }

  std::thread dog(watchdog);
  Catch::Session session;
  int rc = session.applyCommandLine(argc, argv);
  // A test name or tag that matches nothing is a failure, not a pass: a
  // name with a comma is two names to Catch (write the comma as \,).
  session.configData().warnings =
      static_cast<Catch::WarnAbout::What>(session.configData().warnings | Catch::WarnAbout::NoTests);
  int failed = rc != 0 ? 1 : session.run();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  g_stop = true;
  dog.join();
  if (g_rank == 0)
    std::printf("%s: %d rank(s), %s memory, DUCT_CHANNEL=%s\n", any ? "FAILED" : "passed", g_size,
                kind == MemKind::device ? "device" : "host", std::getenv("DUCT_CHANNEL") ? std::getenv("DUCT_CHANNEL") : "auto");
  MPI_Finalize();
  return any ? 1 : 0;
}

}  // namespace duct::test
