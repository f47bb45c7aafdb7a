#include "reducetune/verify/reference.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/verify/chunks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <bit>
#include <limits>
#include <type_traits>
#include <vector>

namespace reducetune {
namespace {

template <class T> T integer_sum(std::span<const T> data) {
  using U = std::make_unsigned_t<T>;
  U acc = 0;
  for (T x : data) acc = static_cast<U>(acc + static_cast<U>(x));
  return static_cast<T>(acc);
}

template <class T> T integer_prod(std::span<const T> data) {
  using U = std::make_unsigned_t<T>;
  U acc = 1;
  for (T x : data) acc = static_cast<U>(acc * static_cast<U>(x));
  return static_cast<T>(acc);
}

// Exponent of the lowest set bit of a finite non-zero x: x is an integer multiple of 2^result.
// Read off the IEEE bits (exponent field, mantissa with its implicit bit, trailing zeros) in
// constant time: the loop over long double halvings it replaces cost ~150 ns per element,
// minutes for a 2^30-element reference.
template <class T> int lowest_bit_exponent(T x) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr int mantissa_bits = std::numeric_limits<T>::digits - 1;      // 23 or 52
  constexpr int bias = std::numeric_limits<T>::max_exponent - 1;         // 127 or 1023
  constexpr int exponent_bits = static_cast<int>(8 * sizeof(T)) - 1 - mantissa_bits;
  const U bits = std::bit_cast<U>(x);
  const U fraction = bits & ((U{1} << mantissa_bits) - 1);
  const int field = static_cast<int>((bits >> mantissa_bits) & ((U{1} << exponent_bits) - 1));
  const U mantissa = field == 0 ? fraction : (fraction | (U{1} << mantissa_bits)); // subnormal
  const int exponent = (field == 0 ? 1 : field) - bias;
  return exponent - mantissa_bits + std::countr_zero(mantissa);
}

template <class T> float_reference float_sum(std::span<const T> data) {
  float_reference r;
  r.count = data.size();
  long double sum = 0, compensation = 0, abs_sum = 0;
  bool pos_inf = false, neg_inf = false;
  int q = std::numeric_limits<int>::max(); // every finite input is a multiple of 2^q
  for (T x : data) {
    if (std::isnan(x)) {
      r.has_nan = true;
      continue;
    }
    if (std::isinf(x)) {
      (x > 0 ? pos_inf : neg_inf) = true;
      continue;
    }
    const long double v = x;
    // Neumaier: keep the low-order part lost by each addition, whichever operand is larger.
    const long double t = sum + v;
    compensation += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
    abs_sum += std::fabs(v);
    if (x != 0) q = std::min(q, lowest_bit_exponent(x));
  }
  r.value = sum + compensation;
  r.abs_sum = abs_sum;
  if (r.has_nan || (pos_inf && neg_inf)) r.special = special_result::nan;
  else if (pos_inf) r.special = special_result::pos_inf;
  else if (neg_inf) r.special = special_result::neg_inf;
  // Every partial sum of any order is an integer multiple of 2^q of magnitude ≤ Σ|x|, hence
  // representable in T (p = digits) when Σ|x| ≤ 2^(q+p): no addition ever rounds.
  r.exact_in_any_order =
      q == std::numeric_limits<int>::max() ||
      abs_sum <= std::ldexp(1.0L, q + std::numeric_limits<T>::digits);
  return r;
}

template <class T> float_reference float_prod(std::span<const T> data) {
  float_reference r;
  r.count = data.size();
  bool zero = false, inf = false, negative = false, powers_of_two = true;
  long double mantissa = 1;
  long long exponent = 0;                  // result = mantissa · 2^exponent
  long long exp_up = 0, exp_down = 0;      // Σ of exponents of |x| ≥ 1, of |x| < 1
  for (T x : data) {
    if (std::isnan(x)) {
      r.has_nan = true;
      continue;
    }
    negative ^= std::signbit(x);
    if (x == 0) {
      zero = true;
      continue;
    }
    if (std::isinf(x)) {
      inf = true;
      continue;
    }
    int e = 0;
    const long double m = std::frexp(static_cast<long double>(std::fabs(x)), &e);
    powers_of_two = powers_of_two && m == 0.5L;
    // |x| ∈ [2^(e-1), 2^e), and |x| = 2^(e-1) exactly when m = 1/2.
    if (std::fabs(x) >= 1) exp_up += m == 0.5L ? e - 1 : e;
    else exp_down += e - 1;
    int me = 0;
    mantissa = std::frexp(mantissa * m, &me);
    exponent += e + me;
  }
  if (r.has_nan || (zero && inf)) r.special = special_result::nan;
  else if (inf) r.special = negative ? special_result::neg_inf : special_result::pos_inf;
  if (zero) {
    r.value = negative ? -0.0L : 0.0L;
    r.exact_in_any_order = true;
    return r;
  }
  const long long clamped = std::max(-20000LL, std::min(20000LL, exponent));
  r.value = std::ldexp(negative ? -mantissa : mantissa, static_cast<int>(clamped));
  r.abs_sum = std::fabs(r.value);
  // Partial products of any order lie in [2^exp_down, 2^exp_up] (bounds of the product of
  // all small factors and of all large ones); outside T's normal range some order rounds
  // differently from the relative bound (overflow, or subnormal underflow).
  r.partial_range_unsafe = exp_up > std::numeric_limits<T>::max_exponent - 1 ||
                           exp_down < std::numeric_limits<T>::min_exponent - 1;
  r.exact_in_any_order = powers_of_two && !r.partial_range_unsafe;
  return r;
}

// An integer sum, min or max over chunks on the machine's threads (verify/chunks.hpp), the
// chunks' results combined in order: exact in any order (the sum modulo 2^bits), so one pass's
// value. One thread took 0.2 s for 2^28 int64 (min or max).
template <class T> T integer_over_chunks(reduce_op op, std::span<const T> data) {
  auto reduce = [op](std::span<const T> part) {
    switch (op) {
    case reduce_op::min: return *std::min_element(part.begin(), part.end());
    case reduce_op::max: return *std::max_element(part.begin(), part.end());
    default: return integer_sum(part);
    }
  };
  std::vector<T> parts(chunks_of(data.size()));
  for_each_chunk(data.size(), [&](std::uint64_t c, std::uint64_t begin, std::uint64_t end) {
    parts[c] = reduce(data.subspan(begin, end - begin));
  });
  return reduce(std::span<const T>(parts));
}

// The first of the most extreme non-NaN values of one chunk (min or max): found, the value,
// and whether a NaN was seen.
struct extreme {
  bool any = false;
  long double best = 0;
  bool has_nan = false;
};

template <class T> extreme chunk_extreme(reduce_op op, std::span<const T> data) {
  extreme e;
  for (T x : data) {
    if (std::isnan(x)) {
      e.has_nan = true;
      continue;
    }
    // -0 and +0 compare equal; the first one seen is kept, the comparison treats them as one.
    if (!e.any || (op == reduce_op::min ? x < e.best : x > e.best)) e.best = x;
    e.any = true;
  }
  return e;
}

// Min and max over chunks on the machine's threads (verify/chunks.hpp), the chunks' extremes
// combined in order with the same strict comparison: the value one pass keeps, the first of
// equal ones (a -0 before a +0) included. One thread took 1.3 s for 2^30 floats (x87 compares).
template <class T> float_reference float_minmax(reduce_op op, std::span<const T> data) {
  std::vector<extreme> parts(chunks_of(data.size()));
  for_each_chunk(data.size(), [&](std::uint64_t c, std::uint64_t begin, std::uint64_t end) {
    parts[c] = chunk_extreme(op, data.subspan(begin, end - begin));
  });
  float_reference r;
  r.count = data.size();
  extreme all;
  for (const extreme &e : parts) {
    all.has_nan = all.has_nan || e.has_nan;
    if (e.any && (!all.any || (op == reduce_op::min ? e.best < all.best : e.best > all.best)))
      all.best = e.best;
    all.any = all.any || e.any;
  }
  const long double best = all.best;
  r.has_nan = all.has_nan;
  r.all_nan = !all.any;
  r.value = r.value_without_nan = best;
  if (r.all_nan) r.special = special_result::nan;
  else if (std::isinf(best)) r.special = best > 0 ? special_result::pos_inf : special_result::neg_inf;
  r.exact_in_any_order = true;
  return r;
}

} // namespace

