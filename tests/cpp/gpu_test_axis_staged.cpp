// On the GPU (issue 26, item 2's short rows): the axis family's staged strategy
// (kernel_templates/axis/axis_staged.cuh) copies tiles of whole rows into shared memory with
// vector loads and sums each row there in k order, one thread per row.
//
// Its points are checked on hostile short rows (cancellation, huge and tiny values, uniform,
// small integers; for prod the patterns' products) of every type and operator, for r from 1 to
// 33 (both sides of staged_max_r = 32, where it falls back to a thread per row) and the input 0,
// 1, 3 or 7 elements past an aligned address, so that tiles start at every alignment, rows of
// odd r straddle vectors and a tile's head and tail are not empty; with several tiles per call
// and a partial last tile. Each result is verified against the host reference of its rows and
// must have the bits of thread_columns (a thread per row, the same k order): a
// lost, doubled or misplaced element of a tile changes them.
//
// Rows of 2 and 4 whole vectors (r = 2 * vec, 4 * vec: bfloat16 and float16 rows of 16 and 32
// at vec 8, float32 rows of 8 and 16 at vec 4) take a register path (staged_rows_of_vectors:
// groups of lanes trade their parts with shuffles) where the input lies on a vector boundary:
// checked at every unroll, with the bits of thread_columns and of unroll 1, and at an input one
// element off (shared memory).
//
// And staged points are batch_invariant: a row has the same bits whether 1, 7, 4096 or 2^20
// rows are reduced with it, float32, float64 and bfloat16, on the register paths (an aligned
// input) and through shared memory (one element off).
#include "axis_device_problem.hpp"
#include "axis_points.hpp"
#include "catch.hpp"
#include "gpu_context.hpp"

#include "reducetune/cuda/device_buffer.hpp"
#include "reducetune/cuda/loaded_module.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/jit/compiler.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/measure/axis_launch.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/verify/axis_reference.hpp"
#include "reducetune/verify/patterns.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace reducetune;

namespace {

using bytes = std::vector<unsigned char>;

using rt_test::named_point;

struct geometry {
  std::int64_t block_size, vec, unroll;
};

// The named presets (in that order), then the staged points of the given tile geometries
// where the type allows them (vec * sizeof(T) <= 16, the tile within 48 KiB), compiled and
// loaded.
std::vector<named_point> load_points(const rt_test::gpu_context &g, const family &f,
                                     const search_space &s, const std::vector<std::string> &presets,
                                     const std::vector<geometry> &staged) {
  std::vector<named_point> out = rt_test::named_presets(s, presets);
  for (const auto &[bs, vec, unroll] : staged) {
    const point p = s.point_of({{"strategy", std::string("staged")},
                                {"lanes", std::int64_t{1}},
                                {"block_size", bs},
                                {"vec", vec},
                                {"unroll", unroll}});
    if (s.check(p)) out.push_back({to_label(f, p.compile), p, nullptr});
  }
  rt_test::compile_and_load(g, f, out);
  return out;
}

// thread_columns first (the order staged must reproduce), then the staged preset and staged
// points of other tile geometries: tiles of 64 elements (many tiles, short heads and tails),
// 16-byte loads (vec 4 of 4-byte types, vec 8 of 2-byte types), and a 1024-thread block.
std::vector<named_point> staged_points(const rt_test::gpu_context &g, const family &f,
                                       const search_space &s) {
  return load_points(g, f, s, {"thread_columns", "staged_short_rows"},
                     {{64, 1, 1}, {128, 4, 4}, {256, 8, 2}, {1024, 1, 2}});
}

using device_rows = rt_test::axis_device_problem;

const std::vector<data_pattern> hostile = {data_pattern::alternating, data_pattern::wide_range,
                                           data_pattern::uniform, data_pattern::small_integers};

// Runs every point over p for each hostile pattern, the input `offset` elements past an aligned
// address (seeded by `seed`): each verified against the host reference and required to have the
// first point's bits (a lost, doubled or misplaced element, or another order, changes them).
// Returns the runs.
std::size_t same_bits_as_first(const search_space &s, const problem &p, std::size_t offset,
                               std::uint64_t seed, const std::vector<named_point> &points) {
  for (const data_pattern pattern : hostile) {
    const bytes host = generate_bytes(p.type, pattern, p.op, p.elements() + offset, seed);
    const std::string what =
        to_label(p) + " offset " + std::to_string(offset) + " " + to_string(pattern);
    const auto got = rt_test::verified_outputs(s, p, host, offset, points, what);
    for (std::size_t k = 1; k < got.size(); ++k) {
      INFO(what << " " << points[k].name << " against " << points.front().name);
      REQUIRE(got[k] == got.front());
    }
  }
  return hostile.size() * points.size();
}

} // namespace

