// The axis runner in evaluate's table, without a GPU: the family's kernel ABI picks it (an axis
// point on a whole array is refused by it, naming the whole-array families; a whole-array
// point on a row reduction by the whole-array runner), and the plan it launches (grid, split,
// finish, partials) and the bytes it prices, for a few shapes, from the family's own grid
// expression worked out by hand here.
#include "catch.hpp"
#include "evaluate_fixture.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/measure/axis_runner.hpp"
#include "reducetune/measure/evaluate.hpp"

#include <string>

using namespace reducetune;
using rt_test::failed;
using rt_test::has_text;

namespace {

struct fixture : rt_test::evaluate_fixture {
  search_space axis{family::load(lib, "axis"), dtype::float32, reduce_op::sum, {}};
  search_space tunable{family::load(lib, "tunable"), dtype::float32, reduce_op::sum, {}};

  point preset(const std::string &name) const {
    for (const auto &pp : axis.presets())
      if (pp.name == name) return {pp.point, pp.launch};
    FAIL("no axis preset " << name);
    return {};
  }
};

problem floats(reduction_shape s) { return {dtype::float32, reduce_op::sum, s}; }

} // namespace

TEST_CASE("the axis runner refuses a whole array, naming the whole-array families",
          "[measure][evaluate][axis]") {
  fixture fx;
  const point p = fx.preset("warp_rows");
  const failure f = failed(fx.run(fx.axis, problem::whole_array(dtype::float32,
                                                                reduce_op::sum, 1 << 20), p));
  CHECK(f.kind == failure_kind::invalid_configuration);
  CHECK_THAT(f.reason, has_text("family 'axis' reduces along an axis, not the whole array "
                                "float32.sum.(1,1048576,1)"));
  CHECK_THAT(f.reason, has_text("whole-array family"));
  CHECK(axis_refusal(fx.axis, floats({4, 1024, 1})).empty());
}

TEST_CASE("the whole-array runner refuses a row reduction", "[measure][evaluate][axis]") {
  fixture fx;
  const failure f = failed(fx.run(fx.tunable, floats({4, 1024, 1}), fx.tunable.point_of({})));
  CHECK(f.kind == failure_kind::invalid_configuration);
  CHECK_THAT(f.reason, has_text("reduces whole arrays, not float32.sum.(4,1024,1)"));
}

TEST_CASE("an axis point on an axis problem reaches the axis runner, not 'no runner'",
          "[measure][evaluate][axis]") {
  fixture fx;
  // A device that names sm_90 but is no GPU: the runner plans the shape, NVRTC compiles the
  // point, and the first device call (the input's allocation) fails as device_error or
  // launch_error, never as the missing-runner or a refused-shape invalid_configuration.
  fx.no_gpu.cc_major = 9;
  const failure f = failed(fx.run(fx.axis, floats({4, 1024, 1}), fx.preset("warp_rows")));
  INFO(to_string(f.kind) << ": " << f.reason);
  CHECK((f.kind == failure_kind::device_error || f.kind == failure_kind::launch_error));
}

