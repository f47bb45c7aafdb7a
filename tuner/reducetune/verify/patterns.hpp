// Input data for verified measurements: deterministic (fixed seed), hostile where it matters.
//
// Every pattern is defined for every dtype × op. Operators whose result would be meaningless
// on a general pattern get a variant of it that keeps the result meaningful:
// - prod: factors are mostly 1 with about 64 sparse −1, 2 (and 0.5 for floats) whatever n
//   (integers: at most bits − 2 twos, so the wrap-around result is non-zero; floats: 2 and
//   0.5 alternate, so the product is 1 or 2 in magnitude, every partial product of any order
//   stays far inside the normal range, and every order is exact).
// - sum over integers: "uniform" and "wide_range" wrap around on purpose (defined modulo
//   2^bits); "small_integers" never overflows.
#pragma once

#include "reducetune/verify/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace reducetune {

// The seed of every workload's data unless one is named (workload::seed, generate()); the
// Python driver reads it as _core.WORKLOAD_SEED.
inline constexpr std::uint64_t default_data_seed = 0x5eed;

enum class data_pattern {
  uniform,        // floats U[−1, 1); integers uniform over the whole type
  constant,       // one value everywhere (floats 0.1: not representable, rounds every add)
  alternating,    // cancellation: a_k, −a_k, … (floats: a tiny residue on each pair)
  ascending,      // x_i = i (integers modulo 2^bits; floats rounded to T)
  all_negative,   // every value < 0 (max must not return 0 or the identity)
  wide_range,     // floats: random sign, magnitude 2^U[−e, e]; integers: full-range random
  small_integers, // values in [−8, 8]: sums exact in every order for small enough n
};

[[nodiscard]] const char *to_string(data_pattern p) noexcept;
[[nodiscard]] data_pattern data_pattern_from_string(const std::string &name);
[[nodiscard]] const std::vector<data_pattern> &all_data_patterns();

// n elements of T for reducing with op; the same (pattern, op, n, seed) always gives the same
// data on every platform (a fixed 64-bit generator, no std::uniform_*_distribution).
template <class T>
[[nodiscard]] std::vector<T> generate(data_pattern p, reduce_op op, std::uint64_t n,
                                      std::uint64_t seed = default_data_seed);

// Type-erased form into out (n · size_of(t) bytes): out need not be initialised, so that a
// large buffer's pages are first touched by the threads that fill it (the zeroing of a
// std::vector is one thread: 0.27 s per 512 MiB on the build machine).
void generate_into(unsigned char *out, dtype t, data_pattern p, reduce_op op, std::uint64_t n,
                   std::uint64_t seed = default_data_seed);

// Type-erased form: n elements of t as raw bytes (n · size_of(t) bytes).
[[nodiscard]] std::vector<unsigned char> generate_bytes(dtype t, data_pattern p, reduce_op op,
                                                        std::uint64_t n,
                                                        std::uint64_t seed = default_data_seed);

} // namespace reducetune
