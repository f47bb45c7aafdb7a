#include "reducetune/verify/half_patterns.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/name_table.hpp"
#include "reducetune/verify/random.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace reducetune {
namespace {

template <class H> std::vector<H> near_max(std::uint64_t n, data_generator &g) {
  int levels = 0;
  while ((std::uint64_t{1} << levels) < n) ++levels;
  const double top = std::numeric_limits<H>::max();
  // float16: any two of them overflow it; bfloat16: n of them stay below float32's max.
  const double scale = std::is_same_v<H, float16> ? top : std::ldexp(top, -(levels + 1));
  std::vector<H> v(n);
  for (std::uint64_t i = 0; i < n; i += 4) {
    const H a(scale * (1 - g.unit() / 16)), b(scale * (1 - g.unit() / 16));
    const H quad[4] = {a, b, H(-a), H(-b)};
    for (std::uint64_t j = 0; j < 4 && i + j < n; ++j) v[i + j] = quad[j];
  }
  return v;
}

template <class H> std::vector<H> subnormals(std::uint64_t n, data_generator &g) {
  constexpr unsigned mantissa = std::numeric_limits<H>::digits - 1;
  std::vector<H> v(n);
  for (auto &x : v) { // a non-zero fraction with a zero exponent field, random sign
    const auto fraction = static_cast<std::uint16_t>(1 + g.next() % ((1u << mantissa) - 1));
    x = H::from_bits(static_cast<std::uint16_t>((g.next() & 1 ? 0x8000u : 0u) | fraction));
  }
  return v;
}

template <class H> std::vector<H> cancellation(std::uint64_t n, data_generator &g) {
  const long long top = 1LL << (std::numeric_limits<H>::digits - 1); // integers exact up to 2·top
  std::vector<H> v(n);
  for (std::uint64_t i = 0; i < n; ++i)
    v[i] = i % 2 == 0 ? H(static_cast<double>(g.between(top, 2 * top - 1)))
                      : H(1.0 - static_cast<float>(v[i - 1]));
  return v;
}

} // namespace

constexpr name_table<half_pattern, 4> half_pattern_names = {
    {{half_pattern::near_max, "near_max"},
     {half_pattern::subnormals, "subnormals"},
     {half_pattern::ones, "ones"},
     {half_pattern::cancellation, "cancellation"}}};

const char *to_string(half_pattern p) noexcept {
  return name_of(half_pattern_names, p);
}

const std::vector<half_pattern> &all_half_patterns() {
  static const std::vector<half_pattern> all = [] {
    std::vector<half_pattern> v;
    for (const auto &row : half_pattern_names) v.push_back(row.value);
    return v;
  }();
  return all;
}

template <class H>
std::vector<H> generate_half(half_pattern p, std::uint64_t n, std::uint64_t seed) {
  static_assert(is_half_v<H>);
  if (n == 0) throw invalid_configuration("a workload needs n >= 1 elements");
  data_generator g(seed ^ (static_cast<std::uint64_t>(p) << 48));
  switch (p) {
  case half_pattern::near_max:
    return near_max<H>(n, g);
  case half_pattern::subnormals:
    return subnormals<H>(n, g);
  case half_pattern::ones:
    break;
  case half_pattern::cancellation:
    return cancellation<H>(n, g);
  }
  return std::vector<H>(n, H(1.0));
}

template std::vector<float16> generate_half<float16>(half_pattern, std::uint64_t, std::uint64_t);
template std::vector<bfloat16> generate_half<bfloat16>(half_pattern, std::uint64_t, std::uint64_t);

std::vector<unsigned char> generate_half_bytes(dtype t, half_pattern p, std::uint64_t n,
                                               std::uint64_t seed) {
  if (!is_half(t))
    throw invalid_configuration(
        std::string("the half patterns are for float16 and bfloat16, not ") + to_string(t));
  std::vector<unsigned char> bytes(n * 2);
  const auto copy = [&](const auto &values) {
    std::memcpy(bytes.data(), values.data(), bytes.size());
  };
  if (t == dtype::float16)
    copy(generate_half<float16>(p, n, seed));
  else
    copy(generate_half<bfloat16>(p, n, seed));
  return bytes;
}

} // namespace reducetune
