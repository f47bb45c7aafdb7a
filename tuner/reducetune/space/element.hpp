// The element types and operators a reduction is tuned for, with the names used in labels,
// expressions (T/dtype, Op/op) and name expressions ({T}, {Op}).
#pragma once

#include <cstddef>
#include <string>

namespace reducetune {

enum class dtype { int32, int64, float32, float64 };
enum class reduce_op { sum, min, max, prod };

inline constexpr dtype all_dtypes[] = {dtype::int32, dtype::int64, dtype::float32, dtype::float64};
inline constexpr reduce_op all_ops[] = {reduce_op::sum, reduce_op::min, reduce_op::max,
                                        reduce_op::prod};

[[nodiscard]] const char *to_string(dtype t) noexcept;     // "float32"
[[nodiscard]] const char *to_string(reduce_op o) noexcept; // "sum"
// Throw invalid_configuration listing the valid names.
[[nodiscard]] dtype dtype_from_string(const std::string &name);
[[nodiscard]] reduce_op op_from_string(const std::string &name);

[[nodiscard]] std::size_t size_of(dtype t) noexcept;
[[nodiscard]] bool is_integer(dtype t) noexcept;
// Spellings in a name expression: int, long long, float, double; rt::op_sum, ...
[[nodiscard]] const char *cpp_type(dtype t) noexcept;
[[nodiscard]] const char *cpp_op(reduce_op o) noexcept;

} // namespace reducetune
