// A variant (compile-time point) and a launch config are plain data: values in the family's
// declaration order. Their labels are stable and printable (docs/architecture.md, "Variant
// labels"): `tunable.float32.sum.bs_256.u_4.warp_shuffle` and `ept_16.cap_0`. Writing or
// reading a label needs the family, which holds each parameter's label prefix.
#pragma once

#include "reducetune/space/element.hpp"
#include "reducetune/space/value.hpp"

#include <compare>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace reducetune {

struct family;

struct variant {
  std::string family;
  dtype type = dtype::float32;
  reduce_op op = reduce_op::sum;
  std::vector<value> values; // one per compile parameter, declaration order

  friend bool operator==(const variant &, const variant &) = default;
  friend std::strong_ordering operator<=>(const variant &, const variant &) = default;
};

struct launch_config {
  std::vector<value> values; // one per launch parameter, declaration order

  friend bool operator==(const launch_config &, const launch_config &) = default;
  friend std::strong_ordering operator<=>(const launch_config &, const launch_config &) = default;
};

// The variant with every compile parameter at its default, and the default launch config.
[[nodiscard]] variant default_variant(const family &f, dtype t, reduce_op o);
[[nodiscard]] launch_config default_launch_config(const family &f);

// The value of a parameter by name in a variant or launch config; throws for an unknown name.
[[nodiscard]] const value &value_of(const family &f, const variant &v, const std::string &name);
[[nodiscard]] const value &value_of(const family &f, const launch_config &c,
                                    const std::string &name);

// Throws invalid_configuration when the variant is not of this family, has the wrong number
// of values, or a value that is not declared.
void validate(const family &f, const variant &v);
void validate(const family &f, const launch_config &c);

[[nodiscard]] std::string to_label(const family &f, const variant &v);
[[nodiscard]] std::string to_label(const family &f, const launch_config &c);
// The inverse of to_label; throws invalid_configuration saying which part does not fit.
[[nodiscard]] variant parse_variant_label(const family &f, const std::string &label);
[[nodiscard]] launch_config parse_launch_label(const family &f, const std::string &label);

struct variant_hash {
  [[nodiscard]] std::size_t operator()(const variant &v) const noexcept;
};
struct launch_config_hash {
  [[nodiscard]] std::size_t operator()(const launch_config &c) const noexcept;
};

} // namespace reducetune

template <> struct std::hash<reducetune::variant> : reducetune::variant_hash {};
template <> struct std::hash<reducetune::launch_config> : reducetune::launch_config_hash {};
