// The schema and migrations, embedded at build time (db/CMakeLists.txt generates the data).
#pragma once

#include <span>
#include <string_view>

namespace reducetune::db::detail {

struct embedded_migration {
  int version;           // the NNNN of migrations/NNNN_name.sql; brings a file to this version
  const char *file_name; // for messages
  std::string_view sql;
};

// db/schema.sql: the current schema, used to create a new file.
[[nodiscard]] std::string_view schema_sql() noexcept;
// db/migrations/*.sql in order, numbered 1, 2, ... without gaps (checked by CMake).
[[nodiscard]] std::span<const embedded_migration> migrations() noexcept;

} // namespace reducetune::db::detail
