// Node-aware gather: each node's leader (its lowest rank) collects its
// node's blocks; the leaders then gather to the root over a k-nomial tree
// of the nodes (coll/node_tree.hpp), each sending its whole subtree's
// blocks in one message. On the root's own node every rank sends its block
// to the root itself. Flat (every leader straight to the root, as MVAPICH2's
// two-level gather `MPIR_Gather_MV2_two_level_Direct`) the root receives
// N - 1 + L - 1 messages; over the tree of radix k, (k - 1) ceil(log_k N)
// + L - 1, where a message's fixed cost at the root outweighs the tree's
// extra hops (node_tree_radix). Every block crosses the network
// ceil(log_k N) times at most. The mirror of the node-aware scatter
// (scatter/hierarchical.cpp). Any ranks per node (nodes may differ); the
// root unpacks a subtree whose ranks are not consecutive in the
// communicator (a host or device copy per block).
#include <algorithm>
#include <vector>

#include "coll/collectives.hpp"
#include "coll/node_tree.hpp"
#include "core/config.hpp"

namespace duct::coll {

int node_tree_radix(const Context& ctx, std::size_t total, std::size_t max_total) {
  const int N = ctx.topo.num_nodes;
  const long forced = config::get().node_tree_radix;  // DUCT_NODE_TREE_RADIX
  if (forced == 1) return N;
  if (forced >= 2) return static_cast<int>(std::min<long>(forced, N));
  if (N < kNodeTreeMinNodes || total > max_total) return N;  // flat
  int k = 2;
  while (k * k < N) ++k;
  return k;
}

Sched gather_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  const int n = ctx.size(), me = ctx.rank(), root = a.root;
  const std::size_t B = a.bytes;
  const NodeTree nt(t, root, node_tree_radix(ctx, B * static_cast<std::size_t>(n), kGatherTreeMaxBytes));
  const int v = nt.member(t.node);
  Link link{ctx, seq, Group{nullptr, n, me}};
  std::vector<Request> reqs;
  if (me == root) {
    auto block = [&](int r) { return at(a.recvbuf, static_cast<std::size_t>(r) * B); };
    if (!a.in_place) DUCT_CO_TRY(copy_local(block(me), a.recv_kind, a.sendbuf, a.send_kind, B));
    if (B == 0) co_return Status::ok();
    for (int r : nt.ranks_of(0)) {  // this node's ranks, one message each
      if (r == me) continue;
      reqs.emplace_back();
      DUCT_CO_TRY(link.recv(r, block(r), B, a.recv_kind, 0, &reqs.back()));
    }
    // Each child's subtree in one message from its leader, into scratch
    // where its ranks are not consecutive (run_start < 0).
    const std::vector<NodeTree::Subtree> kids = nt.children(0);
    std::vector<int> run(kids.size());
    std::size_t pack_bytes = 0;
    for (std::size_t i = 0; i < kids.size(); ++i) {
      run[i] = nt.run_start(kids[i].first, kids[i].end);
      if (run[i] < 0) pack_bytes += nt.ranks(kids[i].first, kids[i].end) * B;
    }
    void* pack = nullptr;
    if (pack_bytes > 0) DUCT_CO_TRY(ctx.scratch(a.recv_kind, pack_bytes, 2, &pack));
    std::size_t packed = 0;
    for (std::size_t i = 0; i < kids.size(); ++i) {
      const std::size_t bytes = nt.ranks(kids[i].first, kids[i].end) * B;
      void* into = run[i] >= 0 ? block(run[i]) : at(pack, packed);
      if (run[i] < 0) packed += bytes;
      reqs.emplace_back();
      DUCT_CO_TRY(link.recv(nt.leader(kids[i].first), into, bytes, a.recv_kind, 0, &reqs.back()));
    }
    DUCT_CO_TRY(co_await wait(reqs));
    packed = 0;
    for (std::size_t i = 0; i < kids.size(); ++i) {
      if (run[i] >= 0) continue;
      for (int u = kids[i].first; u < kids[i].end; ++u)
        for (int r : nt.ranks_of(u)) {
          DUCT_CO_TRY(copy_local(block(r), a.recv_kind, at(pack, packed), a.recv_kind, B));
          packed += B;
        }
    }
    co_return Status::ok();
  }
  if (B == 0) co_return Status::ok();
  const std::vector<int>& mine = nt.ranks_of(v);
  if (v == 0 || me != mine.front()) {  // to the root, or to this node's leader
    Request r;
    DUCT_CO_TRY(link.send(v == 0 ? root : mine.front(), a.sendbuf, B, a.send_kind, 0, &r));
    DUCT_CO_TRY(co_await wait(r));
    co_return Status::ok();
  }
  // This node's leader: its ranks' blocks and its children's subtrees, then
  // all of them to its parent's leader.
  void* all = nullptr;
  DUCT_CO_TRY(ctx.scratch(a.send_kind, nt.ranks(v, nt.end(v)) * B, 2, &all));
  DUCT_CO_TRY(copy_local(all, a.send_kind, a.sendbuf, a.send_kind, B));
  for (std::size_t k = 1; k < mine.size(); ++k) {
    reqs.emplace_back();
    DUCT_CO_TRY(link.recv(mine[k], at(all, k * B), B, a.send_kind, 0, &reqs.back()));
  }
  for (const NodeTree::Subtree& kid : nt.children(v)) {
    reqs.emplace_back();
    DUCT_CO_TRY(link.recv(nt.leader(kid.first), at(all, nt.ranks(v, kid.first) * B), nt.ranks(kid.first, kid.end) * B,
                          a.send_kind, 0, &reqs.back()));
  }
  DUCT_CO_TRY(co_await wait(reqs));
  Request r;
  DUCT_CO_TRY(link.send(nt.leader(nt.tree.parent(v)), all, nt.ranks(v, nt.end(v)) * B, a.send_kind, 0, &r));
  DUCT_CO_TRY(co_await wait(r));
  co_return Status::ok();
}

}  // namespace duct::coll
