#include "reducetune/verify/exact_sum.hpp"

#include <algorithm>
#include <cmath>

namespace reducetune {
namespace {

// A non-negative integer in 64-bit limbs, lowest first: the exact sum in units of the type's
// smallest subnormal, 2^(1 - bias - mantissa bits).
using limbs = std::vector<std::uint64_t>;

void add_at(limbs &x, std::uint64_t v, int bit) {
  std::size_t i = static_cast<std::size_t>(bit / 64);
  const int shift = bit % 64;
  std::uint64_t carry = shift ? v >> (64 - shift) : 0;
  v <<= shift;
  for (; v || carry; ++i) {
    const std::uint64_t before = x[i];
    x[i] += v;
    const std::uint64_t next = carry + (x[i] < before);
    v = next, carry = 0;
  }
}

void add_limbs(limbs &x, const limbs &y) {
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint64_t s = x[i] + y[i];
    const std::uint64_t out = s + carry;
    carry = (s < x[i]) + (out < s);
    x[i] = out;
  }
}

void subtract(limbs &x, const limbs &y) { // x ≥ y
  std::uint64_t borrow = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint64_t d = x[i] - y[i];
    const std::uint64_t out = d - borrow;
    borrow = (x[i] < y[i]) + (d < borrow);
    x[i] = out;
  }
}

bool less(const limbs &x, const limbs &y) {
  for (std::size_t i = x.size(); i-- > 0;)
    if (x[i] != y[i]) return x[i] < y[i];
  return false;
}

std::uint64_t window(const limbs &x, int bit) { // the 64 bits from `bit` up
  const auto i = static_cast<std::size_t>(bit / 64);
  const int shift = bit % 64;
  if (shift == 0) return x[i];
  return (x[i] >> shift) | (i + 1 < x.size() ? x[i + 1] << (64 - shift) : 0);
}

bool any_below(const limbs &x, int bit) { // some bit under `bit` is set
  const auto whole = static_cast<std::size_t>(bit / 64);
  for (std::size_t i = 0; i < whole; ++i)
    if (x[i]) return true;
  const int rest = bit % 64;
  return rest && (x[whole] & ((std::uint64_t{1} << rest) - 1));
}

// x · 2^unit rounded to the nearest long double (64-bit significand), ties to even.
long double to_long_double(const limbs &x, int unit) {
  int top = -1;
  for (std::size_t i = x.size(); i-- > 0;)
    if (x[i]) {
      top = static_cast<int>(64 * i) + 63 - std::countl_zero(x[i]);
      break;
    }
  if (top < 64) return std::ldexp(static_cast<long double>(x[0]), unit); // exact
  const int low = top - 63; // the significand's lowest bit
  std::uint64_t significand = window(x, low);
  const bool round_bit = (window(x, low - 1) & 1) != 0;
  if (round_bit && (any_below(x, low - 1) || (significand & 1))) {
    if (++significand == 0) return std::ldexp(1.0L, low + 64 + unit); // carried out
  }
  return std::ldexp(static_cast<long double>(significand), low + unit);
}

} // namespace

template <class T> void exact_sum<T>::merge(const exact_sum &other) noexcept {
  for (int f = 0; f < fields; ++f) {
    bin &k = m_bins[f];
    const bin &o = other.m_bins[f];
    k.ored |= o.ored;
    for (int s = 0; s < 2; ++s) k.low[s] += o.low[s], k.high[s] += o.high[s];
  }
}

template <class T> long double exact_sum<T>::rounded(combine how) const {
  // Field f holds multiples of 2^(max(f, 1) - 1) units; a bin's sum is below 2^64, its high
  // part 2^split further up.
  const std::size_t size = (fields + split + 64) / 64 + 2;
  limbs sums[2] = {limbs(size), limbs(size)};
  for (int f = 0; f < fields; ++f) {
    const int at = std::max(f, 1) - 1;
    for (int s = 0; s < 2; ++s) {
      add_at(sums[s], m_bins[f].low[s], at);
      add_at(sums[s], m_bins[f].high[s], at + split);
    }
  }
  if (how == combine::total) {
    add_limbs(sums[0], sums[1]);
    return to_long_double(sums[0], unit);
  }
  const bool negative = less(sums[0], sums[1]);
  subtract(sums[negative], sums[!negative]);
  const long double magnitude = to_long_double(sums[negative], unit);
  return negative ? -magnitude : magnitude;
}

template <class T> long double exact_sum<T>::value() const {
  return rounded(combine::difference);
}

template <class T> long double exact_sum<T>::abs_value() const {
  return rounded(combine::total);
}

template <class T> int exact_sum<T>::lowest_bit() const noexcept {
  int lowest = INT_MAX;
  for (int f = 0; f < fields; ++f)
    if (m_bins[f].ored)
      lowest = std::min(lowest, unit + std::max(f, 1) - 1 + std::countr_zero(m_bins[f].ored));
  return lowest;
}

template class exact_sum<float>;
template class exact_sum<double>;

} // namespace reducetune
