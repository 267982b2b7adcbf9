// Pipelined hierarchical Rabenseifner allreduce, for N nodes of L ranks,
// both powers of two: the vector is cut into segments, and each segment
// goes through four levels:
//   (1) a reduce-scatter by recursive halving among the node's ranks: local
//       rank l holds block l (1/L of the segment) summed over the node;
//   (2) a reduce-scatter by recursive halving among the ranks of its rail
//       (local rank l of every node, over its own NIC): 1/N of block l,
//       summed over the communicator;
//   (3) an allgather by recursive doubling over the rail: block l, reduced;
//   (4) an allgather by recursive doubling in the node: the whole segment.
// Bytes per rank are those of Rabenseifner's allreduce in node-aware order
// (allreduce/rabenseifner.cpp): 2(N-1)/N of 1/L of the vector over the
// NIC, 2(L-1)/L of it over the node's links; and 2 log2(L) + 2 log2(N)
// messages per segment.
//
// The segments run side by side (all_of), kDepth of them in the node
// reduce-scatter at a time: segment c starts when c - kDepth + 1 segments
// have finished it. The node's links then carry some segments' halving
// while the NICs carry the rail levels of those before, and the rail
// levels of several segments overlap their latencies instead of adding
// them (split_rail's lockstep pipeline waits for the slowest level at
// every step). Rabenseifner's algorithm:
// R. Rabenseifner, "Optimization of collective reduction operations", ICCS
// 2004; the two levels and the segments that overlap them: Open MPI
// coll/han, and NCCL's ring of NVLink and network steps over chunks.
// Determinism: every element is reduced in the same order on every call with
// the same layout and count.
#include <algorithm>
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
// Message steps: level base + 16 x segment + halving or doubling step (a
// level of up to 2^16 members; kMaxSegments segments fit below the next
// base).
constexpr std::uint32_t kNodeRs = 0x000, kRailRs = 0x400, kRailAg = 0x800, kNodeAg = 0xc00, kStride = 16;
static_assert(kMaxSegments * kStride <= kRailRs);

// Segments of kSegment bytes, and at most kNodeInFlight bytes of them in
// the node reduce-scatter at once (kNodeInFlight / kSegment segments): a
// vector of up to kNodeInFlight runs its segments all at once. Simulated
// at 8 nodes x 8 ranks (NICs at 50 GB/s, node links at 450 GB/s; docs/
// benchmarks/2026-11-27-sim-pipelined.md), 16 MiB, us, segment x depth:
// 2M x 1 106.5, 2M x 2 115.9, 1M x 2 106.4, 512K x 4 102.0, 256K x 8
// 100.6 (Rabenseifner unsegmented 166.6); 4 MiB: 1M x 2 47.9, 512K x 4
// 44.0, 256K x 8 41.4 (57.4). The simulation charges a message no
// software overhead, so smaller segments look cheaper there than they
// are: 512 KiB keeps 16 MiB to 32 segments, and their rail messages
// (1/2L of a segment first) at 32 KiB and up on 8 ranks per node.
constexpr std::size_t kSegment = 512u << 10, kNodeInFlight = 2u << 20;
constexpr std::uint32_t kDepth = kNodeInFlight / kSegment;

// One segment's four levels: `acc` holds its `count` elements (this rank's
// input, reduced in place), `tmp` at least half as many.
Sched segment(Context& ctx, Levels lv, void* acc, void* tmp, std::size_t count, DType dt, RedOp op, MemKind kind,
              std::uint32_t c, std::size_t* node_done) {
  if (c >= kDepth)
    DUCT_CO_TRY(co_await wait_count(*node_done, c - kDepth + 1, "the node reduce-scatters of the segments before"));
  const std::size_t esz = elem_size(dt.elem);
  const Layout node = Layout::even(count, lv.L);
  DUCT_CO_TRY(co_await halving_reduce_scatter(ctx, lv.node, acc, tmp, kind, node, dt, op, kNodeRs + c * kStride));
  ++*node_done;
  void* mine = at(acc, node.off[static_cast<std::size_t>(lv.l)] * esz);
  const Layout rail = Layout::even(node.len[static_cast<std::size_t>(lv.l)], lv.N);
  DUCT_CO_TRY(co_await halving_reduce_scatter(ctx, lv.rail, mine, tmp, kind, rail, dt, op, kRailRs + c * kStride));
  DUCT_CO_TRY(co_await doubling_allgather(ctx, lv.rail, mine, kind, rail.scaled(esz), kRailAg + c * kStride));
  DUCT_CO_TRY(co_await doubling_allgather(ctx, lv.node, acc, kind, node.scaled(esz), kNodeAg + c * kStride));
  co_return Status::ok();
}
}  // namespace

Sched allreduce_pipelined_rabenseifner(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const std::size_t esz = elem_size(a.dt.elem), bytes = a.count * esz;
  const MemKind kind = a.recv_kind;
  DUCT_CO_TRY(rails(ctx.topo));
  const Levels lv = levels(ctx, seq);
  if (!is_pow2(lv.L) || !is_pow2(lv.N))
    co_return make_error(Errc::internal, "pipelined_rabenseifner on %d nodes of %d ranks (powers of two only)", lv.N,
                         lv.L);
  DUCT_CO_TRY(copy_local(a.recvbuf, kind, a.sendbuf, a.send_kind, bytes));
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 2, &tmp));
  // Segments of about kSegment bytes (at most kMaxSegments), each with at
  // least one element per rank; segment c's scratch is the same part of
  // tmp as its part of the vector (a halving needs half of it).
  const std::size_t per = static_cast<std::size_t>(lv.L) * static_cast<std::size_t>(lv.N);
  const std::size_t segs =
      std::clamp<std::size_t>(std::min((bytes + kSegment - 1) / kSegment, a.count / per), 1, kMaxSegments);
  const Layout seg = Layout::even(a.count, static_cast<int>(segs));
  std::size_t node_done = 0;
  std::vector<Sched> all;
  all.reserve(segs);
  for (std::size_t c = 0; c < segs; ++c)
    all.push_back(segment(ctx, lv, at(a.recvbuf, seg.off[c] * esz), at(tmp, seg.off[c] * esz), seg.len[c], a.dt,
                          a.op, kind, static_cast<std::uint32_t>(c), &node_done));
  DUCT_CO_TRY(co_await all_of(std::move(all)));
  co_return Status::ok();
}

}  // namespace duct::coll
