#include "reducetune/measure/statistics.hpp"

#include "reducetune/errors.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace reducetune {

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
