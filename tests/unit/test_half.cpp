// float16 / bfloat16 conversions against independent references:
//  - float16: GCC's _Float16 (software IEEE binary16 on x86-64), exhaustively
//    for f16 -> f32 and on every float pattern class for f32 -> f16;
//  - bfloat16: the definition of round-to-nearest-even, checked directly.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "reduce/half.hpp"

using namespace duct::half;

namespace {

std::uint16_t gcc_f16_bits(float f) {
  _Float16 h = static_cast<_Float16>(f);
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

float gcc_f16_value(std::uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return static_cast<float>(h);
}

bool is_nan16(std::uint16_t b) { return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0; }

}  // namespace

TEST_CASE("float16 to float32 is exact for all 65536 values", "[half]") {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    float mine = f16_to_f32(static_cast<std::uint16_t>(b));
    float ref = gcc_f16_value(static_cast<std::uint16_t>(b));
    if (std::isnan(ref)) {
      CHECK(std::isnan(mine));
    } else {
      INFO("bits " << b);
      CHECK(std::bit_cast<std::uint32_t>(mine) == std::bit_cast<std::uint32_t>(ref));
    }
  }
}

TEST_CASE("float32 to float16 rounds to nearest even like _Float16", "[half]") {
  // Every float16 value, the midpoints between neighbours (ties), points just
  // off the midpoints, overflow, underflow and random floats.
  auto check = [](float f) {
    std::uint16_t mine = f32_to_f16(f);
    std::uint16_t ref = gcc_f16_bits(f);
    INFO("float " << f << " bits " << std::bit_cast<std::uint32_t>(f));
    if (is_nan16(ref))
      CHECK(is_nan16(mine));
    else
      CHECK(mine == ref);
  };
  for (std::uint32_t b = 0; b < 65536; ++b) {
    float v = gcc_f16_value(static_cast<std::uint16_t>(b));
    float next = gcc_f16_value(static_cast<std::uint16_t>(b + 1));
    check(v);
    if (std::isfinite(v) && std::isfinite(next) && (b & 0x7fffu) != 0x7bffu && (b & 0x7fffu) != 0x7fffu) {
      float mid = static_cast<float>((static_cast<double>(v) + static_cast<double>(next)) / 2);
      check(mid);
      check(std::nextafter(mid, 0.0f));
      check(std::nextafter(mid, v > next ? -INFINITY : INFINITY));
    }
  }
  for (float f : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e10f, -1e10f, 1e-10f, 5.96e-8f, 2.98e-8f,
                  2.99e-8f, INFINITY, -INFINITY, NAN})
    check(f);
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 200000; ++i) check(std::bit_cast<float>(bits(rng)));
}

TEST_CASE("float32 to bfloat16 rounds to nearest, ties to even", "[half]") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> bits;
  auto check = [](float f) {
    std::uint16_t r = f32_to_bf16(f);
    INFO("float " << f << " bits " << std::bit_cast<std::uint32_t>(f));
    if (std::isnan(f)) {
      CHECK(std::isnan(bf16_to_f32(r)));
      return;
    }
    // The two bfloat16 neighbours of f are its truncation and the next one up.
    std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    std::uint16_t lo = static_cast<std::uint16_t>(x >> 16);
    std::uint16_t hi = static_cast<std::uint16_t>(lo + 1);
    double dl = std::fabs(static_cast<double>(f) - bf16_to_f32(lo));
    // Past the largest finite value the upper neighbour is infinity, which
    // IEEE rounding treats as if it were at 2^128.
    double hv = std::isfinite(bf16_to_f32(hi)) ? bf16_to_f32(hi) : std::copysign(std::ldexp(1.0, 128), f);
    double dh = std::fabs(static_cast<double>(f) - hv);
    if ((x & 0xffffu) == 0) {
      CHECK(r == lo);  // exactly representable
    } else if (dl < dh) {
      CHECK(r == lo);
    } else if (dh < dl) {
      CHECK(r == hi);
    } else {
      CHECK(r == ((lo & 1u) ? hi : lo));  // tie: even mantissa
    }
  };
  for (int i = 0; i < 500000; ++i) check(std::bit_cast<float>(bits(rng)));
  for (std::uint32_t b = 0; b < 65536; ++b) {
    float v = bf16_to_f32(static_cast<std::uint16_t>(b));
    if (!std::isnan(v)) CHECK(f32_to_bf16(v) == b);  // round trip (NaNs may be quieted)
    if (!std::isnan(v)) check(std::bit_cast<float>((b << 16) | 0x8000u));  // exact ties
  }
}
