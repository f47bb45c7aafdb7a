// Move-only RAII owners for an SQLite connection and a prepared statement, the checking macro
// RT_SQLITE_CALL, and write transactions that wait for other writers instead of failing.
//
// Values only ever reach SQL through bind(): no user string is formatted into SQL text.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reducetune/errors.hpp"

namespace reducetune::db {

// A store_error that keeps the SQLite result code (extended), so callers can tell SQLITE_BUSY
// or SQLITE_NOTADB from other failures.
class sqlite_error : public store_error {
public:
  sqlite_error(const std::string &what, int code) : store_error(what), m_code(code) {}
  [[nodiscard]] int code() const noexcept { return m_code; }
  [[nodiscard]] int primary_code() const noexcept { return m_code & 0xff; }

private:
  int m_code;
};

namespace detail {
[[noreturn]] void throw_sqlite(sqlite3 *db, int code, const char *call, const char *file, int line);
} // namespace detail

} // namespace reducetune::db

// Any result other than SQLITE_OK, SQLITE_ROW or SQLITE_DONE throws sqlite_error with
// SQLite's message, the file, the line and the call's text.
#define RT_SQLITE_CALL(conn, call)                                                                 \
  do {                                                                                             \
    const int rt_sqlite_rc_ = (call);                                                              \
    if (rt_sqlite_rc_ != SQLITE_OK && rt_sqlite_rc_ != SQLITE_ROW && rt_sqlite_rc_ != SQLITE_DONE) \
      ::reducetune::db::detail::throw_sqlite((conn), rt_sqlite_rc_, #call, __FILE__, __LINE__);    \
  } while (false)

namespace reducetune::db {

class statement;

// One SQLite connection. Closing happens in the destructor (sqlite3_close_v2, never throws).
class database {
public:
  // flags: SQLITE_OPEN_READONLY, or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE. Without
  // SQLITE_OPEN_URI (or SQLITE_OPEN_MEMORY) path is always a file's path: "file:x.db" and
  // ":memory:" are files of those names; an empty path is refused (store_error).
  database(const std::filesystem::path &path, int flags);
  database(database &&other) noexcept;
  database &operator=(database &&other) noexcept;
  database(const database &) = delete;
  database &operator=(const database &) = delete;
  ~database();

  [[nodiscard]] sqlite3 *handle() const noexcept { return m_db; }
  [[nodiscard]] const std::filesystem::path &path() const noexcept { return m_path; }

  // Runs constant SQL text (schema, migrations, pragmas built from integers) without binding.
  void exec(std::string_view sql);
  [[nodiscard]] statement prepare(std::string_view sql) const;
  [[nodiscard]] std::int64_t pragma_int(std::string_view name) const;
  [[nodiscard]] std::int64_t last_insert_rowid() const noexcept;

private:
  sqlite3 *m_db = nullptr;
  std::filesystem::path m_path;
};

// One prepared statement; bind() is 1-based like SQLite. Text and blobs are copied
// (SQLITE_TRANSIENT) so callers may pass temporaries.
class statement {
public:
  statement(sqlite3 *db, std::string_view sql);
  statement(statement &&other) noexcept;
  statement &operator=(statement &&other) noexcept;
  statement(const statement &) = delete;
  statement &operator=(const statement &) = delete;
  ~statement();

  statement &bind(int index, std::int64_t value);
  statement &bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  statement &bind(int index, double value);
  statement &bind(int index, std::string_view value);
  statement &bind(int index, const char *value) { return bind(index, std::string_view{value}); }
  statement &bind(int index, const std::string &value) {
    return bind(index, std::string_view{value});
  }
  statement &bind_blob(int index, std::span<const std::byte> value);
  statement &bind_null(int index);
  statement &bind(int index, std::optional<double> value);
  statement &bind(int index, std::optional<std::int64_t> value);

  // True while a row is available; false when done. Errors throw.
  [[nodiscard]] bool step();
  // Steps to completion, for statements that return no rows.
  void run();
  void reset();

  [[nodiscard]] bool is_null(int col) const;
  [[nodiscard]] int column_count() const noexcept { return sqlite3_column_count(m_stmt); }
  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL of the current row.
  [[nodiscard]] int column_type(int col) const noexcept { return sqlite3_column_type(m_stmt, col); }
  [[nodiscard]] std::int64_t column_int(int col) const;
  [[nodiscard]] double column_double(int col) const;
  [[nodiscard]] std::optional<double> column_optional_double(int col) const;
  [[nodiscard]] std::optional<std::int64_t> column_optional_int(int col) const;
  [[nodiscard]] std::string column_text(int col) const;
  [[nodiscard]] std::vector<std::byte> column_blob(int col) const;

private:
  sqlite3 *m_db = nullptr;
  sqlite3_stmt *m_stmt = nullptr;
};

// How long a writer keeps retrying BEGIN IMMEDIATE / COMMIT on SQLITE_BUSY beyond the
// connection's busy timeout before it gives up with a store_error.
inline constexpr std::chrono::seconds busy_timeout{10};
inline constexpr std::chrono::seconds write_retry_limit{120};

// Runs body inside BEGIN IMMEDIATE ... COMMIT. Taking the write lock up front means a reader
// never has to upgrade (the case where SQLite returns SQLITE_BUSY without waiting). On
// SQLITE_BUSY the whole transaction is rolled back and retried with backoff; any other
// exception rolls back and propagates. body may therefore run more than once: it must only
// touch the database.
void write_transaction(database &db, const std::function<void()> &body);

} // namespace reducetune::db
