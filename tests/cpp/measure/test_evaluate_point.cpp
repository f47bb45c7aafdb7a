// evaluate(space, problem, point) without a GPU: what it decides before any device is used.
// A point of another problem is the caller's mistake (thrown); an invalid point, a shape its
// family does not reduce (a row reduction for a whole-array family, a whole array for the axis
// family) are failed points (data), each returned before the device would be touched
// (device_info{} names no GPU, so reaching the runner would fail as device_error, not as
// invalid_configuration).
#include "catch.hpp"
#include "evaluate_fixture.hpp"

#include "reducetune/errors.hpp"

#include <string>

using namespace reducetune;
using rt_test::has_text;

using fixture = rt_test::evaluate_fixture;
using rt_test::failed;

TEST_CASE("a point of another element type than the problem's is refused, naming both",
          "[measure][evaluate]") {
  fixture fx;
  const search_space s(family::load(fx.lib, "tunable"), dtype::int32, reduce_op::sum, {});
  const point p = s.point_of({});
  const problem floats = problem::whole_array(dtype::float32, reduce_op::sum, 1024);
  CHECK_THROWS_WITH(require_point_for(s.decl(), p, floats),
                    has_text("is not for the problem float32.sum.(1,1024,1)"));
  CHECK_THROWS_AS(fx.run(s, floats, p), invalid_configuration);
  CHECK_THROWS_AS(require_point_for(s.decl(), p, {dtype::int32, reduce_op::sum, {1, 0, 1}}),
                  invalid_configuration); // an extent of 0 is no problem
}

TEST_CASE("an invalid point is a failed point with the space's reasons, never run",
          "[measure][evaluate]") {
  fixture fx;
  device_limits small{};
  small.max_threads_per_block = 128; // the default block of 256 does not fit
  const search_space s(family::load(fx.lib, "tunable"), dtype::float32, reduce_op::sum, small);
  const point p = s.point_of({{"block_size", std::int64_t{256}}});
  REQUIRE_FALSE(s.check(p).ok());
  const failure f =
      failed(fx.run(s, problem::whole_array(dtype::float32, reduce_op::sum, 1 << 20), p));
  CHECK(f.kind == failure_kind::invalid_configuration);
  CHECK(f.reason == s.check(p).reasons());
}

TEST_CASE("a whole-array family refuses a row reduction before any launch", "[measure][evaluate]") {
  fixture fx;
  const search_space s(family::load(fx.lib, "tunable"), dtype::float32, reduce_op::sum, {});
  const point p = s.point_of({});
  REQUIRE(s.check(p).ok());
  const failure f = failed(fx.run(s, {dtype::float32, reduce_op::sum, {4, 1024, 1}}, p));
  CHECK(f.kind == failure_kind::invalid_configuration);
  CHECK_THAT(f.reason, has_text("reduces whole arrays, not float32.sum.(4,1024,1)"));
}

TEST_CASE("a family of the axis kernel ABI is measured by the axis runner: a whole array is "
          "refused there", "[measure][evaluate]") {
  fixture fx;
  const search_space s(family::load(fx.lib, "axis"), dtype::float32, reduce_op::sum, {});
  const auto presets = s.presets();
  REQUIRE_FALSE(presets.empty());
  const point p{presets.front().point, presets.front().launch};
  REQUIRE(s.check(p).ok());
  const failure f =
      failed(fx.run(s, problem::whole_array(dtype::float32, reduce_op::sum, 1024), p));
  CHECK(f.kind == failure_kind::invalid_configuration);
  CHECK_THAT(f.reason, has_text("family 'axis' reduces along an axis"));
}
