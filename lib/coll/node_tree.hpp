// The node leaders' tree of the rooted node-aware forms (gather and scatter
// hierarchical): the nodes numbered from the root's node (member v is node
// (x + v) mod N, x the root's node), joined by a k-nomial tree
// (KnomialTree, coll/common.hpp). Member 0's leader is the root; every
// other node's is its lowest rank. A member's subtree is the members
// [v, end(v)); a leader holds its subtree's blocks in member order, each
// node's ranks in Topology::ranks_on order. k >= N is the flat tree: every
// leader sends to (or receives from) the root directly.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "coll/common.hpp"
#include "core/comm.hpp"

namespace duct::coll {

struct NodeTree {
  const Topology& t;
  int root;
  int x;                           // the root's node
  KnomialTree tree;                // over t.num_nodes members
  std::vector<std::size_t> first;  // first[v]: the ranks of members 0..v-1 (N + 1 entries)

  NodeTree(const Topology& topo, int root_rank, int radix)
      : t(topo), root(root_rank), x(topo.node_of[static_cast<std::size_t>(root_rank)]),
        tree{topo.num_nodes, std::max(radix, 2)}, first(static_cast<std::size_t>(topo.num_nodes) + 1, 0) {
    for (int v = 0; v < tree.n; ++v)
      first[static_cast<std::size_t>(v) + 1] = first[static_cast<std::size_t>(v)] + ranks_of(v).size();
  }
  int node(int v) const noexcept { return (x + v) % tree.n; }
  int member(int node_index) const noexcept { return (node_index - x + tree.n) % tree.n; }
  const std::vector<int>& ranks_of(int v) const { return t.ranks_on[static_cast<std::size_t>(node(v))]; }
  int leader(int v) const { return v == 0 ? root : ranks_of(v).front(); }
  int end(int v) const noexcept { return v == 0 ? tree.n : std::min(tree.n, v + tree.place(v)); }
  // The ranks of members [v, e).
  std::size_t ranks(int v, int e) const noexcept {
    return first[static_cast<std::size_t>(e)] - first[static_cast<std::size_t>(v)];
  }
  // The first rank of members [v, e) when their ranks, in member order, are
  // consecutive communicator ranks (one contiguous piece of a rank-ordered
  // buffer); -1 when they are not.
  int run_start(int v, int e) const {
    const int r0 = ranks_of(v).front();
    int want = r0;
    for (int u = v; u < e; ++u)
      for (int r : ranks_of(u))
        if (r != want++) return -1;
    return r0;
  }
  // A child's subtree: members [first, end).
  struct Subtree {
    int first, end;
  };
  // Member v's children, nearest first.
  std::vector<Subtree> children(int v) const {
    std::vector<Subtree> out;
    const int top = tree.place(v);
    for (int m = 1; m < top; m *= tree.k)
      for (int j = 1; j < tree.k; ++j) {
        const int c = v + j * m;
        if (c >= tree.n) return out;
        out.push_back({c, std::min(tree.n, c + m)});
      }
    return out;
  }
};

}  // namespace duct::coll
