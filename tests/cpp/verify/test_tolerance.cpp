// The float tolerance: safe for any summation order, zero where every order is exact, and
// tight enough to reject a lost element where the bound allows it.
#include "catch.hpp"

#include "reducetune/verify/patterns.hpp"
#include "reducetune/verify/verify.hpp"

#include <cmath>
#include <vector>

using namespace reducetune;

namespace {

template <class T> T serial_sum(const std::vector<T> &data) {
  T acc = 0;
  for (T x : data) acc += x;
  return acc;
}

// A block-tree-like order: pairwise over halves.
template <class T> T pairwise_sum(const T *p, std::size_t n) {
  if (n == 1) return p[0];
  const std::size_t half = n / 2;
  return pairwise_sum(p, half) + pairwise_sum(p + half, n - half);
}

// Blocks of 256 summed serially (a strided thread), block results then added serially (atomics).
template <class T> T strided_blocks_sum(const std::vector<T> &data) {
  T total = 0;
  for (std::size_t b = 0; b < data.size(); b += 4096) {
    T block[256] = {};
    for (std::size_t i = b; i < std::min(data.size(), b + 4096); ++i) block[i % 256] += data[i];
    total += pairwise_sum(block, 256);
  }
  return total;
}

} // namespace

TEST_CASE("gamma_k is k*u/(1 - k*u) and rigorous only while k*u < 1/2", "[verify][tolerance]") {
  const long double u = unit_roundoff<float>();
  CHECK(u == std::ldexp(1.0L, -24));
  CHECK(gamma_bound(1000, u) == 1000 * u / (1 - 1000 * u));
  CHECK(gamma_is_rigorous(1000, u));
  CHECK_FALSE(gamma_is_rigorous(1ULL << 23, u));
  CHECK(gamma_bound(1ULL << 30, u) == (1ULL << 30) * u);
}

TEMPLATE_TEST_CASE("float sums in any order pass verification", "[verify][tolerance]", float,
                   double) {
  for (data_pattern p : all_data_patterns())
    for (std::size_t n : {1u, 7u, 1000u, 100003u}) {
      INFO(to_string(p) << " n=" << n);
      const auto data = generate<TestType>(p, reduce_op::sum, n, 13);
      const std::span<const TestType> s(data);
      CHECK(verify(reduce_op::sum, s, serial_sum(data)).ok);
      CHECK(verify(reduce_op::sum, s, pairwise_sum(data.data(), n)).ok);
      CHECK(verify(reduce_op::sum, s, strided_blocks_sum(data)).ok);
    }
}

TEST_CASE("the sum tolerance is gamma_(n-1) * sum|x| plus the reference's share",
          "[verify][tolerance]") {
  const auto data = generate<float>(data_pattern::uniform, reduce_op::sum, 5000, 1);
  long double abs_sum = 0;
  for (float x : data) abs_sum += std::fabs(x);
  const long double u = std::ldexp(1.0L, -24);
  const long double expected_tol =
      4999 * u / (1 - 4999 * u) * abs_sum + 4 * unit_roundoff<long double>() * abs_sum;
  const auto v = verify(reduce_op::sum, std::span<const float>(data), serial_sum(data));
  CHECK(std::fabs(v.tolerance - expected_tol) <= 1e-12L * expected_tol);
}

TEMPLATE_TEST_CASE("a lost element is caught where every order is exact", "[verify][tolerance]",
                   float, double) {
  const auto data = generate<TestType>(data_pattern::small_integers, reduce_op::sum, 4099, 2);
  std::vector<TestType> dropped(data.begin(), data.end() - 1);
  while (dropped.back() == 0) dropped.pop_back(); // make sure the lost element matters
  const auto v = verify(reduce_op::sum, std::span<const TestType>(data), serial_sum(dropped));
  CHECK_FALSE(v.ok);
  CHECK(v.tolerance == 0);
  CHECK(v.reason.find("exceeds the tolerance") != std::string::npos);
}

TEST_CASE("a caller-known summation depth tightens the bound", "[verify][tolerance]") {
  const auto data = generate<float>(data_pattern::uniform, reduce_op::sum, 1 << 16, 4);
  const std::span<const float> s(data);
  const float got = pairwise_sum(data.data(), data.size());
  const auto any_order = verify(reduce_op::sum, s, got);
  const auto tree = verify(reduce_op::sum, s, got, tolerance_options{16});
  CHECK(any_order.ok);
  CHECK(tree.ok); // pairwise over 2^16 has depth 16
  CHECK(tree.tolerance < any_order.tolerance / 1000);
}

TEST_CASE("a float product within n*eps passes, one off by a factor fails",
          "[verify][tolerance]") {
  std::vector<double> data;
  for (int i = 0; i < 1000; ++i) data.push_back(1.0 + 1e-3 * ((i % 7) - 3));
  double serial = 1;
  for (double x : data) serial *= x;
  const std::span<const double> s(data);
  CHECK(verify(reduce_op::prod, s, serial).ok);
  CHECK_FALSE(verify(reduce_op::prod, s, serial * (1 + 1e-9)).ok);
}

TEMPLATE_TEST_CASE("integers, min and max must be exact", "[verify][tolerance]", int, long long,
                   float, double) {
  const auto data = generate<TestType>(data_pattern::uniform, reduce_op::sum, 999, 9);
  const std::span<const TestType> s(data);
  TestType lo = data[0];
  for (TestType x : data) lo = x < lo ? x : lo;
  CHECK(verify(reduce_op::min, s, lo).ok);
  const auto off = verify(reduce_op::min, s, static_cast<TestType>(lo + 1));
  CHECK_FALSE(off.ok);
  CHECK(off.tolerance == 0);
}

TEST_CASE("the type-erased verify agrees with the typed one", "[verify]") {
  const auto bytes = generate_bytes(dtype::int64, data_pattern::ascending, reduce_op::sum, 100);
  long long expected = 0;
  for (long long i = 0; i < 100; ++i) expected += i;
  CHECK(verify(dtype::int64, reduce_op::sum, bytes.data(), 100, &expected).ok);
  const long long wrong = expected + 1;
  const auto v = verify(dtype::int64, reduce_op::sum, bytes.data(), 100, &wrong);
  CHECK_FALSE(v.ok);
  CHECK(v.expected == std::to_string(expected));
}
