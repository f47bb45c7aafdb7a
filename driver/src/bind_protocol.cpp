// The measurement protocol's constants, defined once in C++ (measure/stopping_rule.hpp,
// verify/patterns.hpp, space/space.hpp) and read by the Python driver from here, so that a
// point measured through Python follows the same rule and seeds as the bench and the C++ tests.
#include "common.hpp"

#include "reducetune/measure/stopping_rule.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/verify/patterns.hpp"

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
}

} // namespace rtpy
