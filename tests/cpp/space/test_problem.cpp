// A problem (element type, operator, shape (outer, r, inner)): the whole array is (1, n, 1),
// equal problems compare equal, the label names every field, and bad shapes are refused in
// one line that names the problem.
#include "catch.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/problem.hpp"

#include <cstdint>
#include <string>

using namespace reducetune;

TEST_CASE("the whole array of n elements is the shape (1, n, 1)", "[space][problem]") {
  const problem p = problem::whole_array(dtype::float64, reduce_op::max, 1000);
  CHECK(p.shape == reduction_shape{1, 1000, 1});
  CHECK(p.is_whole_array());
  CHECK(p.elements() == 1000);
  CHECK(p.outputs() == 1);
  CHECK(to_label(p) == "float64.max.(1,1000,1)");
  CHECK_NOTHROW(validate(p));
}

TEST_CASE("problems compare by every field; rows and columns are not the whole array",
          "[space][problem]") {
  const problem rows{dtype::float32, reduce_op::sum, {64, 4096, 1}};
  const problem columns{dtype::float32, reduce_op::sum, {1, 4096, 64}};
  CHECK_FALSE(rows == columns);
  CHECK(rows == problem{dtype::float32, reduce_op::sum, {64, 4096, 1}});
  CHECK_FALSE(rows == problem{dtype::int32, reduce_op::sum, {64, 4096, 1}});
  CHECK_FALSE(rows == problem{dtype::float32, reduce_op::min, {64, 4096, 1}});
  CHECK_FALSE(rows.is_whole_array());
  CHECK_FALSE(columns.is_whole_array());
  CHECK(rows.elements() == 64 * 4096);
  CHECK(columns.outputs() == 64);
  CHECK(to_label(columns) == "float32.sum.(1,4096,64)");
}

TEST_CASE("an empty extent or an element count past 64 bits is refused in one line",
          "[space][problem]") {
  for (const reduction_shape s : {reduction_shape{0, 8, 1}, reduction_shape{1, 0, 1},
                                  reduction_shape{1, 8, 0}}) {
    const problem p{dtype::int32, reduce_op::sum, s};
    CHECK_THROWS_AS(validate(p), invalid_configuration);
  }
  const problem huge{dtype::int32, reduce_op::sum, {std::uint64_t{1} << 33, 1ull << 31, 2}};
  try {
    validate(huge);
    FAIL("a problem of 2^65 elements was accepted");
  } catch (const invalid_configuration &e) {
    const std::string what = e.what();
    CHECK(what.find("int32.sum.(8589934592,2147483648,2)") != std::string::npos);
    CHECK(what.find("64 bits") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
  CHECK_NOTHROW(validate(problem{dtype::int32, reduce_op::sum, {1ull << 32, 1ull << 31, 1}}));
}
