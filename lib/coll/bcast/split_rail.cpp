// Split-rail broadcast: the root's node scatters the message over its L
// ranks, each rail carries its 1/L to the other nodes, every node
// allgathers.
//
// With L ranks on each of N nodes and the root at local index lr of node
// rn: (1) the root sends block l (1/L of the message) to local rank l of
// its node; (2) rail l broadcasts block l from node rn's member to every
// node (binomial over the rail: one message for two nodes); (3) a ring
// allgather among each node's ranks assembles the L blocks everywhere. The
// network carries the message once per receiving node, split over the L
// rails (van de Geijn's scatter + allgather broadcast, Barnett et al.,
// "Interprocessor collective communication library (InterCom)", SHPCC 1994,
// with the scatter inside the node and one broadcast per rail, as UCC's
// cl/hier split_rail and NCCL's one-ring-per-NIC do).
#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kScatter = 0x000, kRail = 0x100, kNodeAg = 0x600;
}  // namespace

Sched bcast_split_rail(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Topology& t = ctx.topo;
  DUCT_CO_TRY(rails(t));
  const bool root = ctx.rank() == a.root;
  void* buf = a.recvbuf;
  const MemKind kind = root ? a.send_kind : a.recv_kind;
  const int rn = t.node_of[static_cast<std::size_t>(a.root)], lr = t.local_rank_of[static_cast<std::size_t>(a.root)];
  auto [node_link, rail_link, l, L, N] = levels(ctx, seq);
  const Layout blocks = Layout::even(a.bytes, L);
  const std::size_t mine = static_cast<std::size_t>(l);

  // (1) Scatter inside the root's node.
  if (t.node == rn) {
    if (root) {
      std::vector<Request> sends(static_cast<std::size_t>(L));
      for (int m = 0; m < L; ++m)
        if (m != lr && blocks.len[static_cast<std::size_t>(m)] > 0)
          DUCT_CO_TRY(node_link.send(m, at(buf, blocks.off[static_cast<std::size_t>(m)]),
                                     blocks.len[static_cast<std::size_t>(m)], kind, kScatter,
                                     &sends[static_cast<std::size_t>(m)]));
      DUCT_CO_TRY(co_await wait(pointers(sends)));
    } else if (blocks.len[mine] > 0) {
      Request r;
      DUCT_CO_TRY(node_link.recv(lr, at(buf, blocks.off[mine]), blocks.len[mine], kind, kScatter, &r));
      DUCT_CO_TRY(co_await wait(r));
    }
  }
  // (2) Block l along rail l, from the root's node.
  if (blocks.len[mine] > 0)
    DUCT_CO_TRY(co_await binomial_bcast(ctx, rail_link, at(buf, blocks.off[mine]), blocks.len[mine], kind, rn, kRail));
  // (3) Every node's ranks exchange their blocks.
  DUCT_CO_TRY(co_await ring_allgather(ctx, node_link, buf, kind, blocks, 0, kNodeAg));
  co_return Status::ok();
}

}  // namespace duct::coll