template <class T> T reference_integer(reduce_op op, std::span<const T> data) {
  static_assert(std::is_integral_v<T> && std::is_signed_v<T>);
  if (data.empty()) throw invalid_configuration("a reduction needs n >= 1 elements");
  if (op == reduce_op::prod) return integer_prod(data);
  return integer_over_chunks(op, data);
}

template <class T> float_reference reference_float(reduce_op op, std::span<const T> data) {
  static_assert(std::is_floating_point_v<T>);
  if (data.empty()) throw invalid_configuration("a reduction needs n >= 1 elements");
  switch (op) {
  case reduce_op::sum: return float_sum(data);
  case reduce_op::prod: return float_prod(data);
  case reduce_op::min:
  case reduce_op::max: return float_minmax(op, data);
  }
  throw invalid_configuration("unknown operator");
}

template <class H> float_reference reference_half(reduce_op op, std::span<const H> data) {
  static_assert(is_half_v<H>);
  const std::vector<float> widened(data.begin(), data.end()); // exact
  return reference_float<float>(op, widened);
}

template int reference_integer<int>(reduce_op, std::span<const int>);
template long long reference_integer<long long>(reduce_op, std::span<const long long>);
template float_reference reference_float<float>(reduce_op, std::span<const float>);
template float_reference reference_float<double>(reduce_op, std::span<const double>);
template float_reference reference_half<float16>(reduce_op, std::span<const float16>);
template float_reference reference_half<bfloat16>(reduce_op, std::span<const bfloat16>);

} // namespace reducetune
