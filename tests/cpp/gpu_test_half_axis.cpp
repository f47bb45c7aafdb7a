// On the GPU (issue 26 item 1): every axis preset reduces float16 and bfloat16 rows, columns
// and a middle axis of the half types' hostile data (verify/half_patterns, laid over the whole
// tensor: values near the type's max, subnormals, ones, cancellation; and the data patterns
// every type has) within issue 26's bound per output, |result − exact| ≤ u_out·|exact| +
// d·2^-24·Σ|x|, d an upper bound of the point's depth (axis_depth below); and rows of
// r = 2^24 ones in bfloat16 come out exactly 2^24 for every preset.
#include "axis_device_problem.hpp"
#include "catch.hpp"
#include "gpu_context.hpp"
#include "half_inputs.hpp"
#include "loaded_presets.hpp"

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/measure/axis_launch.hpp"
#include "reducetune/space/point.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/verify/axis_reference.hpp"
#include "reducetune/verify/half_patterns.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace reducetune;

namespace {

using bytes = std::vector<unsigned char>;
constexpr dtype half_types[] = {dtype::float16, dtype::bfloat16};
const std::vector<data_pattern> row_patterns = {data_pattern::uniform, data_pattern::alternating,
                                                data_pattern::wide_range,
                                                data_pattern::small_integers};

using rt_test::loaded_point;

// An upper bound on the depth of an axis point's summation of one output over r (the space
// does not state it yet). A block gives a row's chunk of ceil(r / split) elements P lanes
// (thread 1, group lanes, warp 32, block and split block_size, tile block_size / lanes rows of
// lanes); each folds at most ceil(chunk / P) elements plus a partial unroll group of vectors
// and a head and tail element, then a tree over the P lanes, then the finish kernel over the
// split partials (a warp: ceil(split / 32) + 5 levels). staged: a thread per output, staged
// (rows of at most 32 elements, staged_max_r) or not (its fallback).
std::uint64_t axis_depth(const search_space &s, const point &p, const reduction_shape &shape) {
  const std::uint64_t r = shape.r;
  const parameter_map v = compile_parameters(s.decl(), p);
  const auto get = [&](const char *name) {
    return static_cast<std::uint64_t>(std::get<std::int64_t>(v.at(name)));
  };
  const std::string strategy = std::get<std::string>(v.at("strategy"));
  const std::uint64_t bs = get("block_size"), lanes = get("lanes"), split = get("split");
  const std::uint64_t per_block = strategy == "thread"   ? 1
                                  : strategy == "group"  ? lanes
                                  : strategy == "warp"   ? 32
                                  : strategy == "tile" || strategy == "tile_ticket"
                                      ? bs / lanes // tile_ticket: tile's order, in one launch
                                  : strategy == "staged" ? 1
                                                         : bs;
  const std::uint64_t slack = get("vec") * get("unroll") + 2;
  const std::uint64_t row = stage_depth((r + split - 1) / split, per_block) + slack;
  return row + (split > 1 ? stage_depth(split, 32) : 0);
}

using device_problem = rt_test::axis_device_problem;

std::vector<reduction_shape> shapes_for(std::uint64_t r) {
  const std::uint64_t budget = 1ull << 20;
  const std::uint64_t many = std::max<std::uint64_t>(2, std::min<std::uint64_t>(budget / r, 1000));
  return {{many, r, 1},
          {1, r, std::max<std::uint64_t>(2, std::min<std::uint64_t>(budget / r, 1030))},
          {3, r, 5}};
}

} // namespace

TEST_CASE("Every axis preset reduces float16 and bfloat16 hostile rows, columns and a middle "
          "axis within issue 26's bound",
          "[gpu][half][axis]") {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "axis");
  std::size_t runs = 0;
  for (const dtype t : half_types)
    for (const reduce_op o : all_ops) {
      const search_space s(f, t, o, g.limits);
      const auto points = rt_test::load_valid_presets(g, f, s);
      REQUIRE(points.size() == f.presets.size()); // every axis preset takes the half types
      for (const std::uint64_t r : {1ull, 3ull, 17ull, 1000ull, 4097ull, 1ull << 20})
        for (const reduction_shape &shape : shapes_for(r)) {
          const problem p{t, o, shape};
          for (const auto &[pattern, host] :
               rt_test::half_inputs(t, o, p.elements(), row_patterns, 0xA815)) {
            const axis_reference reference(p, host.data());
            const device_problem d(p, host);
            for (const auto &lp : points) {
              tolerance_options options;
              options.depth = axis_depth(s, lp.p, shape);
              const axis_verdict v = reference.check(d.run(s, lp).data(), 8, options);
              INFO(to_label(p) << " " << pattern << " " << lp.label << " d = " << options.depth
                               << ": " << v.summary());
              REQUIRE(v.ok());
              ++runs;
            }
          }
        }
    }
  std::printf("gpu_test_half_axis: %zu runs within the bound\n", runs);
}

TEST_CASE("Rows and columns of r = 2^24 bfloat16 ones sum to exactly 2^24 with every axis "
          "preset",
          "[gpu][half][axis]") {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "axis");
  const search_space s(f, dtype::bfloat16, reduce_op::sum, g.limits);
  const auto points = rt_test::load_valid_presets(g, f, s);
  const std::uint64_t r = 1ull << 24;
  for (const reduction_shape shape : {reduction_shape{2, r, 1}, reduction_shape{1, r, 2}}) {
    const problem p{dtype::bfloat16, reduce_op::sum, shape};
    const device_problem d(
        p, generate_half_bytes(dtype::bfloat16, half_pattern::ones, p.elements(), 1));
    for (const auto &lp : points) {
      const bytes got = d.run(s, lp);
      for (std::uint64_t j = 0; j < p.outputs(); ++j) {
        bfloat16 value;
        std::memcpy(&value, got.data() + 2 * j, sizeof value);
        INFO(to_label(p) << " " << lp.label << " output " << j << " = "
                         << static_cast<float>(value));
        CHECK(value.bits == bfloat16(16777216.0).bits);
      }
    }
  }
}
