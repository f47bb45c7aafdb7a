#include "reducetune/space/variant.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/family.hpp"

namespace reducetune {
namespace {

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at = s.find(sep); at != std::string::npos; at = s.find(sep, start)) {
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  out.push_back(s.substr(start));
  return out;
}

void check_values(const family &f, const std::vector<std::size_t> &params,
                  const std::vector<value> &values, const std::string &what) {
  if (values.size() != params.size())
    throw invalid_configuration(what + " of family '" + f.name + "' has " +
                                std::to_string(values.size()) + " values; the family has " +
                                std::to_string(params.size()) + " such parameters");
  for (std::size_t i = 0; i < params.size(); ++i) {
    const parameter &p = f.parameters[params[i]];
    if (!p.index_of(values[i]))
      throw invalid_configuration(what + " of family '" + f.name + "': " + to_literal(values[i]) +
                                  " is not a value of '" + p.name + "' (" + p.values_text() + ")");
  }
}

std::string join_labels(const family &f, const std::vector<std::size_t> &params,
                        const std::vector<value> &values) {
  std::string out;
  for (std::size_t i = 0; i < params.size(); ++i)
    out += (i ? "." : "") + f.parameters[params[i]].label + "_" + to_string(values[i]);
  return out;
}

std::vector<value> parse_parts(const family &f, const std::vector<std::size_t> &params,
                               const std::vector<std::string> &parts, const std::string &label) {
  auto fail = [&](const std::string &what) {
    throw invalid_configuration("label '" + label + "' of family '" + f.name + "': " + what);
  };
  if (parts.size() != params.size())
    fail("has " + std::to_string(parts.size()) + " parameter parts; expected " +
         std::to_string(params.size()));
  std::vector<value> values;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const parameter &p = f.parameters[params[i]];
    const std::string prefix = p.label + "_";
    if (parts[i].compare(0, prefix.size(), prefix) != 0)
      fail("part '" + parts[i] + "' should start with '" + prefix + "' (parameter '" + p.name +
           "')");
    const std::string text = parts[i].substr(prefix.size());
    const value *found = nullptr;
    for (const auto &pv : p.values)
      if (to_string(pv.v) == text)
        found = &pv.v;
    if (!found)
      fail("'" + text + "' is not a value of '" + p.name + "' (" + p.values_text() + ")");
    values.push_back(*found);
  }
  return values;
}

std::size_t hash_values(std::size_t h, const std::vector<value> &values) {
  for (const auto &v : values)
    h = h * 1099511628211ull ^ std::hash<value>{}(v);
  return h;
}

const value &find_value(const family &f, const std::vector<std::size_t> &params,
                        const std::vector<value> &values, const std::string &name,
                        const char *what) {
  for (std::size_t i = 0; i < params.size() && i < values.size(); ++i)
    if (f.parameters[params[i]].name == name)
      return values[i];
  throw invalid_configuration("family '" + f.name + "' has no " + what + " parameter '" + name +
                              "'");
}

} // namespace

variant default_variant(const family &f, dtype t, reduce_op o) {
  variant v{f.name, t, o, {}};
  for (std::size_t i : f.compile_parameters())
    v.values.push_back(f.parameters[i].default_value());
  return v;
}

launch_config default_launch_config(const family &f) {
  launch_config c;
  for (std::size_t i : f.launch_parameters())
    c.values.push_back(f.parameters[i].default_value());
  return c;
}

const value &value_of(const family &f, const variant &v, const std::string &name) {
  return find_value(f, f.compile_parameters(), v.values, name, "compile");
}

const value &value_of(const family &f, const launch_config &c, const std::string &name) {
  return find_value(f, f.launch_parameters(), c.values, name, "launch");
}

void validate(const family &f, const variant &v) {
  if (v.family != f.name)
    throw invalid_configuration("variant of family '" + v.family + "' given to family '" + f.name +
                                "'");
  check_values(f, f.compile_parameters(), v.values, "a variant");
}

void validate(const family &f, const launch_config &c) {
  check_values(f, f.launch_parameters(), c.values, "a launch config");
}

std::string to_label(const family &f, const variant &v) {
  validate(f, v);
  std::string out = f.name + "." + to_string(v.type) + "." + to_string(v.op);
  const std::string params = join_labels(f, f.compile_parameters(), v.values);
  return params.empty() ? out : out + "." + params;
}

std::string to_label(const family &f, const launch_config &c) {
  validate(f, c);
  return join_labels(f, f.launch_parameters(), c.values);
}

variant parse_variant_label(const family &f, const std::string &label) {
  auto parts = split(label, '.');
  if (parts.size() < 3 || parts[0] != f.name)
    throw invalid_configuration("label '" + label + "' does not start with '" + f.name +
                                ".<dtype>.<op>'");
  variant v{f.name, dtype_from_string(parts[1]), op_from_string(parts[2]), {}};
  parts.erase(parts.begin(), parts.begin() + 3);
  v.values = parse_parts(f, f.compile_parameters(), parts, label);
  return v;
}

launch_config parse_launch_label(const family &f, const std::string &label) {
  const auto params = f.launch_parameters();
  if (label.empty() && params.empty())
    return {};
  return launch_config{parse_parts(f, params, split(label, '.'), label)};
}

std::size_t variant_hash::operator()(const variant &v) const noexcept {
  std::size_t h = std::hash<std::string>{}(v.family);
  h = h * 1099511628211ull ^
      (static_cast<std::size_t>(v.type) << 4 | static_cast<std::size_t>(v.op));
  return hash_values(h, v.values);
}

std::size_t launch_config_hash::operator()(const launch_config &c) const noexcept {
  return hash_values(14695981039346656037ull, c.values);
}

} // namespace reducetune
