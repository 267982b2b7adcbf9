// Broadcast through node-local shared memory (single-node communicators):
// the root copies the message into its slot, publishes it and returns, as
// with an eager send; every other rank waits for the root's slot and copies
// it out (coll/shm.hpp). The root waits only when a reader is kSlots
// broadcasts behind.
//
// A message larger than a slot travels in slot-sized chunks, each under a
// sequence number of its own, through consecutive slots: the root runs up to
// kSlots chunks ahead of the slowest reader, so its copies in and the
// readers' copies out overlap (the copy-in/copy-out pipeline of Open MPI's
// shared-memory transport, here per collective rather than per message).
#include <algorithm>

#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched bcast_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int me = ctx.rank();
  for (std::size_t off = 0; off < a.bytes; off += ShmArea::kSlotBytes) {
    const std::size_t len = std::min(ShmArea::kSlotBytes, a.bytes - off);
    const std::uint64_t k = s.next_seq();
    const int p = ShmArea::slot_of(k);
    if (me == a.root) {
      // Write and go: the readers copy it out when they get there.
      SHM_CLAIM(s, k, me, ctx.size());
      DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, at(a.recvbuf, off), a.recv_kind, len));
      shm_publish(s, k, p, me);
    } else {
      DUCT_CO_TRY(co_await shm_wait_rank(s, k, p, a.root));
      DUCT_CO_TRY(copy_local(at(a.recvbuf, off), a.recv_kind, s.slot(a.root, p), MemKind::host, len));
    }
    s.finish(me, k);
  }
  co_return Status::ok();
}

}  // namespace duct::coll
