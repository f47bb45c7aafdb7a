// Column tiles wider than a warp (issue 26: lanes 64, 128 and 256 of the tile strategy, so that
// a block step reads up to block_size * vec contiguous elements of a row): the space takes them
// only for tile and only up to the block, their grid counts lanes * vec columns a tile, and
// they compile with NVRTC for sm_90 with no local memory, at lanes == block_size (one row of
// lanes, no shared tree) and below it. The points are those the axis benchmark's fitted tiles
// give its column shapes (driver/reducetune/benchmarks/_axis_fitted.py). No GPU needed;
// tests/cpp/gpu_test_axis.cpp runs tile kernels.
#include "axis_grid.hpp"
#include "catch.hpp"
#include "cubin_elf.hpp"
#include "shared_compiler.hpp"

#include "reducetune/jit/variant_request.hpp"
#include "reducetune/space/problem.hpp"
#include "reducetune/space/space.hpp"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

using namespace reducetune;

namespace {

const device_limits sm90 = device_limits::for_arch("sm_90");

point tile(const search_space &s, std::int64_t block_size, std::int64_t lanes, std::int64_t vec,
           std::int64_t unroll, std::int64_t split) {
  return s.point_of({{"strategy", std::string("tile")},
                     {"block_size", block_size},
                     {"lanes", lanes},
                     {"vec", vec},
                     {"unroll", unroll},
                     {"split", split}});
}

using rt_test::grid_at;

} // namespace

TEST_CASE("Only a column tile takes more than 32 lanes, and at most its block", "[space][axis]") {
  const family f = family::load(template_library::embedded(), "axis");
  const search_space s(f, dtype::float32, reduce_op::sum, sm90);
  CHECK(s.check(tile(s, 256, 256, 4, 4, 256)).ok());
  CHECK(s.check(tile(s, 64, 64, 4, 4, 1)).ok());
  CHECK(s.check(tile(s, 512, 128, 4, 4, 1024)).ok());
  // a block of 128 has no row of 256 lanes
  CHECK(s.check(tile(s, 128, 256, 4, 4, 1)).reasons().find("at most the block") !=
        std::string::npos);
  for (const char *other : {"thread", "group", "warp", "block", "staged"}) {
    INFO(other);
    const point p = s.point_of({{"strategy", std::string(other)}, {"lanes", std::int64_t{64}}});
    CHECK(s.check(p).reasons().find("more than 32 lanes only for a column tile") !=
          std::string::npos);
  }
  // A tile is lanes * vec columns: 256 lanes of 4 cover 1024 of (65536, 4096)'s 4096 columns,
  // 4 tiles, each r split 256 ways.
  CHECK(grid_at(s, tile(s, 256, 256, 4, 4, 256), {1, 65536, 4096}) == 4 * 256);
  CHECK(grid_at(s, tile(s, 512, 16, 4, 4, 1024), {1, 1 << 22, 64}) == 1024);
}

TEST_CASE("Tiles of 64 to 256 lanes compile for sm_90 with no local memory, one row of lanes "
          "(lanes == block_size) included",
          "[jit][axis]") {
  const family f = family::load(template_library::embedded(), "axis");
  std::vector<compile_request> requests;
  std::vector<std::string> labels;
  // (type, block_size, lanes, vec, unroll, split): the fitted tiles of (65536, 4096) for
  // float32 (256 lanes of 16-byte loads, 4 deep, W = 1) and bfloat16 (128 lanes of 8, block
  // 512, W = 4), of (2, 2^27) for float64 (split 1), and 64 lanes at block 64 and 1024.
  for (const auto &[t, bs, lanes, vec, unroll, split] :
       {std::tuple{dtype::float32, 256, 256, 4, 4, 256},
        std::tuple{dtype::bfloat16, 512, 128, 8, 4, 256},
        std::tuple{dtype::float64, 256, 256, 2, 4, 1}, std::tuple{dtype::int32, 64, 64, 4, 2, 1},
        std::tuple{dtype::float16, 1024, 64, 8, 4, 1024}})
    for (const reduce_op o : {reduce_op::sum, reduce_op::max}) {
      const search_space s(f, t, o, sm90);
      const point p = tile(s, bs, lanes, vec, unroll, split);
      INFO(to_string(t) << " " << to_label(f, p.compile) << ": " << s.check(p).reasons());
      REQUIRE(s.check(p).ok());
      requests.push_back(request_for(f, p.compile, 90));
      labels.push_back(std::string(to_string(t)) + " " + to_label(f, p.compile));
    }
  const auto outcomes = rt_test::shared_compiler().compile_batch(requests);
  REQUIRE(outcomes.size() == 10);
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    INFO(labels[i] << ": " << (outcomes[i].program ? "" : outcomes[i].error.substr(0, 3000)));
    REQUIRE(outcomes[i].program);
    REQUIRE(outcomes[i].program->cubin.compare(0, 4,
                                               "\x7f"
                                               "ELF") == 0);
    // No stack frame: accumulators kept in local memory cost a column tile a third of its
    // bandwidth on an H200 (test_axis_compile).
    const auto frames = rt_test::kernel_frame_bytes(outcomes[i].program->cubin);
    for (const auto &name : requests[i].name_expressions) {
      INFO(name);
      const auto frame = frames.find(outcomes[i].program->mangled(name));
      REQUIRE(frame != frames.end());
      CHECK(frame->second == 0);
    }
  }
}

// A tile that spans whole rows (inner == lanes * vec) steps from one row of lanes to the next by
// the constant block_size * vec (axis_tile.cuh, tile_columns' Flat), so its unrolled loads take
// immediate offsets. bfloat16 block 512, lanes 8, vec 8 then needs 32 registers a thread, 4
// blocks an SM: the 512 blocks of a 512-way split (the fitted tile of (1, 2^22, 64)) run one
// wave on a 132-SM H100 or H200. With a run-time step it took 34 (unroll 4) and 40 (unroll 2),
// 3 blocks an SM, 1.29 waves: 0.85 x the streaming kernel against 0.93 one wave (H200,
// docs/results/h200x2_2026-11-27_ticket_bound_and_wave_probe/flat_probe).
TEST_CASE("A bfloat16 tile of 8 lanes x 8 that spans whole rows holds 4 blocks of 512 an SM "
          "(at most 32 registers a thread)",
          "[jit][axis]") {
  const family f = family::load(template_library::embedded(), "axis");
  const search_space s(f, dtype::bfloat16, reduce_op::sum, sm90);
  std::vector<compile_request> requests;
  for (const std::int64_t unroll : {2, 4}) {
    const point p = tile(s, 512, 8, 8, unroll, 512);
    REQUIRE(s.check(p).ok());
    requests.push_back(request_for(f, p.compile, 90));
  }
  const auto outcomes = rt_test::shared_compiler().compile_batch(requests);
  REQUIRE(outcomes.size() == 2);
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    REQUIRE(outcomes[i].program);
    const auto registers = rt_test::kernel_registers(outcomes[i].program->cubin);
    int passes = 0;
    for (const auto &name : requests[i].name_expressions) {
      if (name.find("final_pass") != std::string::npos) continue; // the split's finish
      INFO(name);
      const auto found = registers.find(outcomes[i].program->mangled(name));
      REQUIRE(found != registers.end());
      CHECK(found->second <= 32);
      ++passes;
    }
    CHECK(passes == 1);
  }
}
