// Statistics, the stopping rule and bandwidth on synthetic sample sequences.
#include "catch.hpp"

#include "reducetune/cuda/device_info.hpp"
#include "reducetune/measure/bandwidth.hpp"
#include "reducetune/measure/prepared_workload.hpp"
#include "reducetune/measure/statistics.hpp"
#include "reducetune/measure/stopping_rule.hpp"

#include <cmath>
#include <vector>

using namespace reducetune;

namespace {
bool near(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::fabs(b); }
} // namespace

TEST_CASE("summarize gives median, min, max, mean and relative stddev", "[measure]") {
  const std::vector<double> odd{5, 1, 4, 2, 3};
  const auto s = summarize(odd);
  CHECK(s.count == 5);
  CHECK(s.median == 3);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.mean == 3);
  CHECK(near(s.stddev, std::sqrt(10.0 / 4))); // Σ(x − 3)² = 10, n − 1 = 4
  CHECK(near(s.rel_stddev, std::sqrt(10.0 / 4) / 3));
  CHECK(summarize(std::vector<double>{4, 1, 3, 2}).median == 2.5);
  const auto one = summarize(std::vector<double>{7});
  CHECK(one.stddev == 0);
  CHECK(one.rel_stddev == 0);
}

TEST_CASE("summarize refuses empty or invalid samples", "[measure]") {
  CHECK_THROWS(summarize(std::vector<double>{}));
  CHECK_THROWS(summarize(std::vector<double>{1, -1}));
  CHECK_THROWS(summarize(std::vector<double>{1, NAN}));
}

TEST_CASE("the stopping rule needs at least min_samples, even past the time cap",
          "[measure][stopping]") {
  const stopping_rule rule;
  std::vector<double> samples(9, 1e-3);
  CHECK(should_stop(rule, samples, 100.0) == stop_reason::keep_going);
  samples.push_back(1e-3);
  CHECK(should_stop(rule, samples, 0.0) == stop_reason::converged);
}

TEST_CASE("min_time_s holds convergence back until the samples add up to it",
          "[measure][stopping]") {
  const double t = 0x1p-17; // ~7.6 us, a power of two so that the sums are exact
  stopping_rule rule;
  rule.min_time_s = 128 * t;
  rule.time_cap_s = 10;
  std::vector<double> samples(10, t); // quiet but too short
  CHECK(should_stop(rule, samples, 0.0) == stop_reason::keep_going);
  samples.resize(127, t);
  CHECK(should_stop(rule, samples, 0.0) == stop_reason::keep_going);
  samples.push_back(t);
  CHECK(should_stop(rule, samples, 0.0) == stop_reason::converged);
  // the time cap and max_samples still end it early
  samples.resize(20);
  CHECK(should_stop(rule, samples, 11.0) == stop_reason::time_cap);
  rule.max_samples = 20;
  CHECK(should_stop(rule, samples, 0.0) == stop_reason::max_samples);
}

TEST_CASE("noisy samples run on until the noise drops, the cap or max_samples",
          "[measure][stopping]") {
  stopping_rule rule;
  rule.max_samples = 50;
  rule.time_cap_s = 0.5;
  std::vector<double> samples;
  for (int i = 0; i < 20; ++i) samples.push_back(i % 2 ? 1.0 : 1.2); // ~9 % noise
  CHECK(should_stop(rule, samples, 0.1) == stop_reason::keep_going);
  CHECK(should_stop(rule, samples, 0.6) == stop_reason::time_cap);
  while (samples.size() < 50) samples.push_back(samples.size() % 2 ? 1.0 : 1.2);
  CHECK(should_stop(rule, samples, 0.1) == stop_reason::max_samples);
  // One outlier on each side is outvoted by the median's interval as soon as it leaves the
  // extremes out (n = 11: ranks 2..10), while rel_stddev is still far above 1 %.
  std::vector<double> settling{1.2, 0.8};
  stopping_rule patient;
  patient.max_samples = 100000;
  patient.time_cap_s = 1e9;
  std::size_t steps = 0;
  while (should_stop(patient, settling, 0) == stop_reason::keep_going) {
    settling.push_back(1.0);
    ++steps;
  }
  CHECK(should_stop(patient, settling, 0) == stop_reason::converged);
  CHECK(settling.size() == 11);
  CHECK(steps == 9);
  CHECK(summarize(settling).rel_stddev > 0.05);
}

TEST_CASE("the median's 95 % interval: ranks n/2 -/+ 1.96 sqrt(n)/2, rounded outward",
          "[measure][stopping]") {
  // n = 10: 5 -/+ 3.10 -> [1.9, 9.1] -> ranks 1 and 10, the whole range
  CHECK(median_interval_ranks(10).low == 1);
  CHECK(median_interval_ranks(10).high == 10);
  // n = 11: 5.5 -/+ 3.25 -> floor(2.25) = 2, ceil(1 + 8.75) = 10
  CHECK(median_interval_ranks(11).low == 2);
  CHECK(median_interval_ranks(11).high == 10);
  // n = 30: 15 -/+ 5.37 -> floor(9.63) = 9, ceil(21.37) = 22
  CHECK(median_interval_ranks(30).low == 9);
  CHECK(median_interval_ranks(30).high == 22);
  // n = 100: 50 -/+ 9.8 -> 40 and 61 (the textbook ranks for n = 100)
  CHECK(median_interval_ranks(100).low == 40);
  CHECK(median_interval_ranks(100).high == 61);
  CHECK(median_interval_ranks(1).low == 1); // clamped
  CHECK(median_interval_ranks(1).high == 1);
  // summarize reports the sorted samples at those ranks
  std::vector<double> ramp;
  for (int i = 30; i >= 1; --i) ramp.push_back(i);
  const auto s = summarize(ramp);
  CHECK(s.median_low == 9);
  CHECK(s.median_high == 22);
  CHECK(near(s.median_rel_halfwidth(), (22.0 - 9.0) / 2 / 15.5));
}

