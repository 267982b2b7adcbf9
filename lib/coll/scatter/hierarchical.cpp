// Node-aware scatter: the root sends its node's ranks their blocks itself,
// and the other nodes theirs down a k-nomial tree of the nodes' leaders
// (coll/node_tree.hpp; a node's leader is its lowest rank): each leader
// gets its subtree's blocks in one message from its parent's leader, sends
// each child its subtree's share, hands every rank of its node its block
// and keeps its own. Flat (the root to every leader directly: MVAPICH2's
// two-level scatter, `MPIR_Scatter_MV2_two_level_Direct`, its default
// across nodes) the root sends N - 1 + L - 1 messages; over the tree of
// radix k, (k - 1) ceil(log_k N) + L - 1 (node_tree_radix chooses; the
// mirror of gather/hierarchical.cpp). Any ranks per node (nodes may
// differ); the root packs a subtree whose ranks are not consecutive in the
// communicator (a host or device copy per block).
#include <vector>

#include "coll/collectives.hpp"
#include "coll/node_tree.hpp"

namespace duct::coll {

Sched scatter_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  const int n = ctx.size(), me = ctx.rank(), root = a.root;
  const std::size_t B = a.bytes;
  const NodeTree nt(t, root, node_tree_radix(ctx, B * static_cast<std::size_t>(n), kScatterTreeMaxBytes));
  const int v = nt.member(t.node);
  Link link{ctx, seq, Group{nullptr, n, me}};
  auto block = [&](int r) { return at(a.sendbuf, static_cast<std::size_t>(r) * B); };
  std::vector<Request> reqs;
  if (me == root) {
    if (!a.in_place) DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, block(me), a.send_kind, B));
    if (B == 0) co_return Status::ok();
    for (int r : nt.ranks_of(0)) {  // this node's ranks, one message each
      if (r == me) continue;
      reqs.emplace_back();
      DUCT_CO_TRY(link.send(r, block(r), B, a.send_kind, 0, &reqs.back()));
    }
    // Each child's subtree in one message to its leader, packed where its
    // ranks are not consecutive (run_start < 0).
    const std::vector<NodeTree::Subtree> kids = nt.children(0);
    std::vector<int> run(kids.size());
    std::size_t pack_bytes = 0;
    for (std::size_t i = 0; i < kids.size(); ++i) {
      run[i] = nt.run_start(kids[i].first, kids[i].end);
      if (run[i] < 0) pack_bytes += nt.ranks(kids[i].first, kids[i].end) * B;
    }
    void* pack = nullptr;
    if (pack_bytes > 0) DUCT_CO_TRY(ctx.scratch(a.send_kind, pack_bytes, 2, &pack));
    std::size_t packed = 0;
    for (std::size_t i = 0; i < kids.size(); ++i) {
      const void* from = run[i] >= 0 ? block(run[i]) : at(pack, packed);
      if (run[i] < 0)
        for (int u = kids[i].first; u < kids[i].end; ++u)
          for (int r : nt.ranks_of(u)) {
            DUCT_CO_TRY(copy_local(at(pack, packed), a.send_kind, block(r), a.send_kind, B));
            packed += B;
          }
      reqs.emplace_back();
      DUCT_CO_TRY(link.send(nt.leader(kids[i].first), from, nt.ranks(kids[i].first, kids[i].end) * B, a.send_kind, 0,
                            &reqs.back()));
    }
    DUCT_CO_TRY(co_await wait(reqs));
    co_return Status::ok();
  }
  if (B == 0) co_return Status::ok();
  const std::vector<int>& mine = nt.ranks_of(v);
  if (v == 0 || me != mine.front()) {  // from the root, or from this node's leader
    Request r;
    DUCT_CO_TRY(link.recv(v == 0 ? root : mine.front(), a.recvbuf, B, a.recv_kind, 0, &r));
    DUCT_CO_TRY(co_await wait(r));
    co_return Status::ok();
  }
  // This node's leader: its subtree's blocks from its parent's leader, then
  // each child's share, and one block to each rank of its node.
  void* all = nullptr;
  DUCT_CO_TRY(ctx.scratch(a.recv_kind, nt.ranks(v, nt.end(v)) * B, 2, &all));
  {
    Request r;
    DUCT_CO_TRY(link.recv(nt.leader(nt.tree.parent(v)), all, nt.ranks(v, nt.end(v)) * B, a.recv_kind, 0, &r));
    DUCT_CO_TRY(co_await wait(r));
  }
  for (const NodeTree::Subtree& kid : nt.children(v)) {
    reqs.emplace_back();
    DUCT_CO_TRY(link.send(nt.leader(kid.first), at(all, nt.ranks(v, kid.first) * B), nt.ranks(kid.first, kid.end) * B,
                          a.recv_kind, 0, &reqs.back()));
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
