// Node-aware gather: each node's leader (its lowest rank) collects its
// node's blocks and sends them to the root in one message; on the root's
// own node every rank sends its block to the root itself. The root
// receives N - 1 + L - 1 messages instead of n - 1 (linear), and every
// block crosses the network once; the mirror of the node-aware scatter
// (scatter/hierarchical.cpp) and of MVAPICH2's two-level gather
// (`MPIR_Gather_MV2_two_level_Direct`). Any ranks per node (nodes may
// differ); the root unpacks the blocks of a node whose ranks are not
// consecutive in the communicator (a host or device copy per block).
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched gather_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  const int n = ctx.size(), me = ctx.rank(), root = a.root;
  const std::size_t B = a.bytes;
  const int x = t.node_of[static_cast<std::size_t>(root)], i = t.node;
  Link link{ctx, seq, Group{nullptr, n, me}};
  std::vector<Request> reqs;
  if (me == root) {
    auto block = [&](int r) { return at(a.recvbuf, static_cast<std::size_t>(r) * B); };
    if (!a.in_place) DUCT_CO_TRY(copy_local(block(me), a.recv_kind, a.sendbuf, a.send_kind, B));
    if (B == 0) co_return Status::ok();
    for (int r : t.ranks_on[static_cast<std::size_t>(x)]) {  // this node's ranks, one message each
      if (r == me) continue;
      reqs.emplace_back();
      DUCT_CO_TRY(link.recv(r, block(r), B, a.recv_kind, 0, &reqs.back()));
    }
    // Every other node: its ranks' blocks in one message from its leader,
    // into scratch where its ranks are not consecutive.
    const std::size_t pack_bytes = t.unconsecutive_ranks(x) * B;
    void* pack = nullptr;
    if (pack_bytes > 0) DUCT_CO_TRY(ctx.scratch(a.recv_kind, pack_bytes, 2, &pack));
    std::size_t packed = 0;
    for (int j = 0; j < t.num_nodes; ++j) {
      if (j == x) continue;
      const std::vector<int>& on = t.ranks_on[static_cast<std::size_t>(j)];
      void* into = block(on.front());
      if (!t.consecutive(j)) {
        into = at(pack, packed);
        packed += on.size() * B;
      }
      reqs.emplace_back();
      DUCT_CO_TRY(link.recv(on.front(), into, on.size() * B, a.recv_kind, 0, &reqs.back()));
    }
    DUCT_CO_TRY(co_await wait(reqs));
    packed = 0;
    for (int j = 0; j < t.num_nodes; ++j) {
      if (j == x || t.consecutive(j)) continue;
      const std::vector<int>& on = t.ranks_on[static_cast<std::size_t>(j)];
      for (std::size_t k = 0; k < on.size(); ++k)
        DUCT_CO_TRY(copy_local(block(on[k]), a.recv_kind, at(pack, packed + k * B), a.recv_kind, B));
      packed += on.size() * B;
    }
    co_return Status::ok();
  }
  if (B == 0) co_return Status::ok();
  const std::vector<int>& mine = t.ranks_on[static_cast<std::size_t>(i)];
  if (i == x || me != mine.front()) {  // to the root, or to this node's leader
    Request r;
    DUCT_CO_TRY(link.send(i == x ? root : mine.front(), a.sendbuf, B, a.send_kind, 0, &r));
    DUCT_CO_TRY(co_await wait(r));
    co_return Status::ok();
  }
  // This node's leader: its ranks' blocks, then all of them to the root.
  void* all = nullptr;
  DUCT_CO_TRY(ctx.scratch(a.send_kind, mine.size() * B, 2, &all));
  DUCT_CO_TRY(copy_local(all, a.send_kind, a.sendbuf, a.send_kind, B));
  for (std::size_t k = 1; k < mine.size(); ++k) {
    reqs.emplace_back();
    DUCT_CO_TRY(link.recv(mine[k], at(all, k * B), B, a.send_kind, 0, &reqs.back()));
  }
  DUCT_CO_TRY(co_await wait(reqs));
  Request r;
  DUCT_CO_TRY(link.send(root, all, mine.size() * B, a.send_kind, 0, &r));
  DUCT_CO_TRY(co_await wait(r));
  co_return Status::ok();
}

}  // namespace duct::coll
