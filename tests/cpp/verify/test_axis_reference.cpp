// The axis verifier over more than one chunk of outputs (verify/chunks.hpp: it builds and checks
// the outputs on threads, issue 26): every output judged as verify() judges its own row, the
// wrong ones counted and the first ones described in output order, across chunk boundaries.
#include "catch.hpp"

#include "reducetune/verify/axis_reference.hpp"
#include "reducetune/verify/chunks.hpp"
#include "reducetune/verify/patterns.hpp"
#include "reducetune/verify/types.hpp"
#include "reducetune/verify/verify.hpp"

#include <cstdint>
#include <string>
#include <vector>

using namespace reducetune;

namespace {

problem float_sum(reduction_shape s) {
  problem p;
  p.type = dtype::float32;
  p.op = reduce_op::sum;
  p.shape = s;
  return p;
}

// Each output's sum in float64, rounded once: well within the tolerance.
std::vector<float> sums(const problem &p, const std::vector<float> &in) {
  std::vector<float> out(p.outputs());
  for (std::uint64_t j = 0; j < out.size(); ++j) {
    const std::vector<float> row =
        axis_row(in.data(), p.shape, j / p.shape.inner, j % p.shape.inner);
    double acc = 0;
    for (float x : row) acc += x;
    out[j] = static_cast<float>(acc);
  }
  return out;
}

// What one pass output by output gives: verify() of each row, failures described in order.
axis_verdict one_by_one(const problem &p, const std::vector<float> &in,
                        const std::vector<float> &got, std::size_t max_reported) {
  axis_verdict out;
  out.outputs = got.size();
  for (std::uint64_t j = 0; j < got.size(); ++j) {
    const std::uint64_t o = j / p.shape.inner, i = j % p.shape.inner;
    const std::vector<float> row = axis_row(in.data(), p.shape, o, i);
    const verdict v = verify(p.type, p.op, row.data(), row.size(), &got[j]);
    if (v.ok) continue;
    ++out.failed;
    if (out.failures.size() < max_reported)
      out.failures.push_back("output (" + std::to_string(o) + ", " + std::to_string(i) +
                             "): expected " + v.expected + ", got " + v.got +
                             (v.reason.empty() ? "" : " (" + v.reason + ")"));
  }
  return out;
}

} // namespace

TEST_CASE("axis verdicts over several chunks of outputs are those of one pass", "[verify]") {
  // Rows (inner 1, read in place) and columns (gathered), each over three chunks of outputs.
  const reduction_shape shape = GENERATE(reduction_shape{2 * chunk_elements + 3, 2, 1},
                                         reduction_shape{1, 3, 2 * chunk_elements + 5});
  const problem p = float_sum(shape);
  const std::vector<float> in =
      generate<float>(data_pattern::uniform, p.op, shape.outer * shape.r * shape.inner);
  std::vector<float> got = sums(p, in);
  const axis_reference reference(p, in.data());

  SECTION("right results pass") {
    const axis_verdict v = reference.check(got.data());
    CHECK(v.ok());
    CHECK(v.outputs == p.outputs());
    CHECK(v.failures.empty());
  }
  SECTION("wrong ones in every chunk are counted and the first described in order") {
    // Wrong outputs in the last chunk, the first and the middle one, and the last output.
    for (std::uint64_t j : {2 * chunk_elements + 1, std::uint64_t{5}, chunk_elements - 1,
                            chunk_elements, p.outputs() - 1})
      got[j] += 1.0f;
    const axis_verdict expected = one_by_one(p, in, got, 8);
    const axis_verdict v = reference.check(got.data());
    CHECK(v.failed == 5);
    CHECK(v.outputs == expected.outputs);
    CHECK(v.failed == expected.failed);
    CHECK(v.failures == expected.failures);
    REQUIRE(v.failures.size() == 5);
    CHECK(v.failures.front().rfind(shape.inner == 1 ? "output (5, 0)" : "output (0, 5)", 0) == 0);

    // Fewer described: the first ones of the same order, the count unchanged.
    const axis_verdict two = reference.check(got.data(), 2);
    CHECK(two.failed == 5);
    CHECK(two.failures ==
          std::vector<std::string>(expected.failures.begin(), expected.failures.begin() + 2));
  }
}

TEST_CASE("a check that leaves passes undescribed judges as the full one", "[verify]") {
  // Float and half types, every operator, a right result and a wrong one: the same ok,
  // tolerance, error and reason; failures described the same; passes left without expected
  // and got. Rows of 1000 ones: every result is exact (sum 1000, others 1) in every type.
  const dtype t = GENERATE(dtype::float32, dtype::float64, dtype::float16, dtype::bfloat16);
  const reduce_op op = GENERATE(reduce_op::sum, reduce_op::min, reduce_op::max, reduce_op::prod);
  visit_dtype(t, [&](auto zero) {
    using T = decltype(zero);
    const std::vector<T> in(1000, T(1.0));
    const prepared_reference reference(t, op, in.data(), in.size());
    const T right(op == reduce_op::sum ? 1000.0 : 1.0);
    bool passed = false, failed = false;
    for (const T got : {right, T(0.0)}) {
      const verdict full = reference.check(&got);
      const verdict quiet = reference.check(&got, {}, false);
      CHECK(quiet.ok == full.ok);
      CHECK(quiet.tolerance == full.tolerance);
      CHECK(quiet.error == full.error);
      CHECK(quiet.reason == full.reason);
      CHECK(quiet.expected == (full.ok ? "" : full.expected));
      CHECK(quiet.got == (full.ok ? "" : full.got));
      CHECK(!full.expected.empty());
      (full.ok ? passed : failed) = true;
    }
    CHECK(passed); // both kinds of verdict were compared
    CHECK(failed);
  });
}
