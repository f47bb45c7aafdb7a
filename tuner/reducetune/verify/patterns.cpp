#include "reducetune/verify/patterns.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/verify/chunks.hpp"
#include "reducetune/verify/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace reducetune {
namespace {

// previous: the element before i (alternating pairs each even element with the next one).
template <class T> T integer_value(data_pattern p, std::uint64_t i, T previous, data_generator &g) {
  using U = std::make_unsigned_t<T>;
  switch (p) {
  case data_pattern::uniform:
  case data_pattern::wide_range: return static_cast<T>(static_cast<U>(g.next()));
  case data_pattern::constant: return 3;
  case data_pattern::alternating:
    return i % 2 == 0 ? static_cast<T>(g.between(1, 1'000'000)) : static_cast<T>(-previous);
  case data_pattern::ascending: return static_cast<T>(static_cast<U>(i));
  case data_pattern::all_negative: return static_cast<T>(-g.between(1, 1'000'000));
  case data_pattern::small_integers: return static_cast<T>(g.between(-8, 8));
  }
  return 0;
}

template <class T> T float_value(data_pattern p, std::uint64_t i, T previous, data_generator &g) {
  switch (p) {
  case data_pattern::uniform: return static_cast<T>(2 * g.unit() - 1);
  case data_pattern::constant: return static_cast<T>(0.1);
  case data_pattern::alternating: // pairs (a, −a + tiny): Σ|x| large, the exact sum small
    return i % 2 == 0 ? static_cast<T>(1 + g.unit())
                      : static_cast<T>(-previous + 0x1.0p-20 * g.unit());
  case data_pattern::ascending: return static_cast<T>(static_cast<double>(i));
  case data_pattern::all_negative: return static_cast<T>(-(1 + g.unit()));
  case data_pattern::wide_range: {
    // float16 up to 2^13 (a few thousand of them may overflow its 65504: the verifier expects
    // the overflow then), bfloat16 and float 2^30, double 2^200.
    const int e = std::is_same_v<T, float16> ? 12 : std::is_same_v<T, double> ? 200 : 30;
    const double magnitude = std::ldexp(1 + g.unit(), static_cast<int>(g.between(-e, e)));
    return static_cast<T>(g.next() & 1 ? magnitude : -magnitude);
  }
  case data_pattern::small_integers: return static_cast<T>(g.between(-8, 8));
  }
  return 0;
}

// prod: mostly 1, sparse −1 and 2 (floats: each 2 later undone by a 0.5).
template <class T> std::vector<T> product_data(data_pattern p, std::uint64_t n, data_generator &g) {
  std::vector<T> v(n, T{1});
  if (p == data_pattern::constant) return v;
  const std::uint64_t stride = std::max<std::uint64_t>(1, n / 64);
  int twos = 0;
  const int max_twos = std::is_integral_v<T> ? static_cast<int>(8 * sizeof(T)) - 2 : 1 << 30;
  bool pending_half = false;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (g.next() % stride != 0) continue;
    switch (g.next() % 3) {
    case 0: v[i] = T(-1); break;
    case 1:
      if constexpr (std::is_integral_v<T>) {
        if (twos < max_twos) v[i] = 2, ++twos;
      } else {
        v[i] = pending_half ? T(0.5) : T(2);
        pending_half = !pending_half;
      }
      break;
    default: break;
    }
  }
  if (p == data_pattern::all_negative) { // an odd count of −1 factors: a negative product
    std::uint64_t negatives = 0;
    for (T x : v) negatives += x < 0;
    if (negatives % 2 == 0)
      for (T &x : v)
        if (x == T(1)) {
          x = T(-1);
          break;
        }
  }
  return v;
}

} // namespace

const char *to_string(data_pattern p) noexcept {
  switch (p) {
  case data_pattern::uniform: return "uniform";
  case data_pattern::constant: return "constant";
  case data_pattern::alternating: return "alternating";
  case data_pattern::ascending: return "ascending";
  case data_pattern::all_negative: return "all_negative";
  case data_pattern::wide_range: return "wide_range";
  case data_pattern::small_integers: return "small_integers";
  }
  return "?";
}

const std::vector<data_pattern> &all_data_patterns() {
  static const std::vector<data_pattern> all{
      data_pattern::uniform,      data_pattern::constant,   data_pattern::alternating,
      data_pattern::ascending,    data_pattern::all_negative, data_pattern::wide_range,
      data_pattern::small_integers};
  return all;
}

data_pattern data_pattern_from_string(const std::string &name) {
  for (data_pattern p : all_data_patterns())
    if (name == to_string(p)) return p;
  throw invalid_configuration("unknown data pattern '" + name + "'");
}

