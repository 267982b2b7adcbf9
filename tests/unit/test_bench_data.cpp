// duct-bench's reference results: the table of one period
// (bench::ExpectedValues) against the formula it replaces
// (bench::expected_value, n steps per element), for every op, element
// types of each kind of comparison (signed, unsigned, floating), rank
// counts that are and are not multiples of the periods, and indices over
// several periods of the longest.
#include <catch2/catch.hpp>

#include "bench_data.hpp"

using namespace duct;

TEST_CASE("expected results from one period equal the formula", "[bench]") {
  const RedOp ops[] = {RedOp::sum,  RedOp::prod, RedOp::min, RedOp::max,  RedOp::land, RedOp::lor,
                       RedOp::lxor, RedOp::band, RedOp::bor, RedOp::bxor, RedOp::minloc, RedOp::maxloc};
  const Elem elems[] = {Elem::i32, Elem::u8, Elem::u64, Elem::f32, Elem::f64};
  const int ranks[] = {1, 2, 3, 5, 15, 16, 17, 18, 34, 100, 129, 257};
  std::size_t compared = 0;
  for (RedOp op : ops)
    for (Elem e : elems)
      for (int n : ranks) {
        const bench::ExpectedValues expected(n, op, e);
        for (std::size_t i = 0; i < 3 * 128 + 7; ++i) {
          INFO("op " << static_cast<int>(op) << " elem " << static_cast<int>(e) << " n " << n << " i " << i);
          REQUIRE(expected(i) == bench::expected_value(n, i, op, e));
          ++compared;
        }
        // Far indices (a 2 MiB row's last elements, a rank's block of a
        // reduce-scatter at 512 ranks).
        for (std::size_t i : {std::size_t{524287}, std::size_t{1} << 20, std::size_t{16777215}})
          REQUIRE(expected(i) == bench::expected_value(n, i, op, e));
      }
  CHECK(compared == 12u * 5u * 12u * (3u * 128u + 7u));
}
