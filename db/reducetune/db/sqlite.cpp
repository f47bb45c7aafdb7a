#include "reducetune/db/sqlite.hpp"

#include <random>
#include <thread>
#include <utility>

namespace reducetune::db {

namespace detail {
void throw_sqlite(sqlite3 *db, int code, const char *call, const char *file, int line) {
  std::string what = "SQLite error ";
  what += std::to_string(code);
  what += " (";
  what += sqlite3_errstr(code);
  what += ")";
  if (db != nullptr && sqlite3_extended_errcode(db) == code) {
    what += ": ";
    what += sqlite3_errmsg(db);
  }
  what += "\n  in ";
  what += call;
  what += "\n  at ";
  what += file;
  what += ":";
  what += std::to_string(line);
  if (db != nullptr) {
    if (const char *name = sqlite3_db_filename(db, "main"); name != nullptr && *name != 0) {
      what += "\n  database: ";
      what += name;
    }
  }
  throw sqlite_error(what, code);
}
} // namespace detail

namespace {

// The name SQLite gets for a path. Without SQLITE_OPEN_URI a name is a file's path, whatever it
// looks like: Debian's libsqlite3 is built with SQLITE_USE_URI, which reads "file:x.db" as a
// URI (the results went to ./x.db), and ":memory:" or "" name no file at all (the results were
// gone on exit). Such relative names are given as "./NAME", the file of exactly that name;
// memory is asked for by SQLITE_OPEN_MEMORY.
std::string sqlite_name(const std::filesystem::path &path, int flags) {
  std::string name = path.string();
  if ((flags & (SQLITE_OPEN_URI | SQLITE_OPEN_MEMORY)) != 0)
    return name;
  if (name.empty())
    throw store_error("an empty database path names no file: pass a file path");
  if (path.is_relative() && (name == ":memory:" || name.starts_with("file:")))
    return "./" + name;
  return name;
}

} // namespace

database::database(const std::filesystem::path &path, int flags) : m_path(path) {
  const std::string name = sqlite_name(path, flags);
  const int rc = sqlite3_open_v2(name.c_str(), &m_db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    // The handle exists even on failure (for its message) and must be closed.
    sqlite3 *failed = std::exchange(m_db, nullptr);
    try {
      detail::throw_sqlite(failed, rc, "sqlite3_open_v2(path, ...)", __FILE__, __LINE__);
    } catch (...) {
      sqlite3_close_v2(failed);
      throw;
    }
  }
  sqlite3_extended_result_codes(m_db, 1);
  RT_SQLITE_CALL(m_db,
                 sqlite3_busy_timeout(
                     m_db, static_cast<int>(std::chrono::milliseconds(busy_timeout).count())));
}

database::database(database &&other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)), m_path(std::move(other.m_path)) {
}

database &database::operator=(database &&other) noexcept {
  if (this != &other) {
    if (m_db != nullptr)
      sqlite3_close_v2(m_db);
    m_db = std::exchange(other.m_db, nullptr);
    m_path = std::move(other.m_path);
  }
  return *this;
}

database::~database() {
  if (m_db != nullptr)
    sqlite3_close_v2(m_db); // never fails for a v2 close; unfinalized statements close later
}

void database::exec(std::string_view sql) {
  const std::string text(sql);
  RT_SQLITE_CALL(m_db, sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, nullptr));
}

statement database::prepare(std::string_view sql) const {
  return statement(m_db, sql);
}

std::int64_t database::pragma_int(std::string_view name) const {
  // Pragma names are constants of this library, never user input.
  statement s(m_db, "PRAGMA " + std::string(name));
  return s.step() ? s.column_int(0) : 0;
}

std::int64_t database::last_insert_rowid() const noexcept {
  return sqlite3_last_insert_rowid(m_db);
}

statement::statement(sqlite3 *db, std::string_view sql) : m_db(db) {
  RT_SQLITE_CALL(
      m_db, sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &m_stmt, nullptr));
}

statement::statement(statement &&other) noexcept
    : m_db(other.m_db), m_stmt(std::exchange(other.m_stmt, nullptr)) {
}

statement &statement::operator=(statement &&other) noexcept {
  if (this != &other) {
    if (m_stmt != nullptr)
      sqlite3_finalize(m_stmt);
    m_db = other.m_db;
    m_stmt = std::exchange(other.m_stmt, nullptr);
  }
  return *this;
}

