// Real tuning points through the store: the variant keeps the compile-time parameters, the
// measurement the launch parameters, flags and determinism are columns; best, the Catalog and
// both exports leave flagged points out unless asked, and each exported rule carries what a
// runtime needs to launch it (block size, grid rule, protocol, kernels).
#include "catch.hpp"

#include <utility>
#include <vector>

#include "export_test_support.hpp"
#include "reducetune/db/export.hpp"
#include "reducetune/db/point_records.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/templates/template_library.hpp"

#ifndef RT_CXX_COMPILER
#define RT_CXX_COMPILER "c++" // db/CMakeLists.txt passes the configured compiler
#endif

using namespace reducetune;
using namespace reducetune::db;

namespace {

const template_library &lib() {
  return rt_test::embedded_library();
}

search_space tunable_space() {
  return search_space(family::load(lib(), "tunable"), dtype::float32, reduce_op::sum,
                      device_limits::for_arch("90"));
}

using rt_test::run_command;

// Registers the H100 in st and records a measurement of each tunable point (the parameters
// named, the others at their defaults) at size n, in seconds; returns the device's id.
std::int64_t record_points(store &st, std::uint64_t n,
                           const std::vector<std::pair<parameter_map, double>> &points) {
  const auto dev = st.register_device(rt_test::h100());
  const auto s = tunable_space();
  for (const auto &[params, seconds] : points)
    st.record_measurement(rt_test::measured_point(s, params, dev, n, seconds));
  return dev;
}

} // namespace

TEST_CASE("a recorded point keeps compile parameters with the variant and launch parameters "
          "with the measurement",
          "[db][point]") {
  rt_test::temp_dir dir;
  auto st = store::open(dir / "r.sqlite");
  // Two launch configs of one variant: the second must not rewrite the first's parameters.
  const auto dev = record_points(st, 1024,
                                 {{{{"elements_per_thread", 256}, {"grid_cap", 2}}, 2e-6},
                                  {{{"elements_per_thread", 1}, {"grid_cap", 4}}, 1e-6}});
  const auto b = st.best(dev, "float32", "sum", 1024);
  REQUIRE(b);
  CHECK(b->launch_label == "ept_1.cap_4");
  CHECK(b->launch_parameters_json == R"({"elements_per_thread":1,"grid_cap":4})");
  CHECK(b->variant.parameters_json.find("elements_per_thread") == std::string::npos);
  CHECK(b->variant.parameters_json.find(R"("block_size":256)") != std::string::npos);
  CHECK(b->variant.flags_json == "[]");
  CHECK(b->variant.determinism == "run_to_run");
}

TEST_CASE("flagged points are left out of best, the Catalog and the exports unless allowed",
          "[db][point][flags]") {
  rt_test::temp_dir dir;
  const auto path = dir / "r.sqlite";
  auto st = store::open(path);
  const auto dev = record_points(st, 4096,
                                 {{{{"warp", "volatile_unsafe"}}, 1e-6}, // the fastest
                                  {{{"finish", "atomic"}}, 2e-6},
                                  {{}, 3e-6}});

  const auto racy = st.best(dev, "float32", "sum", 4096, {true, false});
  REQUIRE(racy);
  CHECK(racy->variant.flagged());
  CHECK(racy->variant.flags_json.find("volatile_unsafe") != std::string::npos);
  const auto safe = st.best(dev, "float32", "sum", 4096, {false, false});
  REQUIRE(safe);
  CHECK(safe->variant.label.find("fin_atomic") != std::string::npos);
  CHECK(safe->variant.determinism == "none"); // float sum by atomics: order-dependent
  const auto deterministic = st.best(dev, "float32", "sum", 4096, {false, true});
  REQUIRE(deterministic);
  CHECK(deterministic->variant.label.find("fin_two_pass") != std::string::npos);
  // the default selection: neither flagged nor nondeterministic
  const auto by_default = st.best(dev, "float32", "sum", 4096);
  REQUIRE(by_default);
  CHECK(by_default->variant.label == deterministic->variant.label);

  for (const bool allow : {false, true}) {
    const auto c = catalog::open(path, {allow, false});
    CHECK(c.best("GPU-test-0001", "float32", "sum", 4096)->variant.flagged() == allow);
    CHECK((export_header(c, lib()).find("volatile_unsafe") != std::string::npos) == allow);
    CHECK((export_json(c, lib()).dump().find("volatile_unsafe") != std::string::npos) == allow);
  }
}

TEST_CASE("an exported rule carries the launch: block size, grid rule, protocol and kernels",
          "[db][point][export]") {
  rt_test::temp_dir dir;
  const auto path = dir / "r.sqlite";
  {
    auto st = store::open(path);
    record_points(
        st, 1 << 20,
        {{{{"block_size", 512}, {"elements_per_thread", 8}, {"grid_cap", 2}, {"finish", "ticket"}},
          1e-5}});
  }
  const auto c = catalog::open(path);
  const auto j = export_json(c, lib());
  const auto &rule = j["devices"][0]["tables"][0]["rules"][0];
  CHECK(rule["launchable"] == true);
  CHECK(rule["compile_parameters"]["block_size"] == 512);
  CHECK(rule["compile_parameters"]["finish"] == "ticket");
  CHECK(rule["launch_parameters"]["elements_per_thread"] == 8);
  CHECK(rule["launch_parameters"]["grid_cap"] == 2);
  CHECK(rule["block_size"] == 512);
  CHECK(rule["protocol"] == "ticket");
  CHECK(rule["grid"]["items_per_block"] == 512 * 8);
  CHECK(rule["grid"]["max_blocks"] == 2 * 132); // grid_cap x the device's SMs
  REQUIRE(rule["kernels"].size() == 1);
  CHECK(rule["kernels"][0]["role"] == "pass");
  CHECK(rule["kernels"][0]["name_expression"].get<std::string>().find("rt::tunable::pass<float") ==
        0);
  CHECK(rule["determinism"] == "run_to_run");

  // The header: the same rule, and a clear refusal below C++17.
  write_file_atomically(dir / "dispatch.hpp", export_header(c, lib(), "tuned"));
  rt_test::write_bytes(dir / "main.cpp",
                       "#include \"dispatch.hpp\"\n#include <cstdio>\nint main() {\n"
                       "  const auto *c = tuned::select(\"NVIDIA H100 80GB HBM3\", 90, \"float32\","
                       " \"sum\", 1000000);\n"
                       "  std::printf(\"%s %u %llu %llu %s %s\\n\", c->protocol, c->block_size,"
                       " c->items_per_block, c->max_blocks, c->kernels[0].role,"
                       " c->launch_parameters[0].value);\n}\n");
  const auto cxx = [&](const char *std_flag, int &status) {
    return run_command(std::string(RT_CXX_COMPILER) + " " + std_flag + " -o '" +
                           (dir / "m").string() + "' '" + (dir / "main.cpp").string() + "' 2>&1",
                       status);
  };
  int status = 0;
  const auto log = cxx("-std=c++17", status);
  INFO(log);
  REQUIRE(status == 0);
  CHECK(run_command("'" + (dir / "m").string() + "'", status) == "ticket 512 4096 264 pass 8\n");
  CHECK(cxx("-std=c++14", status).find("needs C++17") != std::string::npos);
  CHECK(status != 0);
}
