#include "memory/buffer.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

#ifdef DUCT_SIM
#include <smpi/smpi.h>

#include "core/config.hpp"
#endif

namespace duct::memory {

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(kind_, o.kind_);
    std::swap(pinned_, o.pinned_);
    std::swap(shared_, o.shared_);
  }
  return *this;
}

Status Buffer::reserve(MemKind kind, std::size_t bytes) {
  if (data_ && kind_ == kind && size_ >= bytes) return Status::ok();
  reset();
  if (bytes == 0) bytes = 64;
  if (kind == MemKind::device) {
    DUCT_TRY(cuda::alloc_device(bytes, &data_).context("device scratch of " + std::to_string(bytes) + " bytes"));
  } else {
    std::size_t rounded = (bytes + 63) / 64 * 64;
#ifdef DUCT_SIM
    // The timing-only mode (DUCT_SIM_SHARED_SCRATCH): scratch of that size
    // or more in SMPI's shared memory, one physical block behind every
    // rank's, so 512 ranks at 256 MiB fit a small machine. The ranks
    // overwrite each other's scratch: times hold (no schedule depends on
    // the values), results do not (duct-bench -c 0).
    if (const std::size_t from = config::get().sim_shared_scratch; from > 0 && bytes >= from) {
      data_ = SMPI_SHARED_MALLOC(rounded);
      shared_ = true;
    } else {
      data_ = std::aligned_alloc(64, rounded);
    }
#else
    data_ = std::aligned_alloc(64, rounded);
#endif
    if (!data_) return make_error(Errc::no_memory, "host scratch of %zu bytes: allocation failed", bytes);
  }
  size_ = bytes;
  kind_ = kind;
  return Status::ok();
}

void Buffer::reset() noexcept {
  if (!data_) return;
  if (kind_ == MemKind::device)
    cuda::free_device(data_);
#ifdef DUCT_SIM
  else if (shared_)
    SMPI_SHARED_FREE(data_);
#endif
  else
    std::free(data_);
  data_ = nullptr;
  shared_ = false;
  size_ = 0;
}

Fence::~Fence() { cuda::event_destroy(event_); }

Status Fence::record(void* stream) {
  if (!event_) DUCT_TRY(cuda::event_create(&event_));
  DUCT_TRY(cuda::event_record(event_, stream));
  pending_ = true;
  return Status::ok();
}

Status Fence::ready(bool* done) {
  if (!pending_) {
    *done = true;
    return Status::ok();
  }
  DUCT_TRY(cuda::event_query(event_, done));
  if (*done) pending_ = false;
  return Status::ok();
}

BouncePool& BouncePool::instance() {
  static BouncePool pool;
  return pool;
}

void BouncePool::configure(std::size_t chunk_bytes, std::size_t max_chunks) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (chunk_bytes > chunk_) {
    // Larger chunks requested: free the idle small ones now and retire the
    // busy ones (release() frees a chunk it does not know).
    for (void* p : free_) cuda::free_pinned(p);
    free_.clear();
    all_.clear();
    chunk_ = chunk_bytes;
  }
  if (max_chunks > max_) max_ = max_chunks;
}

Status BouncePool::acquire(void** chunk, bool for_send, bool at_turn) {
  std::lock_guard<std::mutex> lock(mutex_);
  *chunk = nullptr;
  if (for_send && (2 * sends_ >= max_ || (!at_turn && 4 * sends_ >= max_))) return Status::ok();
  if (!free_.empty()) {
    *chunk = free_.back();
    free_.pop_back();
  } else {
    if (all_.size() >= max_) return Status::ok();
    void* p = nullptr;
    DUCT_TRY(cuda::alloc_pinned(chunk_, &p).context("bounce buffer"));
    all_.push_back(p);
    *chunk = p;
  }
  if (for_send) ++sends_;
  return Status::ok();
}

void BouncePool::release(void* chunk, bool for_send) noexcept {
  if (!chunk) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (for_send && sends_ > 0) --sends_;
  if (std::find(all_.begin(), all_.end(), chunk) != all_.end()) {
    free_.push_back(chunk);
  } else {
    cuda::free_pinned(chunk);  // from before a reconfigure
  }
}

std::string BouncePool::describe() {
  std::lock_guard<std::mutex> lock(mutex_);
  return strprintf("%zu of %zu in use, %zu by sends (at most %zu of %zu bytes)", all_.size() - free_.size(),
                   all_.size(), sends_, max_, chunk_);
}

void BouncePool::clear() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  for (void* p : all_) cuda::free_pinned(p);
  all_.clear();
  free_.clear();
}

}  // namespace duct::memory
