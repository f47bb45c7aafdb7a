#include "reducetune/db/read_only.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

namespace reducetune::db::detail {
namespace {

// file: URI of a path, every byte but unreserved ones and '/' percent-encoded, so that '?',
// '#', '%' or spaces in a name reach the file system as they are.
std::string file_uri(const std::filesystem::path &path) {
  std::string out = "file:";
  for (const unsigned char c : std::filesystem::absolute(path).string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// A -wal file with frames: a writer has the file open (or died with commits not yet copied
// back into the file).
bool has_wal_frames(const std::filesystem::path &path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path.string() + "-wal", ec);
  return !ec && size > 0;
}

// A file whose -wal holds frames: they may be commits that are not in the file yet, so the
// reader goes through the WAL (never immutable, which would answer from the file alone: a stale
// snapshot). A read-only file or folder may keep SQLite from reading the WAL (no -shm and no
// right to create it): that is refused, never answered without the WAL.
database read_with_wal(const std::filesystem::path &path, bool read_only_place) {
  try {
    database db(file_uri(path) + "?mode=ro", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
    db.exec("SELECT count(*) FROM sqlite_schema"); // reads the WAL's index now
    return db;
  } catch (const sqlite_error &e) {
    const int code = e.primary_code();
    if (!read_only_place ||
        (code != SQLITE_CANTOPEN && code != SQLITE_READONLY && code != SQLITE_IOERR))
      throw;
    throw store_error("'" + path.string() + "' has a write-ahead log ('" + path.string() +
                      "-wal') with transactions that cannot be read here (" +
                      sqlite3_errstr(code) + "): the file or its folder is read-only and "
                      "SQLite cannot use the log's index beside it. Make the folder writable "
                      "(the next reducetune command that writes it folds the log in), or copy "
                      "the file with its -wal to a writable folder.");
  }
}

void copy_database(sqlite3 *from, sqlite3 *to, const std::string &what) {
  sqlite3_backup *b = sqlite3_backup_init(to, "main", from, "main");
  if (b == nullptr)
    throw store_error("cannot " + what + ": " + sqlite3_errmsg(to));
  const int rc = sqlite3_backup_step(b, -1);
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE)
    throw store_error("cannot " + what + ": " + sqlite3_errstr(rc));
}

} // namespace

bool writable(const std::filesystem::path &p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && (st.st_mode & 0222) != 0 && ::access(p.c_str(), W_OK) == 0;
}

database open_reader(const std::filesystem::path &path) {
  const auto folder = std::filesystem::absolute(path).parent_path();
  const bool read_only_place = !writable(path) || !writable(folder);
  // Frames in the -wal: a writer has the file open, or died with commits not yet copied back.
  if (has_wal_frames(path))
    return read_with_wal(path, read_only_place);
  if (read_only_place) // nothing else can be writing it either: no locks, no -wal/-shm
    return database(file_uri(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  // A WAL-mode file read through a read-only connection keeps the -wal and -shm files that
  // connection created (it cannot take the lock to remove them). A read-write connection that
  // never writes (query_only) removes them on close when it is the last one; with no frames
  // in the WAL, that close copies nothing into the file.
  database db(file_uri(path) + "?mode=rw", SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI);
  db.exec("PRAGMA query_only = 1");
  return db;
}

database copy_into_memory(const database &db) {
  database copy(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY);
  copy_database(db.handle(), copy.handle(), "copy the file into memory");
  return copy;
}

namespace {

void mix(std::uint64_t &h, const void *data, std::size_t size) {
  const auto *p = static_cast<const unsigned char *>(data);
  for (std::size_t i = 0; i < size; ++i)
    h = (h ^ p[i]) * 1099511628211ull; // FNV-1a
}

bool process_runs(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

// NAME.schemaV.bak.PID.partial of a process that no longer runs: a copy that was being written
// when that process was killed. It never became a backup (only a complete copy is renamed).
void remove_dead_partials(const std::filesystem::path &path) {
  const auto folder = std::filesystem::absolute(path).parent_path();
  const std::string prefix = path.filename().string() + ".schema";
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(".partial"))
      continue;
    const auto stem = name.substr(0, name.size() - std::string_view(".partial").size());
    const auto dot = stem.rfind('.');
    const std::string pid = dot == std::string::npos ? "" : stem.substr(dot + 1);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos ||
        process_runs(std::stol(pid)))
      continue;
    std::filesystem::remove(entry.path(), ec);
  }
}

void fsync_path(const std::filesystem::path &p, const std::string &what) {
  const int fd = ::open(p.c_str(), O_RDONLY);
  const bool ok = fd >= 0 && ::fsync(fd) == 0;
  if (fd >= 0)
    ::close(fd);
  if (!ok)
    throw store_error("cannot " + what + ": fsync of '" + p.string() + "' failed");
}

// True when `backup` is a reducetune file whose content is the same as `from`'s.
bool same_content(const database &from, const std::filesystem::path &backup) {
  try {
    const database kept = open_reader(backup);
    return content_digest(kept) == content_digest(from);
  } catch (const store_error &) {
    return false; // unreadable: not the copy we need
  }
}

} // namespace

std::uint64_t content_digest(const database &db) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char *pragma : {"application_id", "user_version"}) {
    const auto v = db.pragma_int(pragma);
    mix(h, &v, sizeof v);
  }
  std::vector<std::string> tables;
  {
    auto s = db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table' ORDER BY name");
    while (s.step()) {
      tables.push_back(s.column_text(0));
      const auto sql = s.column_text(1);
      mix(h, sql.data(), sql.size() + 1);
    }
  }
  for (const auto &t : tables) {
    std::string quoted = "\"";
    for (const char c : t)
      quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    // A table's name from the file itself, as an identifier; no value is spliced into SQL.
    auto s = db.prepare("SELECT * FROM " + quoted + "\"");
    while (s.step()) {
      const int n = s.column_count();
      for (int col = 0; col < n; ++col) {
        const int type = s.column_type(col);
        mix(h, &type, sizeof type);
        const auto blob = s.column_blob(col); // text and numbers as SQLite prints them too
        mix(h, blob.data(), blob.size());
      }
    }
  }
  return h;
}

std::filesystem::path backup_copy(const std::filesystem::path &path, int version) {
  remove_dead_partials(path);
  const database from = open_reader(path);
  const std::string stem = path.string() + ".schema" + std::to_string(version);
  std::filesystem::path target = stem + ".bak";
  for (int i = 2; std::filesystem::exists(target); ++i) {
    // A run killed after its copy and before its migration committed left the file as it was:
    // that copy is already the backup of this very content.
    if (same_content(from, target))
      return target;
    target = stem + "." + std::to_string(i) + ".bak";
  }
  // Written under a temporary name, synced, then renamed: a SIGKILL leaves either no backup or
  // a complete one, never a half-written NAME.schemaV.bak.
  const std::string what = "keep a copy of '" + path.string() + "' before migrating it";
  const std::filesystem::path partial =
      target.string() + "." + std::to_string(::getpid()) + ".partial";
  std::filesystem::remove(partial);
  {
    database to(partial, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    to.exec("PRAGMA journal_mode = OFF"); // no -journal beside it: the rename is the commit
    to.exec("PRAGMA synchronous = OFF");  // synced once below
    copy_database(from.handle(), to.handle(), what);
  }
  fsync_path(partial, what);
  std::filesystem::rename(partial, target);
  fsync_path(target.parent_path().empty() ? "." : target.parent_path(), what);
  return target;
}

} // namespace reducetune::db::detail
