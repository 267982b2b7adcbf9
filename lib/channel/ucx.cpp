#include "channel/ucx.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "core/config.hpp"
#include "core/log.hpp"
#include "core/netdev.hpp"

namespace duct::channel::ucx {

namespace {

Status ucs_error(ucs_status_t s, const char* call) {
  return make_error(Errc::ucx, "%s failed: %s", call, ucs_status_string(s));
}

#define DUCT_UCS_CHECK(call)                                     \
  do {                                                           \
    ucs_status_t duct_ucs_s_ = (call);                           \
    if (duct_ucs_s_ != UCS_OK) return ucs_error(duct_ucs_s_, #call); \
  } while (0)

std::mutex g_mutex;
Worker* g_worker = nullptr;
// Sends given up before completion (a failed collective): UCX still holds
// them, so endpoints cannot be flushed at shutdown and are closed by force.
unsigned g_abandoned_sends = 0;

ucs_memory_type_t ucs_kind(MemKind k) {
  return k == MemKind::device ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
}

}  // namespace

Status Worker::get(Worker** out) {
  if (g_worker) {
    *out = g_worker;
    return Status::ok();
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_worker) {
    auto* w = new Worker();
    Status st = w->init();
    if (!st) {
      w->destroy();
      delete w;
      return st;
    }
    g_worker = w;
  }
  *out = g_worker;
  return Status::ok();
}

Worker* Worker::existing() noexcept { return g_worker; }

void Worker::shutdown() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_worker) return;
  g_worker->destroy();
  delete g_worker;
  g_worker = nullptr;
}

