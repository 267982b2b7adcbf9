#include "coll/common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>

namespace duct::coll {

Layout Layout::even(std::size_t count, int n) {
  Layout l;
  Blocks b{count, n};
  l.off.resize(static_cast<std::size_t>(n));
  l.len.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    l.off[static_cast<std::size_t>(i)] = b.offset(i);
    l.len[static_cast<std::size_t>(i)] = b.size(i);
  }
  return l;
}

Layout Layout::uniform(std::size_t each, int n) {
  Layout l;
  l.off.resize(static_cast<std::size_t>(n));
  l.len.assign(static_cast<std::size_t>(n), each);
  for (int i = 0; i < n; ++i) l.off[static_cast<std::size_t>(i)] = static_cast<std::size_t>(i) * each;
  return l;
}

std::size_t Layout::max_len() const noexcept { return len.empty() ? 0 : *std::max_element(len.begin(), len.end()); }
std::size_t Layout::total() const noexcept { return std::accumulate(len.begin(), len.end(), std::size_t{0}); }

Layout Layout::scaled(std::size_t unit) const {
  Layout l = *this;
  for (auto& o : l.off) o *= unit;
  for (auto& x : l.len) x *= unit;
  return l;
}

Status reduce_local(void* dst, const void* a, const void* b, std::size_t count, const DType& dt, RedOp op,
                    MemKind kind, memory::Fence* fence, reduce::Store store) {
  if (kind == MemKind::host) return reduce::host(dst, a, b, count, dt.elem, op, store);
  void* stream = nullptr;
  DUCT_TRY(memory::cuda::stream(&stream));
  DUCT_TRY(reduce::device(dst, a, b, count, dt.elem, op, stream));
  return fence->record(stream);
}

namespace {
// Host to host. glibc (2.33-2.38) copies with `rep movsb` from about 2 KiB
// up to the L2 cache's size on CPUs that report fast short `rep movsb`
// (FSRM), AMD Zen 3 and 4 among them; there, when the destination is 1-15
// bytes ahead of the source modulo a 4 KiB page, the instruction runs 10-30
// times slower (32 KiB: 9.6 us against 0.57 on this build VM, an EPYC of
// family 25; glibc bug 30994, fixed in 2.39 by not choosing `rep movsb` on
// those CPUs). duct's shm slots hold data 8 bytes past a cache line, the
// eight slots' data 64 bytes apart modulo a page, so a 64-byte-aligned
// buffer at one slot's page offset met that distance in every eighth call
// (a 2-rank 64 KiB allgather: 21-23 against 19 us at such offsets,
// docs/benchmarks/2026-11-24-shm-phases.md). Such copies go in 1 KiB pieces,
// below glibc's smallest `rep movsb` threshold, where its vector loop runs
// at full speed (64 KiB: 1.2-1.3 against 1.16 us unhindered). Above the
// L2 cache's size glibc copies without `rep movsb`; overlapping copies keep
// memmove.
constexpr std::size_t kShortDistanceMin = 2048;  // glibc's smallest `rep movsb` size here
bool short_distance(const void* dst, const void* src, std::size_t bytes) {
#if defined(__x86_64__)
  static const std::size_t l2 = [] {
    const long v = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? static_cast<std::size_t>(v) : std::size_t{1} << 20;
  }();
  const auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
  const std::uintptr_t ahead = (d - s) & 4095u;
  const bool overlap = d < s ? s - d < bytes : d - s < bytes;
  return bytes >= kShortDistanceMin && bytes <= l2 && ahead != 0 && ahead < 64 && !overlap;
#else
  (void)dst, (void)src, (void)bytes;
  return false;
#endif
}

void copy_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes < kShortDistanceMin || !short_distance(dst, src, bytes)) {
    std::memmove(dst, src, bytes);
    return;
  }
  constexpr std::size_t kPiece = 1024;
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  for (std::size_t o = 0; o < bytes; o += kPiece) std::memcpy(d + o, s + o, std::min(kPiece, bytes - o));
}
}  // namespace

Status copy_local(void* dst, MemKind dst_kind, const void* src, MemKind src_kind, std::size_t bytes) {
  if (bytes == 0 || dst == src) return Status::ok();
  if (dst_kind == MemKind::host && src_kind == MemKind::host) {
    copy_host(dst, src, bytes);
    return Status::ok();
  }
  return memory::cuda::copy(dst, src, bytes);
}

bool node_aware_order(const Topology& t, std::vector<int>* members, int* me) {
  members->clear();
  const int N = t.num_nodes, L = t.ranks_per_node;
  if (N < 2 || L < 2 || !is_pow2(N) || !is_pow2(L) || N * L != t.size) return false;
  members->resize(static_cast<std::size_t>(t.size));
  for (int v = 0; v < t.size; ++v)
    (*members)[static_cast<std::size_t>(v)] = t.ranks_on[static_cast<std::size_t>(v % N)][static_cast<std::size_t>(v / N)];
  *me = t.local_rank * N + t.node;
  return true;
}

Status copy_aside(Context& ctx, MemKind kind, const void* buf, std::size_t bytes, int slot, const void** copy) {
  void* aside = nullptr;
  DUCT_TRY(ctx.scratch(kind, bytes, slot, &aside));
  DUCT_TRY(copy_local(aside, kind, buf, kind, bytes));
  *copy = aside;
  return Status::ok();
}

Status reap(std::vector<Request>& reqs) {
  for (auto it = reqs.begin(); it != reqs.end();) {
    bool done = false;
    DUCT_TRY(it->test(&done));
    it = done ? reqs.erase(it) : it + 1;
  }
  return Status::ok();
}

Layout lead_segments(std::size_t total, std::size_t esz, std::size_t per, std::size_t first, std::size_t segment) {
  const std::size_t lead = first / esz;
  const bool has_lead = lead >= per && 2 * lead <= total;
  const std::size_t rest = has_lead ? total - lead : total;
  segment = std::max(segment, total * esz / kLeadSegments);
  const std::size_t n = std::clamp<std::size_t>(std::min((rest * esz + segment - 1) / segment, rest / per), 1,
                                                kMaxSegments - (has_lead ? 1 : 0));
  Layout s = Layout::even(rest, static_cast<int>(n));
  if (has_lead) {
    for (std::size_t& o : s.off) o += lead;
    s.off.insert(s.off.begin(), 0);
    s.len.insert(s.len.begin(), lead);
  }
  return s;
}

Layout piece_of(const Layout& blocks, std::size_t s, std::size_t S) {
  Layout p;
  for (std::size_t r = 0; r < blocks.len.size(); ++r) {
    const Blocks b{blocks.len[r], static_cast<int>(S)};
    p.off.push_back(blocks.off[r] + b.offset(static_cast<int>(s)));
    p.len.push_back(b.size(static_cast<int>(s)));
  }
  return p;
}

Status rails(const Topology& t) {
  if (t.ranks_per_node > 0 && static_cast<int>(t.rail.size()) == t.num_nodes) return Status::ok();
  return make_error(Errc::internal, "split_rail on a communicator whose nodes hold different numbers of ranks");
}

std::vector<Request*> pointers(std::vector<Request>& reqs) {
  std::vector<Request*> out;
  out.reserve(reqs.size());
  for (Request& r : reqs) out.push_back(&r);
  return out;
}

}  // namespace duct::coll
