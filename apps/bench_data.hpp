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
#include <vector>

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
      case RedOp::min:
      case RedOp::minloc: acc = as_stored(e, v) < as_stored(e, acc) ? v : acc; break;
      case RedOp::max:
      case RedOp::maxloc: acc = as_stored(e, v) > as_stored(e, acc) ? v : acc; break;
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

// input_value(r, i, op) depends on i only through i mod input_period(op):
// the residue of k = 7i + 13r mod 17 (sum, min, max and the pairs), of
// i + r mod 5 (prod), of k mod 15 (k mod 3 and k mod 5: the logical ops) and
// of k mod 128 (the low 7 bits of k times an odd constant: the bitwise ops).
// So is expected_value(n, i, op, e).
inline std::size_t input_period(RedOp op) {
  switch (op) {
    case RedOp::prod: return 5;
    case RedOp::land:
    case RedOp::lor:
    case RedOp::lxor: return 15;
    case RedOp::band:
    case RedOp::bor:
    case RedOp::bxor: return 128;
    default: return 17;
  }
}

// expected_value(n, i, op, e) for every i, from one period of it: n *
// input_period(op) steps once, then a table lookup per element, where the
// formula takes n steps per element (at 512 simulated ranks each checking
// 512 Ki elements that was 137 G steps, most of a 2 MiB row's real time
// under duct-sim). The unit test compares the two.
class ExpectedValues {
 public:
  ExpectedValues(int n, RedOp op, Elem e) : period_(input_period(op)) {
    table_.reserve(period_);
    for (std::size_t p = 0; p < period_; ++p) table_.push_back(expected_value(n, p, op, e));
  }
  std::int64_t operator()(std::size_t i) const { return table_[i % period_]; }

 private:
  std::size_t period_;
  std::vector<std::int64_t> table_;
};

// The index a pair element (MPI_DOUBLE_INT, ...) carries with value v: a
// function of the value, so that the pair a MINLOC/MAXLOC picks is known
// from the value alone (the tie rule is tested in tests/common).
inline std::int64_t pair_index(std::int64_t v) { return 3 * v + 100; }

template <class V, class K>
inline void store_loc(void* dst, std::int64_t v) {
  Loc<V, K> x{};
  x.v = static_cast<V>(v);
  x.k = static_cast<K>(pair_index(v));
  std::memcpy(dst, &x, sizeof x);
}

// Store an exact integer as one element of type `e` (integers wrap; a
// complex element holds v + 0i, a pair element (v, pair_index(v))).
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
    case Elem::c32: { Cx<float> x{static_cast<float>(v), 0.0f}; std::memcpy(dst, &x, sizeof x); break; }
    case Elem::c64: { Cx<double> x{static_cast<double>(v), 0.0}; std::memcpy(dst, &x, sizeof x); break; }
    case Elem::ldbl: { long double x = static_cast<long double>(v); std::memcpy(dst, &x, sizeof x); break; }
    case Elem::cldbl: { Cx<long double> x{static_cast<long double>(v), 0.0L}; std::memcpy(dst, &x, sizeof x); break; }
    case Elem::f32_i32: store_loc<float, int>(dst, v); break;
    case Elem::f64_i32: store_loc<double, int>(dst, v); break;
    case Elem::long_i32: store_loc<long, int>(dst, v); break;
    case Elem::i32_i32: store_loc<int, int>(dst, v); break;
    case Elem::i16_i32: store_loc<short, int>(dst, v); break;
    case Elem::ldbl_i32: store_loc<long double, int>(dst, v); break;
    case Elem::f32_f32: store_loc<float, float>(dst, v); break;
    case Elem::f64_f64: store_loc<double, double>(dst, v); break;
    case Elem::count_: break;
  }
}

template <class T>
inline T load_as(const void* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x;
}
template <class V, class K>
inline bool same_loc(const void* a, const void* b) {
  auto x = load_as<Loc<V, K>>(a), y = load_as<Loc<V, K>>(b);
  return x.v == y.v && x.k == y.k;
}
template <class T>
inline bool same_cx(const void* a, const void* b) {
  auto x = load_as<Cx<T>>(a), y = load_as<Cx<T>>(b);
  return x.re == y.re && x.im == y.im;
}

// Whether two elements hold the same value: bytes for integers and floats,
// values for complex (the sign of a zero imaginary part depends on the
// order of a product) and long double (its padding bytes are undefined),
// the two fields of a pair (not its padding).
inline bool same(Elem e, const void* a, const void* b) {
  switch (e) {
    case Elem::c32: return same_cx<float>(a, b);
    case Elem::c64: return same_cx<double>(a, b);
    case Elem::ldbl: return load_as<long double>(a) == load_as<long double>(b);
    case Elem::cldbl: return same_cx<long double>(a, b);
    case Elem::f32_i32: return same_loc<float, int>(a, b);
    case Elem::f64_i32: return same_loc<double, int>(a, b);
    case Elem::long_i32: return same_loc<long, int>(a, b);
    case Elem::i32_i32: return same_loc<int, int>(a, b);
    case Elem::i16_i32: return same_loc<short, int>(a, b);
    case Elem::ldbl_i32: return same_loc<long double, int>(a, b);
    case Elem::f32_f32: return same_loc<float, float>(a, b);
    case Elem::f64_f64: return same_loc<double, double>(a, b);
    default: return std::memcmp(a, b, elem_size(e)) == 0;
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
  alignas(16) unsigned char want[64] = {};
  const ExpectedValues expected(n, op, e);
  for (std::size_t i = 0; i < count; ++i) {
    store(want, e, expected(i));
    wrong += !same(e, want, static_cast<const char*>(buf) + i * esz);
  }
  return wrong;
}

}  // namespace duct::bench
