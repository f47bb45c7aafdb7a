// The launch rule of a typed point (what the reducer launches) is the rule of the same point
// read back from its stored row (what the exports print): one computation, no label written
// and parsed again on the way. A stored label that no longer fits its family is refused by the
// store's one reading, saying which part.
#include "catch.hpp"

#include "export_test_support.hpp"
#include "reducetune/db/launch_rule.hpp"
#include "reducetune/db/point_records.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/templates/template_library.hpp"

#include <string>

using namespace reducetune;
using namespace reducetune::db;

namespace {

const template_library &lib() {
  return rt_test::embedded_library();
}

// The space the store's reading builds for device d: the architecture's limits, d's SMs.
search_space space_for(const std::string &fam, const device_record &d) {
  device_limits limits = device_limits::for_arch(std::to_string(d.compute_capability()));
  limits.sm_count = d.sm_count;
  return search_space(family::load(lib(), fam), dtype::float32, reduce_op::sum, limits);
}

// The Catalog entry of p, as the store writes its row.
catalog_entry entry_of(const search_space &s, const point &p) {
  catalog_entry e;
  e.variant = variant_record_of(s, p);
  e.launch_label = launch_label(s.decl(), p);
  return e;
}

launch_rule rule(const std::variant<launch_rule, std::string> &r) {
  if (const auto *why = std::get_if<std::string>(&r))
    FAIL("no launch rule: " << *why);
  return std::get<launch_rule>(r);
}

} // namespace

TEST_CASE("a typed point's launch rule is its stored row's, elements_per_thread included",
          "[db][launch_rule][point]") {
  const device_record d = rt_test::h100();
  const search_space s = space_for("tunable", d);
  for (const int ept : {1, 16, 256})
    for (const int cap : {0, 4})
      for (const char *finish : {"two_pass", "ticket"}) {
        const point p = s.point_of(
            {{"elements_per_thread", ept}, {"grid_cap", cap}, {"finish", std::string(finish)}});
        INFO(variant_label(s.decl(), p) << " " << launch_label(s.decl(), p));
        const launch_rule typed = rule(launch_rule_of(s, p));
        const launch_rule stored = rule(launch_rule_of(lib(), d, entry_of(s, p)));
        CHECK(typed.protocol == stored.protocol);
        CHECK(typed.block_size == stored.block_size);
        CHECK(typed.items_per_block == stored.items_per_block);
        CHECK(typed.max_blocks == stored.max_blocks);
        REQUIRE(typed.kernels.size() == stored.kernels.size());
        for (std::size_t k = 0; k < typed.kernels.size(); ++k)
          CHECK(typed.kernels[k].name_expression == stored.kernels[k].name_expression);
        // The value reaches the grid: one block covers block_size x elements_per_thread.
        CHECK(typed.items_per_block == std::uint64_t{typed.block_size} * ept);
        CHECK(typed.max_blocks == std::uint64_t(cap) * d.sm_count);
      }
}

TEST_CASE("a typed host-finish point has no launch rule, as its stored row has none",
          "[db][launch_rule][host]") {
  const device_record d = rt_test::h100();
  const search_space s = space_for("cascade", d);
  const point p = s.point_of({{"finish", std::string("host")}, {"grid_cap", 4}});
  const auto typed = launch_rule_of(s, p);
  const auto stored = launch_rule_of(lib(), d, entry_of(s, p));
  REQUIRE(std::holds_alternative<std::string>(typed));
  CHECK(std::get<std::string>(typed) == std::get<std::string>(stored));
  CHECK(std::get<std::string>(typed).find("on the CPU") != std::string::npos);
}

TEST_CASE("the store reads a stored point once, and says which part of a label does not fit",
          "[db][point][label]") {
  const search_space s = space_for("tunable", rt_test::h100());
  const point p = s.point_of({{"elements_per_thread", 64}, {"grid_cap", 2}});
  CHECK(stored_point(s, variant_label(s.decl(), p), launch_label(s.decl(), p)) == p);
  const std::string v = variant_label(s.decl(), p);
  CHECK_THROWS_WITH(stored_point(s, v, "ept_3.cap_2"),
                    rt_test::has_text("'3' is not a value of 'elements_per_thread'"));
  CHECK_THROWS_AS(stored_point(s, "tunable.int64.sum" + v.substr(v.find(".bs_")),
                               launch_label(s.decl(), p)),
                  invalid_configuration); // a row of another space
  // A row whose label no longer parses has no rule, and the export says why.
  catalog_entry e = entry_of(s, p);
  e.launch_label = "ept_64";
  const auto r = launch_rule_of(lib(), rt_test::h100(), e);
  REQUIRE(std::holds_alternative<std::string>(r));
  CHECK(std::get<std::string>(r).find("parameter parts") != std::string::npos);
}
