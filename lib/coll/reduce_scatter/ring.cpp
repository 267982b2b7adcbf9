// Reduce-scatter(_block) by a ring (Patarasuk, Yuan, JPDC 2009): the
// reduce-scatter phase of the ring allreduce, segments pipelined; each rank
// moves (n-1)/n of the vector. The fallback for every size and rank count.
#include "coll/collectives.hpp"
#include "coll/reduce_scatter/common.hpp"

namespace duct::coll {

Sched reduce_scatter_ring(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  const Layout blocks = reduce_scatter_blocks(a, n);
  const std::size_t esz = elem_size(a.dt.elem), bytes = blocks.total() * esz;
  const MemKind kind = a.recv_kind;
  const void* src = a.sendbuf;  // the whole input (the receive buffer when in place)
  if (a.send_kind != kind) {
    void* staged = nullptr;
    DUCT_CO_TRY(ctx.scratch(kind, bytes, 3, &staged));
    DUCT_CO_TRY(copy_local(staged, kind, a.sendbuf, a.send_kind, bytes));
    src = staged;
  }
  void* dst = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 2, &dst));
  Link link{ctx, seq, Group{nullptr, n, me}};
  DUCT_CO_TRY(co_await ring_reduce_scatter(ctx, link, src, dst, kind, blocks, a.dt, a.op, 0, 0));
  const std::size_t mine = static_cast<std::size_t>(me);
  DUCT_CO_TRY(copy_local(a.recvbuf, kind, at(dst, blocks.off[mine] * esz), kind, blocks.len[mine] * esz));
  co_return Status::ok();
}

}  // namespace duct::coll
