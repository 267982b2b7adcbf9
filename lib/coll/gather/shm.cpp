// Gather through node-local shared memory (single-node communicators):
// every rank copies its block into its slot and publishes it; a non-root
// then returns (eager), the root waits for every slot and copies all of them
// (coll/shm.hpp). With every rank as a root it is the shm allgather. Blocks
// larger than a slot go in slot-sized pieces, one sequence number each,
// through consecutive slots: non-roots run up to kSlots pieces ahead of the
// root.
#include <algorithm>

#include "coll/shm_rounds.hpp"

namespace duct::coll {

namespace {
struct GatherSpec {
  GatherSpec(Context& ctx, const CollArgs& a, bool everyone)
      : rounds((a.bytes + ShmArea::kSlotBytes - 1) / ShmArea::kSlotBytes),
        used(std::min(a.bytes, ShmArea::kSlotBytes)),
        writes(true),
        wait(everyone || ctx.rank() == a.root ? kShmAll : kShmNone),  // a non-root writes and goes
        n_(ctx.size()),
        own_(!everyone && ctx.rank() == a.root ? ctx.rank() : -1),
        a_(&a),
        s_(ctx.shm.get()) {}
  std::size_t rounds, used;
  bool writes;
  int wait;
  Status begin() { return Status::ok(); }
  // The root of a gather (not an allgather, where every rank reads every
  // slot) takes its own block straight from its send buffer (in place: it
  // is already where it belongs), not through its slot.
  Status fill(std::size_t r, void* slot) {
    if (own_ >= 0) return Status::ok();
    return copy_local(slot, MemKind::host, at(a_->sendbuf, off(r)), a_->send_kind, len(r));
  }
  Status read(std::size_t r, int p) {
    if (wait == kShmNone) return Status::ok();
    // (An allgather in place: this rank's block comes back to where it already is.)
    for (int q = 0; q < n_; ++q) {
      void* to = at(a_->recvbuf, static_cast<std::size_t>(q) * a_->bytes + off(r));
      if (q != own_)
        DUCT_TRY(copy_local(to, a_->recv_kind, s_->slot(q, p, used), MemKind::host, len(r)));
      else if (!a_->in_place)
        DUCT_TRY(copy_local(to, a_->recv_kind, at(a_->sendbuf, off(r)), a_->send_kind, len(r)));
    }
    return Status::ok();
  }
  Status end() { return Status::ok(); }
  Span span(std::size_t r) const { return {0, len(r)}; }

 private:
  std::size_t off(std::size_t r) const { return r * ShmArea::kSlotBytes; }
  std::size_t len(std::size_t r) const { return std::min(ShmArea::kSlotBytes, a_->bytes - off(r)); }
  int n_;
  int own_;  // the root of a gather: its rank (its block skips its slot); else -1
  const CollArgs* a_;
  ShmArea* s_;
};
}  // namespace

Sched shm_gather(Context& ctx, const CollArgs& a, bool everyone) {
  return shm_rounds(ctx, a, GatherSpec(ctx, a, everyone));
}
Status shm_gather_now(Context& ctx, const CollArgs& a, bool everyone, Spinner& sp) {
  return shm_rounds_now(ctx, a, GatherSpec(ctx, a, everyone), sp);
}

Sched gather_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_gather(ctx, a, /*everyone=*/false); }
Status gather_shm_now(Context& ctx, const CollArgs& a, std::uint32_t, Spinner& sp) {
  return shm_gather_now(ctx, a, false, sp);
}

}  // namespace duct::coll
