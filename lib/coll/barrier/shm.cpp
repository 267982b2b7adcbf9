// Barrier through node-local shared memory (single-node communicators):
// every rank publishes the barrier's sequence number and waits until every
// rank has published it (coll/shm.hpp).
#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched barrier_shm(Context& ctx, const CollArgs&, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const std::uint64_t k = s.next_seq();
  // Only the ready flag of the slot is written (no data): the flag may be
  // overwritten at any time, as readers compare it with ">=".
  DUCT_CO_TRY(co_await shm_exchange(s, k, ShmArea::slot_of(k), ctx.rank()));
  s.finish(ctx.rank(), k);
  co_return Status::ok();
}

}  // namespace duct::coll
