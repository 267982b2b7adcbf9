// Reduce through node-local shared memory (single-node communicators):
// every rank copies its vector into its slot and publishes it; a non-root
// then returns (eager), the root waits for every slot and reduces them in
// rank order (coll/shm.hpp). With every rank as a root it is the shm
// allreduce.
//
// A vector larger than a slot goes in slot-sized chunks, each under a
// sequence number of its own, through consecutive slots: non-roots run up to
// kSlots chunks ahead of the root, so their copies in overlap its
// reductions.
#include <algorithm>

#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched shm_reduce(Context& ctx, const CollArgs& a, bool everyone) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::size_t esz = elem_size(a.dt.elem), bytes = a.count * esz;
  // Whole elements per chunk.
  const std::size_t chunk = ShmArea::kSlotBytes / esz * esz;
  for (std::size_t off = 0; off < bytes; off += chunk) {
    const std::size_t len = std::min(chunk, bytes - off);
    const std::uint64_t k = s.next_seq();
    const int p = ShmArea::slot_of(k);
    SHM_CLAIM(s, k, me, n);
    DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, at(a.sendbuf, off), a.send_kind, len));
    // A non-root writes and goes; the root waits for every slot.
    if (everyone || me == a.root) {
      DUCT_CO_TRY(co_await shm_exchange(s, k, p, me));
      DUCT_CO_TRY(shm_reduce_slots(ctx, s, p, a.dt, a.op, len / esz, at(a.recvbuf, off), a.recv_kind));
    } else {
      shm_publish(s, k, p, me);
    }
    s.finish(me, k);
  }
  co_return Status::ok();
}

Sched reduce_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_reduce(ctx, a, /*everyone=*/false); }

}  // namespace duct::coll
