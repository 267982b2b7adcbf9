// Scatter through node-local shared memory (single-node communicators, all
// blocks together up to one slot): the root copies every block into its
// slot, publishes it and returns (eager); each other rank waits for the
// root's slot and copies its own block (coll/shm.hpp).
#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched scatter_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::uint64_t k = s.next_seq();
  const int p = ShmArea::slot_of(k);
  // The root writes and goes; every other rank waits for the root's slot.
  if (me == a.root) {
    SHM_CLAIM(s, k, me, n);
    DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.sendbuf, a.send_kind, static_cast<std::size_t>(n) * a.bytes));
    shm_publish(s, k, p, me);
  } else {
    DUCT_CO_TRY(co_await shm_wait_rank(s, k, p, a.root));
  }
  if (!a.in_place)  // in place: the root's block stays in its send buffer
    DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, at(s.slot(a.root, p), static_cast<std::size_t>(me) * a.bytes),
                           MemKind::host, a.bytes));
  s.finish(me, k);
  co_return Status::ok();
}

}  // namespace duct::coll
