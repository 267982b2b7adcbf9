// Scatter through node-local shared memory (single-node communicators): the
// root copies every block into its slot, publishes it and returns (eager);
// each other rank waits for the root's slot and copies its own block
// (coll/shm.hpp). When the n blocks do not fit one slot they go in rounds,
// one sequence number each, every round carrying the next piece of every
// block (slot / n bytes of each): the root runs up to kSlots rounds ahead.
#include <algorithm>

#include "coll/shm_rounds.hpp"

namespace duct::coll {

namespace {
struct ScatterSpec {
  ScatterSpec(Context& ctx, const CollArgs& a)
      : rounds(0),
        writes(ctx.rank() == a.root),
        wait(writes ? kShmNone : a.root),  // the root writes and goes
        n_(static_cast<std::size_t>(ctx.size())),
        me_(static_cast<std::size_t>(ctx.rank())),
        piece_(piece_of_slot(a.bytes, n_)),  // of every block per round
        a_(&a),
        s_(ctx.shm.get()) {
    rounds = rounds_of(a.bytes, piece_);
    used = std::min(piece_, a.bytes) * n_;
  }
  std::size_t rounds, used = 0;
  bool writes;
  int wait;
  Status begin() { return Status::ok(); }
  // The root's own block goes straight from its send buffer to its receive
  // buffer (read), not through its slot.
  Status fill(std::size_t r, void* slot) {
    for (std::size_t q = 0; q < n_; ++q)
      if (q != me_)
        DUCT_TRY(copy_local(at(slot, q * len(r)), MemKind::host, at(a_->sendbuf, q * a_->bytes + off(r)), a_->send_kind, len(r)));
    return Status::ok();
  }
  Status read(std::size_t r, int p) {
    if (a_->in_place) return Status::ok();  // the root's block stays in its send buffer
    const void* from = writes ? at(a_->sendbuf, me_ * a_->bytes + off(r)) : at(s_->slot(a_->root, p, used), me_ * len(r));
    return copy_local(at(a_->recvbuf, off(r)), a_->recv_kind, from, writes ? a_->send_kind : MemKind::host, len(r));
  }
  Status end() { return Status::ok(); }
  Span span(std::size_t r) const { return {me_ * len(r), (me_ + 1) * len(r)}; }

 private:
  std::size_t off(std::size_t r) const { return r * piece_; }
  std::size_t len(std::size_t r) const { return std::min(piece_, a_->bytes - off(r)); }
  std::size_t n_, me_, piece_;
  const CollArgs* a_;
  ShmArea* s_;
};
}  // namespace

Sched scatter_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_rounds(ctx, a, ScatterSpec(ctx, a)); }
Status scatter_shm_now(Context& ctx, const CollArgs& a, std::uint32_t, Spinner& sp) {
  return shm_rounds_now(ctx, a, ScatterSpec(ctx, a), sp);
}

}  // namespace duct::coll
