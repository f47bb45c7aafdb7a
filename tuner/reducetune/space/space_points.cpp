// search_space: what is decided about one point (restriction, flags, determinism, its scope of
// identifiers) and the enumeration of points. The one place these facts are decided; Python,
// the store, the exports and the runtime ask here. Also the point's parameters by name, both
// ways (point_from, all_parameters: point.hpp), beside point_of and base (with the presets it
// starts from), the space's ways to make one: the point's making on the tuning route is here,
// and its launch is the planner's (reduction_plan.cpp).
#include "reducetune/space/space.hpp"

#include "reducetune/errors.hpp"

#include <algorithm>

namespace reducetune {
namespace {

void put(const family &f, const std::vector<std::size_t> &params, const std::vector<value> &values,
         parameter_map &out) {
  for (std::size_t k = 0; k < params.size() && k < values.size(); ++k)
    out[f.parameters[params[k]].name] = values[k];
}

} // namespace

void search_space::add_values(scope &s, const std::vector<std::size_t> &params,
                              const std::vector<value> &values) const {
  for (std::size_t k = 0; k < params.size(); ++k) {
    const parameter &p = m_family.parameters[params[k]];
    s.set(p.name, values[k]);
    for (const auto &[name, e] : p.values[*p.index_of(values[k])].let)
      s.bind(name, e);
  }
}

scope search_space::scope_for(const variant &v) const {
  validate(m_family, v);
  if (v.type != m_type || v.op != m_op)
    throw invalid_configuration("variant for " + std::string(to_string(v.type)) + "." +
                                to_string(v.op) + " given to the search space of " +
                                to_string(m_type) + "." + to_string(m_op));
  scope s = m_builtins;
  add_values(s, m_compile, v.values);
  return s;
}

scope search_space::scope_for(const variant &v, const launch_config &c) const {
  validate(m_family, c);
  scope s = scope_for(v);
  add_values(s, m_launch, c.values);
  return s;
}

void search_space::check_restriction(const std::vector<std::size_t> &params,
                                     const std::vector<value> &values, check_result &out) const {
  for (std::size_t k = 0; k < params.size() && k < values.size(); ++k) {
    const parameter &p = m_family.parameters[params[k]];
    const auto it = m_only.find(p.name);
    if (it == m_only.end() ||
        std::find(it->second.begin(), it->second.end(), values[k]) != it->second.end())
      continue;
    std::string allowed;
    for (const auto &v : it->second)
      allowed += (allowed.empty() ? "" : "|") + to_string(v);
    out.failures.push_back({"restrict " + p.name + "=" + allowed,
                            p.name + "=" + to_string(values[k]) +
                                " is outside the restriction (" + p.name + "=" + allowed + ")"});
  }
}

std::vector<std::pair<std::string, std::vector<value>>> search_space::choices() const {
  std::vector<std::pair<std::string, std::vector<value>>> out;
  for (const auto &p : m_family.parameters) {
    if (const auto it = m_only.find(p.name); it != m_only.end()) {
      out.emplace_back(p.name, it->second);
      continue;
    }
    std::vector<value> all;
    for (const auto &pv : p.values)
      all.push_back(pv.v);
    out.emplace_back(p.name, std::move(all));
  }
  return out;
}

std::vector<std::pair<std::string, std::vector<value>>>
search_space::choices(const point_selection &selection) const {
  auto all = choices();
  // taken[k][i]: value i of parameter k (in choices() order) is taken by a selected point
  std::vector<std::vector<bool>> taken;
  for (const auto &[name, values] : all)
    taken.emplace_back(values.size(), false);
  auto mark = [&](const std::vector<std::size_t> &params, const std::vector<value> &values) {
    for (std::size_t k = 0; k < params.size() && k < values.size(); ++k) {
      auto &[name, declared] = all[params[k]];
      const auto at = std::find(declared.begin(), declared.end(), values[k]);
      if (at != declared.end()) taken[params[k]][static_cast<std::size_t>(at - declared.begin())] = true;
    }
  };
  // Every selected valid point marks its values, but a point that can add none is not checked:
  // once a variant is marked, only the launch configs that have marked nothing yet are tried
  // with it (a launch config marks all its values at once). The README's tune asks this of 12
  // spaces before its first point: 6.6 s on the build machine when it walked every point.
  std::vector<bool> launch_marked(m_launch_size, false);
  for (const auto &v : valid_points()) {
    bool variant_marked = false;
    for (std::uint64_t i = 0; i < m_launch_size; ++i) {
      if (variant_marked && launch_marked[i]) continue;
      const reducetune::point p{v, launch_point(i)};
      if (!check(p.compile, p.launch) || !selected(p, selection)) continue;
      if (!variant_marked) mark(m_compile, v.values);
      variant_marked = true;
      mark(m_launch, p.launch.values);
      launch_marked[i] = true;
    }
  }
  for (std::size_t k = 0; k < all.size(); ++k) {
    std::vector<value> kept;
    for (std::size_t i = 0; i < all[k].second.size(); ++i)
      if (taken[k][i]) kept.push_back(all[k].second[i]);
    all[k].second = std::move(kept);
  }
  return all;
}

bool search_space::selected(const reducetune::point &p, const point_selection &s) const {
  if (!s.allow_flagged && !flags(p).empty()) return false;
  return !s.deterministic_only || determinism_of(p) == determinism::run_to_run;
}

std::vector<preset_point> search_space::presets() const {
  std::vector<preset_point> out;
  for (const auto &pr : m_family.presets) {
    preset_point pp{pr.name, default_variant(m_family, m_type, m_op),
                    default_launch_config(m_family), pr.note};
    for (std::size_t k = 0; k < m_compile.size(); ++k)
      if (auto it = pr.values.find(m_family.parameters[m_compile[k]].name); it != pr.values.end())
        pp.point.values[k] = it->second;
    for (std::size_t k = 0; k < m_launch.size(); ++k)
      if (auto it = pr.values.find(m_family.parameters[m_launch[k]].name); it != pr.values.end())
        pp.launch.values[k] = it->second;
    out.push_back(std::move(pp));
  }
  return out;
}

std::optional<reducetune::point> search_space::base(const std::string &name,
                                                    const point_selection &s) const {
  const auto all = presets();
  const auto named = std::find_if(all.begin(), all.end(), [&](const auto &p) { return p.name == name; });
  if (named == all.end()) {
    std::string known;
    for (const auto &p : all) known += (known.empty() ? "" : ", ") + p.name;
    throw invalid_configuration("family '" + m_family.name + "' has no preset '" + name + "' (" +
                                known + ")");
  }
  const reducetune::point want{named->point, named->launch};
  if (check(want)) return selected(want, s) ? std::optional{want} : std::nullopt;
  for (const auto &p : all)
    if (const reducetune::point q{p.point, p.launch}; check(q) && selected(q, s)) return q;
  return std::nullopt;
}

// The point by name, both ways (declared in point.hpp): made here from parameters, beside
// search_space::point_of and base, and read back as parameters (Point.params, to_dict),
// so that the point's conversions on the tuning route sit in one file.
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

point search_space::point_of(const parameter_map &p) const {
  return point_from(m_family, m_type, m_op, p);
}

point search_space::parse(const std::string &variant_label,
                          const std::string &launch_label) const {
  reducetune::point p = parse_point(m_family, variant_label, launch_label);
  if (p.compile.type != m_type || p.compile.op != m_op)
    throw invalid_configuration("label '" + variant_label + "' is not of the space " +
                                m_family.name + "." + to_string(m_type) + "." + to_string(m_op));
  return p;
}

check_result search_space::check(const reducetune::point &p) const {
  return check(p.compile, p.launch);
}

std::vector<point> search_space::points() const {
  std::vector<reducetune::point> out;
  for (auto &v : valid_points())
    for (auto &c : valid_launch_configs(v))
      out.push_back({v, std::move(c)});
  return out;
}

std::vector<point_flag> search_space::flags(const reducetune::point &p) const {
  std::vector<point_flag> out;
  auto scan = [&](const std::vector<std::size_t> &params, const std::vector<value> &values) {
    for (std::size_t k = 0; k < params.size() && k < values.size(); ++k) {
      const parameter &decl = m_family.parameters[params[k]];
      if (const auto i = decl.index_of(values[k]); i && !decl.values[*i].flag.empty())
        out.push_back({decl.name, to_string(values[k]), decl.values[*i].flag});
    }
  };
  scan(m_compile, p.compile.values);
  scan(m_launch, p.launch.values);
  return out;
}

determinism search_space::determinism_of(const reducetune::point &p) const {
  const protocol proto =
      protocol_from_string(m_family.protocol.eval_string(scope_for(p.compile, p.launch)));
  const bool order_matters =
      !is_integer(m_type) && (m_op == reduce_op::sum || m_op == reduce_op::prod);
  return proto == protocol::atomic && order_matters ? determinism::none : determinism::run_to_run;
}

} // namespace reducetune
