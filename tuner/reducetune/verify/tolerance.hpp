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
// The reference's own error (compensated, in long double) adds 4·u_long_double·Σ|x|.
//
// min, max and integers are exact (tolerance 0).
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
};

// Absolute tolerance for op over the input described by ref, in a type with unit roundoff u.
[[nodiscard]] long double float_tolerance(reduce_op op, const float_reference &ref,
                                          long double u, tolerance_options options = {});

} // namespace reducetune
