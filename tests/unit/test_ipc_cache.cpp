// IPC handle cache bookkeeping with stand-in open/close (no GPU needed).
#include <catch2/catch.hpp>

#include <map>

#include "memory/ipc_cache.hpp"

using namespace duct;
using namespace duct::memory;

namespace {
// Stand-ins: every open returns a fresh fake address; count what is open.
int g_open = 0, g_opens = 0, g_closes = 0;
std::map<void*, int> g_mapped;
std::uintptr_t g_next = 0x1000;

Status fake_open(const IpcHandle&, void** out, bool* already) noexcept {
  *already = false;
  *out = reinterpret_cast<void*>(g_next);
  g_next += 0x1000;
  g_mapped[*out] = 1;
  ++g_open;
  ++g_opens;
  return Status::ok();
}
Status fake_close(void* p) noexcept {
  if (!g_mapped.erase(p)) return make_error(Errc::internal, "closing an unknown mapping");
  --g_open;
  ++g_closes;
  return Status::ok();
}
Status failing_open(const IpcHandle&, void**, bool* already) noexcept {
  *already = false;
  return make_error(Errc::cuda, "no peer access");
}

// Distinct live buffers of one peer never overlap: by default buffer `id`
// lives at its own address.
IpcKey key(std::uint64_t peer, unsigned long long id, std::uint64_t base = 0, std::uint64_t size = 4096) {
  return IpcKey{peer, id, base ? base : 0x100000 * id, size};
}
// One use of a mapping: acquire (pin) and release.
void touch(IpcCache& c, const IpcKey& k, void** mapped = nullptr) {
  IpcHandle h{};
  void* p = nullptr;
  REQUIRE(c.acquire(k, h, &p).is_ok());
  c.release(k);
  if (mapped) *mapped = p;
}
void reset() {
  g_open = g_opens = g_closes = 0;
  g_mapped.clear();
}
}  // namespace

TEST_CASE("a hit reuses the mapping, a miss opens one", "[ipc]") {
  reset();
  IpcCache c(4, {fake_open, fake_close});
  IpcHandle h{};
  void *a = nullptr, *b = nullptr;
  REQUIRE(c.acquire(key(1, 10), h, &a).is_ok());
  c.release(key(1, 10));
  REQUIRE(c.acquire(key(1, 10), h, &b).is_ok());
  c.release(key(1, 10));
  CHECK(a == b);
  CHECK(g_opens == 1);
  auto s = c.stats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 1);
  CHECK(s.open == 1);
}

TEST_CASE("a buffer freed and reallocated at the same address is never served stale", "[ipc]") {
  reset();
  IpcCache c(4, {fake_open, fake_close});
  IpcHandle h{};
  void *old_map = nullptr, *new_map = nullptr;
  REQUIRE(c.acquire(key(1, 10, 0x7000), h, &old_map).is_ok());
  c.release(key(1, 10, 0x7000));
  // Same peer, same base address and size, new CUDA buffer id.
  REQUIRE(c.acquire(key(1, 11, 0x7000), h, &new_map).is_ok());
  c.release(key(1, 11, 0x7000));
  CHECK(old_map != new_map);
  CHECK(g_opens == 2);
  // Same buffer id from another peer process is another allocation too.
  void* other = nullptr;
  REQUIRE(c.acquire(key(2, 10, 0x7000), h, &other).is_ok());
  c.release(key(2, 10, 0x7000));
  CHECK(other != old_map);
}

TEST_CASE("the cache is bounded: least recently used unpinned mappings are closed", "[ipc]") {
  reset();
  IpcCache c(3, {fake_open, fake_close});
  IpcHandle h{};
  void* p = nullptr;
  for (unsigned long long id = 1; id <= 3; ++id) {
    REQUIRE(c.acquire(key(1, id), h, &p).is_ok());
    c.release(key(1, id));
  }
  REQUIRE(c.acquire(key(1, 1), h, &p).is_ok());  // touch 1: now 2 is the oldest
  c.release(key(1, 1));
  REQUIRE(c.acquire(key(1, 4), h, &p).is_ok());
  c.release(key(1, 4));
  CHECK(g_open == 3);
  CHECK(c.stats().evictions == 1);
  REQUIRE(c.acquire(key(1, 2), h, &p).is_ok());  // 2 was evicted: a miss
  c.release(key(1, 2));
  CHECK(c.stats().misses == 5);

  // Thousands of distinct buffers never grow the open count past capacity.
  for (unsigned long long id = 100; id < 5100; ++id) {
    REQUIRE(c.acquire(key(1, id), h, &p).is_ok());
    c.release(key(1, id));
  }
  CHECK(g_open == 3);
  c.clear();
  CHECK(g_open == 0);
  CHECK(g_opens == g_closes);
}

