// Split-rail reduce: reduce-scatter inside each node, each rail reduces its
// 1/L of the vector towards the root's node, the root's node gathers.
//
// With L ranks on each of N nodes and the root at local index lr of node
// rn: (1) a ring reduce-scatter among each node's ranks leaves local rank l
// with block l of the node's sum; (2) rail l reduces block l towards node
// rn's member (binomial over the rail); (3) on node rn, local rank l sends
// its block to the root. The network carries 1/L of the vector per rail
// (Rabenseifner's reduce-scatter + gather reduce, "Optimization of
// collective reduction operations", ICCS 2004, split into node and rail
// levels as UCC's cl/hier split_rail does).
#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kNodeRs = 0x000, kRail = 0x300, kGather = 0x700;
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
  const Layout blocks = Layout::even(a.count, L);
  const std::size_t mine = static_cast<std::size_t>(l), off = blocks.off[mine] * esz, len = blocks.len[mine];

  // (1) Node reduce-scatter: local rank l holds block l.
  DUCT_CO_TRY(co_await ring_reduce_scatter(ctx, node_link, a.sendbuf, acc, kind, blocks, a.dt, a.op, 0, kNodeRs));
  // (2) Rail l reduces block l towards the root's node.
  if (len > 0) {
    void* tmp = nullptr;
    DUCT_CO_TRY(ctx.scratch(kind, len * esz, 3, &tmp));
    DUCT_CO_TRY(co_await binomial_reduce(ctx, rail_link, at(acc, off), kind, at(acc, off), tmp, len, a.dt, a.op, kind,
                                         rn, kRail));
  }
  // (3) The root's node gathers the blocks at the root.
  if (t.node == rn) {
    if (root) {
      std::vector<Request> recvs(static_cast<std::size_t>(L));
      for (int m = 0; m < L; ++m) {
        const std::size_t b = static_cast<std::size_t>(m);
        if (m != lr && blocks.len[b] > 0)
          DUCT_CO_TRY(node_link.recv(m, at(acc, blocks.off[b] * esz), blocks.len[b] * esz, kind, kGather, &recvs[b]));
      }
      DUCT_CO_TRY(co_await wait(pointers(recvs)));
      if (acc != a.recvbuf) DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, acc, kind, bytes));
    } else if (len > 0) {
      Request s;
      DUCT_CO_TRY(node_link.send(lr, at(acc, off), len * esz, kind, kGather, &s));
      DUCT_CO_TRY(co_await wait(s));
    }
  }
  co_return Status::ok();
}

}  // namespace duct::coll
