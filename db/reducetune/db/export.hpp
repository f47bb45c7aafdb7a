// Exporting the Catalog for applications that do not link reducetune: a self-contained C++17
// header with a constexpr dispatch table, and the same content as JSON.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "reducetune/db/catalog.hpp"

namespace reducetune::db {

// The header defines, in namespace ns:
//   struct parameter { const char *name; const char *value; };
//   struct choice { const char *variant; const char *launch; const parameter *parameters;
//                   int parameter_count; unsigned long long bucket_n; double median_s; };
//   struct rule { unsigned long long min_n; choice pick; };   // ascending min_n
//   struct table { const char *device_name; int compute_capability; const char *dtype;
//                  const char *op; const rule *rules; int rule_count; };
//   constexpr const choice *select(const char *device_name, int compute_capability,
//                                  const char *dtype, const char *op, unsigned long long n);
// select() takes the table of that exact device name, else the first table of that compute
// capability (major * 10 + minor), then the last rule with min_n <= n; nullptr when none.
// The thresholds are those of nearest_bucket, so the header answers as the Catalog does.
[[nodiscard]] std::string export_header(const catalog &c,
                                        std::string_view ns = "reducetune_dispatch");
[[nodiscard]] nlohmann::ordered_json export_json(const catalog &c);

// Writes to a temporary file beside path, then renames it over path.
void write_file_atomically(const std::filesystem::path &path, std::string_view content);

} // namespace reducetune::db
