// Reduce-scatter(_block) through node-local shared memory (single-node
// communicators): every rank copies its input vector into its slot and,
// after the handshake, reduces its own block of every rank's slot in rank
// order 0..n-1 into its result (coll/shm.hpp). Each rank reads and reduces
// only its block: the shared-memory reduce-scatter of UCC's tl/shm; the
// fixed order gives the same bits as the other algorithms' rank-order
// reductions. When the vector does not fit one slot it goes in rounds, one
// sequence number and handshake each, every round carrying the next piece
// (slot / n bytes) of every block.
#include <algorithm>

#include "coll/reduce_scatter/common.hpp"
#include "coll/shm_rounds.hpp"

namespace duct::coll {

namespace {
struct ReduceScatterSpec {
  ReduceScatterSpec(Context& ctx, const CollArgs& a)
      : rounds(0),
        writes(true),
        wait(kShmAll),
        ctx_(&ctx),
        a_(&a),
        blocks_(reduce_scatter_blocks(a, ctx.size())),
        esz_(elem_size(a.dt.elem)),
        me_(static_cast<std::size_t>(ctx.rank())),
        // Elements of every block per round.
        piece_(std::max<std::size_t>(ShmArea::kSlotBytes / (static_cast<std::size_t>(ctx.size()) * esz_), 1)) {
    std::size_t longest = 0;
    for (std::size_t len : blocks_.len) longest = std::max(longest, len);
    rounds = (longest + piece_ - 1) / piece_;
    used = std::min(longest, piece_) * static_cast<std::size_t>(ctx.size()) * esz_;
  }
  std::size_t rounds, used = 0;
  bool writes;
  int wait;
  // The result goes to the start of recvbuf; in place, that is input of
  // other blocks that later rounds still read: accumulate aside then.
  Status begin() {
    acc_ = a_->recvbuf;
    const std::size_t mine = blocks_.len[me_];
    if (mine > 0 && (a_->recv_kind == MemKind::device || (a_->in_place && rounds > 1)))
      return ctx_->scratch(MemKind::host, mine * esz_, 1, &acc_);
    return Status::ok();
  }
  Status fill(std::size_t r, void* slot) {
    const std::size_t off = r * piece_;
    for (std::size_t q = 0; q < blocks_.len.size(); ++q) {
      if (blocks_.len[q] <= off) continue;
      const std::size_t len = std::min(piece_, blocks_.len[q] - off);
      DUCT_TRY(copy_local(at(slot, q * piece_ * esz_), MemKind::host, at(a_->sendbuf, (blocks_.off[q] + off) * esz_),
                          a_->send_kind, len * esz_));
    }
    return Status::ok();
  }
  // This rank's block of every slot, in rank order.
  Status read(std::size_t r, int p) {
    const std::size_t off = r * piece_, mine = blocks_.len[me_];
    if (mine <= off) return Status::ok();
    const std::size_t len = std::min(piece_, mine - off), at_slot = me_ * piece_ * esz_;
    ShmArea& s = *ctx_->shm;
    void* dst = at(acc_, off * esz_);
    DUCT_TRY(reduce_local(dst, at(s.slot(0, p, used), at_slot), at(s.slot(1, p, used), at_slot), len, a_->dt, a_->op, MemKind::host,
                          nullptr));
    for (int q = 2; q < s.size(); ++q)
      DUCT_TRY(reduce_local(dst, dst, at(s.slot(q, p, used), at_slot), len, a_->dt, a_->op, MemKind::host, nullptr));
    return Status::ok();
  }
  Span span(std::size_t r) const {
    const std::size_t off = r * piece_, mine = blocks_.len[me_], at_slot = me_ * piece_ * esz_;
    return {at_slot, off >= mine ? at_slot : at_slot + std::min(piece_, mine - off) * esz_};
  }
  Status end() {
    return acc_ == a_->recvbuf ? Status::ok() : copy_local(a_->recvbuf, a_->recv_kind, acc_, MemKind::host, blocks_.len[me_] * esz_);
  }

 private:
  Context* ctx_;
  const CollArgs* a_;
  Layout blocks_;
  std::size_t esz_, me_, piece_;
  void* acc_ = nullptr;
};
}  // namespace

Sched reduce_scatter_shm(Context& ctx, const CollArgs& a, std::uint32_t) {
  return shm_rounds(ctx, a, ReduceScatterSpec(ctx, a));
}
Status reduce_scatter_shm_now(Context& ctx, const CollArgs& a, std::uint32_t, Spinner& sp) {
  return shm_rounds_now(ctx, a, ReduceScatterSpec(ctx, a), sp);
}

}  // namespace duct::coll
