#include "reducetune/measure/stopping_rule.hpp"

#include "reducetune/measure/statistics.hpp"

namespace reducetune {

const char *to_string(stop_reason r) noexcept {
  switch (r) {
  case stop_reason::keep_going: return "keep_going";
  case stop_reason::converged: return "converged";
  case stop_reason::time_cap: return "time_cap";
  case stop_reason::max_samples: return "max_samples";
  case stop_reason::outpaced: return "outpaced";
  }
  return "?";
}

namespace {

// Either noise (the header says why two): nvbench's rel_stddev, or the median's interval.
bool converged(const stopping_rule &rule, const sample_statistics &s) {
  return s.rel_stddev < rule.max_noise || s.median_rel_halfwidth() <= rule.max_noise;
}

} // namespace

// The sampler asks after every sample while the GPU waits for the next one: the samples are
// summarized once per call, for racing and convergence alike (a sort: ~2 us at 200 samples).
stop_reason should_stop(const stopping_rule &rule, std::span<const double> samples,
                        double elapsed_s) {
  // racing: the median of the first few samples may already show the point slower than the
  // caller's bound
  const bool racing = rule.outpaced_above_s > 0 && samples.size() >= rule.outpaced_min_samples;
  if (!racing && samples.size() < rule.min_samples) return stop_reason::keep_going;
  const sample_statistics s = summarize(samples);
  if (racing && s.median > rule.outpaced_above_s) return stop_reason::outpaced;
  if (samples.size() < rule.min_samples) return stop_reason::keep_going;
  const bool enough_time = s.mean * static_cast<double>(samples.size()) >= rule.min_time_s;
  if (enough_time && converged(rule, s)) return stop_reason::converged;
  if (samples.size() >= rule.max_samples) return stop_reason::max_samples;
  if (elapsed_s >= rule.time_cap_s) return stop_reason::time_cap;
  return stop_reason::keep_going;
}

} // namespace reducetune
