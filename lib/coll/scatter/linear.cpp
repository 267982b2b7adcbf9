// Scatter(v) straight from the root: the root sends each block to its rank
// (MPICH's algorithm for scatterv); every other rank posts one receive.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched scatter_linear(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  Link link{ctx, seq, Group{nullptr, n, me}};
  if (me != a.root) {
    if (a.bytes > 0) {
      Request r;
      DUCT_CO_TRY(link.recv(a.root, a.recvbuf, a.bytes, a.recv_kind, 0, &r));
      DUCT_CO_TRY(co_await wait(r));
    }
    co_return Status::ok();
  }
  const Layout send = a.coll == select::Coll::scatterv ? a.send_layout : Layout::uniform(a.bytes, n);
  std::vector<Request> sends;
  for (int q = 0; q < n; ++q) {
    const std::size_t uq = static_cast<std::size_t>(q);
    if (q == me || send.len[uq] == 0) continue;
    sends.emplace_back();
    DUCT_CO_TRY(link.send(q, at(a.sendbuf, send.off[uq]), send.len[uq], a.send_kind, 0, &sends.back()));
  }
  const std::size_t m = static_cast<std::size_t>(me);
  DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, at(a.sendbuf, send.off[m]), a.send_kind, send.len[m]));
  DUCT_CO_TRY(co_await wait(sends));
  co_return Status::ok();
}

}  // namespace duct::coll
