// What the search space decides about a point, over the embedded tunable family: determinism
// for every finish x dtype x op, flags, the restriction, and labels that parse back.
#include "catch.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/templates/template_library.hpp"

using namespace reducetune;

namespace {

const family &tunable() {
  static const family f = family::load(template_library::embedded(), "tunable");
  return f;
}

} // namespace

TEST_CASE("determinism: only a float sum or product finished by atomics changes run to run",
          "[space][point][determinism]") {
  for (const dtype t : all_dtypes)
    for (const reduce_op o : all_ops)
      for (const char *finish : {"two_pass", "atomic", "ticket"}) {
        const search_space s(tunable(), t, o, device_limits::for_arch("90"));
        const point p = s.point_of({{"finish", std::string(finish)}, {"vec", 1}});
        const bool order_dependent =
            std::string(finish) == "atomic" && !is_integer(t) &&
            (o == reduce_op::sum || o == reduce_op::prod);
        INFO(to_string(t) << " " << to_string(o) << " " << finish);
        CHECK(s.determinism_of(p) ==
              (order_dependent ? determinism::none : determinism::run_to_run));
      }
}

TEST_CASE("flags come from the declaration, a restriction is a reason, labels parse back",
          "[space][point]") {
  const search_space s(tunable(), dtype::float32, reduce_op::sum, device_limits::for_arch("90"),
                       {{"block_size", {std::string("256"), 512}}});
  const point racy = s.point_of({{"warp", std::string("volatile_unsafe")}});
  REQUIRE(s.flags(racy).size() == 1);
  CHECK(s.flags(racy)[0].parameter == "warp");
  CHECK(s.flags(s.point_of({})).empty());
  CHECK(s.restricted_to().at("block_size") == std::vector<value>{256, 512});
  const point small = s.point_of({{"block_size", 128}});
  const auto r = s.check(small);
  REQUIRE_FALSE(r.ok());
  CHECK(r.reasons().find("outside the restriction") != std::string::npos);
  for (const point &p : s.points()) {
    CHECK(s.check(p).ok());
    CHECK(s.parse(variant_label(s.decl(), p), launch_label(s.decl(), p)) == p);
  }
  CHECK(s.points().size() > 0);
  CHECK_THROWS_AS(s.point_of({{"no_such", 1}}), invalid_configuration);
  CHECK_THROWS_AS(s.point_of({{"block_size", 48}}), invalid_configuration);
}
