// Barrier by dissemination.
//
// D. Hensgen, R. Finkel, U. Manber, "Two algorithms for barrier
// synchronization", IJPP 17(1), 1988. In round k rank r signals rank r+2^k
// and waits for rank r-2^k: after ceil(log2 n) rounds every rank has heard,
// directly or not, from every other. Any n; zero-byte messages.
#include "coll/collectives.hpp"

namespace duct::coll {

Sched barrier_dissemination(Context& ctx, const CollArgs&, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  Link link{ctx, seq, Group{nullptr, n, me}};
  char token = 0;
  std::uint32_t round = 0;
  for (int k = 1; k < n; k <<= 1, ++round) {
    Request s, r;
    DUCT_CO_TRY(link.send(mod(me + k, n), &token, 0, MemKind::host, round, &s));
    DUCT_CO_TRY(link.recv(mod(me - k, n), &token, 0, MemKind::host, round, &r));
    DUCT_CO_TRY(co_await wait(s, r));
  }
  co_return Status::ok();
}

}  // namespace duct::coll
