// The store keyed by shape (schema 6, db/migrations/0006_workload_shape.sql): a workload is a
// problem's shape (outer, r, inner); two shapes with one r are two workloads; the whole array's
// best never takes an axis row and an axis shape's best never a whole-array row; a schema-5
// file migrates with its ids and foreign keys, every workload (1, n, 1).
#include "catch.hpp"

#include "db_test_support.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/errors.hpp"

using namespace reducetune::db;
using reducetune::problem;
using reducetune::reduction_shape;

namespace {

// The measurement of measurement(...) at shape s instead of a whole-array size.
measurement_record at_shape(std::int64_t dev, reduction_shape s, int block, double seconds) {
  auto m = rt_test::measurement(dev, s.r, block, seconds);
  m.workload.outer = s.outer;
  m.workload.inner = s.inner;
  return m;
}

problem float32_sum(reduction_shape s) {
  return {reducetune::dtype::float32, reducetune::reduce_op::sum, s};
}

} // namespace

TEST_CASE("a workload is built from its problem, r in n", "[db][shape]") {
  const auto w = workload_record::of(float32_sum({4096, 64, 1}), "uniform", 7);
  CHECK(w.dtype == "float32");
  CHECK(w.op == "sum");
  CHECK((w.outer == 4096 && w.n == 64 && w.inner == 1));
  CHECK((w.data_pattern == "uniform" && w.seed == 7));
  CHECK_THROWS_AS(workload_record::of(float32_sum({0, 64, 1}), "uniform", 7),
                  reducetune::invalid_configuration);
}

TEST_CASE("two shapes with one r are two workloads, each with its own best", "[db][shape]") {
  rt_test::temp_dir dir;
  auto s = store::open(dir / "r.sqlite");
  const auto dev = s.register_device(rt_test::h100());
  const reduction_shape rows{4096, 64, 1};
  const reduction_shape columns{1, 64, 4096};
  s.record_measurement(at_shape(dev, rows, 256, 2e-5));
  s.record_measurement(at_shape(dev, columns, 256, 3e-5)); // same point, same r
  s.record_measurement(at_shape(dev, columns, 128, 4e-5));

  CHECK(s.history(dev, "float32", "sum", std::optional(rows)).size() == 1);
  CHECK(s.history(dev, "float32", "sum", std::optional(columns)).size() == 2);
  // the same point at the other shape is another measurement, not a replacement
  CHECK(s.find_measurement(at_shape(dev, rows, 256, 0).key())->stats->median_s ==
        Approx(2e-5));
  CHECK(s.find_measurement(at_shape(dev, columns, 256, 0).key())->stats->median_s ==
        Approx(3e-5));

  const auto b = s.best(dev, float32_sum(columns));
  REQUIRE(b);
  CHECK(b->bucket_shape() == columns);
  CHECK(b->variant.label == "tunable.float32.sum.bs_256");
  CHECK(s.best(dev, float32_sum({8192, 64, 1}))->bucket_shape() == rows); // nearest row shape
  // the whole array's best takes (1, n, 1) workloads only
  CHECK_FALSE(s.best(dev, "float32", "sum", 64));
  s.record_measurement(rt_test::measurement(dev, 64, 512, 1e-6));
  const auto whole = s.best(dev, "float32", "sum", 64);
  REQUIRE(whole);
  CHECK(whole->bucket_shape() == reduction_shape{1, 64, 1});
  CHECK(s.best(dev, float32_sum({1, 64, 1}))->measurement_id == whole->measurement_id);
  CHECK(s.best(dev, float32_sum(rows))->bucket_shape() == rows); // never the whole array's
}

TEST_CASE("a schema-5 file migrates keeping its ids, every workload the whole array",
          "[db][shape][migration]") {
  rt_test::temp_dir dir;
  const auto path = dir / "v5.sqlite";
  {
    auto db = rt_test::file_at_schema(path, 5);
    rt_test::insert_old_device(db, 3, "GPU-v5");
    db.exec("INSERT INTO rt_variants (id, family, dtype, op, label, determinism) VALUES"
            " (5, 'tunable', 'float32', 'sum', 'tunable.float32.sum.bs_256', 'run_to_run')");
    // ids with gaps: the migration must keep them, not renumber
    db.exec("INSERT INTO rt_workloads (id, dtype, op, n, data_pattern, seed) VALUES"
            " (10, 'float32', 'sum', 1024, 'uniform', 1), (20, 'float32', 'sum', 4096,"
            " 'uniform', 1)");
    db.exec("INSERT INTO rt_measurements (id, device_id, variant_id, launch_label,"
            " workload_id, template_hash, driver_version, toolkit_version, samples,"
            " sample_count, median_s, status) VALUES (7, 3, 5, 'ept_1.cap_0', 20, 'h', 1, 1,"
            " x'', 0, 1e-6, 'ok')");
    db.exec("INSERT INTO rt_baselines (device_id, workload_id, kind, driver_version,"
            " toolkit_version, samples, median_s, gbps) VALUES (3, 10, 'cub', 1, 1, x'', 1, 1)");
  }
  auto s = store::open(path);
  REQUIRE(s.migration());
  CHECK(s.migration()->from_version == 5);
  CHECK(s.schema_version() == current_schema_version());
  auto q = s.connection().prepare("SELECT id, outer, n, inner FROM rt_workloads ORDER BY id");
  std::vector<std::array<std::int64_t, 4>> rows;
  while (q.step())
    rows.push_back({q.column_int(0), q.column_int(1), q.column_int(2), q.column_int(3)});
  CHECK(rows == std::vector<std::array<std::int64_t, 4>>{{10, 1, 1024, 1}, {20, 1, 4096, 1}});
  auto fk = s.connection().prepare("PRAGMA foreign_key_check");
  CHECK_FALSE(fk.step()); // rt_measurements and rt_baselines still point at their workloads
  const auto h = s.history(3, "float32", "sum", std::optional<std::uint64_t>(4096));
  REQUIRE(h.size() == 1);
  CHECK((h[0].id == 7 && h[0].workload.id == 20 && h[0].workload.outer == 1));
  CHECK(s.find_baseline(3, {0, "float32", "sum", 1024, "uniform", 1}, "cub"));
  // a workload still in use cannot be deleted: the foreign keys hold on the new table
  CHECK_THROWS(s.connection().exec("DELETE FROM rt_workloads WHERE id = 20"));
}
