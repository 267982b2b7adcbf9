// Allgather through node-local shared memory (single-node communicators):
// the shm gather with every rank as a root (gather/shm.cpp): every rank
// copies its block into its slot and, after the handshake, copies every
// slot into its result; larger blocks in slot-sized pieces.
#include "coll/shm_rounds.hpp"

namespace duct::coll {

// Not a coroutine itself: it hands back shm_gather's.
Sched allgather_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_gather(ctx, a, /*everyone=*/true); }
Status allgather_shm_now(Context& ctx, const CollArgs& a, std::uint32_t, Spinner& sp) {
  return shm_gather_now(ctx, a, true, sp);
}

}  // namespace duct::coll
