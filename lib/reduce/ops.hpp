// duct reduce: the reduction operators, shared by host.cpp and device.cu so
// that host and device compute exactly the same function.
#pragma once

#include <cmath>
#include <cstddef>
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

template <class T>
constexpr bool is_cx = false;
template <class T>
constexpr bool is_cx<Cx<T>> = true;
template <class T>
constexpr bool is_loc = false;
template <class V, class K>
constexpr bool is_loc<Loc<V, K>> = true;

// IEEE predicates that hold on host and device alike (no fast-math here).
template <class T>
DUCT_HD bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}
template <class T>
DUCT_HD bool is_inf(T x) {
#if defined(__CUDA_ARCH__)
  return isinf(x);
#else
  return std::isinf(x);
#endif
}
template <class T>
DUCT_HD T copy_sign(T mag, T sgn) {
#if defined(__CUDA_ARCH__)
  return copysign(mag, sgn);
#else
  return std::copysign(mag, sgn);
#endif
}
// Products and sums rounded one by one: nvcc would otherwise fuse a*b - c*d
// into an FMA on the device, and the device would not compute the host's
// (and the MPI library's) bits. The host build does not contract
// (-ffp-contract=off in lib/meson.build).
template <class T>
DUCT_HD T mul_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
template <class T>
DUCT_HD T add_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return __fadd_rn(a, b);
  else return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// Complex multiplication as C99/C11 Annex G (G.5.1) defines it, which is
// what the MPI library's compiled `*b *= *a` computes (GCC's __mulsc3):
// (ac - bd) + (ad + bc)i, and where both parts come out NaN, infinities are
// recovered (an infinite operand times a nonzero finite one is infinite).
// Symmetric in its operands, bit for bit.
template <class T>
DUCT_HD Cx<T> cmul(Cx<T> x, Cx<T> y) {
  T a = x.re, b = x.im, c = y.re, d = y.im;
  const T ac = mul_rn(a, c), bd = mul_rn(b, d), ad = mul_rn(a, d), bc = mul_rn(b, c);
  Cx<T> r{add_rn(ac, -bd), add_rn(ad, bc)};
  if (is_nan(r.re) && is_nan(r.im)) {
    bool recalc = false;
    if (is_inf(a) || is_inf(b)) {
      a = copy_sign(is_inf(a) ? T(1) : T(0), a);
      b = copy_sign(is_inf(b) ? T(1) : T(0), b);
      if (is_nan(c)) c = copy_sign(T(0), c);
      if (is_nan(d)) d = copy_sign(T(0), d);
      recalc = true;
    }
    if (is_inf(c) || is_inf(d)) {
      c = copy_sign(is_inf(c) ? T(1) : T(0), c);
      d = copy_sign(is_inf(d) ? T(1) : T(0), d);
      if (is_nan(a)) a = copy_sign(T(0), a);
      if (is_nan(b)) b = copy_sign(T(0), b);
      recalc = true;
    }
    if (!recalc && (is_inf(ac) || is_inf(bd) || is_inf(ad) || is_inf(bc))) {
      if (is_nan(a)) a = copy_sign(T(0), a);
      if (is_nan(b)) b = copy_sign(T(0), b);
      if (is_nan(c)) c = copy_sign(T(0), c);
      if (is_nan(d)) d = copy_sign(T(0), d);
      recalc = true;
    }
    if (recalc) {
      const T inf = T(INFINITY);
      r.re = mul_rn(inf, add_rn(mul_rn(a, c), -mul_rn(b, d)));
      r.im = mul_rn(inf, add_rn(mul_rn(a, d), mul_rn(b, c)));
    }
  }
  return r;
}

// MINLOC / MAXLOC (MPI-4.0 §6.9.4): the smaller (larger) value with its
// index; equal values keep the smaller index. MPI does not define NaN
// values (Open MPI's answer depends on the rank count); duct lets a NaN
// value win, with the smaller index among NaNs, so that every rank and
// every schedule agree.
template <bool Max, class V, class K>
DUCT_HD Loc<V, K> pick_loc(Loc<V, K> a, Loc<V, K> b) {
  // Branch-free (values are data, branches on them mispredict): b is taken
  // when it is NaN and a is not, or both are NaN or equal and b's index is
  // smaller, or neither is NaN and b's value is better.
  const bool an = is_nan(a.v), bn = is_nan(b.v);
  const bool better = Max ? (b.v > a.v) : (b.v < a.v);
  const bool tie = (b.v == a.v) | (an & bn);
  const bool take_b = (bn & !an) | (tie & (b.k < a.k)) | (!an & better);
  Loc<V, K> r = a;  // a's padding: the result's bytes are all defined
  r.v = take_b ? b.v : a.v;
  r.k = take_b ? b.k : a.k;
  return r;
}

