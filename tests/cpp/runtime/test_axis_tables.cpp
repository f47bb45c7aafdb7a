// The axis call's tuned tables without a GPU (runtime/axis_tables.hpp): a results file's and
// its JSON export's give the same entries; the default level takes each shape's fastest point,
// batch_invariant only batch_invariant points (a shape without one left out); the device at
// hand finds its table by the Catalog's device rule; and the entry of an untuned shape is the
// shape rule's (db/shape_rule.hpp). What reducer_axis launches is this choice (the GPU test
// tests/python/test_axis_tuned.py runs it).
#include "catch.hpp"

#include "../db/axis_results_support.hpp"
#include "reducetune/db/export.hpp"
#include "reducetune/errors.hpp"
#include "reducetune/runtime/axis_tables.hpp"

#include <nlohmann/json.hpp>

using namespace reducetune;

namespace {

const std::string h100_name = "NVIDIA H100 80GB HBM3";

db::catalog axis_catalog(const std::filesystem::path &path) {
  auto s = db::store::open(path);
  rt_test::record_axis_results(s, s.register_device(rt_test::h100()));
  return db::catalog::load(s.connection());
}

std::string label_of(const std::string &preset) {
  const auto &s = rt_test::axis_space();
  return variant_label(s.decl(), *s.base(preset, {false, true}));
}

std::vector<std::string> labels(const axis_device_table &t) {
  std::vector<std::string> out;
  for (const auto &e : t.entries)
    out.push_back(e.variant);
  return out;
}

// The JSON export of the catalog, re-read as the runtime reads a file.
nlohmann::json exported(const db::catalog &c) {
  return nlohmann::json::parse(db::export_json(c, rt_test::embedded_library()).dump());
}

} // namespace

TEST_CASE("a results file's axis table holds each shape's fastest point, or its fastest "
          "batch_invariant one",
          "[runtime][axis_tables]") {
  rt_test::temp_dir dir;
  const auto c = axis_catalog(dir / "results.sqlite");
  const auto &lib = rt_test::embedded_library();
  const auto fastest = axis_tables_from_catalog(c, lib, dtype::float32, reduce_op::sum,
                                                axis_determinism::run_to_run);
  REQUIRE(fastest.size() == 1);
  CHECK(fastest[0].name == h100_name);
  CHECK(fastest[0].uuids == std::vector<std::string>{"GPU-test-0001"});
  CHECK(labels(fastest[0]) ==
        std::vector<std::string>{label_of("thread_columns"), label_of("tile_columns_split"),
                                 label_of("warp_rows_vec2"), label_of("block_rows"),
                                 label_of("warp_rows_vec2"), label_of("thread_columns")});
  const auto invariant = axis_tables_from_catalog(c, lib, dtype::float32, reduce_op::sum,
                                                  axis_determinism::batch_invariant);
  REQUIRE(invariant.size() == 1);
  // (16, 2^22, 1) has no batch_invariant point: left out; (2^16, 1024, 1) takes warp_rows
  CHECK(labels(invariant[0]) ==
        std::vector<std::string>{label_of("thread_columns"), label_of("tile_columns_split"),
                                 label_of("block_rows"), label_of("warp_rows"),
                                 label_of("thread_columns")});
  CHECK(axis_tables_from_catalog(c, lib, dtype::float64, reduce_op::sum,
                                 axis_determinism::run_to_run)
            .empty());
}

TEST_CASE("an exported JSON table gives the runtime the results file's entries",
          "[runtime][axis_tables]") {
  rt_test::temp_dir dir;
  const auto c = axis_catalog(dir / "results.sqlite");
  const auto doc = exported(c);
  for (const auto level : {axis_determinism::run_to_run, axis_determinism::batch_invariant}) {
    INFO(to_string(level));
    const auto from_db = axis_tables_from_catalog(c, rt_test::embedded_library(),
                                                  dtype::float32, reduce_op::sum, level);
    const auto from_json = axis_tables_from_json(doc, dtype::float32, reduce_op::sum, {}, level);
    REQUIRE(from_json.size() == 1);
    CHECK(labels(from_json[0]) == labels(from_db[0]));
    for (std::size_t i = 0; i < from_db[0].entries.size(); ++i) {
      CHECK(from_json[0].entries[i].shape == from_db[0].entries[i].shape);
      CHECK(from_json[0].entries[i].launch == from_db[0].entries[i].launch);
    }
  }
  CHECK(axis_tables_from_json(doc, dtype::int32, reduce_op::sum, {}, axis_determinism::run_to_run)
            .empty());
  // a whole-array export has no axis tables: the rule answers every shape
  auto whole = doc;
  whole["devices"][0].erase("axis_tables");
  CHECK(axis_tables_from_json(whole, dtype::float32, reduce_op::sum, {},
                              axis_determinism::run_to_run)
            .empty());
  auto broken = doc;
  broken["devices"][0]["axis_tables"][0]["rules"][0].erase("r");
  CHECK_THROWS_AS(axis_tables_from_json(broken, dtype::float32, reduce_op::sum, {},
                                        axis_determinism::run_to_run),
                  invalid_configuration);
}

