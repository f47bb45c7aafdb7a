// On the GPU: device attributes are sane, CUB gives verified results for every dtype × op on
// hostile inputs, and the streaming ceiling stays below the theoretical peak and above CUB.
#include "catch.hpp"
#include "short_sampling.hpp"

#include "reducetune/baseline/cub_baseline.hpp"
#include "reducetune/baseline/streaming_ceiling.hpp"
#include "reducetune/cuda/device_info.hpp"
#include "reducetune/measure/prepared_workload.hpp"

#include <variant>

using namespace reducetune;

TEST_CASE("the device reports what the peak formula needs", "[gpu][cuda]") {
  const device_info d = query_device();
  CHECK_FALSE(d.name.empty());
  CHECK(d.uuid.rfind("GPU-", 0) == 0);
  CHECK(d.sm_count > 0);
  CHECK(d.l2_bytes > 0);
  CHECK(d.bus_width_bits > 0);
  CHECK(d.memory_clock_khz > 0);
  CHECK(d.peak_bytes_per_s() > 1e11);
}

TEST_CASE("CUB is verified for every type x operator x pattern", "[gpu][baseline]") {
  const device_info d = query_device();
  const evaluate_options quick = rt_test::short_sampling(10, 1.0); // 10 cold samples, no hot
  for (dtype t : {dtype::int32, dtype::int64, dtype::float32, dtype::float64})
    for (reduce_op op : {reduce_op::sum, reduce_op::min, reduce_op::max, reduce_op::prod})
      for (data_pattern p : all_data_patterns())
        for (std::uint64_t n : {1ULL, 1000003ULL}) {
          workload w{t, op, n, p, 42, 1}; // offset 1: not 16-byte aligned
          const evaluation e = evaluate_cub(w, d, quick);
          INFO(to_string(t) << " " << to_string(op) << " " << to_string(p) << " n=" << n);
          if (const auto *f = std::get_if<failure>(&e)) FAIL(f->reason);
          const auto &m = std::get<measurement>(e);
          CHECK(m.check.ok);
          CHECK(m.cold.samples_s.size() == 10);
        }
}

TEST_CASE("the streaming ceiling is positive and below the theoretical peak", "[gpu][baseline]") {
  const device_info d = query_device();
  const ceiling_result c = measure_streaming_ceiling(d, 1ULL << 28);
  CHECK(c.cold.samples_s.size() >= 10);
  CHECK(c.bytes_per_s > 0.3 * d.peak_bytes_per_s());
  CHECK(c.bytes_per_s < 1.05 * d.peak_bytes_per_s());
}

TEST_CASE("no reduction streams faster than the ceiling: CUB at 2^30 floats stays below it",
          "[gpu][baseline]") {
  const device_info d = query_device();
  const ceiling_result c = measure_streaming_ceiling(d);
  INFO("ceiling " << c.bytes_per_s / 1e9 << " GB/s by " << c.shape);
  CHECK(c.shapes.size() >= 2);
  evaluate_options o;
  o.hot = false;
  const evaluation e = evaluate_cub(workload{dtype::float32, reduce_op::sum, 1ULL << 30}, d, o);
  if (const auto *f = std::get_if<failure>(&e)) FAIL(f->reason);
  const double cub = std::get<measurement>(e).bytes_per_s;
  INFO("CUB " << cub / 1e9 << " GB/s");
  CHECK(cub <= 1.01 * c.bytes_per_s); // 1 %: the two medians' own noise
}

TEST_CASE("CUB's result reports the time its call spent preparing the workload",
          "[gpu][baseline][times]") {
  // The tuner asks CUB first in each unit, so CUB's call is where the unit's data, reference
  // and input copies are made: its times must say so, or the tuner's breakdown shows seconds
  // per unit as "other" (issue 25 Z, item 1).
  const device_info d = query_device();
  const evaluate_options quick = rt_test::short_sampling(10, 1.0); // 10 cold samples, no hot
  evaluation_cache cache;
  const workload w{dtype::float32, reduce_op::sum, 1ULL << 24};
  const evaluation first = evaluate_cub(w, d, quick, cache);
  if (const auto *f = std::get_if<failure>(&first)) FAIL(f->reason);
  const evaluation_times &cold = times_of(first);
  CHECK(cold.prepare_s > 0);
  CHECK(cold.sampling_s > 0);
  CHECK(cold.compile_s == 0); // CUB is compiled into the library by nvcc
  const evaluation second = evaluate_cub(w, d, quick, cache);
  if (const auto *f = std::get_if<failure>(&second)) FAIL(f->reason);
  CHECK(times_of(second).prepare_s < cold.prepare_s / 2); // 2^24 elements made once
}
