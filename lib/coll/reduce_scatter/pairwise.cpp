// Reduce-scatter(_block) by pairwise exchange.
//
// Every rank sends each block of its input straight to the block's owner
// (rank me+k at step k) and receives its own block from every other rank;
// then it reduces the n contributions in rank order 0..n-1, so the bits do
// not depend on arrival order (as MPICH's pairwise reduce-scatter for
// non-commutative ops, Thakur, Rabenseifner, Gropp 2005, §4.4). n-1 messages
// of one block each: for small vectors on any number of ranks.
#include <vector>

#include "coll/collectives.hpp"
#include "coll/reduce_scatter/common.hpp"

namespace duct::coll {

Sched reduce_scatter_pairwise(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const int n = ctx.size(), me = ctx.rank();
  const Layout blocks = reduce_scatter_blocks(a, n);
  const std::size_t esz = elem_size(a.dt.elem);
  const std::size_t mine = blocks.len[static_cast<std::size_t>(me)], mbytes = mine * esz;
  const MemKind kind = a.recv_kind;
  // Contribution q to my block goes to slot q.
  void* contrib = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, static_cast<std::size_t>(n) * mbytes, 2, &contrib));
  auto slot = [&](int q) { return at(contrib, static_cast<std::size_t>(q) * mbytes); };
  DUCT_CO_TRY(copy_local(slot(me), kind, at(a.sendbuf, blocks.off[static_cast<std::size_t>(me)] * esz), a.send_kind,
                         mbytes));
  Link link{ctx, seq, Group{nullptr, n, me}};
  std::vector<Request> reqs;
  for (int k = 1; k < n; ++k) {
    const std::size_t dst = static_cast<std::size_t>(mod(me + k, n));
    const int src = mod(me - k, n);
    if (blocks.len[dst] > 0) {
      reqs.emplace_back();
      DUCT_CO_TRY(link.send(static_cast<int>(dst), at(a.sendbuf, blocks.off[dst] * esz), blocks.len[dst] * esz,
                            a.send_kind, static_cast<std::uint32_t>(k), &reqs.back()));
    }
    if (mine > 0) {
      reqs.emplace_back();
      DUCT_CO_TRY(link.recv(src, slot(src), mbytes, kind, static_cast<std::uint32_t>(k), &reqs.back()));
    }
  }
  DUCT_CO_TRY(co_await wait(reqs));  // all sent: an in-place input may now be overwritten
  memory::Fence fence;
  DUCT_CO_TRY(copy_local(a.recvbuf, kind, slot(0), kind, mbytes));
  for (int q = 1; q < n; ++q) DUCT_CO_TRY(reduce_local(a.recvbuf, a.recvbuf, slot(q), mine, a.dt, a.op, kind, &fence));
  if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
  co_return Status::ok();
}

}  // namespace duct::coll
