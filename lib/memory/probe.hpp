// duct memory: is a host address mapped in this process?
//
// A pointer that is neither device memory of this process's CUDA context
// nor mapped host memory (typically another process's device pointer, sent
// over by mistake) would crash the first host copy from it. duct asks the
// kernel instead: process_vm_readv(2) on its own pid reads one byte and
// fails with EFAULT where nothing readable is mapped, without a signal.
//
// Pages found readable are remembered in a small direct-mapped cache, so
// buffers reused call after call cost a few instructions. (A page unmapped
// after it was checked stays "readable" in the cache until its slot is
// reused; the check is a safety net, not a guarantee.)
#pragma once

#include <cstddef>

namespace duct::memory {

enum class Probe { readable, unmapped, unknown };

// Whether the byte at `p` can be read. `unknown` when the kernel refuses the
// probe itself (a seccomp filter without process_vm_readv); callers then
// assume the memory is fine.
Probe probe_host(const void* p) noexcept;

// Forget the cache (unit tests).
void probe_reset() noexcept;

}  // namespace duct::memory
