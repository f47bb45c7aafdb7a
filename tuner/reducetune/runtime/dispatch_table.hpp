// The reducer's answers for one (type, operator): per tuned device, the point measured best at
// each size. Read from a results database (through the Catalog) or from an exported JSON
// table; either way the point is kept as its family and labels (a stored row, read once on
// the device at hand by reducer_device), or, for reducer::for_point, as the caller's typed
// point; the search space says what it means on that device, so nothing is decided twice.
#pragma once

#include "reducetune/space/element.hpp"
#include "reducetune/space/point.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace reducetune {

namespace db {
class catalog;
}

struct dispatch_rule {
  std::uint64_t bucket_n = 0; // the measured size
  std::string family, variant, launch;
  std::string determinism; // run_to_run | none | unknown
  bool flagged = false;
  // The caller's typed point (reducer::for_point), where the rule is no stored row: then the
  // labels above only name it in messages and are never read back.
  std::optional<point> typed{};
};

struct dispatch_device {
  std::string name, uuid;
  int compute_capability = 0; // major * 10 + minor
  std::vector<dispatch_rule> rules; // ascending bucket_n, distinct
  bool any_device = false;          // answers every device (reducer::for_point's one rule)
};

class dispatch_table {
public:
  dispatch_table() = default;
  explicit dispatch_table(std::vector<dispatch_device> devices) : m_devices(std::move(devices)) {}

  // The Catalog already holds only the selected points (catalog::open(path, selection)).
  [[nodiscard]] static dispatch_table from_catalog(const db::catalog &c, dtype type, reduce_op op);
  // An export_json document; rules the selection refuses (determinism none, flags) are left
  // out. With `application`, a rule's "application" pick (db/application_ranking.hpp), where
  // the export made one and the selection admits it, replaces the median's winner. Throws
  // invalid_configuration naming what is wrong with a document of another format.
  [[nodiscard]] static dispatch_table from_json(const nlohmann::json &doc, dtype type,
                                                reduce_op op, const point_selection &selection,
                                                bool application = false);
  // The JSON document of an exported table's file (the axis call reads its own part of the
  // same document: axis_tables.hpp); invalid_configuration for a file that cannot be read or
  // is not JSON.
  [[nodiscard]] static nlohmann::json read_file(const std::filesystem::path &path);
  [[nodiscard]] static dispatch_table from_json_file(const std::filesystem::path &path, dtype type,
                                                     reduce_op op,
                                                     const point_selection &selection,
                                                     bool application = false);

  // The table of this device: one that answers any device, else by UUID, else by name, else
  // the first of the same compute capability (as the exported header's select()); nullptr
  // when none.
  [[nodiscard]] const dispatch_device *device_for(const std::string &uuid, const std::string &name,
                                                  int compute_capability) const noexcept;
  // The Catalog's size rule (db::nearest_bucket); nullptr when the device has no rules.
  [[nodiscard]] static const dispatch_rule *rule_for(const dispatch_device &d,
                                                     std::uint64_t n) noexcept;

  [[nodiscard]] const std::vector<dispatch_device> &devices() const noexcept { return m_devices; }

private:
  std::vector<dispatch_device> m_devices; // devices without rules for the (type, op) left out
};

} // namespace reducetune
