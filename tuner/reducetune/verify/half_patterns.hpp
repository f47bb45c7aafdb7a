// Hostile inputs for the half types (float16, bfloat16), beside the patterns every type has
// (patterns.hpp): each one fails a kernel that keeps a partial in 16 bits, flushes subnormals
// or rounds more than once, and each is meant for sum, min and max (prod: patterns.hpp's
// product data, which stays exact).
#pragma once

#include "reducetune/verify/patterns.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace reducetune {

enum class half_pattern {
  // Quadruples (+a, +b, −a, −b): the exact sum is 0. float16: |a|, |b| within 2^-4 of its max,
  // so a 16-bit partial of two of them overflows; bfloat16 (float32's range): |a|, |b| near
  // max / 2^(ceil(log2 n) + 1), so that no float32 partial of any order overflows either.
  near_max,
  // Random subnormals of the type, both signs: exact in float32 (bfloat16's are float32
  // subnormals too), lost by a flush to zero.
  subnormals,
  // 1 everywhere: n ≤ 2^24 ones sum exactly in float32 (2^24 is a bfloat16, whose 16-bit
  // partials would stop at 256).
  ones,
  // Pairs (a, 1 − a) of integers a near 2^(p−1), p the type's precision: Σ|x| ≈ n·2^(p−1)
  // while the sum is n / 2.
  cancellation,
};

[[nodiscard]] const char *to_string(half_pattern p) noexcept;
[[nodiscard]] const std::vector<half_pattern> &all_half_patterns();

// n elements of H (float16 or bfloat16); the same (pattern, n, seed) gives the same data.
template <class H>
[[nodiscard]] std::vector<H> generate_half(half_pattern p, std::uint64_t n,
                                           std::uint64_t seed = default_data_seed);

// Type-erased form: n elements of t (a half type) as raw bytes.
[[nodiscard]] std::vector<unsigned char> generate_half_bytes(dtype t, half_pattern p,
                                                             std::uint64_t n, std::uint64_t seed);

} // namespace reducetune
