// duct memory: owned buffers, completion fences and the pinned bounce pool.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "memory/cuda.hpp"

namespace duct::memory {

// One allocation of one memory kind; grow-only, reused across calls (a fresh
// 32 MiB host buffer per call would cost more in page faults than the copy).
class Buffer {
 public:
  Buffer() = default;
  ~Buffer() { reset(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;

  // Make sure the buffer holds at least `bytes` of `kind` (contents are lost
  // when it has to grow).
  Status reserve(MemKind kind, std::size_t bytes);
  void reset() noexcept;

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  MemKind kind() const noexcept { return kind_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
  MemKind kind_ = MemKind::host;
  bool pinned_ = false;
  bool shared_ = false;  // SMPI shared memory (simulation build, DUCT_SIM_SHARED_SCRATCH)
};

// Completion of the work enqueued on a stream up to record(). A fence that
// was never recorded is ready.
class Fence {
 public:
  Fence() = default;
  ~Fence();
  Fence(const Fence&) = delete;
  Fence& operator=(const Fence&) = delete;

  Status record(void* stream);
  Status ready(bool* done);

 private:
  void* event_ = nullptr;
  bool pending_ = false;
};

// Pinned host chunks for staging device memory through a UCX that cannot
// touch it. Process-wide; grows on demand up to `max_chunks`.
class BouncePool {
 public:
  static BouncePool& instance();
  // Set the chunk size (agreed per communicator; the pool serves the largest
  // requested so far).
  void configure(std::size_t chunk_bytes, std::size_t max_chunks);
  // A chunk of at least chunk_bytes(), or nullptr when all are in use
  // (try again after progress). Errors only when pinning fails.
  // Staged sends (`for_send`) hold at most half of the pool: a send keeps
  // its chunk until the receiver has taken the data, and the receiver
  // needs a chunk of its own pool for that, so sends that held every chunk
  // on both sides of a pair would wait for each other forever. A send
  // whose message is not yet next on its pair (`at_turn` false: it copies
  // ahead) gets one only while sends hold under a quarter, so the send
  // that is next always finds one.
  Status acquire(void** chunk, bool for_send, bool at_turn);
  void release(void* chunk, bool for_send) noexcept;
  std::size_t chunk_bytes() const noexcept { return chunk_; }
  void clear() noexcept;
  // "U of N in use, S by sends (at most M of B bytes)", for a stalled
  // transfer's report.
  std::string describe();

 private:
  std::mutex mutex_;
  std::size_t chunk_ = 1u << 20;
  std::size_t max_ = 64;
  std::size_t sends_ = 0;  // chunks held by staged sends
  std::vector<void*> free_;
  std::vector<void*> all_;
};

// Byte offset arithmetic on void pointers.
inline void* at(void* p, std::size_t off) { return static_cast<char*>(p) + off; }
inline const void* at(const void* p, std::size_t off) { return static_cast<const char*>(p) + off; }

}  // namespace duct::memory
