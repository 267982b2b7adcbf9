#include "coll/common.hpp"

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

Status copy_local(void* dst, MemKind dst_kind, const void* src, MemKind src_kind, std::size_t bytes) {
  if (bytes == 0 || dst == src) return Status::ok();
  if (dst_kind == MemKind::host && src_kind == MemKind::host) {
    std::memmove(dst, src, bytes);
    return Status::ok();
  }
  return memory::cuda::copy(dst, src, bytes);
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
