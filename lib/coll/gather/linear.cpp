// Gather(v) straight to the root: every rank sends its block to the root,
// which posts all receives at once (MPICH's algorithm for gatherv). One
// message per rank; the root's link carries everything, so for long
// messages this is as good as a tree and has no forwarding copies. One
// round (coll/msg_rounds.hpp).
#include <vector>

#include "coll/collectives.hpp"
#include "coll/msg_rounds.hpp"

namespace duct::coll {

namespace {

class GatherLinear : CommSpec {
 public:
  using CommSpec::CommSpec;

  Status round(int, std::vector<Request>* reqs, bool*) {
    const int n = link.g.n, me = link.g.me;
    if (me != a.root) {
      if (a.bytes == 0) return Status::ok();
      reqs->emplace_back();
      return link.send(a.root, a.sendbuf, a.bytes, a.send_kind, 0, &reqs->back());
    }
    const RootBlocks blocks{a.coll == select::Coll::gatherv ? &a.recv_layout : nullptr, a.bytes};
    DUCT_TRY(copy_local(at(a.recvbuf, blocks.off(me)), a.recv_kind, a.sendbuf, a.send_kind, blocks.len(me)));
    for (int q = 0; q < n; ++q) {
      if (q == me || blocks.len(q) == 0) continue;
      reqs->emplace_back();
      DUCT_TRY(link.recv(q, at(a.recvbuf, blocks.off(q)), blocks.len(q), a.recv_kind, 0, &reqs->back()));
    }
    return Status::ok();
  }
};

}  // namespace

DUCT_MSG_ALGORITHM(gather_linear, GatherLinear)

}  // namespace duct::coll
