// The merge rule (store_merge.cpp, merge_order): a key present in both files keeps the better
// row, whichever file is merged into which. Under the old rule (more samples win) the noisy
// row, the failed row with more samples and the older of two failures would have won.
#include "catch.hpp"

#include <map>
#include <string>
#include <vector>

#include "db_test_support.hpp"
#include "reducetune/db/store.hpp"

using namespace reducetune::db;

namespace {

// n samples around t whose relative standard deviation is about d (alternating t(1 +- d)).
std::vector<double> spread(double t, double d, std::size_t n) {
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(i % 2 == 0 ? t * (1 + d) : t * (1 - d));
  return out;
}

// One file's side of a conflict: its row for the key of block `block`.
struct row {
  measurement_status status;
  double spread;
  std::size_t samples;
  const char *created_at;
};

struct conflict {
  const char *what;
  int block;
  row a, b;
  char winner; // 'a' (median 1e-5) or 'b' (median 2e-5)
};

constexpr auto ok = measurement_status::ok;
constexpr auto wrong = measurement_status::wrong;
constexpr auto failed = measurement_status::failed;
constexpr const char *jan = "2026-01-01T00:00:00.000Z";
constexpr const char *feb = "2026-02-01T00:00:00.000Z";
constexpr const char *mar = "2026-03-01T00:00:00.000Z";
// clang-format off
const std::vector<conflict> conflicts = {
    {"lower noise beats more samples", 128, {ok, 0.005, 10, jan}, {ok, 0.05, 200, feb}, 'a'},
    {"similar noise: more samples", 256, {ok, 0.0050, 10, feb}, {ok, 0.0055, 30, jan}, 'b'},
    {"ok beats failed", 512, {ok, 0.005, 10, jan}, {wrong, 0.001, 50, feb}, 'a'},
    {"equal: the newer", 1024, {ok, 0.005, 10, feb}, {ok, 0.005, 10, mar}, 'b'},
    {"neither ok: the newer", 64, {failed, 0.0, 20, jan}, {failed, 0.0, 2, feb}, 'b'},
    {"no spread (one sample) loses to a spread", 32, {ok, 0.0, 1, feb}, {ok, 0.03, 10, jan}, 'b'},
};
// clang-format on

// Baselines conflict by (device, workload, kind, versions): CUB lower noise vs more samples,
// the ceiling equal but for its age.
const std::map<std::string, std::pair<row, row>> baselines = {
    {"cub", {{ok, 0.003, 10, jan}, {ok, 0.04, 100, feb}}},
    {"ceiling", {{ok, 0.003, 10, feb}, {ok, 0.003, 10, mar}}},
};
const std::map<std::string, char> baseline_winner = {{"cub", 'a'}, {"ceiling", 'b'}};

constexpr std::uint64_t n = 4096;

// Writes side 'a' or 'b' of every conflict into a new file.
void write_side(const std::filesystem::path &path, char side) {
  auto s = store::open(path);
  const auto dev = s.register_device(rt_test::h100());
  const double t = side == 'a' ? 1e-5 : 2e-5;
  for (const auto &c : conflicts) {
    const row &r = side == 'a' ? c.a : c.b;
    auto m = rt_test::measurement(dev, n, c.block, t);
    m.status = r.status;
    m.samples_s = spread(t, r.spread, r.samples);
    m.created_at = r.created_at;
    s.record_measurement(m);
  }
  for (const auto &[kind, rows] : baselines) {
    const row &r = side == 'a' ? rows.first : rows.second;
    baseline_record b;
    b.device_id = dev;
    b.workload = {0, "float32", "sum", n, "random", 1};
    b.kind = kind;
    b.samples_s = spread(t, r.spread, r.samples);
    b.gbps = 1.0;
    s.record_baseline(b);
    // record_baseline stamps now; the rule's last step needs the ages above.
    auto u = s.connection().prepare("UPDATE rt_baselines SET created_at = ?1 WHERE kind = ?2");
    u.bind(1, r.created_at).bind(2, kind).run();
  }
}

// The row each key holds in the merged file, as 'a' or 'b' (by its median).
std::map<std::string, char> holders(const store &s) {
  std::map<std::string, char> out;
  const auto side_of = [](double median) { return median < 1.5e-5 ? 'a' : 'b'; };
  for (const auto &m : s.history(1, "float32", "sum", n))
    out[m.variant.label] = side_of(m.stats->median_s);
  for (const auto &[kind, rows] : baselines)
    out[kind] = side_of(s.find_baseline(1, {0, "float32", "sum", n, "random", 1}, kind)->median_s);
  return out;
}

} // namespace

TEST_CASE("merge keeps the better row of a key, in either direction", "[db][merge]") {
  rt_test::temp_dir dir;
  for (const char *name : {"a_into_b_a", "b_into_a_a"})
    write_side(dir / (std::string(name) + ".sqlite"), 'a');
  for (const char *name : {"a_into_b_b", "b_into_a_b"})
    write_side(dir / (std::string(name) + ".sqlite"), 'b');

  auto a_into_b = store::open(dir / "a_into_b_b.sqlite");
  const auto st_ab = a_into_b.merge_from(dir / "a_into_b_a.sqlite");
  auto b_into_a = store::open(dir / "b_into_a_a.sqlite");
  const auto st_ba = b_into_a.merge_from(dir / "b_into_a_b.sqlite");
  CHECK(st_ab.inserted + st_ba.inserted == 0);
  CHECK(st_ab.replaced + st_ab.kept == conflicts.size());
  CHECK(st_ab.replaced == st_ba.kept); // what one direction replaces, the other keeps
  CHECK(st_ab.baselines_replaced + st_ba.baselines_replaced == baselines.size());

  const auto held_ab = holders(a_into_b);
  const auto held_ba = holders(b_into_a);
  for (const auto &c : conflicts) {
    INFO(c.what);
    const auto label = "tunable.float32.sum.bs_" + std::to_string(c.block);
    CHECK(held_ab.at(label) == c.winner);
    CHECK(held_ba.at(label) == c.winner);
  }
  for (const auto &[kind, winner] : baseline_winner) {
    INFO("baseline " << kind);
    CHECK(held_ab.at(kind) == winner);
    CHECK(held_ba.at(kind) == winner);
  }

  // The winner keeps its own age, so merging the same file again changes nothing.
  const auto again = a_into_b.merge_from(dir / "a_into_b_a.sqlite");
  CHECK(again.replaced == 0);
  CHECK(again.kept == conflicts.size());
  CHECK(again.baselines_replaced + again.baselines_inserted == 0);
  CHECK(holders(a_into_b) == held_ab);
  CHECK(a_into_b.integrity_check() == "ok");
}
