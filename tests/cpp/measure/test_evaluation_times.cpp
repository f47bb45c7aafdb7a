// Where an evaluation's time goes (issue 25): the evaluation_times a measurement and a failure
// carry, without a GPU. measurement_of takes sampling and verification from the sampled
// copies; a point that compiles carries its compile time even when the device then fails it.
#include "catch.hpp"
#include "evaluate_fixture.hpp"

#include "reducetune/measure/sample_copies.hpp"

#include <chrono>
#include <thread>
#include <variant>

using namespace reducetune;
using rt_test::failed;

namespace {

// Copies sampled as a runner would leave them: 10 us cold samples, the loops' and the checks'
// wall times set to distinct values so that a mix-up shows.
sampled_copies sampled(bool right_before, bool right_after) {
  sampled_copies r;
  r.before.ok = right_before;
  r.before.reason = right_before ? "" : "expected 1, got 2";
  r.after.ok = right_after;
  r.cold.samples_s.assign(10, 10e-6);
  r.cold.stats = summarize(r.cold.samples_s);
  r.cold.wall_s = 0.5;
  r.hot.wall_s = 0.25;
  r.verify_s = 0.125;
  r.graphs_s = 0.0625;
  return r;
}

workload small_floats() {
  workload w;
  w.type = dtype::float32;
  w.op = reduce_op::sum;
  w.n = 1024;
  return w;
}

} // namespace

TEST_CASE("a measurement's sampling time is its cold and hot loops, its verify time the checks",
          "[measure][times]") {
  evaluation e = measurement_of(sampled(true, true), small_floats(), 1, device_info{}, {});
  REQUIRE(std::holds_alternative<measurement>(e));
  const evaluation_times &t = times_of(e);
  CHECK(t.sampling_s == 0.75);
  CHECK(t.verify_s == 0.125);
  CHECK(t.compile_s == 0); // measurement_of neither compiles nor prepares
  CHECK(t.prepare_s == 0);
}

TEST_CASE("a wrong result keeps what it cost before it failed", "[measure][times]") {
  const failure before = failed(measurement_of(sampled(false, true), small_floats(), 1,
                                               device_info{}, {}));
  CHECK(before.kind == failure_kind::wrong_result);
  CHECK(before.times.verify_s == 0.125);
  const failure after =
      failed(measurement_of(sampled(true, false), small_floats(), 1, device_info{}, {}));
  CHECK(after.kind == failure_kind::wrong_result);
  CHECK(after.times.sampling_s == 0.75);
}

TEST_CASE("a point carries its compile time, also when the device then fails it",
          "[measure][times]") {
  rt_test::evaluate_fixture fx;
  fx.no_gpu.cc_major = 9; // NVRTC compiles for sm_90 without a GPU; the device then fails
  const search_space s(family::load(fx.lib, "tunable"), dtype::float32, reduce_op::sum, {});
  const point p = s.point_of({});
  REQUIRE(s.check(p).ok());
  const evaluation e = fx.run(s, problem::whole_array(dtype::float32, reduce_op::sum, 1024), p);
  const evaluation_times &t = times_of(e);
  CHECK(t.compile_s > 0);
  CHECK(t.sampling_s == 0); // never sampled
  // An invalid point is refused before the compiler: nothing to count
  device_limits small{};
  small.max_threads_per_block = 128;
  const search_space tight(family::load(fx.lib, "tunable"), dtype::float32, reduce_op::sum,
                           small);
  const point big = tight.point_of({{"block_size", std::int64_t{256}}});
  CHECK(times_of(fx.run(tight, problem::whole_array(dtype::float32, reduce_op::sum, 1024), big))
            .compile_s == 0);
}

TEST_CASE("prepare's parts: graphs from the sampled copies, setup and teardown from the clock",
          "[measure][times]") {
  // measurement_of carries the graphs' time, a failure's times too
  const evaluation ok = measurement_of(sampled(true, true), small_floats(), 1, device_info{}, {});
  CHECK(times_of(ok).graphs_s == 0.0625);
  const failure wrong = failed(measurement_of(sampled(false, true), small_floats(), 1,
                                              device_info{}, {}));
  CHECK(wrong.times.graphs_s == 0.0625);

  // a runner's clock: setup until ready(), teardown from done() to stamp()
  prepare_clock clock;
  std::this_thread::sleep_for(std::chrono::milliseconds(20)); // the runner's setup
  clock.ready();
  evaluation e = measurement_of(sampled(true, true), small_floats(), 1, device_info{}, {});
  clock.done();
  std::this_thread::sleep_for(std::chrono::milliseconds(10)); // its teardown
  clock.stamp(e);
  CHECK(times_of(e).setup_s >= 0.020);
  CHECK(times_of(e).setup_s < 1.0); // seconds since the clock was made, not since the epoch
  CHECK(times_of(e).teardown_s >= 0.010);
  CHECK(times_of(e).teardown_s < 1.0);

  // a runner that ended before it measured (done() never called) stamps no teardown
  prepare_clock unfinished;
  unfinished.ready();
  evaluation f = failure{failure_kind::launch_error, "launch failed"};
  times_of(f).teardown_s = 3.0;
  unfinished.stamp(f);
  CHECK(times_of(f).teardown_s == 0.0);
}
