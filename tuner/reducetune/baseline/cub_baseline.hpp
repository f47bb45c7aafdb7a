// CUB on a workload, verified and timed exactly like a variant (cold and hot samples).
#pragma once

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/measure/evaluate.hpp"

namespace reducetune {

[[nodiscard]] evaluation evaluate_cub(const workload &w, const device_info &device,
                                      const evaluate_options &options, evaluation_cache &cache);
[[nodiscard]] evaluation evaluate_cub(const workload &w, const device_info &device,
                                      const evaluate_options &options = {});

} // namespace reducetune
