// Reduce through node-local shared memory (single-node communicators,
// vectors up to one slot): every rank copies its vector into its slot and
// publishes it; a non-root then returns (eager), the root waits for every
// slot and reduces them in rank order (coll/shm.hpp).
#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched shm_reduce(Context& ctx, const CollArgs& a, bool everyone) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  const std::uint64_t k = s.next_seq();
  const int p = static_cast<int>(k & 1);
  SHM_CLAIM(s, k, me, n);
  DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.sendbuf, a.send_kind, bytes));
  // A non-root writes and goes; the root waits for every slot.
  if (everyone || me == a.root) {
    DUCT_CO_TRY(co_await shm_exchange(s, k, p, me, n));
    DUCT_CO_TRY(shm_reduce_slots(ctx, s, p, a, a.recvbuf, a.recv_kind));
  } else {
    shm_publish(s, k, p, me);
  }
  s.finish(me, k);
  co_return Status::ok();
}

Sched reduce_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_reduce(ctx, a, /*everyone=*/false); }

}  // namespace duct::coll
