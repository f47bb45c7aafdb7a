#include "reducetune/verify/verify.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

namespace reducetune {
namespace {

std::string format(long double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.21Lg", x);
  return buffer;
}

std::string format(long long x) { return std::to_string(x); }
std::string format(int x) { return std::to_string(x); }

template <class T> verdict verify_integer(reduce_op op, T expected, T got) {
  verdict v;
  v.expected = format(expected);
  v.got = format(got);
  v.ok = got == expected;
  if (!v.ok)
    v.reason = std::string{"integer "} + to_string(op) + " must be exact (wrap-around modulo 2^" +
               std::to_string(8 * sizeof(T)) + "): expected " + v.expected + ", got " + v.got;
  return v;
}

verdict verify_minmax(const float_reference &ref, long double got) {
  verdict v;
  if (ref.all_nan) {
    v.ok = std::isnan(got);
    if (!v.ok) v.reason = "every input is NaN, so the result must be NaN";
    return v;
  }
  const bool equal = got == ref.value_without_nan; // -0 == +0
  if (ref.has_nan) {
    v.ok = std::isnan(got) || equal;
    v.reason = v.ok ? "input holds NaN: NaN or the min/max of the other inputs are accepted"
                    : "input holds NaN: only NaN or the min/max of the non-NaN inputs ("
                      + format(ref.value_without_nan) + ") are accepted";
    return v;
  }
  v.ok = equal;
  if (!v.ok) v.reason = "min/max must be exact";
  return v;
}

const char *special_name(special_result s) {
  switch (s) {
  case special_result::nan: return "NaN";
  case special_result::pos_inf: return "+inf";
  case special_result::neg_inf: return "-inf";
  case special_result::none: break;
  }
  return "finite";
}

template <class T>
verdict verify_rounded(reduce_op op, const float_reference &ref, T got,
                       tolerance_options options) {
  verdict v;
  if (ref.special != special_result::none) {
    v.ok = ref.special == special_result::nan
               ? std::isnan(got)
               : std::isinf(got) && (got > 0) == (ref.special == special_result::pos_inf);
    if (!v.ok)
      v.reason = std::string{"the input's special values make the result "} +
                 special_name(ref.special);
    return v;
  }
  if (std::isinf(static_cast<T>(ref.value)) && got == static_cast<T>(ref.value)) {
    v.ok = true;
    v.reason = "the exact result overflows the element type";
    return v;
  }
  if (!std::isfinite(got)) {
    v.reason = "the exact result is finite but the GPU gave " +
               format(static_cast<long double>(got)) +
               " (a partial result overflowed, or a NaN was made)";
    return v;
  }
  v.tolerance = float_tolerance(op, ref, unit_roundoff<T>(), options);
  v.error = std::fabs(static_cast<long double>(got) - ref.value);
  v.ok = v.error <= v.tolerance;
  const std::uint64_t k = op == reduce_op::sum && options.depth ? options.depth : ref.count - 1;
  const bool rigorous = gamma_is_rigorous(k, unit_roundoff<T>());
  if (!v.ok)
    v.reason = "|got - expected| = " + format(v.error) + " exceeds the tolerance " +
               format(v.tolerance) +
               (v.tolerance == 0 ? std::string{" (every evaluation order is exact here)"}
                                 : std::string{" (gamma_"} + std::to_string(k) +
                                       (op == reduce_op::sum ? " * sum|x|)" : " * |prod|)"));
  else if (v.tolerance > 0 && !rigorous)
    v.reason = "within the first-order estimate k*u*sum|x| (k*u >= 1/2: not a rigorous bound)";
  if (op == reduce_op::prod && ref.partial_range_unsafe)
    v.reason += (v.reason.empty() ? "" : "; ") +
                std::string{"some evaluation order over/underflows the element type, where the "
                            "relative bound does not hold"};
  return v;
}

template <class T>
verdict verify_float(reduce_op op, const float_reference &ref, T got, tolerance_options options,
                     bool describe_passes = true) {
  verdict v = (op == reduce_op::min || op == reduce_op::max)
                  ? verify_minmax(ref, got)
                  : verify_rounded(op, ref, got, options);
  if (v.ok && !describe_passes) return v;
  v.expected = ref.special == special_result::none || op == reduce_op::min ||
                       op == reduce_op::max
                   ? format(ref.all_nan ? std::numeric_limits<long double>::quiet_NaN()
                                        : ref.value)
                   : special_name(ref.special);
  v.got = format(static_cast<long double>(got));
  return v;
}

// The smallest magnitude that rounds to infinity in Out: max + ulp(max) / 2
// = 2^max_exponent · (1 − u/2).
template <class Out> long double overflow_threshold() {
  return std::ldexp(1 - unit_roundoff<Out>() / 2, std::numeric_limits<Out>::max_exponent);
}

// A half type's sum or product, accumulated in float32 and rounded once to Out (the half
// type, or float when the caller asked for float32): tolerance.hpp, "Half types".
template <class Out>
verdict verify_half_rounded(reduce_op op, const float_reference &ref, Out out,
                            tolerance_options options) {
  const float got = static_cast<float>(out);
  if (ref.special != special_result::none) return verify_rounded(op, ref, got, options);
  verdict v;
  v.tolerance = half_tolerance(op, ref, unit_roundoff<Out>(), options);
  if (std::isinf(got)) { // the exact result overflows Out, or is within the bound of doing so
    v.ok = (got > 0) == (ref.value > 0) &&
           std::fabs(ref.value) + v.tolerance >= overflow_threshold<Out>();
    v.reason = v.ok ? "the exact result overflows the output type"
                    : "the exact result is finite in the output type but the GPU gave " +
                          format(static_cast<long double>(got));
    return v;
  }
  if (std::isnan(got)) {
    v.reason = "the exact result is finite but the GPU gave NaN";
    return v;
  }
  v.error = std::fabs(static_cast<long double>(got) - ref.value);
  v.ok = v.error <= v.tolerance;
  const float rounded = static_cast<float>(Out(static_cast<double>(ref.value)));
  if (!v.ok)
    v.reason = "|got - expected| = " + format(v.error) + " exceeds u_out*|exact| + " +
               "(1 + u_out)*gamma_d(2^-24)*sum|x| = " + format(v.tolerance);
  else if (ref.exact_in_any_order && got != rounded) {
    v.ok = false;
    v.reason = "every float32 order is exact here: the result must be the exact value rounded "
               "once to the output type, " + format(static_cast<long double>(rounded));
  }
  return v;
}

template <class Out>
verdict verify_half_as(reduce_op op, const float_reference &ref, Out got,
                       tolerance_options options, bool describe_passes) {
  verdict v = (op == reduce_op::min || op == reduce_op::max)
                  ? verify_minmax(ref, static_cast<float>(got)) // exact
                  : verify_half_rounded(op, ref, got, options);
  if (v.ok && !describe_passes) return v;
  v.expected = format(ref.all_nan ? std::numeric_limits<long double>::quiet_NaN() : ref.value);
  if (ref.special != special_result::none && op != reduce_op::min && op != reduce_op::max)
    v.expected = special_name(ref.special);
  v.got = format(static_cast<long double>(static_cast<float>(got)));
  return v;
}

// got holds one H, or one float when options.float32_output.
template <class H>
verdict verify_half(reduce_op op, const float_reference &ref, const void *got,
                    tolerance_options options, bool describe_passes = true) {
  if (options.float32_output) {
    float g;
    std::memcpy(&g, got, sizeof g);
    return verify_half_as(op, ref, g, options, describe_passes);
  }
  H g;
  std::memcpy(&g, got, sizeof g);
  return verify_half_as(op, ref, g, options, describe_passes);
}

} // namespace

template <class T>
verdict verify(reduce_op op, std::span<const T> data, T got, tolerance_options options) {
  if constexpr (std::is_integral_v<T>) {
    (void)options;
    return verify_integer(op, reference_integer(op, data), got);
  } else if constexpr (is_half_v<T>) {
    options.float32_output = false; // got is a T
    return verify_half<T>(op, reference_half(op, data), &got, options);
  } else {
    return verify_float(op, reference_float(op, data), got, options);
  }
}

template verdict verify<int>(reduce_op, std::span<const int>, int, tolerance_options);
template verdict verify<long long>(reduce_op, std::span<const long long>, long long,
                                   tolerance_options);
template verdict verify<float>(reduce_op, std::span<const float>, float, tolerance_options);
template verdict verify<double>(reduce_op, std::span<const double>, double, tolerance_options);
template verdict verify<float16>(reduce_op, std::span<const float16>, float16, tolerance_options);
template verdict verify<bfloat16>(reduce_op, std::span<const bfloat16>, bfloat16,
                                  tolerance_options);

verdict verify(dtype t, reduce_op op, const void *data, std::size_t n, const void *got,
               tolerance_options options) {
  if (is_half(t)) return prepared_reference(t, op, data, n).check(got, options);
  return visit_dtype(t, [&](auto zero) {
    using T = decltype(zero);
    return verify<T>(op, std::span<const T>(static_cast<const T *>(data), n),
                     *static_cast<const T *>(got), options);
  });
}

prepared_reference::prepared_reference(dtype t, reduce_op op, const void *data, std::size_t n)
    : m_type(t), m_op(op) {
  visit_dtype(t, [&](auto zero) {
    using T = decltype(zero);
    const std::span<const T> span(static_cast<const T *>(data), n);
    if constexpr (std::is_integral_v<T>)
      m_integer = reference_integer(op, span);
    else if constexpr (is_half_v<T>)
      m_float = reference_half(op, span);
    else
      m_float = reference_float(op, span);
  });
}

verdict prepared_reference::check(const void *got, tolerance_options options,
                                  bool describe_passes) const {
  return visit_dtype(m_type, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (is_half_v<T>)
      return verify_half<T>(m_op, m_float, got, options, describe_passes);
    else if constexpr (std::is_integral_v<T>)
      return verify_integer(m_op, static_cast<T>(m_integer), *static_cast<const T *>(got));
    else
      return verify_float(m_op, m_float, *static_cast<const T *>(got), options,
                          describe_passes);
  });
}

} // namespace reducetune
