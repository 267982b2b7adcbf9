// Barrier through node-local shared memory (single-node communicators):
// every rank publishes the barrier's sequence number and waits until every
// rank has published it (coll/shm.hpp).
#include "coll/shm_rounds.hpp"

namespace duct::coll {

namespace {
// Only the ready flag of the slot is written (no data, no claim): the flag
// may be overwritten at any time, as readers compare it with ">=".
struct BarrierSpec {
  std::size_t rounds = 1, used = 0;
  bool writes = false;
  int wait = kShmAll;
  Status begin() { return Status::ok(); }
  Status fill(std::size_t, void*) { return Status::ok(); }
  Status read(std::size_t, int) { return Status::ok(); }
  Status end() { return Status::ok(); }
  Span span(std::size_t) const { return {0, 0}; }
};
}  // namespace

Sched barrier_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_rounds(ctx, a, BarrierSpec{}); }
Status barrier_shm_now(Context& ctx, const CollArgs& a, std::uint32_t, Spinner& sp) {
  return shm_rounds_now(ctx, a, BarrierSpec{}, sp);
}

}  // namespace duct::coll
