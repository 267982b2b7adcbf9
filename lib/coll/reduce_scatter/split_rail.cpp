// Split-rail reduce-scatter(_block): each rank of a node reduces, inside
// the node, the blocks of its rail's ranks; then each rail reduce-scatters
// them across the nodes over its own network device.
//
// With L ranks on each of N nodes: (1) every rank sends each other rank m
// of its node its contribution to the N blocks of rail m (the ranks of
// local index m on every node) and adds what it receives to its own
// contribution to its rail's blocks (all peers at once, summed in local
// rank order); (2) rail l runs a ring reduce-scatter of those N blocks, so
// each rank ends with its own block. The network carries (N-1)/N of 1/L of
// the vector per rank, over every rail at once (the reduce-scatter half of
// UCC's cl/hier split_rail allreduce; Kandalla et al., IPDPS 2009, for the
// multi-leader shape). Pipelined: the blocks go in pieces of about kPiece
// bytes, piece k's node level beside piece k-1's rail reduce-scatter.
#include <algorithm>

#include "coll/collectives.hpp"
#include "coll/reduce_scatter/common.hpp"

namespace duct::coll {

namespace {
// Message steps: phase base + 16 x piece + node index or ring step.
constexpr std::uint32_t kNode = 0x000, kRail = 0x800;
constexpr std::size_t kPiece = 1u << 20;

// The rail of local index m's N blocks of `blocks`, in node order.
Layout rail_blocks(const Topology& t, const Layout& blocks, int m) {
  Layout r;
  for (const std::vector<int>& on : t.ranks_on) {
    r.off.push_back(blocks.off[static_cast<std::size_t>(on[static_cast<std::size_t>(m)])]);
    r.len.push_back(blocks.len[static_cast<std::size_t>(on[static_cast<std::size_t>(m)])]);
  }
  return r;
}

// (1) for piece `in` of the input blocks (by rank) and piece `acc_p` of
// this rank's rail blocks in acc (by node): acc = own contribution + every
// local peer's, peers' pieces received into tmp (a region of `stride`
// elements per peer, at the same offsets as in acc).
Sched node_reduce(Context& ctx, Link node_link, const void* src, void* acc, void* tmp, std::size_t stride,
                  MemKind kind, Layout in, Layout acc_p, DType dt, RedOp op, std::uint32_t step) {
  const Topology& t = ctx.topo;
  const int l = t.local_rank, L = node_link.g.n, N = t.num_nodes;
  const std::size_t esz = elem_size(dt.elem);
  std::vector<Request> reqs;
  for (int m = 0, k = 0; m < L; ++m) {
    if (m == l) continue;
    void* from_m = at(tmp, static_cast<std::size_t>(k++) * stride * esz);
    const Layout theirs = rail_blocks(t, in, m);
    for (int j = 0; j < N; ++j) {
      const auto J = static_cast<std::size_t>(j);
      const std::uint32_t st = step + static_cast<std::uint32_t>(j);
      if (acc_p.len[J] > 0) {
        reqs.emplace_back();
        DUCT_CO_TRY(node_link.recv(m, at(from_m, acc_p.off[J] * esz), acc_p.len[J] * esz, kind, st, &reqs.back()));
      }
      if (theirs.len[J] > 0) {
        reqs.emplace_back();
        DUCT_CO_TRY(node_link.send(m, at(src, theirs.off[J] * esz), theirs.len[J] * esz, kind, st, &reqs.back()));
      }
    }
  }
  const Layout own = rail_blocks(t, in, l);
  for (int j = 0; j < N; ++j) {
    const auto J = static_cast<std::size_t>(j);
    DUCT_CO_TRY(copy_local(at(acc, acc_p.off[J] * esz), kind, at(src, own.off[J] * esz), kind, own.len[J] * esz));
  }
  DUCT_CO_TRY(co_await wait(reqs));
  memory::Fence fence;
  for (int k = 0; k < L - 1; ++k)
    for (int j = 0; j < N; ++j) {
      const auto J = static_cast<std::size_t>(j);
      if (acc_p.len[J] == 0) continue;
      void* dst = at(acc, acc_p.off[J] * esz);
      DUCT_CO_TRY(reduce_local(dst, dst, at(tmp, (static_cast<std::size_t>(k) * stride + acc_p.off[J]) * esz),
                               acc_p.len[J], dt, op, kind, &fence));
      if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
    }
  co_return Status::ok();
}
}  // namespace

Sched reduce_scatter_split_rail(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  const int n = ctx.size();
  const Layout blocks = reduce_scatter_blocks(a, n);  // elements
  const std::size_t esz = elem_size(a.dt.elem);
  const MemKind kind = a.recv_kind;
  auto [node_link, rail_link, l, L, N] = levels(ctx, seq);

  const void* src = a.sendbuf;  // the whole input (the receive buffer when in place)
  if (a.send_kind != kind) {
    void* staged = nullptr;
    DUCT_CO_TRY(ctx.scratch(kind, blocks.total() * esz, 3, &staged));
    DUCT_CO_TRY(copy_local(staged, kind, a.sendbuf, a.send_kind, blocks.total() * esz));
    src = staged;
  }
  // This rank's rail's N blocks, concatenated in node order in acc.
  Layout mine = rail_blocks(t, blocks, l);
  {
    std::size_t off = 0;
    for (std::size_t j = 0; j < mine.len.size(); ++j) {
      mine.off[j] = off;
      off += mine.len[j];
    }
  }
  const std::size_t total = mine.total();
  void *acc = nullptr, *tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, std::max<std::size_t>(total, 1) * esz, 2, &acc));
  DUCT_CO_TRY(ctx.scratch(kind, std::max<std::size_t>(total * static_cast<std::size_t>(L - 1), 1) * esz, 4, &tmp));

  const std::size_t S = pipeline_segments(blocks.max_len() * esz, kPiece, N);
  const std::uint32_t stride = segment_stride(S);
  for (std::size_t k = 0; k < S + 1; ++k) {
    std::vector<Sched> level;
    if (k < S)  // (1) node level of piece k
      level.push_back(node_reduce(ctx, node_link, src, acc, tmp, total, kind, piece_of(blocks, k, S), piece_of(mine, k, S),
                                  a.dt, a.op, kNode + static_cast<std::uint32_t>(k) * stride));
    if (k >= 1)  // (2) rail l reduce-scatters piece k-1: node j's member ends with its own block's piece
      level.push_back(ring_reduce_scatter(ctx, rail_link, acc, acc, kind, piece_of(mine, k - 1, S), a.dt, a.op, 0,
                                          kRail + static_cast<std::uint32_t>(k - 1) * stride));
    if (!level.empty()) DUCT_CO_TRY(co_await all_of(std::move(level)));
  }
  const auto me = static_cast<std::size_t>(t.node);
  DUCT_CO_TRY(copy_local(a.recvbuf, kind, at(acc, mine.off[me] * esz), kind, mine.len[me] * esz));
  co_return Status::ok();
}

}  // namespace duct::coll
