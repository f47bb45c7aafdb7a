// Summary statistics of a measurement's samples (seconds per launch sequence).
#pragma once

#include <cstddef>
#include <span>

namespace reducetune {

struct sample_statistics {
  std::size_t count = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;     // sample standard deviation (n − 1); 0 for one sample
  double rel_stddev = 0; // stddev / mean: nvbench's "noise"
  // The distribution-free 95 % confidence interval of the median (median_interval_ranks):
  // the sorted samples at those ranks. Its relative half-width is the stopping rule's second
  // noise (stopping_rule.hpp says why).
  double median_low = 0;
  double median_high = 0;
  [[nodiscard]] double median_rel_halfwidth() const noexcept;
};

// 1-based ranks (low, high) of the order statistics bounding the median's distribution-free
// 95 % confidence interval among n sorted samples: n/2 ∓ 1.96·√n/2 (the high one shifted by 1,
// the normal approximation of the binomial(n, 1/2) count of samples below the median), rounded
// outward (floor, ceil) and clamped to [1, n], so the interval covers at least 95 %.
struct rank_pair {
  std::size_t low = 0, high = 0;
};
[[nodiscard]] rank_pair median_interval_ranks(std::size_t n) noexcept;

// Throws invalid_configuration for an empty span or a negative or non-finite sample.
[[nodiscard]] sample_statistics summarize(std::span<const double> samples);

} // namespace reducetune
