// The search space of one family for one (element type, operator, device): every compile-time
// point (variant) and launch config, which of them satisfy the family's constraints and the
// device's limits, seeded samples, the family's presets, and the launch plan of a point.
//
// Checking a point only evaluates expressions: nothing is ever compiled here.
#pragma once

#include "reducetune/space/device_limits.hpp"
#include "reducetune/space/element.hpp"
#include "reducetune/space/expression.hpp"
#include "reducetune/space/family.hpp"
#include "reducetune/space/launch_plan.hpp"
#include "reducetune/space/name_pattern.hpp"
#include "reducetune/space/point.hpp"
#include "reducetune/space/variant.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace reducetune {

struct failed_constraint {
  std::string expr; // the constraint's text ("block_size <= max_threads_per_block" if built in)
  std::string why;  // the declared reason (or why it could not be evaluated)
};

struct check_result {
  std::vector<failed_constraint> failures;

  [[nodiscard]] bool ok() const noexcept { return failures.empty(); }
  explicit operator bool() const noexcept { return ok(); }
  // "why1; why2" (for messages and the FAIL reason of a study's trial).
  [[nodiscard]] std::string reasons() const;
};

// A preset of the family as a point of this space.
struct preset_point {
  std::string name;
  variant point;
  launch_config launch;
  std::string note;
};

class search_space {
public:
  // The seed of sample() when none is given: the bytes of "reducet" read as an integer, fixed
  // so that a sample is the same on every machine and in every release.
  static constexpr std::uint64_t default_seed = 0x72656475636574ull;

  // `only` restricts the space to some declared values of some parameters (--restrict):
  // points outside it fail check() with the restriction as their reason. An unknown
  // parameter or an undeclared value throws invalid_configuration.
  search_space(family f, dtype t, reduce_op o, device_limits limits, const restriction &only = {});

  [[nodiscard]] const family &decl() const noexcept { return m_family; }
  [[nodiscard]] dtype type() const noexcept { return m_type; }
  [[nodiscard]] reduce_op op() const noexcept { return m_op; }
  [[nodiscard]] const device_limits &limits() const noexcept { return m_limits; }
  // The restriction, each parameter's values in declaration order ({} when unrestricted).
  [[nodiscard]] const restriction &restricted_to() const noexcept { return m_only; }

  // Counts: every compile-time point / launch config, and those that pass check().
  [[nodiscard]] std::uint64_t size() const noexcept { return m_size; }
  [[nodiscard]] std::uint64_t launch_size() const noexcept { return m_launch_size; }
  [[nodiscard]] std::uint64_t valid_size() const;

  // Point number `index` in enumeration order: declaration order, the last parameter varying
  // fastest. Throws invalid_configuration when index >= size().
  [[nodiscard]] variant point(std::uint64_t index) const;
  [[nodiscard]] launch_config launch_point(std::uint64_t index) const;
  [[nodiscard]] std::vector<variant> all_points() const;
  [[nodiscard]] std::vector<variant> valid_points() const;
  [[nodiscard]] std::vector<launch_config> launch_configs() const;
  // The launch configs that pass check(v, c) for a valid v.
  [[nodiscard]] std::vector<launch_config> valid_launch_configs(const variant &v) const;

  // The constraints that do not name launch parameters, plus the built-in ones (block size,
  // shared memory, a known protocol with its kernels). A variant of another family or with
  // an undeclared value throws invalid_configuration instead.
  [[nodiscard]] check_result check(const variant &v) const;
  // Every constraint, launch-time ones included.
  [[nodiscard]] check_result check(const variant &v, const launch_config &c) const;

  // min(count, valid_size()) distinct valid points, in a deterministic order for a seed:
  // a Fisher-Yates shuffle of valid_points() driven by std::mt19937_64(seed) (whose output
  // the standard fixes) with rejection sampling, so it does not depend on the standard
  // library's distributions.
  [[nodiscard]] std::vector<variant> sample(std::size_t count,
                                            std::uint64_t seed = default_seed) const;

