#include "reducetune/space/point.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/family.hpp"

namespace reducetune {
namespace {

void put(const family &f, const std::vector<std::size_t> &params, const std::vector<value> &values,
         parameter_map &out) {
  for (std::size_t k = 0; k < params.size() && k < values.size(); ++k)
    out[f.parameters[params[k]].name] = values[k];
}

} // namespace

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

value declared_value(const family &f, const std::string &name, const value &v) {
  const parameter *p = f.find_parameter(name);
  if (p == nullptr)
    throw invalid_configuration("family '" + f.name + "' has no parameter '" + name + "'");
  for (const auto &pv : p->values)
    if (pv.v == v || to_string(pv.v) == to_string(v))
      return pv.v;
  throw invalid_configuration("'" + to_string(v) + "' is not a declared value of " + name + " (" +
                              p->values_text() + ")");
}

point point_from(const family &f, dtype t, reduce_op o, const parameter_map &given) {
  point p{default_variant(f, t, o), default_launch_config(f)};
  const auto compile = f.compile_parameters();
  const auto launch = f.launch_parameters();
  for (const auto &[name, v] : given) {
    const value chosen = declared_value(f, name, v);
    for (std::size_t k = 0; k < compile.size(); ++k)
      if (f.parameters[compile[k]].name == name)
        p.compile.values[k] = chosen;
    for (std::size_t k = 0; k < launch.size(); ++k)
      if (f.parameters[launch[k]].name == name)
        p.launch.values[k] = chosen;
  }
  return p;
}

parameter_map compile_parameters(const family &f, const point &p) {
  parameter_map out;
  put(f, f.compile_parameters(), p.compile.values, out);
  return out;
}

parameter_map launch_parameters(const family &f, const point &p) {
  parameter_map out;
  put(f, f.launch_parameters(), p.launch.values, out);
  return out;
}

parameter_map all_parameters(const family &f, const point &p) {
  parameter_map out = compile_parameters(f, p);
  put(f, f.launch_parameters(), p.launch.values, out);
  return out;
}

} // namespace reducetune
