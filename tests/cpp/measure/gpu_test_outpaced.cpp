// On the GPU (issue 25): racing through evaluate(), the runner every measurement uses. The
// tunable family's "good" preset, float32 sum at 2^24, hot samples asked for:
// - with a bound no kernel can beat (1 ns), the cold samples stop at 3 as "outpaced", no hot
//   sample is taken, and the measurement is still verified before and after sampling;
// - with a bound no kernel reaches (10 s), the same point gets the full protocol (at least 10
//   cold samples, hot samples) and a stop reason other than outpaced.
#include "catch.hpp"
#include "good_point_context.hpp"
#include "short_sampling.hpp"

#include "reducetune/jit/compiler.hpp"
#include "reducetune/measure/evaluate.hpp"
#include "reducetune/space/space.hpp"

#include <variant>

using namespace reducetune;

namespace {

evaluate_options racing(double above_s) {
  evaluate_options o = rt_test::short_sampling(50, 0.2);
  o.hot_rule = o.cold_rule;
  o.hot = true;
  o.cold_rule.outpaced_above_s = above_s;
  return o;
}

} // namespace

TEST_CASE("an outpaced point stops after 3 cold samples and takes no hot ones", "[gpu][race]") {
  rt_test::good_point_context gpu;

  const evaluation raced = gpu.run(racing(1e-9));
  REQUIRE(std::holds_alternative<measurement>(raced));
  const auto &r = std::get<measurement>(raced);
  CHECK(r.check.ok);
  CHECK(r.cold.stopped == stop_reason::outpaced);
  CHECK(r.cold.samples_s.size() == 3);
  CHECK(r.hot.samples_s.empty());
  CHECK(r.cold.stats.median > 1e-9);

  const evaluation full = gpu.run(racing(10.0));
  REQUIRE(std::holds_alternative<measurement>(full));
  const auto &m = std::get<measurement>(full);
  CHECK(m.check.ok);
  CHECK(m.cold.stopped != stop_reason::outpaced);
  CHECK(m.cold.samples_s.size() >= protocol_min_samples);
  CHECK(!m.hot.samples_s.empty());
}
