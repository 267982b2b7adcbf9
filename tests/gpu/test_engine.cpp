// The device engine's hard cases on a real GPU (tests/gpu only):
// - ranks passing different memory kinds in one call (device on some, host
//   on others): every rank must agree on the path and get MPI's answer;
// - buffers freed and reallocated between calls, send and receive side, so
//   a peer's new allocation lands where an old mapping still is (the
//   "already mapped" case of CUDA IPC): correct results, no error left
//   behind for the next kernel launch;
// - memory that cannot be exported (cudaMallocAsync is not reachable from
//   here, so host-registered and offset pointers stand in for the other
//   shapes: a buffer in the middle of an allocation).
// References: the MPI library's own collective on host copies.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "duct/duct.h"
#include "testutil.hpp"

using namespace duct;
using namespace duct::test;

namespace {

std::vector<float> input(int r, std::size_t count, int salt) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<float>((r + 1) * 3 + static_cast<int>(i % 13) + salt);
  return v;
}

std::vector<float> mpi_allreduce(const std::vector<float>& in) {
  std::vector<float> out(in.size());
  MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  return out;
}

std::vector<float> as_floats(const std::vector<unsigned char>& raw) {
  std::vector<float> v(raw.size() / sizeof(float));
  std::memcpy(v.data(), raw.data(), v.size() * sizeof(float));
  return v;
}

}  // namespace

TEST_CASE("ranks with different memory kinds in one call agree on the path", "[gpu][engine]") {
  if (suite_kind() != MemKind::device || size() < 2) return;
  const std::size_t counts[] = {1, 7, 1000, 65536 + 3, 1 << 20};
  for (int pattern = 0; pattern < 3; ++pattern) {
    // 0: odd ranks host; 1: only the last rank host; 2: only rank 0 host
    const bool host = pattern == 0 ? rank() % 2 == 1 : pattern == 1 ? rank() == size() - 1 : rank() == 0;
    const MemKind kind = host ? MemKind::host : MemKind::device;
    for (std::size_t count : counts) {
      std::vector<float> in = input(rank(), count, pattern);
      std::vector<float> expect = mpi_allreduce(in);
      Buf s(count * sizeof(float), kind), r(count * sizeof(float), kind);
      s.upload(in.data());
      {
        Pending p("DUCT_Allreduce mixed kinds pattern " + std::to_string(pattern) + " count " + std::to_string(count));
        CHECK(DUCT_Allreduce(s.data(), r.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) ==
              MPI_SUCCESS);
      }
      CHECK(as_floats(r.download()) == expect);
      // A broadcast from a rank of the other kind, and an allgather.
      const int root = size() - 1;
      std::vector<float> b = input(root, count, 7);
      Buf bb(count * sizeof(float), kind);
      if (rank() == root) bb.upload(b.data());
      {
        Pending p("DUCT_Bcast mixed kinds count " + std::to_string(count));
        CHECK(DUCT_Bcast(bb.data(), static_cast<int>(count), MPI_FLOAT, root, MPI_COMM_WORLD) == MPI_SUCCESS);
      }
      CHECK(as_floats(bb.download()) == b);
      Buf g(count * sizeof(float) * static_cast<std::size_t>(size()), kind);
      {
        Pending p("DUCT_Allgather mixed kinds count " + std::to_string(count));
        CHECK(DUCT_Allgather(s.data(), static_cast<int>(count), MPI_FLOAT, g.data(), static_cast<int>(count),
                             MPI_FLOAT, MPI_COMM_WORLD) == MPI_SUCCESS);
      }
      std::vector<float> all(count * static_cast<std::size_t>(size()));
      MPI_Allgather(in.data(), static_cast<int>(count), MPI_FLOAT, all.data(), static_cast<int>(count), MPI_FLOAT,
                    MPI_COMM_WORLD);
      CHECK(as_floats(g.download()) == all);
    }
  }
}

