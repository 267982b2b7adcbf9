// Allgather(v) by a ring: n-1 steps, each rank forwards the block it
// received last, segments pipelined (Thakur, Rabenseifner, Gropp 2005, §4.3;
// the allgather phase of Patarasuk and Yuan's ring). Each rank moves (n-1)/n
// of the result: the choice for long messages. Blocks may have any sizes and
// displacements (allgatherv).
#include "coll/collectives.hpp"

namespace duct::coll {

Sched allgather_ring(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  const Layout blocks = a.coll == select::Coll::allgatherv ? a.recv_layout : Layout::uniform(a.bytes, n);
  const std::size_t mine = static_cast<std::size_t>(me);
  // My block travels from the send buffer (clean: a peer reads it faster
  // than the copy below, just written). A schedule starts only when
  // awaited, so the copy is made before the ring's first message; made
  // beside it (all_of, the ring first) it measured the same (2 ranks,
  // 256 KiB-4 MiB, 2026-11-25).
  Link link{ctx, seq, Group{nullptr, n, me}};
  Sched ring = ring_allgather(ctx, link, a.recvbuf, a.recv_kind, blocks, 0, 0, a.sendbuf, a.send_kind);
  DUCT_CO_TRY(copy_local(at(a.recvbuf, blocks.off[mine]), a.recv_kind, a.sendbuf, a.send_kind, blocks.len[mine]));
  DUCT_CO_TRY(co_await std::move(ring));
  co_return Status::ok();
}

}  // namespace duct::coll
