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
  // The noise falls below 1 % once enough identical samples dilute the outliers.
  std::vector<double> settling{1.2, 1.0};
  stopping_rule patient;
  patient.max_samples = 100000;
  patient.time_cap_s = 1e9;
  std::size_t steps = 0;
  while (should_stop(patient, settling, 0) == stop_reason::keep_going) {
    settling.push_back(1.0);
    ++steps;
  }
  CHECK(should_stop(patient, settling, 0) == stop_reason::converged);
  CHECK(summarize(settling).rel_stddev < 0.01);
  CHECK(steps > 8);
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
