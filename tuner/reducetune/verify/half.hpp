// Host forms of the half types (float16: IEEE binary16; bfloat16: the top half of a float32),
// for the verifier, the data patterns and tests: 16 bits, converted exactly to float and
// rounded to nearest even from double, with subnormals, infinities and NaN.
//
// They convert implicitly both ways, so that code written for float (a + b, x < 0, T(1),
// static_cast<T>(0.1)) computes in float and rounds once when it stores a T: the rounding a
// GPU's __float2half_rn / __float2bfloat16_rn does. std::numeric_limits is specialised, so
// unit_roundoff<T>() and friends need no special case. GCC 12 has no std::float16_t.
#pragma once

#include <cstdint>
#include <limits>

namespace reducetune {

// The binary format: `mantissa` stored fraction bits, exponent bias.
template <int Mantissa, int Bias> struct half_format {
  static constexpr int mantissa = Mantissa;
  static constexpr int bias = Bias;
  static constexpr int exponent_bits = 15 - Mantissa;
  static constexpr int min_exponent = 1 - Bias;                        // of a normal
  static constexpr int max_exponent = (1 << exponent_bits) - 2 - Bias; // of the largest
};

// Round x to the nearest value of the format (ties to even), overflowing to ±inf.
template <class F> [[nodiscard]] std::uint16_t encode_half(double x) noexcept;
template <class F> [[nodiscard]] float decode_half(std::uint16_t bits) noexcept;

template <class F> struct half_value {
  using format = F;
  std::uint16_t bits = 0;

  half_value() = default;
  half_value(double x) noexcept : bits(encode_half<F>(x)) {}       // NOLINT: rounds, like a store
  operator float() const noexcept { return decode_half<F>(bits); } // NOLINT: exact
  [[nodiscard]] static half_value from_bits(std::uint16_t b) noexcept {
    half_value h;
    h.bits = b;
    return h;
  }
};

using float16 = half_value<half_format<10, 15>>;
using bfloat16 = half_value<half_format<7, 127>>;
static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2, "one element is 16 bits");

template <class T> inline constexpr bool is_half_v = false;
template <class F> inline constexpr bool is_half_v<half_value<F>> = true;

} // namespace reducetune

namespace std {
template <class F> class numeric_limits<reducetune::half_value<F>> {
  using H = reducetune::half_value<F>;
  static constexpr std::uint16_t exponent_mask =
      static_cast<std::uint16_t>(((1u << F::exponent_bits) - 1u) << F::mantissa);

public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = F::mantissa + 1;
  static constexpr int radix = 2;
  static constexpr int min_exponent = F::min_exponent + 1; // as <limits> counts: 2^(e-1)
  static constexpr int max_exponent = F::max_exponent + 1;
  static H epsilon() noexcept { // 2^-mantissa
    return H::from_bits(static_cast<std::uint16_t>((F::bias - F::mantissa) << F::mantissa));
  }
  static H min() noexcept { return H::from_bits(static_cast<std::uint16_t>(1u << F::mantissa)); }
  static H max() noexcept { return H::from_bits(static_cast<std::uint16_t>(exponent_mask - 1u)); }
  static H lowest() noexcept {
    return H::from_bits(static_cast<std::uint16_t>(0x8000u | (exponent_mask - 1u)));
  }
  static H denorm_min() noexcept { return H::from_bits(1); }
  static H infinity() noexcept { return H::from_bits(exponent_mask); }
  static H quiet_NaN() noexcept {
    return H::from_bits(static_cast<std::uint16_t>(exponent_mask | (1u << (F::mantissa - 1))));
  }
};
} // namespace std
