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
#include <bit>

#include "coll/collectives.hpp"
#include "coll/msg_rounds.hpp"

namespace duct::coll {

namespace {
constexpr std::uint32_t kFoldStep = 0;
constexpr std::uint32_t kUnfoldStep = 0xff;
}  // namespace

Status DoublingAllreduce::round(int, std::vector<Request>* reqs, bool* more) {
  if (!setup_) return setup_;
  const int n = link_.g.n, rank = link_.g.me;
  const std::size_t bytes = count_ * elem_size(dt_.elem);
  if (rank < 0) return Status::ok();  // not a member
  // The vector that arrived last round, lower rank's data first.
  if (arrival_ == Arrival::lower) DUCT_TRY(reduce_local(acc_, tmp_, acc_, count_, dt_, op_, MemKind::host, nullptr));
  if (arrival_ == Arrival::higher) DUCT_TRY(reduce_local(acc_, acc_, tmp_, count_, dt_, op_, MemKind::host, nullptr));
  arrival_ = Arrival::none;
  *more = true;
  if (phase_ == Phase::start) {
    if (in_ && in_ != acc_) DUCT_TRY(copy_local(acc_, MemKind::host, in_, in_kind_, bytes));
    while (p2_ * 2 <= n) p2_ *= 2;
    rem_ = n - p2_;
    newrank_ = rank - rem_;
    phase_ = Phase::exchange;
    if (rank < 2 * rem_) {  // fold in pairs: even ranks hand their vector to the next odd rank
      reqs->emplace_back();
      if (rank % 2 == 0) {
        newrank_ = -1;
        return link_.send(rank + 1, acc_, bytes, MemKind::host, step_base_ + kFoldStep, &reqs->back());
      }
      newrank_ = rank / 2;
      arrival_ = Arrival::lower;
      return link_.recv(rank - 1, tmp_, bytes, MemKind::host, step_base_ + kFoldStep, &reqs->back());
    }
  }
  if (phase_ == Phase::exchange) {
    if (newrank_ >= 0 && mask_ < p2_) {
      const int np = newrank_ ^ mask_;
      const int peer = np < rem_ ? np * 2 + 1 : np + rem_;
      // Exchange i (mask 2^i) is step step_base + 1 + i.
      const auto i = static_cast<std::uint32_t>(std::countr_zero(static_cast<unsigned>(mask_)));
      const std::uint32_t step = step_base_ + 1 + i;
      mask_ <<= 1;
      // Send first: the partner waits for it; posting our receive can wait.
      reqs->emplace_back();
      DUCT_TRY(link_.send(peer, acc_, bytes, MemKind::host, step, &reqs->back()));
      reqs->emplace_back();
      arrival_ = peer < rank ? Arrival::lower : Arrival::higher;
      return link_.recv(peer, tmp_, bytes, MemKind::host, step, &reqs->back());
    }
    phase_ = Phase::unfold;
    if (rank < 2 * rem_) {  // the folded ranks get the result back
      reqs->emplace_back();
      const std::uint32_t step = step_base_ + kUnfoldStep;
      if (rank % 2 == 1) return link_.send(rank - 1, acc_, bytes, MemKind::host, step, &reqs->back());
      return link_.recv(rank + 1, acc_, bytes, MemKind::host, step, &reqs->back());
    }
  }
  phase_ = Phase::finish;
  *more = false;
  if (out_ && out_ != acc_) DUCT_TRY(copy_local(out_, out_kind_, acc_, MemKind::host, bytes));
  return Status::ok();
}

Sched recursive_doubling_allreduce(Context&, Link link, void* acc, void* tmp, std::size_t count, DType dt, RedOp op,
                                   std::uint32_t step_base) {
  return msg_rounds(DoublingAllreduce(link, acc, tmp, count, dt, op, step_base));
}

namespace {
DoublingAllreduce flat_spec(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  // Work on a host accumulator: the receive buffer itself when it is host memory.
  void* acc = a.recvbuf;
  Status st = a.recv_kind == MemKind::device ? ctx.scratch(MemKind::host, bytes, 1, &acc) : Status::ok();
  void* tmp = nullptr;
  if (st) st = ctx.scratch(MemKind::host, bytes, 0, &tmp);
  DoublingAllreduce spec(Link{ctx, seq, Group{nullptr, ctx.size(), ctx.rank()}}, acc, tmp, a.count, a.dt, a.op, 0);
  spec.fail(std::move(st));
  spec.copy_in(a.sendbuf, a.send_kind);
  spec.copy_out(a.recvbuf, a.recv_kind);
  return spec;
}
}  // namespace

DUCT_MSG_ALGORITHM(allreduce_recursive_doubling, flat_spec)

}  // namespace duct::coll
