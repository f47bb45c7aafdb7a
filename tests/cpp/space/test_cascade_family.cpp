// The cascade family (kernel_templates/cascade, for `experiment cascading`): its grid reaches
// thousands of elements per thread at every size of the experiment, and its host finish plans
// the host protocol: the pass kernel alone, the point's operator for the CPU's combine, the
// same determinism as two passes.
#include "catch.hpp"

#include "reducetune/space/space.hpp"
#include "reducetune/templates/template_library.hpp"

using namespace reducetune;

namespace {

const family &cascade() {
  static const family f = family::load(template_library::embedded(), "cascade");
  return f;
}

device_limits h100() {
  auto l = device_limits::for_arch("90");
  l.sm_count = 132;
  return l;
}

} // namespace

TEST_CASE("the cascade family's host finish plans the host protocol with the pass kernel only",
          "[space][cascade]") {
  for (const dtype t : all_dtypes)
    for (const reduce_op o : all_ops) {
      if (is_half(t)) continue; // refused by a constraint (test_embedded_families)
      INFO(to_string(t) << " " << to_string(o));
      const search_space s(cascade(), t, o, h100());
      const point host = s.point_of({{"finish", std::string("host")}, {"vec", 2}});
      const launch_plan plan = s.plan_launch(host.compile, host.launch);
      CHECK(plan.proto == protocol::host);
      CHECK(plan.op == o);
      REQUIRE(plan.kernels.size() == 1);
      CHECK(plan.kernels.count("pass") == 1);
      CHECK(s.determinism_of(host) == determinism::run_to_run);
      CHECK(s.flags(host).empty());
      const point two = s.point_of({{"finish", std::string("two_pass")}, {"vec", 2}});
      CHECK(s.plan_launch(two.compile, two.launch).proto == protocol::two_pass);
    }
}

TEST_CASE("uncapped, the cascade family's grid shrinks to one block as elements per thread grow",
          "[space][cascade]") {
  const search_space s(cascade(), dtype::float32, reduce_op::sum, h100());
  for (const std::uint64_t n : {1ull << 20, 1ull << 24, 1ull << 28, 1ull << 30})
    for (const std::int64_t bs : {128, 256, 1024}) {
      std::uint64_t best = 0;
      for (const std::int64_t ept : {1, 256, 4096, 16384}) {
        const point p = s.point_of({{"block_size", bs}, {"elements_per_thread", ept}});
        const std::uint64_t grid = s.plan_launch(p.compile, p.launch).grid_for(n);
        CHECK(grid == (n + bs * ept - 1) / (bs * ept));
        best = std::max(best, n / (grid * static_cast<std::uint64_t>(bs)));
      }
      INFO("n " << n << " block " << bs);
      // n / block elements per thread at most (one block); 4096 wherever n allows it
      CHECK(best >= std::min<std::uint64_t>(4096, n / static_cast<std::uint64_t>(bs)));
    }
}
