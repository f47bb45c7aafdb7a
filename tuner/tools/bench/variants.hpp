// What reducetune-bench measures: a bench_variant is one row's kernel (a seed, a preset of the
// tunable family, or one of the racy mode's counterparts), compiled and loaded, with its
// launch plan. table_variants picks the table's set (harris0..harris6, then the tunable
// presets with `good` first); racy_variants the racy mode's set. Both honour --only.
#pragma once

#include "bench/options.hpp"

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/space/space.hpp"

#include <memory>
#include <string>
#include <vector>

namespace reducetune::bench {

struct bench_variant {
  std::string name;  // "harris3", "good", "CUB"
  std::string label; // the variant label (CUB: "cub::DeviceReduce")
  std::string launch;
  std::string flag;  // a parameter value's warning (racy), "" when none
  bool slow = false; // harris0..2: capped at --slow-max-log2
  launch_plan plan;
  std::shared_ptr<const compiled_program> program; // null for CUB
  std::shared_ptr<loaded_module> module;
};

// The seeds harris0..harris6 (their own launch configuration), then the tunable family's
// presets, `good` first. A variant that is not valid here or does not compile is reported on
// stderr and left out.
std::vector<bench_variant> table_variants(const options &o, const device_info &device,
                                          compiler &comp, dtype t);

// The racy mode's set: `good` (shuffle: the control) and its volatile_unsafe/volatile_sync
// counterparts for two block strategies, harris6_point and its volatile_sync counterpart, and
// the seeds harris4/5/6, reduceUnrollWarps8 and harris5_shfl.
std::vector<bench_variant> racy_variants(const options &o, const device_info &device,
                                         compiler &comp, dtype t);

} // namespace reducetune::bench
