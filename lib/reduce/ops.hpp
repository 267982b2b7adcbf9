// duct reduce: the reduction operators, shared by host.cpp and device.cu so
// that host and device compute exactly the same function.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/dtype.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define DUCT_HD __host__ __device__ __forceinline__
#else
#include "reduce/half.hpp"
#define DUCT_HD inline
#endif

namespace duct::reduce::ops {

// Storage tags for the two 16-bit float formats.
struct F16 {
  std::uint16_t bits;
};
struct BF16 {
  std::uint16_t bits;
};

// How an element is loaded into the type the op computes in, and stored back.
template <class S>
struct Compute {
  using T = S;
  static DUCT_HD T load(S s) { return s; }
  static DUCT_HD S store(T t) { return t; }
};

template <>
struct Compute<F16> {
  using T = float;
#if defined(__CUDACC__)
  static DUCT_HD T load(F16 s) { return __half2float(__ushort_as_half(s.bits)); }
  static DUCT_HD F16 store(T t) { return F16{__half_as_ushort(__float2half_rn(t))}; }
#else
  static DUCT_HD T load(F16 s) { return half::f16_to_f32(s.bits); }
  static DUCT_HD F16 store(T t) { return F16{half::f32_to_f16(t)}; }
#endif
};

template <>
struct Compute<BF16> {
  using T = float;
#if defined(__CUDACC__)
  static DUCT_HD T load(BF16 s) { return __bfloat162float(__ushort_as_bfloat16(s.bits)); }
  static DUCT_HD BF16 store(T t) { return BF16{__bfloat16_as_ushort(__float2bfloat16_rn(t))}; }
#else
  static DUCT_HD T load(BF16 s) { return half::bf16_to_f32(s.bits); }
  static DUCT_HD BF16 store(T t) { return BF16{half::f32_to_bf16(t)}; }
#endif
};

template <class T>
DUCT_HD T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class T>
DUCT_HD T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Promote through unsigned of at least int's width: no signed overflow.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

template <RedOp Op, class T>
DUCT_HD T apply(T a, T b) {
  if constexpr (Op == RedOp::sum) return wrap_add(a, b);
  else if constexpr (Op == RedOp::prod) return wrap_mul(a, b);
  else if constexpr (Op == RedOp::min) return (a < b) ? a : b;
  else if constexpr (Op == RedOp::max) return (a > b) ? a : b;
  else if constexpr (Op == RedOp::land) return static_cast<T>((a != 0) && (b != 0));
  else if constexpr (Op == RedOp::lor) return static_cast<T>((a != 0) || (b != 0));
  else if constexpr (Op == RedOp::lxor) return static_cast<T>((a != 0) != (b != 0));
  else if constexpr (Op == RedOp::band) return static_cast<T>(a & b);
  else if constexpr (Op == RedOp::bor) return static_cast<T>(a | b);
  else return static_cast<T>(a ^ b);
}

// Which (element, op) pairs exist: floats take the arithmetic ops only.
template <class S>
constexpr bool is_float_storage() {
  return std::is_same_v<S, float> || std::is_same_v<S, double> || std::is_same_v<S, F16> ||
         std::is_same_v<S, BF16>;
}

template <class S, RedOp Op>
constexpr bool implemented() {
  if constexpr (is_float_storage<S>())
    return Op == RedOp::sum || Op == RedOp::prod || Op == RedOp::min || Op == RedOp::max;
  else
    return true;
}

// Visit the storage type of an element kind: f(tag<S>{}).
template <class S>
struct tag {
  using type = S;
};

template <class F>
DUCT_HD decltype(auto) visit_elem(Elem e, F&& f) {
  switch (e) {
    case Elem::i8: return f(tag<std::int8_t>{});
    case Elem::u8: return f(tag<std::uint8_t>{});
    case Elem::i16: return f(tag<std::int16_t>{});
    case Elem::u16: return f(tag<std::uint16_t>{});
    case Elem::i32: return f(tag<std::int32_t>{});
    case Elem::u32: return f(tag<std::uint32_t>{});
    case Elem::i64: return f(tag<std::int64_t>{});
    case Elem::u64: return f(tag<std::uint64_t>{});
    case Elem::f16: return f(tag<F16>{});
    case Elem::bf16: return f(tag<BF16>{});
    case Elem::f32: return f(tag<float>{});
    case Elem::f64: default: return f(tag<double>{});
  }
}

template <class F>
DUCT_HD decltype(auto) visit_op(RedOp op, F&& f) {
  switch (op) {
    case RedOp::sum: return f(std::integral_constant<RedOp, RedOp::sum>{});
    case RedOp::prod: return f(std::integral_constant<RedOp, RedOp::prod>{});
    case RedOp::min: return f(std::integral_constant<RedOp, RedOp::min>{});
    case RedOp::max: return f(std::integral_constant<RedOp, RedOp::max>{});
    case RedOp::land: return f(std::integral_constant<RedOp, RedOp::land>{});
    case RedOp::lor: return f(std::integral_constant<RedOp, RedOp::lor>{});
    case RedOp::lxor: return f(std::integral_constant<RedOp, RedOp::lxor>{});
    case RedOp::band: return f(std::integral_constant<RedOp, RedOp::band>{});
    case RedOp::bor: return f(std::integral_constant<RedOp, RedOp::bor>{});
    case RedOp::bxor: default: return f(std::integral_constant<RedOp, RedOp::bxor>{});
  }
}

// Kernel instantiations are kept in check by reusing one unsigned kernel for
// every op whose bits do not depend on signedness (sum, prod, logical and
// bitwise ops): only min/max need the signed types.
constexpr Elem canonical_elem(Elem e, RedOp op) {
  if (op == RedOp::min || op == RedOp::max) return e;
  switch (e) {
    case Elem::i8: return Elem::u8;
    case Elem::i16: return Elem::u16;
    case Elem::i32: return Elem::u32;
    case Elem::i64: return Elem::u64;
    default: return e;
  }
}

}  // namespace duct::reduce::ops
