// Split-rail reduce: reduce-scatter inside each node, each rail reduces its
// 1/L of the vector towards the root's node, the root's node gathers.
//
// With L ranks on each of N nodes and the root at local index lr of node
// rn: (1) a reduce-scatter among each node's ranks (each sends every other
// its block at once; a ring until 2026-11-28) leaves local rank l with
// block l of the node's sum; (2) rail l reduces block l towards node
// rn's member; (3) on node rn, local rank l sends
// its block to the root. The network carries 1/L of the vector per rail
// (Rabenseifner's reduce-scatter + gather reduce, "Optimization of
// collective reduction operations", ICCS 2004, split into node and rail
// levels as UCC's cl/hier split_rail does). Pipelined as the split-rail
// allreduce: in step k, segment k's node reduce-scatter, segment k-1's
// rail reduce and segment k-2's gather run side by side. The rail level is
// a binomial tree per segment, or, where the pipeline is long enough
// (rail_chain), a chain ending at node rn: the node d after rn receives
// segment c from node d+1 in step c+N-1-d, adds it to its own block and
// passes the sum to node d-1 in the next step, so every rail link carries
// each block once (the reduction counterpart of the chain broadcast).
// On 8 or more nodes the rail level reduces a block of 32 KiB or more by
// Rabenseifner's algorithm instead (rail_halving): recursive halving among
// the rail's members, then each sends its piece to node rn's member:
// log2 N + 1 message steps and about two blocks through each NIC, where
// the binomial tree sends the whole block log2 N times and the chain takes
// N - 1 steps. Then the vector goes in segments of kSegment (a pipeline of
// few, long steps). Simulated (SimGrid, rails platform, 8 ranks a node,
// docs/benchmarks/2026-11-29-sim-reduce-halving.md), 2 MiB: 54.3 -> 27.8 us
// on 8 nodes, 39.4 -> 30.5 on 16, 46.6 -> 32.8 on 32, 53.8 -> 35.0 on 64,
// 61.1 -> 37.2 on 128; 16 MiB on 16 nodes 245.7 -> 160.6. Below 16 nodes
// the chain's pipeline of many short segments wins from 16 MiB (8 nodes:
// 114.2 against 126.2, 64 MiB 341.6 against 448.9), so there the halving
// stops at 8 MiB (from 16 nodes up, a level wider than 15 runs as one
// segment, pipeline_segments, and the chain is not used).
#include <algorithm>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
// Message steps: phase base + 16 x segment + step.
constexpr std::uint32_t kNodeRs = 0x000, kRail = 0x400, kGather = 0x800;
constexpr std::size_t kSegment = 4u << 20;

// (3) on the root's node: block l of `blocks` (bytes) from local rank l to the root.
Sched gather_blocks(Link node_link, void* acc, MemKind kind, Layout blocks, int lr, bool root, std::uint32_t step) {
  const int L = node_link.g.n, l = node_link.g.me;
  if (root) {
    std::vector<Request> recvs(static_cast<std::size_t>(L));
    for (int m = 0; m < L; ++m) {
      const auto b = static_cast<std::size_t>(m);
      if (m != lr && blocks.len[b] > 0)
        DUCT_CO_TRY(node_link.recv(m, at(acc, blocks.off[b]), blocks.len[b], kind, step, &recvs[b]));
    }
    DUCT_CO_TRY(co_await wait(recvs));
  } else if (blocks.len[static_cast<std::size_t>(l)] > 0) {
    Request s;
    const auto b = static_cast<std::size_t>(l);
    DUCT_CO_TRY(node_link.send(lr, at(acc, blocks.off[b]), blocks.len[b], kind, step, &s));
    DUCT_CO_TRY(co_await wait(s));
  }
  co_return Status::ok();
}

// Whether the rail level reduces by halving and a gather (above): every
// rank of a rail decides alike (the same vector, nodes and block).
bool rail_halving(std::size_t bytes, int N, int L) {
  const std::size_t block = bytes / static_cast<std::size_t>(std::max(L, 1));
  return N >= 8 && block >= (32u << 10) && (N >= 16 || bytes <= (8u << 20));
}

// A chain hop of the rail reduction: `block` (count elements of the
// node's partial sum) += what `peer` sends, received into tmp.
Sched recv_reduce(Link link, int peer, void* block, void* tmp, std::size_t count, DType dt, RedOp op, MemKind kind,
                  std::uint32_t step) {
  Request r;
  DUCT_CO_TRY(link.recv(peer, tmp, count * elem_size(dt.elem), kind, step, &r));
  DUCT_CO_TRY(co_await wait(r));
  memory::Fence fence;
  DUCT_CO_TRY(reduce_local(block, block, tmp, count, dt, op, kind, &fence));
  if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
  co_return Status::ok();
}

}  // namespace

