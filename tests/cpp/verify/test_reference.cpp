// The host reference against independent computations: wide (128-bit) integer arithmetic
// reduced modulo 2^bits, and exactly representable float inputs.
#include "catch.hpp"

#include "reducetune/verify/patterns.hpp"
#include "reducetune/verify/reference.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
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

TEMPLATE_TEST_CASE("float sums of small integers are exact", "[verify][reference]", float,
                   double) {
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
