// Pipelined split-rail reduce-scatter(_block) with a pairwise rail level:
// for N nodes of L ranks, any N and L (every node the same L).
//
// The vector is taken one destination node at a time. Node x works on node
// a = x+1, x+2, ..., x+N-1 and last its own, x (mod N), each cut into S
// slices:
//   (1) node level: every rank sends each other rank m of its node its
//       slice of the block of node a's local rank m, and sums the slices of
//       the block of node a's local rank l that it receives (in local-rank
//       order): local rank l then holds node x's contribution to that
//       block's slice;
//   (2) rail level: it sends that partial sum straight to local rank l of
//       node a, over its own NIC (its rail). Rank l of node x receives the
//       partial sums of its own block from every other node, adds them in
//       the fixed order x-1, x-2, ... (mod N), and its own node's last.
// The segments run side by side (all_of), a few in the node level at
// once, so the node's links carry the node level of later segments while
// the NICs carry the rail messages of earlier ones. Because node x sends to
// node x+t at its t-th step, every NIC sends to one node and receives from
// one at a time (a shifted pairwise exchange, no incast).
//
// Bytes per rank: (L-1)/L of the vector over the node's links and (N-1)/N
// of 1/L of it over the NIC, as the node-aware recursive halving
// (reduce_scatter/recursive_halving.cpp) and split_rail; that halving
// crosses the levels one after the other, and split_rail's ring pays N-1
// latencies per piece in lockstep. No copy packs the input: every message
// is a contiguous slice of one block. The shape: split-rail reduce-scatter
// (UCC cl/hier split_rail; Kandalla et al., IPDPS 2009) with the levels
// overlapped by segment as Open MPI coll/han does, and the network level
// as the pairwise exchange of Thakur, Rabenseifner, Gropp 2005, §4.4.
// Determinism: every element is summed in the same order on every call
// with the same layout and count.
#include <algorithm>
#include <vector>

#include "coll/collectives.hpp"
#include "coll/reduce_scatter/common.hpp"

