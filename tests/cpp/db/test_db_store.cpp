// The store: schema, devices, builds (the persistent JIT cache), measurements, best, history.
#include "catch.hpp"

#include <set>

#include "db_test_support.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"

using namespace reducetune::db;

namespace {

// Columns, indexes and foreign keys of every rt_ table, as text, for comparing schemas.
std::set<std::string> shape_of(database &db) {
  std::set<std::string> out;
  std::vector<std::string> tables;
  auto t = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'rt\\_%'"
                      " ESCAPE '\\' ORDER BY name");
  while (t.step())
    tables.push_back(t.column_text(0));
  for (const auto &name : tables) {
    auto c = db.prepare(
        "SELECT cid, name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1)");
    c.bind(1, name);
    while (c.step())
      out.insert(name + " col " + c.column_text(0) + " " + c.column_text(1) + " " +
                 c.column_text(2) + " " + c.column_text(3) + " " + c.column_text(4) + " " +
                 c.column_text(5));
    auto f = db.prepare("SELECT \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1)");
    f.bind(1, name);
    while (f.step())
      out.insert(name + " fk " + f.column_text(0) + " " + f.column_text(1) + " " +
                 f.column_text(2));
    auto i = db.prepare("SELECT il.\"unique\", group_concat(ii.name) FROM pragma_index_list(?1) il,"
                        " pragma_index_info(il.name) ii GROUP BY il.name ORDER BY 2");
    i.bind(1, name);
    while (i.step())
      out.insert(name + " index " + i.column_text(0) + " " + i.column_text(1));
  }
  return out;
}

} // namespace

TEST_CASE("a new file gets the current schema, WAL and reducetune's application id", "[db]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "results.sqlite");
  REQUIRE(s.schema_version() == current_schema_version());
  REQUIRE(s.connection().pragma_int("application_id") == application_id);
  auto mode = s.connection().prepare("PRAGMA journal_mode");
  REQUIRE(mode.step());
  REQUIRE(mode.column_text(0) == "wal");
  REQUIRE(s.connection().pragma_int("foreign_keys") == 1);
  REQUIRE(s.integrity_check() == "ok");
}

// A new file is created by applying every migration (schema.cpp); an old file is upgraded by
// the ones it lacks. The committed version-1 file was written from 0001 alone, so the two
// paths meet only if no migration assumes more than its predecessors left.
TEST_CASE("a new file and a migrated version-1 file have the same tables", "[db][migration]") {
  rt_test::temp_dir dir;
  auto fresh = store::open(dir / "fresh.sqlite");
  std::filesystem::copy_file(std::filesystem::path(RT_TEST_DATA_DIR) / "db" / "schema_v1.sqlite",
                             dir / "migrated.sqlite");
  auto migrated = store::open(dir / "migrated.sqlite");
  REQUIRE(migrated.migration());
  const auto a = shape_of(fresh.connection());
  const auto b = shape_of(migrated.connection());
  REQUIRE(a.size() > 50);
  for (const auto &line : a)
    CHECK(b.count(line) == 1);
  for (const auto &line : b)
    CHECK(a.count(line) == 1);
}

TEST_CASE("no reducetune table collides with Optuna's tables", "[db]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "results.sqlite");
  auto t = s.connection().prepare("SELECT name FROM sqlite_schema WHERE type = 'table'");
  while (t.step())
    CHECK(t.column_text(0).rfind("rt_", 0) == 0);
}

TEST_CASE("a device registers once per UUID and updates in place", "[db]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "results.sqlite");
  const auto id = s.register_device(rt_test::h100());
  auto changed = rt_test::h100();
  changed.driver_version = 12050;
  REQUIRE(s.register_device(changed) == id);
  REQUIRE(s.devices().size() == 1);
  const auto found = s.find_device("GPU-test-0001");
  REQUIRE(found);
  REQUIRE(found->driver_version == 12050);
  REQUIRE(found->compute_capability() == 90);
  REQUIRE_FALSE(s.find_device("GPU-none"));
}

TEST_CASE("builds are the persistent JIT cache and remember failures", "[db][jit]") {
  rt_test::temp_dir dir;
  const auto path = dir / "results.sqlite";
  {
    auto s = store::open(path);
    build_record ok;
    ok.cache_key = "key-ok";
    ok.program_key = "tunable.float32.sum.bs_256";
    ok.variant_label = ok.program_key;
    ok.arch = "sm_90";
    ok.nvrtc_version = "12.4";
    ok.options = "-std=c++17 -arch=sm_90";
    ok.compile_seconds = 0.25;
    for (int i = 0; i < 1000; ++i)
      ok.cubin.push_back(static_cast<std::byte>(i * 7));
    s.record_build(ok);
    build_record failed = ok;
    failed.cache_key = "key-failed";
    failed.status = build_status::failed;
    failed.log = "error: identifier \"x\" is undefined";
    failed.cubin.clear();
    s.record_build(failed);
  }
  // Another process (a new connection) finds both.
  auto s = store::open(path);
  const auto ok = s.find_build("key-ok");
  REQUIRE(ok);
  REQUIRE(ok->status == build_status::ok);
  REQUIRE(ok->cubin.size() == 1000);
  REQUIRE(ok->cubin[999] == static_cast<std::byte>(999 * 7));
  const auto failed = s.find_build("key-failed");
  REQUIRE(failed);
  REQUIRE(failed->status == build_status::failed);
  REQUIRE(failed->log.find("undefined") != std::string::npos);
  REQUIRE(failed->cubin.empty());
  REQUIRE_FALSE(s.find_build("key-missing"));
}

