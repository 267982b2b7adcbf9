#include "coll/cma.hpp"

#include <cerrno>
#include <cstring>

#include "memory/cma.hpp"

namespace duct::coll {

Status cma_read(const ShmArea& s, int q, void* dst, std::uint64_t src, std::size_t bytes) {
  std::size_t done = 0;
  const int err = memory::cma_read_all(s.pid(q), dst, src, bytes, &done);
  if (err == 0) return Status::ok();
  if (err == ESRCH)
    return make_error(Errc::peer_failed, "rank %d (pid %ld) is gone: its process ended while this rank read its buffer",
                      q, s.pid(q));
  return make_error(Errc::internal, "process_vm_readv of %zu bytes from rank %d (pid %ld) at %#llx: %s", bytes - done,
                    q, s.pid(q), static_cast<unsigned long long>(src + done), std::strerror(err));
}

Status cma_source(Context& ctx, const void* buf, MemKind kind, std::size_t bytes, const void** out) {
  if (kind == MemKind::host) {
    *out = buf;
    return Status::ok();
  }
  void* staged = nullptr;
  DUCT_TRY(ctx.scratch(MemKind::host, bytes, 0, &staged));
  DUCT_TRY(copy_local(staged, MemKind::host, buf, kind, bytes));
  *out = staged;
  return Status::ok();
}

Status cma_read_into(Context& ctx, int q, std::uint64_t src, void* dst, MemKind kind, std::size_t bytes) {
  if (kind == MemKind::host) return cma_read(*ctx.shm, q, dst, src, bytes);
  void* staged = nullptr;
  DUCT_TRY(ctx.scratch(MemKind::host, bytes, 1, &staged));
  DUCT_TRY(cma_read(*ctx.shm, q, staged, src, bytes));
  return copy_local(dst, kind, staged, MemKind::host, bytes);
}

}  // namespace duct::coll
