// Sampling for a GPU test of the runner's plumbing rather than of a number: a few cold samples
// within a short time cap and no hot samples, so that a test over many points stays quick. A
// test that wants more (hot samples, a race, no graph) changes what it returns.
#pragma once

#include "reducetune/measure/evaluate.hpp"

#include <cstddef>

namespace rt_test {

inline reducetune::evaluate_options short_sampling(std::size_t max_samples, double time_cap_s) {
  reducetune::evaluate_options o;
  o.cold_rule.max_samples = max_samples;
  o.cold_rule.time_cap_s = time_cap_s;
  o.hot = false;
  return o;
}

} // namespace rt_test
