// The axis family in the Catalog and both exports (issue 26, item 4): a results file with axis
// rows keeps them apart from the whole array's, ranked per shape; the JSON export carries each
// tuned shape's fastest point and its fastest batch_invariant one; the generated header
// compiles and its select_axis() answers every probed shape as db/shape_rule.hpp does; a file
// without axis rows exports no axis part at all.
#include "catch.hpp"

#include "axis_results_support.hpp"
#include "reducetune/db/axis_picks.hpp"
#include "reducetune/db/export.hpp"
#include "reducetune/db/shape_rule.hpp"

#include <sstream>

#ifndef RT_CXX_COMPILER
#define RT_CXX_COMPILER "c++" // db/CMakeLists.txt passes the configured compiler
#endif

using namespace reducetune::db;
using reducetune::reduction_shape;

namespace {

const std::string h100_name = "NVIDIA H100 80GB HBM3";

catalog axis_catalog(const std::filesystem::path &path) {
  auto s = store::open(path);
  rt_test::record_axis_results(s, s.register_device(rt_test::h100()));
  return catalog::load(s.connection());
}

std::string label_of(const std::string &preset) {
  const auto &s = rt_test::axis_space();
  return reducetune::variant_label(s.decl(), *s.base(preset, {false, true}));
}

// Shapes on the grid, between its points, beyond it, rows, columns and middle axes.
const std::vector<reduction_shape> probes = {
    {1 << 20, 8, 1},     {1 << 16, 1024, 1}, {1024, 1 << 16, 1}, {16, 1 << 22, 1},
    {1, 1024, 1 << 16},  {1, 1 << 16, 16},   {1 << 18, 64, 1},   {1 << 15, 3000, 1},
    {100, 1 << 20, 1},   {1, 1 << 24, 1},    {7, 5, 1},          {1 << 22, 2, 1},
    {1, 4096, 4096},     {64, 1024, 64},     {1, 1 << 20, 2},    {3, 1 << 14, 300},
    {1, 2, 1 << 22},     {1 << 10, 1 << 10, 1 << 4}};

} // namespace

TEST_CASE("the Catalog keeps axis rows apart from the whole array's, ranked per shape",
          "[db][axis_export]") {
  rt_test::temp_dir dir;
  const auto c = axis_catalog(dir / "results.sqlite");
  REQUIRE(c.devices().size() == 1);
  const auto &d = c.devices()[0];
  REQUIRE(d.tables.size() == 1); // the whole array: its one size, no axis row mixed in
  CHECK(d.tables[0].sizes == std::vector<std::uint64_t>{1 << 20});
  CHECK(c.find(h100_name, "float32", "sum", 1024)->bucket_n == (1u << 20));
  REQUIRE(d.axis_tables.size() == 1);
  const auto &t = d.axis_tables[0];
  const std::vector<reduction_shape> by_shape = {{1, 1024, 1 << 16}, {1, 1 << 16, 16},
                                                 {16, 1 << 22, 1},   {1024, 1 << 16, 1},
                                                 {1 << 16, 1024, 1}, {1 << 20, 8, 1}};
  CHECK(t.shapes == by_shape);
  REQUIRE(t.ranked[4].size() == 2);
  CHECK(t.ranked[4][0].variant.label == label_of("warp_rows_vec2")); // fastest first
  CHECK(t.ranked[4][1].variant.label == label_of("warp_rows"));
  CHECK(c.axis_table_for({"", h100_name, 0}, "float32", "sum").second == &t);
  CHECK(c.axis_table_for({"", "", 80}, "float32", "sum").second == nullptr);
}

TEST_CASE("each shape's picks: the fastest point and the fastest batch_invariant one",
          "[db][axis_export]") {
  rt_test::temp_dir dir;
  const auto c = axis_catalog(dir / "results.sqlite");
  const auto &d = c.devices()[0];
  const auto picks = axis_picks(d.axis_tables[0], d.device, rt_test::embedded_library());
  REQUIRE(picks.size() == 6);
  CHECK(picks[4].fastest->variant.label == label_of("warp_rows_vec2"));
  REQUIRE(picks[4].invariant != nullptr);
  CHECK(picks[4].invariant->variant.label == label_of("warp_rows"));
  CHECK(picks[2].invariant == nullptr); // (16, 2^22, 1) holds only warp_rows_vec2
  for (const std::size_t i : {0, 1, 3, 5})
    CHECK(picks[i].invariant == picks[i].fastest);
}

