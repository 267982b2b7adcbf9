// Broadcast through node-local shared memory (single-node communicators,
// messages up to one slot): the root copies the message into its slot,
// every rank copies it out after the handshake (coll/shm.hpp).
#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched bcast_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const std::uint64_t k = s.next_seq();
  const int p = static_cast<int>(k & 1), me = ctx.rank();
  if (me == a.root) DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.recvbuf, a.recv_kind, a.bytes));
  DUCT_CO_TRY(co_await shm_exchange(s, k, p, me, ctx.size()));
  if (me != a.root) DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, s.slot(a.root, p), MemKind::host, a.bytes));
  co_return Status::ok();
}

}  // namespace duct::coll