namespace {
// 30 samples within +/-0.2 % of 10 us, in a fixed order (no generator: the test's sets are its
// evidence).
std::vector<double> tight_samples() {
  std::vector<double> v;
  for (int i = 0; i < 30; ++i) v.push_back(10e-6 * (1 + 0.002 * ((i * 7) % 11 - 5) / 5.0));
  return v;
}

stopping_rule uncapped() {
  stopping_rule r;
  r.time_cap_s = 1e9;
  return r;
}
} // namespace

TEST_CASE("one 10x outlier among 30 tight samples converges by the median, not by stddev",
          "[measure][stopping]") {
  std::vector<double> samples = tight_samples();
  samples[17] *= 10; // a sample slowed by a clock change or a preempting process
  const auto s = summarize(samples);
  CHECK(s.rel_stddev > 1.0);              // nvbench's noise alone would keep going
  CHECK(s.median_rel_halfwidth() < 0.01); // the median is known to better than 1 %
  CHECK(should_stop(uncapped(), samples, 0) == stop_reason::converged);
  // the same set without the median's interval (rel_stddev alone) is what ran on before
  CHECK_FALSE(s.rel_stddev < protocol_max_noise);
}

TEST_CASE("a bimodal point (two modes 10 % apart, nearly equally often) does not converge",
          "[measure][stopping]") {
  // 48 % and 52 %: the median lies near the boundary of the modes, and its interval spans both.
  // (Two thirds in one mode would converge, rightly: the median is then that mode's.)
  std::vector<double> samples;
  for (int i = 0; i < 200; ++i) samples.push_back(i % 25 < 12 ? 10e-6 : 11e-6);
  const auto s = summarize(samples);
  CHECK(s.median_rel_halfwidth() > 0.01);
  CHECK(s.rel_stddev > 0.01);
  stopping_rule rule = uncapped();
  rule.max_samples = 1000;
  CHECK(should_stop(rule, samples, 0) == stop_reason::keep_going);
  rule.max_samples = 200;
  CHECK(should_stop(rule, samples, 0) == stop_reason::max_samples);
}

TEST_CASE("fewer than min_samples never converge, however tight", "[measure][stopping]") {
  std::vector<double> samples = tight_samples();
  samples.resize(protocol_min_samples - 1);
  CHECK(summarize(samples).median_rel_halfwidth() < 0.01);
  CHECK(should_stop(uncapped(), samples, 0) == stop_reason::keep_going);
  CHECK(should_stop(uncapped(), samples, 1e12) == stop_reason::keep_going); // nor the cap
}

TEST_CASE("rel_stddev alone still converges a spread whose median interval is wide",
          "[measure][stopping]") {
  // ten samples spread evenly over +/-1.4 %: stddev 0.98 %, but at n = 10 the interval is the
  // whole range (1.4 % half-width): either noise stops
  std::vector<double> samples;
  for (int i = 0; i < 10; ++i) samples.push_back(1.0 + 0.028 * (i / 9.0 - 0.5));
  const auto s = summarize(samples);
  CHECK(s.median_rel_halfwidth() > 0.01);
  CHECK(s.rel_stddev < 0.01);
  CHECK(should_stop(uncapped(), samples, 0) == stop_reason::converged);
}

TEST_CASE("bandwidth is bytes over time, peak is 2 x clock x bus width / 8", "[measure]") {
  CHECK(bandwidth_bytes_per_s(4'000'000'000ULL, 2.0) == 2e9);
  CHECK_THROWS(bandwidth_bytes_per_s(1, 0.0));
  // An H100 SXM reports 2 619 000 kHz and 5120 bits: 3.35 TB/s.
  const double peak = theoretical_peak_bytes_per_s(2'619'000, 5120);
  CHECK(near(peak, 2.0 * 2.619e9 * 640));
  CHECK(percent_of(peak / 2, peak) == 50.0);
  CHECK(percent_of(1, 0) == 0.0);
}

TEST_CASE("Small inputs are kept in several copies for rotation, large ones in one",
          "[measure]") {
  constexpr std::uint64_t MiB = 1ULL << 20;
  CHECK(prepared_workload::copies_for(4) == 8);        // n = 1
  CHECK(prepared_workload::copies_for(4 * MiB) == 8);  // 2^20 int32: capped at 8
  CHECK(prepared_workload::copies_for(32 * MiB) == 8); // 256 MiB in all
  CHECK(prepared_workload::copies_for(64 * MiB) == 4); // 2^24 float32
  CHECK(prepared_workload::copies_for(100 * MiB) == 2);
  CHECK(prepared_workload::copies_for(256 * MiB) == 1);
  CHECK(prepared_workload::copies_for(4096 * MiB) == 1); // 2^30 float32
  CHECK(prepared_workload::copies_for(0) == 1);
}
