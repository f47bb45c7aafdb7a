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
};

// Throws invalid_configuration for an empty span or a negative or non-finite sample.
[[nodiscard]] sample_statistics summarize(std::span<const double> samples);

} // namespace reducetune
