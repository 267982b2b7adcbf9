// duct reduce: element-wise reduction kernels, dst = a (op) b.
//
// Host kernels are plain loops the compiler vectorises (built with -O3);
// device kernels are CUDA (device.cu) launched on a caller's stream.
// Semantics follow MPI (MPI-4.0 §6.9.2) and Open MPI's reference loops:
//  - integer sum/prod wrap around (computed in the unsigned type),
//  - land/lor/lxor give 1 or 0,
//  - float16/bfloat16 are computed in float and rounded to nearest even,
//  - min/max are (a < b ? a : b) / (a > b ? a : b).
// Every supported op is commutative and bit-exact under operand swap, so a
// fixed schedule gives the same bits on every rank.
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

// Whether `op` is implemented for element type `e` (host and device).
bool supported(Elem e, RedOp op) noexcept;

// The same on device memory, enqueued on `stream` (a cudaStream_t). Returns
// Errc::not_supported when duct was built without CUDA and Errc::cuda when
// the launch fails.
Status device(void* dst, const void* a, const void* b, size_t count, Elem e, RedOp op,
              void* stream) noexcept;

// Whether device kernels were compiled into this build.
bool device_built() noexcept;

}  // namespace duct::reduce
