// Data patterns: deterministic, shaped as documented, and meaningful for every operator.
#include "catch.hpp"

#include "reducetune/verify/patterns.hpp"
#include "reducetune/verify/reference.hpp"

#include <cmath>
#include <cstring>
#include <vector>

using namespace reducetune;

TEMPLATE_TEST_CASE("the same seed gives the same data, another seed other data",
                   "[verify][patterns]", int, long long, float, double) {
  const auto a = generate<TestType>(data_pattern::uniform, reduce_op::sum, 1000, 1);
  const auto b = generate<TestType>(data_pattern::uniform, reduce_op::sum, 1000, 1);
  const auto c = generate<TestType>(data_pattern::uniform, reduce_op::sum, 1000, 2);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(TestType)) == 0);
  CHECK(std::memcmp(a.data(), c.data(), a.size() * sizeof(TestType)) != 0);
}

TEMPLATE_TEST_CASE("every pattern gives n elements for every operator, n = 1 included",
                   "[verify][patterns]", int, long long, float, double) {
  for (data_pattern p : all_data_patterns())
    for (reduce_op op : {reduce_op::sum, reduce_op::min, reduce_op::max, reduce_op::prod})
      for (std::uint64_t n : {1ULL, 2ULL, 1023ULL, 1025ULL, 4096ULL * 4 + 3}) {
        const auto v = generate<TestType>(p, op, n);
        CHECK(v.size() == n);
        for (TestType x : v) REQUIRE(std::isfinite(static_cast<double>(x)));
      }
}

TEMPLATE_TEST_CASE("all_negative is negative everywhere and constant is constant",
                   "[verify][patterns]", int, long long, float, double) {
  for (TestType x : generate<TestType>(data_pattern::all_negative, reduce_op::max, 5000))
    REQUIRE(x < 0);
  const auto c = generate<TestType>(data_pattern::constant, reduce_op::sum, 777);
  for (TestType x : c) REQUIRE(x == c[0]);
}

TEMPLATE_TEST_CASE("alternating cancels: the exact sum is far below sum|x|",
                   "[verify][patterns]", float, double) {
  const auto data = generate<TestType>(data_pattern::alternating, reduce_op::sum, 100000);
  const auto ref = reference_float(reduce_op::sum, std::span<const TestType>(data));
  CHECK(std::fabs(ref.value) < 1e-3L * ref.abs_sum);
}

TEMPLATE_TEST_CASE("integer products stay meaningful: non-zero after wrap-around",
                   "[verify][patterns]", int, long long) {
  for (data_pattern p : all_data_patterns()) {
    const auto data = generate<TestType>(p, reduce_op::prod, 1 << 20);
    int twos = 0, others = 0;
    for (TestType x : data) {
      twos += x == 2;
      others += x != 1 && x != -1 && x != 2;
    }
    CHECK(others == 0);
    CHECK(twos <= static_cast<int>(8 * sizeof(TestType)) - 2);
    CHECK(reference_integer(reduce_op::prod, std::span<const TestType>(data)) != 0);
  }
}

TEMPLATE_TEST_CASE("float products are exact in any order", "[verify][patterns]", float,
                   double) {
  for (data_pattern p : all_data_patterns()) {
    const auto data = generate<TestType>(p, reduce_op::prod, 1 << 20);
    const auto ref = reference_float(reduce_op::prod, std::span<const TestType>(data));
    CHECK(ref.exact_in_any_order);
    CHECK(std::fabs(ref.value) >= 0.5L);
    CHECK(std::fabs(ref.value) <= 2.0L);
  }
}

TEST_CASE("wide_range spans many binades", "[verify][patterns]") {
  const auto data = generate<float>(data_pattern::wide_range, reduce_op::sum, 10000);
  float lo = 1e30f, hi = 0;
  for (float x : data) {
    lo = std::min(lo, std::fabs(x));
    hi = std::max(hi, std::fabs(x));
  }
  CHECK(hi / lo > 1e15f);
}

