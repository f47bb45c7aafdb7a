// What evaluating a variant gives: a measurement (every sample, statistics, bandwidth,
// verification) or a typed failure with its reason. Failures are data, never a best.
#pragma once

#include "reducetune/measure/statistics.hpp"
#include "reducetune/measure/stopping_rule.hpp"
#include "reducetune/verify/verify.hpp"

#include <chrono>
#include <string>
#include <variant>
#include <vector>

namespace reducetune {

struct timing {
  std::vector<double> samples_s; // every sample, seconds per launch sequence
  sample_statistics stats;
  stop_reason stopped = stop_reason::keep_going;
  double wall_s = 0; // host wall time of the timed loop (L2 flushes, gates and syncs included)
};

// Host seconds since t0 (steady clock): the one clock of evaluation_times and the time cap.
[[nodiscard]] double seconds_since(std::chrono::steady_clock::time_point t0) noexcept;

// Where one evaluation's host wall time went (issue 25: a tuner's "measuring" is these, summed
// over its points, plus the worker's round trip). Each step counted once; 0 for a step the
// evaluation did not reach (a compile failure has only compile_s).
struct evaluation_times {
  double compile_s = 0;  // NVRTC, or the build cache's lookup (jit/compiler)
  // the workload's data, input copies and reference (kept between points by the
  // evaluation_cache: mostly 0), loading the module, the sequences' buffers, CUDA graphs
  double prepare_s = 0;
  double sampling_s = 0; // the timed loops, cold and hot (timing::wall_s)
  double verify_s = 0;   // every copy run once and checked, before and after sampling
  // prepare_s's parts (issue 25: 2.1 ms a point in the 768-point sweep, more than its
  // sampling), each also inside prepare_s: the workload from the cache (or made), the point's
  // module, scratch and stream made (and an axis point's reference), its CUDA graphs captured
  // and instantiated, and all of it destroyed after; prepare_s less these is the rest
  double workload_s = 0;
  double setup_s = 0;
  double graphs_s = 0;
  double teardown_s = 0;
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
  evaluation_times times;
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
  evaluation_times times{}; // what it cost before it failed
};

using evaluation = std::variant<measurement, failure>;

// The times of a measurement or a failure, whichever e holds.
[[nodiscard]] evaluation_times &times_of(evaluation &e) noexcept;
[[nodiscard]] const evaluation_times &times_of(const evaluation &e) noexcept;

// A runner's share of prepare_s split (evaluation_times setup_s and teardown_s): made by
// measure_on as the runner begins, ready() once the runner's module, scratch and stream exist,
// done() once it measured; stamp(e), after they were destroyed, writes both into e's times.
class prepare_clock {
public:
  void ready() noexcept { m_setup_s = seconds_since(m_begin); }
  void done() noexcept {
    m_done = std::chrono::steady_clock::now();
    m_finished = true;
  }
  void stamp(evaluation &e) const noexcept {
    evaluation_times &t = times_of(e);
    t.setup_s = m_setup_s;
    t.teardown_s = m_finished ? seconds_since(m_done) : 0.0;
  }

private:
  std::chrono::steady_clock::time_point m_begin = std::chrono::steady_clock::now(), m_done;
  double m_setup_s = 0;
  bool m_finished = false;
};

} // namespace reducetune
