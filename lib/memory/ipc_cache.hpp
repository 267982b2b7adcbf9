// duct memory: cache of peer allocations opened with cudaIpcOpenMemHandle.
//
// Opening an IPC handle costs tens of microseconds and a process may open a
// given allocation only once, so mappings are kept. An entry is keyed by the
// peer process and the allocation's base, size and CUDA buffer id: a buffer
// freed by the peer and a new one allocated at the same address have
// different buffer ids, so a stale mapping is never served.
//
// A mapping keeps the peer's allocation alive after the peer frees it, and
// CUDA refuses to open a new allocation over a range this process still has
// mapped (cudaErrorAlreadyMapped). So, as UCX's cuda_ipc cache does, entries
// of each peer are also indexed by address range: on a miss, every unpinned
// mapping of that peer whose range overlaps the new one (and whose buffer id
// therefore differs) is stale and closed before the open; if the open still
// reports "already mapped", every unpinned mapping of that peer is closed and
// the open tried once more.
//
// The cache holds at most `capacity` unpinned mappings and closes the least
// recently used ones beyond that; mappings in use are pinned until released.
// It also closes least recently used mappings while more than
// `capacity_bytes` of the peers' allocations are mapped, except those used
// in the last kRecentUses acquisitions: a working set of large buffers (a
// 1 GiB allreduce maps two 1 GiB allocations per peer) is not reopened on
// every call, while a program that frees and allocates buffers does not
// keep more than that bound of its peers' freed memory alive for long. Every mapping of
// a peer is closed when the last communicator reaching that peer is freed,
// and all of them at MPI_Finalize.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
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
  // open sets *already_mapped when it failed because the range is mapped
  // in this process already (a stale mapping of a freed allocation).
  struct Ops {
    Status (*open)(const IpcHandle&, void**, bool* already_mapped) noexcept;
    Status (*close)(void*) noexcept;
  };
  struct Stats {
    std::uint64_t hits = 0, misses = 0, evictions = 0;
    std::uint64_t stale = 0;    // mappings closed because the peer's range now holds another allocation
    std::uint64_t retries = 0;  // opens retried after "already mapped"
    std::size_t open = 0;       // mappings currently open
    std::size_t pinned = 0;     // of which in use
    std::size_t bytes = 0;      // bytes of the peers' allocations mapped
  };

  static constexpr std::size_t kUnbounded = ~std::size_t{0};
  explicit IpcCache(std::size_t capacity, std::size_t capacity_bytes = kUnbounded)
      : IpcCache(capacity, Ops{&cuda::ipc_open, &cuda::ipc_close}, capacity_bytes) {}
  IpcCache(std::size_t capacity, Ops ops, std::size_t capacity_bytes = kUnbounded)
      : capacity_(capacity), capacity_bytes_(capacity_bytes), ops_(ops) {}
  ~IpcCache() { clear(); }
  IpcCache(const IpcCache&) = delete;
  IpcCache& operator=(const IpcCache&) = delete;

  // The local address of the peer allocation `key`, opened from `handle` on
  // a miss; pinned until release(key).
  Status acquire(const IpcKey& key, const IpcHandle& handle, void** mapped);
  void release(const IpcKey& key) noexcept;
  // A CUDA graph that captured a collective keeps the mapping `key` (one
  // acquire's pin becomes the graph's) until graph_release(key). Eviction
  // spares it; a peer allocation that replaces its range closes it (the
  // graph's buffer was freed: replaying it is then the application's error,
  // as with any freed buffer), and so does the peer's last communicator.
  void hand_to_graph(const IpcKey& key) noexcept;
  void graph_release(const IpcKey& key) noexcept;
  // Close every mapping (pinned ones too: callers have stopped).
  void clear() noexcept;
  void set_capacity(std::size_t capacity) noexcept;
  void set_capacity_bytes(std::size_t bytes) noexcept;
  std::size_t capacity() const;
  std::size_t capacity_bytes() const;
  Stats stats() const;

  // Communicators that reach a peer process through cuda_ipc hold a
  // reference on it; when the last one goes (the communicators were freed),
  // every mapping of that peer's allocations is closed.
  void retain_peer(std::uint64_t peer);
  void release_peer(std::uint64_t peer) noexcept;

  // "4 open (1 in use, 12 MiB) of 256 / 1024 MiB; 1000 hits, 4 misses, 0 evictions, 0 stale".
  std::string describe() const;

  // The process-wide cache used by the cuda_ipc channel and the device
  // engine; its bounds are DUCT_IPC_CACHE_SIZE and DUCT_IPC_CACHE_BYTES.
  static IpcCache& instance();

 private:
  static constexpr std::uint64_t kRecentUses = 64;
  struct Entry {
    IpcKey key;
    void* mapped;
    int pins;
    std::uint64_t last_use;  // value of uses_ at the last acquire
    int graph_pins = 0;      // held by CUDA graphs (hand_to_graph)
  };
  using Iter = std::list<Entry>::iterator;
  void evict_locked() noexcept;
  void close_locked(Iter it) noexcept;
  // Close the unpinned mappings of `peer` overlapping [base, base+size)
  // (all of its mappings when size is 0); returns how many.
  std::size_t close_peer_range_locked(bool spare_graphs, std::uint64_t peer, std::uint64_t base, std::uint64_t size) noexcept;

  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::size_t capacity_bytes_;
  std::size_t bytes_ = 0;
  std::uint64_t uses_ = 0;  // acquisitions so far
  Ops ops_;
  std::list<Entry> lru_;  // front = most recently used
  std::unordered_map<IpcKey, Iter, IpcKeyHash> map_;
  // Per peer, its mappings by allocation base (ranges of one peer that are
  // both mapped never overlap: CUDA would refuse the second open).
  std::unordered_map<std::uint64_t, std::multimap<std::uint64_t, Iter>> by_range_;
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
