// Split-rail broadcast: the root's node scatters the message over its L
// ranks, each rail carries its 1/L to the other nodes, every node
// allgathers.
//
// With L ranks on each of N nodes and the root at local index lr of node
// rn: (1) the root sends block l (1/L of the message) to local rank l of
// its node; (2) rail l broadcasts block l from node rn's member to every
// node; (3) each node's ranks exchange their blocks, every rank sending its
// own to every other at once (a ring until 2026-11-28), and hold all L. The
// network carries the message once per receiving node, split over the L
// rails (van de Geijn's scatter + allgather broadcast, Barnett et al.,
// "Interprocessor collective communication library (InterCom)", SHPCC 1994,
// with the scatter inside the node and one broadcast per rail, as UCC's
// cl/hier split_rail and NCCL's one-ring-per-NIC do). Pipelined as the
// split-rail allreduce: in step k, segment k's scatter, segment k-1's rail
// broadcast and segment k-2's node allgather run side by side. The rail
// level is a binomial tree per segment, or, where the pipeline is long
// enough (rail_chain), a chain of the nodes from node rn on: node d after
// rn forwards segment c to node d+1 in step c+d+1 while it receives segment
// c+1, so every rail link carries each block once (a binomial tree sends it
// ceil(log2 N) times from the root's node; Traff and Ripke's pipelined
// broadcast, as bcast/pipelined_chain.cpp, with segments as its pieces).
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
    DUCT_CO_TRY(co_await wait(sends));
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

  const Layout seg = pipeline_layout(a.bytes, 1, rooted_segment(a.bytes, N, L, kSegment), L, N);  // bytes
  const std::size_t segs = seg.len.size();
  const std::uint32_t stride = segment_stride(segs);
  // This node's place after the root's node, and when its blocks of segment
  // c arrive: step c+1 for a tree (or the root's node), c+d for a chain.
  const int d = mod(t.node - rn, N);
  const bool chain = rail_chain(segs, N);
  const std::size_t lag = chain ? static_cast<std::size_t>(std::max(d, 1)) : 1;
  const int ranks = L;  // clang 14 cannot capture a structured binding
  // Segment c cut into the node's L blocks.
  const auto block = [&seg, ranks](std::size_t c) { return Layout::even(seg.len[c], ranks); };
  for (std::size_t k = 0; k < segs + lag + 1; ++k) {
    std::vector<Sched> level;
    if (k < segs && t.node == rn)  // (1) scatter segment k inside the root's node
      level.push_back(scatter_blocks(node_link, at(buf, seg.off[k]), kind, Layout::even(seg.len[k], L), lr, root,
                                     kScatter + static_cast<std::uint32_t>(k) * stride));
    // (2) block l of a segment along rail l, from the root's node on.
    if (!chain) {
      if (k >= 1 && k - 1 < segs) {
        const std::size_t c = k - 1;
        const Layout blocks = block(c);
        if (blocks.len[mine] > 0)
          level.push_back(binomial_bcast(ctx, rail_link, at(buf, seg.off[c] + blocks.off[mine]), blocks.len[mine],
                                         kind, rn, kRail + static_cast<std::uint32_t>(c) * stride));
      }
    } else {
      const auto ud = static_cast<std::size_t>(d);
      if (d > 0 && k >= ud && k - ud < segs) {  // receive segment k-d from the node before
        const std::size_t c = k - ud;
        const Layout blocks = block(c);
        if (blocks.len[mine] > 0)
          level.push_back(chain_hop(rail_link, mod(t.node - 1, N), at(buf, seg.off[c] + blocks.off[mine]),
                                    blocks.len[mine], kind, false, kRail + static_cast<std::uint32_t>(c) * stride));
      }
      if (d < N - 1 && k >= ud + 1 && k - ud - 1 < segs) {  // forward segment k-d-1 to the next node
        const std::size_t c = k - ud - 1;
        const Layout blocks = block(c);
        if (blocks.len[mine] > 0)
          level.push_back(chain_hop(rail_link, mod(t.node + 1, N), at(buf, seg.off[c] + blocks.off[mine]),
                                    blocks.len[mine], kind, true, kRail + static_cast<std::uint32_t>(c) * stride));
      }
    }
    if (k >= lag + 1) {  // (3) every node's ranks exchange their blocks of the segment that arrived last step
      const std::size_t c = k - lag - 1;
      level.push_back(direct_allgather(node_link, at(buf, seg.off[c]), kind, block(c),
                                       kNodeAg + static_cast<std::uint32_t>(c) * stride));
    }
    if (!level.empty()) DUCT_CO_TRY(co_await all_of(std::move(level)));
  }
  co_return Status::ok();
}

}  // namespace duct::coll
