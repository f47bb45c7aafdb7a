// When to stop sampling: at least min_samples and min_time_s of measured time (the samples'
// sum: nvbench's --min-time, so that a microsecond kernel's median rests on many samples); then
// stop as soon as the samples have converged, or the time cap or max_samples is reached. Every
// sample is kept either way; the reason is recorded with the measurement so that a noisy
// result is visible as such.
//
// Converged: either of two noises at most max_noise.
// - nvbench's: the relative standard deviation of all samples so far (rel_stddev < max_noise).
// - The median's (issue 25): the relative half-width of its distribution-free 95 % confidence
//   interval, (x_(h) - x_(l)) / 2 / median <= max_noise, x_(i) the i-th smallest sample, with
//   l = floor(n/2 - 1.96 sqrt(n)/2) and h = ceil(1 + n/2 + 1.96 sqrt(n)/2) clamped to [1, n]
//   (statistics.hpp, median_interval_ranks; an order-statistics interval, valid for any
//   distribution of independent samples).
// Why the second: the median is what the tuner ranks points by, and the standard deviation is
// not a robust noise. One sample slowed 10 x (a clock change, a preempting process) among 29
// identical ones of a microsecond kernel puts rel_stddev at 126 %; it is still 28 % after
// 1,000 samples (diluting it below 1 % takes some 800,000), so the point runs to max_samples
// (58-71 % of the points of H200 tunes did) while its median is known exactly. The interval's
// ranks exclude the extremes (from n = 11 on, the one largest and one smallest sample; at
// n = 30, ranks 9..22), so an outlier moves it by at most a rank; a genuinely bimodal point
// (two modes 10 % apart, nearly equally often) keeps a wide interval and runs on, as before.
// At n = 10 (min_samples) the interval is the whole range: one outlier still holds it back.
// Racing (issue 25): a tuner that already has a best may also stop a point as soon as its first
// few samples show it is far slower (outpaced_above_s): its measurement keeps those samples and
// says "outpaced", and it cannot become a best, since its median is above the caller's bound.
#pragma once

#include <cstddef>
#include <span>

namespace reducetune {

// The measurement protocol (issue 3), the same for the bench, the tuner and CUB: at least this
// many cold samples, and a point may stop once their relative standard deviation, or the
// relative half-width of their median's 95 % interval, is this or less. Defined here only;
// the Python driver reads them as _core.MIN_SAMPLES and MAX_NOISE.
inline constexpr std::size_t protocol_min_samples = 10;
inline constexpr double protocol_max_noise = 0.01;
// Racing (outpaced_above_s below): the cold samples a point takes before its median may show
// it outpaced. Three: the median of three ignores one outlier (a sample slowed by a clock
// change or a preempting process). Read by the driver as _core.OUTPACED_MIN_SAMPLES.
inline constexpr std::size_t protocol_outpaced_min_samples = 3;

struct stopping_rule {
  std::size_t min_samples = protocol_min_samples;
  std::size_t max_samples = 1000;
  double max_noise = protocol_max_noise; // rel_stddev, or the median interval's half-width
  double time_cap_s = 1.0;   // wall time spent sampling, including L2 flushes and syncs
  double min_time_s = 0;     // sum of the samples before convergence may stop (0: no minimum)
  // Stop once at least outpaced_min_samples samples are taken and their median is above this
  // (seconds; 0: never). The caller's bound sits well above its best (tuning/config.py:
  // 1.5 x), so a point cut here is not one the full protocol would have found faster.
  double outpaced_above_s = 0;
  std::size_t outpaced_min_samples = protocol_outpaced_min_samples;
};

enum class stop_reason { keep_going, converged, time_cap, max_samples, outpaced };

[[nodiscard]] const char *to_string(stop_reason r) noexcept;

// elapsed_s: wall time spent on this measurement so far. The time cap never stops before
// min_samples (a measurement always has at least that many samples); only an outpaced point
// stops with fewer.
[[nodiscard]] stop_reason should_stop(const stopping_rule &rule, std::span<const double> samples,
                                      double elapsed_s);

} // namespace reducetune
