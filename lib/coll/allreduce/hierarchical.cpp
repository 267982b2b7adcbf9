// Node-aware allreduce.
//
// Reduce inside each node to its leader (binomial tree over the node's
// ranks: cuda_ipc or shared memory), allreduce among one leader per node
// (recursive doubling for small vectors, the pipelined ring for large ones,
// over the network), broadcast inside each node (binomial). Only the leaders
// cross the network, each with the vector once: the two-level scheme of
// MVAPICH2's and NCCL's node-aware collectives. The trees and the
// leaders' algorithm are fixed for a given layout and size, so the bits are
// the same every run; every rank gets the leader's result.
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kNodeReduce = 0x000, kLeaders = 0x100, kLeadersAg = 0x900, kNodeBcast = 0xf00;
constexpr std::size_t kRingFrom = 16u << 10;  // leaders: ring from here (as the flat rules)
}  // namespace

Sched staged_doubling_allreduce(Context& ctx, Link link, void* acc, MemKind kind, std::size_t count, DType dt,
                                RedOp op, std::uint32_t step_base) {
  const std::size_t bytes = count * elem_size(dt.elem);
  void *hacc = acc, *htmp = nullptr;
  if (kind == MemKind::device) {
    DUCT_CO_TRY(ctx.scratch(MemKind::host, bytes, 4, &hacc));
    DUCT_CO_TRY(copy_local(hacc, MemKind::host, acc, kind, bytes));
  }
  DUCT_CO_TRY(ctx.scratch(MemKind::host, bytes, 5, &htmp));
  DUCT_CO_TRY(co_await recursive_doubling_allreduce(ctx, link, hacc, htmp, count, dt, op, step_base));
  if (hacc != acc) DUCT_CO_TRY(copy_local(acc, kind, hacc, MemKind::host, bytes));
  co_return Status::ok();
}

Sched allreduce_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const std::size_t esz = elem_size(a.dt.elem), bytes = a.count * esz;
  const MemKind kind = a.recv_kind;
  void* acc = a.recvbuf;  // the node's partial result, then the result
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, bytes, 3, &tmp));
  Link link{ctx, seq, node_group(ctx)};

  DUCT_CO_TRY(co_await binomial_reduce(ctx, link, a.sendbuf, a.send_kind, acc, tmp, a.count, a.dt, a.op, kind, 0,
                                       kNodeReduce));
  if (ctx.leader_index() >= 0) {
    const Group lg = leader_group(ctx);
    Link llink = link.on(lg);
    if (bytes >= kRingFrom) {
      const Layout blocks = Layout::even(a.count, lg.n);
      DUCT_CO_TRY(co_await ring_reduce_scatter(ctx, llink, acc, acc, kind, blocks, a.dt, a.op, 1, kLeaders));
      DUCT_CO_TRY(co_await ring_allgather(ctx, llink, acc, kind, blocks.scaled(esz), 1, kLeadersAg));
    } else {
      DUCT_CO_TRY(co_await staged_doubling_allreduce(ctx, llink, acc, kind, a.count, a.dt, a.op, kLeaders));
    }
  }
  DUCT_CO_TRY(co_await binomial_bcast(ctx, link, acc, bytes, kind, 0, kNodeBcast));
  co_return Status::ok();
}

}  // namespace duct::coll
