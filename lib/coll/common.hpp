// duct coll: helpers shared by the algorithms.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "coll/context.hpp"
#include "core/dtype.hpp"
#include "memory/buffer.hpp"
#include "reduce/reduce.hpp"

namespace duct::coll {

using channel::Request;
using memory::MemKind;

// `count` elements split into `n` blocks as evenly as possible: the first
// count % n blocks have one element more. Pure arithmetic (unit tested).
struct Blocks {
  std::size_t count;
  int n;
  std::size_t size(int b) const noexcept {
    std::size_t q = count / static_cast<std::size_t>(n), r = count % static_cast<std::size_t>(n);
    return q + (static_cast<std::size_t>(b) < r ? 1 : 0);
  }
  std::size_t offset(int b) const noexcept {
    std::size_t q = count / static_cast<std::size_t>(n), r = count % static_cast<std::size_t>(n);
    std::size_t ub = static_cast<std::size_t>(b);
    return ub * q + std::min(ub, r);
  }
};

// A block of `elems` elements of `esz` bytes cut into pipeline segments of
// at most `seg_bytes` (at least one element each). Both ends of a transfer
// compute the same cuts from the same block size.
struct Segments {
  std::size_t elems, per;
  Segments(std::size_t elems_, std::size_t esz, std::size_t seg_bytes)
      : elems(elems_), per(std::max<std::size_t>(1, seg_bytes / std::max<std::size_t>(esz, 1))) {}
  std::size_t count() const noexcept { return (elems + per - 1) / per; }
  std::size_t offset(std::size_t k) const noexcept { return k * per; }
  std::size_t size(std::size_t k) const noexcept { return std::min(per, elems - k * per); }
};

inline int mod(int a, int n) noexcept { return ((a % n) + n) % n; }

// The messages of one collective instance on a context.
struct Link {
  Context& ctx;
  std::uint32_t seq;
  Status send(int peer, const void* buf, std::size_t bytes, MemKind kind, std::uint32_t step, Request* r) {
    return ctx.channels->to(peer).isend(buf, bytes, kind, channel::Tag{seq, step & 0xfffu}, r);
  }
  Status recv(int peer, void* buf, std::size_t bytes, MemKind kind, std::uint32_t step, Request* r) {
    return ctx.channels->to(peer).irecv(buf, bytes, kind, channel::Tag{seq, step & 0xfffu}, r);
  }
};

// dst = a (op) b on memory of `kind`. Host: done on return. Device:
// enqueued on duct's stream and recorded in `fence` (await it). `store`:
// whether the result is read again soon (reduce/reduce.hpp).
Status reduce_local(void* dst, const void* a, const void* b, std::size_t count, const DType& dt, RedOp op,
                    MemKind kind, memory::Fence* fence, reduce::Store store = reduce::Store::cached);

// Copy between any kinds; done on return.
Status copy_local(void* dst, MemKind dst_kind, const void* src, MemKind src_kind, std::size_t bytes);

}  // namespace duct::coll