TEST_CASE("the JSON export carries the axis rules and the shape rule, only when there are any",
          "[db][axis_export]") {
  rt_test::temp_dir dir;
  const auto c = axis_catalog(dir / "results.sqlite");
  const auto j = export_json(c, rt_test::embedded_library());
  REQUIRE(j.contains("shape_rule"));
  const auto &dev = j["devices"][0];
  CHECK(dev["tables"].size() == 1);
  REQUIRE(dev["axis_tables"].size() == 1);
  const auto &rules = dev["axis_tables"][0]["rules"];
  REQUIRE(rules.size() == 6);
  const auto &vec2 = rules[4];
  CHECK(vec2["outer"] == 1 << 16);
  CHECK(vec2["r"] == 1024);
  CHECK(vec2["inner"] == 1);
  CHECK(vec2["variant"] == label_of("warp_rows_vec2"));
  CHECK(vec2["batch_invariant"] == false);
  CHECK(vec2["launchable"] == true);
  CHECK(vec2["block_size"] == 256);
  CHECK(vec2["kernels"][0]["role"] == "pass");
  CHECK(vec2["batch_invariant_pick"]["variant"] == label_of("warp_rows"));
  CHECK(rules[2]["batch_invariant_pick"].is_null());
  CHECK(rules[3]["batch_invariant"] == true); // block_rows
  CHECK(rules[3]["batch_invariant_pick"]["variant"] == label_of("block_rows"));
  CHECK(rules[1]["split"] == 8); // tile_columns_split: a finish kernel
  CHECK(rules[1]["kernels"].size() == 2);

  auto s = store::open(dir / "whole.sqlite");
  s.record_measurement(rt_test::measurement(s.register_device(rt_test::h100()), 1024, 128, 1e-6));
  const auto whole = export_json(catalog::load(s.connection()), rt_test::embedded_library());
  CHECK_FALSE(whole.contains("shape_rule"));
  CHECK_FALSE(whole["devices"][0].contains("axis_tables"));
  CHECK(export_header(catalog::load(s.connection()), rt_test::embedded_library())
            .find("axis") == std::string::npos);
}

TEST_CASE("the exported header's select_axis answers every shape as the shape rule does",
          "[db][axis_export]") {
  rt_test::temp_dir dir;
  const auto c = axis_catalog(dir / "results.sqlite");
  write_file_atomically(dir / "dispatch.hpp", export_header(c, rt_test::embedded_library(), "tuned"));
  std::ostringstream main_cpp;
  main_cpp << "#include \"dispatch.hpp\"\n#include <cstdio>\n"
           << "static_assert(tuned::select_axis(nullptr, \"" << h100_name
           << "\", 90, \"float32\", \"sum\", \"run_to_run\", 1ull << 16, 1024, 1)->r == 1024,"
              " \"constexpr\");\n"
           << "static void show(const char *level, unsigned long long o, unsigned long long r,"
              " unsigned long long i) {\n"
           << "  const tuned::axis_rule *a = tuned::select_axis(nullptr, \"another board\", 90,"
              " \"float32\", \"sum\", level, o, r, i);\n"
           << "  std::printf(\"%s %llu %llu %llu %s\\n\", level, o, r, i, a ? a->pick.variant :"
              " \"rule\");\n}\nint main() {\n";
  for (const char *level : {"run_to_run", "batch_invariant"})
    for (const auto &p : probes)
      main_cpp << "  show(\"" << level << "\", " << p.outer << "ull, " << p.r << "ull, "
               << p.inner << "ull);\n";
  main_cpp << "}\n";
  rt_test::write_bytes(dir / "main.cpp", main_cpp.str());
  const auto exe = (dir / "axis_check").string();
  rt_test::run_ok(std::string(RT_CXX_COMPILER) + " -std=c++17 -Wall -Wextra -Werror -o '" + exe +
                  "' '" + (dir / "main.cpp").string() + "' 2>&1");
  const auto output = rt_test::run_ok("'" + exe + "'");

  // The expected answers from the library's rule over the same picks.
  const auto &d = c.devices()[0];
  const auto picks = axis_picks(d.axis_tables[0], d.device, rt_test::embedded_library());
  std::ostringstream expected;
  for (const bool invariant : {false, true}) {
    std::vector<reduction_shape> shapes;
    std::vector<std::string> labels;
    for (const auto &p : picks)
      if (const auto *e = invariant ? p.invariant : p.fastest) {
        shapes.push_back(p.shape);
        labels.push_back(e->variant.label);
      }
    for (const auto &p : probes) {
      const auto i = nearest_shape_index(shapes, p);
      expected << (invariant ? "batch_invariant" : "run_to_run") << " " << p.outer << " " << p.r
               << " " << p.inner << " " << (i ? labels[*i] : "rule") << "\n";
    }
  }
  CHECK(output == expected.str());
  // and some answers by hand: between grid points, and the level's own picks
  CHECK(output.find("run_to_run 32768 3000 1 " + label_of("warp_rows_vec2")) != std::string::npos);
  CHECK(output.find("batch_invariant 32768 3000 1 " + label_of("warp_rows")) != std::string::npos);
  CHECK(output.find("run_to_run 1 4096 4096 " + label_of("thread_columns")) != std::string::npos);
}

