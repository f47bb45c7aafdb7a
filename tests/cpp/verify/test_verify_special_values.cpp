// What the verifier accepts when the input holds NaN or infinities (see verify.hpp).
#include "catch.hpp"

#include "reducetune/verify/verify.hpp"

#include <cmath>
#include <limits>
#include <vector>

using namespace reducetune;

namespace {
template <class T> verdict check(reduce_op op, const std::vector<T> &data, T got) {
  return verify(op, std::span<const T>(data), got);
}
} // namespace

TEMPLATE_TEST_CASE("a NaN input makes sum and prod NaN", "[verify][special]", float, double) {
  const TestType nan = std::numeric_limits<TestType>::quiet_NaN();
  const std::vector<TestType> data{1, 2, nan, 4};
  for (reduce_op op : {reduce_op::sum, reduce_op::prod}) {
    CHECK(check(op, data, nan).ok);
    CHECK(check(op, data, -nan).ok); // any NaN
    CHECK_FALSE(check(op, data, TestType(7)).ok);
  }
}

TEMPLATE_TEST_CASE("infinities follow IEEE rules in sum and prod", "[verify][special]", float,
                   double) {
  const TestType inf = std::numeric_limits<TestType>::infinity();
  const TestType nan = std::numeric_limits<TestType>::quiet_NaN();
  CHECK(check(reduce_op::sum, std::vector<TestType>{1, inf, 2}, inf).ok);
  CHECK_FALSE(check(reduce_op::sum, std::vector<TestType>{1, inf, 2}, -inf).ok);
  CHECK(check(reduce_op::sum, std::vector<TestType>{inf, -inf}, nan).ok);
  CHECK_FALSE(check(reduce_op::sum, std::vector<TestType>{inf, -inf}, inf).ok);
  CHECK(check(reduce_op::prod, std::vector<TestType>{-2, inf}, -inf).ok);
  CHECK(check(reduce_op::prod, std::vector<TestType>{0, inf}, nan).ok);
  CHECK_FALSE(check(reduce_op::prod, std::vector<TestType>{0, inf}, TestType(0)).ok);
}

TEMPLATE_TEST_CASE("an infinite result for a finite exact sum is wrong", "[verify][special]",
                   float, double) {
  const TestType big = std::numeric_limits<TestType>::max();
  const TestType inf = std::numeric_limits<TestType>::infinity();
  // big + big − big: an order that adds the two big ones first overflows.
  const auto v = check(reduce_op::sum, std::vector<TestType>{big, big, -big}, inf);
  CHECK_FALSE(v.ok);
  CHECK(v.reason.find("overflowed") != std::string::npos);
}

TEMPLATE_TEST_CASE("min and max with NaN accept NaN or the extreme of the other values",
                   "[verify][special]", float, double) {
  const TestType nan = std::numeric_limits<TestType>::quiet_NaN();
  const std::vector<TestType> data{5, nan, 3, 9};
  CHECK(check(reduce_op::min, data, nan).ok);         // comparison-based code propagating NaN
  CHECK(check(reduce_op::min, data, TestType(3)).ok); // fminf-style
  CHECK(check(reduce_op::max, data, TestType(9)).ok);
  // (3 < NaN ? 3 : NaN) = NaN then (NaN < 5 ? NaN : 5) = 5: an order artefact, rejected.
  CHECK_FALSE(check(reduce_op::min, data, TestType(5)).ok);
  CHECK(check(reduce_op::max, std::vector<TestType>{nan, nan}, nan).ok);
  CHECK_FALSE(check(reduce_op::max, std::vector<TestType>{nan, nan}, TestType(0)).ok);
}

TEMPLATE_TEST_CASE("min and max handle infinities and signed zeros exactly",
                   "[verify][special]", float, double) {
  const TestType inf = std::numeric_limits<TestType>::infinity();
  CHECK(check(reduce_op::min, std::vector<TestType>{1, -inf, 2}, -inf).ok);
  CHECK(check(reduce_op::max, std::vector<TestType>{1, inf, 2}, inf).ok);
  CHECK_FALSE(check(reduce_op::max, std::vector<TestType>{1, inf, 2}, TestType(2)).ok);
  CHECK(check(reduce_op::min, std::vector<TestType>{TestType(0.0), TestType(-0.0)},
              TestType(0.0)).ok);
  CHECK(check(reduce_op::min, std::vector<TestType>{TestType(0.0), TestType(-0.0)},
              TestType(-0.0)).ok);
}
