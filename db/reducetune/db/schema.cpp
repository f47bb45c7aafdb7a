#include "reducetune/db/schema.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <system_error>

#include "reducetune/db/embedded_sql.hpp"
#include "reducetune/db/point_records.hpp"
#include "reducetune/db/read_only.hpp"
#include "reducetune/templates/template_library.hpp"

namespace reducetune::db {
namespace {

// Schema 4 made parameters, flags, determinism and launch parameters facts the search space
// writes (migrations/0004_point_facts.sql); files from before are repaired from their labels.
constexpr int points_repaired_at = 4;

// Tables Optuna's RDB storage creates (optuna/storages/_rdb/models.py) and SQLite's own.
constexpr std::array<std::string_view, 15> tolerated_tables = {"studies",
                                                               "study_directions",
                                                               "study_user_attributes",
                                                               "study_system_attributes",
                                                               "trials",
                                                               "trial_params",
                                                               "trial_values",
                                                               "trial_intermediate_values",
                                                               "trial_user_attributes",
                                                               "trial_system_attributes",
                                                               "trial_heartbeats",
                                                               "version_info",
                                                               "alembic_version",
                                                               "sqlite_sequence",
                                                               "sqlite_stat1"};

std::string quoted(const std::filesystem::path &path) {
  return "'" + path.string() + "'";
}

[[noreturn]] void refuse(const std::filesystem::path &path, const std::string &why,
                         const std::string &what_to_do) {
  throw store_error(quoted(path) + " " + why + ". The file was left untouched. " + what_to_do);
}

// What a file without reducetune's mark holds, by kind: tables, and views or triggers.
struct unmarked_objects {
  std::vector<std::string> tables;
  std::vector<std::string> others; // "view v", "trigger t": never Optuna's nor ours
};

// A file without reducetune's mark: empty (no object at all), Optuna's storage alone, or
// refused as another application's. Optuna creates its tables together (version_info among
// them), so a file with only a `studies` or a `trials` table, or only a view, is not Optuna's.
file_inspection classify_unmarked(const std::filesystem::path &path, const unmarked_objects &o,
                                  std::int64_t version) {
  std::vector<std::string> unknown = o.others;
  for (const auto &t : o.tables)
    if (std::find(tolerated_tables.begin(), tolerated_tables.end(), t) == tolerated_tables.end())
      unknown.push_back(t);
  const auto has = [&](std::string_view t) {
    return std::find(o.tables.begin(), o.tables.end(), t) != o.tables.end();
  };
  if (unknown.empty() && !o.tables.empty() &&
      !(has("studies") && has("trials") && has("version_info")))
    for (const auto &t : o.tables)
      unknown.push_back(t); // Optuna's names without Optuna's storage
  if (!unknown.empty()) {
    std::string list;
    for (const auto &t : unknown)
      list += (list.empty() ? "" : ", ") + t;
    refuse(path, "is an SQLite database of another application (" + list + ")",
           "Pass another --db path for reducetune's results.");
  }
  if (version != 0)
    refuse(path, "has user_version " + std::to_string(version) + " but no reducetune mark",
           "Pass another --db path for reducetune's results.");
  return {o.tables.empty() ? file_kind::empty : file_kind::optuna_only, 0};
}

file_inspection inspect_existing(const std::filesystem::path &path) {
  std::int64_t app_id = 0;
  std::int64_t version = 0;
  unmarked_objects objects;
  try {
    database db = detail::open_reader(path);
    app_id = db.pragma_int("application_id");
    version = db.pragma_int("user_version");
    // Indexes belong to their tables; every other object is a table, a view or a trigger.
    auto s = db.prepare("SELECT type, name FROM sqlite_schema WHERE type <> 'index'");
    while (s.step()) {
      if (s.column_text(0) == "table")
        objects.tables.push_back(s.column_text(1));
      else
        objects.others.push_back(s.column_text(0) + " " + s.column_text(1));
    }
  } catch (const sqlite_error &e) {
    const int code = e.primary_code();
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
      refuse(path,
             "is not a readable SQLite database (it is corrupt, or not SQLite at all: " +
                 std::string(sqlite3_errstr(code)) + ")",
             "Pass another --db path, or move the file away to start a new database.");
    throw;
  }
  if (app_id != 0 && app_id != application_id)
    refuse(path,
           "belongs to another application (PRAGMA application_id = " + std::to_string(app_id) +
               ", reducetune's is " + std::to_string(application_id) + ")",
           "Pass another --db path for reducetune's results.");
  if (app_id == 0)
    return classify_unmarked(path, objects, version);
  const int current = current_schema_version();
  if (version > current)
    refuse(path,
           "was written by a newer reducetune (schema version " + std::to_string(version) +
               "; this build reads up to version " + std::to_string(current) + ")",
           "Upgrade reducetune (pip install -U reducetune, or rebuild from a newer checkout) "
           "to open it, or pass another --db path.");
  if (version < 1)
    refuse(path, "carries reducetune's application id but no schema version",
           "It was not written by reducetune; pass another --db path.");
  return {version < current ? file_kind::older : file_kind::current, static_cast<int>(version)};
}

void set_version_pragmas(database &db, int version) {
  // Pragmas take no bound parameters; both values are integers of this library.
  db.exec("PRAGMA application_id = " + std::to_string(application_id));
  db.exec("PRAGMA user_version = " + std::to_string(version));
}

// Applies every migration above `version` in order. A new file is a file at version 0: the
// migrations are the only statement of the schema, so a new file and an upgraded one cannot
// drift apart.
void apply_migrations(database &db, int version) {
  for (const auto &m : detail::migrations()) {
    if (m.version <= version)
      continue;
    try {
      db.exec(m.sql);
    } catch (const store_error &e) {
      throw store_error("migration " + std::string(m.file_name) + " failed on " +
                        quoted(db.path()) + " (rolled back, file unchanged): " + e.what());
    }
  }
}

} // namespace

// Inside BEGIN IMMEDIATE: another process may have created or migrated the file between our
// inspection and the write lock, so the version is read again here.
void detail::create_or_migrate(database &db) {
  const int current = current_schema_version();
  if (db.pragma_int("application_id") != application_id) {
    // A new file holds no points, so there is nothing for repair_points to rewrite.
    apply_migrations(db, 0);
    set_version_pragmas(db, current);
    return;
  }
  const auto version = static_cast<int>(db.pragma_int("user_version"));
  if (version > current)
    throw store_error(quoted(db.path()) + " was upgraded by a newer reducetune while opening");
  apply_migrations(db, version);
  if (version < points_repaired_at)
    repair_points(db, template_library::from_environment());
  set_version_pragmas(db, current);
}

int current_schema_version() noexcept {
  return detail::migrations().back().version;
}

file_inspection inspect_file(const std::filesystem::path &path) {
  if (path.empty())
    throw store_error("an empty database path names no file: pass a file path with --db");
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || status.type() == std::filesystem::file_type::not_found)
    return {file_kind::missing, 0};
  if (status.type() != std::filesystem::file_type::regular)
    refuse(path, "is not a regular file", "Pass a file path with --db.");
  if (std::filesystem::file_size(path, ec) == 0 && !ec)
    return {file_kind::empty, 0};
  return inspect_existing(path);
}

