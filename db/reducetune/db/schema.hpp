// Opening a results file safely: inspect it read-only, refuse what is not ours, then create or
// migrate it. A file that is refused is never written to (not even a pragma).
#pragma once

#include <cstdint>
#include <filesystem>

#include "reducetune/db/sqlite.hpp"

namespace reducetune::db {

// PRAGMA application_id of every reducetune file: the bytes "RTdb".
inline constexpr std::int32_t application_id = 0x52546462;

// The highest migration number: the version a new file is created at (by every migration).
[[nodiscard]] int current_schema_version() noexcept;

enum class file_kind {
  missing,     // no file: will be created
  empty,       // an SQLite file without tables (or zero bytes): will be initialised
  optuna_only, // only Optuna's tables, no application id: reducetune adds its own beside them
  older,       // a reducetune file of an older schema version: will be migrated
  current,     // a reducetune file of this version
};

struct file_inspection {
  file_kind kind = file_kind::missing;
  int version = 0; // PRAGMA user_version
};

// Reads the file without writing anything. Throws store_error, with what to do next, for a
// corrupt or non-SQLite file, a foreign SQLite file (another application_id, or tables that
// are neither reducetune's nor Optuna's) and a file of a newer schema version.
[[nodiscard]] file_inspection inspect_file(const std::filesystem::path &path);

// What opening an older file for writing did: it was migrated, after a copy of it was kept.
struct migration_note {
  int from_version = 0;
  int to_version = 0;
  std::filesystem::path backup; // the file as it was, beside it (NAME.schemaN.bak)
};

// inspect_file, then a read-write connection with WAL, foreign keys and the busy timeout; a
// missing, empty or older file is created or migrated in one write transaction. An older file
// is first copied beside itself (SQLite's backup API, so a WAL's content is included); `note`
// (when given) says so.
[[nodiscard]] database open_for_writing(const std::filesystem::path &path,
                                        migration_note *note = nullptr);

// inspect_file, then a connection that never writes the file: read-only (immutable when the
// file or its folder is not writable, so that no -wal/-shm is needed). An older file is copied
// into memory and migrated there (PRAGMA query_only afterwards): commands that only read work
// on every version and leave the file's bytes as they were.
[[nodiscard]] database open_for_reading(const std::filesystem::path &path);

// PRAGMA integrity_check of the file itself ("ok" or SQLite's list), read-only.
[[nodiscard]] std::string integrity_of(const std::filesystem::path &path);

namespace detail {
void create_or_migrate(database &db); // inside a write transaction
} // namespace detail

} // namespace reducetune::db
