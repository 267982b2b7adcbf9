// Host reduction kernels against a reference written independently: integer
// ops in 64-bit arithmetic truncated to the width, float16 through GCC's
// _Float16, bfloat16 through float and the (separately tested) rounding.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.hpp"
#include "reduce/half.hpp"
#include "reduce/reduce.hpp"

using duct::Elem;
using duct::RedOp;

namespace {

bool is_signed(Elem e) { return e == Elem::i8 || e == Elem::i16 || e == Elem::i32 || e == Elem::i64; }
bool is_float(Elem e) { return e == Elem::f16 || e == Elem::bf16 || e == Elem::f32 || e == Elem::f64; }

std::uint64_t load_bits(const void* p, size_t sz) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sz);
  return v;
}

std::int64_t sign_extend(std::uint64_t v, size_t sz) {
  if (sz == 8) return static_cast<std::int64_t>(v);
  std::uint64_t m = 1ull << (sz * 8 - 1);
  return static_cast<std::int64_t>((v ^ m) - m);
}

// Reference result of a (op) b for one element, as raw bits.
std::uint64_t reference(Elem e, RedOp op, const void* pa, const void* pb) {
  const size_t sz = duct::elem_size(e);
  const std::uint64_t mask = sz == 8 ? ~0ull : ((1ull << (sz * 8)) - 1);
  if (!is_float(e)) {
    std::uint64_t ua = load_bits(pa, sz), ub = load_bits(pb, sz);
    std::int64_t sa = sign_extend(ua, sz), sb = sign_extend(ub, sz);
    bool s = is_signed(e);
    switch (op) {
      case RedOp::sum: return (ua + ub) & mask;
      case RedOp::prod: return (ua * ub) & mask;
      case RedOp::min: return s ? (sa < sb ? ua : ub) : (ua < ub ? ua : ub);
      case RedOp::max: return s ? (sa > sb ? ua : ub) : (ua > ub ? ua : ub);
      case RedOp::land: return (ua != 0 && ub != 0) ? 1 : 0;
      case RedOp::lor: return (ua != 0 || ub != 0) ? 1 : 0;
      case RedOp::lxor: return ((ua != 0) != (ub != 0)) ? 1 : 0;
      case RedOp::band: return ua & ub;
      case RedOp::bor: return ua | ub;
      case RedOp::bxor: return ua ^ ub;
      default: return 0;
    }
  }
  // MIN/MAX: a NaN operand wins (the first one when both are NaN).
  auto combine = [op](double x, double y) {
    switch (op) {
      case RedOp::sum: return x + y;
      case RedOp::prod: return x * y;
      case RedOp::min: return std::isnan(x) ? x : std::isnan(y) ? y : x < y ? x : y;
      default: return std::isnan(x) ? x : std::isnan(y) ? y : x > y ? x : y;
    }
  };
  if (e == Elem::f64) {
    double x, y;
    std::memcpy(&x, pa, 8);
    std::memcpy(&y, pb, 8);
    double r = combine(x, y);
    return load_bits(&r, 8);
  }
  if (e == Elem::f32) {
    float x, y;
    std::memcpy(&x, pa, 4);
    std::memcpy(&y, pb, 4);
    // In float: the double result of + or * on floats rounds to the float result.
    float r = static_cast<float>(combine(x, y));
    return load_bits(&r, 4);
  }
  std::uint16_t a16, b16;
  std::memcpy(&a16, pa, 2);
  std::memcpy(&b16, pb, 2);
  if (e == Elem::f16) {
    _Float16 x, y;
    std::memcpy(&x, &a16, 2);
    std::memcpy(&y, &b16, 2);
    // The exact result (double holds it) rounded to float, then to binary16:
    // the function duct defines for 16-bit floats.
    _Float16 r = static_cast<_Float16>(static_cast<float>(combine(static_cast<float>(x), static_cast<float>(y))));
    std::uint16_t rb;
    std::memcpy(&rb, &r, 2);
    return rb;
  }
  float r = static_cast<float>(combine(duct::half::bf16_to_f32(a16), duct::half::bf16_to_f32(b16)));
  return duct::half::f32_to_bf16(r);
}