statement::~statement() {
  if (m_stmt != nullptr)
    sqlite3_finalize(m_stmt); // returns the last step's error, already reported by step()
}

statement &statement::bind(int index, std::int64_t value) {
  RT_SQLITE_CALL(m_db, sqlite3_bind_int64(m_stmt, index, value));
  return *this;
}

statement &statement::bind(int index, double value) {
  RT_SQLITE_CALL(m_db, sqlite3_bind_double(m_stmt, index, value));
  return *this;
}

statement &statement::bind(int index, std::string_view value) {
  RT_SQLITE_CALL(m_db, sqlite3_bind_text64(m_stmt, index, value.data(), value.size(),
                                           SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

statement &statement::bind_blob(int index, std::span<const std::byte> value) {
  // A zero-length blob is still a blob (not NULL): samples of a failed point are empty.
  if (value.empty()) {
    RT_SQLITE_CALL(m_db, sqlite3_bind_zeroblob(m_stmt, index, 0));
  } else {
    RT_SQLITE_CALL(
        m_db, sqlite3_bind_blob64(m_stmt, index, value.data(), value.size(), SQLITE_TRANSIENT));
  }
  return *this;
}

statement &statement::bind_null(int index) {
  RT_SQLITE_CALL(m_db, sqlite3_bind_null(m_stmt, index));
  return *this;
}

statement &statement::bind(int index, std::optional<double> value) {
  return value ? bind(index, *value) : bind_null(index);
}

statement &statement::bind(int index, std::optional<std::int64_t> value) {
  return value ? bind(index, *value) : bind_null(index);
}

bool statement::step() {
  const int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW)
    return true;
  if (rc == SQLITE_DONE)
    return false;
  // Leave the statement reusable; the error code is taken from the step itself.
  sqlite3_reset(m_stmt);
  detail::throw_sqlite(m_db, rc, sqlite3_sql(m_stmt), __FILE__, __LINE__);
}

void statement::run() {
  while (step()) {
  }
  reset();
}

void statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

bool statement::is_null(int col) const {
  return sqlite3_column_type(m_stmt, col) == SQLITE_NULL;
}

std::int64_t statement::column_int(int col) const {
  return sqlite3_column_int64(m_stmt, col);
}

double statement::column_double(int col) const {
  return sqlite3_column_double(m_stmt, col);
}

std::optional<double> statement::column_optional_double(int col) const {
  if (is_null(col))
    return std::nullopt;
  return column_double(col);
}

std::optional<std::int64_t> statement::column_optional_int(int col) const {
  if (is_null(col))
    return std::nullopt;
  return column_int(col);
}

std::string statement::column_text(int col) const {
  const auto *text = sqlite3_column_text(m_stmt, col);
  const int size = sqlite3_column_bytes(m_stmt, col);
  return text == nullptr
             ? std::string{}
             : std::string(reinterpret_cast<const char *>(text), static_cast<std::size_t>(size));
}

std::vector<std::byte> statement::column_blob(int col) const {
  const auto *data = static_cast<const std::byte *>(sqlite3_column_blob(m_stmt, col));
  const int size = sqlite3_column_bytes(m_stmt, col);
  if (data == nullptr || size <= 0)
    return {};
  return {data, data + size};
}

void write_transaction(database &db, const std::function<void()> &body) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + write_retry_limit;
  std::minstd_rand jitter(
      static_cast<unsigned>(std::hash<std::thread::id>{}(std::this_thread::get_id()) ^
                            static_cast<std::size_t>(clock::now().time_since_epoch().count())));
  for (int attempt = 0;; ++attempt) {
    bool begun = false;
    try {
      db.exec("BEGIN IMMEDIATE");
      begun = true;
      body();
      db.exec("COMMIT");
      return;
    } catch (const sqlite_error &e) {
      if (begun || sqlite3_get_autocommit(db.handle()) == 0)
        sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
      const bool busy = e.primary_code() == SQLITE_BUSY || e.primary_code() == SQLITE_LOCKED;
      if (!busy || clock::now() >= deadline)
        throw;
      const int ms = std::min(100, 1 << std::min(attempt, 6)) + static_cast<int>(jitter() % 10);
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    } catch (...) {
      if (sqlite3_get_autocommit(db.handle()) == 0)
        sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
}

} // namespace reducetune::db
