// Issue R2 section 1, the store's part: files read without their WAL, names that look like
// URIs, foreign SQLite files, a file merged into itself, inputs a merge must not rewrite.
#include "catch.hpp"

#include <csignal>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db_test_support.hpp"
#include "reducetune/db/catalog.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"

using namespace reducetune::db;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::string refusal(const std::function<void()> &open) {
  try {
    open();
  } catch (const reducetune::store_error &e) {
    return e.what();
  }
  return "(accepted)";
}

// A results file whose last commit (a second device) is only in its -wal: the writer was
// killed before any checkpoint, as a SIGKILLed tune leaves it.
void killed_writer(const std::filesystem::path &path) {
  {
    auto s = store::open(path);
    s.register_device(rt_test::h100("GPU-in-file"));
  } // closed: the first device is in the file itself
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      auto s = store::open(path);
      auto other_model = rt_test::h100("GPU-in-wal");
      other_model.name = "NVIDIA H200"; // its own entry in the Catalog (one per model)
      s.register_device(other_model);
      ::raise(SIGKILL); // with the connection open: no checkpoint, the -wal stays
    } catch (...) {
      _exit(1);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(std::filesystem::file_size(path.string() + "-wal") > 0);
}

std::vector<std::string> uuids(const std::vector<device_record> &devices) {
  std::vector<std::string> out;
  for (const auto &d : devices)
    out.push_back(d.uuid);
  return out;
}

// chmod that puts the mode back at scope exit, so that temp_dir can remove the folder.
class mode_scope {
public:
  mode_scope(std::filesystem::path p, mode_t mode) : m_path(std::move(p)) {
    struct stat st {};
    ::stat(m_path.c_str(), &st);
    m_old = st.st_mode & 07777;
    ::chmod(m_path.c_str(), mode);
  }
  mode_scope(const mode_scope &) = delete;
  mode_scope &operator=(const mode_scope &) = delete;
  ~mode_scope() { ::chmod(m_path.c_str(), m_old); }

private:
  std::filesystem::path m_path;
  mode_t m_old = 0;
};

// Runs in another working directory, restored at scope exit (relative names are the point).
class cwd_scope {
public:
  explicit cwd_scope(const std::filesystem::path &p) : m_old(std::filesystem::current_path()) {
    std::filesystem::current_path(p);
  }
  cwd_scope(const cwd_scope &) = delete;
  cwd_scope &operator=(const cwd_scope &) = delete;
  ~cwd_scope() { std::filesystem::current_path(m_old); }

private:
  std::filesystem::path m_old;
};