void fill(std::vector<unsigned char>& v, Elem e, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> real(-100.0f, 100.0f);
  const size_t sz = duct::elem_size(e);
  for (size_t i = 0; i + sz <= v.size(); i += sz) {
    if (!is_float(e)) {
      for (size_t k = 0; k < sz; ++k) v[i + k] = static_cast<unsigned char>(byte(rng));
      if (byte(rng) < 40) std::memset(&v[i], 0, sz);  // zeros matter to logical ops
    } else if (e == Elem::f64) {
      double d = byte(rng) < 3 ? NAN : real(rng);  // some NaNs: MIN and MAX let them win
      std::memcpy(&v[i], &d, 8);
    } else if (e == Elem::f32) {
      float f = byte(rng) < 3 ? NAN : real(rng);
      std::memcpy(&v[i], &f, 4);
    } else {
      float f = real(rng);
      std::uint16_t h = e == Elem::f16 ? duct::half::f32_to_f16(f) : duct::half::f32_to_bf16(f);
      std::memcpy(&v[i], &h, 2);
    }
  }
}

}  // namespace

TEST_CASE("host reduction kernels match the reference for every type and op", "[reduce]") {
  std::mt19937 rng(1234);
  const Elem elems[] = {Elem::i8,  Elem::u8,  Elem::i16, Elem::u16, Elem::i32,  Elem::u32,
                        Elem::i64, Elem::u64, Elem::f16, Elem::bf16, Elem::f32, Elem::f64};
  for (Elem e : elems) {
    for (int o = 0; o < static_cast<int>(RedOp::count_); ++o) {
      const RedOp op = static_cast<RedOp>(o);
      const bool valid = is_float(e) ? (op == RedOp::sum || op == RedOp::prod || op == RedOp::min || op == RedOp::max)
                                     : (op != RedOp::minloc && op != RedOp::maxloc);
      CHECK(duct::reduce::supported(e, op) == valid);
      if (!valid) continue;
      const size_t sz = duct::elem_size(e);
      // 1000003 elements reach the non-temporal-store path; offset 1 element
      // leaves the destination misaligned.
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, size_t{1000003}}) {
        for (size_t offset : {size_t{0}, size_t{1}}) {
          std::vector<unsigned char> a((count + offset) * sz), b(a.size()), out(a.size(), 0xcd);
          fill(a, e, rng);
          fill(b, e, rng);
          INFO(duct::elem_name(e) << " " << duct::op_name(op) << " count " << count << " offset " << offset);
          unsigned char* pa = a.data() + offset * sz;
          unsigned char* pb = b.data() + offset * sz;
          unsigned char* po = out.data() + offset * sz;
          // Both store paths (non-temporal streaming for large out-of-place results).
          const auto store = offset == 0 ? duct::reduce::Store::streaming : duct::reduce::Store::cached;
          REQUIRE(duct::reduce::host(po, pa, pb, count, e, op, store).is_ok());
          if (offset == 1) {  // the misaligned destination through the streaming path too
            std::vector<unsigned char> o2(out.size(), 0xcd);
            REQUIRE(duct::reduce::host(o2.data() + sz, pa, pb, count, e, op, duct::reduce::Store::streaming).is_ok());
            CHECK(std::memcmp(o2.data() + sz, po, count * sz) == 0);
          }
          size_t wrong = 0;
          for (size_t i = 0; i < count; ++i) wrong += load_bits(po + i * sz, sz) != reference(e, op, pa + i * sz, pb + i * sz);
          CHECK(wrong == 0);
          for (size_t k = 0; k < offset * sz; ++k) CHECK(out[k] == 0xcd);  // nothing written before dst
          // dst aliasing either input gives the same bits.
          std::vector<unsigned char> a2 = a, b2 = b;
          REQUIRE(duct::reduce::host(a2.data() + offset * sz, a2.data() + offset * sz, pb, count, e, op).is_ok());
          REQUIRE(duct::reduce::host(b2.data() + offset * sz, pa, b2.data() + offset * sz, count, e, op).is_ok());
          CHECK(std::memcmp(a2.data() + offset * sz, po, count * sz) == 0);
          CHECK(std::memcmp(b2.data() + offset * sz, po, count * sz) == 0);
        }
      }
    }
  }
}

