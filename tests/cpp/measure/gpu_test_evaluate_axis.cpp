// On the GPU (issue 26 item 4, first step): evaluate(space, problem, point) measures every
// preset of the axis family through the axis runner, on a row shape (4096 rows of 1024) and a
// column shape (1024 rows of 4096 columns) of float32 sums over hostile data (alternating:
// cancellation), and on the same shapes of int64 max (exact). Each must be a measurement
// (every output verified before and after sampling), priced on bytes read plus bytes written
// (so bandwidth x the cold median gives back those bytes), at a bandwidth that is sane for
// memory-bound work: above 1 GB/s, and below 1.1 x the device's peak (cold samples flush L2,
// so a faster number would be a timing or a byte count gone wrong). The table is printed for
// the GPU run's log.
#include "catch.hpp"
#include "gpu_context.hpp"
#include "short_sampling.hpp"

#include "reducetune/jit/compiler.hpp"
#include "reducetune/measure/axis_runner.hpp"
#include "reducetune/measure/evaluate.hpp"
#include "reducetune/space/space.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <variant>

using namespace reducetune;

namespace {

struct gpu_context : rt_test::gpu_context {
  compiler jit{lib};
  evaluation_cache cache;
};

gpu_context &context() {
  static gpu_context g;
  return g;
}

// Short sampling: this test checks the runner's plumbing, not a stable number.
evaluate_options quick() { return rt_test::short_sampling(20, 0.2); }

void check_every_preset(dtype type, reduce_op op, data_pattern pattern) {
  gpu_context &g = context();
  const search_space s(family::load(g.lib, "axis"), type, op, g.limits);
  for (const reduction_shape shape : {reduction_shape{4096, 1024, 1}, {1, 1024, 4096}}) {
    const problem pr{type, op, shape};
    for (const auto &pp : s.presets()) {
      INFO(pp.name << " on " << to_label(pr));
      // A preset of 2-byte types (staged_short_rows_vec8: 8 elements a load) is refused for
      // wider ones, for its vector width; every other preset is valid for every type.
      if (const check_result valid = s.check(pp.point, pp.launch);
          !valid && size_of(type) > 2 &&
          valid.reasons().find("a vector load is at most 16 bytes") != std::string::npos)
        continue;
      const evaluation e = evaluate(s, pr, point{pp.point, pp.launch}, input_data{pattern},
                                    g.jit, g.device, quick(), g.cache);
      if (const auto *f = std::get_if<failure>(&e)) FAIL(to_string(f->kind) << ": " << f->reason);
      const auto &m = std::get<measurement>(e);
      std::printf("%-22s %-28s %8.1f GB/s %5.1f %% of peak\n", pp.name.c_str(),
                  to_label(pr).c_str(), m.bytes_per_s / 1e9, m.percent_of_peak);
      CHECK(m.check.ok);
      CHECK(m.bytes_per_s > 1e9);
      CHECK(m.percent_of_peak < 110);
      const double moved = static_cast<double>(pr.bytes_read_and_written());
      CHECK(std::abs(m.bytes_per_s * m.cold.stats.median - moved) <= 1e-9 * moved);
    }
  }
}

} // namespace

TEST_CASE("every axis preset is measured on rows and columns of float32 sums",
          "[gpu][measure][evaluate][axis]") {
  check_every_preset(dtype::float32, reduce_op::sum, data_pattern::alternating);
}

TEST_CASE("every axis preset is measured on rows and columns of int64 max",
          "[gpu][measure][evaluate][axis]") {
  check_every_preset(dtype::int64, reduce_op::max, data_pattern::all_negative);
}
