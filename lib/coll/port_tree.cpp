#include "coll/port_tree.hpp"

#include <algorithm>

#include "core/arith.hpp"

namespace duct::coll {

PortTree port_tree(const Topology& t, int root) {
  PortTree pt;
  const int N = t.num_nodes, rn = t.node_of[static_cast<std::size_t>(root)];
  const int lr = t.local_rank_of[static_cast<std::size_t>(root)];
  const auto& on = t.ranks_on;
  const int R = static_cast<int>(on[static_cast<std::size_t>(rn)].size());
  const auto port_of = [&](int k, int j) {
    return (lr + k) % std::min(R, static_cast<int>(on[static_cast<std::size_t>(j)].size()));
  };
  int p = t.local_rank;
  if (t.node != rn) {
    pt.port = p = port_of(mod(t.node - rn, N) - 1, t.node);
    if (t.local_rank != p) return pt;
  }
  pt.members.push_back(on[static_cast<std::size_t>(rn)][static_cast<std::size_t>(p)]);
  for (int k = 0; k < N - 1; ++k) {
    const int j = mod(rn + 1 + k, N);
    if (port_of(k, j) == p) pt.members.push_back(on[static_cast<std::size_t>(j)][static_cast<std::size_t>(p)]);
  }
  if (pt.members.size() < 2) {
    pt.members.clear();
    return pt;
  }
  pt.me = static_cast<int>(std::find(pt.members.begin(), pt.members.end(), t.rank) - pt.members.begin());
  return pt;
}

}  // namespace duct::coll
