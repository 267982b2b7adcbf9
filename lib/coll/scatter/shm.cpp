// Scatter through node-local shared memory (single-node communicators): the
// root copies every block into its slot, publishes it and returns (eager);
// each other rank waits for the root's slot and copies its own block
// (coll/shm.hpp). When the n blocks do not fit one slot they go in rounds,
// one sequence number each, every round carrying the next piece of every
// block (slot / n bytes of each): the root runs up to kSlots rounds ahead.
#include <algorithm>

#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched scatter_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::size_t un = static_cast<std::size_t>(n);
  const std::size_t piece = std::max<std::size_t>(ShmArea::kSlotBytes / un, 1);
  for (std::size_t off = 0; off < a.bytes; off += piece) {
    const std::size_t len = std::min(piece, a.bytes - off);
    const std::uint64_t k = s.next_seq();
    const int p = ShmArea::slot_of(k);
    // The root writes and goes; every other rank waits for the root's slot.
    if (me == a.root) {
      SHM_CLAIM(s, k, me, n);
      for (std::size_t q = 0; q < un; ++q)
        DUCT_CO_TRY(copy_local(at(s.slot(me, p), q * len), MemKind::host, at(a.sendbuf, q * a.bytes + off), a.send_kind,
                               len));
      shm_publish(s, k, p, me);
    } else {
      DUCT_CO_TRY(co_await shm_wait_rank(s, k, p, a.root));
    }
    if (!a.in_place)  // in place: the root's block stays in its send buffer
      DUCT_CO_TRY(copy_local(at(a.recvbuf, off), a.recv_kind, at(s.slot(a.root, p), static_cast<std::size_t>(me) * len),
                             MemKind::host, len));
    s.finish(me, k);
  }
  co_return Status::ok();
}

}  // namespace duct::coll
