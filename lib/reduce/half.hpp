// duct reduce: IEEE binary16 (float16) and bfloat16 conversions on the host.
//
// Round to nearest, ties to even, like CUDA's __float2half_rn and
// __float2bfloat16_rn. float16 after F. Giesen, "Half to float done quick"
// (2012, public domain); bfloat16 keeps the upper 16 bits of a float.
// NaNs stay NaN (quiet), infinities and signed zeros are kept.
#pragma once

#include <bit>
#include <cstdint>

namespace duct::half {

inline float f16_to_f32(std::uint16_t h) noexcept {
  constexpr std::uint32_t magic = 113u << 23;
  constexpr std::uint32_t shifted_exp = 0x7c00u << 13;
  std::uint32_t o = (h & 0x7fffu) << 13;
  std::uint32_t exp = shifted_exp & o;
  o += (127u - 15u) << 23;
  if (exp == shifted_exp) {
    o += (128u - 16u) << 23;  // Inf/NaN
  } else if (exp == 0) {
    o += 1u << 23;  // zero/subnormal: renormalize
    o = std::bit_cast<std::uint32_t>(std::bit_cast<float>(o) - std::bit_cast<float>(magic));
  }
  o |= static_cast<std::uint32_t>(h & 0x8000u) << 16;
  return std::bit_cast<float>(o);
}

inline std::uint16_t f32_to_f16(float f) noexcept {
  constexpr std::uint32_t f32infty = 255u << 23;
  constexpr std::uint32_t f16max = (127u + 16u) << 23;
  constexpr std::uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  std::uint32_t sign = x & 0x80000000u;
  x ^= sign;
  std::uint32_t o;
  if (x >= f16max) {
    o = (x > f32infty) ? 0x7e00u : 0x7c00u;  // NaN -> quiet NaN, else Inf
  } else if (x < (113u << 23)) {
    // Result is subnormal or zero: let the FPU round by adding a magic value.
    float r = std::bit_cast<float>(x) + std::bit_cast<float>(denorm_magic);
    o = std::bit_cast<std::uint32_t>(r) - denorm_magic;
  } else {
    std::uint32_t mant_odd = (x >> 13) & 1u;
    x += (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu;
    x += mant_odd;
    o = x >> 13;
  }
  return static_cast<std::uint16_t>(o | (sign >> 16));
}

inline float bf16_to_f32(std::uint16_t b) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

inline std::uint16_t f32_to_bf16(float f) noexcept {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

}  // namespace duct::half
