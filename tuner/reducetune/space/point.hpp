// One tuning point: a variant (compile-time values) and a launch config (launch values), the
// thing that is measured. Its labels, its parameters by name and its parsing are declared here
// (the conversions by name are defined in space_points.cpp, beside search_space::point_of); what
// is DECIDED about a point (validity, restriction, flags, determinism) is the search space's
// (space.hpp), so that every layer above asks one place.
#pragma once

#include "reducetune/space/element.hpp"
#include "reducetune/space/value.hpp"
#include "reducetune/space/variant.hpp"

#include <compare>
#include <map>
#include <string>
#include <vector>

namespace reducetune {

struct family;

struct point {
  variant compile;
  launch_config launch;

  friend bool operator==(const point &, const point &) = default;
  friend std::strong_ordering operator<=>(const point &, const point &) = default;
};

// name -> value, compile and launch parameters alike (or one kind only).
using parameter_map = std::map<std::string, value>;

// A value the family's declaration flags (family.json "flags"): e.g. warp=volatile_unsafe,
// racy on Volta and later. A flagged point is skipped by tuning, best and exports unless the
// caller allows flagged points.
struct point_flag {
  std::string parameter;
  std::string value; // as in a label
  std::string why;

  friend bool operator==(const point_flag &, const point_flag &) = default;
};

// Whether one input gives the same bits on every call on one GPU. A float sum or product
// whose blocks are combined by atomics depends on the order in which they arrive; every
// other finish (a second pass, a last-block ticket, a host loop) combines in a fixed order,
// and integer or min/max atomics are exact in any order.
enum class determinism { run_to_run, none };

[[nodiscard]] const char *to_string(determinism d) noexcept;
// Throws invalid_configuration for another name.
[[nodiscard]] determinism determinism_from_string(const std::string &name);

// Which valid points a caller accepts: flagged ones (a value the family flags) only when
// allowed; nondeterministic ones (determinism none) only when deterministic_only is off. The
// default is what tuning, best, the exports and the Catalog answer with unless told
// otherwise: an application should get neither a racy kernel nor a sum that changes from
// call to call (CUB's is run-to-run deterministic) without asking for it.
struct point_selection {
  bool allow_flagged = false;
  bool deterministic_only = true;
};

// Only these values of these parameters: a smaller space (--restrict), e.g. for a sweep.
using restriction = std::map<std::string, std::vector<value>>;

[[nodiscard]] std::string variant_label(const family &f, const point &p);
[[nodiscard]] std::string launch_label(const family &f, const point &p);
// The inverse of the two labels; throws invalid_configuration saying which part does not fit.
[[nodiscard]] point parse_point(const family &f, const std::string &variant_label,
                                const std::string &launch_label);

// Parameters not named take their default; a name the family does not declare, or a value it
// does not declare for that name, throws invalid_configuration. A value given as text ("256")
// for an integer parameter is read as the declared integer.
[[nodiscard]] point point_from(const family &f, dtype t, reduce_op o, const parameter_map &p);

[[nodiscard]] parameter_map compile_parameters(const family &f, const point &p);
[[nodiscard]] parameter_map launch_parameters(const family &f, const point &p);
[[nodiscard]] parameter_map all_parameters(const family &f, const point &p);

// The declared value of parameter `name` that `v` names: itself, or the integer a text such
// as "256" spells. Throws invalid_configuration (with the declared values) when none.
[[nodiscard]] value declared_value(const family &f, const std::string &name, const value &v);

} // namespace reducetune
