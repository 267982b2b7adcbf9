// duct coll: allreduce.
#pragma once

#include <cstdint>

#include "coll/common.hpp"
#include "coll/sched.hpp"

namespace duct::coll {

struct AllreduceArgs {
  const void* sendbuf;  // equal to recvbuf for MPI_IN_PLACE
  void* recvbuf;
  std::size_t count;    // elements
  DType dt;
  RedOp op;
  MemKind send_kind;
  MemKind recv_kind;
};

// Run an allreduce to completion on `ctx` (blocking). `algo` forces an
// algorithm (an index of select::algorithms()), or -1 to select one.
Status allreduce(Context& ctx, const AllreduceArgs& a, int algo = -1);

// The algorithms, one file each.
Sched allreduce_recursive_doubling(Context& ctx, AllreduceArgs a, std::uint32_t seq);
Sched allreduce_ring(Context& ctx, AllreduceArgs a, std::uint32_t seq);
Sched allreduce_shm(Context& ctx, AllreduceArgs a, std::uint32_t seq);

// Ring phases, reused by the ring allreduce (and the reduce-scatter and
// allgather collectives). Rank r ends (reduce-scatter) or starts (allgather)
// holding block (r + own_offset) mod n.
Sched reduce_scatter_ring(Context& ctx, Link link, const void* src, void* dst, MemKind kind, Blocks blocks,
                          DType dt, RedOp op, int own_offset, std::uint32_t step_base);
Sched allgather_ring(Context& ctx, Link link, void* buf, MemKind kind, Blocks blocks, std::size_t esz,
                     int own_offset, std::uint32_t step_base);

}  // namespace duct::coll
