// The merge rule and racing (issue 25): of two ok rows of one key, a full measurement beats
// one cut short as "outpaced" (3 samples), even when the short one's spread is lower, in
// either direction; the merged row keeps its samples and its reason.
#include "catch.hpp"

#include <string>

#include "db_test_support.hpp"
#include "reducetune/db/store.hpp"

using namespace reducetune::db;

namespace {

constexpr std::uint64_t n = 1 << 20;
constexpr int block = 256;

// One file holding the key's row: raced (3 identical samples: no spread at all) or full
// (10 samples 0.8 % apart, a converged point's noise).
void write(const std::filesystem::path &path, bool raced) {
  auto s = store::open(path);
  const auto dev = s.register_device(rt_test::h100());
  auto m = rt_test::measurement(dev, n, block, raced ? 3e-5 : 3.1e-5);
  if (raced) {
    m.samples_s.assign(3, 3e-5);
    m.reason = "outpaced: 3 cold samples, median above 1.5e-05 s";
  } else {
    m.samples_s.clear();
    for (int i = 0; i < 10; ++i) m.samples_s.push_back(i % 2 ? 3.1e-5 * 1.008 : 3.1e-5 * 0.992);
  }
  m.created_at = raced ? "2026-03-01T00:00:00.000Z" : "2026-01-01T00:00:00.000Z"; // raced newer
  s.record_measurement(m);
}

measurement_record held(const store &s) {
  const auto rows = s.history(1, "float32", "sum", n);
  REQUIRE(rows.size() == 1);
  return rows.front();
}

} // namespace

TEST_CASE("merge keeps a full measurement over an outpaced one, in either direction",
          "[db][merge]") {
  rt_test::temp_dir dir;
  write(dir / "raced_into.sqlite", true);
  write(dir / "full_from.sqlite", false);
  write(dir / "full_into.sqlite", false);
  write(dir / "raced_from.sqlite", true);

  auto into_raced = store::open(dir / "raced_into.sqlite");
  CHECK(into_raced.merge_from(dir / "full_from.sqlite").replaced == 1);
  auto into_full = store::open(dir / "full_into.sqlite");
  CHECK(into_full.merge_from(dir / "raced_from.sqlite").kept == 1);
  for (const store *s : {&into_raced, &into_full}) {
    const auto m = held(*s);
    CHECK(m.samples_s.size() == 10);
    CHECK(m.reason.empty());
  }
}

TEST_CASE("merge keeps an outpaced row where the other file has none", "[db][merge]") {
  rt_test::temp_dir dir;
  write(dir / "raced.sqlite", true);
  auto empty = store::open(dir / "empty.sqlite");
  empty.register_device(rt_test::h100());
  CHECK(empty.merge_from(dir / "raced.sqlite").inserted == 1);
  const auto m = held(empty);
  CHECK(m.samples_s.size() == 3);
  CHECK(m.reason.starts_with("outpaced"));
}
