#include "reducetune/db/read_only.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>

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
  if (!writable(path) || !writable(folder))
    return database(file_uri(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  if (has_wal_frames(path)) // its -wal and -shm are there already: read beside the writer
    return database(file_uri(path) + "?mode=ro", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  // A WAL-mode file read through a read-only connection keeps the -wal and -shm files that
  // connection created (it cannot take the lock to remove them). A read-write connection that
  // never writes (query_only) removes them on close when it is the last one; with no frames
  // in the WAL, that close copies nothing into the file.
  database db(file_uri(path) + "?mode=rw", SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI);
  db.exec("PRAGMA query_only = 1");
  return db;
}

database copy_into_memory(const database &db) {
  database copy(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  copy_database(db.handle(), copy.handle(), "copy the file into memory");
  return copy;
}

std::filesystem::path backup_copy(const std::filesystem::path &path, int version) {
  const std::string stem = path.string() + ".schema" + std::to_string(version);
  std::filesystem::path target = stem + ".bak";
  for (int i = 2; std::filesystem::exists(target); ++i)
    target = stem + "." + std::to_string(i) + ".bak";
  const database from = open_reader(path);
  database to(target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  copy_database(from.handle(), to.handle(), "keep a copy of '" + path.string() + "' before migrating it");
  return target;
}

} // namespace reducetune::db::detail