// ---- complex, long double and MINLOC/MAXLOC pairs ------------------------------

template <class T>
bool same_value(T a, T b) {
  return (a == b && std::signbit(a) == std::signbit(b)) || (std::isnan(a) && std::isnan(b));
}

// Complex sums and products against std::complex (GCC computes products as
// C99 Annex G, through __mulsc3 for NaN results, as the MPI library does).
template <class F>
void check_complex(Elem e, std::mt19937& rng) {
  const F specials[] = {F(INFINITY), F(-INFINITY), F(NAN), F(0), F(-0.0), F(1), F(-3), F(0.5)};
  std::uniform_int_distribution<int> pick(0, 7), coin(0, 3);
  std::uniform_real_distribution<double> real(-10, 10);
  const size_t n = 20000;
  std::vector<duct::Cx<F>> a(n), b(n), out(n);
  for (size_t i = 0; i < n; ++i) {
    auto draw = [&] { return coin(rng) == 0 ? specials[pick(rng)] : static_cast<F>(real(rng)); };
    a[i] = {draw(), draw()};
    b[i] = {draw(), draw()};
  }
  for (RedOp op : {RedOp::sum, RedOp::prod}) {
    INFO(duct::elem_name(e) << " " << duct::op_name(op));
    REQUIRE(duct::reduce::host(out.data(), a.data(), b.data(), n, e, op).is_ok());
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) {
      std::complex<F> x(a[i].re, a[i].im), y(b[i].re, b[i].im);
      std::complex<F> r = op == RedOp::sum ? x + y : y * x;
      wrong += !(same_value(out[i].re, r.real()) && same_value(out[i].im, r.imag()));
    }
    CHECK(wrong == 0);
    // Operands swapped: the same bits.
    std::vector<duct::Cx<F>> swapped(n);
    REQUIRE(duct::reduce::host(swapped.data(), b.data(), a.data(), n, e, op).is_ok());
    size_t differ = 0;
    for (size_t i = 0; i < n; ++i)
      differ += !(same_value(out[i].re, swapped[i].re) && same_value(out[i].im, swapped[i].im));
    CHECK(differ == 0);
  }
  for (RedOp op : {RedOp::min, RedOp::max, RedOp::land, RedOp::band, RedOp::minloc}) CHECK_FALSE(duct::reduce::supported(e, op));
}

