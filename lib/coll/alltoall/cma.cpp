// All-to-all by cross-memory attach (single-node communicators,
// coll/cma.hpp): every rank publishes its send buffer's address and copies
// its block of every other rank's straight into its result, starting with
// the rank after it. In place the send data is the receive buffer, which
// the other ranks read while this rank receives: it reads its blocks into
// host scratch and moves them into place once every rank has read its
// (rather than offering a copy of its buffer: a peer's read of lines just
// written by another core is the slow case of cross-memory attach).
#include "coll/cma.hpp"

namespace duct::coll {

namespace {
struct AlltoallCma {
  Context& ctx;
  const CollArgs& a;
  int me, n;
  void* held = nullptr;  // in place: the blocks read, until after()
  Status source(const void** out) {
    if (a.in_place) DUCT_TRY(ctx.scratch(MemKind::host, static_cast<std::size_t>(n) * a.bytes, 1, &held));
    return cma_source(ctx, a.sendbuf, a.send_kind, static_cast<std::size_t>(n) * a.bytes, out);
  }
  Status local() {
    if (a.in_place) return Status::ok();
    const std::size_t mine = static_cast<std::size_t>(me) * a.bytes;
    return copy_local(at(a.recvbuf, mine), a.recv_kind, at(a.sendbuf, mine), a.send_kind, a.bytes);
  }
  bool reads(int) const { return true; }
  Status read(int q, std::uint64_t from) {
    const std::size_t to = static_cast<std::size_t>(q) * a.bytes;
    const std::uint64_t mine = static_cast<std::uint64_t>(me) * a.bytes;
    if (held) return cma_read(*ctx.shm, q, at(held, to), from + mine, a.bytes);
    return cma_read_into(ctx, q, from + mine, at(a.recvbuf, to), a.recv_kind, a.bytes);
  }
  bool read_by(int) const { return true; }
  Status after() {
    if (!held) return Status::ok();
    for (int q = 0; q < n; ++q) {
      if (q == me) continue;
      const std::size_t off = static_cast<std::size_t>(q) * a.bytes;
      DUCT_TRY(copy_local(at(a.recvbuf, off), a.recv_kind, at(held, off), MemKind::host, a.bytes));
    }
    return Status::ok();
  }
};
}  // namespace

Sched alltoall_cma(Context& ctx, const CollArgs& a, std::uint32_t) {
  return cma_call(ctx, a, AlltoallCma{ctx, a, ctx.rank(), ctx.size()});
}

}  // namespace duct::coll
