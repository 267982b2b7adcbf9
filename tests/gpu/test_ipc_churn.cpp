// The cuda_ipc channel's handle cache under buffer churn: thousands of
// collectives, each on a freshly allocated device buffer (so peers see new
// allocations, often at addresses of freed ones), must give correct results
// and grow neither the number of open IPC mappings nor device memory use.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "duct/duct.h"
#include "memory/cuda.hpp"
#include "memory/ipc_cache.hpp"
#include "testutil.hpp"

using namespace duct;
using namespace duct::test;

TEST_CASE("allocate, reduce, free, reallocate: no growth of IPC mappings or device memory", "[gpu][ipc]") {
  if (suite_kind() != MemKind::device) return;
  memory::IpcCache& cache = memory::IpcCache::instance();
  const std::size_t capacity = cache.capacity();
  const int n = size();
  const std::size_t sizes[] = {64 << 10, 1 << 20, 3 << 20};  // above the inline limit: IPC path
  std::size_t free_start = 0, total = 0, free_now = 0;
  bool wrong = false;
  for (int i = 0; i < 3000; ++i) {
    const std::size_t count = sizes[i % 3] / sizeof(float);
    std::vector<float> in(count, static_cast<float>(rank() + 1 + i % 7)), out(count, 0.0f);
    Buf buf(count * sizeof(float), MemKind::device);
    buf.upload(in.data());
    {
      Pending p("DUCT_Allreduce on a fresh device buffer, iteration " + std::to_string(i));
      CHECK(DUCT_Allreduce(MPI_IN_PLACE, buf.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) ==
            MPI_SUCCESS);
    }
    if (i % 100 == 0) {  // spot-check the values (every element, every 100th iteration)
      std::vector<unsigned char> raw = buf.download();
      const float* r = reinterpret_cast<const float*>(raw.data());
      const float expect = static_cast<float>(n * (n + 1) / 2 + n * (i % 7));
      for (std::size_t k = 0; k < count; ++k) wrong = wrong || r[k] != expect;
    }
    if (i == 99) REQUIRE(memory::cuda::mem_info(&free_start, &total).is_ok());
    if (i >= 100 && i % 500 == 0) {
      auto s = cache.stats();
      INFO("iteration " << i << ": IPC cache " << cache.describe());
      CHECK(s.open <= capacity);
      CHECK(s.pinned == 0);
      REQUIRE(memory::cuda::mem_info(&free_now, &total).is_ok());
      // Device memory in use may move by allocator granularity, never by
      // the buffers of hundreds of iterations.
      CHECK(free_now + (64u << 20) >= free_start);
    }
  }
  CHECK_FALSE(wrong);
  auto s = cache.stats();
  INFO("IPC cache at the end: " << cache.describe());
  CHECK(s.open <= capacity);
  // The IPC path was used (by some rank: with the device engine on one GPU
  // only rank 0 maps its peers' buffers).
  unsigned long long used = s.misses + s.hits, all_used = 0;
  MPI_Allreduce(&used, &all_used, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  const char* ch = std::getenv("DUCT_CHANNEL");
  // Only the auto channel (cuda_ipc, the engine) maps peers' memory:
  // DUCT_CHANNEL=ucx or mpi moves it through the network channel.
  if (n > 1 && !(ch && *ch && std::string(ch) != "auto")) CHECK(all_used > 0);
}

TEST_CASE("another process's device pointer is refused, not dereferenced", "[gpu][errors]") {
  if (suite_kind() != MemKind::device || size() < 2) return;
  // Rank 0 sends the address of one of its device buffers; rank 1 passes it
  // as its own. Unless that address happens to be valid in rank 1 too (the
  // same virtual address allocated there), duct must refuse it.
  Buf mine(1 << 20, MemKind::device);
  std::uint64_t addr = reinterpret_cast<std::uintptr_t>(mine.data());
  MPI_Bcast(&addr, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  MPI_Comm self;
  MPI_Comm_dup(MPI_COMM_SELF, &self);
  MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
  if (rank() == 1) {
    void* foreign = reinterpret_cast<void*>(static_cast<std::uintptr_t>(addr));
    memory::PtrInfo info;
    REQUIRE(memory::cuda::query(foreign, &info).is_ok());
    if (info.kind == MemKind::device) {
      WARN("rank 0's device address is also a device address here: nothing to test");
    } else {
      std::vector<float> out(16);
      int rc = DUCT_Allreduce(foreign, out.data(), 16, MPI_FLOAT, MPI_SUM, self);
      int cls = 0;
      MPI_Error_class(rc, &cls);
      CHECK(rc != MPI_SUCCESS);
      CHECK(cls == DUCT_Error_class(DUCT_ERRCLASS_UNMAPPED));
    }
  }
  MPI_Comm_free(&self);
}
