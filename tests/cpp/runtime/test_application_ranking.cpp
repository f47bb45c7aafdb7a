// The runtime's ranking for applications (no GPU): at one size a two-launch point with the
// fastest replayed median loses to a one-launch point within the extra launch's cost, and
// wins when it is faster by more; extra_launch_s = 0 ranks by the median, as `best` does.
// launches_at is the launch rule's count for every protocol.
#include "catch.hpp"

#include "../db/axis_results_support.hpp"
#include "../db/db_test_support.hpp"
#include "reducetune/db/catalog.hpp"
#include "reducetune/db/export.hpp"
#include "reducetune/db/launch_rule.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/runtime/application_ranking.hpp"
#include "reducetune/runtime/dispatch_table.hpp"
#include "reducetune/space/space.hpp"
#include "reducetune/templates/template_library.hpp"

#include <string>
#include <utility>

using namespace reducetune;

namespace {

const template_library &lib() {
  static const template_library l = template_library::embedded();
  return l;
}

search_space space() {
  return {family::load(lib(), "tunable"), dtype::float32, reduce_op::sum,
          device_limits::for_arch("90")};
}

// A measurement of preset `name` of the tunable family at n, with the given median.
db::measurement_record of_preset(std::int64_t device, const std::string &name, std::uint64_t n,
                                 double seconds) {
  const auto s = space();
  const auto p = s.base(name, {});
  REQUIRE(p.has_value());
  auto m = rt_test::measurement(device, n, 256, seconds);
  m.variant.label = variant_label(s.decl(), *p);
  m.launch_label = launch_label(s.decl(), *p);
  return m;
}

// A results file with the H100's "good" (two_pass: 2 launches) at 5 us and "one_pass" (ticket:
// 1 launch) at 6 us at n = 2^16, and "good" alone at 2^24 when `with_2_24`.
void record_two_protocols(const std::filesystem::path &path, bool with_2_24) {
  auto s = db::store::open(path);
  const auto d = s.register_device(rt_test::h100());
  s.record_measurement(of_preset(d, "good", 1 << 16, 5.0e-6));
  s.record_measurement(of_preset(d, "one_pass", 1 << 16, 6.0e-6));
  if (with_2_24)
    s.record_measurement(of_preset(d, "good", 1 << 24, 30.0e-6));
}

// The labels of the presets "good" (two_pass) and "one_pass" (ticket).
std::pair<std::string, std::string> two_pass_and_ticket() {
  const auto s = space();
  return {variant_label(s.decl(), *s.base("good", {})),
          variant_label(s.decl(), *s.base("one_pass", {}))};
}

// The rule chosen at n = 2^16 with this extra launch cost.
std::string chosen(const std::filesystem::path &path, double extra_launch_s) {
  const auto file = db::open_for_reading(path);
  const auto c = db::catalog::load(file, {});
  auto devices = dispatch_table::from_catalog(c, dtype::float32, reduce_op::sum).devices();
  if (extra_launch_s > 0)
    rank_for_applications(devices, c, file, dtype::float32, reduce_op::sum, {}, lib(),
                          extra_launch_s);
  REQUIRE(devices.size() == 1);
  return dispatch_table::rule_for(devices[0], 1 << 16)->variant;
}

} // namespace

TEST_CASE("a one-launch point within the extra launch's cost is preferred for applications",
          "[runtime][ranking]") {
  rt_test::temp_dir dir;
  record_two_protocols(dir / "r.db", false);
  const auto [two_pass, ticket] = two_pass_and_ticket();
  CHECK(chosen(dir / "r.db", 0.0) == two_pass);    // the median alone
  CHECK(chosen(dir / "r.db", 2.5e-6) == ticket);   // 6.0 < 5.0 + 2.5
  CHECK(chosen(dir / "r.db", 0.5e-6) == two_pass); // 5.0 + 0.5 < 6.0
}

TEST_CASE("axis measurements with r = n are no whole-array candidates", "[runtime][ranking]") {
  rt_test::temp_dir dir;
  record_two_protocols(dir / "r.db", false);
  {
    // faster rows of 2^16 elements at application_scan shapes: without the shape filter they
    // filled n = 2^16's candidate list and the ticket point was never considered
    auto s = db::store::open(dir / "r.db");
    const auto d = s.devices().at(0).id;
    for (std::uint64_t rows = 2; rows < 2 + db::application_scan; ++rows)
      s.record_measurement(rt_test::axis_measurement(d, "block_rows", {rows, 1 << 16, 1}, 1e-6));
  }
  const auto [two_pass, ticket] = two_pass_and_ticket();
  CHECK(chosen(dir / "r.db", 0.0) == two_pass);
  CHECK(chosen(dir / "r.db", 2.5e-6) == ticket);
}

