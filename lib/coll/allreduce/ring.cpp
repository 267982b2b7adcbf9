// Allreduce by a ring: reduce-scatter then allgather.
//
// P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for
// clusters of workstations", JPDC 69(2), 2009. The vector is cut into n
// blocks. In the reduce-scatter phase, at step s each rank sends one block to
// its right neighbour and reduces the block arriving from its left into its
// own copy; after n-1 steps every rank holds one fully reduced block. The
// allgather phase passes the reduced blocks around the ring in n-1 more
// steps. Each rank sends and receives 2(n-1)/n of the vector: bandwidth
// optimal, the choice for large messages.
//
// Pipelining: each block is cut into segments of DUCT_RING_SEGMENT bytes. A
// segment is forwarded as soon as it is reduced (reduce-scatter) or arrives
// (allgather), so step s+1 overlaps step s as in NCCL's chunked ring, and
// reduction works on cache-sized pieces. Receives for reduction land in a
// window of scratch segments.
//
// Determinism: block b is reduced along the same chain of ranks on every
// call with the same (n, count), and every rank gets its final bits from the
// one rank that finished it.
#include <vector>

#include "coll/allreduce/allreduce.hpp"
#include "core/config.hpp"

namespace duct::coll {

namespace {
constexpr std::size_t kWindow = 4;  // receive segments in flight per step
constexpr std::uint32_t kAllgatherBase = 0x800;

// Test finished sends without waiting, so the list stays short.
Status reap(std::vector<Request>& sends) {
  for (auto it = sends.begin(); it != sends.end();) {
    bool done = false;
    DUCT_TRY(it->test(&done));
    it = done ? sends.erase(it) : it + 1;
  }
  return Status::ok();
}

std::vector<Request*> pointers(std::vector<Request>& reqs) {
  std::vector<Request*> out;
  for (Request& r : reqs) out.push_back(&r);
  return out;
}
}  // namespace

Sched reduce_scatter_ring(Context& ctx, Link link, const void* src, void* dst, MemKind kind, Blocks blocks,
                          DType dt, RedOp op, int own_offset, std::uint32_t step_base) {
  const int n = ctx.size(), r = ctx.rank();
  const int right = mod(r + 1, n), left = mod(r - 1, n);
  const std::size_t esz = elem_size(dt.elem);
  const std::size_t seg_bytes = config::get().ring_segment;
  auto block_at = [&](int k) { return mod(r + own_offset + k, n); };
  auto at = [esz](auto* p, std::size_t elem) { return memory::at(p, elem * esz); };

  const std::size_t max_seg = Segments(blocks.size(0), esz, seg_bytes).per;
  void* scratch = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, kWindow * max_seg * esz, 0, &scratch));
  auto slot = [&](std::size_t k) { return memory::at(scratch, (k % kWindow) * max_seg * esz); };

  std::vector<Request> sends;
  memory::Fence fence;

  // Step 0 sends this rank's own contribution of the first block.
  {
    int b = block_at(-1);
    Segments sg(blocks.size(b), esz, seg_bytes);
    for (std::size_t k = 0; k < sg.count(); ++k) {
      std::size_t e = blocks.offset(b) + sg.offset(k);
      sends.emplace_back();
      DUCT_CO_TRY(link.send(right, at(src, e), sg.size(k) * esz, kind, step_base, &sends.back()));
    }
  }

  for (int s = 0; s < n - 1; ++s) {
    const int b = block_at(-2 - s);
    const Segments sg(blocks.size(b), esz, seg_bytes);
    const std::size_t nseg = sg.count();
    Request recvs[kWindow];
    for (std::size_t k = 0; k < std::min(kWindow, nseg); ++k)
      DUCT_CO_TRY(link.recv(left, slot(k), sg.size(k) * esz, kind, step_base + static_cast<std::uint32_t>(s),
                            &recvs[k % kWindow]));
    for (std::size_t k = 0; k < nseg; ++k) {
      DUCT_CO_TRY(co_await wait(recvs[k % kWindow]));
      const std::size_t e = blocks.offset(b) + sg.offset(k);
      // Only the last step's results stay put for a while (until the
      // allgather): stream them; earlier ones are forwarded at once.
      const auto store = s + 1 < n - 1 ? reduce::Store::cached : reduce::Store::streaming;
      DUCT_CO_TRY(reduce_local(at(dst, e), at(src, e), slot(k), sg.size(k), dt, op, kind, &fence, store));
      if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
      if (s + 1 < n - 1) {
        sends.emplace_back();
        DUCT_CO_TRY(link.send(right, at(dst, e), sg.size(k) * esz, kind,
                              step_base + static_cast<std::uint32_t>(s + 1), &sends.back()));
      }
      if (k + kWindow < nseg)
        DUCT_CO_TRY(link.recv(left, slot(k), sg.size(k + kWindow) * esz, kind,
                              step_base + static_cast<std::uint32_t>(s), &recvs[k % kWindow]));
    }
    DUCT_CO_TRY(reap(sends));
  }
  DUCT_CO_TRY(co_await wait(pointers(sends)));
  co_return Status::ok();
}

