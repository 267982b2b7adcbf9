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
// multi-leader shape).
#include "coll/collectives.hpp"
#include "coll/reduce_scatter/common.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kNode = 0x000, kRail = 0x800;
}  // namespace

Sched reduce_scatter_split_rail(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  const int n = ctx.size();
  const Layout blocks = reduce_scatter_blocks(a, n);  // elements
  const std::size_t esz = elem_size(a.dt.elem);
  const MemKind kind = a.recv_kind;
  auto [node_link, rail_link, l, L, N] = levels(ctx, seq);
  auto blk = [&](int rank) { return static_cast<std::size_t>(rank); };

  const void* src = a.sendbuf;  // the whole input (the receive buffer when in place)
  if (a.send_kind != kind) {
    void* staged = nullptr;
    DUCT_CO_TRY(ctx.scratch(kind, blocks.total() * esz, 3, &staged));
    DUCT_CO_TRY(copy_local(staged, kind, a.sendbuf, a.send_kind, blocks.total() * esz));
    src = staged;
  }
  // A rail's N blocks, concatenated in node order (elements).
  auto rail_layout = [&](int m) {
    Layout r;
    std::size_t off = 0;
    for (int j = 0; j < N; ++j) {
      const std::size_t len = blocks.len[blk(t.ranks_on[static_cast<std::size_t>(j)][static_cast<std::size_t>(m)])];
      r.off.push_back(off);
      r.len.push_back(len);
      off += len;
    }
    return r;
  };
  const Layout mine = rail_layout(l);
  const std::size_t total = mine.total();
  void *acc = nullptr, *tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, std::max<std::size_t>(total, 1) * esz, 2, &acc));
  DUCT_CO_TRY(ctx.scratch(kind, std::max<std::size_t>(total * static_cast<std::size_t>(L - 1), 1) * esz, 4, &tmp));

  // (1) Inside the node.
  std::vector<Request> reqs;
  for (int m = 0, k = 0; m < L; ++m) {
    if (m == l) continue;
    void* from_m = at(tmp, static_cast<std::size_t>(k++) * total * esz);
    for (int j = 0; j < N; ++j) {
      const std::vector<int>& on = t.ranks_on[static_cast<std::size_t>(j)];
      const std::size_t theirs = blk(on[static_cast<std::size_t>(m)]);
      const std::uint32_t step = kNode + static_cast<std::uint32_t>(j);
      if (mine.len[static_cast<std::size_t>(j)] > 0) {
        reqs.emplace_back();
        DUCT_CO_TRY(node_link.recv(m, at(from_m, mine.off[static_cast<std::size_t>(j)] * esz),
                                   mine.len[static_cast<std::size_t>(j)] * esz, kind, step, &reqs.back()));
      }
      if (blocks.len[theirs] > 0) {
        reqs.emplace_back();
        DUCT_CO_TRY(node_link.send(m, at(src, blocks.off[theirs] * esz), blocks.len[theirs] * esz, kind, step,
                                   &reqs.back()));
      }
    }
  }
  for (int j = 0; j < N; ++j) {
    const std::size_t own = blk(t.ranks_on[static_cast<std::size_t>(j)][static_cast<std::size_t>(l)]);
    DUCT_CO_TRY(copy_local(at(acc, mine.off[static_cast<std::size_t>(j)] * esz), kind, at(src, blocks.off[own] * esz),
                           kind, blocks.len[own] * esz));
  }
  DUCT_CO_TRY(co_await wait(pointers(reqs)));
  memory::Fence fence;
  for (int k = 0; k < L - 1; ++k) {
    DUCT_CO_TRY(reduce_local(acc, acc, at(tmp, static_cast<std::size_t>(k) * total * esz), total, a.dt, a.op, kind,
                             &fence));
    if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
  }

  // (2) Rail l across the nodes: node j's member ends with block j, its own.
  DUCT_CO_TRY(co_await ring_reduce_scatter(ctx, rail_link, acc, acc, kind, mine, a.dt, a.op, 0, kRail));
  const std::size_t me = static_cast<std::size_t>(t.node);
  DUCT_CO_TRY(copy_local(a.recvbuf, kind, at(acc, mine.off[me] * esz), kind, mine.len[me] * esz));
  co_return Status::ok();
}

}  // namespace duct::coll
