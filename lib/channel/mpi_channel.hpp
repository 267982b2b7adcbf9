// duct channel (internal): the `mpi` channel, byte ranges over the MPI
// library's point-to-point calls (mpi.cpp has the protocol).
#pragma once

#include <mpi.h>

#include "channel/channel.hpp"

namespace duct::channel {

// Whether the MPI library moves CUDA device memory itself
// (MPIX_Query_cuda_support, where the library has it).
bool mpi_cuda_aware() noexcept;

// Block until one MPI request of the mpi channel's pending operations
// completes (PMPI_Waitany), and hand its completion to its operation.
// False when none is pending. For the simulation build, whose waits have
// nothing but these messages to wait for: one blocking call instead of a
// poll per 50 ns of simulated time.
bool wait_for_any_message();

class MpiChannel : public Channel {
 public:
  // `comm`: duct's duplicate of the user's communicator (owned by the
  // ChannelSet); `peer`: the peer's rank in it; `tag_ub`: its MPI_TAG_UB.
  MpiChannel(MPI_Comm comm, int peer, int tag_ub, bool cuda_aware)
      : comm_(comm), peer_(peer), tag_ub_(tag_ub), cuda_aware_(cuda_aware) {}
  const char* name() const noexcept override { return "mpi"; }
  Status isend(const void* buf, std::size_t bytes, MemKind kind, Tag tag, Request* req) override {
    return start(false, const_cast<void*>(buf), bytes, kind, tag, req);
  }
  Status irecv(void* buf, std::size_t bytes, MemKind kind, Tag tag, Request* req) override {
    return start(true, buf, bytes, kind, tag, req);
  }
  // The MPI tag of a message (seq, step): see mpi.cpp.
  int tag(Tag t) const noexcept;

 private:
  Status start(bool recv, void* buf, std::size_t bytes, MemKind kind, Tag tag, Request* req);
  MPI_Comm comm_;
  int peer_;
  int tag_ub_;
  bool cuda_aware_;
};

}  // namespace duct::channel
