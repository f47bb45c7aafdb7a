// A small results file of axis measurements at a few shapes, written with the store's own API
// (the db and runtime tests of the axis exports and tables read it). One H100, float32 sum:
//   rows (2^20, 8, 1):      thread_columns
//   rows (2^16, 1024, 1):   warp_rows_vec2 fastest (not batch_invariant), warp_rows slower
//   rows (1024, 2^16, 1):   block_rows
//   rows (16, 2^22, 1):     warp_rows_vec2 only (no batch_invariant point at this shape)
//   columns (1, 1024, 2^16): thread_columns
//   columns (1, 2^16, 16):  tile_columns_split
// and one whole-array measurement, so that both kinds of table are in the file.
#pragma once

#include "export_test_support.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/space/space.hpp"

#include <string>

namespace rt_test {

inline const reducetune::search_space &axis_space() {
  static const reducetune::search_space s(
      reducetune::family::load(embedded_library(), "axis"), reducetune::dtype::float32,
      reducetune::reduce_op::sum, reducetune::device_limits::for_arch("sm_90"));
  return s;
}

// The measurement of the axis preset `preset` at `shape`, its median `seconds`.
inline reducetune::db::measurement_record axis_measurement(std::int64_t device,
                                                           const std::string &preset,
                                                           reducetune::reduction_shape shape,
                                                           double seconds) {
  const auto &s = axis_space();
  const auto p = s.base(preset, {false, true});
  REQUIRE(p);
  auto m = measurement(device, shape.r, 0, seconds);
  m.variant = reducetune::db::variant_record_of(s, *p);
  m.launch_label = reducetune::launch_label(s.decl(), *p);
  m.launch_parameters_json = reducetune::db::launch_parameters_json(s, *p);
  m.workload.outer = shape.outer;
  m.workload.inner = shape.inner;
  return m;
}

inline void record_axis_results(reducetune::db::store &s, std::int64_t dev) {
  s.record_measurement(axis_measurement(dev, "thread_columns", {1 << 20, 8, 1}, 2e-4));
  s.record_measurement(axis_measurement(dev, "warp_rows_vec2", {1 << 16, 1024, 1}, 1.0e-4));
  s.record_measurement(axis_measurement(dev, "warp_rows", {1 << 16, 1024, 1}, 1.1e-4));
  s.record_measurement(axis_measurement(dev, "block_rows", {1024, 1 << 16, 1}, 1.2e-4));
  s.record_measurement(axis_measurement(dev, "warp_rows_vec2", {16, 1 << 22, 1}, 1.3e-4));
  s.record_measurement(axis_measurement(dev, "thread_columns", {1, 1024, 1 << 16}, 1.4e-4));
  s.record_measurement(axis_measurement(dev, "tile_columns_split", {1, 1 << 16, 16}, 1.5e-4));
  s.record_measurement(measurement(dev, 1 << 20, 512, 1e-4)); // the whole array
}

} // namespace rt_test
