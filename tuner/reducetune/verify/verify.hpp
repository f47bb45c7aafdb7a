// Verification of one GPU result against the host reference (reference.hpp) within the
// tolerance (tolerance.hpp). A failed verdict makes the variant failed, never a best.
//
// NaN and infinities (IEEE 754 semantics, decided here and tested in
// tests/cpp/verify/test_verify_special_values.cpp):
// - sum, prod: a NaN input, +inf with −inf (sum), or inf with 0 (prod) → the result must be a
//   NaN (any payload, either sign). Otherwise an infinite input → the result must be that
//   infinity (prod: with the sign of the product of the signs). An infinite GPU result where
//   the exact result is finite and representable is wrong (a partial sum overflowed).
// - min, max with a NaN input: GPU code differs by construction. fminf/fmaxf (IEEE minNum)
//   ignore NaN, comparison-based code (a < b ? a : b) propagates or drops it depending on the
//   order, and can then return a value that is neither. The verifier accepts exactly two
//   answers: a NaN, or the min/max of the non-NaN inputs. All-NaN input → NaN.
//   −0 and +0 are equal for min and max (either is accepted).
#pragma once

#include "reducetune/verify/tolerance.hpp"
#include "reducetune/verify/types.hpp"

#include <cstddef>
#include <span>
#include <string>

namespace reducetune {

struct verdict {
  bool ok = false;
  std::string expected;      // printed with enough digits to round-trip
  std::string got;
  long double tolerance = 0; // absolute; 0 for integers, min and max
  long double error = 0;     // |got − expected| where both are finite
  std::string reason;        // why it failed, or a note on how it passed (empty: plainly equal)
};

template <class T>
[[nodiscard]] verdict verify(reduce_op op, std::span<const T> data, T got,
                             tolerance_options options = {});

// Type-erased form for the runner: data holds n elements of t, got one element of t (a float
// for a half type when options.float32_output).
[[nodiscard]] verdict verify(dtype t, reduce_op op, const void *data, std::size_t n,
                             const void *got, tolerance_options options = {});

// The reference of one (type, operator, data) computed once, then any number of results
// checked against it: a 2^30-element float reference costs seconds, and a benchmark checks
// every variant's result (twice) against the same input.
class prepared_reference {
public:
  prepared_reference(dtype t, reduce_op op, const void *data, std::size_t n);
  // describe_passes false: a float result that passes gets no expected and got strings (the
  // same ok, tolerance, error and reason); printing them was most of an axis check of 2^27
  // outputs (issue 26). Failures are always described.
  [[nodiscard]] verdict check(const void *got, tolerance_options options = {},
                              bool describe_passes = true) const;

private:
  dtype m_type;
  reduce_op m_op;
  long long m_integer = 0;    // int32 / int64: the exact result
  float_reference m_float{};  // float32 / float64; float16 / bfloat16 widened to float32
};

} // namespace reducetune