TEST_CASE("launches_at counts what the host enqueues for each protocol", "[runtime][ranking]") {
  db::launch_rule r;
  r.items_per_block = 1024;
  r.protocol = "two_pass";
  CHECK(db::launches_at(r, 1000) == 1); // one block: the partial is the result
  CHECK(db::launches_at(r, 5000) == 2);
  r.protocol = "ticket";
  CHECK(db::launches_at(r, 1 << 30) == 1);
  r.protocol = "atomic";
  CHECK(db::launches_at(r, 10) == 2);
  r.protocol = "multipass";
  CHECK(db::launches_at(r, 1024) == 1);
  CHECK(db::launches_at(r, 1024 * 1024) == 2);
  CHECK(db::launches_at(r, 1024ull * 1024 * 1024 + 1) == 4);
  r.max_blocks = 64; // a capped grid: 64 partials, then one block
  CHECK(db::launches_at(r, 1ull << 30) == 2);
  r.protocol = "nonsense";
  CHECK_THROWS_AS(db::launches_at(r, 10), invalid_configuration);
}

TEST_CASE("the JSON export carries each size's application pick, and a table built from it "
          "launches the pick unless told to rank by the median",
          "[runtime][ranking][export]") {
  rt_test::temp_dir dir;
  record_two_protocols(dir / "r.db", true);
  const auto [two_pass, ticket] = two_pass_and_ticket();
  const auto file = db::open_for_reading(dir / "r.db");
  const auto c = db::catalog::load(file, {});
  const db::application_source apps{&file, {}};
  const auto doc = db::export_json(c, lib(), {}, &apps);
  const auto &rules = doc["devices"][0]["tables"][0]["rules"];
  REQUIRE(rules.size() == 2);
  CHECK(rules[0]["variant"] == two_pass); // the median's winner, as `best` answers
  CHECK(rules[0]["application"]["variant"] == ticket);
  CHECK(rules[0]["application"]["launches"] == 1);
  CHECK(rules[1]["application"]["variant"] == two_pass); // the only point there
  CHECK(rules[1]["application"]["launches"] == 2);
  CHECK_FALSE(db::export_json(c, lib()).dump().find("application") != std::string::npos);

  const nlohmann::json plain = nlohmann::json::parse(doc.dump());
  const auto ranked = dispatch_table::from_json(plain, dtype::float32, reduce_op::sum, {}, true);
  const auto median = dispatch_table::from_json(plain, dtype::float32, reduce_op::sum, {}, false);
  CHECK(dispatch_table::rule_for(ranked.devices()[0], 1 << 16)->variant == ticket);
  CHECK(dispatch_table::rule_for(median.devices()[0], 1 << 16)->variant == two_pass);
  // the same pick as the Reducer ranks a database with (one decision, two ways to read it)
  CHECK(chosen(dir / "r.db", db::default_extra_launch_s) == ticket);

  // a pick the selection refuses gives way to the median's winner
  nlohmann::json refused = plain;
  refused["devices"][0]["tables"][0]["rules"][0]["application"]["determinism"] = "none";
  const auto fallback = dispatch_table::from_json(refused, dtype::float32, reduce_op::sum, {}, true);
  CHECK(dispatch_table::rule_for(fallback.devices()[0], 1 << 16)->variant == two_pass);
}

