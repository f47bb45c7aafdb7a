// On the GPU (issue 25): where an evaluation's time goes, as evaluate() reports it. The tunable
// family's "good" preset, float32 sum at 2^24, with a fresh compiler and cache (so it compiles
// and prepares its workload), then again with both warm:
// - every part is positive the first time, and the parts add up to no more than the call's
//   own wall time (each step counted once);
// - the sampling loop's wall time is at least the GPU time of its samples;
// - prepare's parts (workload, setup, graphs, teardown) lie inside it;
// - the second call's compile (the compiler's cache) and prepare (the workload cached) are far
//   below the first's.
#include "catch.hpp"
#include "good_point_context.hpp"
#include "short_sampling.hpp"

#include "reducetune/jit/compiler.hpp"
#include "reducetune/measure/evaluate.hpp"
#include "reducetune/space/space.hpp"

#include <chrono>
#include <numeric>
#include <variant>

using namespace reducetune;

namespace {

double sum_of(const evaluation_times &t) {
  return t.compile_s + t.prepare_s + t.sampling_s + t.verify_s;
}

} // namespace

TEST_CASE("an evaluation reports its compile, prepare, sampling and verify times",
          "[gpu][times]") {
  rt_test::good_point_context gpu;
  const evaluate_options options = rt_test::short_sampling(50, 0.2);

  const auto begin = std::chrono::steady_clock::now();
  const evaluation first = gpu.run(options);
  const double first_wall = seconds_since(begin);
  REQUIRE(std::holds_alternative<measurement>(first));
  const auto &m = std::get<measurement>(first);
  const evaluation_times &t = m.times;
  CHECK(t.compile_s > 0);
  CHECK(t.prepare_s > 0);
  CHECK(t.sampling_s > 0);
  CHECK(t.verify_s > 0);
  CHECK(sum_of(t) <= first_wall);
  const double gpu_s = std::accumulate(m.cold.samples_s.begin(), m.cold.samples_s.end(), 0.0);
  CHECK(t.sampling_s >= gpu_s);

  // prepare_s's parts, each inside it: the workload (made now), the point's module, scratch
  // and stream, its graphs, their teardown
  CHECK(t.workload_s > 0);
  CHECK(t.setup_s > 0);
  CHECK(t.teardown_s > 0);
  CHECK(t.graphs_s >= 0); // 0 where the options time direct launches
  CHECK(t.workload_s + t.setup_s + t.graphs_s + t.teardown_s <= t.prepare_s + 1e-9);

  const evaluation again = gpu.run(options);
  REQUIRE(std::holds_alternative<measurement>(again));
  const evaluation_times &warm = times_of(again);
  CHECK(warm.compile_s < t.compile_s / 2); // the compiler's cache, not NVRTC
  CHECK(warm.prepare_s < t.prepare_s / 2); // 2^24 elements generated and uploaded once
  CHECK(warm.workload_s < t.workload_s / 2);
  CHECK(warm.setup_s > 0);
  CHECK(warm.sampling_s > 0);
}