namespace {

// Before anything is written: a file or folder whose mode bits forbid writing is refused, even
// where the process could write it anyway (root). SQLite keeps NAME-wal and NAME-shm beside a
// file it writes, so the folder must be writable too.
void refuse_read_only(const std::filesystem::path &path, file_kind kind) {
  if (kind != file_kind::missing && !detail::writable(path))
    refuse(path, "is read-only", "Make it writable (chmod u+w) or pass another --db path.");
  auto folder = std::filesystem::absolute(path).parent_path();
  std::error_code ec;
  while (!std::filesystem::exists(folder, ec) && folder.has_relative_path())
    folder = folder.parent_path(); // the folder that the missing ones would be created in
  if (!detail::writable(folder))
    refuse(path, "is in a read-only folder ('" + folder.string() + "')",
           "SQLite needs to create files beside the database: pass another --db path.");
}

} // namespace

database open_for_writing(const std::filesystem::path &path, migration_note *note) {
  const auto inspection = inspect_file(path);
  refuse_read_only(path, inspection.kind);
  if (inspection.kind == file_kind::older) {
    const auto backup = detail::backup_copy(path, inspection.version);
    if (note != nullptr)
      *note = {inspection.version, current_schema_version(), backup};
  }
  if (inspection.kind == file_kind::missing && path.has_parent_path())
    std::filesystem::create_directories(path.parent_path());
  database db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  // journal_mode needs a lock of its own; another opener may hold one for a moment.
  for (int attempt = 0;; ++attempt) {
    try {
      db.exec("PRAGMA journal_mode = WAL");
      break;
    } catch (const sqlite_error &e) {
      if (e.primary_code() != SQLITE_BUSY || attempt > 200)
        throw;
      sqlite3_sleep(50);
    }
  }
  // NORMAL in WAL mode: a committed transaction survives the process being killed (the WAL
  // is in the OS's hands); only a power loss may lose the last commits.
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  if (inspection.kind != file_kind::current)
    write_transaction(db, [&] { detail::create_or_migrate(db); });
  return db;
}

std::string integrity_of(const std::filesystem::path &path) {
  const auto inspection = inspect_file(path); // refuses what is not a reducetune file
  if (inspection.kind == file_kind::missing)
    throw store_error(quoted(path) + " does not exist");
  if (inspection.kind == file_kind::empty || inspection.kind == file_kind::optuna_only)
    refuse(path, "holds no reducetune results", "Run a tuning first, or pass another --db path.");
  const database db = detail::open_reader(path);
  auto s = db.prepare("PRAGMA integrity_check");
  std::string out;
  while (s.step())
    out += (out.empty() ? "" : "\n") + s.column_text(0);
  return out;
}

database open_for_reading(const std::filesystem::path &path) {
  const auto inspection = inspect_file(path);
  if (inspection.kind != file_kind::current && inspection.kind != file_kind::older)
    refuse(path, "holds no reducetune results", "Run a tuning first, or pass another --db path.");
  database db = detail::open_reader(path);
  if (inspection.kind == file_kind::current)
    return db;
  // An older file: migrated in a copy in memory, so that reading never writes the file.
  database copy = detail::copy_into_memory(db);
  write_transaction(copy, [&] { detail::create_or_migrate(copy); });
  copy.exec("PRAGMA query_only = 1");
  return copy;
}

} // namespace reducetune::db
