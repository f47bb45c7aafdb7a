// The host reference against independent computations: wide (128-bit) integer arithmetic
// reduced modulo 2^bits, exactly representable float inputs, and float sums in 128-bit fixed
// point.
#include "catch.hpp"

#include "reducetune/verify/exact_sum.hpp"
#include "reducetune/verify/patterns.hpp"
#include "reducetune/verify/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

using namespace reducetune;

namespace {

__extension__ typedef __int128 wide; // exact for the products below (|a·b| < 2^127)

// Two's complement of the low `bits` bits of a 128-bit value, computed independently of the
// reference's unsigned arithmetic.
template <class T> T wrap(wide v) {
  const wide modulus = static_cast<wide>(1) << (8 * sizeof(T));
  wide r = v % modulus;
  if (r < 0) r += modulus;
  if (r >= modulus / 2) r -= modulus;
  return static_cast<T>(r);
}

template <class T> void check_integer_ops(const std::vector<T> &data) {
  wide sum = 0;
  wide prod = 1;
  const wide modulus = static_cast<wide>(1) << (8 * sizeof(T));
  T lo = data[0], hi = data[0];
  for (T x : data) {
    sum += x;
    prod = (prod * x) % modulus; // |prod| < 2^64 keeps the next product inside 128 bits
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  const std::span<const T> s(data);
  CHECK(reference_integer(reduce_op::sum, s) == wrap<T>(sum));
  CHECK(reference_integer(reduce_op::prod, s) == wrap<T>(prod));
  CHECK(reference_integer(reduce_op::min, s) == lo);
  CHECK(reference_integer(reduce_op::max, s) == hi);
}

} // namespace

TEMPLATE_TEST_CASE("integer reductions are exact with wrap-around modulo 2^bits",
                   "[verify][reference]", int, long long) {
  for (data_pattern p : all_data_patterns())
    for (reduce_op op : {reduce_op::sum, reduce_op::prod})
      for (std::uint64_t n : {1ULL, 2ULL, 1000ULL, 4097ULL}) {
        INFO(to_string(p) << " " << to_string(op) << " n=" << n);
        check_integer_ops(generate<TestType>(p, op, n, 7));
      }
}

TEMPLATE_TEST_CASE("integer sum overflow wraps like two's complement hardware",
                   "[verify][reference]", int, long long) {
  const TestType max = std::numeric_limits<TestType>::max();
  const std::vector<TestType> data{max, 1};
  CHECK(reference_integer(reduce_op::sum, std::span<const TestType>(data)) ==
        std::numeric_limits<TestType>::min());
}

TEMPLATE_TEST_CASE("float sums of small integers are exact", "[verify][reference]", float, double) {
  for (std::uint64_t n : {1ULL, 3ULL, 1000ULL, 65537ULL}) {
    const auto data = generate<TestType>(data_pattern::small_integers, reduce_op::sum, n, 3);
    long long exact = 0, abs_sum = 0;
    for (TestType x : data) {
      exact += static_cast<long long>(x);
      abs_sum += x < 0 ? -static_cast<long long>(x) : static_cast<long long>(x);
    }
    const auto ref = reference_float(reduce_op::sum, std::span<const TestType>(data));
    CHECK(ref.value == static_cast<long double>(exact));
    CHECK(ref.abs_sum == static_cast<long double>(abs_sum));
    CHECK(ref.exact_in_any_order);
  }
}

TEST_CASE("compensated summation recovers what a naive long double sum loses",
          "[verify][reference]") {
  // 1e20 + (1 repeated) − 1e20 in double inputs: the ones survive only with compensation.
  std::vector<double> data{1e20};
  for (int i = 0; i < 1000; ++i) data.push_back(1.0);
  data.push_back(-1e20);
  const auto ref = reference_float(reduce_op::sum, std::span<const double>(data));
  CHECK(ref.value == 1000.0L);
  CHECK_FALSE(ref.exact_in_any_order); // a float order would lose the ones
}

TEST_CASE("float products of powers of two are exact in any order", "[verify][reference]") {
  const auto data = generate<float>(data_pattern::uniform, reduce_op::prod, 100000, 11);
  long double expected = 1;
  for (float x : data) expected *= x;
  const auto ref = reference_float(reduce_op::prod, std::span<const float>(data));
  CHECK(ref.value == expected);
  CHECK(ref.exact_in_any_order);
  CHECK_FALSE(ref.partial_range_unsafe);
}

TEST_CASE("a product whose partial results can overflow is flagged", "[verify][reference]") {
  const std::vector<float> data{1e30f, 1e30f, 1e-30f, 1e-30f};
  const auto ref = reference_float(reduce_op::prod, std::span<const float>(data));
  CHECK(ref.partial_range_unsafe);
  CHECK(ref.value > 0.99L);
  CHECK(ref.value < 1.01L);
}

TEMPLATE_TEST_CASE("float min and max are the exact extremes", "[verify][reference]", float,
                   double) {
  for (data_pattern p : all_data_patterns()) {
    const auto data = generate<TestType>(p, reduce_op::min, 3001, 5);
    TestType lo = data[0], hi = data[0];
    for (TestType x : data) {
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    CHECK(reference_float(reduce_op::min, std::span<const TestType>(data)).value == lo);
    CHECK(reference_float(reduce_op::max, std::span<const TestType>(data)).value == hi);
  }
}

TEST_CASE("Exactness in any order is decided from the inputs' lowest set bits, subnormals too",
          "[verify][reference]") {
  const float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> subnormals{tiny, tiny, 3 * tiny};
  CHECK(reference_float(reduce_op::sum, std::span<const float>(subnormals)).exact_in_any_order);
  // 1 + 2^-23 is a float; 1 + 2^-24 is not (24-bit significand).
  const std::vector<float> fits{1.0f, std::ldexp(1.0f, -23)};
  CHECK(reference_float(reduce_op::sum, std::span<const float>(fits)).exact_in_any_order);
  const std::vector<float> rounds{1.0f, std::ldexp(1.0f, -24)};
  CHECK_FALSE(reference_float(reduce_op::sum, std::span<const float>(rounds)).exact_in_any_order);
  const std::vector<double> fits64{1.0, std::ldexp(1.0, -52), -0.5};
  CHECK(reference_float(reduce_op::sum, std::span<const double>(fits64)).exact_in_any_order);
  const std::vector<double> rounds64{1.0, std::ldexp(1.0, -53)};
  CHECK_FALSE(
      reference_float(reduce_op::sum, std::span<const double>(rounds64)).exact_in_any_order);
}

// Past a chunk (2^20 elements) min and max run over chunks on the machine's threads
// (verify/chunks.hpp) and combine the chunks' extremes in order: one pass's answer, the first
// of equal values included (a -0 and a +0 compare equal; the one seen first is kept), and a NaN
// in any chunk seen. The chunks depend on n only, so one core checks the combining too.
TEMPLATE_TEST_CASE("float min and max over chunks keep one pass's first extreme and its NaN",
                   "[verify][reference]", float, double) {
  const std::size_t n = (2U << 20) + 5; // two whole chunks and a short one
  const std::size_t first = 10, second = (1U << 20) + 7, last = n - 1;
  std::vector<TestType> v(n, TestType(1));
  v[first] = TestType(-0.0);
  v[second] = TestType(0.0);
  float_reference r = reference_float<TestType>(reduce_op::min, v);
  CHECK(r.value == 0);
  CHECK(std::signbit(r.value)); // the -0 of the first chunk, not the later +0
  std::swap(v[first], v[second]);
  CHECK_FALSE(std::signbit(reference_float<TestType>(reduce_op::min, v).value));
  v[last] = TestType(-2);
  v[second - 1] = std::numeric_limits<TestType>::quiet_NaN();
  r = reference_float<TestType>(reduce_op::min, v);
  CHECK(r.value == -2); // in the last, short chunk
  CHECK(r.has_nan);
  CHECK_FALSE(r.all_nan);
  CHECK(reference_float<TestType>(reduce_op::max, v).value == 1);
  const std::vector<TestType> nans(n, std::numeric_limits<TestType>::quiet_NaN());
  CHECK(reference_float<TestType>(reduce_op::max, nans).all_nan);
}

// Past a chunk (2^20 elements) integer sums, mins and maxes run over chunks on the machine's
// threads and combine the chunks' results: still exact, the sum wrapping modulo 2^bits (uniform
// data over the whole type wraps many times).
TEMPLATE_TEST_CASE("integer reductions over chunks are exact with wrap-around",
                   "[verify][reference]", int, long long) {
  const std::uint64_t n = (2ULL << 20) + 5; // two whole chunks and a short one
  for (data_pattern p : {data_pattern::uniform, data_pattern::all_negative}) {
    INFO(to_string(p));
    check_integer_ops(generate<TestType>(p, reduce_op::sum, n, 9));
  }
}

namespace {

// Σx and Σ|x| of data whose values all fit one 128-bit fixed point (every x a multiple of 2^q,
// |Σ| < 2^126 · 2^q), exact, then rounded to long double by the compiler's own conversion: an
// oracle that shares nothing with exact_sum.
template <class T> std::pair<long double, long double> fixed_point_sums(const std::vector<T> &v) {
  int q = std::numeric_limits<int>::max();
  for (T x : v) {
    if (x == 0) continue;
    int e = 0;
    const long double m = std::ldexp(std::frexp(static_cast<long double>(x), &e), 64);
    auto bits = static_cast<unsigned long long>(std::fabs(m));
    int k = e - 64;
    while ((bits & 1) == 0) bits >>= 1, ++k;
    q = std::min(q, k);
  }
  if (q == std::numeric_limits<int>::max()) return {0.0L, 0.0L};
  wide sum = 0, abs_sum = 0;
  for (T x : v) {
    const auto scaled = static_cast<wide>(std::ldexp(static_cast<long double>(x), -q));
    sum += scaled;
    abs_sum += scaled < 0 ? -scaled : scaled;
  }
  return {std::ldexp(static_cast<long double>(sum), q),
          std::ldexp(static_cast<long double>(abs_sum), q)};
}

} // namespace

// A float sum is summed exactly over chunks on the machine's threads, in any order, and rounded
// once (verify/exact_sum.hpp): the value and Σ|x| are the exact ones rounded to nearest. Three
// whole chunks and a short one; float32's wide_range spans 2^-53 (uniform draws) to 2^31.
TEMPLATE_TEST_CASE("float sums over chunks are the exact sums rounded once to long double",
                   "[verify][reference]", float, double) {
  const std::uint64_t n = (3ULL << 20) + 5;
  for (data_pattern p : all_data_patterns()) {
    if (p == data_pattern::wide_range && sizeof(TestType) == 8) continue; // 2^±200: no oracle
    INFO(to_string(p));
    const auto data = generate<TestType>(p, reduce_op::sum, n, 13);
    const auto [sum, abs_sum] = fixed_point_sums(data);
    const auto ref = reference_float(reduce_op::sum, std::span<const TestType>(data));
    CHECK(ref.value == sum);
    CHECK(ref.abs_sum == abs_sum);
    CHECK(ref.count == n);
  }
}

TEST_CASE("an exactly rounded sum is closer than a compensated one where the compensation rounds",
          "[verify][reference]") {
  // 2^64 + 1 + 2^-70: a long double's ulp at 2^64 is 2, so the nearest is 2^64 + 2. Neumaier's
  // compensation (1 + 2^-70 in long double) rounds to 1 and the tie 2^64 + 1 goes to 2^64, as
  // the reference of one chunk or less still computes it; past a chunk the sum is exact.
  std::vector<double> data{0x1p64, 1.0, 0x1p-70};
  CHECK(reference_float(reduce_op::sum, std::span<const double>(data)).value == 0x1p64L);
  data.resize((1U << 20) + 1, 0.0);
  CHECK(reference_float(reduce_op::sum, std::span<const double>(data)).value == 0x1p64L + 2);
  exact_sum<double> tie;
  tie.add(0x1p64);
  tie.add(1.0);
  CHECK(tie.value() == 0x1p64L); // to even
  tie.add(-0x1p-70);
  CHECK(tie.value() == 0x1p64L);         // below the tie
  CHECK(tie.abs_value() == 0x1p64L + 2); // above it
}

TEMPLATE_TEST_CASE("a float sum over chunks sees infinities and NaN in any chunk",
                   "[verify][reference]", float, double) {
  const std::size_t n = (3U << 20) + 5;
  std::vector<TestType> v(n, TestType(0.5));
  v[(2U << 20) + 1] = std::numeric_limits<TestType>::infinity();
  float_reference r = reference_float<TestType>(reduce_op::sum, v);
  CHECK(r.special == special_result::pos_inf);
  CHECK(r.value == 0.5L * static_cast<long double>(n - 1)); // the finite values' sum
  v[n - 1] = -std::numeric_limits<TestType>::infinity();
  CHECK(reference_float<TestType>(reduce_op::sum, v).special == special_result::nan);
  v[n - 1] = TestType(0.5);
  v[7] = std::numeric_limits<TestType>::quiet_NaN();
  r = reference_float<TestType>(reduce_op::sum, v);
  CHECK(r.special == special_result::nan);
  CHECK(r.has_nan);
}
