// Allreduce by a ring: reduce-scatter then allgather; and the two ring
// phases as building blocks (reduce-scatter, allgather(v), broadcast by
// scatter + allgather, reduce by reduce-scatter + gather use them).
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

#include "coll/collectives.hpp"
#include "core/config.hpp"

namespace duct::coll {

namespace {
constexpr std::size_t kWindow = 4;  // receive segments in flight per step
constexpr std::uint32_t kAllgatherBase = 0x800;
}  // namespace

Sched ring_reduce_scatter(Context& ctx, Link link, const void* src, void* dst, MemKind kind, Layout blocks, DType dt,
                          RedOp op, int own_offset, std::uint32_t step_base, int scratch_slot) {
  const int n = link.g.n, r = link.g.me;
  const int right = mod(r + 1, n), left = mod(r - 1, n);
  const std::size_t esz = elem_size(dt.elem);
  const std::size_t seg_bytes = config::get().ring_segment;
  auto block_at = [&](int k) { return static_cast<std::size_t>(mod(r + own_offset + k, n)); };
  auto el = [esz](auto* p, std::size_t elem) { return at(p, elem * esz); };

  const std::size_t max_seg = std::max<std::size_t>(1, Segments(blocks.max_len(), esz, seg_bytes).per);
  void* scratch = nullptr;
  DUCT_CO_TRY(ctx.scratch(kind, kWindow * max_seg * esz, scratch_slot, &scratch));
  auto slot = [&](std::size_t k) { return at(scratch, (k % kWindow) * max_seg * esz); };

  std::vector<Request> sends;
  memory::Fence fence;

  // Step 0 sends this rank's own contribution of the first block.
  {
    const std::size_t b = block_at(-1);
    Segments sg(blocks.len[b], esz, seg_bytes);
    for (std::size_t k = 0; k < sg.count(); ++k) {
      sends.emplace_back();
      DUCT_CO_TRY(link.send(right, el(src, blocks.off[b] + sg.offset(k)), sg.size(k) * esz, kind, step_base,
                            &sends.back()));
    }
  }

  for (int s = 0; s < n - 1; ++s) {
    const std::size_t b = block_at(-2 - s);
    const Segments sg(blocks.len[b], esz, seg_bytes);
    const std::size_t nseg = sg.count();
    const std::uint32_t step = step_base + static_cast<std::uint32_t>(s);
    Request recvs[kWindow];
    for (std::size_t k = 0; k < std::min(kWindow, nseg); ++k)
      DUCT_CO_TRY(link.recv(left, slot(k), sg.size(k) * esz, kind, step, &recvs[k % kWindow]));
    for (std::size_t k = 0; k < nseg; ++k) {
      DUCT_CO_TRY(co_await wait(recvs[k % kWindow]));
      const std::size_t e = blocks.off[b] + sg.offset(k);
      // Only the last step's results stay put for a while (until the
      // allgather): stream them; earlier ones are forwarded at once.
      const auto store = s + 1 < n - 1 ? reduce::Store::cached : reduce::Store::streaming;
      DUCT_CO_TRY(reduce_local(el(dst, e), el(src, e), slot(k), sg.size(k), dt, op, kind, &fence, store));
      if (kind == MemKind::device) DUCT_CO_TRY(co_await wait(fence));
      if (s + 1 < n - 1) {
        sends.emplace_back();
        DUCT_CO_TRY(link.send(right, el(dst, e), sg.size(k) * esz, kind, step + 1, &sends.back()));
      }
      if (k + kWindow < nseg)
        DUCT_CO_TRY(link.recv(left, slot(k), sg.size(k + kWindow) * esz, kind, step, &recvs[k % kWindow]));
    }
    DUCT_CO_TRY(reap(sends));
  }
  DUCT_CO_TRY(co_await wait(sends));
  co_return Status::ok();
}

Sched ring_allgather(Context&, Link link, void* buf, MemKind kind, Layout blocks, int own_offset,
                     std::uint32_t step_base, const void* own_src, MemKind own_kind) {
  const int n = link.g.n, r = link.g.me;
  const int right = mod(r + 1, n), left = mod(r - 1, n);
  // Segments let a rank forward what it received before the whole block is
  // in. Two members forward nothing: each block goes whole, one message
  // (2 ranks on one node, 1-4 MiB: 2-6% faster than in 256 KiB segments).
  const std::size_t seg_bytes = n > 2 ? config::get().ring_segment : std::max<std::size_t>(blocks.max_len(), 1);
  auto block_at = [&](int k) { return static_cast<std::size_t>(mod(r + own_offset + k, n)); };

  std::vector<Request> sends;
  {
    const std::size_t b = block_at(0);
    Segments sg(blocks.len[b], 1, seg_bytes);
    const void* from = own_src ? own_src : at(buf, blocks.off[b]);
    const MemKind fk = own_src ? own_kind : kind;
    for (std::size_t k = 0; k < sg.count(); ++k) {
      sends.emplace_back();
      DUCT_CO_TRY(link.send(right, at(from, sg.offset(k)), sg.size(k), fk, step_base, &sends.back()));
    }
  }
  for (int s = 0; s < n - 1; ++s) {
    const std::size_t b = block_at(-1 - s);
    const Segments sg(blocks.len[b], 1, seg_bytes);
    const std::uint32_t step = step_base + static_cast<std::uint32_t>(s);
    std::vector<Request> recvs(sg.count());
    for (std::size_t k = 0; k < sg.count(); ++k)
      DUCT_CO_TRY(link.recv(left, at(buf, blocks.off[b] + sg.offset(k)), sg.size(k), kind, step, &recvs[k]));
    for (std::size_t k = 0; k < sg.count(); ++k) {
      DUCT_CO_TRY(co_await wait(recvs[k]));
      if (s + 1 < n - 1) {
        sends.emplace_back();
        DUCT_CO_TRY(
            link.send(right, at(buf, blocks.off[b] + sg.offset(k)), sg.size(k), kind, step + 1, &sends.back()));
      }
    }
    DUCT_CO_TRY(reap(sends));
  }
  DUCT_CO_TRY(co_await wait(sends));
  co_return Status::ok();
}

Sched allreduce_ring(Context& ctx, const CollArgs& a, std::uint32_t seq) {
  const std::size_t esz = elem_size(a.dt.elem);
  const std::size_t bytes = a.count * esz;
  // The reduction reads the send buffer and the receive buffer together:
  // bring them to one kind first.
  const void* src = a.sendbuf;
  if (a.send_kind != a.recv_kind) {
    DUCT_CO_TRY(copy_local(a.recvbuf, a.recv_kind, a.sendbuf, a.send_kind, bytes));
    src = a.recvbuf;
  }
  Link link{ctx, seq, Group{nullptr, ctx.size(), ctx.rank()}};
  Layout blocks = Layout::even(a.count, ctx.size());
  DUCT_CO_TRY(co_await ring_reduce_scatter(ctx, link, src, a.recvbuf, a.recv_kind, blocks, a.dt, a.op, 1, 0));
  DUCT_CO_TRY(co_await ring_allgather(ctx, link, a.recvbuf, a.recv_kind, blocks.scaled(esz), 1, kAllgatherBase));
  co_return Status::ok();
}

}  // namespace duct::coll