TEST_CASE("a measurement keeps its samples and the store computes its statistics", "[db]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "results.sqlite");
  const auto dev = s.register_device(rt_test::h100());
  auto m = rt_test::measurement(dev, 1 << 20, 256, 1e-4);
  m.samples_s = {4e-4, 1e-4, 2e-4, 3e-4};
  s.record_measurement(m);
  const auto h = s.history(dev, "float32", "sum");
  REQUIRE(h.size() == 1);
  REQUIRE(h[0].samples_s == m.samples_s);
  REQUIRE(h[0].stats->median_s == 2.5e-4);
  REQUIRE(h[0].stats->min_s == 1e-4);
  REQUIRE(h[0].stats->count == 4);
  REQUIRE(h[0].created_at.size() >= 20);
  auto row = s.connection().prepare("SELECT median_s, sample_count FROM rt_measurements");
  REQUIRE(row.step());
  REQUIRE(row.column_double(0) == 2.5e-4);
  REQUIRE(row.column_int(1) == 4);
}

TEST_CASE("is_measured matches the full key: another driver or template is not measured",
          "[db][cache]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "results.sqlite");
  const auto dev = s.register_device(rt_test::h100());
  const auto m = rt_test::measurement(dev, 4096, 256, 1e-5);
  REQUIRE_FALSE(s.is_measured(m.key()));
  s.record_measurement(m);
  REQUIRE(s.is_measured(m.key()));
  auto k = m.key();
  k.driver_version = 12050;
  REQUIRE_FALSE(s.is_measured(k));
  k = m.key();
  k.template_hash = "hash-b";
  REQUIRE_FALSE(s.is_measured(k));
  k = m.key();
  k.workload.seed = 2;
  REQUIRE_FALSE(s.is_measured(k));
  k = m.key();
  k.launch_label = "ept_8.cap_0";
  REQUIRE_FALSE(s.is_measured(k));
  // A newer driver's run is a separate row: the two never mix.
  auto newer = m;
  newer.driver_version = 12050;
  s.record_measurement(newer);
  REQUIRE(s.history(dev, "float32", "sum").size() == 2);
  // Re-measuring the same key replaces the row instead of adding one.
  s.record_measurement(m);
  REQUIRE(s.history(dev, "float32", "sum").size() == 2);
}

TEST_CASE("failures are data: failed, invalid and wrong points are stored but never best",
          "[db][best]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "results.sqlite");
  const auto dev = s.register_device(rt_test::h100());
  auto slow = rt_test::measurement(dev, 1024, 128, 5e-5);
  s.record_measurement(slow);
  for (auto [status, block] :
       {std::pair{measurement_status::failed, 32}, std::pair{measurement_status::invalid, 64},
        std::pair{measurement_status::wrong, 1024}}) {
    auto bad = rt_test::measurement(dev, 1024, block, 1e-6); // fastest, but not ok
    bad.status = status;
    bad.reason = "reason " + std::string(to_string(status));
    if (status == measurement_status::failed)
      bad.samples_s.clear();
    s.record_measurement(bad);
    REQUIRE(s.is_measured(bad.key()));
  }
  const auto best = s.best(dev, "float32", "sum", 1024);
  REQUIRE(best);
  REQUIRE(best->variant.label == slow.variant.label);
  const auto h = s.history(dev, "float32", "sum", 1024);
  REQUIRE(h.size() == 4);
  int failed_without_samples = 0;
  for (const auto &m : h)
    if (m.status == measurement_status::failed && !m.stats && m.reason == "reason failed")
      ++failed_without_samples;
  REQUIRE(failed_without_samples == 1);
}

TEST_CASE("best takes the nearest measured size on a log2 scale, ties to the larger",
          "[db][best]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "results.sqlite");
  const auto dev = s.register_device(rt_test::h100());
  // At 1024 block 128 wins; at 4096 block 256; at 1 Mi block 512 (others slower).
  rt_test::record_three_sizes(s, dev, 256);
  const auto label = [&](std::uint64_t n) {
    const auto b = s.best(dev, "float32", "sum", n);
    REQUIRE(b);
    return b->variant.label;
  };
  CHECK(label(1) == "tunable.float32.sum.bs_128");
  CHECK(label(1024) == "tunable.float32.sum.bs_128");
  CHECK(label(2047) == "tunable.float32.sum.bs_128");  // log2 midpoint of 1024..4096 is 2048
  CHECK(label(2048) == "tunable.float32.sum.bs_256");  // the tie goes to the larger size
  CHECK(label(65535) == "tunable.float32.sum.bs_256"); // midpoint of 4 Ki..1 Mi is 64 Ki
  CHECK(label(65536) == "tunable.float32.sum.bs_512");
  CHECK(label(1ull << 40) == "tunable.float32.sum.bs_512");
  CHECK(s.best(dev, "float32", "sum", 3000)->bucket_n == 4096);
  CHECK_FALSE(s.best(dev, "float64", "sum", 1024));
  CHECK_FALSE(s.best(dev, "float32", "max", 1024));
}

