// Alltoall through node-local shared memory (single-node communicators):
// every rank copies its n blocks into its slot and, after the handshake,
// copies block `me` of every rank's slot into its result (coll/shm.hpp).
// One copy in and one copy out per byte, no message: the flat shared-memory
// exchange of Open MPI's coll/sm and UCC's tl/shm, applied to personalized
// blocks. When the n blocks do not fit one slot they go in rounds, one
// sequence number and handshake each, every round carrying the next piece
// (slot / n bytes) of every block.
#include <algorithm>

#include "coll/shm_rounds.hpp"

namespace duct::coll {

namespace {
struct AlltoallSpec {
  AlltoallSpec(Context& ctx, const CollArgs& a)
      : rounds(0),
        writes(true),
        wait(kShmAll),
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
  // In place, sendbuf is recvbuf: this round's pieces are in the slot
  // before the result overwrites them, and later rounds' pieces are not
  // overwritten by this one.
  Status fill(std::size_t r, void* slot) {
    for (std::size_t q = 0; q < n_; ++q)
      DUCT_TRY(copy_local(at(slot, q * len(r)), MemKind::host, at(a_->sendbuf, q * a_->bytes + off(r)), a_->send_kind, len(r)));
    return Status::ok();
  }
  Status read(std::size_t r, int p) {
    for (std::size_t q = 0; q < n_; ++q)
      DUCT_TRY(copy_local(at(a_->recvbuf, q * a_->bytes + off(r)), a_->recv_kind,
                          at(s_->slot(static_cast<int>(q), p, used), me_ * len(r)), MemKind::host, len(r)));
    return Status::ok();
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

Sched alltoall_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_rounds(ctx, a, AlltoallSpec(ctx, a)); }
Status alltoall_shm_now(Context& ctx, const CollArgs& a, std::uint32_t, Spinner& sp) {
  return shm_rounds_now(ctx, a, AlltoallSpec(ctx, a), sp);
}

}  // namespace duct::coll
