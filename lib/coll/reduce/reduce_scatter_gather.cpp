// Reduce by a ring reduce-scatter followed by a gather at the root.
//
// R. Rabenseifner, "Optimization of collective reduction operations", ICCS
// 2004; Thakur, Rabenseifner, Gropp 2005, §4.2. Each rank ends the
// reduce-scatter holding one reduced block (moving (n-1)/n of the vector),
// then sends it to the root: about 2(n-1)/n of the vector per rank instead of
// log2(n) times all of it. The choice for long vectors.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kGatherStep = 0x900;
}

Sched reduce_reduce_scatter_gather(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  const bool root = me == a.root;
  const std::size_t esz = elem_size(a.dt.elem), bytes = a.count * esz;
  const MemKind kind = root ? a.recv_kind : a.send_kind;
  // The reduce-scatter needs a whole vector to reduce into: the root's
  // receive buffer, scratch elsewhere; its input must be of the same kind.
  void* dst = a.recvbuf;
  if (!root) DUCT_CO_TRY(ctx.scratch(kind, bytes, 2, &dst));
  const void* src = a.sendbuf;
  if (a.send_kind != kind) {
    DUCT_CO_TRY(copy_local(dst, kind, a.sendbuf, a.send_kind, bytes));
    src = dst;
  }
  Link link{ctx, seq, Group{nullptr, n, me}};
  const Layout blocks = Layout::even(a.count, n);
  DUCT_CO_TRY(co_await ring_reduce_scatter(ctx, link, src, dst, kind, blocks, a.dt, a.op, 0, 0));
  // Gather the reduced blocks: block q from rank q.
  const std::size_t mine = static_cast<std::size_t>(me);
  if (!root) {
    Request r;
    DUCT_CO_TRY(link.send(a.root, at(dst, blocks.off[mine] * esz), blocks.len[mine] * esz, kind, kGatherStep, &r));
    DUCT_CO_TRY(co_await wait(r));
    co_return Status::ok();
  }
  std::vector<Request> recvs(static_cast<std::size_t>(n));
  for (int q = 0; q < n; ++q) {
    if (q == me) continue;
    const std::size_t uq = static_cast<std::size_t>(q);
    DUCT_CO_TRY(link.recv(q, at(a.recvbuf, blocks.off[uq] * esz), blocks.len[uq] * esz, kind, kGatherStep, &recvs[uq]));
  }
  DUCT_CO_TRY(co_await wait(recvs));
  co_return Status::ok();
}

}  // namespace duct::coll
