#include "reducetune/space/space.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/builtins.hpp"
#include "reducetune/space/name_pattern.hpp"
#include "reducetune/space/reduction_plan.hpp"

#include <algorithm>
#include <limits>
#include <random>

namespace reducetune {
namespace {

std::uint64_t count_points(const family &f, const std::vector<std::size_t> &params) {
  std::uint64_t n = 1;
  for (std::size_t i : params)
    if (__builtin_mul_overflow(n, f.parameters[i].values.size(), &n))
      throw invalid_configuration("the search space of family '" + f.name +
                                  "' has more than 2^64 points");
  return n;
}

std::vector<value> decode(const family &f, const std::vector<std::size_t> &params,
                          std::uint64_t index) {
  std::vector<value> values(params.size());
  for (std::size_t k = params.size(); k-- > 0;) {
    const auto &vals = f.parameters[params[k]].values;
    values[k] = vals[index % vals.size()].v;
    index /= vals.size();
  }
  return values;
}

// A uniform integer in [0, bound) from raw mt19937_64 output (no std distribution, whose
// algorithm the standard leaves to each library).
std::uint64_t uniform_below(std::mt19937_64 &rng, std::uint64_t bound) {
  const std::uint64_t reject_from =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % bound;
  std::uint64_t x = rng();
  while (x >= reject_from)
    x = rng();
  return x % bound;
}

const expression &block_size_expr() {
  static const expression e = expression::parse("block_size");
  return e;
}

// The restriction with declared values only, spelled as declared, in declaration order.
restriction normalized(const family &f, const restriction &only) {
  restriction out;
  for (const auto &[name, values] : only) {
    std::vector<value> chosen;
    for (const auto &v : values)
      chosen.push_back(declared_value(f, name, v));
    auto &kept = out[name];
    for (const auto &pv : f.find_parameter(name)->values)
      if (std::find(chosen.begin(), chosen.end(), pv.v) != chosen.end())
        kept.push_back(pv.v);
  }
  return out;
}

} // namespace

std::string check_result::reasons() const {
  std::string out;
  for (const auto &f : failures)
    out += (out.empty() ? "" : "; ") + f.why;
  return out;
}

search_space::search_space(family f, dtype t, reduce_op o, device_limits limits,
                           const restriction &only)
    : m_family(std::move(f)), m_type(t), m_op(o), m_limits(limits),
      m_builtins(builtin_scope(t, o, limits)), m_compile(m_family.compile_parameters()),
      m_launch(m_family.launch_parameters()), m_size(count_points(m_family, m_compile)),
      m_launch_size(count_points(m_family, m_launch)), m_only(normalized(m_family, only)) {
  m_builtins.set("abi", value{m_family.abi}); // the family's kernel ABI, as points ask it
  // Launch parameters, their lets, and (to a fixed point) every let that names one of them.
  for (std::size_t i : m_launch) {
    m_launch_names.insert(m_family.parameters[i].name);
    for (const auto &pv : m_family.parameters[i].values)
      for (const auto &[name, _] : pv.let)
        m_launch_names.insert(name);
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t i : m_compile)
      for (const auto &pv : m_family.parameters[i].values)
        for (const auto &[name, e] : pv.let)
          if (!m_launch_names.count(name) && depends_on_launch(e))
            grew = m_launch_names.insert(name).second || grew;
  }
}

bool search_space::depends_on_launch(const expression &e) const {
  for (const auto &id : e.identifiers())
    if (m_launch_names.count(id))
      return true;
  return false;
}

