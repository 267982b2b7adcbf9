#include "memory/ipc_cache.hpp"

#include "core/config.hpp"
#include "core/log.hpp"

namespace duct::memory {

Status IpcCache::acquire(const IpcKey& key, const IpcHandle& handle, void** mapped) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = map_.find(key);
  if (it != map_.end()) {
    ++stats_.hits;
    lru_.splice(lru_.begin(), lru_, it->second);
    it->second->pins++;
    *mapped = it->second->mapped;
    return Status::ok();
  }
  ++stats_.misses;
  void* p = nullptr;
  Status st = ops_.open(handle, &p);
  if (!st) return st;
  lru_.push_front(Entry{key, p, 1});
  map_.emplace(key, lru_.begin());
  *mapped = p;
  evict_locked();
  return Status::ok();
}

void IpcCache::release(const IpcKey& key) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = map_.find(key);
  if (it != map_.end() && it->second->pins > 0) it->second->pins--;
  evict_locked();
}

void IpcCache::evict_locked() noexcept {
  // Close least recently used unpinned mappings beyond capacity.
  auto it = lru_.end();
  while (map_.size() > capacity_ && it != lru_.begin()) {
    --it;
    if (it->pins > 0) continue;
    Status st = ops_.close(it->mapped);
    if (!st) DUCT_WARN(memory, "closing an IPC mapping: %s", st.message().c_str());
    map_.erase(it->key);
    it = lru_.erase(it);
    ++stats_.evictions;
  }
}

void IpcCache::clear() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Entry& e : lru_) {
    Status st = ops_.close(e.mapped);
    if (!st) DUCT_WARN(memory, "closing an IPC mapping: %s", st.message().c_str());
  }
  lru_.clear();
  map_.clear();
  peer_refs_.clear();
}

void IpcCache::set_capacity(std::size_t capacity) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_ = capacity;
  evict_locked();
}

std::size_t IpcCache::capacity() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacity_;
}

void IpcCache::retain_peer(std::uint64_t peer) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++peer_refs_[peer];
}

void IpcCache::release_peer(std::uint64_t peer) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto ref = peer_refs_.find(peer);
  if (ref == peer_refs_.end() || --ref->second > 0) return;
  peer_refs_.erase(ref);
  std::size_t closed = 0;
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (it->key.peer != peer) {
      ++it;
      continue;
    }
    if (it->pins > 0) DUCT_WARN(memory, "closing an IPC mapping that is still in use");
    Status st = ops_.close(it->mapped);
    if (!st) DUCT_WARN(memory, "closing an IPC mapping: %s", st.message().c_str());
    map_.erase(it->key);
    it = lru_.erase(it);
    ++closed;
  }
  if (closed) DUCT_DEBUG(memory, "closed %zu IPC mappings of a peer no communicator reaches any more", closed);
}

std::string IpcCache::describe() const {
  Stats s = stats();
  return strprintf("%zu open (%zu in use) of %zu; %llu hits, %llu misses, %llu evictions", s.open, s.pinned,
                   capacity(), static_cast<unsigned long long>(s.hits), static_cast<unsigned long long>(s.misses),
                   static_cast<unsigned long long>(s.evictions));
}

IpcCache::Stats IpcCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats s = stats_;
  s.open = map_.size();
  s.pinned = 0;
  for (const Entry& e : lru_) s.pinned += e.pins > 0;
  return s;
}

IpcCache& IpcCache::instance() {
  static IpcCache cache(static_cast<std::size_t>(config::get().ipc_cache_size));
  return cache;
}

IpcExports& IpcExports::instance() {
  static IpcExports e;
  return e;
}

Status IpcExports::handle_for(const PtrInfo& info, IpcHandle* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_id_.find(info.buffer_id);
  if (it != by_id_.end()) {
    *out = it->second;
    return Status::ok();
  }
  DUCT_TRY(cuda::ipc_get_handle(reinterpret_cast<void*>(info.base), out));
  if (by_id_.size() >= 4096) by_id_.clear();  // ids of freed buffers are never reused: forget them
  by_id_.emplace(info.buffer_id, *out);
  return Status::ok();
}

void IpcExports::clear() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  by_id_.clear();
}

}  // namespace duct::memory
