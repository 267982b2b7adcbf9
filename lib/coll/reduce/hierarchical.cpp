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
#include "coll/msg_rounds.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kNode = 0x000, kNet = 0x100, kRootNode = 0x200;

// This rank's trees, in order (coll/msg_rounds.hpp, TreesReduce): its input
// goes into the first, each tree's partial result into the next.
TreesReduce hierarchical_spec(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  const PortTree& pt = ctx.port_tree(a.root);
  const Group node = node_group(ctx);
  const int k = net_tree_radix(ctx, a.count * elem_size(a.dt.elem));  // rooted_reduce's scratch holds k - 1 vectors
  TreesReduce spec = rooted_reduce(ctx, a, seq);
  if (t.node != t.node_of[static_cast<std::size_t>(a.root)]) {
    if (node.n > 1) spec.add(node, pt.port, kNode, k);
    if (pt.me >= 0) spec.add(group_of(pt), 0, kNet, k);
  } else {
    // The root's node: a port's input is its own plus its tree's.
    if (pt.me >= 0) spec.add(group_of(pt), 0, kNet, k);
    if (node.n > 1) spec.add(node, t.local_rank_of[static_cast<std::size_t>(a.root)], kRootNode, k);
  }
  return spec;
}
}  // namespace

DUCT_MSG_ALGORITHM(reduce_hierarchical, hierarchical_spec)

}  // namespace duct::coll
