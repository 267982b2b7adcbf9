// duct reduce: element-wise reduction kernels, dst = a (op) b.
//
// Host kernels are plain loops the compiler vectorises (built with -O3);
// device kernels are CUDA (device.cu) launched on a caller's stream.
// Semantics follow MPI (MPI-4.0 §6.9.2) and Open MPI's reference loops:
//  - integer sum/prod wrap around (computed in the unsigned type),
//  - land/lor/lxor give 1 or 0,
//  - float16/bfloat16 are computed in float and rounded to nearest even,
//  - min/max are (a < b ? a : b) / (a > b ? a : b), a NaN operand wins,
//  - complex sums are sums of the parts, complex products follow C11 Annex
//    G (what GCC, and so the MPI library, computes),
//  - MINLOC/MAXLOC keep the smaller index on equal values, a NaN value wins.
// Every supported op is commutative and bit-exact under operand swap (up to
// the sign of equal zeros and the payload of two NaNs), so a fixed schedule
// gives the same bits on every rank.
#pragma once

#include <cstddef>

#include "core/dtype.hpp"
#include "core/status.hpp"

namespace duct::reduce {

// Where a host result goes: `cached` when it will be read again soon (for
// example forwarded to the next ring step), `streaming` when it will not:
// large out-of-place results then bypass the cache (non-temporal stores),
// saving the read-for-ownership of every destination line.
enum class Store { cached, streaming };

// dst[i] = a[i] op b[i] for i < count. dst may be a or b; no other overlap.
// All three are host-accessible memory. Returns Errc::internal for a
// combination duct does not implement (callers validate first).
Status host(void* dst, const void* a, const void* b, size_t count, Elem e, RedOp op,
            Store store = Store::cached) noexcept;

// Whether `op` is implemented for element type `e` on the host; the device
// has the same kernels except for the host_only() elements (long double).
bool supported(Elem e, RedOp op) noexcept;

// The same on device memory, enqueued on `stream` (a cudaStream_t). Returns
// Errc::not_supported when duct was built without CUDA and Errc::cuda when
// the launch fails.
Status device(void* dst, const void* a, const void* b, size_t count, Elem e, RedOp op,
              void* stream) noexcept;

// Whether device kernels were compiled into this build.
bool device_built() noexcept;

// ---- the device engine's kernels (lib/coll/engine.cpp) ----------------------
// One launch reads several ranks' device buffers directly (peers' through
// CUDA IPC mappings) and writes several: no staging, no per-peer copy.

constexpr int kMaxPeers = 16;  // ranks one engine launch can read or write

// For i < count: r = src[0][i] op src[1][i] op ... op src[nsrc-1][i], folded
// left to right (the same bits as the pairwise kernel applied in that order),
// stored to dst[0][i] ... dst[ndst-1][i]. A dst may be a src of the same
// index range (each element is read before it is written, by one thread);
// other overlaps are not allowed. Pointers are device memory (mapped peer
// memory included) of any alignment; 16-byte aligned ones take the vector path.
struct MultiReduce {
  const void* src[kMaxPeers] = {};
  void* dst[kMaxPeers] = {};
  int nsrc = 0, ndst = 0;
  size_t count = 0;  // elements
  // Most thread blocks of the launch (0: up to 4 per SM). Fewer leave SMs
  // to the application's kernels beside the collective (DUCT_ENGINE_BLOCKS,
  // as NCCL_MAX_CTAS bounds NCCL's).
  unsigned max_blocks = 0;
  // Device memory: when the word is not 0 the kernel does nothing (a
  // captured collective whose barrier failed; null: always run).
  const std::uint64_t* skip = nullptr;
};
Status device_multi(const MultiReduce& m, Elem e, RedOp op, void* stream) noexcept;

// Several device-to-device copies in one launch (entries of 0 bytes are
// skipped). Copies must not overlap one another.
constexpr int kMaxCopies = 32;
struct CopyList {
  const void* src[kMaxCopies] = {};
  void* dst[kMaxCopies] = {};
  size_t bytes[kMaxCopies] = {};
  int n = 0;
  unsigned max_blocks = 0;              // as MultiReduce::max_blocks
  const std::uint64_t* skip = nullptr;  // as MultiReduce::skip
};
Status device_copies(const CopyList& l, void* stream) noexcept;

// A barrier between the ranks of one node, on the GPU, for collectives
// captured into CUDA graphs (no host step at replay). word[q] is rank q's
// flag page (device memory, the peers' opened by CUDA IPC): counter
// kArrive and counter kDepart. A barrier adds one to this rank's counter
// and waits until every rank's counter is at least that value, so the
// ranks' barriers meet when each runs them in the same order (the scheme of
// NCCL's and PyTorch's symmetric-memory barriers). A wait longer than
// timeout_ns (0: none) stores q + 1 into *failed (host memory mapped for
// the device: the host reads it at the next call) and 1 into *skip (this
// rank's page); once skip is set, barriers and the kernels that carry
// skip do nothing.
constexpr int kArrive = 0, kDepart = 16;  // counters' offsets in a flag page, in 8-byte words
constexpr int kSkipWord = 32;
struct Barrier {
  std::uint64_t* word[kMaxPeers] = {};
  int n = 0, me = 0;
  std::uint64_t* failed = nullptr;
  std::uint64_t* skip = nullptr;
  std::uint64_t timeout_ns = 0;
};
// `which`: 1 arrive, 2 depart, 3 both (one kernel: a rank with no work of
// its own waits for its peers' inputs, then for their work).
Status device_barrier(const Barrier& b, int which, void* stream) noexcept;
// One kernel of one thread block: the arrive barrier, m's reduction, the
// depart barrier (small captured reductions: one graph node per call).
Status device_multi_fenced(const MultiReduce& m, const Barrier& b, Elem e, RedOp op, void* stream) noexcept;

}  // namespace duct::reduce
