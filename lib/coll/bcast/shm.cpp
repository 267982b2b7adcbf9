// Broadcast through node-local shared memory (single-node communicators,
// messages up to one slot): the root copies the message into its slot,
// publishes it and returns, as with an eager send; every other rank waits for
// the root's slot and copies it out (coll/shm.hpp). The root waits only when
// a reader is two broadcasts behind.
#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched bcast_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const std::uint64_t k = s.next_seq();
  const int p = static_cast<int>(k & 1), me = ctx.rank();
  if (me == a.root) {
    // Write and go: the readers copy it out when they get there.
    SHM_CLAIM(s, k, me, ctx.size());
    DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.recvbuf, a.recv_kind, a.bytes));
    shm_publish(s, k, p, me);
  } else {
    DUCT_CO_TRY(co_await shm_wait_rank(s, k, p, a.root));
    DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, s.slot(a.root, p), MemKind::host, a.bytes));
  }
  s.finish(me, k);
  co_return Status::ok();
}

}  // namespace duct::coll
