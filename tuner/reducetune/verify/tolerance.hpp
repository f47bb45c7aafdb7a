// How far a GPU's floating-point reduction may be from the exact result, and why.
//
// Notation (Higham, "Accuracy and Stability of Numerical Algorithms", ch. 3–4): u is T's unit
// roundoff (2^-24 for float, 2^-53 for double: half the machine epsilon), and
// γ_k = k·u / (1 − k·u).
//
// Sum. Any summation order is a binary tree; the computed sum ŝ of x_1..x_n satisfies
//     |ŝ − s| ≤ γ_d · Σ|x_i|
// where d is the depth of the deepest leaf (each x_i is rounded in at most d additions).
// The GPU's order depends on the variant (serial per thread, then a block tree, then a grid
// stage that may be serial atomics), so by default d = n − 1, the worst case of any order:
// the bound is safe for every variant. A caller that knows a variant's depth may pass it
// (tolerance_options::depth), e.g. ept + log2(block) + log2(grid) for a pure tree; the
// verifier never assumes it. A statistically typical error is far smaller, about
// u·sqrt(d)·sqrt(Σx²), but a wrong answer that sits inside the safe bound cannot be told
// apart from rounding: that is why the data patterns (patterns.hpp) include inputs whose every
// order is exact (exact_in_any_order: multiples of 2^q with Σ|x| ≤ 2^(q+p)), where the
// tolerance is 0 and a single lost or doubled element is caught, and why integer workloads —
// exact, on the same kernels — are the first line against indexing bugs.
//
// Product. Every order of n factors rounds in n − 1 multiplications, each relative:
//     |p̂ − p| ≤ γ_(n−1) · |p|
// valid while no partial product leaves T's normal range (float_reference reports when some
// order might); products of powers of two are exact.
//
// When k·u ≥ 1/2 the γ bound is meaningless (float32 beyond 2^23 elements); the first-order
// k·u is used there, which is an estimate, not a bound, and the verdict says so.
//
// The reference's own error adds 4·u_long_double·Σ|x| (a bound kept from its compensated
// sum; the exact sum rounded once errs by at most u_long_double·|Σx|).
//
// min, max and integers are exact (tolerance 0).
//
// Half types (float16, bfloat16) accumulate in float32 and round once, to the output type
// (the element type, or float32 when the caller asks): issue 26's bound per output is
//     |result − exact| ≤ u_out·|exact| + d·2^-24·Σ|x|      (prod: (n − 1)·2^-24·|p|)
// with u_out the output type's unit roundoff and d the depth of the point's summation.
// half_tolerance computes u_out·|exact| + (1 + u_out)·γ_d(2^-24)·Σ|x|: the float32
// accumulation's rigorous bound, then the final rounding of the computed value; it exceeds the
// issue's by O((d·2^-24)²) only. Where every float32 order is exact (exact_in_any_order),
// the result must be the exact value rounded once: tolerance 0 against that (verify.cpp).
#pragma once

#include "reducetune/verify/reference.hpp"

#include <cstdint>
#include <limits>

namespace reducetune {

template <class T> constexpr long double unit_roundoff() noexcept {
  return std::numeric_limits<T>::epsilon() / 2;
}

// γ_k = k·u / (1 − k·u); first-order k·u when k·u ≥ 1/2 (see above).
[[nodiscard]] long double gamma_bound(std::uint64_t k, long double u) noexcept;
// Whether gamma_bound(k, u) is a rigorous bound.
[[nodiscard]] bool gamma_is_rigorous(std::uint64_t k, long double u) noexcept;

struct tolerance_options {
  std::uint64_t depth = 0; // deepest leaf of the summation tree; 0: any order (n − 1)
  // A half type's result was asked in float32 (4 bytes) instead of the element type.
  bool float32_output = false;
};

// Absolute tolerance for op over the input described by ref, in a type with unit roundoff u.
[[nodiscard]] long double float_tolerance(reduce_op op, const float_reference &ref,
                                          long double u, tolerance_options options = {});

// The half types' tolerance (above): u_out is the output type's unit roundoff.
[[nodiscard]] long double half_tolerance(reduce_op op, const float_reference &ref,
                                         long double u_out, tolerance_options options = {});

// The depth d of one stage of a summation: `elements` folded by `lanes` lanes, each in
// sequence (at most ceil(elements / lanes) additions), then a tree over the lanes
// (ceil(log2 lanes) levels). A point's d is the sum over its stages (a thread's loop, the
// block tree, a finish pass over the partials). The search space does not state d yet: the
// GPU tests compose it from a point's parameters (tests/cpp/gpu_test_half*.cpp).
[[nodiscard]] std::uint64_t stage_depth(std::uint64_t elements, std::uint64_t lanes) noexcept;

} // namespace reducetune
