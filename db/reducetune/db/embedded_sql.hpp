// The migrations, embedded at build time (db/CMakeLists.txt generates the data).
#pragma once

#include <span>
#include <string_view>

namespace reducetune::db::detail {

struct embedded_migration {
  int version;           // the NNNN of migrations/NNNN_name.sql; brings a file to this version
  const char *file_name; // for messages
  std::string_view sql;
};

// db/migrations/*.sql in order, numbered 1, 2, ... without gaps (checked by CMake). A new file
// is created by applying them all.
[[nodiscard]] std::span<const embedded_migration> migrations() noexcept;

} // namespace reducetune::db::detail