namespace duct::coll {

namespace {
// Message steps: the node level takes segment c's index (below 0x800; the
// selection's rails_alltoall keeps N under 2048, and S * N <= 0x800), the
// rail level 0x800 + slice (one message per node pair and slice).
constexpr std::uint32_t kRailStep = 0x800;
// About this many bytes of the vector per segment (L slices), and this many
// bytes of segments in the node level at once (as the pipelined
// Rabenseifner allreduce, allreduce/pipelined_rabenseifner.cpp). Simulated
// on 8 nodes x 8 ranks (NICs 50 GB/s, node links 450 GB/s; docs/benchmarks/
// 2026-11-28-sim-rs-pipelined.md), 16 MiB, reductions free, us, segment x
// bytes in flight: 512K x 2M 48.9, 256K x 2M 49.0, 128K x 2M 49.1, 512K x
// 1.5M 49.0, 512K x 1M 54.0, 1M x 4M 53.2, 512K x 8M 61.8, 512K x 512K
// 70.2; the node's own segments first instead of last, 54.3.
constexpr std::size_t kSegment = 512u << 10, kNodeInFlight = 2u << 20;

struct State {
  Levels lv;
  const Topology* t;
  Layout blocks;           // the vector's blocks, elements, by rank
  std::vector<std::size_t> col;  // offset of node a's block of local rank l in this rank's column
  std::size_t col_total = 0;     // elements of this rank's column: the blocks of its rail's ranks
  std::size_t S = 1;             // slices per block
  std::size_t depth = 1;         // segments in the node level at once
  const void* src = nullptr;     // the input (of `kind`)
  void* part = nullptr;          // this rank's column: its node's partial sums
  void* tmp = nullptr;           // L-1 copies of the column's layout: slices from the node's ranks
  void* inc = nullptr;           // N-1 copies of this rank's block: the other nodes' partial sums
  MemKind kind = MemKind::host;
  DType dt{};
  RedOp op{};
  std::size_t node_done = 0;  // segments through the node level
  std::size_t own_done = 0;   // of them, this node's own (the last S)
};

int rank_of(const State& st, int node, int local) {
  return st.t->ranks_on[static_cast<std::size_t>(node)][static_cast<std::size_t>(local)];
}

// Segment (t, s): slice s of node a = x + t's blocks.
Sched segment(State& st, int t, std::size_t s) {
  Levels& lv = st.lv;
  // Position of node x + t in this node's order: own node last.
  const int p = (t + lv.N - 1) % lv.N;
  const std::size_t c = static_cast<std::size_t>(p) * st.S + s;
  if (c >= st.depth)
    DUCT_CO_TRY(co_await wait_count(st.node_done, c - st.depth + 1, "the node level of the segments before"));
  const int a = (st.t->node + t) % lv.N;
  const std::size_t esz = elem_size(st.dt.elem);
  const auto step = static_cast<std::uint32_t>(c);
  // Slice s of the block of node a's local rank `local`: its offset in that
  // block and its length, in elements.
  auto slice = [&](int local, std::size_t* in_block, std::size_t* len) {
    const Blocks b{st.blocks.len[static_cast<std::size_t>(rank_of(st, a, local))], static_cast<int>(st.S)};
    *in_block = b.offset(static_cast<int>(s));
    *len = b.size(static_cast<int>(s));
  };
  auto input = [&](int local, std::size_t in_block) {
    return at(st.src, (st.blocks.off[static_cast<std::size_t>(rank_of(st, a, local))] + in_block) * esz);
  };
  std::size_t my_in = 0, len = 0;
  slice(lv.l, &my_in, &len);
  const std::size_t at_col = st.col[static_cast<std::size_t>(a)] + my_in;
  auto copy_of = [&](int k) { return at(st.tmp, (static_cast<std::size_t>(k) * st.col_total + at_col) * esz); };
  // (1) node level.
  std::vector<Request> reqs;
  for (int m = 0, k = 0; m < lv.L; ++m) {
    if (m == lv.l) continue;
    std::size_t in = 0, n = 0;
    slice(m, &in, &n);
    if (n > 0) {
      reqs.emplace_back();
      DUCT_CO_TRY(lv.node.send(m, input(m, in), n * esz, st.kind, step, &reqs.back()));
    }
    if (len > 0) {
      reqs.emplace_back();
      DUCT_CO_TRY(lv.node.recv(m, copy_of(k), len * esz, st.kind, step, &reqs.back()));
    }
    ++k;
  }
  DUCT_CO_TRY(co_await wait(reqs));
  void* mine = at(st.part, at_col * esz);
  if (len > 0) {
    memory::Fence fence;
    // In local-rank order: the first two, then each next one.
    auto value = [&](int m) -> const void* { return m == lv.l ? input(m, my_in) : copy_of(m < lv.l ? m : m - 1); };
    if (lv.L == 1) {
      DUCT_CO_TRY(copy_local(mine, st.kind, value(0), st.kind, len * esz));
    } else {
      DUCT_CO_TRY(reduce_local(mine, value(0), value(1), len, st.dt, st.op, st.kind, &fence));
      for (int m = 2; m < lv.L; ++m) DUCT_CO_TRY(reduce_local(mine, mine, value(m), len, st.dt, st.op, st.kind, &fence));
    }
    if (st.kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
  }
  ++st.node_done;
  if (t == 0) {
    ++st.own_done;
    co_return Status::ok();
  }
  // (2) rail level: node x's partial sum to node a.
  if (len > 0) {
    Request r;
    DUCT_CO_TRY(lv.rail.send(a, mine, len * esz, st.kind, kRailStep + static_cast<std::uint32_t>(s), &r));
    DUCT_CO_TRY(co_await wait(r));
  }
  co_return Status::ok();
}

// This rank's block: the other nodes' partial sums, received into inc (node
// x - t's at its t-th step; every receive posted at once, when the segments
// start) and summed in the order x-1, x-2, ... as they arrive, then its own
// node's, the last segments of its order.
Sched accumulate(State& st) {
  Levels& lv = st.lv;
  const std::size_t esz = elem_size(st.dt.elem);
  const int x = st.t->node;
  const std::size_t mine = st.blocks.len[static_cast<std::size_t>(rank_of(st, x, lv.l))];
  const Blocks b{mine, static_cast<int>(st.S)};
  void* own = at(st.part, st.col[static_cast<std::size_t>(x)] * esz);
  auto from = [&](int t, std::size_t off) {
    return at(st.inc, (static_cast<std::size_t>(t - 1) * mine + off) * esz);
  };
  std::vector<Request> recvs;
  recvs.reserve(static_cast<std::size_t>(lv.N - 1) * st.S);
  for (int t = 1; t < lv.N; ++t)
    for (std::size_t s = 0; s < st.S; ++s) {
      const std::size_t len = b.size(static_cast<int>(s));
      if (len == 0) continue;
      recvs.emplace_back();
      DUCT_CO_TRY(lv.rail.recv((x - t + lv.N) % lv.N, from(t, b.offset(static_cast<int>(s))), len * esz, st.kind,
                               kRailStep + static_cast<std::uint32_t>(s), &recvs.back()));
    }
  memory::Fence fence;
  std::size_t k = 0;
  for (int t = 1; t < lv.N; ++t)
    for (std::size_t s = 0; s < st.S; ++s) {
      const std::size_t len = b.size(static_cast<int>(s)), off = b.offset(static_cast<int>(s));
      if (len == 0) continue;
      DUCT_CO_TRY(co_await wait(recvs[k++]));
      if (t == 1) continue;
      void* sum = from(1, off);
      DUCT_CO_TRY(reduce_local(sum, sum, from(t, off), len, st.dt, st.op, st.kind, &fence));
      if (st.kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
    }
  DUCT_CO_TRY(co_await wait_count(st.own_done, st.S, "this node's own segments"));
  if (lv.N > 1 && mine > 0) {
    DUCT_CO_TRY(reduce_local(own, st.inc, own, mine, st.dt, st.op, st.kind, &fence));
    if (st.kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
  }
  co_return Status::ok();
}
}  // namespace

Sched reduce_scatter_pipelined_pairwise(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  State st{levels(ctx, seq), &t, reduce_scatter_blocks(a, ctx.size())};
  Levels& lv = st.lv;
  if (lv.N >= 2048)
    co_return make_error(Errc::internal, "pipelined_pairwise on %d nodes (at most 2047)", lv.N);
  const std::size_t esz = elem_size(a.dt.elem), total = st.blocks.total();
  st.kind = a.recv_kind;
  st.dt = a.dt;
  st.op = a.op;
  st.src = a.sendbuf;  // the whole input (the receive buffer when in place)
  if (a.send_kind != st.kind) {
    void* staged = nullptr;
    DUCT_CO_TRY(ctx.scratch(st.kind, total * esz, 3, &staged));
    DUCT_CO_TRY(copy_local(staged, st.kind, a.sendbuf, a.send_kind, total * esz));
    st.src = staged;
  }
  st.col.resize(static_cast<std::size_t>(lv.N));
  for (int j = 0; j < lv.N; ++j) {
    st.col[static_cast<std::size_t>(j)] = st.col_total;
    st.col_total += st.blocks.len[static_cast<std::size_t>(rank_of(st, j, lv.l))];
  }
  const auto me = static_cast<std::size_t>(ctx.rank());
  const std::size_t mine = st.blocks.len[me];
  // Slices: segments of about kSegment bytes (a node's share of the vector,
  // 1/N of it, cut in S), at most kMaxSegments and S * N <= 0x800.
  const std::size_t per_node = total * esz / static_cast<std::size_t>(lv.N);
  st.S = std::clamp<std::size_t>((per_node + kSegment - 1) / kSegment, 1,
                                 std::min<std::size_t>(kMaxSegments, kRailStep / static_cast<std::size_t>(lv.N)));
  const std::size_t seg_bytes = std::max<std::size_t>(1, per_node / st.S);
  st.depth = std::max<std::size_t>(1, kNodeInFlight / seg_bytes);
  const std::size_t one = 1;
  DUCT_CO_TRY(ctx.scratch(st.kind, std::max(st.col_total, one) * esz, 2, &st.part));
  DUCT_CO_TRY(ctx.scratch(st.kind, std::max(st.col_total * static_cast<std::size_t>(lv.L - 1), one) * esz, 4,
                          &st.tmp));
  DUCT_CO_TRY(ctx.scratch(st.kind, std::max(mine * static_cast<std::size_t>(lv.N - 1), one) * esz, 1, &st.inc));

  std::vector<Sched> all;
  all.reserve(static_cast<std::size_t>(lv.N) * st.S + 1);
  for (int p = 0; p < lv.N; ++p)  // in this node's order (a child may wait only for those before it)
    for (std::size_t s = 0; s < st.S; ++s) all.push_back(segment(st, (p + 1) % lv.N, s));
  all.push_back(accumulate(st));
  DUCT_CO_TRY(co_await all_of(std::move(all)));
  DUCT_CO_TRY(copy_local(a.recvbuf, st.kind, at(st.part, st.col[static_cast<std::size_t>(t.node)] * esz), st.kind,
                         mine * esz));
  co_return Status::ok();
}

}  // namespace duct::coll
