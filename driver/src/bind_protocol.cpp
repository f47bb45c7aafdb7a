// The measurement protocol's constants, defined once in C++ (measure/stopping_rule.hpp,
// verify/patterns.hpp, space/space.hpp) and read by the Python driver from here, so that a
// point measured through Python follows the same rule and seeds as the bench and the C++ tests.
#include "common.hpp"

#include "reducetune/measure/statistics.hpp"
#include "reducetune/measure/stopping_rule.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/verify/patterns.hpp"

#include <vector>

namespace rtpy {

void bind_protocol(nb::module_ &m) {
  // At least this many cold samples per point; a point may stop once their relative standard
  // deviation is below MAX_NOISE.
  m.attr("MIN_SAMPLES") = rt::protocol_min_samples;
  m.attr("MAX_NOISE") = rt::protocol_max_noise;
  m.attr("OUTPACED_MIN_SAMPLES") = rt::protocol_outpaced_min_samples;
  // The data seed of a workload that names none (a stored measurement's workload key).
  m.attr("WORKLOAD_SEED") = rt::default_data_seed;
  // The seed of a search space's samples when none is given (compile_jobs' default).
  m.attr("SPACE_SEED") = rt::search_space::default_seed;
  // The statistics the stopping rule computes (measure/statistics.hpp), for samples timed in
  // Python (the axis benchmark's rounds): the median's distribution-free 95 % interval comes
  // from the same order statistics as the tuner's, not from a second formula.
  m.def(
      "summarize",
      [](const std::vector<double> &samples) {
        const rt::sample_statistics st = rt::summarize(samples);
        nb::dict d;
        d["count"] = st.count;
        d["median"] = st.median;
        d["min"] = st.min;
        d["max"] = st.max;
        d["mean"] = st.mean;
        d["stddev"] = st.stddev;
        d["rel_stddev"] = st.rel_stddev;
        d["median_low"] = st.median_low;
        d["median_high"] = st.median_high;
        d["median_rel_halfwidth"] = st.median_rel_halfwidth();
        return d;
      },
      nb::arg("samples"),
      "Count, median, min, max, mean, stddev, rel_stddev and the median's 95 % interval "
      "(median_low, median_high, median_rel_halfwidth) of samples; InvalidConfiguration for "
      "none, or a negative or non-finite one.");
}

} // namespace rtpy
