// The size ranges a duct-tune rules file claims (apps/duct-tune.cpp), from
// what it measured at a grid of sizes: header-only, so duct-tune and the
// unit tests (tests/unit/test_select.cpp) share it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace duct::select {

// One measured size: the algorithm the measurements chose and the one the
// built-in rules choose there (algorithm indices).
struct TunedSize {
  std::size_t query = 0;  // bytes, as select::Query::bytes
  int chosen = -1, builtin = -1;
};

// A rule's range, [lo, hi) bytes, and its algorithm.
struct TunedRange {
  std::size_t lo = 0, hi = 0;
  int algo = -1;
};

// The boundary between two measured sizes a < b: their geometric mean,
// rounded to a power of two above a (b itself on a grid of x2).
inline std::size_t tune_boundary(std::size_t a, std::size_t b) {
  const double g = std::sqrt(static_cast<double>(std::max<std::size_t>(a, 1)) * static_cast<double>(b));
  std::size_t p = 1;
  while (static_cast<double>(p) * 1.5 < g) p <<= 1;
  while (p <= a) p <<= 1;  // above a: the power of two nearest the mean, or b
  return std::clamp(p, a + 1, b);
}

// The ranges of the sizes where a challenger won (chosen != builtin), and
// only those; the built-in rules decide everywhere else. A run of
// neighbouring sizes won by one algorithm spans the sizes between them;
// a neighbour another challenger won meets it at tune_boundary(); toward a
// neighbour where the built-in choice held, or past the grid's last size,
// a range reaches only to the next power of two above the size it won at,
// and below it starts at that size (at 0 for the grid's first size when
// `from_zero`, the grid starting at the smallest size). Where the crossover
// lies between two measured sizes is not known: drawing it halfway lost in
// duct-tune --verify (docs/benchmarks/2026-11-26-gpu-run8-h200.md). Sizes
// ascending. `sized` false (a barrier): one size, [0, SIZE_MAX).
inline std::vector<TunedRange> won_ranges(const std::vector<TunedSize>& s, bool sized, bool from_zero) {
  const std::size_t n = s.size();
  const auto changed = [&s](std::size_t i) { return s[i].chosen != s[i].builtin; };
  const auto lo_of = [&](std::size_t i) -> std::size_t {
    if (!sized) return 0;
    if (i > 0 && changed(i - 1)) return tune_boundary(s[i - 1].query, s[i].query);
    return i == 0 && from_zero ? 0 : s[i].query;
  };
  const auto hi_of = [&](std::size_t j) -> std::size_t {
    if (!sized) return SIZE_MAX;
    if (j + 1 < n && changed(j + 1)) return tune_boundary(s[j].query, s[j + 1].query);
    std::size_t p = 1;
    while (p <= s[j].query) p <<= 1;
    return p;
  };
  std::vector<TunedRange> out;
  for (std::size_t i = 0; i < n;) {
    if (!changed(i)) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j + 1 < n && changed(j + 1) && s[j + 1].chosen == s[i].chosen) ++j;
    out.push_back({lo_of(i), hi_of(j), s[i].chosen});
    i = j + 1;
  }
  return out;
}

}  // namespace duct::select
