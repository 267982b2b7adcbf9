// Reduce-scatter(_block) by recursive halving (powers of two), and the
// halving phase as a building block (Rabenseifner's allreduce uses it).
//
// R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005, §4.4. In round i
// each rank keeps one half of the blocks still in play, sends the other half
// to the rank at distance n/2^(i+1) and reduces that rank's copy of the half
// it keeps: log2(n) steps moving (n-1)/n of the vector. Blocks may have any
// sizes (reduce_scatter), in member order. Both partners reduce
// lower-member (op) higher-member data (the ops duct reduces are
// commutative: user ops go to the MPI library). On several nodes of 2^j
// ranks the partners go in node-aware order (coll/common.hpp): the first j
// halvings, the biggest, stay inside the nodes, and one message more takes
// each block to its rank.
#include "coll/collectives.hpp"
#include "coll/reduce_scatter/common.hpp"

namespace duct::coll {

Sched halving_reduce_scatter(Context&, Link link, void* acc, void* tmp, MemKind kind, const Layout& blocks, DType dt,
                             RedOp op, std::uint32_t step_base) {
  const int n = link.g.n, me = link.g.me;
  const std::size_t esz = elem_size(dt.elem), total = blocks.total();
  auto first = [&](int b) { return b < n ? blocks.off[static_cast<std::size_t>(b)] : total; };
  memory::Fence fence;
  int lo = 0, hi = n;
  std::uint32_t step = step_base;
  for (int mask = n / 2; mask > 0; mask >>= 1, ++step) {
    const int peer = me ^ mask, mid = lo + mask;
    const bool upper = (me & mask) != 0;
    const int keep_lo = upper ? mid : lo, keep_hi = upper ? hi : mid;
    const int give_lo = upper ? lo : mid, give_hi = upper ? mid : hi;
    const std::size_t keep = first(keep_hi) - first(keep_lo), give = first(give_hi) - first(give_lo);
    Request s, r;
    DUCT_CO_TRY(link.send(peer, at(acc, first(give_lo) * esz), give * esz, kind, step, &s));
    DUCT_CO_TRY(link.recv(peer, tmp, keep * esz, kind, step, &r));
    DUCT_CO_TRY(co_await wait(s, r));
    void* mine = at(acc, first(keep_lo) * esz);
    if (peer < me)
      DUCT_CO_TRY(reduce_local(mine, tmp, mine, keep, dt, op, kind, &fence));
    else
      DUCT_CO_TRY(reduce_local(mine, mine, tmp, keep, dt, op, kind, &fence));
    if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
    lo = keep_lo;
    hi = keep_hi;
  }
  co_return Status::ok();
}

Sched reduce_scatter_recursive_halving(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  if (!is_pow2(n)) co_return make_error(Errc::internal, "recursive halving needs a power-of-two group");
  const Layout blocks = reduce_scatter_blocks(a, n);
  const std::size_t esz = elem_size(a.dt.elem), bytes = blocks.total() * esz;
  const MemKind kind = a.recv_kind;
  void *acc = nullptr, *tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 2, &acc));
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 3, &tmp));
  // On several nodes of 2^j ranks the partners go in node-aware order
  // (coll/common.hpp) while the halves stay in rank order, contiguous: the
  // halving over the reordered group leaves member v (rank members[v])
  // with rank v's block, and one more message takes each block to its
  // rank. It costs a message of one block and saves the NICs (L - 1) / L
  // of what they carry: from kNodeAwareMinBytes, decided alike on every
  // rank whatever its memory kind.
  std::vector<int> members;
  int gme = me;
  const bool aware = bytes >= kNodeAwareMinBytes && node_aware_order(ctx.topo, &members, &gme);
  DUCT_CO_TRY(copy_local(acc, kind, a.sendbuf, a.send_kind, bytes));
  Link link{ctx, seq, Group{aware ? members.data() : nullptr, n, gme}};
  DUCT_CO_TRY(co_await halving_reduce_scatter(ctx, link, acc, tmp, kind, blocks, a.dt, a.op, 0));
  const std::size_t held = static_cast<std::size_t>(gme), own = static_cast<std::size_t>(me);
  if (gme == me)
    co_return copy_local(a.recvbuf, kind, at(acc, blocks.off[own] * esz), kind, blocks.len[own] * esz);
  // This rank holds rank gme's block; rank members[me] (the member whose
  // index is this rank) holds this rank's.
  Link flat{ctx, seq, Group{nullptr, n, me}};
  Request s, r;
  DUCT_CO_TRY(flat.send(gme, at(acc, blocks.off[held] * esz), blocks.len[held] * esz, kind, kNodeAwareMoveStep, &s));
  DUCT_CO_TRY(flat.recv(members[own], a.recvbuf, blocks.len[own] * esz, kind, kNodeAwareMoveStep, &r));
  DUCT_CO_TRY(co_await wait(s, r));
  co_return Status::ok();
}

}  // namespace duct::coll
