#include "reducetune/verify/reference.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/verify/chunks.hpp"
#include "reducetune/verify/exact_sum.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
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

// What a float sum found: Σx and Σ|x| in long double, the exponent q of the lowest set bit of
// every finite input (each a multiple of 2^q), and the special values seen.
struct sum_found {
  long double value = 0, abs_sum = 0;
  int q = INT_MAX;
  bool nan = false, pos_inf = false, neg_inf = false;
};

// Returns false for a finite x, else records it.
template <class T> bool special_seen(T x, sum_found &found) {
  if (std::isfinite(x)) return false;
  if (std::isnan(x))
    found.nan = true;
  else
    (x > 0 ? found.pos_inf : found.neg_inf) = true;
  return true;
}

// Exponent of the lowest set bit of a finite non-zero x: x is an integer multiple of 2^result.
// Read off the IEEE bits (exponent field, mantissa with its implicit bit, trailing zeros) in
// constant time: the loop over long double halvings it replaces cost ~150 ns per element,
// minutes for a 2^30-element reference.
template <class T> int lowest_bit_exponent(T x) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr int mantissa_bits = std::numeric_limits<T>::digits - 1; // 23 or 52
  constexpr int bias = std::numeric_limits<T>::max_exponent - 1;    // 127 or 1023
  constexpr int exponent_bits = static_cast<int>(8 * sizeof(T)) - 1 - mantissa_bits;
  const U bits = std::bit_cast<U>(x);
  const U fraction = bits & ((U{1} << mantissa_bits) - 1);
  const int field = static_cast<int>((bits >> mantissa_bits) & ((U{1} << exponent_bits) - 1));
  const U mantissa = field == 0 ? fraction : (fraction | (U{1} << mantissa_bits)); // subnormal
  const int exponent = (field == 0 ? 1 : field) - bias;
  return exponent - mantissa_bits + std::countr_zero(mantissa);
}

// One chunk or less, on this thread: Neumaier's compensated sum in long double, as the
// reference always was there. Why not the exact sum: its bins (80 KiB for double) and their
// rounding cost microseconds, where an axis problem checks millions of rows of a few elements.
template <class T, class E> sum_found compensated_sum(std::span<const E> data) {
  sum_found found;
  long double compensation = 0;
  for (const E element : data) {
    const T x = static_cast<T>(element);
    if (special_seen(x, found)) continue;
    const long double v = x, t = found.value + v;
    // Neumaier: keep the low-order part lost by each addition, whichever operand is larger.
    compensation +=
        std::fabs(found.value) >= std::fabs(v) ? (found.value - t) + v : (v - t) + found.value;
    found.value = t;
    found.abs_sum += std::fabs(v);
    if (x != 0) found.q = std::min(found.q, lowest_bit_exponent(x));
  }
  found.value += compensation;
  return found;
}

// One thread's share of a longer sum: the exact sum of its finite values, and the others seen.
template <class T> struct sum_part {
  exact_sum<T> finite;
  sum_found special;
};

// The exact sum (verify/exact_sum.hpp) over chunks on the machine's threads, one part per
// thread, the parts merged in any order, rounded once: the same value on every machine, never
// further from the exact one than the compensated sum. That one, on one thread, took ~2 s for
// 2^28 float32 on an H200's host, ~8 s for 2^30.
template <class T, class E> sum_found exact_over_chunks(std::span<const E> data) {
  std::vector<sum_part<T>> parts(chunk_threads(data.size()));
  for_each_chunk_by_worker(
      data.size(), parts.size(),
      [&](std::uint64_t worker, std::uint64_t, std::uint64_t begin, std::uint64_t end) {
        sum_part<T> &part = parts[worker];
        for (const E element : data.subspan(begin, end - begin)) {
          const T x = static_cast<T>(element);
          if (!part.finite.add(x)) special_seen(x, part.special);
        }
      });
  sum_part<T> &all = parts[0];
  for (std::size_t k = 1; k < parts.size(); ++k) {
    all.finite.merge(parts[k].finite);
    all.special.nan = all.special.nan || parts[k].special.nan;
    all.special.pos_inf = all.special.pos_inf || parts[k].special.pos_inf;
    all.special.neg_inf = all.special.neg_inf || parts[k].special.neg_inf;
  }
  sum_found found = all.special;
  found.value = all.finite.value();
  found.abs_sum = all.finite.abs_value();
  found.q = all.finite.lowest_bit();
  return found;
}