TEST_CASE("measured application times decide a calibrated size; the estimate decides the rest",
          "[runtime][ranking][calibrate]") {
  rt_test::temp_dir dir;
  const auto [two_pass, ticket] = two_pass_and_ticket();
  record_two_protocols(dir / "r.db", false);
  REQUIRE(chosen(dir / "r.db", db::default_extra_launch_s) == ticket); // the estimate

  const auto file = db::open_for_reading(dir / "r.db");
  const auto key = db::model_key_of(file, rt_test::h100().uuid);
  REQUIRE(key.has_value());
  CHECK_FALSE(db::model_key_of(file, "GPU-not-here").has_value());
  auto lists = db::application_candidates_of(db::catalog::load(file, {}), file, dtype::float32,
                                             reduce_op::sum, {}, lib());
  const auto &list = lists.at({*key, 1 << 16});
  REQUIRE(list.size() == 2);
  CHECK(list[0].pick.variant == two_pass); // fastest median first
  CHECK(list[0].pick.application_s == 0.0);
  CHECK(list[0].measurement_id != list[1].measurement_id);
  CHECK(list[0].pick.launches == 2); // computed from the launch rule
  CHECK(list[1].pick.launches == 1);

  {
    auto st = db::store::open(dir / "r.db");
    // an unknown measurement refuses the whole batch: nothing is written
    const db::store::application_time bad[] = {{list[1].measurement_id, 7.0e-6, 50},
                                               {999999, 1.0e-6, 50}};
    CHECK_THROWS_AS(st.record_application_times(bad), store_error);
    const db::store::application_time nonsense[] = {{list[1].measurement_id, 0.0, 50}};
    CHECK_THROWS_AS(st.record_application_times(nonsense), store_error);
    const auto untouched = db::application_candidates_of(
        db::catalog::load(st.connection(), {}), st.connection(), dtype::float32,
        reduce_op::sum, {}, lib());
    CHECK(untouched.at({*key, 1 << 16})[1].pick.application_s == 0.0);
    // a lone call measured the two-launch point faster: it is the pick now
    const db::store::application_time measured[] = {{list[0].measurement_id, 8.0e-6, 50},
                                                    {list[1].measurement_id, 9.0e-6, 50}};
    st.record_application_times(measured);
  }
  CHECK(chosen(dir / "r.db", db::default_extra_launch_s) == two_pass);
  {
    auto st = db::store::open(dir / "r.db");
    const db::store::application_time again[] = {{list[1].measurement_id, 7.5e-6, 60}};
    st.record_application_times(again); // a new calibration replaces the size's earlier times
  }
  CHECK(chosen(dir / "r.db", db::default_extra_launch_s) == ticket);
  const auto reread = db::open_for_reading(dir / "r.db");
  const auto after = db::application_candidates_of(db::catalog::load(reread, {}), reread,
                                                   dtype::float32, reduce_op::sum, {}, lib());
  CHECK(after.at({*key, 1 << 16})[0].pick.application_s == 0.0); // dropped, not compared
  CHECK(after.at({*key, 1 << 16})[1].pick.application_s == 7.5e-6);
  // the export says which picks were measured
  const auto c = db::catalog::load(reread, {});
  const db::application_source apps{&reread, {}};
  const auto doc = db::export_json(c, lib(), {}, &apps);
  CHECK(doc["devices"][0]["tables"][0]["rules"][0]["application"]["application_s"] == 7.5e-6);
  {
    // lone calls 1.3 % apart are a tie (application_tie): the replayed median breaks it
    auto st = db::store::open(dir / "r.db");
    const db::store::application_time tie[] = {{list[0].measurement_id, 8.0e-6, 50},
                                               {list[1].measurement_id, 7.9e-6, 50}};
    st.record_application_times(tie);
  }
  CHECK(chosen(dir / "r.db", db::default_extra_launch_s) == two_pass);
}

TEST_CASE("the fastest point of each launch count is weighed, even below sixteen faster ones",
          "[runtime][ranking][calibrate]") {
  rt_test::temp_dir dir;
  const auto s = space();
  const auto ticket = variant_label(s.decl(), *s.base("one_pass", {}));
  {
    auto st = db::store::open(dir / "r.db");
    const auto d = st.register_device(rt_test::h100());
    int i = 0;
    for (int bs : {128, 256, 512, 1024})
      for (int u : {1, 2, 4, 8}) { // sixteen two-launch points, all faster than the ticket one
        auto m = rt_test::measurement(d, 1 << 16, bs, 5.0e-6 + 1e-9 * i++);
        m.variant.label = "tunable.float32.sum.bs_" + std::to_string(bs) + ".u_" +
                          std::to_string(u) + ".v_4.warp_shuffle.blk_warp_partials.fin_two_pass";
        st.record_measurement(m);
      }
    st.record_measurement(of_preset(d, "one_pass", 1 << 16, 9.0e-6));
  }
  const auto file = db::open_for_reading(dir / "r.db");
  const auto c = db::catalog::load(file, {});
  const auto lists =
      db::application_candidates_of(c, file, dtype::float32, reduce_op::sum, {}, lib());
  const auto &list = lists.begin()->second;
  REQUIRE(list.size() == db::application_candidates + 1);
  CHECK(list.back().pick.variant == ticket);
  CHECK(list.back().pick.launches == 1);
  CHECK(list.front().pick.launches == 2);
  CHECK(chosen(dir / "r.db", db::default_extra_launch_s) != ticket); // 5.0 + 2.5 < 9.0
}
