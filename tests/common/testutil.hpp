// Support for the MPI test suites (tests/mpi, tests/gpu).
//
// - A watchdog thread: every collective a test makes is announced with
//   Pending("DUCT_Allreduce count=7 ..."); if it has not returned after
//   TEST_WATCHDOG_S seconds (default 120), the watchdog prints which call
//   hangs on which rank and ends the process, so mpirun ends the job: a hang
//   becomes a failure that names the pending operation.
// - Buffers of either memory kind, filled and read from the host.
// - Assertions use CHECK (never REQUIRE) around collectives: a failed check
//   on one rank must not make it skip a collective the others enter.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "memory/cuda.hpp"

namespace duct::test {

using memory::MemKind;

// The memory kind the suite runs on (host for tests/mpi, device for tests/gpu).
MemKind suite_kind();

int rank();
int size();

// Announce / end a pending collective (RAII).
class Pending {
 public:
  explicit Pending(std::string what);
  ~Pending();
};

// A buffer of the suite's memory kind.
class Buf {
 public:
  Buf(std::size_t bytes, MemKind kind);
  ~Buf();
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  void* data() const { return p_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* host);
  void fill(unsigned char byte);
  std::vector<unsigned char> download() const;

 private:
  void* p_ = nullptr;
  std::size_t bytes_;
  MemKind kind_;
};

// A buffer of ints of the suite's memory kind, initialised from a host vector.
struct IBuf {
  Buf buf;
  std::size_t n;
  explicit IBuf(const std::vector<int>& init)
      : buf(std::max<std::size_t>(init.size(), 1) * sizeof(int), suite_kind()), n(init.size()) {
    if (n) buf.upload(init.data());
  }
  int* p() { return static_cast<int*>(buf.data()); }
  std::vector<int> get() const {
    std::vector<unsigned char> h = buf.download();
    std::vector<int> out(n);
    if (n) std::memcpy(out.data(), h.data(), n * sizeof(int));
    return out;
  }
};

// Run the Catch2 session under MPI; the exit status is nonzero when any
// rank failed. `kind` is the suite's memory kind; with MemKind::device and no
// usable CUDA device every rank exits with 77 (meson: skipped).
int mpi_main(int argc, char** argv, MemKind kind);

}  // namespace duct::test
