// Split-rail broadcast: the root's node scatters the message over its L
// ranks, each rail carries its 1/L to the other nodes, every node
// allgathers.
//
// With L ranks on each of N nodes and the root at local index lr of node
// rn: (1) the root sends block l (1/L of the message) to local rank l of
// its node; (2) rail l broadcasts block l from node rn's member to every
// node (binomial over the rail: one message for two nodes); (3) a ring
// allgather among each node's ranks assembles the L blocks everywhere. The
// network carries the message once per receiving node, split over the L
// rails (van de Geijn's scatter + allgather broadcast, Barnett et al.,
// "Interprocessor collective communication library (InterCom)", SHPCC 1994,
// with the scatter inside the node and one broadcast per rail, as UCC's
// cl/hier split_rail and NCCL's one-ring-per-NIC do). Pipelined as the
// split-rail allreduce: in step k, segment k's scatter, segment k-1's rail
// broadcast and segment k-2's node allgather run side by side.
#include <algorithm>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
// Message steps: phase base + 16 x segment + step.
constexpr std::uint32_t kScatter = 0x000, kRail = 0x400, kNodeAg = 0x800;
constexpr std::size_t kSegment = 4u << 20;

// (1) inside the root's node: block m of `blocks` (bytes) from the root to local rank m.
Sched scatter_blocks(Link node_link, void* buf, MemKind kind, Layout blocks, int lr, bool root, std::uint32_t step) {
  const int L = node_link.g.n, l = node_link.g.me;
  if (root) {
    std::vector<Request> sends(static_cast<std::size_t>(L));
    for (int m = 0; m < L; ++m) {
      const auto b = static_cast<std::size_t>(m);
      if (m != lr && blocks.len[b] > 0)
        DUCT_CO_TRY(node_link.send(m, at(buf, blocks.off[b]), blocks.len[b], kind, step, &sends[b]));
    }
    DUCT_CO_TRY(co_await wait(pointers(sends)));
  } else if (blocks.len[static_cast<std::size_t>(l)] > 0) {
    Request r;
    const auto b = static_cast<std::size_t>(l);
    DUCT_CO_TRY(node_link.recv(lr, at(buf, blocks.off[b]), blocks.len[b], kind, step, &r));
    DUCT_CO_TRY(co_await wait(r));
  }
  co_return Status::ok();
}
}  // namespace

Sched bcast_split_rail(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  const bool root = ctx.rank() == a.root;
  void* buf = a.recvbuf;
  const MemKind kind = root ? a.send_kind : a.recv_kind;
  const int rn = t.node_of[static_cast<std::size_t>(a.root)], lr = t.local_rank_of[static_cast<std::size_t>(a.root)];
  auto [node_link, rail_link, l, L, N] = levels(ctx, seq);
  const auto mine = static_cast<std::size_t>(l);

  const Layout seg = pipeline_layout(a.bytes, 1, kSegment, L, N);  // bytes
  const std::size_t segs = seg.len.size();
  const std::uint32_t stride = segment_stride(segs);
  for (std::size_t k = 0; k < segs + 2; ++k) {
    std::vector<Sched> level;
    if (k < segs && t.node == rn)  // (1) scatter segment k inside the root's node
      level.push_back(scatter_blocks(node_link, at(buf, seg.off[k]), kind, Layout::even(seg.len[k], L), lr, root,
                                     kScatter + static_cast<std::uint32_t>(k) * stride));
    if (k >= 1 && k - 1 < segs) {  // (2) block l of segment k-1 along rail l, from the root's node
      const std::size_t c = k - 1;
      const Layout blocks = Layout::even(seg.len[c], L);
      if (blocks.len[mine] > 0)
        level.push_back(binomial_bcast(ctx, rail_link, at(buf, seg.off[c] + blocks.off[mine]), blocks.len[mine], kind, rn,
                                       kRail + static_cast<std::uint32_t>(c) * stride));
    }
    if (k >= 2) {  // (3) every node's ranks exchange their blocks of segment k-2
      const std::size_t c = k - 2;
      level.push_back(ring_allgather(ctx, node_link, at(buf, seg.off[c]), kind, Layout::even(seg.len[c], L), 0,
                                     kNodeAg + static_cast<std::uint32_t>(c) * stride));
    }
    if (!level.empty()) DUCT_CO_TRY(co_await all_of(std::move(level)));
  }
  co_return Status::ok();
}

}  // namespace duct::coll
