// Exporting the Catalog for applications that do not link reducetune: a self-contained C++17
// header with a constexpr dispatch table, and the same content as JSON.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "reducetune/db/application_ranking.hpp"
#include "reducetune/db/catalog.hpp"
#include "reducetune/db/launch_rule.hpp"

namespace reducetune {
class template_library;
}

namespace reducetune::db {

// The header (C++17; it says so with #error below) defines, in namespace ns, parameter,
// kernel, choice, rule and table (their fields are documented in the header itself) and
//   constexpr const choice *select(const char *uuid, const char *device_name,
//                                  int compute_capability, const char *dtype, const char *op,
//                                  unsigned long long n);
// (and the same without uuid). select() follows the Catalog's device-matching rule, generated
// from the same table (catalog.hpp, device_match_order: UUID, else exact name, else the first
// of that compute capability), then the last rule with min_n <= n; nullptr when none.
// The thresholds are those of nearest_bucket, so the header answers as the Catalog does.
// Each choice carries everything needed to launch it (launch_rule.hpp), computed by the
// search space from the families of lib; the JSON carries the same fields.
// `lowered` fills the lowered names of points whose build the file does not keep.
[[nodiscard]] std::string export_header(const catalog &c, const template_library &lib,
                                        std::string_view ns = "reducetune_dispatch",
                                        const lowered_names_fn &lowered = {});
// Where the application picks come from (application_ranking.hpp): the database the Catalog
// was read from, with the selection it was read with.
struct application_source {
  const database *db = nullptr;
  point_selection selection;
  double extra_launch_s = default_extra_launch_s;
};
// With `apps`, each rule also carries "application": the size's application pick (family,
// variant, launch, determinism, median_s, launches), which a Reducer built from the table
// launches unless asked to rank by the median.
[[nodiscard]] nlohmann::ordered_json export_json(const catalog &c, const template_library &lib,
                                                 const lowered_names_fn &lowered = {},
                                                 const application_source *apps = nullptr);
// A rule's "application" object in export_json (and `best --json`).
[[nodiscard]] nlohmann::ordered_json application_pick_json(const application_pick &p);
// One rule of export_json (without min_n's neighbours): what `reducetune best --json` prints.
[[nodiscard]] nlohmann::ordered_json export_rule_json(const catalog_entry &e, const device_record &d,
                                                      const template_library &lib,
                                                      const lowered_names_fn &lowered = {});

// Writes to a temporary file beside path (a name of its own), then renames it over path,
// keeping the mode of the file it replaces. Throws store_error, leaving nothing behind, when
// path or its folder is read-only (mode bits, even for root) or the write fails.
void write_file_atomically(const std::filesystem::path &path, std::string_view content);

} // namespace reducetune::db