TEST_CASE("the device at hand finds its axis table by the Catalog's device rule, and in it the "
          "nearest tuned shape",
          "[runtime][axis_tables]") {
  rt_test::temp_dir dir;
  const auto tables =
      axis_tables_from_catalog(axis_catalog(dir / "results.sqlite"), rt_test::embedded_library(),
                               dtype::float32, reduce_op::sum, axis_determinism::run_to_run);
  CHECK(axis_table_for(tables, {"GPU-test-0001", "", 0}) == &tables[0]);
  CHECK(axis_table_for(tables, {"", h100_name, 0}) == &tables[0]);
  CHECK(axis_table_for(tables, {"GPU-other", "NVIDIA H200", 90}) == &tables[0]); // sm_90
  CHECK(axis_table_for(tables, {"GPU-other", "NVIDIA A100", 80}) == nullptr);
  const auto &t = tables[0].entries;
  // between grid points: (2^15 rows of 3000) is nearest (2^16, 1024, 1)
  CHECK(table_entry(t, {1 << 15, 3000, 1})->variant == label_of("warp_rows_vec2"));
  CHECK(table_entry(t, {1 << 15, 3000, 1})->shape == reduction_shape{1 << 16, 1024, 1});
  // a few long rows: nearest (16, 2^22, 1)
  CHECK(table_entry(t, {8, 1 << 23, 1})->shape == reduction_shape{16, 1 << 22, 1});
  // a middle axis is a column shape: nearest (1, 1024, 2^16)
  CHECK(table_entry(t, {64, 2048, 512})->shape == reduction_shape{1, 1024, 1 << 16});
}

TEST_CASE("a device without a batch_invariant point has no batch_invariant table: the next "
          "matching device's answers",
          "[runtime][axis_tables]") {
  rt_test::temp_dir dir;
  auto s = db::store::open(dir / "results.sqlite");
  rt_test::record_axis_results(s, s.register_device(rt_test::h100()));
  const auto other = s.register_device(rt_test::gpu("GPU-vec2-only", "Other board"));
  s.record_measurement(rt_test::axis_measurement(other, "warp_rows_vec2", {4096, 1024, 1}, 1e-5));
  const auto c = db::catalog::load(s.connection());
  const db::device_query q{"GPU-vec2-only", "Other board", 90};
  const auto fastest = axis_tables_from_catalog(c, rt_test::embedded_library(), dtype::float32,
                                                reduce_op::sum, axis_determinism::run_to_run);
  CHECK(axis_table_for(fastest, q)->name == "Other board");
  const auto invariant = axis_tables_from_catalog(
      c, rt_test::embedded_library(), dtype::float32, reduce_op::sum,
      axis_determinism::batch_invariant);
  CHECK(axis_table_for(invariant, q)->name == h100_name);
  // the export, read back, says the same
  const auto doc = exported(c);
  CHECK(axis_table_for(axis_tables_from_json(doc, dtype::float32, reduce_op::sum, {},
                                             axis_determinism::batch_invariant),
                       q)
            ->name == h100_name);
}

TEST_CASE("a calibrated shape's entry is its fastest lone call, from the file and its export",
          "[runtime][axis_tables][calibrate]") {
  rt_test::temp_dir dir;
  auto s = db::store::open(dir / "results.sqlite");
  rt_test::record_axis_results(s, s.register_device(rt_test::h100()));
  const reduction_shape rows{1 << 16, 1024, 1}; // warp_rows_vec2 replayed faster than warp_rows
  const auto before = db::catalog::load(s.connection());
  const auto &t = before.devices()[0].axis_tables[0];
  std::size_t at = 0;
  while (!(t.shapes[at] == rows))
    ++at;
  REQUIRE(t.ranked[at].size() == 2);
  // `reducetune calibrate` timed warp_rows' lone call faster by more than the 2 % tie
  const std::vector<db::store::application_time> times{
      {t.ranked[at][0].measurement_id, 9e-6, 20}, {t.ranked[at][1].measurement_id, 8e-6, 20}};
  s.record_application_times(times);
  const auto c = db::catalog::load(s.connection());
  const auto from_db = axis_tables_from_catalog(c, rt_test::embedded_library(), dtype::float32,
                                                reduce_op::sum, axis_determinism::run_to_run);
  const auto from_json =
      axis_tables_from_json(exported(c), dtype::float32, reduce_op::sum, {},
                            axis_determinism::run_to_run);
  for (const auto *tables : {&from_db, &from_json}) {
    CHECK(table_entry((*tables)[0].entries, rows)->variant == label_of("warp_rows"));
    // another shape, never calibrated, keeps its fastest replayed median
    CHECK(table_entry((*tables)[0].entries, {16, 1 << 22, 1})->variant ==
          label_of("warp_rows_vec2"));
  }
}
