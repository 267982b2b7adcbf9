// Node-aware broadcast, for small messages across nodes.
//
// Three levels, each a binomial tree (Thakur, Rabenseifner, Gropp 2005,
// §4.1, on subgroups as in MVAPICH2's and Open MPI coll/han's two-level
// broadcast): (1) the root broadcasts inside its node; (2) each rank of the
// root's node that is a port (coll/context.hpp, PortTree) broadcasts to one
// rank of each node of its tree, over its own rail; (3) that rank
// broadcasts inside its node. A flat binomial tree sends the message
// ceil(log2 n) times from the root itself, every network copy through the
// root's one NIC; here the root's node sends each network copy once, from
// as many NICs as it has ranks (3 nodes x 2 ranks, 2 rails: the two other
// nodes are served at once, one per rail). The root posts its sends of
// both levels at once (its node's ranks first: their trees wait for them),
// and a node of one rank has no node level.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kRootNode = 0x000, kNet = 0x100, kNode = 0x200;
}  // namespace

Sched bcast_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  const PortTree& pt = ctx.port_tree(a.root);
  const Link node{ctx, seq, node_group(ctx)};
  const Link tree = node.on(group_of(pt));
  void* buf = a.recvbuf;
  const std::size_t bytes = a.bytes;
  const MemKind kind = a.recv_kind;
  const bool node_level = node.g.n > 1;
  if (t.node == t.node_of[static_cast<std::size_t>(a.root)]) {
    const int lr = t.local_rank_of[static_cast<std::size_t>(a.root)];
    if (t.rank == a.root) {
      std::vector<Request> sends;
      DUCT_CO_TRY(binomial_sends(node, buf, bytes, kind, lr, kRootNode, &sends));
      if (pt.me >= 0) DUCT_CO_TRY(binomial_sends(tree, buf, bytes, kind, 0, kNet, &sends));
      DUCT_CO_TRY(co_await wait(sends));
      co_return Status::ok();
    }
    DUCT_CO_TRY(co_await binomial_bcast(ctx, node, buf, bytes, kind, lr, kRootNode));
    if (pt.me >= 0) DUCT_CO_TRY(co_await binomial_bcast(ctx, tree, buf, bytes, kind, 0, kNet));
  } else {
    if (pt.me >= 0) DUCT_CO_TRY(co_await binomial_bcast(ctx, tree, buf, bytes, kind, 0, kNet));
    if (node_level) DUCT_CO_TRY(co_await binomial_bcast(ctx, node, buf, bytes, kind, pt.port, kNode));
  }
  co_return Status::ok();
}

}  // namespace duct::coll
