// Connections that never write a results file, and the copy kept before a migration.
#pragma once

#include <cstdint>
#include <filesystem>

#include "reducetune/db/sqlite.hpp"

namespace reducetune::db::detail {

// Writable by access() and by its mode bits: root may write a 0444 file or into a 0555 folder,
// but the bits say nobody should, and reducetune honours them whoever runs it.
[[nodiscard]] bool writable(const std::filesystem::path &p);
// A connection that never writes the file; immutable (no locks, no -wal/-shm) when the file or
// its folder is not writable (by access() and by its mode bits), where nothing else can be
// writing it either. Otherwise it leaves no -wal/-shm behind that were not there before.
[[nodiscard]] database open_reader(const std::filesystem::path &path);
// A private in-memory copy of everything `db` holds (SQLite's backup API).
[[nodiscard]] database copy_into_memory(const database &db);
// Copies the file to NAME.schemaV.bak beside it (NAME.schemaV.2.bak, ... if taken) through the
// backup API; returns the copy's path. The copy is written as NAME.schemaV.bak.PID.partial,
// synced and renamed, so that a killed process leaves a complete backup or none (a dead
// process's .partial is removed by the next call). A backup already there with the same
// content (a run killed between its copy and its migration's commit) is returned as it is.
// Throws store_error when the copy cannot be written.
std::filesystem::path backup_copy(const std::filesystem::path &path, int version);
// A fingerprint of everything a file holds (pragmas, tables' SQL and rows), equal for two files
// of the same content whatever their pages.
[[nodiscard]] std::uint64_t content_digest(const database &db);

} // namespace reducetune::db::detail