// MIN / MAX. MPI does not say what a NaN does; duct propagates it (IEEE
// 754-2019 minimum/maximum), which keeps min and max commutative bit for
// bit, so every rank holds the same result whatever the schedule.
template <bool Max, class T>
DUCT_HD T pick(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
  }
  return Max ? ((a > b) ? a : b) : ((a < b) ? a : b);
}

template <RedOp Op, class T>
DUCT_HD T apply(T a, T b) {
  if constexpr (is_cx<T>) {
    static_assert(Op == RedOp::prod, "complex sums are reduced as their real parts (lower())");
    return cmul(a, b);
  } else if constexpr (is_loc<T>) {
    static_assert(Op == RedOp::minloc || Op == RedOp::maxloc);
    return pick_loc<Op == RedOp::maxloc>(a, b);
  } else {
    if constexpr (Op == RedOp::sum) return wrap_add(a, b);
    else if constexpr (Op == RedOp::prod) return wrap_mul(a, b);
    else if constexpr (Op == RedOp::min) return pick<false>(a, b);
    else if constexpr (Op == RedOp::max) return pick<true>(a, b);
    else if constexpr (Op == RedOp::land) return static_cast<T>((a != 0) && (b != 0));
    else if constexpr (Op == RedOp::lor) return static_cast<T>((a != 0) || (b != 0));
    else if constexpr (Op == RedOp::lxor) return static_cast<T>((a != 0) != (b != 0));
    else if constexpr (Op == RedOp::band) return static_cast<T>(a & b);
    else if constexpr (Op == RedOp::bor) return static_cast<T>(a | b);
    else return static_cast<T>(a ^ b);
  }
}

// Which (element, op) pairs have a kernel: floats take the arithmetic ops,
// complex elements the product (their sums are lowered), pairs MINLOC and
// MAXLOC, integers the rest.
template <class S>
constexpr bool is_float_storage() {
  return std::is_floating_point_v<S> || std::is_same_v<S, F16> || std::is_same_v<S, BF16>;
}

template <class S, RedOp Op>
constexpr bool implemented() {
  if constexpr (is_loc<S>) return Op == RedOp::minloc || Op == RedOp::maxloc;
  else if constexpr (is_cx<S>) return Op == RedOp::prod;
  else if constexpr (is_float_storage<S>())
    return Op == RedOp::sum || Op == RedOp::prod || Op == RedOp::min || Op == RedOp::max;
  else
    return Op != RedOp::minloc && Op != RedOp::maxloc;
}

// Storage only the host reduces (long double).
template <class S>
constexpr bool host_only_storage() {
  return std::is_same_v<S, long double> || std::is_same_v<S, Cx<long double>> ||
         std::is_same_v<S, Loc<long double, int>>;
}

// Visit the storage type of an element kind: f(tag<S>{}).
template <class S>
struct tag {
  using type = S;
};

template <class F>
inline decltype(auto) visit_elem(Elem e, F&& f) {
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
    case Elem::c32: return f(tag<Cx<float>>{});
    case Elem::c64: return f(tag<Cx<double>>{});
    case Elem::ldbl: return f(tag<long double>{});
    case Elem::cldbl: return f(tag<Cx<long double>>{});
    case Elem::f32_i32: return f(tag<Loc<float, int>>{});
    case Elem::f64_i32: return f(tag<Loc<double, int>>{});
    case Elem::long_i32: return f(tag<Loc<long, int>>{});
    case Elem::i32_i32: return f(tag<Loc<int, int>>{});
    case Elem::i16_i32: return f(tag<Loc<short, int>>{});
    case Elem::ldbl_i32: return f(tag<Loc<long double, int>>{});
    case Elem::f32_f32: return f(tag<Loc<float, float>>{});
    case Elem::f64_f64: return f(tag<Loc<double, double>>{});
    case Elem::f64: default: return f(tag<double>{});
  }
}

template <class F>
inline decltype(auto) visit_op(RedOp op, F&& f) {
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
    case RedOp::minloc: return f(std::integral_constant<RedOp, RedOp::minloc>{});
    case RedOp::maxloc: return f(std::integral_constant<RedOp, RedOp::maxloc>{});
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

// What a kernel is asked to compute: a complex sum is the sum of twice as
// many reals (bit for bit the same), and integers take canonical_elem.
struct Lowered {
  Elem e;
  std::size_t count;
};
constexpr Lowered lower(Elem e, RedOp op, std::size_t count) {
  if (op == RedOp::sum) {
    if (e == Elem::c32) return {Elem::f32, 2 * count};
    if (e == Elem::c64) return {Elem::f64, 2 * count};
    if (e == Elem::cldbl) return {Elem::ldbl, 2 * count};
  }
  return {canonical_elem(e, op), count};
}

}  // namespace duct::reduce::ops
