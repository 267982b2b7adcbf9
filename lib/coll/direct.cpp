// The node levels of the split-rail forms as one exchange each: every
// member of the group sends each other member its block at once, instead
// of a ring's n - 1 steps. One message latency where the ring takes n - 1,
// the same bytes through each member's link. At 8 ranks per node the
// ring's seven steps per segment were the split-rail pipelines' slowest
// level: on 8 simulated nodes x 8, 2 MiB, bcast 137 -> 57 us, reduce 138 ->
// 56 us (docs/benchmarks/2026-11-28-sim-regret.md). And the pipelined
// halving reduce-scatter's node level, one exchange per segment with
// several segments in flight (direct_reduce_scatter_in_place: each its
// own scratch). Declared in coll/collectives.hpp.
#include <algorithm>
#include <vector>

#include "coll/collectives.hpp"

namespace duct::coll {

Sched direct_allgather(Link link, void* buf, MemKind kind, Layout blocks, std::uint32_t step) {
  const int L = link.g.n, l = link.g.me;
  const auto mine = static_cast<std::size_t>(l);
  std::vector<Request> reqs;
  reqs.reserve(2 * static_cast<std::size_t>(L));
  for (int m = 0; m < L; ++m) {
    const auto b = static_cast<std::size_t>(m);
    if (m != l && blocks.len[b] > 0) {
      reqs.emplace_back();
      DUCT_CO_TRY(link.recv(m, at(buf, blocks.off[b]), blocks.len[b], kind, step, &reqs.back()));
    }
  }
  for (int m = 0; m < L && blocks.len[mine] > 0; ++m) {
    if (m == l) continue;
    reqs.emplace_back();
    DUCT_CO_TRY(link.send(m, at(buf, blocks.off[mine]), blocks.len[mine], kind, step, &reqs.back()));
  }
  DUCT_CO_TRY(co_await wait(reqs));
  co_return Status::ok();
}

// The reduce-scatter's receive window: each member's block goes in pieces
// of up to this many bytes, one exchange after the other, so that the
// window (n pieces) stays small where one segment holds a whole vector.
constexpr std::size_t kPieceBytes = 1u << 20;

Sched direct_reduce_scatter(Context& ctx, Link link, const void* src, void* dst, MemKind kind, Layout blocks,
                            DType dt, RedOp op, std::uint32_t step) {
  const int L = link.g.n, l = link.g.me;
  const std::size_t esz = elem_size(dt.elem);
  const auto mine = static_cast<std::size_t>(l);
  if (L == 1) {  // nothing to exchange or sum: the block is this rank's input
    const std::size_t off = blocks.off[mine] * esz;
    if (blocks.len[mine] > 0 && at(dst, off) != at(src, off))
      DUCT_CO_TRY(copy_local(at(dst, off), kind, at(src, off), kind, blocks.len[mine] * esz));
    co_return Status::ok();
  }
  const std::size_t per = std::max<std::size_t>(1, kPieceBytes / esz);  // elements per piece of a block
  std::size_t pieces = 0;  // the most any block needs: every member takes part in each exchange
  for (std::size_t len : blocks.len) pieces = std::max(pieces, (len + per - 1) / per);
  void* win = nullptr;
  const std::size_t win_piece = std::min(per, blocks.len[mine]) * esz;
  if (win_piece > 0) DUCT_CO_TRY(ctx.scratch(kind, static_cast<std::size_t>(L) * win_piece, 0, &win));
  const auto part = [&](int m) { return at(win, static_cast<std::size_t>(m) * win_piece); };
  // Elements [lo, lo + n) of block b in piece p.
  const auto piece = [&](std::size_t b, std::size_t p, std::size_t* lo) {
    *lo = blocks.off[b] + p * per;
    return p * per < blocks.len[b] ? std::min(per, blocks.len[b] - p * per) : 0;
  };
  std::vector<Request> reqs;
  reqs.reserve(2 * static_cast<std::size_t>(L));
  for (std::size_t p = 0; p < pieces; ++p) {
    // Pieces are awaited one by one, so 16 step numbers never meet twice in flight.
    const std::uint32_t st = step + static_cast<std::uint32_t>(p % 16);
    std::size_t lo = 0;
    const std::size_t len = piece(mine, p, &lo);
    reqs.clear();
    for (int m = 0; m < L && len > 0; ++m) {
      if (m == l) continue;
      reqs.emplace_back();
      DUCT_CO_TRY(link.recv(m, part(m), len * esz, kind, st, &reqs.back()));
    }
    for (int m = 0; m < L; ++m) {
      std::size_t off = 0;
      const std::size_t n = piece(static_cast<std::size_t>(m), p, &off);
      if (m == l || n == 0) continue;
      reqs.emplace_back();
      DUCT_CO_TRY(link.send(m, at(src, off * esz), n * esz, kind, st, &reqs.back()));
    }
    if (len > 0) DUCT_CO_TRY(copy_local(part(l), kind, at(src, lo * esz), kind, len * esz));
    DUCT_CO_TRY(co_await wait(reqs));
    if (len == 0) continue;
    void* out = at(dst, lo * esz);
    memory::Fence fence;
    for (int m = 1; m < L; ++m) {
      DUCT_CO_TRY(reduce_local(out, m == 1 ? part(0) : out, part(m), len, dt, op, kind, &fence));
      if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
    }
  }
  co_return Status::ok();
}

Sched direct_reduce_scatter_in_place(Link link, void* acc, void* tmp, MemKind kind, const Layout& blocks, DType dt,
                                     RedOp op, std::uint32_t step) {
  const int n = link.g.n, me = link.g.me;
  const std::size_t esz = elem_size(dt.elem);
  const auto mine = static_cast<std::size_t>(me);
  const std::size_t len = blocks.len[mine];
  std::vector<Request> reqs;
  reqs.reserve(2 * static_cast<std::size_t>(n));
  for (int m = 0, k = 0; m < n; ++m) {
    if (m == me) continue;
    const auto um = static_cast<std::size_t>(m);
    reqs.emplace_back();
    DUCT_CO_TRY(link.send(m, at(acc, blocks.off[um] * esz), blocks.len[um] * esz, kind, step, &reqs.back()));
    reqs.emplace_back();
    DUCT_CO_TRY(link.recv(m, at(tmp, static_cast<std::size_t>(k++) * len * esz), len * esz, kind, step, &reqs.back()));
  }
  DUCT_CO_TRY(co_await wait(reqs));
  memory::Fence fence;
  void* own = at(acc, blocks.off[mine] * esz);
  for (int k = 0; k + 1 < n && len > 0; ++k)
    DUCT_CO_TRY(reduce_local(own, own, at(tmp, static_cast<std::size_t>(k) * len * esz), len, dt, op, kind, &fence));
  if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
  co_return Status::ok();
}

}  // namespace duct::coll