template <class V, class K>
void check_loc(Elem e, std::mt19937& rng) {
  std::uniform_int_distribution<int> small(-3, 3), idx(0, 5), coin(0, 15);
  const size_t n = 5003;
  std::vector<duct::Loc<V, K>> a(n), b(n), out(n);
  for (size_t i = 0; i < n; ++i) {
    a[i].v = static_cast<V>(small(rng));
    b[i].v = static_cast<V>(small(rng));
    a[i].k = static_cast<K>(idx(rng));
    b[i].k = static_cast<K>(idx(rng));
    if constexpr (std::is_floating_point_v<V>) {
      if (coin(rng) == 0) a[i].v = V(NAN);
      if (coin(rng) == 0) b[i].v = V(NAN);
    }
  }
  for (RedOp op : {RedOp::minloc, RedOp::maxloc}) {
    INFO(duct::elem_name(e) << " " << duct::op_name(op));
    REQUIRE(duct::reduce::host(out.data(), a.data(), b.data(), n, e, op).is_ok());
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) {
      const auto& x = a[i];
      const auto& y = b[i];
      V v;
      K k;
      const bool xn = std::isnan(static_cast<double>(x.v)), yn = std::isnan(static_cast<double>(y.v));
      if (xn || yn) {  // a NaN wins; the smaller index among NaNs
        v = xn ? x.v : y.v;
        k = xn && yn ? std::min(x.k, y.k) : xn ? x.k : y.k;
      } else if (x.v == y.v) {
        v = x.v;
        k = std::min(x.k, y.k);  // MPI-4.0 §6.9.4: the smaller index
      } else {
        const bool first = op == RedOp::minloc ? x.v < y.v : x.v > y.v;
        v = first ? x.v : y.v;
        k = first ? x.k : y.k;
      }
      wrong += !(same_value(static_cast<double>(out[i].v), static_cast<double>(v)) && out[i].k == k);
    }
    CHECK(wrong == 0);
  }
  for (RedOp op : {RedOp::sum, RedOp::min, RedOp::max, RedOp::band}) CHECK_FALSE(duct::reduce::supported(e, op));
}

TEST_CASE("complex, long double and pair kernels match their references", "[reduce]") {
  std::mt19937 rng(99);
  check_complex<float>(Elem::c32, rng);
  check_complex<double>(Elem::c64, rng);
  check_complex<long double>(Elem::cldbl, rng);
  check_loc<float, int>(Elem::f32_i32, rng);
  check_loc<double, int>(Elem::f64_i32, rng);
  check_loc<long, int>(Elem::long_i32, rng);
  check_loc<int, int>(Elem::i32_i32, rng);
  check_loc<short, int>(Elem::i16_i32, rng);
  check_loc<long double, int>(Elem::ldbl_i32, rng);
  check_loc<float, float>(Elem::f32_f32, rng);
  check_loc<double, double>(Elem::f64_f64, rng);

  // long double: the arithmetic ops, NaN winning MIN and MAX.
  const size_t n = 3001;
  std::vector<long double> a(n), b(n), out(n);
  std::uniform_real_distribution<double> real(-1e6, 1e6);
  for (size_t i = 0; i < n; ++i) {
    a[i] = i % 97 == 0 ? NAN : static_cast<long double>(real(rng)) / 3;
    b[i] = static_cast<long double>(real(rng)) / 7;
  }
  for (RedOp op : {RedOp::sum, RedOp::prod, RedOp::min, RedOp::max}) {
    INFO("long double " << duct::op_name(op));
    REQUIRE(duct::reduce::host(out.data(), a.data(), b.data(), n, Elem::ldbl, op).is_ok());
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) {
      long double x = a[i], y = b[i];
      long double r = op == RedOp::sum ? x + y : op == RedOp::prod ? x * y
                      : std::isnan(x) ? x : op == RedOp::min ? (x < y ? x : y) : (x > y ? x : y);
      wrong += !same_value(out[i], r);
    }
    CHECK(wrong == 0);
  }
  CHECK_FALSE(duct::reduce::supported(Elem::ldbl, RedOp::band));
  CHECK(duct::host_only(Elem::ldbl));
  CHECK_FALSE(duct::host_only(Elem::c64));
}

TEST_CASE("unsupported combinations are refused, not computed", "[reduce]") {
  float a = 1, b = 2, c = 0;
  duct::Status st = duct::reduce::host(&c, &a, &b, 1, Elem::f32, RedOp::band);
  CHECK(st.code() == duct::Errc::internal);
  CHECK(c == 0);
}

TEST_CASE("device kernels report their absence or presence honestly", "[reduce]") {
  float a = 1, b = 2, c = 0;
  duct::Status st = duct::reduce::device(&c, &a, &b, 0, Elem::f32, RedOp::sum, nullptr);
  if (duct::reduce::device_built())
    CHECK(st.is_ok());  // count 0: nothing to launch
  else
    CHECK(st.code() == duct::Errc::not_supported);
}
