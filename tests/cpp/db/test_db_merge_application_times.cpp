// db merge and `reducetune calibrate`'s application times (rt_application_times): they come
// along with the measurements they time, under this file's ids of those measurements; a
// repeated merge adds nothing; a workload's times on a model are one calibration, taken or
// left whole, the newer one whichever file is merged into which; a file older than the table
// still merges.
#include "catch.hpp"

#include <map>
#include <string>
#include <vector>

#include "db_test_support.hpp"
#include "reducetune/db/store.hpp"

using namespace reducetune::db;

namespace {

constexpr std::uint64_t n = 1 << 20;

// block -> its measurement's id in s, at size n.
std::map<int, std::int64_t> ids_by_block(store &s) {
  std::map<int, std::int64_t> out;
  for (const auto &m : s.history(1, "float32", "sum", n))
    out[std::stoi(m.variant.label.substr(m.variant.label.rfind('_') + 1))] = m.id;
  return out;
}

// block -> its application time in s, for the blocks that have one.
std::map<int, double> times_by_block(store &s) {
  std::map<int, double> out;
  for (const auto &[block, id] : ids_by_block(s)) {
    auto q = s.connection().prepare(
        "SELECT median_s FROM rt_application_times WHERE measurement_id = ?1");
    q.bind(1, id);
    if (q.step())
      out[block] = q.column_double(0);
  }
  return out;
}

std::int64_t time_rows(store &s) {
  auto q = s.connection().prepare("SELECT count(*) FROM rt_application_times");
  REQUIRE(q.step());
  return q.column_int(0);
}

// A file whose points at n are `measured` (block -> replayed median), of which `calibrated`
// (block -> lone-call median) were timed by one calibration stamped `when`. Its rows are
// written in the order given, so that two files number one point differently.
void write(const std::filesystem::path &path, const std::vector<std::pair<int, double>> &measured,
           const std::map<int, double> &calibrated, const std::string &when) {
  auto s = store::open(path);
  const auto dev = s.register_device(rt_test::h100());
  for (const auto &[block, median] : measured)
    s.record_measurement(rt_test::measurement(dev, n, block, median));
  const auto ids = ids_by_block(s);
  std::vector<store::application_time> times;
  for (const auto &[block, call] : calibrated)
    times.push_back({ids.at(block), call, 60});
  s.record_application_times(times);
  auto stamp = s.connection().prepare("UPDATE rt_application_times SET created_at = ?1");
  stamp.bind(1, when).run();
}

} // namespace

TEST_CASE("merge copies a calibration under this file's ids, once", "[db][merge]") {
  rt_test::temp_dir dir;
  // the slowest replayed point is the fastest lone call: what calibrate is there to find
  write(dir / "calibrated.sqlite", {{128, 1e-5}, {256, 2e-5}, {512, 3e-5}},
        {{128, 9e-6}, {256, 8.5e-6}, {512, 7e-6}}, "2026-11-20T00:00:00.000Z");
  auto into = store::open(dir / "into.sqlite");
  // another point first, so that the copied rows get other ids than in the source
  into.record_measurement(rt_test::measurement(into.register_device(rt_test::h100()), n, 64, 4e-5));

  const auto first = into.merge_from(dir / "calibrated.sqlite");
  CHECK(first.inserted == 3);
  CHECK(first.application_times_copied == 3);
  auto source = store::open(dir / "calibrated.sqlite");
  REQUIRE(ids_by_block(into).at(128) != ids_by_block(source).at(128));
  CHECK(times_by_block(into) == times_by_block(source));
  CHECK(times_by_block(into).size() == 3);

  const auto again = into.merge_from(dir / "calibrated.sqlite");
  CHECK(again.kept == 3);
  CHECK(again.application_times_copied == 0);
  CHECK(again.application_times_kept_out == 3);
  CHECK(time_rows(into) == 3);
  CHECK(times_by_block(into) == times_by_block(source));
}

TEST_CASE("merge keeps the newer calibration whole, in either direction", "[db][merge]") {
  rt_test::temp_dir dir;
  const std::vector<std::pair<int, double>> points = {{128, 1e-5}, {256, 2e-5}, {512, 3e-5}};
  const std::map<int, double> older = {{128, 9e-6}, {256, 8e-6}};  // 256 the fastest call
  const std::map<int, double> newer = {{256, 9.5e-6}, {512, 9e-6}}; // 512 the fastest call
  for (const auto *pair : {"a", "b"}) {
    write(dir / (std::string(pair) + "_older.sqlite"), points, older, "2026-11-20T00:00:00.000Z");
    write(dir / (std::string(pair) + "_newer.sqlite"), points, newer, "2026-11-24T00:00:00.000Z");
  }
  auto older_into = store::open(dir / "a_older.sqlite");
  const auto st_into_older = older_into.merge_from(dir / "a_newer.sqlite");
  CHECK(st_into_older.application_times_copied == 2);
  auto newer_into = store::open(dir / "b_newer.sqlite");
  const auto st_into_newer = newer_into.merge_from(dir / "b_older.sqlite");
  CHECK(st_into_newer.application_times_kept_out == 2);
  // the newer calibration only: 128's older time, which the newer one never weighed, is gone
  for (store *s : {&older_into, &newer_into}) {
    CHECK(times_by_block(*s) == newer);
    CHECK(time_rows(*s) == 2);
  }
}

TEST_CASE("merge of a file older than the application times keeps this file's",
          "[db][merge][migration]") {
  rt_test::temp_dir dir;
  std::filesystem::copy_file(std::filesystem::path(RT_TEST_DATA_DIR) / "db" / "schema_v1.sqlite",
                             dir / "v1.sqlite");
  const auto v1_bytes = rt_test::file_bytes(dir / "v1.sqlite");
  write(dir / "calibrated.sqlite", {{128, 1e-5}, {256, 2e-5}}, {{128, 9e-6}, {256, 8e-6}},
        "2026-11-20T00:00:00.000Z");
  auto into = store::open(dir / "calibrated.sqlite");
  const auto st = into.merge_from(dir / "v1.sqlite");
  CHECK(st.inserted == 2); // the version-1 file's two measurements
  CHECK(st.application_times_copied == 0);
  CHECK(st.application_times_kept_out == 0);
  CHECK(times_by_block(into) == std::map<int, double>{{128, 9e-6}, {256, 8e-6}});
  CHECK(rt_test::file_bytes(dir / "v1.sqlite") == v1_bytes); // read, never migrated in place
}
