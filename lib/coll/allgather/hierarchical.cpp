// Node-aware allgather, for small blocks across nodes.
//
// Each node's leader (its lowest rank) gathers the node's blocks (one
// message from every other local rank), the leaders allgather the nodes'
// packs among themselves (recursive doubling for a power-of-two number of
// nodes, else a ring), and each leader broadcasts the whole result inside
// its node (binomial). Only one rank per node crosses the network, with
// one message per step that carries all of its node's blocks: the
// two-level allgather of MVAPICH2 and Open MPI's coll/han (node gather,
// leaders' allgather, node broadcast), for the sizes where a message's
// latency and the number of processes driving the network decide, not
// bandwidth. Any number of ranks per node and of nodes.
//
// A node's pack is its blocks in local (rank) order, the packs in node
// order. Where every node's ranks are consecutive (block placement, the
// common launch), that is the result's own layout and the packs are
// gathered straight into the receive buffer; otherwise into scratch and
// unpacked by the leader.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kNodeGather = 0x000, kLeaders = 0x100, kNodeBcast = 0xf00;
}  // namespace

Sched allgather_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  const std::size_t b = a.bytes, n = static_cast<std::size_t>(ctx.size());
  const MemKind kind = a.recv_kind;
  Link link{ctx, seq, node_group(ctx)};
  const int L = link.g.n;
  if (ctx.leader_index() < 0) {
    Request s;
    DUCT_CO_TRY(link.send(0, a.sendbuf, b, a.send_kind, kNodeGather, &s));
    DUCT_CO_TRY(co_await wait(s));
  } else {
    Layout packs;
    bool in_order = true;
    std::size_t off = 0;
    for (const std::vector<int>& on : t.ranks_on) {
      packs.off.push_back(off);
      packs.len.push_back(on.size() * b);
      for (std::size_t m = 0; m < on.size(); ++m)
        in_order = in_order && static_cast<std::size_t>(on[m]) * b == off + m * b;
      off += on.size() * b;
    }
    void* pack = a.recvbuf;
    if (!in_order) DUCT_CO_TRY(ctx.scratch(kind, n * b, 3, &pack));
    void* mine = at(pack, packs.off[static_cast<std::size_t>(t.node)]);
    DUCT_CO_TRY(copy_local(mine, kind, a.sendbuf, a.send_kind, b));
    std::vector<Request> got(static_cast<std::size_t>(L));
    for (int m = 1; m < L; ++m)
      DUCT_CO_TRY(link.recv(m, at(mine, static_cast<std::size_t>(m) * b), b, kind, kNodeGather,
                            &got[static_cast<std::size_t>(m)]));
    DUCT_CO_TRY(co_await wait(got));
    const Group lg = leader_group(ctx);
    if (is_pow2(lg.n))
      DUCT_CO_TRY(co_await doubling_allgather(ctx, link.on(lg), pack, kind, packs, kLeaders));
    else
      DUCT_CO_TRY(co_await ring_allgather(ctx, link.on(lg), pack, kind, packs, 0, kLeaders));
    if (!in_order)
      for (std::size_t j = 0; j < t.ranks_on.size(); ++j)
        for (std::size_t m = 0; m < t.ranks_on[j].size(); ++m)
          DUCT_CO_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(t.ranks_on[j][m]) * b), kind,
                                 at(pack, packs.off[j] + m * b), kind, b));
  }
  DUCT_CO_TRY(co_await binomial_bcast(ctx, link, a.recvbuf, n * b, kind, 0, kNodeBcast));
  co_return Status::ok();
}

}  // namespace duct::coll
