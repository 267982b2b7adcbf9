// Node-aware reduce, for small vectors across nodes.
//
// The broadcast's levels (bcast/hierarchical.cpp) run backwards, each a
// binomial reduction (Thakur, Rabenseifner, Gropp 2005, §4.2, on subgroups
// as in MVAPICH2's and Open MPI coll/han's two-level reduce): (1) every node
// but the root's reduces inside itself to its port (coll/context.hpp,
// PortTree); (2) each tree of ports reduces over its rail towards its rank
// on the root's node, which adds its own input; (3) the root's node reduces
// those partial results (and the inputs of its ranks that are no port) to
// the root. The flat binomial tree brings ceil(log2 N) whole vectors into
// the root through its one NIC (3 nodes x 2 ranks, 2 rails, 4 KiB: two
// vectors over one link, 66-68 us); here the root's node takes them on all
// of its NICs at once. A node of one rank has no node level. The trees are
// fixed for a given layout and root, so the reduction order and the bits
// are the same every run.
#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kNode = 0x000, kNet = 0x100, kRootNode = 0x200;
}  // namespace

Sched reduce_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  const bool root = ctx.rank() == a.root;
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  const MemKind kind = root ? a.recv_kind : a.send_kind;
  const PortTree& pt = ctx.port_tree(a.root);
  const Link node{ctx, seq, node_group(ctx)};
  const Link tree = node.on(group_of(pt));
  const bool node_level = node.g.n > 1;
  // acc: this rank's partial result (the root's receive buffer at the
  // root); tmp: what a child sends.
  void* acc = a.recvbuf;
  if (!root) DUCT_CO_TRY(ctx.scratch(kind, bytes, 1, &acc));
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 0, &tmp));
  // What this rank contributes to the next level: its input, then its
  // level's partial result.
  const void* part = a.sendbuf;
  MemKind part_kind = a.send_kind;
  if (t.node != t.node_of[static_cast<std::size_t>(a.root)]) {
    if (node_level) {
      DUCT_CO_TRY(co_await binomial_reduce(ctx, node, part, part_kind, acc, tmp, a.count, a.dt, a.op, kind, pt.port,
                                           kNode));
      part = acc;
      part_kind = kind;
    }
    if (pt.me >= 0)
      DUCT_CO_TRY(co_await binomial_reduce(ctx, tree, part, part_kind, acc, tmp, a.count, a.dt, a.op, kind, 0, kNet));
    co_return Status::ok();
  }
  // The root's node: a port's input is its own plus its tree's.
  if (pt.me >= 0) {
    DUCT_CO_TRY(co_await binomial_reduce(ctx, tree, part, part_kind, acc, tmp, a.count, a.dt, a.op, kind, 0, kNet));
    part = acc;
    part_kind = kind;
  }
  if (node_level)
    DUCT_CO_TRY(co_await binomial_reduce(ctx, node, part, part_kind, acc, tmp, a.count, a.dt, a.op, kind,
                                         t.local_rank_of[static_cast<std::size_t>(a.root)], kRootNode));
  else if (part != acc)  // the root alone on its node, in no tree
    DUCT_CO_TRY(copy_local(acc, kind, part, part_kind, bytes));
  co_return Status::ok();
}

}  // namespace duct::coll
