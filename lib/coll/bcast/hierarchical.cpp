// Node-aware broadcast, for small messages across nodes.
//
// Three levels, each a binomial tree (Thakur, Rabenseifner, Gropp 2005,
// §4.1, on subgroups as in MVAPICH2's and Open MPI coll/han's two-level
// broadcast): (1) the root broadcasts inside its node; (2) each rank of the
// root's node that is a port (coll/common.hpp, PortTree) broadcasts to one
// rank of each node of its tree, over its own rail; (3) that rank
// broadcasts inside its node. A flat binomial tree sends the message
// ceil(log2 n) times from the root itself, every network copy through the
// root's one NIC; here the root's node sends each network copy once, from
// as many NICs as it has ranks (3 nodes x 2 ranks, 2 rails: the two other
// nodes are served at once, one per rail). The root's own tree starts at
// once, beside its node broadcast.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kRootNode = 0x000, kNet = 0x100, kNode = 0x200;
}  // namespace

Sched bcast_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  const PortTree pt = port_tree(t, a.root);
  Link node{ctx, seq, node_group(ctx)};
  void* buf = a.recvbuf;
  const std::size_t bytes = a.bytes;
  const MemKind kind = a.recv_kind;
  if (t.node == t.node_of[static_cast<std::size_t>(a.root)]) {
    const int lr = t.local_rank_of[static_cast<std::size_t>(a.root)];
    std::vector<Sched> levels;
    levels.push_back(binomial_bcast(ctx, node, buf, bytes, kind, lr, kRootNode));
    if (pt.me >= 0) {
      if (t.rank == a.root) {  // the root has the message: its tree need not wait for the node
        levels.push_back(binomial_bcast(ctx, node.on(pt.group()), buf, bytes, kind, 0, kNet));
      } else {
        DUCT_CO_TRY(co_await all_of(std::move(levels)));
        levels.clear();
        levels.push_back(binomial_bcast(ctx, node.on(pt.group()), buf, bytes, kind, 0, kNet));
      }
    }
    DUCT_CO_TRY(co_await all_of(std::move(levels)));
  } else {
    if (pt.me >= 0) DUCT_CO_TRY(co_await binomial_bcast(ctx, node.on(pt.group()), buf, bytes, kind, 0, kNet));
    DUCT_CO_TRY(co_await binomial_bcast(ctx, node, buf, bytes, kind, pt.port, kNode));
  }
  co_return Status::ok();
}

}  // namespace duct::coll