TEST_CASE("buffers freed and reallocated between calls: send and receive side", "[gpu][engine][ipc]") {
  if (suite_kind() != MemKind::device || size() < 2) return;
  // Each iteration allocates new send and receive buffers of a size that
  // cycles, frees the old ones first, and sometimes keeps a spacer alive, so
  // new allocations land over, inside and around freed ones that peers may
  // still have mapped.
  const std::size_t sizes[] = {4 << 10, 3 << 20, 256 << 10, 8 << 20, 1 << 20, 64};
  bool wrong = false;
  int failed_calls = 0;
  for (int i = 0; i < 120; ++i) {
    const std::size_t count = sizes[i % 6] / sizeof(float) + static_cast<std::size_t>(i % 3);
    std::vector<float> in = input(rank(), count, i);
    std::vector<float> expect = mpi_allreduce(in);
    Buf* spacer = i % 4 == 1 ? new Buf(512 << 10, MemKind::device) : nullptr;
    Buf s(count * sizeof(float), MemKind::device), r(count * sizeof(float), MemKind::device);
    s.upload(in.data());
    {
      Pending p("DUCT_Allreduce on reallocated buffers, iteration " + std::to_string(i));
      failed_calls += DUCT_Allreduce(s.data(), r.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                                     MPI_COMM_WORLD) != MPI_SUCCESS;
    }
    wrong = wrong || as_floats(r.download()) != expect;
    // The same buffers in place, then a reduce_scatter_block into a fresh
    // receive buffer: a kernel launch after whatever the opens reported.
    r.upload(in.data());
    {
      Pending p("DUCT_Allreduce in place on reallocated buffers, iteration " + std::to_string(i));
      failed_calls += DUCT_Allreduce(MPI_IN_PLACE, r.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                                     MPI_COMM_WORLD) != MPI_SUCCESS;
    }
    wrong = wrong || as_floats(r.download()) != expect;
    const std::size_t block = count / static_cast<std::size_t>(size());
    if (block > 0) {
      Buf rs(block * sizeof(float), MemKind::device);
      {
        Pending p("DUCT_Reduce_scatter_block on reallocated buffers, iteration " + std::to_string(i));
        failed_calls += DUCT_Reduce_scatter_block(s.data(), rs.data(), static_cast<int>(block), MPI_FLOAT, MPI_SUM,
                                                  MPI_COMM_WORLD) != MPI_SUCCESS;
      }
      std::vector<float> mine(expect.begin() + static_cast<std::ptrdiff_t>(block * static_cast<std::size_t>(rank())),
                              expect.begin() + static_cast<std::ptrdiff_t>(block * static_cast<std::size_t>(rank() + 1)));
      wrong = wrong || as_floats(rs.download()) != mine;
    }
    delete spacer;
  }
  CHECK(failed_calls == 0);
  CHECK_FALSE(wrong);
}

TEST_CASE("a buffer in the middle of an allocation, on every rank", "[gpu][engine]") {
  if (suite_kind() != MemKind::device || size() < 2) return;
  const std::size_t count = 10007;
  Buf big((count + 64) * sizeof(float), MemKind::device);
  std::vector<float> in = input(rank(), count + 64, 3);
  big.upload(in.data());
  // Offsets of 1..5 floats: not 16-byte aligned on some ranks (scalar path).
  const std::size_t off = static_cast<std::size_t>(rank() % 5 + 1);
  float* p = static_cast<float*>(big.data()) + off;
  std::vector<float> mine(in.begin() + static_cast<std::ptrdiff_t>(off), in.begin() + static_cast<std::ptrdiff_t>(off + count));
  std::vector<float> expect = mpi_allreduce(mine);
  {
    Pending pend("DUCT_Allreduce in place at an offset");
    CHECK(DUCT_Allreduce(MPI_IN_PLACE, p, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  }
  std::vector<float> all = as_floats(big.download());
  std::vector<float> got(all.begin() + static_cast<std::ptrdiff_t>(off), all.begin() + static_cast<std::ptrdiff_t>(off + count));
  CHECK(got == expect);
  // Nothing outside the vector was touched.
  for (std::size_t i = 0; i < off; ++i) CHECK(all[i] == in[i]);
  for (std::size_t i = off + count; i < count + 64; ++i) CHECK(all[i] == in[i]);
}
