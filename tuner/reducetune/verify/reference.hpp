// The host reference: what a reduction of `data` must produce, computed without the GPU.
//
// Integers are exact. Overflow is defined as two's-complement wrap-around modulo 2^bits (the
// result a GPU's 32/64-bit add and multiply instructions give in any order, since addition and
// multiplication modulo 2^bits are associative and commutative). The reference computes in
// the unsigned type of the same width, where wrap-around is defined C++, and converts back
// (modular since C++20), so no signed overflow (UB) happens on the host.
//
// Floats are computed in long double: sums exactly (verify/exact_sum.hpp), then rounded once,
// products with a separately tracked binary exponent (so long double never overflows), and
// alongside the quantities the tolerance needs (Σ|x|, whether every evaluation order is exact).
// Sums, mins and maxes run over chunks on the machine's threads (verify/chunks.hpp) and give
// the same result on any number of them.
#pragma once

#include "reducetune/verify/types.hpp"

#include <cstdint>
#include <span>

namespace reducetune {

// Exact integer reduction; T is int or long long.
template <class T> [[nodiscard]] T reference_integer(reduce_op op, std::span<const T> data);

// What the tolerance and the comparison need to know about a floating-point reduction.
enum class special_result { none, nan, pos_inf, neg_inf };

struct float_reference {
  long double value = 0;           // the (near-)exact result of the finite inputs
  special_result special = special_result::none; // the result is NaN or ±inf, by IEEE rules
  long double abs_sum = 0;         // Σ|x| over the inputs (sum); |result| (prod)
  std::uint64_t count = 0;         // n
  bool has_nan = false;            // some input is NaN (min/max: see verify.hpp)
  long double value_without_nan = 0; // min/max of the non-NaN inputs (fmin/fmax semantics)
  bool all_nan = false;            // min/max: every input is NaN
  // Every order of evaluation gives `value` exactly in T (see tolerance.hpp): sums of
  // multiples of 2^q with Σ|x| ≤ 2^(q+p); products of powers of two whose partial products
  // all stay in T's normal range.
  bool exact_in_any_order = false;
  // prod: some order of evaluation may overflow or underflow T, where the relative bound of
  // tolerance.hpp does not hold.
  bool partial_range_unsafe = false;
};

// T is float or double; n ≥ 1.
template <class T>
[[nodiscard]] float_reference reference_float(reduce_op op, std::span<const T> data);

// H is float16 or bfloat16 (verify/half.hpp); n ≥ 1. The reference of the inputs widened to
// float32, their accumulator: exact_in_any_order and partial_range_unsafe say whether every
// order of float32 additions or multiplications is exact or stays in range (the result is then
// rounded once more, to the output type: verify.hpp).
template <class H>
[[nodiscard]] float_reference reference_half(reduce_op op, std::span<const H> data);

} // namespace reducetune
