// The identifiers every expression may use without declaring them (docs/architecture.md,
// "Expressions"): T/dtype, Op/op, sizeof_T, is_integer, is_float and the device limits.
// `n` is bound only where a length is known (grid and launch-time expressions).
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

// A scope holding the built-ins (not `n`) for one element type, operator and device.
[[nodiscard]] scope builtin_scope(dtype t, reduce_op o, const device_limits &limits);

} // namespace reducetune
