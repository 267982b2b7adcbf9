// Allgather through node-local shared memory (single-node communicators):
// the shm gather with every rank as a root (gather/shm.cpp): every rank
// copies its block into its slot and, after the handshake, copies every
// slot into its result; larger blocks in slot-sized pieces.
#include "coll/collectives.hpp"

namespace duct::coll {

// Not a coroutine itself: it hands back shm_gather's.
Sched allgather_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_gather(ctx, a, /*everyone=*/true); }

}  // namespace duct::coll
