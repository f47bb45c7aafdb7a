#include "reducetune/verify/half.hpp"

#include <algorithm>
#include <cmath>

namespace reducetune {

template <class F> std::uint16_t encode_half(double x) noexcept {
  constexpr std::uint16_t exponent_mask =
      static_cast<std::uint16_t>(((1u << F::exponent_bits) - 1u) << F::mantissa);
  const std::uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  if (std::isnan(x)) return static_cast<std::uint16_t>(exponent_mask | (1u << (F::mantissa - 1)));
  const double a = std::fabs(x);
  if (a == 0) return sign;
  // The quantum of a's binade (subnormals share the smallest normal binade's quantum): a / q
  // is exact, and nearbyint rounds it to nearest even in the default rounding mode.
  int e = 0;
  (void)std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1): binade 2^(e - 1)
  const int binade = std::isinf(a) ? F::max_exponent + 1 : std::max(e - 1, F::min_exponent);
  const double quantum = std::ldexp(1.0, binade - F::mantissa);
  const double r = std::isinf(a) ? a : std::nearbyint(a / quantum) * quantum;
  if (r >= std::ldexp(1.0, F::max_exponent + 1))
    return static_cast<std::uint16_t>(sign | exponent_mask);
  if (r < std::ldexp(1.0, F::min_exponent)) // subnormal (or rounded up to the smallest normal)
    return static_cast<std::uint16_t>(
        sign | static_cast<std::uint16_t>(std::ldexp(r, F::mantissa - F::min_exponent)));
  (void)std::frexp(r, &e); // rounding may have carried into the next binade
  const int exponent = e - 1;
  const auto fraction =
      static_cast<std::uint32_t>(std::ldexp(r, F::mantissa - exponent)) - (1u << F::mantissa);
  return static_cast<std::uint16_t>(
      sign | (static_cast<std::uint32_t>(exponent + F::bias) << F::mantissa) | fraction);
}

template <class F> float decode_half(std::uint16_t bits) noexcept {
  const unsigned field = (bits >> F::mantissa) & ((1u << F::exponent_bits) - 1u);
  const unsigned fraction = bits & ((1u << F::mantissa) - 1u);
  const float sign = bits & 0x8000u ? -1.0f : 1.0f;
  if (field == (1u << F::exponent_bits) - 1u)
    return fraction != 0 ? std::numeric_limits<float>::quiet_NaN()
                         : sign * std::numeric_limits<float>::infinity();
  if (field == 0) // subnormal or zero: fraction · 2^(emin − mantissa), exact in float
    return sign * std::ldexp(static_cast<float>(fraction), F::min_exponent - F::mantissa);
  return sign * std::ldexp(static_cast<float>(fraction | (1u << F::mantissa)),
                           static_cast<int>(field) - F::bias - F::mantissa);
}

template std::uint16_t encode_half<float16::format>(double) noexcept;
template std::uint16_t encode_half<bfloat16::format>(double) noexcept;
template float decode_half<float16::format>(std::uint16_t) noexcept;
template float decode_half<bfloat16::format>(std::uint16_t) noexcept;

} // namespace reducetune
