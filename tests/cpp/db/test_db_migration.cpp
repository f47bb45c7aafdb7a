// Migration from the committed schema-version-1 file (tests/data/db/schema_v1.sqlite, made by
// tests/data/db/make_v1_file.py from db/migrations/0001_initial.sql).
#include "catch.hpp"

#include "db_test_support.hpp"
#include "reducetune/db/catalog.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"

using namespace reducetune::db;

namespace {
const std::filesystem::path v1_file =
    std::filesystem::path(RT_TEST_DATA_DIR) / "db" / "schema_v1.sqlite";
}

TEST_CASE("the committed version-1 file is what the test expects", "[db][migration]") {
  REQUIRE(std::filesystem::exists(v1_file));
  const auto inspection = inspect_file(v1_file);
  CHECK(inspection.kind == file_kind::older);
  CHECK(inspection.version == 1);
  CHECK(current_schema_version() >= 2);
}

TEST_CASE("an older file migrates on open and keeps its rows", "[db][migration]") {
  rt_test::temp_dir dir;
  const auto path = dir / "old.sqlite";
  const auto committed_before = rt_test::file_bytes(v1_file);
  std::filesystem::copy_file(v1_file, path);

  // Readers read it (migrated in a private copy in memory) and never write it.
  {
    const auto c = catalog::open(path, {true, false});
    CHECK(c.best("GPU-v1-0000", "float32", "sum", 1000));
    auto r = store::open_read_only(path);
    CHECK(r.history(r.find_device("GPU-v1-0000")->id, "float32", "sum").size() == 2);
    CHECK_THROWS_AS(r.register_template("tunable", "h"), reducetune::store_error);
    CHECK_FALSE(std::filesystem::exists(dir / "old.sqlite.schema1.bak"));
  }
  CHECK(rt_test::file_bytes(path) == committed_before);

  {
    auto s = store::open(path);
    CHECK(s.schema_version() == current_schema_version());
    CHECK(s.integrity_check() == "ok");
    // Writing migrates, after keeping the file as it was beside it.
    REQUIRE(s.migration());
    CHECK(s.migration()->from_version == 1);
    CHECK(s.migration()->backup == dir / "old.sqlite.schema1.bak");
    CHECK(inspect_file(s.migration()->backup).version == 1);
    auto kept = store::open_read_only(s.migration()->backup);
    CHECK(kept.history(kept.find_device("GPU-v1-0000")->id, "float32", "sum").size() == 2);
    const auto dev = s.find_device("GPU-v1-0000");
    REQUIRE(dev);
    CHECK(dev->name == "NVIDIA H100 80GB HBM3");
    const auto h = s.history(dev->id, "float32", "sum");
    REQUIRE(h.size() == 2);
    CHECK(h[0].samples_s == std::vector<double>{1.0e-5, 1.2e-5, 1.1e-5});
    CHECK(h[0].template_hash == "hash-v1");
    CHECK(h[0].created_at == "2026-01-02T03:04:06.000Z");
    CHECK_FALSE(h[0].pct_of_ceiling); // the column version 2 added
    // Its synthetic label names no declared point: the repair says so with a flag, and
    // best leaves it out unless flagged points are allowed.
    CHECK_FALSE(s.best(dev->id, "float32", "sum", 1000));
    const auto best = s.best(dev->id, "float32", "sum", 1000, {true, false});
    REQUIRE(best);
    CHECK(best->variant.determinism == "unknown");
    CHECK(best->variant.flags_json.find("unknown") != std::string::npos);
    CHECK(best->bucket_n == 1024);
    CHECK(best->variant.label == "tunable.float32.sum.bs_256");
    // Version 2's additions work on the migrated file.
    baseline_record b;
    b.device_id = dev->id;
    b.workload = {0, "float32", "sum", 1024, "random", 1};
    b.kind = "ceiling";
    b.samples_s = {1e-6};
    b.gbps = 3300.0;
    s.record_baseline(b);
    auto m = h[0];
    m.pct_of_ceiling = 87.5;
    m.launch_label = "ept_8.cap_0";
    m.created_at.clear();
    s.record_measurement(m);
    CHECK(s.history(dev->id, "float32", "sum").size() == 3);
  }
  // Opened again: already current, nothing to do; the catalog now reads it.
  CHECK(inspect_file(path).kind == file_kind::current);
  const auto c = catalog::open(path, {true, false});
  CHECK(c.best("GPU-v1-0000", "float32", "sum", 1 << 20));
  // The committed file itself was never opened for writing.
  CHECK(rt_test::file_bytes(v1_file) == committed_before);
}

TEST_CASE("migrating a schema-3 file repairs each variant's parameters from its labels",
          "[db][migration][point]") {
  rt_test::temp_dir dir;
  const auto path = dir / "v3.sqlite";
  {
    // A schema-3 file as the old store wrote it: the variant's parameters were overwritten by
    // the launch values of the last measurement that touched it (ept 256, cap 2), while the
    // faster measurement's label says ept_1.cap_4.
    auto db = rt_test::file_at_schema(path, 3);
    rt_test::insert_old_device(db, 1, "GPU-v3");
    db.exec("INSERT INTO rt_variants (family, dtype, op, label, parameters) VALUES ('tunable',"
            " 'float32', 'sum', 'tunable.float32.sum.bs_256.u_4.v_4.warp_volatile_unsafe."
            "blk_warp_partials.fin_two_pass', '{\"block_size\": 256, \"elements_per_thread\":"
            " 256, \"grid_cap\": 2}')");
    db.exec("INSERT INTO rt_workloads (dtype, op, n, data_pattern, seed) VALUES ('float32',"
            " 'sum', 1024, 'uniform', 1)");
    db.exec("INSERT INTO rt_measurements (device_id, variant_id, launch_label, workload_id,"
            " template_hash, driver_version, toolkit_version, samples, sample_count, median_s,"
            " status) VALUES (1, 1, 'ept_1.cap_4', 1, 'h', 1, 1, x'', 0, 1e-6, 'ok')");
  }
  auto s = store::open(path);
  CHECK(s.schema_version() == current_schema_version());
  const auto b = s.best(1, "float32", "sum", 1024, {true, false});
  REQUIRE(b);
  CHECK(b->launch_label == "ept_1.cap_4");
  CHECK(b->launch_parameters_json == R"({"elements_per_thread":1,"grid_cap":4})");
  CHECK(b->variant.parameters_json ==
        R"({"block_size":256,"unroll":4,"vec":4,"warp":"volatile_unsafe",)"
        R"("block_strategy":"warp_partials","finish":"two_pass"})");
  CHECK(b->variant.flags_json.find("volatile_unsafe") != std::string::npos);
  CHECK(b->variant.determinism == "run_to_run");
  CHECK_FALSE(s.best(1, "float32", "sum", 1024)); // flagged: left out by default
}
