// Reduce-scatter(_block) through node-local shared memory (single-node
// communicators, the whole vector up to one slot): every rank copies its
// input vector into its slot and, after the handshake, reduces its own block
// of every rank's slot in rank order 0..n-1 into its result (coll/shm.hpp).
// Each rank reads and reduces only its block: the shared-memory
// reduce-scatter of UCC's tl/shm; the fixed order gives the same bits as the
// other algorithms' rank-order reductions.
#include "coll/collectives.hpp"
#include "coll/reduce_scatter/common.hpp"
#include "coll/shm.hpp"

namespace duct::coll {

Sched reduce_scatter_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  ShmArea& s = *ctx.shm;
  const int n = ctx.size(), me = ctx.rank();
  const std::uint64_t k = s.next_seq();
  const int p = ShmArea::slot_of(k);
  const Layout blocks = reduce_scatter_blocks(a, n);
  const std::size_t esz = elem_size(a.dt.elem), total = blocks.total() * esz;
  const std::size_t mine = blocks.len[static_cast<std::size_t>(me)];
  const std::size_t off = blocks.off[static_cast<std::size_t>(me)] * esz, mbytes = mine * esz;
  SHM_CLAIM(s, k, me, n);
  // In place, sendbuf is recvbuf: the slot holds the input before the
  // result overwrites its first block.
  DUCT_CO_TRY(copy_local(s.slot(me, p), MemKind::host, a.sendbuf, a.send_kind, total));
  DUCT_CO_TRY(co_await shm_exchange(s, k, p, me, n));
  if (mine > 0) {
    void* acc = a.recvbuf;
    if (a.recv_kind == MemKind::device) DUCT_CO_TRY(ctx.scratch(MemKind::host, mbytes, 1, &acc));
    DUCT_CO_TRY(copy_local(acc, MemKind::host, at(s.slot(0, p), off), MemKind::host, mbytes));
    for (int q = 1; q < n; ++q)
      DUCT_CO_TRY(reduce_local(acc, acc, at(s.slot(q, p), off), mine, a.dt, a.op, MemKind::host, nullptr));
    if (acc != a.recvbuf) DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, acc, MemKind::host, mbytes));
  }
  s.finish(me, k);
  co_return Status::ok();
}

}  // namespace duct::coll
