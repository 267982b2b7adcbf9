// duct-bench and the tests: input data whose reduction is known exactly.
//
// Every rank fills element i with small integers chosen so that the result
// of any supported op over any number of ranks (up to 32, the bfloat16
// limit) is exact in every supported type, whatever the reduction order.
// The expected result is computed here, element by element, from the
// formula: it depends neither on duct nor on the MPI library.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "core/dtype.hpp"
#include "reduce/half.hpp"

namespace duct::bench {

// The value rank r contributes at element i for `op`, as an exact integer.
inline std::int64_t input_value(int r, std::size_t i, RedOp op) {
  std::uint64_t k = i * 7u + static_cast<std::uint64_t>(r) * 13u;
  switch (op) {
    case RedOp::prod: {
      // Mostly 1, with some -1 and 2: products stay small and exact.
      std::uint64_t m = (i + static_cast<std::uint64_t>(r)) % 5u;
      return m == 0 ? 2 : (m == 1 ? -1 : 1);
    }
    case RedOp::land:
    case RedOp::lor:
    case RedOp::lxor:
      return (k % 3u == 0) ? 0 : static_cast<std::int64_t>(k % 5u + 1);
    case RedOp::band:
    case RedOp::bor:
    case RedOp::bxor:
      return static_cast<std::int64_t>((k * 2654435761u) & 0x7f);
    default:
      return static_cast<std::int64_t>(k % 17u) - 8;  // [-8, 8]
  }
}

// An input as the value an element of type `e` holds: unsigned types hold
// negative inputs wrapped around (-8 is 248 in uint8), which matters to
// min and max.
inline __int128 as_stored(Elem e, std::int64_t v) {
  switch (e) {
    case Elem::u8: return static_cast<std::uint8_t>(v);
    case Elem::u16: return static_cast<std::uint16_t>(v);
    case Elem::u32: return static_cast<std::uint32_t>(v);
    case Elem::u64: return static_cast<std::uint64_t>(v);
    default: return v;
  }
}

// The exact combination over ranks 0..n-1 for elements of type `e` (in
// 64-bit integers; integer types wrap when stored, as they do in duct and
// MPI).
inline std::int64_t expected_value(int n, std::size_t i, RedOp op, Elem e) {
  std::int64_t acc = input_value(0, i, op);
  for (int r = 1; r < n; ++r) {
    std::int64_t v = input_value(r, i, op);
    switch (op) {
      case RedOp::sum: acc = static_cast<std::int64_t>(static_cast<std::uint64_t>(acc) + static_cast<std::uint64_t>(v)); break;
      case RedOp::prod: acc = static_cast<std::int64_t>(static_cast<std::uint64_t>(acc) * static_cast<std::uint64_t>(v)); break;
      case RedOp::min: acc = as_stored(e, v) < as_stored(e, acc) ? v : acc; break;
      case RedOp::max: acc = as_stored(e, v) > as_stored(e, acc) ? v : acc; break;
      case RedOp::land: acc = (acc != 0) && (v != 0); break;
      case RedOp::lor: acc = (acc != 0) || (v != 0); break;
      case RedOp::lxor: acc = (acc != 0) != (v != 0); break;
      case RedOp::band: acc &= v; break;
      case RedOp::bor: acc |= v; break;
      case RedOp::bxor: acc ^= v; break;
      case RedOp::count_: break;
    }
  }
  return acc;
}

// Store an exact integer as one element of type `e` (integers wrap).
inline void store(void* dst, Elem e, std::int64_t v) {
  switch (e) {
    case Elem::i8: case Elem::u8: { auto x = static_cast<std::uint8_t>(v); std::memcpy(dst, &x, 1); break; }
    case Elem::i16: case Elem::u16: { auto x = static_cast<std::uint16_t>(v); std::memcpy(dst, &x, 2); break; }
    case Elem::i32: case Elem::u32: { auto x = static_cast<std::uint32_t>(v); std::memcpy(dst, &x, 4); break; }
    case Elem::i64: case Elem::u64: { auto x = static_cast<std::uint64_t>(v); std::memcpy(dst, &x, 8); break; }
    case Elem::f16: { auto x = half::f32_to_f16(static_cast<float>(v)); std::memcpy(dst, &x, 2); break; }
    case Elem::bf16: { auto x = half::f32_to_bf16(static_cast<float>(v)); std::memcpy(dst, &x, 2); break; }
    case Elem::f32: { auto x = static_cast<float>(v); std::memcpy(dst, &x, 4); break; }
    case Elem::f64: { auto x = static_cast<double>(v); std::memcpy(dst, &x, 8); break; }
    case Elem::count_: break;
  }
}

// Fill `count` elements with rank r's input.
inline void fill_input(void* buf, std::size_t count, Elem e, RedOp op, int r) {
  const std::size_t esz = elem_size(e);
  for (std::size_t i = 0; i < count; ++i) store(static_cast<char*>(buf) + i * esz, e, input_value(r, i, op));
}

// Count elements of `buf` that differ from the expected result.
inline std::size_t count_wrong(const void* buf, std::size_t count, Elem e, RedOp op, int n) {
  const std::size_t esz = elem_size(e);
  std::size_t wrong = 0;
  unsigned char want[8];
  for (std::size_t i = 0; i < count; ++i) {
    store(want, e, expected_value(n, i, op, e));
    wrong += std::memcmp(want, static_cast<const char*>(buf) + i * esz, esz) != 0;
  }
  return wrong;
}

}  // namespace duct::bench
