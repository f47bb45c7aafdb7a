// Element types and operators of a workload, with the names the family declarations use
// (docs/architecture.md: int32 → int, int64 → long long, float32 → float, float64 → double).
#pragma once

#include <cstddef>
#include <string>

namespace reducetune {

enum class dtype { int32, int64, float32, float64 };
enum class reduce_op { sum, min, max, prod };

[[nodiscard]] const char *to_string(dtype t) noexcept;
[[nodiscard]] const char *to_string(reduce_op op) noexcept;
// Throw invalid_configuration for an unknown name.
[[nodiscard]] dtype dtype_from_string(const std::string &name);
[[nodiscard]] reduce_op reduce_op_from_string(const std::string &name);

[[nodiscard]] std::size_t size_of(dtype t) noexcept;
[[nodiscard]] bool is_integer(dtype t) noexcept;

// The C++ type of a dtype, for the typed parts of the verifier and the runner.
template <dtype D> struct cpp_type;
template <> struct cpp_type<dtype::int32> { using type = int; };
template <> struct cpp_type<dtype::int64> { using type = long long; };
template <> struct cpp_type<dtype::float32> { using type = float; };
template <> struct cpp_type<dtype::float64> { using type = double; };
template <dtype D> using cpp_type_t = typename cpp_type<D>::type;

// Calls f(T{}) with the C++ type of t: the one place a runtime dtype becomes a type.
template <class F> decltype(auto) visit_dtype(dtype t, F &&f) {
  switch (t) {
  case dtype::int32: return f(int{});
  case dtype::int64: return f(0LL);
  case dtype::float32: return f(0.0f);
  case dtype::float64: break;
  }
  return f(0.0);
}

} // namespace reducetune
