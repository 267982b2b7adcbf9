// duct channel: per-rank-pair movers of byte ranges.
//
// A Channel offers non-blocking send and receive of a byte range of host or
// device memory to one peer rank of a communicator. Collectives (lib/coll)
// are schedules over channels and never see UCX or CUDA. Two kinds exist,
// chosen per pair when a communicator is first used (table.cpp):
//
//   ucx       UCX tag messages. Host memory goes straight through (UCX picks
//             shared memory, CMA or TCP); device memory goes straight through
//             when UCX reports CUDA support, otherwise through a pipeline of
//             pinned host bounce buffers (D2H of chunk i+1 overlaps the send
//             of chunk i).
//   cuda_ipc  ranks on one node with CUDA: a header message carries either a
//             small payload inline or a cudaIpcMemHandle_t of the sender's
//             device buffer, which the receiver opens (cached) and copies
//             from with cudaMemcpyAsync, then acknowledges.
//
// Message matching: every message of a collective is identified by
// (communicator id, source rank, sequence number of the collective, step).
// Messages with equal identity between one pair match in posting order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "memory/cuda.hpp"

namespace duct::channel {

using memory::MemKind;

// Identity of one message within a communicator, chosen by the collective.
struct Tag {
  std::uint32_t seq;   // collective instance on this communicator (14 bits used)
  std::uint32_t step;  // message within the collective (12 bits used)
};

// An operation with stages beyond one UCX request (staging, IPC). Active
// operations are advanced by channel::progress(), whoever waits on them.
class Op {
 public:
  virtual ~Op() = default;
  // Advance the state machine; set *done when finished. An error is final.
  virtual Status advance(bool* done) = 0;
  // A one-line description for hang reports ("recv 1048576 B from rank 2").
  virtual std::string describe() const = 0;

  bool finished = false;
  Status result;
  bool registered = false;  // in the progress engine's active list
};

// The handle of one send or receive. Move-only. Destroying a pending request
// cancels what can be cancelled and detaches the rest safely.
class Request {
 public:
  Request() = default;
  ~Request() { reset(); }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  Request(Request&& o) noexcept { *this = std::move(o); }
  Request& operator=(Request&& o) noexcept;

  // Whether the operation has completed (successfully or not); drives UCX.
  Status test(bool* done);
  bool active() const noexcept { return ucx_ != nullptr || op_ != nullptr; }
  void reset() noexcept;

  // Used by channel implementations.
  void set_ucx(void* ucx_req, bool is_recv, std::size_t expect, int peer, void* ep);
  void set_op(std::unique_ptr<Op> op);
  void set_done(Status st) {
    reset();
    status_ = std::move(st);
  }
  std::string describe() const;

 private:
  void* ucx_ = nullptr;  // a bare UCX request (the common case: no allocation)
  bool is_recv_ = false;
  std::size_t expect_ = 0;
  int peer_ = -1;
  void* ep_ = nullptr;  // ucp_ep_h of the peer
  std::unique_ptr<Op> op_;
  Status status_;
};

class Channel {
 public:
  virtual ~Channel() = default;
  virtual const char* name() const noexcept = 0;
  // Send `bytes` from `buf` (of memory kind `kind`) to the peer.
  virtual Status isend(const void* buf, std::size_t bytes, MemKind kind, Tag tag, Request* req) = 0;
  // Receive exactly `bytes` from the peer into `buf`.
  virtual Status irecv(void* buf, std::size_t bytes, MemKind kind, Tag tag, Request* req) = 0;
};

// Drive all communication of this process once: UCX worker progress and
// every active multi-stage operation. Never blocks. Returns how many
// multi-stage operations finished (UCX events are not counted: keepalive
// traffic is not progress of a collective).
unsigned progress();

// Whether a message completed here may still have data in the channel's
// own buffers that only progress() moves on (UCX over TCP:
// ucx::Worker::tcp_sent). Then the process should progress while it waits
// outside duct too (coll::progress_outside).
bool sends_may_linger() noexcept;

// Register an operation with the progress engine (channel implementations).
void activate(Op* op);
void deactivate(Op* op) noexcept;
// The multi-stage operations the progress engine advances (activate()).
const std::vector<Op*>& active_ops() noexcept;

// Pending operations, one per line (for hang reports and SIGUSR1 dumps).
std::string describe_active();

}  // namespace duct::channel
