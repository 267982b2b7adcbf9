// Alltoall through node-local shared memory (single-node communicators, all
// of one rank's blocks together up to one slot): every rank copies its n
// blocks into its slot and, after the handshake, copies block `me` of every
// rank's slot into its result (coll/shm.hpp). One copy in and one copy out
// per byte, no message: the flat shared-memory exchange of Open MPI's
// coll/sm and UCC's tl/shm, applied to personalized blocks.
#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched alltoall_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::uint64_t k = s.next_seq();
  const int p = ShmArea::slot_of(k);
  const std::size_t b = a.bytes, un = static_cast<std::size_t>(n);
  SHM_CLAIM(s, k, me, n);
  // In place, sendbuf is recvbuf: the slot holds the input before the
  // result overwrites it.
  DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.sendbuf, a.send_kind, un * b));
  DUCT_CO_TRY(co_await shm_exchange(s, k, p, me, n));
  for (int q = 0; q < n; ++q)
    DUCT_CO_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(q) * b), a.recv_kind,
                           at(s.slot(q, p), static_cast<std::size_t>(me) * b), MemKind::host, b));
  s.finish(me, k);
  co_return Status::ok();
}

}  // namespace duct::coll
