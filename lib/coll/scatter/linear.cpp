// Scatter(v) straight from the root: the root sends each block to its rank
// (MPICH's algorithm for scatterv); every other rank posts one receive.
#include <vector>

#include "coll/collectives.hpp"
#include "coll/msg_rounds.hpp"

namespace duct::coll {

namespace {

// One round (coll/msg_rounds.hpp).
class ScatterLinear : CommSpec {
 public:
  using CommSpec::CommSpec;

  Status round(int, std::vector<Request>* reqs, bool*) {
    const int n = link.g.n, me = link.g.me;
    if (me != a.root) {
      if (a.bytes == 0) return Status::ok();
      reqs->emplace_back();
      return link.recv(a.root, a.recvbuf, a.bytes, a.recv_kind, 0, &reqs->back());
    }
    const RootBlocks blocks{a.coll == select::Coll::scatterv ? &a.send_layout : nullptr, a.bytes};
    for (int q = 0; q < n; ++q) {
      if (q == me || blocks.len(q) == 0) continue;
      reqs->emplace_back();
      DUCT_TRY(link.send(q, at(a.sendbuf, blocks.off(q)), blocks.len(q), a.send_kind, 0, &reqs->back()));
    }
    return copy_local(a.recvbuf, a.recv_kind, at(a.sendbuf, blocks.off(me)), a.send_kind, blocks.len(me));
  }
};

}  // namespace

DUCT_MSG_ALGORITHM(scatter_linear, ScatterLinear)

}  // namespace duct::coll
