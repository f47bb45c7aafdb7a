#include "reducetune/db/read_only.hpp"

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

bool writable(const std::filesystem::path &p) { return ::access(p.c_str(), W_OK) == 0; }

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

database open_reader(const std::filesystem::path &path) {
  const auto folder = std::filesystem::absolute(path).parent_path();
  const bool immutable = !writable(path) || !writable(folder);
  return database(file_uri(path) + (immutable ? "?immutable=1" : "?mode=ro"),
                  SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
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
