// duct memory: cache of peer allocations opened with cudaIpcOpenMemHandle.
//
// Opening an IPC handle costs tens of microseconds and a process may open a
// given allocation only once, so mappings are kept. An entry is keyed by the
// peer process and the allocation's base, size and CUDA buffer id: a buffer
// freed by the peer and a new one allocated at the same address have
// different buffer ids, so a stale mapping is never served. The cache holds
// at most `capacity` unpinned mappings and closes the least recently used
// one beyond that; mappings in use by a copy are pinned until released.
// Every mapping of a peer is closed when the last communicator reaching that
// peer is freed, and all of them at MPI_Finalize.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/status.hpp"
#include "memory/cuda.hpp"

namespace duct::memory {

struct IpcKey {
  std::uint64_t peer = 0;             // process identity of the exporter
  unsigned long long buffer_id = 0;   // CU_POINTER_ATTRIBUTE_BUFFER_ID at the exporter
  std::uint64_t base = 0;             // allocation start at the exporter
  std::uint64_t size = 0;             // allocation size

  bool operator==(const IpcKey&) const = default;
};

struct IpcKeyHash {
  std::size_t operator()(const IpcKey& k) const noexcept {
    std::uint64_t h = k.peer * 0x9e3779b97f4a7c15ull;
    h ^= k.buffer_id + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= k.base + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= k.size + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};

class IpcCache {
 public:
  // How mappings are opened and closed: CUDA IPC, or stand-ins in unit tests.
  struct Ops {
    Status (*open)(const IpcHandle&, void**) noexcept;
    Status (*close)(void*) noexcept;
  };
  struct Stats {
    std::uint64_t hits = 0, misses = 0, evictions = 0;
    std::size_t open = 0;    // mappings currently open
    std::size_t pinned = 0;  // of which in use
  };

  explicit IpcCache(std::size_t capacity) : IpcCache(capacity, Ops{&cuda::ipc_open, &cuda::ipc_close}) {}
  IpcCache(std::size_t capacity, Ops ops) : capacity_(capacity), ops_(ops) {}
  ~IpcCache() { clear(); }
  IpcCache(const IpcCache&) = delete;
  IpcCache& operator=(const IpcCache&) = delete;

  // The local address of the peer allocation `key`, opened from `handle` on
  // a miss; pinned until release(key).
  Status acquire(const IpcKey& key, const IpcHandle& handle, void** mapped);
  void release(const IpcKey& key) noexcept;
  // Close every mapping (pinned ones too: callers have stopped).
  void clear() noexcept;
  void set_capacity(std::size_t capacity) noexcept;
  std::size_t capacity() const;
  Stats stats() const;

  // Communicators that reach a peer process through cuda_ipc hold a
  // reference on it; when the last one goes (the communicators were freed),
  // every mapping of that peer's allocations is closed.
  void retain_peer(std::uint64_t peer);
  void release_peer(std::uint64_t peer) noexcept;

  // "4 open (1 in use) of 256; 1000 hits, 4 misses, 0 evictions".
  std::string describe() const;

  // The process-wide cache used by the cuda_ipc channel; its capacity is
  // DUCT_IPC_CACHE_SIZE.
  static IpcCache& instance();

 private:
  struct Entry {
    IpcKey key;
    void* mapped;
    int pins;
  };
  void evict_locked() noexcept;

  mutable std::mutex mutex_;
  std::size_t capacity_;
  Ops ops_;
  std::list<Entry> lru_;  // front = most recently used
  std::unordered_map<IpcKey, std::list<Entry>::iterator, IpcKeyHash> map_;
  std::unordered_map<std::uint64_t, int> peer_refs_;
  Stats stats_;
};

// The exporting side: our own allocations' handles, by buffer id.
class IpcExports {
 public:
  static IpcExports& instance();
  // The handle of the allocation described by `info` (device memory).
  Status handle_for(const PtrInfo& info, IpcHandle* out);
  void clear() noexcept;

 private:
  std::mutex mutex_;
  std::unordered_map<unsigned long long, IpcHandle> by_id_;
};

}  // namespace duct::memory