Status Worker::init() {
  const bool peer_failure = config::get().peer_failure;
  if (peer_failure) {
    // Shared-memory transports take part in peer error handling only with
    // their IPC error handling on (UCT settings that ucp_config_modify does
    // not reach): set them for this process unless the user did.
    setenv("UCX_SYSV_ERROR_HANDLING", "y", 0);
    setenv("UCX_POSIX_ERROR_HANDLING", "y", 0);
  }
  ucp_config_t* cfg = nullptr;
  DUCT_UCS_CHECK(ucp_config_read(nullptr, nullptr, &cfg));
  // A dead peer behind shared memory is noticed by keepalive, every 20 s by
  // default; check every second unless the user chose.
  if (peer_failure && !std::getenv("UCX_KEEPALIVE_INTERVAL")) {
    ucs_status_t ms = ucp_config_modify(cfg, "KEEPALIVE_INTERVAL", "1s");
    if (ms != UCS_OK) DUCT_DEBUG(channel, "ucp_config_modify(KEEPALIVE_INTERVAL): %s", ucs_status_string(ms));
  }
  // The network devices: this rank's rail (core/netdev.hpp).
  const std::string& rails = config::get().net_devices;
  const char* ucx_env = std::getenv("UCX_NET_DEVICES");
  netdev::Node node;
  if (netdev::is_automatic(rails, ucx_env)) node = local_node();
  const netdev::Devices present = ucx_env && *ucx_env ? network_devices() : netdev::Devices{};
  const netdev::Choice nets = netdev::choose(rails, ucx_env, netdev::launcher_local_rank(), &node, &present);
  if (!nets.devices.empty()) {
    ucs_status_t ms = ucp_config_modify(cfg, "NET_DEVICES", nets.devices.c_str());
    if (ms != UCS_OK) {
      ucp_config_release(cfg);
      return make_error(Errc::config, "DUCT_NET_DEVICES: UCX refuses NET_DEVICES=%s: %s", nets.devices.c_str(),
                        ucs_status_string(ms));
    }
  }
  net_devices_ = nets.devices.empty() ? std::string("as UCX chooses") : nets.devices;
  net_why_ = nets.why;
  // Over TCP, UCX's rendezvous protocol saves no copy (the kernel copies
  // either way) and costs a round trip per message before its data moves:
  // a request and a reply that queue behind bulk data on the same sockets.
  // Messages of 512 KiB-16 MiB in both directions at once (alltoall) then
  // reached 56-60% of the link (emulated cluster, 2 rails at 1 Gbit/s;
  // 94-96% with eager). So where every network device is served by UCX's
  // tcp transport alone, every message goes eager (its fragments stream
  // behind each other, no round trip before the data), unless the user set
  // UCX_RNDV_THRESH. A CUDA-aware UCX keeps its default: its
  // device-memory protocols over TCP are rendezvous pipelines.
  const std::string selected = !nets.devices.empty() ? nets.devices : (ucx_env ? ucx_env : "");
  if (std::getenv("UCX_RNDV_THRESH")) {
    protocol_ = strprintf("UCX_RNDV_THRESH=%s (the user's)", std::getenv("UCX_RNDV_THRESH"));
  } else if (!tcp_only(selected)) {
    protocol_ = "UCX's eager/rendezvous threshold (an RDMA transport serves the network)";
  } else if (ucx_has_cuda()) {
    protocol_ = "UCX's eager/rendezvous threshold (TCP network, CUDA-aware UCX)";
  } else if (ucs_status_t ms = ucp_config_modify(cfg, "RNDV_THRESH", "inf"); ms != UCS_OK) {
    protocol_ = strprintf("UCX's eager/rendezvous threshold (RNDV_THRESH=inf refused: %s)", ucs_status_string(ms));
  } else {
    protocol_ = "eager at every size (network over TCP only: RNDV_THRESH=inf)";
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_TAG;
  params.mt_workers_shared = 0;
  params.name = "duct";
  ucs_status_t s = ucp_init(&params, cfg, &context_);
  ucp_config_release(cfg);
  if (s != UCS_OK) return ucs_error(s, "ucp_init");

  ucp_context_attr_t attr{};
  attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  DUCT_UCS_CHECK(ucp_context_query(context_, &attr));
  cuda_support_ = (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;

  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SINGLE;  // duct serializes progress itself
  DUCT_UCS_CHECK(ucp_worker_create(context_, &wp, &worker_));

  ucp_address_t* addr = nullptr;
  size_t len = 0;
  DUCT_UCS_CHECK(ucp_worker_get_address(worker_, &addr, &len));
  address_.assign(reinterpret_cast<const char*>(addr), len);
  ucp_worker_release_address(worker_, addr);
  DUCT_INFO(channel, "ucx worker up: %zu-byte address, cuda memory %s, network devices %s (%s), protocol %s", len,
            cuda_support_ ? "supported" : "not supported (device buffers go through bounce buffers)",
            net_devices_.c_str(), net_why_.c_str(), protocol_.c_str());
  return Status::ok();
}

void Worker::destroy() noexcept {
  if (worker_) {
    // Close endpoints gracefully (flush), but never wait forever for a peer
    // that is gone: after 2 s, close the rest by force.
    std::map<ucp_ep_h, void*> closing;
    for (auto& [addr, ep] : eps_) {
      ucp_request_param_t p{};
      p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      p.flags = failed(ep) || g_abandoned_sends > 0 ? UCP_EP_CLOSE_FLAG_FORCE : 0;
      void* r = ucp_ep_close_nbx(ep, &p);
      if (UCS_PTR_IS_PTR(r)) closing[ep] = r;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!closing.empty() && std::chrono::steady_clock::now() < deadline) {
      ucp_worker_progress(worker_);
      for (auto it = closing.begin(); it != closing.end();) {
        if (ucp_request_check_status(it->second) != UCS_INPROGRESS) {
          ucp_request_free(it->second);
          it = closing.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& [ep, r] : closing) {
      ucp_request_cancel(worker_, r);
      ucp_request_free(r);
    }
    eps_.clear();
    // Let purged requests of force-closed endpoints complete.
    for (int i = 0; i < 1000 && g_abandoned_sends > 0; ++i) ucp_worker_progress(worker_);
    ucp_worker_destroy(worker_);
    worker_ = nullptr;
  }
  if (context_) {
    ucp_cleanup(context_);
    context_ = nullptr;
  }
}

Status Worker::endpoint(const std::string& peer_address, ucp_ep_h* out) {
  auto it = eps_.find(peer_address);
  if (it != eps_.end()) {
    *out = it->second;
    return Status::ok();
  }
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  p.address = reinterpret_cast<const ucp_address_t*>(peer_address.data());
  if (config::get().peer_failure) {
    p.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    p.err_handler.cb = &Worker::on_ep_error;
    p.err_handler.arg = this;
  } else {
    p.err_mode = UCP_ERR_HANDLING_MODE_NONE;
  }
  ucp_ep_h ep = nullptr;
  DUCT_UCS_CHECK(ucp_ep_create(worker_, &p, &ep));
  eps_.emplace(peer_address, ep);
  *out = ep;
  return Status::ok();
}

void Worker::on_ep_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
  auto* w = static_cast<Worker*>(arg);
  if (w->failed_.emplace(ep, status).second) {
    ++w->failures_;
    // Not a warning: a peer that finished (MPI_Finalize, exit) while this
    // rank still progresses its worker is reported here too (3 nodes x 2
    // ranks: "Endpoint timeout" at the end of one run in three). A transfer
    // that needs the peer fails with PEER_FAILED, naming its rank.
    DUCT_INFO(channel, "UCX reports an endpoint failed: %s (transfers with that peer fail from now on)",
              ucs_status_string(status));
  }
}

bool Worker::failed(ucp_ep_h ep, ucs_status_t* why) const {
  auto it = failed_.find(ep);
  if (it == failed_.end()) return false;
  if (why) *why = it->second;
  return true;
}

std::string Worker::transports(ucp_ep_h ep) const {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (!f) return "?";
  ucp_ep_print_info(ep, f);
  std::fclose(f);
  // Keep the "lane[i]: N:tl/dev" parts: "sysv/memory cma/memory".
  std::string out, text(buf, len);
  std::free(buf);
  size_t pos = 0;
  while ((pos = text.find("lane[", pos)) != std::string::npos) {
    size_t colon = text.find(':', text.find(']', pos));
    size_t start = text.find(':', colon + 1);
    if (colon == std::string::npos || start == std::string::npos) break;
    size_t end = text.find_first_of(" \n", start);
    std::string tl = text.substr(start + 1, end - start - 1);
    if (out.find(tl) == std::string::npos) {
      if (!out.empty()) out += " ";
      out += tl;
    }
    pos = end;
  }
  return out.empty() ? "(not yet wired)" : out;
}

std::string Worker::describe() const {
  unsigned major = 0, minor = 0, release = 0;
  ucp_get_version(&major, &minor, &release);
  return strprintf("UCX %u.%u.%u, CUDA memory %s", major, minor, release,
                   cuda_support_ ? "supported" : "not supported");
}

void Worker::note_tcp(ucp_ep_h ep) {
  if (not_tcp_.count(ep)) return;
  const std::string tl = transports(ep);
  if (tl.find("tcp/") != std::string::npos) {
    tcp_sent_ = true;
    DUCT_DEBUG(channel, "messages go over UCX's tcp transport (%s): duct's worker is also progressed from the MPI "
                        "library's progress loop where it has one", tl.c_str());
  } else if (tl.find('/') != std::string::npos) {
    not_tcp_.insert(ep);  // wired without tcp; not wired yet: asked again at its next send
  }
}

Status send(ucp_ep_h ep, const void* buf, std::size_t bytes, MemKind kind, std::uint64_t tag,
            void** req) {
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  p.memory_type = ucs_kind(kind);
  ucs_status_ptr_t r = ucp_tag_send_nbx(ep, buf, bytes, tag, &p);
  if (UCS_PTR_IS_ERR(r)) {
    ucs_status_t s = UCS_PTR_STATUS(r);
    Status st = transfer_error(s, false, -1);
    return st.code() == Errc::peer_failed ? st : ucs_error(s, "ucp_tag_send_nbx");
  }
  if (Worker* w = Worker::existing()) w->sent_on(ep);
  *req = r;  // nullptr: completed
  return Status::ok();
}

Status recv(ucp_worker_h w, void* buf, std::size_t bytes, MemKind kind, std::uint64_t tag,
            void** req, std::size_t* received) {
  // Always ask for a request: UCX 1.13 does not report the length of a
  // receive that completes immediately (recv_info stays zero), and duct
  // checks every length.
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  p.memory_type = ucs_kind(kind);
  ucs_status_ptr_t r = ucp_tag_recv_nbx(w, buf, bytes, tag, ~0ull, &p);
  if (UCS_PTR_IS_ERR(r)) {
    if (UCS_PTR_STATUS(r) == UCS_ERR_MESSAGE_TRUNCATED)
      return make_error(Errc::truncate, "a message longer than the %zu bytes expected arrived", bytes);
    return ucs_error(UCS_PTR_STATUS(r), "ucp_tag_recv_nbx");
  }
  *req = r;
  *received = 0;
  return Status::ok();
}

Status check_length(std::size_t got, std::size_t expect, int peer) {
  if (got == expect) return Status::ok();
  return make_error(Errc::mismatch, "received %zu bytes from rank %d where %zu were expected "
                    "(do all ranks pass the same count and datatype?)", got, peer, expect);
}

Status transfer_error(ucs_status_t s, bool is_recv, int peer) {
  switch (s) {
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_REJECTED:
    // duct never tests a request it cancelled itself (abandon() frees it):
    // UCX cancels a transfer when its endpoint fails, e.g. a rendezvous
    // receive whose sender died, possibly before on_ep_error has run.
    case UCS_ERR_CANCELED:
      if (peer < 0) return make_error(Errc::peer_failed, "the peer process failed (UCX: %s)", ucs_status_string(s));
      return make_error(Errc::peer_failed, "rank %d failed or closed its connection (UCX: %s) during a %s",
                        peer, ucs_status_string(s), is_recv ? "receive from it" : "send to it");
    default:
      return make_error(Errc::ucx, "%s rank %d failed: %s", is_recv ? "receive from" : "send to", peer,
                        ucs_status_string(s));
  }
}

Status test(void* req, bool is_recv, std::size_t expect, int peer, ucp_ep_h ep, bool* done) {
  ucs_status_t s;
  ucp_tag_recv_info_t info{};
  if (is_recv)
    s = ucp_tag_recv_request_test(req, &info);
  else
    s = ucp_request_check_status(req);
  if (s == UCS_INPROGRESS) {
    // A receive is not tied to an endpoint: UCX never fails it when the
    // sender dies. Give it up here once the sender's endpoint has failed.
    Worker* w = Worker::existing();
    ucs_status_t why;
    if (is_recv && ep && w && w->failures() > 0 && w->failed(ep, &why)) {
      abandon(req, true);
      *done = true;
      return transfer_error(why, true, peer);
    }
    *done = false;
    return Status::ok();
  }
  *done = true;
  ucp_request_free(req);
  if (s == UCS_ERR_MESSAGE_TRUNCATED)
    return make_error(Errc::truncate, "a message from rank %d was longer than the %zu bytes expected",
                      peer, expect);
  if (s != UCS_OK) return transfer_error(s, is_recv, peer);
  if (is_recv) return check_length(info.length, expect, peer);
  return Status::ok();
}

void abandon(void* req, bool is_recv) noexcept {
  if (!req) return;
  Worker* w = Worker::existing();
  if (is_recv && w) ucp_request_cancel(w->worker(), req);
  if (!is_recv && ucp_request_check_status(req) == UCS_INPROGRESS) ++g_abandoned_sends;
  ucp_request_free(req);
}

}  // namespace duct::channel::ucx
