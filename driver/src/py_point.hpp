// The search space and its points as Python classes (reducetune._core.Space, .Point): a Point
// is one conversion from a trial's parameters, carrying what the C++ space decided about it
// (labels, flags, determinism); Python and the store ask it rather than re-derive.
#pragma once

#include "common.hpp"

#include "reducetune/space/point.hpp"
#include "reducetune/space/space.hpp"

#include <memory>

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

void bind_points(nb::module_ &m);

} // namespace rtpy
