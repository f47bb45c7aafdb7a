// Reliability claims, each done for real: SIGKILL mid-write, two writing processes, and files
// that must be refused without being touched.
#include "catch.hpp"

#include <csignal>
#include <utility>
#include <vector>
#include <cstdio>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

#include "db_test_support.hpp"
#include "reducetune/db/catalog.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"

using namespace reducetune::db;

namespace {

// Measurement number i of writer w: a distinct key per (w, i), large enough samples that a
// kill often lands inside a transaction.
measurement_record numbered(std::int64_t device_id, int writer, int i) {
  auto m =
      rt_test::measurement(device_id, 1 << 16, 256, 1e-5, "float32", "sum", writer * 1000000 + i);
  m.samples_s.assign(2000, 1e-5);
  m.samples_s[static_cast<std::size_t>(i) % 2000] = 2e-5;
  return m;
}

bool write_all(int fd, const void *data, std::size_t size) {
  const auto *p = static_cast<const char *>(data);
  while (size > 0) {
    const auto n = ::write(fd, p, size);
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_int(int fd, int &value) {
  auto *p = reinterpret_cast<char *>(&value);
  std::size_t got = 0;
  while (got < sizeof value) {
    const auto n = ::read(fd, p + got, sizeof value - got);
    if (n <= 0)
      return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

// The body of a forked writer: never returns into Catch2.
[[noreturn]] void writer_child(const std::filesystem::path &path, int writer, int count,
                               int report_fd, int start_fd) {
  try {
    if (start_fd >= 0) {
      char go = 0;
      if (::read(start_fd, &go, 1) != 1)
        _exit(3);
    }
    auto s = store::open(path);
    const auto dev = s.register_device(rt_test::h100());
    for (int i = 0; count < 0 || i < count; ++i) {
      s.record_measurement(numbered(dev, writer, i));
      if (!write_all(report_fd, &i, sizeof i))
        _exit(4);
    }
    _exit(0);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "writer %d failed: %s\n", writer, e.what());
    _exit(1);
  }
}

// Forks a writer_child; the read end of the pipe it reports each committed row on. A start_fd
// >= 0 is the read end of a pipe whose write end (`start_write`) the child closes, so that it
// waits for the parent's go.
std::pair<pid_t, int> fork_writer(const std::filesystem::path &path, int writer, int count,
                                  int start_fd = -1, int start_write = -1) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    if (start_write >= 0)
      ::close(start_write);
    writer_child(path, writer, count, fds[1], start_fd);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

std::string refusal(const std::filesystem::path &path) {
  try {
    auto s = store::open(path);
  } catch (const reducetune::store_error &e) {
    return e.what();
  }
  return {};
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// `size` bytes of a seeded generator: the same garbage on every run.
std::string random_bytes(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::string bytes(size, '\0');
  for (auto &c : bytes)
    c = static_cast<char>(rng());
  return bytes;
}

// Opening the file is refused with a message that says each of `words`, and the file keeps
// every byte; with `catalog_too`, the Catalog refuses it as well and leaves it so.
void check_refused(const std::filesystem::path &path, const std::vector<std::string> &words,
                   bool catalog_too = false) {
  const auto before = rt_test::file_bytes(path);
  const auto what = refusal(path);
  INFO(what);
  for (const auto &w : words)
    CHECK(contains(what, w));
  CHECK(rt_test::file_bytes(path) == before);
  if (catalog_too) {
    CHECK_THROWS_AS(catalog::open(path), reducetune::store_error);
    CHECK(rt_test::file_bytes(path) == before);
  }
}

} // namespace

TEST_CASE("a writer killed with SIGKILL loses no committed row and leaves a sound file",
          "[db][reliability]") {
  rt_test::temp_dir dir;
  const auto path = dir / "killed.sqlite";
  std::int64_t dev = 0;
  {
    auto s = store::open(path);
    dev = s.register_device(rt_test::h100());
  }
  std::vector<int> committed;
  // Three rounds on the same file: each restart also recovers the previous round's hot WAL.
  for (int round = 0; round < 3; ++round) {
    const auto [pid, reports] = fork_writer(path, round, -1);
    int i = 0;
    int reported = 0;
    while (reported < 50 + 37 * round && read_int(reports, i)) {
      committed.push_back(round * 1000000 + i);
      ++reported;
    }
    ::usleep(static_cast<useconds_t>(1000 + 700 * round)); // land somewhere in a transaction
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(WTERMSIG(status) == SIGKILL);
    // The writer had no chance to close: its WAL is still there for the next opener to recover.
    CHECK(std::filesystem::file_size(path.string() + "-wal") > 0);
    while (read_int(reports, i)) // reports written before the kill
      committed.push_back(round * 1000000 + i);
    ::close(reports);
  }
  auto s = store::open(path);
  REQUIRE(s.integrity_check() == "ok");
  for (const int id : committed) {
    auto m = numbered(dev, 0, 0);
    m.workload.seed = id;
    INFO("measurement " << id);
    CHECK(s.is_measured(m.key()));
  }
  const auto rows = s.history(dev, "float32", "sum").size();
  CHECK(rows >= committed.size());
  CHECK(rows <= committed.size() + 3); // at most one committed-but-unreported row per kill
  for (const auto &m : s.history(dev, "float32", "sum"))
    CHECK(m.samples_s.size() == 2000); // no torn row
}

TEST_CASE("two processes writing one new file at once lose no row and never see 'locked'",
          "[db][reliability]") {
  rt_test::temp_dir dir;
  const auto path = dir / "shared.sqlite"; // not created yet: both race to create it too
  constexpr int per_writer = 300;
  int start[2];
  REQUIRE(::pipe(start) == 0);
  std::vector<pid_t> pids;
  std::vector<int> report_fds;
  for (int w = 0; w < 2; ++w) {
    const auto [pid, reports] = fork_writer(path, w, per_writer, start[0], start[1]);
    pids.push_back(pid);
    report_fds.push_back(reports);
  }
  ::close(start[0]);
  REQUIRE(::write(start[1], "gg", 2) == 2); // both start at the same moment
  ::close(start[1]);
  std::vector<int> reported(2, 0);
  for (int w = 0; w < 2; ++w) {
    int i = 0;
    while (read_int(report_fds[static_cast<std::size_t>(w)], i))
      ++reported[static_cast<std::size_t>(w)];
    ::close(report_fds[static_cast<std::size_t>(w)]);
  }
  for (const pid_t pid : pids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0); // a "database is locked" error would exit 1
  }
  CHECK(reported[0] == per_writer);
  CHECK(reported[1] == per_writer);
  auto s = store::open(path);
  REQUIRE(s.integrity_check() == "ok");
  REQUIRE(s.devices().size() == 1);
  const auto dev = s.devices()[0].id;
  CHECK(s.history(dev, "float32", "sum").size() == 2 * per_writer);
  for (int w = 0; w < 2; ++w)
    for (int i = 0; i < per_writer; ++i)
      CHECK(s.is_measured(numbered(dev, w, i).key()));
}

TEST_CASE("a file of garbage bytes is refused and left untouched", "[db][reliability]") {
  rt_test::temp_dir dir;
  const auto path = dir / "garbage.sqlite";
  const std::string garbage = random_bytes(16384, 42);
  rt_test::write_bytes(path, garbage);
  check_refused(path, {"is not a readable SQLite database", "left untouched", path.string()},
                true);
  CHECK(rt_test::file_bytes(path) == garbage);
  CHECK_FALSE(std::filesystem::exists(path.string() + "-wal"));
}

TEST_CASE("an SQLite header over garbage pages is refused and left untouched",
          "[db][reliability]") {
  rt_test::temp_dir dir;
  const auto path = dir / "torn.sqlite";
  std::string bytes = random_bytes(8192, 7);
  const std::string magic("SQLite format 3\0", 16);
  bytes.replace(0, magic.size(), magic);
  rt_test::write_bytes(path, bytes);
  const auto before = rt_test::fnv1a(bytes);
  check_refused(path, {"left untouched"});
  CHECK(rt_test::fnv1a(rt_test::file_bytes(path)) == before);
  CHECK(rt_test::file_bytes(path) == bytes);
}

TEST_CASE("another application's SQLite file is refused and left untouched", "[db][reliability]") {
  rt_test::temp_dir dir;
  SECTION("unknown tables") {
    const auto path = dir / "shop.sqlite";
    {
      database other(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
      other.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);"
                 "INSERT INTO customers (name) VALUES ('Ada');");
    }
    check_refused(path, {"another application", "customers"});
  }
  SECTION("another application id") {
    const auto path = dir / "other-id.sqlite";
    {
      database other(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
      other.exec("PRAGMA application_id = 12345; CREATE TABLE rt_devices (x);");
    }
    check_refused(path, {"application_id = 12345"});
  }
}

TEST_CASE("a file of a newer schema version is refused, says what to do, and is untouched",
          "[db][reliability]") {
  rt_test::temp_dir dir;
  const auto path = dir / "newer.sqlite";
  {
    auto s = store::open(path);
    s.register_device(rt_test::h100());
    s.connection().exec("PRAGMA user_version = " + std::to_string(current_schema_version() + 1));
  }
  check_refused(path,
                {"newer reducetune", "Upgrade reducetune",
                 "schema version " + std::to_string(current_schema_version() + 1)},
                true);
}

TEST_CASE("a file holding only Optuna's tables gets reducetune's tables beside them",
          "[db][optuna]") {
  rt_test::temp_dir dir;
  const auto path = dir / "study.sqlite";
  {
    database optuna(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    optuna.exec("CREATE TABLE studies (study_id INTEGER PRIMARY KEY, study_name TEXT);"
                "CREATE TABLE trials (trial_id INTEGER PRIMARY KEY, study_id INTEGER);"
                "CREATE TABLE version_info (version_info_id INTEGER PRIMARY KEY);"
                "INSERT INTO studies (study_name) VALUES ('tpe');");
  }
  auto s = store::open(path);
  REQUIRE(s.schema_version() == current_schema_version());
  auto q = s.connection().prepare("SELECT study_name FROM studies");
  REQUIRE(q.step());
  CHECK(q.column_text(0) == "tpe");
  s.register_device(rt_test::h100());
  CHECK(s.devices().size() == 1);
}
