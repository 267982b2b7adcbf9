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

#include "core/dtype.hpp"
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

// The predefined reduction ops duct serves natively, by MPI handle.
struct TOp {
  const char* name;
  MPI_Op mpi;
  RedOp op;
};
inline const TOp kRedOps[] = {
    {"MPI_SUM", MPI_SUM, RedOp::sum},       {"MPI_PROD", MPI_PROD, RedOp::prod},       {"MPI_MIN", MPI_MIN, RedOp::min},
    {"MPI_MAX", MPI_MAX, RedOp::max},       {"MPI_LAND", MPI_LAND, RedOp::land},       {"MPI_LOR", MPI_LOR, RedOp::lor},
    {"MPI_LXOR", MPI_LXOR, RedOp::lxor},    {"MPI_BAND", MPI_BAND, RedOp::band},       {"MPI_BOR", MPI_BOR, RedOp::bor},
    {"MPI_BXOR", MPI_BXOR, RedOp::bxor},    {"MPI_MINLOC", MPI_MINLOC, RedOp::minloc}, {"MPI_MAXLOC", MPI_MAXLOC, RedOp::maxloc}};

// Whether the `guard` bytes on either side of `bytes` of payload in `out`
// (a downloaded receive buffer) still hold the fill byte 0xa5.
inline bool guards_intact(const std::vector<unsigned char>& out, std::size_t guard, std::size_t bytes) {
  for (std::size_t i = 0; i < guard; ++i)
    if (out[i] != 0xa5 || out[guard + bytes + i] != 0xa5) return false;
  return true;
}

// Count the elements i < n for which `same(i)` is false; `first` gets the
// first of them (n when none).
template <class Same>
std::size_t count_differing(std::size_t n, Same&& same, std::size_t* first) {
  std::size_t wrong = 0;
  *first = n;
  for (std::size_t i = 0; i < n; ++i)
    if (!same(i) && !wrong++) *first = i;
  return wrong;
}

// Run the Catch2 session under MPI; the exit status is nonzero when any
// rank failed. `kind` is the suite's memory kind; with MemKind::device and no
// usable CUDA device every rank exits with 77 (meson: skipped).
int mpi_main(int argc, char** argv, MemKind kind);

}  // namespace duct::test
