#include "reducetune/measure/statistics.hpp"

#include "reducetune/errors.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace reducetune {

namespace {

// z of a two-sided 95 % interval
constexpr double z95 = 1.96;

} // namespace

double sample_statistics::median_rel_halfwidth() const noexcept {
  return median > 0 ? (median_high - median_low) / 2 / median : 0;
}

rank_pair median_interval_ranks(std::size_t n) noexcept {
  if (n == 0) return {};
  const double half = static_cast<double>(n) / 2;
  const double spread = z95 * std::sqrt(static_cast<double>(n)) / 2;
  const double low = std::max(1.0, std::floor(half - spread));
  const double high = std::min(static_cast<double>(n), std::ceil(1 + half + spread));
  return {static_cast<std::size_t>(low), static_cast<std::size_t>(high)};
}

sample_statistics summarize(std::span<const double> samples) {
  if (samples.empty()) throw invalid_configuration("no samples to summarize");
  for (double s : samples)
    if (!std::isfinite(s) || s < 0)
      throw invalid_configuration("a sample time must be finite and non-negative");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  sample_statistics st;
  st.count = sorted.size();
  const std::size_t mid = st.count / 2;
  st.median = st.count % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  st.min = sorted.front();
  st.max = sorted.back();
  const rank_pair ranks = median_interval_ranks(st.count);
  st.median_low = sorted[ranks.low - 1];
  st.median_high = sorted[ranks.high - 1];
  double sum = 0;
  for (double s : sorted) sum += s;
  st.mean = sum / static_cast<double>(st.count);
  if (st.count > 1) {
    double squares = 0;
    for (double s : sorted) squares += (s - st.mean) * (s - st.mean);
    st.stddev = std::sqrt(squares / static_cast<double>(st.count - 1));
  }
  st.rel_stddev = st.mean > 0 ? st.stddev / st.mean : 0;
  return st;
}

} // namespace reducetune
