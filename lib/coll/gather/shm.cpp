// Gather through node-local shared memory (single-node communicators):
// every rank copies its block into its slot and publishes it; a non-root
// then returns (eager), the root waits for every slot and copies all of them
// (coll/shm.hpp). With every rank as a root it is the shm allgather. Blocks
// larger than a slot go in slot-sized pieces, one sequence number each,
// through consecutive slots: non-roots run up to kSlots pieces ahead of the
// root.
#include <algorithm>

#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched shm_gather(Context& ctx, const CollArgs& a, bool everyone) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  for (std::size_t off = 0; off < a.bytes; off += ShmArea::kSlotBytes) {
    const std::size_t len = std::min(ShmArea::kSlotBytes, a.bytes - off);
    const std::uint64_t k = s.next_seq();
    const int p = ShmArea::slot_of(k);
    SHM_CLAIM(s, k, me, n);
    DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, at(a.sendbuf, off), a.send_kind, len));
    // A non-root writes and goes; the root waits for every slot.
    if (everyone || me == a.root) {
      DUCT_CO_TRY(co_await shm_exchange(s, k, p, me));
      // (In place this rank's block comes back to where it already is.)
      for (int q = 0; q < n; ++q)
        DUCT_CO_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(q) * a.bytes + off), a.recv_kind, s.slot(q, p),
                               MemKind::host, len));
    } else {
      shm_publish(s, k, p, me);
    }
    s.finish(me, k);
  }
  co_return Status::ok();
}

Sched gather_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_gather(ctx, a, /*everyone=*/false); }

}  // namespace duct::coll
