// Allreduce by recursive doubling.
//
// R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
// Communication Operations in MPICH", IJHPCA 19(1), 2005, §4.4. In round i
// each rank exchanges its whole vector with the rank at distance 2^i and
// reduces; after log2(p) rounds every rank has the result. For a group of
// p = 2^k + rem ranks, the first 2*rem ranks fold in pairs first (even ranks
// hand their vector to the next odd rank and sit out) and get the result
// back at the end.
//
// Cost: log2(p) messages of the whole vector per rank: the choice for small
// messages, where latency dominates. Device vectors are staged to host once
// (copy in, copy out) rather than paying a device copy and a kernel launch
// per round.
//
// Determinism: both partners of a round compute lower-rank-data (op)
// higher-rank-data, so every rank holds the same bits after each round.
#include "coll/collectives.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kFoldStep = 0;
constexpr std::uint32_t kUnfoldStep = 0xff;
}  // namespace

Sched recursive_doubling_allreduce(Context&, Link link, void* acc, void* tmp, std::size_t count, DType dt, RedOp op,
                                   std::uint32_t step_base) {
  const int n = link.g.n, rank = link.g.me;
  const std::size_t bytes = count * elem_size(dt.elem);
  int p2 = 1;
  while (p2 * 2 <= n) p2 *= 2;
  const int rem = n - p2;
  int newrank = rank - rem;
  if (rank < 2 * rem) {
    Request req;
    if (rank % 2 == 0) {
      DUCT_CO_TRY(link.send(rank + 1, acc, bytes, MemKind::host, step_base + kFoldStep, &req));
      DUCT_CO_TRY(co_await wait(req));
      newrank = -1;
    } else {
      DUCT_CO_TRY(link.recv(rank - 1, tmp, bytes, MemKind::host, step_base + kFoldStep, &req));
      DUCT_CO_TRY(co_await wait(req));
      DUCT_CO_TRY(reduce_local(acc, tmp, acc, count, dt, op, MemKind::host, nullptr));
      newrank = rank / 2;
    }
  }
  if (newrank >= 0) {
    std::uint32_t step = step_base + 1;
    for (int mask = 1; mask < p2; mask <<= 1, ++step) {
      int np = newrank ^ mask;
      int peer = np < rem ? np * 2 + 1 : np + rem;
      Request s, r;
      // Send first: the partner waits for it; posting our receive can wait.
      DUCT_CO_TRY(link.send(peer, acc, bytes, MemKind::host, step, &s));
      DUCT_CO_TRY(link.recv(peer, tmp, bytes, MemKind::host, step, &r));
      DUCT_CO_TRY(co_await wait(s, r));
      if (peer < rank)
        DUCT_CO_TRY(reduce_local(acc, tmp, acc, count, dt, op, MemKind::host, nullptr));
      else
        DUCT_CO_TRY(reduce_local(acc, acc, tmp, count, dt, op, MemKind::host, nullptr));
    }
  }
  if (rank < 2 * rem) {
    Request req;
    if (rank % 2 == 1)
      DUCT_CO_TRY(link.send(rank - 1, acc, bytes, MemKind::host, step_base + kUnfoldStep, &req));
    else
      DUCT_CO_TRY(link.recv(rank + 1, acc, bytes, MemKind::host, step_base + kUnfoldStep, &req));
    DUCT_CO_TRY(co_await wait(req));
  }
  co_return Status::ok();
}

Sched allreduce_recursive_doubling(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  // Work on a host accumulator: the receive buffer itself when it is host memory.
  void* acc = a.recvbuf;
  if (a.recv_kind == MemKind::device) DUCT_CO_TRY(ctx.scratch(MemKind::host, bytes, 1, &acc));
  if (acc != a.sendbuf) DUCT_CO_TRY(copy_local(acc, MemKind::host, a.sendbuf, a.send_kind, bytes));
  void* tmp = nullptr;
  DUCT_CO_TRY(ctx.scratch(MemKind::host, bytes, 0, &tmp));
  Link link{ctx, seq, Group{nullptr, ctx.size(), ctx.rank()}};
  DUCT_CO_TRY(co_await recursive_doubling_allreduce(ctx, link, acc, tmp, a.count, a.dt, a.op, 0));
  if (acc != a.recvbuf) DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, acc, MemKind::host, bytes));
  co_return Status::ok();
}

}  // namespace duct::coll
