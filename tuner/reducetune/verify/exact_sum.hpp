// The exact sum of finite float or double values, rounded once, to the nearest long double.
//
// Each value's integer significand is added into the bin of its exponent field, positives and
// negatives apart, so that no bit is ever lost: Σx = P − N and Σ|x| = P + N are exact until
// value() and abs_value() round them. Why: the reference's sequential compensated sum in long
// double (one thread, ~7 ns an element) was most of a tune's workload preparation (~8 s for
// 2^30 float64 on an H200's host), and an exact sum is the same whatever the order its parts
// are added in, so the chunks of verify/chunks.hpp can be summed on any number of threads and
// still give one answer. Correctly rounded, it is never further from the exact sum than the
// compensated one was (tests/cpp/verify/test_reference.cpp has a case where it is closer).
#pragma once

#include <bit>
#include <climits>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace reducetune {

template <class T> class exact_sum {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);

public:
  using bits_type = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  static constexpr int mantissa_bits = std::numeric_limits<T>::digits - 1; // 23 or 52
  static constexpr int exponent_bits = static_cast<int>(8 * sizeof(T)) - 1 - mantissa_bits;
  static constexpr int fields = (1 << exponent_bits) - 1; // the finite ones: 255 or 2047
  // The smallest subnormal's exponent, -149 or -1074: the bins count multiples of 2^unit.
  static constexpr int unit = 2 - (1 << (exponent_bits - 1)) - mantissa_bits;
  // A significand is split at this bit into two bins (double's 53 bits would fill a 64-bit
  // bin in 2^11 additions); each part below 2^27, a bin takes 2^37 values.
  static constexpr int split = 26;

  exact_sum() : m_bins(fields) {}

  // Adds x if it is finite; false for a NaN or an infinity, which the caller sorts out (one
  // test of the exponent field, instead of isnan and isinf on every element). 2^37 values at
  // most.
  bool add(T x) noexcept {
    const bits_type b = std::bit_cast<bits_type>(x);
    const auto field = static_cast<unsigned>((b >> mantissa_bits) & fields);
    if (field == fields) return false;
    const bits_type fraction = b & ((bits_type{1} << mantissa_bits) - 1);
    const std::uint64_t m = field == 0 ? fraction : fraction | (bits_type{1} << mantissa_bits);
    const unsigned sign = static_cast<unsigned>(b >> (8 * sizeof(T) - 1));
    bin &k = m_bins[field];
    k.ored |= m;
    k.low[sign] += m & ((std::uint64_t{1} << split) - 1);
    if constexpr (mantissa_bits >= split) k.high[sign] += m >> split;
    return true;
  }

  // Adds what other summed: the sum of both sets of values, exactly.
  void merge(const exact_sum &other) noexcept;

  [[nodiscard]] long double value() const;     // Σx, rounded to nearest (ties to even)
  [[nodiscard]] long double abs_value() const; // Σ|x|, likewise
  // The exponent of the lowest set bit over every non-zero value added (each is an integer
  // multiple of 2^lowest_bit()); INT_MAX when every value was zero.
  [[nodiscard]] int lowest_bit() const noexcept;

private:
  struct bin {
    std::uint64_t low[2] = {0, 0};  // [sign]: Σ of significands' low `split` bits
    std::uint64_t high[2] = {0, 0}; // their bits from `split` up
    std::uint64_t ored = 0;         // every significand or-ed: its lowest set bit is theirs
  };
  enum class combine { difference, total };
  [[nodiscard]] long double rounded(combine how) const;

  std::vector<bin> m_bins; // by exponent field: 80 KiB for double, on the heap
};

extern template class exact_sum<float>;
extern template class exact_sum<double>;

} // namespace reducetune
