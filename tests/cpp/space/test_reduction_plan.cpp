// The one planner of a reduction's launches (space/reduction_plan.hpp): its launch count and
// its scratch are those of its steps, for every protocol over sizes from 1 to beyond 2^32,
// sizes that are not multiples of a block's items, capped grids and refusals. No GPU.
#include "catch.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/element.hpp"
#include "reducetune/space/reduction_plan.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

using namespace reducetune;

namespace {

const protocol all_protocols[] = {protocol::multipass, protocol::two_pass, protocol::atomic,
                                  protocol::ticket, protocol::host};

grid_rule per_block(std::uint64_t items, std::uint64_t cap = 0) {
  return [items, cap](std::uint64_t n) {
    const std::uint64_t g = (n + items - 1) / items;
    return cap != 0 && g > cap ? cap : g;
  };
}

// The launches each protocol makes, counted here from the protocol's definition
// (docs/architecture.md, "Launch protocols") independently of the planner.
unsigned expected_launches(protocol p, const grid_rule &grid, std::uint64_t n) {
  switch (p) {
  case protocol::two_pass:
    return grid(n) == 1 ? 1 : 2;
  case protocol::atomic:
    return 2;
  case protocol::ticket:
  case protocol::host:
    return 1;
  case protocol::multipass: {
    unsigned passes = 1;
    for (std::uint64_t m = n; grid(m) > 1; m = grid(m)) ++passes;
    return passes;
  }
  }
  return 0;
}

// Each slot a step touches must have scratch, and every step must stay inside it.
void check_steps_fit_scratch(const reduction_plan &plan, std::uint64_t n, std::uint64_t elem) {
  const reduction_scratch &s = plan.scratch;
  auto bytes_of = [&](buffer_slot slot) -> std::uint64_t {
    switch (slot) {
    case buffer_slot::input:
      return n * elem;
    case buffer_slot::out:
      return s.out;
    case buffer_slot::partials:
      return s.partials;
    case buffer_slot::ping:
      return s.ping;
    case buffer_slot::pong:
      return s.pong;
    }
    return 0;
  };
  for (const planned_step &st : plan.steps) {
    CHECK(st.grid >= 1);
    CHECK(st.n * elem <= bytes_of(st.in)); // it reads n elements of its input
    const std::uint64_t written = st.out == buffer_slot::out ? elem : st.grid * elem;
    CHECK(written <= bytes_of(st.out)); // one element per block, or the result
    if (st.role == kernel_role::pass && st.out != buffer_slot::out)
      CHECK(st.grid * elem <= bytes_of(st.partials));
    if (st.role == kernel_role::pass)
      CHECK(st.grid * elem <= s.partials); // the partials of any pass fit the first pass's
  }
  // Partials and the result are accumulators: 4 bytes for a 2-byte half type (float32).
  CHECK(s.out == accumulator_bytes(elem));
  CHECK(s.partials == plan.first_grid * accumulator_bytes(elem));
  CHECK(s.ticket == sizeof(unsigned));
}

} // namespace

TEST_CASE("the launch count and the scratch of every protocol are those of its steps, from "
          "n = 1 to beyond 2^32",
          "[space][plan]") {
  const std::vector<std::uint64_t> sizes = {1,          2,
                                            255,        256,
                                            257,        1000,
                                            65535,      65537,
                                            1000003,    (1u << 24) + 7,
                                            1ull << 30, (1ull << 33) + 1};
  for (const std::uint64_t cap : {std::uint64_t{0}, std::uint64_t{132 * 4}})
    for (const protocol p : all_protocols)
      for (const std::uint64_t n : sizes)
        for (const std::uint64_t elem : {2u, 4u, 8u}) {
          const auto grid = per_block(256, cap);
          INFO(to_string(p) << " n = " << n << " cap = " << cap << " element " << elem);
          const auto plan = plan_reduction_steps(p, grid, n, elem, p == protocol::multipass);
          CHECK(plan.launches() == plan.steps.size());
          CHECK(plan.launches() == expected_launches(p, grid, n));
          CHECK(plan.first_grid == grid(n));
          const bool has_ping = p == protocol::multipass;
          CHECK(plan.scratch.ping == (has_ping ? plan.first_grid * elem : 0));
          CHECK(plan.scratch.pong == plan.scratch.ping);
          CHECK(plan.scratch.input_copy == (has_ping ? n * elem : 0)); // asked for in_place here
          check_steps_fit_scratch(plan, n, elem);
          // The last step is given out, but for the host protocol's one-block pass, which
          // writes its result to out and must land it in the partial the host reads.
          const bool host_one_block = p == protocol::host && plan.first_grid == 1;
          CHECK((plan.steps.back().out ==
                 (host_one_block ? buffer_slot::partials : buffer_slot::out)));
        }
}

