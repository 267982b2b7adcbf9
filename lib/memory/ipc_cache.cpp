#include "memory/ipc_cache.hpp"

#include "core/config.hpp"
#include "core/log.hpp"

#include <vector>

namespace duct::memory {

Status IpcCache::acquire(const IpcKey& key, const IpcHandle& handle, void** mapped) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++uses_;
  auto it = map_.find(key);
  if (it != map_.end()) {
    ++stats_.hits;
    lru_.splice(lru_.begin(), lru_, it->second);
    it->second->pins++;
    it->second->last_use = uses_;
    *mapped = it->second->mapped;
    return Status::ok();
  }
  ++stats_.misses;
  // Another allocation of this peer that overlaps ours was freed (the range
  // now holds this one): its mapping is stale and would make the open fail.
  stats_.stale += close_peer_range_locked(false, key.peer, key.base, key.size);
  void* p = nullptr;
  bool already = false;
  Status st = ops_.open(handle, &p, &already);
  if (!st && already) {
    // Mapped through an entry we could not see by range (e.g. the
    // allocation grew over several old ones that are still pinned), or by
    // someone else: drop every unpinned mapping of the peer and try once more.
    ++stats_.retries;
    std::size_t n = close_peer_range_locked(true, key.peer, 0, 0);
    DUCT_DEBUG(memory, "IPC open reported already mapped: closed %zu mappings of the peer, opening again", n);
    already = false;
    st = ops_.open(handle, &p, &already);
  }
  if (!st) return st;
  lru_.push_front(Entry{key, p, 1, uses_, 0});
  map_.emplace(key, lru_.begin());
  by_range_[key.peer].emplace(key.base, lru_.begin());
  bytes_ += key.size;
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

void IpcCache::hand_to_graph(const IpcKey& key) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = map_.find(key);
  if (it == map_.end()) return;
  if (it->second->pins > 0) it->second->pins--;
  it->second->graph_pins++;
}

void IpcCache::graph_release(const IpcKey& key) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = map_.find(key);  // gone already when the range was replaced
  if (it != map_.end() && it->second->graph_pins > 0) it->second->graph_pins--;
  evict_locked();
}

void IpcCache::close_locked(Iter it) noexcept {
  Status st = ops_.close(it->mapped);
  if (!st) DUCT_WARN(memory, "closing an IPC mapping: %s", st.message().c_str());
  auto peer = by_range_.find(it->key.peer);
  if (peer != by_range_.end()) {
    auto [lo, hi] = peer->second.equal_range(it->key.base);
    for (auto r = lo; r != hi; ++r)
      if (r->second == it) {
        peer->second.erase(r);
        break;
      }
    if (peer->second.empty()) by_range_.erase(peer);
  }
  bytes_ -= it->key.size;
  map_.erase(it->key);
  lru_.erase(it);
}

std::size_t IpcCache::close_peer_range_locked(bool spare_graphs, std::uint64_t peer, std::uint64_t base, std::uint64_t size) noexcept {
  auto p = by_range_.find(peer);
  if (p == by_range_.end()) return 0;
  std::vector<Iter> doomed;
  auto& ranges = p->second;
  if (size == 0) {
    for (auto& [b, it] : ranges) doomed.push_back(it);
  } else {
    // Entries starting below base + size; of those, the ones ending above base.
    for (auto r = ranges.begin(); r != ranges.end() && r->first < base + size; ++r)
      if (r->first + r->second->key.size > base) doomed.push_back(r->second);
  }
  std::size_t closed = 0;
  for (Iter it : doomed) {
    if (it->pins > 0) continue;  // in use by a transfer: closed when released and evicted
    if (spare_graphs && it->graph_pins > 0) continue;
    close_locked(it);
    ++closed;
  }
  return closed;
}

void IpcCache::evict_locked() noexcept {
  // Close least recently used unpinned mappings beyond either bound (the
  // byte bound spares the recently used ones).
  auto it = lru_.end();
  while ((map_.size() > capacity_ || bytes_ > capacity_bytes_) && it != lru_.begin()) {
    --it;
    if (it->pins > 0 || it->graph_pins > 0) continue;
    if (map_.size() <= capacity_ && uses_ - it->last_use < kRecentUses) break;  // the rest is more recent still
    Iter victim = it++;
    close_locked(victim);
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
  by_range_.clear();
  bytes_ = 0;
  peer_refs_.clear();
}

void IpcCache::set_capacity(std::size_t capacity) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_ = capacity;
  evict_locked();
}

void IpcCache::set_capacity_bytes(std::size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_bytes_ = bytes;
  evict_locked();
}

std::size_t IpcCache::capacity_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacity_bytes_;
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
    close_locked(it++);
    ++closed;
  }
  if (closed) DUCT_DEBUG(memory, "closed %zu IPC mappings of a peer no communicator reaches any more", closed);
}

std::string IpcCache::describe() const {
  Stats s = stats();
  const std::size_t cap_bytes = capacity_bytes();
  std::string cap = cap_bytes == kUnbounded ? std::string("unbounded") : std::to_string(cap_bytes >> 20) + " MiB";
  return strprintf("%zu open (%zu in use, %zu MiB) of %zu / %s; %llu hits, %llu misses, %llu evictions, %llu stale",
                   s.open, s.pinned, s.bytes >> 20, capacity(), cap.c_str(), static_cast<unsigned long long>(s.hits),
                   static_cast<unsigned long long>(s.misses), static_cast<unsigned long long>(s.evictions),
                   static_cast<unsigned long long>(s.stale));
}

IpcCache::Stats IpcCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats s = stats_;
  s.open = map_.size();
  s.bytes = bytes_;
  s.pinned = 0;
  for (const Entry& e : lru_) s.pinned += e.pins > 0;
  return s;
}

IpcCache& IpcCache::instance() {
  static IpcCache cache(static_cast<std::size_t>(config::get().ipc_cache_size), config::get().ipc_cache_bytes);
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
