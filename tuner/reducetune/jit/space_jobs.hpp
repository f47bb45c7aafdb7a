// Which points to compile when the whole space is checked: every preset of every family, and
// all valid points or a seeded sample of them, for every element type and operator. Shared by
// `reducetune-compile` and the CI compile test, so that both compile the same set.
#pragma once

#include "reducetune/jit/compiler.hpp"
#include "reducetune/space/device_limits.hpp"
#include "reducetune/space/element.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/space/variant.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace reducetune {

struct compile_job {
  std::string label; // the variant's label
  compile_request request;
};

struct job_selection {
  bool all = false;           // every valid point instead of a sample
  std::size_t sample = 500;   // valid points in all, spread evenly over dtype x op
  std::uint64_t seed = search_space::default_seed;
  std::string family;         // only this family ("" = all); its points are sampled too
  std::vector<dtype> dtypes{std::begin(all_dtypes), std::end(all_dtypes)};
  std::vector<reduce_op> ops{std::begin(all_ops), std::end(all_ops)};
  // Families whose points (not only presets) are sampled when `family` is empty.
  std::vector<std::string> sampled_families{"tunable"};
};

[[nodiscard]] std::vector<compile_job> select_jobs(const template_library &lib,
                                                   const device_limits &limits,
                                                   const job_selection &selection);

} // namespace reducetune
