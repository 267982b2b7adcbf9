// Host reduction loops. Built with -O3 (lib/meson.build) so GCC vectorises
// the integer and float loops; the 16-bit float loops convert per element.
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cstdint>
#include <cstring>

#include "core/config.hpp"
#include "core/sim.hpp"
#include "reduce/ops.hpp"
#include "reduce/reduce.hpp"

namespace duct::reduce {

namespace {

using Fn = void (*)(void*, const void*, const void*, size_t, bool) noexcept;

template <class S, RedOp Op>
void loop(void* dst, const void* a, const void* b, size_t n) noexcept {
  using C = ops::Compute<S>;
  if constexpr (alignof(S) > 8) {
    // The long double elements (16-byte alignment): a shared-memory slot's
    // data starts 8 bytes past a cache line (coll/shm.hpp), so an operand
    // may sit 8 bytes off; copy each element in and out (a typed access
    // there is undefined behaviour; UBSan: "misaligned address").
    auto* d = static_cast<char*>(dst);
    const auto* x = static_cast<const char*>(a);
    const auto* y = static_cast<const char*>(b);
    for (size_t i = 0; i < n; ++i) {
      S u, v;
      std::memcpy(&u, x + i * sizeof(S), sizeof(S));
      std::memcpy(&v, y + i * sizeof(S), sizeof(S));
      const S r = C::store(ops::apply<Op>(C::load(u), C::load(v)));
      std::memcpy(d + i * sizeof(S), &r, sizeof(S));
    }
    return;
  }
  S* d = static_cast<S*>(dst);
  const S* x = static_cast<const S*>(a);
  const S* y = static_cast<const S*>(b);
  for (size_t i = 0; i < n; ++i) d[i] = C::store(ops::apply<Op>(C::load(x[i]), C::load(y[i])));
}

#if defined(__SSE2__)
// Large out-of-place reductions whose result is not read again soon: the
// destination is written, never read, so ordinary stores first read every
// line (read-for-ownership). Reduce a chunk into an L1-resident buffer and
// stream it out with non-temporal stores: one memory stream less (64 MiB
// ring allreduce on 2 ranks: 20.5 -> 18.4 ms). A result that is forwarded
// right away must stay cached instead (Store::cached).
constexpr size_t kStreamMin = 256u << 10;  // bytes; smaller vectors stay in cache anyway
constexpr size_t kChunk = 4096;            // bytes per L1 chunk

template <class S, RedOp Op>
void loop_streaming(void* dst, const void* a, const void* b, size_t n) noexcept {
  auto* d = static_cast<char*>(dst);
  const auto* x = static_cast<const char*>(a);
  const auto* y = static_cast<const char*>(b);
  size_t bytes = n * sizeof(S);
  // Head up to 16-byte alignment of dst, in whole elements.
  size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  if (head % sizeof(S) != 0) return loop<S, Op>(dst, a, b, n);  // dst not element-aligned to 16: plain loop
  loop<S, Op>(d, x, y, head / sizeof(S));
  size_t off = head;
  alignas(64) char tmp[kChunk];
  while (bytes - off >= kChunk) {
    loop<S, Op>(tmp, x + off, y + off, kChunk / sizeof(S));
    for (size_t i = 0; i < kChunk; i += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + off + i), _mm_load_si128(reinterpret_cast<const __m128i*>(tmp + i)));
    off += kChunk;
  }
  _mm_sfence();
  loop<S, Op>(d + off, x + off, y + off, (bytes - off) / sizeof(S));
}
#endif

template <class S, RedOp Op>
void dispatch(void* dst, const void* a, const void* b, size_t n, bool streaming) noexcept {
#if defined(__SSE2__)
  if (streaming && n * sizeof(S) >= kStreamMin && dst != a && dst != b) return loop_streaming<S, Op>(dst, a, b, n);
#else
  (void)streaming;
#endif
  loop<S, Op>(dst, a, b, n);
}

// The loop for an element kind already lowered (ops::lower).
Fn find(Elem e, RedOp op) noexcept {
  return ops::visit_elem(e, [op](auto t) -> Fn {
    using S = typename decltype(t)::type;
    return ops::visit_op(op, [](auto o) -> Fn {
      if constexpr (ops::implemented<S, decltype(o)::value>())
        return &dispatch<S, decltype(o)::value>;
      else
        return nullptr;
    });
  });
}

// find() for every (element, op), made once: a call's lookup is one load
// instead of two switches (the 8-byte reductions of the small-call path).
struct Kernels {
  Fn fn[static_cast<int>(Elem::count_)][static_cast<int>(RedOp::count_)] = {};
  Kernels() noexcept {
    for (int e = 0; e < static_cast<int>(Elem::count_); ++e)
      for (int o = 0; o < static_cast<int>(RedOp::count_); ++o) fn[e][o] = find(static_cast<Elem>(e), static_cast<RedOp>(o));
  }
};
Fn kernel(Elem e, RedOp op) noexcept {
  static const Kernels k;
  return k.fn[static_cast<int>(e)][static_cast<int>(op)];
}

}  // namespace

bool supported(Elem e, RedOp op) noexcept {
  return e < Elem::count_ && op < RedOp::count_ && find(ops::lower(e, op, 1).e, op) != nullptr;
}

Status host(void* dst, const void* a, const void* b, size_t count, Elem e, RedOp op, Store store) noexcept {
#ifdef DUCT_SIM
  // Under SimGrid the host's own time is not charged (duct-sim runs with
  // smpi/simulate-computation:no): a reduction reads two vectors and writes
  // one at DUCT_SIM_REDUCE_BW (0: free, as SMPI's own reductions are).
  if (const size_t bw = config::get().sim_reduce_bw; bw > 0)
    sim::compute(3.0 * static_cast<double>(count * elem_size(e)) / static_cast<double>(bw));
#endif
  if (count == 0) return Status::ok();
  const ops::Lowered l = ops::lower(e, op, count);
  Fn f = e < Elem::count_ && op < RedOp::count_ ? kernel(l.e, op) : nullptr;
  if (!f) return make_error(Errc::internal, "no host kernel for %s on %s", op_name(op), elem_name(e));
  f(dst, a, b, l.count, store == Store::streaming);
  return Status::ok();
}

}  // namespace duct::reduce
