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
    if (ch.kind_to(r) != "cuda_ipc" && r != rank) return (*why = strprintf("rank %d is not reached by cuda_ipc", r)), false;
    if (!ch.info(r).cuda) return (*why = strprintf("rank %d has no CUDA device", r)), false;
  }
  return true;
}

Engine::Engine(const ShmArea* shm, const channel::ChannelSet& ch, int rank, int size) : shm_(shm), me_(rank) {
  const auto& self = ch.info(rank);
  bool same = true;
  for (int r = 0; r < size; ++r) same = same && std::strcmp(ch.info(r).bus_id, self.bus_id) == 0;
  workers_ = same ? 1 : size;
  if (worker() && config::get().engine_memops && memory::cuda::stream_memops()) {
    void* dev = nullptr;
    Status st = memory::cuda::host_register(shm_->engine_done(me_), sizeof(std::uint64_t), &dev);
    if (st) {
      done_registered_ = shm_->engine_done(me_);
      done_dev_ = dev;
    } else {
      DUCT_INFO(coll, "device engine: cannot register the shared-memory done word (%s); kernel completion is polled "
                "with a CUDA event", st.message().c_str());
    }
  }
}

Engine::~Engine() {
  release_finished(true);
  for (IpcEvent* ev : {&in_, &done_}) memory::cuda::ipc_event_destroy(ev->ev);
  for (auto* v : {&peer_in_, &peer_done_})
    for (IpcEvent& ev : *v) memory::cuda::ipc_event_destroy(ev.ev);
  memory::cuda::host_unregister(done_registered_);
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