template <class T, class E> float_reference float_sum(std::span<const E> data) {
  const sum_found found =
      data.size() <= chunk_elements ? compensated_sum<T>(data) : exact_over_chunks<T>(data);
  float_reference r;
  r.count = data.size();
  r.value = found.value;
  r.abs_sum = found.abs_sum;
  r.has_nan = found.nan;
  if (r.has_nan || (found.pos_inf && found.neg_inf))
    r.special = special_result::nan;
  else if (found.pos_inf)
    r.special = special_result::pos_inf;
  else if (found.neg_inf)
    r.special = special_result::neg_inf;
  // Every partial sum of any order is an integer multiple of 2^q of magnitude ≤ Σ|x|, hence
  // representable in T (p = digits) when Σ|x| ≤ 2^(q+p): no addition ever rounds. (The exact
  // sum's Σ|x| is rounded to nearest, and a multiple of 2^q above 2^(q+p) is at least 2^-p
  // above it, far more than a long double's rounding: the comparison is the exact one.)
  r.exact_in_any_order =
      found.q == INT_MAX || r.abs_sum <= std::ldexp(1.0L, found.q + std::numeric_limits<T>::digits);
  return r;
}

template <class T, class E> float_reference float_prod(std::span<const E> data) {
  float_reference r;
  r.count = data.size();
  bool zero = false, inf = false, negative = false, powers_of_two = true;
  long double mantissa = 1;
  long long exponent = 0;             // result = mantissa · 2^exponent
  long long exp_up = 0, exp_down = 0; // Σ of exponents of |x| ≥ 1, of |x| < 1
  for (const E element : data) {
    const T x = static_cast<T>(element);
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
    if (std::fabs(x) >= 1)
      exp_up += m == 0.5L ? e - 1 : e;
    else
      exp_down += e - 1;
    int me = 0;
    mantissa = std::frexp(mantissa * m, &me);
    exponent += e + me;
  }
  if (r.has_nan || (zero && inf))
    r.special = special_result::nan;
  else if (inf)
    r.special = negative ? special_result::neg_inf : special_result::pos_inf;
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
    case reduce_op::min:
      return *std::min_element(part.begin(), part.end());
    case reduce_op::max:
      return *std::max_element(part.begin(), part.end());
    default:
      return integer_sum(part);
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

// The running extreme is kept in T, not long double: the same comparisons, without an x87
// load and compare per element (float64 max at 2^28 took 0.32 s on the build machine's 2 cores).
template <class T, class E> extreme chunk_extreme(reduce_op op, std::span<const E> data) {
  extreme e;
  T best{};
  for (const E element : data) {
    const T x = static_cast<T>(element);
    if (std::isnan(x)) {
      e.has_nan = true;
      continue;
    }
    // -0 and +0 compare equal; the first one seen is kept, the comparison treats them as one.
    if (!e.any || (op == reduce_op::min ? x < best : x > best)) best = x;
    e.any = true;
  }
  e.best = best;
  return e;
}

// Min and max over chunks on the machine's threads (verify/chunks.hpp), the chunks' extremes
// combined in order with the same strict comparison: the value one pass keeps, the first of
// equal ones (a -0 before a +0) included. One thread took 1.3 s for 2^30 floats (x87 compares).
template <class T, class E> float_reference float_minmax(reduce_op op, std::span<const E> data) {
  std::vector<extreme> parts(chunks_of(data.size()));
  for_each_chunk(data.size(), [&](std::uint64_t c, std::uint64_t begin, std::uint64_t end) {
    parts[c] = chunk_extreme<T>(op, data.subspan(begin, end - begin));
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
  if (r.all_nan)
    r.special = special_result::nan;
  else if (std::isinf(best))
    r.special = best > 0 ? special_result::pos_inf : special_result::neg_inf;
  r.exact_in_any_order = true;
  return r;
}

// T is the accumulator (float or double), E the element: T itself, or a half type whose values
// float holds exactly (the reference of its float32 accumulator, without a widened copy).
template <class T, class E> float_reference float_reduce(reduce_op op, std::span<const E> data) {
  if (data.empty()) throw invalid_configuration("a reduction needs n >= 1 elements");
  switch (op) {
  case reduce_op::sum:
    return float_sum<T>(data);
  case reduce_op::prod:
    return float_prod<T>(data);
  case reduce_op::min:
  case reduce_op::max:
    return float_minmax<T>(op, data);
  }
  throw invalid_configuration("unknown operator");
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
  return float_reduce<T>(op, data);
}

// The inputs' float32 values are exact; read one by one, not copied (a copy of 2^30 float16
// was 4 GiB, zeroed and filled on one thread).
template <class H> float_reference reference_half(reduce_op op, std::span<const H> data) {
  static_assert(is_half_v<H>);
  return float_reduce<float>(op, data);
}

template int reference_integer<int>(reduce_op, std::span<const int>);
template long long reference_integer<long long>(reduce_op, std::span<const long long>);
template float_reference reference_float<float>(reduce_op, std::span<const float>);
template float_reference reference_float<double>(reduce_op, std::span<const double>);
template float_reference reference_half<float16>(reduce_op, std::span<const float16>);
template float_reference reference_half<bfloat16>(reduce_op, std::span<const bfloat16>);

} // namespace reducetune