TEST_CASE("Staged points reduce hostile short rows at every alignment correctly, with the bits "
          "of a thread per row",
          "[gpu][axis][staged]") {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "axis");
  std::size_t runs = 0;
  for (const dtype t : all_dtypes)
    for (const reduce_op o : all_ops) {
      const search_space s(f, t, o, g.limits);
      const auto points = staged_points(g, f, s);
      for (const std::uint64_t r : {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33})
        for (const std::size_t offset : {0, 1, 3, 7}) {
          // 3 tiles of the preset (4096 elements) and a partial one, 2 of rows of 2. Staged or
          // its fallback: thread_columns' k order.
          const problem p{t, o, {12000 / r + 1, r, 1}};
          runs += same_bits_as_first(s, p, offset, 0x57A9 + r + offset, points);
        }
    }
  std::printf("gpu_test_axis_staged: %zu runs verified, each with thread_columns' bits\n", runs);
}

TEST_CASE("Staged rows of 2 and 4 whole vectors, bfloat16, float16 and float32, have the bits "
          "of a thread per row and of unroll 1 at every unroll, aligned and one element off",
          "[gpu][axis][staged]") {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "axis");
  for (const dtype t : {dtype::bfloat16, dtype::float16, dtype::float32})
    for (const reduce_op o : {reduce_op::sum, reduce_op::max}) {
      const search_space s(f, t, o, g.limits);
      // 16-byte loads at every unroll (unroll 1 first: a block of fewer loads than a row has
      // vectors), 8-byte loads, and tiles of 64 threads of one load (many tiles, idle lanes).
      const std::int64_t wide = 16 / static_cast<std::int64_t>(size_of(t));
      const auto points = load_points(g, f, s, {"thread_columns"},
                                      {{256, wide, 1},
                                       {256, wide, 2},
                                       {256, wide, 4},
                                       {256, wide, 8},
                                       {256, wide / 2, 4},
                                       {64, wide, 1}});
      REQUIRE(points.size() == 7);
      // r = wide: a vector a row; 2 * wide and 4 * wide: 2 and 4 vectors of the 16-byte points
      // (the 8-byte point's 2 and 4 vectors are wide and 2 * wide; its 8, staged_rows).
      for (const std::uint64_t r : {wide, 2 * wide, 4 * wide})
        for (const std::size_t offset : {0, 1}) {
          // 3.5 tiles of the largest point (256 x wide x 8 elements) and a ragged last one.
          const problem p{t, o, {256 * 8 * 16 * 7 / 2 / size_of(t) / r + 5, r, 1}};
          // thread_columns' bits (one thread, k order), so unroll 1's too
          same_bits_as_first(s, p, offset, 0x2C4 + r + offset, points);
        }
    }
}

