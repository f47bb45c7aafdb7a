// The element types and operators a reduction is tuned for, with the names used in labels,
// expressions (T/dtype, Op/op) and name expressions ({T}, {Op}).
#pragma once

#include <cstddef>
#include <string>

namespace reducetune {

// float16 and bfloat16 (the half types) accumulate in float32 and never keep a partial in 16
// bits (DESIGN.md): their accumulator is float32 (accumulator_of), which sizes every partial
// and shared-memory slot of a reduction of them.
//
// Output type: a reduction writes its input's type, rounded once from the float32
// accumulator, unless the call asks for float32. The choice belongs to the call, not to the
// problem (the same tuned point serves both; only the last store differs): the kernels take
// it as their Out argument (common/rt_types.cuh from_acc; the tunable family's pass_out and
// final_pass_out), the verifier as tolerance_options::float32_output, and the planner's `out`
// holds 4 bytes (accumulator_bytes). The runtime and the search space do not select it yet.
enum class dtype { int32, int64, float32, float64, float16, bfloat16 };
enum class reduce_op { sum, min, max, prod };

inline constexpr dtype all_dtypes[] = {dtype::int32,   dtype::int64,   dtype::float32,
                                       dtype::float64, dtype::float16, dtype::bfloat16};
inline constexpr reduce_op all_ops[] = {reduce_op::sum, reduce_op::min, reduce_op::max,
                                        reduce_op::prod};

[[nodiscard]] const char *to_string(dtype t) noexcept;     // "float32"
[[nodiscard]] const char *to_string(reduce_op o) noexcept; // "sum"
// Throw invalid_configuration listing the valid names.
[[nodiscard]] dtype dtype_from_string(const std::string &name);
[[nodiscard]] reduce_op op_from_string(const std::string &name);

[[nodiscard]] std::size_t size_of(dtype t) noexcept;
[[nodiscard]] bool is_integer(dtype t) noexcept;
// float16 or bfloat16: 16-bit floating types that accumulate in float32.
[[nodiscard]] bool is_half(dtype t) noexcept;
// The type a reduction of t combines in: float32 for the half types, t itself otherwise.
[[nodiscard]] dtype accumulator_of(dtype t) noexcept;
// Bytes of one partial (an accumulator) for elements of element_bytes: a 2-byte element's
// partials are float32. For the planners that know only an element's size.
[[nodiscard]] constexpr std::size_t accumulator_bytes(std::size_t element_bytes) noexcept {
  return element_bytes < 4 ? 4 : element_bytes;
}
// Spellings in a name expression: int, long long, float, double, __half, __nv_bfloat16
// (cuda_fp16.h, cuda_bf16.h); rt::op_sum, ...
[[nodiscard]] const char *cpp_type(dtype t) noexcept;
[[nodiscard]] const char *cpp_op(reduce_op o) noexcept;

} // namespace reducetune
