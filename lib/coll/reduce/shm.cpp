// Reduce through node-local shared memory (single-node communicators):
// every rank copies its vector into its slot and publishes it; a non-root
// then returns (eager), the root waits for every slot and reduces them in
// rank order (coll/shm.hpp). With every rank as a root it is the shm
// allreduce.
//
// A vector larger than a slot goes in slot-sized chunks, each under a
// sequence number of its own, through consecutive slots: non-roots run up to
// kSlots chunks ahead of the root, so their copies in overlap its
// reductions.
#include <algorithm>

#include "coll/shm_rounds.hpp"

namespace duct::coll {

namespace {
struct ReduceSpec {
  ReduceSpec(Context& ctx, const CollArgs& a, bool everyone)
      : rounds(0),
        writes(true),
        wait(everyone || ctx.rank() == a.root ? kShmAll : kShmNone),  // a non-root writes and goes
        esz_(elem_size(a.dt.elem)),
        ctx_(&ctx),
        a_(&a) {
    const std::size_t bytes = a.count * esz_;
    chunk_ = chunk_of_slot(bytes, esz_);
    rounds = rounds_of(bytes, chunk_);
    used = std::min(bytes, chunk_);
  }
  std::size_t rounds, used = 0;
  bool writes;
  int wait;
  Status begin() { return Status::ok(); }
  Status fill(std::size_t r, void* slot) { return copy_local(slot, MemKind::host, at(a_->sendbuf, r * chunk_), a_->send_kind, len(r)); }
  Status read(std::size_t r, int p) {
    if (wait == kShmNone) return Status::ok();
    const std::size_t elems = rounds == 1 ? a_->count : len(r) / esz_;
    return shm_reduce_slots(*ctx_, *ctx_->shm, p, used, a_->dt, a_->op, elems, at(a_->recvbuf, r * chunk_),
                            a_->recv_kind);
  }
  Status end() { return Status::ok(); }
  Span span(std::size_t r) const { return {0, len(r)}; }

 private:
  std::size_t len(std::size_t r) const { return std::min(chunk_, a_->count * esz_ - r * chunk_); }
  std::size_t esz_, chunk_;
  Context* ctx_;
  const CollArgs* a_;
};
}  // namespace

Sched shm_reduce(Context& ctx, const CollArgs& a, bool everyone) {
  return shm_rounds(ctx, a, ReduceSpec(ctx, a, everyone));
}
Status shm_reduce_now(Context& ctx, const CollArgs& a, bool everyone, Spinner& sp) {
  return shm_rounds_now(ctx, a, ReduceSpec(ctx, a, everyone), sp);
}

Sched reduce_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_reduce(ctx, a, /*everyone=*/false); }
Status reduce_shm_now(Context& ctx, const CollArgs& a, std::uint32_t, Spinner& sp) {
  return shm_reduce_now(ctx, a, false, sp);
}

}  // namespace duct::coll
