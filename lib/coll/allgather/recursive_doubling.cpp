// Allgather by recursive doubling (powers of two), and the doubling phase
// as a building block (Rabenseifner's allreduce uses it).
//
// R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005, §4.3. In round i
// each rank exchanges the 2^i blocks it has gathered so far with the rank at
// distance 2^i; the blocks of a round are contiguous in the result, so each
// round is one message. log2(n) steps; selected only for power-of-two
// communicators (duct-info -a). On several nodes of 2^j ranks, node-aware
// order (below).
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched doubling_allgather(Context&, Link link, void* buf, MemKind kind, const Layout& blocks, std::uint32_t step_base) {
  const int n = link.g.n, me = link.g.me;
  const std::size_t total = blocks.total();
  auto first = [&](int b) { return b < n ? blocks.off[static_cast<std::size_t>(b)] : total; };
  std::uint32_t step = step_base;
  for (int mask = 1; mask < n; mask <<= 1, ++step) {
    const int peer = me ^ mask;
    const int mlo = me & ~(mask - 1), plo = peer & ~(mask - 1);
    Request s, r;
    DUCT_CO_TRY(link.send(peer, at(buf, first(mlo)), first(mlo + mask) - first(mlo), kind, step, &s));
    DUCT_CO_TRY(link.recv(peer, at(buf, first(plo)), first(plo + mask) - first(plo), kind, step, &r));
    DUCT_CO_TRY(co_await wait(s, r));
  }
  co_return Status::ok();
}

Sched allgather_recursive_doubling(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  if (!is_pow2(n)) co_return make_error(Errc::internal, "recursive-doubling allgather needs a power-of-two group");
  const std::size_t b = a.bytes;
  // On several nodes of 2^j ranks the partners go in node-aware order
  // (coll/common.hpp): the doubling's first steps, with the fewest blocks,
  // cross the nodes, its last j inside them, and each rank's NIC carries
  // 1/L of the result instead of all of it. Member v starts from rank v's
  // block (the blocks stay in rank order, so every round is still one
  // message): one message first takes each rank's block to the rank whose
  // member index it is. From kNodeAwareMinBytes in all.
  std::vector<int> members;
  int gme = me;
  const bool aware = b * static_cast<std::size_t>(n) >= kNodeAwareMinBytes && node_aware_order(ctx.topo, &members, &gme);
  if (gme == me) {
    DUCT_CO_TRY(copy_local(at(a.recvbuf, static_cast<std::size_t>(me) * b), a.recv_kind, a.sendbuf, a.send_kind, b));
  } else {
    Link flat{ctx, seq, Group{nullptr, n, me}};
    Request s, r;
    DUCT_CO_TRY(flat.send(members[static_cast<std::size_t>(me)], a.sendbuf, b, a.send_kind, kNodeAwareMoveStep, &s));
    DUCT_CO_TRY(flat.recv(gme, at(a.recvbuf, static_cast<std::size_t>(gme) * b), b, a.recv_kind, kNodeAwareMoveStep, &r));
    DUCT_CO_TRY(co_await wait(s, r));
  }
  Link link{ctx, seq, Group{aware ? members.data() : nullptr, n, gme}};
  DUCT_CO_TRY(co_await doubling_allgather(ctx, link, a.recvbuf, a.recv_kind, Layout::uniform(b, n), 0));
  co_return Status::ok();
}

}  // namespace duct::coll
