// Scatter through node-local shared memory (single-node communicators, all
// blocks together up to one slot): the root copies every block into its
// slot; after the handshake each rank copies its own (coll/shm.hpp).
#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched scatter_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::uint64_t k = s.next_seq();
  const int p = static_cast<int>(k & 1);
  if (me == a.root)
    DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.sendbuf, a.send_kind, static_cast<std::size_t>(n) * a.bytes));
  DUCT_CO_TRY(co_await shm_exchange(s, k, p, me, n));
  if (!a.in_place)  // in place: the root's block stays in its send buffer
    DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, at(s.slot(a.root, p), static_cast<std::size_t>(me) * a.bytes),
                           MemKind::host, a.bytes));
  co_return Status::ok();
}

}  // namespace duct::coll
