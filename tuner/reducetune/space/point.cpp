// A point's labels, their parsing and determinism's names. Its parameters by name (point_from,
// all_parameters) are made and read in space_points.cpp, beside search_space::point_of.
#include "reducetune/space/point.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/family.hpp"

namespace reducetune {

const char *to_string(determinism d) noexcept {
  return d == determinism::run_to_run ? "run_to_run" : "none";
}

determinism determinism_from_string(const std::string &name) {
  if (name == "run_to_run")
    return determinism::run_to_run;
  if (name == "none")
    return determinism::none;
  throw invalid_configuration("unknown determinism '" + name + "' (run_to_run, none)");
}

std::string variant_label(const family &f, const point &p) {
  return to_label(f, p.compile);
}

std::string launch_label(const family &f, const point &p) {
  return to_label(f, p.launch);
}

point parse_point(const family &f, const std::string &variant_label,
                  const std::string &launch_label) {
  return {parse_variant_label(f, variant_label), parse_launch_label(f, launch_label)};
}

} // namespace reducetune
