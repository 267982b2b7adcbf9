// Pipelined two-level reduce-scatter(_block), for N nodes of L ranks, both
// powers of two: a node level in one step, recursive halving over the
// rails, and one message more that takes every piece to the rank whose
// block holds it.
//
// The vector (all the blocks, in rank order) is cut into segments (a first
// one of kFirst bytes, then about kSegment bytes each; lead_segments()), and
// each segment goes through two levels:
//   (1) a reduce-scatter among the node's ranks in one step: each sends
//       every other its part of the segment (L - 1 messages each way) and
//       sums the parts it receives into its own: local rank l holds part l
//       (1/L of the segment) summed over the node;
//   (2) a reduce-scatter by recursive halving among the ranks of its rail
//       (local rank l of every node, over its own NIC): node j's rank holds
//       part j of that (1/N of it), summed over the communicator;
// then (3) the rank sends that piece, cut at the blocks' edges, to the ranks
// whose blocks it falls in (a piece of 1/(N L) of a segment meets one or
// two blocks when blocks are even); the owner receives it straight into its
// receive buffer. Every rank knows every rank's pieces (the layout is
// arithmetic), so each posts its receives at the start.
//
// Bytes per rank are those of the node-aware recursive halving
// (reduce_scatter/recursive_halving.cpp): (L-1)/L of the vector over the
// node's links and (N-1)/N of 1/L of it over the NIC, plus about one block
// in the last move. That halving crosses the two levels one after the
// other, log2(L) node latencies first; here the segments run side by side
// (all_of), kDepth of them in the node level at a time, so the node's links
// carry later segments while the NICs carry earlier ones, and the rail
// steps of several segments overlap their latencies. The node level's one
// step costs one latency a segment where halving costs log2(L) (simulated
// on 8 x 8 at 16 MiB: 72.2 us against 84.7 with halving in the node, at
// its best segments: 1M x 2 and 2M x 1).
// Nothing packs the input: every message of the levels is a contiguous part
// of one segment, and the move's messages are contiguous in the sender's
// segment and in the owner's block. Messages per rank and segment:
// L - 1 + log2(N) + one or two, received as many (pipelined_pairwise.cpp
// sends about N L per rank in all: fewer latencies, more messages).
// The algorithms: recursive halving, Thakur, Rabenseifner, Gropp, IJHPCA
// 19(1), 2005, §4.4; the two levels overlapped by segment as Open MPI
// coll/han does. Determinism: every element is reduced in the same order on
// every call with the same layout and count (the node level's own part
// first, then the others in local-rank order; the halving's partners lower
// (op) higher; the move only copies).
#include <algorithm>
#include <vector>

#include "coll/collectives.hpp"
#include "coll/reduce_scatter/common.hpp"

