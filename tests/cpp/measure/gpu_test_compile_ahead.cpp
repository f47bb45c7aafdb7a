// On the GPU (issue 25): a point whose variant the background compiled (jit/compile_ahead) is
// measured without running NVRTC again, and an evaluation that asks for a variant while the
// background compiles it waits for that compile, counted in its compile_s, instead of
// compiling it a second time. The tunable family's "good" preset, float32 sum at 2^24.
#include "catch.hpp"
#include "good_point_context.hpp"
#include "short_sampling.hpp"

#include "reducetune/jit/compile_ahead.hpp"
#include "reducetune/jit/variant_request.hpp"

#include <chrono>
#include <variant>

using namespace reducetune;

namespace {

compile_request request_of(const rt_test::good_point_context &gpu) {
  return request_for(gpu.f, gpu.p.compile, gpu.device.arch());
}

double parts_of(const evaluation_times &t) {
  return t.compile_s + t.prepare_s + t.sampling_s + t.verify_s;
}

} // namespace

TEST_CASE("a point compiled ahead is measured without NVRTC", "[gpu][ahead]") {
  rt_test::good_point_context gpu;
  compile_ahead ahead(gpu.jit, 1);
  ahead.queue({request_of(gpu)});
  ahead.wait_idle();
  REQUIRE(gpu.jit.programs_compiled() == 1);
  const evaluation e = gpu.run(rt_test::short_sampling(20, 0.2));
  REQUIRE(std::holds_alternative<measurement>(e));
  CHECK(gpu.jit.programs_compiled() == 1);
  CHECK(times_of(e).compile_s < 0.01); // a cache lookup (NVRTC takes tens of ms)
  CHECK(times_of(e).sampling_s > 0);
}

TEST_CASE("an evaluation joins the background's compile of its variant and counts the wait",
          "[gpu][ahead]") {
  rt_test::good_point_context gpu;
  compile_ahead ahead(gpu.jit, 1);
  ahead.queue({request_of(gpu)});
  const auto begin = std::chrono::steady_clock::now();
  const evaluation e = gpu.run(rt_test::short_sampling(20, 0.2));
  const double wall = seconds_since(begin);
  ahead.wait_idle();
  REQUIRE(std::holds_alternative<measurement>(e));
  CHECK(gpu.jit.programs_compiled() == 1); // joined, or compiled first and left to it
  CHECK(times_of(e).compile_s > 0.005);    // the wait, or its own compile
  CHECK(parts_of(times_of(e)) <= wall);    // each step counted once
}
