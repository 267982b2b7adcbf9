// Gather through node-local shared memory (single-node communicators,
// blocks up to one slot): every rank copies its block into its slot and
// publishes it; a non-root then returns (eager), the root waits for every
// slot and copies all of them (coll/shm.hpp).
#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched gather_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::uint64_t k = s.next_seq();
  const int p = ShmArea::slot_of(k);
  SHM_CLAIM(s, k, me, n);
  DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.sendbuf, a.send_kind, a.bytes));
  // A non-root writes and goes; the root waits for every slot.
  if (me == a.root) {
    DUCT_CO_TRY(co_await shm_exchange(s, k, p, me, n));
    for (int q = 0; q < n; ++q)
      DUCT_CO_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(q) * a.bytes), a.recv_kind, s.slot(q, p),
                             MemKind::host, a.bytes));
  } else {
    shm_publish(s, k, p, me);
  }
  s.finish(me, k);
  co_return Status::ok();
}

}  // namespace duct::coll
