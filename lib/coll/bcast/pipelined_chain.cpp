// Broadcast along a pipelined chain.
//
// J. L. Traff, A. Ripke, "Optimal broadcast for fully connected
// processor-node networks", JPDC 68(7), 2008 (pipelined broadcast). Ranks,
// counted from the root, form a chain 0 -> 1 -> ... -> n-1; the message
// flows in segments of DUCT_RING_SEGMENT bytes and every rank forwards a
// segment as soon as it has it. For long messages the time approaches one
// message time plus n-1 segment times.
#include <vector>

#include "coll/collectives.hpp"
#include "core/config.hpp"

namespace duct::coll {

Sched chain_hop(Link link, int peer, void* buf, std::size_t bytes, MemKind kind, bool send, std::uint32_t step) {
  Request r;
  if (send)
    DUCT_CO_TRY(link.send(peer, buf, bytes, kind, step, &r));
  else
    DUCT_CO_TRY(link.recv(peer, buf, bytes, kind, step, &r));
  DUCT_CO_TRY(co_await wait(r));
  co_return Status::ok();
}

Sched bcast_pipelined_chain(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size();
  const int vr = mod(ctx.rank() - a.root, n);
  Link link{ctx, seq, Group{nullptr, n, ctx.rank()}};
  const int prev = mod(ctx.rank() - 1, n), next = mod(ctx.rank() + 1, n);
  const Segments sg(a.bytes, 1, config::get().ring_segment);
  std::vector<Request> recvs(vr > 0 ? sg.count() : 0);
  for (std::size_t k = 0; k < recvs.size(); ++k)
    DUCT_CO_TRY(link.recv(prev, at(a.recvbuf, sg.offset(k)), sg.size(k), a.recv_kind, 0, &recvs[k]));
  std::vector<Request> sends;
  for (std::size_t k = 0; k < sg.count(); ++k) {
    if (vr > 0) DUCT_CO_TRY(co_await wait(recvs[k]));
    if (vr < n - 1) {
      sends.emplace_back();
      DUCT_CO_TRY(link.send(next, at(a.recvbuf, sg.offset(k)), sg.size(k), a.recv_kind, 0, &sends.back()));
      DUCT_CO_TRY(reap(sends));
    }
  }
  DUCT_CO_TRY(co_await wait(sends));
  co_return Status::ok();
}

}  // namespace duct::coll
