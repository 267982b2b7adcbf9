// duct coll: the port trees of the node-aware rooted forms.
//
// Computed from the topology alone, below the context that keeps them per
// root (Context::port_tree) and the algorithms that run over them
// (coll/bcast/hierarchical.cpp, coll/reduce/hierarchical.cpp).
#pragma once

#include <vector>

#include "core/comm.hpp"

namespace duct::coll {

// The network level of the node-aware rooted forms (bcast and reduce
// `hierarchical`): one binomial tree per port of the root's node, so the
// root's node sends (or takes) its messages on all of its NICs at once
// rather than on the root's one. The other nodes, taken in order after the
// root's node rn (k = 0, 1, ...), join the tree of port
// p = (lr + k) mod min(R, n_j), where lr is the root's local rank and R and
// n_j the ranks on rn and on node j: local rank p of node j joins the tree
// rooted at local rank p of rn. Local rank p of every node is on rail p mod
// K (the NIC choice, core/netdev), so each tree runs over one rail; the
// first node after rn joins the root's own tree where it has a rank of the
// root's local index.
struct PortTree {
  std::vector<int> members;  // communicator ranks: the port on rn, then one rank per node of the tree
  int me = -1;               // this rank's index in members; -1: in no tree (or a tree of one)
  int port = 0;              // off rn: the local rank of this node that joins a tree
};

// This rank's port tree for `root` on topology `t` (as above).
PortTree port_tree(const Topology& t, int root);

}  // namespace duct::coll
