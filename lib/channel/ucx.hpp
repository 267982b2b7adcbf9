// duct channel (internal): the process-wide UCX context and worker.
//
// One UCP context and one worker per process, created on first use.
// Endpoints are cached by the peer's worker address, so communicators that
// share processes share endpoints, and they live until MPI_Finalize (a
// communicator free never closes a connection a message may still be
// crossing).
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <map>
#include <string>

#include "channel/channel.hpp"

namespace duct::channel::ucx {

// 64-bit tag layout: | cid:16 | src:20 | type:2 | seq:14 | step:12 |
enum class MsgType : std::uint64_t { data = 0, header = 1, fin = 2 };
constexpr int kMaxRanks = 1 << 20;
constexpr unsigned kMaxCid = 1u << 16;

constexpr std::uint64_t make_tag(std::uint32_t cid, std::uint32_t src, MsgType type, Tag t) {
  return (static_cast<std::uint64_t>(cid & 0xffffu) << 48) |
         (static_cast<std::uint64_t>(src & 0xfffffu) << 28) |
         (static_cast<std::uint64_t>(type) << 26) |
         (static_cast<std::uint64_t>(t.seq & 0x3fffu) << 12) | (t.step & 0xfffu);
}

class Worker {
 public:
  // The process worker, created on the first call.
  static Status get(Worker** out);
  // The worker if it exists (progress from any layer), else nullptr.
  static Worker* existing() noexcept;
  // Close endpoints and destroy the worker (at MPI_Finalize).
  static void shutdown() noexcept;

  ucp_worker_h worker() const noexcept { return worker_; }
  const std::string& address() const noexcept { return address_; }
  // Whether this UCX can move CUDA device memory itself (GPUDirect).
  bool cuda_support() const noexcept { return cuda_support_; }
  Status endpoint(const std::string& peer_address, ucp_ep_h* out);
  // Transports UCX uses on an endpoint, e.g. "sysv/memory cma/memory".
  std::string transports(ucp_ep_h ep) const;
  // UCX version and the context's memory types.
  std::string describe() const;

  void progress() noexcept { ucp_worker_progress(worker_); }

 private:
  Worker() = default;
  Status init();
  void destroy() noexcept;

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::string address_;
  bool cuda_support_ = false;
  std::map<std::string, ucp_ep_h> eps_;
};

// Post a tagged send / receive. A send that completes at once leaves *req
// nullptr; a receive always returns a request (its length is checked).
Status send(ucp_ep_h ep, const void* buf, std::size_t bytes, MemKind kind, std::uint64_t tag,
            void** req);
Status recv(ucp_worker_h w, void* buf, std::size_t bytes, MemKind kind, std::uint64_t tag,
            void** req, std::size_t* received);
// Test a request; frees it once complete. For receives, checks the length.
Status test(void* req, bool is_recv, std::size_t expect, int peer, bool* done);
// Give up a pending request: cancel (receives) and free on completion.
void abandon(void* req, bool is_recv) noexcept;
// The received length of a receive that completed immediately must equal `expect`.
Status check_length(std::size_t got, std::size_t expect, int peer);

}  // namespace duct::channel::ucx