TEST_CASE("the size rule's thresholds are exact at the log2 midpoint", "[db][best]") {
  CHECK(bucket_threshold(1024, 4096) == 2048);
  CHECK(bucket_threshold(1000, 1001) == 1001); // sqrt(1001000) = 1000.4998...
  CHECK(bucket_threshold(2, 8) == 4);
  CHECK(bucket_threshold(1ull << 40, 1ull << 42) == 1ull << 41);
  const std::vector<std::uint64_t> sizes = {10, 1000};
  CHECK(*nearest_bucket(sizes, 99) == 0);
  CHECK(*nearest_bucket(sizes, 100) == 1);
  CHECK_FALSE(nearest_bucket({}, 5));
}

TEST_CASE("names with quotes and SQL fragments round-trip as plain values", "[db][sql]") {
  rt_test::temp_dir dir;
  const auto path = dir / "it's \"a\" db; DROP TABLE x.sqlite";
  auto s = store::open(path);
  const auto d = rt_test::gpu("GPU-'); DROP TABLE rt_measurements; --",
                              "Robert'); DROP TABLE rt_devices; -- \"GPU\" \\ ? %s");
  const auto dev = s.register_device(d);
  auto m = rt_test::measurement(dev, 1024, 256, 1e-5, "float32", "sum");
  m.variant.label = "tunable.float32.sum.' OR '1'='1";
  m.variant.parameters_json = R"({"warp": "it's \"quoted\"; DELETE FROM rt_variants"})";
  m.launch_label = "ept_16'); --";
  m.reason = "a 'reason' with \"quotes\"";
  m.template_hash = "'; SELECT 1; --";
  s.record_measurement(m);
  REQUIRE(s.is_measured(m.key()));
  const auto found = s.find_device(d.uuid);
  REQUIRE(found);
  REQUIRE(found->name == d.name);
  const auto h = s.history(dev, "float32", "sum");
  REQUIRE(h.size() == 1);
  REQUIRE(h[0].variant.label == m.variant.label);
  REQUIRE(h[0].variant.parameters_json == m.variant.parameters_json);
  REQUIRE(h[0].launch_label == m.launch_label);
  REQUIRE(h[0].reason == m.reason);
  REQUIRE(h[0].template_hash == m.template_hash);
  REQUIRE(s.integrity_check() == "ok");
  REQUIRE(s.devices().size() == 1);
}

TEST_CASE("a failing SQLite call names the message, the call and the place", "[db][errors]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "results.sqlite");
  try {
    RT_SQLITE_CALL(s.connection().handle(),
                   sqlite3_exec(s.connection().handle(), "SELECT * FROM no_such_table", nullptr,
                                nullptr, nullptr));
    FAIL("no exception");
  } catch (const reducetune::store_error &e) {
    const std::string what = e.what();
    CHECK(what.find("no such table: no_such_table") != std::string::npos);
    CHECK(what.find("sqlite3_exec") != std::string::npos);
    CHECK(what.find("test_db_store.cpp") != std::string::npos);
  }
}

TEST_CASE("baselines and studies are recorded per device and workload", "[db]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "results.sqlite");
  const auto dev = s.register_device(rt_test::h100());
  baseline_record b;
  b.device_id = dev;
  b.workload = {0, "float32", "sum", 1 << 24, "random", 1};
  b.kind = "cub";
  b.driver_version = 12040;
  b.toolkit_version = 12040;
  b.samples_s = {3e-5, 1e-5, 2e-5};
  b.gbps = 3000.0;
  s.record_baseline(b);
  const auto found = s.find_baseline(dev, b.workload, "cub");
  REQUIRE(found);
  REQUIRE(found->median_s == 2e-5);
  REQUIRE_FALSE(s.find_baseline(dev, b.workload, "ceiling"));
  const auto study = s.create_study({0, "study-1", dev, "float32", "sum", "tpe", "{}"});
  // a resumed run asks again by name: the same study, its first config kept
  CHECK(s.create_study({0, "study-1", dev, "float32", "sum", "tpe", R"({"resumed": 1})"}) ==
        study);
  CHECK(s.create_study({0, "study-2", dev, "float32", "sum", "tpe", "{}"}) != study);
  auto m = rt_test::measurement(dev, 1024, 256, 1e-5);
  m.study_id = study;
  s.record_measurement(m);
  REQUIRE(s.history(dev, "float32", "sum")[0].study_id == study);
}