TEST_CASE("A staged row has the same bits in batches of 1, 7, 4096 and 2^20 rows",
          "[gpu][axis][staged][determinism]") {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "axis");
  for (const dtype t : {dtype::float32, dtype::float64, dtype::bfloat16}) {
    const search_space s(f, t, reduce_op::sum, g.limits);
    const auto points = staged_points(g, f, s);
    for (const std::uint64_t r : {2, 3, 7, 8, 16, 17, 32, 33}) {
      // One row of uniform data (no two summation orders are likely to agree) in every row.
      const bytes row = generate_bytes(t, data_pattern::uniform, reduce_op::sum, r, 0xB17 + r);
      const std::size_t width = row.size();
      // 0: the register paths where a row is a vector's divisor or 2 or 4 of them; 1: every
      // staged point through shared memory.
      for (const std::size_t offset : {0, 1}) {
        std::vector<bytes> alone(points.size());
        for (const std::uint64_t rows : {1ull, 7ull, 4096ull, 1ull << 20}) {
          const problem p{t, reduce_op::sum, {rows, r, 1}};
          bytes host((offset + rows * r) * size_of(t));
          for (std::uint64_t j = 0; j < rows; ++j)
            std::memcpy(host.data() + offset * size_of(t) + j * width, row.data(), width);
          const device_rows d(p, host, offset);
          for (std::size_t k = 0; k < points.size(); ++k) {
            INFO(to_label(p) << " offset " << offset << " " << points[k].name);
            REQUIRE(plan_axis(s, points[k].p, p.shape).batch_invariant); // the family's let
            const bytes got = d.run(s, points[k]);
            if (rows == 1) {
              REQUIRE(axis_reference(p, host.data() + offset * size_of(t)).check(got.data()).ok());
              alone[k] = got;
            }
            for (std::uint64_t j = 0; j < rows; ++j)
              REQUIRE(std::memcmp(got.data() + j * size_of(t), alone[k].data(), size_of(t)) == 0);
          }
        }
      }
    }
  }
}

// Not run by default (hidden): the short rows of issue 26's first look, (2^27, 2), (2^24, 16)
// and (2^25, 8), and (2^23, 32) (4 vectors of bfloat16 at vec 8), float32 and bfloat16, hot medians
// of thread_columns, group_short_rows, the staged preset and staged neighbours (16-byte loads with
// 4 or 2 in flight, 512-thread blocks), with bandwidth counting bytes read + written and % of the
// HBM peak; each staged result is first checked bit for bit against thread_columns' (the same
// order). The kernels alone, no peers: scripts/device-jobs/axis_short_rows.py puts torch beside
// them.
TEST_CASE("Short rows at 2^28 elements: staged against a thread per row and sub-warp groups",
          "[.][gpu][axis][staged][timing]") {
  const rt_test::gpu_context g;
  const family f = family::load(g.lib, "axis");
  std::printf("%s, peak %.0f GB/s\n", g.device.name.c_str(), g.device.peak_bytes_per_s() / 1e9);
  for (const dtype t : {dtype::float32, dtype::bfloat16}) {
    const search_space s(f, t, reduce_op::sum, g.limits);
    const std::int64_t wide = 16 / static_cast<std::int64_t>(size_of(t));
    const auto points =
        load_points(g, f, s, {"thread_columns", "group_short_rows", "staged_short_rows"},
                    {{256, wide, 4}, {256, wide, 2}, {512, 2, 4}, {128, wide, 8}});
    const bytes host = generate_bytes(t, data_pattern::uniform, reduce_op::sum, 1ull << 28, 7);
    for (const reduction_shape shape :
         {reduction_shape{1ull << 27, 2, 1}, reduction_shape{1ull << 24, 16, 1},
          reduction_shape{1ull << 25, 8, 1}, reduction_shape{1ull << 23, 32, 1}}) {
      const problem p{t, reduce_op::sum, shape};
      const device_rows d(p, host);
      const bytes expected = d.run(s, points.front());
      const double moved = static_cast<double>((p.elements() + p.outputs()) * size_of(t));
      for (const auto &np : points) {
        INFO(to_label(p) << " " << np.name);
        if (np.name != "group_short_rows") REQUIRE(d.run(s, np) == expected);
        const double sec = d.median_seconds(s, np);
        rt_test::print_rate(g, to_label(p), np.name, sec, moved);
      }
    }
  }
}
