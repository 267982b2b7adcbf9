// Pipelined hierarchical Rabenseifner allreduce, for N nodes of L ranks,
// both powers of two: the vector is cut into segments, and each segment
// goes through four levels:
//   (1) a reduce-scatter among the node's ranks in one step: each sends
//       every other its part of the segment (L - 1 messages each way) and
//       sums the parts it receives into its own: local rank l holds part l
//       (1/L of the segment) summed over the node;
//   (2) a reduce-scatter by recursive halving among the ranks of its rail
//       (local rank l of every node, over its own NIC): 1/N of part l,
//       summed over the communicator;
//   (3) an allgather by recursive doubling over the rail: part l, reduced;
//   (4) an allgather among the node's ranks in one step: the whole segment.
// Bytes per rank are those of Rabenseifner's allreduce in node-aware order
// (allreduce/rabenseifner.cpp): 2(N-1)/N of 1/L of the vector over the
// NIC, 2(L-1)/L of it over the node's links; and 2(L - 1) + 2 log2(N)
// messages per segment. The node levels were recursive halving and
// doubling (log2(L) steps each) in segments of 512 KiB until 2026-12-02:
// one step each costs a node latency where those cost log2(L), and with
// segments of 2 MiB (below) the messages are few enough to hold where each
// costs CPU time.
//
// The segments run side by side (all_of), kDepth of them in the node
// reduce-scatter at a time: segment c starts when c - kDepth + 1 segments
// have finished it (and c - kWindow + 1 have finished all four levels).
// The node's links then carry some segments' node levels while the NICs
// carry the rail levels of those before, and the rail
// levels of several segments overlap their latencies instead of adding
// them (split_rail's lockstep pipeline waits for the slowest level at
// every step). Rabenseifner's algorithm:
// R. Rabenseifner, "Optimization of collective reduction operations", ICCS
// 2004; the two levels and the segments that overlap them: Open MPI
// coll/han, and NCCL's ring of NVLink and network steps over chunks.
// Determinism: every element is reduced in the same order on every call with
// the same layout and count (the node level's own part first, then the
// others in local-rank order; the halving's partners lower (op) higher).
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

// Segments: a first one of kFirst bytes, then even segments of about
// kSegment bytes (lead_segments), kDepth of them in the node reduce-scatter
// at once: the layout of the pipelined halving reduce-scatter. Simulated at
// 8 nodes x 8 ranks (NICs at 50 GB/s, node links at 450 GB/s), 16 MiB,
// reductions free, us, without | with 0.3 us of CPU per send and receive,
// node levels, first x segment x depth: halving, none x 512K x 4 98.3 |
// 184.8 (before); one step, 1M x 2M x 2 99.4 | 111.2 (kept), none x 1M x 1
// 90.8 | 146.2, 256K x 512K x 2 90.2 | 400.0, none x 512K x 2 92.4; at 64 x
// 8, one step, none x 1M x 1 107.0 (before: 111.4), 1M x 2M x 2 108.3 |
// 128.7 (kept), 512K x 1M x 2 102.5 | 215.7. Small segments win where a
// message is free and lose by far where each costs CPU (a segment's
// one-step node levels are 2(L - 1) messages each way); 2 MiB ones keep
// both. At 64 x 8 the rail levels alone (node links 10x faster) take 96.2
// us, 86% of the NICs' 82.6: the halving and doubling's small steps of
// segments that run close together leave the NICs partly idle, and holding
// rail levels apart serialises their latencies instead (2026-12-02-sim-
// allreduce-direct.md).
constexpr std::size_t kFirst = 1u << 20, kSegment = 2u << 20;
static_assert(kFirst < kSegment);
// At most kWindow segments are between their start and their end at once;
// above 16 x kSegment bytes the segments grow (lead_segments). Simulated at
// 16 x 8, 64 MiB, reductions free, us (the simulation's real time, s): 2
// MiB segments, none held 378.3 (144), 8 at once 353.9 (124), 4 at once
// 463.1, 2 at once 635.2; 4 MiB, none held 391.7 (30), 8 363.9 (26, kept),
// 4 434.5; 3 MiB, 8 361.5 (46); 8 MiB, none held 416.7 (13). At 64 x 8 and
// 64 MiB, 2 MiB segments did not finish in 900 s of real time; 4 MiB, 8 at
// once: 386.0 us in 315 s (2026-12-03-sim-64m).
constexpr std::uint32_t kWindow = 8;
constexpr std::uint32_t kDepth = 2;

// One segment's four levels: `acc` holds its `count` elements (this rank's
// input, reduced in place), `tmp` segment_scratch() elements.
Sched segment(Context& ctx, Levels lv, void* acc, void* tmp, std::size_t count, DType dt, RedOp op, MemKind kind,
              std::uint32_t c, std::size_t* node_done, std::size_t* seg_done) {
  if (c >= kWindow)
    DUCT_CO_TRY(co_await wait_count(*seg_done, c - kWindow + 1, "the segments kWindow and more before"));
  if (c >= kDepth)
    DUCT_CO_TRY(co_await wait_count(*node_done, c - kDepth + 1, "the node reduce-scatters of the segments before"));
  const std::size_t esz = elem_size(dt.elem);
  const Layout node = Layout::even(count, lv.L);
  DUCT_CO_TRY(co_await direct_reduce_scatter_in_place(lv.node, acc, tmp, kind, node, dt, op, kNodeRs + c * kStride));
  ++*node_done;
  void* mine = at(acc, node.off[static_cast<std::size_t>(lv.l)] * esz);
  const Layout rail = Layout::even(node.len[static_cast<std::size_t>(lv.l)], lv.N);
  DUCT_CO_TRY(co_await halving_reduce_scatter(ctx, lv.rail, mine, tmp, kind, rail, dt, op, kRailRs + c * kStride));
  DUCT_CO_TRY(co_await doubling_allgather(ctx, lv.rail, mine, kind, rail.scaled(esz), kRailAg + c * kStride));
  DUCT_CO_TRY(co_await direct_allgather(lv.node, acc, kind, node.scaled(esz), kNodeAg + c * kStride));
  ++*seg_done;
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
  // Segments of about kSegment bytes (or 1/kLeadSegments of the vector)
  // after a first one of kFirst (at most kMaxSegments), each with at least
  // one element per rank; segment c's scratch is `stride` elements of tmp
  // from c * stride.
  const std::size_t per = static_cast<std::size_t>(lv.L) * static_cast<std::size_t>(lv.N);
  const Layout seg = lead_segments(a.count, esz, per, kFirst, kSegment);
  const std::size_t segs = seg.len.size();
  const std::size_t stride = segment_scratch(seg.max_len(), lv.L);
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, segs * stride * esz, 2, &tmp));
  std::size_t node_done = 0, seg_done = 0;
  std::vector<Sched> all;
  all.reserve(segs);
  for (std::size_t c = 0; c < segs; ++c)
    all.push_back(segment(ctx, lv, at(a.recvbuf, seg.off[c] * esz), at(tmp, c * stride * esz), seg.len[c], a.dt,
                          a.op, kind, static_cast<std::uint32_t>(c), &node_done, &seg_done));
  DUCT_CO_TRY(co_await all_of(std::move(all)));
  co_return Status::ok();
}

}  // namespace duct::coll
