// The axis family's grid for a point at a shape, bound as a shape-aware caller (plan_axis)
// binds it: outer, r, inner and n = outer * r * inner. For the CPU tests of the axis space
// (tests/cpp/jit/test_axis_compile, test_axis_wide_tiles), which link no measure layer.
#pragma once

#include "reducetune/space/problem.hpp"
#include "reducetune/space/space.hpp"

#include <cstdint>

namespace rt_test {

inline std::int64_t grid_at(const reducetune::search_space &s, const reducetune::point &p,
                            reducetune::reduction_shape shape) {
  reducetune::scope sc = s.scope_for(p.compile, p.launch);
  sc.set("outer", static_cast<std::int64_t>(shape.outer));
  sc.set("r", static_cast<std::int64_t>(shape.r));
  sc.set("inner", static_cast<std::int64_t>(shape.inner));
  sc.set("n", static_cast<std::int64_t>(shape.outer * shape.r * shape.inner));
  return s.decl().grid.eval_int(sc);
}

} // namespace rt_test