TEST_CASE("a device without a batch_invariant point leaves batch_invariant calls to the next "
          "matching device, in the header as in the runtime",
          "[db][axis_export]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "results.sqlite");
  rt_test::record_axis_results(s, s.register_device(rt_test::h100()));
  const auto other = s.register_device(rt_test::gpu("GPU-vec2-only", "Other board"));
  s.record_measurement(rt_test::axis_measurement(other, "warp_rows_vec2", {4096, 1024, 1}, 1e-5));
  const auto c = catalog::load(s.connection());
  write_file_atomically(dir / "dispatch.hpp", export_header(c, rt_test::embedded_library(), "tuned"));
  std::ostringstream main_cpp;
  main_cpp << "#include \"dispatch.hpp\"\n"
           << "constexpr const tuned::axis_rule *pick(const char *level) {\n"
           << "  return tuned::select_axis(\"GPU-vec2-only\", \"Other board\", 90, \"float32\","
              " \"sum\", level, 4096, 1024, 1);\n}\n"
           << "static_assert(pick(\"run_to_run\")->outer == 4096, \"its own table\");\n"
           << "static_assert(pick(\"batch_invariant\")->outer == 1ull << 16, \"the H100's\");\n"
           << "int main() {}\n";
  rt_test::write_bytes(dir / "main.cpp", main_cpp.str());
  rt_test::run_ok(std::string(RT_CXX_COMPILER) + " -std=c++17 -fsyntax-only -Wall -Wextra -Werror '" +
                  (dir / "main.cpp").string() + "' 2>&1");
}

TEST_CASE("a tile_ticket point's rule lists its pass alone, and the exports call it not "
          "launchable from their fields (its counters), still batch_invariant",
          "[db][axis_export]") {
  rt_test::temp_dir dir;
  {
    auto s = store::open(dir / "results.sqlite");
    const auto dev = s.register_device(rt_test::h100());
    s.record_measurement(
        rt_test::axis_measurement(dev, "tile_tall_columns_ticket", {1, 1 << 20, 64}, 1e-4));
    s.record_measurement(
        rt_test::axis_measurement(dev, "tile_tall_columns", {1, 1 << 19, 64}, 1e-4));
  }
  auto s = store::open(dir / "results.sqlite");
  const auto c = catalog::load(s.connection());
  const auto j = export_json(c, rt_test::embedded_library());
  const auto &rules = j["devices"][0]["axis_tables"][0]["rules"];
  REQUIRE(rules.size() == 2);
  for (const auto &rule : rules) {
    INFO(rule.dump());
    const bool ticket = rule["variant"] == label_of("tile_tall_columns_ticket");
    CHECK(rule["batch_invariant"] == true);
    CHECK(rule["launchable"] == !ticket);
    if (ticket)
      CHECK(rule["why"].get<std::string>().find("tile_ticket") != std::string::npos);
    else
      CHECK(rule["kernels"].size() == 2); // the pass, then the finish kernel
  }
  // The rule itself (what calibrate counts launches by): the pass alone, a counter per 64
  // columns (32 lanes x 2), where the tile twin lists its finish kernel too
  const catalog_device &d = c.devices().front();
  const catalog_axis_table &t = d.axis_tables.front();
  for (std::size_t i = 0; i < t.shapes.size(); ++i) {
    const catalog_entry &e = t.ranked[i].front();
    const auto rule = axis_launch_rule_of(rt_test::embedded_library(), d.device, e, t.shapes[i]);
    const auto *r = std::get_if<axis_launch_rule>(&rule);
    REQUIRE(r != nullptr);
    const bool ticket = e.variant.label == label_of("tile_tall_columns_ticket");
    CHECK(r->split == 512);
    CHECK(r->ticket_columns == (ticket ? 64u : 0u));
    CHECK(r->kernels.size() == (ticket ? 1u : 2u));
    CHECK(r->kernels.front().role == "pass");
  }
  const std::string header = export_header(c, rt_test::embedded_library());
  CHECK(header.find("its split finishes in the pass (tile_ticket)") != std::string::npos);
}
