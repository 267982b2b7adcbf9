// duct channel (internal): the ucx channel and its raw transfers, which the
// cuda_ipc channel reuses for headers and for its fallback path.
#pragma once

#include <mpi.h>
#include <ucp/api/ucp.h>

#include "channel/channel.hpp"
#include "channel/ucx.hpp"

namespace duct::channel {

// Everything a channel to one peer needs; the same values on both sides of
// the pair, except for the local ones marked so.
struct PairSetup {
  std::uint32_t cid = 0;
  int rank = 0;                 // this rank in the communicator
  int peer = 0;                 // the peer's rank
  ucp_ep_h ep = nullptr;
  ucp_worker_h worker = nullptr;
  std::size_t chunk = 0;        // 0: messages are never split; else split into chunks of this size
  std::size_t eager = 0;        // cuda_ipc inline limit
  int depth = 4;                // local: chunks in flight
  bool direct_device = false;   // local: this UCX moves device memory itself
  std::uint64_t peer_proc = 0;  // the peer's process identity (IPC cache key)
  // The mpi channel (mpi_channel.hpp): duct's duplicate of the communicator.
  MPI_Comm mpi_comm = MPI_COMM_NULL;
  int mpi_tag_ub = 32767;       // its MPI_TAG_UB
  bool mpi_cuda = false;        // local: the MPI library is CUDA-aware
};

class UcxChannel : public Channel {
 public:
  explicit UcxChannel(const PairSetup& s) : s_(s) {}
  const char* name() const noexcept override { return "ucx"; }
  Status isend(const void* buf, std::size_t bytes, MemKind kind, Tag tag, Request* req) override {
    return raw_send(buf, bytes, kind, tag, ucx::MsgType::data, req);
  }
  Status irecv(void* buf, std::size_t bytes, MemKind kind, Tag tag, Request* req) override {
    return raw_recv(buf, bytes, kind, tag, ucx::MsgType::data, req);
  }

  // A transfer of `bytes`, split into chunks when the pair requires it and
  // staged through bounce buffers when UCX cannot touch device memory.
  Status raw_send(const void* buf, std::size_t bytes, MemKind kind, Tag tag, ucx::MsgType type, Request* req);
  Status raw_recv(void* buf, std::size_t bytes, MemKind kind, Tag tag, ucx::MsgType type, Request* req);

  const PairSetup& setup() const noexcept { return s_; }
  std::uint64_t tag_to_peer(Tag t, ucx::MsgType type) const { return ucx::make_tag(s_.cid, s_.rank, type, t.seq, t.step); }
  std::uint64_t tag_from_peer(Tag t, ucx::MsgType type) const { return ucx::make_tag(s_.cid, s_.peer, type, t.seq, t.step); }

 private:
  PairSetup s_;
  // Messages to (from) the peer reach UCX in the order they were posted,
  // whatever their stages: UCX matches equal tags in posting order, and an
  // algorithm may send several segments under one tag (a ring step). A
  // staged send whose device-to-host copy finishes later, or a staged
  // receive that waits for a bounce buffer, must not let a later message of
  // the same tag overtake it. Tickets are taken at posting; an operation
  // hands its first chunk to UCX on its turn and passes the turn on with
  // its last chunk.
 public:
  struct Order {
    std::uint64_t next = 0;  // next ticket
    std::uint64_t turn = 0;  // ticket whose chunks go to UCX now
    bool idle() const noexcept { return next == turn; }
  };

 private:
  Order send_order_, recv_order_;
};

}  // namespace duct::channel
