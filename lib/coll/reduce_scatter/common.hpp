// Shared by the reduce-scatter algorithms.
#pragma once

#include "coll/collectives.hpp"

namespace duct::coll {

// The blocks of a reduce-scatter, in elements: uniform for
// reduce_scatter_block, the receive counts (consecutive) for reduce_scatter.
inline Layout reduce_scatter_blocks(const CollArgs& a, int n) {
  return a.coll == select::Coll::reduce_scatter ? a.recv_layout : Layout::uniform(a.count, n);
}

}  // namespace duct::coll
