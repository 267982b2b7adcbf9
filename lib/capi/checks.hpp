// duct capi: argument checks shared by the entry points, and the PMPI
// fallback for what duct does not serve natively.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/status.hpp"
#include "memory/cuda.hpp"

namespace duct::capi {

// "MPI_SUM" for a predefined op, "a user-defined op" otherwise.
std::string op_text(MPI_Op op);
// "MPI_FLOAT", the name set with MPI_Type_set_name, or "a derived datatype".
std::string type_text(MPI_Datatype t);

// MPI is initialized and not finalized.
Status check_mpi_ready(const char* call);
// comm is a valid handle (not MPI_COMM_NULL); *inter is set.
Status check_comm(MPI_Comm comm, bool* inter);
Status check_count(MPI_Count count, const char* name);
// A datatype argument: not MPI_DATATYPE_NULL (Errc::type), committed
// (Errc::uncommitted).
Status check_datatype(MPI_Datatype t, const char* name);
// A buffer argument: not MPI_IN_PLACE unless allowed, not NULL when data is
// moved, unless the datatype's data lies away from the buffer pointer
// (true_lb != 0: NULL is then MPI_BOTTOM with absolute addresses).
Status check_buffer(const void* buf, const char* name, MPI_Count count, bool in_place_allowed, MPI_Aint true_lb = 0);

// Memory kind of `bytes` of data starting at buf + lb; device memory must
// be on the current device. When a CUDA device is present (or DUCT_CHECK=1)
// a host pointer with bytes > 0 must be mapped (Errc::unmapped): another
// process's device pointer is refused rather than crashing a copy.
Status buffer_kind(const void* buf, const char* name, std::size_t bytes, memory::MemKind* kind, MPI_Aint lb = 0);

// No buffer, block or displacement in bytes is larger than this: user
// address spaces are 2^47 to 2^57 bytes, so anything beyond cannot be memory
// and is refused as an overflow rather than followed.
constexpr std::uint64_t kMaxSpan = std::uint64_t{1} << 60;

// count x size in bytes, refusing what does not fit the address space
// (beyond kMaxSpan: Errc::overflow, naming `what`).
Status mul_bytes(MPI_Count count, std::size_t size, const char* what, std::size_t* out);
// a x b without overflowing MPI_Count (Errc::overflow).
Status mul_count(MPI_Count a, MPI_Count b, const char* what, MPI_Count* out);
// `ranks` blocks of `each` elements of `size` bytes: *total elements, with
// neither the count nor its bytes overflowing (Errc::overflow).
Status blocks_total(MPI_Count ranks, MPI_Count each, std::size_t size, const char* what, MPI_Count* total);

// Byte ranges [a, a+na) and [b, b+nb) overlap.
bool overlaps(const void* a, std::size_t na, const void* b, std::size_t nb);
// A byte range [at, at + n) of a buffer argument.
struct Bytes {
  const void* at;
  std::size_t n;
};
// Whether a range of `a` overlaps a range of `b` (ranges of one argument
// may overlap each other, as MPI allows for send blocks): both sorted, then
// one sweep.
bool any_overlap(std::vector<Bytes> a, std::vector<Bytes> b);

// Log, once per (call, reason), that a call goes to the MPI library.
void note_fallback(const char* call, const std::string& reason);

// Copy `count` elements of `dt` starting at `buf` between device memory and
// a host staging buffer (the bytes the datatype touches, true extent).
struct Staged {
  void* host = nullptr;      // points at the element origin inside the staging buffer
  void* storage = nullptr;
  std::size_t span = 0;      // bytes covered
  std::ptrdiff_t lb = 0;     // true lower bound
  bool device = true;        // the staged buffer is device memory (else host: memcpy)
  ~Staged();
};
// A host copy of `count` elements of `dt` at `buf` (device memory, or host
// memory where `device` is false), holding `count` whole elements of the
// datatype's extent; `copy`: with the buffer's span copied in.
Status stage_in(const void* buf, MPI_Count count, MPI_Datatype dt, bool copy, Staged* out, bool device = true);
// The span back to the buffer it was staged from.
Status stage_out(void* buf, const Staged& s);

}  // namespace duct::capi