TEST_CASE("pinned mappings survive eviction until released", "[ipc]") {
  reset();
  IpcCache c(1, {fake_open, fake_close});
  IpcHandle h{};
  void *a = nullptr, *b = nullptr;
  REQUIRE(c.acquire(key(1, 1), h, &a).is_ok());  // pinned (in use by a copy)
  REQUIRE(c.acquire(key(1, 2), h, &b).is_ok());  // over capacity, but 1 is pinned
  CHECK(g_open == 2);
  CHECK(c.stats().pinned == 2);
  c.release(key(1, 1));  // now 1 can go
  CHECK(g_open == 1);
  CHECK(g_mapped.count(a) == 0);
  c.release(key(1, 2));
  c.clear();
  CHECK(g_open == 0);
}

TEST_CASE("a failed open is reported and leaves nothing behind", "[ipc]") {
  reset();
  IpcCache c(4, {failing_open, fake_close});
  IpcHandle h{};
  void* p = nullptr;
  Status st = c.acquire(key(1, 1), h, &p);
  CHECK(st.code() == Errc::cuda);
  CHECK(c.stats().open == 0);
}

TEST_CASE("freeing the last communicator that reaches a peer closes that peer's mappings", "[ipc]") {
  reset();
  IpcCache c(16, {fake_open, fake_close});
  c.retain_peer(1);  // communicator A reaches peers 1 and 2
  c.retain_peer(2);
  c.retain_peer(1);  // communicator B reaches peer 1
  for (unsigned long long id = 1; id <= 3; ++id) touch(c, key(1, id));
  touch(c, key(2, 9));
  CHECK(g_open == 4);
  c.release_peer(1);  // A freed: B still reaches peer 1
  c.release_peer(2);  // nobody reaches peer 2 any more
  CHECK(g_open == 3);
  CHECK(c.stats().open == 3);
  c.release_peer(1);  // B freed
  CHECK(g_open == 0);
  CHECK(g_opens == g_closes);
  c.release_peer(7);  // unknown peers are ignored
  // A new communicator to peer 1 opens afresh.
  c.retain_peer(1);
  touch(c, key(1, 1));
  CHECK(c.stats().misses == 5);
  c.clear();
  CHECK(g_open == 0);
}

TEST_CASE("the cache describes its counters", "[ipc]") {
  reset();
  IpcCache c(2, {fake_open, fake_close});
  for (int i = 0; i < 3; ++i) touch(c, key(1, 1));
  CHECK(c.describe() == "1 open (0 in use, 0 MiB) of 2 / unbounded; 2 hits, 1 misses, 0 evictions, 0 stale");
  c.clear();
}

namespace {
// A stand-in for CUDA's rule: a range may be mapped once per process. Opens
// of handle byte 0 = k map "allocation k" of [base_k, base_k + size_k).
struct Range {
  std::uintptr_t base, size;
};
std::map<void*, Range> g_ranges;
Range g_next_range{};
int g_already = 0;
Status strict_open(const IpcHandle&, void** out, bool* already) noexcept {
  for (auto& [p, r] : g_ranges)
    if (r.base < g_next_range.base + g_next_range.size && g_next_range.base < r.base + r.size) {
      *already = true;
      ++g_already;
      return make_error(Errc::cuda, "cudaIpcOpenMemHandle failed: already mapped");
    }
  *already = false;
  *out = reinterpret_cast<void*>(g_next);
  g_next += 0x1000;
  g_ranges[*out] = g_next_range;
  ++g_opens;
  return Status::ok();
}
Status strict_close(void* p) noexcept {
  if (!g_ranges.erase(p)) return make_error(Errc::internal, "closing an unknown mapping");
  ++g_closes;
  return Status::ok();
}
Status strict_acquire(IpcCache& c, const IpcKey& k, void** p) {
  g_next_range = Range{k.base, k.size};
  IpcHandle h{};
  return c.acquire(k, h, p);
}
}  // namespace

