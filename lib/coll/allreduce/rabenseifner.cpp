// Allreduce by Rabenseifner's algorithm.
//
// R. Rabenseifner, "Optimization of collective reduction operations", ICCS
// 2004; Thakur, Rabenseifner, Gropp 2005, §4.4. A reduce-scatter by
// recursive halving (each round keeps half of the blocks still in play,
// exchanging the other half with the partner at distance p/2, p/4, ...)
// followed by an allgather by recursive doubling (the same partners in
// reverse): 2 log2(p) messages and 2(p-1)/p of the vector per rank. For
// p = 2^k + rem ranks, the first 2*rem fold in pairs before and unfold after,
// as in recursive doubling; the two phases then run over the group of the
// 2^k ranks left. On several nodes of 2^j ranks each (a power of two in
// all) the group is in node-aware order (coll/common.hpp): a rank's NIC
// carries 2(p-1)/p of the vector divided by the ranks per node.
#include <bit>
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched fold_pairs(Link link, void* acc, void* tmp, MemKind kind, std::size_t count, DType dt, RedOp op,
                 std::uint32_t step, int* newrank) {
  const int n = link.g.n, rank = link.g.me;
  const int rem = n - static_cast<int>(std::bit_floor(static_cast<unsigned>(n)));
  const std::size_t bytes = count * elem_size(dt.elem);
  *newrank = rank - rem;
  if (rank >= 2 * rem) co_return Status::ok();
  Request r;
  if (rank % 2 == 0) {
    DUCT_CO_TRY(link.send(rank + 1, acc, bytes, kind, step, &r));
    DUCT_CO_TRY(co_await wait(r));
    *newrank = -1;
    co_return Status::ok();
  }
  DUCT_CO_TRY(link.recv(rank - 1, tmp, bytes, kind, step, &r));
  DUCT_CO_TRY(co_await wait(r));
  memory::Fence fence;
  DUCT_CO_TRY(reduce_local(acc, tmp, acc, count, dt, op, kind, &fence));
  if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
  *newrank = rank / 2;
  co_return Status::ok();
}

std::vector<int> folded_members(int n) {
  const int p2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(n))), rem = n - p2;
  std::vector<int> members(static_cast<std::size_t>(p2));
  for (int i = 0; i < p2; ++i) members[static_cast<std::size_t>(i)] = i < rem ? i * 2 + 1 : i + rem;
  return members;
}

Sched allreduce_rabenseifner(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), rank = ctx.rank();
  const std::size_t esz = elem_size(a.dt.elem), bytes = a.count * esz;
  const MemKind kind = a.recv_kind;
  void* acc = a.recvbuf;
  DUCT_CO_TRY(copy_local(acc, kind, a.sendbuf, a.send_kind, bytes));
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 2, &tmp));
  Link link{ctx, seq, Group{nullptr, n, rank}};

  const int p2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(n))), rem = n - p2;
  int newrank = -1;
  DUCT_CO_TRY(co_await fold_pairs(link, acc, tmp, kind, a.count, a.dt, a.op, 0, &newrank));
  if (newrank >= 0) {
    // The 2^k ranks left, as a group: member i is rank 2i+1 (folded) or i+rem.
    // A power of two of ranks on several nodes of the same power-of-two
    // size takes its members in node-aware order (coll/common.hpp): the
    // halving's first steps and the doubling's last, which move the most,
    // stay inside the nodes. The vector's blocks need not follow rank
    // order: the doubling returns each to its place.
    std::vector<int> members;
    int gme = newrank;
    if (rem > 0 || !node_aware_order(ctx.topo, &members, &gme)) {
      members = folded_members(n);
      gme = newrank;
    }
    Link g = link.on(Group{members.data(), p2, gme});
    const Layout blocks = Layout::even(a.count, p2);
    DUCT_CO_TRY(co_await halving_reduce_scatter(ctx, g, acc, tmp, kind, blocks, a.dt, a.op, 1));
    DUCT_CO_TRY(co_await doubling_allgather(ctx, g, acc, kind, blocks.scaled(esz), 0x100));
  }
  if (rank < 2 * rem) {  // unfold
    Request r;
    if (rank % 2 == 1)
      DUCT_CO_TRY(link.send(rank - 1, acc, bytes, kind, 0xff, &r));
    else
      DUCT_CO_TRY(link.recv(rank + 1, acc, bytes, kind, 0xff, &r));
    DUCT_CO_TRY(co_await wait(r));
  }
  co_return Status::ok();
}

}  // namespace duct::coll
