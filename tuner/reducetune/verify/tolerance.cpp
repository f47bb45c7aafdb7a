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

} // namespace reducetune
