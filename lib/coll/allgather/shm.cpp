// Allgather through node-local shared memory (single-node communicators,
// blocks up to one slot): every rank copies its block into its slot and,
// after the handshake, copies every slot into its result (coll/shm.hpp).
#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched allgather_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::uint64_t k = s.next_seq();
  const int p = ShmArea::slot_of(k);
  const std::size_t b = a.bytes;
  SHM_CLAIM(s, k, me, n);
  DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.sendbuf, a.send_kind, b));
  DUCT_CO_TRY(co_await shm_exchange(s, k, p, me, n));
  for (int q = 0; q < n; ++q)
    DUCT_CO_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(q) * b), a.recv_kind, s.slot(q, p), MemKind::host, b));
  s.finish(me, k);
  co_return Status::ok();
}

}  // namespace duct::coll
