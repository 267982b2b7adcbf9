// Integer helpers the schedules and the rules share: rank arithmetic on a
// ring of n and the power-of-two test.
#pragma once

namespace duct {

// a mod n in [0, n) for any sign of a (n > 0): the distance from one rank
// to another around a ring of n.
constexpr int mod(int a, int n) noexcept { return ((a % n) + n) % n; }
// Whether n is a power of two (1 is; 0 and negatives are not).
constexpr bool is_pow2(int n) noexcept { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace duct
