// The device engine object: its events, its registered done word, the
// mappings held by stream-ordered calls (engine.hpp has the protocol).
// The schedules that run a collective on it, and need a communicator's
// context, are in engine_sched.cpp: this file knows no Context.
#include "coll/engine.hpp"

#include <sched.h>

#include <chrono>
#include <cstring>

#include "channel/table.hpp"
#include "coll/shm.hpp"
#include "core/config.hpp"
#include "core/log.hpp"
#include "reduce/reduce.hpp"

namespace duct::coll {

bool Engine::possible(const ShmArea* shm, const channel::ChannelSet& ch, int rank, int size, std::string* why) {
  if (!config::get().engine) return (*why = "DUCT_ENGINE=0"), false;
  if (!shm) return (*why = "no node shared-memory area (several nodes, or one rank)"), false;
  if (size > reduce::kMaxPeers) return (*why = strprintf("%d ranks: the engine serves up to %d", size, reduce::kMaxPeers)), false;
  if (!reduce::device_built()) return (*why = "duct was built without CUDA"), false;
  for (int r = 0; r < size; ++r) {
    if (std::strcmp(ch.kind_to(r), "cuda_ipc") != 0 && r != rank) return (*why = strprintf("rank %d is not reached by cuda_ipc", r)), false;
    if (!ch.info(r).cuda) return (*why = strprintf("rank %d has no CUDA device", r)), false;
  }
  return true;
}

Engine::Engine(const ShmArea* shm, const channel::ChannelSet& ch, int rank, int size) : shm_(shm), me_(rank) {
  const auto& self = ch.info(rank);
  bool same = true;
  for (int r = 0; r < size; ++r) same = same && ch.info(r).bus == self.bus;
  workers_ = same ? 1 : size;
  if (worker() && config::get().engine_memops && memory::cuda::stream_memops()) {
    Status st = register_pages();
    if (st) {
      done_dev_ = dev_of(shm_->engine_done(me_));
    } else {
      DUCT_INFO(coll, "device engine: cannot register the shared-memory done word (%s); kernel completion is polled "
                "with a CUDA event", st.message().c_str());
    }
  }
}

Status Engine::register_pages() {
  if (registered_) return Status::ok();
  void* start = nullptr;
  void* dev = nullptr;
  std::size_t bytes = 0;
  shm_->engine_pages(me_, &start, &bytes);
  DUCT_TRY(memory::cuda::host_register(start, bytes, &dev).context("registering this rank's engine words with CUDA"));
  registered_ = start;
  registered_dev_ = static_cast<char*>(dev);
  return Status::ok();
}

void* Engine::dev_of(void* host) const noexcept {
  return registered_dev_ + (static_cast<char*>(host) - static_cast<char*>(registered_));
}

Status Engine::own_flags() {
  if (flags_tried_) return flags_status_;
  flags_tried_ = true;
  flags_status_ = [&]() -> Status {
    if (shm_->size() > reduce::kMaxPeers)
      return make_error(Errc::not_supported, "the device barrier of captured calls serves at most %d ranks, not %d",
                        reduce::kMaxPeers, shm_->size());
    DUCT_TRY(register_pages());
    failed_dev_ = static_cast<std::uint64_t*>(dev_of(shm_->engine_graph(me_) + 2));
    DUCT_TRY(memory::cuda::alloc_device(kFlagBytes, &flags_));
    const std::vector<unsigned char> zero(kFlagBytes, 0);
    DUCT_TRY(memory::cuda::copy(flags_, zero.data(), kFlagBytes));
    return memory::cuda::ipc_get_handle(flags_, &flags_handle_);
  }();
  if (!flags_status_)
    DUCT_INFO(coll, "device engine: no captured collectives here: %s", flags_status_.message().c_str());
  return flags_status_;
}

Status Engine::open_flags(int q, const memory::IpcHandle& h) {
  if (graph_dev_.size() != static_cast<std::size_t>(shm_->size())) {
    graph_dev_.assign(static_cast<std::size_t>(shm_->size()), nullptr);
    graph_dev_[static_cast<std::size_t>(me_)] = static_cast<std::uint64_t*>(flags_);
  }
  if (graph_dev_[static_cast<std::size_t>(q)]) return Status::ok();
  void* p = nullptr;
  bool already = false;
  DUCT_TRY(memory::cuda::ipc_open(h, &p, &already).context(strprintf("opening rank %d's barrier flags", q)));
  graph_dev_[static_cast<std::size_t>(q)] = static_cast<std::uint64_t*>(p);
  opened_.push_back(p);
  return Status::ok();
}

Status Engine::graph_failure() const {
  const std::uint64_t q = word_load(shm_->engine_graph(me_) + 2);
  if (q == 0) return Status::ok();
  return make_error(Errc::timeout,
                    "a collective captured into a CUDA graph waited on the GPU longer than DUCT_TIMEOUT=%g s for rank "
                    "%llu (its replay did not reach the call); the communicator's captured collectives do nothing "
                    "from then on",
                    config::get().timeout, static_cast<unsigned long long>(q - 1));
}

reduce::Barrier Engine::barrier_args() const {
  reduce::Barrier b;
  b.n = shm_->size();
  b.me = me_;
  for (int r = 0; r < b.n; ++r) b.word[r] = graph_dev_[static_cast<std::size_t>(r)];
  b.failed = failed_dev_;
  b.skip = static_cast<std::uint64_t*>(flags_) + reduce::kSkipWord;
  const double t = config::get().timeout;
  b.timeout_ns = t > 0 ? static_cast<std::uint64_t>(t * 1e9) : 0;
  return b;
}

Engine::~Engine() {
  release_finished(true);
  for (void* p : opened_) (void)memory::cuda::ipc_close(p);
  memory::cuda::host_unregister(registered_);
  memory::cuda::free_device(flags_);
  for (IpcEvent* ev : {&in_, &done_}) memory::cuda::ipc_event_destroy(ev->ev);
  for (auto* v : {&peer_in_, &peer_done_})
    for (IpcEvent& ev : *v) memory::cuda::ipc_event_destroy(ev.ev);
}

Status Engine::own_events() {
  if (in_.ev) return Status::ok();
  DUCT_TRY(memory::cuda::ipc_event_create(&in_.ev, &in_.handle));
  Status st = memory::cuda::ipc_event_create(&done_.ev, &done_.handle);
  if (!st) {
    memory::cuda::ipc_event_destroy(in_.ev);
    in_.ev = nullptr;
  }
  return st;
}

Status Engine::wait_peer_event(void* stream, std::vector<IpcEvent>* opened, int q, const memory::IpcHandle& h) {
  if (opened->size() <= static_cast<std::size_t>(q)) opened->resize(static_cast<std::size_t>(q) + 1);
  IpcEvent& pe = (*opened)[static_cast<std::size_t>(q)];
  if (!pe.ev || std::memcmp(pe.handle.bytes, h.bytes, sizeof h.bytes) != 0) {
    memory::cuda::ipc_event_destroy(pe.ev);
    pe.ev = nullptr;
    DUCT_TRY(memory::cuda::ipc_event_open(h, &pe.ev).context(strprintf("opening rank %d's interprocess event", q)));
    pe.handle = h;
  }
  return memory::cuda::stream_wait_event(stream, pe.ev);
}

void Engine::release_finished(bool wait) noexcept {
  const double timeout = config::get().timeout;
  const auto started = std::chrono::steady_clock::now();
  while (!held_.empty()) {
    Held& h = held_.front();
    bool done = false;
    if (!memory::cuda::event_query(h.ev, &done)) done = true;  // a failed kernel reads nothing any more
    if (!done) {
      if (!wait) return;
      if (timeout > 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > timeout) {
        DUCT_WARN(coll, "device engine: %zu stream-ordered kernel(s) not finished after DUCT_TIMEOUT=%g s; their "
                  "peers' buffers stay mapped", held_.size(), timeout);
        return;
      }
      sched_yield();
      continue;
    }
    for (const memory::IpcKey& key : h.keys) memory::IpcCache::instance().release(key);
    memory::cuda::event_destroy(h.ev);
    held_.pop_front();
  }
}

}  // namespace duct::coll