Sched reduce_split_rail(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  const bool root = ctx.rank() == a.root;
  const std::size_t esz = elem_size(a.dt.elem), bytes = a.count * esz;
  const MemKind kind = a.send_kind;
  const int rn = t.node_of[static_cast<std::size_t>(a.root)], lr = t.local_rank_of[static_cast<std::size_t>(a.root)];
  auto [node_link, rail_link, l, L, N] = levels(ctx, seq);

  // The node's partial sums: the root's receive buffer where it has the
  // send buffer's kind, else scratch.
  void* acc = root && a.recv_kind == kind ? a.recvbuf : nullptr;
  if (!acc) DUCT_CO_TRY(ctx.scratch(kind, std::max<std::size_t>(bytes, 1), 2, &acc));
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, (a.count / static_cast<std::size_t>(L) + 1) * esz, 3, &tmp));  // a rail block

  const bool halving = rail_halving(bytes, N, L);
  const Layout seg = pipeline_layout(a.count, esz, halving ? kSegment : rooted_segment(bytes, N, L, kSegment), L,
                                     N);  // elements
  const std::size_t segs = seg.len.size();
  const std::uint32_t stride = segment_stride(segs);
  // This node's place after the root's node; the root's node holds the
  // rail's sum of segment c after step c+lag.
  const int d = mod(t.node - rn, N);
  const bool chain = !halving && rail_chain(segs, N);
  const std::size_t lag = chain ? static_cast<std::size_t>(N - 1) : 1;
  const auto b = static_cast<std::size_t>(l);
  const auto rail_step = [stride](std::size_t c) { return kRail + static_cast<std::uint32_t>(c) * stride; };
  for (std::size_t k = 0; k < segs + lag + 1; ++k) {
    std::vector<Sched> level;
    if (k < segs) {  // (1) node reduce-scatter of segment k: local rank l holds its block l
      const std::size_t base = seg.off[k] * esz;
      level.push_back(direct_reduce_scatter(ctx, node_link, at(a.sendbuf, base), at(acc, base), kind,
                                            Layout::even(seg.len[k], L), a.dt, a.op,
                                            kNodeRs + static_cast<std::uint32_t>(k) * stride));
    }
    // (2) rail l reduces block l of a segment towards the root's node.
    if (!chain) {
      if (k >= 1 && k - 1 < segs) {
        const std::size_t c = k - 1;
        const Layout blocks = Layout::even(seg.len[c], L);
        if (blocks.len[b] > 0) {
          void* block = at(acc, (seg.off[c] + blocks.off[b]) * esz);
          level.push_back(halving ? rabenseifner_reduce(ctx, rail_link, block, tmp, kind, blocks.len[b], a.dt, a.op,
                                                        rn, block, kind, rail_step(c), rail_step(c) + 15)
                                  : binomial_reduce(ctx, rail_link, block, kind, block, tmp, blocks.len[b], a.dt,
                                                    a.op, kind, rn, rail_step(c)));
        }
      }
    } else {
      const auto in = static_cast<std::size_t>(N - 1 - d);  // steps after its reduce-scatter that segment c arrives
      if (d < N - 1 && k >= in && k - in < segs) {      // add segment k-in from the node after
        const std::size_t c = k - in;
        const Layout blocks = Layout::even(seg.len[c], L);
        if (blocks.len[b] > 0)
          level.push_back(recv_reduce(rail_link, mod(t.node + 1, N), at(acc, (seg.off[c] + blocks.off[b]) * esz), tmp,
                                      blocks.len[b], a.dt, a.op, kind, rail_step(c)));
      }
      if (d > 0 && k >= in + 1 && k - in - 1 < segs) {  // pass segment k-in-1's sum to the node before
        const std::size_t c = k - in - 1;
        const Layout blocks = Layout::even(seg.len[c], L);
        if (blocks.len[b] > 0)
          level.push_back(chain_hop(rail_link, mod(t.node - 1, N), at(acc, (seg.off[c] + blocks.off[b]) * esz),
                                    blocks.len[b] * esz, kind, true, rail_step(c)));
      }
    }
    if (k >= lag + 1 && t.node == rn) {  // (3) the root's node gathers the segment it completed last step
      const std::size_t c = k - lag - 1;
      level.push_back(gather_blocks(node_link, at(acc, seg.off[c] * esz), kind, Layout::even(seg.len[c], L).scaled(esz),
                                    lr, root, kGather + static_cast<std::uint32_t>(c) * stride));
    }
    if (!level.empty()) DUCT_CO_TRY(co_await all_of(std::move(level)));
  }
  if (root && acc != a.recvbuf) DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, acc, kind, bytes));
  co_return Status::ok();
}

}  // namespace duct::coll
