// Allreduce through node-local shared memory, for small vectors.
//
// Every rank of a single-node communicator copies its vector into its slot
// of the shared area (coll/shm.hpp) and publishes the collective's sequence
// number; then every rank reduces all slots in rank order, 0, 1, ..., n-1,
// into its result. The flat, one-step structure is that of the shared-memory
// collectives of Open MPI's coll/sm and UCC's tl/shm; a reduction of n
// vectors in a fixed order gives the same bits on every rank.
//
// Slots are used in turn by the sequence number k (ShmArea::kSlots of
// them). A rank writes slot k % kSlots only when every rank is done with
// k - kSlots, its previous use (SHM_CLAIM: usually known without a look,
// see coll/shm.hpp), so no reader ever sees a slot being overwritten. Device vectors
// are staged through host, as with recursive doubling: at these sizes two
// copies beat device work per peer.
//
// Cost: one slot write (the sequence number shares the first cache line with
// the data) and, per peer, one cache-line handoff for small vectors and a
// reduction: no message and no matching, below a UCX tag exchange on one
// node.
#include "coll/shm_rounds.hpp"

namespace duct::coll {

// The shm reduce with every rank as a root (reduce/shm.cpp). Not a coroutine
// itself: it hands back shm_reduce's, so no extra frame on this path.
Sched allreduce_shm(Context& ctx, const CollArgs& a, std::uint32_t) { return shm_reduce(ctx, a, /*everyone=*/true); }
Status allreduce_shm_now(Context& ctx, const CollArgs& a, std::uint32_t, Spinner& sp) {
  return shm_reduce_now(ctx, a, true, sp);
}

}  // namespace duct::coll
