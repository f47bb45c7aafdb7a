// Opening a results file safely: inspect it read-only, refuse what is not ours, then create or
// migrate it. A file that is refused is never written to (not even a pragma).
#pragma once

#include <cstdint>
#include <filesystem>

#include "reducetune/db/sqlite.hpp"

namespace reducetune::db {

// PRAGMA application_id of every reducetune file: the bytes "RTdb".
inline constexpr std::int32_t application_id = 0x52546462;

// The highest migration number; db/schema.sql describes this version.
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

// inspect_file, then a read-write connection with WAL, foreign keys and the busy timeout; a
// missing, empty or older file is created or migrated in one write transaction.
[[nodiscard]] database open_for_writing(const std::filesystem::path &path);

// inspect_file, then a read-only connection; the file must be of the current version (an older
// one is migrated by opening it with reducetune::db::store first).
[[nodiscard]] database open_for_reading(const std::filesystem::path &path);

} // namespace reducetune::db
