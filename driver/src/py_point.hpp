// The search space and its points as Python classes (reducetune._core.Space, .Point): a Point
// is one conversion from a trial's parameters, carrying what the C++ space decided about it
// (labels, flags, determinism); Python and the store ask it rather than re-derive.
#pragma once

#include "common.hpp"

#include "reducetune/space/point.hpp"
#include "reducetune/space/problem.hpp"
#include "reducetune/space/space.hpp"

#include <memory>
#include <vector>

namespace rtpy {

struct py_space {
  std::shared_ptr<const rt::search_space> space;
};

struct py_point {
  std::shared_ptr<const rt::search_space> space;
  rt::point p;

  [[nodiscard]] const rt::family &family() const { return space->decl(); }
  [[nodiscard]] std::string variant_label() const { return rt::variant_label(family(), p); }
  [[nodiscard]] std::string launch_label() const { return rt::launch_label(family(), p); }
};

// A point in its plain form, {"family", "dtype", "op", "params": {name: value}}: what
// Point.to_dict() gives and what crosses the worker's JSON pipe (parameters by name: a typed
// value, not a label to parse). Unknown names or undeclared values throw invalid_configuration.
struct plain_point {
  const rt::family *family;
  rt::point p;
};
[[nodiscard]] plain_point point_of_dict(const nb::dict &d);
[[nodiscard]] nb::dict dict_of(const rt::family &f, const rt::point &p);

// Compiles, runs, verifies and times point p of family f on problem pr (its input: `data`)
// on device `ordinal` (bind_device.cpp).
[[nodiscard]] nb::dict evaluate_point(const rt::family &f, const rt::point &p,
                                      const rt::problem &pr, const nb::dict &data, int ordinal,
                                      const nb::dict &options);

// One variant to compile ahead of its evaluation, with the label its failure is reported by.
struct variant_job {
  const rt::family *family;
  rt::variant v;
};
// Compiles the distinct variants of `jobs` into evaluate()'s cache (bind_compile.cpp).
[[nodiscard]] nb::dict precompile_variants(const std::vector<variant_job> &jobs,
                                           const std::string &arch, unsigned threads);

void bind_points(nb::module_ &m);

} // namespace rtpy
