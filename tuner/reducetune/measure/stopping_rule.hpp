// When to stop sampling (nvbench's rule): at least min_samples and min_time_s of measured time
// (the samples' sum: nvbench's --min-time, so that a microsecond kernel's median rests on many
// samples); then stop as soon as the relative noise (rel_stddev of all samples so far) is below
// max_noise, or the time cap or max_samples is reached. Every sample is kept either way; the reason is recorded with the
// measurement so that a noisy result is visible as such.
#pragma once

#include <cstddef>
#include <span>

namespace reducetune {

// The measurement protocol (issue 3), the same for the bench, the tuner and CUB: at least this
// many cold samples, and a point may stop once their relative standard deviation is below
// this. Defined here only; the Python driver reads them as _core.MIN_SAMPLES and MAX_NOISE.
inline constexpr std::size_t protocol_min_samples = 10;
inline constexpr double protocol_max_noise = 0.01;

struct stopping_rule {
  std::size_t min_samples = protocol_min_samples;
  std::size_t max_samples = 1000;
  double max_noise = protocol_max_noise; // relative standard deviation
  double time_cap_s = 1.0;   // wall time spent sampling, including L2 flushes and syncs
  double min_time_s = 0;     // sum of the samples before convergence may stop (0: no minimum)
};

enum class stop_reason { keep_going, converged, time_cap, max_samples };

[[nodiscard]] const char *to_string(stop_reason r) noexcept;

// elapsed_s: wall time spent on this measurement so far. The time cap never stops before
// min_samples (a measurement always has at least that many samples).
[[nodiscard]] stop_reason should_stop(const stopping_rule &rule, std::span<const double> samples,
                                      double elapsed_s);

} // namespace reducetune