std::vector<std::string> folder_names(const std::filesystem::path &folder) {
  std::vector<std::string> out;
  for (const auto &e : std::filesystem::directory_iterator(folder))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("a reader of a read-only file or folder sees the commits still in its -wal",
          "[db][r2][wal]") {
  rt_test::temp_dir dir;
  const auto folder = dir / "results";
  std::filesystem::create_directory(folder);
  const auto path = folder / "r.db";
  killed_writer(path);
  const std::vector<std::string> both = {"GPU-in-file", "GPU-in-wal"};
  const auto bytes = rt_test::file_bytes(path);
  const auto wal = rt_test::file_bytes(path.string() + "-wal");

  SECTION("the file is read-only") {
    mode_scope ro(path, 0444);
    CHECK(uuids(store::open_read_only(path).devices()) == both);
    CHECK(catalog::open(path).devices().size() == 2);
  }
  SECTION("the folder is read-only") {
    mode_scope ro(folder, 0555);
    CHECK(uuids(store::open_read_only(path).devices()) == both);
  }
  SECTION("the folder is read-only and the WAL's index is gone: every commit, or a refusal") {
    std::filesystem::remove(path.string() + "-shm");
    mode_scope ro(folder, 0555);
    // Root may still create the -shm (and then reads every commit); others cannot, and are
    // refused: what must never happen is an answer from the file alone (one device).
    try {
      CHECK(uuids(store::open_read_only(path).devices()) == both);
    } catch (const reducetune::store_error &e) {
      INFO(e.what());
      CHECK(contains(e.what(), "write-ahead log"));
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
  SECTION("merged as the other input, read-only") {
    mode_scope ro(folder, 0555);
    auto into = store::open(dir / "into.db");
    const auto stats = into.merge_from(path);
    CHECK(uuids(into.devices()) == both);
    CHECK(stats.inserted == 0); // no measurement, but both devices came
  }
  // Reading never folds the log into the file nor removes it.
  CHECK(rt_test::file_bytes(path) == bytes);
  CHECK(rt_test::file_bytes(path.string() + "-wal") == wal);
}

TEST_CASE("db merge reads an input with a live WAL and never rewrites it", "[db][r2][merge]") {
  rt_test::temp_dir dir;
  const auto other = dir / "other.db";
  auto writer = store::open(other); // a live writer keeps its commits in the -wal
  const auto dev = writer.register_device(rt_test::h100("GPU-other"));
  writer.record_measurement(rt_test::measurement(dev, 1 << 20, 256, 1e-5));
  const auto bytes = rt_test::file_bytes(other);
  const auto wal = rt_test::file_bytes(other.string() + "-wal");
  REQUIRE_FALSE(wal.empty());

  auto into = store::open(dir / "into.db");
  CHECK(into.merge_from(other).inserted == 1);
  CHECK(rt_test::file_bytes(other) == bytes);
  CHECK(rt_test::file_bytes(other.string() + "-wal") == wal);
}

TEST_CASE("names with '#', '?', '%' or a 'file:' prefix are files of exactly that name",
          "[db][r2][paths]") {
  rt_test::temp_dir dir;
  cwd_scope here(dir.path());
  for (const std::string name : {"a#b.db", "a?b.db", "a%20b.db", "file:x.db", ":memory:",
                                 "file:x.db?mode=ro"}) {
    DYNAMIC_SECTION(name) {
      {
        auto s = store::open(name);
        s.register_device(rt_test::h100());
      }
      // Only the named file (and nothing read as a URI's path, like ./a or ./x.db).
      CHECK(folder_names(dir.path()) == std::vector<std::string>{name});
      CHECK(store::open_read_only(name).devices().size() == 1);
      CHECK(store::open_read_only(dir / name).devices().size() == 1);
      CHECK(catalog::open(name).devices().size() == 1);
      CHECK(folder_names(dir.path()) == std::vector<std::string>{name});
      std::filesystem::remove(name);
    }
  }
  CHECK_THROWS_AS(store::open(""), reducetune::store_error);
}

TEST_CASE("foreign SQLite files with Optuna's table names or only a view are refused, untouched",
          "[db][r2][foreign]") {
  rt_test::temp_dir dir;
  const auto path = dir / "foreign.sqlite";
  std::string schema;
  SECTION("only a studies table") {
    schema = "CREATE TABLE studies (id INTEGER PRIMARY KEY, title TEXT);"
             "INSERT INTO studies (title) VALUES ('sleep');";
  }
  SECTION("only a trials table") {
    schema = "CREATE TABLE trials (id INTEGER PRIMARY KEY, drug TEXT);";
  }
  SECTION("only a view") {
    schema = "CREATE VIEW answer AS SELECT 42 AS value;";
  }
  SECTION("Optuna's tables and a trigger of its own") {
    schema = "CREATE TABLE studies (study_id INTEGER PRIMARY KEY, study_name TEXT);"
             "CREATE TABLE trials (trial_id INTEGER PRIMARY KEY, study_id INTEGER);"
             "CREATE TABLE version_info (version_info_id INTEGER PRIMARY KEY);"
             "CREATE TRIGGER audit AFTER INSERT ON trials BEGIN SELECT 1; END;";
  }
  {
    database other(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    other.exec(schema);
  }
  const auto before = rt_test::file_bytes(path);
  const auto what = refusal([&] { (void)store::open(path); });
  INFO(what);
  CHECK(contains(what, "another application"));
  CHECK(contains(what, "left untouched"));
  CHECK(contains(refusal([&] { (void)store::open_read_only(path); }), "another application"));
  // As the other input of a merge, too.
  auto into = store::open(dir / "into.db");
  CHECK(contains(refusal([&] { (void)into.merge_from(path); }), "another application"));
  CHECK(rt_test::file_bytes(path) == before);
  CHECK(folder_names(dir.path()) ==
        std::vector<std::string>{"foreign.sqlite", "into.db", "into.db-shm", "into.db-wal"});
}

TEST_CASE("a file is never merged into itself, under any of its names", "[db][r2][merge]") {
  rt_test::temp_dir dir;
  const auto path = dir / "a.db";
  auto s = store::open(path);
  const auto dev = s.register_device(rt_test::h100());
  s.record_measurement(rt_test::measurement(dev, 1 << 20, 256, 1e-5));
  std::filesystem::create_symlink(path, dir / "link.db");
  std::filesystem::create_hard_link(path, dir / "hard.db");
  for (const auto &other : {path, dir / "." / "a.db", dir / "link.db", dir / "hard.db"}) {
    const auto what = refusal([&] { (void)s.merge_from(other); });
    INFO(other.string() << ": " << what);
    CHECK(contains(what, "same file"));
  }
  CHECK(s.history(dev, "float32", "sum").size() == 1);
  CHECK(s.integrity_check() == "ok");
}
