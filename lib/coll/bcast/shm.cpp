// Broadcast through node-local shared memory (single-node communicators):
// the root copies the message into its slot, publishes it and returns, as
// with an eager send; every other rank waits for the root's slot and copies
// it out (coll/shm.hpp). The root waits only when a reader is kSlots
// broadcasts behind.
//
// A message larger than a slot travels in slot-sized chunks, each under a
// sequence number of its own, through consecutive slots: the root runs up to
// kSlots chunks ahead of the slowest reader, so its copies in and the
// readers' copies out overlap (the copy-in/copy-out pipeline of Open MPI's
// shared-memory transport, here per collective rather than per message).
#include <algorithm>

#include "coll/shm_rounds.hpp"

namespace duct::coll {

namespace {
struct BcastSpec {
  BcastSpec(Context& ctx, const CollArgs& a)
      : rounds((a.bytes + ShmArea::kSlotBytes - 1) / ShmArea::kSlotBytes),
        used(std::min(a.bytes, ShmArea::kSlotBytes)),
        writes(ctx.rank() == a.root),
        wait(writes ? kShmNone : a.root),  // the root writes and goes
        a_(&a),
        s_(ctx.shm.get()) {}
  std::size_t rounds, used;
  bool writes;
  int wait;
  Status begin() { return Status::ok(); }
  Status fill(std::size_t r, void* slot) { return copy_local(slot, MemKind::host, at(a_->recvbuf, off(r)), a_->recv_kind, len(r)); }
  Status read(std::size_t r, int p) {
    return writes ? Status::ok() : copy_local(at(a_->recvbuf, off(r)), a_->recv_kind, s_->slot(a_->root, p, used), MemKind::host, len(r));
  }
  Status end() { return Status::ok(); }
  Span span(std::size_t r) const { return {0, len(r)}; }

 private:
  std::size_t off(std::size_t r) const { return r * ShmArea::kSlotBytes; }
  std::size_t len(std::size_t r) const { return std::min(ShmArea::kSlotBytes, a_->bytes - off(r)); }
  const CollArgs* a_;
  ShmArea* s_;
};
}  // namespace

Sched bcast_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_rounds(ctx, a, BcastSpec(ctx, a)); }
Status bcast_shm_now(Context& ctx, const CollArgs& a, std::uint32_t, Spinner& sp) {
  return shm_rounds_now(ctx, a, BcastSpec(ctx, a), sp);
}

}  // namespace duct::coll
