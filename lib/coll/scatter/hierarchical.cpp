// Node-aware scatter: the root sends each other node its ranks' blocks in
// one message, to that node's leader (its lowest rank), which hands every
// rank of its node its block; on its own node the root sends each rank's
// block itself. The root sends N - 1 + L - 1 messages instead of n - 1
// (linear) and every block crosses the network once, in one of the
// ceil(log2 n) steps' worth of a binomial tree's messages; MVAPICH2's
// two-level scatter (`MPIR_Scatter_MV2_two_level_Direct`, its default
// across nodes) has this shape. Any ranks per node (nodes may differ);
// a node whose ranks are not consecutive in the communicator gets its
// blocks packed by the root (a host or device copy per block).
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched scatter_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  const int n = ctx.size(), me = ctx.rank(), root = a.root;
  const std::size_t B = a.bytes;
  const int x = t.node_of[static_cast<std::size_t>(root)], i = t.node;
  Link link{ctx, seq, Group{nullptr, n, me}};
  auto block = [&](int r) { return at(a.sendbuf, static_cast<std::size_t>(r) * B); };
  std::vector<Request> reqs;
  if (me == root) {
    if (!a.in_place) DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, block(me), a.send_kind, B));
    if (B == 0) co_return Status::ok();
    // This node's ranks, one message each.
    for (int r : t.ranks_on[static_cast<std::size_t>(x)]) {
      if (r == me) continue;
      reqs.emplace_back();
      DUCT_CO_TRY(link.send(r, block(r), B, a.send_kind, 0, &reqs.back()));
    }
    // Every other node: its ranks' blocks in one message to its leader,
    // packed where its ranks are not consecutive.
    const std::size_t pack_bytes = t.unconsecutive_ranks(x) * B;
    void* pack = nullptr;
    if (pack_bytes > 0) DUCT_CO_TRY(ctx.scratch(a.send_kind, pack_bytes, 2, &pack));
    std::size_t packed = 0;
    for (int j = 0; j < t.num_nodes; ++j) {
      if (j == x) continue;
      const std::vector<int>& on = t.ranks_on[static_cast<std::size_t>(j)];
      const void* from = block(on.front());
      if (!t.consecutive(j)) {
        void* p = at(pack, packed);
        for (std::size_t k = 0; k < on.size(); ++k)
          DUCT_CO_TRY(copy_local(at(p, k * B), a.send_kind, block(on[k]), a.send_kind, B));
        packed += on.size() * B;
        from = p;
      }
      reqs.emplace_back();
      DUCT_CO_TRY(link.send(on.front(), from, on.size() * B, a.send_kind, 0, &reqs.back()));
    }
    DUCT_CO_TRY(co_await wait(reqs));
    co_return Status::ok();
  }
  if (B == 0) co_return Status::ok();
  const std::vector<int>& mine = t.ranks_on[static_cast<std::size_t>(i)];
  if (i == x || me != mine.front()) {  // from the root, or from this node's leader
    Request r;
    DUCT_CO_TRY(link.recv(i == x ? root : mine.front(), a.recvbuf, B, a.recv_kind, 0, &r));
    DUCT_CO_TRY(co_await wait(r));
    co_return Status::ok();
  }
  // This node's leader: its ranks' blocks from the root, then one to each.
  void* all = nullptr;
  DUCT_CO_TRY(ctx.scratch(a.recv_kind, mine.size() * B, 2, &all));
  {
    Request r;
    DUCT_CO_TRY(link.recv(root, all, mine.size() * B, a.recv_kind, 0, &r));
    DUCT_CO_TRY(co_await wait(r));
  }
  for (std::size_t k = 1; k < mine.size(); ++k) {
    reqs.emplace_back();
    DUCT_CO_TRY(link.send(mine[k], at(all, k * B), B, a.recv_kind, 0, &reqs.back()));
  }
  DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, all, a.recv_kind, B));
  DUCT_CO_TRY(co_await wait(reqs));
  co_return Status::ok();
}

}  // namespace duct::coll
