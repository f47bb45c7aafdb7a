// The dispatch between grid points of the axis family (db/shape_rule.hpp): which tuned shape
// answers a shape that was not tuned. An exact shape first; else the nearest in
// (round(log2 r), round(log2 outer * inner)); rows and columns never answer for each other;
// ties to the larger r, then to more outputs, then to the earlier entry.
#include "catch.hpp"

#include "reducetune/db/shape_rule.hpp"

#include <cmath>
#include <vector>

using reducetune::reduction_shape;
using reducetune::db::nearest_shape_index;
using reducetune::db::rounded_log2;

namespace {

// The index nearest_shape_index gives, -1 for none: one value for CHECK to print.
long long pick(const std::vector<reduction_shape> &shapes, reduction_shape s) {
  const auto i = nearest_shape_index(shapes, s);
  return i ? static_cast<long long>(*i) : -1;
}

} // namespace

TEST_CASE("rounded_log2 rounds to the nearest octave, its boundary at 2^(k + 1/2)",
          "[db][shape_rule]") {
  // every extent below 2^20 against the floating-point reading of the same rule
  for (unsigned long long x = 1; x < (1ull << 20); ++x) {
    const int expect = static_cast<int>(std::lround(std::log2(static_cast<double>(x))));
    if (rounded_log2(x) != expect) {
      INFO(x);
      REQUIRE(rounded_log2(x) == expect);
    }
  }
  // the boundary itself: 2^k * sqrt(2) = 46340.95 for k = 15, 3037000499.98 for k = 31
  CHECK(rounded_log2(46340) == 15);
  CHECK(rounded_log2(46341) == 16);
  CHECK(rounded_log2(3037000499ull) == 31);
  CHECK(rounded_log2(3037000500ull) == 32);
  CHECK(rounded_log2(1ull << 62) == 62);
  CHECK(rounded_log2(~0ull) == 64);
  static_assert(rounded_log2(1) == 0 && rounded_log2(3) == 2 && rounded_log2(5) == 2,
                "the rule is constexpr: the exported header runs it at compile time");
}

TEST_CASE("an exact tuned shape answers first, though another shares its octaves",
          "[db][shape_rule]") {
  const std::vector<reduction_shape> grid = {
      {1 << 16, 1024, 1}, {1 << 16, 1000, 1}, {1, 1024, 1 << 16}};
  CHECK(pick(grid, {1 << 16, 1000, 1}) == 1);
  CHECK(pick(grid, {1 << 16, 1024, 1}) == 0);
  CHECK(pick(grid, {1, 1024, 1 << 16}) == 2);
}

TEST_CASE("between grid points the nearest in (log2 r, log2 outputs) answers",
          "[db][shape_rule]") {
  // a log2 grid of rows: r = 2^4, 2^10, 2^16 at 2^20, 2^14, 2^8 rows (2^24 elements each)
  const std::vector<reduction_shape> rows = {
      {1 << 20, 1 << 4, 1}, {1 << 14, 1 << 10, 1}, {1 << 8, 1 << 16, 1}};
  CHECK(pick(rows, {1 << 20, 1 << 5, 1}) == 0);  // r one octave from 2^4, five from 2^10
  CHECK(pick(rows, {1 << 15, 1 << 9, 1}) == 1);  // (9, 15): 2 from (10, 14), 50 from (4, 20)
  CHECK(pick(rows, {1 << 8, 1 << 15, 1}) == 2);  // (15, 8): 1 from (16, 8)
  CHECK(pick(rows, {3, 1 << 24, 1}) == 2);       // far beyond the grid: its nearest corner
  CHECK(pick(rows, {1 << 14, 1400, 1}) == 1);    // log2 1400 = 10.45 rounds to 10
  CHECK(pick(rows, {1 << 14, 1500, 1}) == 1);    // 10.55 rounds to 11: still nearest (10, 14)
  // the number of rows counts too: r = 2^10 but 2^20 rows is nearer (4, 20) than (10, 14)?
  // (10, 20): 36 from (4, 20), 36 from (10, 14): a tie, which goes to the larger r
  CHECK(pick(rows, {1 << 20, 1 << 10, 1}) == 1);
}

TEST_CASE("rows and columns never answer for each other", "[db][shape_rule]") {
  const std::vector<reduction_shape> grid = {{1 << 16, 1024, 1}, {1, 1024, 1 << 16}};
  CHECK(pick(grid, {1 << 16, 1024, 2}) == 1); // two columns: a column shape, however near
  CHECK(pick(grid, {256, 1024, 256}) == 1);   // a middle axis is a column shape
  CHECK(pick(grid, {1, 1024, 1 << 16}) == 1);
  CHECK(pick(grid, {1 << 16, 1 << 20, 1}) == 0);
  const std::vector<reduction_shape> only_rows = {{1 << 16, 1024, 1}};
  CHECK(pick(only_rows, {1, 1024, 1 << 16}) == -1); // no column tuned: the built-in rule
  CHECK(pick({}, {4, 4, 1}) == -1);
}

TEST_CASE("ties go to the larger r, then to more outputs, then to the earlier entry",
          "[db][shape_rule]") {
  // r = 2^8 sits one octave from 2^7 and from 2^9 (the same outputs): the larger r answers,
  // whichever comes first in the table
  CHECK(pick({{1 << 12, 1 << 7, 1}, {1 << 12, 1 << 9, 1}}, {1 << 12, 1 << 8, 1}) == 1);
  CHECK(pick({{1 << 12, 1 << 9, 1}, {1 << 12, 1 << 7, 1}}, {1 << 12, 1 << 8, 1}) == 0);
  // the same r, outputs one octave either side: the more outputs answer
  CHECK(pick({{1 << 11, 256, 1}, {1 << 13, 256, 1}}, {1 << 12, 256, 1}) == 1);
  // equal r and outputs (two column shapes of 2^12 outputs): the earlier entry
  CHECK(pick({{4, 256, 1 << 10}, {1 << 10, 256, 4}}, {2, 256, 1 << 11}) == 0);
  CHECK(pick({{1 << 10, 256, 4}, {4, 256, 1 << 10}}, {2, 256, 1 << 11}) == 0);
}
