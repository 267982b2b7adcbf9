// Gather(v) straight to the root: every rank sends its block to the root,
// which posts all receives at once (MPICH's algorithm for gatherv). One
// message per rank; the root's link carries everything, so for long
// messages this is as good as a tree and has no forwarding copies.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched gather_linear(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  Link link{ctx, seq, Group{nullptr, n, me}};
  if (me != a.root) {
    if (a.bytes > 0) {
      Request r;
      DUCT_CO_TRY(link.send(a.root, a.sendbuf, a.bytes, a.send_kind, 0, &r));
      DUCT_CO_TRY(co_await wait(r));
    }
    co_return Status::ok();
  }
  const Layout recv = a.coll == select::Coll::gatherv ? a.recv_layout : Layout::uniform(a.bytes, n);
  const std::size_t m = static_cast<std::size_t>(me);
  DUCT_CO_TRY(copy_local(at(a.recvbuf, recv.off[m]), a.recv_kind, a.sendbuf, a.send_kind, recv.len[m]));
  std::vector<Request> recvs;
  for (int q = 0; q < n; ++q) {
    const std::size_t uq = static_cast<std::size_t>(q);
    if (q == me || recv.len[uq] == 0) continue;
    recvs.emplace_back();
    DUCT_CO_TRY(link.recv(q, at(a.recvbuf, recv.off[uq]), recv.len[uq], a.recv_kind, 0, &recvs.back()));
  }
  DUCT_CO_TRY(co_await wait(recvs));
  co_return Status::ok();
}

}  // namespace duct::coll