void search_space::check_builtins(const scope &s, bool launch_stage, check_result &out) const {
  auto at_stage = [&](bool depends) { return depends == launch_stage; };
  auto guarded = [&](const std::string &text, auto &&body) {
    try {
      body();
    } catch (const invalid_configuration &e) {
      out.failures.push_back({text, std::string("cannot be evaluated: ") + e.what()});
    }
  };
  if (m_family.find_parameter("block_size") && at_stage(m_launch_names.count("block_size") != 0))
    guarded("block_size <= max_threads_per_block", [&] {
      const std::int64_t bs = block_size_expr().eval_int(s);
      if (bs < 1 || bs > m_limits.max_threads_per_block)
        out.failures.push_back({"block_size <= max_threads_per_block",
                                "block size " + std::to_string(bs) + " exceeds the device's " +
                                    std::to_string(m_limits.max_threads_per_block) +
                                    " threads per block"});
    });
  if (at_stage(depends_on_launch(m_family.shared_bytes)))
    guarded(m_family.shared_bytes.text(), [&] {
      const std::int64_t bytes = m_family.shared_bytes.eval_int(s);
      if (bytes > m_limits.max_shared_per_block)
        out.failures.push_back({"shared_bytes <= max_shared_per_block",
                                std::to_string(bytes) + " bytes of shared memory exceed the " +
                                    std::to_string(m_limits.max_shared_per_block) +
                                    " a block may use"});
    });
  if (at_stage(depends_on_launch(m_family.protocol)))
    guarded(m_family.protocol.text(), [&] {
      const protocol p = protocol_from_string(m_family.protocol.eval_string(s));
      for (const auto &role : roles_launched(p))
        if (!m_family.kernels.count(role))
          out.failures.push_back({"kernels", std::string("protocol ") + to_string(p) +
                                                 " needs a '" + role + "' kernel"});
    });
  for (const auto &c : m_family.constraints) {
    if (!at_stage(depends_on_launch(c.expr)))
      continue;
    try {
      if (c.expr.eval_int(s) == 0)
        out.failures.push_back({c.expr.text(), c.why});
    } catch (const invalid_configuration &e) {
      out.failures.push_back({c.expr.text(), c.why + " (cannot be evaluated: " + e.what() + ")"});
    }
  }
}

check_result search_space::check(const variant &v) const {
  check_result out;
  check_restriction(m_compile, v.values, out);
  check_builtins(scope_for(v), false, out);
  return out;
}

check_result search_space::check(const variant &v, const launch_config &c) const {
  check_result out;
  const scope s = scope_for(v, c);
  check_restriction(m_compile, v.values, out);
  check_restriction(m_launch, c.values, out);
  check_builtins(s, false, out);
  check_builtins(s, true, out);
  return out;
}

variant search_space::point(std::uint64_t index) const {
  if (index >= m_size)
    throw invalid_configuration("point " + std::to_string(index) + " is outside the space of " +
                                std::to_string(m_size) + " points");
  return variant{m_family.name, m_type, m_op, decode(m_family, m_compile, index)};
}

launch_config search_space::launch_point(std::uint64_t index) const {
  if (index >= m_launch_size)
    throw invalid_configuration("launch config " + std::to_string(index) + " is outside the " +
                                std::to_string(m_launch_size) + " configs");
  return launch_config{decode(m_family, m_launch, index)};
}

std::vector<variant> search_space::all_points() const {
  std::vector<variant> out;
  for (std::uint64_t i = 0; i < m_size; ++i)
    out.push_back(point(i));
  return out;
}

std::vector<variant> search_space::valid_points() const {
  std::vector<variant> out;
  for (std::uint64_t i = 0; i < m_size; ++i)
    if (auto v = point(i); check(v))
      out.push_back(std::move(v));
  return out;
}

std::uint64_t search_space::valid_size() const {
  return valid_points().size();
}

std::vector<launch_config> search_space::launch_configs() const {
  std::vector<launch_config> out;
  for (std::uint64_t i = 0; i < m_launch_size; ++i)
    out.push_back(launch_point(i));
  return out;
}

std::vector<launch_config> search_space::valid_launch_configs(const variant &v) const {
  std::vector<launch_config> out;
  for (std::uint64_t i = 0; i < m_launch_size; ++i)
    if (auto c = launch_point(i); check(v, c))
      out.push_back(std::move(c));
  return out;
}

std::vector<variant> search_space::sample(std::size_t count, std::uint64_t seed) const {
  std::vector<variant> pool = valid_points();
  std::mt19937_64 rng(seed);
  const std::size_t take = std::min(count, pool.size());
  for (std::size_t i = 0; i < take; ++i)
    std::swap(pool[i], pool[i + uniform_below(rng, pool.size() - i)]);
  pool.resize(take);
  return pool;
}

std::map<std::string, std::string> search_space::kernel_names(const variant &v) const {
  return reducetune::kernel_names(m_family, v);
}

} // namespace reducetune
