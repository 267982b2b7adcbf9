// Reduce-scatter(_block) through node-local shared memory (single-node
// communicators): every rank copies its input vector into its slot and,
// after the handshake, reduces its own block of every rank's slot in rank
// order 0..n-1 into its result (coll/shm.hpp). Each rank reads and reduces
// only its block: the shared-memory reduce-scatter of UCC's tl/shm; the
// fixed order gives the same bits as the other algorithms' rank-order
// reductions. When the vector does not fit one slot it goes in rounds, one
// sequence number and handshake each, every round carrying the next piece
// (slot / n bytes) of every block.
#include <algorithm>

#include "coll/collectives.hpp"
#include "coll/reduce_scatter/common.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched reduce_scatter_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::size_t un = static_cast<std::size_t>(n);
  const Layout blocks = reduce_scatter_blocks(a, n);
  const std::size_t esz = elem_size(a.dt.elem);
  const std::size_t mine = blocks.len[static_cast<std::size_t>(me)], mbytes = mine * esz;
  std::size_t longest = 0;
  for (std::size_t len : blocks.len) longest = std::max(longest, len);
  // Elements of every block per round.
  const std::size_t piece = std::max<std::size_t>(ShmArea::kSlotBytes / (un * esz), 1);
  const bool several_rounds = longest > piece;
  // The result goes to the start of recvbuf; in place, that is input of
  // other blocks that later rounds still read: accumulate aside then.
  void* acc = a.recvbuf;
  if (mine > 0 && (a.recv_kind == MemKind::device || (a.in_place && several_rounds)))
    DUCT_CO_TRY(ctx.scratch(MemKind::host, mbytes, 1, &acc));
  for (std::size_t off = 0; off < longest; off += piece) {
    const std::uint64_t k = s.next_seq();
    const int p = ShmArea::slot_of(k);
    SHM_CLAIM(s, k, me, n);
    for (std::size_t q = 0; q < un; ++q) {
      if (blocks.len[q] <= off) continue;
      const std::size_t len = std::min(piece, blocks.len[q] - off);
      DUCT_CO_TRY(copy_local(at(s.slot(me, p), q * piece * esz), MemKind::host, at(a.sendbuf, (blocks.off[q] + off) * esz),
                             a.send_kind, len * esz));
    }
    DUCT_CO_TRY(co_await shm_exchange(s, k, p, me));
    if (mine > off) {
      const std::size_t len = std::min(piece, mine - off);
      const std::size_t at_slot = static_cast<std::size_t>(me) * piece * esz;
      void* dst = at(acc, off * esz);
      DUCT_CO_TRY(copy_local(dst, MemKind::host, at(s.slot(0, p), at_slot), MemKind::host, len * esz));
      for (int q = 1; q < n; ++q)
        DUCT_CO_TRY(reduce_local(dst, dst, at(s.slot(q, p), at_slot), len, a.dt, a.op, MemKind::host, nullptr));
    }
    s.finish(me, k);
  }
  if (acc != a.recvbuf) DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, acc, MemKind::host, mbytes));
  co_return Status::ok();
}

}  // namespace duct::coll
