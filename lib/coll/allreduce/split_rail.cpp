// Split-rail allreduce: every rank of a node, and so every NIC, carries a
// share of the network traffic; the node levels of some segments run while
// the network carries others.
//
// With L ranks on each of N nodes: (1) a reduce-scatter among the node's
// ranks leaves local rank l with block l of the node's sum (1/L of the
// vector); (2) the ranks of local index l on every node (rail l) run a
// ring allreduce of that block among themselves, over their own UCX worker
// and so their own network device (DUCT_NET_DEVICES, core/netdev.hpp);
// (3) an allgather among the node's ranks gives every rank all L blocks.
// Both node levels are one exchange each, every rank sending each other
// its block at once (coll/direct.cpp; rings of L - 1 steps until
// 2026-11-28). Each rank sends 2(N-1)/N of 1/L of the vector over the network:
// L times what the single leader of the node-aware allreduce sends
// (allreduce/hierarchical.cpp), and every rail at once.
//
// Pipelining (Open MPI coll/han's segments between levels): the vector is
// cut into segments of about kSegment bytes; in step k, segment k's node
// reduce-scatter, segment k-1's rail allreduce and segment k-2's node
// allgather run side by side (all_of), so the node levels hide behind the
// network's.
//
// UCC's cl/hier "split_rail" allreduce and MVAPICH2's multi-leader (DPML)
// allreduce have this shape; K. Kandalla, H. Subramoni, G. Santhanaraman,
// M. Koop, D. K. Panda, "Designing multi-leader-based allgather algorithms
// for multi-core clusters", IPDPS 2009; NCCL runs one ring per NIC for the
// same reason. Determinism: every element is reduced in the same node
// order and then along the same rail ring on every call with the same
// layout and count.
#include <algorithm>
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
// Message steps: phase base + 16 x segment + ring step (rings of up to 15
// members pipeline; larger ones run as one segment).
constexpr std::uint32_t kNodeRs = 0x000, kRailRs = 0x400, kRailAg = 0x800, kNodeAg = 0xc00;
constexpr std::size_t kSegment = 4u << 20;

// Below this, a host block crosses the network by recursive doubling (log2 N
// exchanges of the whole block) rather than a ring (2(N-1) of 1/N of it):
// fewer network latencies. Measured on 2 nodes, 1 rail at 1 Gbit/s: 256 KiB
// allreduce 2.86 ms with the ring at the rail level.
constexpr std::size_t kDoublingBelow = 1u << 20;
// From this block size, on a power of two of 8 or more nodes, the rail's
// allreduce is Rabenseifner's (recursive halving, then recursive doubling
// of the pieces: 2 log2 N steps, two blocks through each NIC) rather than
// recursive doubling of the whole block (log2 N blocks) or the ring
// (2(N-1) steps), as the split-rail reduce's rail (reduce/split_rail.cpp).
// Simulated on the rails platform (forced, 8 ranks a node,
// docs/benchmarks/2026-11-29-sim-reduce-halving.md): from 256 KiB blocks
// 2 MiB on 64 nodes 55.7 -> 45.5 us, on 8 nodes 2-8 MiB 3-19% more busbw;
// from 32 KiB it lost at 32-128 KiB blocks (64 nodes, 256 KiB: 19.2 ->
// 28.5 us), where the doubling's log2 N steps are fewer.
constexpr std::size_t kRailHalvingMin = 256u << 10;