namespace {

data_generator generator_for(data_pattern p, std::uint64_t n, std::uint64_t seed) {
  if (n == 0) throw invalid_configuration("a workload needs n >= 1 elements");
  return data_generator(seed ^ (static_cast<std::uint64_t>(p) << 56));
}

// The elements [begin, end) of a sum, min or max, one after the other, each handed to
// put(i, value); g stands where element begin draws (begin even: alternating pairs an even
// element with the next).
template <class T, class Put>
void fill(data_pattern p, std::uint64_t begin, std::uint64_t end, data_generator &g, Put put) {
  T previous{};
  for (std::uint64_t i = begin; i < end; ++i) {
    if constexpr (std::is_integral_v<T>) previous = integer_value<T>(p, i, previous, g);
    else previous = float_value<T>(p, i, previous, g);
    put(i, previous);
  }
}

// The generator's draws before element i (even) of a sum, min or max: integer_value and
// float_value draw a fixed number per element (alternating integers: one per pair), so a chunk
// of the data can start at any even element with the generator skipped ahead.
template <class T> std::uint64_t draws_before(data_pattern p, std::uint64_t i) {
  switch (p) {
  case data_pattern::constant:
  case data_pattern::ascending: return 0;
  case data_pattern::alternating: return std::is_integral_v<T> ? i / 2 : i;
  case data_pattern::wide_range: return std::is_integral_v<T> ? i : 3 * i; // unit, exponent, sign
  case data_pattern::uniform:
  case data_pattern::all_negative:
  case data_pattern::small_integers: return i;
  }
  return 0;
}

// fill() of n elements in chunks over the machine's threads (verify/chunks.hpp; a chunk
// starts at an even element). Why: one thread generated 2^30 float64 in ~6 s, and a tune makes
// each type's data at 2^30 inside a unit.
template <class T, class Put>
void fill_chunks(data_pattern p, std::uint64_t n, std::uint64_t seed, Put put) {
  static_assert(chunk_elements % 2 == 0);
  for_each_chunk(n, [&](std::uint64_t, std::uint64_t begin, std::uint64_t end) {
    data_generator g = generator_for(p, n, seed);
    g.skip(draws_before<T>(p, begin));
    fill<T>(p, begin, end, g, put);
  });
}

} // namespace

template <class T>
std::vector<T> generate(data_pattern p, reduce_op op, std::uint64_t n, std::uint64_t seed) {
  data_generator g = generator_for(p, n, seed);
  if (op == reduce_op::prod) return product_data<T>(p, n, g);
  std::vector<T> v(n);
  fill<T>(p, 0, n, g, [&](std::uint64_t i, T x) { v[i] = x; });
  return v;
}

template std::vector<int> generate<int>(data_pattern, reduce_op, std::uint64_t, std::uint64_t);
template std::vector<long long> generate<long long>(data_pattern, reduce_op, std::uint64_t,
                                                    std::uint64_t);
template std::vector<float> generate<float>(data_pattern, reduce_op, std::uint64_t,
                                            std::uint64_t);
template std::vector<double> generate<double>(data_pattern, reduce_op, std::uint64_t,
                                              std::uint64_t);
template std::vector<float16> generate<float16>(data_pattern, reduce_op, std::uint64_t,
                                                std::uint64_t);
template std::vector<bfloat16> generate<bfloat16>(data_pattern, reduce_op, std::uint64_t,
                                                  std::uint64_t);

void generate_into(unsigned char *out, dtype t, data_pattern p, reduce_op op, std::uint64_t n,
                   std::uint64_t seed) {
  // The elements written straight into out, in chunks over threads (fill_chunks): generating
  // them as values first and copying cost a second buffer of the whole input and its copy,
  // 0.72 against 0.40 s for 2^26 float64 on the build machine, one thread.
  visit_dtype(t, [&](auto zero) {
    using T = decltype(zero);
    if (op == reduce_op::prod) {
      const auto values = generate<T>(p, op, n, seed);
      std::memcpy(out, values.data(), values.size() * sizeof(T));
      return;
    }
    (void)generator_for(p, n, seed); // refuses n = 0 before any thread starts
    fill_chunks<T>(p, n, seed, [out](std::uint64_t i, T x) {
      std::memcpy(out + i * sizeof(T), &x, sizeof(T));
    });
  });
}

std::vector<unsigned char> generate_bytes(dtype t, data_pattern p, reduce_op op,
                                          std::uint64_t n, std::uint64_t seed) {
  std::vector<unsigned char> bytes(n * size_of(t));
  generate_into(bytes.data(), t, p, op, n, seed);
  return bytes;
}

} // namespace reducetune
