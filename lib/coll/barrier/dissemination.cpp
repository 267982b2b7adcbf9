// Barrier by dissemination, flat and in two levels.
//
// D. Hensgen, R. Finkel, U. Manber, "Two algorithms for barrier
// synchronization", IJPP 17(1), 1988. In round k rank r signals rank r+2^k
// and waits for rank r-2^k: after ceil(log2 n) rounds every rank has heard,
// directly or not, from every other. Any n; zero-byte messages.
//
// Across nodes of L ranks each (split_rail): the same rounds inside each
// node (ceil(log2 L), over the node's links), then over each rail
// (ceil(log2 N) rounds among the ranks of one local index, every rail at
// once over its own NIC). After the first level a rank has heard from its
// whole node; after the second from each rail peer, which had heard from
// its own node: from every rank. The flat form on ranks numbered node by
// node crosses a NIC in every round (rank L-1 signals rank L at distance
// 1), so each of its ceil(log2 n) rounds costs a network latency; the two
// levels pay ceil(log2 L) node latencies and ceil(log2 N) network ones
// (simulated, 1024 nodes x 8: 26.0 against 23.0 us,
// docs/benchmarks/2026-12-01-sim-scale-16m.md), the dimension order of a
// hierarchical barrier as in Open MPI coll/han and MVAPICH2.
#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
// Dissemination over link.g, its rounds numbered from *round on.
Sched disseminate(Link link, std::uint32_t* round) {
  const int n = link.g.n, me = link.g.me;
  char token = 0;
  for (int k = 1; k < n; k <<= 1, ++*round) {
    Request s, r;
    DUCT_CO_TRY(link.send(mod(me + k, n), &token, 0, MemKind::host, *round, &s));
    DUCT_CO_TRY(link.recv(mod(me - k, n), &token, 0, MemKind::host, *round, &r));
    DUCT_CO_TRY(co_await wait(s, r));
  }
  co_return Status::ok();
}
}  // namespace

Sched barrier_dissemination(Context& ctx, const CollArgs&, std::uint32_t seq) {
  std::uint32_t round = 0;
  DUCT_CO_TRY(co_await disseminate(Link{ctx, seq, Group{nullptr, ctx.size(), ctx.rank()}}, &round));
  co_return Status::ok();
}

Sched barrier_split_rail(Context& ctx, const CollArgs&, std::uint32_t seq) {
  DUCT_CO_TRY(rails(ctx.topo));
  const Levels lv = levels(ctx, seq);
  std::uint32_t round = 0;
  DUCT_CO_TRY(co_await disseminate(lv.node, &round));
  DUCT_CO_TRY(co_await disseminate(lv.rail, &round));
  co_return Status::ok();
}

}  // namespace duct::coll
