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
#include "coll/msg_rounds.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kNodeReduce = 0x000, kLeaders = 0x100, kLeadersAg = 0x900, kNodeBcast = 0xf00;
constexpr std::size_t kRingFrom = 16u << 10;  // leaders: ring from here (as the flat rules)
}  // namespace

namespace {
// The leaders' recursive doubling on `acc` of any kind (a device vector
// staged through host scratch: the context's slots 4 and 5; slot 5 always).
DoublingAllreduce staged_spec(Context& ctx, Link link, void* acc, MemKind kind, std::size_t count, DType dt, RedOp op,
                              std::uint32_t step_base) {
  const std::size_t bytes = count * elem_size(dt.elem);
  void *hacc = acc, *htmp = nullptr;
  Status st = kind == MemKind::device ? ctx.scratch(MemKind::host, bytes, 4, &hacc) : Status::ok();
  if (st) st = ctx.scratch(MemKind::host, bytes, 5, &htmp);
  DoublingAllreduce spec(link, hacc, htmp, count, dt, op, step_base);
  spec.fail(std::move(st));
  if (hacc != acc) {
    spec.copy_in(acc, kind);
    spec.copy_out(acc, kind);
  }
  return spec;
}

// Small vectors: the three levels as one chain of message Specs.
Chain<TreesReduce, DoublingAllreduce, TreesBcast> small_spec(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  const MemKind kind = a.recv_kind;
  void* acc = a.recvbuf;  // the node's partial result, then the result
  void* tmp = nullptr;
  Status st = ctx.scratch(kind, bytes, 3, &tmp);
  const Group node = node_group(ctx);
  TreesReduce reduce(ctx, seq, a.sendbuf, a.send_kind, acc, tmp, a.count, a.dt, a.op, kind);
  reduce.fail(std::move(st));
  reduce.add(node, 0, kNodeReduce);
  // Ranks that lead no node take no part in the leaders' level (g.me < 0).
  Group leaders = ctx.leader_index() >= 0 ? leader_group(ctx) : Group{nullptr, 1, -1};
  DoublingAllreduce among = staged_spec(ctx, Link{ctx, seq, leaders}, acc, kind, a.count, a.dt, a.op, kLeaders);
  TreesBcast bcast(ctx, seq, acc, bytes, kind);
  bcast.add(node, 0, kNodeBcast);
  return Chain<TreesReduce, DoublingAllreduce, TreesBcast>(std::move(reduce), std::move(among), std::move(bcast));
}

// Larger vectors: the leaders run the pipelined ring.
Sched ring_form(Context& ctx, const CollArgs& a, std::uint32_t seq) {
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
    const Layout blocks = Layout::even(a.count, lg.n);
    Link llink = link.on(lg);
    DUCT_CO_TRY(co_await ring_reduce_scatter(ctx, llink, acc, acc, kind, blocks, a.dt, a.op, 1, kLeaders));
    DUCT_CO_TRY(co_await ring_allgather(ctx, llink, acc, kind, blocks.scaled(esz), 1, kLeadersAg));
  }
  DUCT_CO_TRY(co_await binomial_bcast(ctx, link, acc, bytes, kind, 0, kNodeBcast));
  co_return Status::ok();
}
}  // namespace

Sched staged_doubling_allreduce(Context& ctx, Link link, void* acc, MemKind kind, std::size_t count, DType dt,
                                RedOp op, std::uint32_t step_base) {
  return msg_rounds(staged_spec(ctx, link, acc, kind, count, dt, op, step_base));
}

Sched allreduce_hierarchical(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  if (a.count * elem_size(a.dt.elem) >= kRingFrom) return ring_form(ctx, a, seq);
  return msg_rounds(small_spec(ctx, a, seq));
}

Status allreduce_hierarchical_now(Context& ctx, const CollArgs& a, std::uint32_t seq, Spinner& sp) {
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  if (bytes < kRingFrom) return msg_rounds_now(small_spec(ctx, a, seq), ctx.small_reqs, sp);
  Task task(ring_form(ctx, a, seq), TaskInfo{a.call, "hierarchical", bytes, ctx.cid});
  return run(ctx, task);
}

}  // namespace duct::coll
