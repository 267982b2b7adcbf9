// Allreduce through node-local shared memory, for small vectors.
//
// Every rank of a single-node communicator copies its vector into its slot
// of the shared area (coll/shm.hpp) and publishes the collective's sequence
// number; then every rank reduces all slots in rank order, 0, 1, ..., n-1,
// into its result. The flat, one-step structure is that of the shared-memory
// collectives of Open MPI's coll/sm and UCC's tl/shm; a reduction of n
// vectors in a fixed order gives the same bits on every rank.
//
// Slots are double-buffered by the parity of the sequence number k. Slot p
// was last used at k-2; a rank writes it only when every rank is done with
// k-2 (SHM_CLAIM: known without a look when the previous shared-memory call
// was also an all-to-all exchange, see coll/shm.hpp), so no reader ever sees
// a slot being overwritten. Device vectors
// are staged through host, as with recursive doubling: at these sizes two
// copies beat device work per peer.
//
// Cost: one slot write (the sequence number shares the first cache line with
// the data) and, per peer, one cache-line handoff for small vectors and a
// reduction: no message and no matching, below a UCX tag exchange on one
// node.
#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched allreduce_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  const std::uint64_t k = s.next_seq();
  const int p = static_cast<int>(k & 1);

  SHM_CLAIM(s, k, me, n);
  DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.sendbuf, a.send_kind, bytes));
  DUCT_CO_TRY(co_await shm_exchange(s, k, p, me, n));
  DUCT_CO_TRY(shm_reduce_slots(ctx, s, p, a, a.recvbuf, a.recv_kind));
  s.finish(me, k);
  co_return Status::ok();
}

}  // namespace duct::coll
