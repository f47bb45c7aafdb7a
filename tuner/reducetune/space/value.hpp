// The values the search space deals in: a parameter value, an expression's result, a
// built-in's value. Integers are int64 (sizes, counts, bytes); strings are names
// ('shuffle', 'two_pass', 'float32').
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace reducetune {

using value = std::variant<std::int64_t, std::string>;

[[nodiscard]] inline bool is_int(const value &v) noexcept {
  return std::holds_alternative<std::int64_t>(v);
}
[[nodiscard]] inline bool is_string(const value &v) noexcept {
  return std::holds_alternative<std::string>(v);
}

// The value as written in a label or a name expression: 42, shuffle.
[[nodiscard]] std::string to_string(const value &v);
// The value as written in an expression or a message: 42, 'shuffle'.
[[nodiscard]] std::string to_literal(const value &v);

} // namespace reducetune
