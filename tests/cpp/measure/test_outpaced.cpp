// Racing (issue 25): the stopping rule's outpaced stop on synthetic sample sequences.
#include "catch.hpp"

#include "reducetune/measure/stopping_rule.hpp"

#include <string>
#include <vector>

using namespace reducetune;

namespace {

// A rule that would otherwise sample on (1 % noise is never reached by the sequences below).
stopping_rule racing(double above_s) {
  stopping_rule rule;
  rule.max_samples = 1000;
  rule.time_cap_s = 1e9;
  rule.outpaced_above_s = above_s;
  return rule;
}

} // namespace

TEST_CASE("an outpaced point stops after three samples whose median is above the bound",
          "[measure][stopping]") {
  const stopping_rule rule = racing(1.5e-3);
  std::vector<double> samples{2e-3, 2e-3};
  CHECK(should_stop(rule, samples, 0) == stop_reason::keep_going); // two: not yet
  samples.push_back(2.1e-3);
  CHECK(should_stop(rule, samples, 0) == stop_reason::outpaced);
  CHECK(std::string{to_string(stop_reason::outpaced)} == "outpaced");
}

TEST_CASE("one slow sample among three does not outpace a point", "[measure][stopping]") {
  const stopping_rule rule = racing(1.5e-3);
  // the median of three ignores one outlier (a clock change, a preempting process)
  const std::vector<double> one_outlier{1e-3, 9e-3, 1.1e-3};
  CHECK(should_stop(rule, one_outlier, 0) == stop_reason::keep_going);
  // at the bound is not above it: only a median strictly above stops
  const std::vector<double> at_bound{1.5e-3, 1.5e-3, 1.5e-3};
  CHECK(should_stop(rule, at_bound, 0) == stop_reason::keep_going);
}

TEST_CASE("a point below the bound gets the full protocol", "[measure][stopping]") {
  const stopping_rule rule = racing(1.5e-3);
  std::vector<double> samples(9, 1e-3);
  CHECK(should_stop(rule, samples, 0) == stop_reason::keep_going); // below min_samples
  samples.push_back(1e-3);
  CHECK(should_stop(rule, samples, 0) == stop_reason::converged);
}

TEST_CASE("a point that drifts above the bound later is outpaced then",
          "[measure][stopping]") {
  const stopping_rule rule = racing(1.5e-3);
  std::vector<double> samples{1e-3, 1e-3, 1e-3};
  CHECK(should_stop(rule, samples, 0) == stop_reason::keep_going);
  for (int i = 0; i < 4; ++i) samples.push_back(3e-3); // 4 of 7 now above: the median is 3e-3
  CHECK(should_stop(rule, samples, 0) == stop_reason::outpaced);
}

TEST_CASE("racing is off by default and at a bound of 0", "[measure][stopping]") {
  const std::vector<double> slow{1.0, 1.0, 1.1};
  CHECK(stopping_rule{}.outpaced_above_s == 0);
  CHECK(should_stop(stopping_rule{}, slow, 0) == stop_reason::keep_going);
  CHECK(should_stop(racing(0), slow, 0) == stop_reason::keep_going);
  // a larger outpaced_min_samples waits for that many
  stopping_rule five = racing(0.5);
  five.outpaced_min_samples = 5;
  CHECK(should_stop(five, slow, 0) == stop_reason::keep_going);
  const std::vector<double> five_slow{1.0, 1.0, 1.1, 1.0, 1.0};
  CHECK(should_stop(five, five_slow, 0) == stop_reason::outpaced);
}
