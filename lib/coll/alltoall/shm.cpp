// Alltoall through node-local shared memory (single-node communicators):
// every rank copies its n blocks into its slot and, after the handshake,
// copies block `me` of every rank's slot into its result (coll/shm.hpp).
// One copy in and one copy out per byte, no message: the flat shared-memory
// exchange of Open MPI's coll/sm and UCC's tl/shm, applied to personalized
// blocks. When the n blocks do not fit one slot they go in rounds, one
// sequence number and handshake each, every round carrying the next piece
// (slot / n bytes) of every block.
#include <algorithm>

#include "coll/collectives.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched alltoall_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::size_t un = static_cast<std::size_t>(n), b = a.bytes;
  const std::size_t piece = std::max<std::size_t>(ShmArea::kSlotBytes / un, 1);
  for (std::size_t off = 0; off < b; off += piece) {
    const std::size_t len = std::min(piece, b - off);
    const std::uint64_t k = s.next_seq();
    const int p = ShmArea::slot_of(k);
    SHM_CLAIM(s, k, me, n);
    // In place, sendbuf is recvbuf: this round's pieces are in the slot
    // before the result overwrites them, and later rounds' pieces are not
    // overwritten by this one.
    for (std::size_t q = 0; q < un; ++q)
      DUCT_CO_TRY(copy_local(at(s.slot(me, p), q * len), MemKind::host, at(a.sendbuf, q * b + off), a.send_kind, len));
    DUCT_CO_TRY(co_await shm_exchange(s, k, p, me));
    for (std::size_t q = 0; q < un; ++q)
      DUCT_CO_TRY(copy_local(at(a.recvbuf, q * b + off), a.recv_kind,
                             at(s.slot(static_cast<int>(q), p), static_cast<std::size_t>(me) * len), MemKind::host, len));
    s.finish(me, k);
  }
  co_return Status::ok();
}

}  // namespace duct::coll
