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
// nodes are served at once, one per rail). A node of one rank has no node
// level. Every rank posts its sends of both levels at once, once it holds
// the message (the root: its node's ranks first, their trees wait for
// them; coll/msg_rounds.hpp, TreesBcast).
#include "coll/collectives.hpp"
#include "coll/msg_rounds.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kRootNode = 0x000, kNet = 0x100, kNode = 0x200;

// This rank's trees, in the order it takes part in them.
TreesBcast hierarchical_spec(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  const PortTree& pt = ctx.port_tree(a.root);
  const Group node = node_group(ctx);
  const int k = net_tree_radix(ctx, a.bytes);
  TreesBcast spec(ctx, seq, a.recvbuf, a.bytes, a.recv_kind);
  if (t.node == t.node_of[static_cast<std::size_t>(a.root)]) {
    spec.add(node, t.local_rank_of[static_cast<std::size_t>(a.root)], kRootNode, k);
    if (pt.me >= 0) spec.add(group_of(pt), 0, kNet, k);
  } else {
    if (pt.me >= 0) spec.add(group_of(pt), 0, kNet, k);
    if (node.n > 1) spec.add(node, pt.port, kNode, k);
  }
  return spec;
}
}  // namespace

DUCT_MSG_ALGORITHM(bcast_hierarchical, hierarchical_spec)

}  // namespace duct::coll
