// What evaluating a variant gives: a measurement (every sample, statistics, bandwidth,
// verification) or a typed failure with its reason. Failures are data, never a best.
#pragma once

#include "reducetune/measure/statistics.hpp"
#include "reducetune/measure/stopping_rule.hpp"
#include "reducetune/verify/verify.hpp"

#include <string>
#include <variant>
#include <vector>

namespace reducetune {

struct timing {
  std::vector<double> samples_s; // every sample, seconds per launch sequence
  sample_statistics stats;
  stop_reason stopped = stop_reason::keep_going;
};

struct measurement {
  timing cold; // L2 flushed before each sample
  timing hot;  // back to back (empty when not asked for)
  std::uint64_t bytes_read = 0;
  unsigned launches = 0;               // kernels per sample
  double bytes_per_s = 0;              // bytes_read / cold median
  double percent_of_peak = 0;          // against 2 × memory clock × bus width / 8
  double percent_of_ceiling = 0;       // against the measured streaming ceiling (0: unknown)
  verdict check;                       // the verification of the result
};

enum class failure_kind {
  invalid_configuration, // the plan cannot be launched (grid too large, missing kernel, …)
  launch_error,          // a CUDA call failed while running it
  wrong_result,          // outside the tolerance, or not exact
  worker_crashed,        // the worker process died (a faulted context, a signal)
  timed_out,             // no reply within the time limit
  device_error,          // no GPU, or an attribute that cannot be read
  compile_error,         // NVRTC refused the variant (the reason carries its log)
};

[[nodiscard]] const char *to_string(failure_kind k) noexcept;

struct failure {
  failure_kind kind = failure_kind::launch_error;
  std::string reason;
};

using evaluation = std::variant<measurement, failure>;

} // namespace reducetune