Sched allgather_ring(Context& ctx, Link link, void* buf, MemKind kind, Blocks blocks, std::size_t esz,
                     int own_offset, std::uint32_t step_base) {
  const int n = ctx.size(), r = ctx.rank();
  const int right = mod(r + 1, n), left = mod(r - 1, n);
  const std::size_t seg_bytes = config::get().ring_segment;
  auto block_at = [&](int k) { return mod(r + own_offset + k, n); };
  auto at = [&](std::size_t elem) { return memory::at(buf, elem * esz); };

  std::vector<Request> sends;
  {
    int b = block_at(0);
    Segments sg(blocks.size(b), esz, seg_bytes);
    for (std::size_t k = 0; k < sg.count(); ++k) {
      sends.emplace_back();
      DUCT_CO_TRY(link.send(right, at(blocks.offset(b) + sg.offset(k)), sg.size(k) * esz, kind, step_base,
                            &sends.back()));
    }
  }
  for (int s = 0; s < n - 1; ++s) {
    const int b = block_at(-1 - s);
    const Segments sg(blocks.size(b), esz, seg_bytes);
    std::vector<Request> recvs(sg.count());
    for (std::size_t k = 0; k < sg.count(); ++k)
      DUCT_CO_TRY(link.recv(left, at(blocks.offset(b) + sg.offset(k)), sg.size(k) * esz, kind,
                            step_base + static_cast<std::uint32_t>(s), &recvs[k]));
    for (std::size_t k = 0; k < sg.count(); ++k) {
      DUCT_CO_TRY(co_await wait(recvs[k]));
      if (s + 1 < n - 1) {
        sends.emplace_back();
        DUCT_CO_TRY(link.send(right, at(blocks.offset(b) + sg.offset(k)), sg.size(k) * esz, kind,
                              step_base + static_cast<std::uint32_t>(s + 1), &sends.back()));
      }
    }
    DUCT_CO_TRY(reap(sends));
  }
  DUCT_CO_TRY(co_await wait(pointers(sends)));
  co_return Status::ok();
}

Sched allreduce_ring(Context& ctx, AllreduceArgs a, std::uint32_t seq) {
  const std::size_t bytes = a.count * elem_size(a.dt.elem);
  // The reduction reads the send buffer and the receive buffer together:
  // bring them to one kind first.
  const void* src = a.sendbuf;
  if (a.send_kind != a.recv_kind) {
    DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, a.sendbuf, a.send_kind, bytes));
    src = a.recvbuf;
  }
  Link link{ctx, seq};
  Blocks blocks{a.count, ctx.size()};
  DUCT_CO_TRY(co_await reduce_scatter_ring(ctx, link, src, a.recvbuf, a.recv_kind, blocks, a.dt, a.op, 1, 0));
  DUCT_CO_TRY(co_await allgather_ring(ctx, link, a.recvbuf, a.recv_kind, blocks, elem_size(a.dt.elem), 1,
                                      kAllgatherBase));
  co_return Status::ok();
}

}  // namespace duct::coll
