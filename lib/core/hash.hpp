// duct core: FNV-1a, 64 bits (Fowler, Noll and Vo), for the digests and keys
// that every rank must compute alike whatever its compiler or standard
// library (std::hash promises neither).
#pragma once

#include <cstdint>
#include <string_view>

namespace duct {

inline constexpr std::uint64_t kFnv1aBasis = 0xcbf29ce484222325ull;

// `h` continued over the bytes of `s` (a new hash starts from kFnv1aBasis).
inline std::uint64_t fnv1a(std::string_view s, std::uint64_t h = kFnv1aBasis) noexcept {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace duct
