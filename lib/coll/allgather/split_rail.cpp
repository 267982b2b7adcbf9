// Split-rail allgather(v): each rail gathers its ranks' blocks across the
// nodes, then each node's ranks exchange what their rails brought.
//
// With L ranks on each of N nodes: (1) the ranks of local index l on every
// node (rail l) run a ring allgather of their blocks over their own network
// device; (2) inside each node, every rank sends the N blocks its rail
// gathered to each other rank of the node (L-1 peers, all at once). Every
// block crosses the network once per receiving node and the L rails carry
// the node's share together: the multi-leader allgather of K. Kandalla, H.
// Subramoni, G. Santhanaraman, M. Koop, D. K. Panda, "Designing
// multi-leader-based allgather algorithms for multi-core clusters", IPDPS
// 2009, with every rank a leader of its rail (UCC cl/hier split_rail).
#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kRail = 0x000, kNode = 0x800;
}  // namespace

Sched allgather_split_rail(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  const int n = ctx.size(), me = ctx.rank();
  const Layout all = a.coll == select::Coll::allgatherv ? a.recv_layout : Layout::uniform(a.bytes, n);
  const MemKind kind = a.recv_kind;
  auto [node_link, rail_link, l, L, N] = levels(ctx, seq);
  auto block_of = [&](int rank) { return static_cast<std::size_t>(rank); };

  // (1) Rail l: member j's block is that of rank t.rail[j]; this rank's own
  // block is sent from the send buffer while its copy is made.
  Layout rail;
  for (int j = 0; j < N; ++j) {
    rail.off.push_back(all.off[block_of(t.rail[static_cast<std::size_t>(j)])]);
    rail.len.push_back(all.len[block_of(t.rail[static_cast<std::size_t>(j)])]);
  }
  Sched ring = ring_allgather(ctx, rail_link, a.recvbuf, kind, rail, 0, kRail, a.sendbuf, a.send_kind);
  if (!a.in_place)
    DUCT_CO_TRY(copy_local(at(a.recvbuf, all.off[block_of(me)]), kind, a.sendbuf, a.send_kind, all.len[block_of(me)]));
  DUCT_CO_TRY(co_await std::move(ring));

  // (2) Inside the node: this rank's rail blocks to every other local rank,
  // theirs from them. Step kNode + j tells apart node j's blocks.
  std::vector<Request> reqs;
  reqs.reserve(static_cast<std::size_t>(2 * (L - 1) * N));
  for (int m = 0; m < L; ++m) {
    if (m == l) continue;
    for (int j = 0; j < N; ++j) {
      const std::vector<int>& on = t.ranks_on[static_cast<std::size_t>(j)];
      const std::size_t theirs = block_of(on[static_cast<std::size_t>(m)]), ours = block_of(on[static_cast<std::size_t>(l)]);
      const std::uint32_t step = kNode + static_cast<std::uint32_t>(j);
      if (all.len[theirs] > 0) {
        reqs.emplace_back();
        DUCT_CO_TRY(node_link.recv(m, at(a.recvbuf, all.off[theirs]), all.len[theirs], kind, step, &reqs.back()));
      }
      if (all.len[ours] > 0) {
        reqs.emplace_back();
        DUCT_CO_TRY(node_link.send(m, at(a.recvbuf, all.off[ours]), all.len[ours], kind, step, &reqs.back()));
      }
    }
  }
  DUCT_CO_TRY(co_await wait(pointers(reqs)));
  co_return Status::ok();
}

}  // namespace duct::coll