TEST_CASE("a peer's new allocation over a freed one closes the stale mapping first", "[ipc]") {
  reset();
  g_ranges.clear();
  g_already = 0;
  IpcCache c(16, {strict_open, strict_close});
  void* p = nullptr;
  // Peer 1 allocates [0x10000, +0x4000), we map it; it frees it and allocates
  // a larger buffer from the same start, then one in the middle of the old range.
  REQUIRE(strict_acquire(c, key(1, 10, 0x10000, 0x4000), &p).is_ok());
  c.release(key(1, 10, 0x10000, 0x4000));
  REQUIRE(strict_acquire(c, key(1, 11, 0x10000, 0x8000), &p).is_ok());
  c.release(key(1, 11, 0x10000, 0x8000));
  REQUIRE(strict_acquire(c, key(1, 12, 0x12000, 0x1000), &p).is_ok());
  c.release(key(1, 12, 0x12000, 0x1000));
  CHECK(g_already == 0);
  CHECK(c.stats().stale == 2);
  CHECK(c.stats().open == 1);
  CHECK(g_ranges.size() == 1);
  c.clear();
  CHECK(g_ranges.empty());
  reset();
}

TEST_CASE("an open that still reports already mapped closes the peer's mappings and retries once", "[ipc]") {
  reset();
  g_ranges.clear();
  g_already = 0;
  IpcCache c(16, {strict_open, strict_close});
  void* p = nullptr;
  // A mapping the cache does not know as overlapping (the key says another
  // range, as when the peer's allocation was reported with other bounds).
  REQUIRE(strict_acquire(c, key(1, 10, 0x40000, 0x1000), &p).is_ok());
  c.release(key(1, 10, 0x40000, 0x1000));
  g_ranges.begin()->second = Range{0x20000, 0x1000};  // CUDA's view of that mapping
  REQUIRE(strict_acquire(c, key(1, 11, 0x20000, 0x1000), &p).is_ok());
  CHECK(g_already == 1);
  CHECK(c.stats().retries == 1);
  c.release(key(1, 11, 0x20000, 0x1000));
  // A pinned overlapping mapping is never closed under its user: the open
  // fails (the caller falls back) and the mapping stays.
  REQUIRE(strict_acquire(c, key(1, 20, 0x30000, 0x1000), &p).is_ok());  // pinned
  Status st = strict_acquire(c, key(1, 21, 0x30000, 0x1000), &p);
  CHECK(st.code() == Errc::cuda);
  CHECK(c.stats().open >= 1);
  c.release(key(1, 20, 0x30000, 0x1000));
  c.clear();
  CHECK(g_ranges.empty());
  reset();
}

TEST_CASE("the byte bound closes idle mappings but keeps the recently used working set", "[ipc]") {
  reset();
  IpcCache c(1000, {fake_open, fake_close}, 10 << 20);
  void* p = nullptr;
  IpcHandle h{};
  // Two 8 MiB buffers used over and over: above the bound, but recent.
  for (int i = 0; i < 100; ++i)
    for (unsigned long long id = 1; id <= 2; ++id) {
      REQUIRE(c.acquire(key(1, id, id << 24, 8 << 20), h, &p).is_ok());
      c.release(key(1, id, id << 24, 8 << 20));
    }
  CHECK(g_opens == 2);
  // A stream of other buffers: the old ones age out, and what stays mapped
  // is bounded by the recent uses.
  for (unsigned long long id = 100; id < 1100; ++id) {
    REQUIRE(c.acquire(key(1, id, id << 24, 1 << 20), h, &p).is_ok());
    c.release(key(1, id, id << 24, 1 << 20));
  }
  CHECK(c.stats().bytes <= (64u << 20));
  CHECK(g_open <= 64);
  c.clear();
  CHECK(g_open == 0);
}
