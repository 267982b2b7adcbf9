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
#include <set>
#include <string>

#include "core/hwtopo.hpp"
#include "core/netdev.hpp"
#include "core/status.hpp"
#include "memory/cuda.hpp"

namespace duct::channel::ucx {

using memory::MemKind;

// 64-bit tag layout: | cid:16 | src:20 | type:2 | seq:14 | step:12 |
enum class MsgType : std::uint64_t { data = 0, header = 1, fin = 2 };
constexpr int kMaxRanks = 1 << 20;
constexpr unsigned kMaxCid = 1u << 16;

// `seq`: the collective's sequence number, `step`: the message within it
// (channel::Tag).
constexpr std::uint64_t make_tag(std::uint32_t cid, std::uint32_t src, MsgType type, std::uint32_t seq,
                                 std::uint32_t step) {
  return (static_cast<std::uint64_t>(cid & 0xffffu) << 48) |
         (static_cast<std::uint64_t>(src & 0xfffffu) << 28) |
         (static_cast<std::uint64_t>(type) << 26) |
         (static_cast<std::uint64_t>(seq & 0x3fffu) << 12) | (step & 0xfffu);
}

// What this process knows of its node's network for the automatic NIC
// choice (core/netdev.hpp): the NICs hwloc finds on PCI cards that UCX can
// use (matched by name against UCX's network devices), the virtual ones,
// the node's GPUs and their PCI distances to each NIC, and this process's
// GPU (the current CUDA device) and CPU binding. Where UCX has fewer than
// two network devices besides loopback, only those (nothing to choose, no
// PCI scan). ucx_devices.cpp.
netdev::Node local_node();
// The same from given facts: hwloc's PCI NICs, UCX's network device names,
// the loopback interfaces, and this process's GPU's bus id ("" none).
netdev::Node describe_node(const std::vector<hwtopo::PciNic>& pci, const std::set<std::string>& ucx_devices,
                           const std::set<std::string>& loopbacks, const std::string& my_gpu_bus);

// Whether the network devices of `selected` (a NET_DEVICES value; empty:
// every device) are served only by UCX's tcp transport (netdev::tcp_only).
bool tcp_only(const std::string& selected);
// Whether this UCX was built with CUDA transports (cuda_copy, cuda_ipc).
bool ucx_has_cuda();

// The network devices UCX can use on this node ("eth0", "mlx5_0:1") and
// which of them are loopback interfaces (netdev::choose's `devices`).
netdev::Devices network_devices();

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
  // The network devices this worker uses ("eth1", or "as UCX chooses") and
  // why (core/netdev.hpp).
  const std::string& net_devices() const noexcept { return net_devices_; }
  const std::string& net_why() const noexcept { return net_why_; }
  // The eager/rendezvous setting duct gave UCX, and why (one line).
  const std::string& protocol() const noexcept { return protocol_; }

  // Events handled (0: nothing happened).
  unsigned progress() noexcept { return ucp_worker_progress(worker_); }

  // Whether a message went out over UCX's tcp transport. Such a send
  // completes once its data is in the endpoint's send buffer; what the
  // socket did not take then leaves at a later ucp_worker_progress
  // (uct_tcp_ep_am_send), so a rank that completed a collective and then
  // waits elsewhere (a barrier of the MPI library, a point-to-point call)
  // keeps the tail of its last messages from peers that still wait for
  // them in that collective, unless something progresses this worker
  // meanwhile: coll::progress_outside, from the MPI library's progress loop.
  // (A flush, ucp_ep_flush_nbx, is no way out: it waited for the peer,
  // which was in that barrier.) Shared memory and RDMA transports hand
  // their data over as the send completes.
  bool tcp_sent() const noexcept { return tcp_sent_; }
  // Called by send(): notes whether `ep` uses the tcp transport.
  void sent_on(ucp_ep_h ep) {
    if (!tcp_sent_) note_tcp(ep);
  }

  // Peer failure. Endpoints use UCX's peer error handling: when a peer
  // process dies, UCX reports it on the endpoint (at once for CMA and TCP,
  // through keepalive for shared memory) and duct records it here. Sends to
  // the peer then fail; receives from it are failed by test().
  unsigned failures() const noexcept { return failures_; }
  // Whether `ep` has failed, and why.
  bool failed(ucp_ep_h ep, ucs_status_t* why = nullptr) const;

 private:
  std::string net_devices_, net_why_, protocol_;
  Worker() = default;
  Status init();
  void destroy() noexcept;

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::string address_;
  bool cuda_support_ = false;
  std::map<std::string, ucp_ep_h> eps_;
  // Endpoints known not to use tcp (their lanes wired without it).
  std::set<ucp_ep_h> not_tcp_;
  bool tcp_sent_ = false;
  void note_tcp(ucp_ep_h ep);
  std::map<ucp_ep_h, ucs_status_t> failed_;
  unsigned failures_ = 0;
  static void on_ep_error(void* arg, ucp_ep_h ep, ucs_status_t status);
};

// Post a tagged send / receive. A send that completes at once leaves *req
// nullptr; a receive always returns a request (its length is checked).
Status send(ucp_ep_h ep, const void* buf, std::size_t bytes, MemKind kind, std::uint64_t tag,
            void** req);
Status recv(ucp_worker_h w, void* buf, std::size_t bytes, MemKind kind, std::uint64_t tag,
            void** req, std::size_t* received);
// Test a request; frees it once complete. For receives, checks the length.
// `ep` is the endpoint to the peer: a receive from a peer whose endpoint
// failed is given up with Errc::peer_failed.
Status test(void* req, bool is_recv, std::size_t expect, int peer, ucp_ep_h ep, bool* done);
// The error for a UCX status on a transfer with `peer`: Errc::peer_failed
// for the statuses that mean the peer is gone, else Errc::ucx.
Status transfer_error(ucs_status_t s, bool is_recv, int peer);
// Give up a pending request: cancel (receives) and free on completion.
void abandon(void* req, bool is_recv) noexcept;
// The received length of a receive that completed immediately must equal `expect`.
Status check_length(std::size_t got, std::size_t expect, int peer);

}  // namespace duct::channel::ucx