namespace duct::coll {

namespace {
// Message steps: level base + 16 x segment (+ the rail halving's step, a
// rail of up to 2^16 nodes; kMaxSegments segments fit below the next base),
// and the move's 0x800 + segment (one message per sender, owner and
// segment).
constexpr std::uint32_t kNodeRs = 0x000, kRailRs = 0x400, kMove = 0x800, kStride = 16;
static_assert(kMaxSegments * kStride <= kRailRs);

// Segments: a first one of kFirst bytes, then even segments of about
// kSegment bytes, kDepth of them in the node level at once. The short first
// node level starts the NICs early (with 2 MiB segments two at a time, no
// rail message left for about 9 us at the links' rates); the rest stay
// large, as the messages count where each costs software time (at 0.3 us
// of CPU per send and receive a segment's 14 messages each way cost 8.4 us,
// more than its 5.2 us on the NIC at 64 x 8). Simulated at 64 x 8 (NICs at
// 50 GB/s, node links at 450 GB/s), 16 MiB, reductions free, us, without |
// with 0.3 us per message, first x segment x depth: none x 2M x 2 72.1 |
// 81.1 (before), 1M x 2M x 2 67.6 | 82.0 (kept), a ramp of 512K, 1M x 2M x 2
// 67.4 | 89.4, of 256K, 512K, 1M x 2M x 2 66.5 | 102.9, 1M, 2M x 4M x 2
// 69.1 | 81.7, 1M, 2M x 3M x 2 69.1; with the 256K ramp, depth 1 71.7,
// depth 3 68.6, and rail levels held to 3 at once 86.9 (to 2: 109.5)
// (docs/benchmarks/2026-12-02-sim-rs-first-segment.md; 2026-12-01-sim-rs-
// pipelined-halving.md for segments and depths without a first one).
constexpr std::size_t kFirst = 1u << 20, kSegment = 2u << 20, kDepth = 2;
static_assert(kFirst < kSegment);
// Above 16 x kSegment bytes the segments grow (lead_segments). Simulated at
// 16 x 8, 64 MiB, reductions free, us (the simulation's real time, s): 2
// MiB segments 217.7 (111), 3 MiB 224.1 (44), 4 MiB 228.0 (28, kept); 4
// MiB with 8 segments at once at most 239.0 (2026-12-03-sim-64m).

struct State {
  Context* ctx;
  Levels lv;
  const Topology* t;
  Layout blocks;  // the vector's blocks, elements, by rank
  Layout seg;     // the segments, elements
  void* acc = nullptr;  // the whole vector: this rank's input, reduced in place
  void* tmp = nullptr;  // `stride` elements per segment: the node level's L - 1 parts, then the rail halving's half
  std::size_t stride = 0;  // elements of tmp per segment
  void* out = nullptr;  // this rank's receive buffer
  MemKind kind = MemKind::host;
  DType dt{};
  RedOp op{};
  std::uint32_t seq = 0;
  std::size_t node_done = 0;  // segments through the node level
};

// The piece that (node j, local rank l) holds of segment c after the node
// exchange and the rail halving: [*off, *off + *len) of the vector, in
// elements.
void piece(const State& st, std::size_t c, int j, int l, std::size_t* off, std::size_t* len) {
  const Blocks node{st.seg.len[c], st.lv.L};
  const Blocks rail{node.size(l), st.lv.N};
  *off = st.seg.off[c] + node.offset(l) + rail.offset(j);
  *len = rail.size(j);
}

Sched segment(State& st, std::uint32_t c) {
  Levels& lv = st.lv;
  if (c >= kDepth)
    DUCT_CO_TRY(co_await wait_count(st.node_done, c - kDepth + 1, "the node levels of the segments before"));
  const std::size_t esz = elem_size(st.dt.elem);
  const std::size_t base = st.seg.off[c];
  void* acc = at(st.acc, base * esz);
  void* tmp = at(st.tmp, c * st.stride * esz);
  const Layout node = Layout::even(st.seg.len[c], lv.L);
  DUCT_CO_TRY(co_await direct_reduce_scatter_in_place(lv.node, acc, tmp, st.kind, node, st.dt, st.op,
                                                      kNodeRs + c * kStride));
  ++st.node_done;
  void* part = at(acc, node.off[static_cast<std::size_t>(lv.l)] * esz);
  const Layout rail = Layout::even(node.len[static_cast<std::size_t>(lv.l)], lv.N);
  DUCT_CO_TRY(co_await halving_reduce_scatter(*st.ctx, lv.rail, part, tmp, st.kind, rail, st.dt, st.op,
                                              kRailRs + c * kStride));
  // (3) This rank's piece to the ranks whose blocks it meets.
  std::size_t off = 0, len = 0;
  piece(st, c, st.t->node, lv.l, &off, &len);
  const std::size_t end = off + len;
  const std::vector<std::size_t>& bo = st.blocks.off;
  const int n = st.blocks.n(), me = st.t->rank;
  Link flat{*st.ctx, st.seq, Group{nullptr, n, me}};
  std::vector<Request> sends;
  // The last block that starts at or before off (blocks before it with the
  // same offset are empty).
  int b = len == 0 ? n : static_cast<int>(std::upper_bound(bo.begin(), bo.end(), off) - bo.begin()) - 1;
  for (; b < n && bo[static_cast<std::size_t>(b)] < end; ++b) {
    const std::size_t b0 = bo[static_cast<std::size_t>(b)], b1 = b0 + st.blocks.len[static_cast<std::size_t>(b)];
    const std::size_t lo = std::max(off, b0), hi = std::min(end, b1);
    if (lo >= hi) continue;
    const void* src = at(st.acc, lo * esz);
    if (b == me) {
      DUCT_CO_TRY(copy_local(at(st.out, (lo - b0) * esz), st.kind, src, st.kind, (hi - lo) * esz));
      continue;
    }
    sends.emplace_back();
    DUCT_CO_TRY(flat.send(b, src, (hi - lo) * esz, st.kind, kMove + c, &sends.back()));
  }
  DUCT_CO_TRY(co_await wait(sends));
  co_return Status::ok();
}

// This rank's block, from the ranks whose pieces meet it: every receive
// posted at once, straight into the receive buffer.
Sched collect(State& st) {
  const std::size_t esz = elem_size(st.dt.elem);
  const int me = st.t->rank;
  const std::size_t b0 = st.blocks.off[static_cast<std::size_t>(me)];
  const std::size_t b1 = b0 + st.blocks.len[static_cast<std::size_t>(me)];
  Link flat{*st.ctx, st.seq, Group{nullptr, st.blocks.n(), me}};
  std::vector<Request> recvs;
  for (std::size_t c = 0; c < st.seg.len.size() && b0 < b1; ++c) {
    if (st.seg.off[c] >= b1 || st.seg.off[c] + st.seg.len[c] <= b0) continue;
    for (int l = 0; l < st.lv.L; ++l)
      for (int j = 0; j < st.lv.N; ++j) {
        const int from = st.t->ranks_on[static_cast<std::size_t>(j)][static_cast<std::size_t>(l)];
        if (from == me) continue;  // its own piece: copied by its segment
        std::size_t off = 0, len = 0;
        piece(st, c, j, l, &off, &len);
        const std::size_t lo = std::max(off, b0), hi = std::min(off + len, b1);
        if (lo >= hi) continue;
        recvs.emplace_back();
        DUCT_CO_TRY(flat.recv(from, at(st.out, (lo - b0) * esz), (hi - lo) * esz, st.kind,
                              kMove + static_cast<std::uint32_t>(c), &recvs.back()));
      }
  }
  DUCT_CO_TRY(co_await wait(recvs));
  co_return Status::ok();
}
}  // namespace

Sched reduce_scatter_pipelined_halving(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  State st{&ctx, levels(ctx, seq), &t, reduce_scatter_blocks(a, ctx.size()), {}};
  Levels& lv = st.lv;
  if (!is_pow2(lv.L) || !is_pow2(lv.N))
    co_return make_error(Errc::internal, "pipelined_halving on %d nodes of %d ranks (powers of two only)", lv.N, lv.L);
  const std::size_t esz = elem_size(a.dt.elem), total = st.blocks.total(), bytes = total * esz;
  if (total == 0) co_return Status::ok();
  st.kind = a.recv_kind;
  st.dt = a.dt;
  st.op = a.op;
  st.seq = seq;
  st.out = a.recvbuf;
  DUCT_CO_TRY(ctx.scratch(st.kind, bytes, 2, &st.acc));
  // The whole input first (in place it is the receive buffer, which the
  // owners' receives then overwrite).
  DUCT_CO_TRY(copy_local(st.acc, st.kind, a.sendbuf, a.send_kind, bytes));
  const std::size_t per = static_cast<std::size_t>(lv.L) * static_cast<std::size_t>(lv.N);
  st.seg = lead_segments(total, esz, per, kFirst, kSegment);
  const std::size_t segs = st.seg.len.size();
  st.stride = segment_scratch(st.seg.max_len(), lv.L);
  DUCT_CO_TRY(ctx.scratch(st.kind, segs * st.stride * esz, 3, &st.tmp));
  std::vector<Sched> all;
  all.reserve(segs + 1);
  all.push_back(collect(st));
  for (std::size_t c = 0; c < segs; ++c) all.push_back(segment(st, static_cast<std::uint32_t>(c)));
  DUCT_CO_TRY(co_await all_of(std::move(all)));
  co_return Status::ok();
}

}  // namespace duct::coll