TEST_CASE("the plan the axis runner launches, for rows, columns and a few very long rows",
          "[measure][evaluate][axis]") {
  fixture fx;
  SECTION("a warp per row: 256 / 32 = 8 rows per block, 1000 rows in 125 blocks, one launch") {
    const axis_plan plan = plan_axis(fx.axis, fx.preset("warp_rows"), {1000, 4097, 1});
    CHECK(plan.block_size == 256);
    CHECK(plan.grid == 125);
    CHECK(plan.split == 1);
    CHECK(plan.launches() == 1);
    CHECK(plan.partials_bytes() == 0);
    CHECK(plan.final.empty());
  }
  SECTION("a thread per output: 4100 columns in ceil(4100 / 256) = 17 blocks") {
    const axis_plan plan = plan_axis(fx.axis, fx.preset("thread_columns"), {1, 1000, 4100});
    CHECK(plan.grid == 17);
    CHECK(plan.launches() == 1);
  }
  SECTION("split 32: 3 rows in 96 blocks, float partials of 32 x 3, then the finish") {
    const axis_plan plan = plan_axis(fx.axis, fx.preset("split_long_rows"), {3, 1 << 20, 1});
    CHECK(plan.grid == 96);
    CHECK(plan.split == 32);
    CHECK(plan.launches() == 2);
    CHECK(plan.partials_bytes() == 32 * 3 * 4);
    CHECK_FALSE(plan.final.empty());
    // The finish has its own block of 4 warps, a warp per output (axis_launch.cpp,
    // final_block_size), not the pass's 512: 64 outputs take 16 blocks, not 4 of 16 warps.
    CHECK(plan.block_size == 512);
    CHECK(plan.final_block_size == 128);
    CHECK(plan.final_grid == 1);
    CHECK(plan_axis(fx.axis, fx.preset("split_long_rows"), {64, 1 << 20, 1}).final_grid == 16);
    // Below 32 blocks, `split` lanes per output (axis_finish.cuh, finish_lanes): split 4 puts 8 outputs
    // in a warp, 32 in a block, so 32768 columns take 1024 blocks (4096 of 8 warps before).
    const axis_plan four = plan_axis(fx.axis, fx.preset("tile_columns_vec4_split"), {1, 8192, 32768});
    CHECK(four.split == 4);
    CHECK(four.final_block_size == 128);
    CHECK(four.final_grid == 1024);
  }
  SECTION("partials count the split's non-empty chunks, not split: at most r per output") {
    // 512 blocks along r = 16: chunks of one element, 16 of them written per output. Sized by
    // split, the 2^24 columns asked for 512 x 2^24 x 4 bytes = 32 GiB.
    const axis_plan columns = plan_axis(fx.axis, fx.preset("tile_tall_columns"), {1, 16, 1 << 24});
    CHECK(columns.split == 512);
    CHECK(columns.parts == 16);
    CHECK(columns.partials_bytes() == 16ull * (1 << 24) * 4);
    // r = 40 over 32 blocks: chunks of ceil(40 / 32) = 2 elements, 20 of them not empty
    // (neither split nor r).
    const axis_plan rows = plan_axis(fx.axis, fx.preset("split_long_rows"), {3, 40, 1});
    CHECK(rows.parts == 20);
    CHECK(rows.partials_bytes() == 20 * 3 * 4);
    // The first section's long rows fill every chunk: parts == split.
    CHECK(plan_axis(fx.axis, fx.preset("split_long_rows"), {3, 1 << 20, 1}).parts == 32);
  }
  SECTION("tile_ticket: one launch, no finish kernel, a counter per tile after the partials") {
    // tile_tall_columns_ticket: tiles of 32 lanes x 2 = 64 columns (the family's ticket_columns
    // let), 512 blocks along r; 200 columns are 4 tiles a row of outer
    const axis_plan plan =
        plan_axis(fx.axis, fx.preset("tile_tall_columns_ticket"), {3, 1 << 20, 200});
    CHECK(plan.split == 512);
    CHECK(plan.parts == 512);
    CHECK(plan.launches() == 1);
    CHECK_FALSE(plan.finish_kernel());
    CHECK(plan.final.empty());
    CHECK(plan.final_grid == 0);
    CHECK(plan.final_block_size == 0);
    CHECK(plan.batch_invariant);
    CHECK(plan.counters == 3 * 4);
    CHECK(plan.grid == 3 * 4 * 512);
    CHECK(plan.counters_offset() == 512ull * 3 * 200 * 4);
    CHECK(plan.partials_bytes() == 512ull * 3 * 200 * 4 + 12 * 4);
    // The counters begin on the next 16 bytes: 3 parts x 5 columns of float32 are 60 bytes
    const axis_plan small = plan_axis(fx.axis, fx.preset("tile_tall_columns_ticket"), {1, 3, 5});
    CHECK(small.parts == 3);
    CHECK(small.counters == 1);
    CHECK(small.counters_offset() == 64);
    CHECK(small.partials_bytes() == 64 + 4);
    // Its two-launch twin: the same pass and partials, the finish kernel, no counters
    const axis_plan tile = plan_axis(fx.axis, fx.preset("tile_tall_columns"), {3, 1 << 20, 200});
    CHECK(tile.launches() == 2);
    CHECK(tile.counters == 0);
    CHECK(tile.grid == plan.grid);
    CHECK(tile.block_size == plan.block_size);
    CHECK(tile.partials_bytes() == plan.counters_offset());
  }
}

TEST_CASE("the axis runner prices bytes read plus bytes written", "[measure][evaluate][axis]") {
  // 1000 rows of 4 float32 elements: 16000 bytes read, 4000 written.
  CHECK(floats({1000, 4, 1}).bytes_read_and_written() == 20000);
  // float64 columns: 2 x 1000 read, 1000 written, 8 bytes each.
  CHECK(problem{dtype::float64, reduce_op::max, {1, 2, 1000}}.bytes_read_and_written() == 24000);
}
