#include "reducetune/verify/tolerance.hpp"

#include <cmath>

namespace reducetune {

bool gamma_is_rigorous(std::uint64_t k, long double u) noexcept {
  return static_cast<long double>(k) * u < 0.5L;
}

long double gamma_bound(std::uint64_t k, long double u) noexcept {
  const long double ku = static_cast<long double>(k) * u;
  return gamma_is_rigorous(k, u) ? ku / (1 - ku) : ku;
}

long double float_tolerance(reduce_op op, const float_reference &ref, long double u,
                            tolerance_options options) {
  if (op == reduce_op::min || op == reduce_op::max || ref.exact_in_any_order) return 0;
  const std::uint64_t rounds = ref.count > 0 ? ref.count - 1 : 0;
  const std::uint64_t depth = options.depth != 0 ? options.depth : rounds;
  const long double reference_error = 4 * unit_roundoff<long double>() * ref.abs_sum;
  if (op == reduce_op::sum) return gamma_bound(depth, u) * ref.abs_sum + reference_error;
  return gamma_bound(rounds, u) * std::fabs(ref.value) + reference_error; // prod
}

long double half_tolerance(reduce_op op, const float_reference &ref, long double u_out,
                           tolerance_options options) {
  if (op == reduce_op::min || op == reduce_op::max) return 0;
  const long double exact_rounding = u_out * std::fabs(ref.value);
  if (ref.exact_in_any_order) return exact_rounding;
  const long double u_acc = unit_roundoff<float>(); // 2^-24: the float32 accumulator
  const std::uint64_t rounds = ref.count > 0 ? ref.count - 1 : 0;
  const std::uint64_t depth = op == reduce_op::sum && options.depth != 0 ? options.depth : rounds;
  const long double magnitude = op == reduce_op::sum ? ref.abs_sum : std::fabs(ref.value);
  const long double reference_error = 4 * unit_roundoff<long double>() * ref.abs_sum;
  return exact_rounding + (1 + u_out) * gamma_bound(depth, u_acc) * magnitude + reference_error;
}

std::uint64_t stage_depth(std::uint64_t elements, std::uint64_t lanes) noexcept {
  if (lanes == 0) lanes = 1;
  std::uint64_t levels = 0;
  while ((std::uint64_t{1} << levels) < lanes) ++levels;
  return (elements + lanes - 1) / lanes + levels;
}

} // namespace reducetune
