// Broadcast along a binomial tree.
//
// R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
// Communication Operations in MPICH", IJHPCA 19(1), 2005, §4.1. With ranks
// numbered relative to the root, rank v receives from v minus its lowest set
// bit and forwards to v + 2^k for every 2^k below that bit: ceil(log2 n)
// steps, the whole message each time; the choice for small messages.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
// The lowest set bit of vr (its parent is vr minus it), or the first power
// of two >= n for the root (vr 0).
int parent_bit(int vr, int n) {
  int mask = 1;
  while (mask < n && !(vr & mask)) mask <<= 1;
  return mask;
}
}  // namespace

Status binomial_sends(Link link, const void* buf, std::size_t bytes, MemKind kind, int root, std::uint32_t step,
                      std::vector<Request>* sends) {
  const int n = link.g.n, me = link.g.me;
  const int vr = mod(me - root, n);
  for (int mask = parent_bit(vr, n) >> 1; mask > 0; mask >>= 1) {
    if (vr + mask < n) {
      sends->emplace_back();
      DUCT_TRY(link.send(mod(me + mask, n), buf, bytes, kind, step, &sends->back()));
    }
  }
  return Status::ok();
}

Sched binomial_bcast(Context&, Link link, void* buf, std::size_t bytes, MemKind kind, int root,
                     std::uint32_t step_base) {
  const int n = link.g.n, me = link.g.me;
  const int vr = mod(me - root, n);
  if (const int mask = parent_bit(vr, n); mask < n) {
    Request r;
    DUCT_CO_TRY(link.recv(mod(me - mask, n), buf, bytes, kind, step_base, &r));
    DUCT_CO_TRY(co_await wait(r));
  }
  std::vector<Request> sends;
  DUCT_CO_TRY(binomial_sends(link, buf, bytes, kind, root, step_base, &sends));
  DUCT_CO_TRY(co_await wait(sends));
  co_return Status::ok();
}

Sched bcast_binomial(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  Link link{ctx, seq, Group{nullptr, ctx.size(), ctx.rank()}};
  DUCT_CO_TRY(co_await binomial_bcast(ctx, link, a.recvbuf, a.bytes, a.recv_kind, a.root, 0));
  co_return Status::ok();
}

}  // namespace duct::coll
