// The host protocol's CPU combine (measure/host_finish.hpp), without a GPU: every type and
// operator gives what the device's operators give (rt_ops.cuh), integers wrapping modulo 2^bits
// and matching the exact host reference in any split into partials.
#include "catch.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/measure/host_finish.hpp"
#include "reducetune/verify/reference.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace reducetune;

namespace {

template <class T> T combined(reduce_op op, const std::vector<T> &x) {
  T r{};
  combine_on_host(std::is_same_v<T, int>         ? dtype::int32
                  : std::is_same_v<T, long long> ? dtype::int64
                  : std::is_same_v<T, float>     ? dtype::float32
                                                 : dtype::float64,
                  op, x.data(), x.size(), &r);
  return r;
}

// Partials of blocks of `block` elements each, as a pass kernel would leave them.
template <class T>
std::vector<T> partials_of(reduce_op op, const std::vector<T> &x, std::size_t block) {
  std::vector<T> out;
  for (std::size_t i = 0; i < x.size(); i += block)
    out.push_back(combined(op, std::vector<T>(x.begin() + static_cast<std::ptrdiff_t>(i),
                                              x.begin() + static_cast<std::ptrdiff_t>(
                                                              std::min(i + block, x.size())))));
  return out;
}

template <class T> void check_integers() {
  std::mt19937_64 rng(0x5eed);
  std::vector<T> x(10007);
  for (auto &v : x) v = static_cast<T>(rng());
  for (const reduce_op op : all_ops) {
    INFO(to_string(op) << " sizeof " << sizeof(T));
    const T exact = reference_integer<T>(op, std::span<const T>(x));
    CHECK(combined(op, x) == exact);
    for (const std::size_t block : {1u, 7u, 256u, 20000u})
      CHECK(combined(op, partials_of(op, x, block)) == exact);
  }
}

} // namespace

TEST_CASE("integer partials combine on the host exactly, in any split", "[measure][host]") {
  check_integers<int>();
  check_integers<long long>();
}

TEST_CASE("integer sums and products wrap modulo 2^bits on the host as on the GPU",
          "[measure][host]") {
  const int imax = std::numeric_limits<int>::max(), imin = std::numeric_limits<int>::min();
  CHECK(combined(reduce_op::sum, std::vector<int>{imax, 1}) == imin);
  CHECK(combined(reduce_op::prod, std::vector<int>{1 << 16, 1 << 16}) == 0);
  CHECK(combined(reduce_op::prod, std::vector<int>{imax, 2}) == -2);
  const long long lmax = std::numeric_limits<long long>::max();
  CHECK(combined(reduce_op::sum, std::vector<long long>{lmax, 1}) ==
        std::numeric_limits<long long>::min());
}

TEST_CASE("float partials combine in their own type, min and max as the device's operators",
          "[measure][host]") {
  CHECK(combined(reduce_op::sum, std::vector<float>{1.0f, 1e-8f, 1e-8f}) == 1.0f); // in float
  CHECK(combined(reduce_op::sum, std::vector<double>{1.0, 1e-8}) == 1.0 + 1e-8);
  CHECK(combined(reduce_op::prod, std::vector<double>{3.0, -0.5, 4.0}) == -6.0);
  CHECK(combined(reduce_op::min, std::vector<float>{2.0f, -1.5f, 7.0f}) == -1.5f);
  CHECK(combined(reduce_op::max, std::vector<double>{2.0, -1.5, 7.0}) == 7.0);
  // b < a ? b : a and a < b ? b : a: a NaN partial after the first is passed over, a NaN
  // first partial stays (comparisons with NaN are false), as in the device's operators
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(combined(reduce_op::min, std::vector<float>{3.0f, nan, 1.0f}) == 1.0f);
  CHECK(combined(reduce_op::max, std::vector<float>{3.0f, 1.0f, nan}) == 3.0f);
  CHECK(std::isnan(combined(reduce_op::min, std::vector<float>{nan, 3.0f})));
  // signed zeros: the first of equals stays
  CHECK(std::signbit(combined(reduce_op::min, std::vector<double>{-0.0, 0.0})));
  CHECK_FALSE(std::signbit(combined(reduce_op::max, std::vector<double>{0.0, -0.0})));
}

TEST_CASE("one partial is the result; none is refused", "[measure][host]") {
  CHECK(combined(reduce_op::prod, std::vector<long long>{-42}) == -42);
  int r = 0;
  CHECK_THROWS_AS(combine_on_host(dtype::int32, reduce_op::sum, &r, 0, &r), invalid_configuration);
}
