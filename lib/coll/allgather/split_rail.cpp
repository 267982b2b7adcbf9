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
// Pipelined: the blocks go in pieces of about kPiece bytes, piece k's rail
// allgather beside piece k-1's node exchange.
#include <algorithm>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
// Message steps: phase base + 16 x piece + ring step or node index.
constexpr std::uint32_t kRail = 0x000, kNode = 0x800;
constexpr std::size_t kPiece = 1u << 20;

// Inside the node: this rank's rail blocks (`all`, by rank) to every other
// local rank, theirs from them; step + j tells apart node j's blocks.
Sched node_exchange(Context& ctx, Link node_link, void* buf, MemKind kind, Layout all, std::uint32_t step) {
  const Topology& t = ctx.topo;
  const int l = t.local_rank, L = node_link.g.n, N = t.num_nodes;
  std::vector<Request> reqs;
  reqs.reserve(static_cast<std::size_t>(2 * (L - 1) * N));
  for (int m = 0; m < L; ++m) {
    if (m == l) continue;
    for (int j = 0; j < N; ++j) {
      const std::vector<int>& on = t.ranks_on[static_cast<std::size_t>(j)];
      const auto theirs = static_cast<std::size_t>(on[static_cast<std::size_t>(m)]);
      const auto ours = static_cast<std::size_t>(on[static_cast<std::size_t>(l)]);
      const std::uint32_t st = step + static_cast<std::uint32_t>(j);
      if (all.len[theirs] > 0) {
        reqs.emplace_back();
        DUCT_CO_TRY(node_link.recv(m, at(buf, all.off[theirs]), all.len[theirs], kind, st, &reqs.back()));
      }
      if (all.len[ours] > 0) {
        reqs.emplace_back();
        DUCT_CO_TRY(node_link.send(m, at(buf, all.off[ours]), all.len[ours], kind, st, &reqs.back()));
      }
    }
  }
  DUCT_CO_TRY(co_await wait(reqs));
  co_return Status::ok();
}
}  // namespace

Sched allgather_split_rail(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  const int n = ctx.size(), me = ctx.rank();
  const Layout all = a.coll == select::Coll::allgatherv ? a.recv_layout : Layout::uniform(a.bytes, n);
  const MemKind kind = a.recv_kind;
  auto [node_link, rail_link, l, L, N] = levels(ctx, seq);
  (void)l;
  const auto mine = static_cast<std::size_t>(me);
  if (!a.in_place) DUCT_CO_TRY(copy_local(at(a.recvbuf, all.off[mine]), kind, a.sendbuf, a.send_kind, all.len[mine]));

  const std::size_t S = pipeline_segments(all.max_len(), kPiece, N);
  const std::uint32_t stride = segment_stride(S);
  for (std::size_t k = 0; k < S + 1; ++k) {
    std::vector<Sched> level;
    if (k < S) {  // (1) rail l: member j's block is that of rank t.rail[j]
      const Layout p = piece_of(all, k, S);
      Layout rail;
      for (int j = 0; j < N; ++j) {
        rail.off.push_back(p.off[static_cast<std::size_t>(t.rail[static_cast<std::size_t>(j)])]);
        rail.len.push_back(p.len[static_cast<std::size_t>(t.rail[static_cast<std::size_t>(j)])]);
      }
      level.push_back(ring_allgather(ctx, rail_link, a.recvbuf, kind, std::move(rail), 0,
                                     kRail + static_cast<std::uint32_t>(k) * stride));
    }
    if (k >= 1)  // (2) the node exchange of the piece before
      level.push_back(node_exchange(ctx, node_link, a.recvbuf, kind, piece_of(all, k - 1, S),
                                    kNode + static_cast<std::uint32_t>(k - 1) * stride));
    if (!level.empty()) DUCT_CO_TRY(co_await all_of(std::move(level)));
  }
  co_return Status::ok();
}

}  // namespace duct::coll
