// Issue R2: SIGKILL during a schema migration leaves either no backup or a complete one, and
// the next run migrates without writing a second backup (NAME.schemaV.2.bak).
#include "catch.hpp"

#include <chrono>
#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "db_test_support.hpp"
#include "reducetune/db/read_only.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"

using namespace reducetune::db;

namespace {

const std::filesystem::path v1_file =
    std::filesystem::path(RT_TEST_DATA_DIR) / "db" / "schema_v1.sqlite";

// The committed version-1 file grown to some megabytes (builds with cubins, measurements), so
// that copying and migrating it take long enough for a kill to land inside either.
void make_large_v1(const std::filesystem::path &path) {
  std::filesystem::copy_file(v1_file, path);
  database db(path, SQLITE_OPEN_READWRITE);
  db.exec("BEGIN;"
          "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 400)"
          " INSERT INTO rt_builds (cache_key, program_key, arch, nvrtc_version, options, status,"
          " compile_seconds, cubin) SELECT 'key' || k, 'p', 'sm_90', '12.4', '', 'ok', 0.1,"
          " randomblob(65536) FROM i;"
          "WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 20000)"
          " INSERT INTO rt_measurements (device_id, variant_id, launch_label, workload_id,"
          " template_hash, driver_version, toolkit_version, samples, sample_count, median_s,"
          " status) SELECT 1, 1, 'ept_' || (k + 1000) || '.cap_0', 1, 'hash-v1', 12040, 12040,"
          " randomblob(24), 3, 1e-5, 'ok' FROM i;"
          "COMMIT;");
}

// Opens (and so migrates) the file in a child; kills it after `delay` unless it ended first.
// True when the child was killed before it finished.
bool open_in_child(const std::filesystem::path &path, std::chrono::microseconds delay) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      auto s = store::open(path);
      _exit(0);
    } catch (...) {
      _exit(1);
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + delay;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ::kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status);
}

std::vector<std::filesystem::path> backups(const std::filesystem::path &folder) {
  std::vector<std::filesystem::path> out;
  for (const auto &e : std::filesystem::directory_iterator(folder))
    if (e.path().string().ends_with(".bak"))
      out.push_back(e.path());
  return out;
}

std::uint64_t digest_of(const std::filesystem::path &path) {
  const auto db = detail::open_reader(path);
  return detail::content_digest(db);
}

} // namespace

TEST_CASE("a migration killed at any moment leaves no backup or a complete one, and one backup "
          "in all",
          "[db][r2][migration][kill]") {
  rt_test::temp_dir dir;
  const auto original = dir / "original.db";
  make_large_v1(original);
  const auto expected = digest_of(original);

  // How long an undisturbed open (copy, then migration) takes here.
  const auto timed = dir / "timed.db";
  std::filesystem::copy_file(original, timed);
  const auto start = std::chrono::steady_clock::now();
  REQUIRE_FALSE(open_in_child(timed, std::chrono::seconds(60)));
  const auto full = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);
  INFO("an open with its migration took " << full.count() << " us");

  int killed = 0;
  for (int step = 1; step <= 8; ++step) {
    const auto folder = dir / ("run" + std::to_string(step));
    std::filesystem::create_directory(folder);
    const auto path = folder / "r.db";
    std::filesystem::copy_file(original, path);
    const auto delay = full * step / 10; // from early in the copy to late in the migration
    killed += open_in_child(path, delay) ? 1 : 0;
    INFO("killed after " << delay.count() << " us");
    for (const auto &b : backups(folder)) {
      CHECK(b.filename() == "r.db.schema1.bak");
      CHECK(inspect_file(b).version == 1);
      CHECK(digest_of(b) == expected); // complete: the file as it was
    }
    // The killed migration rolled back or committed; the next run ends it, with one backup.
    {
      auto s = store::open(path);
      CHECK(s.schema_version() == current_schema_version());
      CHECK(s.integrity_check() == "ok");
      const auto listed = backups(folder);
      REQUIRE(listed.size() == 1);
      CHECK(listed[0].filename() == "r.db.schema1.bak");
      CHECK(digest_of(listed[0]) == expected);
    }
    for (const auto &e : std::filesystem::directory_iterator(folder)) // no copy left half-made
      CHECK_FALSE(e.path().string().ends_with(".partial"));
  }
  CHECK(killed > 0); // else the delays missed the open altogether and nothing was tested
}

TEST_CASE("a run killed between its backup and its migration's commit leaves the backup that "
          "the next run keeps",
          "[db][r2][migration]") {
  rt_test::temp_dir dir;
  const auto path = dir / "r.db";
  std::filesystem::copy_file(v1_file, path);
  const auto first = detail::backup_copy(path, 1); // the copy of a run that died before migrating
  CHECK(first == dir / "r.db.schema1.bak");
  // A half-written copy of a process that no longer runs.
  const pid_t dead = fork();
  if (dead == 0)
    _exit(0);
  waitpid(dead, nullptr, 0);
  const auto partial = dir / ("r.db.schema1.bak." + std::to_string(dead) + ".partial");
  rt_test::write_bytes(partial, "half a copy");

  auto s = store::open(path);
  REQUIRE(s.migration());
  CHECK(s.migration()->backup == first);
  CHECK_FALSE(std::filesystem::exists(dir / "r.db.schema1.2.bak"));
  CHECK_FALSE(std::filesystem::exists(partial));
}

TEST_CASE("a backup of other content is not taken for this file's", "[db][migration]") {
  rt_test::temp_dir dir;
  const auto path = dir / "r.db";
  std::filesystem::copy_file(v1_file, path);
  rt_test::write_bytes(dir / "r.db.schema1.bak", "someone else's file");
  auto s = store::open(path);
  REQUIRE(s.migration());
  CHECK(s.migration()->backup == dir / "r.db.schema1.2.bak");
  CHECK(rt_test::file_bytes(dir / "r.db.schema1.bak") == "someone else's file");
  CHECK(digest_of(s.migration()->backup) != 0);
}
