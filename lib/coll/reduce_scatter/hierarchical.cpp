// Node-aware reduce-scatter(_block), for small vectors across nodes.
//
// Reduce the whole vector inside each node to its leader (binomial tree),
// allreduce it among one leader per node (recursive doubling; other
// numbers of nodes fold first), then each leader hands every rank of its
// node that rank's block (one message each). Only the leaders cross the
// network, log2 of the nodes' count times: the node-aware scheme of the
// hierarchical allreduce (MVAPICH2, Open MPI coll/han) ending in a scatter
// instead of a broadcast, for the sizes where a message's latency decides
// (a pairwise exchange sends n-1 messages per rank, most of them across
// the network). The trees are fixed for a layout, so the bits are the same
// every run.
#include <vector>

#include "coll/collectives.hpp"
#include "coll/reduce_scatter/common.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kNodeReduce = 0x000, kLeaders = 0x100, kNodeScatter = 0xf00;
}  // namespace

Sched reduce_scatter_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const Layout blocks = reduce_scatter_blocks(a, ctx.size());
  const std::size_t esz = elem_size(a.dt.elem), total = blocks.total(), bytes = total * esz;
  const MemKind kind = a.recv_kind;
  Link link{ctx, seq, node_group(ctx)};
  const int L = link.g.n;
  auto block_of = [&link](int m) { return static_cast<std::size_t>(link.g.rank(m)); };
  void *acc = nullptr, *tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 2, &acc));
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 3, &tmp));
  DUCT_CO_TRY(co_await binomial_reduce(ctx, link, a.sendbuf, a.send_kind, acc, tmp, total, a.dt, a.op, kind, 0,
                                       kNodeReduce));
  if (ctx.leader_index() < 0) {
    const std::size_t mine = blocks.len[block_of(link.g.me)] * esz;
    if (mine > 0) {
      Request r;
      DUCT_CO_TRY(link.recv(0, a.recvbuf, mine, kind, kNodeScatter, &r));
      DUCT_CO_TRY(co_await wait(r));
    }
    co_return Status::ok();
  }
  DUCT_CO_TRY(co_await staged_doubling_allreduce(ctx, link.on(leader_group(ctx)), acc, kind, total, a.dt, a.op, kLeaders));
  std::vector<Request> sends(static_cast<std::size_t>(L));
  for (int m = 1; m < L; ++m) {
    const std::size_t b = block_of(m);
    if (blocks.len[b] > 0)
      DUCT_CO_TRY(link.send(m, at(acc, blocks.off[b] * esz), blocks.len[b] * esz, kind, kNodeScatter,
                            &sends[static_cast<std::size_t>(m)]));
  }
  const std::size_t b = block_of(0);
  DUCT_CO_TRY(copy_local(a.recvbuf, kind, at(acc, blocks.off[b] * esz), kind, blocks.len[b] * esz));
  DUCT_CO_TRY(co_await wait(sends));
  co_return Status::ok();
}

}  // namespace duct::coll
