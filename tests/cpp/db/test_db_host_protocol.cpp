// The host protocol (a research point of `experiment cascading`) leaves its result in host
// memory: a database that holds such a point, even as the fastest, exports it as not
// launchable with the reason, and the launch count of the protocol is its one kernel.
#include "catch.hpp"

#include "export_test_support.hpp"
#include "reducetune/db/export.hpp"
#include "reducetune/db/launch_rule.hpp"
#include "reducetune/db/point_records.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/templates/template_library.hpp"

using namespace reducetune;
using namespace reducetune::db;

namespace {

const template_library &lib() {
  return rt_test::embedded_library();
}

} // namespace

TEST_CASE("a host-finish point has no launch rule: exports say why", "[db][export][host]") {
  rt_test::temp_dir dir;
  const auto path = dir / "r.sqlite";
  {
    auto st = store::open(path);
    const auto dev = st.register_device(rt_test::h100());
    const search_space s(family::load(lib(), "cascade"), dtype::float32, reduce_op::sum,
                         device_limits::for_arch("90"));
    st.record_measurement(
        rt_test::measured_point(s, {{"finish", "host"}, {"grid_cap", 4}}, dev, 1 << 20, 1e-6));
  }
  const auto c = catalog::open(path);
  const auto j = export_json(c, lib());
  const auto &rule = j["devices"][0]["tables"][0]["rules"][0];
  CHECK(rule["compile_parameters"]["finish"] == "host");
  CHECK(rule["launchable"] == false);
  CHECK(rule["why"].get<std::string>().find("combines the partials on the CPU") !=
        std::string::npos);
  CHECK(export_header(c, lib(), "tuned").find("combines the partials on the CPU") !=
        std::string::npos);
}

TEST_CASE("the host protocol launches one kernel at every n", "[db][host]") {
  launch_rule r;
  r.protocol = "host";
  r.items_per_block = 256 * 16;
  r.max_blocks = 4 * 132;
  for (const std::uint64_t n : {1ull, 5000ull, 1ull << 30}) CHECK(launches_at(r, n) == 1);
}
