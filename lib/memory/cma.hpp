// duct memory: cross-memory attach, one copy out of another process.
#pragma once

#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace duct::memory {

// Copy `bytes` from address `src` of process `pid` into `dst` (this
// process's host memory) with process_vm_readv(2), as often as the kernel
// copies less than asked. Returns 0, or the errno that stopped it (EFAULT
// for a read of nothing); *done: the bytes copied before it stopped.
inline int cma_read_all(long pid, void* dst, std::uint64_t src, std::size_t bytes, std::size_t* done) {
  *done = 0;
  while (*done < bytes) {
    iovec local{static_cast<char*>(dst) + *done, bytes - *done};
    iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(src + *done)), bytes - *done};
    const ssize_t n = process_vm_readv(static_cast<pid_t>(pid), &local, 1, &remote, 1, 0);
    if (n > 0) {
      *done += static_cast<std::size_t>(n);
      continue;
    }
    const int err = n < 0 ? errno : EFAULT;
    if (err != EINTR) return err;
  }
  return 0;
}

}  // namespace duct::memory