  [[nodiscard]] std::map<std::string, std::string> kernel_names(const variant &v) const;

  // ---- The launch (reduction_plan.cpp, the one planner, beside the steps it plans at n).

  // Block size, grid rule, protocol, kernels (only those the protocol launches), flags.
  // Throws invalid_configuration (with the reasons) for a point that fails check(v, c).
  [[nodiscard]] launch_plan plan_launch(const variant &v, const launch_config &c) const;

  // ---- Points (space_points.cpp): everything decided about one (variant, launch config).

  // The family's presets as points of this space (a parameter a preset leaves out: default).
  [[nodiscard]] std::vector<preset_point> presets() const;
  // The identifiers of a point: built-ins, parameter values, the chosen values' let bindings.
  [[nodiscard]] scope scope_for(const variant &v) const;
  [[nodiscard]] scope scope_for(const variant &v, const launch_config &c) const;

  // Every parameter in declaration order with the values a sampler may propose (the
  // restriction's where there is one).
  [[nodiscard]] std::vector<std::pair<std::string, std::vector<value>>> choices() const;
  // The values of choices() that at least one valid point of the selection takes: what a
  // sampler should propose, so that a trial is not spent on a value that can never be valid
  // for this workload (warp=redux for float32, vec=4 for 8-byte types), flagged, or
  // nondeterministic (finish=atomic for a float sum) when the selection leaves those out.
  [[nodiscard]] std::vector<std::pair<std::string, std::vector<value>>>
  choices(const point_selection &selection) const;
  // Parameters by name; see point_from (point.hpp). Does not check validity.
  [[nodiscard]] reducetune::point point_of(const parameter_map &p) const;
  // Labels of another dtype or operator, or of another family, throw invalid_configuration.
  [[nodiscard]] reducetune::point parse(const std::string &variant_label,
                                        const std::string &launch_label) const;
  // check(v, c): the restriction, the constraints and the device's limits.
  [[nodiscard]] check_result check(const reducetune::point &p) const;
  // Every valid point in enumeration order (variants, then each one's launch configs).
  [[nodiscard]] std::vector<reducetune::point> points() const;
  [[nodiscard]] std::vector<point_flag> flags(const reducetune::point &p) const;
  [[nodiscard]] determinism determinism_of(const reducetune::point &p) const;
  // Whether the selection accepts the point's flags and determinism (validity is check()'s).
  [[nodiscard]] bool selected(const reducetune::point &p, const point_selection &s) const;
  // The point to start from (a study's first measurement, the runtime's untuned answer):
  // preset `name`; where that preset is invalid in this space (`good`'s 16-byte loads of
  // 4-byte elements, for an 8-byte type), the family's first preset that is valid and
  // selected. Nothing when the named preset is valid but not selected (flagged, or
  // nondeterministic: the caller asked for it by name) or no preset fits. An unknown name
  // throws invalid_configuration listing the presets.
  [[nodiscard]] std::optional<reducetune::point> base(const std::string &name,
                                                      const point_selection &s) const;

private:
  void add_values(scope &s, const std::vector<std::size_t> &params,
                  const std::vector<value> &values) const;
  void check_builtins(const scope &s, bool launch_stage, check_result &out) const;
  void check_restriction(const std::vector<std::size_t> &params, const std::vector<value> &values,
                         check_result &out) const;
  [[nodiscard]] bool depends_on_launch(const expression &e) const;

  family m_family;
  dtype m_type;
  reduce_op m_op;
  device_limits m_limits;
  scope m_builtins;
  std::vector<std::size_t> m_compile;
  std::vector<std::size_t> m_launch;
  std::uint64_t m_size = 1;
  std::uint64_t m_launch_size = 1;
  std::set<std::string> m_launch_names; // identifiers whose value depends on a launch param
  restriction m_only;
};

// plan_launch for one variant without building the space by hand (reduction_plan.cpp).
[[nodiscard]] launch_plan plan_launch(const family &f, const variant &v, const launch_config &c,
                                      const device_limits &limits);

} // namespace reducetune
