// Typed helpers over the element types of a workload (int32 → int, int64 → long long,
// float32 → float, float64 → double, float16 → float16, bfloat16 → bfloat16: the host forms
// of verify/half.hpp, which compute in float and round when stored).
#pragma once

// The names and enums live in the space layer (space/element.hpp), the one place they are
// defined; this header adds the typed helpers the verifier and the runner need.
#include "reducetune/space/element.hpp"
#include "reducetune/verify/half.hpp"

#include <string>

namespace reducetune {

[[nodiscard]] inline reduce_op reduce_op_from_string(const std::string &name) {
  return op_from_string(name);
}

// The C++ type of a dtype, for the typed parts of the verifier and the runner.
template <dtype D> struct element_type;
template <> struct element_type<dtype::int32> { using type = int; };
template <> struct element_type<dtype::int64> { using type = long long; };
template <> struct element_type<dtype::float32> { using type = float; };
template <> struct element_type<dtype::float64> { using type = double; };
template <> struct element_type<dtype::float16> { using type = float16; };
template <> struct element_type<dtype::bfloat16> { using type = bfloat16; };
template <dtype D> using element_type_t = typename element_type<D>::type;

// Calls f(T{}) with the C++ type of t: the one place a runtime dtype becomes a type.
template <class F> decltype(auto) visit_dtype(dtype t, F &&f) {
  switch (t) {
  case dtype::int32: return f(int{});
  case dtype::int64: return f(0LL);
  case dtype::float32: return f(0.0f);
  case dtype::float16: return f(float16{});
  case dtype::bfloat16: return f(bfloat16{});
  case dtype::float64: break;
  }
  return f(0.0);
}

} // namespace reducetune