TEST_CASE("a multipass level reads what the level before it wrote", "[space][plan]") {
  const auto plan = plan_reduction_steps(protocol::multipass, per_block(256), 1000000, 4);
  REQUIRE(plan.launches() == 3); // 1000000 -> 3907 -> 16 -> 1
  CHECK(plan.steps[0].in == buffer_slot::input);
  for (std::size_t i = 1; i < plan.steps.size(); ++i) {
    CHECK(plan.steps[i].in == plan.steps[i - 1].out);
    CHECK(plan.steps[i].n == plan.steps[i - 1].grid);
  }
  CHECK(plan.steps[0].out != plan.steps[1].out); // ping, then pong: never read what it writes
}

// One fact in one file: the roles a protocol launches (which the space requires a family to
// declare, and which plan_launch keeps of the family's kernels) are the roles of its steps.
TEST_CASE("a protocol's steps launch exactly the roles the planner says it launches",
          "[space][plan]") {
  for (const protocol p : all_protocols) {
    const auto plan = plan_reduction_steps(p, per_block(256), 1 << 20, 4);
    std::set<std::string> stepped;
    for (const auto &step : plan.steps) stepped.insert(to_string(step.role));
    const auto roles = roles_launched(p);
    INFO(to_string(p));
    CHECK(stepped == std::set<std::string>(roles.begin(), roles.end()));
  }
}

TEST_CASE("the host finish reads the partial a one-block pass writes", "[space][plan]") {
  // A grid of one block writes its result to its out argument (rt_grid.cuh's two-pass
  // finish, the pass the host protocol compiles), and the host combines partials: with one
  // block, out must be the partials slot (an H100 read 0 from an unwritten partial).
  for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{256}, std::uint64_t{257}}) {
    const auto plan = plan_reduction_steps(protocol::host, per_block(256), n, 4);
    REQUIRE(plan.steps.size() == 1);
    const planned_step &pass = plan.steps.front();
    INFO("n = " << n << ", grid " << pass.grid);
    CHECK(pass.partials == buffer_slot::partials);
    CHECK(pass.out == (pass.grid == 1 ? buffer_slot::partials : buffer_slot::out));
  }
}

TEST_CASE("the planner refuses what cannot launch", "[space][plan][errors]") {
  CHECK_THROWS_AS(plan_reduction_steps(protocol::two_pass, per_block(256), 0, 4),
                  invalid_configuration);
  CHECK_THROWS_AS(plan_reduction_steps(protocol::multipass, per_block(1), 100, 4),
                  invalid_configuration); // a grid that does not shrink
  CHECK_THROWS_AS(plan_reduction_steps(protocol::ticket, per_block(1), 1ull << 31, 4),
                  invalid_configuration); // more blocks than a grid holds
  CHECK_THROWS_AS(plan_reduction_steps(protocol::ticket, grid_rule{}, 100, 4),
                  invalid_configuration);
  CHECK(plan_reduction_steps(protocol::ticket, per_block(1), (1ull << 31) - 1, 4).first_grid ==
        (1ull << 31) - 1);
}