// Segment c's rail level: allreduce of this rank's block of it (`part`: its
// N ring blocks, in elements from buf).
Sched rail_allreduce(Context& ctx, Link link, void* buf, MemKind kind, Layout part, DType dt, RedOp op,
                     std::uint32_t rs_step, std::uint32_t ag_step) {
  const std::size_t esz = elem_size(dt.elem), len = part.total();
  const int n = link.g.n;
  if (n >= 8 && is_pow2(n) && len * esz >= kRailHalvingMin) {
    // The halving and the doubling take the blocks from the block's start.
    void* block = at(buf, part.off[0] * esz);
    void* tmp = nullptr;
    DUCT_CO_TRY(ctx.scratch(kind, len * esz, 5, &tmp));
    const Layout pieces = Layout::even(len, n);
    DUCT_CO_TRY(co_await halving_reduce_scatter(ctx, link, block, tmp, kind, pieces, dt, op, rs_step));
    DUCT_CO_TRY(co_await doubling_allgather(ctx, link, block, kind, pieces.scaled(esz), ag_step));
    co_return Status::ok();
  }
  if (kind == MemKind::host && (n & (n - 1)) == 0 && len * esz < kDoublingBelow) {
    void* tmp = nullptr;
    DUCT_CO_TRY(ctx.scratch(MemKind::host, len * esz, 5, &tmp));
    DUCT_CO_TRY(co_await recursive_doubling_allreduce(ctx, link, at(buf, part.off[0] * esz), tmp, len, dt, op, rs_step));
    co_return Status::ok();
  }
  DUCT_CO_TRY(co_await ring_reduce_scatter(ctx, link, buf, buf, kind, part, dt, op, 1, rs_step, 1));
  DUCT_CO_TRY(co_await ring_allgather(ctx, link, buf, kind, part.scaled(esz), 1, ag_step));
  co_return Status::ok();
}
}  // namespace

Sched allreduce_split_rail(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const std::size_t esz = elem_size(a.dt.elem);
  const MemKind kind = a.recv_kind;
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  // The reductions read the send and receive buffers together: one kind.
  const void* src = a.sendbuf;
  if (a.send_kind != kind) {
    DUCT_CO_TRY(copy_local(a.recvbuf, kind, a.sendbuf, a.send_kind, a.count * esz));
    src = a.recvbuf;
  }
  auto [node_link, rail_link, l, L, N] = levels(ctx, seq);

  const Layout seg = pipeline_layout(a.count, esz, kSegment, L, N);  // elements
  const std::size_t segs = seg.len.size();
  const std::uint32_t stride = segment_stride(segs);

  for (std::size_t k = 0; k < segs + 2; ++k) {
    std::vector<Sched> level;
    if (k < segs) {  // (1) node reduce-scatter of segment k: local rank l holds its block l
      const std::size_t c = k, base = seg.off[c] * esz;
      level.push_back(direct_reduce_scatter(ctx, node_link, at(src, base), at(a.recvbuf, base), kind,
                                            Layout::even(seg.len[c], L), a.dt, a.op,
                                            kNodeRs + static_cast<std::uint32_t>(c) * stride));
    }
    if (k >= 1 && k - 1 < segs) {  // (2) rail allreduce of block l of segment k-1
      const std::size_t c = k - 1;
      const Layout blocks = Layout::even(seg.len[c], L);
      const std::size_t off = blocks.off[static_cast<std::size_t>(l)], len = blocks.len[static_cast<std::size_t>(l)];
      if (len > 0) {
        Layout part = Layout::even(len, N);
        for (std::size_t& o : part.off) o += off;
        level.push_back(rail_allreduce(ctx, rail_link, at(a.recvbuf, seg.off[c] * esz), kind, std::move(part), a.dt,
                                       a.op, kRailRs + static_cast<std::uint32_t>(c) * stride,
                                       kRailAg + static_cast<std::uint32_t>(c) * stride));
      }
    }
    if (k >= 2) {  // (3) node allgather of segment k-2
      const std::size_t c = k - 2;
      level.push_back(direct_allgather(node_link, at(a.recvbuf, seg.off[c] * esz), kind,
                                       Layout::even(seg.len[c], L).scaled(esz),
                                       kNodeAg + static_cast<std::uint32_t>(c) * stride));
    }
    if (!level.empty()) DUCT_CO_TRY(co_await all_of(std::move(level)));
  }
  co_return Status::ok();
}

}  // namespace duct::coll
