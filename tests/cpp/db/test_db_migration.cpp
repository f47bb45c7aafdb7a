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

  // Read-only users refuse it with the way forward, and do not change it.
  try {
    (void)catalog::open(path);
    FAIL("catalog opened a version-1 file");
  } catch (const reducetune::store_error &e) {
    CHECK(std::string(e.what()).find("to migrate it") != std::string::npos);
  }
  CHECK(rt_test::file_bytes(path) == committed_before);

  {
    auto s = store::open(path);
    CHECK(s.schema_version() == current_schema_version());
    CHECK(s.integrity_check() == "ok");
    const auto dev = s.find_device("GPU-v1-0000");
    REQUIRE(dev);
    CHECK(dev->name == "NVIDIA H100 80GB HBM3");
    const auto h = s.history(dev->id, "float32", "sum");
    REQUIRE(h.size() == 2);
    CHECK(h[0].samples_s == std::vector<double>{1.0e-5, 1.2e-5, 1.1e-5});
    CHECK(h[0].template_hash == "hash-v1");
    CHECK(h[0].created_at == "2026-01-02T03:04:06.000Z");
    CHECK_FALSE(h[0].pct_of_ceiling); // the column version 2 added
    const auto best = s.best(dev->id, "float32", "sum", 1000);
    REQUIRE(best);
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
  const auto c = catalog::open(path);
  CHECK(c.best("GPU-v1-0000", "float32", "sum", 1 << 20));
  // The committed file itself was never opened for writing.
  CHECK(rt_test::file_bytes(v1_file) == committed_before);
}
