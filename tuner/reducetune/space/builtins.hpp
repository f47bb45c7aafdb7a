// The identifiers every expression may use without declaring them (docs/architecture.md,
// "Expressions"): T/dtype, Op/op, sizeof_T, is_integer, is_float and the device limits.
// `n` is bound only where a length is known (grid and launch-time expressions).
// The shape (outer, r, inner) of the problem (space/problem.hpp) is for grid expressions of
// families with the axis kernel ABI. builtin_scope binds the whole array of n elements,
// (1, n, 1), so that a grid evaluated with only `n` bound (launch_plan::grid_for) is the
// whole-array grid; a caller that knows a shape sets all four: outer, r, inner and
// n = outer * r * inner.
#pragma once

#include "reducetune/space/device_limits.hpp"
#include "reducetune/space/element.hpp"
#include "reducetune/space/expression.hpp"

#include <string>
#include <vector>

namespace reducetune {

// Every built-in name, `n` included.
[[nodiscard]] const std::vector<std::string> &builtin_identifiers();
[[nodiscard]] bool is_builtin_identifier(const std::string &name);

// A scope holding the built-ins (not `n`) for one element type, operator and device; the
// shape names are the whole array's: outer = inner = 1, r bound to `n`.
[[nodiscard]] scope builtin_scope(dtype t, reduce_op o, const device_limits &limits);

} // namespace reducetune
