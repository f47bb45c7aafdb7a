// On the GPU (issue 26, item 5): a reducer made from a results file with axis rows reduces each
// shape with the point of its nearest tuned shape (db/shape_rule.hpp), on the device at hand
// (the file's synthetic sm_90 H100 answers an H100 or an H200 by its compute capability), and
// the sums are right: small integers stored as float32, so every order of addition is exact and
// each output is compared with its host sum to the bit. batch_invariant takes only the shapes'
// batch_invariant picks. The file is tests/cpp/db/axis_results_support.hpp's.
#include "catch.hpp"

#include "db/axis_results_support.hpp"
#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/runtime/reducer.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace reducetune;

namespace {

std::string label_of(const std::string &preset) {
  const auto &s = rt_test::axis_space();
  return variant_label(s.decl(), *s.base(preset, {false, true}));
}

// Reduces (outer, r, inner) of small integers with r and checks every output to the bit.
void reduces_exactly(reducer &r, const reduction_shape &shape) {
  const std::uint64_t n = shape.outer * shape.r * shape.inner;
  std::vector<float> host(n);
  for (std::uint64_t i = 0; i < n; ++i)
    host[i] = static_cast<float>(static_cast<int>((i * 2654435761ull) % 5) - 2);
  std::vector<double> expect(shape.outer * shape.inner, 0.0);
  for (std::uint64_t o = 0; o < shape.outer; ++o)
    for (std::uint64_t k = 0; k < shape.r; ++k)
      for (std::uint64_t j = 0; j < shape.inner; ++j)
        expect[o * shape.inner + j] += host[(o * shape.r + k) * shape.inner + j];
  device_buffer in(n * sizeof(float)), out(expect.size() * sizeof(float));
  REQUIRE(cudaMemcpy(in.data(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice) ==
          cudaSuccess);
  r.reduce_axis(in.data(), shape, out.data());
  std::vector<float> got(expect.size());
  REQUIRE(cudaMemcpy(got.data(), out.data(), got.size() * sizeof(float),
                     cudaMemcpyDeviceToHost) == cudaSuccess);
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    wrong += static_cast<double>(got[i]) != expect[i];
  CHECK(wrong == 0);
}

} // namespace

TEST_CASE("a reducer from a results file reduces each shape with its nearest tuned axis point",
          "[gpu][axis]") {
  rt_test::temp_dir dir;
  {
    auto s = db::store::open(dir / "results.sqlite");
    rt_test::record_axis_results(s, s.register_device(rt_test::h100()));
  }
  struct expect {
    reduction_shape shape;
    const char *preset; // the tuned shape's fastest point
  };
  const expect cases[] = {
      {{1 << 16, 1024, 1}, "warp_rows_vec2"},  // a tuned shape
      {{1 << 15, 3000, 1}, "warp_rows_vec2"},  // between grid points
      {{1024, 1 << 16, 1}, "block_rows"},
      {{1, 1000, 60000}, "thread_columns"},    // columns
      {{64, 2048, 512}, "thread_columns"},     // a middle axis is a column shape
  };
  auto r = reducer::from_database(dir / "results.sqlite", dtype::float32, reduce_op::sum);
  for (const auto &c : cases) {
    INFO("(" << c.shape.outer << ", " << c.shape.r << ", " << c.shape.inner << ")");
    const auto choice = r.choice_axis(c.shape);
    CHECK(choice.source == "tuned");
    CHECK(choice.variant == label_of(c.preset));
    reduces_exactly(r, c.shape);
  }
  CHECK(r.fallbacks().empty());

  reducer_options o;
  o.axis_level = axis_determinism::batch_invariant;
  auto bi = reducer::from_database(dir / "results.sqlite", dtype::float32, reduce_op::sum, o);
  CHECK(bi.choice_axis({1 << 16, 1024, 1}).variant == label_of("warp_rows"));
  // (16, 2^22, 1) holds no batch_invariant point: its nearest batch_invariant shape answers
  const auto longest = bi.choice_axis({16, 1 << 22, 1});
  CHECK(longest.source == "tuned");
  CHECK(longest.variant == label_of("block_rows"));
  CHECK(longest.batch_invariant);
  reduces_exactly(bi, {16, 1 << 22, 1});
}