TEST_CASE("pattern names round-trip", "[verify][patterns]") {
  for (data_pattern p : all_data_patterns())
    CHECK(data_pattern_from_string(to_string(p)) == p);
  CHECK_THROWS(data_pattern_from_string("zigzag"));
}

// The evaluation cache cuts every smaller workload (and the sum/min/max of one element type)
// out of one generation at the largest n (measure/prepared_workload.hpp): that is only the same
// data if a generation's prefix does not depend on n, nor on the operator except a product's.
// A product's data is spread by n (its sparse factors), so the cache keys it by its exact n.
TEMPLATE_TEST_CASE("a shorter generation is the prefix of a longer one, sum, min and max "
                   "sharing one data set",
                   "[verify][patterns]", int, long long, float, double) {
  for (const data_pattern p : all_data_patterns()) {
    const auto longer = generate<TestType>(p, reduce_op::sum, 5000, 7);
    for (const reduce_op op : {reduce_op::sum, reduce_op::min, reduce_op::max}) {
      for (const std::uint64_t n : {1ULL, 2ULL, 999ULL, 4096ULL}) {
        const auto shorter = generate<TestType>(p, op, n, 7);
        INFO(to_string(p) << " n=" << n);
        CHECK(std::memcmp(shorter.data(), longer.data(), n * sizeof(TestType)) == 0);
      }
    }
  }
}

// generate_bytes writes the elements straight into its bytes (the evaluation cache's input for
// every workload); they must be generate's values, for every type, the half types included,
// every pattern and operator.
TEST_CASE("generate_bytes holds generate's values for every type, pattern and operator",
          "[verify][patterns]") {
  for (const dtype t : {dtype::int32, dtype::int64, dtype::float32, dtype::float64,
                        dtype::float16, dtype::bfloat16})
    for (const data_pattern p : all_data_patterns())
      for (const reduce_op op : {reduce_op::sum, reduce_op::min, reduce_op::max, reduce_op::prod})
        for (const std::uint64_t n : {1ULL, 1001ULL}) {
          const auto bytes = generate_bytes(t, p, op, n, 11);
          const bool same = visit_dtype(t, [&](auto zero) {
            const auto values = generate<decltype(zero)>(p, op, n, 11);
            return bytes.size() == n * sizeof(zero) &&
                   std::memcmp(bytes.data(), values.data(), bytes.size()) == 0;
          });
          INFO(to_string(t) << " " << to_string(p) << " " << to_string(op) << " n=" << n);
          CHECK(same);
        }
}

// Past a chunk (2^20 elements) generate_into starts each chunk with the generator skipped
// ahead (patterns.cpp, fill_chunks) on the machine's threads: the bytes must be those of one
// pass, whatever the pattern's draws per element (wide_range floats draw three, alternating
// integers one per pair), and every byte of the caller's uninitialised buffer written (here
// filled with 0xAB first). The chunks depend on n only, so one core checks the split too.
TEST_CASE("generate_into split into chunks gives the bytes of one pass", "[verify][patterns]") {
  const std::uint64_t n = (2ULL << 20) + 3; // two whole chunks and a short one
  for (const dtype t : {dtype::int32, dtype::int64, dtype::float32, dtype::float64,
                        dtype::float16, dtype::bfloat16})
    for (const data_pattern p : all_data_patterns()) {
      std::vector<unsigned char> bytes(n * size_of(t), 0xAB);
      generate_into(bytes.data(), t, p, reduce_op::sum, n, 5);
      const bool same = visit_dtype(t, [&](auto zero) {
        const auto values = generate<decltype(zero)>(p, reduce_op::sum, n, 5);
        return bytes.size() == n * sizeof(zero) &&
               std::memcmp(bytes.data(), values.data(), bytes.size()) == 0;
      });
      INFO(to_string(t) << " " << to_string(p));
      CHECK(same);
    }
}
